/* End-to-end: the interactive image (examples/interactive: Debian 12 with
 * python3, Jupyter Notebook and sshd, built with mmdebstrap from the Debian
 * package registry) run through real sokovan-manager, sokovan-agent and
 * sokovan-proxy processes. The agent imports the image with
 * --import-image; a session started from it with no command and no
 * --service gets the image's own (image.json: jupyter, ssh, and the
 * command that starts them); `show` lists them. Jupyter is opened through
 * the proxy by a real client (tests/jupyter_client.py: the token -> cookie
 * sign-in, the REST API with Jupyter's XSRF check, the kernel's channels
 * over WebSocket with websocket-client) and executes 1+1 -> 2; `sokovan
 * ssh SESSION -- python3 -c 'print(6*7)'` prints 42 through the proxy
 * tunnel with the session's key pair and its pinned host key. A session
 * without an ssh service is refused by `sokovan ssh` with a clear error.
 *
 * The image is built once into <build dir>/images/interactive.tar and
 * reused while it is newer than every file of examples/interactive
 * (SKV_INTERACTIVE_TAR names another tarball to use instead). Building
 * needs mmdebstrap and the registry: when it cannot be reached (probed with
 * a 15 s HTTP request for the suite's InRelease) and no tarball is there,
 * the test is skipped saying so. SKV_DEBIAN_MIRROR overrides the mirror.
 *
 * Like e2e_proxy, the agent, the proxy and the clients run in a network
 * namespace of the test's own. Needs root, busybox, python3 with the
 * websocket module, nsenter, ip and ssh (openssh-client).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>

#include "skv_test.h"
#include "e2e_cluster.h"

#define IX_LISTEN "127.0.0.1:18290"
#define IX_URL "http://" IX_LISTEN
#define IX_MIRROR "http://deb.debian.org/debian"

static e2e_cluster g;
static const char *g_skip;
static char g_ns[32];
static char g_tar[PATH_MAX];
static pid_t g_proxy = -1;

static const char *src_dir(void)
{
    const char *s = getenv("SKV_TEST_SRC_DIR");
    return s ? s : ".";
}

static const char *mirror(void)
{
    const char *m = getenv("SKV_DEBIAN_MIRROR");
    return m && m[0] ? m : IX_MIRROR;
}

/* The tarball exists and no input of the build is newer. */
static bool tar_current(void)
{
    char cmd[PATH_MAX * 3], out[64];
    if (access(g_tar, R_OK) != 0)
        return false;
    if (getenv("SKV_INTERACTIVE_TAR"))
        return true;
    snprintf(cmd, sizeof cmd, "find %s/examples/interactive -newer %s | "
             "wc -l", src_dir(), g_tar);
    skv_test_sh_output(cmd, out, sizeof out);
    return atoi(out) == 0;
}

static bool registry_reachable(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "timeout 20 /usr/bin/python3 -c 'import sys, "
             "urllib.request; urllib.request.urlopen(sys.argv[1] + "
             "\"/dists/bookworm/InRelease\", timeout=15).read(1)' %s "
             ">/dev/null 2>&1", mirror());
    return system(cmd) == 0;
}

/* Build (or reuse) the image; NULL, or why the test is skipped. */
static const char *image_tar(void)
{
    const char *env = getenv("SKV_INTERACTIVE_TAR");
    if (env)
        snprintf(g_tar, sizeof g_tar, "%s", env);
    else
        snprintf(g_tar, sizeof g_tar, "%s/images/interactive.tar",
                 skv_test_build_dir());
    if (tar_current())
        return NULL;
    if (env)
        return "SKV_INTERACTIVE_TAR names no readable file";
    /* An image is data, not code: the sanitizer build (its own build
     * dir) reuses the one the plain build made instead of a second
     * mmdebstrap run of several minutes. */
    snprintf(g_tar, sizeof g_tar, "%s/build/images/interactive.tar",
             src_dir());
    if (tar_current())
        return NULL;
    snprintf(g_tar, sizeof g_tar, "%s/images/interactive.tar",
             skv_test_build_dir());
    if (access("/usr/bin/mmdebstrap", X_OK) != 0)
        return "the interactive image needs mmdebstrap (apt-get install "
               "mmdebstrap) and no built image is there";
    if (!registry_reachable())
        return "the Debian package registry cannot be reached (needed to "
               "build the interactive image; set SKV_DEBIAN_MIRROR for "
               "another mirror)";
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/images && %s/examples/interactive/"
             "build-image.sh %s %s > %s.log 2>&1", skv_test_build_dir(),
             src_dir(), g_tar, mirror(), g_tar);
    int64_t t0 = e2e_now_ms();
    ck_assert_msg(system(cmd) == 0, "building the interactive image failed; "
                  "see %s.log", g_tar);
    fprintf(stderr, "e2e_interactive: image built in %lld s\n",
            (long long)(e2e_now_ms() - t0) / 1000);
    return NULL;
}

static const char *why_skip(void)
{
    if (system("/usr/bin/python3 -c 'import websocket' >/dev/null 2>&1"))
        return "needs /usr/bin/python3 with websocket (python3-websocket)";
    if (access("/usr/bin/nsenter", X_OK) || access("/usr/sbin/ip", X_OK))
        return "needs nsenter and ip";
    if (access("/usr/bin/ssh", X_OK))
        return "needs the OpenSSH client (openssh-client)";
    return e2e_prepare(&g, skv_test_build_dir());
}

static void ix_setup(void)
{
    g.root[0] = '\0';
    g_skip = why_skip();
    if (!g_skip && e2e_netns_add(g_ns, sizeof g_ns, "skvI") != 0)
        g_skip = "cannot create a network namespace";
}

static void ix_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
    e2e_netns_del(g_ns);
}

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

static void start_agent(void)
{
    char exe[PATH_MAX + 32], state[PATH_MAX + 32], run[PATH_MAX + 48];
    char mgr[PATH_MAX + 16], imp[PATH_MAX + 16];
    snprintf(exe, sizeof exe, "%s/sokovan-agent", g.bin);
    snprintf(state, sizeof state, "%s/agent-a1", g.root);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    snprintf(imp, sizeof imp, "interactive=%s", g_tar);
    bool with_image = g_tar[0] != '\0';
    e2e_run_dir(&g, "a1", run, sizeof run);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(g.agent_cpus[0], sizeof g.agent_cpus[0], "0-%ld",
             n > 1 ? n - 1 : 0);
    char *const argv[] = {exe, "--agent-id", "a1", "--manager", mgr,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images,
                          "--cpus", g.agent_cpus[0],
                          "--memory", "4g", "--poll-interval-ms", "10",
                          "--stats-interval-ms", "1000",
                          "--reconnect-max-ms", "500",
                          with_image ? "--import-image" : NULL, imp, NULL};
    g.agent[0] = e2e_spawn_ns(&g, g_ns, "a1", argv);
    ck_assert_int_gt(g.agent[0], 0);
    g.nagents = 1;
}

/* The agent imports the image (hundreds of MB) before it registers. */
static void wait_agent(skv_client *cl)
{
    skv_error e = SKV_ERROR_INIT;
    int64_t t0 = e2e_now_ms();
    for (int64_t end = t0 + 600000; e2e_now_ms() < end;) {
        skv_proto_agent_list q = {0};
        skv_proto_agent_list_reply r = {0};
        SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &q, &r, &e), &e);
        bool up = r.n_agents == 1 && r.agents[0].status &&
                  !strcmp(r.agents[0].status, "alive");
        skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &r);
        if (up) {
            fprintf(stderr, "e2e_interactive: the agent (importing its "
                    "images) registered in %lld ms\n",
                    (long long)(e2e_now_ms() - t0));
            return;
        }
        ck_assert_msg(e2e_alive(g.agent[0]), "the agent exited (import "
                      "failed?); see %s/logs/a1.log", g.root);
        e2e_sleep_ms(200);
    }
    ck_abort_msg("the agent did not register; see %s/logs/a1.log", g.root);
}

static void start_proxy(void)
{
    char exe[PATH_MAX + 32], mgr[PATH_MAX + 16], log[PATH_MAX + 32];
    snprintf(exe, sizeof exe, "%s/sokovan-proxy", g.bin);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    snprintf(log, sizeof log, "%s/logs/proxy.log", g.root);
    char *const argv[] = {exe, "--data-dir", g.data, "--manager", mgr,
                          "--listen", IX_LISTEN, NULL};
    pid_t pid = g_proxy = e2e_spawn_ns(&g, g_ns, "proxy", argv);
    ck_assert_int_gt(pid, 0);
    char cmd[PATH_MAX + 64], out[64];
    snprintf(cmd, sizeof cmd, "grep -c 'ready:' %s 2>/dev/null", log);
    for (int i = 0; i < 600; i++) {
        skv_test_sh_output(cmd, out, sizeof out);
        if (atoi(out) > 0)
            return;
        ck_assert_msg(e2e_alive(pid), "sokovan-proxy exited; see %s", log);
        e2e_sleep_ms(50);
    }
    ck_abort_msg("sokovan-proxy did not get ready; see %s", log);
}

/* A command run in the namespace with the CLI's environment (the admin's
 * key, the proxy's URL): its stdout and stderr, and its exit status. */
static int in_ns(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int in_ns(char *out, size_t cap, const char *fmt, ...)
{
    char inner[4096], cmd[PATH_MAX * 3 + 4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inner, sizeof inner, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "nsenter --net=/run/netns/%s env "
             "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE=%s/admin.key "
             "SOKOVAN_PROXY_URL=" IX_URL " PATH=%s:/usr/bin:/bin %s 2>&1; "
             "echo \"exit=$?\"", g_ns, g.sock, g.data, g.bin, inner);
    skv_test_sh_output(cmd, out, cap);
    const char *x = strstr(out, "exit=");
    int rc = -1;
    while (x) {       /* the last one is ours */
        rc = atoi(x + 5);
        x = strstr(x + 5, "exit=");
    }
    return rc;
}

/* `sokovan run` of the image with nothing but resources: the image's
 * command and services apply. */
static void run_session(char *sid)
{
    char out[4096];
    int rc = in_ns(out, sizeof out, "sokovan run --type interactive --cpu 1 "
                   "--mem 1g interactive");
    ck_assert_msg(rc == 0 && !strncmp(out, "s-", 2), "run: %s", out);
    snprintf(sid, E2E_ID_MAX, "%.*s", (int)strcspn(out, "\n"), out);
}

static void check_show(skv_client *cl, const char *sid)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply r = {0};
    SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
    ck_assert_uint_eq(r.session.n_services, 2);
    ck_assert_str_eq(r.session.services[0], "jupyter=8888/prefix");
    ck_assert_str_eq(r.session.services[1], "ssh=2200/tcp");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    char out[8192], url[256], app[256];
    in_ns(out, sizeof out, "sokovan show %s", sid);
    snprintf(url, sizeof url, IX_URL "/s/%s/jupyter/", sid);
    snprintf(app, sizeof app, "sokovan app %s ssh", sid);
    ck_assert_msg(strstr(out, url) && strstr(out, app), "%s", out);
}

/* Jupyter answers through the proxy (it takes a while to start). */
static void wait_jupyter(const char *sid, const char *tok)
{
    char out[4096];
    int64_t t0 = e2e_now_ms();
    for (int64_t end = t0 + 300000; e2e_now_ms() < end;) {
        in_ns(out, sizeof out, "/usr/bin/python3 %s/tests/proxy_client.py "
              "get " IX_URL "/s/%s/jupyter/api %s", src_dir(), sid, tok);
        if (!strncmp(out, "200 {\"version\"", 14)) {
            fprintf(stderr, "e2e_interactive: Jupyter answered through the "
                    "proxy %lld ms after RUNNING\n",
                    (long long)(e2e_now_ms() - t0));
            return;
        }
        e2e_sleep_ms(500);
    }
    ck_abort_msg("Jupyter did not answer through the proxy: %s", out);
}

static void token_url(const char *sid, const char *svc, char *url,
                      size_t cap)
{
    char out[4096];
    int rc = in_ns(out, sizeof out, "sokovan app-token %s %s", sid, svc);
    ck_assert_msg(rc == 0 && !strncmp(out, IX_URL, strlen(IX_URL)), "%s",
                  out);
    snprintf(url, cap, "%.*s", (int)strcspn(out, "\n"), out);
}

/* Another user asks for the session's SSH key: refused, no key sent. */
static void other_user_refused(skv_client *admin, const char *sid)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = "bob";
    u.user.role = "user";
    u.user.active = 1;
    skv_proto_admin_user_reply ur = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = "bob";
    k.keypair.active = 1;
    skv_proto_admin_keypair_reply kr = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e),
              &e);
    ck_assert_uint_eq(kr.n_keypairs, 1);
    skv_client *bob = NULL;
    int rc = e2e_connect(&g, &bob, kr.keypairs[0].access_key,
                         kr.keypairs[0].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
    E2E_OK(rc);
    skv_proto_app_token q = {(char *)sid, "ssh", 0, true};
    skv_proto_app_token_reply r = {0};
    rc = skv_client_call(bob, SKV_PROTO_APP_TOKEN, &q, &r, &e);
    ck_assert_msg(rc == SKV_EPERM || rc == SKV_ENOENT, "bob: %s",
                  skv_err_name(rc));
    ck_assert_ptr_null(r.ssh_private_key);
    skv_client_free(bob);
}

START_TEST(test_e2e_interactive_jupyter_ssh)
{
    if (g_skip) {
        fprintf(stderr, "SKIP e2e_interactive: %s\n", g_skip);
        return;
    }
    const char *why = image_tar();
    if (why) {
        fprintf(stderr, "SKIP e2e_interactive: %s\n", why);
        return;
    }
    skv_client *admin = NULL;
    E2E_OK(e2e_start_manager(&g, "a1"));
    start_agent();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    wait_agent(admin);
    start_proxy();
    char sid[E2E_ID_MAX], url[2048], out[8192];
    run_session(sid);
    E2E_OK(e2e_wait_running(&g, admin, sid, 120000));
    check_show(admin, sid);
    token_url(sid, "jupyter", url, sizeof url);
    wait_jupyter(sid, strstr(url, "sokovan_token=") + 14);
    int rc = in_ns(out, sizeof out, "/usr/bin/python3 %s/tests/"
                   "jupyter_client.py '%s' 1+1", src_dir(), url);
    ck_assert_msg(rc == 0 && strstr(out, "\nresult=2\nstatus=ok\n"), "%s",
                  out);
    /* ssh through the proxy tunnel, a command with quotes and parentheses
     * (quoted for the remote shell), and its exit code */
    int64_t t0 = e2e_now_ms();
    rc = in_ns(out, sizeof out, "sokovan ssh %s -- python3 -c "
               "'print(6*7)'", sid);
    ck_assert_msg(rc == 0 && !strcmp(out, "42\nexit=0\n"), "ssh: %s", out);
    fprintf(stderr, "e2e_interactive: sokovan ssh ran in %lld ms\n",
            (long long)(e2e_now_ms() - t0));
    rc = in_ns(out, sizeof out, "sokovan ssh %s -- sh -c 'id -un; exit 7'",
               sid);
    ck_assert_msg(rc == 7 && !strcmp(out, "work\nexit=7\n"), "ssh: %s", out);
    other_user_refused(admin, sid);
    /* a session without an ssh service */
    rc = in_ns(out, sizeof out, "sokovan run --cpu 0.1 --mem 64m busybox -- "
               "sleep 1000");
    ck_assert_msg(rc == 0, "%s", out);
    char bsid[E2E_ID_MAX];
    snprintf(bsid, sizeof bsid, "%.*s", (int)strcspn(out, "\n"), out);
    rc = in_ns(out, sizeof out, "sokovan ssh %s -- true", bsid);
    ck_assert_msg(rc == 1 && strstr(out, "has no ssh service"), "%s", out);
    skv_client_free(admin);
    e2e_kill(&g, &g_proxy, SIGTERM, "proxy");
    e2e_stop(&g);
}
END_TEST

/* What a prefix service gets: the whole path, where an http service on
 * the same port gets it without /s/SESSION/NAME (busybox httpd serving
 * both trees). */
START_TEST(test_e2e_interactive_prefix)
{
    if (g_skip) {
        fprintf(stderr, "SKIP e2e_interactive: %s\n", g_skip);
        return;
    }
    g_tar[0] = '\0';    /* busybox only */
    skv_client *admin = NULL;
    E2E_OK(e2e_start_manager(&g, "a1"));
    start_agent();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    wait_agent(admin);
    start_proxy();
    char out[4096], sid[E2E_ID_MAX], tok[1024];
    int rc = in_ns(out, sizeof out, "sokovan run --service app=8080/prefix "
                   "--service root=8080 --cpu 0.1 --mem 64m busybox -- sh -c "
                   "'D=/tmp/www/s/$SOKOVAN_SESSION_ID/app; busybox mkdir -p "
                   "$D && echo prefixed > $D/index.html && echo stripped > "
                   "/tmp/www/index.html && exec busybox httpd -f -p 8080 -h "
                   "/tmp/www'");
    ck_assert_msg(rc == 0 && !strncmp(out, "s-", 2), "run: %s", out);
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(out, "\n"), out);
    E2E_OK(e2e_wait_running(&g, admin, sid, 60000));
    static const char *const svc[][2] = {{"app", "200 prefixed"},
                                         {"root", "200 stripped"}};
    for (int i = 0; i < 2; i++) {
        rc = in_ns(out, sizeof out, "sokovan app-token %s %s --token-only",
                   sid, svc[i][0]);
        ck_assert_msg(rc == 0, "%s", out);
        snprintf(tok, sizeof tok, "%.*s", (int)strcspn(out, "\n"), out);
        for (int64_t end = e2e_now_ms() + 60000; e2e_now_ms() < end;) {
            in_ns(out, sizeof out, "/usr/bin/python3 %s/tests/proxy_client.py"
                  " get " IX_URL "/s/%s/%s/ %s", src_dir(), sid, svc[i][0],
                  tok);
            if (!strncmp(out, svc[i][1], strlen(svc[i][1])))
                break;
            e2e_sleep_ms(200);
        }
        ck_assert_msg(!strncmp(out, svc[i][1], strlen(svc[i][1])), "%s: %s",
                      svc[i][0], out);
    }
    /* sokovan ssh: usage, an unknown session, a session without ssh */
    rc = in_ns(out, sizeof out, "sokovan ssh");
    ck_assert_msg(rc == 2 && strstr(out, "want SESSION"), "%s", out);
    rc = in_ns(out, sizeof out, "sokovan ssh %s --user ''", sid);
    ck_assert_msg(rc == 2 && strstr(out, "--user"), "%s", out);
    rc = in_ns(out, sizeof out, "sokovan ssh s-0000000000000000 -- true");
    ck_assert_msg(rc == 1 && strstr(out, "no session"), "%s", out);
    rc = in_ns(out, sizeof out, "sokovan ssh %s", sid);
    ck_assert_msg(rc == 1 && strstr(out, "has no ssh service"), "%s", out);
    skv_client_free(admin);
    e2e_kill(&g, &g_proxy, SIGTERM, "proxy");
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_interactive(void);
Suite *skv_test_suite_e2e_interactive(void)
{
    Suite *s = suite_create("e2e_interactive");
    TCase *tc = tcase_create("interactive_jupyter_ssh");
    /* building the image once (minutes) and importing it */
    tcase_set_timeout(tc, 1800);
    tcase_add_unchecked_fixture(tc, ix_setup, ix_teardown);
    tcase_add_test(tc, test_e2e_interactive_jupyter_ssh);
    suite_add_tcase(s, tc);
    tc = tcase_create("interactive_prefix");
    tcase_set_timeout(tc, 600);
    tcase_add_unchecked_fixture(tc, ix_setup, ix_teardown);
    tcase_add_test(tc, test_e2e_interactive_prefix);
    suite_add_tcase(s, tc);
    return s;
}
