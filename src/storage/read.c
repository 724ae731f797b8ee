/* Streamed ranged reads of a file in a folder: the building block of
 * downloads that resume at an offset. Never holds more than the caller's
 * buffer; optionally hashes what was read.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_sha256.h"
#include "storage_internal.h"

#define SKV__ST_PREFETCH_MAX (16u << 20)

struct skv_storage_reader {
    int fd;
    uint64_t pos, end, size;
    bool hash;
    skv__sha256 st;  /* OpenSSL: the manager hashes every byte read */
};

static int open_file(skv_storage_host *h, const char *folder,
                     const char *path, struct stat *st, skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    int f = skv__st_folder_fd(h, folder, err);
    if (f < 0)
        return f;
    int fd = skv__st_open_beneath(f, path, O_RDONLY, 0, err);
    close(f);
    if (fd < 0)
        return fd;
    if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return skv__err(err, SKV_EINVAL, "'%s' is not a regular file", path);
    }
    return fd;
}

/* A ranged reader is usually one request of a transfer that asks for the
 * following ranges next (with several in flight): have the kernel start
 * reading them now, so they come from the page cache (a new descriptor per
 * request starts without readahead history). */
static void prefetch_next(const skv_storage_reader *r)
{
    uint64_t len = r->end - r->pos, ahead = 4 * len;
    if (ahead > SKV__ST_PREFETCH_MAX)
        ahead = SKV__ST_PREFETCH_MAX;
    if (len && r->end < r->size)
        posix_fadvise(r->fd, (off_t)r->end, (off_t)ahead,
                      POSIX_FADV_WILLNEED);
}

int skv_storage_read_open(skv_storage_host *h, const char *folder,
                          const char *path, uint64_t offset, uint64_t length,
                          unsigned flags, skv_storage_reader **out,
                          skv_error *err)
{
    if (!out || (flags & ~SKV_STORAGE_READ_SHA256))
        return skv__err(err, SKV_EINVAL, "bad out pointer or flags");
    *out = NULL;
    struct stat st;
    int fd = open_file(h, folder, path, &st, err);
    if (fd < 0)
        return fd;
    uint64_t size = (uint64_t)st.st_size;
    skv_storage_reader *r = offset > size ? NULL : skv__calloc(1, sizeof(*r));
    if (!r) {
        close(fd);
        return offset > size
                   ? skv__err(err, SKV_ERANGE, "offset %llu is past the end "
                              "of '%s' (%llu bytes)", (unsigned long long)offset,
                              path, (unsigned long long)size)
                   : skv__err(err, SKV_ENOMEM, "reader");
    }
    r->fd = fd;
    r->pos = offset;
    r->size = size;
    r->end = length > size - offset ? size : offset + length;
    r->hash = flags & SKV_STORAGE_READ_SHA256;
    int rc = r->hash ? skv__sha256_init(&r->st, err) : 0;
    if (rc) {
        skv_storage_read_close(r);
        return rc;
    }
    posix_fadvise(fd, (off_t)offset, 0, POSIX_FADV_SEQUENTIAL);
    prefetch_next(r);
    *out = r;
    return 0;
}

int skv_storage_read(skv_storage_reader *r, void *buf, size_t cap,
                     size_t *got, skv_error *err)
{
    if (!r || !buf || !got)
        return skv__err(err, SKV_EINVAL, "reader, buffer or got is NULL");
    *got = 0;
    uint64_t left = r->end - r->pos;
    size_t want = left < cap ? (size_t)left : cap;
    ssize_t n;
    do
        n = want ? pread(r->fd, buf, want, (off_t)r->pos) : 0;
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return skv__err_sys(err, errno, "read");
    /* A file truncated under us ends the range early: *got 0. */
    r->pos += (uint64_t)n;
    if (r->hash)
        skv__sha256_update(&r->st, buf, (size_t)n);
    *got = (size_t)n;
    return 0;
}

uint64_t skv_storage_reader_file_size(const skv_storage_reader *r)
{
    return r ? r->size : 0;
}

int skv_storage_reader_sha256(skv_storage_reader *r,
                              uint8_t out[SKV_STORAGE_SHA256_BYTES],
                              skv_error *err)
{
    if (!r || !out || !r->hash)
        return skv__err(err, SKV_EINVAL,
                        "reader not opened with SKV_STORAGE_READ_SHA256");
    return skv__sha256_peek(&r->st, out, err);
}

void skv_storage_read_close(skv_storage_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    skv__sha256_free(&r->st);
    skv__free(r);
}
