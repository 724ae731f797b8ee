/* What the store knows of an image beyond its files, kept in
 * <dir>/<name>/info as "size=<bytes>\ndigest=sha256:<hex>\n":
 * - size: the bytes of the root file system's regular files, each inode
 *   once (images link one busybox binary under hundreds of names);
 * - digest: the sha256 of the archive the image was imported from, so an
 *   operator can compare it with `sha256sum` of the file; none for an
 *   import from an unpacked directory.
 * The file is written into the import's temporary directory, so an image
 * imported by this version always has it. Images imported before get their
 * size computed on first request and cached (they have no digest).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "image_int.h"
#include "sokovan/image.h"

/* A regular file with more than one link: its size counts once. */
typedef struct linked_file {
    ino_t ino;
    off_t size;
} linked_file;

/* nftw has no user pointer: the walk's state is per thread. */
typedef struct du_state {
    uint64_t bytes;
    linked_file *linked;
    size_t n, cap;
    bool oom;
} du_state;

static _Thread_local du_state *du;

static int du_visit(const char *path, const struct stat *st, int type,
                    struct FTW *f)
{
    (void)path;
    (void)f;
    if (type != FTW_F || !S_ISREG(st->st_mode))
        return 0;
    if (st->st_nlink < 2) {
        du->bytes += (uint64_t)st->st_size;
        return 0;
    }
    if (du->n == du->cap) {
        size_t cap = du->cap ? du->cap * 2 : 256;
        linked_file *v = skv__reallocarray(du->linked, cap, sizeof(*v));
        if (!v) {
            du->oom = true;
            return 1;
        }
        du->linked = v;
        du->cap = cap;
    }
    du->linked[du->n++] = (linked_file){st->st_ino, st->st_size};
    return 0;
}

static int by_ino(const void *a, const void *b)
{
    ino_t x = ((const linked_file *)a)->ino, y = ((const linked_file *)b)->ino;
    return x < y ? -1 : x > y;
}

/* Sum of the multiply-linked inodes, each once (one file system). */
static uint64_t linked_bytes(du_state *s)
{
    if (s->n)
        qsort(s->linked, s->n, sizeof(*s->linked), by_ino);
    uint64_t sum = 0;
    for (size_t i = 0; i < s->n; i++)
        if (i == 0 || s->linked[i].ino != s->linked[i - 1].ino)
            sum += (uint64_t)s->linked[i].size;
    return sum;
}

static int rootfs_bytes(const char *rootfs, uint64_t *out, skv_error *err)
{
    du_state s;
    memset(&s, 0, sizeof(s));
    du = &s;
    int r = nftw(rootfs, du_visit, 32, FTW_PHYS);
    du = NULL;
    int e = errno;
    *out = s.bytes + linked_bytes(&s);
    skv__free(s.linked);
    if (s.oom)
        return skv__err(err, SKV_ENOMEM, "image size: out of memory");
    if (r != 0)
        return skv__err_sys(err, e, "image size: walk %s", rootfs);
    return 0;
}

static int write_info(const char *image_dir, uint64_t size,
                      const char *hex, skv_error *err)
{
    char path[PATH_MAX], text[128];
    snprintf(path, sizeof(path), "%s/info", image_dir);
    int n = snprintf(text, sizeof(text), "size=%" PRIu64 "\n", size);
    if (hex && hex[0])
        snprintf(text + n, sizeof(text) - (size_t)n, "digest=sha256:%s\n",
                 hex);
    return skv__rt_write_file(path, text, strlen(text), err);
}

int skv__img_info_write(const char *image_dir, const char *src, bool is_dir,
                        skv_error *err)
{
    char rootfs[PATH_MAX], hex[65] = "", real[PATH_MAX];
    snprintf(rootfs, sizeof(rootfs), "%s/rootfs", image_dir);
    uint64_t size = 0;
    int rc = rootfs_bytes(rootfs, &size, err);
    if (rc == 0 && !is_dir) {
        if (!realpath(src, real))
            return skv__err_sys(err, errno, "image: resolve %s", src);
        rc = skv__img_sha256_file(real, hex, err);
    }
    return rc ? rc : write_info(image_dir, size, hex, err);
}

/* The info text of an existing image (NULL text: none written yet). */
static int read_info(const skv_image_store *s, const char *name,
                     char **text, char *dir, size_t cap, skv_error *err)
{
    char *rootfs = NULL;
    int rc = skv_image_path(s, name, &rootfs, err);
    if (rc < 0)
        return rc;
    snprintf(dir, cap, "%s", rootfs);
    skv__free(rootfs);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';                     /* <dir>/<name> */
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/info", dir);
    *text = NULL;
    skv_error e = SKV_ERROR_INIT;
    rc = skv__rt_read_file(path, text, &e);
    if (rc == SKV_ENOENT)
        return 0;
    return rc < 0 ? skv__err(err, rc, "%s", e.message) : 0;
}

int skv_image_size(const skv_image_store *s, const char *name,
                   uint64_t *out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "image size: out is NULL");
    char dir[PATH_MAX], *text = NULL;
    int rc = read_info(s, name, &text, dir, sizeof(dir), err);
    if (rc < 0)
        return rc;
    int64_t v = -1;
    if (text && skv__rt_kv_get_i64(text, "size", &v) && v >= 0) {
        skv__free(text);
        *out = (uint64_t)v;
        return 0;
    }
    skv__free(text);
    char rootfs[PATH_MAX + 8];
    snprintf(rootfs, sizeof(rootfs), "%s/rootfs", dir);
    uint64_t size = 0;
    rc = rootfs_bytes(rootfs, &size, err);
    if (rc == 0)
        write_info(dir, size, NULL, NULL);   /* a cache: best effort */
    if (rc == 0)
        *out = size;
    return rc;
}

int skv_image_digest(const skv_image_store *s, const char *name, char *out,
                     size_t cap, skv_error *err)
{
    if (!out || cap < SKV_IMAGE_DIGEST_MAX)
        return skv__err(err, SKV_EINVAL, "image digest: out needs %d bytes",
                        SKV_IMAGE_DIGEST_MAX);
    char dir[PATH_MAX], *text = NULL;
    int rc = read_info(s, name, &text, dir, sizeof(dir), err);
    if (rc < 0)
        return rc;
    out[0] = '\0';
    if (text && !skv__rt_kv_get(text, "digest", out, cap))
        out[0] = '\0';
    skv__free(text);
    return 0;
}
