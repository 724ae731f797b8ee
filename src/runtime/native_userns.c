/* Native backend: the optional user namespace. The first process does all
 * mounts, the hostname and the loopback as host root, then unshares its
 * user namespace (so every other namespace and mount stays owned by the
 * host: root in the container cannot undo them), reports 'U' and waits;
 * the caller, root on the host, writes the id maps here and lets it go on
 * to switch identity and drop capabilities inside the new namespace.
 * /proc/<pid>/setgroups stays "allow": the writer is privileged, and the
 * identity switch calls setgroups().
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "native.h"

int skv__rt_userns_map(pid_t pid, const skv_container_spec *spec,
                       skv_error *err)
{
    static const char *const files[] = {"uid_map", "gid_map"};
    char map[64], path[64];
    snprintf(map, sizeof(map), "0 %u %u\n", spec->userns_base,
             spec->userns_count);
    for (size_t i = 0; i < SKV__ARRAY_LEN(files); i++) {
        snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, files[i]);
        int rc = skv__sys_write(path, map, err);
        if (rc < 0) {
            skv__err_prefix(err, "user namespace map");
            return rc;
        }
    }
    return 0;
}

int skv__rt_userns_chown_scratch(const skv_container_spec *spec,
                                 const char *dir, skv_error *err)
{
    static const char *const owned[] = {
        "scratch/upper", "scratch/upper/etc", "scratch/upper/etc/hosts",
        "scratch/upper/etc/hostname"};
    uid_t root = spec->userns_base;
    char path[PATH_MAX];
    for (size_t i = 0; i < SKV__ARRAY_LEN(owned); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, owned[i]);
        if (lchown(path, root, (gid_t)root) < 0)
            return skv__err_sys(err, errno, "chown %s to the container's "
                                "root (%u)", path, root);
    }
    return 0;
}
