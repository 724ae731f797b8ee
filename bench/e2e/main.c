/* bench/e2e: cluster throughput with the real daemons. Starts a
 * sokovan-manager and one sokovan-agent (native runtime, all CPUs) in a
 * scratch directory, submits N trivial sessions (/bin/true, 0.1 CPU, 16 MiB)
 * through the client library and measures from the first submit until the
 * last session is TERMINATED. The manager's database and the agent's state
 * (kernel records) stay on the scratch directory's file system (/tmp); the
 * agent's run_dir (container directories and writable layers) is placed,
 * in two clusters one after the other, on a tmpfs (/dev/shm, as /run is on
 * a normal host) and on the same disk as the state. Then the peer: the
 * same N jobs through Slurm (bench/e2e/slurm-peer.sh; skipped when Slurm
 * is not installed, or with SKV_BENCH_NO_PEER=1). Ends with one JSON line
 * of all figures.
 *   usage: e2e [N] [tmpfs|disk|both]     (default 1000 both)
 * Needs root, /bin/busybox and the daemons beside this program
 * (<build>/bin, or $SKV_E2E_BIN); otherwise prints a "skipped" JSON line
 * and exits 0. The cluster harness is tests/e2e_cluster.h.
 * SPDX-License-Identifier: Apache-2.0 */
#include <linux/magic.h>
#include <sys/vfs.h>
#include <libgen.h>

#include "../../tests/e2e_cluster.h"

static e2e_cluster g;

/* One cluster's figures. */
typedef struct figures {
    bool ran;
    double submit_s, total_s, span_s;
    uint64_t bad;
} figures;

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

static int run(int n, figures *f)
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
    f->ran = true;
    f->submit_s = (double)(t_sub - t0) / 1e3;
    f->total_s = (double)(t_end - t0) / 1e3;
    f->span_s = (double)span / 1e3;
    f->bad = bad;
    printf("e2e: %d sessions on 1 agent, run_dir on %s: submitted in %.3f "
           "s, all ended after %.3f s (%.1f sessions/s; manager's own span "
           "%.3f s); %llu not TERMINATED\n", n,
           g.run_root[0] ? "tmpfs" : "disk", f->submit_s, f->total_s,
           n / f->total_s, f->span_s, (unsigned long long)bad);
    fflush(stdout);
    return bad ? 1 : 0;
}

static bool is_tmpfs(const char *path)
{
    struct statfs sf;
    return statfs(path, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* One cluster in a fresh scratch directory; on_tmpfs: the agent's run_dir
 * in a directory of its own on /dev/shm. */
static int one(const char *bin, int n, bool on_tmpfs, figures *f)
{
    int rc = e2e_init(&g, bin);
    if (rc == 0 && on_tmpfs) {
        snprintf(g.run_root, sizeof(g.run_root), "/dev/shm/skv-e2e-run-"
                 "XXXXXX");
        if (!mkdtemp(g.run_root)) {
            g.run_root[0] = '\0';
            rc = e2e_fail(&g, "mkdtemp in /dev/shm: %s%s", strerror(errno),
                          "");
        }
    }
    if (rc == 0)
        rc = run(n, f);
    else
        fprintf(stderr, "e2e: %s\n", g.why);
    e2e_stop(&g);
    return rc;
}

/* The peer's one JSON object (bench/e2e/slurm-peer.sh beside the build
 * directory's source tree) into out; a "skipped" object when it cannot
 * run. */
static void run_peer(const char *build, int n, char *out, size_t cap)
{
    char script[PATH_MAX + 64], cmd[PATH_MAX + 96];
    snprintf(out, cap, "{\"skipped\":true,\"why\":\"SKV_BENCH_NO_PEER "
             "set\"}");
    if (getenv("SKV_BENCH_NO_PEER"))
        return;
    snprintf(script, sizeof(script), "%s/../bench/e2e/slurm-peer.sh", build);
    if (access(script, X_OK) != 0) {
        snprintf(out, cap, "{\"skipped\":true,\"why\":\"no %s\"}",
                 "bench/e2e/slurm-peer.sh beside the build directory");
        return;
    }
    snprintf(cmd, sizeof(cmd), "%s %d", script, n);
    FILE *p = popen(cmd, "r");
    char line[1024] = "";
    bool got = p && fgets(line, sizeof(line), p) != NULL;
    if (p)
        pclose(p);
    line[strcspn(line, "\n")] = '\0';
    if (got && line[0] == '{')
        snprintf(out, cap, "%s", line);
    else
        snprintf(out, cap, "{\"skipped\":true,\"why\":\"the peer script "
                 "printed nothing\"}");
}

static void json_figures(const char *name, int n, const figures *f)
{
    if (!f->ran) {
        printf(",\"%s\":null", name);
        return;
    }
    printf(",\"%s\":{\"submit_s\":%.3f,\"total_s\":%.3f,"
           "\"sessions_per_s\":%.1f,\"server_span_s\":%.3f,"
           "\"not_terminated\":%llu}", name, f->submit_s, f->total_s,
           n / f->total_s, f->span_s, (unsigned long long)f->bad);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    const char *where = argc > 2 ? argv[2] : "both";
    char self[PATH_MAX], build[PATH_MAX], bin[PATH_MAX];
    bool tmpfs = strcmp(where, "tmpfs") == 0 || strcmp(where, "both") == 0;
    bool disk = strcmp(where, "disk") == 0 || strcmp(where, "both") == 0;
    if (n <= 0 || n > 100000 || argc > 3 || (!tmpfs && !disk)) {
        fprintf(stderr, "usage: e2e [N] [tmpfs|disk|both]   (1..100000 "
                "sessions; where the agent's run_dir lives)\n");
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
    if (tmpfs && !is_tmpfs("/dev/shm"))
        return skipped("/dev/shm is not a tmpfs");
    figures ft = {0}, fd = {0};
    int rc = tmpfs ? one(bin, n, true, &ft) : 0;
    if (disk && one(bin, n, false, &fd) != 0)
        rc = 1;
    char peer[1024];
    run_peer(build, n, peer, sizeof(peer));
    printf("e2e: peer, Slurm with the same %d jobs: %s\n", n, peer);
    printf("{\"bench\":\"e2e\",\"sessions\":%d,\"agents\":1", n);
    json_figures("run_dir_tmpfs", n, &ft);
    json_figures("run_dir_disk", n, &fd);
    printf(",\"slurm\":%s}\n", peer);
    return rc;
}
