/* The `sokovan` CLI against the real daemons (tests/e2e_cluster.h): a
 * submission started while the manager is down and completed when it comes
 * up, exactly once; hostile session names on the terminal; `logs` while
 * the kernel's agent is away (killed -9, then past its heartbeat timeout).
 *
 * Needs root, /bin/busybox and the daemons and the CLI in <build>/bin
 * (make progs); otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include "e2e_cli_fixture.h"
#include "e2e_demo.h"

static void sessions_all(skv_client *cl, skv_proto_session_list_reply *rep)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_list q = {0};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_SESSION_LIST, &q, rep, &e), &e);
}

/* A manager and agent a1, registered; the admin's client. */
static skv_client *one_agent_cluster(void)
{
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    return cl;
}

/* ---- run while the manager is down ---------------------------------------- */

/* The manager is killed -9 (its socket stays behind, refusing), `sokovan
 * run` starts, and the manager comes back 1.5 s later: the CLI's submit
 * lands exactly once, with its client token. */
START_TEST(test_e2e_cli_run_waits_for_manager)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 0));          /* serving: keys stored */
    skv_client_free(cl);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    ck_assert(e2e_file_exists(g.sock));          /* stale: refuses */
    cli_run r;
    cli_start(&r, ARGS("--timeout", "20000", "run", "--client-token",
                       "tok-wait", "--name", "waited", "busybox", "true"));
    e2e_sleep_ms(1500);
    ck_assert_msg(e2e_alive(r.pid), "the CLI gave up while the manager "
                  "was down");
    E2E_OK(e2e_start_manager(&g, "a1"));
    cli_wait(&r);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    char sid[E2E_ID_MAX];
    ck_assert_uint_gt(strlen(r.out), 1);
    snprintf(sid, sizeof(sid), "%.*s", (int)strcspn(r.out, "\n"), r.out);
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    skv_proto_session_list_reply rep = {0};
    sessions_all(cl, &rep);
    ck_assert_uint_eq(rep.n_sessions, 1);
    ck_assert_str_eq(rep.sessions[0].session_id, sid);
    ck_assert_str_eq(rep.sessions[0].name, "waited");
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &rep);
    /* the same token names the same session: it was the CLI's */
    char again[E2E_ID_MAX];
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {"waited", "true", "cpu=1", 1, false, "tok-wait"};
    SKV_CK_OK(e2e_submit(cl, again, &j, &e), &e);
    ck_assert_str_eq(again, sid);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- hostile names ------------------------------------------------------- */

#define EVIL "ev\x1b[2J\r\b\x7f\xc2\x9b-name"
#define EVIL_TEXT "ev\\x1b[2J\\x0d\\x08\\x7f\\xc2\\x9b-name"

static int terminal_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
            (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
            return 0;
    return 1;
}

/* A session named with control characters, accepted by the real manager:
 * ps and show escape them, --json keeps them exact, and an error that
 * echoes such a name escapes it too. */
START_TEST(test_e2e_cli_control_chars)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    char sid[E2E_ID_MAX];
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {EVIL, "echo \x1b[2J", "cpu=0.1,mem=16m", 1, false, NULL};
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    cli_run r;
    const char *const *cmds[] = {ARGS("ps"), ARGS("show", sid)};
    for (size_t i = 0; i < 2; i++) {
        cli(&r, cmds[i]);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", cmds[i][0], r.status,
                      r.err);
        ck_assert_msg(terminal_safe(r.out), "%s: raw control bytes: %s",
                      cmds[i][0], r.out);
        ck_assert_msg(strstr(r.out, EVIL_TEXT), "%s: %s", cmds[i][0], r.out);
    }
    cli(&r, ARGS("show", "--json", sid));
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(strstr(r.out, "\"name\":\"ev\\u001b[2J\\r\\u0008\\u007f"
                                "\xc2\x9b-name\""), "%s", r.out);
    /* the manager's "no session '...'" echoes the id typed */
    cli(&r, ARGS("show", "s-\x1b[2Jx"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "s-\\x1b[2Jx") && terminal_safe(r.err), "%s",
                  r.err);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- logs while the agent is away ----------------------------------------- */

/* The agent of a running session is killed -9: `sokovan logs` says that
 * agent is away, both while it is merely disconnected and once the manager
 * has declared it lost (past the heartbeat timeout) - never that the
 * kernel "has not been placed yet". */
START_TEST(test_e2e_cli_logs_agent_away)
{
    REQUIRE();
    E2E_OK(e2e_start_manager(&g, "a1"));
    E2E_OK(e2e_start_agent(&g, 0));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    char sid[E2E_ID_MAX];
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {"away", "echo started; sleep 600", "cpu=0.1,mem=16m", 1,
                 false, NULL};
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    cli_run r;
    cli(&r, ARGS("logs", sid));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    int64_t killed = e2e_now_ms();
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    /* disconnected, within the heartbeat timeout (15 s) */
    e2e_sleep_ms(300);
    int64_t t0 = e2e_now_ms();
    cli(&r, ARGS("logs", sid));
    ck_assert_int_eq(r.status, 1);
    ck_assert_int_lt(e2e_now_ms() - t0, 5000);   /* an answer, not retried */
    ck_assert_msg(strstr(r.err, "agent 'a1' of kernel") &&
                  strstr(r.err, "is away (disconnected)") &&
                  strstr(r.err, "when the agent reconnects"), "%s", r.err);
    /* past the heartbeat timeout: the manager declared the agent lost */
    e2e_sleep_ms((int)(killed + 15000 + 2000 - e2e_now_ms()));
    cli(&r, ARGS("logs", sid));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(!strstr(r.err, "has not been placed yet"), "%s", r.err);
    ck_assert_msg(strstr(r.err, "a1") &&
                  (strstr(r.err, "is away (lost") ||
                   strstr(r.err, "went back to the queue (agent a1 lost)")),
                  "%s", r.err);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- job files ------------------------------------------------------------ */

/* `sokovan run -f` through the real daemons: a two-kernel session with
 * per-role resources runs and its kernels carry the file's slots; a
 * second session that depends on it (and says how long it runs) starts
 * after it and succeeds. */
START_TEST(test_e2e_cli_job_file)
{
    REQUIRE();
    skv_client *cl = one_agent_cluster();
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/job.yaml", g.root);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("image: busybox\n"
          "name: from-file\n"
          "command: [sh, -c, \"echo job-ran\"]\n"
          "kernels:\n"
          "  - {role: sub, cpu: 0.1, mem: 16m}\n"
          "  - {role: main, cpu: 0.2, mem: 32m}\n", f);
    fclose(f);
    cli_run r;
    cli(&r, ARGS("run", "-f", path, "--wait"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "job-ran"), "exit %d: %s %s",
                  r.status, r.out, r.err);
    char sid[E2E_ID_MAX];
    const char *at = strstr(r.err, "session ");
    ck_assert_ptr_nonnull(at);
    snprintf(sid, sizeof sid, "%.*s", (int)strcspn(at + 8, " \n"), at + 8);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply sh = {0};
    skv_proto_session_id q = {sid};
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_SESSION_SHOW, &q, &sh, &e), &e);
    ck_assert_str_eq(sh.session.name, "from-file");
    ck_assert_uint_eq(sh.session.n_kernels, 2);
    for (size_t i = 0; i < 2; i++) {
        const skv_proto_kernel_info *k = &sh.session.kernels[i];
        int main_k = strcmp(k->role, "main") == 0;
        ck_assert_int_eq(skv_slots_get(k->slots, "cpu"), main_k ? 200 : 100);
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    cli(&r, ARGS("run", "--depends-on", sid, "--estimated-duration", "10s",
                 "--wait", "--cpu", "0.1", "busybox", "echo", "dep-ok"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "dep-ok"), "exit %d: %s %s",
                  r.status, r.out, r.err);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- start times, lifetimes and reasons ------------------------------------ */

/* The `sokovan ps` line of session sid (empty when absent). */
static void ps_line(char *line, size_t cap, const char *sid)
{
    cli_run r;
    cli(&r, ARGS("ps"));
    ck_assert_msg(r.status == 0, "ps: exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "REASON"), "ps has no REASON column: %s",
                  r.out);
    const char *at = strstr(r.out, sid);
    line[0] = '\0';
    if (at)
        snprintf(line, cap, "%.*s", (int)strcspn(at, "\n"), at);
}

/* --not-before: pending with reason not-before (ps's REASON column), and
 * started no earlier than asked. */
static void not_before_case(skv_client *cl)
{
    char sid[E2E_ID_MAX], line[1024];
    int64_t t0 = e2e_now_ms();
    run_id(sid, sizeof sid, ARGS("run", "--not-before", "+4s", "--cpu", "0.1",
                                 "busybox", "echo", "late"));
    ps_line(line, sizeof line, sid);
    ck_assert_msg(strstr(line, "PENDING") && strstr(line, "not-before"),
                  "ps line: %s", line);
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, sid, 30000, &sh));
    ck_assert_str_eq(sh.session.status, "TERMINATED");
    ck_assert_msg(sh.session.started_ms >= t0 + 4000,
                  "started %lld ms after the run began, asked >= 4000",
                  (long long)(sh.session.started_ms - t0));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
}

/* --max-lifetime: terminated by the manager, saying why. */
static void lifetime_case(skv_client *cl)
{
    char sid[E2E_ID_MAX];
    run_id(sid, sizeof sid, ARGS("run", "--max-lifetime", "2s", "--cpu", "0.1",
                                 "busybox", "sleep", "120"));
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, sid, 30000, &sh));
    ck_assert_str_eq(sh.session.status, "TERMINATED");
    int64_t ran = sh.session.finished_ms - sh.session.started_ms;
    ck_assert_msg(ran >= 2000 && ran < 60000, "ran %lld ms", (long long)ran);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    cli_run r;
    cli(&r, ARGS("show", sid));
    ck_assert_msg(strstr(r.out, "maximum lifetime"), "show: %s", r.out);
}

/* A blocked session holding a reservation: `show` gives a wall-clock
 * estimated start from the running session's --estimated-duration. */
static void estimate_case(skv_client *cl)
{
    char a[E2E_ID_MAX], b[E2E_ID_MAX], line[1024];
    run_id(a, sizeof a, ARGS("run", "--estimated-duration", "10m", "--cpu",
                             "1", "busybox", "sleep", "120"));
    E2E_OK(e2e_wait_running(&g, cl, a, 30000));
    run_id(b, sizeof b, ARGS("run", "--cpu", "1", "busybox", "echo", "b"));
    cli_run r;
    for (int i = 0; i < 100; i++) {    /* until a pass has looked at it */
        cli(&r, ARGS("show", b));
        if (strstr(r.out, "Estimated start:"))
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(strstr(r.out, "has-reservation") &&
                  strstr(r.out, "Estimated start:"), "show: %s", r.out);
    ck_assert_msg(strstr(r.out, "(in 9m)") || strstr(r.out, "(in 10m)"),
                  "estimate not ~10 minutes away: %s", r.out);
    ps_line(line, sizeof line, b);
    ck_assert_msg(strstr(line, "has-reservation"), "ps line: %s", line);
    cli(&r, ARGS("--json", "show", b));
    ck_assert_msg(strstr(r.out, "\"estimated_start_ms\":"), "%s", r.out);
    cli(&r, ARGS("terminate", a));
    ck_assert_int_eq(r.status, 0);
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, b, 30000, &sh));
    ck_assert_str_eq(sh.session.status, "TERMINATED");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
}

START_TEST(test_e2e_cli_times_and_reasons)
{
    REQUIRE();
    skv_client *cl = one_agent_cluster();
    cli_run r;
    cli(&r, ARGS("run", "--not-before", "tomorrow", "busybox", "true"));
    ck_assert_msg(r.status == 2 && strstr(r.err, "not a time"), "exit %d: %s",
                  r.status, r.err);
    cli(&r, ARGS("run", "--max-lifetime", "0", "busybox", "true"));
    ck_assert_msg(r.status == 2 && strstr(r.err, "must be positive"),
                  "exit %d: %s", r.status, r.err);
    not_before_case(cl);
    lifetime_case(cl);
    estimate_case(cl);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- preemption per resource group ----------------------------------------- */

/* Four low-priority 1-GPU sessions fill two agents of 2 mock GPUs; with
 * preemption turned on through `sokovan admin group update`, a
 * high-priority 2-kernel multi-node gang needing 2 GPUs on each agent
 * evicts all four (whole sessions), runs, and the victims run again to
 * completion (requeued, not lost). Without preemption it would wait. */
START_TEST(test_e2e_cli_preemption)
{
    REQUIRE();
    for (int i = 0; i < 2; i++)
        snprintf(g.agent_plugins[i], sizeof g.agent_plugins[i], "%s",
                 "cpu;mem;mock:count=2,prefix=cuda");
    snprintf(g.agent_cpus[1], sizeof g.agent_cpus[1], "%s", "1");
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    cli_run r;
    cli(&r, ARGS("admin", "group", "update", "default", "--preemption",
                 "maybe"));
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "update", "default", "--preemption", "on"));
    ck_assert_msg(r.status != 0 && strstr(r.err, "orders by priority"),
                  "exit %d: %s", r.status, r.err);
    /* While the group is empty: the scheduler that orders by priority. */
    cli(&r, ARGS("admin", "group", "update", "default", "--scheduler",
                 "priority"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_start_agent(&g, 1));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    char low[4][E2E_ID_MAX], gang[E2E_ID_MAX];
    for (int i = 0; i < 4; i++) {
        run_id(low[i], sizeof low[i], ARGS("run", "--preemptible", "--gpus",
               "1", "--cpu", "0.1", "busybox", "sh", "-c", "sleep 3; echo ok"));
        E2E_OK(e2e_wait_running(&g, cl, low[i], 30000));
    }
    run_id(gang, sizeof gang, ARGS("run", "--priority", "10",
           "--cluster-size", "2", "--cluster-mode", "multi-node", "--gpus",
           "2", "--cpu", "0.1", "busybox", "echo", "gang"));
    e2e_sleep_ms(1500);     /* passes run; preemption is off: it waits */
    ck_assert(!history_has(cl, low[0], "preempted"));
    cli(&r, ARGS("admin", "group", "update", "default", "--preempt-order",
                 "oldest"));
    ck_assert_msg(r.status == 2 && strstr(r.err, "--preempt-order"),
                  "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "update", "default", "--preemption", "on",
                 "--min-runtime", "0", "--preempt-order", "newest"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    cli(&r, ARGS("admin", "group", "list"));
    ck_assert_msg(strstr(r.out, "on (requeue, min 0s, newest first)"), "%s",
                  r.out);
    skv_proto_session_show_reply sh;
    if (e2e_wait_final(&g, cl, gang, 60000, &sh)) {
        char tail[2048];
        e2e_log_tail(&g, "manager", tail, sizeof tail);
        cli(&r, ARGS("show", gang));
        ck_abort_msg("gang did not end: %s\n%s\nmanager: %s", g.why, r.out,
                     tail);
    }
    ck_assert_msg(!strcmp(sh.session.status, "TERMINATED") &&
                  sh.session.exit_code == 0, "gang %s %d: %s",
                  sh.session.status, (int)sh.session.exit_code,
                  sh.session.status_reason ? sh.session.status_reason : "");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    char want[E2E_ID_MAX + 32];
    snprintf(want, sizeof want, "preempted for %s", gang);
    for (int i = 0; i < 4; i++) {
        E2E_OK(e2e_wait_final(&g, cl, low[i], 60000, &sh));
        ck_assert_msg(!strcmp(sh.session.status, "TERMINATED") &&
                      sh.session.exit_code == 0, "%s: %s %d", low[i],
                      sh.session.status, (int)sh.session.exit_code);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
        ck_assert_msg(history_has(cl, low[i], want), "%s not preempted",
                      low[i]);
    }
    cli(&r, ARGS("show", low[0]));
    ck_assert_msg(strstr(r.out, want), "show: %s", r.out);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- scheduler plugins from the manager's config ------------------------- */

/* The manager started with extra arguments must exit, saying `want`. Its
 * socket comes up before its store is opened, so one that refuses its
 * store may look started for a moment: wait for the exit. */
static void manager_refuses(const char *const *extra, const char *want)
{
    memset(g.mgr_extra, 0, sizeof g.mgr_extra);
    for (size_t i = 0; extra[i]; i++)
        g.mgr_extra[i] = extra[i];
    bool up = e2e_start_manager(&g, "a1,a2") == 0;
    for (int64_t end = e2e_now_ms() + 10000;
         up && e2e_alive(g.mgr) && e2e_now_ms() < end;)
        e2e_sleep_ms(20);
    bool exited = !up || !e2e_alive(g.mgr);
    if (exited)
        g.mgr = -1;
    char tail[700];
    e2e_log_tail(&g, "manager", tail, sizeof tail);
    ck_assert_msg(exited && strstr(tail, want), "wanted '%s' (%s): %s", want,
                  exited ? "exited" : "still running", tail);
}

/* The agent each of n short sessions ran on must be `agent`. */
static void sessions_land_on(skv_client *cl, int n, const char *agent)
{
    for (int i = 0; i < n; i++) {
        char sid[E2E_ID_MAX];
        run_id(sid, sizeof sid, ARGS("run", "--cpu", "0.1", "busybox",
                                     "true"));
        skv_proto_session_show_reply sh;
        E2E_OK(e2e_wait_final(&g, cl, sid, 30000, &sh));
        ck_assert_uint_eq(sh.session.n_kernels, 1);
        ck_assert_msg(!strcmp(sh.session.kernels[0].agent_id, agent),
                      "%s ran on %s, not %s", sid,
                      sh.session.kernels[0].agent_id, agent);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    }
}

/* `sched_plugins` loads tests/so/sched_plugin.so (selector "test-last":
 * the group's last agent) before the groups exist: the default group made
 * with it places every session on a2, also after a kill -9 and restart
 * (the stored group names the plugin's selector). A path that is not
 * absolute, a missing file, a wrong ABI, and a restart without the plugin
 * while a group names its selector: each stops the manager with its
 * reason. */
START_TEST(test_e2e_cli_sched_plugins)
{
    REQUIRE();
    static char good[PATH_MAX], badabi[PATH_MAX];
    snprintf(good, sizeof good, "%s/tests/so/sched_plugin.so",
             skv_test_build_dir());
    snprintf(badabi, sizeof badabi, "%s/tests/so/sched_plugin_badabi.so",
             skv_test_build_dir());
    manager_refuses(ARGS("--sched-plugins", "rel/p.so"),
                    "is not an absolute path");
    manager_refuses(ARGS("--sched-plugins", "/nonexistent/p.so"),
                    "cannot load plugin /nonexistent/p.so");
    manager_refuses(ARGS("--sched-plugins", badabi), "ABI");
    const char *const with[] = {"--sched-plugins", good, "--default-selector",
                                "test-last", NULL};
    memset(g.mgr_extra, 0, sizeof g.mgr_extra);
    for (size_t i = 0; with[i]; i++)
        g.mgr_extra[i] = with[i];
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    snprintf(g.agent_cpus[1], sizeof g.agent_cpus[1], "%s", "1");
    E2E_OK(e2e_start_agent(&g, 1));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    cli_run r;
    cli(&r, ARGS("admin", "group", "list"));
    ck_assert_msg(r.status == 0 && strstr(r.out, "test-last"), "%s%s", r.out,
                  r.err);
    sessions_land_on(cl, 3, "a2");
    skv_client_free(cl);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    manager_refuses(ARGS("--heartbeat-interval-ms", "500"),
                    "unknown selector 'test-last'");
    for (size_t i = 0; with[i]; i++)
        g.mgr_extra[i] = with[i];
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    sessions_land_on(cl, 1, "a2");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- the README's demo ---------------------------------------------------- */

/* The demo's state directory (<scratch>/demo) and the build directory the
 * daemons came from (the parent of bin/); computed alike in the test and
 * in the teardown, which runs in another process. */
static void demo_paths(char *dir, size_t dcap, char *build, size_t bcap)
{
    snprintf(dir, dcap, "%s/demo", g.root);
    snprintf(build, bcap, "%.*s", (int)(strrchr(g.bin, '/') ?
             strrchr(g.bin, '/') - g.bin : 0), g.bin);
}

/* Start `bash examples/local-cluster.sh [stop] BUILD` from the source root
 * with SOKOVAN_DEMO_DIR=dir, as a user runs `make demo` / `make demo-stop`
 * (the Makefile passes the variable through); collect it with cli_wait. */
static void demo_start(cli_run *r, const char *dir, const char *action)
{
    char dir_env[PATH_MAX + 32], unused[PATH_MAX], build[PATH_MAX];
    const char *src = getenv("SKV_TEST_SRC_DIR");
    demo_paths(unused, sizeof(unused), build, sizeof(build));
    snprintf(dir_env, sizeof(dir_env), "SOKOVAN_DEMO_DIR=%s", dir);
    char *envp[] = {dir_env, "HOME=/nonexistent",
                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    char *argv[] = {"/bin/bash", "examples/local-cluster.sh",
                    (char *)action, build, NULL};
    if (!action[0]) {
        argv[2] = build;
        argv[3] = NULL;
    }
    char to[] = "/tmp/skv-e2e-demo-out-XXXXXX", te[] = "/tmp/skv-e2e-demo-XXXXXX";
    r->fo = mkstemp(to);
    r->fe = mkstemp(te);
    ck_assert(r->fo >= 0 && r->fe >= 0);
    unlink(to);
    unlink(te);
    r->pid = fork();
    ck_assert_int_ge(r->pid, 0);
    if (r->pid == 0) {
        if (chdir(src ? src : ".") < 0)
            _exit(127);
        dup2(r->fo, 1);
        dup2(r->fe, 2);
        execve(argv[0], argv, envp);
        _exit(127);
    }
}

static void demo_run(cli_run *r, const char *dir, const char *action)
{
    demo_start(r, dir, action);
    cli_wait(r);
}

/* A bad SOKOVAN_DEMO_DIR is refused with a clear error (the caller checks
 * that nothing was created). */
static void demo_refused(const char *dir, const char *message)
{
    cli_run r;
    demo_run(&r, dir, "");
    ck_assert_msg(r.status == 1 && strstr(r.err, message),
                  "SOKOVAN_DEMO_DIR=%s: exit %d, stderr: %s", dir, r.status,
                  r.err);
}

/* The words of the line of out that starts with sid (ps's row). */
static int demo_row(const char *out, const char *sid, char w[10][96])
{
    const char *l = strstr(out, sid);
    while (l && l != out && l[-1] != '\n')
        l = strstr(l + 1, sid);
    if (!l)
        return 0;
    char line[1024];
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
    int n = 0;
    for (char *sp, *t = strtok_r(line, " ", &sp); t && n < 10;
         t = strtok_r(NULL, " ", &sp))
        snprintf(w[n++], 96, "%s", t);
    return n;
}

/* What the demo printed is what the README shows: the session's lines
 * and its `ps --all` row, TERMINATED with exit 0 and a whole mock GPU.
 * Returns the session id in sid. */
static void demo_output_ok(const cli_run *r, const char *dir, char *sid)
{
    const char *hello = "hello from main1 in session ";
    const char *h = strstr(r->out, hello);
    ck_assert_msg(h, "no hello line in the demo's output:\n%s", r->out);
    snprintf(sid, E2E_ID_MAX, "%.*s",
             (int)strspn(h + strlen(hello), "s-0123456789abcdef"),
             h + strlen(hello));
    ck_assert_msg(strstr(r->out, "\ncluster: main1, role main\n") &&
                  strstr(r->out, "\npid inside: 1\n") &&
                  strstr(r->out, "\ncpus allowed: "), "%s", r->out);
    ck_assert_msg(strstr(r->out, "\nagent1  default  alive ") &&
                  strstr(r->out, "\nbusybox "), "%s", r->out);
    char w[10][96];
    const char *ps = strstr(r->out, "== sokovan ps --all");
    ck_assert_msg(ps && demo_row(ps, sid, w) == 10,
                  "no ps --all row of %s:\n%s", sid, r->out);
    ck_assert_str_eq(w[3], "TERMINATED");
    ck_assert_str_eq(w[8], "0");                   /* EXIT */
    ck_assert_msg(strstr(w[6], "cuda.device=1"), "slots %s", w[6]);
    char stop[PATH_MAX + 64];
    snprintf(stop, sizeof(stop), "Stop it with: make demo-stop "
             "SOKOVAN_DEMO_DIR=%s\n", dir);
    ck_assert_msg(strstr(r->out, stop), "%s", r->out);
}

/* Talk to the demo's manager through the library as its admin. */
static skv_client *demo_client(const char *dir)
{
    char key[PATH_MAX + 32];
    skv_error e = SKV_ERROR_INIT;
    snprintf(g.endpoint, sizeof(g.endpoint), "unix:%s/run/manager.sock", dir);
    snprintf(key, sizeof(key), "%s/lib/manager/admin.key", dir);
    SKV_CK_OK(skv_client_read_keyfile(g.admin_ak, g.admin_sk, key, &e), &e);
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    return cl;
}

/* Paths under /run/sokovan and /var/lib/sokovan changed since marker
 * (none: the demo kept to its directory), unless a cluster started without
 * SOKOVAN_DEMO_DIR runs there and writes them itself (then "" and a note). */
static void demo_outside(const char *marker, char *out, size_t cap)
{
    char cmd[PATH_MAX + 256];
    skv_test_sh_output("for f in /run/sokovan/manager.pid /run/sokovan/"
                       "agent1.pid; do kill -0 $(cat $f 2>/dev/null) "
                       "2>/dev/null && echo up; done", out, cap);
    if (out[0]) {
        fprintf(stderr, "cli_demo: a default local cluster runs; files "
                "outside the demo's directory not checked\n");
        out[0] = '\0';
        return;
    }
    snprintf(cmd, sizeof(cmd), "find /run/sokovan /var/lib/sokovan -newer %s "
             "2>/dev/null | head -n 5", marker);
    skv_test_sh_output(cmd, out, cap);
}

/* Poll (generous deadline: CI's sanitizer pass is slow) until the demo's
 * daemons, the kernels of session sid and their cgroups are gone. */
static void demo_gone(const char *dir, const char *sid)
{
    char cg[E2E_ID_MAX + 16], first[512] = "";
    snprintf(cg, sizeof(cg), "/sokovan/%s-", sid);
    int daemons = 0, kernels = 0, cgroups = 0;
    for (int64_t end = e2e_now_ms() + 20000; e2e_now_ms() < end;) {
        daemons = demo_procs("cmdline", dir, first, sizeof(first));
        kernels = demo_procs("cgroup", cg, daemons ? NULL : first,
                             sizeof(first));
        cgroups = demo_cgroups(cg + 9);
        if (!daemons && !kernels && !cgroups)
            break;
        e2e_sleep_ms(50);
    }
    ck_assert_msg(daemons == 0, "%d processes of the demo left, %s", daemons,
                  first);
    ck_assert_msg(kernels == 0, "%d processes of %s left, %s", kernels, sid,
                  first);
    ck_assert_msg(cgroups == 0, "%d cgroups %s* left", cgroups, cg + 9);
}

/* The README's main job exactly as a user runs it, with its state under a
 * scratch SOKOVAN_DEMO_DIR: the demo session ends TERMINATED with exit 0
 * and prints what the README shows; a session the user then starts runs;
 * demo-stop ends it and stops the cluster, leaving no process, cgroup,
 * mount, network namespace or file outside the directory. A bad directory
 * is refused first. */
START_TEST(test_e2e_cli_demo)
{
    REQUIRE();
    char dir[PATH_MAX], build[PATH_MAX], marker[PATH_MAX + 16];
    demo_paths(dir, sizeof(dir), build, sizeof(build));
    if (access("/bin/bash", X_OK) != 0 || system("tar --version >/dev/null") != 0 ||
        !strrchr(g.bin, '/') || strcmp(strrchr(g.bin, '/'), "/bin") != 0) {
        fprintf(stderr, "%s: SKIP: needs /bin/bash, tar and the daemons in "
                "BUILD/bin (not %s)\n", __func__, g.bin);
        return;
    }
    demo_refused("skv-demo-relative", "must be an absolute path");
    ck_assert_int_ne(access("skv-demo-relative", F_OK), 0);
    demo_refused("/proc/sys", "is not writable");
    demo_refused("/proc/skv-demo", "cannot create");
    char longdir[PATH_MAX];
    snprintf(longdir, sizeof(longdir), "%s/%0100d", g.root, 0);
    demo_refused(longdir, "too long for the manager's Unix socket");
    ck_assert_int_ne(access(longdir, F_OK), 0);
    char netns0[2048], netns1[2048], out[1024];
    demo_netns(netns0, sizeof(netns0));
    snprintf(marker, sizeof(marker), "%s/marker", g.root);
    ck_assert_int_eq(e2e_sh("touch %s%s", marker, ""), 0);

    cli_run r;
    demo_run(&r, dir, "");
    ck_assert_msg(r.status == 0, "make demo: exit %d\n%s\n%s", r.status,
                  r.out, r.err);
    char sid[E2E_ID_MAX], sid2[E2E_ID_MAX];
    demo_output_ok(&r, dir, sid);
    skv_client *cl = demo_client(dir);
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply sh = {0};
    SKV_CK_OK(skv_client_show(cl, &sh, sid, &e), &e);
    ck_assert_str_eq(sh.session.status, "TERMINATED");
    ck_assert_int_eq(sh.session.exit_code, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);

    /* the user tries the CLI: a session that keeps running */
    run_id(sid2, sizeof(sid2), ARGS("run", "--cpu", "1", "--mem", "64m",
                                    "busybox", "--", "sleep", "600"));
    E2E_OK(e2e_wait_running(&g, cl, sid2, 30000));
    skv_client_free(cl);
    char cg[E2E_ID_MAX + 16];
    snprintf(cg, sizeof(cg), "/sokovan/%s-", sid2);
    ck_assert_int_ge(demo_procs("cmdline", dir, NULL, 0), 2);
    ck_assert_int_ge(demo_procs("cgroup", cg, NULL, 0), 1);
    ck_assert_int_ge(demo_cgroups(cg + 9), 1);

    demo_run(&r, dir, "stop");
    ck_assert_msg(r.status == 0 && strstr(r.out, "stopped sokovan-agent") &&
                  strstr(r.out, "stopped sokovan-manager"),
                  "make demo-stop: exit %d\n%s\n%s", r.status, r.out, r.err);
    demo_gone(dir, sid2);
    ck_assert_int_eq(demo_mounts(dir), 0);
    ck_assert_int_eq(demo_mounts(sid2), 0);
    demo_netns(netns1, sizeof(netns1));
    ck_assert_str_eq(netns1, netns0);
    demo_outside(marker, out, sizeof(out));
    ck_assert_msg(!out[0], "written outside %s: %s", dir, out);
    /* under the sanitizers: the daemons exited without a report */
    char cmd[PATH_MAX + 96];
    snprintf(cmd, sizeof(cmd), "grep -h -m3 -e 'Sanitizer' -e 'runtime error:' "
             "%s/run/manager.log %s/run/agent1.log", dir, dir);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(!out[0], "the demo's daemons: %s", out);
}
END_TEST

/* SIGKILL the daemon a pid file of the demo names, if it is still one. */
static void demo_kill_pidfile(const char *dir, const char *name)
{
    char p[PATH_MAX + 32], buf[32];
    snprintf(p, sizeof(p), "%s/run/%s", dir, name);
    long pid = demo_read(p, buf, sizeof(buf)) ? atol(buf) : 0;
    if (pid > 1 && e2e_is_daemon(pid))
        kill((pid_t)pid, SIGKILL);
}

/* After a failed cli_demo: stop its cluster the user's way, then kill what
 * is left by its pid files and destroy its agent's containers. */
static void demo_teardown(void)
{
    char dir[PATH_MAX], build[PATH_MAX], p[PATH_MAX + 64];
    if (g.root[0] && !g_skip) {
        demo_paths(dir, sizeof(dir), build, sizeof(build));
        snprintf(p, sizeof(p), "%s/run", dir);
        if (access(p, F_OK) == 0) {
            snprintf(p, sizeof(p), "cd %s && SOKOVAN_DEMO_DIR=%s bash "
                     "examples/local-cluster.sh stop %s >/dev/null",
                     getenv("SKV_TEST_SRC_DIR") ? getenv("SKV_TEST_SRC_DIR")
                     : ".", dir, build);
            if (system(p) != 0)
                fprintf(stderr, "cli_demo: demo-stop failed in teardown\n");
            demo_kill_pidfile(dir, "manager.pid");
            demo_kill_pidfile(dir, "agent1.pid");
            snprintf(p, sizeof(p), "%s/run/agent-agent1", dir);
            e2e_destroy_containers(p);
        }
    }
    teardown();
}

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, setup, teardown);                     \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e_cli(void);
Suite *skv_test_suite_e2e_cli(void)
{
    Suite *s = suite_create("e2e_cli");
    ADD_CASE(s, "cli_run_waits_for_manager", test_e2e_cli_run_waits_for_manager);
    ADD_CASE(s, "cli_control_chars", test_e2e_cli_control_chars);
    ADD_CASE(s, "cli_logs_agent_away", test_e2e_cli_logs_agent_away);
    ADD_CASE(s, "cli_job_file", test_e2e_cli_job_file);
    ADD_CASE(s, "cli_times_and_reasons", test_e2e_cli_times_and_reasons);
    ADD_CASE(s, "cli_preemption", test_e2e_cli_preemption);
    ADD_CASE(s, "cli_sched_plugins", test_e2e_cli_sched_plugins);
    TCase *demo = tcase_create("cli_demo");
    tcase_set_timeout(demo, 300);
    tcase_add_unchecked_fixture(demo, setup, demo_teardown);
    tcase_add_test(demo, test_e2e_cli_demo);
    suite_add_tcase(s, demo);
    return s;
}
