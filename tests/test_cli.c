/* The `sokovan` command line, run as a program: usage errors and help
 * (exit code 2 / 0), and against an in-process fake manager the requests
 * it builds and the shape of its output. End-to-end runs against the real
 * daemons live in the cluster suites.
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "fake_mgr.h"
#include "skv_test.h"

typedef struct cli_result {
    int status;                 /* exit code, or 128+signal */
    char out[65536];
    char err[16384];
} cli_result;

static void slurp(int fd, char *buf, size_t cap)
{
    lseek(fd, 0, SEEK_SET);
    size_t len = 0;
    ssize_t n;
    while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = 0;
    close(fd);
}

/* A started `sokovan`: its pid and where its output goes. */
typedef struct cli_child {
    pid_t pid;
    int fo, fe;
} cli_child;

/* Start build/bin/sokovan with args; endpoint NULL: none set. The
 * environment is built before fork (the fake manager's thread is live). */
static void cli_spawn(cli_child *ch, const char *endpoint,
                      const char *const *args)
{
    char bin[512], ep[256], tmpo[] = "/tmp/skv-cli-out-XXXXXX",
         tmpe[] = "/tmp/skv-cli-err-XXXXXX";
    snprintf(bin, sizeof bin, "%s/bin/sokovan", skv_test_build_dir());
    ck_assert_msg(access(bin, X_OK) == 0, "%s not built", bin);
    snprintf(ep, sizeof ep, "SOKOVAN_ENDPOINT=%s",
             endpoint ? endpoint : "unix:/nonexistent/skv-test.sock");
    char *envp[] = {ep, "SOKOVAN_ACCESS_KEY=" FAKE_AK,
                    "SOKOVAN_SECRET_KEY=" FAKE_SK, "HOME=/nonexistent",
                    "PATH=/usr/bin:/bin", NULL};
    char *argv[64];
    int n = 0;
    argv[n++] = bin;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    ch->fo = mkstemp(tmpo);
    ch->fe = mkstemp(tmpe);
    ck_assert(ch->fo >= 0 && ch->fe >= 0);
    unlink(tmpo);
    unlink(tmpe);
    ch->pid = fork();
    ck_assert_int_ge(ch->pid, 0);
    if (ch->pid == 0) {
        dup2(ch->fo, 1);
        dup2(ch->fe, 2);
        execve(bin, argv, envp);
        _exit(127);
    }
}

/* Wait for it and collect its exit code and output. */
static void cli_finish(cli_child *ch, cli_result *r)
{
    int st;
    ck_assert_int_eq(waitpid(ch->pid, &st, 0), ch->pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp(ch->fo, r->out, sizeof r->out);
    slurp(ch->fe, r->err, sizeof r->err);
}

static void run_cli(cli_result *r, const char *endpoint, const char *const *args)
{
    cli_child ch;
    cli_spawn(&ch, endpoint, args);
    cli_finish(&ch, r);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void expect(const cli_result *r, int status, const char *in_err)
{
    ck_assert_msg(r->status == status, "exit %d, wanted %d; stderr: %s",
                  r->status, status, r->err);
    if (in_err)
        ck_assert_msg(strstr(r->err, in_err), "stderr lacks '%s': %s", in_err,
                      r->err);
}

START_TEST(test_usage_errors)
{
    const struct { const char *const *args; const char *msg; } cases[] = {
        {ARGS("frobnicate"), "unknown command 'frobnicate'"},
        {ARGS("--bogus", "ps"), "unknown option '--bogus'"},
        {ARGS("ps", "--bogus"), "unknown option '--bogus'"},
        {ARGS("ps", "extra"), "unexpected argument"},
        {ARGS("ps", "--all", "--status", "running"), "exclusive"},
        {ARGS("ps", "--status", "sleeping"), "SLEEPING"},
        {ARGS("ps", "--limit", "0"), "--limit"},
        {ARGS("run"), "missing IMAGE"},
        {ARGS("run", "--cpu", "-1", "busybox"), "--cpu"},
        {ARGS("run", "--cpu", "0", "busybox"), "positive"},
        {ARGS("run", "--cpu", "0.0001", "busybox"), "--cpu"},
        {ARGS("run", "--mem", "4q", "busybox"), "--mem"},
        {ARGS("run", "--cpu"), "needs a value"},
        {ARGS("run", "--cpu", "1", "--cpu", "2", "busybox"), "twice"},
        {ARGS("run", "--gpu", "0.5", "--gpus", "1", "busybox"), "exclusive"},
        {ARGS("run", "--gpus", "1.5", "busybox"), "whole number"},
        {ARGS("run", "--cluster-size", "0", "busybox"), "--cluster-size"},
        {ARGS("run", "--cluster-size", "x", "busybox"), "--cluster-size"},
        {ARGS("run", "--cluster-mode", "mesh", "busybox"), "--cluster-mode"},
        {ARGS("run", "--type", "daemon", "busybox"), "--type"},
        {ARGS("run", "--priority", "1e3", "busybox"), "--priority"},
        {ARGS("run", "--env", "NOEQUALS", "busybox"), "KEY=VALUE"},
        {ARGS("run", "--env", "=v", "busybox"), "KEY=VALUE"},
        {ARGS("run", "--constraint", "gpu_model", "busybox"), "KEY=VALUE"},
        {ARGS("run", "--constraint", "agent=a", "--constraint", "agent=b",
              "busybox"), "given twice"},
        {ARGS("run", "--slot", "Bad!=1", "busybox"), "--slot"},
        {ARGS("run", "--wait=yes", "busybox"), "takes no value"},
        {ARGS("--timeout", "0", "ps"), "--timeout"},
        {ARGS("show"), "missing session ID"},
        {ARGS("show", "a", "b"), "unexpected argument 'b'"},
        {ARGS("logs"), "missing session ID"},
        {ARGS("terminate"), "missing session ID"},
        {ARGS("agents", "x"), "unexpected argument"},
        {ARGS("admin"), "usage: sokovan admin"},
        {ARGS("admin", "robot", "list"), "unknown kind 'robot'"},
        {ARGS("admin", "user"), "missing operation"},
        {ARGS("admin", "user", "rename", "bob"), "unknown operation"},
        {ARGS("admin", "user", "create"), "missing the user's name"},
        {ARGS("admin", "user", "create", "bob", "--role", "god"), "--role"},
        {ARGS("admin", "keypair", "create"), "--user"},
        {ARGS("admin", "user", "create", "bob", "--out", "f"), "--out"},
        {ARGS("admin", "policy", "create", "p", "--max-slots", "cpu=-1"),
         "--max-slots"},
        {ARGS("admin", "policy", "create", "p", "--max-lifetime", "5y"),
         "--max-lifetime"},
        {ARGS("admin", "group", "create", "g", "--lost-batch-policy", "x"),
         "--lost-batch-policy"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r;
        run_cli(&r, NULL, cases[i].args);
        ck_assert_msg(r.status == 2, "case %zu (%s ...): exit %d, stderr: %s",
                      i, cases[i].args[0], r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i].msg), "case %zu: stderr lacks "
                      "'%s': %s", i, cases[i].msg, r.err);
        ck_assert_str_eq(r.out, "");
    }
    cli_result r;
    run_cli(&r, NULL, ARGS("ps"));      /* valid, but nobody listens */
    expect(&r, 1, "cannot reach the manager");
}
END_TEST

START_TEST(test_help)
{
    const char *const *cases[] = {ARGS("--help"), ARGS("-h"),
        ARGS("run", "--help"), ARGS("ps", "--help"), ARGS("show", "-h"),
        ARGS("logs", "--help"), ARGS("terminate", "--help"),
        ARGS("agents", "--help"), ARGS("images", "--help"),
        ARGS("admin", "--help"), ARGS("admin", "user", "--help"),
        ARGS("admin", "keypair", "create", "--help")};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r;
        run_cli(&r, NULL, cases[i]);
        ck_assert_msg(r.status == 0, "case %zu: exit %d: %s", i, r.status,
                      r.err);
        ck_assert_msg(strstr(r.out, "usage: sokovan"), "case %zu: %s", i,
                      r.out);
    }
    cli_result r;
    run_cli(&r, NULL, ARGS("run", "--help"));
    ck_assert_ptr_nonnull(strstr(r.out, "--cluster-size"));
}
END_TEST

/* ---- against the fake manager ------------------------------------------ */

typedef struct script {
    int shows;                  /* session.show calls so far */
    int logs_calls;
    int drop_submits;           /* hang up on this many submits */
    int submits;
    char token[64];             /* the first submit's client token */
    int token_changed;          /* a resubmission used another token */
} script;

/* Submit: remember the token; maybe hang up as a dying manager would. */
static int submit_reply(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    script *sc = m->payload;
    skv_proto_session_submit req;
    ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                           env->body_len, NULL), 0);
    if (sc->submits++ == 0)
        snprintf(sc->token, sizeof sc->token, "%s", req.client_token);
    else if (strcmp(sc->token, req.client_token) != 0)
        sc->token_changed = 1;
    skv_proto_body_free(env->type, &req);
    if (sc->drop_submits-- > 0)
        return -1;
    skv_proto_session_ref ref = {"s-0123456789abcdef", "PENDING"};
    return fake_mgr_reply(fd, env->request_id, SKV_PROTO_SESSION_SUBMIT_REPLY,
                          &ref);
}

static void session_fill(skv_proto_session_info *s, const char *id,
                         const char *name, const char *status, skv_slots *sl)
{
    memset(s, 0, sizeof *s);
    s->session_id = (char *)id;
    s->name = (char *)name;
    s->owner = "alice";
    s->status = (char *)status;
    s->session_type = "batch";
    s->image = "busybox";
    s->cluster_mode = "single-node";
    s->cluster_size = 1;
    s->created_ms = fake_mgr_now() - 5000;
    s->slots = sl;
}

static int list_reply(int fd, uint64_t id)
{
    skv_slots *sl;
    ck_assert_int_eq(skv_slots_parse(&sl, "cpu=0.5,mem=1g", NULL, NULL), 0);
    skv_proto_session_info ss[2];
    session_fill(&ss[0], "s-00000000000000a1", "quote\"and\nnewline",
                 "RUNNING", sl);
    session_fill(&ss[1], "s-00000000000000b2", "plain", "TERMINATED", NULL);
    ss[1].exit_code = 3;
    skv_proto_session_list_reply r = {ss, 2, 2};
    int rc = fake_mgr_reply(fd, id, SKV_PROTO_SESSION_LIST_REPLY, &r);
    skv_slots_free(sl);
    return rc;
}

/* A session that runs on the second show and has ended on the third;
 * its stdout is "hello\n", its stderr "oops\n". */
static int show_reply(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    script *sc = m->payload;
    skv_proto_session_id req;
    ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                           env->body_len, NULL), 0);
    if (strcmp(req.session_id, "s-missing") == 0) {
        skv_proto_body_free(env->type, &req);
        return fake_mgr_error(fd, env->request_id, SKV_ENOENT,
                              "no session 's-missing'");
    }
    sc->shows++;
    const char *st = sc->shows == 1 ? "PENDING" : sc->shows == 2 ? "RUNNING"
                                                                 : "TERMINATED";
    skv_proto_session_show_reply r;
    session_fill(&r.session, req.session_id, "job", st, NULL);
    r.session.exit_code = 3;
    skv_proto_status_change h[] = {{"PENDING", 1, "submitted"},
                                   {"RUNNING", 2, "all kernels running"}};
    r.session.history = h;
    r.session.n_history = 2;
    skv_proto_pending_reason pr = {"default", "fits", "mem", 1073741824,
                                   "not enough memory"};
    if (sc->shows == 1) {
        r.session.pending = &pr;
        r.session.n_pending = 1;
    }
    int rc = fake_mgr_reply(fd, env->request_id, SKV_PROTO_SESSION_SHOW_REPLY,
                            &r);
    skv_proto_body_free(env->type, &req);
    return rc;
}

static int logs_reply(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    script *sc = m->payload;
    sc->logs_calls++;
    skv_proto_logs_request req;
    ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                           env->body_len, NULL), 0);
    int is_err = req.stream && strcmp(req.stream, "stderr") == 0;
    const char *text = is_err ? "oops\n" : "hello\n";
    size_t len = strlen(text);
    skv_proto_logs_reply r = {0};
    if (req.offset < len) {     /* two bytes at a time: offsets must chain */
        r.data = (uint8_t *)text + req.offset;
        r.data_len = len - req.offset < 2 ? len - req.offset : 2;
    }
    r.next_offset = req.offset + r.data_len;
    r.eof = (sc->shows >= 3 || strcmp(req.session_id, "s-done") == 0) &&
            r.next_offset == len;
    int rc = fake_mgr_reply(fd, env->request_id, SKV_PROTO_LOGS_REPLY, &r);
    skv_proto_body_free(env->type, &req);
    return rc;
}

static int agents_reply(int fd, uint64_t id)
{
    skv_slots *cap, *dev;
    ck_assert_int_eq(skv_slots_parse(&cap, "cpu=8,mem=16g", NULL, NULL), 0);
    ck_assert_int_eq(skv_slots_parse(&dev, "cuda.device=1,cuda.shares=1",
                                     NULL, NULL), 0);
    skv_proto_device d = {"cuda0", "cuda", 0, dev, "H100", "0000:17:00.0"};
    skv_proto_kv label = {"zone", "a"};
    skv_proto_agent_info a = {0};
    a.agent_id = "a1";
    a.resource_group = "default";
    a.architecture = "x86_64";
    a.status = "alive";
    a.labels = &label;
    a.n_labels = 1;
    a.devices = &d;
    a.n_devices = 1;
    a.capacity = cap;
    a.n_running = 2;
    skv_proto_agent_list_reply r = {&a, 1};
    int rc = fake_mgr_reply(fd, id, SKV_PROTO_AGENT_LIST_REPLY, &r);
    skv_slots_free(cap);
    skv_slots_free(dev);
    return rc;
}

/* Admin requests are echoed back as the reply's one object; keypair
 * create gets a generated key. */
static int admin_reply(int fd, const skv_proto_envelope *env)
{
    if (env->type == SKV_PROTO_ADMIN_USER) {
        skv_proto_admin_user req;
        ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                               env->body_len, NULL), 0);
        skv_proto_admin_user_reply r = {&req.user, 1};
        int rc = fake_mgr_reply(fd, env->request_id,
                                SKV_PROTO_ADMIN_USER_REPLY, &r);
        skv_proto_body_free(env->type, &req);
        return rc;
    }
    skv_proto_admin_keypair req;
    ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                           env->body_len, NULL), 0);
    skv_proto_keypair kp = req.keypair;
    kp.access_key = "AKNEWKEY0000000000001";
    kp.secret_key = "new-secret-new-secret-new-secret";
    skv_proto_admin_keypair_reply r = {&kp, 1};
    int rc = fake_mgr_reply(fd, env->request_id,
                            SKV_PROTO_ADMIN_KEYPAIR_REPLY, &r);
    skv_proto_body_free(env->type, &req);
    return rc;
}

static int cli_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    switch (env->type) {
    case SKV_PROTO_AGENT_LIST:
        return agents_reply(fd, env->request_id);
    case SKV_PROTO_ADMIN_USER:
    case SKV_PROTO_ADMIN_KEYPAIR:
        return admin_reply(fd, env);
    case SKV_PROTO_SESSION_LIST:
        return list_reply(fd, env->request_id);
    case SKV_PROTO_SESSION_SHOW:
        return show_reply(m, fd, env);
    case SKV_PROTO_SESSION_LOGS:
        return logs_reply(m, fd, env);
    case SKV_PROTO_SESSION_SUBMIT:
        return submit_reply(m, fd, env);
    default:
        return fake_mgr_error(fd, env->request_id, SKV_ENOTSUP, "not here");
    }
}

START_TEST(test_ps_json_and_table)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("ps", "--json"));
    expect(&r, 0, NULL);
    /* one document, one line, escaped strings, exact quantities */
    ck_assert_msg(strncmp(r.out, "{\"total\":2,\"sessions\":[{\"session_id\":"
                  "\"s-00000000000000a1\",\"name\":\"quote\\\"and\\nnewline\","
                  "\"owner\":\"alice\"", 86) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\"slots\":{\"cpu\":0.5,"
                                        "\"mem\":1073741824}"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"status\":\"TERMINATED\""));
    ck_assert_ptr_nonnull(strstr(r.out, "\"exit_code\":3,\"slots\":null,"
                                        "\"history\":[],\"pending\":[],"
                                        "\"kernels\":[]}]}\n"));
    ck_assert_ptr_eq(strchr(r.out, '\n'), r.out + strlen(r.out) - 1);
    /* default: the active statuses were asked for */
    skv_proto_session_list req;
    ck_assert_int_eq(m.last_type, SKV_PROTO_SESSION_LIST);
    ck_assert_int_eq(skv_proto_body_decode(&req, SKV_PROTO_SESSION_LIST,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(req.n_statuses, 5);
    ck_assert_str_eq(req.statuses[0], "PENDING");
    skv_proto_body_free(SKV_PROTO_SESSION_LIST, &req);

    run_cli(&r, m.endpoint, ARGS("ps", "--all"));
    expect(&r, 0, NULL);
    ck_assert_msg(strncmp(r.out, "SESSION             NAME", 24) == 0, "%s",
                  r.out);
    /* the newline in the name does not break the row */
    ck_assert_ptr_nonnull(strstr(r.out, "s-00000000000000a1  quote\"and"
                                        "\\x0anewline  alice"));
    ck_assert_ptr_nonnull(strstr(r.out, "cpu=0.5,mem=1g"));
    ck_assert_int_eq(skv_proto_body_decode(&req, SKV_PROTO_SESSION_LIST,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(req.n_statuses, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST, &req);
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_refused, 0);
}
END_TEST

START_TEST(test_run_builds_submit)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("run", "--cpu", "2", "--mem", "4g", "--gpu",
            "0.5", "--cluster-size", "3", "--cluster-mode", "multi-node",
            "--rg", "gpu", "--priority", "-5", "--type", "interactive",
            "--name", "train", "--env", "A=1", "--env", "B=x=y",
            "--constraint", "label.net=ib", "--constraint", "gpu_model=A100",
            "busybox", "--", "sh", "-c", "echo hi"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "s-0123456789abcdef\n");
    skv_proto_session_submit s;
    ck_assert_int_eq(m.last_type, SKV_PROTO_SESSION_SUBMIT);
    ck_assert_int_eq(skv_proto_body_decode(&s, SKV_PROTO_SESSION_SUBMIT,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_str_eq(s.image, "busybox");
    ck_assert_uint_eq(s.n_command, 3);
    ck_assert_str_eq(s.command[2], "echo hi");
    ck_assert_uint_eq(s.cluster_size, 3);
    ck_assert_str_eq(s.cluster_mode, "multi-node");
    ck_assert_str_eq(s.resource_group, "gpu");
    ck_assert_int_eq(s.priority, -5);
    ck_assert_str_eq(s.session_type, "interactive");
    ck_assert_str_eq(s.name, "train");
    ck_assert_uint_eq(s.n_env, 2);
    ck_assert_str_eq(s.env[1].key, "B");
    ck_assert_str_eq(s.env[1].value, "x=y");
    ck_assert_uint_eq(s.n_constraints, 2);
    ck_assert_str_eq(s.constraints[0].key, "label.net");
    ck_assert_str_eq(s.constraints[0].value, "ib");
    ck_assert_str_eq(s.constraints[1].key, "gpu_model");
    ck_assert(strncmp(s.client_token, "cli-", 4) == 0);
    ck_assert_uint_eq(strlen(s.client_token), 36);
    ck_assert_uint_eq(s.n_kernels, 3);
    ck_assert_str_eq(s.kernels[0].role, "main");
    ck_assert_str_eq(s.kernels[2].role, "sub");
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(skv_slots_get(s.kernels[i].slots, "cpu"), 2000);
        ck_assert_int_eq(skv_slots_get(s.kernels[i].slots, "mem"),
                         4LL << 30);
        ck_assert_int_eq(skv_slots_get(s.kernels[i].slots, "cuda.shares"),
                         500);
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);

    /* defaults: one main kernel, 1 CPU; command words after IMAGE */
    run_cli(&r, m.endpoint, ARGS("run", "--gpus", "2", "--json", "busybox",
            "echo", "--cpu"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "{\"session_id\":\"s-0123456789abcdef\","
                            "\"status\":\"PENDING\"}\n");
    ck_assert_int_eq(skv_proto_body_decode(&s, SKV_PROTO_SESSION_SUBMIT,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(s.n_command, 2);
    ck_assert_str_eq(s.command[1], "--cpu");
    ck_assert_uint_eq(s.n_kernels, 1);
    ck_assert_str_eq(s.cluster_mode, "single-node");
    ck_assert_str_eq(s.session_type, "batch");
    ck_assert_int_eq(skv_slots_get(s.kernels[0].slots, "cpu"), 1000);
    ck_assert_int_eq(skv_slots_get(s.kernels[0].slots, "cuda.device"), 2000);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    fake_mgr_stop(&m);
}
END_TEST

START_TEST(test_run_wait_streams_and_exits)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("run", "--wait", "busybox", "--", "true"));
    expect(&r, 3, "s-0123456789abcdef");     /* the session's exit code */
    ck_assert_str_eq(r.out, "hello\n");
    ck_assert_ptr_nonnull(strstr(r.err, "oops\n"));
    ck_assert_int_eq(sc.shows, 3);
    fake_mgr_stop(&m);
}
END_TEST

START_TEST(test_show_and_errors)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("show", "s-1"));    /* first show: pending */
    expect(&r, 0, NULL);
    ck_assert_ptr_nonnull(strstr(r.out, "Status:      PENDING"));
    ck_assert_ptr_nonnull(strstr(r.out, "Status history:"));
    ck_assert_ptr_nonnull(strstr(r.out, "all kernels running"));
    ck_assert_ptr_nonnull(strstr(r.out, "Why pending:"));
    ck_assert_ptr_nonnull(strstr(r.out, "default  fits       mem   1g"));
    run_cli(&r, m.endpoint, ARGS("show", "--json", "s-1"));
    expect(&r, 0, NULL);
    ck_assert(strncmp(r.out, "{\"session\":{\"session_id\":\"s-1\"", 30) == 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"history\":[{\"status\":\"PENDING\","
                                        "\"timestamp_ms\":1,\"reason\":"
                                        "\"submitted\"},"));
    run_cli(&r, m.endpoint, ARGS("show", "s-missing"));
    expect(&r, 1, "no session 's-missing' (SKV_ENOENT)");
    ck_assert_str_eq(r.out, "");
    run_cli(&r, m.endpoint, ARGS("images"));
    expect(&r, 1, "not here");
    run_cli(&r, m.endpoint, ARGS("logs", "s-1", "--stderr"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "oops\n");
    fake_mgr_stop(&m);
    ck_assert_int_eq(m.n_refused, 0);
}
END_TEST

START_TEST(test_key_file)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    char key[128];
    snprintf(key, sizeof key, "%s/key", m.dir);
    int fd = open(key, O_WRONLY | O_CREAT | O_EXCL, 0644);
    ck_assert_int_ge(fd, 0);
    const char text[] = "access_key=" FAKE_AK "\nsecret_key=" FAKE_SK "\n";
    ck_assert_int_eq(write(fd, text, sizeof text - 1), sizeof text - 1);
    close(fd);
    chmod(key, 0644);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("--key-file", key, "ps"));
    expect(&r, 1, "chmod 600");
    chmod(key, 0600);
    run_cli(&r, m.endpoint, ARGS("ps", "--key-file", key, "--json"));
    expect(&r, 0, NULL);
    ck_assert(strncmp(r.out, "{\"total\":2", 10) == 0);
    unlink(key);
    fake_mgr_stop(&m);
}
END_TEST

START_TEST(test_follow_agents_admin)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("logs", "s-done", "--follow"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "hello\n");

    run_cli(&r, m.endpoint, ARGS("agents", "--json"));
    expect(&r, 0, NULL);
    ck_assert_msg(strncmp(r.out, "{\"agents\":[{\"agent_id\":\"a1\","
                  "\"resource_group\":\"default\"", 46) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "\"labels\":{\"zone\":\"a\"},"
        "\"devices\":[{\"id\":\"cuda0\",\"kind\":\"cuda\",\"numa_node\":0,"
        "\"slots\":{\"cuda.device\":1,\"cuda.shares\":1}"));
    ck_assert_ptr_nonnull(strstr(r.out, "\"capacity\":{\"cpu\":8,"
        "\"mem\":17179869184},\"occupied\":null"));
    run_cli(&r, m.endpoint, ARGS("agents"));
    expect(&r, 0, NULL);
    ck_assert_ptr_nonnull(strstr(r.out, "a1     default  alive   x86_64  "
                                        "cpu=8,mem=16g"));

    run_cli(&r, m.endpoint, ARGS("admin", "user", "create", "bob", "--role",
            "admin", "--project", "p1", "--project", "p2", "--json"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "{\"users\":[{\"name\":\"bob\",\"email\":null,"
        "\"role\":\"admin\",\"domain\":null,\"projects\":[\"p1\",\"p2\"],"
        "\"resource_policy\":null,\"description\":null,\"active\":true}]}\n");
    skv_proto_admin_user u;
    ck_assert_int_eq(skv_proto_body_decode(&u, SKV_PROTO_ADMIN_USER,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(u.op, SKV_PROTO_ADMIN_CREATE);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER, &u);
    run_cli(&r, m.endpoint, ARGS("admin", "user", "update", "bob",
            "--inactive"));
    expect(&r, 0, NULL);
    ck_assert_ptr_nonnull(strstr(r.out, "bob   -     -       -"));
    ck_assert_ptr_nonnull(strstr(r.out, "  no\n"));

    char out[128];
    snprintf(out, sizeof out, "%s/new.key", m.dir);
    run_cli(&r, m.endpoint, ARGS("admin", "keypair", "create", "--user",
            "bob", "--out", out));
    expect(&r, 0, "shown only once");
    ck_assert_ptr_nonnull(strstr(r.out, "AKNEWKEY0000000000001"));
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_client_read_keyfile(ak, sk, out, &e), &e);
    ck_assert_str_eq(sk, "new-secret-new-secret-new-secret");
    /* never overwritten */
    int before = m.n_requests;
    run_cli(&r, m.endpoint, ARGS("admin", "keypair", "create", "--user",
            "bob", "--out", out));
    expect(&r, 1, "exists");
    ck_assert_int_eq(m.n_requests, before);   /* refused before asking */
    unlink(out);
    fake_mgr_stop(&m);
}
END_TEST

/* The manager hangs up twice after receiving the submission: the CLI
 * reconnects and resends with the same client token. */
START_TEST(test_run_resubmits_same_token)
{
    script sc = {0};
    sc.drop_submits = 2;
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("run", "busybox", "true"));
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "s-0123456789abcdef\n");
    fake_mgr_stop(&m);
    ck_assert_int_eq(sc.submits, 3);
    ck_assert_int_eq(m.n_conns, 3);
    ck_assert_int_eq(sc.token_changed, 0);
    ck_assert_int_eq(m.n_refused, 0);      /* fresh nonces on resend */
}
END_TEST

/* ---- text output of hostile strings ------------------------------------ */

/* ESC (a screen clear), CR, BS, DEL, a C1 control (CSI as UTF-8), then
 * valid UTF-8 (the protocol carries only valid UTF-8). */
#define EVIL "ev\x1b[2J\r\b\x7f\xc2\x9b-\xc3\xa9"
#define EVIL_TEXT "ev\\x1b[2J\\x0d\\x08\\x7f\\xc2\\x9b-\xc3\xa9"
#define EVIL_JSON "ev\\u001b[2J\\r\\u0008\\u007f\xc2\x9b-\xc3\xa9"

/* Nothing a terminal would act on: no C0 control but the line ends, no
 * DEL, no C1 control, no byte that is not part of valid UTF-8 here. */
static int terminal_safe(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || *p == 0xff ||
            (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
            return 0;
    return 1;
}

static int evil_show(int fd, const skv_proto_envelope *env)
{
    skv_proto_session_id req;
    ck_assert_int_eq(skv_proto_body_decode(&req, env->type, env->body,
                                           env->body_len, NULL), 0);
    skv_proto_session_show_reply r;
    session_fill(&r.session, req.session_id, EVIL, "PENDING", NULL);
    r.session.status_reason = EVIL;
    r.session.project = EVIL;
    skv_proto_status_change h[] = {{"PENDING", 1, EVIL}};
    r.session.history = h;
    r.session.n_history = 1;
    skv_proto_pending_reason pr = {"default", "fits", "mem", 1073741824,
                                   EVIL};
    r.session.pending = &pr;
    r.session.n_pending = 1;
    char *pub[] = {EVIL};
    skv_proto_kernel_info k = {0};
    k.kernel_id = "k-0";
    k.role = "main";
    k.agent_id = EVIL;
    k.status = "PENDING";
    k.address = EVIL;
    k.published = pub;
    k.n_published = 1;
    r.session.kernels = &k;
    r.session.n_kernels = 1;
    int rc = fake_mgr_reply(fd, env->request_id, SKV_PROTO_SESSION_SHOW_REPLY,
                            &r);
    skv_proto_body_free(env->type, &req);
    return rc;
}

static int evil_handler(fake_mgr *m, int fd, const skv_proto_envelope *env)
{
    (void)m;
    if (env->type == SKV_PROTO_SESSION_SHOW)
        return evil_show(fd, env);
    if (env->type == SKV_PROTO_SESSION_LIST) {
        skv_proto_session_info ss;
        session_fill(&ss, "s-00000000000000e1", EVIL, "PENDING", NULL);
        ss.owner = EVIL;
        skv_proto_session_list_reply r = {&ss, 1, 1};
        return fake_mgr_reply(fd, env->request_id,
                              SKV_PROTO_SESSION_LIST_REPLY, &r);
    }
    if (env->type == SKV_PROTO_SESSION_TERMINATE) {
        skv_proto_session_ref ref = {"s-00000000000000e1", EVIL};
        return fake_mgr_reply(fd, env->request_id,
                              SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    }
    if (env->type == SKV_PROTO_AGENT_LIST) {
        skv_proto_agent_info a = {0};
        a.agent_id = EVIL;
        a.resource_group = "default";
        a.status = "alive";
        skv_proto_agent_list_reply r = {&a, 1};
        return fake_mgr_reply(fd, env->request_id, SKV_PROTO_AGENT_LIST_REPLY,
                              &r);
    }
    /* an error that echoes a name, as "no session '...'" does */
    return fake_mgr_error(fd, env->request_id, SKV_ENOENT,
                          "no image '" EVIL "'");
}

/* Control characters in names, reasons and error messages reach the
 * terminal escaped, by every text command; --json stays exact. */
START_TEST(test_text_output_sanitized)
{
    fake_mgr m;
    fake_mgr_start(&m, evil_handler, NULL);
    const char *const *text_cmds[] = {ARGS("ps"), ARGS("show", "s-e1"),
        ARGS("agents"), ARGS("terminate", "s-e1")};
    for (size_t i = 0; i < sizeof text_cmds / sizeof text_cmds[0]; i++) {
        cli_result r;
        run_cli(&r, m.endpoint, text_cmds[i]);
        expect(&r, 0, NULL);
        ck_assert_msg(terminal_safe(r.out), "%s: raw control bytes in: %s",
                      text_cmds[i][0], r.out);
        ck_assert_msg(strstr(r.out, EVIL_TEXT), "%s: no '%s' in: %s",
                      text_cmds[i][0], EVIL_TEXT, r.out);
    }
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("show", "s-e1"));
    /* the summary's fields and every table of show */
    ck_assert_ptr_nonnull(strstr(r.out, "Name:        " EVIL_TEXT "\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "Status:      PENDING (" EVIL_TEXT
                                        ")\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "k-0     main  " EVIL_TEXT));
    ck_assert_ptr_nonnull(strstr(r.out, "PENDING  " EVIL_TEXT "\n"));
    ck_assert_ptr_nonnull(strstr(r.out, "1g         " EVIL_TEXT "\n"));
    /* an error message that echoes a name (stderr) */
    run_cli(&r, m.endpoint, ARGS("images"));
    expect(&r, 1, "no image '" EVIL_TEXT "' (SKV_ENOENT)");
    ck_assert(terminal_safe(r.err));
    /* what the user typed, echoed by a usage error (argv may hold bytes
     * that are not UTF-8) */
    run_cli(&r, m.endpoint, ARGS("show", "a", EVIL "\xff"));
    expect(&r, 2, "unexpected argument '" EVIL_TEXT "\\xff'");
    ck_assert(terminal_safe(r.err));
    /* JSON: the writer's exact escapes, untouched by the sanitizer */
    run_cli(&r, m.endpoint, ARGS("ps", "--json"));
    expect(&r, 0, NULL);
    ck_assert_msg(strstr(r.out, "\"name\":\"" EVIL_JSON "\""), "%s", r.out);
    run_cli(&r, m.endpoint, ARGS("show", "--json", "s-e1"));
    expect(&r, 0, NULL);
    ck_assert_msg(strstr(r.out, "\"status_reason\":\"" EVIL_JSON "\""), "%s",
                  r.out);
    fake_mgr_stop(&m);
}
END_TEST

/* ---- a manager that is not up yet --------------------------------------- */

/* A bound socket nobody accepts on: what a killed manager leaves. */
static int stale_socket(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    return fd;
}

/* `run` while the manager is down (first no socket, then a stale one) and
 * up 1.4 s later: the CLI keeps trying within --timeout and submits once,
 * on one connection. */
START_TEST(test_run_waits_for_manager)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    char hidden[160];
    snprintf(hidden, sizeof hidden, "%s.up", m.path);
    ck_assert_int_eq(rename(m.path, hidden), 0);     /* "not started" */
    cli_child ch;
    cli_spawn(&ch, m.endpoint, ARGS("--timeout", "10000", "run", "busybox",
                                    "true"));
    usleep(700 * 1000);
    int stale = stale_socket(m.path);                 /* "crashed" */
    usleep(700 * 1000);
    ck_assert_int_eq(rename(hidden, m.path), 0);     /* "up" */
    cli_result r;
    cli_finish(&ch, &r);
    close(stale);
    expect(&r, 0, NULL);
    ck_assert_str_eq(r.out, "s-0123456789abcdef\n");
    fake_mgr_stop(&m);
    ck_assert_int_eq(sc.submits, 1);
    ck_assert_int_eq(m.n_conns, 1);
    ck_assert(strncmp(sc.token, "cli-", 4) == 0);
}
END_TEST

/* No manager at all: the error says where the CLI tried, where that
 * address came from, for how long, and what to check. */
START_TEST(test_unreachable_says_where_and_what)
{
    cli_result r;
    int64_t t0 = fake_mgr_now();
    run_cli(&r, NULL, ARGS("--timeout", "1200", "run", "busybox", "true"));
    int64_t took = fake_mgr_now() - t0;
    expect(&r, 1, "cannot reach the manager at "
                  "unix:/nonexistent/skv-test.sock (from $SOKOVAN_ENDPOINT, "
                  "tried for ");
    ck_assert_ptr_nonnull(strstr(r.err, "No such file or directory "
                                        "(SKV_ESYS)"));
    ck_assert_ptr_nonnull(strstr(r.err, "check: no socket at that path: is "
                                        "sokovan-manager running"));
    ck_assert_ptr_nonnull(strstr(r.err, "--endpoint or $SOKOVAN_ENDPOINT"));
    ck_assert_msg(took >= 1100 && took < 6000, "gave up after %lld ms",
                  (long long)took);
    /* other commands fail at once; TCP: nothing listening on the port */
    t0 = fake_mgr_now();
    run_cli(&r, NULL, ARGS("--endpoint", "tcp:127.0.0.1:1", "ps"));
    ck_assert_int_lt(fake_mgr_now() - t0, 1000);
    expect(&r, 1, "cannot reach the manager at tcp:127.0.0.1:1 (from "
                  "--endpoint)");
    ck_assert_ptr_nonnull(strstr(r.err, "check: nothing listens on that "
                                        "port"));
    /* a bad address is not waited for either */
    run_cli(&r, NULL, ARGS("--endpoint", "no-such-host.invalid:7000", "run",
                           "busybox", "true"));
    expect(&r, 1, "cannot resolve");
    ck_assert_ptr_nonnull(strstr(r.err, "check: the host name does not "
                                        "resolve"));
}
END_TEST


static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

/* A job file is the flags written down: per-role kernel groups (main
 * first on the wire, whatever the file's order), lists, maps, booleans,
 * the new scheduling keys; flags after -f override its scalars. */
START_TEST(test_run_job_file)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    char path[] = "/tmp/skv-job-XXXXXX";
    close(mkstemp(path));
    write_file(path,
        "image: busybox\n"
        "command: [sh, -c, \"echo hi\"]\n"
        "cluster_mode: multi-node\n"
        "priority: 5\n"
        "estimated_duration: 30m\n"
        "preemptible: true\n"
        "depends_on: [s-1, s-2]\n"
        "env: {A: \"1\", B: two}\n"
        "kernels:\n"
        "  - role: sub\n"
        "    count: 2\n"
        "    gpus: 1\n"
        "  - {role: main, cpu: 2, mem: 4g, image: busybox:main}\n");
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("run", "-f", path, "--priority", "7"));
    expect(&r, 0, NULL);
    skv_proto_session_submit s;
    ck_assert_int_eq(skv_proto_body_decode(&s, SKV_PROTO_SESSION_SUBMIT,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_str_eq(s.image, "busybox");
    ck_assert_uint_eq(s.n_command, 3);
    ck_assert_int_eq(s.priority, 7);
    ck_assert_uint_eq(s.estimated_duration_ms, 1800000);
    ck_assert(s.preemptible);
    ck_assert_uint_eq(s.n_dependencies, 2);
    ck_assert_str_eq(s.dependencies[1], "s-2");
    ck_assert_uint_eq(s.n_env, 2);
    ck_assert_uint_eq(s.cluster_size, 3);
    ck_assert_uint_eq(s.n_kernels, 3);
    ck_assert_str_eq(s.kernels[0].role, "main");
    ck_assert_str_eq(s.kernels[0].image, "busybox:main");
    ck_assert_int_eq(skv_slots_get(s.kernels[0].slots, "cpu"), 2000);
    ck_assert_int_eq(skv_slots_get(s.kernels[0].slots, "mem"), 4LL << 30);
    for (int i = 1; i < 3; i++) {
        ck_assert_str_eq(s.kernels[i].role, "sub");
        ck_assert_int_eq(skv_slots_get(s.kernels[i].slots, "cpu"), 1000);
        ck_assert_int_eq(skv_slots_get(s.kernels[i].slots, "cuda.device"),
                         1000);
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    /* the new flags without a file */
    run_cli(&r, m.endpoint, ARGS("run", "--depends-on", "s-9",
            "--estimated-duration", "90s", "--no-preemptible", "busybox"));
    expect(&r, 0, NULL);
    ck_assert_int_eq(skv_proto_body_decode(&s, SKV_PROTO_SESSION_SUBMIT,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(s.n_dependencies, 1);
    ck_assert_uint_eq(s.estimated_duration_ms, 90000);
    ck_assert(!s.preemptible);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    unlink(path);
    fake_mgr_stop(&m);
}
END_TEST

/* --mount and a job file's mounts list become session.submit's mounts;
 * a malformed one is a usage error and nothing is submitted. */
START_TEST(test_run_mounts)
{
    script sc = {0};
    fake_mgr m;
    fake_mgr_start(&m, cli_handler, &sc);
    char path[] = "/tmp/skv-job-XXXXXX";
    close(mkstemp(path));
    write_file(path, "image: busybox\n"
                     "mounts: [data, \"models:/m:ro\"]\n");
    cli_result r;
    run_cli(&r, m.endpoint, ARGS("run", "-f", path, "--mount", "x:rw"));
    expect(&r, 0, NULL);
    skv_proto_session_submit s;
    ck_assert_int_eq(skv_proto_body_decode(&s, SKV_PROTO_SESSION_SUBMIT,
                     m.last_body, m.last_body_len, NULL), 0);
    ck_assert_uint_eq(s.n_mounts, 3);
    ck_assert_str_eq(s.mounts[0].folder, "data");
    ck_assert_ptr_null(s.mounts[0].target);
    ck_assert(!s.mounts[0].readonly);
    ck_assert_str_eq(s.mounts[1].folder, "models");
    ck_assert_str_eq(s.mounts[1].target, "/m");
    ck_assert(s.mounts[1].readonly);
    ck_assert_str_eq(s.mounts[2].folder, "x");
    ck_assert_ptr_null(s.mounts[2].source);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    const char *bad[] = {":/m", "a:rel", "a:/m:ro:x", "a:/m:maybe"};
    for (size_t i = 0; i < 4; i++) {
        int before = m.n_requests;
        run_cli(&r, m.endpoint, ARGS("run", "--mount", bad[i], "busybox"));
        expect(&r, 2, "--mount");
        ck_assert_int_eq(m.n_requests, before);
    }
    unlink(path);
    fake_mgr_stop(&m);
}
END_TEST

/* A bad key or value names the file and line; nothing is submitted. */
START_TEST(test_run_job_file_errors)
{
    const struct { const char *text, *msg; } cases[] = {
        {"image: busybox\nmemory: 4g\n", ":2: unknown key 'memory'"},
        {"image: busybox\ncpu: [1\n", ":3: did not find expected"},
        {"image: busybox\n\ncpu: -1\n", ":3: --cpu"},
        {"image: busybox\nwait: maybe\n", ":2: 'maybe' is not true"},
        {"- a\n- b\n", ":1: a job file is a map"},
        {"image: busybox\nenv: [A]\n", ":2: --env: expected KEY=VALUE"},
        {"image: busybox\nkernels:\n  - {role: boss}\n", ":3: role"},
        {"image: busybox\nkernels:\n  - {role: sub, cpu: 1}\n",
         "exactly one group with role: main"},
        {"image: busybox\nkernels:\n  - {role: main, count: 2}\n",
         "the main group has one kernel"},
        {"image: busybox\ncpu: 2\nkernels:\n  - {role: main}\n",
         "set per kernel group"},
        {"image: busybox\ncluster_size: 4\nkernels:\n  - {role: main}\n",
         "cluster_size 4 but the kernels list 1"},
        {"", ":0: empty job file"},
    };
    char path[] = "/tmp/skv-job-XXXXXX";
    close(mkstemp(path));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(path, cases[i].text);
        cli_result r;
        run_cli(&r, NULL, ARGS("run", "--file", path));
        ck_assert_msg(r.status == 2, "case %zu: exit %d: %s", i, r.status,
                      r.err);
        ck_assert_msg((cases[i].msg[0] != ':' || strstr(r.err, path)) &&
                      strstr(r.err, cases[i].msg),
                      "case %zu: stderr lacks '%s': %s", i, cases[i].msg,
                      r.err);
    }
    cli_result r;
    run_cli(&r, NULL, ARGS("run", "-f", "/nonexistent/job.yaml"));
    expect(&r, 1, "cannot open");
    run_cli(&r, NULL, ARGS("run", "-f"));
    expect(&r, 2, "needs a value");
    unlink(path);
}
END_TEST

/* Every program answers --version, `version` and `help` (exit 0, on
 * stdout): an operator checking what is installed needs no manual. */
START_TEST(test_version_and_help_everywhere)
{
    const char *progs[] = {"sokovan", "sokovan-manager", "sokovan-agent",
                           "sokovan-sim", "sokovan-topo"};
    const char *forms[] = {"--version", "version", "help"};
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
            char cmd[512], out[8192];
            snprintf(cmd, sizeof cmd, "%s/bin/%s %s 2>/dev/null; echo "
                     "rc=$?", skv_test_build_dir(), progs[i], forms[f]);
            skv_test_sh_output(cmd, out, sizeof out);
            ck_assert_msg(strstr(out, "rc=0"), "%s %s: %s", progs[i],
                          forms[f], out);
            const char *want = f < 2 ? "(libsokovan " SKV_VERSION_STRING ")"
                                     : "usage: ";
            ck_assert_msg(strstr(out, want), "%s %s: %s", progs[i],
                          forms[f], out);
        }
    cli_result r;
    run_cli(&r, NULL, ARGS("help", "run"));
    expect(&r, 0, NULL);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sokovan run"));
    run_cli(&r, NULL, ARGS("help", "nosuch"));
    expect(&r, 2, "unknown command 'nosuch'");
}
END_TEST

/* Under --json an error is one JSON document on stdout (and nothing on
 * stderr), whatever failed: parsing, a usage rule, or reaching the
 * manager (its hint goes to details). python3 parses it. */
START_TEST(test_json_errors)
{
    const struct { const char *const *args; int status; const char *kind,
                   *code, *msg; } cases[] = {
        {ARGS("--json", "frobnicate"), 2, "usage", "None", "unknown command"},
        {ARGS("--json", "--bogus", "ps"), 2, "usage", "None", "--bogus"},
        {ARGS("ps", "--limit", "0", "--json"), 2, "usage", "None", "--limit"},
        {ARGS("logs", "s-1", "--json"), 2, "usage", "None", "--json"},
        {ARGS("--json", "ps"), 1, "failed", "SKV_ESYS",
         "cannot reach the manager"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r;
        run_cli(&r, NULL, cases[i].args);
        ck_assert_msg(r.status == cases[i].status, "case %zu: exit %d", i,
                      r.status);
        ck_assert_msg(r.err[0] == 0, "case %zu: stderr: %s", i, r.err);
        char path[] = "/tmp/skv-cli-json-XXXXXX", cmd[512], out[1024];
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, r.out, strlen(r.out)),
                         (ssize_t)strlen(r.out));
        close(fd);
        snprintf(cmd, sizeof cmd, "python3 -c 'import json,sys; e=json.load("
                 "open(sys.argv[1]))[\"error\"]; print(e[\"kind\"], "
                 "e[\"code\"], len(e[\"details\"]), e[\"message\"])' %s "
                 "2>&1", path);
        skv_test_sh_output(cmd, out, sizeof out);
        unlink(path);
        char want[128];
        snprintf(want, sizeof want, "%s %s ", cases[i].kind, cases[i].code);
        ck_assert_msg(strncmp(out, want, strlen(want)) == 0 &&
                      strstr(out, cases[i].msg), "case %zu: %s (stdout %s)",
                      i, out, r.out);
    }
}
END_TEST

Suite *skv_test_suite_cli(void);
Suite *skv_test_suite_cli(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_usage_errors);
    tcase_add_test(tc, test_help);
    tcase_add_test(tc, test_ps_json_and_table);
    tcase_add_test(tc, test_run_builds_submit);
    tcase_add_test(tc, test_run_wait_streams_and_exits);
    tcase_add_test(tc, test_show_and_errors);
    tcase_add_test(tc, test_key_file);
    tcase_add_test(tc, test_follow_agents_admin);
    tcase_add_test(tc, test_run_resubmits_same_token);
    tcase_add_test(tc, test_text_output_sanitized);
    tcase_add_test(tc, test_run_waits_for_manager);
    tcase_add_test(tc, test_unreachable_says_where_and_what);
    tcase_add_test(tc, test_version_and_help_everywhere);
    tcase_add_test(tc, test_json_errors);
    tcase_add_test(tc, test_run_job_file);
    tcase_add_test(tc, test_run_job_file_errors);
    tcase_add_test(tc, test_run_mounts);
    tcase_add_unchecked_fixture(tc, fake_mgr_base_setup,
                                fake_mgr_base_teardown);
    suite_add_tcase(s, tc);
    return s;
}
