/* Unpacking archives into an image root with libarchive. Member names are
 * checked here (no absolute paths, no "..") and then prefixed with the
 * root, so nothing depends on the working directory; libarchive's
 * SECURE_SYMLINKS refuses to extract through a symlink, and NODOTDOT is a
 * second guard. (SECURE_NOABSOLUTEPATHS cannot be used: the prefixed path
 * is absolute by design; the unprefixed name is checked instead.)
 * A layer is applied in two passes: first its whiteouts delete from the
 * lower layers, then its other members are written - so a whiteout never
 * removes a file of its own layer, whatever the member order.
 * SPDX-License-Identifier: Apache-2.0 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_int.h"

#define WH ".wh."
#define WH_OPQ ".wh..wh..opq"

bool skv__img_rel_ok(const char *name)
{
    if (!name || name[0] == '/')
        return false;
    for (const char *s = name; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 2 && s[0] == '.' && s[1] == '.')
            return false;
        s += n;
        s += *s == '/';
    }
    return true;
}

/* "./a/b/" -> "a/b"; "." and "./" -> "". */
static const char *norm(const char *name, char *buf, size_t cap)
{
    while (name[0] == '.' && name[1] == '/')
        name += 2;
    if (strcmp(name, ".") == 0)
        name = "";
    size_t n = strlen(name);
    if (n >= cap)
        return NULL;
    memcpy(buf, name, n + 1);
    while (n > 0 && buf[n - 1] == '/')
        buf[--n] = '\0';
    return buf;
}

/* Member names are bytes on Linux, and pax headers carry them as UTF-8:
 * libarchive converts those to the current locale's charset, which in a
 * daemon's "C" locale is ASCII, so a Debian root file system failed to
 * import (ca-certificates names a certificate file in Hungarian). Reading
 * and writing run under a thread-local C.UTF-8 LC_CTYPE instead
 * (uselocale: the process's locale is left alone); names then pass through
 * as the bytes they are. Without C.UTF-8 nothing changes. */
static locale_t utf8;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void utf8_init(void)
{
    utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
}

static locale_t utf8_begin(void)
{
    pthread_once(&utf8_once, utf8_init);
    return utf8 ? uselocale(utf8) : (locale_t)0;
}

static void utf8_end(locale_t old)
{
    if (old)
        uselocale(old);
}

static struct archive *open_read(const char *path, skv_error *err)
{
    struct archive *a = archive_read_new();
    if (!a) {
        skv__err(err, SKV_ENOMEM, "libarchive reader");
        return NULL;
    }
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    archive_read_support_format_gnutar(a);
    if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK) {
        skv__err(err, SKV_EIO, "cannot read archive '%s': %s", path,
                 archive_error_string(a));
        archive_read_free(a);
        return NULL;
    }
    return a;
}

static int read_err(struct archive *a, const char *path, skv_error *err)
{
    return skv__err(err, SKV_EIO, "archive '%s' is unreadable: %s", path,
                    archive_error_string(a) ? archive_error_string(a)
                                            : "not a tar archive");
}

static int detect(const char *path, int *kind, skv_error *err)
{
    struct archive *a = open_read(path, err);
    if (!a)
        return err ? err->code : SKV_EIO;
    struct archive_entry *e;
    char buf[PATH_MAX];
    int r, k = 0, n = 0;
    while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        const char *nm = norm(archive_entry_pathname(e), buf, sizeof(buf));
        n++;
        if (nm && strcmp(nm, "manifest.json") == 0)
            k = 1;
        else if (nm && strcmp(nm, "oci-layout") == 0 && k == 0)
            k = 2;
    }
    int rc = r == ARCHIVE_EOF && n > 0 ? 0 : read_err(a, path, err);
    archive_read_free(a);
    *kind = k;
    return rc;
}

int skv__img_detect(const char *path, int *kind, skv_error *err)
{
    locale_t old = utf8_begin();
    int rc = detect(path, kind, err);
    utf8_end(old);
    return rc;
}

/* Resolve `rel` (a directory inside root) and insist it stays inside: the
 * lower layers may have put symlinks anywhere on the way. */
static int inside(const char *root, const char *rel, char *out,
                  skv_error *err)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s/%s", root, rel) >= (int)sizeof(p))
        return skv__err(err, SKV_ERANGE, "path '%s' too long", rel);
    if (!realpath(p, out))
        return errno == ENOENT || errno == ENOTDIR ? 1 : skv__err_sys(
            err, errno, "resolve %s", p);
    size_t n = strlen(root);
    if (strncmp(out, root, n) != 0 || (out[n] != '\0' && out[n] != '/'))
        return skv__err(err, SKV_EPROTO, "whiteout directory '%s' leads out "
                        "of the image root", rel);
    return 0;
}

static int clear_dir(const char *dir, skv_error *err)
{
    DIR *d = opendir(dir);
    if (!d)
        return skv__err_sys(err, errno, "opendir %s", dir);
    struct dirent *de;
    char p[PATH_MAX];
    int rc = 0;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
        rc = skv__rt_rm_rf(p, err);
    }
    closedir(d);
    return rc;
}

/* One whiteout member `rel` (normalised): delete from the lower layers. */
static int whiteout(const char *root, const char *rel, skv_error *err)
{
    char dir[PATH_MAX], real[PATH_MAX], victim[PATH_MAX * 2];
    const char *slash = strrchr(rel, '/');
    const char *base = slash ? slash + 1 : rel;
    size_t dn = slash ? (size_t)(slash - rel) : 0;
    memcpy(dir, rel, dn);
    dir[dn] = '\0';
    int rc = inside(root, dir, real, err);
    if (rc != 0)
        return rc < 0 ? rc : 0; /* nothing below to hide */
    if (strcmp(base, WH_OPQ) == 0)
        return clear_dir(real, err);
    if (strncmp(base, WH WH, 2 * strlen(WH)) == 0)
        return 0; /* other aufs metadata (.wh..wh..plnk): nothing to hide */
    const char *victim_name = base + strlen(WH);
    if (!*victim_name || !strcmp(victim_name, ".") ||
        !strcmp(victim_name, ".."))
        return skv__err(err, SKV_EPROTO, "bad whiteout '%s'", rel);
    snprintf(victim, sizeof(victim), "%s/%s", real, victim_name);
    return skv__rt_rm_rf(victim, err);
}

/* Where a member goes: checked, then prefixed with the root. Symlink
 * targets are allowed to be absolute (they resolve inside the container's
 * root), but a relative one may not climb above the root. */
static int check_member(struct archive_entry *e, const char *rel,
                        const char *path, skv_error *err)
{
    if (!skv__img_rel_ok(rel))
        return skv__err(err, SKV_EPROTO, "archive '%s': unsafe member name "
                        "'%s' (absolute or '..')", path,
                        archive_entry_pathname(e));
    const char *hl = archive_entry_hardlink(e);
    if (hl && !skv__img_rel_ok(hl))
        return skv__err(err, SKV_EPROTO, "archive '%s': hard link '%s' "
                        "points outside the root ('%s')", path, rel, hl);
    const char *sl = archive_entry_symlink(e);
    if (sl && sl[0] != '/') {
        int depth = 0;
        for (const char *s = rel; *s; s++)
            depth += *s == '/';
        for (const char *s = sl; *s && depth >= 0;) {
            size_t n = strcspn(s, "/");
            if (n == 2 && s[0] == '.' && s[1] == '.')
                depth--;
            else if (n > 0 && !(n == 1 && s[0] == '.'))
                depth++;
            s += n;
            s += *s == '/';
        }
        if (depth < 0)
            return skv__err(err, SKV_EPROTO, "archive '%s': symlink '%s' -> "
                            "'%s' escapes the root", path, rel, sl);
    }
    return 0;
}

static int copy_data(struct archive *in, struct archive *out)
{
    const void *buf;
    size_t len;
    la_int64_t off;
    int r;
    while ((r = archive_read_data_block(in, &buf, &len, &off)) == ARCHIVE_OK)
        if (archive_write_data_block(out, buf, len, off) < ARCHIVE_WARN)
            return -1;
    return r == ARCHIVE_EOF ? 0 : -1;
}

/* Write one (non-whiteout) member below root. */
static int put_member(struct archive *in, struct archive *out,
                      struct archive_entry *e, const char *root,
                      const char *rel, const char *path, skv_error *err)
{
    char dst[PATH_MAX], hl[PATH_MAX], buf[PATH_MAX];
    if (snprintf(dst, sizeof(dst), "%s/%s", root, rel) >= (int)sizeof(dst))
        return skv__err(err, SKV_ERANGE, "member '%s' path too long", rel);
    archive_entry_copy_pathname(e, dst);
    const char *h = archive_entry_hardlink(e);
    if (h) {
        const char *hn = norm(h, buf, sizeof(buf));
        if (!hn || snprintf(hl, sizeof(hl), "%s/%s", root, hn) >=
                       (int)sizeof(hl))
            return skv__err(err, SKV_ERANGE, "hard link '%s' too long", h);
        archive_entry_copy_hardlink(e, hl);
    }
    int r = archive_write_header(out, e);
    if (r >= ARCHIVE_WARN && archive_entry_size(e) > 0 && !h)
        r = copy_data(in, out) == 0 ? ARCHIVE_OK : ARCHIVE_FAILED;
    if (r >= ARCHIVE_WARN)
        r = archive_write_finish_entry(out);
    if (r < ARCHIVE_WARN)
        return skv__err(err, SKV_EPROTO, "archive '%s': cannot extract '%s': "
                        "%s", path, rel, archive_error_string(out) ?
                        archive_error_string(out) : archive_error_string(in));
    return 0;
}

static bool is_whiteout(const char *rel)
{
    const char *slash = strrchr(rel, '/');
    return strncmp(slash ? slash + 1 : rel, WH, strlen(WH)) == 0;
}

/* Pass 0: whiteouts only; pass 1: everything else. */
static int apply_pass(const char *path, const char *root, bool layer,
                      int pass, skv_error *err)
{
    struct archive *in = open_read(path, err);
    if (!in)
        return err ? err->code : SKV_EIO;
    struct archive *out = pass ? archive_write_disk_new() : NULL;
    int flags = ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_PERM |
                ARCHIVE_EXTRACT_TIME |
                (layer ? ARCHIVE_EXTRACT_OWNER | ARCHIVE_EXTRACT_XATTR : 0);
    int rc = pass && !out ? skv__err(err, SKV_ENOMEM, "libarchive") : 0;
    if (out) {
        archive_write_disk_set_options(out, flags);
        archive_write_disk_set_standard_lookup(out);
    }
    struct archive_entry *e;
    char buf[PATH_MAX];
    int r = ARCHIVE_OK;
    while (rc == 0 && (r = archive_read_next_header(in, &e)) == ARCHIVE_OK) {
        const char *rel = norm(archive_entry_pathname(e), buf, sizeof(buf));
        if (!rel)
            rc = skv__err(err, SKV_ERANGE, "member name too long");
        else if ((rc = check_member(e, rel, path, err)) < 0 || !*rel)
            continue;
        else if (layer && is_whiteout(rel))
            rc = pass ? 0 : whiteout(root, rel, err);
        else if (pass)
            rc = put_member(in, out, e, root, rel, path, err);
    }
    if (rc == 0 && r != ARCHIVE_EOF)
        rc = read_err(in, path, err);
    if (out && archive_write_close(out) < ARCHIVE_WARN && rc == 0)
        rc = skv__err(err, SKV_EIO, "finishing '%s': %s", path,
                      archive_error_string(out));
    if (out)
        archive_write_free(out);
    archive_read_free(in);
    return rc;
}

int skv__img_apply(const char *path, const char *root, bool layer,
                   skv_error *err)
{
    locale_t old = utf8_begin();
    int rc = layer ? apply_pass(path, root, layer, 0, err) : 0;
    if (rc >= 0)
        rc = apply_pass(path, root, layer, 1, err);
    utf8_end(old);
    return rc;
}
