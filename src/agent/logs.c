/* kernel.logs: a window of a kernel's stdout or stderr, from the live
 * container log or, after kernel.destroy, the retained copy. eof once the
 * kernel has ended and the window reached the end.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"

static int log_path(skv_agent *a, const skv__agent_kernel *k, const char *id,
                    const char *stream, char **out)
{
    if (k) {
        char *p = NULL;
        int rc = skv_runtime_log_path(a->rt, id, stream, &p, NULL);
        *out = rc ? NULL : skv__strdup(p);
        skv_free(p);
        return *out ? 0 : SKV_ENOMEM;
    }
    *out = skv__asprintf("%s/logs/%s.%s", a->state_dir, id, stream);
    return *out ? 0 : SKV_ENOMEM;
}

/* Read up to max bytes at offset; *size receives the file's size. */
static int read_window(const char *path, uint64_t offset, size_t max,
                       uint8_t **data, size_t *n, uint64_t *size,
                       skv_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return e == ENOENT ? skv__err(err, SKV_ENOENT, "no logs")
                           : skv__err_sys(err, e, "cannot read the logs");
    }
    *size = (uint64_t)st.st_size;
    size_t want = offset >= *size ? 0 : (size_t)(*size - offset);
    if (want > max)
        want = max;
    *data = skv__malloc(want + 1);
    ssize_t got = *data ? pread(fd, *data, want, (off_t)offset) : -1;
    int e = errno;
    close(fd);
    if (got < 0) {
        skv__free(*data);
        *data = NULL;
        return skv__err_sys(err, e, "cannot read the logs");
    }
    *n = (size_t)got;
    return 0;
}

static int serve(skv_agent *a, const skv_proto_logs_request *q, uint64_t id,
                 int64_t now_ms, skv_error *err)
{
    const char *stream = q->stream ? q->stream : "stdout";
    if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)
        return skv__err(err, SKV_EINVAL, "kernel.logs: stream '%s' is not "
                        "stdout or stderr", stream);
    if (!q->kernel_id || strchr(q->kernel_id, '/') || q->kernel_id[0] == '.')
        return skv__err(err, SKV_EINVAL, "kernel.logs: invalid kernel id");
    const skv__agent_kernel *k = skv__agent_kernel_find(a, q->kernel_id);
    size_t max = q->max_bytes ? q->max_bytes : SKV__AGENT_LOGS_DEFAULT;
    if (max > SKV__AGENT_LOGS_MAX)
        max = SKV__AGENT_LOGS_MAX;
    char *path = NULL;
    if (log_path(a, k, q->kernel_id, stream, &path))
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    skv_proto_logs_reply r;
    memset(&r, 0, sizeof(r));
    uint64_t size = 0;
    int rc = read_window(path, q->offset, max, &r.data, &r.data_len, &size,
                         err);
    skv__free(path);
    if (rc == SKV_ENOENT && !k && skv__agent_kept_empty(a, q->kernel_id,
                                                        stream)) {
        rc = 0;  /* an empty stderr, not kept (logs_keep.c) */
        if (err)
            *err = (skv_error)SKV_ERROR_INIT;
    }
    if (rc == SKV_ENOENT)
        return skv__err(err, SKV_ENOENT, "kernel.logs: no %s log of kernel "
                        "'%s' on this agent", stream, q->kernel_id);
    if (rc)
        return rc;
    r.session_id = q->session_id;
    r.kernel_id = q->kernel_id;
    r.next_offset = q->offset + r.data_len;
    r.eof = (!k || k->exited) && r.next_offset >= size;
    rc = skv__agent_emit(a, SKV_PROTO_RESPONSE, id, SKV_PROTO_LOGS_REPLY, &r,
                         now_ms, err);
    skv__free(r.data);
    return rc;
}

int skv__agent_on_logs(skv_agent *a, const skv_proto_envelope *env,
                       int64_t now_ms, skv_error *err)
{
    skv_proto_logs_request q;
    memset(&q, 0, sizeof(q));
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_body_decode(&q, SKV_PROTO_KERNEL_LOGS, env->body,
                                   env->body_len, &e);
    if (rc) {
        skv__agent_reply_error(a, env->request_id, rc, e.message,
                               env->type_name, now_ms);
        return skv__err(err, rc, "%s", e.message);
    }
    rc = serve(a, &q, env->request_id, now_ms, &e);
    skv_proto_body_free(SKV_PROTO_KERNEL_LOGS, &q);
    if (rc == SKV_EIO || rc == SKV_ESTATE)
        return skv__err(err, rc, "%s", e.message);
    return rc ? skv__agent_reply_error(a, env->request_id, rc, e.message,
                                       env->type_name, now_ms)
              : 0;
}
