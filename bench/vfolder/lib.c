/* bench/vfolder, library part: the storage library's streamed upload
 * (temp file, fsync, rename) and ranged reader, in this process.
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_vfolder.h"

static double lib_upload(skv_storage_host *h, const char *src, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    bv_drop_cache(src);
    double t0 = bv_now_s();
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    skv_storage_upload *u = NULL;
    if (skv_storage_upload_begin(h, "bench", "file", &o, &u, &e) != 0)
        bv_die("upload", &e);
    int in = open(src, O_RDONLY);
    ssize_t n;
    while (in >= 0 && (n = read(in, buf, BV_BUF)) > 0)
        if (skv_storage_upload_write(u, buf, (size_t)n, &e) != 0)
            bv_die("upload write", &e);
    if (skv_storage_upload_commit(u, NULL, NULL, &e) != 0)
        bv_die("commit", &e);
    skv_storage_upload_close(u);
    close(in);
    return bv_now_s() - t0;
}

static double lib_download(skv_storage_host *h, const char *path, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    bv_drop_cache(path);
    double t0 = bv_now_s();
    skv_storage_reader *r = NULL;
    if (skv_storage_read_open(h, "bench", "file", 0, SKV_STORAGE_LEN_ALL, 0,
                              &r, &e) != 0)
        bv_die("read", &e);
    size_t got = 1;
    while (got)
        if (skv_storage_read(r, buf, BV_BUF, &got, &e) != 0)
            bv_die("read", &e);
    skv_storage_read_close(r);
    return bv_now_s() - t0;
}

static double local_read(const char *path, char *buf)
{
    bv_drop_cache(path);
    double t0 = bv_now_s();
    int fd = open(path, O_RDONLY);
    while (fd >= 0 && read(fd, buf, BV_BUF) > 0)
        ;
    close(fd);
    return bv_now_s() - t0;
}

void bv_lib_run(const char *hostroot, const char *quota, const char *src,
                const char *local, bv_lib *out, char *buf)
{
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    o.root = hostroot;
    skv_storage_host *h = NULL;
    mkdir(hostroot, 0755);
    if (skv_storage_quota_parse(quota, &o.quota, &e) != 0 ||
        skv_storage_host_open(&h, &o, &e) != 0 ||
        skv_storage_folder_create(h, "bench", 0, 0, 0, &e) != 0)
        bv_die("storage host", &e);
    char path[4200];
    snprintf(path, sizeof(path), "%s/folders/bench/file", hostroot);
    out->write_s = lib_upload(h, src, buf);
    out->local_read_s = local_read(local, buf);
    out->read_s = lib_download(h, path, buf);
    skv_storage_folder_delete(h, "bench", NULL, 0, &e);
    skv_storage_trash_purge(h, NULL, &e);
    skv_storage_host_close(h);
}
