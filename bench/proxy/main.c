/* bench/proxy: the app proxy against a direct connection to the same
 * service, in one run. Starts sokovan-manager, one sokovan-agent and
 * sokovan-proxy (the agent and the proxy in a network namespace of the
 * bench's own, as tests/test_e2e_proxy.c does), runs busybox httpd in a
 * session that declares it as a service, and drives both paths with wrk
 * (Debian package wrk): the service's published port on the agent
 * (direct) and http://127.0.0.1:18290/s/SESSION/web/ (proxy, Bearer
 * token). Figures: p50/p99 latency and requests/s of a small file on one
 * connection, requests/s on 16 connections, MB/s of a large file on one
 * connection. Targets (issue 17): bulk >= 80 % of direct, added p50
 * <= 0.2 ms. Ends with one JSON line.
 *
 * Same conditions for both paths: first one second of each path, not
 * counted (the proxy's first request resolves its token with the manager;
 * httpd's first answers fault its pages in); then the one-connection
 * small-file runs alternate, ROUNDS rounds of direct-proxy pairs in
 * alternating order (D P, P D, D P, ...), so a slow spell of the machine
 * (another process, the hypervisor) lands on both paths alike. The added
 * p50 is the median over the rounds of proxy p50 - direct p50 (each
 * round's printed); the p50/p99/req/s shown per path are their medians.
 * SKV_BENCH_PROXY_B=PATH runs a second sokovan-proxy (PATH: another
 * build's) beside this build's, on LISTEN_B, in the same namespace for the
 * same session: each round then runs direct, this proxy and that one in a
 * rotating order, and the second's added p50 per round is printed too (a
 * before/after under the same conditions in one run).
 *   usage: proxy [SECONDS [ROUNDS]]   (each wrk run; default 5 and 3)
 * Needs root, /bin/busybox, wrk and the daemons beside this program
 * (<build>/bin, or $SKV_E2E_BIN); otherwise a "skipped" JSON line, exit 0.
 * SPDX-License-Identifier: Apache-2.0 */
#include <libgen.h>
#include <signal.h>

#include "../../tests/e2e_cluster.h"

#define LISTEN "127.0.0.1:18290"
#define LISTEN_B "127.0.0.1:18291"
#define BULK_MB 32

static e2e_cluster g;
static char g_ns[32];
static int g_secs = 5;
static int g_rounds = 3;
#define ROUNDS_MAX 15

typedef struct run {
    double p50_ms, p99_ms, rps, mbps;
} run;

static int skipped(const char *why)
{
    fprintf(stderr, "proxy: skipped: %s\n", why);
    printf("{\"bench\":\"proxy\",\"skipped\":true,\"why\":\"%s\"}\n", why);
    return 0;
}

static int sh(const char *cmd)
{
    return system(cmd) == 0 ? 0 : -1;
}

/* busybox with every applet (httpd), imported as "web". */
static int make_image(void)
{
    char cmd[PATH_MAX * 3], tarf[PATH_MAX + 16];
    snprintf(tarf, sizeof tarf, "%s/web.tar", g.root);
    snprintf(cmd, sizeof cmd, "set -e; R=%s/webrfs; mkdir -p $R/bin $R/etc "
             "$R/tmp $R/proc $R/sys $R/dev $R/www; chmod 1777 $R/tmp $R/www; "
             "cp /bin/busybox $R/bin/; for a in $(/bin/busybox --list); do "
             "[ $a = busybox ] || ln -sf busybox $R/bin/$a; done; "
             "tar -C $R -cf %s .", g.root, tarf);
    if (sh(cmd))
        return -1;
    skv_image_store *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_image_store_open(&st, g.images, &e);
    if (!rc)
        rc = skv_image_import_tar(st, "web", tarf, &e);
    skv_image_store_free(st);
    if (rc)
        fprintf(stderr, "proxy: image: %s\n", e.message);
    return rc;
}

static pid_t spawn_in_ns(const char *name, char *const argv[])
{
    return e2e_spawn_ns(&g, g_ns, name, argv);
}

static int start(void)
{
    char exe[PATH_MAX + 32], pexe[PATH_MAX + 32], state[PATH_MAX + 32];
    char run_dir[PATH_MAX + 48], mgr[PATH_MAX + 16];
    snprintf(exe, sizeof exe, "%s/sokovan-agent", g.bin);
    snprintf(pexe, sizeof pexe, "%s/sokovan-proxy", g.bin);
    snprintf(state, sizeof state, "%s/agent-a1", g.root);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    e2e_run_dir(&g, "a1", run_dir, sizeof run_dir);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(g.agent_cpus[0], sizeof g.agent_cpus[0], "0-%ld",
             n > 1 ? n - 1 : 0);
    char *const aargv[] = {exe, "--agent-id", "a1", "--manager", mgr,
                           "--data-dir", g.data, "--state-dir", state,
                           "--run-dir", run_dir, "--image-dir", g.images,
                           "--cpus", g.agent_cpus[0], "--memory", "4g", NULL};
    char *const pargv[] = {pexe, "--data-dir", g.data, "--manager", mgr,
                           "--listen", LISTEN, "--log-level", "warn", NULL};
    if (make_image() || e2e_start_manager(&g, "a1"))
        return -1;
    g.agent[0] = spawn_in_ns("a1", aargv);
    g.nagents = 1;
    char *bexe = getenv("SKV_BENCH_PROXY_B");
    char *const bargv[] = {bexe, "--data-dir", g.data, "--manager", mgr,
                           "--listen", LISTEN_B, "--log-level", "warn", NULL};
    if (bexe && spawn_in_ns("proxy-b", bargv) <= 0)
        return -1;
    return g.agent[0] > 0 && spawn_in_ns("proxy", pargv) > 0 ? 0 : -1;
}

/* The session: a small and a large file served by busybox httpd. */
static int session(skv_client *cl, char *sid, unsigned *host_port)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    char script[256];
    snprintf(script, sizeof script, "echo ok > /www/small && dd if=/dev/zero "
             "of=/www/bulk bs=1M count=%d 2>/dev/null && exec httpd -f -p 8080"
             " -h /www", BULK_MB);
    char *cmd[] = {"sh", "-c", script}, *svc[] = {"web=8080/http"};
    uint32_t port = 8080;
    if (skv_slots_parse(&req, "cpu=1,mem=512m", NULL, &e))
        return -1;
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.session_type = "interactive";
    s.image = "web";
    s.command = cmd;
    s.n_command = 3;
    s.kernels = &k;
    s.n_kernels = 1;
    s.ports = &port;
    s.n_ports = 1;
    s.services = svc;
    s.n_services = 1;
    skv_proto_session_ref ref = {0};
    int rc = skv_client_submit(cl, &ref, &s, &e);
    if (!rc)
        snprintf(sid, E2E_ID_MAX, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
    if (rc || e2e_wait_running(&g, cl, sid, 60000)) {
        fprintf(stderr, "proxy: session: %s %s\n", e.message, g.why);
        return -1;
    }
    skv_proto_session_show_reply r = {0};
    if (skv_client_show(cl, &r, sid, &e))
        return -1;
    const char *p = r.session.n_kernels && r.session.kernels[0].n_published
                        ? strrchr(r.session.kernels[0].published[0], ':')
                        : NULL;
    *host_port = p ? (unsigned)atoi(p + 1) : 0;
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    return *host_port ? 0 : -1;
}

static int token(skv_client *cl, const char *sid, char *tok, size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_app_token q = {(char *)sid, "web", 3600};
    skv_proto_app_token_reply r;
    int rc = skv_client_call(cl, SKV_PROTO_APP_TOKEN, &q, &r, &e);
    if (!rc)
        snprintf(tok, cap, "%s", r.token);
    else
        fprintf(stderr, "proxy: app.token: %s\n", e.message);
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
    return rc;
}

/* "123.45us" / "1.2ms" / "1.1s" -> ms; "1.5GB" / "300MB" / "12KB" -> MB. */
static double unit(const char *s, const char *const *names,
                   const double *scale)
{
    char *end = NULL;
    double v = strtod(s, &end);
    for (size_t i = 0; names[i]; i++)
        if (!strncmp(end, names[i], strlen(names[i])))
            return v * scale[i];
    return v;
}

static double ms_of(const char *s)
{
    static const char *const n[] = {"us", "ms", "s", NULL};
    static const double k[] = {1e-3, 1, 1e3};
    return unit(s, n, k);
}

static double mb_of(const char *s)
{
    static const char *const n[] = {"GB", "MB", "KB", "B", NULL};
    static const double k[] = {1024, 1, 1.0 / 1024, 1.0 / 1048576};
    return unit(s, n, k);
}

static const char *after(const char *out, const char *key)
{
    const char *p = strstr(out, key);
    if (!p)
        return "0";
    p += strlen(key);
    while (*p == ' ')
        p++;
    return p;
}

/* wrk in the namespace for secs seconds; its figures into r. */
static int wrk_for(const char *url, const char *tok, int conns, int secs,
                   run *r)
{
    char cmd[4096], out[8192];
    snprintf(cmd, sizeof cmd, "nsenter --net=/run/netns/%s wrk -t%d -c%d "
             "-d%ds --timeout 30s --latency %s%s%s '%s' 2>&1", g_ns,
             conns > 1 ? 2 : 1, conns, secs,
             tok ? "-H 'Authorization: Bearer " : "",
             tok ? tok : "", tok ? "'" : "", url);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int rc = pclose(p);
    if (rc || strstr(out, "Non-2xx") || strstr(out, "Socket errors")) {
        fprintf(stderr, "proxy: %s\n%s\n", cmd, out);
        if (rc || strstr(out, "Non-2xx"))
            return -1;
    }
    r->p50_ms = ms_of(after(out, " 50%"));
    r->p99_ms = ms_of(after(out, " 99%"));
    r->rps = strtod(after(out, "Requests/sec:"), NULL);
    r->mbps = mb_of(after(out, "Transfer/sec:"));
    return 0;
}

static int wrk(const char *url, const char *tok, int conns, run *r)
{
    return wrk_for(url, tok, conns, g_secs, r);
}

typedef struct pair {
    run small[2], many[2], bulk[2];   /* [0] direct, [1] proxy */
    run round[ROUNDS_MAX][3];         /* the alternating small runs */
    double added[ROUNDS_MAX];         /* per round: proxy - direct p50 */
    double added_b[ROUNDS_MAX];       /* the same for proxy B */
} pair;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[ROUNDS_MAX];
    memcpy(s, v, sizeof *v * (size_t)n);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* small[via]: the medians of the rounds' figures. */
static void small_medians(pair *x)
{
    for (int via = 0; via < 2; via++) {
        double p50[ROUNDS_MAX], p99[ROUNDS_MAX], rps[ROUNDS_MAX];
        for (int i = 0; i < g_rounds; i++) {
            p50[i] = x->round[i][via].p50_ms;
            p99[i] = x->round[i][via].p99_ms;
            rps[i] = x->round[i][via].rps;
        }
        x->small[via].p50_ms = median(p50, g_rounds);
        x->small[via].p99_ms = median(p99, g_rounds);
        x->small[via].rps = median(rps, g_rounds);
    }
}

/* Warm-up (not counted), then the alternating small-file rounds over
 * npaths paths (direct, proxy[, proxy B]). */
static int rounds(char small[3][300], int npaths, const char *tok, pair *x)
{
    run warm;
    for (int via = 0; via < npaths; via++)
        if (wrk_for(small[via], via ? tok : NULL, 1, 1, &warm))
            return -1;
    for (int i = 0; i < g_rounds; i++) {
        for (int k = 0; k < npaths; k++) {
            int via = (i + k) % npaths;   /* D P, then P D, ... */
            if (wrk(small[via], via ? tok : NULL, 1, &x->round[i][via]))
                return -1;
        }
        x->added[i] = x->round[i][1].p50_ms - x->round[i][0].p50_ms;
        x->added_b[i] = x->round[i][2].p50_ms - x->round[i][0].p50_ms;
        fprintf(stderr, "proxy: round %d: p50 direct %.3f ms, proxy %.3f ms,"
                " added %.3f ms", i + 1, x->round[i][0].p50_ms,
                x->round[i][1].p50_ms, x->added[i]);
        if (npaths == 3)
            fprintf(stderr, "; proxy B %.3f ms, added %.3f ms",
                    x->round[i][2].p50_ms, x->added_b[i]);
        fprintf(stderr, "\n");
    }
    small_medians(x);
    return 0;
}

static int measure(const char *sid, unsigned hp, const char *tok, pair *x)
{
    char d[128], p[256], small[3][300], bulk[2][300];
    snprintf(d, sizeof d, "http://127.0.0.1:%u/", hp);
    snprintf(p, sizeof p, "http://" LISTEN "/s/%s/web/", sid);
    for (int via = 0; via < 2; via++) {
        snprintf(small[via], sizeof small[via], "%ssmall", via ? p : d);
        snprintf(bulk[via], sizeof bulk[via], "%sbulk", via ? p : d);
    }
    snprintf(small[2], sizeof small[2], "http://" LISTEN_B "/s/%s/web/small",
             sid);
    if (rounds(small, getenv("SKV_BENCH_PROXY_B") ? 3 : 2, tok, x))
        return -1;
    for (int via = 0; via < 2; via++) {
        const char *t = via ? tok : NULL;
        if (wrk(small[via], t, 16, &x->many[via]) ||
            wrk(bulk[via], t, 1, &x->bulk[via]))
            return -1;
    }
    return 0;
}

static void report(const pair *x)
{
    const char *via[] = {"direct", "proxy"};
    printf("%-7s %10s %10s %12s %12s %10s\n", "path", "p50 ms", "p99 ms",
           "req/s (1)", "req/s (16)", "bulk MB/s");
    for (int i = 0; i < 2; i++)
        printf("%-7s %10.3f %10.3f %12.0f %12.0f %10.1f\n", via[i],
               x->small[i].p50_ms, x->small[i].p99_ms, x->small[i].rps,
               x->many[i].rps, x->bulk[i].mbps);
    double ratio = x->bulk[0].mbps > 0 ? x->bulk[1].mbps / x->bulk[0].mbps
                                       : 0;
    double added = median(x->added, g_rounds);
    printf("bulk through the proxy: %.0f %% of direct (target >= 80 %%); "
           "added p50: %.3f ms, the median of %d alternating rounds "
           "(target <= 0.2 ms)\n", ratio * 100, added, g_rounds);
    printf("{\"bench\":\"proxy\",\"seconds\":%d,\"rounds\":%d,"
           "\"added_p50_rounds_ms\":[", g_secs, g_rounds);
    for (int i = 0; i < g_rounds; i++)
        printf("%s%.3f", i ? "," : "", x->added[i]);
    if (getenv("SKV_BENCH_PROXY_B")) {
        printf("],\"proxy_b\":{\"added_p50_ms\":%.3f,"
               "\"added_p50_rounds_ms\":[", median(x->added_b, g_rounds));
        for (int i = 0; i < g_rounds; i++)
            printf("%s%.3f", i ? "," : "", x->added_b[i]);
        printf("]}");
    } else {
        printf("]");
    }
    printf(",\"direct\":{\"p50_ms\":%.3f,"
           "\"p99_ms\":%.3f,\"rps_1\":%.0f,\"rps_16\":%.0f,\"bulk_mbps\":"
           "%.1f},\"proxy\":{\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"rps_1\":%.0f,"
           "\"rps_16\":%.0f,\"bulk_mbps\":%.1f},\"bulk_ratio\":%.3f,"
           "\"added_p50_ms\":%.3f,\"bulk_target_met\":%s,"
           "\"latency_target_met\":%s}\n", x->small[0].p50_ms,
           x->small[0].p99_ms, x->small[0].rps, x->many[0].rps,
           x->bulk[0].mbps, x->small[1].p50_ms, x->small[1].p99_ms,
           x->small[1].rps, x->many[1].rps, x->bulk[1].mbps, ratio, added,
           ratio >= 0.8 ? "true" : "false", added <= 0.2 ? "true" : "false");
}

static int bench(void)
{
    skv_client *cl = NULL;
    char sid[E2E_ID_MAX], tok[1024];
    unsigned hp = 0;
    pair x;
    memset(&x, 0, sizeof x);
    int rc = start();
    if (!rc)
        rc = e2e_connect(&g, &cl, NULL, NULL) ||
             e2e_wait_agents(&g, cl, 1) || session(cl, sid, &hp) ||
             token(cl, sid, tok, sizeof tok);
    /* the file is written before httpd starts: wait for it to answer */
    char probe[512];
    snprintf(probe, sizeof probe, "for i in $(seq 100); do nsenter "
             "--net=/run/netns/%s busybox wget -q -O /dev/null "
             "http://127.0.0.1:%u/"
             "small 2>/dev/null && exit 0; sleep 0.2; done; exit 1", g_ns, hp);
    if (!rc && (sh(probe) || measure(sid, hp, tok, &x)))
        rc = -1;
    if (!rc)
        report(&x);
    else
        fprintf(stderr, "proxy: FAILED: %s\n", g.why);
    skv_client_free(cl);
    e2e_stop(&g);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    char bin[PATH_MAX], self[PATH_MAX], build[PATH_MAX + 8], cmd[128];
    if ((argc > 1 && (g_secs = atoi(argv[1])) <= 0) ||
        (argc > 2 && ((g_rounds = atoi(argv[2])) <= 0 ||
                      g_rounds > ROUNDS_MAX)) || argc > 3)
        return fprintf(stderr, "usage: proxy [SECONDS [ROUNDS]] (ROUNDS "
                       "1..%d)\n", ROUNDS_MAX), 2;
    if (geteuid() != 0)
        return skipped("needs root (the agent runs containers)");
    if (access("/usr/bin/wrk", X_OK) || access("/usr/bin/nsenter", X_OK))
        return skipped("needs wrk (Debian package wrk) and nsenter");
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(build, sizeof build, "%s/..", dirname(self));
    if (access("/bin/busybox", X_OK) || e2e_find_bin(bin, sizeof bin, build))
        return skipped("needs /bin/busybox and the daemons (make progs)");
    if (e2e_init(&g, bin))
        return skipped("cannot prepare the scratch directory");
    snprintf(g_ns, sizeof g_ns, "skvB%ld", (long)getpid() % 100000);
    snprintf(cmd, sizeof cmd, "ip netns add %s && ip -n %s link set lo up",
             g_ns, g_ns);
    if (sh(cmd))
        return skipped("cannot create a network namespace");
    int rc = bench();
    snprintf(cmd, sizeof cmd, "ip netns del %s", g_ns);
    if (sh(cmd))
        fprintf(stderr, "proxy: could not remove netns %s\n", g_ns);
    return rc;
}
