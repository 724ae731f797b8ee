/* `sokovan exec` and `sokovan shell` through the real daemons
 * (tests/e2e_cluster.h): the CLI talks to sokovan-manager, which relays
 * the exec to the sokovan-agent holding the kernel. Echo and exit codes;
 * 100 MB through stdin and back (sha256); a terminal (/dev/pts, a resize
 * followed, Ctrl-C, the local terminal restored); refusals (an ended
 * session, another user's); a client killed -9 mid-exec leaves no process;
 * an agent killed -9 mid-exec ends the client's exec with an error; many
 * execs at once; the same through an agent of the oci backend (runc).
 *
 * Needs root, /bin/busybox and the daemons and the CLI in <build>/bin;
 * otherwise every test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <poll.h>
#include <pty.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <sodium.h>

#define E2E_CLI_FIXTURE_NO_RUN /* its own cli_run: a pty, streamed input */
#include "e2e_cli_fixture.h"

/* A cluster of one agent and a running session (as the admin) in sid. */
static skv_client *up(char *sid)
{
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    E2E_OK(e2e_start_manager(&g, "a1"));
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, cl, 1));
    e2e_job j = {"interactive", "sleep 100000", "cpu=1,mem=256m", 1, false,
                 NULL};
    SKV_CK_OK(e2e_submit(cl, sid, &j, &e), &e);
    E2E_OK(e2e_wait_running(&g, cl, sid, 30000));
    return cl;
}

/* ---- running the CLI -------------------------------------------------------- */

typedef struct cli_run {
    pid_t pid;
    int in, out, err;           /* pipes to and from it; -1 when not */
    int status;
    char obuf[65536], ebuf[8192];
    size_t olen, elen;
} cli_run;

/* argv of `sokovan --endpoint <cluster> ARGS...` in argv (32 slots). */
static void cli_argv(char **argv, const char *const *args)
{
    int n = 0;
    argv[n++] = g_cli;
    argv[n++] = "--endpoint";
    argv[n++] = g.endpoint;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
}

static void cli_env(char **envp, char *ak, char *sk, const char *akv,
                    const char *skv)
{
    snprintf(ak, SKV_AUTH_ACCESS_KEY_MAX + 32, "SOKOVAN_ACCESS_KEY=%s",
             akv ? akv : g.admin_ak);
    snprintf(sk, SKV_AUTH_SECRET_KEY_MAX + 32, "SOKOVAN_SECRET_KEY=%s",
             skv ? skv : g.admin_sk);
    envp[0] = ak;
    envp[1] = sk;
    envp[2] = "HOME=/nonexistent";
    envp[3] = "PATH=/usr/bin:/bin";
    envp[4] = NULL;
}

/* Start the CLI with pipes on stdin, stdout and stderr, as the user of
 * ak/sk (NULL: the admin). */
static void cli_start_as(cli_run *r, const char *ak, const char *sk,
                         const char *const *args)
{
    char a[SKV_AUTH_ACCESS_KEY_MAX + 32], s[SKV_AUTH_SECRET_KEY_MAX + 32];
    char *argv[32], *envp[5];
    cli_argv(argv, args);
    cli_env(envp, a, s, ak, sk);
    int pi[2], po[2], pe[2];
    ck_assert(pipe2(pi, O_CLOEXEC) == 0 && pipe2(po, O_CLOEXEC) == 0 &&
              pipe2(pe, O_CLOEXEC) == 0);
    memset(r, 0, sizeof(*r));
    r->pid = fork();
    ck_assert_int_ge(r->pid, 0);
    if (r->pid == 0) {
        dup2(pi[0], 0);
        dup2(po[1], 1);
        dup2(pe[1], 2);
        execve(g_cli, argv, envp);
        _exit(127);
    }
    close(pi[0]);
    close(po[1]);
    close(pe[1]);
    r->in = pi[1];
    r->out = po[0];
    r->err = pe[0];
}

static void cli_start(cli_run *r, const char *const *args)
{
    cli_start_as(r, NULL, NULL, args);
}

static void take(int *fd, char *buf, size_t cap, size_t *len)
{
    char tmp[65536];
    ssize_t n = read(*fd, tmp, sizeof(tmp));
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return;
    }
    size_t k = (size_t)n < cap - 1 - *len ? (size_t)n : cap - 1 - *len;
    memcpy(buf + *len, tmp, k);
    *len += k;
    buf[*len] = '\0';
}

/* Close its stdin, collect its output and its exit status. */
static void cli_wait(cli_run *r)
{
    if (r->in >= 0)
        close(r->in);
    r->in = -1;
    while (r->out >= 0 || r->err >= 0) {
        struct pollfd p[2] = {{r->out, POLLIN, 0}, {r->err, POLLIN, 0}};
        ck_assert_int_ge(poll(p, 2, 60000), 1);
        if (p[0].revents)
            take(&r->out, r->obuf, sizeof(r->obuf), &r->olen);
        if (p[1].revents)
            take(&r->err, r->ebuf, sizeof(r->ebuf), &r->elen);
    }
    int st;
    ck_assert_int_eq(waitpid(r->pid, &st, 0), r->pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void cli(cli_run *r, const char *const *args)
{
    cli_start(r, args);
    cli_wait(r);
}

/* ---- host processes ------------------------------------------------------------ */

/* Host processes whose command line is exactly argv0 arg1. */
static int count_procs(const char *argv0, const char *arg1)
{
    DIR *d = opendir("/proc");
    struct dirent *de;
    int n = 0;
    while (d && (de = readdir(d)) != NULL) {
        char p[300], buf[256] = "";
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
        FILE *f = fopen(p, "r");
        size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        size_t l0 = strlen(argv0);
        if (len == l0 + 1 + strlen(arg1) + 1 && strcmp(buf, argv0) == 0 &&
            strcmp(buf + l0 + 1, arg1) == 0)
            n++;
    }
    if (d)
        closedir(d);
    return n;
}

static bool procs_become(const char *a0, const char *a1, int want, int ms)
{
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        if (count_procs(a0, a1) == want)
            return true;
        e2e_sleep_ms(50);
    }
    return count_procs(a0, a1) == want;
}

/* Whether pid has ended (a zombie not yet reaped counts). */
static bool ended(pid_t pid)
{
    char p[64], buf[256] = "";
    snprintf(p, sizeof(p), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    const char *close_paren = n ? strrchr(buf, ')') : NULL;
    return !close_paren || close_paren[1] == '\0' || close_paren[2] == 'Z';
}

/* Send sig to pid every millisecond until it ends (at most 10 s). */
static void pester(pid_t pid, int sig)
{
    for (int64_t end = e2e_now_ms() + 10000; e2e_now_ms() < end;) {
        if (ended(pid) || kill(pid, sig) < 0)
            return;
        usleep(1000);
    }
}

/* ---- echo and exit codes ---------------------------------------------------------- */

START_TEST(test_e2e_exec_echo_exit_codes)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    cli_run r;
    cli(&r, ARGS("exec", sid, "--", "echo", "hello", "from", "exec"));
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.ebuf);
    ck_assert_str_eq(r.obuf, "hello from exec\n");
    /* exit codes, stderr kept apart, the kernel's environment */
    cli(&r, ARGS("exec", sid, "sh", "-c", "echo out; echo err >&2; exit 3"));
    ck_assert_int_eq(r.status, 3);
    ck_assert_str_eq(r.obuf, "out\n");
    ck_assert_msg(strstr(r.ebuf, "err\n") != NULL, "stderr: %s", r.ebuf);
    cli(&r, ARGS("exec", sid, "--", "false"));
    ck_assert_int_eq(r.status, 1);
    /* killed by a signal: 128 + N */
    cli(&r, ARGS("exec", sid, "--", "sh", "-c", "kill -9 $$"));
    ck_assert_int_eq(r.status, 128 + 9);
    /* not found in the kernel: a clear error */
    cli(&r, ARGS("exec", sid, "--", "no-such-command"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "No such file") != NULL, "%s", r.ebuf);
    /* without -i stdin is closed: cat ends at once */
    cli_start(&r, ARGS("exec", sid, "--", "cat"));
    cli_wait(&r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_uint_eq(r.olen, 0);
    /* Signals while the CLI waits for exec.start's answer (a resize,
     * a Ctrl-C typed early) interrupt that wait; they must not end it. */
    cli_start(&r, ARGS("exec", sid, "--", "sh", "-c", "sleep 0.3; echo ok"));
    pester(r.pid, SIGWINCH);
    cli_wait(&r);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.ebuf);
    ck_assert_str_eq(r.obuf, "ok\n");
    /* SIGINT to the CLI reaches the command */
    cli_start(&r, ARGS("exec", "-i", sid, "--", "sleep", "4243"));
    ck_assert(procs_become("sleep", "4243", 1, 10000));
    kill(r.pid, SIGINT);
    cli_wait(&r);
    ck_assert_int_eq(r.status, 128 + SIGINT);
    ck_assert(procs_become("sleep", "4243", 0, 5000));
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- 100 MB through stdin and back ---------------------------------------------------- */

#define BIG (100u * 1024 * 1024)

static void fill(uint8_t *buf, size_t n, uint64_t *state)
{
    for (size_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        buf[i] = (uint8_t)(*state >> 56);
    }
}

/* Feed BIG pseudo-random bytes to r's stdin while reading its stdout;
 * both hashed. */
static void pump_big(cli_run *r, uint8_t in_hash[32], uint8_t out_hash[32],
                     size_t *out_len)
{
    crypto_hash_sha256_state hi, ho;
    crypto_hash_sha256_init(&hi);
    crypto_hash_sha256_init(&ho);
    static uint8_t buf[65536], rb[65536];
    size_t sent = 0, off = 0, have = 0;
    uint64_t st = 42;
    *out_len = 0;
    fcntl(r->in, F_SETFL, O_NONBLOCK);
    while (r->out >= 0) {
        struct pollfd p[2] = {{r->out, POLLIN, 0}, {r->in, POLLOUT, 0}};
        ck_assert_int_ge(poll(p, r->in >= 0 ? 2 : 1, 60000), 1);
        if (p[0].revents) {
            ssize_t n = read(r->out, rb, sizeof(rb));
            if (n <= 0) {
                close(r->out);
                r->out = -1;
            } else {
                crypto_hash_sha256_update(&ho, rb, (size_t)n);
                *out_len += (size_t)n;
            }
        }
        if (r->in >= 0 && p[1].revents) {
            if (off == have) {
                have = BIG - sent < sizeof(buf) ? BIG - sent : sizeof(buf);
                fill(buf, have, &st);
                crypto_hash_sha256_update(&hi, buf, have);
                off = 0;
            }
            ssize_t n = write(r->in, buf + off, have - off);
            if (n > 0) {
                off += (size_t)n;
                sent += (size_t)n;
            }
            if (sent == BIG) {
                close(r->in);
                r->in = -1;
            }
        }
    }
    crypto_hash_sha256_final(&hi, in_hash);
    crypto_hash_sha256_final(&ho, out_hash);
}

START_TEST(test_e2e_exec_100mb)
{
    REQUIRE();
    ck_assert_int_ge(sodium_init(), 0);
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    cli_run r;
    cli_start(&r, ARGS("exec", "-i", sid, "--", "cat"));
    uint8_t hin[32], hout[32];
    size_t got = 0;
    int64_t t0 = e2e_now_ms();
    pump_big(&r, hin, hout, &got);
    int64_t ms = e2e_now_ms() - t0;
    cli_wait(&r);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.ebuf);
    ck_assert_uint_eq(got, BIG);
    ck_assert_msg(memcmp(hin, hout, 32) == 0, "sha256 of what came back "
                  "differs from what was sent");
    fprintf(stderr, "e2e_exec: 100 MiB through exec -i cat and back in "
            "%lld ms (%.1f MiB/s)\n", (long long)ms,
            ms ? 100.0 * 1000 / (double)ms : 0.0);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- a terminal ------------------------------------------------------------------------ */

typedef struct pty_run {
    pid_t pid;
    int master;
    char buf[16384];
    size_t len;
} pty_run;

static void pty_start(pty_run *t, const char *const *args)
{
    char a[SKV_AUTH_ACCESS_KEY_MAX + 32], s[SKV_AUTH_SECRET_KEY_MAX + 32];
    char *argv[32], *envp[5];
    cli_argv(argv, args);
    cli_env(envp, a, s, NULL, NULL);
    struct winsize ws = {24, 80, 0, 0};
    memset(t, 0, sizeof(*t));
    t->pid = forkpty(&t->master, NULL, NULL, &ws);
    ck_assert_int_ge(t->pid, 0);
    if (t->pid == 0) {
        execve(g_cli, argv, envp);
        _exit(127);
    }
}

/* Read the terminal until `want` shows up (true) or ms pass. */
static bool pty_expect(pty_run *t, const char *want, int ms)
{
    for (int64_t end = e2e_now_ms() + ms; e2e_now_ms() < end;) {
        if (strstr(t->buf, want))
            return true;
        struct pollfd p = {t->master, POLLIN, 0};
        if (poll(&p, 1, 100) < 1)
            continue;
        ssize_t n = read(t->master, t->buf + t->len,
                         sizeof(t->buf) - 1 - t->len);
        if (n <= 0)
            break;
        t->len += (size_t)n;
        t->buf[t->len] = '\0';
    }
    return strstr(t->buf, want) != NULL;
}

static void pty_send(pty_run *t, const char *s)
{
    ck_assert_int_eq(write(t->master, s, strlen(s)), (ssize_t)strlen(s));
}

/* Its exit status, or -1 when it is still there after 30 s (a sanitized
 * CLI on a loaded machine is slow to exit; the failure message says in
 * what state it was left). */
static int pty_wait(pty_run *t)
{
    int st = 0;
    /* A deadline, not a count: once the CLI has closed the terminal, reads
     * fail at once (EIO) and a counted loop spins through in microseconds,
     * before the exiting CLI is reapable (CI failed this way). */
    for (int64_t end = e2e_now_ms() + 30000; e2e_now_ms() < end;) {
        if (waitpid(t->pid, &st, WNOHANG) == t->pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        pty_expect(t, "\x01never", 10);
        usleep(2000);
    }
    return -1;
}

static size_t read_proc(char *buf, size_t cap, pid_t pid, const char *what)
{
    char p[64];
    snprintf(p, sizeof(p), "/proc/%ld/%s", (long)pid, what);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return n;
}

/* Where the CLI is (for a failure message): /proc/PID/syscall, its state
 * (R running, S sleeping, D in the kernel, Z exited) and wchan. */
static const char *pid_syscall(pid_t pid)
{
    static char buf[512];
    char sc[128], st[512], wc[128];
    read_proc(sc, sizeof sc, pid, "syscall");
    read_proc(st, sizeof st, pid, "stat");
    read_proc(wc, sizeof wc, pid, "wchan");
    const char *rp = strrchr(st, ')');
    snprintf(buf, sizeof buf, "%.*s, state %c, wchan %s",
             (int)strcspn(sc, "\n"), sc, rp && rp[1] ? rp[2] : '?', wc);
    return buf;
}

/* The terminal's text with control characters made visible. */
static const char *pty_text(const pty_run *t)
{
    static char out[4 * sizeof(t->buf)];
    size_t o = 0;
    for (size_t i = 0; i < t->len && o + 5 < sizeof(out); i++) {
        unsigned char ch = (unsigned char)t->buf[i];
        if (ch < 0x20 || ch == 0x7f)
            o += (size_t)snprintf(out + o, 5, "\\x%02x", ch);
        else
            out[o++] = (char)ch;
    }
    out[o] = '\0';
    return out;
}

START_TEST(test_e2e_exec_tty)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    /* tty names the kernel's own /dev/pts device */
    pty_run t;
    pty_start(&t, ARGS("exec", "-t", sid, "--", "busybox", "tty"));
    bool named = pty_expect(&t, "/dev/pts/", 15000);
    int st = pty_wait(&t);
    if (!named || st != 0) {
        char tail[1024];
        e2e_log_tail(&g, "manager", tail, sizeof(tail));
        ck_abort_msg("exit %d; tty printed: %s; the CLI in syscall %s; "
                     "manager log: %s", st, pty_text(&t),
                     pid_syscall(t.pid), tail);
    }
    close(t.master);
    /* an interactive shell: the size at start, a resize followed, Ctrl-C
     * ends the foreground command only, the exit code comes back */
    pty_start(&t, ARGS("shell", sid));
    pty_send(&t, "busybox stty size; echo MARK1\r");
    ck_assert_msg(pty_expect(&t, "24 80", 15000), "stty: %s", t.buf);
    struct winsize ws = {50, 132, 0, 0};
    ck_assert_int_eq(ioctl(t.master, TIOCSWINSZ, &ws), 0);
    /* The CLI's SIGWINCH travels to the agent in its own time (a loaded
     * or sanitized run is slow): ask again until the new size shows. */
    bool resized = false;
    for (int i = 0; i < 30 && !resized; i++) {
        pty_send(&t, "busybox stty size\r");
        resized = pty_expect(&t, "50 132", 500);
    }
    ck_assert_msg(resized, "after resize: %s", t.buf);
    pty_send(&t, "sleep 4244\r");
    ck_assert(procs_become("sleep", "4244", 1, 10000));
    pty_send(&t, "\x03");
    ck_assert_msg(procs_become("sleep", "4244", 0, 10000), "Ctrl-C did not "
                  "stop the foreground command: %s", t.buf);
    pty_send(&t, "echo still-$((6*7))\r");
    ck_assert_msg(pty_expect(&t, "still-42", 10000), "shell: %s", t.buf);
    pty_send(&t, "exit 7\r");
    st = pty_wait(&t);
    if (st != 7) {   /* where did the exit stop: the manager's view */
        char tail[1024];
        e2e_log_tail(&g, "manager", tail, sizeof(tail));
        ck_abort_msg("shell exit %d: %s; manager log: %s", st, pty_text(&t),
                     tail);
    }
    /* the local terminal is back in cooked mode with echo */
    struct termios tio;
    int slave = open(ptsname(t.master), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ck_assert_int_ge(slave, 0);
    ck_assert_int_eq(tcgetattr(slave, &tio), 0);
    close(slave);
    ck_assert_msg((tio.c_lflag & ICANON) && (tio.c_lflag & ECHO),
                  "the terminal was left in raw mode");
    close(t.master);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- refusals ------------------------------------------------------------------------------ */

/* A new user with its keypair (ak/sk out). */
static void new_user(skv_client *admin, const char *name, char *ak, char *sk)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = (char *)name;
    u.user.role = "user";
    u.user.active = 1;
    skv_proto_admin_user_reply ur = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = (char *)name;
    k.keypair.active = 1;
    skv_proto_admin_keypair_reply kr = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e), &e);
    ck_assert_uint_eq(kr.n_keypairs, 1);
    snprintf(ak, SKV_AUTH_ACCESS_KEY_MAX, "%s", kr.keypairs[0].access_key);
    snprintf(sk, SKV_AUTH_SECRET_KEY_MAX, "%s", kr.keypairs[0].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
}

START_TEST(test_e2e_exec_refused)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    skv_error e = SKV_ERROR_INIT;
    /* another user's session */
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    new_user(cl, "mallory", ak, sk);
    cli_run r;
    cli_start_as(&r, ak, sk, ARGS("exec", sid, "--", "echo", "pwned"));
    cli_wait(&r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "belongs to another user") &&
                  strstr(r.ebuf, "SKV_EPERM"), "%s", r.ebuf);
    ck_assert_msg(!strstr(r.obuf, "pwned"), "%s", r.obuf);
    /* the same under --json: the one JSON error document on stdout */
    cli_start_as(&r, ak, sk, ARGS("--json", "exec", sid, "--", "true"));
    cli_wait(&r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.obuf, "{\"error\":") &&
                  strstr(r.obuf, "\"code\":\"SKV_EPERM\"") &&
                  strstr(r.obuf, "\"command\":\"exec\""), "%s", r.obuf);
    /* a session that does not exist; a bad kernel */
    cli(&r, ARGS("exec", "no-such-session", "--", "true"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "SKV_ENOENT"), "%s", r.ebuf);
    cli(&r, ARGS("exec", "--kernel", "nope", sid, "--", "true"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "has no kernel 'nope'"), "%s", r.ebuf);
    /* usage errors */
    cli(&r, ARGS("exec", sid));
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.ebuf, "missing the command"), "%s", r.ebuf);
    /* a terminated session */
    skv_proto_session_ref ref = {0};
    SKV_CK_OK(skv_client_terminate(cl, &ref, sid, "test", 1, &e), &e);
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    skv_proto_session_show_reply sh;
    E2E_OK(e2e_wait_final(&g, cl, sid, 30000, &sh));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    cli(&r, ARGS("exec", sid, "--", "echo", "late"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "has ended (TERMINATED)") &&
                  strstr(r.ebuf, "SKV_ESTATE"), "%s", r.ebuf);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- either side gone ---------------------------------------------------------------------- */

/* The CLI killed -9 while its command runs (with output waiting for
 * credit): the command is killed on the agent, nothing is left. */
START_TEST(test_e2e_exec_client_killed)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    cli_run r;
    cli_start(&r, ARGS("exec", "-i", sid, "--", "sleep", "4245"));
    ck_assert(procs_become("sleep", "4245", 1, 10000));
    cli_run y;   /* a producer the CLI stops reading from */
    cli_start(&y, ARGS("exec", sid, "--", "sh", "-c",
                       "exec busybox yes"));
    e2e_sleep_ms(500);
    kill(r.pid, SIGKILL);
    kill(y.pid, SIGKILL);
    cli_wait(&r);
    cli_wait(&y);
    ck_assert_msg(procs_become("sleep", "4245", 0, 10000), "the exec'd "
                  "command outlived its client");
    ck_assert_msg(procs_become("busybox", "yes", 0, 10000), "yes outlived its "
                  "client");
    /* the kernel itself is untouched and still takes execs */
    cli(&r, ARGS("exec", sid, "--", "echo", "alive"));
    ck_assert_msg(r.status == 0 && strcmp(r.obuf, "alive\n") == 0,
                  "exit %d: %s %s", r.status, r.obuf, r.ebuf);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* The agent killed -9 mid-exec: the client hears about it and exits with
 * an error naming the agent, instead of waiting forever. */
START_TEST(test_e2e_exec_agent_killed)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    cli_run r;
    cli_start(&r, ARGS("exec", "-i", sid, "--", "sleep", "4247"));
    ck_assert(procs_become("sleep", "4247", 1, 10000));
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    int64_t t0 = e2e_now_ms();
    cli_wait(&r);
    ck_assert_msg(e2e_now_ms() - t0 < 10000, "the client waited %lld ms",
                  (long long)(e2e_now_ms() - t0));
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.ebuf, "agent 'a1'") &&
                  strstr(r.ebuf, "was lost"), "%s", r.ebuf);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- a hostile client ---------------------------------------------------------------------- */

/* The next message for exec_id "h1" of kind t on cl (10 s). */
static void await_msg(skv_client *cl, skv_proto_type t,
                      skv_client_message *m)
{
    skv_error e = SKV_ERROR_INIT;
    for (int64_t end = e2e_now_ms() + 10000; e2e_now_ms() < end;) {
        int rc = skv_client_recv(cl, 200, m, &e);
        ck_assert_msg(rc >= 0, "recv: %s", e.message);
        if (rc == 1 && m->type == t)
            return;
        if (rc == 1)
            skv_client_message_free(m);
    }
    ck_abort_msg("no %s within 10 s", skv_proto_type_name(t));
}

/* A client sending stdin beyond the window it was granted: the manager
 * ends that exec (the excess never reaches the agent's connection), and
 * the agent and the session serve the next exec as before. */
START_TEST(test_e2e_exec_over_credit)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    skv_error e = SKV_ERROR_INIT;
    char *argv[] = {"sleep", "4248"};
    skv_proto_exec_start q = {0};
    q.session_id = sid;
    q.exec_id = "h1";
    q.argv = argv;
    q.n_argv = 2;
    uint64_t id = 0;
    SKV_CK_OK(skv_client_send(cl, SKV_PROTO_REQUEST, SKV_PROTO_EXEC_START, &q,
                              &id, &e), &e);
    skv_client_message m;
    await_msg(cl, SKV_PROTO_EXEC_START_REPLY, &m);
    ck_assert_uint_eq(m.request_id, id);
    uint32_t window = ((skv_proto_exec_start_reply *)m.body)->window;
    skv_client_message_free(&m);
    ck_assert_uint_gt(window, 0);
    ck_assert(procs_become("sleep", "4248", 1, 10000));
    size_t n = (size_t)window + 4096;
    uint8_t *junk = calloc(1, n);
    ck_assert_ptr_nonnull(junk);
    skv_proto_exec_data d = {"h1", NULL, junk, n, 0};
    SKV_CK_OK(skv_client_send(cl, SKV_PROTO_EVENT, SKV_PROTO_EXEC_STDIN, &d,
                              NULL, &e), &e);
    free(junk);
    await_msg(cl, SKV_PROTO_EXEC_EXIT, &m);
    const skv_proto_exec_exit *x = m.body;
    ck_assert_str_eq(x->exec_id, "h1");
    ck_assert_msg(x->reason && strstr(x->reason, "beyond the granted window"),
                  "reason: %s", x->reason ? x->reason : "(none)");
    skv_client_message_free(&m);
    ck_assert_msg(procs_become("sleep", "4248", 0, 10000), "the command "
                  "outlived its exec");
    char tail[4096];   /* the manager stopped it, not the agent */
    e2e_log_tail(&g, "manager", tail, sizeof(tail));
    ck_assert_msg(strstr(tail, "stdin beyond the granted window"), "manager "
                  "log: %s", tail);
    skv_client_free(cl);
    cli_run r;
    cli(&r, ARGS("exec", sid, "--", "echo", "next"));
    ck_assert_msg(r.status == 0 && strcmp(r.obuf, "next\n") == 0,
                  "exit %d: %s %s", r.status, r.obuf, r.ebuf);
    e2e_stop(&g);
}
END_TEST

/* ---- many at once ------------------------------------------------------------------------------ */

#define MANY 12

START_TEST(test_e2e_exec_many)
{
    REQUIRE();
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    static cli_run r[MANY];
    char script[MANY][96];
    for (int i = 0; i < MANY; i++) {
        snprintf(script[i], sizeof(script[i]), "sleep 1; seq 1 2000; "
                 "echo done-%d; exit %d", i, i + 10);
        cli_start(&r[i], ARGS("exec", sid, "--", "sh", "-c", script[i]));
    }
    for (int i = 0; i < MANY; i++) {
        char want[32];
        cli_wait(&r[i]);
        snprintf(want, sizeof(want), "2000\ndone-%d\n", i);
        ck_assert_msg(r[i].status == i + 10, "exec %d: exit %d: %s", i,
                      r[i].status, r[i].ebuf);
        ck_assert_msg(strncmp(r[i].obuf, "1\n2\n3\n", 6) == 0 &&
                      r[i].olen > strlen(want) &&
                      strcmp(r[i].obuf + r[i].olen - strlen(want), want) == 0,
                      "exec %d output: %.80s", i, r[i].obuf);
    }
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- the OCI backend ------------------------------------------------------------------ */

/* The same exec through an agent whose runtime is runc (--backend oci):
 * exit codes and a signal's 128+N, a command not found, 100 MB through
 * -i and back (sha256), a terminal (the size, a resize followed, Ctrl-C,
 * the exit code), and a client killed -9 leaves no process. Skipped only
 * without runc. */
START_TEST(test_e2e_exec_oci)
{
    REQUIRE();
    if (access("/usr/sbin/runc", X_OK) != 0) {
        fprintf(stderr, "%s: SKIP: /usr/sbin/runc is missing (Debian "
                "package runc)\n", __func__);
        return;
    }
    ck_assert_int_ge(sodium_init(), 0);
    snprintf(g.agent_backend[0], sizeof(g.agent_backend[0]), "oci");
    char sid[E2E_ID_MAX];
    skv_client *cl = up(sid);
    cli_run r;
    cli(&r, ARGS("exec", sid, "sh", "-c", "echo out; echo err >&2; exit 3"));
    ck_assert_msg(r.status == 3, "exit %d: %s", r.status, r.ebuf);
    ck_assert_str_eq(r.obuf, "out\n");
    ck_assert_msg(strstr(r.ebuf, "err\n") != NULL, "stderr: %s", r.ebuf);
    cli(&r, ARGS("exec", sid, "--", "sh", "-c", "kill -9 $$"));
    ck_assert_int_eq(r.status, 128 + 9);
    cli(&r, ARGS("exec", sid, "--", "no-such-command"));
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.ebuf, "not found") && strstr(r.ebuf, "SKV_ENOENT"),
                  "%s", r.ebuf);
    /* 100 MB through stdin and back */
    cli_start(&r, ARGS("exec", "-i", sid, "--", "cat"));
    uint8_t hin[32], hout[32];
    size_t got = 0;
    pump_big(&r, hin, hout, &got);
    cli_wait(&r);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.ebuf);
    ck_assert_uint_eq(got, BIG);
    ck_assert_msg(memcmp(hin, hout, 32) == 0, "sha256 of what came back "
                  "differs from what was sent");
    /* a terminal */
    pty_run t;
    pty_start(&t, ARGS("shell", sid));
    pty_send(&t, "busybox tty; busybox stty size\r");
    ck_assert_msg(pty_expect(&t, "24 80", 15000), "stty: %s", pty_text(&t));
    ck_assert_msg(strstr(t.buf, "/dev/pts/"), "tty: %s", pty_text(&t));
    struct winsize ws = {50, 132, 0, 0};
    ck_assert_int_eq(ioctl(t.master, TIOCSWINSZ, &ws), 0);
    bool resized = false;
    for (int i = 0; i < 30 && !resized; i++) {
        pty_send(&t, "busybox stty size\r");
        resized = pty_expect(&t, "50 132", 500);
    }
    ck_assert_msg(resized, "after resize: %s", pty_text(&t));
    pty_send(&t, "sleep 4254\r");
    ck_assert(procs_become("sleep", "4254", 1, 10000));
    pty_send(&t, "\x03");
    ck_assert_msg(procs_become("sleep", "4254", 0, 10000), "Ctrl-C did not "
                  "stop the foreground command: %s", pty_text(&t));
    pty_send(&t, "exit 7\r");
    int st = pty_wait(&t);
    ck_assert_msg(st == 7, "shell exit %d: %s", st, pty_text(&t));
    close(t.master);
    /* the client killed -9: the command goes too */
    cli_start(&r, ARGS("exec", "-i", sid, "--", "sleep", "4255"));
    ck_assert(procs_become("sleep", "4255", 1, 10000));
    kill(r.pid, SIGKILL);
    cli_wait(&r);
    ck_assert_msg(procs_become("sleep", "4255", 0, 10000), "the exec'd "
                  "command outlived its client");
    cli(&r, ARGS("exec", sid, "--", "echo", "alive"));
    ck_assert_msg(r.status == 0 && strcmp(r.obuf, "alive\n") == 0,
                  "exit %d: %s %s", r.status, r.obuf, r.ebuf);
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

Suite *skv_test_suite_e2e_exec(void);
Suite *skv_test_suite_e2e_exec(void)
{
    Suite *s = suite_create("e2e_exec");
    ADD_CASE(s, "exec_echo_exit_codes", test_e2e_exec_echo_exit_codes);
    ADD_CASE(s, "exec_100mb", test_e2e_exec_100mb);
    ADD_CASE(s, "exec_tty", test_e2e_exec_tty);
    ADD_CASE(s, "exec_refused", test_e2e_exec_refused);
    ADD_CASE(s, "exec_client_killed", test_e2e_exec_client_killed);
    ADD_CASE(s, "exec_agent_killed", test_e2e_exec_agent_killed);
    ADD_CASE(s, "exec_many", test_e2e_exec_many);
    ADD_CASE(s, "exec_over_credit", test_e2e_exec_over_credit);
    ADD_CASE(s, "exec_oci", test_e2e_exec_oci);
    return s;
}
