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
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/wait.h>
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

/* The helper: unshare the user namespace, say so, wait for the end. Only
 * async-signal-safe calls (the caller may be multi-threaded). */
static int userns_helper(int ready_w, int done_r)
{
    char b = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
    if (write(ready_w, &b, 1) != 1 || b != 'u')
        return 1;
    while (read(done_r, &b, 1) < 0 && errno == EINTR)
        ;
    return 0;
}

int skv__rt_userns_fd(const skv_container_spec *spec, int *out,
                      skv_error *err)
{
    int ready[2], done[2];
    int rc = skv__rt_pipe_pair(ready, done, "the id-map helper", err);
    if (rc < 0)
        return rc;
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(done[1]);            /* else its own copy keeps it waiting */
        _exit(userns_helper(ready[1], done[0]));
    }
    int e = errno;
    close(ready[1]);
    close(done[0]);
    char b = 0;
    if (pid < 0)
        rc = skv__err_sys(err, e, "fork of the id-map helper");
    else if (read(ready[0], &b, 1) != 1 || b != 'u')
        rc = skv__err(err, SKV_ENOTSUP, "id-map helper: cannot create a user "
                      "namespace");
    if (rc == 0)
        rc = skv__rt_userns_map(pid, spec, err);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)pid);
    int fd = rc == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    if (rc == 0 && fd < 0)
        rc = skv__err_sys(err, errno, "open %s", path);
    close(done[1]);                 /* the helper ends */
    close(ready[0]);
    while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    *out = fd;
    return rc;
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
