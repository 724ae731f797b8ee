/* skv_runtime_exec for the OCI backend: `runc exec -d` under a keeper
 * (oci_exec_keeper.c), which hands back the command's pid (a pidfd) and,
 * for a terminal, the master runc sent on its console socket. The handle
 * is the same skv_exec as the native backend's (exec_handle.c): its pid
 * and pidfd are the keeper's, which ends the way the command ends, so
 * wait, exit code, signal and the pidfd's readiness need no other path.
 * Steps: check the container runs; write process.json (oci_exec_proc.c)
 * into a temporary directory in the container's; fork the keeper; read
 * its reports; remove the directory whatever happened.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "image_int.h"
#include "oci_exec.h"

typedef struct oci_prep {
    char tmp[PATH_MAX];         /* "" until made */
    char root[PATH_MAX];        /* runc --root */
    const char *argv[20];
    skv__oci_keeper k;
    int pipes[3][2];            /* [i][0] read end, [i][1] write end */
    int sock[2];                /* report: [0] caller, [1] keeper */
} oci_prep;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void prep_init(oci_prep *p)
{
    memset(p, 0, sizeof(*p));
    p->sock[0] = p->sock[1] = p->k.console_fd = p->k.report_fd = -1;
    for (int i = 0; i < 3; i++)
        p->pipes[i][0] = p->pipes[i][1] = p->k.stdio[i] = -1;
}

static void prep_free(oci_prep *p)
{
    close_fd(&p->sock[0]);
    close_fd(&p->sock[1]);
    close_fd(&p->k.console_fd);
    for (int i = 0; i < 3; i++) {
        close_fd(&p->pipes[i][0]);
        close_fd(&p->pipes[i][1]);
    }
    if (p->tmp[0])
        skv__rt_rm_rf(p->tmp, NULL);
}

static int check_running(const char *dir, const char *id, skv_error *err)
{
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv__rt_status_ex(dir, &st, false, err);
    if (rc == 0 && st.state != SKV_CONTAINER_RUNNING)
        rc = skv__err(err, SKV_ESTATE, "container '%s' is not running "
                      "(%s): nothing to exec into", id,
                      st.state == SKV_CONTAINER_CREATED ? "not started"
                      : st.state == SKV_CONTAINER_LOST ? "lost" : "exited");
    return rc;
}

/* The temporary directory and its process.json. */
static int write_process(oci_prep *p, const char *dir,
                         const skv_exec_options *o, skv_error *err)
{
    skv__json j = {0};
    int rc = skv__oci_exec_process(&j, dir, o, err);
    snprintf(p->tmp, sizeof(p->tmp), "%s/exec.XXXXXX", dir);
    if (rc == 0 && !mkdtemp(p->tmp)) {
        rc = skv__err_sys(err, errno, "mkdtemp %s", p->tmp);
        p->tmp[0] = '\0';
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/" SKV__OCI_EXEC_PROCESS, p->tmp);
    if (rc == 0)
        rc = skv__rt_write_file(path, j.buf, j.len, err);
    skv__json_free(&j);
    return rc;
}

static void build_argv(oci_prep *p, const skv_runtime *rt, const char *id,
                       bool tty)
{
    snprintf(p->root, sizeof(p->root), "%s/.runc", rt->state_dir);
    const char *head[] = {rt->oci_runtime, "--root", p->root, "--log",
                          SKV__OCI_EXEC_LOG, "--log-format", "json", "exec",
                          "--detach", "--pid-file", SKV__OCI_EXEC_PID,
                          "--process", SKV__OCI_EXEC_PROCESS};
    size_t n = 0;
    for (; n < SKV__ARRAY_LEN(head); n++)
        p->argv[n] = head[n];
    if (tty) {
        p->argv[n++] = "--console-socket";
        p->argv[n++] = SKV__OCI_EXEC_CONSOLE;
    }
    p->argv[n++] = id;
    p->argv[n] = NULL;
    p->k.argv = p->argv;
    p->k.tmpdir = p->tmp;
}

static int make_channels(oci_prep *p, bool tty, skv_error *err)
{
    for (int i = 0; !tty && i < 3; i++)
        if (pipe2(p->pipes[i], O_CLOEXEC) < 0)
            return skv__err_sys(err, errno, "exec pipes");
    for (int i = 0; !tty && i < 3; i++)
        p->k.stdio[i] = p->pipes[i][i == 0 ? 0 : 1];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->sock) < 0)
        return skv__err_sys(err, errno, "exec report channel");
    p->k.report_fd = p->sock[1];
    if (tty && (p->k.console_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
                                         0)) < 0)
        return skv__err_sys(err, errno, "console socket");
    return 0;
}

/* runc's own words: the last error its JSON log holds. */
static void runc_message(const oci_prep *p, char *out, size_t n)
{
    char path[PATH_MAX + 32], *text = NULL;
    snprintf(path, sizeof(path), "%s/" SKV__OCI_EXEC_LOG, p->tmp);
    out[0] = '\0';
    if (skv__rt_read_file(path, &text, NULL) < 0)
        return;
    char key[16], val[1024];
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        skv__ij c;
        skv__ij_init(&c, line, nl ? (size_t)(nl - line) : strlen(line));
        bool error = false;
        val[0] = '\0';
        if (skv__ij_obj_begin(&c) == 0)
            while (skv__ij_obj_next(&c, key, sizeof(key)) == 1) {
                if (!strcmp(key, "level"))
                    error = skv__ij_string(&c, key, sizeof(key)) == 0 &&
                            !strcmp(key, "error");
                else if (strcmp(key, "msg"))
                    skv__ij_skip(&c);
                else if (skv__ij_string(&c, val, sizeof(val)) < 0)
                    val[0] = '\0'; /* too long or not ASCII: not used */
            }
        if (error && val[0])
            snprintf(out, n, "%s", val);
        line = nl ? nl + 1 : NULL;
    }
    skv__free(text);
}

/* runc exec's failure, with its words and the code they mean. */
static int runc_failed(const oci_prep *p, int64_t status, skv_error *err)
{
    char msg[1024];
    runc_message(p, msg, sizeof(msg));
    if (!msg[0])
        snprintf(msg, sizeof(msg), "exited with status %lld and logged no "
                 "error", (long long)status);
    int code = SKV_EIO;
    if (strstr(msg, "executable file not found") ||
        strstr(msg, "no such file or directory"))
        code = SKV_ENOENT;
    else if (strstr(msg, "stopped container") || strstr(msg, "paused"))
        code = SKV_ESTATE;
    return skv__err(err, code, "exec: runc exec: %s", msg);
}

/* Reports until EOF: 'T' the master, 'P' the command's pid and pidfd,
 * 'E' a failure of the keeper, 'F' runc's. */
static int collect(oci_prep *p, skv_exec *e, skv_error *err)
{
    skv__rt_msg m;
    int fd, rc, frc = 0;
    while ((rc = skv__exec_report_recv(p->sock[0], &m, &fd, err)) == 1) {
        if (m.tag == 'T' && e->in < 0 && fd >= 0)
            e->in = e->out = fd;
        else if (m.tag == 'P' && e->cmd_pidfd < 0 && fd >= 0) {
            e->cmd_pid = (pid_t)m.value;
            e->cmd_pidfd = fd;
        } else if (fd >= 0)
            close(fd);
        if (m.tag == 'E' && !frc)
            frc = skv__err_sys(err, m.value > 0 ? (int)m.value : EIO,
                               "exec: %s", m.text);
        if (m.tag == 'F' && !frc)
            frc = runc_failed(p, m.value, err);
    }
    if (rc == 0 && !frc && (e->cmd_pidfd < 0 || (e->tty && e->in < 0)))
        frc = skv__err(err, SKV_EIO, "exec: the keeper ended without "
                       "starting the command");
    return rc < 0 ? rc : frc;
}

static void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Fork the keeper with every signal blocked (none of the caller's
 * handlers may run in it); it sets up its own. */
static int launch(oci_prep *p, skv_exec *e, skv_error *err)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t keeper = fork();
    if (keeper == 0)
        skv__oci_keeper_main(&p->k);
    int fe = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (keeper < 0)
        return skv__err_sys(err, fe, "fork");
    e->pid = keeper;
    /* Only the keeper holds its end now: EOF means it reported all. */
    close_fd(&p->sock[1]);
    close_fd(&p->k.console_fd);
    for (int i = 0; i < 3; i++)
        close_fd(&p->pipes[i][i == 0 ? 0 : 1]);
    int rc = collect(p, e, err);
    if (rc < 0) {
        /* It kills the command (now, or once runc has started it), then
         * ends; one that already ended is a zombie the signal cannot
         * reach. */
        kill(keeper, SIGTERM);
        reap(keeper);
        e->reaped = true;
    }
    return rc;
}

int skv__oci_exec(skv_runtime *rt, const char *dir, const char *id,
                  const skv_exec_options *o, skv_exec *e, skv_error *err)
{
    oci_prep p;
    prep_init(&p);
    e->keeper = true;
    int rc = access(rt->oci_runtime, X_OK) < 0
                 ? skv__err(err, SKV_ENOENT, "OCI runtime '%s' is not an "
                            "executable", rt->oci_runtime)
                 : check_running(dir, id, err);
    if (rc == 0)
        rc = write_process(&p, dir, o, err);
    if (rc == 0) {
        build_argv(&p, rt, id, o->tty);
        rc = make_channels(&p, o->tty, err);
    }
    if (rc == 0)
        rc = launch(&p, e, err);
    if (rc == 0)
        rc = skv__exec_take(e, p.pipes, "the exec's keeper", err);
    prep_free(&p);
    return rc;
}
