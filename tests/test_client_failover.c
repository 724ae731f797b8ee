/* The client's list of manager endpoints against in-process fake managers:
 * connect skips a dead entry, a standby's answer and a lost connection move
 * the client on (options v3 failover_ms), and a request is sent again only
 * when that is safe (reads, a submission with a client token).
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake_mgr.h"
#include "skv_test.h"
#include "sokovan/client.h"

/* What a standby manager says to everything. */
static int standby_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    (void)m;
    return fake_mgr_error(fd, env->request_id, SKV_ESTATE,
                          "standby: this manager is not the leader");
}

/* A leader: answers show and submit; hangs up on what payload names
 * (the connection is lost with the request unanswered). */
static int leader_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    const skv_proto_type *drop = m->payload;
    if (drop && *drop == env->type)
        return -1;
    if (env->type == SKV_PROTO_SESSION_SHOW) {
        skv_proto_session_show_reply r = {0};
        r.session.session_id = "s-1";
        r.session.status = "RUNNING";
        return fake_mgr_reply(fd, env->request_id,
                              SKV_PROTO_SESSION_SHOW_REPLY, &r);
    }
    skv_proto_session_ref ref = {"s-1", "PENDING"};
    return fake_mgr_reply(fd, env->request_id,
                          skv_proto_type_reply(env->type), &ref);
}

static int open_list(skv_client **c, const char *list, int failover_ms,
                     skv_error *e)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = list;
    o.access_key = FAKE_AK;
    o.secret_key = FAKE_SK;
    o.timeout_ms = 5000;
    o.failover_ms = failover_ms;
    return skv_client_connect(c, &o, e);
}

static int show(skv_client *c, skv_error *e)
{
    skv_proto_session_show_reply r;
    int rc = skv_client_show(c, &r, "s-1", e);
    if (!rc)
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    return rc;
}

static int submit(skv_client *c, const char *token, skv_error *e)
{
    char *cmd[] = {"true"};
    skv_proto_session_submit s = {0};
    s.session_type = "batch";
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 1;
    s.client_token = (char *)token;
    skv_proto_session_ref ref = {0};
    int rc = skv_client_submit(c, &ref, &s, e);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    return rc;
}

/* A dead first entry is skipped at connect. */
START_TEST(test_list_skips_dead_entry)
{
    fake_mgr lead;
    fake_mgr_start(&lead, leader_handler, NULL);
    char list[512];
    snprintf(list, sizeof list, "unix:%s/gone.sock,%s", lead.dir,
             lead.endpoint);
    skv_client *c = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(open_list(&c, list, 0, &e), &e);
    SKV_CK_OK(show(c, &e), &e);
    skv_client_free(c);
    fake_mgr_stop(&lead);
    ck_assert_int_eq(lead.n_requests, 1);
    /* every entry dead: one error naming them all */
    snprintf(list, sizeof list, "unix:/nonexistent-a.sock,"
             "unix:/nonexistent-b.sock");
    ck_assert_int_lt(open_list(&c, list, 0, &e), 0);
    ck_assert_ptr_nonnull(strstr(e.message, "no manager reachable"));
    ck_assert_ptr_nonnull(strstr(e.message, "nonexistent-b"));
}
END_TEST

/* A standby's answer moves the client to the leader, which answers; with
 * failover off the caller sees the standby's answer. */
START_TEST(test_standby_answer_fails_over)
{
    fake_mgr sb, lead;
    fake_mgr_start(&sb, standby_handler, NULL);
    fake_mgr_start(&lead, leader_handler, NULL);
    char list[512];
    snprintf(list, sizeof list, "%s,%s", sb.endpoint, lead.endpoint);
    skv_client *c = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(open_list(&c, list, 0, &e), &e);
    ck_assert_int_eq(show(c, &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "standby"));
    skv_client_free(c);
    SKV_CK_OK(open_list(&c, list, 3000, &e), &e);
    SKV_CK_OK(show(c, &e), &e);
    SKV_CK_OK(show(c, &e), &e);           /* stays on the leader */
    skv_client_free(c);
    fake_mgr_stop(&sb);
    fake_mgr_stop(&lead);
    ck_assert_int_eq(sb.n_requests, 2);
    ck_assert_int_eq(lead.n_requests, 2);
}
END_TEST

/* The leader hangs up on a submission: with a client token it is sent
 * again to the next manager; without one the caller hears the outcome is
 * unknown and nothing is resent. */
START_TEST(test_lost_submit_resent_only_with_token)
{
    static const skv_proto_type drop = SKV_PROTO_SESSION_SUBMIT;
    fake_mgr m1, m2;
    fake_mgr_start(&m1, leader_handler, (void *)&drop);
    fake_mgr_start(&m2, leader_handler, NULL);
    char list[512];
    snprintf(list, sizeof list, "%s,%s", m1.endpoint, m2.endpoint);
    skv_client *c = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(open_list(&c, list, 3000, &e), &e);
    SKV_CK_OK(submit(c, "tok-1", &e), &e);
    ck_assert_int_eq(m2.n_requests, 1);
    skv_client_free(c);
    SKV_CK_OK(open_list(&c, list, 3000, &e), &e);
    ck_assert_int_eq(submit(c, NULL, &e), SKV_EIO);
    ck_assert_ptr_nonnull(strstr(e.message, "may or may not"));
    ck_assert_int_eq(m2.n_requests, 1);   /* not resent */
    SKV_CK_OK(show(c, &e), &e);           /* but the client is on m2 now */
    ck_assert_int_eq(m2.n_requests, 2);
    skv_client_free(c);
    fake_mgr_stop(&m1);
    fake_mgr_stop(&m2);
    ck_assert_int_eq(m1.n_requests, 2);
}
END_TEST

/* A standby applied nothing: even a submission without a client token
 * (not safe to resend after a lost connection) goes on to the leader. */
START_TEST(test_standby_answer_resends_anything)
{
    fake_mgr sb, lead;
    fake_mgr_start(&sb, standby_handler, NULL);
    fake_mgr_start(&lead, leader_handler, NULL);
    char list[512];
    snprintf(list, sizeof list, "%s,%s", sb.endpoint, lead.endpoint);
    skv_client *c = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(open_list(&c, list, 3000, &e), &e);
    SKV_CK_OK(submit(c, NULL, &e), &e);
    skv_client_free(c);
    fake_mgr_stop(&sb);
    fake_mgr_stop(&lead);
    ck_assert_int_eq(sb.n_requests, 1);
    ck_assert_int_eq(lead.n_requests, 1);
}
END_TEST

/* The CLI with a list: `sokovan run` meets a standby first and lands on
 * the leader (its submission carries a client token). */
START_TEST(test_cli_list_reaches_leader)
{
    char bin[PATH_MAX], cmd[PATH_MAX + 1024], out[512];
    snprintf(bin, sizeof bin, "%s/bin/sokovan", skv_test_build_dir());
    if (access(bin, X_OK) != 0) {
        fprintf(stderr, "test_cli_list_reaches_leader: SKIP: no %s\n", bin);
        return;
    }
    fake_mgr sb, lead;
    fake_mgr_start(&sb, standby_handler, NULL);
    fake_mgr_start(&lead, leader_handler, NULL);
    snprintf(cmd, sizeof cmd, "SOKOVAN_ACCESS_KEY=%s SOKOVAN_SECRET_KEY=%s "
             "%s --endpoint '%s,%s' run busybox true 2>&1; echo rc=$?",
             FAKE_AK, FAKE_SK, bin, sb.endpoint, lead.endpoint);
    skv_test_sh_output(cmd, out, sizeof out);
    fake_mgr_stop(&sb);
    fake_mgr_stop(&lead);
    ck_assert_msg(!strcmp(out, "s-1\nrc=0\n"), "%s", out);
    ck_assert_int_eq(sb.n_requests, 1);
    ck_assert_int_eq(lead.n_requests, 1);
}
END_TEST

/* Typos in the list and a negative failover time are refused. */
START_TEST(test_bad_lists_refused)
{
    skv_client *c = NULL;
    skv_error e = SKV_ERROR_INIT;
    const char *bad[] = {"unix:/a,,unix:/b", "unix:/a,", ",unix:/a",
                         "unix:/a,tls:/b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(open_list(&c, bad[i], 0, &e), SKV_EINVAL);
        ck_assert_ptr_null(c);
    }
    ck_assert_int_eq(open_list(&c, "unix:/a", -1, &e), SKV_EINVAL);
    char many[1024] = "";
    for (int i = 0; i < 17; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%sunix:/m%d",
                 i ? "," : "", i);
    ck_assert_int_eq(open_list(&c, many, 0, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "more than 16"));
}
END_TEST

Suite *skv_test_suite_client_failover(void);
Suite *skv_test_suite_client_failover(void)
{
    Suite *s = suite_create("client_failover");
    TCase *tc = tcase_create("client_failover");
    tcase_add_test(tc, test_list_skips_dead_entry);
    tcase_add_test(tc, test_standby_answer_fails_over);
    tcase_add_test(tc, test_standby_answer_resends_anything);
    tcase_add_test(tc, test_lost_submit_resent_only_with_token);
    tcase_add_test(tc, test_bad_lists_refused);
    tcase_add_test(tc, test_cli_list_reaches_leader);
    suite_add_tcase(s, tc);
    return s;
}
