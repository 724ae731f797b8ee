/* The fixture of the suites that drive the real daemons through the
 * `sokovan` CLI (e2e_cli, e2e_drain, e2e_quota; e2e_exec takes the first
 * half): one cluster per test case (tests/e2e_cluster.h), the CLI found
 * beside the daemons, and `sokovan --endpoint <cluster> ARGS...` run as the
 * admin with its output captured. Included by one test file each: the
 * globals are that file's own.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TESTS_E2E_CLI_FIXTURE_H
#define SKV_TESTS_E2E_CLI_FIXTURE_H

#include "skv_test.h"
#include "e2e_cluster.h"

static e2e_cluster g;
static const char *g_skip;
static char g_cli[PATH_MAX + 16];

static inline void setup(void)
{
    g_skip = NULL;
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
    if (!g_skip && (snprintf(g_cli, sizeof(g_cli), "%s/sokovan", g.bin) < 0 ||
                    access(g_cli, X_OK) != 0))
        g_skip = "needs build/bin/sokovan (make progs)";
}

static inline void teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define REQUIRE()                                                              \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: SKIP: %s\n", __func__, g_skip);               \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

#ifndef E2E_CLI_FIXTURE_NO_RUN

/* ---- the CLI as the admin -------------------------------------------------- */

typedef struct cli_run {
    pid_t pid;
    int fo, fe;
    int status;
    char out[32768];
    char err[8192];
} cli_run;

/* Start `sokovan --endpoint <cluster> ARGS...` as the admin; its stdout
 * and stderr go to unlinked temporary files (no pipe to fill up). */
static inline void cli_start(cli_run *r, const char *const *args)
{
    char ak[SKV_AUTH_ACCESS_KEY_MAX + 32], sk[SKV_AUTH_SECRET_KEY_MAX + 32];
    snprintf(ak, sizeof(ak), "SOKOVAN_ACCESS_KEY=%s", g.admin_ak);
    snprintf(sk, sizeof(sk), "SOKOVAN_SECRET_KEY=%s", g.admin_sk);
    char *envp[] = {ak, sk, "HOME=/nonexistent", "PATH=/usr/bin:/bin", NULL};
    char *argv[40];
    int n = 0;
    argv[n++] = g_cli;
    argv[n++] = "--endpoint";
    argv[n++] = g.endpoint;
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    char to[] = "/tmp/skv-e2e-cli-out-XXXXXX", te[] = "/tmp/skv-e2e-cli-XXXXXX";
    r->fo = mkstemp(to);
    r->fe = mkstemp(te);
    ck_assert(r->fo >= 0 && r->fe >= 0);
    unlink(to);
    unlink(te);
    r->pid = fork();
    ck_assert_int_ge(r->pid, 0);
    if (r->pid == 0) {
        dup2(r->fo, 1);
        dup2(r->fe, 2);
        execve(g_cli, argv, envp);
        _exit(127);
    }
}

static inline void slurp(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    ssize_t n;
    lseek(fd, 0, SEEK_SET);
    while (len + 1 < cap && (n = read(fd, buf + len, cap - 1 - len)) > 0)
        len += (size_t)n;
    buf[len] = '\0';
    close(fd);
}

static inline void cli_wait(cli_run *r)
{
    int st;
    ck_assert_int_eq(waitpid(r->pid, &st, 0), r->pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    slurp(r->fo, r->out, sizeof(r->out));
    slurp(r->fe, r->err, sizeof(r->err));
}

static inline void cli(cli_run *r, const char *const *args)
{
    cli_start(r, args);
    cli_wait(r);
}

#define CLI_OK(r, ...)                                                         \
    do {                                                                       \
        cli((r), ARGS(__VA_ARGS__));                                           \
        ck_assert_msg((r)->status == 0, "%s: exit %d: %s", #__VA_ARGS__,       \
                      (r)->status, (r)->err);                                  \
    } while (0)

/* `sokovan run ...` without --wait prints the session id on stdout. */
static inline void run_id(char *sid, size_t cap, const char *const *args)
{
    cli_run r;
    cli(&r, args);
    ck_assert_msg(r.status == 0, "run: exit %d: %s", r.status, r.err);
    snprintf(sid, cap, "%.*s", (int)strcspn(r.out, "\n"), r.out);
    ck_assert_msg(sid[0], "run printed no id: %s", r.err);
}

/* True when session sid's history has a change whose reason holds text. */
static inline bool history_has(skv_client *cl, const char *sid,
                               const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_show_reply sh = {0};
    SKV_CK_OK(skv_client_show(cl, &sh, sid, &e), &e);
    bool found = false;
    for (size_t i = 0; i < sh.session.n_history; i++) {
        const char *r = sh.session.history[i].reason;
        found |= r && strstr(r, text) != NULL;
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    return found;
}

#endif /* E2E_CLI_FIXTURE_NO_RUN */
#endif
