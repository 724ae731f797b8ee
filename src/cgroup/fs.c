/* Small file helpers over the sysroot for cgroup control files, plus mkdir/
 * rmdir of cgroup directories (with the test hooks that play the kernel).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

static skv__cgroup_fs_hooks hooks;

void skv__cgroup_set_fs_hooks(const skv__cgroup_fs_hooks *h)
{
    if (h)
        hooks = *h;
    else
        memset(&hooks, 0, sizeof(hooks));
}

int skv__cg_join(char *buf, size_t bufsz, const char *dir, const char *file,
                 skv_error *err)
{
    int n = snprintf(buf, bufsz, "%s/%s", dir, file);
    if (n < 0 || (size_t)n >= bufsz)
        return skv__err(err, SKV_ERANGE, "cgroup path %s/%s is too long", dir,
                        file);
    return 0;
}

bool skv__cg_has(const char *dir, const char *file)
{
    char p[PATH_MAX];
    return skv__cg_join(p, sizeof(p), dir, file, NULL) == 0 &&
           skv__sys_exists(p);
}

int skv__cg_write(const char *dir, const char *file, const char *value,
                  skv_error *err)
{
    char p[PATH_MAX];
    int rc = skv__cg_join(p, sizeof(p), dir, file, err);
    if (rc == 0)
        rc = skv__sys_write(p, value, err);
    if (rc == 0)
        skv__log(SKV_LOG_DEBUG, "cgroup", "%s <- %s", p, value);
    return rc;
}

int skv__cg_write_u64(const char *dir, const char *file, uint64_t v,
                      skv_error *err)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%" PRIu64, v);
    return skv__cg_write(dir, file, buf, err);
}

int skv__cg_read(const char *dir, const char *file, char *buf, size_t bufsz,
                 skv_error *err)
{
    char p[PATH_MAX];
    int rc = skv__cg_join(p, sizeof(p), dir, file, err);
    if (rc == 0)
        rc = skv__sys_read(p, buf, bufsz, NULL, err);
    return rc;
}

/* A whole unsigned decimal, nothing else but surrounding white space. */
static bool parse_u64(uint64_t *out, const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    while (*end == ' ' || *end == '\t' || *end == '\n')
        end++;
    if (*end)
        return false;
    *out = v;
    return true;
}

int skv__cg_read_u64(uint64_t *out, const char *dir, const char *file,
                     skv_error *err)
{
    char buf[64];
    int rc = skv__cg_read(dir, file, buf, sizeof(buf), err);
    if (rc < 0)
        return rc;
    if (strcmp(buf, "max\n") == 0 || strcmp(buf, "max") == 0) {
        *out = UINT64_MAX;
        return 0;
    }
    if (!parse_u64(out, buf))
        return skv__err(err, SKV_EPROTO, "%s/%s: '%.20s' is not a number",
                        dir, file, buf);
    return 0;
}

int skv__cg_read_key(uint64_t *out, const char *dir, const char *file,
                     const char *key, skv_error *err)
{
    char buf[4096];
    int rc = skv__cg_read(dir, file, buf, sizeof(buf), err);
    if (rc < 0)
        return rc;
    size_t kl = strlen(key);
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (strncmp(line, key, kl) != 0 || line[kl] != ' ')
            continue;
        if (!parse_u64(out, line + kl + 1))
            return skv__err(err, SKV_EPROTO, "%s/%s: bad value for '%s'", dir,
                            file, key);
        return 0;
    }
    return skv__err(err, SKV_ENOENT, "%s/%s has no '%s'", dir, file, key);
}

int skv__cg_mkdir(const char *dir, const char *ctrl, bool likely_exists,
                  skv_error *err)
{
    char p[PATH_MAX];
    int rc = skv__sys_path(p, sizeof(p), dir, err);
    if (rc < 0)
        return rc;
    /* stat is lock-free; mkdir of an existing cgroup waits for the
     * hierarchy's mutex. */
    struct stat st;
    if (likely_exists && stat(p, &st) == 0)
        return 0;
    if (mkdir(p, 0755) != 0) {
        if (errno == EEXIST)
            return 0;
        if (errno == ENOENT)
            return skv__err(err, SKV_ENOENT, "mkdir %s: parent does not exist",
                            p);
        return skv__err_sys(err, errno, "mkdir %s", p);
    }
    if (hooks.after_mkdir)
        hooks.after_mkdir(p, ctrl, hooks.payload);
    return 1;
}

int skv__cg_rmdir(const char *dir, const char *ctrl, unsigned timeout_ms,
                  skv_error *err)
{
    char p[PATH_MAX];
    int rc = skv__sys_path(p, sizeof(p), dir, err);
    if (rc < 0)
        return rc;
    struct stat st;
    if (hooks.before_rmdir && stat(p, &st) == 0)
        hooks.before_rmdir(p, ctrl, hooks.payload);
    uint64_t deadline = skv__cg_now_ms() + timeout_ms;
    unsigned nap = 1;
    /* EBUSY: exited tasks are still being released by the kernel. */
    while (rmdir(p) != 0) {
        int e = errno;
        if (e == ENOENT)
            return 0;
        if (e != EBUSY || skv__cg_now_ms() >= deadline)
            return skv__err_sys(err, e, "rmdir %s", p);
        skv__cg_sleep_ms(nap);
        nap = nap < 16 ? nap * 2 : nap;
    }
    return 0;
}

void skv__cg_sleep_ms(unsigned ms)
{
    skv__cg_sleep_us(ms * 1000u);
}

void skv__cg_sleep_us(unsigned us)
{
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

uint64_t skv__cg_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}
