/* Container configuration: device nodes, environment, bind mounts, cpuset
 * and memory nodes that plugins ask for. Env entries are kept sorted by name
 * (deterministic output).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

int skv_container_config_new(skv_container_config **out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "container_config_new: out is NULL");
    *out = skv__calloc(1, sizeof(**out));
    return *out ? 0 : skv__err(err, SKV_ENOMEM, "container config: out of memory");
}

/* Release the contents, keep the object. */
static void ccfg_clear(skv_container_config *c)
{
    for (size_t i = 0; i < c->ndevices; i++)
        skv__free(c->devices[i]);
    for (size_t i = 0; i < c->nenv; i++) {
        skv__free(c->env[i].name);
        skv__free(c->env[i].value);
    }
    for (size_t i = 0; i < c->nmounts; i++) {
        skv__free((void *)c->mounts[i].source);
        skv__free((void *)c->mounts[i].target);
    }
    skv__free(c->devices);
    skv__free(c->env);
    skv__free(c->mounts);
    skv__free(c->cpus);
    skv__free(c->mems);
    memset(c, 0, sizeof(*c));
}

void skv_container_config_free(skv_container_config *cfg)
{
    if (!cfg)
        return;
    ccfg_clear(cfg);
    skv__free(cfg);
}

static int check_abs_path(const char *what, const char *path, skv_error *err)
{
    if (!path || path[0] != '/')
        return skv__err(err, SKV_EINVAL, "%s '%s': must be an absolute path",
                        what, path ? path : "(null)");
    size_t len = strlen(path);
    if (strstr(path, "/../") || (len >= 3 && strcmp(path + len - 3, "/..") == 0))
        return skv__err(err, SKV_EINVAL, "%s '%s': '..' is not allowed", what,
                        path);
    return 0;
}

int skv_container_config_add_device(skv_container_config *cfg,
                                    const char *path, skv_error *err)
{
    if (!cfg)
        return skv__err(err, SKV_EINVAL, "container_config_add_device: NULL");
    int rc = check_abs_path("device", path, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < cfg->ndevices; i++)
        if (strcmp(cfg->devices[i], path) == 0)
            return 0;
    char **nd = skv__reallocarray(cfg->devices, cfg->ndevices + 1, sizeof(*nd));
    if (!nd)
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    cfg->devices = nd;
    if (!(nd[cfg->ndevices] = skv__strdup(path)))
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    cfg->ndevices++;
    return 0;
}

static int check_env_name(const char *name, skv_error *err)
{
    if (!name || !*name || (*name >= '0' && *name <= '9'))
        return skv__err(err, SKV_EINVAL, "environment name '%s' is invalid",
                        name ? name : "(null)");
    for (const char *p = name; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_'))
            return skv__err(err, SKV_EINVAL, "environment name '%s' is "
                            "invalid (character '%c')", name, *p);
    return 0;
}

/* Position of name in the sorted env array, or where it would go. */
static size_t env_pos(const skv_container_config *c, const char *name,
                      bool *found)
{
    size_t lo = 0, hi = c->nenv;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int r = strcmp(c->env[mid].name, name);
        if (r == 0) {
            *found = true;
            return mid;
        }
        if (r < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int skv_container_config_set_env(skv_container_config *cfg, const char *name,
                                 const char *value, skv_error *err)
{
    if (!cfg || !value)
        return skv__err(err, SKV_EINVAL, "container_config_set_env: NULL");
    int rc = check_env_name(name, err);
    if (rc)
        return rc;
    bool found;
    size_t pos = env_pos(cfg, name, &found);
    char *v = skv__strdup(value);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    if (found) {
        skv__free(cfg->env[pos].value);
        cfg->env[pos].value = v;
        return 0;
    }
    char *nm = skv__strdup(name);
    env_entry *ne = nm ? skv__reallocarray(cfg->env, cfg->nenv + 1,
                                           sizeof(*ne)) : NULL;
    if (!ne) {
        skv__free(nm);
        skv__free(v);
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    }
    cfg->env = ne;
    memmove(&ne[pos + 1], &ne[pos], (cfg->nenv - pos) * sizeof(*ne));
    ne[pos].name = nm;
    ne[pos].value = v;
    cfg->nenv++;
    return 0;
}

int skv_container_config_add_mount(skv_container_config *cfg,
                                   const char *source, const char *target,
                                   unsigned flags, skv_error *err)
{
    if (!cfg)
        return skv__err(err, SKV_EINVAL, "container_config_add_mount: NULL");
    int rc = check_abs_path("mount source", source, err);
    if (!rc)
        rc = check_abs_path("mount target", target, err);
    if (rc)
        return rc;
    if (flags & ~SKV_CCFG_MOUNT_READONLY)
        return skv__err(err, SKV_EINVAL, "mount '%s': unknown flags 0x%x",
                        target, flags);
    for (size_t i = 0; i < cfg->nmounts; i++) {
        const skv_ccfg_mount *m = &cfg->mounts[i];
        if (strcmp(m->target, target) != 0)
            continue;
        if (strcmp(m->source, source) == 0 && m->flags == flags)
            return 0;
        return skv__err(err, SKV_EEXIST, "mount target '%s' is already "
                        "bound to '%s'", target, m->source);
    }
    skv_ccfg_mount *nm = skv__reallocarray(cfg->mounts, cfg->nmounts + 1,
                                           sizeof(*nm));
    if (!nm)
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    cfg->mounts = nm;
    char *s = skv__strdup(source), *t = skv__strdup(target);
    if (!s || !t) {
        skv__free(s);
        skv__free(t);
        return skv__err(err, SKV_ENOMEM, "container config: out of memory");
    }
    nm[cfg->nmounts].source = s;
    nm[cfg->nmounts].target = t;
    nm[cfg->nmounts].flags = flags;
    cfg->nmounts++;
    return 0;
}

/* Canonicalize a list string into *slot (NULL clears). */
static int set_list(char **slot, const char *what, const char *text,
                    skv_error *err)
{
    if (!text) {
        skv__free(*slot);
        *slot = NULL;
        return 0;
    }
    int *ids;
    size_t n;
    char *canon;
    int rc = skv_topo_cpulist_parse(&ids, &n, text, err);
    if (rc) {
        skv__err_prefix(err, "%s", what);
        return rc;
    }
    rc = skv_topo_cpulist_format(&canon, ids, n, err);
    skv__free(ids);
    if (rc)
        return rc;
    skv__free(*slot);
    *slot = canon;
    return 0;
}

int skv_container_config_set_cpus(skv_container_config *cfg, const char *l,
                                  skv_error *err)
{
    if (!cfg)
        return skv__err(err, SKV_EINVAL, "container_config_set_cpus: NULL");
    return set_list(&cfg->cpus, "cpuset.cpus", l, err);
}

int skv_container_config_set_mems(skv_container_config *cfg, const char *l,
                                  skv_error *err)
{
    if (!cfg)
        return skv__err(err, SKV_EINVAL, "container_config_set_mems: NULL");
    return set_list(&cfg->mems, "cpuset.mems", l, err);
}

void skv_container_config_add_flags(skv_container_config *cfg, unsigned flags)
{
    if (cfg)
        cfg->flags |= flags;
}

unsigned skv_container_config_flags(const skv_container_config *cfg)
{
    return cfg ? cfg->flags : 0;
}
