/* The forked side of an exec: between fork and the command's execve.
 * Runs in a process forked from a possibly multi-threaded caller, so only
 * system calls on data prepared before the fork (skv__exec_launch).
 *
 * Two processes: the helper (forked by the caller) joins the namespaces
 * and opens the terminal; entering a pid namespace only applies to
 * children, so it then forks the command with CLONE_PARENT: the command
 * is the caller's own child (the caller waits for it and gets its status)
 * while living in the container's pid namespace. The helper exits.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "exec_int.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif
#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* One report, with fd attached when >= 0. Async-signal-safe. */
static void report(int sock, char tag, int64_t value, const char *what,
                   int fd)
{
    skv__rt_msg m;
    memset(&m, 0, sizeof(m));
    m.tag = tag;
    m.value = value;
    size_t n = what ? strlen(what) : 0;
    memcpy(m.text, what ? what : "", n < sizeof(m.text) ? n : sizeof(m.text) - 1);
    struct iovec iov = {&m, sizeof(m)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = u.buf;
        mh.msg_controllen = sizeof(u.buf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    while (sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

static _Noreturn void fail(const skv__exec_launch *l, const char *what, int e)
{
    report(l->report_fd, 'E', e, what, -1);
    _exit(127);
}

#define TRY(l, expr, what)                                                     \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            fail((l), (what), errno);                                          \
    } while (0)

/* The container's /dev/pts/ptmx (its own devpts instance, so the command
 * sees /dev/pts/N). O_NONBLOCK and the type check: root in the container
 * may have put anything at that path. *slave gets the peer. */
static int open_pty(const skv__exec_launch *l, int *slave)
{
    int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_NONBLOCK |
                                      O_NOFOLLOW | O_CLOEXEC);
    TRY(l, m, "open the container's /dev/pts/ptmx");
    struct stat st;
    TRY(l, fstat(m, &st), "stat /dev/pts/ptmx");
    if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 5 ||
        minor(st.st_rdev) != 2)
        fail(l, "the container's /dev/pts/ptmx is not a terminal "
             "multiplexer", ENOTTY);
    int unlock = 0;
    TRY(l, ioctl(m, TIOCSPTLCK, &unlock), "unlock the terminal");
    TRY(l, ioctl(m, TIOCSWINSZ, &l->ws), "set the window size");
    *slave = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    TRY(l, *slave, "open the terminal's peer");
    /* Owned by the command's user, as login(1) does: some programs (ssh,
     * write) check it. */
    if (l->isolate)
        TRY(l, fchown(*slave, l->tty_uid, l->tty_gid), "chown the terminal");
    return m;
}

/* The command's descriptors 0-2: the terminal (controlling it) or the
 * pipes; everything else closes at exec. */
static void setup_stdio(const skv__exec_launch *l, int slave)
{
    TRY(l, setsid(), "setsid");
    if (slave >= 0) {
        TRY(l, ioctl(slave, TIOCSCTTY, 0), "take the terminal");
        for (int i = 0; i < 3; i++)
            TRY(l, dup2(slave, i), "dup2 the terminal");
    } else {
        for (int i = 0; i < 3; i++)
            TRY(l, dup2(l->stdio[i], i), "dup2 a pipe");
    }
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
        for (int fd = 3; fd < 4096; fd++)
            if (fd != l->report_fd)
                fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static _Noreturn void run_command(const skv__exec_launch *l, int slave)
{
    /* The caller's signal dispositions and mask must not leak into the
     * command (a daemon ignores SIGPIPE, blocks signals for its loop). */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < 65; s++)
        signal(s, SIG_DFL);
    setup_stdio(l, slave);
    TRY(l, chdir(l->cwd), "chdir to the working directory");
    if (l->isolate) {
        TRY(l, skv__caps_apply(&l->caps, NULL), "drop capabilities / switch "
            "user");
        TRY(l, skv__seccomp_install(l->prog, NULL), "install seccomp");
    }
    skv__rt_execvpe(l->argv, l->envp, l->path_env);
    fail(l, "execute the command", errno);
}

_Noreturn void skv__exec_child(const skv__exec_launch *l)
{
    char b;
    if (read(l->go_fd, &b, 1) != 1)
        _exit(1);
    if (l->pidfd >= 0 && l->ns_flags)
        TRY(l, setns(l->pidfd, l->ns_flags), "join the container's "
            "namespaces");
    int slave = -1, master = -1;
    if (l->tty)
        master = open_pty(l, &slave);
    /* Last: the other namespaces belong to the host's user namespace,
     * which this process leaves here. */
    if (l->pidfd >= 0 && l->userns)
        TRY(l, setns(l->pidfd, CLONE_NEWUSER), "join the container's user "
            "namespace");
    long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL,
                       NULL);
    TRY(l, (int)pid, "fork the command");
    if (pid == 0)
        run_command(l, slave);
    report(l->report_fd, 'P', pid, NULL, master);
    _exit(0);
}

int skv__exec_report_recv(int fd, skv__rt_msg *m, int *fd_out,
                          skv_error *err)
{
    *fd_out = -1;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {m, sizeof(*m)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    ssize_t n;
    do {
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return skv__err_sys(err, errno, "exec report");
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        memcpy(fd_out, CMSG_DATA(c), sizeof(int));
    if (n == 0)
        return 0;
    if ((size_t)n != sizeof(*m)) {
        if (*fd_out >= 0)
            close(*fd_out);
        *fd_out = -1;
        return skv__err(err, SKV_EPROTO, "short exec report");
    }
    m->text[sizeof(m->text) - 1] = '\0';
    return 1;
}

void skv__exec_report_send(int sock, char tag, int64_t value,
                           const char *what, int fd)
{
    report(sock, tag, value, what, fd);
}
