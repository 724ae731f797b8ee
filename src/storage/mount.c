/* Mount plans: a folder as a bind mount for the container runtime
 * (skv_container_spec_add_mount). The source is checked twice: when the
 * plan is made and again when it is added to a spec, by resolving it anew
 * and comparing with the host root and the folder's identity, so a folder
 * renamed, deleted or replaced by a link in between is refused. After
 * that, folders/ is the library's own root-only directory: nobody else can
 * swap an entry before the runtime's mount(2).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "storage_internal.h"

static int check_target(const char *t, skv_error *err)
{
    if (!t || t[0] != '/' || strlen(t) >= SKV_STORAGE_PATH_MAX)
        return skv__err(err, SKV_EINVAL, "mount target '%s' is not an "
                        "absolute path", t ? t : "(null)");
    for (const char *p = t; (p = strstr(p, "..")); p += 2)
        if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
            return skv__err(err, SKV_EINVAL, "mount target '%s' has '..'", t);
    return strcmp(t, "/") == 0
               ? skv__err(err, SKV_EINVAL, "mount target '/' is not allowed")
               : 0;
}

/* realpath of <root>/folders/<name>, which must be exactly that below the
 * real root (no link anywhere in the folder part). */
static int resolve(skv_storage_host *h, const char *name, char *out,
                   skv_error *err)
{
    char want[PATH_MAX], got[PATH_MAX];
    char *root = realpath(h->root, NULL);
    if (!root)
        return skv__err_sys(err, errno, "resolve storage root %s", h->root);
    snprintf(want, sizeof(want), "%s/folders/%s", root, name);
    free(root);
    if (!realpath(want, got))
        return skv__st_errno(err, errno, "resolve folder", name);
    if (strcmp(want, got) != 0)
        return skv__err(err, SKV_EPERM, "folder '%s' resolves to %s, outside "
                        "the storage root (refused)", name, got);
    snprintf(out, SKV_STORAGE_PATH_MAX, "%s", got);
    return 0;
}

int skv_storage_mount_plan(skv_storage_host *h, const char *folder,
                           const char *target, bool readonly,
                           skv_storage_mount *out, skv_error *err)
{
    if (!h || !out)
        return skv__err(err, SKV_EINVAL, "host or out is NULL");
    int rc = check_target(target, err);
    int fd = rc < 0 ? rc : skv__st_folder_fd(h, folder, err);
    if (fd < 0)
        return fd;
    struct stat st;
    rc = fstat(fd, &st) < 0 ? skv__err_sys(err, errno, "stat folder") : 0;
    close(fd);
    if (rc == 0)
        rc = resolve(h, folder, out->source, err);
    if (rc < 0)
        return rc;
    snprintf(out->target, sizeof(out->target), "%s", target);
    out->readonly = readonly;
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    return 0;
}

int skv_storage_mount_add(skv_storage_host *h, const skv_storage_mount *m,
                          skv_container_spec *spec, skv_error *err)
{
    if (!h || !m || !spec)
        return skv__err(err, SKV_EINVAL, "host, mount or spec is NULL");
    const char *slash = strrchr(m->source, '/');
    char name[SKV_STORAGE_NAME_MAX + 1], now[SKV_STORAGE_PATH_MAX];
    if (!slash || strlen(slash + 1) > SKV_STORAGE_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "mount source '%s'", m->source);
    snprintf(name, sizeof(name), "%s", slash + 1);
    int rc = check_target(m->target, err);
    if (rc == 0)
        rc = resolve(h, name, now, err);
    if (rc < 0)
        return rc;
    struct stat st;
    if (strcmp(now, m->source) != 0 || lstat(now, &st) < 0 ||
        !S_ISDIR(st.st_mode) || st.st_dev != m->dev || st.st_ino != m->ino)
        return skv__err(err, SKV_EPERM, "folder '%s' changed since the mount "
                        "was planned (refused)", name);
    return skv_container_spec_add_mount(spec, now, m->target, m->readonly,
                                        err);
}
