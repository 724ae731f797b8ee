/* The exec handle: descriptors, terminal size, signals, the exit status,
 * and a release that leaves no process, zombie, descriptor or terminal.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_int.h"

static int nonblock(int fd)
{
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : 0;
    return fd < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0 ? 0 : -1;
}

/* The caller's ends of the pipes (unless a terminal carries the streams),
 * non-blocking, and a pidfd of e->pid: our child (the command, or the OCI
 * exec's keeper), so its pid cannot be recycled before we reap it. */
int skv__exec_take(skv_exec *e, int pipes[3][2], const char *what,
                   skv_error *err)
{
    if (!e->tty) {
        e->in = pipes[0][1];
        e->out = pipes[1][0];
        e->errfd = pipes[2][0];
        pipes[0][1] = pipes[1][0] = pipes[2][0] = -1;
    }
    e->pidfd = (int)syscall(SYS_pidfd_open, e->pid, 0);
    if (e->pidfd < 0)
        return skv__err_sys(err, errno, "pidfd_open of %s", what);
    if (nonblock(e->in) < 0 || nonblock(e->out) < 0 || nonblock(e->errfd) < 0)
        return skv__err_sys(err, errno, "exec descriptors");
    return 0;
}

int64_t skv_exec_pid(const skv_exec *e)
{
    return !e ? -1 : e->keeper ? e->cmd_pid : e->pid;
}

int skv_exec_fd(const skv_exec *e, skv_exec_stream which)
{
    if (!e)
        return -1;
    switch (which) {
    case SKV_EXEC_STDIN: return e->in;
    case SKV_EXEC_STDOUT: return e->out;
    case SKV_EXEC_STDERR: return e->errfd;
    case SKV_EXEC_PIDFD: return e->pidfd;
    }
    return -1;
}

int skv_exec_close_stdin(skv_exec *e, skv_error *err)
{
    if (!e)
        return skv__err(err, SKV_EINVAL, "exec is NULL");
    if (!e->tty) {
        if (e->in >= 0)
            close(e->in);
        e->in = -1;
        return 0;
    }
    /* The line discipline turns VEOF at the start of a line into EOF for
     * the reader; closing the master would hang the whole terminal up. */
    if (e->in >= 0 && write(e->in, "\x04", 1) != 1 && errno != EAGAIN)
        return skv__err_sys(err, errno, "exec: end of terminal input");
    return 0;
}

int skv_exec_resize(skv_exec *e, unsigned rows, unsigned cols, skv_error *err)
{
    if (!e || !e->tty || e->out < 0)
        return skv__err(err, e ? SKV_ESTATE : SKV_EINVAL, "exec has no "
                        "terminal to resize");
    if (rows < 1 || rows > 65535 || cols < 1 || cols > 65535)
        return skv__err(err, SKV_EINVAL, "window size %ux%u is out of range "
                        "(1..65535)", rows, cols);
    struct winsize ws = {.ws_row = (unsigned short)rows,
                         .ws_col = (unsigned short)cols};
    if (ioctl(e->out, TIOCSWINSZ, &ws) < 0)
        return skv__err_sys(err, errno, "exec: set the window size");
    return 0;
}

int skv_exec_signal(skv_exec *e, int sig, skv_error *err)
{
    if (!e)
        return skv__err(err, SKV_EINVAL, "exec is NULL");
    if (sig < 1 || sig > 64)
        return skv__err(err, SKV_EINVAL, "signal %d is invalid", sig);
    if (e->reaped)
        return skv__err(err, SKV_ESTATE, "exec %ld has ended", (long)e->pid);
    /* Through the pidfd: exact even after the process became a zombie. */
    int fd = e->keeper ? e->cmd_pidfd : e->pidfd;
    if (syscall(SYS_pidfd_send_signal, fd, sig, NULL, 0) < 0 &&
        errno != ESRCH)
        return skv__err_sys(err, errno, "exec: signal %d", sig);
    return 0;
}

static void take_status(skv_exec *e, int status)
{
    e->reaped = true;
    e->code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    e->sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static int try_reap(skv_exec *e, skv_error *err)
{
    int status;
    pid_t r;
    do {
        r = waitpid(e->pid, &status, WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r < 0)
        return skv__err_sys(err, errno, "exec: waitpid %ld", (long)e->pid);
    if (r == e->pid)
        take_status(e, status);
    return 0;
}

int skv_exec_wait(skv_exec *e, int timeout_ms, int *exit_code, int *signal,
                  skv_error *err)
{
    if (!e)
        return skv__err(err, SKV_EINVAL, "exec is NULL");
    int rc = 0;
    if (!e->reaped) {
        struct pollfd pfd = {e->pidfd, POLLIN, 0};
        while (poll(&pfd, 1, timeout_ms) < 0 && errno == EINTR)
            ;
        rc = try_reap(e, err);
    }
    if (rc == 0 && !e->reaped)
        return skv__err(err, SKV_ETIMEDOUT, "exec %ld still runs",
                        (long)e->pid);
    if (rc == 0 && exit_code)
        *exit_code = e->code;
    if (rc == 0 && signal)
        *signal = e->sig;
    return rc;
}

void skv_exec_free(skv_exec *e)
{
    if (!e)
        return;
    if (e->keeper && e->pid > 0 && !e->reaped) {
        /* The keeper kills the command's group while it holds the
         * command unreaped, then ends (our child: its pid is exact). */
        kill(e->pid, SIGTERM);
        int status;
        while (waitpid(e->pid, &status, 0) < 0 && errno == EINTR)
            ;
    } else if (e->pid > 0 && !e->reaped) {
        /* Its session's group too (setsid made it the leader): children
         * it started would otherwise outlive the exec. The unreaped
         * leader keeps the group id from being reused. */
        kill(-e->pid, SIGKILL);
        kill(e->pid, SIGKILL);
        int status;
        while (waitpid(e->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    int fds[] = {e->in, e->out, e->errfd, e->pidfd, e->cmd_pidfd};
    for (size_t i = 0; i < SKV__ARRAY_LEN(fds); i++)
        if (fds[i] >= 0 && !(i == 1 && e->tty))
            close(fds[i]);
    skv__free(e);
}
