/* bench/vfolder: write and read MB/s through the storage library's streamed
 * API (atomic upload: temp file, fsync, rename; ranged reader) against a
 * plain local copy (a cp-like read/write loop, fsync at the end) of the
 * same file, in one run, on the same filesystem. The page cache is dropped
 * for the file before every read (POSIX_FADV_DONTNEED after fsync), so
 * reads come from the device in both cases. One JSON line.
 *
 *   vfolder [--root DIR] [--quota none|auto|btrfs|xfs|ext4] [--mb N]
 *
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sokovan.h"

#define BUF (1u << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, const skv_error *e)
{
    fprintf(stderr, "vfolder: %s: %s\n", what,
            e ? e->message : strerror(errno));
    exit(1);
}

/* Evict a file's pages so the next read goes to the device. */
static void drop_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die(path, NULL);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
}

static void make_source(const char *path, unsigned mb, char *buf)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die(path, NULL);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (unsigned i = 0; i < mb; i++) {
        for (size_t j = 0; j < BUF; j += 8) { /* incompressible */
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(buf + j, &x, 8);
        }
        if (write(fd, buf, BUF) != (ssize_t)BUF)
            die("write source", NULL);
    }
    fsync(fd);
    close(fd);
}

static double local_copy(const char *src, const char *dst, char *buf)
{
    drop_cache(src);
    double t0 = now_s();
    int in = open(src, O_RDONLY), out = open(dst, O_WRONLY | O_CREAT | O_TRUNC,
                                             0644);
    if (in < 0 || out < 0)
        die("open local copy", NULL);
    ssize_t n;
    while ((n = read(in, buf, BUF)) > 0)
        if (write(out, buf, (size_t)n) != n)
            die("write local copy", NULL);
    fsync(out);
    close(in);
    close(out);
    return now_s() - t0;
}

static double local_read(const char *path, char *buf)
{
    drop_cache(path);
    double t0 = now_s();
    int fd = open(path, O_RDONLY);
    while (fd >= 0 && read(fd, buf, BUF) > 0)
        ;
    close(fd);
    return now_s() - t0;
}

static double lib_upload(skv_storage_host *h, const char *src, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    drop_cache(src);
    double t0 = now_s();
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    skv_storage_upload *u = NULL;
    if (skv_storage_upload_begin(h, "bench", "file", &o, &u, &e) != 0)
        die("upload", &e);
    int in = open(src, O_RDONLY);
    ssize_t n;
    while (in >= 0 && (n = read(in, buf, BUF)) > 0)
        if (skv_storage_upload_write(u, buf, (size_t)n, &e) != 0)
            die("upload write", &e);
    if (skv_storage_upload_commit(u, NULL, NULL, &e) != 0)
        die("commit", &e);
    skv_storage_upload_close(u);
    close(in);
    return now_s() - t0;
}

static double lib_download(skv_storage_host *h, const char *path, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    drop_cache(path);
    double t0 = now_s();
    skv_storage_reader *r = NULL;
    if (skv_storage_read_open(h, "bench", "file", 0, SKV_STORAGE_LEN_ALL, 0,
                              &r, &e) != 0)
        die("read", &e);
    size_t got = 1;
    while (got)
        if (skv_storage_read(r, buf, BUF, &got, &e) != 0)
            die("read", &e);
    skv_storage_read_close(r);
    return now_s() - t0;
}

int main(int argc, char **argv)
{
    const char *root = "/tmp", *quota = "none";
    unsigned mb = 512;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--root")) root = argv[i + 1];
        else if (!strcmp(argv[i], "--quota")) quota = argv[i + 1];
        else if (!strcmp(argv[i], "--mb")) mb = (unsigned)atoi(argv[i + 1]);
    }
    skv_error e = SKV_ERROR_INIT;
    char dir[4096], src[4200], local[4200], hostroot[4200], lib[4300];
    snprintf(dir, sizeof(dir), "%s/skv-bench-vfolder-XXXXXX", root);
    if (!mkdtemp(dir))
        die("mkdtemp", NULL);
    snprintf(src, sizeof(src), "%s/source", dir);
    snprintf(local, sizeof(local), "%s/local-copy", dir);
    snprintf(hostroot, sizeof(hostroot), "%s/host", dir);
    mkdir(hostroot, 0755);
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    o.root = hostroot;
    skv_storage_host *h = NULL;
    if (skv_storage_quota_parse(quota, &o.quota, &e) != 0 ||
        skv_storage_host_open(&h, &o, &e) != 0 ||
        skv_storage_folder_create(h, "bench", 0, 0, 0, &e) != 0)
        die("storage host", &e);
    snprintf(lib, sizeof(lib), "%s/folders/bench/file", hostroot);
    char *buf = malloc(BUF);
    make_source(src, mb, buf);
    double lw = local_copy(src, local, buf);
    double uw = lib_upload(h, src, buf);
    double lr = local_read(local, buf);
    double ur = lib_download(h, lib, buf);
    printf("{\"bench\":\"vfolder\",\"mb\":%u,\"quota\":\"%s\","
           "\"local_write_mbs\":%.1f,\"lib_write_mbs\":%.1f,"
           "\"local_read_mbs\":%.1f,\"lib_read_mbs\":%.1f,"
           "\"write_ratio\":%.3f,\"read_ratio\":%.3f}\n",
           mb, skv_storage_quota_name(skv_storage_host_quota(h)), mb / lw,
           mb / uw, mb / lr, mb / ur, lw / uw, lr / ur);
    skv_storage_folder_delete(h, "bench", NULL, 0, &e);
    skv_storage_trash_purge(h, NULL, &e);
    skv_storage_host_close(h);
    free(buf);
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
