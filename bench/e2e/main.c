/* bench/e2e: cluster throughput with the real daemons. Starts a
 * sokovan-manager and one sokovan-agent (native runtime, all CPUs) in a
 * scratch directory, submits N trivial sessions (/bin/true, 0.1 CPU, 16 MiB)
 * through the client library and measures from the first submit until the
 * last session is TERMINATED. Ends with one JSON line.
 *   usage: e2e [N]     (default 1000)
 * Needs root, /bin/busybox and the daemons beside this program
 * (<build>/bin, or $SKV_E2E_BIN); otherwise prints a "skipped" JSON line
 * and exits 0. The cluster harness is tests/e2e_cluster.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include <libgen.h>

#include "../../tests/e2e_cluster.h"

static e2e_cluster g;

static int skipped(const char *why)
{
    fprintf(stderr, "e2e: skipped: %s\n", why);
    printf("{\"bench\":\"e2e\",\"skipped\":true,\"why\":\"%s\"}\n", why);
    return 0;
}

/* Sessions by final state (total of each listing). */
static int count(skv_client *cl, const char *status, uint64_t *n)
{
    char *st[] = {(char *)status};
    skv_proto_session_list q = {0};
    q.statuses = st;
    q.n_statuses = 1;
    q.limit = 1;
    skv_proto_session_list_reply r = {0};
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &r, &e);
    if (rc)
        fprintf(stderr, "e2e: session.list: %s\n", e.message);
    *n = r.total;
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &r);
    return rc;
}

/* The manager's own view: first created to last finished, in ms. */
static int64_t server_span(skv_client *cl, int n)
{
    skv_proto_session_list q = {0};
    q.limit = (uint32_t)n;
    skv_proto_session_list_reply r = {0};
    skv_error e = SKV_ERROR_INIT;
    int64_t lo = INT64_MAX, hi = 0;
    if (skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &r, &e) == 0)
        for (size_t i = 0; i < r.n_sessions; i++) {
            const skv_proto_session_info *s = &r.sessions[i];
            lo = s->created_ms < lo ? s->created_ms : lo;
            hi = s->finished_ms > hi ? s->finished_ms : hi;
        }
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &r);
    return hi > lo ? hi - lo : -1;
}

static int run(int n)
{
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    snprintf(g.agent_cpus[0], sizeof(g.agent_cpus[0]), "0-%ld",
             sysconf(_SC_NPROCESSORS_ONLN) - 1);
    if (e2e_start_manager(&g, "a1") || e2e_start_agent(&g, 0) ||
        e2e_connect(&g, &cl, NULL, NULL) || e2e_wait_agents(&g, cl, 1)) {
        fprintf(stderr, "e2e: %s\n", g.why);
        skv_client_free(cl);
        return 1;
    }
    char *const argv[] = {"/bin/true", NULL};
    e2e_job j = {NULL, NULL, "cpu=0.1,mem=16m", 1, false, NULL, argv};
    int64_t t0 = e2e_now_ms();
    for (int i = 0; i < n; i++) {
        char sid[E2E_ID_MAX];
        if (e2e_submit(cl, sid, &j, &e)) {
            fprintf(stderr, "e2e: submit %d: %s\n", i, e.message);
            skv_client_free(cl);
            return 1;
        }
    }
    int64_t t_sub = e2e_now_ms();
    uint64_t done = 0, bad = 0, b2 = 0;
    int rc = 0;
    for (int64_t end = t0 + 600000; !rc && done + bad < (uint64_t)n;) {
        if ((rc = count(cl, "TERMINATED", &done)) == 0 &&
            (rc = count(cl, "ERROR", &bad)) == 0 &&
            (rc = count(cl, "CANCELLED", &b2)) == 0)
            bad += b2;
        if (e2e_now_ms() > end) {
            fprintf(stderr, "e2e: timeout with %llu of %d done\n",
                    (unsigned long long)done, n);
            rc = 1;
        }
        if (!rc && done + bad < (uint64_t)n)
            e2e_sleep_ms(10);
    }
    int64_t t_end = e2e_now_ms();
    int64_t span = rc ? -1 : server_span(cl, n);
    skv_client_free(cl);
    if (rc)
        return 1;
    double total_s = (double)(t_end - t0) / 1e3;
    printf("e2e: %d sessions on 1 agent: submitted in %.3f s, all ended "
           "after %.3f s (%.1f sessions/s; manager's own span %.3f s); %llu "
           "not TERMINATED\n", n, (double)(t_sub - t0) / 1e3, total_s,
           n / total_s, (double)span / 1e3, (unsigned long long)bad);
    printf("{\"bench\":\"e2e\",\"sessions\":%d,\"agents\":1,\"submit_s\":%.3f,"
           "\"total_s\":%.3f,\"sessions_per_s\":%.1f,\"server_span_s\":%.3f,"
           "\"not_terminated\":%llu}\n", n, (double)(t_sub - t0) / 1e3,
           total_s, n / total_s, (double)span / 1e3, (unsigned long long)bad);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    char self[PATH_MAX], build[PATH_MAX], bin[PATH_MAX];
    if (n <= 0 || n > 100000) {
        fprintf(stderr, "usage: e2e [N]   (1..100000 sessions)\n");
        return 2;
    }
    if (geteuid() != 0)
        return skipped("needs root (the agent runs containers)");
    if (access("/bin/busybox", X_OK) != 0)
        return skipped("needs /bin/busybox (busybox-static)");
    /* <build>/bench/e2e -> <build> */
    snprintf(self, sizeof(self), "%s", argv[0]);
    snprintf(build, sizeof(build), "%s/..", dirname(self));
    if (e2e_find_bin(bin, sizeof(bin), build) != 0)
        return skipped("no sokovan-manager / sokovan-agent in <build>/bin");
    if (e2e_init(&g, bin) != 0) {
        fprintf(stderr, "e2e: %s\n", g.why);
        e2e_teardown_root(g.root);
        return 1;
    }
    int rc = run(n);
    e2e_stop(&g);
    return rc;
}
