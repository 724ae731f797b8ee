/* Applying a capability plan in a freshly forked child: raw system calls
 * only, no allocation, so it is safe between fork/clone and exec. The order
 * of the steps is explained in skv_caps.h.
 * Raw set*id system calls change the calling thread only, which is the
 * whole process in a single-threaded child (glibc's wrappers would try to
 * signal other threads, which a clone(CLONE_VM) child must not do).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "skv_caps.h"
#include "skv_internal.h"

#define SKV__MAX_GROUPS 65536

static int drop_bounding(uint64_t keep, skv_error *err)
{
    for (int c = 0; c < 64; c++) {
        int r = prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0);
        if (r < 0)
            break; /* past the kernel's last capability */
        if (r == 0 || (keep & SKV__CAP_BIT(c)))
            continue;
        if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) != 0)
            return skv__err_sys(err, errno,
                                "dropping capability %d from the bounding set",
                                c);
    }
    return 0;
}

static int switch_ids(const skv_caps_plan *plan, skv_error *err)
{
    if (syscall(SYS_setgroups, plan->ngroups, plan->groups) != 0)
        return skv__err_sys(err, errno, "setgroups(%zu groups)", plan->ngroups);
    if (syscall(SYS_setresgid, plan->gid, plan->gid, plan->gid) != 0)
        return skv__err_sys(err, errno, "setresgid(%u)", (unsigned)plan->gid);
    if (syscall(SYS_setresuid, plan->uid, plan->uid, plan->uid) != 0)
        return skv__err_sys(err, errno, "setresuid(%u)", (unsigned)plan->uid);
    return 0;
}

static int set_sets(uint64_t keep, skv_error *err)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) != 0)
        return skv__err_sys(err, errno, "capget");
    uint64_t perm = (uint64_t)data[0].permitted |
                    ((uint64_t)data[1].permitted << 32);
    /* capset can only shrink the permitted set. The inheritable set stays
     * empty: with file-inheritable bits a program could otherwise gain
     * capabilities at exec (the runc/moby fix for CVE-2022-24769). */
    uint64_t want = keep & perm;
    for (int i = 0; i < 2; i++) {
        uint32_t part = (uint32_t)(want >> (32 * i));
        data[i].effective = part;
        data[i].permitted = part;
        data[i].inheritable = 0;
    }
    if (syscall(SYS_capset, &hdr, data) != 0)
        return skv__err_sys(err, errno, "capset");
    return 0;
}

int skv__caps_apply(const skv_caps_plan *plan, skv_error *err)
{
    if (!plan)
        return skv__err(err, SKV_EINVAL, "capability plan is NULL");
    if (plan->set_ids && (plan->ngroups > SKV__MAX_GROUPS ||
                          (plan->ngroups > 0 && !plan->groups)))
        return skv__err(err, SKV_EINVAL,
                        "bad supplementary group list (%zu groups)",
                        plan->ngroups);
    int rc = drop_bounding(plan->keep, err);
    if (rc < 0)
        return rc;
    /* EINVAL: kernel without ambient capabilities, nothing to clear. */
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 &&
        errno != EINVAL)
        return skv__err_sys(err, errno, "clearing ambient capabilities");
    if (plan->set_ids && (rc = switch_ids(plan, err)) < 0)
        return rc;
    uid_t final_uid = plan->set_ids ? plan->uid : geteuid();
    rc = set_sets(final_uid == 0 ? plan->keep : 0, err);
    if (rc < 0)
        return rc;
    if (plan->no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return skv__err_sys(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
    return 0;
}
