/* Runtime handle: listing and re-attaching to the containers of a state
 * directory, and log paths.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_internal.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void skv_runtime_list_free(char **ids, size_t n)
{
    for (size_t i = 0; ids && i < n; i++)
        skv__free(ids[i]);
    skv__free(ids);
}

/* A directory entry is a container when its name is a valid id and it
 * holds a state file (a create in progress has none yet). */
static bool is_container(const skv_runtime *rt, const char *name)
{
    char path[PATH_MAX];
    if (skv__rt_check_id(name, NULL) < 0)
        return false;
    snprintf(path, sizeof(path), "%s/%s/state", rt->state_dir, name);
    return access(path, F_OK) == 0;
}

int skv_runtime_list(skv_runtime *rt, char ***ids, size_t *n, skv_error *err)
{
    if (!rt || !ids || !n)
        return skv__err(err, SKV_EINVAL, "runtime, ids or n is NULL");
    DIR *d = opendir(rt->state_dir);
    if (!d)
        return skv__err_sys(err, errno, "opendir %s", rt->state_dir);
    char **v = NULL;
    size_t cnt = 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (!is_container(rt, de->d_name))
            continue;
        char **nv = skv__reallocarray(v, cnt + 1, sizeof(char *));
        char *s = nv ? skv__strdup(de->d_name) : NULL;
        if (nv)
            v = nv;
        if (!s)
            rc = skv__err(err, SKV_ENOMEM, "container list");
        else
            v[cnt++] = s;
    }
    closedir(d);
    if (rc < 0) {
        skv_runtime_list_free(v, cnt);
        return rc;
    }
    if (cnt)
        qsort(v, cnt, sizeof(char *), cmp_str);
    *ids = v;
    *n = cnt;
    return 0;
}

int skv_runtime_restore(skv_runtime *rt, size_t *n_out, skv_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = skv_runtime_list(rt, &ids, &n, err);
    if (rc < 0)
        return rc;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char dir[PATH_MAX], path[PATH_MAX], name[64], *text = NULL;
        snprintf(dir, sizeof(dir), "%s/%s", rt->state_dir, ids[i]);
        snprintf(path, sizeof(path), "%s/state", dir);
        rc = skv__rt_read_file(path, &text, err);
        if (rc < 0)
            break;
        const skv_runtime_backend *b = NULL;
        if (skv__rt_kv_get(text, "backend", name, sizeof(name)))
            b = strcmp(name, rt->backend->name) == 0
                    ? rt->backend
                    : strcmp(name, "oci") == 0 ? skv_runtime_backend_oci()
                    : strcmp(name, "process") == 0
                        ? skv_runtime_backend_process()
                        : strcmp(name, "native") == 0
                              ? skv_runtime_backend_native() : NULL;
        skv__free(text);
        if (!b)
            rc = skv__err(err, SKV_ENOTSUP, "container '%s': unknown backend",
                          ids[i]);
        else if ((rc = b->restore(rt, dir, err)) < 0)
            skv__err_prefix(err, "restoring container '%s'", ids[i]);
    }
    skv_runtime_list_free(ids, n);
    if (rc == 0 && n_out)
        *n_out = n;
    return rc;
}

int skv_runtime_log_path(skv_runtime *rt, const char *id, const char *stream,
                         char **out, skv_error *err)
{
    if (!rt || !out || !stream)
        return skv__err(err, SKV_EINVAL, "runtime, stream or out is NULL");
    if (strcmp(stream, "stdout") != 0 && strcmp(stream, "stderr") != 0)
        return skv__err(err, SKV_EINVAL, "log stream '%s' is not stdout or "
                        "stderr", stream);
    int rc = skv__rt_check_id(id, err);
    if (rc < 0)
        return rc;
    if (!is_container(rt, id))
        return skv__err(err, SKV_ENOENT, "container '%s' does not exist", id);
    *out = skv__asprintf("%s/%s/%s.log", rt->state_dir, id, stream);
    return *out ? 0 : skv__err(err, SKV_ENOMEM, "log path");
}
