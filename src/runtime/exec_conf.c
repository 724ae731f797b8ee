/* What an exec into a container needs to run its command the way the
 * first process runs: recorded by create (the spec is not kept), read back
 * by exec. Two files in the container's directory:
 *   exec.conf  key=value lines: isolate, userns, uid, gid, huid, hgid (the
 *              user and group as the host sees them), caps (the kept
 *              capability mask, hex), cwd, syscalls ("+name,-name": the
 *              spec's seccomp edits, to compile the same program again)
 *   exec.env   the environment, NUL-separated (values may hold newlines)
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "exec_int.h"

/* "+name,-name" of the spec's syscall edits; NULL on ENOMEM. */
static char *syscall_list(const skv_container_spec *spec)
{
    char *s = skv__strdup("");
    for (size_t i = 0; s && i < spec->n_syscalls; i++) {
        char *more = skv__asprintf("%s%s%c%s", s, i ? "," : "",
                                   spec->syscalls[i].allow ? '+' : '-',
                                   spec->syscalls[i].name);
        skv__free(s);
        s = more;
    }
    return s;
}

static int write_env(const native_plan *p, const char *dir, skv_error *err)
{
    size_t len = 0;
    for (size_t i = 0; i < p->n_envp; i++)
        len += strlen(p->envp[i]) + 1;
    char *buf = skv__calloc(len + 1, 1);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "exec environment");
    size_t off = 0;
    for (size_t i = 0; i < p->n_envp; i++) {
        size_t n = strlen(p->envp[i]) + 1;
        memcpy(buf + off, p->envp[i], n);
        off += n;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/exec.env", dir);
    int rc = skv__rt_write_file(path, buf, len, err);
    skv__free(buf);
    return rc;
}

int skv__rt_exec_conf_write(const native_plan *p, const char *dir,
                            skv_error *err)
{
    const skv_container_spec *spec = p->spec;
    char *sc = syscall_list(spec);
    char *text = sc ? skv__asprintf(
        "isolate=%d\nuserns=%d\nuid=%" PRIu32 "\ngid=%" PRIu32
        "\nhuid=%lu\nhgid=%lu\ncaps=%" PRIx64 "\ncwd=%s\nsyscalls=%s\n",
        p->isolate ? 1 : 0, p->userns ? 1 : 0, spec->uid, spec->gid,
        (unsigned long)p->host_uid, (unsigned long)p->host_gid, p->caps.keep,
        spec->cwd, sc)
                    : NULL;
    skv__free(sc);
    if (!text)
        return skv__err(err, SKV_ENOMEM, "exec settings");
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/exec.conf", dir);
    int rc = skv__rt_write_file(path, text, strlen(text), err);
    skv__free(text);
    return rc == 0 ? write_env(p, dir, err) : rc;
}

/* ---- reading ------------------------------------------------------------ */

static int parse_syscalls(skv__exec_conf *c, const char *list,
                          skv_error *err)
{
    size_t n = *list ? 1 : 0;
    for (const char *q = list; *q; q++)
        n += *q == ',';
    if (n && !(c->syscalls = skv__calloc(n, sizeof(*c->syscalls))))
        return skv__err(err, SKV_ENOMEM, "seccomp edits");
    for (const char *q = list; *q;) {
        const char *end = strchr(q, ',');
        size_t len = end ? (size_t)(end - q) : strlen(q);
        if (len < 2 || (q[0] != '+' && q[0] != '-'))
            return skv__err(err, SKV_EPROTO, "exec.conf: bad syscall edit");
        skv__rt_syscall *s = &c->syscalls[c->n_syscalls++];
        s->allow = q[0] == '+';
        if (!(s->name = skv__strndup(q + 1, len - 1)))
            return skv__err(err, SKV_ENOMEM, "seccomp edits");
        q = end ? end + 1 : q + len;
    }
    return 0;
}

/* The NUL-separated environment as a NULL-terminated array with room for
 * `extra` more entries. */
static int read_env(skv__exec_conf *c, const char *dir, size_t extra,
                    skv_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/exec.env", dir);
    size_t len = 0;
    int rc = skv__rt_read_file_len(path, &c->env_buf, &len, err);
    if (rc < 0)
        return rc;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += c->env_buf[i] == '\0';
    if (!(c->envp = skv__calloc(n + extra + 1, sizeof(char *))))
        return skv__err(err, SKV_ENOMEM, "exec environment");
    for (size_t off = 0; off < len; off += strlen(c->env_buf + off) + 1)
        c->envp[c->n_envp++] = c->env_buf + off;
    return 0;
}

static bool get_u32(const char *text, const char *key, uint32_t *out)
{
    int64_t v;
    if (!skv__rt_kv_get_i64(text, key, &v) || v < 0 || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int parse_conf(skv__exec_conf *c, const char *text, skv_error *err)
{
    char caps[32], list[4096];
    uint32_t iso = 0, uns = 0;
    bool ok = get_u32(text, "isolate", &iso) &&
              get_u32(text, "userns", &uns) &&
              get_u32(text, "uid", &c->uid) && get_u32(text, "gid", &c->gid) &&
              get_u32(text, "huid", &c->host_uid) &&
              get_u32(text, "hgid", &c->host_gid) &&
              skv__rt_kv_get(text, "caps", caps, sizeof(caps)) &&
              skv__rt_kv_get(text, "cwd", c->cwd, sizeof(c->cwd)) &&
              skv__rt_kv_get(text, "syscalls", list, sizeof(list)) &&
              sscanf(caps, "%" SCNx64, &c->caps) == 1;
    if (!ok)
        return skv__err(err, SKV_EPROTO, "exec.conf is incomplete");
    c->isolate = iso != 0;
    c->userns = uns != 0;
    return parse_syscalls(c, list, err);
}

int skv__exec_conf_read(skv__exec_conf *c, const char *dir, size_t extra_env,
                        skv_error *err)
{
    memset(c, 0, sizeof(*c));
    char path[PATH_MAX], *text = NULL;
    snprintf(path, sizeof(path), "%s/exec.conf", dir);
    int rc = skv__rt_read_file(path, &text, err);
    if (rc == SKV_ENOENT)
        return skv__err(err, SKV_ENOTSUP, "the container was created "
                        "without exec settings (by an older version); "
                        "recreate it to exec into it");
    if (rc == 0)
        rc = parse_conf(c, text, err);
    skv__free(text);
    if (rc == 0)
        rc = read_env(c, dir, extra_env, err);
    return rc;
}

void skv__exec_conf_free(skv__exec_conf *c)
{
    for (size_t i = 0; i < c->n_syscalls; i++)
        skv__free(c->syscalls[i].name);
    skv__free(c->syscalls);
    skv__free(c->envp);
    skv__free(c->env_buf);
    memset(c, 0, sizeof(*c));
}
