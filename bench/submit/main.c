/* bench/submit: the manager's write path alone. Starts one real
 * sokovan-manager (no agent: every session stays PENDING, so nothing but
 * submissions is measured) and C client processes that each submit S
 * sessions one after the other (each waits for its acknowledgement),
 * then checks that session.list counts exactly C*S. Prints submissions
 * per second and the mean acknowledgement latency as one JSON line.
 *   usage: submit [C] [S]      (default 8 clients x 250 sessions)
 * The daemons come from <build>/bin or $SKV_E2E_BIN (to compare two
 * builds with the same client). Needs root and /bin/busybox like the
 * other end-to-end programs (tests/e2e_cluster.h); otherwise prints a
 * "skipped" JSON line and exits 0.
 * SPDX-License-Identifier: Apache-2.0 */
#include <libgen.h>
#include <sys/wait.h>

#include "../../tests/e2e_cluster.h"

static e2e_cluster g;

static int skipped(const char *why)
{
    fprintf(stderr, "submit: skipped: %s\n", why);
    printf("{\"bench\":\"submit\",\"skipped\":true,\"why\":\"%s\"}\n", why);
    return 0;
}

/* One client process: s submissions; exit status 0 when all were acked. */
static int client(int s)
{
    skv_client *cl = NULL;
    if (e2e_connect(&g, &cl, NULL, NULL))
        return 1;
    e2e_job j = {NULL, "true", "cpu=0.1,mem=16m", 1, false, NULL, NULL, 0};
    for (int i = 0; i < s; i++) {
        char sid[E2E_ID_MAX];
        skv_error e = SKV_ERROR_INIT;
        if (e2e_submit(cl, sid, &j, &e)) {
            fprintf(stderr, "submit: %s\n", e.message);
            skv_client_free(cl);
            return 1;
        }
    }
    skv_client_free(cl);
    return 0;
}

static int run_clients(int c, int s)
{
    pid_t pids[256];
    for (int i = 0; i < c; i++) {
        if ((pids[i] = fork()) == 0)
            _exit(client(s));
        if (pids[i] < 0)
            return -1;
    }
    int bad = 0;
    for (int i = 0; i < c; i++) {
        int st = 0;
        if (waitpid(pids[i], &st, 0) != pids[i] || !WIFEXITED(st) ||
            WEXITSTATUS(st))
            bad++;
    }
    return bad;
}

static uint64_t total_sessions(void)
{
    skv_client *cl = NULL;
    skv_proto_session_list q = {0};
    skv_proto_session_list_reply rep = {0};
    skv_error e = SKV_ERROR_INIT;
    uint64_t n = 0;
    q.owner = "*";
    q.limit = 1;
    if (!e2e_connect(&g, &cl, NULL, NULL) &&
        !skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &rep, &e))
        n = rep.total;
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &rep);
    skv_client_free(cl);
    return n;
}

int main(int argc, char **argv)
{
    int c = argc > 1 ? atoi(argv[1]) : 8;
    int s = argc > 2 ? atoi(argv[2]) : 250;
    char self[PATH_MAX], build[PATH_MAX], bin[PATH_MAX];
    if (c <= 0 || c > 256 || s <= 0 || s > 100000 || argc > 3) {
        fprintf(stderr, "usage: submit [CLIENTS 1..256] [SESSIONS EACH]\n");
        return 2;
    }
    if (geteuid() != 0)
        return skipped("needs root (the cluster harness)");
    if (access("/bin/busybox", X_OK) != 0)
        return skipped("needs /bin/busybox (busybox-static)");
    snprintf(self, sizeof(self), "%s", argv[0]);
    snprintf(build, sizeof(build), "%s/..", dirname(self));
    if (e2e_find_bin(bin, sizeof(bin), build) != 0)
        return skipped("no sokovan-manager / sokovan-agent in <build>/bin");
    if (e2e_init(&g, bin) || e2e_start_manager(&g, "a1")) {
        fprintf(stderr, "submit: %s\n", g.why);
        e2e_stop(&g);
        return 1;
    }
    int64_t t0 = e2e_now_ms();
    int bad = run_clients(c, s);
    int64_t ms = e2e_now_ms() - t0;
    uint64_t n = total_sessions();
    e2e_stop(&g);
    double secs = ms > 0 ? ms / 1e3 : 1e-3;
    printf("{\"bench\":\"submit\",\"clients\":%d,\"each\":%d,\"seconds\":%.3f,"
           "\"per_s\":%.1f,\"ack_ms_mean\":%.2f,\"recorded\":%llu,"
           "\"failed_clients\":%d}\n", c, s, secs, c * s / secs,
           (double)ms * c / (c * s), (unsigned long long)n, bad);
    return bad || n != (uint64_t)c * s;
}
