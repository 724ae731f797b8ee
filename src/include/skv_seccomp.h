/*
 * Internal: seccomp profiles for containers (module src/secure/, built on
 * libseccomp). Not installed; names are skv__seccomp_*.
 *
 * The default profile is in the spirit of Docker's: the default action is
 * ALLOW and a fixed list of dangerous system calls fails with EPERM:
 * mount/umount/umount2/move_mount/fsopen/fsmount/fsconfig/fspick/open_tree/
 * mount_setattr, pivot_root, chroot is allowed (CAP_SYS_CHROOT governs it),
 * kexec_load/kexec_file_load, init_module/finit_module/delete_module/
 * create_module/query_module/get_kernel_syms, keyctl/add_key/request_key,
 * bpf, ptrace/process_vm_readv/process_vm_writev/kcmp, reboot, swapon/
 * swapoff, acct, settimeofday/clock_settime/clock_adjtime/adjtimex/stime,
 * unshare, setns, open_by_handle_at/name_to_handle_at, perf_event_open,
 * userfaultfd, lookup_dcookie, quotactl/quotactl_fd, nfsservctl, iopl/
 * ioperm, uselib, vm86/vm86old, sysfs, _sysctl, ustat, syslog,
 * fanotify_init, vhangup, and others listed in src/secure/seccomp_profile.c.
 * Argument filters: clone() with any CLONE_NEW* namespace flag fails with
 * EPERM; clone3() fails with ENOSYS (its flags live in memory seccomp cannot
 * inspect; libc then falls back to clone()); personality() is allowed only
 * for PER_LINUX, PER_LINUX32, their UNAME26 variants and the 0xffffffff
 * query. Every other call is allowed, so /bin/sh, coreutils and python run.
 *
 * Extension: skv__seccomp_profile_deny() adds a denial by name;
 * skv__seccomp_profile_allow() lifts a default denial (allow("clone")
 * lifts the namespace-flag filter, allow("clone3") the ENOSYS). Names are
 * checked with libseccomp: a name no architecture knows is SKV_EINVAL
 * ("unknown syscall 'foo'"); a real name absent on this architecture
 * (e.g. vm86 on x86_64) is accepted and has no effect.
 *
 * Loading: compile the profile in the parent (allocates; builds the BPF
 * program with libseccomp), then call skv__seccomp_install() in the child
 * between fork/clone and exec: it is async-signal-safe (no allocation, two
 * system calls) and sets no_new_privs itself, which the kernel requires for
 * unprivileged filters. skv__seccomp_load() does both in one step for code
 * that may allocate.
 *
 * Thread-safety: profiles and programs follow the default rule (read
 * concurrently, modify exclusively). A compiled program is immutable and can
 * be installed by many children at once.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKV_SECCOMP_H
#define SKV_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "sokovan/common.h"

typedef struct skv_seccomp_profile skv_seccomp_profile;
typedef struct skv_seccomp_prog skv_seccomp_prog;

/* A new profile holding the default denials described above. */
int skv__seccomp_profile_new(skv_seccomp_profile **out, skv_error *err);
void skv__seccomp_profile_free(skv_seccomp_profile *p); /* accepts NULL */

/* Deny one more system call (EPERM). SKV_EINVAL for an unknown name. */
int skv__seccomp_profile_deny(skv_seccomp_profile *p, const char *name,
                              skv_error *err);
/* Lift a denial (default or added). SKV_EINVAL for an unknown name; lifting
 * a call that is not denied is fine. */
int skv__seccomp_profile_allow(skv_seccomp_profile *p, const char *name,
                               skv_error *err);
/* Whether the profile currently denies the named call (name must be known). */
bool skv__seccomp_profile_denies(const skv_seccomp_profile *p,
                                 const char *name);

/* Build the BPF program for the native architecture. */
int skv__seccomp_compile(skv_seccomp_prog **out, const skv_seccomp_profile *p,
                         skv_error *err);
void skv__seccomp_prog_free(skv_seccomp_prog *prog); /* accepts NULL */
/* Number of BPF instructions (for logs and tests). */
size_t skv__seccomp_prog_len(const skv_seccomp_prog *prog);

/* Set no_new_privs and install the program in the calling thread's process.
 * Async-signal-safe. SKV_ESYS (err->sys_errno) when the kernel refuses.
 * err may be NULL; formatting the message is the only non-trivial work. */
int skv__seccomp_install(const skv_seccomp_prog *prog, skv_error *err);

/* Compile and install in one call (allocates; not for a vfork child). */
int skv__seccomp_load(const skv_seccomp_profile *p, skv_error *err);

#endif /* SKV_SECCOMP_H */
