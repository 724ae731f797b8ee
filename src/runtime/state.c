/* "key=value" state files and process identity checks. A pid alone may be
 * reused after the process died, so the state records the start time from
 * /proc/<pid>/stat as well and every signal checks both.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_internal.h"

bool skv__rt_kv_get(const char *text, const char *key, char *buf, size_t n)
{
    size_t klen = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len > klen && strncmp(line, key, klen) == 0 && line[klen] == '=') {
            size_t vlen = len - klen - 1;
            if (vlen >= n)
                return false;
            memcpy(buf, line + klen + 1, vlen);
            buf[vlen] = '\0';
            return true;
        }
        line = eol ? eol + 1 : NULL;
    }
    return false;
}

bool skv__rt_kv_get_i64(const char *text, const char *key, int64_t *out)
{
    char buf[32];
    if (!skv__rt_kv_get(text, key, buf, sizeof(buf)) || !buf[0])
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

uint64_t skv__rt_proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    if (pid <= 0)
        return 0;
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if (skv__sys_read(path, buf, sizeof(buf), NULL, NULL) < 0)
        return 0;
    /* The command name may contain spaces and ')': skip past the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    /* Fields after ')' start at field 3 (state); starttime is field 22. */
    int field = 2;
    for (; *p && field < 22; p++)
        if (*p == ' ')
            field++;
    uint64_t st = 0;
    if (sscanf(p, "%" SCNu64, &st) != 1)
        return 0;
    /* A zombie still has its start time but is not running any more. */
    char *state = strrchr(buf, ')');
    if (state[1] == ' ' && (state[2] == 'Z' || state[2] == 'X'))
        return 0;
    return st;
}

bool skv__rt_proc_same(pid_t pid, uint64_t st)
{
    return st != 0 && skv__rt_proc_start_time(pid) == st;
}
