/* The cgroup v2 device filter: an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE, assembled here instruction by instruction
 * from the allow-list, loaded with bpf(2) and attached to the cgroup
 * directory (BPF_CGROUP_DEVICE). The kernel runs it for every open and
 * mknod of a device node by a task in the cgroup (or below); returning 0
 * makes the call fail with EPERM.
 *
 * The program: load the context (access_type = access << 16 | type,
 * major, minor) into r2..r5, then one block per rule that jumps to the
 * next block on any mismatch and returns 1 otherwise; after the last block
 * it returns 0 (default deny).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

#define R0 0
#define R1 1 /* context */
#define R2 2 /* device type (BPF_DEVCG_DEV_*) */
#define R3 3 /* requested access (BPF_DEVCG_ACC_*) */
#define R4 4 /* major */
#define R5 5 /* minor */

#define PREAMBLE_LEN 6
#define MAX_BLOCK_LEN 6

typedef struct prog {
    struct bpf_insn *insn;
    size_t n;
} prog;

static void emit(prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off,
                 int32_t imm)
{
    struct bpf_insn *i = &p->insn[p->n++];
    memset(i, 0, sizeof(*i));
    i->code = code;
    i->dst_reg = dst & 0xf;
    i->src_reg = src & 0xf;
    i->off = off;
    i->imm = imm;
}

static void preamble(prog *p)
{
    emit(p, BPF_LDX | BPF_MEM | BPF_W, R2, R1,
         (int16_t)offsetof(struct bpf_cgroup_dev_ctx, access_type), 0);
    emit(p, BPF_ALU | BPF_MOV | BPF_X, R3, R2, 0, 0);
    emit(p, BPF_ALU | BPF_RSH | BPF_K, R3, 0, 0, 16);
    emit(p, BPF_ALU | BPF_AND | BPF_K, R2, 0, 0, 0xffff);
    emit(p, BPF_LDX | BPF_MEM | BPF_W, R4, R1,
         (int16_t)offsetof(struct bpf_cgroup_dev_ctx, major), 0);
    emit(p, BPF_LDX | BPF_MEM | BPF_W, R5, R1,
         (int16_t)offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
}

static int32_t access_bits(const char *access)
{
    int32_t bits = 0;
    for (const char *c = access; *c; c++)
        bits |= *c == 'r' ? BPF_DEVCG_ACC_READ
              : *c == 'w' ? BPF_DEVCG_ACC_WRITE : BPF_DEVCG_ACC_MKNOD;
    return bits;
}

/* One rule: every test jumps past the block's end when it fails. */
static void rule_block(prog *p, const skv_cgroup_device *d)
{
    const int32_t all = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE |
                        BPF_DEVCG_ACC_MKNOD;
    int32_t bits = access_bits(d->access);
    size_t len = 3 + (bits != all) + (d->major >= 0) + (d->minor >= 0);
    size_t end = p->n + len;
#define SKIP ((int16_t)(end - (p->n + 1)))
    emit(p, BPF_JMP | BPF_JNE | BPF_K, R2, 0, SKIP,
         d->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR);
    if (bits != all) /* asks for anything not granted */
        emit(p, BPF_JMP | BPF_JSET | BPF_K, R3, 0, SKIP, all & ~bits);
    if (d->major >= 0)
        emit(p, BPF_JMP | BPF_JNE | BPF_K, R4, 0, SKIP, (int32_t)d->major);
    if (d->minor >= 0)
        emit(p, BPF_JMP | BPF_JNE | BPF_K, R5, 0, SKIP, (int32_t)d->minor);
#undef SKIP
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 1);
    emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
}

static int assemble(prog *p, const skv_cgroup_device *rules, size_t n,
                    skv_error *err)
{
    p->n = 0;
    p->insn = skv__calloc(PREAMBLE_LEN + n * MAX_BLOCK_LEN + 2,
                          sizeof(*p->insn));
    if (!p->insn)
        return skv__err(err, SKV_ENOMEM, "device program");
    preamble(p);
    for (size_t i = 0; i < n; i++)
        rule_block(p, &rules[i]);
    emit(p, BPF_ALU64 | BPF_MOV | BPF_K, R0, 0, 0, 0);
    emit(p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
    return 0;
}

static long sys_bpf(int cmd, union bpf_attr *attr)
{
    return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

/* Privilege or kernel support missing: the caller may go on without the
 * filter (the runtime then drops CAP_MKNOD). */
static int refused(int e, const char *what, skv_error *err)
{
    if (e == EPERM || e == ENOSYS || e == EOPNOTSUPP)
        return skv__err(err, SKV_ENOTSUP,
                        "eBPF device filter unavailable: %s: %s (needs "
                        "CAP_BPF/CAP_SYS_ADMIN and CONFIG_CGROUP_BPF)", what,
                        strerror(e));
    return skv__err_sys(err, e, "%s", what);
}

static void fill_load(union bpf_attr *a, const prog *p, char *log,
                      size_t logsz)
{
    memset(a, 0, sizeof(*a));
    a->prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
    a->insns = (uint64_t)(uintptr_t)p->insn;
    a->insn_cnt = (uint32_t)p->n;
    a->license = (uint64_t)(uintptr_t)"GPL";
    if (log) {
        a->log_buf = (uint64_t)(uintptr_t)log;
        a->log_size = (uint32_t)logsz;
        a->log_level = 1;
    }
}

/* Load; on a verifier rejection, load again with a log for the message
 * (the log costs time, so the first try goes without). */
static int load(int *fd, const prog *p, skv_error *err)
{
    union bpf_attr a;
    fill_load(&a, p, NULL, 0);
    long r = sys_bpf(BPF_PROG_LOAD, &a);
    if (r >= 0) {
        *fd = (int)r;
        return 0;
    }
    int e = errno;
    if (e != EINVAL && e != EACCES)
        return refused(e, "bpf(BPF_PROG_LOAD)", err);
    char log[4096] = "";
    fill_load(&a, p, log, sizeof(log));
    r = sys_bpf(BPF_PROG_LOAD, &a);
    if (r >= 0) { /* loads with a log but not without: keep it anyway */
        *fd = (int)r;
        return 0;
    }
    for (char *c = log; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return skv__err_sys(err, e, "bpf(BPF_PROG_LOAD) of %zu instructions "
                        "rejected: %.160s", p->n, log);
}

static int attach(int prog_fd, const char *dir, skv_error *err)
{
    char path[PATH_MAX];
    int rc = skv__sys_path(path, sizeof(path), dir, err);
    if (rc < 0)
        return rc;
    int cg_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg_fd < 0)
        return skv__err_sys(err, errno, "open %s", path);
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.target_fd = (uint32_t)cg_fd;
    a.attach_bpf_fd = (uint32_t)prog_fd;
    a.attach_type = BPF_CGROUP_DEVICE;
    /* Multi: a parent's program (systemd's, a nesting agent's) stays in
     * force next to ours, and ours does not block programs below. */
    a.attach_flags = BPF_F_ALLOW_MULTI;
    rc = 0;
    if (sys_bpf(BPF_PROG_ATTACH, &a) < 0)
        rc = refused(errno, "bpf(BPF_PROG_ATTACH)", err);
    close(cg_fd);
    if (rc < 0)
        skv__err_prefix(err, "%s", dir);
    return rc;
}

int skv__cg_bpf_devices_attach(int *prog_fd, const char *dir,
                               const skv_cgroup_device *rules, size_t n,
                               skv_error *err)
{
    prog p;
    int fd = -1;
    int rc = assemble(&p, rules, n, err);
    if (rc < 0)
        return rc;
    rc = load(&fd, &p, err);
    skv__free(p.insn);
    if (rc == 0)
        rc = attach(fd, dir, err);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    skv__log(SKV_LOG_DEBUG, "cgroup", "%s: device program of %zu rules "
             "attached", dir, n);
    *prog_fd = fd;
    return 0;
}

void skv__cg_bpf_devices_detach(int prog_fd, const char *dir)
{
    char path[PATH_MAX];
    int cg_fd = -1;
    if (skv__sys_path(path, sizeof(path), dir, NULL) == 0)
        cg_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cg_fd >= 0) {
        union bpf_attr a;
        memset(&a, 0, sizeof(a));
        a.target_fd = (uint32_t)cg_fd;
        a.attach_bpf_fd = (uint32_t)prog_fd;
        a.attach_type = BPF_CGROUP_DEVICE;
        if (sys_bpf(BPF_PROG_DETACH, &a) < 0)
            skv__log(SKV_LOG_WARN, "cgroup", "%s: detaching the old device "
                     "program: %s", dir, strerror(errno));
        close(cg_fd);
    }
    close(prog_fd);
}
