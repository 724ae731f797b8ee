/* The shim: a detached supervisor per container.
 *
 * The library starts a short-lived helper that shares its memory
 * (CLONE_VM|CLONE_VFORK, like posix_spawn: the caller's address space is
 * not copied for it); the helper calls setsid() and forks the shim, so the
 * shim is re-parented away from the caller and survives the caller's death.
 * The shim starts the container's first process with the requested
 * namespaces, again sharing the shim's memory until that process execs
 * (CLONE_VFORK keeps the shim suspended meanwhile, so the two never run on
 * the same memory at once). That leaves one copy of the caller's address
 * space per container instead of three: on a large agent, page-table
 * copies and copy-on-write faults dominated the start-up time. The shim
 * copies the first process's stdout/stderr into size-capped logs (the head
 * is kept, then a note), reaps it and writes the exit status to <dir>/exit
 * atomically (exit.tmp + rename) into space reserved at its start, with
 * what its logs lost (a write error such as ENOSPC ends a log; the output
 * is still drained).
 *
 * Everything after fork() uses only async-signal-safe system calls on data
 * prepared by the caller before forking: the caller may be multi-threaded,
 * and a lock (malloc's, the logger's) held by another thread at fork time
 * would never be released in the child.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_internal.h"

static void copy_str(char *dst, size_t n, const char *a, const char *b)
{
    size_t i = 0;
    for (; a && *a && i + 1 < n; a++)
        dst[i++] = *a;
    if (b && *b && i + 3 < n) {
        dst[i++] = ':';
        dst[i++] = ' ';
        for (; *b && i + 1 < n; b++)
            dst[i++] = *b;
    }
    dst[i] = '\0';
}

void skv__rt_msg_send(int fd, char tag, int64_t value, const char *what,
                      const char *detail)
{
    skv__rt_msg m;
    memset(&m, 0, sizeof(m));
    m.tag = tag;
    m.value = value;
    copy_str(m.text, sizeof(m.text), what, detail);
    ssize_t n;
    do {
        n = write(fd, &m, sizeof(m));
    } while (n < 0 && errno == EINTR);
}

int skv__rt_msg_read(int fd, skv__rt_msg *m, skv_error *err)
{
    size_t got = 0;
    while (got < sizeof(*m)) {
        ssize_t n = read(fd, (char *)m + got, sizeof(*m) - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return skv__err_sys(err, errno, "reading from the shim");
        if (n == 0)
            return skv__err(err, SKV_EIO, "the container's setup ended without "
                            "a report");
        got += (size_t)n;
    }
    m->text[sizeof(m->text) - 1] = '\0';
    return 0;
}

/* Decimal text of v into buf (>= 24 bytes); returns the length. */
static size_t fmt_i64(char *buf, int64_t v)
{
    char tmp[24];
    size_t n = 0, len = 0;
    uint64_t u = v < 0 ? (uint64_t)(-(v + 1)) + 1 : (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = '\0';
    return len;
}

/* Returns 0, or the errno of the failed write (ENOSPC: the file system is
 * full). */
static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            return EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The same at an offset, for the exit file written over its placeholder. */
static int pwrite_all(int fd, const char *p, size_t len)
{
    off_t off = 0;
    while (len) {
        ssize_t n = pwrite(fd, p, len, off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : EIO;
        p += n;
        off += n;
        len -= (size_t)n;
    }
    return 0;
}

typedef struct shim_log {
    int in;             /* pipe read end, -1 at EOF */
    int out;            /* log file; -1 once a write failed */
    uint64_t written;
    int error;          /* errno of the first failed write or open, 0 none */
    bool truncated;     /* the cap was reached and the note written */
} shim_log;

/* The exit file's size is reserved when the shim starts (see
 * exit_reserve): the container may fill the file system with output, and
 * the exit status must still land. Its text is well below this. */
#define SHIM_EXIT_RESERVE 256

static size_t put_str(char *buf, size_t len, const char *s)
{
    while (*s && len < SHIM_EXIT_RESERVE)
        buf[len++] = *s++;
    return len;
}

static size_t put_kv(char *buf, size_t len, const char *key, int64_t v)
{
    char num[24];
    len = put_str(buf, len, key);
    len = put_str(buf, len, "=");
    fmt_i64(num, v);
    len = put_str(buf, len, num);
    return put_str(buf, len, "\n");
}

/* code=, signal=, and for each stream the write error (errno) that ended
 * its log and the size it was truncated at (skv__rt_read_exit,
 * skv_runtime_log_note read them). */
static size_t exit_text(char *buf, int status, const shim_log lg[2])
{
    static const char *const names[2] = {"stdout", "stderr"};
    char key[32];
    size_t len = put_kv(buf, 0, "code", WIFEXITED(status) ?
                        WEXITSTATUS(status) : 0);
    len = put_kv(buf, len, "signal", WIFSIGNALED(status) ?
                 WTERMSIG(status) : 0);
    for (int i = 0; i < 2; i++) {
        size_t k = put_str(key, 0, names[i]);
        if (lg[i].error) {
            memcpy(key + k, "_error", 7);
            len = put_kv(buf, len, key, lg[i].error);
        }
        if (lg[i].truncated) {
            memcpy(key + k, "_truncated", 11);
            len = put_kv(buf, len, key, (int64_t)lg[i].written);
        }
    }
    return len;
}

/* Opened with its space taken before the container runs: overwriting
 * those bytes later needs no new block or page, so a full file system
 * (the container's own output) cannot keep the exit status from landing
 * and the container from being reported lost. */
static int exit_reserve(const skv__rt_launch *l)
{
    char pad[SHIM_EXIT_RESERVE];
    memset(pad, '\n', sizeof(pad));
    int fd = open(l->exit_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && write_all(fd, pad, sizeof(pad)) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void write_exit_file(const skv__rt_launch *l, int fd, int status,
                            const shim_log lg[2])
{
    char buf[SHIM_EXIT_RESERVE];
    size_t len = exit_text(buf, status, lg);
    if (fd < 0) {
        fd = open(l->exit_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                  0644);
        if (fd < 0)
            return;
    }
    int e = pwrite_all(fd, buf, len);
    if (e == 0 && ftruncate(fd, (off_t)len) < 0)
        e = errno;
    close(fd);
    if (e == 0)
        rename(l->exit_tmp, l->exit_path);
}

/* A write error ends the log (the file is left as it was), and the shim
 * keeps reading the pipe so that the container never blocks on output. */
static void log_write(shim_log *lg, const char *p, size_t len)
{
    if (lg->out < 0)
        return;
    int e = write_all(lg->out, p, len);
    if (e) {
        lg->error = e;
        close(lg->out);
        lg->out = -1;
    }
}

/* The line that says the log stops here; written once, past the cap. A
 * log a write error already ended is not called truncated: its error says
 * more. */
static void log_truncate_note(shim_log *lg)
{
    if (lg->out < 0)
        return;
    char note[128], num[24];
    size_t len = 0;
    const char *a = "\n[sokovan: log truncated at ";
    const char *b = " bytes (the log cap); later output is discarded]\n";
    fmt_i64(num, (int64_t)lg->written);
    for (const char *s = a; *s; s++)
        note[len++] = *s;
    for (const char *s = num; *s; s++)
        note[len++] = *s;
    for (const char *s = b; *s && len < sizeof(note); s++)
        note[len++] = *s;
    lg->truncated = true;
    log_write(lg, note, len);
}

static void log_open(shim_log *lg, const char *path)
{
    lg->out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (lg->out < 0)
        lg->error = errno;
}

/* Copy what is available; returns false at EOF or error. */
static bool log_pump(shim_log *lg, uint64_t cap)
{
    char buf[8192];
    ssize_t n = read(lg->in, buf, sizeof(buf));
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return true;
    if (n <= 0)
        return false;
    /* Over the cap the data is still read (the writer must not block) but
     * dropped: the head of the output is kept, with a note. */
    uint64_t room = lg->written < cap ? cap - lg->written : 0;
    size_t keep = (uint64_t)n < room ? (size_t)n : (size_t)room;
    if (keep)
        log_write(lg, buf, keep);
    lg->written += keep;
    if (keep < (size_t)n && !lg->truncated)
        log_truncate_note(lg);
    return true;
}

static void log_drain(shim_log *lg, uint64_t cap)
{
    if (lg->in < 0)
        return;
    fcntl(lg->in, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < 4096; i++) {
        errno = 0;
        if (!log_pump(lg, cap) || errno == EAGAIN)
            break;
    }
}

/* Reads the pid the OCI runtime wrote; 0 on failure. */
static pid_t read_pid_file(const char *path)
{
    char buf[32];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    int64_t v = 0;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        v = v * 10 + (buf[i] - '0');
    return v > 0 && v < (1 << 30) ? (pid_t)v : 0;
}

typedef struct shim_state {
    pid_t watch;        /* the process whose exit ends the container */
    bool creating;      /* oci: watch is still `runc create` */
    int report;         /* oci: report pipe, until 'R'/'E' was sent */
} shim_state;

/* Returns true when the watched process has ended (status in *status). */
static bool shim_reap(const skv__rt_launch *l, shim_state *s, int *status)
{
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p <= 0)
            return false;
        if (p != s->watch)
            continue;
        if (!s->creating) {
            *status = st;
            return true;
        }
        pid_t c = WIFEXITED(st) && WEXITSTATUS(st) == 0
                      ? read_pid_file(l->pid_file) : 0;
        s->creating = false;
        if (c <= 0) {
            skv__rt_msg_send(s->report, 'E', 0, "the OCI runtime's create "
                             "failed; see its log", NULL);
            close(s->report);
            *status = st;
            return true;
        }
        s->watch = c;
        skv__rt_msg_send(s->report, 'R', c, NULL, NULL);
        close(s->report);
        s->report = -1;
    }
}

static void shim_loop(const skv__rt_launch *l, shim_state *s, shim_log lg[2],
                      int sfd, int exit_fd)
{
    int status = 0;
    for (;;) {
        struct pollfd pf[3] = {{lg[0].in, POLLIN, 0}, {lg[1].in, POLLIN, 0},
                               {sfd, POLLIN, 0}};
        if (poll(pf, 3, -1) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++)
            if (pf[i].revents && !log_pump(&lg[i], l->log_max)) {
                close(lg[i].in);
                lg[i].in = -1;
            }
        if (pf[2].revents) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) < 0 && errno == EINTR)
                ;
            if (shim_reap(l, s, &status))
                break;
        }
    }
    log_drain(&lg[0], l->log_max);
    log_drain(&lg[1], l->log_max);
    write_exit_file(l, exit_fd, status, lg);
}

/* Keep only the two pipes (as fds 3 and 4), the launch's keep_fd (as 5)
 * and /dev/null as stdio: the caller's other descriptors (listening
 * sockets, databases) must not stay open for the container's lifetime. */
static void shim_fds(int *report_w, int *go_r, int *keep)
{
    int a = fcntl(*report_w, F_DUPFD_CLOEXEC, 10);
    int b = fcntl(*go_r, F_DUPFD_CLOEXEC, 10);
    int k = *keep >= 0 ? fcntl(*keep, F_DUPFD_CLOEXEC, 10) : -1;
    dup3(a, 3, O_CLOEXEC);
    dup3(b, 4, O_CLOEXEC);
    if (k >= 0)
        dup3(k, 5, O_CLOEXEC);
    *keep = k >= 0 ? 5 : -1;
    unsigned first = k >= 0 ? 6U : 5U;
    if (syscall(SYS_close_range, first, ~0U, 0U) < 0)
        for (int fd = (int)first; fd < 4096; fd++)
            close(fd);
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 4)
            close(null);
    }
    *report_w = 3;
    *go_r = 4;
}

/* The container's first process: plain stdio, default signals. */
static void first_process_stdio(int out_w, int err_w)
{
    dup2(out_w, 1);
    dup2(err_w, 2);
    close(out_w);
    close(err_w);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

static void shim_signals(int *sfd)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_IGN;
    /* Only SIGKILL ends a shim: terminal hang-ups or a stray SIGTERM to the
     * agent's process group must not orphan the exit status. */
    int ignored[] = {SIGHUP, SIGINT, SIGTERM, SIGQUIT, SIGPIPE, SIGUSR1,
                     SIGUSR2};
    for (size_t i = 0; i < SKV__ARRAY_LEN(ignored); i++)
        sigaction(ignored[i], &sa, NULL);
    /* SETMASK: the caller's spawn blocked everything (see below). */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigprocmask(SIG_SETMASK, &set, NULL);
    *sfd = signalfd(-1, &set, SFD_CLOEXEC);
}

/* Stack for a process cloned with CLONE_VM: it cannot use the stack of
 * the process it shares memory with. Pages are only touched as needed. */
#define SHIM_STACK_SIZE (1u << 20)

static void *stack_alloc(void)
{
    void *p = mmap(NULL, SHIM_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

typedef struct first_arg {
    const skv__rt_launch *l;
    int out_w, err_w, report_w, go_r;
    pid_t shim;
    pid_t host_pid;     /* CLONE_PARENT_SETTID: set before the child runs */
} first_arg;

/* The first process, on its own stack in the shim's (suspended) memory.
 * It reports its host pid itself: the shim stays suspended until it execs,
 * and the caller must place it in the cgroup before that. */
static int first_main(void *arg)
{
    const first_arg *a = arg;
    skv__rt_launch l = *a->l;
    skv__rt_msg m;
    memset(&m, 0, sizeof(m));
    m.tag = 'P';
    m.value = a->host_pid;
    m.value2 = a->shim;
    write_all(a->report_w, (const char *)&m, sizeof(m));
    first_process_stdio(a->out_w, a->err_w);
    l.report_fd = a->report_w;
    l.go_fd = a->go_r;
    l.child(&l, l.payload);
    _exit(127);
}

/* Returns the shim's exit code (its caller returns it: no _exit() on the
 * helper's stack, see detach_main). */
static int shim_main(const skv__rt_launch *l0, int report_w, int go_r)
{
    skv__rt_launch l = *l0;
    int sfd, po[2], pe[2];
    shim_fds(&report_w, &go_r, &l.keep_fd);
    shim_signals(&sfd);
    if (l.pid_file)
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    char *stack = stack_alloc();
    if (sfd < 0 || !stack || pipe2(po, O_CLOEXEC) < 0 ||
        pipe2(pe, O_CLOEXEC) < 0) {
        skv__rt_msg_send(report_w, 'E', errno, "shim setup", NULL);
        return 1;
    }
    shim_log lg[2] = {{po[0], -1, 0, 0, false}, {pe[0], -1, 0, 0, false}};
    log_open(&lg[0], l.stdout_path);
    log_open(&lg[1], l.stderr_path);
    int exit_fd = exit_reserve(&l);
    first_arg fa = {&l, po[1], pe[1], report_w, go_r, getpid(), 0};
    /* Blocked signals until it has reset its handlers: none may run a
     * handler on the memory it shares with the shim. Returns once the
     * first process has exec'd or exited. */
    sigset_t all, mine;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &mine);
    pid_t c = clone(first_main, stack + SHIM_STACK_SIZE,
                    (int)(l.clone_flags | CLONE_VM | CLONE_VFORK |
                          CLONE_PARENT_SETTID | SIGCHLD),
                    &fa, &fa.host_pid);
    sigprocmask(SIG_SETMASK, &mine, NULL);
    if (c < 0) {
        skv__rt_msg_send(report_w, 'E', errno, "clone of the container's "
                         "first process", NULL);
        return 1;
    }
    munmap(stack, SHIM_STACK_SIZE);
    close(po[1]);
    close(pe[1]);
    close(go_r);
    if (l.keep_fd >= 0)
        close(l.keep_fd);
    shim_state s = {c, l.pid_file != NULL, report_w};
    if (!l.pid_file) {
        close(report_w);
        s.report = -1;
    }
    shim_loop(&l, &s, lg, sfd, exit_fd);
    return 0;
}

typedef struct detach_arg {
    const skv__rt_launch *l;
    int rep_r, rep_w, go_r, go_w;
} detach_arg;

/* The helper between caller and shim (shares the caller's memory while the
 * caller is suspended): a new session, then the shim as a plain fork. */
static int detach_main(void *arg)
{
    const detach_arg *d = arg;
    close(d->rep_r);
    close(d->go_w);
    setsid();
    pid_t b = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
    /* Returning ends the helper, and the shim (a copy of it), through
     * clone()'s own exit; no _exit() on this stack, whose no-return hook
     * makes ASan warn about an unknown stack. */
    if (b == 0)
        return shim_main(d->l, d->rep_w, d->go_r);
    return b < 0 ? 1 : 0;
}

int skv__rt_shim_spawn(const skv__rt_launch *l, pid_t *pid_out,
                       pid_t *shim_out, int *report_fd, int *go_fd,
                       skv_error *err)
{
    int rep[2], go[2];
    int prc = skv__rt_pipe_pair(rep, go, "the shim", err);
    if (prc < 0)
        return prc;
    detach_arg d = {l, rep[0], rep[1], go[0], go[1]};
    char *stack = stack_alloc();
    /* As posix_spawn: no signal handler of the caller may run in the
     * helper, on the caller's memory; the shim sets its own mask. Returns
     * once the helper has forked the shim and exited. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t a = stack ? clone(detach_main, stack + SHIM_STACK_SIZE,
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &d)
                    : -1;
    int e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (stack)
        munmap(stack, SHIM_STACK_SIZE);
    close(rep[1]);
    close(go[0]);
    skv__rt_msg m;
    int rc = 0;
    if (a < 0) {
        rc = skv__err_sys(err, e, "clone of the shim's helper");
    } else {
        while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
            ;
        rc = skv__rt_msg_read(rep[0], &m, err);
        if (rc == 0 && m.tag != 'P')
            rc = m.tag == 'E'
                     ? skv__err_sys(err, (int)m.value, "%s", m.text)
                     : skv__err(err, SKV_EPROTO, "unexpected shim message");
    }
    if (rc < 0) {
        close(rep[0]);
        close(go[1]);
        return rc;
    }
    *pid_out = (pid_t)m.value;
    *shim_out = (pid_t)m.value2;
    *report_fd = rep[0];
    *go_fd = go[1];
    return 0;
}
