/* Virtual folder mounts of kernel.create: bind mounts of host paths the
 * manager resolved inside a storage host. Checked again here, at mount
 * time, because a path can change between the manager's check and the
 * mount: the source must be an absolute, canonical path (no "..", no
 * symlink anywhere in it, so nothing swapped in can redirect the bind)
 * naming a directory. The container sees the folder's files with their
 * owners (nobody, the containers' user); ro is a read-only bind mount.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_internal.h"

static int source_check(const char *src, skv_error *err)
{
    char real[PATH_MAX];
    struct stat st;
    if (!src || src[0] != '/')
        return skv__err(err, SKV_EINVAL, "kernel.create: mount source '%s' "
                        "is not an absolute path", src ? src : "(none)");
    if (!realpath(src, real))
        return skv__err_sys(err, errno, "kernel.create: mount source %s "
                            "(is the storage host mounted on this agent?)",
                            src);
    if (strcmp(real, src) != 0)
        return skv__err(err, SKV_EPERM, "kernel.create: mount source %s "
                        "resolves to %s: refused (symlinks and '..' are "
                        "not followed)", src, real);
    if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
        return skv__err(err, SKV_EINVAL, "kernel.create: mount source %s "
                        "is not a directory", src);
    return 0;
}

static bool target_ok(const char *t)
{
    size_t n = t ? strlen(t) : 0;
    return n > 1 && t[0] == '/' && !strstr(t, "/../") &&
           !(n >= 3 && strcmp(t + n - 3, "/..") == 0);
}

int skv__agent_vf_mounts(skv_container_spec *spec,
                         const skv_proto_kernel_create *r, skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < r->n_mounts; i++) {
        const skv_proto_mount *m = &r->mounts[i];
        rc = source_check(m->source, err);
        if (!rc && !target_ok(m->target))
            rc = skv__err(err, SKV_EINVAL, "kernel.create: mount target "
                          "'%s' must be absolute without '..'",
                          m->target ? m->target : "(none)");
        if (!rc)
            rc = skv_container_spec_add_mount(spec, m->source, m->target,
                                              m->readonly != 0, err);
    }
    return rc;
}
