/* bench/vfolder: virtual folder transfer and mount cost, in one run.
 *
 * Transfer (issue 18's target: >= 70 % of a local copy): a file of N MiB
 * (incompressible) on the filesystem under test goes
 *   - through the storage library in this process (lib.c), and
 *   - through the storage service: a real sokovan-manager and the sokovan
 *     CLI (service.c), upload and download,
 * each against a local copy of the same bytes on the same filesystem that
 * does the same I/O: a cp-like 1 MiB read/write loop with an fsync at the
 * end for the upload (which the manager commits by fsync + rename), and
 * without one for the download (the CLI writes its copy without fsync).
 * Every source's pages are dropped first (POSIX_FADV_DONTNEED after
 * fdatasync) so reads come from the device in both; every copy is written
 * back, untimed, before the next phase. The local copy and the service
 * transfer alternate --reps times; each ratio is taken within one
 * repetition and the median is reported.
 *
 * Mount (target: <= 1 ms per folder): mount.c.
 *
 *   vfolder [--root DIR] [--quota none|auto|btrfs|xfs|ext4] [--mb N]
 *           [--reps R] [--mounts N] [--mount-runs R] [--sha256]
 *           [--no-service] [--no-mount]
 *
 * --sha256: the CLI's transfers with --sha256 (the whole file hashed on
 * both sides and compared).
 *
 * The daemons come from <build>/bin (this program is <build>/bench/vfolder)
 * or $SKV_E2E_BIN. One JSON line on stdout.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_vfolder.h"

#define REPS_MAX 32

double bv_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void bv_die(const char *what, const skv_error *e)
{
    fprintf(stderr, "vfolder: %s: %s\n", what,
            e ? e->message : strerror(errno));
    exit(1);
}

void bv_drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        bv_die(path, NULL);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static void make_source(const char *path, unsigned mb, char *buf)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        bv_die(path, NULL);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < mb; i++) {
        for (size_t j = 0; j < BV_BUF; j += 8) { /* incompressible */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(buf + j, &x, 8);
        }
        if (write(fd, buf, BV_BUF) != (ssize_t)BV_BUF)
            bv_die("write source", NULL);
    }
    fsync(fd);
    close(fd);
}

double bv_local_copy(const char *src, const char *dst, int sync, char *buf)
{
    bv_drop_cache(src);
    double t0 = bv_now_s();
    int in = open(src, O_RDONLY);
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0)
        bv_die("open local copy", NULL);
    ssize_t n;
    while ((n = read(in, buf, BV_BUF)) > 0)
        if (write(out, buf, (size_t)n) != n)
            bv_die("write local copy", NULL);
    if (sync)
        fsync(out);
    close(in);
    close(out);
    return bv_now_s() - t0;
}

typedef struct opts {
    const char *root, *quota;
    unsigned mb;
    int reps, mounts, mount_runs, service, mount, sha256;
} opts;

static void usage(void)
{
    fprintf(stderr, "usage: vfolder [--root DIR] [--quota none|auto|btrfs|"
            "xfs|ext4] [--mb N] [--reps R] [--mounts N] [--mount-runs R] "
            "[--sha256] [--no-service] [--no-mount]\n");
    exit(2);
}

static void parse(int argc, char **argv, opts *o)
{
    *o = (opts){"/tmp", "none", 512, 3, 16, 60, 1, 1, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-service")) o->service = 0;
        else if (!strcmp(a, "--sha256")) o->sha256 = 1;
        else if (!strcmp(a, "--no-mount")) o->mount = 0;
        else if (!v) usage();
        else if (!strcmp(a, "--root")) o->root = v, i++;
        else if (!strcmp(a, "--quota")) o->quota = v, i++;
        else if (!strcmp(a, "--mb")) o->mb = (unsigned)atoi(v), i++;
        else if (!strcmp(a, "--reps")) o->reps = atoi(v), i++;
        else if (!strcmp(a, "--mounts")) o->mounts = atoi(v), i++;
        else if (!strcmp(a, "--mount-runs")) o->mount_runs = atoi(v), i++;
        else usage();
    }
    if (!o->mb || o->mb > 65536 || o->reps < 1 || o->reps > REPS_MAX ||
        o->mounts < 1 || o->mounts > 256 || o->mount_runs < 1)
        usage();
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    return v[n / 2];
}

/* Per repetition, MB/s: local copy with fsync, upload, local copy
 * without, download; and the two ratios. */
typedef struct svc_fig {
    double lw[REPS_MAX], up[REPS_MAX], lr[REPS_MAX], down[REPS_MAX];
    double up_ratio[REPS_MAX], down_ratio[REPS_MAX];
} svc_fig;

static void service_reps(bv_service *s, const opts *o, const char *dir,
                         const char *src, char *buf, svc_fig *f)
{
    char lc[PATH_MAX + 16], dl[PATH_MAX + 16], stored[PATH_MAX * 2];
    snprintf(lc, sizeof(lc), "%s/local-copy", dir);
    snprintf(dl, sizeof(dl), "%s/download", dir);
    for (int i = 0; i < o->reps; i++) {
        double lw = bv_local_copy(src, lc, 1, buf);
        double up = bv_service_upload(s, src);
        double down = bv_service_download(s, dl, stored, sizeof(stored));
        bv_drop_cache(dl);
        double lr = bv_local_copy(stored, lc, 0, buf);
        bv_drop_cache(lc);
        f->lw[i] = o->mb / lw;
        f->up[i] = o->mb / up;
        f->lr[i] = o->mb / lr;
        f->down[i] = o->mb / down;
        f->up_ratio[i] = lw / up;
        f->down_ratio[i] = lr / down;
        fprintf(stderr, "rep %d: local copy+fsync %.1f MB/s, upload %.1f "
                "(%.2f); local copy %.1f, download %.1f (%.2f)\n", i + 1,
                f->lw[i], f->up[i], f->up_ratio[i], f->lr[i], f->down[i],
                f->down_ratio[i]);
    }
}

static void print_service(const opts *o, svc_fig *f, const char *why)
{
    if (why) {
        printf(",\"service\":{\"skipped\":\"%s\"}", why);
        return;
    }
    int n = o->reps;
    printf(",\"service\":{\"reps\":%d,\"sha256\":%s,"
           "\"local_copy_fsync_mbs\":%.1f,"
           "\"upload_mbs\":%.1f,\"upload_ratio\":%.3f,"
           "\"local_copy_mbs\":%.1f,\"download_mbs\":%.1f,"
           "\"download_ratio\":%.3f}", n, o->sha256 ? "true" : "false",
           median(f->lw, n),
           median(f->up, n), median(f->up_ratio, n), median(f->lr, n),
           median(f->down, n), median(f->down_ratio, n));
}

static void run_service(const opts *o, const char *self, const char *dir,
                        const char *src, char *buf)
{
    char copy[PATH_MAX], bin[PATH_MAX + 8], why[512];
    const char *env = getenv("SKV_E2E_BIN");
    snprintf(copy, sizeof(copy), "%s", self);
    snprintf(bin, sizeof(bin), "%s/../bin", dirname(copy));
    if (env)
        snprintf(bin, sizeof(bin), "%s", env);
    bv_service *s = bv_service_start(bin, dir, o->quota, o->sha256, why,
                                     sizeof(why));
    svc_fig f;
    if (s)
        service_reps(s, o, dir, src, buf, &f);
    bv_service_stop(s);
    print_service(o, &f, s ? NULL : why);
}

static void run_mount(const opts *o, const char *dir)
{
    bv_mount m;
    char why[256];
    if (bv_mount_run(dir, o->quota, o->mounts, o->mount_runs, &m, why, sizeof(why)))
        printf(",\"mount\":{\"skipped\":\"%s\"}", why);
    else
        printf(",\"mount\":{\"folders\":%d,\"runs\":%d,\"start_ms\":%.3f,"
               "\"start_with_folders_ms\":%.3f,\"per_folder_ms\":%.3f}",
               m.folders, m.runs, m.base_ms, m.with_ms, m.per_folder_ms);
}

int main(int argc, char **argv)
{
    opts o;
    parse(argc, argv, &o);
    char dir[PATH_MAX], src[PATH_MAX + 16], local[PATH_MAX + 16];
    char host[PATH_MAX + 16];
    snprintf(dir, sizeof(dir), "%s/skv-bench-vfolder-XXXXXX", o.root);
    if (!mkdtemp(dir))
        bv_die("mkdtemp", NULL);
    snprintf(src, sizeof(src), "%s/source", dir);
    snprintf(local, sizeof(local), "%s/local-copy", dir);
    snprintf(host, sizeof(host), "%s/host", dir);
    char *buf = malloc(BV_BUF);
    make_source(src, o.mb, buf);
    double lw = bv_local_copy(src, local, 1, buf);
    bv_lib lib;
    bv_lib_run(host, o.quota, src, local, &lib, buf);
    printf("{\"bench\":\"vfolder\",\"mb\":%u,\"quota\":\"%s\","
           "\"local_write_mbs\":%.1f,\"lib_write_mbs\":%.1f,"
           "\"local_read_mbs\":%.1f,\"lib_read_mbs\":%.1f,"
           "\"write_ratio\":%.3f,\"read_ratio\":%.3f", o.mb, o.quota,
           o.mb / lw, o.mb / lib.write_s, o.mb / lib.local_read_s,
           o.mb / lib.read_s, lw / lib.write_s, lib.local_read_s / lib.read_s);
    if (o.service)
        run_service(&o, argv[0], dir, src, buf);
    if (o.mount)
        run_mount(&o, dir);
    printf("}\n");
    free(buf);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf --one-file-system %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
