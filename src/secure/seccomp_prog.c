/* Compiling a profile into a BPF program with libseccomp (in the parent,
 * where allocating is fine) and installing it in a child (two system
 * calls, async-signal-safe).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "skv_internal.h"
#include "skv_seccomp_impl.h"

struct skv_seccomp_prog {
    struct sock_filter *insns;
    unsigned short len;
};

static int rule(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned n,
                const struct scmp_arg_cmp *cmp, const char *what,
                skv_error *err)
{
    int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
    if (rc < 0)
        return skv__err_sys(err, -rc, "seccomp rule for %s", what);
    return 0;
}

static int add_clone_rules(scmp_filter_ctx ctx, skv_error *err)
{
    static const unsigned long ns_flags[] = {
        CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER,
        CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP,
    };
    /* One rule per flag: a rule's comparisons are ANDed, rules are ORed. */
    for (size_t i = 0; i < SKV__ARRAY_LEN(ns_flags); i++) {
        struct scmp_arg_cmp c = SCMP_A0_64(SCMP_CMP_MASKED_EQ, ns_flags[i],
                                           ns_flags[i]);
        int rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, &c,
                      "clone", err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* personality() is allowed for 0 (PER_LINUX), 8 (PER_LINUX32), 0x20000 and
 * 0x20008 (their UNAME26 forms) and the 0xffffffff query. libseccomp cannot
 * AND two comparisons on one argument, so "any other value" is written as
 * single masked comparisons: deny when a bit b outside {3,17} is set while
 * bit 3, bit 17 or the next such bit is clear. Any value other than the
 * allowed ones has such a pair (if bits 3 and 17 are both set, some run of
 * the other 30 bits ends before a clear one); 0xffffffff has none. */
static int add_personality_rules(scmp_filter_ctx ctx, skv_error *err)
{
    int others[30], n = 0;
    for (int b = 0; b < 32; b++)
        if (b != 3 && b != 17)
            others[n++] = b;
    for (int i = 0; i < n; i++) {
        uint32_t bit = 1u << others[i];
        uint32_t partners[3] = {1u << 3, 1u << 17, 1u << others[(i + 1) % n]};
        for (int k = 0; k < 3; k++) {
            struct scmp_arg_cmp c =
                SCMP_A0_32(SCMP_CMP_MASKED_EQ, bit | partners[k], bit);
            int rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality),
                          1, &c, "personality", err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

static int add_rules(scmp_filter_ctx ctx, const skv_seccomp_profile *p,
                     skv_error *err)
{
    for (size_t i = 0; i < p->n; i++) {
        int nr = seccomp_syscall_resolve_name(p->names[i]);
        if (nr == __NR_SCMP_ERROR)
            return skv__err(err, SKV_EINVAL, "unknown syscall '%s'",
                            p->names[i]);
        /* Calls absent on every loaded architecture are skipped by
         * libseccomp itself (pseudo numbers). */
        int rc = rule(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0, NULL, p->names[i],
                      err);
        if (rc < 0)
            return rc;
    }
    int rc = 0;
    if (p->clone_ns_filter && !skv__seccomp_profile_denies(p, "clone"))
        rc = add_clone_rules(ctx, err);
    if (rc == 0 && p->clone3_enosys && !skv__seccomp_profile_denies(p, "clone3"))
        rc = rule(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, NULL,
                  "clone3", err);
    if (rc == 0 && p->personality_filter &&
        !skv__seccomp_profile_denies(p, "personality"))
        rc = add_personality_rules(ctx, err);
    return rc;
}

static int add_arches(scmp_filter_ctx ctx, skv_error *err)
{
    /* 32-bit programs on x86_64 enter through other syscall tables; without
     * these they would be killed (bad architecture) rather than filtered. */
    if (seccomp_arch_native() != SCMP_ARCH_X86_64)
        return 0;
    static const uint32_t extra[] = {SCMP_ARCH_X86, SCMP_ARCH_X32};
    for (size_t i = 0; i < SKV__ARRAY_LEN(extra); i++) {
        int rc = seccomp_arch_add(ctx, extra[i]);
        if (rc < 0 && rc != -EEXIST)
            return skv__err_sys(err, -rc, "seccomp_arch_add");
    }
    return 0;
}

static int export_prog(skv_seccomp_prog **out, scmp_filter_ctx ctx,
                       skv_error *err)
{
    int fd = memfd_create("skv-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return skv__err_sys(err, errno, "memfd_create");
    int rc = seccomp_export_bpf(ctx, fd);
    struct stat st;
    if (rc < 0) {
        rc = skv__err_sys(err, -rc, "seccomp_export_bpf");
    } else if (fstat(fd, &st) != 0) {
        rc = skv__err_sys(err, errno, "fstat of the BPF program");
    } else if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) ||
               st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        rc = skv__err(err, SKV_ERANGE, "BPF program of %lld bytes",
                      (long long)st.st_size);
    }
    skv_seccomp_prog *prog = NULL;
    if (rc == 0) {
        prog = skv__calloc(1, sizeof(*prog));
        if (prog)
            prog->insns = skv__malloc((size_t)st.st_size);
        if (!prog || !prog->insns)
            rc = skv__err(err, SKV_ENOMEM, "BPF program");
        else if (pread(fd, prog->insns, (size_t)st.st_size, 0) != st.st_size)
            rc = skv__err_sys(err, errno, "reading the BPF program");
    }
    close(fd);
    if (rc < 0) {
        skv__seccomp_prog_free(prog);
        return rc;
    }
    prog->len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
    *out = prog;
    return 0;
}

int skv__seccomp_compile(skv_seccomp_prog **out, const skv_seccomp_profile *p,
                         skv_error *err)
{
    if (!out || !p)
        return skv__err(err, SKV_EINVAL, "seccomp compile: NULL argument");
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return skv__err(err, SKV_ENOMEM, "seccomp_init");
    int rc = add_arches(ctx, err);
    if (rc == 0)
        rc = add_rules(ctx, p, err);
    if (rc == 0)
        rc = export_prog(out, ctx, err);
    seccomp_release(ctx);
    return rc;
}

void skv__seccomp_prog_free(skv_seccomp_prog *prog)
{
    if (!prog)
        return;
    skv__free(prog->insns);
    skv__free(prog);
}

size_t skv__seccomp_prog_len(const skv_seccomp_prog *prog)
{
    return prog ? prog->len : 0;
}

int skv__seccomp_install(const skv_seccomp_prog *prog, skv_error *err)
{
    if (!prog)
        return skv__err(err, SKV_EINVAL, "seccomp program is NULL");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return skv__err_sys(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
    struct sock_fprog fp = {prog->len, prog->insns};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) == 0)
        return 0;
    if (errno == ENOSYS &&
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp, 0, 0) == 0)
        return 0;
    return skv__err_sys(err, errno, "installing the seccomp filter");
}

int skv__seccomp_load(const skv_seccomp_profile *p, skv_error *err)
{
    skv_seccomp_prog *prog;
    int rc = skv__seccomp_compile(&prog, p, err);
    if (rc < 0)
        return rc;
    rc = skv__seccomp_install(prog, err);
    skv__seccomp_prog_free(prog);
    return rc;
}
