/* Exec into containers of the OCI backend (runc): skv_runtime_exec runs
 * `runc exec --detach` under a keeper (src/runtime/oci_exec*.c) and hands
 * back the same skv_exec handle as the native backend. Echo, stderr, exit
 * codes, stdin, signals; the kernel's identity (namespaces, cgroup, uid,
 * capabilities, no_new_privs, seccomp); a terminal from runc's console
 * socket (/dev/pts, a resize, Ctrl-C, EOF); refusals (not running, no
 * command, bad cwd) with no process, descriptor or file left behind.
 * As root with /bin/busybox and runc (/usr/sbin/runc, Debian's package);
 * otherwise each test says why it is skipped.
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
#include "exec_fixture.h"

#define RUNC "/usr/sbin/runc"

#define REQUIRE_RUNC()                                                         \
    do {                                                                       \
        SKV_RTFX_REQUIRE();                                                    \
        if (access(RUNC, X_OK) != 0) {                                         \
            fprintf(stderr, "%s: SKIP: " RUNC " is missing (Debian package "   \
                    "runc)\n", __func__);                                      \
            return;                                                            \
        }                                                                      \
    } while (0)

/* ---- helpers ------------------------------------------------------------ */

static skv_runtime *open_oci(const char *name)
{
    char state[PATH_MAX];
    skv_error e = SKV_ERROR_INIT;
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), name);
    o.image_dir = skv_rtfx_images;
    o.backend = "oci";
    o.oci_runtime = RUNC;
    o.stop_grace_ms = 200;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    return rt;
}

/* The container's state directory (the runc bundle). */
static void ctr_dir(const char *state_name, const char *id, char *out,
                    size_t n)
{
    char state[PATH_MAX];
    skv_rtfx_state(state, sizeof(state), state_name);
    snprintf(out, n, "%s/%s", state, id);
}

/* A running container: busybox as uid (and gid) `uid`, env FOO=bar, cwd
 * /tmp, running cmd. */
static void start_ctr(skv_runtime *rt, const char *id, const char *cmd,
                      uint32_t uid)
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

static skv_exec *exec_opts(skv_runtime *rt, const char *id, size_t argc,
                           const char *const *argv, bool tty,
                           const char *const *env, size_t n_env)
{
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    o.argv = argv;
    o.argc = argc;
    o.tty = tty;
    o.rows = 30;
    o.cols = 100;
    o.env = env;
    o.n_env = n_env;
    skv_exec *x = NULL;
    SKV_CK_OK(skv_runtime_exec(rt, id, &o, &x, &e), &e);
    ck_assert_ptr_nonnull(x);
    return x;
}

static skv_exec *exec_sh(skv_runtime *rt, const char *id, const char *cmd,
                         bool tty)
{
    const char *argv[] = {"sh", "-c", cmd};
    return exec_opts(rt, id, 3, argv, tty, NULL, 0);
}

static void wait_status(skv_exec *x, int *code, int *sig)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_exec_wait(x, 20000, code, sig, &e), &e);
}

static int wait_code(skv_exec *x)
{
    int code = -1, sig = -1;
    wait_status(x, &code, &sig);
    ck_assert_int_eq(sig, 0);
    return code;
}

/* The names in a directory, sorted, one per line. */
static void list_dir(const char *dir, char *out, size_t n)
{
    struct dirent **v = NULL;
    int k = scandir(dir, &v, NULL, alphasort);
    ck_assert_int_ge(k, 0);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%s\n",
                                v[i]->d_name);
        free(v[i]);
    }
    free(v);
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(test_exec_oci_echo_exit_codes)
{
    REQUIRE_RUNC();
    skv_runtime *rt = open_oci("echo");
    start_ctr(rt, "o", "sleep 1000", 0);
    /* The kernel's environment and cwd, an added and a replaced variable. */
    const char *env[] = {"FOO=baz", "EXTRA=1"};
    const char *sh[] = {"sh", "-c", "echo out $FOO $EXTRA $(pwd); "
                        "echo err >&2; exit 3"};
    skv_exec *x = exec_opts(rt, "o", 3, sh, false, env, 2);
    char out[256], err[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    read_all(skv_exec_fd(x, SKV_EXEC_STDERR), err, sizeof(err));
    ck_assert_str_eq(out, "out baz 1 /tmp\n");
    ck_assert_str_eq(err, "err\n");
    ck_assert_int_eq(wait_code(x), 3);
    skv_exec_free(x);
    x = exec_sh(rt, "o", "echo $FOO", false);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "bar\n");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    /* stdin: cat gives back what it is given, up to EOF. */
    const char *cat[] = {"cat"};
    x = exec_opts(rt, "o", 1, cat, false, NULL, 0);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "abc", 3), 3);
    SKV_CK_OK(skv_exec_close_stdin(x, NULL), NULL);
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "abc");
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    /* A signal ends it with that signal; the pidfd says when. */
    x = exec_sh(rt, "o", "sleep 100", false);
    SKV_CK_OK(skv_exec_signal(x, SIGTERM, NULL), NULL);
    struct pollfd p = {skv_exec_fd(x, SKV_EXEC_PIDFD), POLLIN, 0};
    ck_assert_int_eq(poll(&p, 1, 20000), 1);
    int code = -1, sig = 0;
    wait_status(x, &code, &sig);
    ck_assert_int_eq(sig, SIGTERM);
    ck_assert_int_eq(skv_exec_signal(x, SIGTERM, NULL), SKV_ESTATE);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "o", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* The exec is in the kernel's namespaces and cgroup, with its uid, gid,
 * capabilities, no_new_privs and seccomp filter; pid 1 is the kernel's. */
START_TEST(test_exec_oci_identity)
{
    REQUIRE_RUNC();
    skv_runtime *rt = open_oci("ident");
    start_ctr(rt, "o", "sleep 1000", 1000);
    int64_t ip = init_pid(rt, "o");
    skv_exec *x = exec_sh(rt, "o", "sleep 100", false);
    int64_t xp = skv_exec_pid(x);
    ck_assert_int_gt(xp, 0);
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
    status_field(xp, "NoNewPrivs", a, sizeof(a));
    ck_assert_str_eq(a, "1");
    status_field(xp, "Uid", a, sizeof(a));
    ck_assert_msg(strncmp(a, "1000", 4) == 0, "uid %s", a);
    skv_exec_free(x);
    ck_assert_int_eq(kill((pid_t)xp, 0), -1);
    /* pid 1 of the container is its first process, not the exec. */
    x = exec_sh(rt, "o", "echo $$; cat /proc/1/cmdline", false);
    char out[256];
    read_all(skv_exec_fd(x, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_msg(strstr(out, "sleep") && atoi(out) > 1, "%s", out);
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    skv_runtime_destroy(rt, "o", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* A terminal: /dev/pts/N of the container, the size asked for, a resize
 * seen by stty, Ctrl-C ends the command with SIGINT, ^D is EOF. */
START_TEST(test_exec_oci_tty_resize)
{
    REQUIRE_RUNC();
    skv_runtime *rt = open_oci("tty");
    start_ctr(rt, "o", "sleep 1000", 1000);
    skv_exec *x = exec_sh(rt, "o", "tty; stty size; read l; stty size; "
                          "exit 5", true);
    int fd = skv_exec_fd(x, SKV_EXEC_STDOUT);
    ck_assert_int_eq(skv_exec_fd(x, SKV_EXEC_STDIN), fd);
    ck_assert_int_eq(skv_exec_fd(x, SKV_EXEC_STDERR), -1);
    char buf[1024];
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "30 100"), "%s", buf);
    ck_assert_msg(strstr(buf, "/dev/pts/"), "%s", buf);
    SKV_CK_OK(skv_exec_resize(x, 40, 120, NULL), NULL);
    ck_assert_int_eq(write(skv_exec_fd(x, SKV_EXEC_STDIN), "go\n", 3), 3);
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "40 120"), "%s", buf);
    ck_assert_int_eq(wait_code(x), 5);
    ck_assert_int_eq(skv_exec_resize(x, 0, 5, NULL), SKV_EINVAL);
    skv_exec_free(x);
    /* Ctrl-C through the line discipline: SIGINT to the foreground. */
    x = exec_sh(rt, "o", "echo ready; exec sleep 100", true);
    fd = skv_exec_fd(x, SKV_EXEC_STDOUT);
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "ready"), "%s", buf);
    ck_assert_int_eq(write(fd, "\x03", 1), 1);
    int code = -1, sig = 0;
    wait_status(x, &code, &sig);
    ck_assert_int_eq(sig, SIGINT);
    skv_exec_free(x);
    /* EOF: ^D ends cat's input. */
    const char *cat[] = {"cat"};
    x = exec_opts(rt, "o", 1, cat, true, NULL, 0);
    fd = skv_exec_fd(x, SKV_EXEC_STDOUT);
    ck_assert_int_eq(write(fd, "hi\n", 3), 3);
    ck_assert_msg(read_until(fd, buf, sizeof(buf), "hi\r\nhi\r\n"), "%s", buf);
    SKV_CK_OK(skv_exec_close_stdin(x, NULL), NULL);
    ck_assert_int_eq(wait_code(x), 0);
    skv_exec_free(x);
    skv_exec *p = exec_sh(rt, "o", "true", false);
    ck_assert_int_eq(skv_exec_resize(p, 10, 10, NULL), SKV_ESTATE);
    ck_assert_int_eq(wait_code(p), 0);
    skv_exec_free(p);
    skv_runtime_destroy(rt, "o", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

/* Refusals: no such command, a bad cwd, a container that has ended, one
 * that is gone; none leaves a descriptor, a child or a file. */
START_TEST(test_exec_oci_refused)
{
    REQUIRE_RUNC();
    skv_runtime *rt = open_oci("refused");
    start_ctr(rt, "o", "sleep 1000", 0);
    char dir[PATH_MAX], before[4096], after[4096];
    ctr_dir("refused", "o", dir, sizeof(dir));
    list_dir(dir, before, sizeof(before));
    int fds = count_fds();
    skv_error e = SKV_ERROR_INIT;
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    const char *argv[] = {"no-such-command"};
    o.argv = argv;
    o.argc = 1;
    skv_exec *x = NULL;
    ck_assert_int_eq(skv_runtime_exec(rt, "o", &o, &x, &e), SKV_ENOENT);
    ck_assert_msg(strstr(e.message, "no-such-command") &&
                  strstr(e.message, "not found"), "%s", e.message);
    ck_assert_ptr_null(x);
    o.tty = true;
    ck_assert_int_eq(skv_runtime_exec(rt, "o", &o, &x, &e), SKV_ENOENT);
    o.tty = false;
    argv[0] = "true";
    o.cwd = "/no/such/dir";
    ck_assert_int_lt(skv_runtime_exec(rt, "o", &o, &x, &e), 0);
    ck_assert_msg(strstr(e.message, "chdir"), "%s", e.message);
    o.cwd = "relative";
    ck_assert_int_eq(skv_runtime_exec(rt, "o", &o, &x, &e), SKV_EINVAL);
    o.cwd = NULL;
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(errno, ECHILD);
    list_dir(dir, after, sizeof(after));
    ck_assert_str_eq(before, after);
    /* Ended: refused before runc is asked. */
    SKV_CK_OK(skv_runtime_signal(rt, "o", SIGKILL, &e), &e);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "o", 20000, &st, &e), &e);
    ck_assert_int_eq(skv_runtime_exec(rt, "o", &o, &x, &e), SKV_ESTATE);
    ck_assert_msg(strstr(e.message, "not running"), "%s", e.message);
    ck_assert_ptr_null(x);
    skv_runtime_destroy(rt, "o", 0, NULL);
    ck_assert_int_eq(skv_runtime_exec(rt, "o", &o, &x, &e), SKV_ENOENT);
    ck_assert_int_eq(count_fds(), fds);
    skv_runtime_free(rt);
}
END_TEST

/* Many execs at once, ended every way (exit, killed by free with a
 * background child, terminal hang-up): no descriptor, process, zombie,
 * terminal or file is left. */
START_TEST(test_exec_oci_leaves_nothing)
{
    REQUIRE_RUNC();
    skv_runtime *rt = open_oci("many");
    start_ctr(rt, "o", "sleep 1000", 0);
    char dir[PATH_MAX], before[4096], after[4096];
    ctr_dir("many", "o", dir, sizeof(dir));
    list_dir(dir, before, sizeof(before));
    int fds = count_fds();
    enum { N = 9 };
    skv_exec *x[N];
    int64_t pids[N];
    for (int i = 0; i < N; i++) {
        x[i] = exec_sh(rt, "o", i % 3 == 0 ? "exit 0"
                                : i % 3 == 1 ? "sleep 1000 & sleep 1000"
                                             : "cat", i % 2 == 0);
        pids[i] = skv_exec_pid(x[i]);
        ck_assert_int_gt(pids[i], 0);
    }
    for (int i = 0; i < N; i++)
        skv_exec_free(x[i]);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(kill((pid_t)pids[i], 0), -1);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
    ck_assert_int_eq(live_in_ns(init_pid(rt, "o")), 0);
    list_dir(dir, after, sizeof(after));
    ck_assert_str_eq(before, after);
    skv_exec *l = exec_sh(rt, "o", "ls /dev/pts", false);
    char out[4096];
    read_all(skv_exec_fd(l, SKV_EXEC_STDOUT), out, sizeof(out));
    ck_assert_str_eq(out, "ptmx\n");
    ck_assert_int_eq(wait_code(l), 0);
    skv_exec_free(l);
    list_dir(dir, after, sizeof(after));
    ck_assert_str_eq(before, after);
    skv_runtime_destroy(rt, "o", 0, NULL);
    skv_runtime_free(rt);
}
END_TEST

Suite *skv_test_suite_exec_oci(void);
Suite *skv_test_suite_exec_oci(void)
{
    Suite *s = suite_create("exec_oci");
    TCase *tc = tcase_create("oci_exec");
    tcase_add_unchecked_fixture(tc, skv_rtfx_setup_import, skv_rtfx_teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_exec_oci_echo_exit_codes);
    tcase_add_test(tc, test_exec_oci_identity);
    tcase_add_test(tc, test_exec_oci_tty_resize);
    tcase_add_test(tc, test_exec_oci_refused);
    tcase_add_test(tc, test_exec_oci_leaves_nothing);
    suite_add_tcase(s, tc);
    return s;
}
