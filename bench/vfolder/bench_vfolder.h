/* bench/vfolder: the parts in other files (see main.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_BENCH_VFOLDER_H
#define SKV_BENCH_VFOLDER_H

#include <stddef.h>

#include "sokovan.h"

#define BV_BUF (1u << 20)

/* main.c */
double bv_now_s(void);
void bv_die(const char *what, const skv_error *e);
/* Write back and evict a file's pages: the next read goes to the device. */
void bv_drop_cache(const char *path);
/* Seconds for a cp-like 1 MiB read/write loop of src into dst (source
 * pages dropped first); fsync at the end when sync. */
double bv_local_copy(const char *src, const char *dst, int sync, char *buf);

/* lib.c: the storage library's streamed API on host root hostroot. */
typedef struct bv_lib {
    double write_s, read_s, local_read_s;
} bv_lib;
void bv_lib_run(const char *hostroot, const char *quota, const char *src,
                const char *local, bv_lib *out, char *buf);

/* service.c: a real sokovan-manager with storage host "bench" at
 * <dir>/svc, and the sokovan CLI (vfolder upload / download). */
typedef struct bv_service bv_service;
/* NULL with why filled when the daemons are not there (a skip). sha256:
 * transfers with --sha256 (the whole file hashed on both sides). */
bv_service *bv_service_start(const char *bin, const char *dir,
                             const char *quota, int sha256, char *why,
                             size_t cap);
/* Seconds for `sokovan vfolder upload bench SRC file` (source pages
 * dropped first; the manager fsyncs at commit). */
double bv_service_upload(bv_service *s, const char *src);
/* Seconds for `sokovan vfolder download bench file DST` (the stored
 * file's pages dropped first); *stored: the stored file's path. */
double bv_service_download(bv_service *s, const char *dst, char *stored,
                           size_t cap);
void bv_service_stop(bv_service *s);

/* mount.c: what N folder mounts add to a kernel's start through the
 * manager's plan (skv_storage_mount_plan) and the agent's mount path
 * (kernel.create's mounts into the container spec), then the runtime's
 * create + start of /bin/true; median over runs, 0 and n folders
 * alternating. 0, or -1 with why (a skip). */
typedef struct bv_mount {
    int folders, runs;
    double base_ms, with_ms, per_folder_ms;
} bv_mount;
int bv_mount_run(const char *dir, const char *quota, int folders, int runs,
                 bv_mount *out, char *why, size_t cap);

#endif
