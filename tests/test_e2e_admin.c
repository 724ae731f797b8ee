/* Admin changes made with the `sokovan` CLI count on the very next
 * session.submit to the real manager, with no wait in between: the
 * manager answers the submit path's admin questions from memory
 * (store/admin_cache.h) and must forget them at every admin change.
 *
 * Needs root, /bin/busybox and the daemons and the CLI in <build>/bin
 * (make progs); otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include "e2e_cli_fixture.h"

/* A batch session of the admin in project (NULL: "default") on the
 * default group: the manager's code, its message in e. */
static int submit(skv_client *cl, const char *project, skv_error *e)
{
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=0.1,mem=16m", NULL, e), e);
    char *cmd[] = {"true"};
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.session_type = "batch";
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 1;
    s.kernels = &k;
    s.n_kernels = 1;
    s.project = (char *)project;
    skv_proto_session_ref ref = {0};
    skv_error_clear(e);
    int rc = skv_client_submit(cl, &ref, &s, e);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
    return rc;
}

/* Accepted twice (the second time from the manager's memory). */
static void accepted(skv_client *cl, const char *project)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(submit(cl, project, &e), &e);
    SKV_CK_OK(submit(cl, project, &e), &e);
}

static void refused(skv_client *cl, const char *project, int rc,
                    const char *what)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(submit(cl, project, &e), rc);
    ck_assert_msg(strstr(e.message, what), "'%s' lacks '%s'", e.message,
                  what);
}

/* Group deactivated, session types narrowed, project membership taken
 * away, project deactivated: each refuses the next submission at once,
 * and undoing it lets the next one through. */
START_TEST(test_e2e_admin_next_submit)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    cli_run r;
    accepted(cl, NULL);
    CLI_OK(&r, "admin", "group", "update", "default", "--inactive");
    refused(cl, NULL, SKV_EPERM, "resource group 'default' is deactivated");
    CLI_OK(&r, "admin", "group", "update", "default", "--active");
    accepted(cl, NULL);
    CLI_OK(&r, "admin", "group", "update", "default", "--session-type",
           "inference");
    refused(cl, NULL, SKV_EPERM, "does not allow batch sessions");
    CLI_OK(&r, "admin", "group", "update", "default", "--session-type",
           "batch");
    accepted(cl, NULL);
    CLI_OK(&r, "admin", "project", "create", "p1", "--domain", "default");
    CLI_OK(&r, "admin", "project", "create", "p2", "--domain", "default");
    CLI_OK(&r, "admin", "user", "update", "admin", "--project", "p1");
    accepted(cl, "p1");
    CLI_OK(&r, "admin", "user", "update", "admin", "--project", "p2");
    refused(cl, "p1", SKV_EPERM, "not a member of project 'p1'");
    accepted(cl, "p2");
    CLI_OK(&r, "admin", "project", "update", "p2", "--inactive");
    refused(cl, "p2", SKV_EPERM, "project 'p2' is deactivated");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_admin(void);
Suite *skv_test_suite_e2e_admin(void)
{
    Suite *s = suite_create("e2e_admin");
    TCase *tc = tcase_create("admin_next_submit");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_e2e_admin_next_submit);
    suite_add_tcase(s, tc);
    return s;
}
