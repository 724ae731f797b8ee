/* bench/topo: how often multi-GPU placements cross a PCIe switch or a NUMA
 * node, with the manager's old per-agent map (whole GPUs in device order)
 * and with topology-aware maps (the agent's layout, the node mapper's
 * affinity algorithm), in one run over the same random workload.
 *
 * 10 agents shaped like ../shared/data/topologies/nvidia-dgx2.xml (16 GPUs,
 * PCIe switches holding 2 GPUs, 2 NUMA nodes); a random fill of 2-GPU and
 * 4-GPU single-kernel sessions with random ends (churn), through the real
 * scheduler (skv_sched, default selector). Counted per placement:
 *   2-GPU: not behind one PCIe switch;  4-GPU: over more than the 2
 *   switches it needs;  both: over more than one NUMA node.
 * Usage: bench-topo [--xml FILE] [--events N] [--seed S] [--sizes 2,4]
 * (--sizes 1,2,4 adds 1-GPU sessions, which split switch pairs)
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sokovan/sched.h"
#include "../../tests/topo_layout.h"

#define AGENTS 10
#define MAXS 4096

typedef struct tally {
    unsigned placed[5], switch_x[5], numa_x[5];
} tally;

static uint64_t rng;
static unsigned sizes[8] = {2, 4};
static unsigned nsizes = 2;
static uint64_t next_rand(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void die(const char *what, const skv_error *e)
{
    fprintf(stderr, "bench-topo: %s: %s\n", what, e ? e->message : "");
    exit(1);
}

static skv_sched *make(const topo_layout *l, bool topo)
{
    skv_sched *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    skv_slots *cap = NULL;
    if (skv_sched_new(&s, NULL, &e) || skv_sched_group_add(s, "g", NULL, &e) ||
        skv_slots_parse(&cap, "cpu=96,mem=1500g", NULL, &e))
        die("setup", &e);
    skv_sched_device_spec dev[TL_MAX];
    for (size_t i = 0; i < l->n; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares",
                                         0};
    for (int i = 0; i < AGENTS; i++) {
        char id[16];
        snprintf(id, sizeof id, "dgx%02d", i);
        skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
        a.id = id;
        a.resource_group = "g";
        a.capacity = cap;
        a.n_devices = l->n;
        a.devices = dev;
        a.topology = topo ? &l->t : NULL;
        if (skv_sched_agent_add(s, &a, &e))
            die("agent", &e);
    }
    skv_slots_free(cap);
    return s;
}

/* PCIe switches spanned: components of the "pix" relation. */
static size_t switches(const topo_layout *l, const size_t *d, size_t n)
{
    size_t comp = 0;
    bool seen[TL_MAX] = {false};
    for (size_t i = 0; i < n; i++) {
        if (seen[i])
            continue;
        comp++;
        seen[i] = true;
        for (bool grew = true; grew;) {
            grew = false;
            for (size_t j = 0; j < n; j++)
                for (size_t k = 0; k < n && !seen[j]; k++)
                    if (seen[k] && topo_layout_link(l, d[j], d[k]) ==
                                       SKV_TOPO_LINK_PIX)
                        seen[j] = grew = true;
        }
    }
    return comp;
}

static void count(tally *t, const topo_layout *l, const skv_sched_result *r)
{
    for (size_t p = 0; p < r->n_placements; p++) {
        const skv_sched_kernel_placement *k = &r->placements[p].kernels[0];
        size_t d[TL_MAX], n = k->n_devices;
        bool two_nodes = false;
        for (size_t i = 0; i < n; i++) {
            d[i] = k->devices[i].device;
            two_nodes = two_nodes || l->numa[d[i]] != l->numa[d[0]];
        }
        if (n != 2 && n != 4)
            continue;
        t->placed[n]++;
        t->switch_x[n] += switches(l, d, n) > n / 2;
        t->numa_x[n] += two_nodes;
    }
}

static void submit(skv_sched *s, const char *id, unsigned gpus, int64_t now)
{
    char req[64];
    skv_error e = SKV_ERROR_INIT;
    skv_slots *r = NULL;
    snprintf(req, sizeof req, "cuda.device=%u,cpu=1,mem=1g", gpus);
    if (skv_slots_parse(&r, req, NULL, &e))
        die("slots", &e);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.resource_group = "g";
    sp.n_kernels = 1;
    sp.kernels = &k;
    if (skv_sched_submit(s, &sp, now, &e))
        die("submit", &e);
    skv_slots_free(r);
}

/* The same event sequence for both maps (seeded): while sessions wait,
 * or at random, one running session ends; otherwise a new one comes. The
 * cluster stays near full, so free GPUs are scattered as in real use. */
static void run(tally *t, const topo_layout *l, bool topo, uint64_t seed,
                unsigned events)
{
    static char running[MAXS][16];
    skv_sched *s = make(l, topo);
    skv_error e = SKV_ERROR_INIT;
    unsigned nrun = 0, submitted = 0, placed = 0;
    rng = seed;
    for (unsigned ev = 0; ev < events; ev++) {
        int64_t now = 1000 + ev;
        bool waiting = submitted > placed;
        if (nrun && (waiting || next_rand() % 100 < 30)) {
            unsigned k = (unsigned)(next_rand() % nrun);
            if (skv_sched_mark_finished(s, running[k], false, now, &e))
                die("finish", &e);
            memcpy(running[k], running[--nrun], sizeof running[k]);
        } else {
            char id[16];
            snprintf(id, sizeof id, "s%06u", submitted++);
            submit(s, id, sizes[next_rand() % nsizes], now);
        }
        skv_sched_result *r = NULL;
        if (skv_sched_pass(&r, s, now, NULL, &e))
            die("pass", &e);
        count(t, l, r);
        for (size_t p = 0; p < r->n_placements && nrun < MAXS; p++, placed++)
            snprintf(running[nrun++], sizeof running[0], "%s",
                     r->placements[p].session_id);
        skv_sched_result_free(r);
    }
    if (skv_sched_check(s, &e))
        die("accounting check", &e);
    skv_sched_free(s);
}

static void parse_sizes(const char *text)
{
    nsizes = 0;
    for (const char *p = text; *p && nsizes < 8;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v < 1 || v > 16) {
            fprintf(stderr, "bench-topo: --sizes: '%s' is not a list of "
                    "1..16\n", text);
            exit(2);
        }
        sizes[nsizes++] = (unsigned)v;
        p = *end == ',' ? end + 1 : end;
    }
}

static double pct(unsigned a, unsigned b)
{
    return b ? 100.0 * a / b : 0.0;
}

int main(int argc, char **argv)
{
    const char *xml = "../shared/data/topologies/nvidia-dgx2.xml";
    unsigned events = 20000;
    uint64_t seed = 42;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return printf("usage: bench-topo [--xml FILE] [--events N] "
                          "[--seed S] [--sizes 2,4]\n"), 0;
        if (i + 1 >= argc)   /* a flag without its value: not the defaults */
            return fprintf(stderr, "bench-topo: %s needs a value\n",
                           argv[i]), 2;
        if (!strcmp(argv[i], "--xml"))
            xml = argv[i + 1];
        else if (!strcmp(argv[i], "--events"))
            events = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--sizes"))
            parse_sizes(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 10);
        else
            return fprintf(stderr, "usage: bench-topo [--xml FILE] "
                           "[--events N] [--seed S] [--sizes 2,4]\n"), 2;
    }
    if (access(xml, R_OK) != 0) {
        printf("SKIP bench/topo: %s is absent (run from the repository "
               "root with ../shared/data)\n", xml);
        return 0;
    }
    skv_topo *topo = NULL;
    skv_error e = SKV_ERROR_INIT;
    if (skv_topo_load_xml(&topo, xml, &e))
        die(xml, &e);
    static topo_layout l;
    topo_layout_fill(&l, topo);
    tally t[2];
    memset(t, 0, sizeof t);
    for (int m = 0; m < 2; m++)
        run(&t[m], &l, m == 1, seed, events);
    const char *name[2] = {"device order (old)", "topology-aware"};
    printf("%d agents like %s (%zu GPUs), %u events, seed %llu, sizes",
           AGENTS, xml, l.n, events, (unsigned long long)seed);
    for (unsigned i = 0; i < nsizes; i++)
        printf("%s%u", i ? "," : " ", sizes[i]);
    printf("\n");
    printf("%-20s %8s %14s %8s %14s %14s\n", "map", "2-GPU", "cross switch",
           "4-GPU", ">2 switches", "cross NUMA");
    for (int m = 0; m < 2; m++)
        printf("%-20s %8u %13.1f%% %8u %13.1f%% %13.1f%%\n", name[m],
               t[m].placed[2], pct(t[m].switch_x[2], t[m].placed[2]),
               t[m].placed[4], pct(t[m].switch_x[4], t[m].placed[4]),
               pct(t[m].numa_x[2] + t[m].numa_x[4],
                   t[m].placed[2] + t[m].placed[4]));
    printf("{\"bench\":\"topo\",\"events\":%u,\"seed\":%llu", events,
           (unsigned long long)seed);
    for (int m = 0; m < 2; m++)
        printf(",\"%s\":{\"two\":%u,\"two_cross_switch\":%u,\"four\":%u,"
               "\"four_extra_switch\":%u,\"cross_numa\":%u}",
               m ? "topology" : "device_order", t[m].placed[2],
               t[m].switch_x[2], t[m].placed[4], t[m].switch_x[4],
               t[m].numa_x[2] + t[m].numa_x[4]);
    printf("}\n");
    skv_topo_free(topo);
    return 0;
}
