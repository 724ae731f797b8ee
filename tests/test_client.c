/* The blocking client against an in-process fake manager: signed requests,
 * replies, error replies, skipped events and stale responses, timeouts,
 * malformed responses, endpoints and key files.
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fake_mgr.h"
#include "skv_test.h"
#include "sokovan/client.h"

enum { MODE_OK, MODE_ERROR, MODE_SILENT_FIRST, MODE_GARBAGE, MODE_WRONG_TYPE,
       MODE_CLOSE, MODE_BAD_BODY, MODE_ERROR_ID0 };

/* Answers like a tiny manager; before each answer it sends an event and a
 * response to some other request id, which the client must skip. */
static int ok_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    skv_proto_agent_heartbeat hb = {0};
    hb.agent_id = "a1";
    fake_mgr_send(fd, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_HEARTBEAT, &hb);
    skv_proto_session_ref stale = {"s-stale", "RUNNING"};
    fake_mgr_reply(fd, env->request_id + 1000, SKV_PROTO_SESSION_SUBMIT_REPLY,
                   &stale);
    (void)m;
    if (env->type == SKV_PROTO_SESSION_SHOW) {
        skv_proto_session_id req;
        ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                               env->body_len, NULL), 0);
        skv_proto_session_show_reply r = {0};
        r.session.session_id = req.session_id;
        r.session.status = "RUNNING";
        r.session.exit_code = 7;
        int rc = fake_mgr_reply(fd, env->request_id,
                                SKV_PROTO_SESSION_SHOW_REPLY, &r);
        skv_proto_body_free(env->type, &req);
        return rc;
    }
    if (env->type == SKV_PROTO_SESSION_LOGS) {
        skv_proto_logs_reply r = {0};
        r.data = (uint8_t *)"hello\n";
        r.data_len = 6;
        r.next_offset = 6;
        r.eof = 1;
        return fake_mgr_reply(fd, env->request_id, SKV_PROTO_LOGS_REPLY, &r);
    }
    skv_proto_session_ref ref = {"s-0123456789abcdef", "PENDING"};
    return fake_mgr_reply(fd, env->request_id,
                          skv_proto_type_reply(env->type), &ref);
}

static int mode_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    int mode = *(int *)m->payload;
    static const uint8_t garbage[] = {0, 0, 0, 3, 0xc1, 0xc1, 0xc1};
    switch (mode) {
    case MODE_ERROR:
        return fake_mgr_error(fd, env->request_id, SKV_ENOENT,
                              "session 's-nope' not found");
    case MODE_SILENT_FIRST:
        if (m->n_requests == 1)
            return 0;
        /* the late answer to request 1 first: it must be skipped */
        ok_handler(m, fd, &(skv_proto_envelope){.request_id = 1,
                   .type = SKV_PROTO_SESSION_TERMINATE});
        return ok_handler(m, fd, env);
    case MODE_GARBAGE:
        return fake_mgr_write(fd, garbage, sizeof garbage);
    case MODE_WRONG_TYPE: {
        skv_proto_ack a = {"ok"};
        return fake_mgr_reply(fd, env->request_id, SKV_PROTO_ACK, &a);
    }
    case MODE_CLOSE:
        return -1;
    case MODE_ERROR_ID0:        /* "could not parse that", then hang up */
        fake_mgr_error(fd, 0, SKV_EPROTO, "malformed frame");
        return -1;
    case MODE_BAD_BODY: {
        /* a terminate reply without its required session id */
        skv_proto_ack a = {"x"};
        void *frame;
        size_t len;
        skv_proto_envelope e = {0};
        e.version = SKV_PROTO_VERSION;
        e.kind = SKV_PROTO_RESPONSE;
        e.request_id = env->request_id;
        e.type = SKV_PROTO_SESSION_TERMINATE_REPLY;
        ck_assert_int_eq(skv_proto_body_encode(&e.body, &e.body_len,
                                               SKV_PROTO_ACK, &a, NULL), 0);
        ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &e, 0, NULL),
                         0);
        int rc = fake_mgr_write(fd, frame, len);
        skv_free(frame);
        skv_free(e.body);
        return rc;
    }
    default:
        return ok_handler(m, fd, env);
    }
}

static skv_client *connect_to(const char *endpoint, int timeout_ms)
{
    skv_error e = SKV_ERROR_INIT;
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = endpoint;
    o.access_key = FAKE_AK;
    o.secret_key = FAKE_SK;
    o.timeout_ms = timeout_ms;
    skv_client *c = NULL;
    SKV_CK_OK(skv_client_connect(&c, &o, &e), &e);
    return c;
}

START_TEST(test_calls_signed_and_answered)
{
    static int mode = MODE_OK;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_client *c = connect_to(m.endpoint, 0);
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 3; i++) {          /* fresh nonce each time */
        skv_proto_session_show_reply r;
        SKV_CK_OK(skv_client_show(c, &r, "s-abc", &e), &e);
        ck_assert_str_eq(r.session.session_id, "s-abc");
        ck_assert_str_eq(r.session.status, "RUNNING");
        ck_assert_int_eq(r.session.exit_code, 7);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    }
    skv_proto_session_submit sub = {0};
    sub.image = "busybox";
    skv_proto_session_ref ref;
    SKV_CK_OK(skv_client_submit(c, &ref, &sub, &e), &e);
    ck_assert_str_eq(ref.session_id, "s-0123456789abcdef");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    SKV_CK_OK(skv_client_terminate(c, &ref, "s-abc", "test", 1, &e), &e);
    ck_assert_str_eq(ref.status, "PENDING");
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    skv_proto_logs_request lr = {"s-abc", NULL, 0, 0, NULL};
    skv_proto_logs_reply logs;
    SKV_CK_OK(skv_client_logs(c, &logs, &lr, &e), &e);
    ck_assert_uint_eq(logs.data_len, 6);
    ck_assert(memcmp(logs.data, "hello\n", 6) == 0);
    ck_assert_int_eq(logs.eof, 1);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &logs);
    skv_client_free(c);
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_requests, 6);
    ck_assert_int_eq(m.n_refused, 0);
    ck_assert_str_eq(m.last_user, "alice");
    ck_assert_int_eq(m.last_type, SKV_PROTO_SESSION_LOGS);
}
END_TEST

START_TEST(test_wrong_secret_refused)
{
    static int mode = MODE_OK;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_error e = SKV_ERROR_INIT;
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = m.endpoint;
    o.access_key = FAKE_AK;
    o.secret_key = "not-the-right-secret-at-all";
    skv_client *c;
    SKV_CK_OK(skv_client_connect(&c, &o, &e), &e);
    skv_proto_session_show_reply r;
    ck_assert_int_eq(skv_client_show(c, &r, "s-abc", &e), SKV_EAUTH);
    ck_assert_ptr_null(r.session.session_id);
    skv_client_free(c);
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_refused, 1);
}
END_TEST

START_TEST(test_error_reply)
{
    static int mode = MODE_ERROR;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_client *c = connect_to(m.endpoint, 0);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply r;
    ck_assert_int_eq(skv_client_show(c, &r, "s-nope", &e), SKV_ENOENT);
    ck_assert_int_eq(e.code, SKV_ENOENT);
    ck_assert_str_eq(e.message, "session 's-nope' not found");
    /* an error reply leaves the connection usable */
    ck_assert_int_eq(skv_client_usable(c), 1);
    ck_assert_int_eq(skv_client_show(c, &r, "s-nope", NULL), SKV_ENOENT);
    ck_assert_int_eq(skv_client_usable(c), 1);
    ck_assert_int_eq(skv_client_usable(NULL), 0);
    skv_client_free(c);
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_requests, 2);
}
END_TEST

START_TEST(test_timeout_then_stale_skipped)
{
    static int mode = MODE_SILENT_FIRST;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_client *c = connect_to(m.endpoint, 200);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_ref ref;
    ck_assert_int_eq(skv_client_terminate(c, &ref, "s-1", NULL, 0, &e),
                     SKV_ETIMEDOUT);
    ck_assert_ptr_nonnull(strstr(e.message, "session.terminate"));
    ck_assert_int_eq(skv_client_usable(c), 1);   /* no answer yet: usable */
    skv_proto_session_show_reply r;
    SKV_CK_OK(skv_client_show(c, &r, "s-2", &e), &e);
    ck_assert_str_eq(r.session.session_id, "s-2");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    skv_client_free(c);
    fake_mgr_stop(&m);
}
END_TEST

static void broken_case(int mode_value, int want)
{
    static int mode;
    mode = mode_value;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_client *c = connect_to(m.endpoint, 5000);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_ref ref;
    ck_assert_int_eq(skv_client_usable(c), 1);
    ck_assert_int_eq(skv_client_terminate(c, &ref, "s-1", NULL, 0, &e), want);
    ck_assert_ptr_null(ref.session_id);
    ck_assert(e.message[0]);
    ck_assert_int_eq(skv_client_usable(c), 0);   /* reconnect */
    /* the stream is out of step: later calls refuse to use it */
    ck_assert_int_eq(skv_client_terminate(c, &ref, "s-1", NULL, 0, &e),
                     SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "reconnect"));
    skv_client_free(c);
    fake_mgr_stop(&m);
}

START_TEST(test_malformed_responses)
{
    broken_case(MODE_GARBAGE, SKV_EPROTO);
    broken_case(MODE_WRONG_TYPE, SKV_EPROTO);
    broken_case(MODE_BAD_BODY, SKV_EPROTO);
    broken_case(MODE_CLOSE, SKV_EIO);
    broken_case(MODE_ERROR_ID0, SKV_EPROTO);
}
END_TEST

START_TEST(test_call_arguments)
{
    static int mode = MODE_OK;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    skv_client *c = connect_to(m.endpoint, 0);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_ack ack;
    skv_proto_session_id sid = {"s-1"};
    /* a response type is not something one can send */
    ck_assert_int_eq(skv_client_call(c, SKV_PROTO_ACK, &sid, &ack, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_client_call(c, SKV_PROTO_AGENT_HEARTBEAT, &sid, &ack,
                                     &e), SKV_EINVAL);
    ck_assert_int_eq(skv_client_call(NULL, SKV_PROTO_SESSION_SHOW, &sid, &ack,
                                     &e), SKV_EINVAL);
    skv_proto_session_show_reply r;
    ck_assert_int_eq(skv_client_show(c, &r, "", &e), SKV_EINVAL);
    /* a body the encoder refuses (no image) fails before sending */
    skv_proto_session_submit sub = {0};
    skv_proto_session_ref ref;
    ck_assert_int_eq(skv_client_submit(c, &ref, &sub, &e), SKV_EINVAL);
    SKV_CK_OK(skv_client_show(c, &r, "s-ok", &e), &e);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    skv_client_free(c);
    skv_client_free(NULL);
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_requests, 1);
}
END_TEST

static int try_connect(const char *endpoint, const char *ak, const char *sk,
                       unsigned version, skv_error *e)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.version = version;
    o.endpoint = endpoint;
    o.access_key = ak;
    o.secret_key = sk;
    o.timeout_ms = 2000;
    skv_client *c = (skv_client *)&o;   /* must stay untouched on failure */
    int rc = skv_client_connect(&c, &o, e);
    ck_assert_ptr_eq(c, (skv_client *)&o);
    return rc;
}

START_TEST(test_connect_errors)
{
    skv_error e = SKV_ERROR_INIT;
    const unsigned V = SKV_CLIENT_OPTIONS_VERSION;
    ck_assert_int_eq(try_connect("unix:/x", FAKE_AK, FAKE_SK, 99, &e),
                     SKV_EVERSION);
    ck_assert_int_eq(try_connect(NULL, FAKE_AK, FAKE_SK, V, &e), SKV_EINVAL);
    ck_assert_int_eq(try_connect("unix:/x", "bad key!", FAKE_SK, V, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(try_connect("unix:/x", FAKE_AK, "short", V, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(try_connect("unix:/x", FAKE_AK, NULL, V, &e), SKV_EINVAL);
    const char *bad[] = {"nohost", "host:0", "host:65536", "host:", ":80",
                         "host:8x", "unix:", "tcp:", "[::1", "[::1]80",
                         "::1:80", "host:-1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(try_connect(bad[i], FAKE_AK, FAKE_SK, V, &e) ==
                      SKV_EINVAL, "endpoint '%s' accepted", bad[i]);
    char longp[200];
    memset(longp, 'a', sizeof longp);
    memcpy(longp, "unix:/", 6);
    longp[sizeof longp - 1] = 0;
    ck_assert_int_eq(try_connect(longp, FAKE_AK, FAKE_SK, V, &e), SKV_ERANGE);
    ck_assert_int_eq(try_connect("unix:/nonexistent/skv.sock", FAKE_AK,
                                 FAKE_SK, V, &e), SKV_ESYS);
    ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/skv.sock"));
    ck_assert_int_eq(try_connect("no-such-host.invalid:5020", FAKE_AK,
                                 FAKE_SK, V, &e), SKV_ENOENT);
}
END_TEST

/* The TCP path: a listener on an ephemeral loopback port. */
START_TEST(test_tcp_endpoint)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof sin), 0);
    ck_assert_int_eq(listen(lfd, 4), 0);
    socklen_t sl = sizeof sin;
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &sl), 0);
    static int mode = MODE_OK;
    fake_mgr m;
    fake_mgr_start(&m, mode_handler, &mode);
    /* serve the TCP listener with the fake manager's thread instead */
    shutdown(m.lfd, SHUT_RDWR);
    pthread_join(m.th, NULL);
    close(m.lfd);
    m.lfd = lfd;
    ck_assert_int_eq(pthread_create(&m.th, NULL, fake_mgr_thread, &m), 0);
    char ep[64];
    const char *forms[] = {"tcp:127.0.0.1:%d", "127.0.0.1:%d", "localhost:%d"};
    for (int i = 0; i < 3; i++) {
        snprintf(ep, sizeof ep, forms[i], ntohs(sin.sin_port));
        skv_client *c = connect_to(ep, 0);
        skv_error e = SKV_ERROR_INIT;
        skv_proto_session_show_reply r;
        SKV_CK_OK(skv_client_show(c, &r, "s-tcp", &e), &e);
        ck_assert_str_eq(r.session.session_id, "s-tcp");
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        skv_client_free(c);
    }
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_conns, 3);
}
END_TEST

static void write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    ck_assert_int_eq(chmod(path, mode), 0);
}

START_TEST(test_keyfile)
{
    char dir[96];
    snprintf(dir, sizeof dir, "%s/kXXXXXX", fake_mgr_base);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/key", dir);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_error e = SKV_ERROR_INIT;
    write_file(path, "# admin\n\naccess_key=" FAKE_AK "\r\nsecret_key="
               FAKE_SK "\n", 0600);
    SKV_CK_OK(skv_client_read_keyfile(ak, sk, path, &e), &e);
    ck_assert_str_eq(ak, FAKE_AK);
    ck_assert_str_eq(sk, FAKE_SK);
    write_file(path, "secret_key=" FAKE_SK "\naccess_key=" FAKE_AK, 0400);
    SKV_CK_OK(skv_client_read_keyfile(ak, sk, path, &e), &e);
    struct { const char *text; mode_t mode; int rc; const char *msg; } bad[] = {
        {"access_key=" FAKE_AK "\nsecret_key=" FAKE_SK "\n", 0644, SKV_EPERM,
         "chmod 600"},
        {"access_key=" FAKE_AK "\nsecret_key=" FAKE_SK "\n", 0660, SKV_EPERM,
         "group"},
        {"access_key=" FAKE_AK "\n", 0600, SKV_EINVAL, "secret_key"},
        {"secret_key=" FAKE_SK "\n", 0600, SKV_EINVAL, "access_key"},
        {"access_key=" FAKE_AK "\nsecret_key=" FAKE_SK "\nuser=x\n", 0600,
         SKV_EINVAL, ":3: unknown key"},
        {"access_key=" FAKE_AK "\naccess_key=" FAKE_AK "\n", 0600, SKV_EINVAL,
         "twice"},
        {"access_key=bad key\nsecret_key=" FAKE_SK "\n", 0600, SKV_EINVAL,
         ":1:"},
        {"access_key=" FAKE_AK "\nsecret_key=short\n", 0600, SKV_EINVAL,
         ":2:"},
        {"access_key " FAKE_AK "\n", 0600, SKV_EINVAL, "key=value"},
        {"", 0600, SKV_EINVAL, "access_key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(path, bad[i].text, bad[i].mode);
        strcpy(ak, "untouched");
        ck_assert_int_eq(skv_client_read_keyfile(ak, sk, path, &e), bad[i].rc);
        ck_assert_msg(strstr(e.message, bad[i].msg), "case %zu: '%s'", i,
                      e.message);
        ck_assert_str_eq(ak, "untouched");
    }
    unlink(path);
    ck_assert_int_eq(skv_client_read_keyfile(ak, sk, path, &e), SKV_ESYS);
    ck_assert_int_eq(skv_client_read_keyfile(ak, sk, dir, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_client_read_keyfile(NULL, sk, path, &e), SKV_EINVAL);
    rmdir(dir);
}
END_TEST

Suite *skv_test_suite_client(void);
Suite *skv_test_suite_client(void)
{
    Suite *s = suite_create("client");
    TCase *tc = tcase_create("client");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_calls_signed_and_answered);
    tcase_add_test(tc, test_wrong_secret_refused);
    tcase_add_test(tc, test_error_reply);
    tcase_add_test(tc, test_timeout_then_stale_skipped);
    tcase_add_test(tc, test_malformed_responses);
    tcase_add_test(tc, test_call_arguments);
    tcase_add_test(tc, test_connect_errors);
    tcase_add_test(tc, test_tcp_endpoint);
    tcase_add_test(tc, test_keyfile);
    tcase_add_unchecked_fixture(tc, fake_mgr_base_setup,
                                fake_mgr_base_teardown);
    suite_add_tcase(s, tc);
    return s;
}
