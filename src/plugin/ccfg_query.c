/* Container configuration: getters and merging.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "plugin_internal.h"

size_t skv_container_config_device_count(const skv_container_config *cfg)
{
    return cfg ? cfg->ndevices : 0;
}

const char *skv_container_config_device_at(const skv_container_config *cfg,
                                           size_t i)
{
    return cfg && i < cfg->ndevices ? cfg->devices[i] : NULL;
}

size_t skv_container_config_env_count(const skv_container_config *cfg)
{
    return cfg ? cfg->nenv : 0;
}

int skv_container_config_env_at(const skv_container_config *cfg, size_t i,
                                const char **name, const char **value)
{
    if (!cfg || i >= cfg->nenv)
        return SKV_ERANGE;
    if (name)
        *name = cfg->env[i].name;
    if (value)
        *value = cfg->env[i].value;
    return 0;
}

const char *skv_container_config_get_env(const skv_container_config *cfg,
                                         const char *name)
{
    for (size_t i = 0; cfg && name && i < cfg->nenv; i++)
        if (strcmp(cfg->env[i].name, name) == 0)
            return cfg->env[i].value;
    return NULL;
}

size_t skv_container_config_mount_count(const skv_container_config *cfg)
{
    return cfg ? cfg->nmounts : 0;
}

const skv_ccfg_mount *skv_container_config_mount_at(
    const skv_container_config *cfg, size_t i)
{
    return cfg && i < cfg->nmounts ? &cfg->mounts[i] : NULL;
}

const char *skv_container_config_cpus(const skv_container_config *cfg)
{
    return cfg ? cfg->cpus : NULL;
}

const char *skv_container_config_mems(const skv_container_config *cfg)
{
    return cfg ? cfg->mems : NULL;
}

/* Apply src onto dst; may stop half-way (the caller works on a copy). */
static int merge_into(skv_container_config *dst,
                      const skv_container_config *src, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < src->ndevices; i++)
        rc = skv_container_config_add_device(dst, src->devices[i], err);
    for (size_t i = 0; !rc && i < src->nenv; i++) {
        const char *cur = skv_container_config_get_env(dst, src->env[i].name);
        if (cur && strcmp(cur, src->env[i].value) != 0)
            return skv__err(err, SKV_EEXIST, "environment '%s': '%s' "
                            "conflicts with '%s'", src->env[i].name,
                            src->env[i].value, cur);
        rc = skv_container_config_set_env(dst, src->env[i].name,
                                          src->env[i].value, err);
    }
    for (size_t i = 0; !rc && i < src->nmounts; i++)
        rc = skv_container_config_add_mount(dst, src->mounts[i].source,
                                            src->mounts[i].target,
                                            src->mounts[i].flags, err);
    if (!rc && src->cpus)
        rc = skv_container_config_set_cpus(dst, src->cpus, err);
    if (!rc && src->mems)
        rc = skv_container_config_set_mems(dst, src->mems, err);
    dst->flags |= src->flags;
    return rc;
}

int skv_container_config_merge(skv_container_config *dst,
                               const skv_container_config *src,
                               skv_error *err)
{
    if (!dst || !src)
        return skv__err(err, SKV_EINVAL, "container_config_merge: NULL");
    skv_container_config *tmp;
    int rc = skv_container_config_new(&tmp, err);
    if (rc)
        return rc;
    /* Work on a copy so that dst is untouched on failure. */
    rc = merge_into(tmp, dst, err);
    if (!rc)
        rc = merge_into(tmp, src, err);
    if (!rc) {
        skv_container_config swap = *dst;
        *dst = *tmp;
        *tmp = swap;
    }
    skv_container_config_free(tmp);
    return rc;
}
