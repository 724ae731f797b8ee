/* The keeper of one exec into an OCI container (see oci_exec.h).
 *
 * Why a process of its own: a terminal from runc comes only through
 * --console-socket, which runc honours only with --detach; detached, runc
 * exits once the command runs and the command is re-parented to the
 * nearest child subreaper above runc. Making the caller (the agent) a
 * subreaper would hand it every orphan of every helper, so one small
 * subreaper per exec holds the command, as containerd's shim does: the
 * caller waits for the keeper and gets the command's status from it.
 *
 * Forked from a possibly multi-threaded caller: only system calls on data
 * prepared before the fork, and runc is started with a raw clone (glibc's
 * fork would run atfork handlers on locks another thread may hold).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci_exec.h"

typedef struct keeper {
    skv__oci_keeper k;
    int sfd;                    /* signalfd: SIGCHLD, SIGTERM */
    pid_t cmd;
    int cmd_pidfd;
    bool stop;                  /* SIGTERM: kill the command */
} keeper;

static _Noreturn void fail(keeper *kp, const char *what, int e)
{
    skv__exec_report_send(kp->k.report_fd, 'E', e, what, -1);
    _exit(127);
}

/* Keep only the report socket, the pipes and the console socket (as 3..7):
 * the caller's other descriptors, the caller's own pipe ends above all,
 * must not live on in the keeper (stdin would never reach EOF). */
static void keeper_fds(keeper *kp)
{
    int *want[] = {&kp->k.report_fd, &kp->k.stdio[0], &kp->k.stdio[1],
                   &kp->k.stdio[2], &kp->k.console_fd};
    int tmp[5];
    for (int i = 0; i < 5; i++)
        tmp[i] = *want[i] >= 0 ? fcntl(*want[i], F_DUPFD_CLOEXEC, 16) : -1;
    for (int i = 0; i < 5; i++) {
        *want[i] = tmp[i] >= 0 ? 3 + i : -1;
        if (tmp[i] < 0)
            close(3 + i); /* unused here: whatever the caller had there */
        else if (dup3(tmp[i], 3 + i, O_CLOEXEC) < 0)
            _exit(127);
    }
    if (syscall(SYS_close_range, 8U, ~0U, 0U) < 0)
        for (int fd = 8; fd < 4096; fd++)
            close(fd);
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; null >= 0 && fd < 3; fd++)
        dup2(null, fd);
    if (null > 2)
        close(null);
}

/* Every signal stays blocked (the caller forked with all blocked): only
 * SIGCHLD and SIGTERM are read, through a signalfd. Its own session: a
 * Ctrl-C on the caller's terminal is not the command's. */
static void keeper_signals(keeper *kp)
{
    /* A caller ignoring SIGCHLD would have runc auto-reaped, its status
     * lost. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &sa, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    kp->sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (kp->sfd < 0)
        fail(kp, "signalfd", errno);
    setsid();
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
        fail(kp, "become a child subreaper", errno);
}

static _Noreturn void run_runc(const keeper *kp)
{
    sigset_t none;
    sigemptyset(&none);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int s = 1; s < NSIG; s++)
        sigaction(s, &sa, NULL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int i = 0; i < 3; i++)
        if (kp->k.stdio[i] >= 0)
            dup2(kp->k.stdio[i], i);
    static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(kp->k.argv[0], (char *const *)kp->k.argv, env);
    _exit(127);
}

/* Reaps what ended: only `pid` while the command is not adopted yet (it
 * may already be a zombie, and must stay one until adopt), then every
 * child (runc's exited helpers were re-parented here too). Returns true
 * with *status when `pid` was among them. */
static bool reap(pid_t pid, bool any, int *status)
{
    bool hit = false;
    for (;;) {
        int st;
        pid_t p = waitpid(any ? -1 : pid, &st, WNOHANG);
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0 && errno == ECHILD && !hit)
            _exit(127); /* cannot happen: `pid` is an unreaped child */
        if (p <= 0)
            return hit;
        if (p == pid) {
            *status = st;
            hit = true;
        }
    }
}

/* Unreaped, the command's pid (its group's id) cannot be reused. */
static void kill_command(const keeper *kp)
{
    kill(-kp->cmd, SIGKILL);
    syscall(SYS_pidfd_send_signal, kp->cmd_pidfd, SIGKILL, NULL, 0);
}

/* Waits for `pid`; a SIGTERM kills the command (now or once adopted). */
static int wait_for(keeper *kp, pid_t pid, bool any)
{
    int status = 0;
    for (;;) {
        if (kp->stop && kp->cmd > 0)
            kill_command(kp);
        if (reap(pid, any, &status))
            return status;
        struct signalfd_siginfo si;
        ssize_t n = read(kp->sfd, &si, sizeof(si));
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof(si))
            fail(kp, "read the signalfd", n < 0 ? errno : EIO);
        kp->stop = kp->stop || si.ssi_signo == SIGTERM;
    }
}

static pid_t read_pid(keeper *kp)
{
    char buf[32];
    int fd = open(SKV__OCI_EXEC_PID, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    long v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        v = v * 10 + (buf[i] - '0');
    if (v <= 0 || v >= (1L << 30))
        fail(kp, "runc exec wrote no pid file", EPROTO);
    return (pid_t)v;
}

/* The pid runc wrote must be the keeper's own child by now (re-parented
 * when runc exited): then it cannot have been recycled, and a pidfd on it
 * is exact. */
static void adopt(keeper *kp, pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
        fail(kp, "the command runc exec started is not the keeper's child",
             errno);
    kp->cmd = pid;
    kp->cmd_pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (kp->cmd_pidfd < 0) {
        kill(pid, SIGKILL);
        fail(kp, "pidfd_open of the command", errno);
    }
}

/* runc's message on the console socket: the terminal's master. */
static int recv_master(keeper *kp)
{
    int c = accept4(kp->k.console_fd, NULL, NULL, SOCK_CLOEXEC);
    char name[256];
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec iov = {name, sizeof(name)};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1,
                        .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
    ssize_t n = c >= 0 ? recvmsg(c, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) : -1;
    int e = errno, master = -1;
    struct cmsghdr *cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
        memcpy(&master, CMSG_DATA(cm), sizeof(int));
    if (c >= 0)
        close(c);
    if (master < 0) {
        kill_command(kp);
        fail(kp, "receive the terminal from runc's console socket",
             n < 0 ? e : EPROTO);
    }
    return master;
}

/* Ends the way the command ended: its code, or its own signal (without a
 * core dump or a handler inherited from the caller in the way). */
static _Noreturn void mirror(int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        sigaction(sig, &sa, NULL);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        kill(getpid(), sig);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

static void listen_console(keeper *kp)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, SKV__OCI_EXEC_CONSOLE, sizeof(SKV__OCI_EXEC_CONSOLE));
    if (bind(kp->k.console_fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
        listen(kp->k.console_fd, 1) < 0)
        fail(kp, "listen on the console socket", errno);
    int fl = fcntl(kp->k.console_fd, F_GETFL);
    fcntl(kp->k.console_fd, F_SETFL, fl | O_NONBLOCK);
}

_Noreturn void skv__oci_keeper_main(const skv__oci_keeper *k)
{
    keeper kp = {.k = *k, .sfd = -1, .cmd = -1, .cmd_pidfd = -1};
    keeper_fds(&kp);
    keeper_signals(&kp);
    /* The exec's files are relative: a console socket path stays far
     * below sun_path's 108 bytes however deep the state directory is. */
    if (chdir(kp.k.tmpdir) < 0)
        fail(&kp, "chdir to the exec's directory", errno);
    if (kp.k.console_fd >= 0)
        listen_console(&kp);
    long runc = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    if (runc < 0)
        fail(&kp, "fork runc exec", errno);
    if (runc == 0)
        run_runc(&kp);
    for (int i = 0; i < 3; i++)
        if (kp.k.stdio[i] >= 0)
            close(kp.k.stdio[i]);
    int st = wait_for(&kp, (pid_t)runc, false);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        /* 'F': the caller reads runc's words from its log. */
        skv__exec_report_send(kp.k.report_fd, 'F', WIFEXITED(st) ?
                              WEXITSTATUS(st) : 128 + WTERMSIG(st), NULL, -1);
        _exit(127);
    }
    adopt(&kp, read_pid(&kp));
    if (kp.k.console_fd >= 0) {
        int master = recv_master(&kp);
        skv__exec_report_send(kp.k.report_fd, 'T', 0, NULL, master);
        close(master);
        close(kp.k.console_fd);
    }
    /* Nothing of the exec's directory is used from here on: the caller
     * removes it once the report socket closes. */
    if (chdir("/") < 0) {
        kill_command(&kp);
        fail(&kp, "chdir /", errno);
    }
    skv__exec_report_send(kp.k.report_fd, 'P', kp.cmd, NULL, kp.cmd_pidfd);
    close(kp.k.report_fd);
    mirror(wait_for(&kp, kp.cmd, true));
}
