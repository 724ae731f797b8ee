/* Atomic, resumable uploads: content goes to ".skv-upload.<id>" beside the
 * target and replaces it only at commit, after fsync, by renameat; so a
 * writer killed at any point leaves the old file or the new one. With an
 * upload id the temp file survives the writer and a later begin continues
 * where it stopped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_sha256.h"
#include "storage_internal.h"

struct skv_storage_upload {
    int dir_fd, fd;
    char base[NAME_MAX + 1];
    char tmp[NAME_MAX + 1];
    uint64_t off;
    uint32_t mode;
    bool hash, resumable, committed;
    skv__sha256 st;  /* OpenSSL: the manager hashes every byte stored */
};

void skv_storage_upload_options_init(skv_storage_upload_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof(*o));
    o->version = SKV_STORAGE_UPLOAD_OPTIONS_VERSION;
}

static int check_id(const char *id, skv_error *err)
{
    size_t n = id ? strnlen(id, 65) : 1;
    bool ok = n >= 1 && n <= 64;
    for (size_t i = 0; ok && id && i < n; i++)
        ok = (id[i] >= 'a' && id[i] <= 'z') || (id[i] >= 'A' && id[i] <= 'Z') ||
             (id[i] >= '0' && id[i] <= '9') || id[i] == '_' || id[i] == '-';
    return ok ? 0 : skv__err(err, SKV_EINVAL,
                             "upload id: use [A-Za-z0-9_-]{1,64}");
}

static int check_opts(const skv_storage_upload_options *o, skv_error *err)
{
    if (!o || o->version != SKV_STORAGE_UPLOAD_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "upload options version");
    if (o->resume && !o->upload_id)
        return skv__err(err, SKV_EINVAL, "resume needs an upload id");
    if (o->mode & ~07777u)
        return skv__err(err, SKV_EINVAL, "mode %o is not permission bits",
                        o->mode);
    return o->upload_id ? check_id(o->upload_id, err) : 0;
}

static void temp_name(skv_storage_upload *u, const char *id)
{
    uint64_t r = 0;
    if (!id && getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)u;
    if (id)
        snprintf(u->tmp, sizeof(u->tmp), SKV__ST_UPLOAD_PREFIX "%s", id);
    else
        snprintf(u->tmp, sizeof(u->tmp), SKV__ST_UPLOAD_PREFIX "%016llx",
                 (unsigned long long)r);
}

/* A resumed upload's hash must cover what the earlier try wrote. */
static int rehash(skv_storage_upload *u, skv_error *err)
{
    unsigned char buf[1 << 16];
    uint64_t pos = 0;
    while (pos < u->off) {
        ssize_t n = pread(u->fd, buf, sizeof(buf), (off_t)pos);
        if (n <= 0)
            return skv__err_sys(err, n < 0 ? errno : EIO, "re-read upload");
        skv__sha256_update(&u->st, buf, (size_t)n);
        pos += (uint64_t)n;
    }
    return 0;
}

static int open_temp(skv_storage_upload *u, const skv_storage_upload_options *o,
                     uint32_t uid, uint32_t gid, skv_error *err)
{
    int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
    flags |= !o->upload_id ? O_EXCL : o->resume ? 0 : O_TRUNC;
    u->fd = openat(u->dir_fd, u->tmp, flags, 0600);
    if (u->fd < 0)
        return skv__st_errno(err, errno, "create upload", u->base);
    struct stat st;
    if (fstat(u->fd, &st) < 0 || !S_ISREG(st.st_mode))
        return skv__err(err, SKV_EINVAL, "upload temp is not a file");
    u->off = (uint64_t)st.st_size;
    if (fchown(u->fd, uid, gid) < 0)
        return skv__err_sys(err, errno, "chown upload");
    if (lseek(u->fd, 0, SEEK_END) < 0)
        return skv__err_sys(err, errno, "seek upload");
    if (!u->hash)
        return 0;
    int rc = skv__sha256_init(&u->st, err);
    return rc ? rc : rehash(u, err);
}

static int prepare(skv_storage_host *h, const char *folder, const char *path,
                   skv_storage_upload *u, uint32_t *uid, uint32_t *gid,
                   skv_error *err)
{
    int f = skv__st_folder_fd(h, folder, err);
    if (f < 0)
        return f;
    struct stat st;
    if (fstat(f, &st) == 0) { /* new files belong to the folder's owner */
        *uid = st.st_uid;
        *gid = st.st_gid;
    }
    u->dir_fd = skv__st_open_parent(f, path, u->base, sizeof(u->base), err);
    close(f);
    if (u->dir_fd < 0)
        return u->dir_fd;
    if (!strncmp(u->base, SKV__ST_UPLOAD_PREFIX, strlen(SKV__ST_UPLOAD_PREFIX)))
        return skv__err(err, SKV_EINVAL, "'%s': reserved name", path);
    if (fstatat(u->dir_fd, u->base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISDIR(st.st_mode))
        return skv__err(err, SKV_EINVAL, "'%s' is a directory", path);
    return 0;
}

int skv_storage_upload_begin(skv_storage_host *h, const char *folder,
                             const char *path,
                             const skv_storage_upload_options *o,
                             skv_storage_upload **out, skv_error *err)
{
    if (!h || !out)
        return skv__err(err, SKV_EINVAL, "host or out is NULL");
    *out = NULL;
    int rc = check_opts(o, err);
    skv_storage_upload *u = rc < 0 ? NULL : skv__calloc(1, sizeof(*u));
    if (!u)
        return rc < 0 ? rc : skv__err(err, SKV_ENOMEM, "upload");
    u->dir_fd = u->fd = -1;
    u->hash = o->sha256;
    u->resumable = o->upload_id != NULL;
    u->mode = o->mode ? o->mode : 0644;
    uint32_t uid = 0, gid = 0;
    rc = prepare(h, folder, path, u, &uid, &gid, err);
    if (rc == 0) {
        temp_name(u, o->upload_id);
        rc = open_temp(u, o, uid, gid, err);
    }
    if (rc < 0) {
        u->resumable = u->resumable && u->fd >= 0 && o->resume;
        skv_storage_upload_close(u);
        return rc;
    }
    *out = u;
    return 0;
}

uint64_t skv_storage_upload_offset(const skv_storage_upload *u)
{
    return u ? u->off : 0;
}

int skv_storage_upload_write(skv_storage_upload *u, const void *buf,
                             size_t len, skv_error *err)
{
    if (!u || (!buf && len) || u->committed)
        return skv__err(err, SKV_EINVAL, "no open upload or no buffer");
    const char *p = buf;
    size_t left = len;
    while (left) {
        ssize_t n = write(u->fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return skv__st_errno(err, n < 0 ? errno : EIO, "write", u->base);
        p += n;
        left -= (size_t)n;
        u->off += (uint64_t)n;
    }
    if (u->hash)
        skv__sha256_update(&u->st, buf, len);
    return 0;
}

static int verify(skv_storage_upload *u, const uint8_t *expect, uint8_t *out,
                  skv_error *err)
{
    if (!u->hash)
        return (expect || out) ? skv__err(err, SKV_EINVAL,
                                          "upload began without sha256")
                               : 0;
    uint8_t d[SKV_STORAGE_SHA256_BYTES];
    int rc = skv__sha256_peek(&u->st, d, err);
    if (rc)
        return rc;
    if (out)
        memcpy(out, d, sizeof(d));
    if (expect && CRYPTO_memcmp(expect, d, sizeof(d)) != 0)
        return skv__err(err, SKV_EPROTO,
                        "sha256 of '%s' does not match: not replaced",
                        u->base);
    return 0;
}

int skv_storage_upload_commit(skv_storage_upload *u,
                              const uint8_t expect[SKV_STORAGE_SHA256_BYTES],
                              uint8_t out[SKV_STORAGE_SHA256_BYTES],
                              skv_error *err)
{
    if (!u || u->committed)
        return skv__err(err, SKV_ESTATE, "upload is not open");
    int rc = verify(u, expect, out, err);
    if (rc < 0)
        return rc;
    /* Data reaches the disk before the name does: after a crash the name
     * shows the whole new file or still the old one. */
    if (fchmod(u->fd, u->mode) < 0 || fsync(u->fd) < 0)
        return skv__st_errno(err, errno, "flush", u->base);
    if (renameat(u->dir_fd, u->tmp, u->dir_fd, u->base) < 0)
        return skv__st_errno(err, errno, "publish", u->base);
    fsync(u->dir_fd); /* the rename itself */
    u->committed = true;
    return 0;
}

static void release(skv_storage_upload *u, bool remove)
{
    if (remove && !u->committed && u->dir_fd >= 0 && u->tmp[0])
        unlinkat(u->dir_fd, u->tmp, 0);
    if (u->fd >= 0)
        close(u->fd);
    if (u->dir_fd >= 0)
        close(u->dir_fd);
    skv__sha256_free(&u->st);
    skv__free(u);
}

void skv_storage_upload_abort(skv_storage_upload *u)
{
    if (u)
        release(u, true);
}

void skv_storage_upload_close(skv_storage_upload *u)
{
    if (u)
        release(u, !u->resumable);
}
