/* Suite node, tcase "vendor": GPUs of a topology offered by vendor. An AMD
 * GPU with only an OpenCL OS device is never a 'cuda' device (it was, and
 * was handed out as one); tests/data/mixed-vendor-gpus.xml holds one
 * NVIDIA (CUDA OS device), one AMD and one Intel GPU (OpenCL only).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_NODE_VENDOR_H
#define SKV_TEST_NODE_VENDOR_H

#include "skv_test.h"
#include "sokovan/node.h"

static const char *mixed_xml(char *buf, size_t n)
{
    const char *src = getenv("SKV_TEST_SRC_DIR");
    snprintf(buf, n, "%s/tests/data/mixed-vendor-gpus.xml", src ? src : ".");
    return buf;
}

/* Can a node built with the mock plugin (config) allocate text? */
static int vendor_alloc(const skv_topo *t, const char *config, const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin *pl[3] = {NULL, NULL, NULL};
    const char *names[3] = {"cpu", "mem", "mock"};
    for (int i = 0; i < 3; i++) {
        skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
        ctx.topo = t;
        ctx.config = i == 2 ? config : NULL;
        SKV_CK_OK(skv_plugin_open_builtin(&pl[i], names[i], &ctx, &e), &e);
    }
    skv_node *node = NULL;
    SKV_CK_OK(skv_node_new(&node, t, pl, 3, &e), &e);
    skv_slots *req = NULL;
    int rc = skv_slots_parse(&req, text, skv_node_registry(node), &e);
    skv_node_placement *p = NULL;
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    if (rc == 0)
        rc = skv_node_alloc(&p, node, req, &o, &e);
    if (p)
        skv_node_release(node, p, NULL);
    skv_node_placement_free(p);
    skv_slots_free(req);
    skv_node_free(node);
    for (int i = 0; i < 3; i++)
        skv_plugin_free(pl[i]);
    return rc;
}

START_TEST(test_vendor_prefixes)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_xml(&t, mixed_xml(path, sizeof(path)), &e), &e);
    ck_assert_uint_eq(skv_topo_accel_count(t), 3);
    ck_assert_str_eq(skv_topo_accel_prefix(skv_topo_accel_find(t, "cuda0")), "cuda");
    ck_assert_str_eq(skv_topo_accel_prefix(skv_topo_accel_find(t, "opencl0d0")), "rocm");
    ck_assert_ptr_null(skv_topo_accel_prefix(skv_topo_accel_find(t, "opencl1d0")));
    ck_assert_ptr_null(skv_topo_accel_prefix(NULL));
    /* prefix cuda: the NVIDIA GPU only; rocm: the AMD one; any other
     * prefix: every compute accelerator, as before */
    ck_assert_int_eq(vendor_alloc(t, "topology=1,prefix=cuda", "cuda.device=1"), 0);
    ck_assert_int_ne(vendor_alloc(t, "topology=1,prefix=cuda", "cuda.device=2"), 0);
    ck_assert_int_eq(vendor_alloc(t, "topology=1,prefix=rocm", "rocm.device=1"), 0);
    ck_assert_int_ne(vendor_alloc(t, "topology=1,prefix=rocm", "rocm.device=2"), 0);
    ck_assert_int_eq(vendor_alloc(t, "topology=1,prefix=mock", "mock.device=3"), 0);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_vendor_tool)
{
    char cmd[8192], path[4096];
    static char out[1 << 16];
    snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-topo --xml %s --topo-gpus 2>&1",
             skv_test_build_dir(), mixed_xml(path, sizeof(path)));
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "cuda.device      mock     count   discrete    1"),
                  "%s", out);
    ck_assert_msg(strstr(out, "rocm.device      mock     count   discrete    1"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "note: opencl1d0 (Intel(R) Data Center GPU "
                                      "Max 1550, PCI vendor 0x8086"));
    /* the AMD GPU is not handed out as CUDA */
    snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-topo --xml %s --topo-gpus --json "
             "--alloc cuda.device=2 2>&1; echo rc=$?", skv_test_build_dir(), path);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "rc=1"), "%s", out);
    snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-topo --xml %s --topo-gpus --json "
             "--alloc cuda.device=1,rocm.device=1 2>/dev/null", skv_test_build_dir(),
             path);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_ptr_nonnull(strstr(out, "\"pci_bus_id\":\"0000:02:00.0\""));
    snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-topo --topo-gpus --mock-gpus "
             "count=1 >/dev/null 2>&1; echo rc=$?", skv_test_build_dir());
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_str_eq(out, "rc=2\n");
}
END_TEST

static void add_vendor_tcase(Suite *s)
{
    TCase *tc = tcase_create("vendor");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_vendor_prefixes);
    tcase_add_test(tc, test_vendor_tool);
    suite_add_tcase(s, tc);
}

#endif
