/* The quota tree through the real daemons and the `sokovan` CLI: project
 * A is guaranteed the 4 mock GPUs of the only agent and is idle; project
 * B borrows all four with preemptible sessions; `admin quota tree` shows
 * what B borrows and A lends; A submits and B's sessions are reclaimed
 * (requeued, "reclaiming borrowed capacity"), A runs, B's sessions run
 * again to completion and nothing stays charged. The quota is set before
 * a manager restart, so the restore path is what puts it in the scheduler.
 *
 * Needs root, /bin/busybox and the daemons and the CLI in <build>/bin
 * (make progs); otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include "e2e_cli_fixture.h"

/* ---- sessions ------------------------------------------------------------ */

/* One 1-kernel batch session of `owner` in `project`, submitted by the
 * admin on their behalf. */
static void submit(skv_client *cl, char *sid, const char *owner,
                   const char *project, const char *slots, bool preemptible,
                   const char *script)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, slots, NULL, &e), &e);
    char *cmd[] = {"sh", "-c", (char *)script};
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.owner = (char *)owner;
    s.project = (char *)project;
    s.session_type = "batch";
    s.cluster_mode = "single-node";
    s.cluster_size = 1;
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 3;
    s.kernels = &k;
    s.n_kernels = 1;
    s.preemptible = preemptible;
    skv_proto_session_ref ref = {0};
    SKV_CK_OK(skv_client_submit(cl, &ref, &s, &e), &e);
    snprintf(sid, E2E_ID_MAX, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
}

/* The quota tree node of `scope name` in group default (NULL: none). */
static const skv_proto_quota_node *node(
    const skv_proto_admin_quota_tree_reply *t, const char *scope,
    const char *name)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!strcmp(t->nodes[i].scope, scope) &&
            !strcmp(t->nodes[i].name, name))
            return &t->nodes[i];
    return NULL;
}

static skv_qty gpus(const skv_slots *v)
{
    return v ? skv_slots_get(v, "cuda.device") : 0;
}

static void tree(skv_client *cl, skv_proto_admin_quota_tree_reply *t)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_quota_tree rq = {"default"};
    memset(t, 0, sizeof *t);
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_ADMIN_QUOTA_TREE, &rq, t, &e), &e);
}

/* ---- the setup through the CLI -------------------------------------------- */

static void admin_setup(void)
{
    cli_run r;
    /* preemption needs the scheduler that orders by priority: set while
     * the group is empty */
    CLI_OK(&r, "admin", "group", "update", "default", "--scheduler",
           "priority");
    CLI_OK(&r, "admin", "group", "update", "default", "--preemption", "on",
           "--min-runtime", "0");
    CLI_OK(&r, "admin", "project", "create", "pa");
    CLI_OK(&r, "admin", "project", "create", "pb");
    CLI_OK(&r, "admin", "user", "create", "ua", "--project", "pa");
    CLI_OK(&r, "admin", "user", "create", "ub", "--project", "pb");
    /* bad input is refused and changes nothing */
    cli(&r, ARGS("admin", "project", "update", "pa", "--guaranteed",
                 "cuda.device=4", "--description", "x"));
    ck_assert_msg(r.status == 2 && strstr(r.err, "alone"), "%d %s", r.status,
                  r.err);
    cli(&r, ARGS("admin", "project", "update", "nope", "--guaranteed",
                 "cuda.device=4"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "project 'nope' does not "
                  "exist"), "%d %s", r.status, r.err);
    cli(&r, ARGS("admin", "project", "update", "pa", "--quota-rg", "nogroup",
                 "--guaranteed", "cuda.device=4"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "nogroup"), "%d %s",
                  r.status, r.err);
    cli(&r, ARGS("admin", "project", "update", "pa", "--guaranteed",
                 "cuda.device=8", "--limit", "cuda.device=4"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "above its limit"), "%d %s",
                  r.status, r.err);
    cli(&r, ARGS("admin", "project", "update", "pa", "--guaranteed", "cu=da"));
    ck_assert_msg(r.status == 2, "%d %s", r.status, r.err);
    CLI_OK(&r, "admin", "quota", "list");
    ck_assert_msg(!strstr(r.out, "pa"), "%s", r.out);
    /* the real one */
    CLI_OK(&r, "admin", "project", "update", "pa", "--guaranteed",
           "cuda.device=4");
    ck_assert_msg(strstr(r.out, "cuda.device=4"), "%s", r.out);
    /* an owner holding a quota is not deleted */
    CLI_OK(&r, "admin", "project", "create", "pc");
    CLI_OK(&r, "admin", "project", "update", "pc", "--limit", "cpu=1");
    cli(&r, ARGS("admin", "project", "delete", "pc"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "has a quota"), "%d %s",
                  r.status, r.err);
    CLI_OK(&r, "admin", "project", "update", "pc", "--no-quota");
    CLI_OK(&r, "admin", "project", "delete", "pc");
    CLI_OK(&r, "--json", "admin", "quota", "list", "--scope", "project");
    ck_assert_msg(strstr(r.out, "\"owner\":\"pa\"") ||
                  strstr(r.out, "\"owner\": \"pa\""), "%s", r.out);
}

/* kill -9 the manager and start it again: the quota comes back from the
 * database (the restore path), not from anything the old process did. */
static skv_client *restart(skv_client *cl)
{
    skv_client_free(cl);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    E2E_OK(e2e_start_manager(&g, "a1"));
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    return cl;
}

START_TEST(test_e2e_quota_reclaim)
{
    REQUIRE();
    snprintf(g.agent_plugins[0], sizeof g.agent_plugins[0], "%s",
             "cpu;mem;mock:count=4,prefix=cuda");
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    admin_setup();
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    cl = restart(cl);
    /* B borrows A's idle guarantee: all four GPUs */
    char b[4][E2E_ID_MAX], a[2][E2E_ID_MAX];
    for (int i = 0; i < 4; i++) {
        submit(cl, b[i], "ub", "pb", "cpu=0.1,mem=16m,cuda.device=1", true,
               "sleep 20; echo b");
        E2E_OK(e2e_wait_running(&g, cl, b[i], 60000));
    }
    skv_proto_admin_quota_tree_reply t;
    tree(cl, &t);
    const skv_proto_quota_node *na = node(&t, "project", "pa");
    const skv_proto_quota_node *nb = node(&t, "project", "pb");
    ck_assert_ptr_nonnull(na);
    ck_assert_ptr_nonnull(nb);
    ck_assert_int_eq(gpus(na->guaranteed), 4000);
    ck_assert_int_eq(gpus(na->used), 0);
    ck_assert_int_eq(gpus(na->lent), 4000);
    ck_assert_int_eq(gpus(nb->used), 4000);
    ck_assert_int_eq(gpus(nb->borrowed), 4000);
    ck_assert_ptr_nonnull(node(&t, "user", "ub"));
    ck_assert_ptr_nonnull(node(&t, "domain", "default"));
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, &t);
    cli_run r;
    CLI_OK(&r, "admin", "quota", "tree", "--rg", "default");
    ck_assert_msg(strstr(r.out, "project pa") && strstr(r.out, "LENT"), "%s",
                  r.out);
    /* A wants its guarantee: B's sessions are reclaimed, A runs */
    int64_t t0 = e2e_now_ms();
    submit(cl, a[0], "ua", "pa", "cpu=0.1,mem=16m,cuda.device=2", false,
           "echo a");
    submit(cl, a[1], "ua", "pa", "cpu=0.1,mem=16m,cuda.device=2", false,
           "echo a");
    skv_proto_session_show_reply sh;
    for (int i = 0; i < 2; i++) {
        E2E_OK(e2e_wait_final(&g, cl, a[i], 60000, &sh));
        ck_assert_msg(!strcmp(sh.session.status, "TERMINATED") &&
                      sh.session.exit_code == 0, "%s %s", a[i],
                      sh.session.status);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    }
    /* well before B's sessions would have ended by themselves */
    ck_assert_int_lt(e2e_now_ms() - t0, 18000);
    char want[2][E2E_ID_MAX + 64];
    for (int i = 0; i < 2; i++)
        snprintf(want[i], sizeof want[i], "preempted for %s (reclaiming "
                 "borrowed capacity)", a[i]);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(history_has(cl, b[i], want[0]) ||
                      history_has(cl, b[i], want[1]), "%s not reclaimed",
                      b[i]);
    /* B's sessions run again to completion */
    for (int i = 0; i < 4; i++) {
        E2E_OK(e2e_wait_final(&g, cl, b[i], 120000, &sh));
        ck_assert_msg(!strcmp(sh.session.status, "TERMINATED") &&
                      sh.session.exit_code == 0, "%s %s %d", b[i],
                      sh.session.status, (int)sh.session.exit_code);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    }
    /* nothing stays charged; the agent has every GPU back */
    tree(cl, &t);
    for (size_t i = 0; i < t.n_nodes; i++)
        ck_assert_msg(skv_slots_is_zero(t.nodes[i].used), "%s %s still uses",
                      t.nodes[i].scope, t.nodes[i].name);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, &t);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_agent_list al = {0};
    skv_proto_agent_list_reply ar = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &al, &ar, &e), &e);
    ck_assert_uint_eq(ar.n_agents, 1);
    ck_assert_int_eq(gpus(ar.agents[0].occupied), 0);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &ar);
    /* the quota goes: listed no more, the scheduler forgets it too */
    CLI_OK(&r, "admin", "project", "update", "pa", "--no-quota");
    CLI_OK(&r, "admin", "quota", "list");
    ck_assert_msg(!strstr(r.out, "pa"), "%s", r.out);
    tree(cl, &t);
    ck_assert_ptr_null(node(&t, "project", "pa"));
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, &t);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

Suite *skv_test_suite_e2e_quota(void);
Suite *skv_test_suite_e2e_quota(void)
{
    Suite *s = suite_create("e2e_quota");
    TCase *tc = tcase_create("quota_reclaim");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_e2e_quota_reclaim);
    suite_add_tcase(s, tc);
    return s;
}
