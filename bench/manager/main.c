/* bench/manager: the manager at scale. One real sokovan-manager (from the
 * build directory, its own scratch data dir), N protocol-level simulated
 * agents in this process (sim.c: real agent keys, register, heartbeats,
 * instant containers) and several client threads submitting the sessions
 * through the client library (clients.c). For each agent count: sessions/s
 * from the first submit until the last session ended (submit -> placed ->
 * dispatched -> exited -> TERMINATED, seen as its kernel.destroy), p50/p99
 * latency from the submit to its answer, to the kernel.create at the agent
 * and to the end, the manager's CPU seconds and peak RSS (VmHWM) from
 * /proc. Ends with one JSON line of all figures.
 *   usage: manager [--sessions N] [--agents N,N,...] [--clients N]
 *                  [--store URL] [--mgr-arg ARG]... [--slots S]
 *                  [--capacity S] [--timeout S] [--profile CMD]
 * Needs <build>/bin/sokovan-manager (or $SKV_E2E_BIN); otherwise prints a
 * "skipped" JSON line and exits 0. Any failure (a refused submit, a
 * manager that dies, a store it does not know, a session not TERMINATED)
 * exits 1 with the reason.
 * SPDX-License-Identifier: Apache-2.0 */
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster.h"
#include "run.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: manager [options]\n"
        "  --sessions N     sessions submitted in total (default 100000)\n"
        "  --agents LIST    simulated agent counts, one cluster each "
        "(default 10,100,1000)\n"
        "  --clients N      submitting client threads (default 8)\n"
        "  --store URL      passed to sokovan-manager as --store (default: "
        "not passed, SQLite)\n"
        "  --mgr-arg ARG    one more sokovan-manager argument (repeatable)\n"
        "  --slots S        each session's request (default "
        "cpu=1,mem=256m)\n"
        "  --capacity S     each agent's capacity (default "
        "cpu=64,mem=256g)\n"
        "  --timeout S      seconds per cluster (default 1800)\n"
        "  --profile CMD    run CMD (sh -c, $SKV_BENCH_MGR_PID set) while "
        "the sessions run; SIGINT at the end\n");
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_agents(bm_opts *o, const char *s)
{
    char buf[256], *save = NULL;
    snprintf(buf, sizeof(buf), "%s", s);
    o->n_agents = 0;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (o->n_agents == 8 ||
            parse_int(t, 1, 5000, &o->agents[o->n_agents++]))
            return -1;
    return o->n_agents ? 0 : -1;
}

enum { O_SESSIONS = 1, O_AGENTS, O_CLIENTS, O_STORE, O_MGR_ARG, O_SLOTS,
       O_CAPACITY, O_TIMEOUT, O_PROFILE, O_HELP };

static int parse_opt(bm_opts *o, int c, const char *v)
{
    switch (c) {
    case O_SESSIONS: return parse_int(v, 1, 10000000, &o->sessions);
    case O_AGENTS: return parse_agents(o, v);
    case O_CLIENTS: return parse_int(v, 1, 256, &o->clients);
    case O_STORE: o->store = v; return *v ? 0 : -1;
    case O_MGR_ARG:
        if (o->n_mgr_args == 16)
            return -1;
        o->mgr_args[o->n_mgr_args++] = v;
        return 0;
    case O_SLOTS: o->slots = v; return 0;
    case O_CAPACITY: o->capacity = v; return 0;
    case O_TIMEOUT: return parse_int(v, 1, 86400, &o->timeout_s);
    case O_PROFILE: o->profile = v; return 0;
    default: return -1;
    }
}

static int parse(bm_opts *o, int argc, char **argv)
{
    static const struct option lo[] = {
        {"sessions", 1, NULL, O_SESSIONS}, {"agents", 1, NULL, O_AGENTS},
        {"clients", 1, NULL, O_CLIENTS}, {"store", 1, NULL, O_STORE},
        {"mgr-arg", 1, NULL, O_MGR_ARG}, {"slots", 1, NULL, O_SLOTS},
        {"capacity", 1, NULL, O_CAPACITY}, {"timeout", 1, NULL, O_TIMEOUT},
        {"profile", 1, NULL, O_PROFILE}, {"help", 0, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    *o = (bm_opts){.sessions = 100000, .clients = 8, .agents = {10, 100, 1000},
                   .n_agents = 3, .slots = "cpu=1,mem=256m",
                   .capacity = "cpu=64,mem=256g", .timeout_s = 1800};
    int c;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        if (c == O_HELP) {
            usage(stdout);
            exit(0);
        }
        if (parse_opt(o, c, optarg)) {
            if (c != '?')
                fprintf(stderr, "manager: bad value for --%s: '%s'\n",
                        lo[c - 1].name, optarg);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "manager: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (o->clients > o->sessions)
        o->clients = o->sessions;
    return 0;
}

static void json_pct(const char *name, const bm_pct *p)
{
    printf(",\"%s\":{\"p50\":%.3f,\"p99\":%.3f}", name, p->p50, p->p99);
}

static void json_result(const bm_result *r)
{
    printf("{\"agents\":%d,\"ok\":%s", r->agents, r->ok ? "true" : "false");
    if (r->ok) {
        printf(",\"sessions_per_s\":%.1f,\"wall_s\":%.3f,\"submits_per_s\":"
               "%.1f,\"submit_s\":%.3f", r->sessions_per_s, r->wall_s,
               r->submits_per_s, r->submit_s);
        json_pct("submit_to_ack_ms", &r->ack_ms);
        json_pct("submit_to_dispatch_ms", &r->dispatch_ms);
        json_pct("submit_to_end_ms", &r->end_ms);
        printf(",\"manager_cpu_s\":%.2f,\"manager_peak_rss_mb\":%.1f,"
               "\"sessions_per_manager_cpu_s\":%.1f,\"manager_runq_wait_s\":%.2f,\"bench_cpu_s\":%.2f,"
               "\"terminated\":%llu", r->mgr_cpu_s, r->mgr_hwm_mb,
               r->mgr_cpu_s > 0 ? (double)r->terminated / r->mgr_cpu_s : -1,
               r->mgr_runq_wait_s, r->bench_cpu_s,
               (unsigned long long)r->terminated);
    }
    printf(",\"register_s\":%.2f,\"settle_s\":%.2f,"
           "\"register_routes_events\":%ld,\"register_bytes_to_agents\":%lld",
           r->register_s, r->settle_s,
           r->register_routes, r->register_bytes);
    printf(",\"agents_used\":%d,\"max_sessions_per_agent\":%ld",
           r->agents_used, r->max_per_agent);
    printf(",\"load1_start\":%.2f,\"load1_end\":%.2f,\"creates\":%ld,"
           "\"dup_creates\":%ld,\"destroys\":%ld,\"untagged\":%ld,"
           "\"manager_errors\":%ld,\"heartbeats\":%ld}", r->load1_start,
           r->load1_end, r->creates, r->dup_creates, r->destroys, r->untagged,
           r->mgr_errors, r->heartbeats);
}

static void line(const bm_opts *o, const bm_result *r)
{
    printf("manager: %d agents, %d sessions, %d clients: %.1f sessions/s "
           "(%.2f s; submits %.1f/s); submit->dispatch p50 %.2f ms p99 %.2f "
           "ms; submit->end p50 %.2f p99 %.2f ms; manager CPU %.2f s (%.2f s "
           "waiting for a CPU), peak RSS %.1f MB; load %.2f; %d agents used, "
           "at most %ld sessions on one\n", r->agents, o->sessions, o->clients,
           r->sessions_per_s, r->wall_s, r->submits_per_s, r->dispatch_ms.p50,
           r->dispatch_ms.p99, r->end_ms.p50, r->end_ms.p99, r->mgr_cpu_s,
           r->mgr_runq_wait_s, r->mgr_hwm_mb, r->load1_start, r->agents_used,
           r->max_per_agent);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    bm_opts o;
    char self[PATH_MAX], build[PATH_MAX + 8], bin[PATH_MAX], why[1024];
    if (parse(&o, argc, argv)) {
        usage(stderr);
        return 2;
    }
    snprintf(self, sizeof(self), "%s", argv[0]);
    snprintf(build, sizeof(build), "%s/..", dirname(self));
    if (bm_find_bin(bin, sizeof(bin), build) != 0) {
        printf("{\"bench\":\"manager\",\"skipped\":true,\"why\":\"no "
               "sokovan-manager in <build>/bin (make progs)\"}\n");
        return 0;
    }
    bm_result res[8];
    int rc = 0, ran = 0;
    for (int i = 0; i < o.n_agents && rc == 0; i++, ran++) {
        why[0] = '\0';
        rc = bm_run(&res[i], bin, &o, o.agents[i], why, sizeof(why));
        if (rc)
            fprintf(stderr, "manager: %d agents: FAILED: %s\n", o.agents[i],
                    why);
        else
            line(&o, &res[i]);
    }
    /* The engine only: a connection string may hold a password. */
    char store[64];
    snprintf(store, sizeof(store), "%.*s", o.store ? (int)strcspn(o.store,
             ":") : 6, o.store ? o.store : "sqlite");
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    printf("{\"bench\":\"manager\",\"date\":\"%s\",\"sessions\":%d,"
           "\"clients\":%d,\"store\":\"%s\",\"runs\":[", date, o.sessions,
           o.clients, store);
    for (int i = 0; i < ran; i++) {
        printf(i ? "," : "");
        json_result(&res[i]);
    }
    printf("]}\n");
    return rc ? 1 : 0;
}
