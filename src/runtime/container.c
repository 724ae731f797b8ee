/* Bookkeeping shared by the backends: the exit file the shim writes, status
 * from the state directory, waiting (on a pidfd of the shim, so a wait
 * returns as soon as the shim is done), releasing a created container
 * through its exec fifo, and signalling its first process safely.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rt_internal.h"
#include "skv_cgroup.h"

static char *dir_file(const char *dir, const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

bool skv__rt_read_exit(const char *dir, skv_container_status *st)
{
    char path[PATH_MAX], text[320];
    int fd = open(dir_file(dir, "exit", path, sizeof(path)),
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return false;
    text[n] = '\0';
    int64_t code = 0, sig = 0;
    if (!skv__rt_kv_get_i64(text, "code", &code) ||
        !skv__rt_kv_get_i64(text, "signal", &sig))
        return false;
    st->state = SKV_CONTAINER_EXITED;
    st->exit_code = (int)code;
    st->signal = (int)sig;
    return true;
}

/* The state file's text; SKV_ENOENT when the container is unknown. */
static int read_state(const char *dir, char **text, skv_error *err)
{
    char path[PATH_MAX];
    return skv__rt_read_file(dir_file(dir, "state", path, sizeof(path)), text,
                             err);
}

static bool shim_alive(const char *text)
{
    int64_t pid = 0, st = 0;
    if (!skv__rt_kv_get_i64(text, "shim", &pid) ||
        !skv__rt_kv_get_i64(text, "shim_start", &st))
        return false;
    return skv__rt_proc_same((pid_t)pid, (uint64_t)st);
}

static void fill_oom(const char *text, skv_container_status *out)
{
    char name[160];
    if (!skv__rt_kv_get(text, "cgroup", name, sizeof(name)) || !name[0])
        return;
    skv_cgroup *cg = NULL;
    skv_cgroup_config cfg = {0};
    skv_cgroup_stats cs;
    memset(&cs, 0, sizeof(cs));
    if (skv__cgroup_open(&cg, &cfg, name, NULL) == 0 &&
        skv__cgroup_stats(cg, &cs, NULL) == 0 && cs.has_oom_kills)
        out->oom_killed = cs.oom_kills > 0;
    skv__cgroup_free(cg);
}

int skv__rt_status(const char *dir, skv_container_status *out, skv_error *err)
{
    return skv__rt_status_ex(dir, out, true, err);
}

int skv__rt_status_ex(const char *dir, skv_container_status *out, bool oom,
                      skv_error *err)
{
    char *text = NULL;
    int rc = read_state(dir, &text, err);
    if (rc < 0)
        return rc;
    int64_t pid = 0;
    skv__rt_kv_get_i64(text, "pid", &pid);
    out->pid = pid;
    out->exit_code = out->signal = 0;
    out->oom_killed = false;
    if (skv__rt_read_exit(dir, out)) {
        if (oom)
            fill_oom(text, out);
    } else if (shim_alive(text)) {
        char path[PATH_MAX];
        out->state = access(dir_file(dir, "started", path, sizeof(path)),
                            F_OK) == 0 ? SKV_CONTAINER_RUNNING
                                       : SKV_CONTAINER_CREATED;
    } else if (skv__rt_read_exit(dir, out)) {
        /* the shim finished between the two checks */
        if (oom)
            fill_oom(text, out);
    } else {
        out->state = SKV_CONTAINER_LOST;
    }
    skv__free(text);
    return 0;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A pidfd of the container's shim, or -1 (shim gone, or no pidfd_open):
 * it turns readable when the shim exits, which it does right after its
 * exit file landed. Waiting on it beats inotify on the directory: closing
 * an inotify descriptor waits for an SRCU grace period, several
 * milliseconds per wait on a small VM. The identity check after the open
 * rules out a recycled pid. */
static int shim_pidfd(const char *dir)
{
    char *text = NULL;
    if (read_state(dir, &text, NULL) < 0)
        return -1;
    int64_t pid = 0, st = 0;
    int fd = -1;
    if (skv__rt_kv_get_i64(text, "shim", &pid) &&
        skv__rt_kv_get_i64(text, "shim_start", &st) && pid > 0 &&
        pid < (1 << 30)) {
        fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
        if (fd >= 0 && !skv__rt_proc_same((pid_t)pid, (uint64_t)st)) {
            close(fd);
            fd = -1;
        }
    }
    skv__free(text);
    return fd;
}

/* Without a pidfd: inotify on the directory (the shim's rename). */
static int dir_watch(const char *dir, skv_error *err)
{
    int ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (ifd < 0)
        return skv__err_sys(err, errno, "inotify for %s", dir);
    if (inotify_add_watch(ifd, dir, IN_MOVED_TO | IN_CREATE) < 0) {
        int e = errno;
        close(ifd);
        return e == ENOENT ? skv__err(err, SKV_ENOENT, "%s is gone", dir)
                           : skv__err_sys(err, e, "inotify watch %s", dir);
    }
    return ifd;
}

int skv__rt_wait_exit(const char *dir, int timeout_ms,
                      skv_container_status *out, skv_error *err)
{
    int fd = -1;
    bool pidfd = false;
    int64_t deadline = timeout_ms < 0 ? INT64_MAX : now_ms() + timeout_ms;
    int rc;
    for (;;) {
        rc = skv__rt_status(dir, out, err);
        if (rc < 0 || out->state == SKV_CONTAINER_EXITED ||
            out->state == SKV_CONTAINER_LOST)
            break;
        /* Watch only what still runs: most waits (destroy of an ended
         * container) are answered by the first status read. The status
         * is read again once the watch is set, in case the exit landed
         * in between. */
        if (fd < 0) {
            fd = shim_pidfd(dir);
            pidfd = fd >= 0;
            if (!pidfd && (fd = dir_watch(dir, err)) < 0) {
                rc = fd;
                break;
            }
            continue;
        }
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            rc = skv__err(err, SKV_ETIMEDOUT, "container in %s is still "
                          "running", dir);
            break;
        }
        /* Bounded sleeps: a shim killed by SIGKILL writes nothing, so its
         * death is noticed by polling its pid; an exited pidfd stays
         * readable, so after it fired the loop sleeps instead. */
        struct pollfd pf = {fd, POLLIN, 0};
        int slice = (int)(left < 200 ? left : 200);
        if (poll(&pf, 1, slice) > 0 && pidfd) {
            usleep(1000);
            continue;
        }
        char buf[4096];
        while (!pidfd && read(fd, buf, sizeof(buf)) > 0)
            ;
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

int skv__rt_release(const char *dir, skv_error *err)
{
    char path[PATH_MAX];
    int fd = open(dir_file(dir, "exec.fifo", path, sizeof(path)),
                  O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO || errno == ENOENT)
            return skv__err(err, SKV_ESTATE, "container in %s is not waiting "
                            "to start", dir);
        return skv__err_sys(err, errno, "open %s", path);
    }
    ssize_t n = write(fd, "1", 1);
    int e = errno;
    close(fd);
    if (n != 1)
        return skv__err_sys(err, e, "write %s", path);
    int sfd = open(dir_file(dir, "started", path, sizeof(path)),
                   O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (sfd >= 0)
        close(sfd);
    return 0;
}

int skv__rt_signal_pid(const char *dir, int sig, skv_error *err)
{
    char *text = NULL;
    int rc = read_state(dir, &text, err);
    if (rc < 0)
        return rc;
    int64_t pid = 0, st = 0;
    skv__rt_kv_get_i64(text, "pid", &pid);
    skv__rt_kv_get_i64(text, "pid_start", &st);
    skv__free(text);
    /* The start time guards against a recycled pid. */
    if (!skv__rt_proc_same((pid_t)pid, (uint64_t)st))
        return skv__err(err, SKV_ESTATE, "container in %s is not running", dir);
    if (kill((pid_t)pid, sig) < 0)
        return skv__err_sys(err, errno, "kill %lld", (long long)pid);
    return 0;
}
