/*
 * examples/embed/orchestrator.c - another orchestrator's loop linking
 * libsokovan directly: the cluster scheduler decides which machine and
 * which GPUs each job gets, the node mapper of that machine turns the
 * decision into cores, NUMA memory and the container environment, and the
 * loop "runs" jobs in simulated time and gives everything back.
 *
 * No daemons, no threads: every libsokovan object here is used by this one
 * thread (see docs/embedding.md for the rules with several).
 *
 *   cc -o orchestrator orchestrator.c $(pkg-config --cflags --libs sokovan)
 *   ./orchestrator [MACHINES] [JOBS]
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sokovan.h>

#define MAX_MACHINES 8
#define MAX_JOBS 64
#define GPUS 4

typedef struct machine {
    char name[16];
    skv_topo *topo;
    skv_plugin *plugins[3];        /* cpu, mem, mock GPUs */
    skv_node *node;
} machine;

typedef struct job {
    char id[16];
    char request[64];
    int64_t duration_ms;
    int64_t end_ms;                /* 0: not running */
    int machine;
    skv_node_placement *placement;
} job;

static int fail(const char *what, const skv_error *e)
{
    fprintf(stderr, "orchestrator: %s: %s (%s)\n", what, e->message,
            skv_err_name(e->code));
    return -1;
}

/* One machine: a 2-socket synthetic topology, the built-in cpu and mem
 * plugins and a mock plugin with GPUS accelerators. */
static int machine_open(machine *m, int i)
{
    static const char *const names[3] = {"cpu", "mem", "mock"};
    skv_error e = SKV_ERROR_INIT;
    snprintf(m->name, sizeof(m->name), "m%d", i);
    if (skv_topo_load_synthetic(&m->topo, "pack:2 numa:1 core:8 pu:1", &e))
        return fail("topology", &e);
    for (int p = 0; p < 3; p++) {
        skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
        ctx.topo = m->topo;
        ctx.config = p == 2 ? "count=4,prefix=cuda" : NULL;
        if (skv_plugin_open_builtin(&m->plugins[p], names[p], &ctx, &e))
            return fail(names[p], &e);
    }
    if (skv_node_new(&m->node, m->topo, m->plugins, 3, &e))
        return fail("node", &e);
    return 0;
}

/* Destructors accept NULL, so a half-opened machine closes the same way. */
static void machine_close(machine *m)
{
    skv_node_free(m->node);
    for (int p = 0; p < 3; p++)
        skv_plugin_free(m->plugins[p]);
    skv_topo_free(m->topo);
}

/* The machine as the scheduler sees it: pooled cores and memory, and its
 * GPUs as whole devices named like the mock plugin's device ids. */
static int machine_register(skv_sched *s, const machine *m)
{
    static const char *const ids[GPUS] = {"0", "1", "2", "3"};
    skv_error e = SKV_ERROR_INIT;
    skv_sched_device_spec dev[GPUS];
    for (int d = 0; d < GPUS; d++)
        dev[d] = (skv_sched_device_spec){ids[d], "cuda.device", NULL, 0};
    skv_slots *cap = NULL;
    char text[64];
    snprintf(text, sizeof(text), "cpu=%zu,mem=64g", skv_topo_core_count(m->topo));
    if (skv_slots_parse(&cap, text, NULL, &e))
        return fail("capacity", &e);
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = m->name;
    a.resource_group = "default";
    a.capacity = cap;
    a.n_devices = GPUS;
    a.devices = dev;
    int rc = skv_sched_agent_add(s, &a, &e);
    skv_slots_free(cap);
    return rc ? fail("agent", &e) : 0;
}

static int job_submit(skv_sched *s, job *j, int i)
{
    static const int gpus[5] = {1, 1, 2, 4, 2};
    skv_error e = SKV_ERROR_INIT;
    int g = gpus[i % 5];
    snprintf(j->id, sizeof(j->id), "job%d", i);
    snprintf(j->request, sizeof(j->request), "cuda.device=%d,cpu=%d,mem=%dm",
             g, 2 * g, 128 * g);
    j->duration_ms = 1000 * (1 + (i * 7) % 5);
    skv_slots *req = NULL;
    if (skv_slots_parse(&req, j->request, NULL, &e))
        return fail("request", &e);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
    skv_sched_session_spec spec = SKV_SCHED_SESSION_SPEC_INIT;
    spec.id = j->id;
    spec.resource_group = "default";
    spec.n_kernels = 1;
    spec.kernels = &k;
    spec.estimated_duration_ms = j->duration_ms;
    int rc = skv_sched_submit(s, &spec, 0, &e);
    skv_slots_free(req);
    return rc ? fail("submit", &e) : 0;
}

/* The scheduler chose agent and devices; the node mapper takes exactly
 * those GPUs (fixed amounts) and places cores and memory next to them. */
static int job_start(machine *m, job *j, const skv_sched_kernel_placement *k,
                     const skv_sched_result *r, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    skv_device_amount fixed[GPUS];
    char ids[GPUS][8];
    size_t n = k->n_devices < GPUS ? k->n_devices : GPUS;
    for (size_t d = 0; d < n; d++) {
        snprintf(ids[d], sizeof(ids[d]), "%u", k->devices[d].device);
        fixed[d] = (skv_device_amount){ids[d], r->slot_names[k->devices[d].slot],
                                       k->devices[d].amount};
    }
    skv_slots *req = NULL;
    if (skv_slots_parse(&req, j->request, skv_node_registry(m->node), &e))
        return fail("node request", &e);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.fixed = fixed;
    o.nfixed = n;
    int rc = skv_node_alloc(&j->placement, m->node, req, &o, &e);
    skv_slots_free(req);
    if (rc)
        return fail(j->id, &e);
    const skv_container_config *cfg = skv_node_placement_config(j->placement);
    const char *vis = cfg ? skv_container_config_get_env(cfg, "CUDA_VISIBLE_DEVICES") : NULL;
    printf("t=%3" PRId64 "s %-6s on %s: cpus %-8s mems %-4s CUDA_VISIBLE_DEVICES=%s\n",
           now / 1000, j->id, m->name, skv_node_placement_cpuset(j->placement),
           skv_node_placement_mems(j->placement), vis ? vis : "");
    j->end_ms = now + j->duration_ms;
    return 0;
}

static int machine_index(const machine *ms, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ms[i].name, name) == 0)
            return i;
    return -1;
}

static job *job_find(job *js, int n, const char *id)
{
    for (int i = 0; i < n; i++)
        if (strcmp(js[i].id, id) == 0)
            return &js[i];
    return NULL;
}

/* One pass: start what was placed. */
static int schedule(skv_sched *s, machine *ms, int nm, job *js, int nj,
                    int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sched_result *r = NULL;
    if (skv_sched_pass(&r, s, now, NULL, &e))
        return fail("pass", &e);
    int rc = 0;
    for (size_t i = 0; i < r->n_placements && rc == 0; i++) {
        const skv_sched_placement *p = &r->placements[i];
        job *j = job_find(js, nj, p->session_id);
        int mi = machine_index(ms, nm, p->kernels[0].agent_id);
        if (!j || mi < 0)
            rc = -1;
        else if ((rc = job_start(&ms[mi], j, &p->kernels[0], r, now)) == 0) {
            j->machine = mi;
            rc = skv_sched_mark_started(s, j->id, now, &e) ? fail("start", &e) : 0;
        }
    }
    skv_sched_result_free(r);
    return rc;
}

/* The earliest end among running jobs; INT64_MAX when none runs. */
static int64_t next_end(const job *js, int nj)
{
    int64_t t = INT64_MAX;
    for (int i = 0; i < nj; i++)
        if (js[i].end_ms && js[i].end_ms < t)
            t = js[i].end_ms;
    return t;
}

/* Jobs ending at now: release their node resources, tell the scheduler. */
static int finish(skv_sched *s, machine *ms, job *js, int nj, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    int done = 0;
    for (int i = 0; i < nj; i++) {
        if (js[i].end_ms != now)
            continue;
        if (skv_node_release(ms[js[i].machine].node, js[i].placement, &e) ||
            skv_sched_mark_finished(s, js[i].id, false, now, &e))
            return fail(js[i].id, &e);
        skv_node_placement_free(js[i].placement);
        js[i].placement = NULL;
        js[i].end_ms = 0;
        done++;
    }
    return done;
}

static int run(skv_sched *s, machine *ms, int nm, job *js, int nj)
{
    int64_t now = 0;
    int done = 0;
    while (done < nj) {
        if (schedule(s, ms, nm, js, nj, now))
            return -1;
        now = next_end(js, nj);
        if (now == INT64_MAX) {
            fprintf(stderr, "orchestrator: nothing runs and jobs wait\n");
            return -1;
        }
        int n = finish(s, ms, js, nj, now);
        if (n < 0)
            return -1;
        done += n;
    }
    skv_error e = SKV_ERROR_INIT;
    if (skv_sched_check(s, &e))
        return fail("accounting", &e);
    printf("orchestrator: %d jobs on %d machines, makespan %" PRId64
           "s (simulated), libsokovan %s\n", nj, nm, now / 1000,
           skv_version_string());
    return 0;
}

int main(int argc, char **argv)
{
    int nm = argc > 1 ? atoi(argv[1]) : 3, nj = argc > 2 ? atoi(argv[2]) : 20;
    if (nm < 1 || nm > MAX_MACHINES || nj < 1 || nj > MAX_JOBS) {
        fprintf(stderr, "usage: orchestrator [MACHINES 1-%d] [JOBS 1-%d]\n",
                MAX_MACHINES, MAX_JOBS);
        return 2;
    }
    machine ms[MAX_MACHINES] = {0};
    job js[MAX_JOBS] = {0};
    skv_sched *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_sched_new(&s, NULL, &e) ? fail("scheduler", &e)
           : skv_sched_group_add(s, "default", NULL, &e) ? fail("group", &e) : 0;
    for (int i = 0; rc == 0 && i < nm; i++)
        rc = machine_open(&ms[i], i) ? -1 : machine_register(s, &ms[i]);
    for (int i = 0; rc == 0 && i < nj; i++)
        rc = job_submit(s, &js[i], i);
    if (rc == 0)
        rc = run(s, ms, nm, js, nj);
    for (int i = 0; i < nj; i++)
        skv_node_placement_free(js[i].placement);
    skv_sched_free(s);
    for (int i = 0; i < nm; i++)
        machine_close(&ms[i]);
    return rc ? 1 : 0;
}
