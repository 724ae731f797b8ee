/* The default seccomp profile (Docker-like: allow by default, deny a fixed
 * list with EPERM) and its per-spec edits. The profile is a plain list of
 * names; numbers are resolved by libseccomp when compiling.
 * SPDX-License-Identifier: Apache-2.0 */
#include <seccomp.h>
#include <string.h>

#include "skv_internal.h"
#include "skv_seccomp_impl.h"

/* Calls that let a container escape, attack the kernel or reach host-wide
 * state. Each is fine in a VM, not in a shared node. */
static const char *const default_denied[] = {
    /* filesystems and the mount table */
    "mount", "umount", "umount2", "pivot_root", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    /* kernel code and restarting the host */
    "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "create_module", "query_module", "get_kernel_syms",
    "reboot", "uselib",
    /* the kernel keyring is not namespaced */
    "keyctl", "add_key", "request_key",
    /* BPF, tracing and peeking at other processes */
    "bpf", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "perf_event_open", "lookup_dcookie", "userfaultfd", "fanotify_init",
    /* host-wide clocks, swap, accounting, quotas, logs */
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "stime",
    "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "nfsservctl",
    "syslog", "_sysctl", "sysfs", "ustat", "vhangup",
    /* new namespaces and file handles that bypass the mount namespace */
    "unshare", "setns", "open_by_handle_at", "name_to_handle_at",
    /* raw hardware access and legacy modes */
    "iopl", "ioperm", "vm86", "vm86old",
};

const char *const *skv__seccomp_default_list(size_t *count)
{
    *count = SKV__ARRAY_LEN(default_denied);
    return default_denied;
}

int skv__seccomp_check_name(const char *name, skv_error *err)
{
    if (!name || !*name)
        return skv__err(err, SKV_EINVAL, "empty syscall name");
    if (seccomp_syscall_resolve_name(name) == __NR_SCMP_ERROR)
        return skv__err(err, SKV_EINVAL, "unknown syscall '%s'", name);
    return 0;
}

static ssize_t find(const skv_seccomp_profile *p, const char *name)
{
    for (size_t i = 0; i < p->n; i++)
        if (strcmp(p->names[i], name) == 0)
            return (ssize_t)i;
    return -1;
}

static int push(skv_seccomp_profile *p, const char *name, skv_error *err)
{
    if (find(p, name) >= 0)
        return 0;
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 64;
        char **nn = skv__reallocarray(p->names, ncap, sizeof(*nn));
        if (!nn)
            return skv__err(err, SKV_ENOMEM, "seccomp profile");
        p->names = nn;
        p->cap = ncap;
    }
    char *dup = skv__strdup(name);
    if (!dup)
        return skv__err(err, SKV_ENOMEM, "seccomp profile");
    p->names[p->n++] = dup;
    return 0;
}

int skv__seccomp_profile_new(skv_seccomp_profile **out, skv_error *err)
{
    skv_seccomp_profile *p = skv__calloc(1, sizeof(*p));
    if (!p)
        return skv__err(err, SKV_ENOMEM, "seccomp profile");
    p->clone_ns_filter = true;
    p->clone3_enosys = true;
    p->personality_filter = true;
    for (size_t i = 0; i < SKV__ARRAY_LEN(default_denied); i++) {
        int rc = push(p, default_denied[i], err);
        if (rc < 0) {
            skv__seccomp_profile_free(p);
            return rc;
        }
    }
    *out = p;
    return 0;
}

void skv__seccomp_profile_free(skv_seccomp_profile *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        skv__free(p->names[i]);
    skv__free(p->names);
    skv__free(p);
}

int skv__seccomp_profile_deny(skv_seccomp_profile *p, const char *name,
                              skv_error *err)
{
    if (!p)
        return skv__err(err, SKV_EINVAL, "seccomp profile is NULL");
    int rc = skv__seccomp_check_name(name, err);
    if (rc < 0)
        return rc;
    return push(p, name, err);
}

int skv__seccomp_profile_allow(skv_seccomp_profile *p, const char *name,
                               skv_error *err)
{
    if (!p)
        return skv__err(err, SKV_EINVAL, "seccomp profile is NULL");
    int rc = skv__seccomp_check_name(name, err);
    if (rc < 0)
        return rc;
    if (strcmp(name, "clone") == 0)
        p->clone_ns_filter = false;
    else if (strcmp(name, "clone3") == 0)
        p->clone3_enosys = false;
    else if (strcmp(name, "personality") == 0)
        p->personality_filter = false;
    ssize_t i = find(p, name);
    if (i >= 0) {
        skv__free(p->names[i]);
        p->names[i] = p->names[--p->n];
    }
    return 0;
}

bool skv__seccomp_profile_denies(const skv_seccomp_profile *p,
                                 const char *name)
{
    return p && name && find(p, name) >= 0;
}
