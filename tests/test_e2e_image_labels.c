/* End-to-end: an OCI image whose config declares its service ports in the
 * ai.sokovan.service-ports label (no /etc/sokovan/image.json), through
 * real sokovan-manager, sokovan-agent and sokovan-proxy processes. The
 * image (busybox's root file system as one layer, a config with the label)
 * is imported as an OCI layout before the agent starts; the agent reports
 * its services, and a session submitted with `sokovan run` naming no
 * --service gets them: `sokovan show` lists both with their URL / tunnel
 * command, and the http one (busybox httpd in the session) answers through
 * the proxy with a Bearer token.
 *
 * Like e2e_proxy, the agent, the proxy and the clients run in a network
 * namespace of the test's own. Needs root, /bin/busybox, nsenter and ip.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdarg.h>

#include "skv_test.h"
#include "e2e_cluster.h"
#include "oci_layout.h"

#define IL_LISTEN "127.0.0.1:18391"
#define IL_URL "http://" IL_LISTEN
#define IL_LABEL "web:http:8080,shell:tcp:2222"

static e2e_cluster g;
static const char *g_skip;
static char g_ns[32];
static pid_t g_proxy = -1;

static void il_setup(void)
{
    g.root[0] = '\0';
    g_proxy = -1;
    g_skip = access("/usr/bin/nsenter", X_OK) || access("/usr/sbin/ip", X_OK)
                 ? "needs nsenter and ip"
                 : e2e_prepare(&g, skv_test_build_dir());
    if (!g_skip && e2e_netns_add(g_ns, sizeof g_ns, "skvL") != 0)
        g_skip = "cannot create a network namespace";
}

static void il_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
    e2e_netns_del(g_ns);
}

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* "labelled": e2e_make_image's busybox rootfs as an OCI layout whose
 * config carries the label. */
static void import_labelled(void)
{
    char lay[PATH_MAX + 16], rfs[PATH_MAX + 16], cfg[1024];
    snprintf(lay, sizeof lay, "%s/oci", g.root);
    snprintf(rfs, sizeof rfs, "%s/rfs", g.root);
    ck_assert_int_eq(oci_config_doc(cfg, sizeof cfg, SKV_IMAGE_LABEL_SERVICES,
                                    IL_LABEL), 0);
    ck_assert_int_eq(oci_layout_build(lay, rfs, cfg), 0);
    skv_image_store *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_image_store_open(&st, g.images, &e), &e);
    int rc = skv_image_import(st, "labelled", lay, SKV_IMAGE_FORMAT_AUTO, &e);
    skv_image_store_free(st);
    SKV_CK_OK(rc, &e);
}

static pid_t spawn_ns(const char *name, char *const argv[])
{
    pid_t pid = e2e_spawn_ns(&g, g_ns, name, argv);
    ck_assert_int_gt(pid, 0);
    return pid;
}

static void start_agent(void)
{
    char exe[PATH_MAX + 32], state[PATH_MAX + 32], run[PATH_MAX + 48];
    char mgr[PATH_MAX + 16];
    snprintf(exe, sizeof exe, "%s/sokovan-agent", g.bin);
    snprintf(state, sizeof state, "%s/agent-a1", g.root);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    e2e_run_dir(&g, "a1", run, sizeof run);
    snprintf(g.agent_cpus[0], sizeof g.agent_cpus[0], "0");
    char *const argv[] = {exe, "--agent-id", "a1", "--manager", mgr,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images,
                          "--cpus", g.agent_cpus[0], "--memory", "1g", NULL};
    g.agent[0] = spawn_ns("a1", argv);
    g.nagents = 1;
}

static void start_proxy(void)
{
    char exe[PATH_MAX + 32], mgr[PATH_MAX + 16], cmd[PATH_MAX + 64];
    char out[64];
    snprintf(exe, sizeof exe, "%s/sokovan-proxy", g.bin);
    snprintf(mgr, sizeof mgr, "unix:%s", g.sock);
    char *const argv[] = {exe, "--data-dir", g.data, "--manager", mgr,
                          "--listen", IL_LISTEN, NULL};
    g_proxy = spawn_ns("proxy", argv);
    snprintf(cmd, sizeof cmd, "grep -c 'ready:' %s/logs/proxy.log "
             "2>/dev/null", g.root);
    for (int64_t end = e2e_now_ms() + 60000; e2e_now_ms() < end;) {
        skv_test_sh_output(cmd, out, sizeof out);
        if (atoi(out) > 0)
            return;
        ck_assert_msg(e2e_alive(g_proxy), "sokovan-proxy exited; see "
                      "%s/logs/proxy.log", g.root);
        e2e_sleep_ms(50);
    }
    ck_abort_msg("sokovan-proxy did not get ready");
}

/* A command in the namespace with the CLI's environment: its output and
 * exit status. */
static int in_ns(char *out, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int in_ns(char *out, size_t cap, const char *fmt, ...)
{
    char inner[2048], cmd[PATH_MAX * 3 + 2400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inner, sizeof inner, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "nsenter --net=/run/netns/%s env "
             "SOKOVAN_ENDPOINT=unix:%s SOKOVAN_KEY_FILE=%s/admin.key "
             "SOKOVAN_PROXY_URL=" IL_URL " PATH=%s:/usr/bin:/bin %s 2>&1; "
             "echo \"exit=$?\"", g_ns, g.sock, g.data, g.bin, inner);
    skv_test_sh_output(cmd, out, cap);
    int rc = -1;
    for (const char *x = strstr(out, "exit="); x; x = strstr(x + 5, "exit="))
        rc = atoi(x + 5);   /* the last one is ours */
    return rc;
}

static void app_token(skv_client *cl, const char *sid, char *tok, size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_app_token q = {(char *)sid, "web", 0};
    skv_proto_app_token_reply r = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_APP_TOKEN, &q, &r, &e), &e);
    snprintf(tok, cap, "%s", r.token);
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
}

/* The page through the proxy; httpd starts after RUNNING: poll. */
static void fetch_through_proxy(const char *sid, const char *tok)
{
    char out[4096] = "";
    for (int64_t end = e2e_now_ms() + 60000; e2e_now_ms() < end;) {
        int rc = in_ns(out, sizeof out, "/bin/busybox wget -q -O - --header "
                       "'Authorization: Bearer %s' " IL_URL "/s/%s/web/", tok,
                       sid);
        if (rc == 0 && !strcmp(out, "from-label\nexit=0\n"))
            return;
        e2e_sleep_ms(200);
    }
    ck_abort_msg("the label's web service did not answer through the proxy: "
                 "%s", out);
}

START_TEST(test_e2e_image_labels_services)
{
    if (g_skip) {
        fprintf(stderr, "SKIP e2e_image_labels: %s\n", g_skip);
        return;
    }
    import_labelled();
    skv_client *admin = NULL;
    E2E_OK(e2e_start_manager(&g, "a1"));
    start_agent();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 1));
    start_proxy();
    char out[8192], sid[E2E_ID_MAX], tok[1024], want[256];
    int rc = in_ns(out, sizeof out, "sokovan run --type interactive --cpu 0.5 "
                   "--mem 128m labelled -- sh -c 'mkdir -p /tmp/w && echo "
                   "from-label > /tmp/w/index.html && exec /bin/busybox httpd "
                   "-f -p 8080 -h /tmp/w'");
    ck_assert_msg(rc == 0 && !strncmp(out, "s-", 2), "run: %s", out);
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(out, "\n"), out);
    E2E_OK(e2e_wait_running(&g, admin, sid, 60000));
    /* the stored session has the label's services */
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply r = {0};
    SKV_CK_OK(skv_client_show(admin, &r, sid, &e), &e);
    ck_assert_uint_eq(r.session.n_services, 2);
    ck_assert_str_eq(r.session.services[0], "web=8080/http");
    ck_assert_str_eq(r.session.services[1], "shell=2222/tcp");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    /* `sokovan show` lists them */
    rc = in_ns(out, sizeof out, "sokovan show %s", sid);
    snprintf(want, sizeof want, IL_URL "/s/%s/web/", sid);
    ck_assert_msg(rc == 0 && strstr(out, want), "show: %s", out);
    snprintf(want, sizeof want, "sokovan app %s shell", sid);
    ck_assert_msg(strstr(out, want) && strstr(out, "2222"), "show: %s", out);
    /* and the http one is served through the proxy */
    app_token(admin, sid, tok, sizeof tok);
    fetch_through_proxy(sid, tok);
    skv_client_free(admin);
    e2e_kill(&g, &g_proxy, SIGTERM, "proxy");
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_image_labels(void);
Suite *skv_test_suite_e2e_image_labels(void)
{
    Suite *s = suite_create("e2e_image_labels");
    TCase *tc = tcase_create("image_labels_services");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, il_setup, il_teardown);
    tcase_add_test(tc, test_e2e_image_labels_services);
    suite_add_tcase(s, tc);
    return s;
}
