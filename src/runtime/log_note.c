/* What a container's logs lost, for people: the shim records in the exit
 * file the write error that ended a log (ENOSPC when the container filled
 * the file system) and the size a log was truncated at (the cap); this
 * turns those keys into one sentence the agent adds to the kernel's end.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

static void append(char *buf, size_t n, const char *part)
{
    size_t len = strlen(buf);
    if (len && len + 2 < n)
        len += (size_t)snprintf(buf + len, n - len, "; ");
    if (len < n)
        snprintf(buf + len, n - len, "%s", part);
}

/* One stream's keys: "<stream>_error" (an errno) and "<stream>_truncated"
 * (bytes kept). */
static void stream_note(const char *text, const char *dir, const char *stream,
                        char *buf, size_t n)
{
    char key[32], part[PATH_MAX + 96];
    int64_t v = 0;
    snprintf(key, sizeof(key), "%s_error", stream);
    if (skv__rt_kv_get_i64(text, key, &v) && v > 0) {
        int e = (int)v;
        if (e == ENOSPC || e == EDQUOT)
            snprintf(part, sizeof(part), "no space left for logs on "
                     "%s/%s.log", dir, stream);
        else
            snprintf(part, sizeof(part), "cannot write %s/%s.log: %s", dir,
                     stream, strerror(e));
        append(buf, n, part);
    }
    snprintf(key, sizeof(key), "%s_truncated", stream);
    if (skv__rt_kv_get_i64(text, key, &v) && v >= 0) {
        snprintf(part, sizeof(part), "%s truncated at %lld bytes (log cap)",
                 stream, (long long)v);
        append(buf, n, part);
    }
}

int skv_runtime_log_note(skv_runtime *rt, const char *id, char **note,
                         skv_error *err)
{
    if (!rt || !note)
        return skv__err(err, SKV_EINVAL, "runtime or note is NULL");
    *note = NULL;
    int rc = skv__rt_check_id(id, err);
    if (rc < 0)
        return rc;
    char dir[PATH_MAX], path[PATH_MAX + 8], *text = NULL;
    snprintf(dir, sizeof(dir), "%s/%s", rt->state_dir, id);
    snprintf(path, sizeof(path), "%s/state", dir);
    if (access(path, F_OK) != 0)
        return skv__err(err, SKV_ENOENT, "container '%s' does not exist", id);
    snprintf(path, sizeof(path), "%s/exit", dir);
    skv_error e = SKV_ERROR_INIT;
    rc = skv__rt_read_file(path, &text, &e);
    if (rc == SKV_ENOENT)
        return 0;   /* not ended (or lost): nothing is known yet */
    if (rc < 0)
        return skv__err(err, rc, "%s", e.message);
    char buf[2 * PATH_MAX + 256] = "";
    stream_note(text, dir, "stdout", buf, sizeof(buf));
    stream_note(text, dir, "stderr", buf, sizeof(buf));
    skv__free(text);
    if (!buf[0])
        return 0;
    *note = skv__strdup(buf);
    return *note ? 0 : skv__err(err, SKV_ENOMEM, "log note");
}
