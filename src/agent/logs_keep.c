/* Keeping a kernel's logs after its container is destroyed: they move from
 * the container's directory (under run_dir, often a tmpfs) to
 * state_dir/logs/<id>.<stream>, where kernel.logs finds them later.
 *
 * A rename when both are on one file system: no copy, and a process still
 * writing keeps its file. Across file systems (the default layout where
 * /run is a tmpfs) rename fails with EXDEV and the file is copied: streamed
 * (sendfile, no buffer the size of the log), fsync'ed, then the original is
 * unlinked, so a crash leaves the log in one place or the other, never
 * lost. The copy is bounded by the per-log cap (log_max_bytes), and the
 * container has ended by then (destroy waits for it), so no output is lost
 * to the copy. The logs stay written to run_dir while the kernel runs:
 * that keeps the disk out of the output path of running containers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"

/* read/write for the file systems sendfile() does not take. */
static int copy_rw(int in, int out)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : 0;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return errno;
            off += w;
        }
    }
}

/* Returns 0 or an errno. */
static int copy_fds(int in, int out)
{
    bool first = true;
    for (;;) {
        ssize_t n = sendfile(out, in, NULL, 1 << 20);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && first && (errno == EINVAL || errno == ENOSYS))
            return copy_rw(in, out);
        if (n <= 0)
            return n < 0 ? errno : 0;
        first = false;
    }
}

/* Copy from -> to, durable, then unlink from; on failure `to` is removed
 * and `from` kept. Returns 0 or an errno. */
static int copy_then_unlink(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return errno;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (out < 0) {
        int e = errno;
        close(in);
        return e;
    }
    int e = copy_fds(in, out);
    /* An empty log has no data to make durable (most batch kernels print
     * nothing): its fsync only cost ~1 ms of journal-less ext4 metadata
     * writes per log on the session's destroy path (bench/e2e). */
    struct stat st;
    bool has_data = fstat(out, &st) < 0 || st.st_size > 0;
    if (e == 0 && has_data && fsync(out) < 0)
        e = errno;
    if (close(out) < 0 && e == 0)
        e = errno;
    close(in);
    if (e) {
        unlink(to);
        return e;
    }
    return unlink(from) < 0 && errno != ENOENT ? errno : 0;
}

/* Returns 0 or an errno; a missing log (never written) is no error. */
static int keep_one(const char *from, const char *to)
{
    if (rename(from, to) == 0)
        return 0;
    if (errno == ENOENT)
        return 0;
    if (errno != EXDEV)
        return errno;
    return copy_then_unlink(from, to);
}

/* An empty stderr is not kept: on a state dir on ext4 each kept file is an
 * inode allocation (bench/e2e: ~1 ms each, most batch kernels write no
 * stderr). The kept stdout marks the logs as kept, so a reader finding it
 * without a stderr knows that stderr was empty (skv__agent_kept_empty). */
static bool skip_empty(const char *stream, const char *from)
{
    struct stat st;
    if (strcmp(stream, "stderr") != 0 || stat(from, &st) < 0 ||
        st.st_size != 0)
        return false;
    return unlink(from) == 0;
}

bool skv__agent_kept_empty(const skv_agent *a, const char *id,
                           const char *stream)
{
    if (strcmp(stream, "stderr") != 0)
        return false;
    char *out = skv__asprintf("%s/logs/%s.stdout", a->state_dir, id);
    bool kept = out && access(out, F_OK) == 0;
    skv__free(out);
    return kept;
}

void skv__agent_keep_logs(skv_agent *a, const char *id)
{
    static const char *const streams[] = {"stdout", "stderr"};
    for (size_t i = 0; i < 2; i++) {
        char *from = NULL;
        char *to = skv__asprintf("%s/logs/%s.%s", a->state_dir, id,
                                 streams[i]);
        int e = to ? 0 : ENOMEM;
        if (e == 0 && skv_runtime_log_path(a->rt, id, streams[i], &from,
                                           NULL) == 0)
            e = skip_empty(streams[i], from) ? 0 : keep_one(from, to);
        if (e)
            skv__log(SKV_LOG_WARN, "agent", "kernel %s: cannot keep its %s "
                     "log %s in %s/logs: %s", id, streams[i],
                     from ? from : "", a->state_dir, strerror(e));
        skv_free(from);
        skv__free(to);
    }
}
