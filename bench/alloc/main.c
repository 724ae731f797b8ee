/* bench/alloc: latency of one node-level allocation + release on the DGX-2
 * topology (16 V100 behind PCIe switches, as the mock accelerator), and of
 * the bare allocation maps underneath.
 *
 * The DGX-2 XML of the test corpus keeps only 2 cores per package, so the
 * issue's "1 GPU + 8 cores + 32 GiB" runs on a synthetic machine with the
 * DGX-2's real CPU side (2 packages x 24 cores x 2 threads) and the same 16
 * GPUs, 8 per NUMA node; on the XML itself the request uses the 2 cores a
 * node has.
 *
 * Prints a table, then one JSON line of the figures (nanoseconds).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sokovan/alloc.h"
#include "sokovan/node.h"

#define WARMUP 2000
#define ROUNDS 50000

typedef struct machine {
    skv_topo *topo;
    skv_plugin *pl[3];
    skv_node *node;
} machine;

typedef struct figure {
    const char *name;
    double median_ns, p99_ns;
} figure;

static void die(const char *what, const skv_error *e)
{
    fprintf(stderr, "bench/alloc: %s: %s\n", what, e->message);
    exit(1);
}

static void open_machine(machine *m, const char *xml, const char *synthetic,
                         const char *mock)
{
    skv_error e = SKV_ERROR_INIT;
    memset(m, 0, sizeof(*m));
    int rc = xml ? skv_topo_load_xml(&m->topo, xml, &e)
                 : skv_topo_load_synthetic(&m->topo, synthetic, &e);
    if (rc)
        die("topology", &e);
    const char *names[3] = {"cpu", "mem", "mock"};
    const char *cfg[3] = {NULL, NULL, mock};
    for (int i = 0; i < 3; i++) {
        skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
        ctx.topo = m->topo;
        ctx.config = cfg[i];
        if (skv_plugin_open_builtin(&m->pl[i], names[i], &ctx, &e))
            die(names[i], &e);
    }
    if (skv_node_new(&m->node, m->topo, m->pl, 3, &e))
        die("node", &e);
}

static void close_machine(machine *m)
{
    skv_node_free(m->node);
    for (int i = 0; i < 3; i++)
        skv_plugin_free(m->pl[i]);
    skv_topo_free(m->topo);
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static figure summarize(const char *name, int64_t *t, size_t n)
{
    qsort(t, n, sizeof(*t), cmp_i64);
    figure f = {name, (double)t[n / 2], (double)t[(n * 99) / 100]};
    return f;
}

/* One skv_node_alloc + skv_node_release + free, timed ROUNDS times. */
static figure bench_node(const char *name, machine *m, const char *request,
                         unsigned flags, int64_t *t)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    if (skv_slots_parse(&req, request, skv_node_registry(m->node), &e))
        die(request, &e);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.flags = flags;
    for (long i = -WARMUP; i < ROUNDS; i++) {
        int64_t t0 = now_ns();
        skv_node_placement *p = NULL;
        if (skv_node_alloc(&p, m->node, req, &o, &e))
            die(request, &e);
        skv_node_release(m->node, p, NULL);
        skv_node_placement_free(p);
        if (i >= 0)
            t[i] = now_ns() - t0;
    }
    skv_slots_free(req);
    return summarize(name, t, ROUNDS);
}

/* The bare map: alloc + release of one slot amount. */
static figure bench_map(const char *name, const skv_alloc_map *cm,
                        const char *slot, skv_qty qty, int64_t *t)
{
    skv_error e = SKV_ERROR_INIT;
    skv_alloc_map *m = NULL;
    size_t s;
    if (skv_alloc_map_dup(&m, cm, &e))
        die("dup", &e);
    if (skv_alloc_map_slot_index(m, slot, &s))
        die(slot, &e);
    for (long i = -WARMUP; i < ROUNDS; i++) {
        int64_t t0 = now_ns();
        skv_alloc_result *r = NULL;
        if (skv_alloc_map_alloc_slot(&r, m, s, qty, NULL, &e))
            die(slot, &e);
        skv_alloc_map_release(m, r, NULL);
        skv_alloc_result_free(r);
        if (i >= 0)
            t[i] = now_ns() - t0;
    }
    skv_alloc_map_free(m);
    return summarize(name, t, ROUNDS);
}

static figure bench_check(const char *name, const skv_alloc_map *m,
                          const char *slot, skv_qty qty, int64_t *t)
{
    size_t s;
    if (skv_alloc_map_slot_index(m, slot, &s))
        exit(1);
    volatile int sink = 0;
    for (long i = -WARMUP; i < ROUNDS; i++) {
        int64_t t0 = now_ns();
        sink += skv_alloc_map_check_slot(m, s, qty, NULL, NULL);
        if (i >= 0)
            t[i] = now_ns() - t0;
    }
    (void)sink;
    return summarize(name, t, ROUNDS);
}

int main(int argc, char **argv)
{
    const char *xml = argc > 1 ? argv[1]
                               : "../shared/data/topologies/nvidia-dgx2.xml";
    int64_t *t = malloc(ROUNDS * sizeof(int64_t));
    if (!t)
        return 1;
    machine dgx, full;
    open_machine(&dgx, xml, NULL, "topology=1,prefix=cuda");
    open_machine(&full, NULL, "pack:2 numa:1(memory=768GB) l3:1 core:24 pu:2",
                 "count=16,numa=0:0:0:0:0:0:0:0:1,prefix=cuda,memory=32g");
    figure f[10];
    size_t n = 0;
    /* The target figure: the placement decision and its release
     * (skv_node_alloc with SKV_NODE_NO_CONFIG + skv_node_release). */
    f[n++] = bench_node("alloc_1gpu_8cpu_32g", &full,
                        "cuda.device=1,cpu=8,mem=32g", SKV_NODE_NO_CONFIG, t);
    f[n++] = bench_node("alloc_16gpu", &dgx, "cuda.device=16",
                        SKV_NODE_NO_CONFIG, t);
    f[n++] = bench_node("alloc_1gpu_2cpu_32g_dgx2xml", &dgx,
                        "cuda.device=1,cpu=2,mem=32g", SKV_NODE_NO_CONFIG, t);
    /* The same with the plugins' container configuration built too. */
    f[n++] = bench_node("config_1gpu_8cpu_32g", &full,
                        "cuda.device=1,cpu=8,mem=32g", 0, t);
    f[n++] = bench_node("config_16gpu", &dgx, "cuda.device=16", 0, t);
    const skv_alloc_map *gpus = skv_node_map(dgx.node, 2);
    f[n++] = bench_map("map_1gpu", gpus, "cuda.device", 1000, t);
    f[n++] = bench_map("map_8cores", skv_node_map(full.node, 0), "cpu", 8000, t);
    f[n++] = bench_check("map_check_16gpu", gpus, "cuda.device", 16000, t);
    printf("bench/alloc: %d rounds each after %d warm-up rounds\n", ROUNDS,
           WARMUP);
    printf("  alloc_*:  skv_node_alloc (placement, SKV_NODE_NO_CONFIG) + "
           "skv_node_release\n"
           "  config_*: the same plus every plugin's container configuration\n"
           "  map_*:    one allocation map alone (alloc + release, or check)\n");
    printf("  %-30s %12s %12s\n", "case", "median us", "p99 us");
    for (size_t i = 0; i < n; i++)
        printf("  %-30s %12.2f %12.2f\n", f[i].name, f[i].median_ns / 1000,
               f[i].p99_ns / 1000);
    bool met = f[0].median_ns <= 5000;
    printf("  target: median <= 5 us for 1 GPU + 8 cores + 32 GiB: %s\n",
           met ? "met" : "MISSED");
    printf("{\"bench\":\"alloc\",\"rounds\":%d", ROUNDS);
    for (size_t i = 0; i < n; i++)
        printf(",\"%s_median_ns\":%.0f,\"%s_p99_ns\":%.0f", f[i].name,
               f[i].median_ns, f[i].name, f[i].p99_ns);
    printf(",\"target_median_ns\":5000,\"target_met\":%s}\n",
           met ? "true" : "false");
    close_machine(&dgx);
    close_machine(&full);
    free(t);
    return 0;
}
