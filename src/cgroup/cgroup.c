/* The cgroup handle: naming and validating paths, building the per-
 * hierarchy directories from the detected layout, creation with rollback,
 * attaching after a restart, and the mode dispatch.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

#define SKV__CG_NAME_MAX 128
#define SKV__CG_MAX_PARTS 16

static bool name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int check_component(const char *s, size_t len, const char *what,
                           const char *full, skv_error *err)
{
    if (len == 0 || len > SKV__CG_NAME_MAX ||
        (len <= 2 && strncmp(s, "..", len) == 0))
        return skv__err(err, SKV_EINVAL, "cgroup %s '%s': bad component", what,
                        full);
    for (size_t i = 0; i < len; i++)
        if (!name_char_ok(s[i]))
            return skv__err(err, SKV_EINVAL,
                            "cgroup %s '%s': character '%c' not allowed", what,
                            full, s[i]);
    return 0;
}

/* Split parent + name into components, validated. parts point into buf. */
static int split(char *buf, size_t bufsz, const char **parts, size_t *n,
                 const char *parent, const char *name, skv_error *err)
{
    if (!name || !*name)
        return skv__err(err, SKV_EINVAL, "cgroup name is empty");
    int rc = check_component(name, strlen(name), "name", name, err);
    if (rc < 0)
        return rc;
    if (parent[0] == '/')
        return skv__err(err, SKV_EINVAL,
                        "cgroup parent '%s' must be relative", parent);
    if ((size_t)snprintf(buf, bufsz, "%s", parent) >= bufsz)
        return skv__err(err, SKV_ERANGE, "cgroup parent too long");
    *n = 0;
    char *save = NULL;
    for (char *p = strtok_r(buf, "/", &save); p; p = strtok_r(NULL, "/", &save)) {
        if ((rc = check_component(p, strlen(p), "parent", parent, err)) < 0)
            return rc;
        if (*n + 1 >= SKV__CG_MAX_PARTS)
            return skv__err(err, SKV_ERANGE, "cgroup parent '%s' too deep",
                            parent);
        parts[(*n)++] = p;
    }
    parts[(*n)++] = name;
    return 0;
}

static const skv__cg_ops *ops_for(skv_cgroup_mode mode)
{
    switch (mode) {
    case SKV_CGROUP_MODE_V1: return &skv__cg_ops_v1;
    case SKV_CGROUP_MODE_V2: return &skv__cg_ops_v2;
    case SKV_CGROUP_MODE_HYBRID: return &skv__cg_ops_hybrid;
    default: return NULL;
    }
}

/* Fill cg->d[] with "<mount><base>/<parts...>" for every hierarchy. */
static int build_dirs(skv_cgroup *cg, const skv__cg_layout *l, bool nest,
                      const char *const *parts, size_t nparts, skv_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        char base[PATH_MAX] = "", path[PATH_MAX];
        int rc = nest ? skv__cg_self_path(base, sizeof(base), &l->m[i], err)
                      : 0;
        if (rc < 0)
            return rc;
        size_t len = (size_t)snprintf(path, sizeof(path), "%s%s",
                                      l->m[i].path, base);
        for (size_t k = 0; k < nparts && len < sizeof(path); k++)
            len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s",
                                    parts[k]);
        if (len >= sizeof(path) - 64)
            return skv__err(err, SKV_ERANGE, "cgroup path too long");
        cg->d[i].mount = l->m[i];
        if (!(cg->d[i].dir = skv__strdup(path)))
            return skv__err(err, SKV_ENOMEM, "cgroup path");
        cg->n = i + 1;
        if (i == 0) {
            cg->rel = skv__strdup(path + strlen(l->m[i].path));
            if (!cg->rel)
                return skv__err(err, SKV_ENOMEM, "cgroup path");
        }
    }
    return 0;
}

static int handle_new(skv_cgroup **out, const skv_cgroup_config *cfg,
                      const char *name, char *buf, size_t bufsz,
                      const char **parts, size_t *nparts, skv_error *err)
{
    if (!out || !cfg)
        return skv__err(err, SKV_EINVAL, "cgroup: NULL argument");
    const char *parent = cfg->parent ? cfg->parent : "sokovan";
    int rc = split(buf, bufsz, parts, nparts, parent, name, err);
    skv__cg_layout l;
    if (rc == 0)
        rc = skv__cg_layout_get(&l, cfg->mode, err);
    if (rc < 0)
        return rc;
    skv_cgroup *cg = skv__calloc(1, sizeof(*cg));
    if (!cg)
        return skv__err(err, SKV_ENOMEM, "cgroup handle");
    cg->mode = l.mode;
    cg->ops = ops_for(l.mode);
    rc = build_dirs(cg, &l, cfg->nest_in_self, parts, *nparts, err);
    if (rc < 0) {
        skv__cgroup_free(cg);
        return rc;
    }
    *out = cg;
    return 0;
}

static void forget_made(skv_cgroup *cg)
{
    for (size_t i = 0; i < cg->nmade; i++) {
        skv__free(cg->made[i]);
        skv__free(cg->made_ctrl[i]);
    }
    skv__free(cg->made);
    skv__free(cg->made_ctrl);
    cg->made = cg->made_ctrl = NULL;
    cg->nmade = 0;
}

static void rollback(skv_cgroup *cg)
{
    for (size_t i = cg->nmade; i-- > 0;) {
        skv_error e = SKV_ERROR_INIT;
        if (skv__cg_rmdir(cg->made[i], cg->made_ctrl[i], 200, &e) < 0)
            skv__log(SKV_LOG_WARN, "cgroup", "rollback: %s", e.message);
    }
    forget_made(cg);
}

int skv__cgroup_create(skv_cgroup **out, const skv_cgroup_config *cfg,
                       const char *name, skv_error *err)
{
    char buf[PATH_MAX];
    const char *parts[SKV__CG_MAX_PARTS];
    size_t nparts;
    skv_cgroup *cg;
    int rc = handle_new(&cg, cfg, name, buf, sizeof(buf), parts, &nparts, err);
    if (rc < 0)
        return rc;
    rc = cg->ops->create(cg, parts, nparts, err);
    if (rc < 0) {
        rollback(cg);
        skv__cgroup_free(cg);
        return rc;
    }
    forget_made(cg);
    *out = cg;
    return 0;
}

int skv__cgroup_open(skv_cgroup **out, const skv_cgroup_config *cfg,
                     const char *name, skv_error *err)
{
    char buf[PATH_MAX];
    const char *parts[SKV__CG_MAX_PARTS];
    size_t nparts;
    skv_cgroup *cg;
    int rc = handle_new(&cg, cfg, name, buf, sizeof(buf), parts, &nparts, err);
    if (rc < 0)
        return rc;
    const skv__cg_dir *p = skv__cg_find(cg, "memory");
    if (!p || cg->mode == SKV_CGROUP_MODE_V2)
        p = skv__cg_find(cg, cg->mode == SKV_CGROUP_MODE_V2 ? "unified" : "pids");
    if (!p)
        p = &cg->d[0];
    if (!skv__sys_exists(p->dir)) {
        rc = skv__err(err, SKV_ENOENT, "cgroup %s does not exist", p->dir);
        skv__cgroup_free(cg);
        return rc;
    }
    /* Hierarchies where the cgroup was never made (an unusable unified
     * tree in hybrid mode) are dropped. */
    for (size_t i = cg->n; i-- > 0;) {
        if (skv__sys_exists(cg->d[i].dir))
            continue;
        skv__free(cg->d[i].dir);
        memmove(&cg->d[i], &cg->d[i + 1], (cg->n - i - 1) * sizeof(cg->d[0]));
        cg->n--;
    }
    *out = cg;
    return 0;
}

void skv__cgroup_free(skv_cgroup *cg)
{
    if (!cg)
        return;
    forget_made(cg);
    if (cg->dev_filtered)
        close(cg->dev_prog_fd); /* the attachment keeps the program */
    for (size_t i = 0; i < cg->n; i++)
        skv__free(cg->d[i].dir);
    skv__free(cg->rel);
    skv__free(cg);
}

skv_cgroup_mode skv__cgroup_mode(const skv_cgroup *cg)
{
    return cg ? cg->mode : SKV_CGROUP_MODE_AUTO;
}

const char *skv__cgroup_rel_path(const skv_cgroup *cg)
{
    return cg ? cg->rel : NULL;
}

const skv__cg_dir *skv__cg_find(const skv_cgroup *cg, const char *ctrl)
{
    for (size_t i = 0; cg && ctrl && i < cg->n; i++)
        if (skv__cg_list_has(cg->d[i].mount.ctrls, ctrl))
            return &cg->d[i];
    return NULL;
}

const char *skv__cgroup_dir(const skv_cgroup *cg, const char *controller)
{
    const skv__cg_dir *d = skv__cg_find(cg, controller);
    return d ? d->dir : NULL;
}
