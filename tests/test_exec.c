/* Exec into running containers: the runtime's skv_runtime_exec (identity,
 * namespaces, cgroup, seccomp, terminal, leftovers) on a busybox image, as
 * root. The agent's exec messages are in test_agent_exec.c's cases below.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "skv_test.h"
#include "rt_fixture.h"

/* ---- helpers ------------------------------------------------------------ */

static skv_runtime *open_rt(const char *name, const char *backend)
{
    char state[PATH_MAX];
    skv_error e = SKV_ERROR_INIT;
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), name);
    o.image_dir = skv_rtfx_images;
    o.backend = backend;
    o.allow_process_backend = backend && strcmp(backend, "process") == 0;
    o.stop_grace_ms = 200;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    return rt;
}

/* A running container "c" with uid 1000 (or root), env FOO=bar, cwd /tmp,
 * running cmd. */
static void start_ctr(skv_runtime *rt, const char *id, const char *cmd,
                      uint32_t uid, uint32_t userns)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, id, &e), &e);
    SKV_CK_OK(skv_container_spec_set_image(s, "busybox", &e), &e);
    const char *argv[] = {"sh", "-c", cmd};
    SKV_CK_OK(skv_container_spec_set_argv(s, 3, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "FOO", "bar", &e), &e);
    SKV_CK_OK(skv_container_spec_set_cwd(s, "/tmp", &e), &e);
    SKV_CK_OK(skv_container_spec_set_user(s, uid, uid, &e), &e);
    if (userns)
        SKV_CK_OK(skv_container_spec_set_userns(s, userns, 65536, &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, id, &e), &e);
    skv_container_spec_free(s);
}

static int64_t init_pid(skv_runtime *rt, const char *id)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_status(rt, id, &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_RUNNING);
    return st.pid;
}

static skv_exec *exec_argv(skv_runtime *rt, const char *id, size_t argc,
                           const char *const *argv, bool tty)
{
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    o.argv = argv;
    o.argc = argc;
    o.tty = tty;
    o.rows = 30;
    o.cols = 100;
    skv_exec *x = NULL;
    SKV_CK_OK(skv_runtime_exec(rt, id, &o, &x, &e), &e);
    return x;
}

static skv_exec *exec_sh(skv_runtime *rt, const char *id, const char *cmd,
                         bool tty)
{
    const char *argv[] = {"sh", "-c", cmd};
    return exec_argv(rt, id, 3, argv, tty);
}

/* Read fd (non-blocking) until EOF or 10 s; NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    time_t end = time(NULL) + 10;
    while (got + 1 < n && time(NULL) < end) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 200);
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r == 0 || (r < 0 && errno == EIO)) /* EIO: terminal hung up */
            break;
        if (r > 0)
            got += (size_t)r;
    }
    buf[got] = '\0';
    return got;
}

/* Read until `want` shows up in the output (terminal), 10 s at most. */
static bool read_until(int fd, char *buf, size_t n, const char *want)
{
    size_t got = 0;
    time_t end = time(NULL) + 10;
    buf[0] = '\0';
    while (!strstr(buf, want) && got + 1 < n && time(NULL) < end) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 200);
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0 || errno == EIO)
            break;
        buf[got] = '\0';
    }
    return strstr(buf, want) != NULL;
}

static int wait_code(skv_exec *x)
{
    skv_error e = SKV_ERROR_INIT;
    int code = -1, sig = -1;
    SKV_CK_OK(skv_exec_wait(x, 10000, &code, &sig, &e), &e);
    ck_assert_int_eq(sig, 0);
    return code;
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

static void same_link(int64_t a, int64_t b, const char *what)
{
    char pa[64], pb[64], la[128] = "", lb[128] = "";
    snprintf(pa, sizeof(pa), "/proc/%lld/%s", (long long)a, what);
    snprintf(pb, sizeof(pb), "/proc/%lld/%s", (long long)b, what);
    ck_assert_int_gt(readlink(pa, la, sizeof(la) - 1), 0);
    ck_assert_int_gt(readlink(pb, lb, sizeof(lb) - 1), 0);
    ck_assert_msg(strcmp(la, lb) == 0, "%s: %s vs %s", what, la, lb);
}

static void read_proc(int64_t pid, const char *file, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%lld/%s", (long long)pid, file);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* The value after "Key:" in /proc/PID/status. */
static void status_field(int64_t pid, const char *key, char *out, size_t n)
{
    char buf[8192], pat[64];
    read_proc(pid, "status", buf, sizeof(buf));
    snprintf(pat, sizeof(pat), "\n%s:", key);
    char *p = strstr(buf, pat);
    ck_assert_ptr_nonnull(p);
    p += strlen(pat);
    p += strspn(p, " \t");
    size_t len = strcspn(p, "\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

/* Processes in init's pid namespace other than init that are not zombies
 * (the container's first process here does not reap orphans). */
static int live_in_ns(int64_t init)
{
    char want[128] = "", path[64], link[128];
    snprintf(path, sizeof(path), "/proc/%lld/ns/pid", (long long)init);
    ck_assert_int_gt(readlink(path, want, sizeof(want) - 1), 0);
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        long pid = atol(de->d_name);
        if (pid <= 0 || pid == init)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
        ssize_t len = readlink(path, link, sizeof(link) - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        char st[16] = "";
        if (strcmp(link, want) == 0) {
            status_field(pid, "State", st, sizeof(st));
            n += st[0] != 'Z';
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* ---- runtime ------------------------------------------------------------ */

START_TEST(test_exec_echo_exit_codes)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("echo", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    skv_exec *x = exec_sh(rt, "c", "echo out $FOO $(pwd); echo err >&2; "
                          "exit 3", false);
    char out[256], err[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    read_all(skv_exec_fd(x, SKV_EXEC_STDERR), err, sizeof(err));
    ck_assert_str_eq(out, "out bar /tmp\n");
    ck_assert_str_eq(err, "err\n");
    ck_assert_int_eq(wait_code(x), 3);
    skv_exec_free(x);
    /* stdin: cat echoes what it is given up to EOF. */
    const char *cat[] = {"cat"};
    x = exec_argv(rt, "c", 1, cat, false);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "abc", 3), 3);
    SKV_CK_OK(skv_exec_close_stdin(x, NULL), NULL);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "abc");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    /* A signal ends it with that signal. */
    x = exec_sh(rt, "c", "sleep 100", false);
    SKV_CK_OK(skv_exec_signal(x, SIGTERM, NULL), NULL);
    int code = -1, sig = 0;
    SKV_CK_OK(skv_exec_wait(x, 10000, &code, &sig, NULL), NULL);
    ck_assert_int_eq(sig, SIGTERM);
    ck_assert_int_eq(skv_exec_signal(x, SIGTERM, NULL), SKV_ESTATE);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_bad_input)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("bad", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    int fds = count_fds();
    skv_error e = SKV_ERROR_INIT;
    skv_exec *x = NULL;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", NULL, &x, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    const char *argv[] = {"no-such-command"};
    o.argv = argv;
    o.argc = 1;
    const char *env[] = {"=x"};
    o.env = env;
    o.n_env = 1;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    o.n_env = 0;
    o.cwd = "relative";
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EINVAL);
    o.cwd = NULL;
    ck_assert_int_eq(skv_runtime_exec(rt, "nope", &o, &x, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ENOENT);
    ck_assert_msg(strstr(e.message, "execute the command"), "%s", e.message);
    o.cwd = "/no/such/dir";
    argv[0] = "true";
    ck_assert_int_lt(skv_runtime_exec(rt, "c", &o, &x, &e), 0);
    ck_assert_msg(strstr(e.message, "chdir"), "%s", e.message);
    ck_assert_ptr_null(x);
    o.version = 99;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_EVERSION);
    /* Failures leave no descriptor and no child. */
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
    skv_exec_free(NULL);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_terminated_refused)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("ended", NULL);
    start_ctr(rt, "c", "exit 0", 0, 0);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "c", 10000, &st, NULL), NULL);
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    const char *argv[] = {"true"};
    o.argv = argv;
    o.argc = 1;
    skv_exec *x = NULL;
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "not running"), "%s", e.message);
    skv_runtime_destroy(rt, "c", 0, NULL);
    ck_assert_int_eq(skv_runtime_exec(rt, "c", &o, &x, &e), SKV_ENOENT);
    skv_runtime_free(rt);
}
END_TEST

/* The exec is in the kernel's namespaces and cgroup, with its uid, gid,
 * capabilities and seccomp mode. */
static void check_identity(skv_runtime *rt, const char *id, const char *uid)
{
    int64_t ip = init_pid(rt, id);
    skv_exec *x = exec_sh(rt, id, "sleep 100", false);
    int64_t xp = skv_exec_pid(x);
    static const char *const ns[] = {"ns/mnt", "ns/pid", "ns/net", "ns/ipc",
                                     "ns/uts", "ns/cgroup", "ns/user"};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
        same_link(ip, xp, ns[i]);
    char a[4096], b[4096];
    read_proc(ip, "cgroup", a, sizeof(a));
    read_proc(xp, "cgroup", b, sizeof(b));
    ck_assert_str_eq(a, b);
    static const char *const keys[] = {"Uid", "Gid", "Groups", "CapEff",
                                       "CapPrm", "CapBnd", "CapInh", "CapAmb",
                                       "NoNewPrivs", "Seccomp"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        status_field(ip, keys[i], a, sizeof(a));
        status_field(xp, keys[i], b, sizeof(b));
        ck_assert_msg(strcmp(a, b) == 0, "%s: %s vs %s", keys[i], a, b);
    }
    status_field(xp, "Seccomp", a, sizeof(a));
    ck_assert_str_eq(a, "2");
    status_field(xp, "Uid", a, sizeof(a));
    ck_assert_msg(strncmp(a, uid, strlen(uid)) == 0, "uid %s", a);
    skv_exec_free(x);
    ck_assert_int_eq(kill((pid_t)xp, 0), -1);
}

START_TEST(test_exec_identity)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("ident", NULL);
    start_ctr(rt, "c", "sleep 1000", 1000, 0);
    check_identity(rt, "c", "1000");
    /* pid 1 of the container is its first process, not the exec. */
    skv_exec *x = exec_sh(rt, "c", "echo $$; cat /proc/1/cmdline", false);
    char out[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_msg(strstr(out, "sleep") && atoi(out) > 1, "%s", out);
    wait_code(x);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "c", 0, NULL);
    /* With a user namespace: host uid 200000 + 1000 for container 1000. */
    start_ctr(rt, "u", "sleep 1000", 1000, 200000);
    check_identity(rt, "u", "201000");
    x = exec_sh(rt, "u", "id -u", false);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "1000\n");
    wait_code(x);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "u", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_tty_resize)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("tty", NULL);
    start_ctr(rt, "c", "sleep 1000", 1000, 0);
    skv_exec *x = exec_sh(rt, "c", "tty; stty size; read l; stty size; "
                          "exit 5", true);
    int fd = skv_exec_fd(x, SKV_EXEC_STDOUT);
    ck_assert_int_eq(skv_exec_fd(x, SKV_EXEC_STDERR), -1);
    char buf[1024];
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "30 100"), "%s", buf);
    ck_assert_msg(strstr(buf, "/dev/pts/0"), "%s", buf);
    SKV_CK_OK(skv_exec_resize(x, 40, 120, NULL), NULL);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "go\n", 3), 3);
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "40 120"), "%s", buf);
    ck_assert_int_eq(wait_code(x), 5);
    ck_assert_int_eq(skv_exec_resize(x, 0, 5, NULL), SKV_EINVAL);
    skv_exec_free(x);
    skv_exec *p = exec_sh(rt, "c", "true", false);
    ck_assert_int_eq(skv_exec_resize(p, 10, 10, NULL), SKV_ESTATE);
    skv_exec_free(p);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* Many execs at once, ended every way (exit, kill by free, terminal
 * hang-up with a background child): no descriptor, process or terminal
 * is left. */
START_TEST(test_exec_leaves_nothing)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("many", NULL);
    start_ctr(rt, "c", "sleep 1000", 0, 0);
    int fds = count_fds();
    enum { N = 24 };
    skv_exec *x[N];
    int64_t pids[N];
    for (int i = 0; i < N; i++) {
        x[i] = exec_sh(rt, "c", i % 3 == 0 ? "exit 0"
                                : i % 3 == 1 ? "sleep 1000 & sleep 1000"
                                             : "cat", i % 2 == 0);
        pids[i] = skv_exec_pid(x[i]);
    }
    for (int i = 0; i < N; i++)
        skv_exec_free(x[i]);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(kill((pid_t)pids[i], 0), -1);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    /* Only the first process is left in the container, and its terminal
     * instance has no terminal but the multiplexer. */
    ck_assert_int_eq(live_in_ns(init_pid(rt, "c")), 0);
    skv_exec *l = exec_sh(rt, "c", "ls /dev/pts", false);
    char out[4096];
    read_all(skv_exec_fd(l, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "ptmx\n");
    wait_code(l);
    skv_exec_free(l);
    skv_runtime_destroy(rt, "c", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_exec_process_backend)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("proc", "process");
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, "p", &e), &e);
    SKV_CK_OK(skv_container_spec_set_rootfs(s, "/", &e), &e);
    const char *argv[] = {"/bin/sleep", "1000"};
    SKV_CK_OK(skv_container_spec_set_argv(s, 2, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "FOO", "proc", &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "p", &e), &e);
    skv_container_spec_free(s);
    skv_exec *x = exec_sh(rt, "p", "echo $FOO", false);
    char out[64];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "proc\n");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "p", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

Suite *skv_test_suite_exec(void);
Suite *skv_test_suite_exec(void)
{
    Suite *s = suite_create("exec");
    TCase *tc = tcase_create("runtime_exec");
    tcase_add_unchecked_fixture(tc, skv_rtfx_setup_import, skv_rtfx_teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exec_echo_exit_codes);
    tcase_add_test(tc, test_exec_bad_input);
    tcase_add_test(tc, test_exec_terminated_refused);
    tcase_add_test(tc, test_exec_identity);
    tcase_add_test(tc, test_exec_tty_resize);
    tcase_add_test(tc, test_exec_leaves_nothing);
    tcase_add_test(tc, test_exec_process_backend);
    suite_add_tcase(s, tc);
    return s;
}
