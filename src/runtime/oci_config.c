/* config.json (OCI runtime spec 1.0) from a container spec: the same
 * namespaces, mounts, limits, capabilities and seccomp denials as the native
 * backend, so runc runs an equivalent container.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "oci.h"

/* Names checked against the profile (skv_seccomp.h lists the defaults);
 * spec denials are added on top. */
static const char *const seccomp_candidates[] = {
    "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "kexec_load",
    "kexec_file_load", "init_module", "finit_module", "delete_module",
    "create_module", "query_module", "get_kernel_syms", "reboot", "uselib",
    "keyctl", "add_key", "request_key", "bpf", "ptrace", "process_vm_readv",
    "process_vm_writev", "kcmp", "perf_event_open", "lookup_dcookie",
    "userfaultfd", "fanotify_init", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "swapon", "swapoff", "acct", "quotactl",
    "quotactl_fd", "nfsservctl", "syslog", "_sysctl", "sysfs", "ustat",
    "vhangup", "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
    "iopl", "ioperm"};

static void mount_entry(skv__json *j, const char *dest, const char *type,
                        const char *src, const char *const *opts)
{
    skv__json_open(j, NULL, '{');
    skv__json_str(j, "destination", dest);
    skv__json_str(j, "type", type);
    skv__json_str(j, "source", src);
    skv__json_open(j, "options", '[');
    for (; *opts; opts++)
        skv__json_str(j, NULL, *opts);
    skv__json_close(j, ']');
    skv__json_close(j, '}');
}

static void mounts(skv__json *j, const skv_container_spec *spec)
{
    static const char *const proc[] = {"nosuid", "noexec", "nodev", NULL};
    static const char *const dev[] = {"nosuid", "strictatime", "mode=755",
                                      "size=65536k", NULL};
    static const char *const pts[] = {"nosuid", "noexec", "newinstance",
                                      "ptmxmode=0666", "mode=0620", NULL};
    static const char *const shm[] = {"nosuid", "noexec", "nodev",
                                      "mode=1777", "size=65536k", NULL};
    static const char *const sys[] = {"nosuid", "noexec", "nodev", "ro", NULL};
    static const char *const rw[] = {"rbind", "rw", NULL};
    static const char *const ro[] = {"rbind", "ro", NULL};
    skv__json_open(j, "mounts", '[');
    mount_entry(j, "/proc", "proc", "proc", proc);
    mount_entry(j, "/dev", "tmpfs", "tmpfs", dev);
    mount_entry(j, "/dev/pts", "devpts", "devpts", pts);
    mount_entry(j, "/dev/shm", "tmpfs", "shm", shm);
    mount_entry(j, "/sys", "sysfs", "sysfs", sys);
    for (size_t i = 0; i < spec->n_mounts; i++)
        mount_entry(j, spec->mounts[i].target, "bind", spec->mounts[i].host,
                    spec->mounts[i].readonly ? ro : rw);
    skv__json_close(j, ']');
}

static void cap_list(skv__json *j, const char *key, uint64_t mask)
{
    skv__json_open(j, key, '[');
    for (int c = 0; c < 64; c++) {
        char name[64];
        if (!(mask & SKV__CAP_BIT(c)) ||
            skv__caps_name(name, sizeof(name), c, NULL) < 0)
            continue;
        for (char *p = name; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        skv__json_str(j, NULL, name);
    }
    skv__json_close(j, ']');
}

static void process(skv__json *j, const skv_container_spec *spec,
                    const native_plan *p)
{
    skv__json_open(j, "process", '{');
    skv__json_bool(j, "terminal", false);
    skv__json_open(j, "user", '{');
    skv__json_int(j, "uid", spec->uid);
    skv__json_int(j, "gid", spec->gid);
    skv__json_close(j, '}');
    skv__json_open(j, "args", '[');
    for (size_t i = 0; i < spec->argc; i++)
        skv__json_str(j, NULL, spec->argv[i]);
    skv__json_close(j, ']');
    skv__json_open(j, "env", '[');
    for (size_t i = 0; i < p->n_envp; i++)
        skv__json_str(j, NULL, p->envp[i]);
    skv__json_close(j, ']');
    skv__json_str(j, "cwd", spec->cwd);
    /* A non-root user ends with no capabilities, as in the native backend. */
    uint64_t eff = spec->uid == 0 ? p->caps.keep : 0;
    skv__json_open(j, "capabilities", '{');
    cap_list(j, "bounding", p->caps.keep);
    cap_list(j, "effective", eff);
    cap_list(j, "permitted", eff);
    skv__json_close(j, '}');
    skv__json_bool(j, "noNewPrivileges", true);
    skv__json_close(j, '}');
}

static void resources(skv__json *j, const skv_container_spec *spec)
{
    const skv_container_limits *l = &spec->limits;
    skv__json_open(j, "resources", '{');
    skv__json_open(j, "devices", '[');
    skv__json_open(j, NULL, '{');
    skv__json_bool(j, "allow", false);
    skv__json_str(j, "access", "rwm");
    skv__json_close(j, '}');
    for (size_t i = 0; i < spec->n_devices; i++) {
        const skv__rt_device *d = &spec->devices[i];
        char type[2] = {d->type, '\0'};
        skv__json_open(j, NULL, '{');
        skv__json_bool(j, "allow", true);
        skv__json_str(j, "type", type);
        skv__json_int(j, "major", d->major);
        skv__json_int(j, "minor", d->minor);
        skv__json_str(j, "access", d->access);
        skv__json_close(j, '}');
    }
    skv__json_close(j, ']');
    if (l->memory_bytes) {
        skv__json_open(j, "memory", '{');
        skv__json_int(j, "limit", (int64_t)l->memory_bytes);
        skv__json_int(j, "swap", (int64_t)l->memory_bytes); /* swap off */
        skv__json_close(j, '}');
    }
    skv__json_open(j, "cpu", '{');
    if (l->cpu_quota_us) {
        skv__json_int(j, "quota", (int64_t)l->cpu_quota_us);
        skv__json_int(j, "period", l->cpu_period_us ? (int64_t)l->cpu_period_us
                                                     : 100000);
    }
    if (spec->cpus)
        skv__json_str(j, "cpus", spec->cpus);
    if (spec->mems)
        skv__json_str(j, "mems", spec->mems);
    skv__json_close(j, '}');
    if (l->pids_max) {
        skv__json_open(j, "pids", '{');
        skv__json_int(j, "limit", (int64_t)l->pids_max);
        skv__json_close(j, '}');
    }
    skv__json_close(j, '}');
}

static int seccomp(skv__json *j, const skv_container_spec *spec,
                   skv_error *err)
{
    skv_seccomp_profile *prof = NULL;
    int rc = skv__seccomp_profile_new(&prof, err);
    for (size_t i = 0; rc == 0 && i < spec->n_syscalls; i++)
        rc = spec->syscalls[i].allow
                 ? skv__seccomp_profile_allow(prof, spec->syscalls[i].name, err)
                 : skv__seccomp_profile_deny(prof, spec->syscalls[i].name, err);
    if (rc < 0) {
        skv__seccomp_profile_free(prof);
        return rc;
    }
    skv__json_open(j, "seccomp", '{');
    skv__json_str(j, "defaultAction", "SCMP_ACT_ALLOW");
    skv__json_open(j, "syscalls", '[');
    skv__json_open(j, NULL, '{');
    skv__json_open(j, "names", '[');
    for (size_t i = 0; i < SKV__ARRAY_LEN(seccomp_candidates); i++)
        if (skv__seccomp_profile_denies(prof, seccomp_candidates[i]))
            skv__json_str(j, NULL, seccomp_candidates[i]);
    for (size_t i = 0; i < spec->n_syscalls; i++)
        if (!spec->syscalls[i].allow)
            skv__json_str(j, NULL, spec->syscalls[i].name);
    skv__json_close(j, ']');
    skv__json_str(j, "action", "SCMP_ACT_ERRNO");
    skv__json_int(j, "errnoRet", 1);
    skv__json_close(j, '}');
    skv__json_close(j, ']');
    skv__json_close(j, '}');
    skv__seccomp_profile_free(prof);
    return 0;
}

static void linux_devices(skv__json *j, const skv_container_spec *spec)
{
    skv__json_open(j, "devices", '[');
    for (size_t i = 0; i < spec->n_devices; i++) {
        const skv__rt_device *d = &spec->devices[i];
        char type[2] = {d->type, '\0'};
        skv__json_open(j, NULL, '{');
        skv__json_str(j, "path", d->path);
        skv__json_str(j, "type", type);
        skv__json_int(j, "major", d->major);
        skv__json_int(j, "minor", d->minor);
        skv__json_int(j, "fileMode", 0660);
        skv__json_int(j, "uid", spec->uid);
        skv__json_int(j, "gid", spec->gid);
        skv__json_close(j, '}');
    }
    skv__json_close(j, ']');
}

int skv__rt_oci_config(skv__json *j, const skv_container_spec *spec,
                       const native_plan *p, const char *rootfs_dir,
                       const char *cgroups_path, skv_error *err)
{
    static const char *const ns[] = {"pid", "mount", "uts", "ipc", "cgroup",
                                     "network"};
    skv__json_open(j, NULL, '{');
    skv__json_str(j, "ociVersion", "1.0.2");
    process(j, spec, p);
    skv__json_open(j, "root", '{');
    skv__json_str(j, "path", rootfs_dir);
    skv__json_bool(j, "readonly", false);
    skv__json_close(j, '}');
    skv__json_str(j, "hostname", spec->hostname);
    mounts(j, spec);
    skv__json_open(j, "linux", '{');
    skv__json_open(j, "namespaces", '[');
    size_t n_ns = spec->network == SKV_NETWORK_NONE ? 6 : 5;
    for (size_t i = 0; i < n_ns; i++) {
        skv__json_open(j, NULL, '{');
        skv__json_str(j, "type", ns[i]);
        skv__json_close(j, '}');
    }
    skv__json_close(j, ']');
    skv__json_str(j, "cgroupsPath", cgroups_path);
    resources(j, spec);
    linux_devices(j, spec);
    int rc = seccomp(j, spec, err);
    skv__json_close(j, '}');
    skv__json_close(j, '}');
    if (rc == 0 && j->failed)
        rc = skv__err(err, SKV_ENOMEM, "config.json");
    return rc;
}
