/* Topology: real machines from ../shared/data/topologies (hwloc XML),
 * synthetic descriptions, the live machine, CPU lists and bad inputs.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/topo.h"

static skv_topo *load_data(const char *name)
{
    char path[4096], rel[256];
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    snprintf(rel, sizeof(rel), "topologies/%s", name);
    SKV_CK_OK(skv_topo_load_xml(&t, skv_test_data_path(path, sizeof(path), rel),
                                &e), &e);
    return t;
}

START_TEST(test_dgx2_numa_and_gpus)
{
    skv_topo *t = load_data("nvidia-dgx2.xml");
    ck_assert_uint_eq(skv_topo_numa_count(t), 2);
    ck_assert_int_eq(skv_topo_numa_at(t, 0)->id, 0);
    ck_assert_int_eq(skv_topo_numa_at(t, 1)->id, 1);
    ck_assert_str_eq(skv_topo_numa_at(t, 0)->cpuset, "0-1");
    ck_assert_str_eq(skv_topo_numa_at(t, 1)->cpuset, "24-25");
    ck_assert(skv_topo_numa_at(t, 0)->memory_bytes > (700ull << 30));
    ck_assert_uint_eq(skv_topo_memory_bytes(t),
                      skv_topo_numa_at(t, 0)->memory_bytes +
                      skv_topo_numa_at(t, 1)->memory_bytes);
    ck_assert_uint_eq(skv_topo_numa_distance(t, 0, 1), 21);
    ck_assert_uint_eq(skv_topo_numa_distance(t, 1, 1), 10);
    ck_assert_uint_eq(skv_topo_numa_distance(t, 0, 7), 0);
    ck_assert_uint_eq(skv_topo_core_count(t), 4);
    ck_assert_str_eq(skv_topo_cpuset(t), "0-1,24-25");

    /* 16 GPUs, nvml0..15, 8 per NUMA node; NVSwitches are not GPUs. */
    ck_assert_uint_eq(skv_topo_accel_count(t), 16);
    int per_node[2] = {0, 0};
    for (size_t i = 0; i < 16; i++) {
        const skv_topo_accel *a = skv_topo_accel_at(t, i);
        char name[16];
        snprintf(name, sizeof(name), "nvml%zu", i);
        ck_assert_str_eq(a->name, name);
        ck_assert_int_eq(a->nvml_index, (int)i);
        ck_assert_uint_eq(a->vendor_id, 0x10de);
        ck_assert_uint_eq(a->pci_class, 0x0302);
        ck_assert_int_eq(a->compute, 1);
        ck_assert_str_eq(a->model, "Tesla V100-SXM3-32GB-H");
        ck_assert_int_eq(strncmp(a->uuid, "GPU-", 4), 0);
        ck_assert(a->numa_node == 0 || a->numa_node == 1);
        per_node[a->numa_node]++;
    }
    ck_assert_int_eq(per_node[0], 8);
    ck_assert_int_eq(per_node[1], 8);
    ck_assert_str_eq(skv_topo_accel_at(t, 0)->pci_bus_id, "0000:34:00.0");
    ck_assert_ptr_eq(skv_topo_accel_find(t, "0000:34:00.0"),
                     skv_topo_accel_at(t, 0));
    ck_assert_ptr_eq(skv_topo_accel_find(t, "0000:E7:00.0"),
                     skv_topo_accel_at(t, 15));
    ck_assert_ptr_eq(skv_topo_accel_find(t, "nvml9"), skv_topo_accel_at(t, 9));
    ck_assert_ptr_null(skv_topo_accel_find(t, "nvml16"));
    ck_assert_ptr_null(skv_topo_accel_at(t, 16));
    skv_topo_free(t);
}
END_TEST

START_TEST(test_dgx2_proximity)
{
    skv_topo *t = load_data("nvidia-dgx2.xml");
    /* Pairs behind the same PCIe switch: (0,1) (2,3) ... (14,15). */
    for (size_t i = 0; i < 16; i += 2) {
        ck_assert_int_eq(skv_topo_accel_link(t, i, i + 1), SKV_TOPO_LINK_PIX);
        ck_assert_int_eq(skv_topo_accel_link(t, i + 1, i), SKV_TOPO_LINK_PIX);
    }
    ck_assert_int_eq(skv_topo_accel_link(t, 3, 3), SKV_TOPO_LINK_SELF);
    ck_assert_int_eq(skv_topo_accel_link(t, 0, 2), SKV_TOPO_LINK_PXB);
    ck_assert_int_eq(skv_topo_accel_link(t, 0, 4), SKV_TOPO_LINK_NODE);
    ck_assert_int_eq(skv_topo_accel_link(t, 0, 8), SKV_TOPO_LINK_SYS);
    ck_assert_int_eq(skv_topo_accel_link(t, 0, 99), SKV_TOPO_LINK_SYS);
    ck_assert_str_eq(skv_topo_link_name(SKV_TOPO_LINK_PIX), "pix");
    ck_assert_str_eq(skv_topo_link_name((skv_topo_link)42), "?");
    /* NVLink: every V100 has 6 x 25 GB/s links into the NVSwitches. */
    ck_assert_uint_eq(skv_topo_accel_nvlink_bw(t, 0, 1), 150000);
    ck_assert_uint_eq(skv_topo_accel_nvlink_bw(t, 0, 15), 150000);
    ck_assert_uint_eq(skv_topo_accel_nvlink_bw(t, 5, 5), 0);
    ck_assert_uint_eq(skv_topo_accel_nvlink_bw(t, 0, 16), 0);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_four_numa_server)
{
    skv_topo *t = load_data("96em64t-4n4d3ca2co-pci.xml");
    ck_assert_uint_eq(skv_topo_numa_count(t), 4);
    ck_assert_uint_eq(skv_topo_pu_count(t), 96);
    ck_assert_str_eq(skv_topo_cpuset(t), "0-95");
    for (size_t i = 0; i < 4; i++) {
        const skv_topo_numa *n = skv_topo_numa_at(t, i);
        ck_assert_int_eq(n->id, (int)i);
        ck_assert_uint_eq(n->ncpus, 24);
        ck_assert_int_eq(n->cpus[0], (int)i * 24);
    }
    for (size_t i = 0; i < skv_topo_core_count(t); i++) {
        const skv_topo_core *c = skv_topo_core_at(t, i);
        ck_assert_int_eq(c->numa_node, c->pus[0] / 24);
        ck_assert_int_eq(skv_topo_pu_find(t, c->pus[0])->numa_node,
                         c->numa_node);
        ck_assert_uint_eq(skv_topo_pu_find(t, c->pus[0])->core, i);
    }
    ck_assert_uint_eq(skv_topo_numa_distance(t, 0, 1), 26);
    /* One display controller (no compute), on node 0. */
    ck_assert_uint_eq(skv_topo_accel_count(t), 1);
    ck_assert_int_eq(skv_topo_accel_at(t, 0)->compute, 0);
    ck_assert_int_eq(skv_topo_accel_at(t, 0)->numa_node, 0);
    ck_assert_str_eq(skv_topo_accel_at(t, 0)->name, "card0");
    skv_topo_free(t);
}
END_TEST

START_TEST(test_two_numa_pci_server)
{
    skv_topo *t = load_data("24em64t-2n6c2t-pci.xml");
    ck_assert_uint_eq(skv_topo_numa_count(t), 2);
    ck_assert_uint_eq(skv_topo_core_count(t), 12);
    ck_assert_uint_eq(skv_topo_core_at(t, 0)->npus, 2);
    ck_assert_str_eq(skv_topo_numa_at(t, 1)->cpuset,
                     "1,3,5,7,9,11,13,15,17,19,21,23");
    /* Three NVIDIA 3D controllers without OS devices: found by class. */
    size_t nvidia = 0;
    for (size_t i = 0; i < skv_topo_accel_count(t); i++) {
        const skv_topo_accel *a = skv_topo_accel_at(t, i);
        if (a->vendor_id == 0x10de) {
            nvidia++;
            ck_assert_int_eq(a->compute, 1);
            ck_assert_int_eq(strncmp(a->name, "pci:", 4), 0);
        }
    }
    ck_assert_uint_eq(nvidia, 3);
    const skv_topo_accel *a = skv_topo_accel_find(t, "0000:11:00.0");
    const skv_topo_accel *b = skv_topo_accel_find(t, "0000:14:00.0");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(a->numa_node, 1);
    ck_assert_int_eq(skv_topo_accel_link(t, a->index, b->index),
                     SKV_TOPO_LINK_PHB);
    ck_assert_uint_eq(skv_topo_accel_nvlink_bw(t, a->index, b->index), 0);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_disallowed_cpusets)
{
    skv_topo *t = load_data("16amd64-8n2c-cpusets.xml");
    /* Only PUs 0-3,5,6,12-15 and NUMA nodes 1-5 are allowed. */
    ck_assert_str_eq(skv_topo_cpuset(t), "0-3,5-6,12-15");
    ck_assert_uint_eq(skv_topo_pu_count(t), 10);
    ck_assert_ptr_null(skv_topo_pu_find(t, 4));
    ck_assert_ptr_null(skv_topo_pu_find(t, 7));
    ck_assert_ptr_nonnull(skv_topo_pu_find(t, 12));
    ck_assert_uint_eq(skv_topo_numa_count(t), 5);
    ck_assert_ptr_null(skv_topo_numa_find(t, 0));
    ck_assert_ptr_null(skv_topo_numa_find(t, 6));
    ck_assert_str_eq(skv_topo_numa_find(t, 1)->cpuset, "2-3");
    ck_assert_str_eq(skv_topo_numa_find(t, 4)->cpuset, "");
    ck_assert_uint_eq(skv_topo_numa_find(t, 4)->ncpus, 0);
    /* PUs whose node is disallowed have no local node. */
    ck_assert_int_eq(skv_topo_pu_find(t, 0)->numa_node, -1);
    ck_assert_int_eq(skv_topo_pu_find(t, 5)->numa_node, 2);
    size_t total = 0;
    for (size_t i = 0; i < skv_topo_core_count(t); i++)
        total += skv_topo_core_at(t, i)->npus;
    ck_assert_uint_eq(total, 10);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_synthetic)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_synthetic(&t, "pack:2 numa:1 core:4 pu:2", &e), &e);
    ck_assert_str_eq(skv_topo_source(t), "synthetic:pack:2 numa:1 core:4 pu:2");
    ck_assert_uint_eq(skv_topo_numa_count(t), 2);
    ck_assert_uint_eq(skv_topo_core_count(t), 8);
    ck_assert_uint_eq(skv_topo_pu_count(t), 16);
    ck_assert_str_eq(skv_topo_numa_at(t, 1)->cpuset, "8-15");
    const skv_topo_core *c = skv_topo_core_at(t, 5);
    ck_assert_uint_eq(c->index, 5);
    ck_assert_int_eq(c->package, 1);
    ck_assert_int_eq(c->numa_node, 1);
    ck_assert_uint_eq(c->npus, 2);
    ck_assert_int_eq(c->pus[0], 10);
    ck_assert_int_eq(c->pus[1], 11);
    ck_assert_uint_eq(skv_topo_accel_count(t), 0);
    ck_assert_int_eq(skv_topo_accel_link(t, 0, 1), SKV_TOPO_LINK_SYS);
    skv_topo_free(t);
    /* Without a Core level every PU is its own core. */
    SKV_CK_OK(skv_topo_load_synthetic(&t, "pack:2 pu:3", &e), &e);
    ck_assert_uint_eq(skv_topo_core_count(t), 6);
    ck_assert_uint_eq(skv_topo_numa_count(t), 1);
    skv_topo_free(t);
}
END_TEST

START_TEST(test_live_and_buffer)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = NULL;
    SKV_CK_OK(skv_topo_load_live(&t, &e), &e);
    ck_assert(skv_topo_pu_count(t) >= 1);
    ck_assert(skv_topo_numa_count(t) >= 1);
    ck_assert_int_eq((long)skv_topo_pu_count(t), sysconf(_SC_NPROCESSORS_ONLN));
    skv_topo_free(t);
    /* A sysroot other than "/" cannot be honoured by hwloc. */
    SKV_CK_OK(skv_sysroot_set("/tmp", &e), &e);
    ck_assert_int_eq(skv_topo_load_live(&t, &e), SKV_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.message, "/tmp"));
    SKV_CK_OK(skv_sysroot_set(NULL, &e), &e);
    /* XML from memory. */
    char path[4096], *buf = NULL;
    FILE *f = fopen(skv_test_data_path(path, sizeof(path),
                                       "topologies/nvidia-dgx2.xml"), "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)len);
    ck_assert_uint_eq(fread(buf, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    SKV_CK_OK(skv_topo_load_xml_buffer(&t, buf, (size_t)len, &e), &e);
    ck_assert_uint_eq(skv_topo_accel_count(t), 16);
    ck_assert_str_eq(skv_topo_source(t), "xml-buffer");
    skv_topo_free(t);
    ck_assert_int_eq(skv_topo_load_xml_buffer(&t, buf, 100, &e), SKV_EINVAL);
    free(buf);
}
END_TEST

START_TEST(test_bad_inputs)
{
    skv_error e = SKV_ERROR_INIT;
    skv_topo *t = (skv_topo *)0x1;
    char dir[] = "/tmp/skv-topo-XXXXXX", path[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/missing.xml", dir);
    ck_assert_int_eq(skv_topo_load_xml(&t, path, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "missing.xml"));
    ck_assert_int_eq(skv_topo_load_xml(&t, dir, &e), SKV_EINVAL);
    snprintf(path, sizeof(path), "%s/bad.xml", dir);
    FILE *f = fopen(path, "w");
    fputs("<topology><object type=\"Machine\"", f);
    fclose(f);
    ck_assert_int_eq(skv_topo_load_xml(&t, path, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "bad.xml"));
    f = fopen(path, "w");
    fputs("<?xml version=\"1.0\"?>\n<notatopology/>\n", f);
    fclose(f);
    ck_assert_int_eq(skv_topo_load_xml(&t, path, &e), SKV_EINVAL);
    unlink(path);
    rmdir(dir);
    ck_assert_int_eq(skv_topo_load_xml(&t, "", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_xml(&t, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_synthetic(&t, "pack:2 bogus:3", &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "bogus"));
    ck_assert_int_eq(skv_topo_load_synthetic(&t, "pack:0 pu:1", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_synthetic(&t, "", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_xml_buffer(&t, "<x", 2, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_xml_buffer(&t, NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_load_live(NULL, &e), SKV_EINVAL);
    ck_assert_ptr_eq(t, (skv_topo *)0x1); /* untouched on failure */
    /* NULL topology reads as empty. */
    skv_topo_free(NULL);
    ck_assert_uint_eq(skv_topo_numa_count(NULL), 0);
    ck_assert_ptr_null(skv_topo_accel_find(NULL, "nvml0"));
}
END_TEST

START_TEST(test_cpulist)
{
    skv_error e = SKV_ERROR_INIT;
    int ids[] = {8, 3, 0, 1, 2, 3, 10, 11};
    char *s = NULL;
    SKV_CK_OK(skv_topo_cpulist_format(&s, ids, 8, &e), &e);
    ck_assert_str_eq(s, "0-3,8,10-11");
    skv_free(s);
    SKV_CK_OK(skv_topo_cpulist_format(&s, NULL, 0, &e), &e);
    ck_assert_str_eq(s, "");
    skv_free(s);
    int neg = -1;
    ck_assert_int_eq(skv_topo_cpulist_format(&s, &neg, 1, &e), SKV_EINVAL);

    int *out = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_topo_cpulist_parse(&out, &n, " 0-3, 8 ,10-11,2\n", &e), &e);
    ck_assert_uint_eq(n, 7);
    ck_assert_int_eq(out[0], 0);
    ck_assert_int_eq(out[4], 8);
    ck_assert_int_eq(out[6], 11);
    SKV_CK_OK(skv_topo_cpulist_format(&s, out, n, &e), &e);
    ck_assert_str_eq(s, "0-3,8,10-11");
    skv_free(s);
    skv_free(out);
    SKV_CK_OK(skv_topo_cpulist_parse(&out, &n, "", &e), &e);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(out);
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "3-1", &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "3-1"));
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "1,,2", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "1-", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "x", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "1;2", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_topo_cpulist_parse(&out, &n, "99999999", &e),
                     SKV_ERANGE);
}
END_TEST

/* Every allocation failing in turn: a clean SKV_ENOMEM, nothing leaked
 * (the sanitizer run checks the leaks). */
static long allocs_left;
static void *fail_malloc(size_t n, void *p)
{
    (void)p;
    return allocs_left-- > 0 ? malloc(n) : NULL;
}
static void *fail_realloc(void *q, size_t n, void *p)
{
    (void)p;
    return allocs_left-- > 0 ? realloc(q, n) : NULL;
}
static void fail_free(void *q, void *p)
{
    (void)p;
    free(q);
}

START_TEST(test_out_of_memory)
{
    skv_allocator a = {SKV_ALLOCATOR_VERSION, fail_malloc, fail_realloc,
                       fail_free, NULL};
    char path[4096];
    skv_test_data_path(path, sizeof(path), "topologies/nvidia-dgx2.xml");
    long k;
    for (k = 0; k < 100000; k++) {
        skv_error e = SKV_ERROR_INIT;
        skv_topo *t = NULL;
        allocs_left = k;
        SKV_CK_OK(skv_set_allocator(&a, NULL), NULL);
        int rc = skv_topo_load_xml(&t, path, &e);
        SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
        if (rc == 0) {
            ck_assert_uint_eq(skv_topo_accel_count(t), 16);
            skv_topo_free(t);
            break;
        }
        ck_assert_int_eq(rc, SKV_ENOMEM);
        ck_assert_ptr_null(t);
    }
    ck_assert(k > 10 && k < 100000);
}
END_TEST

Suite *skv_test_suite_topo(void);
Suite *skv_test_suite_topo(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("topo");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_dgx2_numa_and_gpus);
    tcase_add_test(tc, test_dgx2_proximity);
    tcase_add_test(tc, test_four_numa_server);
    tcase_add_test(tc, test_two_numa_pci_server);
    tcase_add_test(tc, test_disallowed_cpusets);
    tcase_add_test(tc, test_synthetic);
    tcase_add_test(tc, test_live_and_buffer);
    tcase_add_test(tc, test_bad_inputs);
    tcase_add_test(tc, test_cpulist);
    tcase_add_test(tc, test_out_of_memory);
    suite_add_tcase(s, tc);
    return s;
}
