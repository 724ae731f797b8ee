/* sokovan-sim trace: a generic job trace in simulated time (arrivals and
 * departures), e.g. the Philly job table. See docs/simulator.md.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct targs {
    const char *jobs, *cluster, *nodes, *policy, *sequencer;
    uint64_t seed;
    size_t limit;
    double cpu_per_gpu, mem_per_gpu;
    double reservations;       /* -1: the library default (1) */
    bool json, strict_fifo, full_walk;
} targs;

static int num(double *out, const char *s)
{
    char *e;
    errno = 0;
    *out = strtod(s, &e);
    return (e == s || *e || errno || !(*out >= 0)) ? -1 : 0;
}

static int parse(targs *a, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d;
        if (strcmp(k, "--json") == 0 || strcmp(k, "--strict-fifo") == 0 ||
            strcmp(k, "--full-walk") == 0) {
            *(k[2] == 'j' ? &a->json : k[2] == 's' ? &a->strict_fifo
                                                   : &a->full_walk) = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "sokovan-sim trace: '%s' needs a value (or is unknown)\n", k);
            return -1;
        }
        i++;
        if (strcmp(k, "--jobs") == 0)
            a->jobs = v;
        else if (strcmp(k, "--cluster") == 0)
            a->cluster = v;
        else if (strcmp(k, "--nodes") == 0)
            a->nodes = v;
        else if (strcmp(k, "--policy") == 0)
            a->policy = v;
        else if (strcmp(k, "--sequencer") == 0)
            a->sequencer = v;
        else if (strcmp(k, "--reservations") == 0 && num(&d, v) == 0 &&
                 d <= 1000000 && d == (double)(uint32_t)d)
            a->reservations = d;
        else if ((strcmp(k, "--seed") == 0 || strcmp(k, "--limit") == 0 ||
                  strcmp(k, "--cpu-per-gpu") == 0 || strcmp(k, "--mem-per-gpu") == 0) &&
                 num(&d, v) == 0) {
            if (k[2] == 's')
                a->seed = (uint64_t)d;
            else if (k[2] == 'l')
                a->limit = (size_t)d;
            else if (k[2] == 'c')
                a->cpu_per_gpu = d;
            else
                a->mem_per_gpu = d;
        } else {
            fprintf(stderr, "sokovan-sim trace: bad option or value '%s %s'\n", k, v);
            return -1;
        }
    }
    if (a->strict_fifo && (a->sequencer || a->reservations >= 0)) {
        fprintf(stderr, "sokovan-sim trace: --strict-fifo orders by submit "
                "time and never backfills: it takes no --sequencer or "
                "--reservations\n");
        return -1;
    }
    if (!a->jobs || (!a->cluster == !a->nodes)) {
        fprintf(stderr, "sokovan-sim trace: --jobs and one of --cluster or --nodes "
                "are required\n");
        return -1;
    }
    return 0;
}

/* "N nodes like FILE.xml" */
static int parse_cluster(skv_sim_jobs_options *o, const char *text)
{
    unsigned n;
    char path[4096];
    if (sscanf(text, "%u nodes like %4095s", &n, path) != 2 || n == 0) {
        fprintf(stderr, "sokovan-sim trace: --cluster '%s': expected \"N nodes "
                "like FILE.xml\"\n", text);
        return -1;
    }
    skv_error e = SKV_ERROR_INIT;
    if (skv_sim_node_shape_from_xml(&o->shape, path, &e) < 0) {
        fprintf(stderr, "sokovan-sim trace: %s\n", e.message);
        return -1;
    }
    o->n_nodes = n;
    return 0;
}

static void print_table(const targs *a, const skv_sim_jobs_options *o,
                        const skv_sim_jobs_result *r, double wall)
{
    if (o->strict_fifo)
        printf("trace %s: %zu jobs (%zu completed, %zu rejected), policy %s, "
               "strict FIFO (no backfill)\n", a->jobs, r->n_jobs, r->n_completed,
               r->n_rejected, o->policy);
    else
        printf("trace %s: %zu jobs (%zu completed, %zu rejected), policy %s, "
               "sequencer %s, %u reservation(s)\n", a->jobs, r->n_jobs,
               r->n_completed, r->n_rejected, o->policy,
               o->sequencer ? o->sequencer : "fifo", o->max_reservations);
    printf("  utilization          %8.2f %%   (makespan %.1f h)\n",
           100.0 * r->utilization, r->makespan_s / 3600.0);
    printf("  queueing delay  s    mean %10.1f  p50 %10.1f  p99 %10.1f\n",
           r->queue_mean_s, r->queue_p50_s, r->queue_p99_s);
    printf("  completion time s    mean %10.1f  p50 %10.1f  p99 %10.1f\n",
           r->jct_mean_s, r->jct_p50_s, r->jct_p99_s);
    printf("  fairness (Jain, 1/slowdown over %zu VCs) %.3f\n", r->n_owners,
           r->jain_fairness);
    printf("  scheduler: %zu passes, %zu decisions (digest %016llx), %.3f s in "
           "passes -> %.0f decisions/s, %.0f passes/s (wall %.1f s)\n", r->n_passes,
           r->n_decisions, (unsigned long long)r->decisions_digest, r->pass_seconds,
           r->pass_seconds > 0 ? (double)r->n_decisions / r->pass_seconds : 0,
           r->pass_seconds > 0 ? (double)r->n_passes / r->pass_seconds : 0, wall);
    printf("  scheduler CPU: %.3f s in passes -> %.0f decisions/s\n",
           r->pass_cpu_seconds,
           r->pass_cpu_seconds > 0 ? (double)r->n_decisions / r->pass_cpu_seconds : 0);
    printf("  %-10s %8s %14s %10s\n", "vc", "jobs", "GPU-hours", "slowdown");
    for (size_t i = 0; i < r->n_owners; i++)
        printf("  %-10s %8zu %14.1f %10.2f\n", r->owners[i].name,
               r->owners[i].n_jobs, r->owners[i].gpu_seconds / 3600.0,
               r->owners[i].mean_slowdown);
}

static void print_json(const skv_sim_jobs_options *o, const skv_sim_jobs_result *r,
                       double wall)
{
    printf("{\"experiment\":\"trace\",\"policy\":");
    sim_json_str(o->policy);
    printf(",\"order\":");
    sim_json_str(o->strict_fifo ? "strict-fifo"
                                : o->sequencer ? o->sequencer : "fifo");
    printf(",\"reservations\":%u,\"full_walk\":%s,\"decisions_digest\":"
           "\"%016llx\"", o->strict_fifo ? 0 : o->max_reservations,
           o->full_walk ? "true" : "false",
           (unsigned long long)r->decisions_digest);
    printf(",\"jobs\":%zu,\"completed\":%zu,\"rejected\":%zu,\"utilization\":%.6f,"
           "\"makespan_s\":%.1f,\"queue_delay_s\":{\"mean\":%.3f,\"p50\":%.3f,"
           "\"p99\":%.3f},\"jct_s\":{\"mean\":%.3f,\"p50\":%.3f,\"p99\":%.3f},"
           "\"jain_fairness\":%.6f,\"passes\":%zu,\"decisions\":%zu,"
           "\"pass_seconds\":%.6f,\"decisions_per_s\":%.1f,\"pass_cpu_seconds\":%.6f,"
           "\"decisions_per_cpu_s\":%.1f,\"wall_s\":%.3f,\"vcs\":[",
           r->n_jobs, r->n_completed, r->n_rejected, r->utilization, r->makespan_s,
           r->queue_mean_s, r->queue_p50_s, r->queue_p99_s, r->jct_mean_s,
           r->jct_p50_s, r->jct_p99_s, r->jain_fairness, r->n_passes,
           r->n_decisions, r->pass_seconds,
           r->pass_seconds > 0 ? (double)r->n_decisions / r->pass_seconds : 0,
           r->pass_cpu_seconds,
           r->pass_cpu_seconds > 0 ? (double)r->n_decisions / r->pass_cpu_seconds : 0,
           wall);
    for (size_t i = 0; i < r->n_owners; i++) {
        printf("%s{\"name\":", i ? "," : "");
        sim_json_str(r->owners[i].name);
        printf(",\"jobs\":%zu,\"gpu_hours\":%.3f,\"mean_slowdown\":%.4f}",
               r->owners[i].n_jobs, r->owners[i].gpu_seconds / 3600.0,
               r->owners[i].mean_slowdown);
    }
    printf("]}\n");
}

int sim_trace_main(int argc, char **argv)
{
    targs a = {0};
    a.policy = "concentrated";
    a.reservations = -1;
    if (parse(&a, argc, argv) < 0)
        return 2;
    skv_sim_jobs_options o = SKV_SIM_JOBS_OPTIONS_INIT;
    o.policy = a.policy;
    o.sequencer = a.sequencer;
    o.seed = a.seed;
    o.max_jobs = a.limit;
    o.cpu_per_gpu = (skv_qty)(a.cpu_per_gpu * 1000.0);
    o.mem_per_gpu = (skv_qty)a.mem_per_gpu;
    o.strict_fifo = a.strict_fifo;
    o.full_walk = a.full_walk;
    if (a.reservations >= 0)
        o.max_reservations = (uint32_t)a.reservations;
    skv_error e = SKV_ERROR_INIT;
    skv_sim_openb *nodes = NULL;
    skv_sim_jobs *jobs = NULL;
    skv_sim_jobs_result *r = NULL;
    int rc = 1;
    if (a.cluster && parse_cluster(&o, a.cluster) < 0)
        return 2;
    if (a.nodes) {
        if (skv_sim_openb_load(&nodes, a.nodes, NULL, &e) < 0) {
            fprintf(stderr, "sokovan-sim trace: %s\n", e.message);
            return 1;
        }
        o.nodes = nodes;
    }
    if (skv_sim_jobs_load(&jobs, a.jobs, &e) < 0) {
        fprintf(stderr, "sokovan-sim trace: %s\n", e.message);
        return 1;
    }
    double t0 = sim_now();
    if (skv_sim_jobs_run(&r, jobs, &o, &e) < 0) {
        fprintf(stderr, "sokovan-sim trace: %s\n", e.message);
    } else {
        double wall = sim_now() - t0;
        if (a.json)
            print_json(&o, r, wall);
        else
            print_table(&a, &o, r, wall);
        rc = 0;
    }
    skv_sim_jobs_result_free(r);
    skv_sim_jobs_free(jobs);
    skv_sim_openb_free(nodes);
    return rc;
}
