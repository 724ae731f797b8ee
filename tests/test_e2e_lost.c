/* End-to-end: an agent that returns after the heartbeat timeout (issue 13).
 * Real sokovan-manager and sokovan-agent processes (tests/e2e_cluster.h)
 * with a 4 s heartbeat timeout; the agent is killed with SIGKILL while its
 * kernel runs, stays away until the manager has declared it lost (the
 * session is requeued), and is started again on the same state:
 *   (a) the kernel still runs: it is adopted and ends with its own exit
 *       code, not the SIGTERM of a "drift" destroy;
 *   (b) the kernel exited while the agent was away: its real exit code and
 *       output are reported, and the command does not run a second time;
 *   (c) the session was placed again on another agent meanwhile: the old
 *       container is destroyed, the history says so, and the new run has a
 *       kernel id of its own.
 * "Ran once" is checked by what the command prints: the host's uptime
 * (/proc/uptime is not namespaced) when it started, which must predate the
 * kill for the first run and follow it for a re-placed one.
 *
 * Needs root, /bin/busybox and the daemons in <build>/bin (make progs);
 * otherwise each test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_test.h"
#include "e2e_cluster.h"

#define HB_TIMEOUT "4000"

static e2e_cluster g;
static const char *g_skip;

static void lost_setup(void)
{
    g_skip = NULL;
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
    snprintf(g.hb_timeout_ms, sizeof(g.hb_timeout_ms), "%s", HB_TIMEOUT);
}

static void lost_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define E2E_REQUIRE()                                                          \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* The script's first line: "run-at <host uptime>" (sh's own read: the
 * image has no sed or cut). */
#define RUN_AT "read up rest < /proc/uptime; echo run-at $up; "

static double uptime_now(void)
{
    double up = 0;
    FILE *f = fopen("/proc/uptime", "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%lf", &up), 1);
    fclose(f);
    return up;
}

/* Manager plus agent a1 on every CPU (and a2 when two), registered. */
static void up(skv_client **cl)
{
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(g.agent_cpus[0], sizeof(g.agent_cpus[0]), "0-%ld",
             n > 1 ? n - 1 : 0);
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_connect(&g, cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, *cl, 1));
}

static void submit_ok(skv_client *cl, char *sid, const char *script)
{
    skv_error e = SKV_ERROR_INIT;
    e2e_job j = {"lost", script, "cpu=0.1,mem=16m", 1, false, NULL};
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    ck_assert_uint_gt(strlen(sid), 0);
}

/* Poll session.show until the session's status is `status` (the manager
 * noticed the loss: "away longer than the timeout" is observed, not
 * assumed). */
static void wait_status(skv_client *cl, const char *sid, const char *status,
                        int timeout_ms)
{
    skv_error e = SKV_ERROR_INIT;
    char last[32] = "?";
    for (int64_t end = e2e_now_ms() + timeout_ms; e2e_now_ms() < end;) {
        skv_proto_session_show_reply r = {0};
        SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
        snprintf(last, sizeof(last), "%s", r.session.status);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (!strcmp(last, status))
            return;
        e2e_sleep_ms(50);
    }
    ck_abort_msg("%s stayed %s, never %s", sid, last, status);
}

/* Kill a1 with SIGKILL ms after the session runs; returns the host uptime
 * at the kill. Then wait until the manager has requeued the session. */
static double kill_until_lost(skv_client *cl, const char *sid, int ms)
{
    e2e_sleep_ms(ms);
    double t = uptime_now();
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    wait_status(cl, sid, "PENDING", 20000);
    return t;
}

/* Poll until sid's main kernel runs on agent. */
static void wait_main_on(skv_client *cl, const char *sid, const char *agent,
                         int timeout_ms)
{
    skv_error e = SKV_ERROR_INIT;
    for (int64_t end = e2e_now_ms() + timeout_ms; e2e_now_ms() < end;) {
        skv_proto_session_show_reply r = {0};
        SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
        bool there = r.session.n_kernels && r.session.kernels[0].agent_id &&
                     !strcmp(r.session.kernels[0].agent_id, agent) &&
                     !strcmp(r.session.status, "RUNNING");
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (there)
            return;
        e2e_sleep_ms(50);
    }
    ck_abort_msg("%s does not run on %s", sid, agent);
}

static int count_history(const skv_proto_session_info *s, const char *status,
                         const char *reason_part)
{
    int n = 0;
    for (size_t i = 0; i < s->n_history; i++)
        n += s->history[i].status && !strcmp(s->history[i].status, status) &&
             (!reason_part || (s->history[i].reason &&
                               strstr(s->history[i].reason, reason_part)));
    return n;
}

/* The final show reply; checks status and exit code. */
static void expect_end(skv_client *cl, const char *sid, int code,
                       skv_proto_session_show_reply *r)
{
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, r));
    ck_assert_msg(!strcmp(r->session.status, "TERMINATED"), "%s: %s (%s)",
                  sid, r->session.status, r->session.status_reason ?
                  r->session.status_reason : "");
    ck_assert_msg(r->session.exit_code == code, "%s: exit code %d (%s), "
                  "wanted %d", sid, r->session.exit_code,
                  r->session.status_reason ? r->session.status_reason : "",
                  code);
}

/* The main kernel's output: exactly one "run-at T" line; returns T. */
static double one_run(skv_client *cl, const char *sid)
{
    char out[4096];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(e2e_logs(cl, sid, NULL, out, sizeof(out), &e), &e);
    double t = -1;
    int runs = 0;
    for (char *p = strstr(out, "run-at "); p; p = strstr(p + 1, "run-at ")) {
        runs++;
        t = strtod(p + 7, NULL);
    }
    ck_assert_msg(runs == 1, "%s ran %d times; output '%s'", sid, runs, out);
    return t;
}

/* Adopted: placed once, back to RUNNING by adoption, same kernel id. */
static void expect_adopted(const skv_proto_session_info *s)
{
    char first[E2E_ID_MAX + 4];
    snprintf(first, sizeof(first), "%s-0", s->session_id);
    ck_assert_int_eq(count_history(s, "PENDING", "agent a1 lost"), 1);
    ck_assert_int_eq(count_history(s, "SCHEDULED", NULL), 1);
    ck_assert_int_eq(count_history(s, "RUNNING", "adopted"), 1);
    ck_assert_uint_eq(s->n_kernels, 1);
    ck_assert_str_eq(s->kernels[0].kernel_id, first);
    ck_assert_str_eq(s->kernels[0].agent_id, "a1");
}

/* (a) the agent comes back with the kernel still running. */
START_TEST(test_lost_running)
{
    E2E_REQUIRE();
    skv_client *cl = NULL;
    up(&cl);
    char sid[E2E_ID_MAX];
    submit_ok(cl, sid, RUN_AT "trap 'exit 99' TERM; sleep 14 & wait; exit 7");
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    double killed = kill_until_lost(cl, sid, 1500);
    e2e_sleep_ms(500);
    E2E_OK(e2e_start_agent(&g, 0));
    skv_proto_session_show_reply r;
    expect_end(cl, sid, 7, &r);   /* not 99: it was not SIGTERMed */
    expect_adopted(&r.session);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    ck_assert_msg(one_run(cl, sid) < killed, "the command started again "
                  "after the agent was killed");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* (b) the kernel exits while its agent is away. */
START_TEST(test_lost_exited)
{
    E2E_REQUIRE();
    skv_client *cl = NULL;
    up(&cl);
    char sid[E2E_ID_MAX];
    submit_ok(cl, sid, RUN_AT "sleep 3; exit 3");
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    double killed = kill_until_lost(cl, sid, 1500);
    e2e_sleep_ms(500);
    E2E_OK(e2e_start_agent(&g, 0));
    skv_proto_session_show_reply r;
    expect_end(cl, sid, 3, &r);
    expect_adopted(&r.session);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    ck_assert_msg(one_run(cl, sid) < killed, "the command ran again after "
                  "the agent was killed");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* Containers left in agent id's runtime. */
static size_t containers_of(const char *id)
{
    char run[PATH_MAX + 48];
    e2e_run_dir(&g, id, run, sizeof(run));
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = run;
    skv_runtime *rt = NULL;
    char **ids = NULL;
    size_t n = 0;
    if (skv_runtime_open(&rt, &o, NULL) == 0 &&
        skv_runtime_list(rt, &ids, &n, NULL) == 0)
        skv_runtime_list_free(ids, n);
    skv_runtime_free(rt);
    return n;
}

/* (c) the session is placed on a2 while a1 is away; a1 comes back. */
START_TEST(test_lost_replaced)
{
    E2E_REQUIRE();
    skv_client *cl = NULL;
    up(&cl);
    char sid[E2E_ID_MAX];
    submit_ok(cl, sid, RUN_AT "sleep 10; exit 5");
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    snprintf(g.agent_cpus[1], sizeof(g.agent_cpus[1]), "%s", g.agent_cpus[0]);
    E2E_OK(e2e_start_agent(&g, 1));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    e2e_sleep_ms(1500);
    double killed = uptime_now();
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    /* requeued and placed on a2 at once: PENDING may not be seen */
    wait_main_on(cl, sid, "a2", 20000);
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    /* a1's copy goes: it was started before the kill, well within its
     * sleep, so only a destroy ends it this early */
    for (int i = 0; i < 200 && containers_of("a1") > 0; i++)
        e2e_sleep_ms(50);
    ck_assert_uint_eq(containers_of("a1"), 0);
    skv_proto_session_show_reply r;
    expect_end(cl, sid, 5, &r);
    char first[E2E_ID_MAX + 4];
    snprintf(first, sizeof(first), "%s-0", sid);
    ck_assert_uint_eq(r.session.n_kernels, 1);
    ck_assert_str_eq(r.session.kernels[0].agent_id, "a2");
    ck_assert_msg(strcmp(r.session.kernels[0].kernel_id, first) != 0,
                  "kernel id %s reused for the second container", first);
    ck_assert_int_eq(count_history(&r.session, "PENDING", "agent a1 lost"), 1);
    ck_assert_msg(count_history(&r.session, "RUNNING", "came back on agent "
                                "a1") == 1 ||
                  count_history(&r.session, "TERMINATED", "came back on "
                                "agent a1") == 1,
                  "the history does not say %s was destroyed", first);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    ck_assert_msg(one_run(cl, sid) > killed, "the output is not the second "
                  "run's");
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, lost_setup, lost_teardown);           \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e_lost(void);
Suite *skv_test_suite_e2e_lost(void)
{
    Suite *s = suite_create("e2e_lost");
    ADD_CASE(s, "lost_running", test_lost_running);
    ADD_CASE(s, "lost_exited", test_lost_exited);
    ADD_CASE(s, "lost_replaced", test_lost_replaced);
    return s;
}
