/* Transport security through the real daemons (tests/e2e_cluster.h): the
 * manager's TCP listener on TLS with a certificate it generated on first
 * start, an agent registering over TLS with the pinned fingerprint and a
 * session run to completion through it; clients pinning the certificate,
 * verifying it as a CA, with a wrong pin, and speaking plaintext to the
 * TLS port; an agent with a wrong pin kept out; admin.keypair create (its
 * reply carries a secret key) refused over plaintext TCP unless
 * allow_plaintext_secrets is on.
 *
 * Needs root, /bin/busybox and the daemons (as the e2e suite); otherwise
 * each test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "skv_test.h"
#include "e2e_cluster.h"

static e2e_cluster g;
static const char *g_skip;

static void tls_setup(void)
{
    g_skip = NULL;
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
}

static void tls_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define REQUIRE()                                                              \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* A loopback port nobody listens on right now. */
static int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* The manager with extra flags (NULL-terminated), TCP on g.mgr_tcp. */
static void start_manager(const char *const *extra)
{
    char exe[PATH_MAX + 32], key[PATH_MAX + 16];
    const char *argv[32];
    int n = 0;
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g.bin);
    snprintf(key, sizeof(key), "%s/admin.key", g.data);
    const char *base[] = {exe, "--data-dir", g.data, "--listen", g.sock,
                          "--tcp", g.mgr_tcp, "--bootstrap-agents", "a1,a2,a3",
                          "--heartbeat-interval-ms", "500", NULL};
    for (int i = 0; base[i]; i++)
        argv[n++] = base[i];
    for (int i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    unlink(g.sock);
    g.mgr = e2e_spawn(&g, "manager", (char *const *)argv);
    ck_assert_int_gt(g.mgr, 0);
    for (int64_t end = e2e_now_ms() + 15000; e2e_now_ms() < end;) {
        char tail[400];
        if (!e2e_alive(g.mgr)) {
            e2e_log_tail(&g, "manager", tail, sizeof(tail));
            g.mgr = -1;
            ck_abort_msg("sokovan-manager exited: %s", tail);
        }
        if (e2e_file_exists(g.sock) && e2e_file_exists(key))
            break;
        e2e_sleep_ms(20);
    }
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_client_read_keyfile(g.admin_ak, g.admin_sk, key, &e), &e);
}

/* Agent a<i+1> reaching the manager over TCP with extra flags. */
static void start_agent(int i, const char *flag, const char *value)
{
    char exe[PATH_MAX + 32], id[16], state[PATH_MAX + 32], run[PATH_MAX + 48];
    snprintf(exe, sizeof(exe), "%s/sokovan-agent", g.bin);
    snprintf(id, sizeof(id), "a%d", i + 1);
    snprintf(state, sizeof(state), "%s/agent-%s", g.root, id);
    e2e_run_dir(&g, id, run, sizeof(run));
    char *const argv[] = {exe, "--agent-id", id, "--manager", g.mgr_tcp,
                          "--data-dir", g.data, "--state-dir", state,
                          "--run-dir", run, "--image-dir", g.images,
                          "--cpus", "0", "--memory", "2g",
                          "--poll-interval-ms", "10", "--reconnect-max-ms",
                          "300", (char *)flag, (char *)value, NULL};
    g.agent[i] = e2e_spawn(&g, id, argv);
    ck_assert_int_gt(g.agent[i], 0);
    if (i >= g.nagents)
        g.nagents = i + 1;
}

/* "AB:CD:..." of the PEM certificate at path, computed here. */
static void cert_fingerprint(char *out, size_t cap, const char *path)
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    ck_assert_ptr_nonnull(x);
    ck_assert(X509_digest(x, EVP_sha256(), md, &n) && n == 32);
    X509_free(x);
    out[0] = 0;
    for (unsigned i = 0; i < n && 3 * i + 3 < cap; i++)
        snprintf(out + 3 * i, 4, "%02X%s", md[i], i + 1 < n ? ":" : "");
}

static int dial(skv_client **cl, const char *endpoint, const char *ca,
                const char *pin, skv_error *e)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = endpoint;
    o.access_key = g.admin_ak;
    o.secret_key = g.admin_sk;
    o.timeout_ms = 10000;
    o.tls_ca_file = ca;
    o.tls_pin = pin;
    *cl = NULL;
    return skv_client_connect(cl, &o, e);
}

static int list_agents(skv_client *cl, skv_error *e)
{
    skv_proto_agent_list req = {0};
    skv_proto_agent_list_reply rep = {0};
    int rc = skv_client_call(cl, SKV_PROTO_AGENT_LIST, &req, &rep, e);
    if (!rc)
        skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    return rc;
}

/* admin.keypair create for admin; the new secret into sk (may be NULL). */
static int create_key(skv_client *cl, char *sk, size_t cap, skv_error *e)
{
    skv_proto_admin_keypair rq = {0};
    skv_proto_admin_keypair_reply rp = {0};
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.keypair.user = "admin";
    int rc = skv_client_call(cl, SKV_PROTO_ADMIN_KEYPAIR, &rq, &rp, e);
    if (!rc) {
        ck_assert_uint_eq(rp.n_keypairs, 1);
        ck_assert_ptr_nonnull(rp.keypairs[0].secret_key);
        if (sk)
            snprintf(sk, cap, "%s", rp.keypairs[0].secret_key);
        skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &rp);
    }
    return rc;
}

static size_t count_keys(skv_client *cl)
{
    skv_proto_admin_keypair rq = {0};
    skv_proto_admin_keypair_reply rp = {0};
    skv_error e = SKV_ERROR_INIT;
    rq.op = SKV_PROTO_ADMIN_LIST;
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_ADMIN_KEYPAIR, &rq, &rp, &e), &e);
    size_t n = rp.n_keypairs;
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &rp);
    return n;
}

static bool log_has(const char *name, const char *needle, int wait_ms)
{
    char tail[4096];
    for (int64_t end = e2e_now_ms() + wait_ms;;) {
        e2e_log_tail(&g, name, tail, sizeof(tail));
        if (strstr(tail, needle))
            return true;
        if (e2e_now_ms() >= end)
            return false;
        e2e_sleep_ms(100);
    }
}

START_TEST(test_tls_cluster)
{
    REQUIRE();
    char cert[PATH_MAX + 32], key[PATH_MAX + 32], fp[100], bad[100];
    char tcp_ep[80], sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_client *cl = NULL, *plain = NULL, *byca = NULL;
    skv_error e = SKV_ERROR_INIT;
    struct stat st;
    snprintf(g.mgr_tcp, sizeof(g.mgr_tcp), "127.0.0.1:%d", free_port());
    snprintf(tcp_ep, sizeof(tcp_ep), "tcp:%s", g.mgr_tcp);
    start_manager((const char *const[]){"--tls", "on", NULL});
    /* First start: a certificate and a private key only root may read. */
    snprintf(cert, sizeof(cert), "%s/tls/cert.pem", g.data);
    snprintf(key, sizeof(key), "%s/tls/key.pem", g.data);
    ck_assert_int_eq(stat(key, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    cert_fingerprint(fp, sizeof(fp), cert);
    snprintf(bad, sizeof(bad), "%s", fp);
    bad[0] = bad[0] == 'A' ? 'B' : 'A';
    ck_assert_msg(log_has("manager", fp, 2000), "fingerprint %s not logged",
                  fp);

    /* An agent over TLS, pinning the certificate, runs a session. */
    start_agent(0, "--tls-pin", fp);
    SKV_CK_OK(dial(&cl, g.mgr_tcp, NULL, fp, &e), &e);
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    ck_assert(log_has("a1", "(TLS)", 1000));
    e2e_job j = {"tls", "echo over-tls", "cpu=0.1,mem=32m", 1, false, NULL,
                 NULL, 0};
    char sid[E2E_ID_MAX], out[1024];
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, &r));
    ck_assert_msg(!strcmp(r.session.status, "TERMINATED") &&
                  r.session.exit_code == 0, "%s exit %d", r.session.status,
                  r.session.exit_code);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    SKV_CK_OK(e2e_logs(cl, sid, NULL, out, sizeof(out), &e), &e);
    ck_assert_str_eq(out, "over-tls\n");
    /* Secrets may travel over TLS. */
    SKV_CK_OK(create_key(cl, sk, sizeof(sk), &e), &e);
    /* An agent verifying the certificate as its CA (host 127.0.0.1). */
    start_agent(2, "--tls-ca", cert);
    E2E_OK(e2e_wait_agents(&g, cl, 2));

    /* The CLI: pinned, it works; a wrong pin is a clear failure. */
    char cmd[PATH_MAX * 2 + 512];
    snprintf(cmd, sizeof(cmd), "%s/sokovan --endpoint %s --key-file "
             "%s/admin.key --tls-pin %s agents 2>&1; echo rc=$?", g.bin,
             g.mgr_tcp, g.data, fp);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "a1") && strstr(out, "rc=0"), "%s", out);
    snprintf(cmd, sizeof(cmd), "%s/sokovan --endpoint %s --key-file "
             "%s/admin.key --tls-pin %s agents 2>&1; echo rc=$?", g.bin,
             g.mgr_tcp, g.data, bad);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "does not match the pinned fingerprint") &&
                  strstr(out, "rc=1"), "%s", out);

    /* The certificate as a CA file: chain and 127.0.0.1 checked. */
    SKV_CK_OK(dial(&byca, g.mgr_tcp, cert, NULL, &e), &e);
    SKV_CK_OK(list_agents(byca, &e), &e);

    /* A wrong pin: refused before any request, naming what came. */
    ck_assert_int_eq(dial(&plain, g.mgr_tcp, NULL, bad, &e), SKV_EAUTH);
    ck_assert_msg(strstr(e.message, "does not match the pinned") &&
                  strstr(e.message, fp), "%s", e.message);
    ck_assert_ptr_null(plain);
    /* A CA that did not sign it: verification fails. */
    ck_assert_int_eq(dial(&plain, g.mgr_tcp, "/etc/ssl/certs/ca-certificates"
                          ".crt", NULL, &e), SKV_EIO);
    ck_assert_msg(strstr(e.message, "certificate verification failed"), "%s",
                  e.message);

    /* Plaintext to the TLS port: a clear error, not a hang or garbage. */
    SKV_CK_OK(dial(&plain, tcp_ep, NULL, NULL, &e), &e);
    ck_assert_int_eq(list_agents(plain, &e), SKV_EPERM);
    ck_assert_msg(strstr(e.message, "requires TLS"), "%s", e.message);
    skv_client_free(plain);
    /* The manager is unharmed. */
    SKV_CK_OK(list_agents(cl, &e), &e);

    /* An agent with a wrong pin never registers. */
    start_agent(1, "--tls-pin", bad);
    ck_assert_msg(log_has("a2", "certificate rejected", 5000),
                  "a2 did not report the rejected certificate");
    skv_proto_agent_list req = {0};
    skv_proto_agent_list_reply rep = {0};
    req.include_lost = 1;
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &req, &rep, &e), &e);
    for (size_t i = 0; i < rep.n_agents; i++)
        ck_assert_msg(strcmp(rep.agents[i].agent_id, "a2") ||
                      strcmp(rep.agents[i].status, "alive"),
                      "a2 registered with a wrong pin");
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    skv_client_free(byca);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

START_TEST(test_tls_plaintext_secrets)
{
    REQUIRE();
    char tcp_ep[80], sock_ep[PATH_MAX + 8];
    skv_client *tcp = NULL, *local = NULL;
    skv_error e = SKV_ERROR_INIT;
    snprintf(g.mgr_tcp, sizeof(g.mgr_tcp), "127.0.0.1:%d", free_port());
    snprintf(tcp_ep, sizeof(tcp_ep), "tcp:%s", g.mgr_tcp);
    snprintf(sock_ep, sizeof(sock_ep), "unix:%s", g.sock);
    start_manager(NULL);
    SKV_CK_OK(dial(&tcp, tcp_ep, NULL, NULL, &e), &e);
    SKV_CK_OK(dial(&local, sock_ep, NULL, NULL, &e), &e);
    size_t before = count_keys(local);
    /* Over plaintext TCP: refused, and nothing was created. */
    ck_assert_int_eq(create_key(tcp, NULL, 0, &e), SKV_EPERM);
    ck_assert_msg(strstr(e.message, "plaintext TCP") &&
                  strstr(e.message, "allow_plaintext_secrets"), "%s",
                  e.message);
    ck_assert_uint_eq(count_keys(local), before);
    /* Other admin requests still work there (no secret in the reply). */
    ck_assert_uint_eq(count_keys(tcp), before);
    /* The Unix socket is local: allowed. */
    SKV_CK_OK(create_key(local, NULL, 0, &e), &e);
    skv_client_free(tcp);
    skv_client_free(local);
    /* Explicitly allowed: plaintext TCP may carry it. */
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    start_manager((const char *const[]){"--allow-plaintext-secrets", "on",
                                        NULL});
    for (int64_t end = e2e_now_ms() + 10000;
         dial(&tcp, tcp_ep, NULL, NULL, &e) && e2e_now_ms() < end;)
        e2e_sleep_ms(50);
    ck_assert_ptr_nonnull(tcp);
    SKV_CK_OK(create_key(tcp, NULL, 0, &e), &e);
    skv_client_free(tcp);
    e2e_stop(&g);
}
END_TEST

/* Client options: TLS settings are checked before anything is dialled. */
START_TEST(test_tls_client_options)
{
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    char sk[SKV_AUTH_SECRET_KEY_MAX];
    char ak2[SKV_AUTH_ACCESS_KEY_MAX];
    SKV_CK_OK(skv_auth_keypair_generate(ak2, sk, &e), &e);
    o.access_key = ak2;
    o.secret_key = sk;
    o.endpoint = "tls:127.0.0.1:1";
    ck_assert_int_eq(skv_client_connect(&cl, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "needs tls_ca_file or tls_pin"), "%s",
                  e.message);
    o.endpoint = "unix:/nonexistent.sock";
    o.tls_pin = "00";
    ck_assert_int_eq(skv_client_connect(&cl, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "TLS is for TCP"), "%s", e.message);
    o.endpoint = "127.0.0.1:1";
    ck_assert_int_eq(skv_client_connect(&cl, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "not a SHA-256 fingerprint"), "%s",
                  e.message);
    o.tls_ca_file = "/nonexistent.pem";
    ck_assert_int_eq(skv_client_connect(&cl, &o, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "not both"), "%s", e.message);
    /* Version 1 options (no TLS fields) are still accepted. */
    skv_client_options v1 = o;
    v1.version = 1;
    v1.endpoint = "unix:/nonexistent.sock";
    ck_assert_int_ne(skv_client_connect(&cl, &v1, &e), SKV_EVERSION);
    ck_assert_ptr_null(cl);
    v1.version = SKV_CLIENT_OPTIONS_VERSION + 1;   /* from the future */
    ck_assert_int_eq(skv_client_connect(&cl, &v1, &e), SKV_EVERSION);
}
END_TEST

/* Run "<bin>/<prog> ARGS" (sh words); its exit status, stderr in out. */
static int run_prog(char *out, size_t cap, const char *prog, const char *args)
{
    char cmd[2048], bin[PATH_MAX];
    ck_assert_int_eq(e2e_find_bin(bin, sizeof(bin), skv_test_build_dir()), 0);
    snprintf(cmd, sizeof(cmd), "%s/%s %s 2>&1 >/dev/null; echo \"rc=$?\"",
             bin, prog, args);
    skv_test_sh_output(cmd, out, cap);
    const char *rc = strstr(out, "rc=");
    ck_assert_ptr_nonnull(rc);
    return atoi(rc + 3);
}

#define PIN64 "00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF"

/* The new keys reject bad values and bad combinations before anything
 * starts (status 2), and a broken certificate setup stops the manager
 * (status 1) with the reason. */
START_TEST(test_tls_config_checked)
{
    char out[2048], dir[] = "/tmp/skv-tls-XXXXXX", args[1024];
    if (e2e_find_bin(out, sizeof(out), skv_test_build_dir()) != 0) {
        fprintf(stderr, "%s: skipped: needs the daemons (make progs)\n",
                __func__);
        return;
    }
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager",
                              "--tls maybe"), 2);
    ck_assert_msg(strstr(out, "'maybe' is not on or off"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager",
                              "--tls on --tcp none"), 2);
    ck_assert_msg(strstr(out, "tls = on needs a tcp listener"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager",
                              "--tls-cert /x.pem"), 2);
    ck_assert_msg(strstr(out, "set both tls_cert and tls_key"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager",
                              "--allow-plaintext-secrets 2"), 2);
    ck_assert_msg(strstr(out, "not on or off"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-agent",
                              "--tls-pin zz"), 2);
    ck_assert_msg(strstr(out, "not a SHA-256 fingerprint"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-agent",
                              "--tls-pin " PIN64 "00"), 2);
    ck_assert_msg(strstr(out, "not a SHA-256 fingerprint"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-agent",
                              "--tls-pin " PIN64), 2);
    ck_assert_msg(strstr(out, "local Unix socket"), "%s", out);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-agent",
                              "--manager 127.0.0.1:1 --tls-ca /ca.pem "
                              "--tls-pin " PIN64), 2);
    ck_assert_msg(strstr(out, "not both"), "%s", out);
    /* A CA file that is not there: the agent stops (status 1). */
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(args, sizeof(args), "--manager 127.0.0.1:1 --tls-ca "
             "%s/none.pem --key-file %s/k --key-wait-ms 0 --state-dir %s/s "
             "--run-dir %s/r", dir, dir, dir, dir);
    FILE *f;
    char path[256];
    snprintf(path, sizeof(path), "%s/k", dir);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_auth_keypair_generate(ak, sk, &e), &e);
    ck_assert_ptr_nonnull(f = fopen(path, "w"));
    fprintf(f, "access_key=%s\nsecret_key=%s\n", ak, sk);
    fclose(f);
    chmod(path, 0600);
    int rc = run_prog(out, sizeof(out), "sokovan-agent", args);
    ck_assert_msg(rc == 1 && strstr(out, "tls_ca"), "rc %d: %s", rc, out);
    /* Configured certificate files that do not exist: status 1, named. */
    snprintf(args, sizeof(args), "--data-dir %s/m --listen %s/m.sock --tcp "
             "127.0.0.1:%d --tls on --tls-cert %s/c.pem --tls-key %s/k.pem",
             dir, dir, free_port(), dir, dir);
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager", args), 1);
    ck_assert_msg(strstr(out, "c.pem"), "%s", out);
    /* A generated certificate without its key: refused, not replaced. */
    snprintf(path, sizeof(path), "mkdir -p %s/m2/tls && echo x > "
             "%s/m2/tls/cert.pem", dir, dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(args, sizeof(args), "--data-dir %s/m2 --listen %s/m2.sock "
             "--tcp 127.0.0.1:%d --tls on", dir, dir, free_port());
    ck_assert_int_eq(run_prog(out, sizeof(out), "sokovan-manager", args), 1);
    ck_assert_msg(strstr(out, "exists but"), "%s", out);
    snprintf(path, sizeof(path), "rm -rf %s", dir);
    ck_assert_int_eq(system(path), 0);
}
END_TEST

#define ADD_CASE(s, name, test, fixture)                                       \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        if (fixture)                                                           \
            tcase_add_unchecked_fixture(tc_, tls_setup, tls_teardown);         \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_tls(void);
Suite *skv_test_suite_tls(void)
{
    Suite *s = suite_create("tls");
    ADD_CASE(s, "tls_cluster", test_tls_cluster, 1);
    ADD_CASE(s, "plaintext_secrets", test_tls_plaintext_secrets, 1);
    ADD_CASE(s, "client_options", test_tls_client_options, 0);
    ADD_CASE(s, "config_checked", test_tls_config_checked, 0);
    return s;
}
