/* Service declarations (skv_proto_service_parse): what session.submit,
 * the CLI's --service and the app proxy accept, and the errors they give.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skv_test.h"

START_TEST(test_service_parse_good)
{
    static const struct {
        const char *in, *name, *proto;
        uint32_t port;
    } ok[] = {
        {"jupyter=8888/http", "jupyter", "http", 8888},
        {"tensorboard=6006", "tensorboard", "http", 6006},
        {"ssh=2200/tcp", "ssh", "tcp", 2200},
        {"jupyter=8888/prefix", "jupyter", "prefix", 8888},
        {"a=1", "a", "http", 1},
        {"x_y-2=65535/tcp", "x_y-2", "tcp", 65535},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8];
        uint32_t port = 0;
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_proto_service_parse(ok[i].in, name, &port, proto, &e),
                  &e);
        ck_assert_str_eq(name, ok[i].name);
        ck_assert_str_eq(proto, ok[i].proto);
        ck_assert_uint_eq(port, ok[i].port);
    }
}
END_TEST

START_TEST(test_service_parse_bad)
{
    static const struct {
        const char *in, *why;
    } bad[] = {
        {"", "NAME=PORT"},
        {"web", "NAME=PORT"},
        {"=80", "NAME=PORT"},
        {"Web=80", "NAME=PORT"},
        {"1web=80", "NAME=PORT"},
        {"we b=80", "NAME=PORT"},
        {"we/b=80", "NAME=PORT"},
        {"abcdefghijklmnopqrstuvwxyz012345=80", "NAME=PORT"},
        {"web=", "1..65535"},
        {"web=0", "1..65535"},
        {"web=65536", "1..65535"},
        {"web=-1", "1..65535"},
        {"web=80x", "1..65535"},
        {"web=123456", "1..65535"},
        {"web=80/", "http or tcp"},
        {"web=80/udp", "http or tcp"},
        {"web=80/HTTP", "http or tcp"},
        {"web=80/http/x", "http or tcp"},
        {"web=80/prefix/", "http or tcp, or prefix"},
        {"web=80/prefi", "http or tcp, or prefix"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char name[SKV_PROTO_SERVICE_NAME_MAX] = "", proto[8] = "";
        uint32_t port = 7;
        skv_error e = SKV_ERROR_INIT;
        int rc = skv_proto_service_parse(bad[i].in, name, &port, proto, &e);
        ck_assert_msg(rc == SKV_EINVAL && strstr(e.message, bad[i].why),
                      "'%s': %s %s", bad[i].in, skv_err_name(rc), e.message);
        ck_assert_str_eq(name, "");   /* nothing written on failure */
        ck_assert_str_eq(proto, "");
    }
    uint32_t port;
    char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8];
    ck_assert_int_eq(skv_proto_service_parse(NULL, name, &port, proto, NULL),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_proto_service_parse("a=1", NULL, &port, proto, NULL),
                     SKV_EINVAL);
}
END_TEST

/* The services travel in session.submit and session.show bodies: an
 * over-long list or name is refused by the decoder. */
START_TEST(test_service_wire_bounds)
{
    skv_proto_session_submit s = {0};
    char *many[65];
    for (int i = 0; i < 65; i++)
        many[i] = "a=1";
    s.image = "busybox";
    s.services = many;
    s.n_services = 65;
    void *buf = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SUBMIT, &s,
                                   &e);
    if (rc == 0) {
        skv_proto_session_submit out = {0};
        rc = skv_proto_body_decode(&out, SKV_PROTO_SESSION_SUBMIT, buf, len,
                                   &e);
        skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &out);
    }
    skv_free(buf);
    ck_assert_msg(rc != 0, "65 services went through");
    s.n_services = 64;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SUBMIT, &s,
                                    &e), &e);
    skv_proto_session_submit out = {0};
    SKV_CK_OK(skv_proto_body_decode(&out, SKV_PROTO_SESSION_SUBMIT, buf, len,
                                    &e), &e);
    ck_assert_uint_eq(out.n_services, 64);
    ck_assert_str_eq(out.services[63], "a=1");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &out);
    skv_free(buf);
}
END_TEST

/* sokovan-proxy's command line: help, bad values (exit 2), a key file
 * it cannot read (exit 1), each with the reason on stderr. */
static int prog(const char *args, char *out, size_t cap)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/bin/sokovan-proxy %s 2>&1",
             skv_test_build_dir(), args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

START_TEST(test_proxy_flags)
{
    char out[8192], path[1024];
    snprintf(path, sizeof path, "%s/bin/sokovan-proxy", skv_test_build_dir());
    if (access(path, X_OK)) {
        fprintf(stderr, "%s: skipped: needs %s (make progs)\n", __func__,
                path);
        return;
    }
    ck_assert_int_eq(prog("--help", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "--listen") && strstr(out, "--cache-ms") &&
                  strstr(out, "--tls-cert"), "%s", out);
    ck_assert_int_eq(prog("--cache-ms x", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--cache-ms"), "%s", out);
    ck_assert_int_eq(prog("--tls-cert /x.pem", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "set both tls_cert and tls_key"), "%s", out);
    ck_assert_int_eq(prog("--listen none", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "listen is disabled"), "%s", out);
    ck_assert_int_eq(prog("--key-file /nonexistent/key --listen "
                          "127.0.0.1:1", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "key_file /nonexistent/key"), "%s", out);
}
END_TEST

Suite *skv_test_suite_app(void);
Suite *skv_test_suite_app(void)
{
    Suite *s = suite_create("app");
    TCase *tc = tcase_create("service");
    tcase_add_test(tc, test_service_parse_good);
    tcase_add_test(tc, test_service_parse_bad);
    tcase_add_test(tc, test_service_wire_bounds);
    tcase_add_test(tc, test_proxy_flags);
    suite_add_tcase(s, tc);
    return s;
}
