/* One cluster's measurement: start the manager, connect and register the
 * simulated agents, start the clients with the clock, wait until every
 * session's kernel.destroy came back (the manager destroys a kernel once it
 * recorded the exit: the session is TERMINATED by then), cross-check the
 * count with session.list, and read the manager's CPU time and peak RSS.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "run.h"
#include "sokovan/client.h"
#include "sokovan/proto.h"

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double bench_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int wait_registered(bm_sim *s, bm_cluster *c, int n, char *why,
                           size_t wl)
{
    for (int64_t end = bm_now_ns() + 900 * 1000000000LL; bm_now_ns() < end;) {
        if (atomic_load(&s->failed)) {
            /* Today's manager answers each agent.register with the routes
             * of every agent to every agent: registering 1,000 agents takes
             * minutes, and an agent registered early is taken for lost. */
            snprintf(why, wl, "simulated agents: %s (after %d of %d "
                     "registered; agents registering for longer than the "
                     "manager's heartbeat timeout are taken for lost: "
                     "--mgr-arg --heartbeat-timeout-ms --mgr-arg MS raises "
                     "it)", s->why, atomic_load(&s->registered), n);
            return -1;
        }
        if (!bm_cluster_alive(c)) {
            snprintf(why, wl, "the manager died while agents registered");
            return -1;
        }
        if (atomic_load(&s->registered) >= n)
            return 0;
        sleep_ms(20);
    }
    snprintf(why, wl, "%d of %d agents registered in 900 s",
             atomic_load(&s->registered), n);
    return -1;
}

/* Until no route event (agent.routes, agent.routes.delta) came for 2 s (at
 * most 600 s): a manager may still be sending route changes of the last
 * registrations when their replies are in, and a client connecting
 * meanwhile may not be served within auth_timeout_ms. */
static int wait_quiet(bm_sim *s, bm_cluster *c, char *why, size_t wl)
{
    long last = -1;
    int64_t since = bm_now_ns(), end = since + 600 * 1000000000LL;
    while (bm_now_ns() < end) {
        if (atomic_load(&s->failed) || !bm_cluster_alive(c)) {
            snprintf(why, wl, "after registration: %s", atomic_load(&s->failed)
                     ? s->why : "the manager died");
            return -1;
        }
        long now = atomic_load(&s->routes_in);
        if (now != last) {
            last = now;
            since = bm_now_ns();
        } else if (bm_now_ns() - since >= 2000000000LL) {
            return 0;
        }
        sleep_ms(50);
    }
    snprintf(why, wl, "route events still coming 600 s after the "
             "registrations");
    return -1;
}

/* Until every session ended, or something failed. */
static int wait_done(bm_result *r, bm_sim *s, bm_clients *cl, bm_cluster *c,
                     int n, int timeout_s, char *why, size_t wl)
{
    int64_t end = bm_now_ns() + (int64_t)timeout_s * 1000000000LL;
    while (atomic_load(&s->ended) < n) {
        if (atomic_load(&cl->failed)) {
            snprintf(why, wl, "clients: %s", cl->why);
            return -1;
        }
        if (atomic_load(&s->failed)) {
            snprintf(why, wl, "simulated agents: %s", s->why);
            return -1;
        }
        if (!bm_cluster_alive(c)) {
            char tail[500];
            bm_cluster_log_tail(c, tail, sizeof(tail));
            snprintf(why, wl, "the manager died: %s", tail);
            return -1;
        }
        if (bm_now_ns() > end) {
            snprintf(why, wl, "timeout: %d of %d sessions ended in %d s",
                     atomic_load(&s->ended), n, timeout_s);
            return -1;
        }
        bm_proc p;
        if (bm_proc_read(c->pid, &p) == 0 && p.rss_mb > r->peak_rss_seen_mb)
            r->peak_rss_seen_mb = p.rss_mb;
        sleep_ms(5);
    }
    return 0;
}

/* Sessions with this final status, by the manager's own count. */
static int count(skv_client *cl, const char *status, uint64_t *n, char *why,
                 size_t wl)
{
    char *st[] = {(char *)status};
    skv_proto_session_list q = {0};
    q.statuses = st;
    q.n_statuses = 1;
    q.limit = 1;
    skv_proto_session_list_reply rep = {0};
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &rep, &e);
    if (rc)
        snprintf(why, wl, "session.list: %s", e.message);
    *n = rep.total;
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &rep);
    return rc;
}

static int cross_check(bm_result *r, bm_cluster *c, int n, char *why,
                       size_t wl)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_client *cl = NULL;
    o.endpoint = c->endpoint;
    o.access_key = c->ak;
    o.secret_key = c->sk;
    o.timeout_ms = 60000;
    if (skv_client_connect(&cl, &o, &e)) {
        snprintf(why, wl, "client: %s", e.message);
        return -1;
    }
    int rc = count(cl, "TERMINATED", &r->terminated, why, wl);
    skv_client_free(cl);
    if (rc == 0 && r->terminated != (uint64_t)n) {
        snprintf(why, wl, "the manager lists %llu TERMINATED sessions, not "
                 "%d", (unsigned long long)r->terminated, n);
        rc = -1;
    }
    return rc;
}

/* --profile: CMD run by sh with SKV_BENCH_MGR_PID set, from the clock's
 * start to the end of the run (then SIGINT, as perf record expects). */
static pid_t profile_start(const char *cmd, pid_t mgr)
{
    if (!cmd)
        return -1;
    char pid[24];
    snprintf(pid, sizeof(pid), "%ld", (long)mgr);
    pid_t p = fork();
    if (p == 0) {
        setpgid(0, 0);
        setenv("SKV_BENCH_MGR_PID", pid, 1);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return p;
}

static void profile_stop(pid_t p)
{
    if (p <= 0)
        return;
    kill(-p, SIGINT);
    waitpid(p, NULL, 0);
}

static int64_t max_of(const int64_t *v, int n)
{
    int64_t m = 0;
    for (int i = 0; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* p50 and p99 of later[i] - earlier[i], in ms. */
static void pct(const int64_t *earlier, const int64_t *later, int n,
                bm_pct *out)
{
    int64_t *d = malloc((size_t)n * sizeof(*d));
    int k = 0;
    for (int i = 0; d && i < n; i++)
        if (earlier[i] && later[i])
            d[k++] = later[i] - earlier[i];
    out->p50 = out->p99 = -1;
    if (k) {
        qsort(d, (size_t)k, sizeof(*d), cmp64);
        out->p50 = (double)d[k / 2] / 1e6;
        out->p99 = (double)d[(size_t)((k - 1) * 0.99)] / 1e6;
    }
    free(d);
}

static void figures(bm_result *r, const bm_times *t, int n, int64_t t0)
{
    int64_t t_ack = max_of(t->acked, n), t_end = max_of(t->end, n);
    r->wall_s = (double)(t_end - t0) / 1e9;
    r->submit_s = (double)(t_ack - t0) / 1e9;
    r->sessions_per_s = n / r->wall_s;
    r->submits_per_s = n / r->submit_s;
    pct(t->submit, t->acked, n, &r->ack_ms);
    pct(t->submit, t->dispatch, n, &r->dispatch_ms);
    pct(t->submit, t->end, n, &r->end_ms);
}

static void sim_counts(bm_result *r, bm_sim *s)
{
    r->creates = atomic_load(&s->creates);
    r->destroys = atomic_load(&s->destroys);
    r->dup_creates = atomic_load(&s->dup_creates);
    r->untagged = atomic_load(&s->untagged);
    r->mgr_errors = atomic_load(&s->mgr_errors);
    r->heartbeats = atomic_load(&s->heartbeats);
}

static int measure(bm_result *r, const bm_opts *o, bm_cluster *c, bm_sim *s,
                   bm_times *t, char *why, size_t wl)
{
    bm_clients cl;
    bm_proc p0, p1;
    double b0 = bench_cpu_s();
    r->load1_start = bm_loadavg();
    if (bm_proc_read(c->pid, &p0)) {
        snprintf(why, wl, "cannot read /proc/%ld", (long)c->pid);
        return -1;
    }
    pid_t prof = profile_start(o->profile, c->pid);
    int64_t t0 = bm_now_ns();
    int rc = bm_clients_start(&cl, o->clients, o->sessions, c->endpoint,
                              c->ak, c->sk, o->slots, t, why, wl);
    if (rc == 0) {
        rc = wait_done(r, s, &cl, c, o->sessions, o->timeout_s, why, wl);
        atomic_store(&cl.failed, 1);  /* stops the clients on a failure */
        bm_clients_join(&cl);
    }
    profile_stop(prof);
    if (rc == 0 && bm_proc_read(c->pid, &p1) == 0) {
        r->mgr_cpu_s = p1.cpu_s - p0.cpu_s;
        r->mgr_hwm_mb = p1.hwm_mb;
        r->mgr_runq_wait_s = p1.runq_wait_s - p0.runq_wait_s;
    }
    r->bench_cpu_s = bench_cpu_s() - b0;
    r->load1_end = bm_loadavg();
    sim_counts(r, s);
    if (rc == 0) {
        figures(r, t, o->sessions, t0);
        rc = cross_check(r, c, o->sessions, why, wl);
    }
    return rc;
}

int bm_run(bm_result *r, const char *bin, const bm_opts *o, int n_agents,
           char *why, size_t wl)
{
    bm_cluster c;
    bm_sim s;
    bm_times t;
    memset(r, 0, sizeof(*r));
    memset(&s, 0, sizeof(s));
    s.ep = -1;
    r->agents = n_agents;
    if (bm_times_init(&t, o->sessions)) {
        snprintf(why, wl, "out of memory");
        return -1;
    }
    bm_key *keys = NULL;
    int rc = bm_cluster_start(&c, bin, o);
    if (rc)
        snprintf(why, wl, "%s", c.why);
    if (rc == 0)
        rc = bm_keys_make(&keys, n_agents, c.endpoint, c.ak, c.sk, why, wl);
    int64_t t_reg = bm_now_ns();
    if (rc == 0)
        rc = bm_sim_start(&s, n_agents, c.sock, keys, o->capacity, &t, why,
                          wl);
    if (rc == 0)
        rc = wait_registered(&s, &c, n_agents, why, wl);
    r->register_s = (double)(bm_now_ns() - t_reg) / 1e9;
    if (rc == 0)
        rc = wait_quiet(&s, &c, why, wl);
    r->settle_s = (double)(bm_now_ns() - t_reg) / 1e9 - r->register_s;
    r->register_routes = atomic_load(&s.routes_in);
    r->register_bytes = atomic_load(&s.bytes_in);
    if (rc == 0) {
        fprintf(stderr, "manager: %d agents registered in %.2f s, quiet "
                "%.2f s later (manager pid %ld; %ld route events, %lld "
                "bytes to the agents); submitting %d sessions with %d "
                "clients\n", n_agents, r->register_s, r->settle_s,
                (long)c.pid,
                r->register_routes, r->register_bytes,
                o->sessions, o->clients);
        rc = measure(r, o, &c, &s, &t, why, wl);
    }
    bm_sim_stop(&s);
    r->agents_used = s.agents_used;
    r->max_per_agent = s.max_per_agent;
    bm_keys_free(keys, n_agents);
    bm_cluster_stop(&c);
    bm_times_free(&t);
    r->ok = rc == 0;
    return rc;
}

int bm_times_init(bm_times *t, int n)
{
    t->n = n;
    t->submit = calloc((size_t)n, sizeof(int64_t));
    t->acked = calloc((size_t)n, sizeof(int64_t));
    t->dispatch = calloc((size_t)n, sizeof(int64_t));
    t->end = calloc((size_t)n, sizeof(int64_t));
    if (t->submit && t->acked && t->dispatch && t->end)
        return 0;
    bm_times_free(t);
    return -1;
}

void bm_times_free(bm_times *t)
{
    free(t->submit);
    free(t->acked);
    free(t->dispatch);
    free(t->end);
    memset(t, 0, sizeof(*t));
}
