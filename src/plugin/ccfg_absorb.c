/* Container configuration: merging a plugin's freshly built configuration
 * into the caller's by moving its strings. skv_container_config_merge copies
 * both sides into a third object so that the destination is untouched on
 * failure; on the per-allocation path (one merge per plugin) that copying
 * was most of the configuration's cost. Here conflicts are checked and the
 * arrays grown first, and only then is anything moved, so the destination
 * still stays as it was when something fails.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

static bool ccfg_empty(const skv_container_config *c)
{
    return !c->ndevices && !c->nenv && !c->nmounts && !c->cpus && !c->mems &&
           !c->flags;
}

static bool has_device(const skv_container_config *c, const char *path)
{
    for (size_t i = 0; i < c->ndevices; i++)
        if (strcmp(c->devices[i], path) == 0)
            return true;
    return false;
}

static const skv_ccfg_mount *mount_of(const skv_container_config *c,
                                      const char *target)
{
    for (size_t i = 0; i < c->nmounts; i++)
        if (strcmp(c->mounts[i].target, target) == 0)
            return &c->mounts[i];
    return NULL;
}

/* The conflicts skv_container_config_merge reports, in its order; counts
 * what src adds to dst. */
static int check(const skv_container_config *dst,
                 const skv_container_config *src, size_t add[3],
                 skv_error *err)
{
    add[0] = add[1] = add[2] = 0;
    for (size_t i = 0; i < src->ndevices; i++)
        add[0] += !has_device(dst, src->devices[i]);
    for (size_t i = 0; i < src->nenv; i++) {
        const char *cur = skv_container_config_get_env(dst, src->env[i].name);
        if (cur && strcmp(cur, src->env[i].value) != 0)
            return skv__err(err, SKV_EEXIST, "environment '%s': '%s' "
                            "conflicts with '%s'", src->env[i].name,
                            src->env[i].value, cur);
        add[1] += !cur;
    }
    for (size_t i = 0; i < src->nmounts; i++) {
        const skv_ccfg_mount *m = src->mounts + i;
        const skv_ccfg_mount *cur = mount_of(dst, m->target);
        if (cur && (strcmp(cur->source, m->source) != 0 ||
                    cur->flags != m->flags))
            return skv__err(err, SKV_EEXIST, "mount target '%s' is already "
                            "bound to '%s'", m->target, cur->source);
        add[2] += !cur;
    }
    return 0;
}

/* Grow dst's arrays to their final sizes; a failure leaves the contents. */
static int reserve(skv_container_config *dst, const size_t add[3],
                   skv_error *err)
{
    if (add[0]) {
        char **d = skv__reallocarray(dst->devices, dst->ndevices + add[0],
                                     sizeof(*d));
        if (!d)
            return skv__err(err, SKV_ENOMEM, "container config: out of memory");
        dst->devices = d;
    }
    if (add[1]) {
        env_entry *e = skv__reallocarray(dst->env, dst->nenv + add[1],
                                         sizeof(*e));
        if (!e)
            return skv__err(err, SKV_ENOMEM, "container config: out of memory");
        dst->env = e;
    }
    if (add[2]) {
        skv_ccfg_mount *m = skv__reallocarray(dst->mounts,
                                              dst->nmounts + add[2],
                                              sizeof(*m));
        if (!m)
            return skv__err(err, SKV_ENOMEM, "container config: out of memory");
        dst->mounts = m;
    }
    return 0;
}

/* Both env arrays are sorted by name; merge src's new entries in from the
 * back (room for them was reserved). Moved entries are cleared in src. */
static void move_env(skv_container_config *dst, skv_container_config *src,
                     size_t add)
{
    size_t i = dst->nenv, j = src->nenv, k = dst->nenv + add;
    while (j > 0) {
        env_entry *s = &src->env[j - 1];
        int r = i > 0 ? strcmp(dst->env[i - 1].name, s->name) : -1;
        if (r == 0) {
            j--; /* the same value is already there (checked) */
        } else if (r > 0) {
            dst->env[--k] = dst->env[--i];
        } else {
            dst->env[--k] = *s;
            s->name = s->value = NULL;
            j--;
        }
    }
    dst->nenv += add;
}

static void move_rest(skv_container_config *dst, skv_container_config *src)
{
    for (size_t i = 0; i < src->ndevices; i++)
        if (!has_device(dst, src->devices[i])) {
            dst->devices[dst->ndevices++] = src->devices[i];
            src->devices[i] = NULL;
        }
    for (size_t i = 0; i < src->nmounts; i++)
        if (!mount_of(dst, src->mounts[i].target)) {
            dst->mounts[dst->nmounts++] = src->mounts[i];
            src->mounts[i].source = src->mounts[i].target = NULL;
        }
    if (src->cpus) {
        skv__free(dst->cpus);
        dst->cpus = src->cpus;
        src->cpus = NULL;
    }
    if (src->mems) {
        skv__free(dst->mems);
        dst->mems = src->mems;
        src->mems = NULL;
    }
    dst->flags |= src->flags;
}

int skv__ccfg_absorb(skv_container_config *dst, skv_container_config *src,
                     skv_error *err)
{
    if (ccfg_empty(dst)) {
        skv_container_config swap = *dst;
        *dst = *src;
        *src = swap;
        return 0;
    }
    size_t add[3];
    int rc = check(dst, src, add, err);
    if (!rc)
        rc = reserve(dst, add, err);
    if (rc)
        return rc;
    move_env(dst, src, add[1]);
    move_rest(dst, src);
    return 0;
}

void skv__ccfg_take_cpus(skv_container_config *cfg, char *list)
{
    skv__free(cfg->cpus);
    cfg->cpus = list;
}

void skv__ccfg_take_mems(skv_container_config *cfg, char *list)
{
    skv__free(cfg->mems);
    cfg->mems = list;
}
