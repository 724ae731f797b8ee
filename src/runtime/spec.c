/* Container spec: builder functions, each validating its input before
 * touching the spec, so a failed call leaves the spec unchanged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "rt_internal.h"

static bool id_char(char c, bool first)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9'))
        return true;
    return !first && (c == '_' || c == '.' || c == '-');
}

int skv__rt_check_id(const char *id, skv_error *err)
{
    if (!id || !*id)
        return skv__err(err, SKV_EINVAL, "container id is empty");
    size_t n = strlen(id);
    if (n > SKV__RT_ID_MAX)
        return skv__err(err, SKV_EINVAL, "container id '%.64s...' is longer "
                        "than %d characters", id, SKV__RT_ID_MAX);
    for (size_t i = 0; i < n; i++)
        if (!id_char(id[i], i == 0))
            return skv__err(err, SKV_EINVAL, "container id '%s': character "
                            "%zu is not allowed", id, i + 1);
    return 0;
}

int skv__rt_check_abs_path(const char *path, const char *what, skv_error *err)
{
    if (!path || path[0] != '/')
        return skv__err(err, SKV_EINVAL, "%s '%s' is not an absolute path",
                        what, path ? path : "(null)");
    if (strlen(path) >= PATH_MAX / 4)
        return skv__err(err, SKV_ERANGE, "%s is too long", what);
    if (strchr(path, '\n') || strchr(path, ','))
        return skv__err(err, SKV_EINVAL, "%s '%s' contains a newline or comma",
                        what, path);
    for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
        if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
            return skv__err(err, SKV_EINVAL, "%s '%s' contains '..'", what,
                            path);
    return 0;
}

int skv_container_spec_new(skv_container_spec **out, const char *id,
                           skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "out is NULL");
    int rc = skv__rt_check_id(id, err);
    if (rc < 0)
        return rc;
    skv_container_spec *s = skv__calloc(1, sizeof(*s));
    char *cwd = skv__strdup("/");
    if (!s || !cwd) {
        skv__free(s);
        skv__free(cwd);
        return skv__err(err, SKV_ENOMEM, "container spec '%s'", id);
    }
    strcpy(s->id, id);
    snprintf(s->hostname, sizeof(s->hostname), "%.63s", id);
    s->cwd = cwd;
    s->uid = s->gid = SKV__RT_DEFAULT_UID;
    s->limits = (skv_container_limits)SKV_CONTAINER_LIMITS_INIT;
    *out = s;
    return 0;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv__free(v[i]);
    skv__free(v);
}

void skv_container_spec_free(skv_container_spec *s)
{
    if (!s)
        return;
    skv__free(s->image);
    skv__free(s->rootfs);
    free_strv(s->argv, s->argc);
    free_strv(s->env, s->n_env);
    free_strv(s->caps, s->n_caps);
    free_strv(s->hosts, s->n_hosts);
    skv__free(s->cwd);
    skv__free(s->cpus);
    skv__free(s->mems);
    for (size_t i = 0; i < s->n_devices; i++)
        skv__free(s->devices[i].path);
    skv__free(s->devices);
    for (size_t i = 0; i < s->n_mounts; i++) {
        skv__free(s->mounts[i].host);
        skv__free(s->mounts[i].target);
    }
    skv__free(s->mounts);
    for (size_t i = 0; i < s->n_syscalls; i++)
        skv__free(s->syscalls[i].name);
    skv__free(s->syscalls);
    skv__free(s);
}

const char *skv_container_spec_id(const skv_container_spec *spec)
{
    return spec ? spec->id : NULL;
}

/* Replace *slot with a copy of value (NULL clears). */
static int set_str(char **slot, const char *value, skv_error *err)
{
    char *c = NULL;
    if (value && !(c = skv__strdup(value)))
        return skv__err(err, SKV_ENOMEM, "copying '%s'", value);
    skv__free(*slot);
    *slot = c;
    return 0;
}

int skv_container_spec_set_image(skv_container_spec *spec, const char *image,
                                 skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = skv_image_name_check(image, err);
    if (rc == 0 && (rc = set_str(&spec->image, image, err)) == 0)
        set_str(&spec->rootfs, NULL, NULL);
    return rc;
}

int skv_container_spec_set_rootfs(skv_container_spec *spec, const char *dir,
                                  skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = skv__rt_check_abs_path(dir, "rootfs", err);
    if (rc == 0 && (rc = set_str(&spec->rootfs, dir, err)) == 0)
        set_str(&spec->image, NULL, NULL);
    return rc;
}

int skv_container_spec_set_argv(skv_container_spec *spec, size_t argc,
                                const char *const *argv, skv_error *err)
{
    if (!spec || !argv || argc == 0 || argc > 4096)
        return skv__err(err, SKV_EINVAL, "argv: need 1..4096 arguments");
    for (size_t i = 0; i < argc; i++)
        if (!argv[i])
            return skv__err(err, SKV_EINVAL, "argv[%zu] is NULL", i);
    if (argv[0][0] == '\0')
        return skv__err(err, SKV_EINVAL, "argv[0] is empty");
    char **v = skv__calloc(argc + 1, sizeof(char *));
    for (size_t i = 0; v && i < argc; i++) {
        if (!(v[i] = skv__strdup(argv[i]))) {
            free_strv(v, i);
            v = NULL;
        }
    }
    if (!v)
        return skv__err(err, SKV_ENOMEM, "copying argv");
    free_strv(spec->argv, spec->argc);
    spec->argv = v;
    spec->argc = argc;
    return 0;
}

static bool env_name_ok(const char *n)
{
    if (!n || !*n || (*n >= '0' && *n <= '9'))
        return false;
    for (; *n; n++)
        if (!id_char(*n, true) && *n != '_')
            return false;
    return true;
}

const char *skv__rt_spec_getenv(const skv_container_spec *spec,
                                const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < spec->n_env; i++)
        if (strncmp(spec->env[i], name, n) == 0 && spec->env[i][n] == '=')
            return spec->env[i] + n + 1;
    return NULL;
}

int skv_container_spec_set_env(skv_container_spec *spec, const char *name,
                               const char *value, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (!env_name_ok(name))
        return skv__err(err, SKV_EINVAL, "environment name '%s' is invalid",
                        name ? name : "(null)");
    if (!value)
        return skv__err(err, SKV_EINVAL, "environment '%s': value is NULL",
                        name);
    char *kv = skv__asprintf("%s=%s", name, value);
    if (!kv)
        return skv__err(err, SKV_ENOMEM, "environment '%s'", name);
    size_t n = strlen(name);
    for (size_t i = 0; i < spec->n_env; i++) {
        if (strncmp(spec->env[i], name, n) == 0 && spec->env[i][n] == '=') {
            skv__free(spec->env[i]);
            spec->env[i] = kv;
            return 0;
        }
    }
    char **v = skv__reallocarray(spec->env, spec->n_env + 2, sizeof(char *));
    if (!v) {
        skv__free(kv);
        return skv__err(err, SKV_ENOMEM, "environment '%s'", name);
    }
    v[spec->n_env++] = kv;
    v[spec->n_env] = NULL;
    spec->env = v;
    return 0;
}

int skv_container_spec_set_cwd(skv_container_spec *spec, const char *cwd,
                               skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = skv__rt_check_abs_path(cwd, "cwd", err);
    return rc < 0 ? rc : set_str(&spec->cwd, cwd, err);
}

int skv_container_spec_set_user(skv_container_spec *spec, uint32_t uid,
                                uint32_t gid, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (uid == UINT32_MAX || gid == UINT32_MAX)
        return skv__err(err, SKV_EINVAL, "uid/gid %u:%u is reserved", uid, gid);
    spec->uid = uid;
    spec->gid = gid;
    return 0;
}

int skv_container_spec_set_userns(skv_container_spec *spec,
                                  uint32_t host_base, uint32_t count,
                                  skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (count && host_base == 0)
        return skv__err(err, SKV_EINVAL, "user namespace: host_base 0 would "
                        "map container root to host root");
    if (count && (uint64_t)host_base + count - 1 > UINT32_MAX - 1)
        return skv__err(err, SKV_EINVAL, "user namespace: host ids %u+%u "
                        "run past 4294967294", host_base, count);
    spec->userns_base = count ? host_base : 0;
    spec->userns_count = count;
    return 0;
}

int skv_container_spec_set_hostname(skv_container_spec *spec,
                                    const char *hostname, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    size_t n = hostname ? strlen(hostname) : 0;
    if (n == 0 || n > 63)
        return skv__err(err, SKV_EINVAL, "hostname must have 1..63 characters");
    for (size_t i = 0; i < n; i++)
        if (!id_char(hostname[i], i == 0) || hostname[i] == '_')
            return skv__err(err, SKV_EINVAL, "hostname '%s': character %zu is "
                            "not allowed", hostname, i + 1);
    memcpy(spec->hostname, hostname, n + 1);
    return 0;
}

static bool cpulist_ok(const char *s)
{
    if (!*s || strlen(s) > 1024)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == ',' || *p == '-'))
            return false;
    return true;
}

int skv_container_spec_set_cpuset(skv_container_spec *spec, const char *cpus,
                                  const char *mems, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (cpus && !cpulist_ok(cpus))
        return skv__err(err, SKV_EINVAL, "cpuset cpus '%s' is not a list like "
                        "'0-3,8'", cpus);
    if (mems && !cpulist_ok(mems))
        return skv__err(err, SKV_EINVAL, "cpuset mems '%s' is not a list like "
                        "'0'", mems);
    char *c = NULL, *m = NULL;
    if (set_str(&c, cpus, err) < 0)
        return SKV_ENOMEM;
    if (set_str(&m, mems, err) < 0) {
        skv__free(c);
        return SKV_ENOMEM;
    }
    skv__free(spec->cpus);
    skv__free(spec->mems);
    spec->cpus = c;
    spec->mems = m;
    return 0;
}

int skv_container_spec_set_mempolicy(skv_container_spec *spec,
                                     skv_mempolicy policy, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (policy != SKV_MEMPOLICY_DEFAULT && policy != SKV_MEMPOLICY_BIND &&
        policy != SKV_MEMPOLICY_INTERLEAVE)
        return skv__err(err, SKV_EINVAL, "memory policy %d is not default, "
                        "bind or interleave", (int)policy);
    spec->mempolicy = policy;
    return 0;
}

int skv_container_spec_set_limits(skv_container_spec *spec,
                                  const skv_container_limits *lim,
                                  skv_error *err)
{
    if (!spec || !lim)
        return skv__err(err, SKV_EINVAL, "spec or limits is NULL");
    if (lim->version != SKV_CONTAINER_LIMITS_VERSION)
        return skv__err(err, SKV_EVERSION, "container limits version %u, "
                        "expected %u", lim->version,
                        SKV_CONTAINER_LIMITS_VERSION);
    if (lim->cpu_period_us && (lim->cpu_period_us < 1000 ||
                               lim->cpu_period_us > 1000000))
        return skv__err(err, SKV_ERANGE, "cpu_period_us %llu is outside "
                        "1000..1000000", (unsigned long long)lim->cpu_period_us);
    if (lim->cpu_quota_us && lim->cpu_quota_us < 1000)
        return skv__err(err, SKV_ERANGE, "cpu_quota_us %llu is below 1000",
                        (unsigned long long)lim->cpu_quota_us);
    if (lim->memory_bytes && (lim->memory_bytes < (1u << 20) ||
                              lim->memory_bytes > INT64_MAX))
        return skv__err(err, SKV_ERANGE, "memory_bytes %llu is below 1 MiB or "
                        "too large", (unsigned long long)lim->memory_bytes);
    if (lim->pids_max > INT64_MAX)
        return skv__err(err, SKV_ERANGE, "pids_max is too large");
    if (lim->log_max_bytes && lim->log_max_bytes < 4096)
        return skv__err(err, SKV_ERANGE, "log_max_bytes %llu is below 4096",
                        (unsigned long long)lim->log_max_bytes);
    spec->limits = *lim;
    return 0;
}

int skv_container_spec_set_network(skv_container_spec *spec,
                                   skv_network_mode mode, skv_error *err)
{
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    if (mode != SKV_NETWORK_NONE && mode != SKV_NETWORK_HOST)
        return skv__err(err, SKV_EINVAL, "network mode %d is unknown",
                        (int)mode);
    spec->network = mode;
    return 0;
}
