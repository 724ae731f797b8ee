/* bench/sched: throughput and latency of the cluster scheduler's pass.
 * 10,000 agents x 8 GPUs (device-level maps), 100,000 pending sessions:
 * 80% single-kernel (half a fraction of one GPU, half 1-8 whole GPUs),
 * 15% 8-GPU, 5% multi-node gangs of 4 x 8 GPUs, for each selector given
 * (--selector NAME[:CONFIG], repeatable; default: "concentrated" and
 * "frag"; "default" names the default selector, "auto", which is frag on
 * these GPU agents), each in a child process so peak RSS is its own;
 * --full-walk makes every pass take the full walk instead of the
 * incremental one; --preempt-topo (= --preemption --topology) runs the
 * same figures with the settings of a cluster that uses the whole engine:
 * --preemption: the group orders by priority with preemption on (min
 * runtime 0), sessions have priorities 0-3 and half of each priority
 * is preemptible; --topology: every agent registers a layout (2 NUMA nodes
 * of 4 GPUs, GPUs in PCIe-switch pairs) so whole GPUs are chosen by the
 * node mapper's affinity code. --preemption adds a preempting pass
 * (20 priority-10 sessions onto the full cluster of the full pass, its
 * placed sessions running, the rest of its queue cancelled; its victims
 * are printed as a digest, to compare builds). Passes also report their
 * CPU time (single_per_cpu_s, gangs_per_cpu_s, full_pass_cpu_s): on a
 * shared machine wall time counts the waits for a CPU. Ends with one JSON
 * line holding every selector's figures.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sokovan.h"
#include "sokovan/sched.h"
#include "sokovan/topo.h"

#define AGENTS 10000
#define PENDING 100000
#define GIB ((skv_qty)1 << 30)
#define PREEMPTORS 20   /* sessions of the preempting pass */

typedef enum kind { FRACTION, WHOLE, EIGHT, GANG } kind;

static uint64_t rng = 42;
static uint64_t next_rand(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const skv_error *e)
{
    fprintf(stderr, "bench/sched: %s: %s\n", what, e->message);
    exit(1);
}

static const char *sel_name;   /* NULL: the default selector */
static const char *sel_config;
static bool with_preempt;      /* --preemption (or --preempt-topo) */
static bool with_topo;         /* --topology (or --preempt-topo) */

/* A DGX-like 8-GPU layout: GPUs 0-3 on NUMA node 0, 4-7 on node 1, pairs
 * (0,1), (2,3), ... behind one PCIe switch. */
static const int32_t topo_numa[8] = {0, 0, 0, 0, 1, 1, 1, 1};
static uint8_t topo_links[64];
static const skv_sched_agent_topology topo = {topo_numa, topo_links, NULL};

static void topo_init(void)
{
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            topo_links[i * 8 + j] = i / 2 == j / 2 ? SKV_TOPO_LINK_PIX
                                    : i / 4 == j / 4 ? SKV_TOPO_LINK_NODE
                                                     : SKV_TOPO_LINK_SYS;
}

static skv_sched *cluster(int agents)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched *s = NULL;
    skv_sched_group_options go = SKV_SCHED_GROUP_OPTIONS_INIT;
    go.selector = sel_name;
    go.selector_config = sel_config;
    if (with_preempt) {
        go.sequencer = "priority";
        go.preemption = true;
    }
    if (skv_sched_new(&s, NULL, &e) || skv_sched_group_add(s, "g", &go, &e))
        die("scheduler", &e);
    skv_slots *cap = NULL;
    if (skv_slots_parse(&cap, "cpu=128,mem=2048g", NULL, &e))
        die("capacity", &e);
    skv_sched_device_spec dev[8];
    for (int i = 0; i < 8; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares", 1000};
    for (int i = 0; i < agents; i++) {
        char id[32];
        snprintf(id, sizeof(id), "dgx%05d", i);
        skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
        a.id = id;
        a.resource_group = "g";
        a.gpu_model = "A100";
        a.capacity = cap;
        a.n_devices = 8;
        a.devices = dev;
        a.topology = with_topo ? &topo : NULL;
        if (skv_sched_agent_add(s, &a, &e))
            die("agent", &e);
    }
    skv_slots_free(cap);
    return s;
}

static kind draw_kind(void)
{
    uint64_t r = next_rand() % 100;
    return r < 40 ? FRACTION : r < 80 ? WHOLE : r < 95 ? EIGHT : GANG;
}

static void submit_prio(skv_sched *s, int n, kind k, int64_t now,
                        int32_t prio);

/* Priorities 0-3 from the id (the kind draws stay those of the plain
 * run); preemptible: ids 0-3, 8-11, ..., so half of every priority. */
static void submit(skv_sched *s, int n, kind k, int64_t now)
{
    submit_prio(s, n, k, now, with_preempt ? (int32_t)(n % 4) : 0);
}

static void submit_prio(skv_sched *s, int n, kind k, int64_t now,
                        int32_t prio)
{
    skv_error e = SKV_ERROR_INIT;
    char text[96], id[32];
    int gpus = k == WHOLE ? 1 + (int)(next_rand() % 8) : 8;
    if (k == FRACTION)
        snprintf(text, sizeof(text), "cpu=2,mem=16g,cuda.shares=0.%d",
                 1 + (int)(next_rand() % 9));
    else
        snprintf(text, sizeof(text), "cpu=%d,mem=%dg,cuda.device=%d", 4 * gpus,
                 32 * gpus, gpus);
    skv_slots *req = NULL;
    if (skv_slots_parse(&req, text, NULL, &e))
        die("request", &e);
    skv_sched_kernel_spec ks[4];
    for (int i = 0; i < 4; i++)
        ks[i] = (skv_sched_kernel_spec){i ? SKV_SCHED_ROLE_SUB : SKV_SCHED_ROLE_MAIN, req};
    snprintf(id, sizeof(id), "s%d", n);
    skv_sched_session_spec ss = SKV_SCHED_SESSION_SPEC_INIT;
    ss.id = id;
    ss.resource_group = "g";
    ss.n_kernels = k == GANG ? 4 : 1;
    ss.kernels = ks;
    ss.cluster_mode = k == GANG ? SKV_SCHED_MULTI_NODE : SKV_SCHED_SINGLE_NODE;
    ss.one_kernel_per_agent = k == GANG;
    ss.priority = prio;
    ss.preemptible = with_preempt && (n / 4) % 2 == 0;
    if (skv_sched_submit(s, &ss, now, &e))
        die("submit", &e);
    skv_slots_free(req);
}

/* CPU time of this thread: on a shared machine wall time also counts the
 * waits for a CPU, so the full pass reports both. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double last_pass_cpu; /* CPU seconds of the last pass() */
static bool full_walk;       /* --full-walk: every pass re-walks the queue */

static double pass(skv_sched *s, int64_t now, size_t *placed)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_result *r = NULL;
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.full_walk = full_walk;
    double t0 = now_s(), c0 = cpu_s();
    if (skv_sched_pass(&r, s, now, &po, &e))
        die("pass", &e);
    double t = now_s() - t0;
    last_pass_cpu = cpu_s() - c0;
    *placed = r->n_placements;
    skv_sched_result_free(r);
    return t;
}

static int dcmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The spec's mix: 100k pending, one full pass. */
static void full_pass(double *secs, size_t *placed, size_t counts[4])
{
    skv_sched *s = cluster(AGENTS);
    for (int i = 0; i < PENDING; i++) {
        kind k = draw_kind();
        counts[k]++;
        submit(s, i, k, 1);
    }
    *secs = pass(s, 2, placed);
    skv_error e = SKV_ERROR_INIT;
    if (skv_sched_check(s, &e))
        die("accounting check", &e);
    skv_sched_free(s);
}

/* --preemption: the full pass's cluster with its placed sessions running
 * and the rest of its queue cancelled, then 20 priority-10 sessions of
 * the same mix in one pass: its time, placements and victims. (With the
 * 83k sessions left pending, every one of them that does not fit looks
 * for victims among all running sessions: see bench/RESULTS.md.) */
static uint64_t preempt_digest; /* the preempting pass's victims, hashed */

static double preempting_pass(size_t *placed, size_t *victims)
{
    skv_sched *s = cluster(AGENTS);
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < PENDING; i++)
        submit(s, i, draw_kind(), 1);
    skv_sched_result *r = NULL;
    if (skv_sched_pass(&r, s, 2, NULL, &e))
        die("pass", &e);
    bool *run = calloc(PENDING, sizeof(*run));
    for (size_t i = 0; i < r->n_placements; i++) {
        const char *id = r->placements[i].session_id;
        if (skv_sched_mark_started(s, id, 3, &e))
            die("start", &e);
        run[atoi(id + 1)] = true;
    }
    skv_sched_result_free(r);
    for (int i = 0; i < PENDING; i++) {
        char id[32];
        snprintf(id, sizeof(id), "s%d", i);
        if (!run[i] && skv_sched_cancel(s, id, 3, &e))
            die("cancel", &e);
    }
    free(run);
    for (int i = 0; i < PREEMPTORS; i++)
        submit_prio(s, PENDING + i, draw_kind(), 4, 10);
    double t0 = now_s(), c0 = cpu_s();
    if (skv_sched_pass(&r, s, 5, NULL, &e))
        die("pass", &e);
    double t = now_s() - t0;
    last_pass_cpu = cpu_s() - c0;
    *placed = r->n_placements;
    *victims = r->n_preemptions;
    preempt_digest = 1469598103934665603ull; /* FNV-1a of "victim>for;" */
    for (size_t i = 0; i < r->n_preemptions; i++) {
        char line[80];
        snprintf(line, sizeof(line), "%s>%s;", r->preemptions[i].victim_id,
                 r->preemptions[i].for_session_id);
        for (const char *p = line; *p; p++)
            preempt_digest = (preempt_digest ^ (uint8_t)*p) * 1099511628211ull;
    }
    skv_sched_result_free(r);
    if (skv_sched_check(s, &e))
        die("accounting check", &e);
    skv_sched_free(s);
    return t;
}

/* n sessions of one kind that all fit, one pass: placements per second. */
static double throughput(int n, kind k, size_t *placed)
{
    skv_sched *s = cluster(AGENTS);
    for (int i = 0; i < n; i++)
        submit(s, i, k == WHOLE && next_rand() % 2 ? FRACTION : k, 1);
    double t = pass(s, 2, placed);
    skv_sched_free(s);
    return t;
}

/* One session submitted and placed per pass on a half-full cluster. */
static void latency(double *p50, double *p99, kind which, int rounds)
{
    skv_sched *s = cluster(AGENTS);
    size_t placed;
    for (int i = 0; i < 20000; i++)
        submit(s, i, FRACTION, 1);
    for (int i = 0; i < 8000; i++)
        submit(s, 20000 + i, WHOLE, 1);
    pass(s, 2, &placed);
    double *lat = calloc((size_t)rounds, sizeof(*lat));
    for (int i = 0; i < rounds; i++) {
        kind k = which == GANG ? GANG : (i % 2 ? FRACTION : WHOLE);
        submit(s, 100000 + i, k, 3 + i);
        lat[i] = pass(s, 3 + i, &placed);
    }
    qsort(lat, (size_t)rounds, sizeof(*lat), dcmp);
    *p50 = lat[rounds / 2];
    *p99 = lat[(rounds * 99) / 100];
    free(lat);
    skv_sched_free(s);
}

/* One selector's run; its figures as a JSON object on out. */
static void run_one(FILE *out)
{
    size_t counts[4] = {0}, placed = 0, single_placed = 0, gang_placed = 0;
    double full_s, full_cpu, single_s, gang_s, p50, p99, g50, g99;
    full_pass(&full_s, &placed, counts);
    full_cpu = last_pass_cpu;
    printf("full pass: %d agents x 8 GPUs, %d pending (%zu fractional, %zu "
           "whole 1-8, %zu 8-GPU, %zu 4x8 gangs): %zu placed in %.3f s "
           "(%.3f s CPU)\n",
           AGENTS, PENDING, counts[FRACTION], counts[WHOLE], counts[EIGHT],
           counts[GANG], placed, full_s, full_cpu);
    single_s = throughput(25000, WHOLE, &single_placed);
    double single_cpu = last_pass_cpu;
    printf("single-kernel: %zu placed in %.3f s = %.0f placements/s "
           "(%.3f s CPU = %.0f per CPU-s)\n", single_placed, single_s,
           (double)single_placed / single_s, single_cpu,
           (double)single_placed / single_cpu);
    gang_s = throughput(2000, GANG, &gang_placed);
    double gang_cpu = last_pass_cpu;
    printf("multi-node 4x8 gangs: %zu placed in %.3f s = %.0f gangs/s "
           "(%.3f s CPU)\n", gang_placed, gang_s, (double)gang_placed / gang_s,
           gang_cpu);
    latency(&p50, &p99, WHOLE, 2000);
    latency(&g50, &g99, GANG, 500);
    printf("decision latency (submit one, pass): single p50 %.1f us p99 %.1f us; "
           "gang p50 %.1f us p99 %.1f us\n", p50 * 1e6, p99 * 1e6, g50 * 1e6,
           g99 * 1e6);
    size_t pp_placed = 0, pp_victims = 0;
    double pp_s = 0, pp_cpu = 0;
    if (with_preempt) {
        pp_s = preempting_pass(&pp_placed, &pp_victims);
        pp_cpu = last_pass_cpu;
        printf("preempting pass: %d priority-10 sessions on the full "
               "cluster: %zu placed, %zu victims in %.3f s (%.3f s CPU), "
               "victims digest %016llx\n", PREEMPTORS, pp_placed, pp_victims,
               pp_s, pp_cpu, (unsigned long long)preempt_digest);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    fprintf(out, "{\"selector\":\"%s%s%s\",\"full_pass_s\":%.4f,"
           "\"full_pass_placed\":%zu,\"single_placements_per_s\":%.0f,"
           "\"gangs_per_s\":%.0f,\"decision_p50_us\":%.2f,\"decision_p99_us\":%.2f,"
           "\"gang_decision_p50_us\":%.2f,\"gang_decision_p99_us\":%.2f,"
           "\"peak_rss_mb\":%.1f,\"full_pass_cpu_s\":%.4f",
           sel_name ? sel_name : "default", sel_config ? ":" : "",
           sel_config ? sel_config : "", full_s, placed, (double)single_placed / single_s,
           (double)gang_placed / gang_s, p50 * 1e6, p99 * 1e6, g50 * 1e6, g99 * 1e6,
           (double)ru.ru_maxrss / 1024.0, full_cpu);
    /* per CPU-second: the figures to compare on a shared machine */
    fprintf(out, ",\"single_per_cpu_s\":%.0f,\"gangs_per_cpu_s\":%.0f",
            (double)single_placed / single_cpu, (double)gang_placed / gang_cpu);
    if (with_preempt)
        fprintf(out, ",\"preempt_pass_s\":%.4f,\"preempt_pass_cpu_s\":%.4f,"
                "\"preempt_pass_placed\":%zu,\"preempt_pass_victims\":%zu,"
                "\"preempt_victims_digest\":\"%016llx\"",
                pp_s, pp_cpu, pp_placed, pp_victims,
                (unsigned long long)preempt_digest);
    fprintf(out, "}");
}

/* Run the selector in a child; its JSON object is copied to buf. */
static void run_child(const char *spec, char *buf, size_t cap)
{
    static char name[64];
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n >= sizeof(name)) {
        fprintf(stderr, "bench/sched: selector name too long: %s\n", spec);
        exit(2);
    }
    memcpy(name, spec, n);
    name[n] = '\0';
    int fd[2];
    if (pipe(fd)) {
        perror("bench/sched: pipe");
        exit(1);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench/sched: fork");
        exit(1);
    }
    if (pid == 0) {
        close(fd[0]);
        sel_name = strcmp(name, "default") ? name : NULL;
        sel_config = colon ? colon + 1 : NULL;
        printf("== selector %s\n", spec);
        FILE *out = fdopen(fd[1], "w");
        run_one(out);
        fclose(out);
        fflush(stdout);
        _exit(0);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t r;
    while (len + 1 < cap && (r = read(fd[0], buf + len, cap - 1 - len)) > 0)
        len += (size_t)r;
    buf[len] = '\0';
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !len) {
        fprintf(stderr, "bench/sched: selector %s failed\n", spec);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    const char *specs[8] = {"concentrated", "frag"};
    int nspec = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--selector") == 0 && i + 1 < argc && nspec < 8) {
            specs[nspec++] = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--full-walk") == 0) {
            full_walk = true;
            continue;
        }
        if (strcmp(argv[i], "--preempt-topo") == 0 ||
            strcmp(argv[i], "--preemption") == 0 ||
            strcmp(argv[i], "--topology") == 0) {
            with_preempt |= strcmp(argv[i], "--topology") != 0;
            with_topo |= strcmp(argv[i], "--preemption") != 0;
            continue;
        }
        bool help = strcmp(argv[i], "--help") == 0;   /* asked: stdout, 0 */
        fprintf(help ? stdout : stderr, "usage: %s [--selector NAME[:CONFIG]]... [--full-walk] "
                "[--preemption] [--topology] [--preempt-topo] (at most 8 selectors; NAME 'default' is the "
                "default selector; without any: concentrated and frag; "
                "--full-walk: passes take the full walk, not the incremental "
                "one; --preemption: priority order with preemption on, sessions "
                "with priorities; --topology: agents with a layout; "
                "--preempt-topo: both)\n", argv[0]);
        return help ? 0 : 2;
    }
    if (nspec == 0)
        nspec = 2;
    topo_init();
    static char res[8][1024];
    for (int i = 0; i < nspec; i++)
        run_child(specs[i], res[i], sizeof(res[i]));
    printf("{\"bench\":\"sched\",\"agents\":%d,\"pending\":%d,\"full_walk\":%s,"
           "\"preemption\":%s,\"topology\":%s,\"selectors\":[", AGENTS,
           PENDING, full_walk ? "true" : "false",
           with_preempt ? "true" : "false", with_topo ? "true" : "false");
    for (int i = 0; i < nspec; i++)
        printf("%s%s", i ? "," : "", res[i]);
    printf("]}\n");
    return 0;
}
