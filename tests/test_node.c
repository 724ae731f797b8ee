/* The node mapper on real topologies (DGX-2 with its 16 GPUs, 4- and
 * 8-NUMA servers): GPU proximity, cores following GPUs, memory nodesets,
 * policies, atomic rollback, and the sokovan-topo program.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sokovan/node.h"
#include "skv_test.h"
#include "node_vendor.h"

#define DGX2 "topologies/nvidia-dgx2.xml"
#define NUMA4 "topologies/96em64t-4n4d3ca2co-pci.xml"
#define NUMA8 "topologies/16amd64-8n2c-cpusets.xml"

typedef struct fixture {
    skv_topo *topo;
    skv_plugin *pl[3];
    size_t npl;
    skv_node *node;
} fixture;

static void open_plugin(fixture *f, const char *name, const char *config)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.topo = f->topo;
    ctx.config = config;
    SKV_CK_OK(skv_plugin_open_builtin(&f->pl[f->npl], name, &ctx, &e), &e);
    f->npl++;
}

/* cpu + mem + (optionally) the mock accelerator with config. */
static void setup(fixture *f, const char *xml, const char *mock)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    memset(f, 0, sizeof(*f));
    SKV_CK_OK(skv_topo_load_xml(&f->topo,
                                skv_test_data_path(path, sizeof(path), xml),
                                &e), &e);
    open_plugin(f, "cpu", NULL);
    open_plugin(f, "mem", NULL);
    if (mock)
        open_plugin(f, "mock", mock);
    SKV_CK_OK(skv_node_new(&f->node, f->topo, f->pl, f->npl, &e), &e);
}

static void teardown(fixture *f)
{
    skv_node_free(f->node);
    for (size_t i = 0; i < f->npl; i++)
        skv_plugin_free(f->pl[i]);
    skv_topo_free(f->topo);
}

static skv_node_placement *place(fixture *f, const char *text,
                                 skv_node_policy policy)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, text, skv_node_registry(f->node), &e), &e);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.policy = policy;
    skv_node_placement *p = NULL;
    SKV_CK_OK(skv_node_alloc(&p, f->node, req, &o, &e), &e);
    skv_slots_free(req);
    return p;
}

static void unplace(fixture *f, skv_node_placement *p)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_node_release(f->node, p, &e), &e);
    skv_node_placement_free(p);
}

/* Topology accelerator index of every GPU amount, and their NUMA nodes. */
static size_t gpus_of(const fixture *f, const skv_node_placement *p,
                      size_t *accel, int *numa)
{
    size_t k = 0;
    skv_node_amount am;
    for (size_t i = 0; skv_node_placement_at(p, i, &am) == 0; i++) {
        if (strcmp(am.slot, "cuda.device") != 0)
            continue;
        const skv_topo_accel *a = skv_topo_accel_find(f->topo, am.pci_bus_id);
        ck_assert_ptr_nonnull(a);
        ck_assert_int_eq(a->numa_node, am.numa_node);
        accel[k] = a->index;
        numa[k++] = am.numa_node;
    }
    return k;
}

/* Every core amount lies on node; returns how many cores. */
static size_t cores_on(const skv_node_placement *p, int node)
{
    size_t k = 0;
    skv_node_amount am;
    for (size_t i = 0; skv_node_placement_at(p, i, &am) == 0; i++) {
        if (strcmp(am.slot, "cpu") != 0)
            continue;
        ck_assert_int_eq(am.numa_node, node);
        k++;
    }
    return k;
}

/* ---- DGX-2 ---------------------------------------------------------------- */

/* The DGX-2 XML keeps 2 cores per package (see shared/data/README.md), so
 * the "8 cores" become the 2 cores a NUMA node has here. */
START_TEST(test_dgx2_two_gpus_same_switch)
{
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    ck_assert_uint_eq(skv_alloc_map_device_count(skv_node_map(f.node, 2)), 16);
    skv_node_placement *p[4];
    int node_of[4];
    for (int round = 0; round < 4; round++) {
        p[round] = place(&f, "cuda.device=2,cpu=1,mem=32g",
                         SKV_NODE_PREFER_SINGLE);
        size_t acc[2];
        int numa[2];
        ck_assert_uint_eq(gpus_of(&f, p[round], acc, numa), 2);
        ck_assert_int_eq(numa[0], numa[1]);
        /* While pairs are free, both GPUs sit behind one PCIe switch. */
        ck_assert_int_eq(skv_topo_accel_link(f.topo, acc[0], acc[1]),
                         SKV_TOPO_LINK_PIX);
        ck_assert_uint_eq(cores_on(p[round], numa[0]), 1);
        char want[8];
        snprintf(want, sizeof(want), "%d", numa[0]);
        ck_assert_str_eq(skv_node_placement_mems(p[round]), want);
        node_of[round] = numa[0];
    }
    /* Two cores per node: two pairs per node, then the other node. */
    ck_assert_int_eq(node_of[0], node_of[1]);
    ck_assert_int_ne(node_of[1], node_of[2]);
    ck_assert_int_eq(node_of[2], node_of[3]);
    /* Cores are exhausted; a fifth pair fails and leaves nothing behind. */
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cuda.device=2,cpu=1", NULL, NULL), NULL);
    skv_node_placement *x = NULL;
    skv_qty gpus_before = skv_alloc_map_used(skv_node_map(f.node, 2), 0,
                                             SKV_ALLOC_ALL);
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_node_alloc(&x, f.node, req, NULL, &e), SKV_ENOSPC);
    ck_assert_ptr_nonnull(strstr(e.message, "cpu"));
    ck_assert_int_eq(skv_alloc_map_used(skv_node_map(f.node, 2), 0,
                                        SKV_ALLOC_ALL), gpus_before);
    skv_slots_free(req);
    for (int round = 0; round < 4; round++)
        unplace(&f, p[round]);
    for (size_t i = 0; i < skv_node_plugin_count(f.node); i++)
        for (size_t s = 0; s < skv_alloc_map_slot_count(skv_node_map(f.node, i));
             s++)
            ck_assert_int_eq(skv_alloc_map_used(skv_node_map(f.node, i), s,
                                                SKV_ALLOC_ALL), 0);
    teardown(&f);
}
END_TEST

START_TEST(test_dgx2_cpuset_and_config)
{
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    skv_node_placement *p = place(&f, "cuda.device=2,cpu=2,mem=32g",
                                  SKV_NODE_PREFER_SINGLE);
    size_t acc[2];
    int numa[2];
    gpus_of(&f, p, acc, numa);
    const skv_topo_numa *node = skv_topo_numa_find(f.topo, numa[0]);
    ck_assert_str_eq(skv_node_placement_cpuset(p), node->cpuset);
    const skv_container_config *cfg = skv_node_placement_config(p);
    ck_assert_str_eq(skv_container_config_cpus(cfg), node->cpuset);
    ck_assert_str_eq(skv_container_config_mems(cfg),
                     skv_node_placement_mems(p));
    const char *vis = skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES");
    ck_assert_ptr_nonnull(vis);
    ck_assert_ptr_nonnull(strchr(vis, ','));
    int nodes[4];
    ck_assert_uint_eq(skv_node_placement_numa_nodes(p, nodes, 4), 1);
    ck_assert_int_eq(nodes[0], numa[0]);
    unplace(&f, p);
    teardown(&f);
}
END_TEST

START_TEST(test_dgx2_packing_and_whole_nodes)
{
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    /* One GPU, then another: the second completes the first's switch. */
    skv_node_placement *a = place(&f, "cuda.device=1", SKV_NODE_PREFER_SINGLE);
    skv_node_placement *b = place(&f, "cuda.device=1", SKV_NODE_PREFER_SINGLE);
    size_t ia[1], ib[1];
    int na[1], nb[1];
    gpus_of(&f, a, ia, na);
    gpus_of(&f, b, ib, nb);
    ck_assert_int_eq(skv_topo_accel_link(f.topo, ia[0], ib[0]),
                     SKV_TOPO_LINK_PIX);
    unplace(&f, a);
    unplace(&f, b);
    /* Eight GPUs fill one node, the next eight the other one. */
    skv_node_placement *h1 = place(&f, "cuda.device=8", SKV_NODE_PREFER_SINGLE);
    skv_node_placement *h2 = place(&f, "cuda.device=8", SKV_NODE_PREFER_SINGLE);
    size_t acc[8];
    int numa1[8], numa2[8];
    ck_assert_uint_eq(gpus_of(&f, h1, acc, numa1), 8);
    ck_assert_uint_eq(gpus_of(&f, h2, acc, numa2), 8);
    for (int i = 1; i < 8; i++) {
        ck_assert_int_eq(numa1[i], numa1[0]);
        ck_assert_int_eq(numa2[i], numa2[0]);
    }
    ck_assert_int_ne(numa1[0], numa2[0]);
    unplace(&f, h1);
    unplace(&f, h2);
    /* All sixteen: two nodes, and the cores spread over both. */
    skv_node_placement *all = place(&f, "cuda.device=16,cpu=4,mem=64g",
                                    SKV_NODE_PREFER_SINGLE);
    ck_assert_str_eq(skv_node_placement_cpuset(all), "0-1,24-25");
    ck_assert_str_eq(skv_node_placement_mems(all), "0-1");
    unplace(&f, all);
    teardown(&f);
}
END_TEST

START_TEST(test_dgx2_interleaved_and_shares)
{
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    skv_node_placement *p = place(&f, "cpu=2,mem=2g", SKV_NODE_INTERLEAVED);
    ck_assert_str_eq(skv_node_placement_cpuset(p), "0,24");
    ck_assert_str_eq(skv_node_placement_mems(p), "0-1");
    unplace(&f, p);
    /* Fractions: anti-fragmentation keeps 0.5 + 0.5 on one GPU. */
    skv_node_placement *s1 = place(&f, "cuda.shares=0.5", SKV_NODE_PREFER_SINGLE);
    skv_node_placement *s2 = place(&f, "cuda.shares=0.5", SKV_NODE_PREFER_SINGLE);
    skv_node_amount x, y;
    ck_assert_int_eq(skv_node_placement_at(s1, 0, &x), 0);
    ck_assert_int_eq(skv_node_placement_at(s2, 0, &y), 0);
    ck_assert_str_eq(x.device, y.device);
    ck_assert_uint_eq(skv_node_placement_count(s2), 1);
    /* That GPU is shared now: a whole-GPU request takes another one. */
    skv_node_placement *w = place(&f, "cuda.device=1", SKV_NODE_PREFER_SINGLE);
    skv_node_amount z;
    ck_assert_int_eq(skv_node_placement_at(w, 0, &z), 0);
    ck_assert_str_ne(z.device, x.device);
    unplace(&f, s1);
    unplace(&f, s2);
    unplace(&f, w);
    teardown(&f);
}
END_TEST

/* The DGX-2's real CPU side (2 x 24 cores x 2 threads) with 16 GPUs, 8 per
 * node: the full request, 8 cores following the GPUs. */
START_TEST(test_dgx2_like_eight_cores)
{
    fixture f;
    skv_error e = SKV_ERROR_INIT;
    memset(&f, 0, sizeof(f));
    SKV_CK_OK(skv_topo_load_synthetic(&f.topo, "pack:2 numa:1(memory=768GB) "
                                      "core:24 pu:2", &e), &e);
    open_plugin(&f, "cpu", NULL);
    open_plugin(&f, "mem", NULL);
    open_plugin(&f, "mock", "count=16,numa=0:0:0:0:0:0:0:0:1,prefix=cuda");
    SKV_CK_OK(skv_node_new(&f.node, f.topo, f.pl, f.npl, &e), &e);
    skv_node_placement *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = place(&f, "cuda.device=2,cpu=8,mem=32g", SKV_NODE_PREFER_SINGLE);
        skv_node_amount am;
        ck_assert_int_eq(skv_node_placement_at(p[i], 0, &am), 0);
        int node = am.numa_node;
        ck_assert_int_eq(skv_node_placement_at(p[i], 1, &am), 0);
        ck_assert_int_eq(am.numa_node, node);
        ck_assert_uint_eq(cores_on(p[i], node), 8);
        ck_assert_str_eq(skv_node_placement_mems(p[i]), node ? "1" : "0");
        /* 8 cores = 16 PUs, all of the GPUs' node. */
        int *pus = NULL;
        size_t npus = 0;
        SKV_CK_OK(skv_topo_cpulist_parse(&pus, &npus,
                                         skv_node_placement_cpuset(p[i]), &e),
                  &e);
        ck_assert_uint_eq(npus, 16);
        for (size_t k = 0; k < npus; k++)
            ck_assert_int_eq(skv_topo_pu_find(f.topo, pus[k])->numa_node,
                             node);
        skv_free(pus);
    }
    for (int i = 0; i < 4; i++)
        unplace(&f, p[i]);
    teardown(&f);
}
END_TEST

START_TEST(test_node_errors)
{
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "gpu=1", NULL, NULL), NULL);
    skv_node_placement *p = NULL;
    ck_assert_int_eq(skv_node_alloc(&p, f.node, req, NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "'gpu'"));
    skv_slots_free(req);
    SKV_CK_OK(skv_slots_parse(&req, "cuda.device=1", NULL, NULL), NULL);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.version = 5;
    ck_assert_int_eq(skv_node_alloc(&p, f.node, req, &o, &e), SKV_EVERSION);
    o = (skv_node_alloc_options)SKV_NODE_ALLOC_OPTIONS_INIT;
    o.flags = 0x40;
    ck_assert_int_eq(skv_node_alloc(&p, f.node, req, &o, &e), SKV_EINVAL);
    o.flags = SKV_NODE_NO_CONFIG;
    SKV_CK_OK(skv_node_alloc(&p, f.node, req, &o, &e), &e);
    ck_assert_ptr_null(skv_node_placement_config(p));
    ck_assert_str_eq(skv_node_placement_cpuset(p), "");
    SKV_CK_OK(skv_node_release(f.node, p, &e), &e);
    ck_assert_int_eq(skv_node_release(f.node, p, &e), SKV_ESTATE);
    skv_node_placement_free(p);
    skv_slots_free(req);
    /* A slot offered twice. */
    skv_plugin *dup[2] = {f.pl[0], f.pl[0]};
    skv_node *bad = NULL;
    ck_assert_int_ne(skv_node_new(&bad, f.topo, dup, 2, &e), 0);
    ck_assert_ptr_null(bad);
    skv_node_policy pol;
    ck_assert_int_eq(skv_node_policy_parse(&pol, "spread", &e), SKV_EINVAL);
    SKV_CK_OK(skv_node_policy_parse(&pol, "interleaved", &e), &e);
    ck_assert_str_eq(skv_node_policy_name(pol), "interleaved");
    teardown(&f);
}
END_TEST

/* Every allocation failure at any step of a node allocation (maps,
 * results, cpuset strings, plugin configuration) leaves the node exactly as
 * it was: the earlier steps are rolled back. */
static long fail_at = -1;
static void *f_malloc(size_t n, void *p)
{
    (void)p;
    if (fail_at >= 0 && fail_at-- == 0)
        return NULL;
    return malloc(n);
}
static void *f_realloc(void *q, size_t n, void *p)
{
    (void)p;
    if (fail_at >= 0 && fail_at-- == 0)
        return NULL;
    return realloc(q, n);
}
static void f_free(void *q, void *p)
{
    (void)p;
    free(q);
}

START_TEST(test_node_rollback_on_failure)
{
    skv_allocator al = {SKV_ALLOCATOR_VERSION, f_malloc, f_realloc, f_free,
                        NULL};
    SKV_CK_OK(skv_set_allocator(&al, NULL), NULL);
    fixture f;
    setup(&f, DGX2, "topology=1,prefix=cuda");
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cuda.device=2,cpu=2,mem=32g", NULL,
                              NULL), NULL);
    void *before[3];
    size_t blen[3];
    for (size_t i = 0; i < 3; i++)
        SKV_CK_OK(skv_alloc_map_snapshot(&before[i], &blen[i],
                                         skv_node_map(f.node, i), NULL), NULL);
    int failures = 0;
    for (long k = 0; k < 200; k++) {
        skv_node_placement *p = NULL;
        fail_at = k;
        int rc = skv_node_alloc(&p, f.node, req, NULL, NULL);
        fail_at = -1;
        if (rc == 0) {
            unplace(&f, p);
            break;
        }
        ck_assert_int_eq(rc, SKV_ENOMEM);
        ck_assert_ptr_null(p);
        failures++;
        for (size_t i = 0; i < 3; i++) {
            void *now;
            size_t len;
            SKV_CK_OK(skv_alloc_map_snapshot(&now, &len,
                                             skv_node_map(f.node, i), NULL),
                      NULL);
            ck_assert(len == blen[i] && memcmp(now, before[i], len) == 0);
            skv_free(now);
        }
    }
    ck_assert_int_gt(failures, 5);
    for (size_t i = 0; i < 3; i++)
        skv_free(before[i]);
    skv_slots_free(req);
    teardown(&f);
    SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
}
END_TEST

/* ---- 4- and 8-NUMA servers ------------------------------------------------ */

START_TEST(test_numa4_gpus_lead_cores)
{
    fixture f;
    setup(&f, NUMA4, "count=4,numa=0:1:2:3,prefix=cuda");
    for (int round = 0; round < 4; round++) {
        skv_node_placement *p = place(&f, "cuda.device=1,cpu=8,mem=32g",
                                      SKV_NODE_PREFER_SINGLE);
        skv_node_amount am;
        ck_assert_int_eq(skv_node_placement_at(p, 0, &am), 0);
        ck_assert_str_eq(am.slot, "cuda.device");
        ck_assert_int_eq(am.numa_node, round); /* best fit, then lowest id */
        ck_assert_uint_eq(cores_on(p, round), 8);
        char want[8];
        snprintf(want, sizeof(want), "%d", round);
        ck_assert_str_eq(skv_node_placement_mems(p), want);
        /* Keep it: the next GPU must come from another node. */
        skv_node_placement_free(p);
    }
    teardown(&f);
}
END_TEST

START_TEST(test_numa4_cpu_only)
{
    fixture f;
    setup(&f, NUMA4, NULL);
    /* 24 cores fit one node exactly; 30 need the fewest nodes: two. */
    skv_node_placement *a = place(&f, "cpu=24,mem=8g", SKV_NODE_PREFER_SINGLE);
    ck_assert_str_eq(skv_node_placement_mems(a), "0");
    ck_assert_uint_eq(cores_on(a, 0), 24);
    skv_node_placement *b = place(&f, "cpu=30", SKV_NODE_PREFER_SINGLE);
    int nodes[4];
    ck_assert_uint_eq(skv_node_placement_numa_nodes(b, nodes, 4), 2);
    ck_assert_str_eq(skv_node_placement_mems(b), "1-2");
    skv_node_placement *c = place(&f, "cpu=4,mem=8g", SKV_NODE_INTERLEAVED);
    ck_assert_uint_eq(skv_node_placement_numa_nodes(c, nodes, 4), 4);
    ck_assert_str_eq(skv_node_placement_mems(c), "0-3");
    unplace(&f, a);
    unplace(&f, b);
    unplace(&f, c);
    teardown(&f);
}
END_TEST

START_TEST(test_numa8_disallowed)
{
    fixture f;
    setup(&f, NUMA8, NULL);
    /* Allowed: node 1 (PUs 2-3), node 2 (5), node 3 (6), nodes 4-5 without
     * PUs; the rest of the machine is excluded by its cpuset. */
    skv_node_placement *a = place(&f, "cpu=2,mem=1g", SKV_NODE_PREFER_SINGLE);
    ck_assert_str_eq(skv_node_placement_cpuset(a), "2-3");
    ck_assert_str_eq(skv_node_placement_mems(a), "1");
    unplace(&f, a);
    skv_node_placement *b = place(&f, "cpu=3", SKV_NODE_PREFER_SINGLE);
    ck_assert_str_eq(skv_node_placement_cpuset(b), "2-3,5");
    ck_assert_str_eq(skv_node_placement_mems(b), "1-2");
    unplace(&f, b);
    /* Memory alone goes to one node that holds it. */
    skv_node_placement *c = place(&f, "mem=6g", SKV_NODE_PREFER_SINGLE);
    ck_assert_uint_eq(skv_node_placement_count(c), 1);
    unplace(&f, c);
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "mem=100g", NULL, NULL), NULL);
    skv_node_placement *x = NULL;
    ck_assert_int_eq(skv_node_alloc(&x, f.node, req, NULL, NULL), SKV_ERANGE);
    skv_slots_free(req);
    teardown(&f);
}
END_TEST

/* ---- sokovan-topo ------------------------------------------------------------ */

/* Run the program; returns its exit status and its stdout in out. */
static int run_tool(char *out, size_t cap, const char *args)
{
    char cmd[8192], data[4096];
    snprintf(cmd, sizeof(cmd), "%s/bin/sokovan-topo --xml %s %s 2>/dev/null",
             skv_test_build_dir(),
             skv_test_data_path(data, sizeof(data), DGX2), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

START_TEST(test_tool_json)
{
    static char out[1 << 18];
    int rc = run_tool(out, sizeof(out),
                      "--topo-gpus --json --alloc cuda.device=2,cpu=2,mem=32g");
    ck_assert_int_eq(rc, 0);
    ck_assert_ptr_nonnull(strstr(out, "\"numa_nodes\":[{\"id\":0,\"cpus\":"
                                      "\"0-1\",\"cores\":2,\"memory_bytes\":"
                                      "810234351616}"));
    /* 16 GPU devices, each with its NUMA node and PCI bus id. */
    ck_assert_uint_eq(count(out, "\"plugin\":\"mock\",\"id\":"), 16);
    ck_assert_ptr_nonnull(strstr(out, "\"id\":\"15\",\"numa_node\":1,"
                                      "\"pci_bus_id\":\"0000:e7:00.0\""));
    const char *alloc = strstr(out, "\"allocation\":{");
    ck_assert_ptr_nonnull(alloc);
    ck_assert_uint_eq(count(alloc, "\"slot\":\"cuda.device\""), 2);
    ck_assert_ptr_nonnull(strstr(alloc, "\"cpuset\":\"0-1\""));
    ck_assert_ptr_nonnull(strstr(alloc, "\"mems\":\"0\""));
    ck_assert_ptr_nonnull(strstr(alloc, "\"pci_bus_id\":\"0000:34:00.0\""));
    ck_assert_ptr_nonnull(strstr(alloc, "\"pci_bus_id\":\"0000:36:00.0\""));
    /* Bad flags and impossible requests fail clearly. */
    ck_assert_int_eq(run_tool(out, sizeof(out), "--bogus"), 2);
    ck_assert_int_eq(run_tool(out, sizeof(out), "--policy"), 2);
    ck_assert_int_eq(run_tool(out, sizeof(out),
                              "--topo-gpus --alloc cuda.device=17"), 1);
    ck_assert_int_eq(run_tool(out, sizeof(out),
                              "--alloc cpu=1 --policy nope"), 1);
    /* The table names the GPUs' PCI bus ids. */
    ck_assert_int_eq(run_tool(out, sizeof(out), "--topo-gpus"), 0);
    ck_assert_ptr_nonnull(strstr(out, "0000:b7:00.0"));
}
END_TEST

/* ---- fixed amounts (a manager's accelerator decision, restore) ---------- */

static int place_fixed(skv_node_placement **out, fixture *f, const char *text,
                       const skv_device_amount *fx, size_t n, unsigned version)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, text, skv_node_registry(f->node), &e), &e);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.version = version;
    o.fixed = fx;
    o.nfixed = n;
    int rc = skv_node_alloc(out, f->node, req, &o, &e);
    skv_slots_free(req);
    return rc;
}

START_TEST(test_fixed_accelerators)
{
    fixture f;
    setup(&f, NUMA4, "count=4,numa=0:1:2:3,prefix=cuda");
    /* Left alone the mapper would take GPU 0; the caller decided GPU 2. */
    skv_device_amount gpu2 = {"2", "cuda.device", SKV_QTY_SCALE};
    skv_node_placement *p = NULL;
    ck_assert_int_eq(place_fixed(&p, &f, "cuda.device=1,cpu=4,mem=8g", &gpu2,
                                 1, SKV_NODE_ALLOC_OPTIONS_VERSION), 0);
    skv_node_amount am;
    ck_assert_int_eq(skv_node_placement_at(p, 0, &am), 0);
    ck_assert_str_eq(am.device, "2");
    ck_assert_uint_eq(cores_on(p, 2), 4);
    ck_assert_str_eq(skv_node_placement_mems(p), "2");
    ck_assert_str_eq(skv_container_config_get_env(
                         skv_node_placement_config(p), "CUDA_VISIBLE_DEVICES"),
                     "2");
    /* Taken: a second claim of it fails and changes nothing. */
    skv_node_placement *q = NULL;
    ck_assert_int_lt(place_fixed(&q, &f, "cpu=1", &gpu2, 1, 2), 0);
    /* Request and fixed amounts disagree; unknown device or slot; v1 options
     * ignore the fixed fields; unknown version. */
    skv_device_amount bad[] = {{"1", "cuda.device", SKV_QTY_SCALE},
                               {"9", "cuda.device", SKV_QTY_SCALE},
                               {"1", "nope.device", SKV_QTY_SCALE},
                               {"1", "cuda.device", 0}};
    ck_assert_int_eq(place_fixed(&q, &f, "cuda.device=2", bad, 1, 2),
                     SKV_EINVAL);
    for (size_t i = 1; i < 4; i++)
        ck_assert_int_eq(place_fixed(&q, &f, "cpu=1", &bad[i], 1, 2),
                         SKV_EINVAL);
    ck_assert_int_eq(place_fixed(&q, &f, "cuda.device=1", &gpu2, 1, 1), 0);
    ck_assert_int_eq(skv_node_placement_at(q, 0, &am), 0);
    ck_assert_str_ne(am.device, "2");
    unplace(&f, q);
    ck_assert_int_eq(place_fixed(&q, &f, "cpu=1", &gpu2, 1, 3), SKV_EVERSION);
    /* Restore: the whole placement, given back as fixed amounts on a fresh
     * node, comes back identical. */
    size_t n = skv_node_placement_count(p);
    skv_device_amount *all = calloc(n, sizeof(*all));
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(skv_node_placement_at(p, i, &am), 0);
        all[i] = (skv_device_amount){am.device, am.slot, am.qty};
    }
    fixture g;
    setup(&g, NUMA4, "count=4,numa=0:1:2:3,prefix=cuda");
    skv_node_placement *r = NULL;
    ck_assert_int_eq(place_fixed(&r, &g, "", all, n, 2), 0);
    ck_assert_str_eq(skv_node_placement_cpuset(r), skv_node_placement_cpuset(p));
    ck_assert_str_eq(skv_node_placement_mems(r), skv_node_placement_mems(p));
    ck_assert_uint_eq(skv_node_placement_count(r), n);
    unplace(&g, r);
    teardown(&g);
    free(all);
    unplace(&f, p);
    teardown(&f);
}
END_TEST

Suite *skv_test_suite_node(void);
Suite *skv_test_suite_node(void)
{
    Suite *s = suite_create("node");
    add_vendor_tcase(s);
    TCase *tc = tcase_create("node");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_dgx2_two_gpus_same_switch);
    tcase_add_test(tc, test_dgx2_cpuset_and_config);
    tcase_add_test(tc, test_dgx2_packing_and_whole_nodes);
    tcase_add_test(tc, test_dgx2_interleaved_and_shares);
    tcase_add_test(tc, test_dgx2_like_eight_cores);
    tcase_add_test(tc, test_node_errors);
    tcase_add_test(tc, test_node_rollback_on_failure);
    tcase_add_test(tc, test_numa4_gpus_lead_cores);
    tcase_add_test(tc, test_numa4_cpu_only);
    tcase_add_test(tc, test_numa8_disallowed);
    tcase_add_test(tc, test_tool_json);
    tcase_add_test(tc, test_fixed_accelerators);
    suite_add_tcase(s, tc);
    return s;
}
