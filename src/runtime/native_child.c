/* The container's first process, between clone() and exec: mounts, devices,
 * pivot_root, hostname, loopback, identity, capabilities and seccomp.
 * Runs in a process forked from the library's caller, so it only makes
 * system calls on data the parent prepared (see native_plan); relative
 * paths after chdir(merged) avoid building strings here.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "native.h"
#include "skv_caps.h"
#include "skv_seccomp.h"

static _Noreturn void fail(const skv__rt_launch *l, const char *what, int e)
{
    skv__rt_msg_send(l->report_fd, 'E', e, what, NULL);
    _exit(127);
}

#define TRY(l, expr, what)                                                     \
    do {                                                                       \
        if ((expr) < 0)                                                        \
            fail((l), (what), errno);                                          \
    } while (0)

static int mkdir_ok(const char *path, mode_t mode)
{
    return mkdir(path, mode) < 0 && errno != EEXIST ? -1 : 0;
}

/* mkdir -p of a path relative to the cwd (the new root), refusing symlinks
 * so an image cannot redirect a bind mount onto a host path. */
static int mkdir_rel_nofollow(const char *rel, bool last_is_file)
{
    char buf[PATH_MAX];
    size_t n = strlen(rel);
    if (n >= sizeof(buf))
        return -1;
    memcpy(buf, rel, n + 1);
    for (char *p = buf;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        struct stat st;
        bool last = saved == '\0';
        if (buf[0] && lstat(buf, &st) == 0) {
            if (S_ISLNK(st.st_mode)) {
                errno = ELOOP;
                return -1;
            }
        } else if (buf[0] && last && last_is_file) {
            int fd = open(buf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                          0644);
            if (fd < 0)
                return -1;
            close(fd);
        } else if (buf[0] && mkdir_ok(buf, 0755) < 0) {
            return -1;
        }
        if (last)
            return 0;
        *p = saved;
    }
}

static void setup_dev(const skv__rt_launch *l, const native_plan *p)
{
    static const struct {
        const char *name;
        unsigned maj, min;
    } nodes[] = {{"dev/null", 1, 3},   {"dev/zero", 1, 5},
                 {"dev/full", 1, 7},   {"dev/random", 1, 8},
                 {"dev/urandom", 1, 9}, {"dev/tty", 5, 0}};
    TRY(l, mkdir_ok("dev", 0755), "mkdir /dev");
    TRY(l, mount("tmpfs", "dev", "tmpfs", MS_NOSUID | MS_STRICTATIME,
                 "mode=755,size=65536k"), "mount /dev tmpfs");
    for (size_t i = 0; i < SKV__ARRAY_LEN(nodes); i++) {
        TRY(l, mknod(nodes[i].name, S_IFCHR | 0666,
                     makedev(nodes[i].maj, nodes[i].min)), nodes[i].name);
        TRY(l, chmod(nodes[i].name, 0666), nodes[i].name);
    }
    TRY(l, mkdir_ok("dev/pts", 0755), "mkdir /dev/pts");
    TRY(l, mount("devpts", "dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                 "newinstance,ptmxmode=0666,mode=0620"), "mount devpts");
    TRY(l, symlink("pts/ptmx", "dev/ptmx"), "symlink /dev/ptmx");
    TRY(l, mkdir_ok("dev/shm", 01777), "mkdir /dev/shm");
    TRY(l, mount("shm", "dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                 "mode=1777,size=65536k"), "mount /dev/shm");
    TRY(l, symlink("/proc/self/fd", "dev/fd"), "symlink /dev/fd");
    TRY(l, symlink("/proc/self/fd/0", "dev/stdin"), "symlink /dev/stdin");
    TRY(l, symlink("/proc/self/fd/1", "dev/stdout"), "symlink /dev/stdout");
    TRY(l, symlink("/proc/self/fd/2", "dev/stderr"), "symlink /dev/stderr");
    for (size_t i = 0; i < p->spec->n_devices; i++) {
        const skv__rt_device *d = &p->spec->devices[i];
        const char *rel = d->path + 1;
        mode_t mode = (d->type == 'b' ? S_IFBLK : S_IFCHR) | 0660;
        TRY(l, mkdir_rel_nofollow(rel, true), d->path);
        unlink(rel);
        TRY(l, mknod(rel, mode, makedev(d->major, d->minor)), d->path);
        TRY(l, chown(rel, p->host_uid, p->host_gid), d->path);
    }
}

static void setup_mounts(const skv__rt_launch *l, const native_plan *p)
{
    TRY(l, mkdir_ok("proc", 0555), "mkdir /proc");
    TRY(l, mount("proc", "proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                 NULL), "mount /proc");
    TRY(l, mkdir_ok("sys", 0555), "mkdir /sys");
    TRY(l, mount("sysfs", "sys", "sysfs",
                 MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL),
        "mount /sys read-only");
    setup_dev(l, p);
    TRY(l, mkdir_ok("tmp", 01777), "mkdir /tmp");
    /* chmod only when needed: on an image directory it copies /tmp up
     * into the writable layer, which costs a directory create there. */
    struct stat tst;
    TRY(l, stat("tmp", &tst), "stat /tmp");
    if ((tst.st_mode & 07777) != 01777)
        TRY(l, chmod("tmp", 01777), "chmod /tmp");
    for (size_t i = 0; i < p->spec->n_mounts; i++) {
        const skv__rt_mount *m = &p->spec->mounts[i];
        const char *rel = m->target + 1;
        TRY(l, mkdir_rel_nofollow(rel, !p->mount_is_dir[i]), m->target);
        TRY(l, mount(m->host, rel, NULL, MS_BIND | MS_REC, NULL), m->target);
        if (m->readonly)
            TRY(l, mount(NULL, rel, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
                         NULL), m->target);
    }
}

static void loopback_up(const skv__rt_launch *l)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    TRY(l, s, "socket for the loopback");
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    memcpy(ifr.ifr_name, "lo", 3);
    TRY(l, ioctl(s, SIOCGIFFLAGS, &ifr), "read loopback flags");
    ifr.ifr_flags |= IFF_UP;
    TRY(l, ioctl(s, SIOCSIFFLAGS, &ifr), "bring the loopback up");
    close(s);
}

/* With a user namespace: the image layer as an idmapped mount at
 * scratch/lower, through the caller's user namespace descriptor (fd 5),
 * so files owned by host root appear owned by the container's root.
 * Returns NULL when it worked, else the step that failed (the kernel or
 * the image's file system lacks idmapped mounts): the plain layer is used
 * then. */
static const char *idmap_lower(const skv__rt_launch *l, const native_plan *p)
{
    int fd = (int)syscall(SYS_open_tree, AT_FDCWD, p->lower,
                          OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (fd < 0)
        return "open_tree";
    struct mount_attr a;
    memset(&a, 0, sizeof(a));
    a.attr_set = MOUNT_ATTR_IDMAP;
    a.userns_fd = (uint64_t)l->keep_fd;
    const char *failed = NULL;
    if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a,
                sizeof(a)) < 0)
        failed = "mount_setattr";
    else if (syscall(SYS_move_mount, fd, "", AT_FDCWD, p->idmap_lower,
                     MOVE_MOUNT_F_EMPTY_PATH) < 0)
        failed = "move_mount";
    close(fd);
    return failed;
}

/* Returns the failed idmap step as idmap_lower() does (NULL: idmapped or
 * no user namespace). */
static const char *setup_root(const skv__rt_launch *l, const native_plan *p)
{
    TRY(l, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL),
        "make mounts private");
    const char *no_idmap = NULL;
    const char *opts = p->overlay_opts;
    if (p->userns && l->keep_fd >= 0) {
        no_idmap = idmap_lower(l, p);
        if (!no_idmap)
            opts = p->overlay_opts_idmap;
    }
    TRY(l, mount("overlay", p->merged, "overlay", 0, opts),
        "mount the overlay root");
    TRY(l, chdir(p->merged), "chdir to the new root");
    setup_mounts(l, p);
    /* pivot_root(".", "."): the old root ends up stacked under the new one
     * and is detached right away, so no host path stays reachable. */
    TRY(l, (int)syscall(SYS_pivot_root, ".", "."), "pivot_root");
    TRY(l, umount2(".", MNT_DETACH), "detach the old root");
    TRY(l, chdir("/"), "chdir /");
    TRY(l, sethostname(p->spec->hostname, strlen(p->spec->hostname)),
        "sethostname");
    if (p->spec->network == SKV_NETWORK_NONE)
        loopback_up(l);
    return no_idmap;
}

void skv__rt_execvpe(char *const argv[], char *const envp[],
                     const char *path_env)
{
    const char *cmd = argv[0];
    if (strchr(cmd, '/')) {
        execve(cmd, argv, envp);
        return;
    }
    char buf[PATH_MAX];
    size_t clen = strlen(cmd);
    int first = ENOENT; /* like execvp: EACCES beats a later ENOENT */
    for (const char *d = path_env; d && *d;) {
        const char *end = strchr(d, ':');
        size_t dlen = end ? (size_t)(end - d) : strlen(d);
        if (dlen && dlen + clen + 2 < sizeof(buf)) {
            memcpy(buf, d, dlen);
            buf[dlen] = '/';
            memcpy(buf + dlen + 1, cmd, clen + 1);
            execve(buf, argv, envp);
            if (errno != ENOENT && errno != ENOTDIR)
                first = errno;
        }
        d = end ? end + 1 : NULL;
    }
    errno = first;
}

static void exec_cmd(const native_plan *p)
{
    skv__rt_execvpe(p->spec->argv, p->envp, p->path_env);
    static const char msg[] = "sokovan: cannot execute the command\n";
    if (write(2, msg, sizeof(msg) - 1) < 0)
        _exit(127);
    _exit(127);
}

/* After the mounts: a user namespace of its own (the other namespaces stay
 * owned by the host's), then wait until the caller wrote the id maps. The
 * report says whether the image layer is idmapped (1) or which step of it
 * failed (0). */
static void enter_userns(const skv__rt_launch *l, const char *no_idmap)
{
    char b;
    TRY(l, unshare(CLONE_NEWUSER), "unshare the user namespace");
    skv__rt_msg_send(l->report_fd, 'U', no_idmap ? 0 : 1, no_idmap, NULL);
    if (read(l->go_fd, &b, 1) != 1)
        _exit(1);
}

void skv__rt_native_child(const skv__rt_launch *l, void *payload)
{
    const native_plan *p = payload;
    char b;
    umask(022);
    int fifo = open(p->fifo_path, O_RDWR | O_CLOEXEC);
    TRY(l, fifo, "open the exec fifo");
    /* The mounts run while the caller moves this process into the cgroup
     * (nothing here runs the container's code or forks), so the two do not
     * wait for each other; the go-ahead comes before anything the limits
     * must cover, and before the cgroup namespace, whose root is the
     * cgroup this process is in when it unshares. */
    const char *no_idmap = p->isolate ? setup_root(l, p) : NULL;
    if (read(l->go_fd, &b, 1) != 1)
        _exit(1);
    /* In the cgroup now, so the policy's nodes are within cpuset.mems. */
    TRY(l, skv__rt_mempolicy_apply(p), "set the memory policy");
    /* 'm': no device allow-list on this host, so no CAP_MKNOD. */
    skv_caps_plan caps = p->caps;
    if (b == 'm')
        caps.keep &= ~SKV__CAP_BIT(CAP_MKNOD);
    if (p->isolate)
        TRY(l, unshare(CLONE_NEWCGROUP), "unshare the cgroup namespace");
    if (p->userns)
        enter_userns(l, no_idmap);
    close(l->go_fd);
    TRY(l, chdir(p->spec->cwd), "chdir to the working directory");
    if (p->isolate) {
        TRY(l, skv__caps_apply(&caps, NULL), "drop capabilities / switch "
            "user");
        TRY(l, skv__seccomp_install(p->prog, NULL), "install seccomp");
    }
    skv__rt_msg_send(l->report_fd, 'R', 0, NULL, NULL);
    close(l->report_fd);
    ssize_t n;
    do {
        n = read(fifo, &b, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(1);
    close(fifo);
    exec_cmd(p);
}
