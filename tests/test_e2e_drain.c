/* Drain, cordon and device health through the real daemons and the CLI:
 *   cordon_drain        `sokovan admin agent cordon` keeps new sessions off
 *                       an agent (also across a manager restart); `drain`
 *                       requeues its batch session after the group's
 *                       grace period, which then finishes on the other
 *                       agent; `uncordon` takes work again.
 *   device_fault        a fault injected into GPU 1 of a1 (the mock
 *                       plugin's faults file) requeues the batch session
 *                       using it, which lands on a2 and finishes; a1's
 *                       capacity shows one GPU fewer; clearing the fault
 *                       restores it.
 *   fault_restart       a fault recorded, the manager killed -9 and started
 *                       again while the agent is held back: the capacity
 *                       still lacks the GPU (from the store), a session
 *                       needing it is not placed when the agent returns
 *                       still faulty; a GPU that recovered while the
 *                       manager was down is back once the agent says so.
 *   unenforced_shares   a fractional GPU on an agent that cannot enforce
 *                       shares is refused with a clear error unless the
 *                       group allows it (--allow-unenforced-fractions).
 *
 * Needs root, /bin/busybox and the daemons and the CLI in <build>/bin
 * (make progs); otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include "e2e_cli_fixture.h"

/* The agent.list entry of id (freed by the caller with the reply). */
static const skv_proto_agent_info *agent_of(skv_client *cl,
                                            skv_proto_agent_list_reply *rep,
                                            const char *id)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_agent_list q = {0};
    memset(rep, 0, sizeof *rep);
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &q, rep, &e), &e);
    for (size_t i = 0; i < rep->n_agents; i++)
        if (!strcmp(rep->agents[i].agent_id, id))
            return &rep->agents[i];
    ck_abort_msg("agent %s not listed", id);
    return NULL;
}

/* The agent kernel 0 of sid is on ("" when unplaced). */
static void kernel_agent(skv_client *cl, const char *sid, char *out,
                         size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply sh = {0};
    SKV_CK_OK(skv_client_show(cl, &sh, sid, &e), &e);
    snprintf(out, cap, "%s", sh.session.n_kernels &&
             sh.session.kernels[0].agent_id ? sh.session.kernels[0].agent_id
                                            : "");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
}

/* Wait until the `sokovan agents` line of id contains text. */
static bool agents_line_has(const char *id, const char *text, int ms)
{
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        cli_run r;
        cli(&r, ARGS("agents"));
        ck_assert_msg(r.status == 0, "agents: exit %d: %s", r.status, r.err);
        const char *at = strstr(r.out, id);
        char line[1024] = "";
        if (at)
            snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
        if (strstr(line, text))
            return true;
        e2e_sleep_ms(100);
    }
    return false;
}

static bool wait_history(skv_client *cl, const char *sid, const char *text,
                         int ms)
{
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        if (history_has(cl, sid, text))
            return true;
        e2e_sleep_ms(50);
    }
    return false;
}

static void expect_done(skv_client *cl, const char *sid)
{
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, &sh));
    ck_assert_msg(!strcmp(sh.session.status, "TERMINATED") &&
                  sh.session.exit_code == 0, "%s: %s %d %s", sid,
                  sh.session.status, (int)sh.session.exit_code,
                  sh.session.status_reason ? sh.session.status_reason : "");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
}

static void two_gpu_agents(const char *faults_a1)
{
    for (int i = 0; i < 2; i++)
        snprintf(g.agent_plugins[i], sizeof g.agent_plugins[i], "%s%s%s",
                 "cpu;mem;mock:count=2,prefix=cuda",
                 i == 0 && faults_a1 ? ",faults=" : "",
                 i == 0 && faults_a1 ? faults_a1 : "");
    snprintf(g.agent_cpus[1], sizeof g.agent_cpus[1], "%s", "1");
}

/* A batch command that ends well only on the agent whose CPU slice is
 * CPU N (a1: 0, a2: 1) and runs on elsewhere: the session must be moved
 * there to finish, however slow the machine is. */
#define ON_CPU(n)                                                             \
    "grep -q '^Cpus_allowed_list:[[:space:]]*" n "$' /proc/self/status && "  \
    "echo ok || sleep 600"

/* ---- cordon, drain, uncordon --------------------------------------------- */

START_TEST(test_e2e_drain_cordon_drain)
{
    REQUIRE();
    two_gpu_agents(NULL);
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    cli_run r;
    cli(&r, ARGS("admin", "group", "update", "default", "--drain-action",
                 "evict"));
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "update", "default", "--drain-grace", "1s",
                 "--drain-action", "requeue"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "list", "default"));
    ck_assert_msg(strstr(r.out, "requeue after 1s"), "%s", r.out);
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_start_agent(&g, 1));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    /* bad input: unknown agent, unknown action */
    cli(&r, ARGS("admin", "agent", "cordon", "a9"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "not known"), "exit %d: %s",
                  r.status, r.err);
    cli(&r, ARGS("admin", "agent", "evict", "a1"));
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "agent", "cordon", "a1"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "cordoned"), "exit %d: %s%s",
                  r.status, r.out, r.err);
    /* the state outlives the manager */
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client_free(cl);
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    ck_assert_msg(agents_line_has("a1", "cordoned", 5000), "a1 not cordoned "
                  "after the restart");
    /* a1 may not take it although it fits there: a2 does */
    char s1[E2E_ID_MAX], where[E2E_ID_MAX];
    run_id(s1, sizeof s1, ARGS("run", "--type", "batch", "--gpus", "2",
           "--cpu", "0.1", "busybox", "sh", "-c", ON_CPU("0")));
    E2E_OK(e2e_wait_running(&g, cl, s1, 30000));
    kernel_agent(cl, s1, where, sizeof where);
    ck_assert_str_eq(where, "a2");
    /* a second 2-GPU session waits: a1 is cordoned, a2 is full */
    char s2[E2E_ID_MAX];
    run_id(s2, sizeof s2, ARGS("run", "--type", "batch", "--gpus", "2",
           "--cpu", "0.1", "busybox", "echo", "two"));
    e2e_sleep_ms(1500);
    kernel_agent(cl, s2, where, sizeof where);
    ck_assert_msg(!where[0], "s2 placed on %s", where);
    /* uncordon a1: s2 runs there; drain a2: s1 is requeued after 1 s and
     * finishes on a1 once s2 left */
    cli(&r, ARGS("admin", "agent", "uncordon", "a1"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "schedulable"), "%s%s",
                  r.out, r.err);
    expect_done(cl, s2);
    cli(&r, ARGS("admin", "agent", "drain", "a2"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "draining"), "%s%s", r.out,
                  r.err);
    ck_assert_msg(wait_history(cl, s1, "agent a2 drained", 20000),
                  "s1 was not drained");
    expect_done(cl, s1);
    kernel_agent(cl, s1, where, sizeof where);
    ck_assert_str_eq(where, "a1");
    ck_assert(agents_line_has("a2", "draining", 2000));
    cli(&r, ARGS("--json", "agents"));
    ck_assert_msg(strstr(r.out, "\"admin_state\":\"draining\""), "%s", r.out);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- device health ---------------------------------------------------- */

static skv_qty gpus_of(skv_client *cl, const char *id)
{
    skv_proto_agent_list_reply rep;
    const skv_proto_agent_info *a = agent_of(cl, &rep, id);
    skv_qty q = a->capacity ? skv_slots_get(a->capacity, "cuda.device") : -1;
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    return q;
}

static bool wait_gpus(skv_client *cl, const char *id, skv_qty want, int ms)
{
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        if (gpus_of(cl, id) == want)
            return true;
        e2e_sleep_ms(50);
    }
    return false;
}

static void write_file(const char *path, const char *text)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    ck_assert_msg(f != NULL, "%s: %s", tmp, strerror(errno));
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, path), 0);
}

START_TEST(test_e2e_drain_device_fault)
{
    REQUIRE();
    char faults[PATH_MAX];
    snprintf(faults, sizeof faults, "%s/f1", g.root);
    ck_assert_uint_lt(strlen(faults) + 48, sizeof g.agent_plugins[0]);
    two_gpu_agents(faults);
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_start_agent(&g, 1));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    ck_assert_int_eq(gpus_of(cl, "a1"), 2000);
    /* a2 cordoned while it is placed: it takes both GPUs of a1 */
    cli_run r;
    cli(&r, ARGS("admin", "agent", "cordon", "a2"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    char sid[E2E_ID_MAX], where[E2E_ID_MAX];
    run_id(sid, sizeof sid, ARGS("run", "--type", "batch", "--gpus", "2",
           "--cpu", "0.1", "busybox", "sh", "-c", ON_CPU("1")));
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    kernel_agent(cl, sid, where, sizeof where);
    ck_assert_str_eq(where, "a1");
    cli(&r, ARGS("admin", "agent", "uncordon", "a2"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* GPU 1 of a1 fails */
    write_file(faults, "# injected by the test\n1 xid 79\n");
    ck_assert_msg(wait_history(cl, sid, "device cuda1 of agent a1 unhealthy",
                               20000), "the session was not requeued");
    ck_assert_msg(agents_line_has("a1", "cuda1 (xid 79)", 10000),
                  "agents does not show the unhealthy GPU");
    ck_assert_msg(wait_gpus(cl, "a1", 1000, 10000), "a1 capacity %lld",
                  (long long)gpus_of(cl, "a1"));
    expect_done(cl, sid);
    kernel_agent(cl, sid, where, sizeof where);
    ck_assert_str_eq(where, "a2");
    /* a1 now takes one GPU, never the faulty one */
    char one[E2E_ID_MAX];
    run_id(one, sizeof one, ARGS("run", "--type", "batch", "--gpus", "1",
           "--cpu", "0.1", "--constraint", "agent=a1", "busybox", "sh", "-c",
           "echo $CUDA_VISIBLE_DEVICES"));
    expect_done(cl, one);
    char out[256];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(e2e_logs(cl, one, NULL, out, sizeof out, &e), &e);
    ck_assert_msg(out[0] == '0' && !strchr(out, '1'), "a 1-GPU session on "
                  "a1 did not get GPU 0 alone: '%s'", out);
    /* the fault is cleared: the GPU is back */
    write_file(faults, "");
    ck_assert_msg(wait_gpus(cl, "a1", 2000, 10000), "a1 capacity %lld",
                  (long long)gpus_of(cl, "a1"));
    ck_assert_msg(!agents_line_has("a1", "xid 79", 500), "still shown "
                  "unhealthy");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- device health across a manager restart ----------------------------- */

/* Whether sid was ever anything but PENDING (placed at some point). */
static bool ever_placed(skv_client *cl, const char *sid)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply sh = {0};
    SKV_CK_OK(skv_client_show(cl, &sh, sid, &e), &e);
    bool placed = strcmp(sh.session.status, "PENDING") != 0;
    for (size_t i = 0; i < sh.session.n_history; i++)
        placed |= sh.session.history[i].status &&
                  strcmp(sh.session.history[i].status, "PENDING") != 0;
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    return placed;
}

/* kill -9 the manager while agent 0 is held back (stopped, so it cannot
 * reconnect), then start it again on the same data dir. */
static skv_client *restart_without_agent(skv_client *cl)
{
    skv_client_free(cl);
    ck_assert_int_eq(kill(g.agent[0], SIGSTOP), 0);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    E2E_OK(e2e_start_manager(&g, "a1"));
    cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    return cl;
}

START_TEST(test_e2e_drain_fault_restart)
{
    REQUIRE();
    char faults[PATH_MAX];
    snprintf(faults, sizeof faults, "%s/f1", g.root);
    ck_assert_uint_lt(strlen(faults) + 48, sizeof g.agent_plugins[0]);
    two_gpu_agents(faults);
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    write_file(faults, "# injected by the test\n1 xid 79\n");
    ck_assert_msg(wait_gpus(cl, "a1", 1000, 10000), "a1 capacity %lld",
                  (long long)gpus_of(cl, "a1"));
    /* The manager dies; the agent is away. What the restarted manager
     * knows of a1's GPUs comes from its store alone. */
    cl = restart_without_agent(cl);
    ck_assert_msg(wait_gpus(cl, "a1", 1000, 10000), "restarted manager: a1 "
                  "capacity %lld, the faulty GPU counted",
                  (long long)gpus_of(cl, "a1"));
    ck_assert_msg(agents_line_has("a1", "cuda1 (xid 79)", 10000),
                  "agents does not show the stored unhealthy GPU");
    char two[E2E_ID_MAX], one[E2E_ID_MAX];
    run_id(two, sizeof two, ARGS("run", "--type", "batch", "--gpus", "2",
           "--cpu", "0.1", "--constraint", "agent=a1", "busybox", "echo",
           "two"));
    /* a1 comes back still faulty: a 1-GPU session runs on GPU 0 (passes
     * ran with a1 registered), the 2-GPU one was never placed */
    ck_assert_int_eq(kill(g.agent[0], SIGCONT), 0);
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    run_id(one, sizeof one, ARGS("run", "--type", "batch", "--gpus", "1",
           "--cpu", "0.1", "--constraint", "agent=a1", "busybox", "sh", "-c",
           "echo $CUDA_VISIBLE_DEVICES"));
    expect_done(cl, one);
    char out[256];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(e2e_logs(cl, one, NULL, out, sizeof out, &e), &e);
    ck_assert_msg(out[0] == '0' && !strchr(out, '1'), "a 1-GPU session on "
                  "a1 did not get GPU 0 alone: '%s'", out);
    ck_assert_msg(!ever_placed(cl, two), "the 2-GPU session was placed on "
                  "a1 with its faulty GPU");
    ck_assert_int_eq(gpus_of(cl, "a1"), 1000);
    /* The GPU recovers while the manager is down: stored unhealthy until
     * a1 registers and says so; then the waiting session runs. */
    cl = restart_without_agent(cl);
    write_file(faults, "");
    ck_assert_msg(wait_gpus(cl, "a1", 1000, 10000), "a1 capacity %lld",
                  (long long)gpus_of(cl, "a1"));
    ck_assert_int_eq(kill(g.agent[0], SIGCONT), 0);
    ck_assert_msg(wait_gpus(cl, "a1", 2000, 20000), "a1 capacity %lld after "
                  "it reported the GPU healthy", (long long)gpus_of(cl, "a1"));
    ck_assert_msg(!agents_line_has("a1", "xid 79", 500), "still shown "
                  "unhealthy");
    expect_done(cl, two);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- fractional shares that cannot be enforced --------------------------- */

START_TEST(test_e2e_drain_unenforced_shares)
{
    REQUIRE();
    snprintf(g.agent_plugins[0], sizeof g.agent_plugins[0], "%s",
             "cpu;mem;mock:count=1,prefix=cuda");
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    char sid[E2E_ID_MAX];
    run_id(sid, sizeof sid, ARGS("run", "--gpu", "0.5", "--cpu", "0.1",
           "busybox", "echo", "half"));
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, sid, 30000, &sh));
    ck_assert_msg(!strcmp(sh.session.status, "ERROR") &&
                  sh.session.status_reason &&
                  strstr(sh.session.status_reason, "shares not enforced") &&
                  strstr(sh.session.status_reason,
                         "--allow-unenforced-fractions"),
                  "%s: %s", sh.session.status,
                  sh.session.status_reason ? sh.session.status_reason : "");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    cli_run r;
    cli(&r, ARGS("admin", "group", "update", "default",
                 "--allow-unenforced-fractions", "maybe"));
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "update", "default",
                 "--allow-unenforced-fractions", "on"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    run_id(sid, sizeof sid, ARGS("run", "--gpu", "0.5", "--cpu", "0.1",
           "busybox", "echo", "half"));
    expect_done(cl, sid);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, setup, teardown);                     \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e_drain(void);
Suite *skv_test_suite_e2e_drain(void)
{
    Suite *s = suite_create("e2e_drain");
    ADD_CASE(s, "cordon_drain", test_e2e_drain_cordon_drain);
    ADD_CASE(s, "device_fault", test_e2e_drain_device_fault);
    ADD_CASE(s, "fault_restart", test_e2e_drain_fault_restart);
    ADD_CASE(s, "unenforced_shares", test_e2e_drain_unenforced_shares);
    return s;
}
