/* The daemons as programs: command line, configuration errors, start and
 * clean stop of sokovan-manager on a private socket. They run the built
 * binaries from skv_test_build_dir()/bin; the cluster end-to-end tests live
 * in their own suite.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <sqlite3.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "skv_test.h"

#define OUT_MAX 16384
#define WAIT_MS 30000   /* generous: sanitizer builds start slowly */

typedef struct prog_run {
    int status;          /* exit code, or 128 + signal */
    char out[OUT_MAX];   /* stdout */
    char err[OUT_MAX];   /* stderr */
} prog_run;

static char g_dir[64];

static void make_dir(void)
{
    snprintf(g_dir, sizeof(g_dir), "/tmp/skv-dmn-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(g_dir));
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static void remove_dir(void)
{
    if (g_dir[0])
        nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static const char *prog_path(char *buf, size_t n, const char *prog)
{
    snprintf(buf, n, "%s/bin/%s", skv_test_build_dir(), prog);
    return buf;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void read_file(char *buf, size_t n, const char *path)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t r = read(fd, buf, n - 1);
    buf[r > 0 ? r : 0] = 0;
    close(fd);
}

/* Sanitizer builds: LeakSanitizer's scan of dynamic TLS (the agent dlopens
 * plugins and NVML) can crash its tracer at exit on this glibc, a known
 * sanitizer-runtime bug (google/sanitizers#1322). Not scanning the DTLS
 * keeps leak checking for everything else. No effect without ASan. */
static void asan_options(void)
{
    char buf[1024];
    const char *old = getenv("ASAN_OPTIONS");
    snprintf(buf, sizeof(buf), "%s%sintercept_tls_get_addr=0",
             old ? old : "", old && *old ? ":" : "");
    setenv("ASAN_OPTIONS", buf, 1);
}

/* Start prog with argv (NULL-terminated, argv[0] excluded); its stdout and
 * stderr go to g_dir/<tag>.out and .err. */
static pid_t spawn(const char *prog, const char *tag, const char *const *args)
{
    char path[512], out[128], err[128];
    const char *argv[64];
    size_t n = 0;
    argv[n++] = prog_path(path, sizeof(path), prog);
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    snprintf(out, sizeof(out), "%s/%s.out", g_dir, tag);
    snprintf(err, sizeof(err), "%s/%s.err", g_dir, tag);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sigset_t none;
        /* A clean signal state, and no daemon outliving a failed test. */
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        asan_options();
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* Wait for pid (killing it after WAIT_MS) and collect its output. */
static void finish(prog_run *r, pid_t pid, const char *tag)
{
    char path[128];
    int st = 0;
    int64_t deadline = now_ms() + WAIT_MS;
    while (waitpid(pid, &st, WNOHANG) == 0) {
        if (now_ms() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            break;
        }
        usleep(5000);
    }
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    snprintf(path, sizeof(path), "%s/%s.out", g_dir, tag);
    read_file(r->out, sizeof(r->out), path);
    snprintf(path, sizeof(path), "%s/%s.err", g_dir, tag);
    read_file(r->err, sizeof(r->err), path);
}

static void run(prog_run *r, const char *prog, const char *const *args)
{
    finish(r, spawn(prog, prog, args), prog);
}

static void write_config(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof(path), "%s/%s", g_dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void assert_contains(const char *hay, const char *needle)
{
    ck_assert_msg(strstr(hay, needle) != NULL, "expected '%s' in:\n%s",
                  needle, hay);
}

/* ---- command line ------------------------------------------------------ */

START_TEST(help_and_version)
{
    static const char *const progs[] = {"sokovan-manager", "sokovan-agent"};
    prog_run *r = calloc(1, sizeof(*r));
    make_dir();
    for (int i = 0; i < 2; i++) {
        run(r, progs[i], (const char *const[]){"--help", NULL});
        ck_assert_int_eq(r->status, 0);
        assert_contains(r->out, "usage:");
        assert_contains(r->out, "--log-level");
        run(r, progs[i], (const char *const[]){"--version", NULL});
        ck_assert_int_eq(r->status, 0);
        assert_contains(r->out, SKV_VERSION_STRING);
    }
    run(r, "sokovan-manager", (const char *const[]){"--help", NULL});
    assert_contains(r->out, "--bootstrap-agents");
    run(r, "sokovan-agent", (const char *const[]){"--help", NULL});
    assert_contains(r->out, "--import-image");
    remove_dir();
    free(r);
}
END_TEST

START_TEST(bad_flags)
{
    prog_run *r = calloc(1, sizeof(*r));
    make_dir();
    run(r, "sokovan-manager", (const char *const[]){"--frobnicate", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "unknown option '--frobnicate'");
    /* An agent flag is not a manager flag. */
    run(r, "sokovan-manager", (const char *const[]){"--agent-id", "a", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "unknown option '--agent-id'");
    run(r, "sokovan-manager", (const char *const[]){"--tcp", "nohost", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--tcp: 'nohost' is not HOST:PORT");
    run(r, "sokovan-manager", (const char *const[]){"--data-dir", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--data-dir needs a value");
    run(r, "sokovan-manager",
        (const char *const[]){"--listen", "none", "--tcp=none", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "both disabled");
    run(r, "sokovan-agent", (const char *const[]){"--cpus", "5-2", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--cpus");
    run(r, "sokovan-agent", (const char *const[]){"--memory", "lots", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--memory: 'lots' is not a byte amount");
    run(r, "sokovan-agent", (const char *const[]){"--manager", "x", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "neither unix:/PATH nor HOST:PORT");
    run(r, "sokovan-agent",
        (const char *const[]){"--import-image", "busybox", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "not NAME=TARBALL");
    /* storage hosts: the shape at parse time, the filesystem at start */
    const char *const bad_hosts[][2] = {
        {"vol", "want NAME=PATH"}, {"vol=rel", "must be absolute"},
        {"vol=/srv,quota=zfs", "zfs"}, {"vol=/srv,shared=maybe", "options"}};
    for (size_t i = 0; i < 4; i++) {
        run(r, "sokovan-manager", (const char *const[]){"--storage-host",
                                                        bad_hosts[i][0], NULL});
        ck_assert_int_eq(r->status, 2);
        assert_contains(r->err, bad_hosts[i][1]);
    }
    char mdir[128], sock[128], host[160];
    snprintf(mdir, sizeof(mdir), "%s/m", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", g_dir);
    snprintf(host, sizeof(host), "vol=%s,quota=btrfs", g_dir);
    if (getuid() == 0 && system("stat -f -c %T /tmp | grep -q btrfs") != 0) {
        run(r, "sokovan-manager", (const char *const[]){"--data-dir", mdir,
            "--listen", sock, "--tcp", "none", "--storage-host", host, NULL});
        ck_assert_int_eq(r->status, 1);
        assert_contains(r->err, "storage host 'vol'");
    }
    run(r, "sokovan-agent",
        (const char *const[]){"--backend", "process", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--backend: 'process' is not one of");
    run(r, "sokovan-agent", (const char *const[]){"--run-dir", "rel", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--run-dir");
    run(r, "sokovan-agent",
        (const char *const[]){"--create-threads", "65", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--create-threads");
    remove_dir();
    free(r);
}
END_TEST

/* ---- configuration file -------------------------------------------------- */

START_TEST(config_errors_name_file_and_line)
{
    prog_run *r = calloc(1, sizeof(*r));
    char cfg[128], want[256];
    make_dir();
    snprintf(cfg, sizeof(cfg), "%s/bad.ini", g_dir);
    write_config("bad.ini",
                 "; comment\n"
                 "[manager]\n"
                 "frobnicate = 1\n"
                 "heartbeat_timeout_ms = soon\n"
                 "[agent]\n"
                 "agent_id = has space\n"
                 "[nosuch]\n");
    run(r, "sokovan-manager", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    snprintf(want, sizeof(want), "%s:3: frobnicate: unknown key", cfg);
    assert_contains(r->err, want);
    snprintf(want, sizeof(want), "%s:4: heartbeat_timeout_ms: 'soon'", cfg);
    assert_contains(r->err, want);
    /* Both daemons may share one file: the other section is checked too. */
    snprintf(want, sizeof(want), "%s:6: agent_id:", cfg);
    assert_contains(r->err, want);
    snprintf(want, sizeof(want), "%s:7: [nosuch]: unknown section", cfg);
    assert_contains(r->err, want);

    write_config("syntax.ini", "[agent]\nthis line has no equals sign\n");
    snprintf(cfg, sizeof(cfg), "%s/syntax.ini", g_dir);
    run(r, "sokovan-agent", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    snprintf(want, sizeof(want), "%s:2: syntax error", cfg);
    assert_contains(r->err, want);

    write_config("range.ini", "[manager]\nmax_frame = 2g\n");
    snprintf(cfg, sizeof(cfg), "%s/range.ini", g_dir);
    run(r, "sokovan-manager", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    snprintf(want, sizeof(want), "%s:2: max_frame: '2g' is outside", cfg);
    assert_contains(r->err, want);

    snprintf(cfg, sizeof(cfg), "%s/missing.ini", g_dir);
    run(r, "sokovan-manager", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "cannot open");
    remove_dir();
    free(r);
}
END_TEST

/* A flag wins over the file, wherever it stands on the command line. */
START_TEST(flags_override_config)
{
    prog_run *r = calloc(1, sizeof(*r));
    char cfg[128];
    make_dir();
    snprintf(cfg, sizeof(cfg), "%s/c.ini", g_dir);
    write_config("c.ini", "[manager]\nheartbeat_interval_ms = 20000\n");
    run(r, "sokovan-manager", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "heartbeat_timeout_ms (10000) must exceed");
    run(r, "sokovan-manager",
        (const char *const[]){"--heartbeat-interval-ms", "500", "--config",
                              cfg, "--help", NULL});
    ck_assert_int_eq(r->status, 0);
    remove_dir();
    free(r);
}
END_TEST

/* ---- the agent before it connects ------------------------------------------ */

START_TEST(agent_missing_key_file)
{
    prog_run *r = calloc(1, sizeof(*r));
    char data[128], state[128];
    make_dir();
    snprintf(data, sizeof(data), "%s/mgr", g_dir);
    snprintf(state, sizeof(state), "%s/agent", g_dir);
    run(r, "sokovan-agent",
        (const char *const[]){"--data-dir", data, "--state-dir", state,
                              "--agent-id", "n7", "--key-wait-ms", "0",
                              NULL});
    ck_assert_int_eq(r->status, 1);
    assert_contains(r->err, "agents/n7.key");
    remove_dir();
    free(r);
}
END_TEST

/* ---- manager start and stop --------------------------------------------- */

static int unix_connect(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Wait until the daemon accepts connections on path (or exited). */
static int wait_listening(pid_t pid, const char *path)
{
    int64_t deadline = now_ms() + WAIT_MS;
    while (now_ms() < deadline) {
        int fd = unix_connect(path);
        if (fd >= 0)
            return fd;
        if (waitpid(pid, NULL, WNOHANG) != 0)
            return -1;
        usleep(10000);
    }
    return -1;
}

/* A socket file nobody listens on, as a killed daemon leaves it. */
static void make_stale_socket(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    close(fd);
}

/* A log line as the daemons write it (daemons/common/log.c): UTC stamp
 * with milliseconds, level, module or program, message, newline. */
static void assert_log_line(const char *err, const char *module,
                            const char *msg)
{
    char pat[256];
    regex_t re;
    snprintf(pat, sizeof(pat), "^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:"
             "[0-5][0-9]:[0-6][0-9]\\.[0-9]{3}Z info %s: %s$", module, msg);
    ck_assert_int_eq(regcomp(&re, pat, REG_EXTENDED | REG_NEWLINE |
                             REG_NOSUB), 0);
    int rc = regexec(&re, err, 0, NULL, 0);
    regfree(&re);
    ck_assert_msg(rc == 0, "no line like '%s' in:\n%s", pat, err);
}

START_TEST(manager_starts_and_stops_cleanly)
{
    prog_run *r = calloc(1, sizeof(*r));
    char data[128], sock[128], pidf[128], rundir[128], pidtext[32];
    struct stat st;
    make_dir();
    snprintf(data, sizeof(data), "%s/data", g_dir);
    snprintf(rundir, sizeof(rundir), "%s/run", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", rundir);
    snprintf(pidf, sizeof(pidf), "%s/m.pid", g_dir);
    ck_assert_int_eq(mkdir(rundir, 0755), 0);
    make_stale_socket(sock);
    pid_t pid = spawn("sokovan-manager", "m1",
                      (const char *const[]){"--data-dir", data, "--listen",
                                            sock, "--tcp", "none",
                                            "--pidfile", pidf, NULL});
    int fd = wait_listening(pid, sock);
    if (fd < 0) {
        finish(r, pid, "m1");
        ck_abort_msg("manager did not listen on %s (status %d):\n%s", sock,
                     r->status, r->err);
    }
    ck_assert_int_eq(stat(sock, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0660);   /* socket_mode default */
    /* the pidfile is written just after listen(): connecting may win */
    for (int i = 0; i < 200; i++) {
        read_file(pidtext, sizeof(pidtext), pidf);
        if (atoi(pidtext) == pid)
            break;
        usleep(10000);
    }
    ck_assert_int_eq(atoi(pidtext), pid);

    /* An oversized frame gets an error reply, then the connection closes. */
    unsigned char hdr[4] = {0x7f, 0xff, 0xff, 0xff}, buf[4096];
    ck_assert_int_eq(write(fd, hdr, 4), 4);
    ssize_t n, total = 0;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        total += n;
    ck_assert_int_gt(total, 4);
    close(fd);

    /* A second manager on the same socket is refused and leaves it. */
    prog_run *r2 = calloc(1, sizeof(*r2));
    finish(r2, spawn("sokovan-manager", "m2",
                     (const char *const[]){"--data-dir", data, "--listen",
                                           sock, "--tcp", "none", NULL}),
           "m2");
    ck_assert_int_eq(r2->status, 1);
    assert_contains(r2->err, "another process is listening");
    fd = unix_connect(sock);
    ck_assert_int_ge(fd, 0);
    close(fd);

    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    finish(r, pid, "m1");
    ck_assert_msg(r->status == 0, "status %d:\n%s", r->status, r->err);
    ck_assert_int_eq(access(sock, F_OK), -1);
    ck_assert_int_eq(access(pidf, F_OK), -1);
    assert_contains(r->err, "stopped");
    assert_log_line(r->err, "sokovan-manager", "stopped");
    assert_log_line(r->err, "manager", "opened [^ ]+/data");
    remove_dir();
    free(r2);
    free(r);
}
END_TEST

/* Number of times needle occurs in g_dir/<tag>.err. */
static int count_in_err(const char *tag, const char *needle)
{
    static char buf[OUT_MAX * 4];
    char path[128];
    int n = 0;
    snprintf(path, sizeof(path), "%s/%s.err", g_dir, tag);
    read_file(buf, sizeof(buf), path);
    for (const char *p = buf; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void wait_for_err(const char *tag, const char *needle, int count)
{
    int64_t deadline = now_ms() + WAIT_MS;
    while (count_in_err(tag, needle) < count && now_ms() < deadline)
        usleep(10000);
    ck_assert_msg(count_in_err(tag, needle) >= count,
                  "'%s' not seen %d times in %s's log", needle, count, tag);
}

static pid_t start_manager(const char *tag, const char *data,
                           const char *sock)
{
    pid_t pid = spawn("sokovan-manager", tag,
                      (const char *const[]){"--data-dir", data, "--listen",
                                            sock, "--tcp", "none",
                                            "--bootstrap-agents", "agent1",
                                            NULL});
    int fd = wait_listening(pid, sock);
    ck_assert_msg(fd >= 0, "manager %s did not start", tag);
    close(fd);
    return pid;
}

static void stop_and_check(pid_t pid, const char *tag)
{
    prog_run *r = calloc(1, sizeof(*r));
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    finish(r, pid, tag);
    ck_assert_msg(r->status == 0, "%s: status %d:\n%s", tag, r->status,
                  r->err);
    free(r);
}

/* The agent registers, survives the manager's restart by reconnecting,
 * and stops cleanly. Its node discovery and runtime need root. */
START_TEST(agent_reconnects_to_restarted_manager)
{
    char data[128], sock[128], state[128], addr[160];
    if (geteuid() != 0) {
        fprintf(stderr, "agent_reconnects_to_restarted_manager: skipped, "
                "needs root\n");
        return;
    }
    make_dir();
    snprintf(data, sizeof(data), "%s/data", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", g_dir);
    snprintf(state, sizeof(state), "%s/agent1", g_dir);
    snprintf(addr, sizeof(addr), "unix:%s", sock);
    pid_t m = start_manager("m1", data, sock);
    pid_t a = spawn("sokovan-agent", "a",
                    (const char *const[]){"--data-dir", data, "--manager",
                                          addr, "--state-dir", state,
                                          "--reconnect-min-ms", "20",
                                          "--reconnect-max-ms", "100",
                                          NULL});
    wait_for_err("a", "connected to", 1);
    stop_and_check(m, "m1");
    wait_for_err("a", "lost", 1);
    m = start_manager("m2", data, sock);
    wait_for_err("a", "connected to", 2);
    stop_and_check(a, "a");
    stop_and_check(m, "m2");
    remove_dir();
}
END_TEST

/* ---- metrics endpoint ---------------------------------------------------- */

/* GET path over a plain TCP socket (HTTP/1.0: the server closes after the
 * reply); the whole response into buf. */
static void http_get(char *buf, size_t n, uint16_t port, const char *path)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[256];
    int len = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: "
                       "127.0.0.1\r\n\r\n", path);
    ck_assert_int_eq(write(fd, req, (size_t)len), len);
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = read(fd, buf + got, n - 1 - got)) > 0)
        got += (size_t)r;
    buf[got] = 0;
    close(fd);
}

/* Every line of the body is a HELP/TYPE comment or "name[{...}] value". */
static void assert_exposition(const char *body)
{
    for (const char *p = body; *p;) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "unterminated line: %s", p);
        if (*p == '#') {
            ck_assert_msg(!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7),
                          "bad comment: %.*s", (int)(nl - p), p);
        } else {
            const char *sp = nl;
            while (sp > p && sp[-1] != ' ')
                sp--;
            ck_assert_msg(sp > p + 1 && (isalpha((unsigned char)*p) || *p == '_'),
                          "bad sample: %.*s", (int)(nl - p), p);
            char num[64], *end;
            snprintf(num, sizeof(num), "%.*s", (int)(nl - sp), sp);
            strtod(num, &end);
            ck_assert_msg(*end == 0 || !strcmp(num, "+Inf") || !strcmp(num, "NaN"),
                          "bad value in: %.*s", (int)(nl - p), p);
        }
        p = nl + 1;
    }
}

/* The port a daemon logged for its metrics endpoint. */
static uint16_t metrics_port(const char *tag)
{
    static char log[OUT_MAX * 4];
    char path[160];
    wait_for_err(tag, "serving metrics on", 1);
    snprintf(path, sizeof(path), "%s/%s.err", g_dir, tag);
    read_file(log, sizeof(log), path);
    const char *at = strstr(log, "(port ");
    ck_assert_ptr_nonnull(at);
    int port = atoi(at + 6);
    ck_assert_int_gt(port, 0);
    return (uint16_t)port;
}

/* The value of the sample "series" (name{labels}) in a /metrics reply, or
 * -1 when absent. */
static double sample_value(const char *resp, const char *series)
{
    const char *body = strstr(resp, "\r\n\r\n");
    size_t n = strlen(series);
    for (const char *p = body ? body + 4 : ""; p && *p;) {
        if (!strncmp(p, series, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return -1;
}

/* --metrics-listen with port 0: the daemon logs the port it got; /metrics
 * answers with the Prometheus content type and parseable text. */
START_TEST(manager_serves_metrics)
{
    static char resp[65536];
    prog_run *r = calloc(1, sizeof(*r));
    char data[128], sock[128];
    make_dir();
    run(r, "sokovan-manager",
        (const char *const[]){"--metrics-listen", "nohost", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--metrics-listen: 'nohost' is not HOST:PORT");
    snprintf(data, sizeof(data), "%s/data", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", g_dir);
    pid_t pid = spawn("sokovan-manager", "m1",
                      (const char *const[]){"--data-dir", data, "--listen",
                                            sock, "--tcp", "none",
                                            "--metrics-listen", "127.0.0.1:0",
                                            NULL});
    int fd = wait_listening(pid, sock);
    ck_assert_msg(fd >= 0, "manager did not start");
    close(fd);
    uint16_t port = metrics_port("m1");

    http_get(resp, sizeof(resp), port, "/metrics");
    ck_assert_msg(!strncmp(resp, "HTTP/1.", 7) && strstr(resp, " 200 "),
                  "response: %.200s", resp);
    ck_assert_ptr_nonnull(strcasestr(resp, "\r\nContent-Type: text/plain; "
                                     "version=0.0.4; charset=utf-8\r\n"));
    const char *body = strstr(resp, "\r\n\r\n");
    ck_assert_ptr_nonnull(body);
    body += 4;
    assert_exposition(body);
    assert_contains(body, "# TYPE sokovan_sessions gauge\n");
    assert_contains(body, "sokovan_sessions{state=\"pending\"} 0\n");
    assert_contains(body, "sokovan_agents{state=\"alive\"} 0\n");
    assert_contains(body, "# TYPE sokovan_sched_pass_duration_seconds "
                          "histogram\n");
    http_get(resp, sizeof(resp), port, "/other");
    ck_assert_ptr_nonnull(strstr(resp, " 404 "));

    stop_and_check(pid, "m1");
    remove_dir();
    free(r);
}
END_TEST

/* A manager and an agent, both serving metrics: once the agent registered,
 * the manager's numbers show it alive with the capacity the agent
 * reports. Node discovery and the runtime need root. */
START_TEST(cluster_metrics_agree)
{
    static char resp[65536], aresp[65536];
    char data[128], sock[128], state[128], addr[160];
    if (geteuid() != 0) {
        fprintf(stderr, "cluster_metrics_agree: skipped, needs root\n");
        return;
    }
    make_dir();
    snprintf(data, sizeof(data), "%s/data", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", g_dir);
    snprintf(state, sizeof(state), "%s/agent1", g_dir);
    snprintf(addr, sizeof(addr), "unix:%s", sock);
    pid_t m = spawn("sokovan-manager", "m1",
                    (const char *const[]){"--data-dir", data, "--listen",
                                          sock, "--tcp", "none",
                                          "--bootstrap-agents", "agent1",
                                          "--metrics-listen", "127.0.0.1:0",
                                          NULL});
    int fd = wait_listening(m, sock);
    ck_assert_msg(fd >= 0, "manager did not start");
    close(fd);
    uint16_t mport = metrics_port("m1");
    pid_t a = spawn("sokovan-agent", "a",
                    (const char *const[]){"--data-dir", data, "--manager",
                                          addr, "--state-dir", state,
                                          "--metrics-listen", "127.0.0.1:0",
                                          NULL});
    uint16_t aport = metrics_port("a");
    wait_for_err("a", "connected to", 1);
    /* Both publish once a second: wait for the registration to show. */
    int64_t deadline = now_ms() + WAIT_MS;
    do {
        usleep(100 * 1000);
        http_get(resp, sizeof(resp), mport, "/metrics");
    } while (sample_value(resp, "sokovan_agents{state=\"alive\"}") != 1 &&
             now_ms() < deadline);
    ck_assert_double_eq(sample_value(resp, "sokovan_agents{state=\"alive\"}"),
                        1);
    http_get(aresp, sizeof(aresp), aport, "/metrics");
    assert_exposition(strstr(aresp, "\r\n\r\n") + 4);
    double cpu = sample_value(aresp, "sokovan_agent_capacity{slot=\"cpu\"}");
    ck_assert_double_gt(cpu, 0);
    ck_assert_double_eq(sample_value(resp, "sokovan_capacity{resource_group="
                                           "\"default\",slot=\"cpu\"}"),
                        cpu);
    ck_assert_double_eq(sample_value(resp, "sokovan_capacity{resource_group="
                                           "\"default\",slot=\"mem\"}"),
                        sample_value(aresp, "sokovan_agent_capacity{slot="
                                            "\"mem\"}"));
    ck_assert_double_eq(sample_value(aresp, "sokovan_agent_kernels{state="
                                            "\"running\"}"), 0);
    stop_and_check(a, "a");
    stop_and_check(m, "m1");
    remove_dir();
}
END_TEST

/* ---- the manager database ------------------------------------------------ */

static void junk_page(const char *db, const char *table)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    char sql[128], junk[4096];
    snprintf(sql, sizeof(sql), "SELECT rootpage FROM sqlite_master WHERE "
             "name='%s'", table);
    /* Read-write: a read-only connection would leave a -wal behind. */
    ck_assert_int_eq(sqlite3_open_v2(db, &h, SQLITE_OPEN_READWRITE, NULL), 0);
    ck_assert_int_eq(sqlite3_prepare_v2(h, sql, -1, &st, NULL), 0);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t page = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (char)(i * 31 + 7);
    int fd = open(db, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, junk, sizeof(junk), (page - 1) * 4096),
                     (ssize_t)sizeof(junk));
    close(fd);
}

/* A refused start: exit 1, the reason and the recovery steps logged,
 * admin.key as it was. */
static void expect_refusal(prog_run *r, const char *data, const char *why,
                           const char *key0, const char *const *extra)
{
    char sock[128], key[160], key1[256];
    const char *argv[16] = {"--data-dir", data, "--listen", sock, "--tcp",
                            "none"};
    size_t n = 6;
    for (; extra && *extra && n < 15; extra++)
        argv[n++] = *extra;
    argv[n] = NULL;
    snprintf(sock, sizeof(sock), "%s/r.sock", g_dir);
    run(r, "sokovan-manager", argv);
    ck_assert_msg(r->status == 1, "status %d:\n%s", r->status, r->err);
    assert_contains(r->err, why);
    assert_contains(r->err, "Recovery");
    snprintf(key, sizeof(key), "%s/admin.key", data);
    read_file(key1, sizeof(key1), key);
    ck_assert_str_eq(key1, key0);
}

/* Empty, damaged or missing databases stop the manager and leave the files
 * alone; --check reports; --init makes a new cluster only where none is. */
START_TEST(manager_refuses_untrusted_db)
{
    prog_run *r = calloc(1, sizeof(*r));
    char data[128], sock[128], db[160], good[160], key[160], key0[256];
    char key1[256], cfg[160];
    struct stat st;
    make_dir();
    snprintf(data, sizeof(data), "%s/data", g_dir);
    snprintf(sock, sizeof(sock), "%s/m.sock", g_dir);
    snprintf(db, sizeof(db), "%s/manager.db", data);
    snprintf(good, sizeof(good), "%s/good.db", g_dir);
    snprintf(key, sizeof(key), "%s/admin.key", data);
    stop_and_check(start_manager("m1", data, sock), "m1");
    read_file(key0, sizeof(key0), key);
    ck_assert_uint_gt(strlen(key0), 20);
    ck_assert_int_eq(link(db, good), 0);

    /* One page of the users table overwritten. */
    ck_assert_int_eq(unlink(db), 0);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "cp %s %s", good, db);
    ck_assert_int_eq(system(cmd), 0);
    junk_page(db, "users");
    expect_refusal(r, data, "is damaged (quick_check", key0, NULL);
    run(r, "sokovan-manager", (const char *const[]){"--check", "--data-dir",
                                                    data, NULL});
    ck_assert_int_eq(r->status, 1);
    assert_contains(r->err, "integrity_check");

    /* Empty. */
    ck_assert_int_eq(truncate(db, 0), 0);
    expect_refusal(r, data, "is empty (0 bytes)", key0, NULL);
    ck_assert_int_eq(stat(db, &st), 0);
    ck_assert_int_eq(st.st_size, 0);
    run(r, "sokovan-manager", (const char *const[]){"--check", "--data-dir",
                                                    data, NULL});
    ck_assert_int_eq(r->status, 1);
    /* --init never replaces a database, even an empty one. */
    expect_refusal(r, data, "--init", key0,
                   (const char *const[]){"--init", NULL});

    /* Missing, but admin.key says a cluster lived here. */
    ck_assert_int_eq(unlink(db), 0);
    expect_refusal(r, data, "admin.key shows a cluster lived here", key0,
                   NULL);
    /* --init: a new cluster, a new admin key. */
    pid_t pid = spawn("sokovan-manager", "m2",
                      (const char *const[]){"--data-dir", data, "--listen",
                                            sock, "--tcp", "none", "--init",
                                            NULL});
    int fd = wait_listening(pid, sock);
    ck_assert_msg(fd >= 0, "--init did not start the manager");
    close(fd);
    stop_and_check(pid, "m2");
    read_file(key1, sizeof(key1), key);
    ck_assert_str_ne(key1, key0);
    run(r, "sokovan-manager", (const char *const[]){"--check", "--data-dir",
                                                    data, NULL});
    ck_assert_msg(r->status == 0, "%s", r->err);
    assert_contains(r->out, "integrity_check ok");

    /* Usage: switches take no value, live on the command line only. */
    run(r, "sokovan-manager", (const char *const[]){"--init", "--check",
                                                    NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "exclude each other");
    run(r, "sokovan-manager", (const char *const[]){"--init=yes", NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "takes no value");
    write_config("init.ini", "[manager]\ninit = 1\n");
    snprintf(cfg, sizeof(cfg), "%s/init.ini", g_dir);
    run(r, "sokovan-manager", (const char *const[]){"--config", cfg, NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "command-line switch");
    run(r, "sokovan-manager", (const char *const[]){"--help", NULL});
    assert_contains(r->out, "--init ");
    assert_contains(r->out, "--backup-dir DIR");
    remove_dir();
    free(r);
}
END_TEST

/* The standby keys: in --help, bounded, and the lease must cover two
 * renewals; refused with status 2 before anything starts. */
START_TEST(manager_ha_keys)
{
    prog_run *r = calloc(1, sizeof(*r));
    make_dir();
    run(r, "sokovan-manager", (const char *const[]){"--help", NULL});
    assert_contains(r->out, "--ha-poll-ms MS");
    assert_contains(r->out, "--ha-lease-ms MS");
    run(r, "sokovan-manager", (const char *const[]){"--ha-poll-ms", "400",
                                                    "--ha-lease-ms", "700",
                                                    NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "at least twice ha_poll_ms");
    run(r, "sokovan-manager", (const char *const[]){"--ha-lease-ms", "100",
                                                    NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--ha-lease-ms: 100 is outside 200..3600000");
    run(r, "sokovan-manager", (const char *const[]){"--ha-poll-ms", "soon",
                                                    NULL});
    ck_assert_int_eq(r->status, 2);
    assert_contains(r->err, "--ha-poll-ms");
    remove_dir();
    free(r);
}
END_TEST

Suite *skv_test_suite_daemons(void);
Suite *skv_test_suite_daemons(void)
{
    Suite *s = suite_create("daemons");
    TCase *tc = tcase_create("daemons");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, help_and_version);
    tcase_add_test(tc, bad_flags);
    tcase_add_test(tc, config_errors_name_file_and_line);
    tcase_add_test(tc, flags_override_config);
    tcase_add_test(tc, agent_missing_key_file);
    tcase_add_test(tc, manager_starts_and_stops_cleanly);
    tcase_add_test(tc, agent_reconnects_to_restarted_manager);
    tcase_add_test(tc, manager_serves_metrics);
    tcase_add_test(tc, cluster_metrics_agree);
    tcase_add_test(tc, manager_refuses_untrusted_db);
    tcase_add_test(tc, manager_ha_keys);
    suite_add_tcase(s, tc);
    return s;
}
