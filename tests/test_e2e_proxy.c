/* End-to-end: the app proxy (daemons/sokovan-proxy) in front of sessions
 * that declare services, with real sokovan-manager, sokovan-agent and
 * sokovan-proxy processes. busybox httpd reached through the proxy (the
 * token -> HttpOnly cookie exchange, Bearer tokens, keep-alive, a large
 * download checked by sha256), no token / a bad token / another user's
 * token refused, a WebSocket echo (python3-websockets in the container,
 * python3-websocket as the client), `sokovan app`'s TCP tunnel, and a
 * proxy killed with -9 and restarted while the session keeps running.
 *
 * The agent and the proxy run in a network namespace of the test's own
 * (setns, as the cluster-network test does): the session's bridge and
 * nftables rules are then out of reach of other tests on the host, and
 * published ports are reached on the namespace's loopback. The clients
 * (tests/proxy_client.py, the CLI) run there too (nsenter --net).
 *
 * Needs root, /bin/busybox, /usr/bin/python3 with the websocket and
 * websockets modules, nsenter, ip and openssl; otherwise each test says
 * why it is skipped. SKV_PROXY_BIG_MB sets the download's size (default
 * 1024). The restart case also runs a second proxy with a certificate
 * (HTTPS, verified by the client).
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>

#include "skv_test.h"
#include "e2e_cluster.h"

#define PX_LISTEN "127.0.0.1:18190"
#define PX_URL "http://" PX_LISTEN

static e2e_cluster g;
static const char *g_skip;
static char g_ns[32];
static pid_t g_proxy = -1;

static const char *why_skip(void)
{
    if (system("/usr/bin/python3 -c 'import websocket, websockets' "
               ">/dev/null 2>&1") != 0)
        return "needs /usr/bin/python3 with websocket (python3-websocket) "
               "and websockets (python3-websockets)";
    if (access("/usr/bin/nsenter", X_OK) || access("/usr/sbin/ip", X_OK) ||
        access("/usr/bin/openssl", X_OK))
        return "needs nsenter, ip and openssl";
    return e2e_prepare(&g, skv_test_build_dir());
}

static void px_setup(void)
{
    g.root[0] = '\0';
    g_proxy = -1;
    g_skip = why_skip();
    if (!g_skip && e2e_netns_add(g_ns, sizeof g_ns, "skvP") != 0)
        g_skip = "cannot create a network namespace";
}

static void px_teardown(void)
{
    /* the idle cases' clients, exec and tunnels, should a case have
     * failed */
    static const char *const bg[] = {"traffic", "exec", "wsloop", "wsping",
                                     "tick", "quiet", "quiet-src",
                                     "app-tick", "app-quiet"};
    for (size_t i = 0; g.root[0] && i < sizeof bg / sizeof bg[0]; i++) {
        char cmd[PATH_MAX + 96];
        snprintf(cmd, sizeof cmd, "[ -f %s/%s.pid ] && kill $(cat %s/%s.pid)"
                 " 2>/dev/null", g.root, bg[i], g.root, bg[i]);
        int rc = system(cmd);   /* non-zero: not started or gone */
        (void)rc;
    }
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
    e2e_netns_del(g_ns);
}

#define PX_REQUIRE()                                                           \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* The WebSocket echo server the image carries (python3-websockets). */
static const char ws_server[] =
    "import asyncio, websockets\n"
    "async def echo(ws, path=None):\n"
    "    async for m in ws:\n"
    "        await ws.send(m)\n"
    "async def main():\n"
    "    async with websockets.serve(echo, '0.0.0.0', 8765,\n"
    "                                max_size=None):\n"
    "        await asyncio.Future()\n"
    "asyncio.run(main())\n";

/* "pyweb": busybox with every applet, the host's python3 with its
 * libraries and the websockets package, and /srv/ws.py. */
static void make_image(void)
{
    char cmd[PATH_MAX * 4], rfs[PATH_MAX + 16], tarf[PATH_MAX + 16];
    snprintf(rfs, sizeof rfs, "%s/pyrfs", g.root);
    snprintf(tarf, sizeof tarf, "%s/pyweb.tar", g.root);
    snprintf(cmd, sizeof cmd,
             "set -e; R=%s; mkdir -p $R/bin $R/etc $R/tmp $R/proc $R/sys "
             "$R/dev $R/srv $R/www; chmod 1777 $R/tmp $R/www; cp /bin/busybox $R/bin/;"
             " for a in $(/bin/busybox --list); do [ $a = busybox ] || "
             "ln -sf busybox $R/bin/$a; "
             "done; tar -C / --exclude='*/test' --exclude='*/tests' "
             "--exclude=__pycache__ --exclude=idlelib --exclude=tkinter "
             "--exclude=ensurepip -cf - usr/lib/python3.11 usr/bin/python3.11 "
             "usr/lib/python3/dist-packages/websockets | tar -C $R -xf -; "
             "for l in $(ldd /usr/bin/python3.11 "
             "/usr/lib/python3.11/lib-dynload/*.so 2>/dev/null | "
             "grep -v ':$' | grep -o '/[^ ]*' | sort -u); do "
             "cp -L --parents $l $R/; done; tar -C $R -cf %s .",
             rfs, tarf);
    ck_assert_msg(system(cmd) == 0, "cannot build the pyweb rootfs");
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/srv/ws.py", rfs);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(ws_server, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "tar -C %s -cf %s .", rfs, tarf);
    ck_assert_msg(system(cmd) == 0, "cannot tar the pyweb rootfs");
    skv_image_store *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_image_store_open(&st, g.images, &e), &e);
    int rc = skv_image_import_tar(st, "pyweb", tarf, &e);
    skv_image_store_free(st);
    SKV_CK_OK(rc, &e);
}

static void start_agent(void)
{
    char exe[PATH_MAX + 32], state[PATH_MAX + 32], run[PATH_MAX + 48];
    char mgr[PATH_MAX + 16];
    snprintf(exe, sizeof exe, "%s/sokovan-agent", g.bin);
    snprintf(state, sizeof state, "%s/agent-a1", g.root);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    e2e_run_dir(&g, "a1", run, sizeof run);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(g.agent_cpus[0], sizeof g.agent_cpus[0], "0-%ld",
             n > 1 ? n - 1 : 0);
    char *const argv[] = {exe, "--agent-id", "a1", "--manager", mgr,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images,
                          "--cpus", g.agent_cpus[0], "--memory", "4g",
                          "--poll-interval-ms", "10", "--stats-interval-ms",
                          "1000", "--reconnect-max-ms", "500", NULL};
    g.agent[0] = e2e_spawn_ns(&g, g_ns, "a1", argv);
    ck_assert_int_gt(g.agent[0], 0);
    g.nagents = 1;
}

/* Start a sokovan-proxy called name in the namespace (HTTPS with a
 * certificate and key); wait for its "ready" line. */
static pid_t start_proxy_as(const char *name, const char *listen,
                            const char *cert, const char *key)
{
    char exe[PATH_MAX + 32], mgr[PATH_MAX + 16], log[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/sokovan-proxy", g.bin);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    snprintf(log, sizeof log, "%s/logs/%s.log", g.root, name);
    char *const argv[] = {exe, "--data-dir", g.data, "--manager", mgr,
                          "--listen", (char *)listen,
                          "--activity-report-ms", "500",
                          cert ? "--tls-cert" : NULL, (char *)cert,
                          "--tls-key", (char *)key, NULL};
    pid_t pid = e2e_spawn_ns(&g, g_ns, name, argv);
    ck_assert_int_gt(pid, 0);
    char cmd[PATH_MAX + 64], out[64];
    snprintf(cmd, sizeof cmd, "grep -c 'ready:' %s 2>/dev/null", log);
    for (int i = 0; i < 100; i++) {
        skv_test_sh_output(cmd, out, sizeof out);
        if (atoi(out) > 0)
            return pid;
        ck_assert_msg(e2e_alive(pid), "sokovan-proxy exited; see %s", log);
        e2e_sleep_ms(50);
    }
    ck_abort_msg("sokovan-proxy did not get ready; see %s", log);
    return -1;
}

static void start_proxy(void)
{
    g_proxy = start_proxy_as("proxy", PX_LISTEN, NULL, NULL);
}

static void cluster_up(skv_client **admin)
{
    make_image();
    E2E_OK(e2e_start_manager(&g, "a1"));
    start_agent();
    E2E_OK(e2e_connect(&g, admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, *admin, 1));
    start_proxy();
}

static void user_client(skv_client *admin, const char *name, skv_client **cl)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = (char *)name;
    u.user.role = "user";
    u.user.active = 1;
    skv_proto_admin_user_reply ur = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = (char *)name;
    k.keypair.active = 1;
    skv_proto_admin_keypair_reply kr = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e),
              &e);
    ck_assert_uint_eq(kr.n_keypairs, 1);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    snprintf(ak, sizeof ak, "%s", kr.keypairs[0].access_key);
    snprintf(sk, sizeof sk, "%s", kr.keypairs[0].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
    E2E_OK(e2e_connect(&g, cl, ak, sk));
}

/* A pyweb session running script, with the given services (each one's
 * port published). */
static void submit(skv_client *cl, char *sid, const char *script,
                   char **services, size_t n)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=0.5,mem=512m", NULL, &e), &e);
    char *cmd[] = {"sh", "-c", (char *)script};
    uint32_t ports[8];
    char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8];
    for (size_t i = 0; i < n; i++)
        SKV_CK_OK(skv_proto_service_parse(services[i], name, &ports[i], proto,
                                          &e), &e);
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.session_type = "interactive";
    s.cluster_mode = "single-node";
    s.cluster_size = 1;
    s.image = "pyweb";
    s.command = cmd;
    s.n_command = 3;
    s.kernels = &k;
    s.n_kernels = 1;
    s.ports = ports;
    s.n_ports = n;
    s.services = services;
    s.n_services = n;
    skv_proto_session_ref ref = {0};
    SKV_CK_OK(skv_client_submit(cl, &ref, &s, &e), &e);
    snprintf(sid, E2E_ID_MAX, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
    E2E_OK(e2e_wait_running(&g, cl, sid, 60000));
}

/* session.submit refuses bad service declarations, naming the problem,
 * and leaves no session behind. */
static void refused_submits(skv_client *cl)
{
    static char *bad[][2] = {
        {"web=8080/udp", "protocol must be http or tcp"},
        {"Web=8080", "NAME=PORT"},
        {"web=0", "PORT must be 1..65535"},
        {"web=9090/http", "not among the session's ports"},
        {"web=8080", "declared twice"},
    };
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=0.1,mem=16m", NULL, &e), &e);
    char *cmd[] = {"true"};
    uint32_t port = 8080;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *svc[] = {bad[i][0], "web=8080/http"};
        skv_proto_kernel_spec k = {"main", NULL, req};
        skv_proto_session_submit s = {0};
        s.image = "pyweb";
        s.command = cmd;
        s.n_command = 1;
        s.kernels = &k;
        s.n_kernels = 1;
        s.ports = &port;
        s.n_ports = 1;
        s.services = svc;
        s.n_services = i == 4 ? 2 : 1;
        skv_proto_session_ref ref = {0};
        int rc = skv_client_submit(cl, &ref, &s, &e);
        ck_assert_msg(rc == SKV_EINVAL && strstr(e.message, bad[i][1]),
                      "%s: %s %s", bad[i][0], skv_err_name(rc), e.message);
        skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    }
    skv_slots_free(req);
    skv_proto_session_list q = {0};
    skv_proto_session_list_reply lr = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, &lr, &e), &e);
    ck_assert_uint_eq(lr.total, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
}

/* app.token; returns the library's code, the token in tok. */
static int app_token(skv_client *cl, const char *sid, const char *svc,
                     char *tok, size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_app_token q = {(char *)sid, (char *)svc, 0};
    skv_proto_app_token_reply r;
    int rc = skv_client_call(cl, SKV_PROTO_APP_TOKEN, &q, &r, &e);
    if (!rc) {
        char want[128];
        snprintf(want, sizeof want, "/s/%s/%s/", sid, svc);
        ck_assert_str_eq(r.path, want);
        snprintf(tok, cap, "%s", r.token);
        skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
    }
    return rc;
}

/* What a command run in the namespace prints (stdout and stderr); the
 * command line is the shell's (popen). */
static void in_ns(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void in_ns(char *out, size_t cap, const char *fmt, ...)
{
    char inner[4096], cmd[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inner, sizeof inner, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "nsenter --net=/run/netns/%s %s 2>&1", g_ns,
             inner);
    skv_test_sh_output(cmd, out, cap);
}

static void client(char *out, size_t cap, const char *args)
{
    char src[PATH_MAX];
    const char *s = getenv("SKV_TEST_SRC_DIR");
    snprintf(src, sizeof src, "%s/tests/proxy_client.py", s ? s : ".");
    in_ns(out, cap, "/usr/bin/python3 %s %s", src, args);
}

/* GET through the proxy until the answer starts with want (the service
 * may take a moment to listen); the last answer in out. */
static bool get_until(char *out, size_t cap, const char *sid, const char *svc,
                      const char *path, const char *tok, const char *want)
{
    char args[2048];
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/%s/%s %s", sid, svc,
             path, tok);
    for (int i = 0; i < 600; i++) {
        client(out, cap, args);
        if (!strncmp(out, want, strlen(want)))
            return true;
        e2e_sleep_ms(100);
    }
    return false;
}

static const char *session_status(skv_client *cl, const char *sid, char *buf,
                                  size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply r = {0};
    SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
    snprintf(buf, cap, "%s", r.session.status);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    return buf;
}

/* The peak of a process's anonymous memory (RssAnon), sampled every
 * 20 ms while a download runs: h2o 2.2 reads the upstream as fast as it
 * comes and spills what the client has not taken yet beyond 32 MiB into an
 * unlinked temporary file (mapped, so VmHWM counts it); the process's own
 * memory is what must stay small. */
typedef struct sampler {
    pthread_t th;
    pid_t pid;
    volatile int stop;
    long peak_kb;
} sampler;

static long rss_anon_kb(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "r");
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "RssAnon:", 8))
            kb = atol(line + 8);
    if (f)
        fclose(f);
    return kb;
}

static void *sample(void *arg)
{
    sampler *s = arg;
    while (!s->stop) {
        long kb = rss_anon_kb(s->pid);
        if (kb > s->peak_kb)
            s->peak_kb = kb;
        e2e_sleep_ms(20);
    }
    return NULL;
}

static int big_mb(void)
{
    const char *v = getenv("SKV_PROXY_BIG_MB");
    int mb = v ? atoi(v) : 1024;
    return mb > 0 ? mb : 1024;
}

/* busybox httpd through the proxy: cookie exchange, Bearer, keep-alive,
 * refusals, show's services, and a large download checked by sha256. */
START_TEST(test_e2e_proxy_http)
{
    PX_REQUIRE();
    skv_client *admin = NULL, *alice = NULL, *bob = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(&admin);
    user_client(admin, "alice", &alice);
    user_client(admin, "bob", &bob);
    char script[512], sid[E2E_ID_MAX], bsid[E2E_ID_MAX];
    snprintf(script, sizeof script, "echo hello-from-httpd > /www/index.html"
             " && httpd -p 8080 -h /www && dd if=/dev/urandom of=/www/big "
             "bs=1M count=%d 2>/dev/null && sha256sum /www/big > /www/t && "
             "mv /www/t /www/big.sha; exec sleep 100000", big_mb());
    char *svcs[] = {"web=8080/http"};
    refused_submits(alice);
    submit(alice, sid, script, svcs, 1);
    /* show lists the service */
    skv_proto_session_show_reply r = {0};
    SKV_CK_OK(skv_client_show(alice, &r, sid, &e), &e);
    ck_assert_uint_eq(r.session.n_services, 1);
    ck_assert_str_eq(r.session.services[0], "web=8080/http");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);

    char tok[1024], out[8192], args[4096];
    ck_assert_int_eq(app_token(alice, sid, "nope", tok, sizeof tok),
                     SKV_ENOENT);
    skv_proto_app_token q = {sid, "web", 8 * 24 * 3600};
    skv_proto_app_token_reply tr;
    ck_assert_int_eq(skv_client_call(alice, SKV_PROTO_APP_TOKEN, &q, &tr, &e),
                     SKV_EINVAL);
    /* app.resolve is the proxy's (an admin key), not a user's */
    skv_proto_app_resolve rq = {sid, "web", "1.2.alice"};
    skv_proto_app_resolve_reply rr;
    ck_assert_int_eq(skv_client_call(alice, SKV_PROTO_APP_RESOLVE, &rq, &rr,
                                     &e), SKV_EPERM);
    SKV_CK_OK(app_token(alice, sid, "web", tok, sizeof tok), &e);
    ck_assert_msg(get_until(out, sizeof out, sid, "web", "", tok,
                            "200 hello-from-httpd"), "%s", out);
    /* no token; a forged one; a token of the right shape for another
     * service of the session */
    client(out, sizeof out, "get " PX_URL "/s/x/web/ -");
    ck_assert_msg(!strncmp(out, "401 ", 4), "no token: %s", out);
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/web/ -", sid);
    client(out, sizeof out, args);
    ck_assert_msg(!strncmp(out, "401 ", 4), "no token: %s", out);
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/web/ 99999999999999."
             "%064d.alice", sid, 0);
    client(out, sizeof out, args);
    ck_assert_msg(!strncmp(out, "403 ", 4), "forged token: %s", out);
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/other/ %s", sid, tok);
    client(out, sizeof out, args);
    ck_assert_msg(!strncmp(out, "404 ", 4), "undeclared service: %s", out);
    /* the token in the URL becomes an HttpOnly cookie */
    snprintf(args, sizeof args, "cookie " PX_URL "/s/%s/web/"
             "?sokovan_token=%s", sid, tok);
    client(out, sizeof out, args);
    ck_assert_msg(strstr(out, "cookies=sokovan_app\n") &&
                  strstr(out, "httponly=True\n") &&
                  strstr(out, "second=hello-from-httpd\n"), "%s", out);
    /* keep-alive: three requests on one connection */
    snprintf(args, sizeof args, "keepalive 127.0.0.1 18190 /s/%s/web/ %s 3",
             sid, tok);
    client(out, sizeof out, args);
    ck_assert_msg(strstr(out, "connections=1") &&
                  !strncmp(out, "200 hello-from-httpd\n200 hello-from-httpd\n"
                           "200 hello-from-httpd\n", 63), "%s", out);
    /* another user: no token for alice's session, and bob's own token
     * for his session does not open alice's */
    char btok[1024];
    int rc = app_token(bob, sid, "web", btok, sizeof btok);
    ck_assert_msg(rc == SKV_EPERM || rc == SKV_ENOENT, "bob got a token for "
                  "alice's session: %s", skv_err_name(rc));
    rc = app_token(admin, sid, "web", btok, sizeof btok);
    ck_assert_msg(rc == SKV_EPERM, "admin got alice's token: %s",
                  skv_err_name(rc));
    submit(bob, bsid, "echo bob > /www/index.html && exec httpd -f -p 8080 "
           "-h /www", svcs, 1);
    SKV_CK_OK(app_token(bob, bsid, "web", btok, sizeof btok), &e);
    ck_assert_msg(get_until(out, sizeof out, bsid, "web", "", btok, "200 bob"),
                  "%s", out);
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/web/ %s", sid, btok);
    client(out, sizeof out, args);
    ck_assert_msg(!strncmp(out, "403 ", 4), "bob's token on alice's app: %s",
                  out);
    /* a large download, streamed, checked against the container's own
     * sha256sum */
    ck_assert_msg(get_until(out, sizeof out, sid, "web", "big.sha", tok,
                            "200 "), "%s", out);
    char want[80];
    snprintf(want, sizeof want, "%.64s %lld\n", out + 4,
             (long long)big_mb() * 1024 * 1024);
    int64_t t0 = e2e_now_ms();
    snprintf(args, sizeof args, "sha " PX_URL "/s/%s/web/big %s", sid, tok);
    sampler sm = {.pid = g_proxy, .peak_kb = -1};
    ck_assert_int_eq(pthread_create(&sm.th, NULL, sample, &sm), 0);
    client(out, sizeof out, args);
    sm.stop = 1;
    pthread_join(sm.th, NULL);
    ck_assert_str_eq(out, want);
    fprintf(stderr, "e2e_proxy: %d MB through the proxy in %lld ms, proxy "
            "peak anonymous memory %ld KiB\n", big_mb(),
            (long long)(e2e_now_ms() - t0), sm.peak_kb);
    /* streamed: the proxy never held the body (nor a large part of it) in
     * its memory; under ASan freed memory waits in a 256 MiB quarantine */
#ifdef __SANITIZE_ADDRESS__
    const long cap = 640 * 1024;
#else
    const long cap = 96 * 1024;
#endif
    ck_assert_msg(sm.peak_kb > 0 && sm.peak_kb < cap,
                  "proxy peak anonymous memory %ld KiB", sm.peak_kb);
    skv_client_free(bob);
    skv_client_free(alice);
    skv_client_free(admin);
    kill(g_proxy, SIGTERM);
    e2e_stop(&g);
}
END_TEST

/* A WebSocket echo through the proxy, and `sokovan app`'s TCP tunnel. */
START_TEST(test_e2e_proxy_ws_tunnel)
{
    PX_REQUIRE();
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(&admin);
    char sid[E2E_ID_MAX], tok[1024], out[8192], args[4096];
    char *svcs[] = {"ws=8765/http", "echo=7000/tcp"};
    submit(admin, sid, "nc -ll -p 7000 -e cat & "
           "exec /usr/bin/python3.11 /srv/ws.py", svcs, 2);
    SKV_CK_OK(app_token(admin, sid, "ws", tok, sizeof tok), &e);
    snprintf(args, sizeof args, "ws ws://" PX_LISTEN "/s/%s/ws/ %s", sid,
             tok);
    for (int i = 0; i < 300; i++) {
        client(out, sizeof out, args);
        if (strstr(out, "echo 5 True"))
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(!strcmp(out, "echo 5 True\necho 200000 True\n"
                               "echo 3 True\n"), "%s", out);
    snprintf(args, sizeof args, "ws ws://" PX_LISTEN "/s/%s/ws/ 1.%064d.x",
             sid, 0);
    client(out, sizeof out, args);
    ck_assert_msg(strstr(out, "403") && !strstr(out, "echo"),
                  "a bad token opened the WebSocket: %s", out);
    /* a tcp service is not served as HTTP */
    char etok[1024];
    SKV_CK_OK(app_token(admin, sid, "echo", etok, sizeof etok), &e);
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/echo/ %s", sid, etok);
    client(out, sizeof out, args);
    ck_assert_msg(!strncmp(out, "400 ", 4), "%s", out);
    /* sokovan app: a local listener tunnelled to the tcp service */
    char app[PATH_MAX * 2];
    snprintf(app, sizeof app, "sh -c 'SOKOVAN_ENDPOINT=unix:%s "
             "SOKOVAN_KEY_FILE=%s/admin.key SOKOVAN_PROXY_URL=" PX_URL " "
             "%s/sokovan app %s echo --bind 127.0.0.1:18191 > %s/app.out 2>&1 "
             "& echo $! > %s/app.pid'", g.sock, g.data, g.bin, sid, g.root,
             g.root);
    in_ns(out, sizeof out, "%s", app);
    for (int i = 0; i < 100; i++) {
        in_ns(out, sizeof out, "sh -c '(echo through-the-tunnel; sleep 1) "
              "| busybox nc -w 3 127.0.0.1 18191'");
        if (strstr(out, "through-the-tunnel"))
            break;
        e2e_sleep_ms(100);
    }
    char cmd[PATH_MAX + 64], log[512];
    snprintf(cmd, sizeof cmd, "kill $(cat %s/app.pid); cat %s/app.out",
             g.root, g.root);
    skv_test_sh_output(cmd, log, sizeof log);
    ck_assert_msg(!strcmp(out, "through-the-tunnel\n"), "tunnel: '%s' (app: "
                  "%s)", out, log);
    ck_assert_msg(strstr(log, "listening on 127.0.0.1:18191"), "%s", log);
    skv_client_free(admin);
    kill(g_proxy, SIGTERM);
    e2e_stop(&g);
}
END_TEST

/* A second proxy with a certificate and key serves HTTPS (verified by
 * the client against that certificate); plain HTTP to it fails. */
static void tls_proxy(const char *sid, const char *tok)
{
    char cert[PATH_MAX + 16], key[PATH_MAX + 16], cmd[PATH_MAX * 3];
    char out[4096], args[2048];
    snprintf(cert, sizeof cert, "%s/tls-cert.pem", g.root);
    snprintf(key, sizeof key, "%s/tls-key.pem", g.root);
    snprintf(cmd, sizeof cmd, "openssl req -x509 -newkey ec -pkeyopt "
             "ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 -addext "
             "subjectAltName=IP:127.0.0.1 -days 1 -keyout %s -out %s "
             ">/dev/null 2>&1", key, cert);
    ck_assert_msg(system(cmd) == 0, "openssl req failed");
    pid_t tls = start_proxy_as("proxy-tls", "127.0.0.1:18192", cert, key);
    setenv("SKV_PROXY_CA", cert, 1);
    snprintf(args, sizeof args, "get https://127.0.0.1:18192/s/%s/web/ %s",
             sid, tok);
    client(out, sizeof out, args);
    unsetenv("SKV_PROXY_CA");
    ck_assert_msg(!strncmp(out, "200 still-here", 14), "https: %s", out);
    snprintf(args, sizeof args, "get http://127.0.0.1:18192/s/%s/web/ %s",
             sid, tok);
    client(out, sizeof out, args);
    ck_assert_msg(strncmp(out, "200 ", 4), "plain HTTP to the TLS proxy "
                  "answered: %s", out);
    /* sokovan app over HTTPS: verified against the certificate; the
     * system's CAs do not know it, so that tunnel is refused */
    for (int trusted = 1; trusted >= 0; trusted--) {
        char app[PATH_MAX * 3], log[1024];
        snprintf(app, sizeof app, "sh -c 'SOKOVAN_ENDPOINT=unix:%s "
                 "SOKOVAN_KEY_FILE=%s/admin.key SOKOVAN_PROXY_URL=https://"
                 "127.0.0.1:18192 SOKOVAN_PROXY_CA=%s %s/sokovan app %s echo "
                 "--bind 127.0.0.1:18193 > %s/tls-app.out 2>&1 & echo $! > "
                 "%s/tls-app.pid'", g.sock, g.data,
                 trusted ? cert : "/etc/ssl/certs/ca-certificates.crt",
                 g.bin, sid, g.root, g.root);
        in_ns(out, sizeof out, "%s", app);
        for (int i = 0; i < 50; i++) {
            in_ns(out, sizeof out, "sh -c '(echo via-tls; sleep 1) | "
                  "busybox nc -w 3 127.0.0.1 18193'");
            if (!strstr(out, "refused"))   /* the listener is up */
                break;
            e2e_sleep_ms(100);
        }
        snprintf(cmd, sizeof cmd, "kill $(cat %s/tls-app.pid); sleep 0.2; "
                 "cat %s/tls-app.out", g.root, g.root);
        skv_test_sh_output(cmd, log, sizeof log);
        if (trusted)
            ck_assert_msg(!strcmp(out, "via-tls\n"), "%s / %s", out, log);
        else
            ck_assert_msg(!strstr(out, "via-tls") &&
                          strstr(log, "cannot reach the proxy"), "%s / %s",
                          out, log);
    }
    e2e_kill(&g, &tls, SIGTERM, "proxy-tls");
}

/* The proxy killed with -9 and restarted: the session runs on, and the
 * same token reaches it again (the proxy keeps no state). */
START_TEST(test_e2e_proxy_restart)
{
    PX_REQUIRE();
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(&admin);
    char sid[E2E_ID_MAX], tok[1024], out[4096], st[32];
    char *svcs[] = {"web=8080/http", "echo=7000/tcp"};
    submit(admin, sid, "nc -ll -p 7000 -e cat & echo still-here > "
           "/www/index.html && exec httpd -f -p 8080 -h /www", svcs, 2);
    SKV_CK_OK(app_token(admin, sid, "web", tok, sizeof tok), &e);
    ck_assert_msg(get_until(out, sizeof out, sid, "web", "", tok,
                            "200 still-here"), "%s", out);
    e2e_kill(&g, &g_proxy, SIGKILL, "proxy");
    char args[2048];
    snprintf(args, sizeof args, "get " PX_URL "/s/%s/web/ %s", sid, tok);
    client(out, sizeof out, args);
    ck_assert_msg(strstr(out, "Connection refused"), "proxy down: %s", out);
    e2e_sleep_ms(1500);
    ck_assert_str_eq(session_status(admin, sid, st, sizeof st), "RUNNING");
    start_proxy();
    ck_assert_msg(get_until(out, sizeof out, sid, "web", "", tok,
                            "200 still-here"), "after the restart: %s", out);
    ck_assert_str_eq(session_status(admin, sid, st, sizeof st), "RUNNING");
    tls_proxy(sid, tok);
    skv_client_free(admin);
    kill(g_proxy, SIGTERM);
    e2e_stop(&g);
}
END_TEST

/* ---- idle and lifetime limits ----------------------------------------------- */

/* `sokovan admin group ARGS` (the CLI, as admin); its exit status, the
 * output in out. */
static int admin_group(char *out, size_t cap, const char *args)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE="
             "%s/admin.key %s/sokovan admin group %s 2>&1; echo rc=$?",
             g.sock, g.data, g.bin, args);
    skv_test_sh_output(cmd, out, cap);
    const char *rc = strstr(out, "rc=");
    return rc ? atoi(rc + 3) : -1;
}

/* Wait (60 s at most) until sid is no longer RUNNING; its status and
 * reason in st / why. */
static void wait_ended(skv_client *cl, const char *sid, char *st, size_t cap,
                       char *why, size_t wcap)
{
    skv_error e = SKV_ERROR_INIT;
    for (int64_t end = e2e_now_ms() + 60000; e2e_now_ms() < end;) {
        skv_proto_session_show_reply r = {0};
        SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
        snprintf(st, cap, "%s", r.session.status);
        snprintf(why, wcap, "%s", r.session.status_reason
                                      ? r.session.status_reason : "");
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (strcmp(st, "RUNNING"))
            return;
        e2e_sleep_ms(200);
    }
    ck_abort_msg("session %s still RUNNING after 60 s", sid);
}

static void expect_ended(skv_client *cl, const char *sid, const char *want,
                         const char *want2)
{
    char st[32], why[512];
    wait_ended(cl, sid, st, sizeof st, why, sizeof why);
    ck_assert_msg(!strcmp(st, "TERMINATING") || !strcmp(st, "TERMINATED"),
                  "%s: %s (%s)", sid, st, why);
    ck_assert_msg(strstr(why, want) && strstr(why, want2), "%s: reason '%s' "
                  "lacks '%s' / '%s'", sid, why, want, want2);
}

/* A background command in the namespace (ns) or here; its pid in
 * root/name.pid, its output in root/name.out. */
static void background(bool ns, const char *name, const char *cmd)
{
    char sh[8192], out[256];
    /* nothing of it on in_ns's pipe: a shell's saved descriptors, kept
     * by a pipeline's first command, would hold that open for good */
    snprintf(sh, sizeof sh, "sh -c '%s > %s/%s.out 2>&1 & echo $! > "
             "%s/%s.pid' </dev/null >/dev/null 2>&1", cmd, g.root, name,
             g.root, name);
    if (ns) {
        in_ns(out, sizeof out, "%s", sh);
    } else {
        ck_assert_int_eq(system(sh), 0);
    }
}

static void background_kill(const char *name)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "kill $(cat %s/%s.pid)", g.root, name);
    ck_assert_int_eq(system(cmd), 0);
}

static bool file_has(const char *name, const char *want)
{
    char path[PATH_MAX + 32], buf[4096] = "";
    snprintf(path, sizeof path, "%s/%s.out", g.root, name);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
    return strstr(buf, want) != NULL;
}

/* idle_timeout of a resource group through the daemons: a quiet session
 * is terminated; one served through sokovan-proxy, one with an exec open
 * and one whose kernel is busy are not, and the first two go once their
 * traffic and exec end; then the group's max_lifetime ends the busy one
 * and a new one. sokovan show prints why. */
START_TEST(test_e2e_proxy_idle)
{
    PX_REQUIRE();
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(&admin);
    char quiet[E2E_ID_MAX], web[E2E_ID_MAX], ex[E2E_ID_MAX], busy[E2E_ID_MAX];
    char tok[1024], out[8192], cmd[PATH_MAX * 4], src[PATH_MAX];
    char *svcs[] = {"web=8080/http"};
    submit(admin, quiet, "exec sleep 100000", NULL, 0);
    submit(admin, web, "echo served > /www/index.html && exec httpd -f -p "
           "8080 -h /www", svcs, 1);
    submit(admin, ex, "exec sleep 100000", NULL, 0);
    submit(admin, busy, "while :; do :; done", NULL, 0);
    /* traffic through the proxy, every 300 ms */
    SKV_CK_OK(app_token(admin, web, "web", tok, sizeof tok), &e);
    ck_assert_msg(get_until(out, sizeof out, web, "web", "", tok,
                            "200 served"), "%s", out);
    const char *s = getenv("SKV_TEST_SRC_DIR");
    snprintf(src, sizeof src, "%s/tests/proxy_client.py", s ? s : ".");
    snprintf(cmd, sizeof cmd, "while :; do /usr/bin/python3 %s get " PX_URL
             "/s/%s/web/ %s; sleep 0.3; done", src, web, tok);
    background(true, "traffic", cmd);
    /* an exec that stays open */
    snprintf(cmd, sizeof cmd, "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE="
             "%s/admin.key exec %s/sokovan exec %s -- sh -c \"echo "
             "exec-ready; exec sleep 100000\"", g.sock, g.data, g.bin, ex);
    background(false, "exec", cmd);
    for (int i = 0; i < 600 && !(file_has("exec", "exec-ready") &&
                                 file_has("traffic", "200 served")); i++)
        e2e_sleep_ms(100);
    ck_assert_msg(file_has("exec", "exec-ready"), "the exec did not start");
    ck_assert_msg(file_has("traffic", "200 served"), "no proxy traffic");

    ck_assert_msg(admin_group(out, sizeof out, "update default "
                              "--idle-timeout soon") != 0 &&
                  strstr(out, "--idle-timeout"), "%s", out);
    ck_assert_msg(admin_group(out, sizeof out, "update default "
                              "--idle-timeout 5s") == 0, "%s", out);
    ck_assert_msg(admin_group(out, sizeof out, "list default --json") == 0 &&
                  strstr(out, "\"idle_timeout_ms\":5000") &&
                  strstr(out, "\"max_lifetime_ms\":0"), "%s", out);
    expect_ended(admin, quiet, "idle for", "resource group 'default' "
                 "idle_timeout");
    /* a whole idle_timeout (and then some) later the others still run */
    for (int64_t end = e2e_now_ms() + 7000; e2e_now_ms() < end;) {
        char st[32];
        ck_assert_str_eq(session_status(admin, web, st, sizeof st),
                         "RUNNING");
        ck_assert_str_eq(session_status(admin, ex, st, sizeof st),
                         "RUNNING");
        ck_assert_str_eq(session_status(admin, busy, st, sizeof st),
                         "RUNNING");
        e2e_sleep_ms(500);
    }
    /* sokovan show says why */
    snprintf(cmd, sizeof cmd, "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE="
             "%s/admin.key %s/sokovan show %s 2>&1", g.sock, g.data, g.bin,
             quiet);
    skv_test_sh_output(cmd, out, sizeof out);
    ck_assert_msg(strstr(out, "idle for") && strstr(out, "idle_timeout"),
                  "show: %s", out);
    /* traffic and exec end: both go idle */
    background_kill("traffic");
    background_kill("exec");
    expect_ended(admin, web, "idle for", "no app proxy traffic");
    expect_ended(admin, ex, "idle for", "idle_timeout");
    char st[32];
    ck_assert_str_eq(session_status(admin, busy, st, sizeof st), "RUNNING");

    /* the group's max_lifetime: the busy session (running longer than
     * that) and a new one */
    ck_assert_msg(admin_group(out, sizeof out, "update default "
                              "--idle-timeout 0 --max-lifetime 4s") == 0,
                  "%s", out);
    expect_ended(admin, busy, "maximum lifetime reached", "resource group "
                 "'default' max_lifetime");
    char life[E2E_ID_MAX];
    submit(admin, life, "exec sleep 100000", NULL, 0);
    int64_t t0 = e2e_now_ms();
    expect_ended(admin, life, "maximum lifetime reached", "running for 4s");
    ck_assert_int_ge(e2e_now_ms() - t0, 3000);
    skv_client_free(admin);
    kill(g_proxy, SIGTERM);
    e2e_stop(&g);
}
END_TEST

/* Lines in root/name.out. */
static int lines_of(const char *name)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s.out", g.root, name);
    FILE *f = fopen(path, "r");
    int n = 0, c;
    while (f && (c = fgetc(f)) != EOF)
        n += c == '\n';
    if (f)
        fclose(f);
    return n;
}

/* `sokovan app SID echo` on 127.0.0.1:port in the namespace (background
 * "app-<name>"), then the client cmd through it (background name) once a
 * probe line comes back through the tunnel. */
static void tunnel_client(const char *sid, int port, const char *name,
                          const char *cmd)
{
    char sh[PATH_MAX * 3], bg[32], out[512];
    snprintf(sh, sizeof sh, "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE="
             "%s/admin.key SOKOVAN_PROXY_URL=" PX_URL " exec %s/sokovan app "
             "%s echo --bind 127.0.0.1:%d", g.sock, g.data, g.bin, sid, port);
    snprintf(bg, sizeof bg, "app-%s", name);
    background(true, bg, sh);
    for (int i = 0; i < 300; i++) {
        in_ns(out, sizeof out, "sh -c '(echo probe; sleep 1) | busybox nc "
              "-w 3 127.0.0.1 %d'", port);
        if (strstr(out, "probe"))
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(strstr(out, "probe"), "tunnel on %d: %s", port, out);
    snprintf(sh, sizeof sh, "%s 2>/dev/null | exec busybox nc 127.0.0.1 %d",
             cmd, port);
    background(true, name, sh);
}

/* idle_timeout and long-lived streams: a WebSocket and a `sokovan app`
 * tunnel carrying a few hundred bytes a second (and nothing else: no new
 * request) keep their sessions for well over an idle_timeout; a tunnel
 * open but silent, and a WebSocket carrying only pings (a forgotten tab),
 * do not; once the busy streams end their sessions go too. */
START_TEST(test_e2e_proxy_idle_streams)
{
    PX_REQUIRE();
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    cluster_up(&admin);
    char wss[E2E_ID_MAX], pinged[E2E_ID_MAX], tun[E2E_ID_MAX];
    char silent[E2E_ID_MAX], tok[1024], ptok[1024], out[8192];
    char cmd[PATH_MAX * 4], src[PATH_MAX], tick[400];
    char *ws_svc[] = {"ws=8765/http"}, *tcp_svc[] = {"echo=7000/tcp"};
    submit(admin, wss, "exec /usr/bin/python3.11 /srv/ws.py", ws_svc, 1);
    submit(admin, pinged, "exec /usr/bin/python3.11 /srv/ws.py", ws_svc, 1);
    submit(admin, tun, "exec nc -ll -p 7000 -e cat", tcp_svc, 1);
    submit(admin, silent, "exec nc -ll -p 7000 -e cat", tcp_svc, 1);
    SKV_CK_OK(app_token(admin, wss, "ws", tok, sizeof tok), &e);
    SKV_CK_OK(app_token(admin, pinged, "ws", ptok, sizeof ptok), &e);
    const char *s = getenv("SKV_TEST_SRC_DIR");
    snprintf(src, sizeof src, "%s/tests/proxy_client.py", s ? s : ".");
    /* the WebSocket servers listen (a one-off echo through the proxy) */
    const char *ids[] = {wss, pinged}, *toks[] = {tok, ptok};
    for (int k = 0; k < 2; k++) {
        char args[2048];
        snprintf(args, sizeof args, "ws ws://" PX_LISTEN "/s/%s/ws/ %s",
                 ids[k], toks[k]);
        for (int i = 0; i < 300; i++) {
            client(out, sizeof out, args);
            if (strstr(out, "echo 5 True"))
                break;
            e2e_sleep_ms(100);
        }
        ck_assert_msg(strstr(out, "echo 5 True"), "%s", out);
    }
    snprintf(cmd, sizeof cmd, "exec /usr/bin/python3 %s wsloop ws://"
             PX_LISTEN "/s/%s/ws/ %s 300", src, wss, tok);
    background(true, "wsloop", cmd);
    snprintf(cmd, sizeof cmd, "exec /usr/bin/python3 %s wsping ws://"
             PX_LISTEN "/s/%s/ws/ %s", src, pinged, ptok);
    background(true, "wsping", cmd);
    memset(tick, 't', 300);
    tick[300] = '\0';
    snprintf(cmd, sizeof cmd, "while :; do echo %s; sleep 1; done", tick);
    tunnel_client(tun, 18194, "tick", cmd);
    /* one line, then silence (the sleep's pid for the teardown) */
    snprintf(cmd, sizeof cmd, "sh -c \"echo hello; echo \\$\\$ > "
             "%s/quiet-src.pid; exec sleep 100000\"", g.root);
    tunnel_client(silent, 18195, "quiet", cmd);
    for (int i = 0; i < 600 && !(file_has("quiet", "hello") &&
                                 file_has("wsping", "echo open") &&
                                 lines_of("tick") > 0 &&
                                 lines_of("wsloop") > 0); i++)
        e2e_sleep_ms(100);
    ck_assert_msg(file_has("quiet", "hello"), "the silent tunnel is not up");
    ck_assert_msg(file_has("wsping", "echo open"), "no pinged WebSocket");
    ck_assert_msg(lines_of("tick") > 0, "no bytes through the tunnel");
    ck_assert_msg(lines_of("wsloop") > 0, "no bytes over the WebSocket");

    ck_assert_msg(admin_group(out, sizeof out, "update default "
                              "--idle-timeout 5s") == 0, "%s", out);
    int64_t t0 = e2e_now_ms();
    int ws0 = lines_of("wsloop"), tick0 = lines_of("tick");
    /* the silent tunnel and the pinged WebSocket go while both are open;
     * the streams carrying bytes keep their sessions for a whole
     * idle_timeout and more after that */
    expect_ended(admin, silent, "idle for", "no app proxy traffic");
    expect_ended(admin, pinged, "idle for", "no app proxy traffic");
    for (int64_t end = e2e_now_ms() + 8000; e2e_now_ms() < end;) {
        char st[32];
        ck_assert_str_eq(session_status(admin, wss, st, sizeof st),
                         "RUNNING");
        ck_assert_str_eq(session_status(admin, tun, st, sizeof st),
                         "RUNNING");
        e2e_sleep_ms(500);
    }
    /* ... and bytes did flow all along, without a new request */
    int64_t secs = (e2e_now_ms() - t0) / 1000;
    ck_assert_msg(lines_of("wsloop") - ws0 >= secs / 2 &&
                  lines_of("tick") - tick0 >= secs / 2, "in %lld s: %d "
                  "WebSocket echoes, %d tunnel lines", (long long)secs,
                  lines_of("wsloop") - ws0, lines_of("tick") - tick0);
    char log[PATH_MAX + 64];
    snprintf(log, sizeof log, "grep -c 'TCP byte counters' %s/logs/proxy.log",
             g.root);
    skv_test_sh_output(log, out, sizeof out);
    ck_assert_msg(atoi(out) == 0, "the proxy could not measure streams");
    /* the streams end: so do their sessions */
    background_kill("wsloop");
    background_kill("tick");
    expect_ended(admin, wss, "idle for", "no app proxy traffic");
    expect_ended(admin, tun, "idle for", "no app proxy traffic");
    skv_client_free(admin);
    kill(g_proxy, SIGTERM);
    e2e_stop(&g);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 600);                                           \
        tcase_add_unchecked_fixture(tc_, px_setup, px_teardown);               \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e_proxy(void);
Suite *skv_test_suite_e2e_proxy(void)
{
    Suite *s = suite_create("e2e_proxy");
    ADD_CASE(s, "proxy_http", test_e2e_proxy_http);
    ADD_CASE(s, "proxy_ws_tunnel", test_e2e_proxy_ws_tunnel);
    ADD_CASE(s, "proxy_restart", test_e2e_proxy_restart);
    ADD_CASE(s, "proxy_idle", test_e2e_proxy_idle);
    ADD_CASE(s, "proxy_idle_streams", test_e2e_proxy_idle_streams);
    return s;
}
