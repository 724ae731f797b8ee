/* Native backend: everything the first process needs, checked and built
 * before anything is created (bad input fails here, leaving nothing).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <unistd.h>

#include "native.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static int resolve_rootfs(skv_runtime *rt, const skv_container_spec *spec,
                          char **out, skv_error *err)
{
    int rc;
    if (spec->image) {
        if (!rt->images)
            return skv__err(err, SKV_EINVAL, "container '%s' names image '%s' "
                            "but the runtime has no image_dir", spec->id,
                            spec->image);
        rc = skv_image_path(rt->images, spec->image, out, err);
    } else if (spec->rootfs) {
        rc = (*out = skv__strdup(spec->rootfs)) ? 0
                 : skv__err(err, SKV_ENOMEM, "rootfs path");
    } else {
        return skv__err(err, SKV_EINVAL, "container '%s' has no image or "
                        "rootfs", spec->id);
    }
    if (rc < 0)
        return rc;
    struct stat st;
    if (stat(*out, &st) < 0 || !S_ISDIR(st.st_mode) || strchr(*out, ':')) {
        rc = skv__err(err, SKV_ENOENT, "container '%s': root filesystem '%s' "
                      "is not a usable directory", spec->id, *out);
        skv__free(*out);
        *out = NULL;
    }
    return rc;
}

static int check_sources(const skv_container_spec *spec, native_plan *p,
                         skv_error *err)
{
    if (spec->n_mounts &&
        !(p->mount_is_dir = skv__calloc(spec->n_mounts, sizeof(bool))))
        return skv__err(err, SKV_ENOMEM, "mount table");
    for (size_t i = 0; i < spec->n_mounts; i++) {
        struct stat st;
        if (stat(spec->mounts[i].host, &st) < 0)
            return skv__err_sys(err, errno, "mount source '%s'",
                                spec->mounts[i].host);
        p->mount_is_dir[i] = S_ISDIR(st.st_mode);
    }
    for (size_t i = 0; i < spec->n_devices; i++) {
        const skv__rt_device *d = &spec->devices[i];
        char path[PATH_MAX];
        struct stat st;
        /* The granted node must exist on the host with the same numbers, so
         * a typo cannot hand out an unrelated device. */
        int rc = skv__sys_path(path, sizeof(path), d->path, err);
        if (rc < 0)
            return rc;
        if (stat(path, &st) < 0)
            return skv__err(err, SKV_ENOENT, "device '%s' does not exist on "
                            "the host", d->path);
        bool type_ok = d->type == 'c' ? S_ISCHR(st.st_mode) : S_ISBLK(st.st_mode);
        if (!type_ok || major(st.st_rdev) != d->major ||
            minor(st.st_rdev) != d->minor)
            return skv__err(err, SKV_EINVAL, "device '%s' is not %c %u:%u on "
                            "the host", d->path, d->type, d->major, d->minor);
    }
    return 0;
}

static int add_env(native_plan *p, char *kv, skv_error *err)
{
    if (!kv)
        return skv__err(err, SKV_ENOMEM, "environment");
    p->envp[p->n_envp++] = kv;
    return 0;
}

static int build_env(native_plan *p, const skv_container_spec *spec,
                     skv_error *err)
{
    if (!(p->envp = skv__calloc(spec->n_env + 4, sizeof(char *))))
        return skv__err(err, SKV_ENOMEM, "environment");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < spec->n_env; i++)
        rc = add_env(p, skv__strdup(spec->env[i]), err);
    if (rc == 0 && !skv__rt_spec_getenv(spec, "PATH"))
        rc = add_env(p, skv__strdup("PATH=" DEFAULT_PATH), err);
    if (rc == 0 && !skv__rt_spec_getenv(spec, "HOME"))
        rc = add_env(p, skv__strdup("HOME=/"), err);
    if (rc == 0 && !skv__rt_spec_getenv(spec, "HOSTNAME"))
        rc = add_env(p, skv__asprintf("HOSTNAME=%s", spec->hostname), err);
    const char *path = skv__rt_spec_getenv(spec, "PATH");
    p->path_env = path ? path : DEFAULT_PATH;
    return rc;
}

/* The seccomp program of a syscall edit list: the runtime's cached default
 * without edits, else compiled here (*owned: the caller frees it). Shared
 * with exec (exec_conf.c), which rebuilds the container's program from the
 * edits its create recorded. */
int skv__rt_seccomp_prog(skv_runtime *rt, const skv__rt_syscall *sc, size_t n,
                         skv_seccomp_prog **prog, bool *owned,
                         skv_error *err)
{
    *owned = false;
    if (n == 0 && rt->default_prog) {
        *prog = rt->default_prog;
        return 0;
    }
    skv_seccomp_profile *prof = NULL;
    int rc = skv__seccomp_profile_new(&prof, err);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = sc[i].allow ? skv__seccomp_profile_allow(prof, sc[i].name, err)
                         : skv__seccomp_profile_deny(prof, sc[i].name, err);
    if (rc == 0)
        rc = skv__seccomp_compile(prog, prof, err);
    skv__seccomp_profile_free(prof);
    if (rc == 0 && n == 0)
        rt->default_prog = *prog; /* cached; the runtime frees it */
    else
        *owned = rc == 0;
    return rc;
}

static int build_security(native_plan *p, skv_runtime *rt,
                          const skv_container_spec *spec, skv_error *err)
{
    skv__caps_plan_init(&p->caps);
    p->caps.set_ids = true;
    p->caps.uid = spec->uid;
    p->caps.gid = spec->gid;
    p->caps.no_new_privs = true;
    int rc = skv__caps_edit(&p->caps.keep, (const char *const *)spec->caps,
                            spec->n_caps, NULL, 0, err);
    if (rc == 0)
        rc = skv__rt_seccomp_prog(rt, spec->syscalls, spec->n_syscalls,
                                  &p->prog, &p->prog_owned, err);
    return rc;
}

/* The strings for an idmapped image layer (used when the kernel and the
 * image's file system allow it; see native_child.c). */
static int idmap_paths(native_plan *p, const char *lower, const char *dir,
                       skv_error *err)
{
    p->lower = skv__strdup(lower);
    p->idmap_lower = skv__asprintf("%s/scratch/lower", dir);
    p->overlay_opts_idmap = skv__asprintf(
        "lowerdir=%s/scratch/lower,upperdir=%s/scratch/upper,"
        "workdir=%s/scratch/work", dir, dir, dir);
    if (!p->lower || !p->idmap_lower || !p->overlay_opts_idmap)
        return skv__err(err, SKV_ENOMEM, "container paths");
    return 0;
}

int skv__rt_native_plan_build(native_plan *p, skv_runtime *rt,
                              const skv_container_spec *spec, const char *dir,
                              bool isolate, skv_error *err)
{
    memset(p, 0, sizeof(*p));
    p->userns_fd = -1;
    p->spec = spec;
    p->isolate = isolate;
    if (!spec->argv)
        return skv__err(err, SKV_EINVAL, "container '%s' has no argv",
                        spec->id);
    char *lower = NULL;
    p->userns = isolate && spec->userns_count > 0;
    p->host_uid = spec->uid + (p->userns ? spec->userns_base : 0);
    p->host_gid = spec->gid + (p->userns ? spec->userns_base : 0);
    if (p->userns && (spec->uid >= spec->userns_count ||
                      spec->gid >= spec->userns_count))
        return skv__err(err, SKV_EINVAL, "container '%s': uid %u / gid %u "
                        "is outside its user namespace's %u ids", spec->id,
                        spec->uid, spec->gid, spec->userns_count);
    int rc = isolate ? resolve_rootfs(rt, spec, &lower, err) : 0;
    if (rc == 0 && isolate)
        rc = check_sources(spec, p, err);
    if (rc == 0)
        rc = build_env(p, spec, err);
    if (rc == 0 && isolate)
        rc = build_security(p, rt, spec, err);
    if (rc == 0) {
        p->fifo_path = skv__asprintf("%s/exec.fifo", dir);
        p->merged = skv__asprintf("%s/scratch/merged", dir);
        p->overlay_opts = isolate ? skv__asprintf(
            "lowerdir=%s,upperdir=%s/scratch/upper,workdir=%s/scratch/work",
            lower, dir, dir) : skv__strdup("");
        if (!p->fifo_path || !p->merged || !p->overlay_opts)
            rc = skv__err(err, SKV_ENOMEM, "container paths");
    }
    if (rc == 0 && p->userns)
        rc = idmap_paths(p, lower, dir, err);
    if (rc == 0)
        rc = skv__rt_mempolicy_plan(p, spec, err);
    skv__free(lower);
    return rc;
}

void skv__rt_native_plan_free(native_plan *p)
{
    if (p->userns_fd >= 0)
        close(p->userns_fd);
    skv__free(p->lower);
    skv__free(p->idmap_lower);
    skv__free(p->overlay_opts_idmap);
    for (size_t i = 0; i < p->n_envp; i++)
        skv__free(p->envp[i]);
    skv__free(p->envp);
    skv__free(p->mount_is_dir);
    skv__free(p->fifo_path);
    skv__free(p->merged);
    skv__free(p->overlay_opts);
    if (p->prog_owned)
        skv__seccomp_prog_free(p->prog);
    skv__rt_mempolicy_free(p);
    memset(p, 0, sizeof(*p));
}
