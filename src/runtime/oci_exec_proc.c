/* process.json for `runc exec --process`, from the container's config.json.
 * runc exec takes its process only from that file, so the exec's identity
 * (user, capabilities, noNewPrivileges, ...) is the first process's own
 * members copied verbatim: what runc ran the kernel with, not a second
 * rendering of the spec that could drift from it. Namespaces, cgroup and
 * the seccomp filter come with the container itself.
 * Read with the image store's bounded JSON reader; written with the one
 * JSON writer (oci_json.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "image_int.h"
#include "oci_exec.h"

/* Decoded strings of config.json: each is no longer than its encoding,
 * so one buffer of the document's size holds them all. */
typedef struct proc_read {
    skv__ij c;
    char *arena;
    size_t used, cap;
    const char **env;
    size_t n_env, env_cap;
    const char *cwd;
} proc_read;

static const char *arena_string(proc_read *r)
{
    char *s = r->arena + r->used;
    if (skv__ij_string(&r->c, s, r->cap - r->used) < 0)
        return NULL;
    r->used += strlen(s) + 1;
    return s;
}

static int env_push(proc_read *r, const char *s)
{
    if (r->n_env == r->env_cap) {
        size_t cap = r->env_cap ? r->env_cap * 2 : 32;
        const char **v = skv__realloc(r->env, cap * sizeof(*v));
        if (!v)
            return -1;
        r->env = v;
        r->env_cap = cap;
    }
    r->env[r->n_env++] = s;
    return 0;
}

static int read_env(proc_read *r, skv_error *err)
{
    int more;
    if (skv__ij_arr_begin(&r->c) < 0)
        return skv__err(err, SKV_EPROTO, "config.json: process.env is not "
                        "an array");
    while ((more = skv__ij_arr_next(&r->c)) == 1) {
        const char *s = arena_string(r);
        if (!s)
            return skv__err(err, SKV_EPROTO, "config.json: bad process.env");
        if (env_push(r, s) < 0)
            return skv__err(err, SKV_ENOMEM, "exec environment");
    }
    return more < 0 ? skv__err(err, SKV_EPROTO, "config.json: bad "
                               "process.env") : 0;
}

/* The member's value as it stands in the document. */
static int copy_member(proc_read *r, skv__json *j, const char *key,
                       skv_error *err)
{
    while (r->c.p < r->c.end && strchr(" \t\r\n", *r->c.p) && *r->c.p)
        r->c.p++;
    const char *start = r->c.p;
    if (skv__ij_skip(&r->c) < 0)
        return skv__err(err, SKV_EPROTO, "config.json: bad process.%s", key);
    skv__json_raw(j, key, start, (size_t)(r->c.p - start));
    return 0;
}

/* The exec sets its own args, terminal and console size. */
static bool exec_owned(const char *key)
{
    return !strcmp(key, "args") || !strcmp(key, "terminal") ||
           !strcmp(key, "consoleSize") || !strcmp(key, "commandLine");
}

static int read_process(proc_read *r, skv__json *j, skv_error *err)
{
    char key[64];
    int more, rc = 0;
    if (skv__ij_obj_begin(&r->c) < 0)
        return skv__err(err, SKV_EPROTO, "config.json: process is not an "
                        "object");
    while (rc == 0 && (more = skv__ij_obj_next(&r->c, key, sizeof(key))) == 1) {
        if (!strcmp(key, "env"))
            rc = read_env(r, err);
        else if (!strcmp(key, "cwd"))
            rc = (r->cwd = arena_string(r)) ? 0 : skv__err(err, SKV_EPROTO,
                                                "config.json: bad process.cwd");
        else if (exec_owned(key))
            rc = skv__ij_skip(&r->c) < 0 ? skv__err(err, SKV_EPROTO,
                 "config.json: bad process.%s", key) : 0;
        else
            rc = copy_member(r, j, key, err);
    }
    if (rc == 0 && more < 0)
        rc = skv__err(err, SKV_EPROTO, "config.json: bad process object");
    return rc;
}

/* Finds "process" at the top level; 1 when read, 0 when absent. */
static int read_config(proc_read *r, skv__json *j, skv_error *err)
{
    char key[64];
    int more, found = 0;
    if (skv__ij_obj_begin(&r->c) < 0)
        return skv__err(err, SKV_EPROTO, "config.json is not an object");
    while ((more = skv__ij_obj_next(&r->c, key, sizeof(key))) == 1) {
        int rc;
        if (!strcmp(key, "process") && !found) {
            rc = read_process(r, j, err);
            found = 1;
        } else {
            rc = skv__ij_skip(&r->c) < 0
                     ? skv__err(err, SKV_EPROTO, "config.json is malformed")
                     : 0;
        }
        if (rc < 0)
            return rc;
    }
    if (more < 0 || skv__ij_end(&r->c) < 0)
        return skv__err(err, SKV_EPROTO, "config.json is malformed");
    return found;
}

/* The recorded environment with the caller's NAME=value entries added or
 * replacing the same NAME. */
static void write_env(skv__json *j, const proc_read *r,
                      const skv_exec_options *o)
{
    skv__json_open(j, "env", '[');
    for (size_t i = 0; i < r->n_env; i++) {
        const char *eq = strchr(r->env[i], '=');
        size_t nl = eq ? (size_t)(eq - r->env[i]) + 1 : strlen(r->env[i]);
        bool replaced = false;
        for (size_t k = 0; k < o->n_env && !replaced; k++)
            replaced = strncmp(o->env[k], r->env[i], nl) == 0;
        if (!replaced)
            skv__json_str(j, NULL, r->env[i]);
    }
    for (size_t k = 0; k < o->n_env; k++)
        skv__json_str(j, NULL, o->env[k]);
    skv__json_close(j, ']');
}

static void write_head(skv__json *j, const skv_exec_options *o)
{
    skv__json_open(j, NULL, '{');
    skv__json_bool(j, "terminal", o->tty);
    if (o->tty) {
        skv__json_open(j, "consoleSize", '{');
        skv__json_int(j, "height", o->rows ? o->rows : 24);
        skv__json_int(j, "width", o->cols ? o->cols : 80);
        skv__json_close(j, '}');
    }
    skv__json_open(j, "args", '[');
    for (size_t i = 0; i < o->argc; i++)
        skv__json_str(j, NULL, o->argv[i]);
    skv__json_close(j, ']');
}

int skv__oci_exec_process(skv__json *j, const char *dir,
                          const skv_exec_options *o, skv_error *err)
{
    char path[PATH_MAX];
    proc_read r;
    memset(&r, 0, sizeof(r));
    snprintf(path, sizeof(path), "%s/config.json", dir);
    size_t len = 0;
    int rc = skv__rt_read_file_len(path, &r.arena, &len, err);
    if (rc == 0 && (len > SKV__OCI_CONFIG_MAX || memchr(r.arena, 0, len)))
        rc = skv__err(err, SKV_EPROTO, "%s is too large or not text", path);
    char *doc = rc == 0 ? skv__strndup(r.arena, len) : NULL;
    if (rc == 0 && !doc)
        rc = skv__err(err, SKV_ENOMEM, "exec process");
    r.cap = len + 1;
    if (rc == 0) {
        skv__ij_init(&r.c, doc, len);
        write_head(j, o);
        rc = read_config(&r, j, err);
    }
    if (rc == 0)
        rc = skv__err(err, SKV_EPROTO, "%s has no process", path);
    if (rc > 0) {
        write_env(j, &r, o);
        skv__json_str(j, "cwd", o->cwd ? o->cwd : r.cwd ? r.cwd : "/");
        skv__json_close(j, '}');
        rc = j->failed ? skv__err(err, SKV_ENOMEM, "exec process") : 0;
    }
    skv__free(doc);
    skv__free(r.arena);
    skv__free(r.env);
    return rc;
}
