/*
 * Internal: Linux capabilities and the identity switch for containers
 * (module src/secure/, names resolved with libcap). Not installed; names
 * are skv__caps_*.
 *
 * A capability set is a uint64_t mask, bit n = capability n (CAP_CHOWN is
 * bit 0); Linux defines fewer than 64. The default kept set is Docker's:
 * CHOWN, DAC_OVERRIDE, FSETID, FOWNER, MKNOD, NET_RAW, SETGID, SETUID,
 * SETFCAP, SETPCAP, NET_BIND_SERVICE, SYS_CHROOT, KILL, AUDIT_WRITE.
 *
 * skv__caps_apply() runs in the container's child after fork/clone and
 * before exec. It is async-signal-safe (raw prctl/capset/set*id system
 * calls, no allocation) and works in this order, which matters:
 *   1. drop every capability outside plan->keep from the bounding set
 *      (needs CAP_SETPCAP, so before anything else is dropped);
 *   2. clear the ambient set;
 *   3. if plan->set_ids: setgroups(groups), setresgid(gid), setresuid(uid).
 *      PR_SET_KEEPCAPS is left off, so switching to a non-zero uid makes the
 *      kernel clear permitted/effective: a non-root user ends with NO
 *      capabilities (root keeps plan->keep);
 *   4. capset: permitted = effective = keep for uid 0, empty for any other
 *      uid; inheritable always empty (with file-inheritable bits it would
 *      let a program gain capabilities at exec, CVE-2022-24769);
 *   5. if plan->no_new_privs: prctl(PR_SET_NO_NEW_PRIVS, 1) so setuid binaries
 *      and file capabilities cannot regain anything.
 * Load seccomp after this (skv__seccomp_install), then exec.
 *
 * Thread-safety: all functions are reentrant; skv__caps_apply() changes the
 * calling process and is meant for a single-threaded child.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKV_CAPS_H
#define SKV_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sokovan/common.h"

#define SKV__CAP_BIT(n) ((uint64_t)1 << (n))

/* Docker's default set (see above). */
uint64_t skv__caps_default_mask(void);

/* Capability number for "CAP_SYS_ADMIN", "cap_sys_admin" or "SYS_ADMIN"
 * (libcap's cap_from_name, case-insensitive, "CAP_" optional).
 * SKV_EINVAL "unknown capability 'X'" otherwise. */
int skv__caps_parse(int *cap_out, const char *name, skv_error *err);

/* "cap_chown" style name (libcap), into buf. SKV_EINVAL for a bad number,
 * SKV_ERANGE if buf is too small. */
int skv__caps_name(char *buf, size_t bufsz, int cap, skv_error *err);

/* Edit a mask by name: drops first, then adds (so drop ALL + add CHOWN keeps
 * only CHOWN). The word "ALL" means every capability. On error the mask is
 * unchanged and the message names the bad entry. */
int skv__caps_edit(uint64_t *mask, const char *const *add, size_t nadd,
                   const char *const *drop, size_t ndrop, skv_error *err);

/* What skv__caps_apply() does. Initialise with skv__caps_plan_init(). */
typedef struct skv_caps_plan {
    uint64_t keep;          /* capabilities kept (for uid 0) */
    bool set_ids;           /* switch identity (step 3) */
    uid_t uid;
    gid_t gid;
    const gid_t *groups;    /* supplementary groups (borrowed); may be NULL */
    size_t ngroups;         /* 0: clear all supplementary groups */
    bool no_new_privs;      /* step 5 */
} skv_caps_plan;

/* keep = default mask, set_ids = false, no_new_privs = true. */
void skv__caps_plan_init(skv_caps_plan *plan);

/* Apply the plan to the calling process (see the order above).
 * SKV_EINVAL for a bad plan (ngroups > 65536, groups NULL with ngroups > 0),
 * SKV_ESYS naming the failing step otherwise. Async-signal-safe except for
 * formatting err's message on failure (pass NULL in a vfork child). */
int skv__caps_apply(const skv_caps_plan *plan, skv_error *err);

/* The calling process's sets (libcap cap_get_proc, and PR_CAPBSET_READ for
 * the bounding set); any out-pointer may be NULL. */
int skv__caps_current(uint64_t *effective, uint64_t *permitted,
                      uint64_t *inheritable, uint64_t *bounding,
                      skv_error *err);

#endif /* SKV_CAPS_H */
