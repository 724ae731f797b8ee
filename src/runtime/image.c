/* Image store: <dir>/<name>/rootfs (and info, image_info.c). Imports unpack (libarchive, see
 * image_layer.c) into <dir>/.tmp-<name>-<pid> and rename into place, so
 * readers never see a partial image and a failure leaves nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_int.h"

struct skv_image_store {
    char *dir;
};

int skv_image_name_check(const char *name, skv_error *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 128)
        return skv__err(err, SKV_EINVAL, "image name must have 1..128 "
                        "characters");
    bool alnum0 = (name[0] >= 'a' && name[0] <= 'z') ||
                  (name[0] >= 'A' && name[0] <= 'Z') ||
                  (name[0] >= '0' && name[0] <= '9');
    if (!alnum0 || strstr(name, ".."))
        return skv__err(err, SKV_EINVAL, "image name '%s' must start with a "
                        "letter or digit and not contain '..'", name);
    if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789._:-") != n)
        return skv__err(err, SKV_EINVAL, "image name '%s': only letters, "
                        "digits and . _ : - are allowed", name);
    return 0;
}

int skv_image_store_open(skv_image_store **out, const char *dir,
                         skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "out is NULL");
    int rc = skv__rt_check_abs_path(dir, "image store", err);
    if (rc < 0)
        return rc;
    if (strchr(dir, ':'))
        return skv__err(err, SKV_EINVAL, "image store '%s' contains ':' (it "
                        "would break overlay options)", dir);
    skv_image_store *s = skv__calloc(1, sizeof(*s));
    if (!s || !(s->dir = skv__strdup(dir))) {
        skv__free(s);
        return skv__err(err, SKV_ENOMEM, "image store");
    }
    rc = skv__rt_mkdir_p(dir, 0755, err);
    if (rc < 0) {
        skv_image_store_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void skv_image_store_free(skv_image_store *s)
{
    if (!s)
        return;
    skv__free(s->dir);
    skv__free(s);
}

/* Which format `src` holds; for archives the outer one is unpacked into
 * tmp/src first (docker save, OCI), and *dir points at the layout. */
static int pick_format(const char *src, bool is_dir, skv_image_format *fmt,
                       skv_error *err)
{
    if (*fmt != SKV_IMAGE_FORMAT_AUTO)
        return 0;
    if (!is_dir) {
        int kind = 0, rc = skv__img_detect(src, &kind, err);
        *fmt = kind == 1   ? SKV_IMAGE_FORMAT_DOCKER_SAVE
               : kind == 2 ? SKV_IMAGE_FORMAT_OCI_LAYOUT
                           : SKV_IMAGE_FORMAT_ROOTFS;
        return rc;
    }
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/manifest.json", src);
    if (access(p, F_OK) == 0) {
        *fmt = SKV_IMAGE_FORMAT_DOCKER_SAVE;
        return 0;
    }
    snprintf(p, sizeof(p), "%s/oci-layout", src);
    if (access(p, F_OK) == 0) {
        *fmt = SKV_IMAGE_FORMAT_OCI_LAYOUT;
        return 0;
    }
    return skv__err(err, SKV_EINVAL, "directory '%s' has neither "
                    "manifest.json nor oci-layout", src);
}

/* Unpack into tmp (an absolute, symlink-free path). */
static int unpack(const char *src, bool is_dir, skv_image_format fmt,
                  const char *name, const char *tmp, skv_error *err)
{
    char root[PATH_MAX], outer[PATH_MAX];
    snprintf(root, sizeof(root), "%s/rootfs", tmp);
    snprintf(outer, sizeof(outer), "%s/src", tmp);
    if (mkdir(root, 0755) < 0)
        return skv__err_sys(err, errno, "mkdir %s", root);
    if (fmt == SKV_IMAGE_FORMAT_ROOTFS)
        return is_dir ? skv__err(err, SKV_EINVAL, "a rootfs import needs an "
                                 "archive, '%s' is a directory", src)
                      : skv__img_apply(src, root, true, err);
    const char *layout = src;
    int rc = 0;
    if (!is_dir) {
        layout = outer;
        if (mkdir(outer, 0700) < 0)
            return skv__err_sys(err, errno, "mkdir %s", outer);
        rc = skv__img_apply(src, outer, false, err);
    }
    if (rc == 0)
        rc = fmt == SKV_IMAGE_FORMAT_DOCKER_SAVE
                 ? skv__img_docker(layout, root, name, err)
                 : skv__img_oci(layout, root, name, err);
    if (!is_dir && rc == 0)
        rc = skv__rt_rm_rf(outer, err);
    return rc;
}

static int check_import(skv_image_store *s, const char *name, const char *src,
                        skv_image_format fmt, bool *is_dir, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "image store is NULL");
    int rc = skv_image_name_check(name, err);
    if (rc == 0)
        rc = skv__rt_check_abs_path(src, "image source", err);
    if (rc < 0)
        return rc;
    if ((unsigned)fmt > SKV_IMAGE_FORMAT_OCI_LAYOUT)
        return skv__err(err, SKV_EINVAL, "unknown image format %d", (int)fmt);
    struct stat st;
    if (stat(src, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
        return skv__err(err, SKV_ENOENT, "image source '%s' is not a regular "
                        "file or directory", src);
    *is_dir = S_ISDIR(st.st_mode);
    return 0;
}

int skv_image_import(skv_image_store *s, const char *name, const char *src,
                     skv_image_format fmt, skv_error *err)
{
    bool is_dir = false;
    int rc = check_import(s, name, src, fmt, &is_dir, err);
    if (rc < 0)
        return rc;
    char final[PATH_MAX], tmp[PATH_MAX], real[PATH_MAX];
    snprintf(final, sizeof(final), "%s/%s", s->dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.tmp-%s-%ld", s->dir, name, (long)getpid());
    if (access(final, F_OK) == 0)
        return skv__err(err, SKV_EEXIST, "image '%s' already exists", name);
    if ((rc = pick_format(src, is_dir, &fmt, err)) < 0)
        return rc;
    if (mkdir(tmp, 0755) < 0)
        return skv__err_sys(err, errno, "mkdir %s", tmp);
    /* libarchive's SECURE_SYMLINKS check walks the whole destination path,
     * so hand it the resolved one. */
    if (!realpath(tmp, real))
        rc = skv__err_sys(err, errno, "resolve %s", tmp);
    if (rc == 0)
        rc = unpack(src, is_dir, fmt, name, real, err);
    if (rc == 0)
        rc = skv__img_info_write(real, src, is_dir, err);
    if (rc == 0 && rename(tmp, final) < 0)
        rc = errno == EEXIST || errno == ENOTEMPTY
                 ? skv__err(err, SKV_EEXIST, "image '%s' already exists", name)
                 : skv__err_sys(err, errno, "rename %s", tmp);
    if (rc < 0)
        skv__rt_rm_rf(tmp, NULL);
    return rc;
}

int skv_image_import_tar(skv_image_store *s, const char *name,
                         const char *tarball, skv_error *err)
{
    return skv_image_import(s, name, tarball, SKV_IMAGE_FORMAT_AUTO, err);
}

int skv_image_path(const skv_image_store *s, const char *name, char **out,
                   skv_error *err)
{
    if (!s || !out)
        return skv__err(err, SKV_EINVAL, "image store or out is NULL");
    int rc = skv_image_name_check(name, err);
    if (rc < 0)
        return rc;
    char *p = skv__asprintf("%s/%s/rootfs", s->dir, name);
    if (!p)
        return skv__err(err, SKV_ENOMEM, "image path");
    struct stat st;
    if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
        skv__free(p);
        return skv__err(err, SKV_ENOENT, "image '%s' does not exist", name);
    }
    *out = p;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void skv_image_list_free(char **names, size_t n)
{
    for (size_t i = 0; names && i < n; i++)
        skv__free(names[i]);
    skv__free(names);
}

int skv_image_list(const skv_image_store *s, char ***names, size_t *n,
                   skv_error *err)
{
    if (!s || !names || !n)
        return skv__err(err, SKV_EINVAL, "image store, names or n is NULL");
    DIR *d = opendir(s->dir);
    if (!d)
        return skv__err_sys(err, errno, "opendir %s", s->dir);
    char **v = NULL;
    size_t cnt = 0;
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || skv_image_name_check(de->d_name, NULL) < 0)
            continue;
        char **nv = skv__reallocarray(v, cnt + 1, sizeof(char *));
        char *c = nv ? skv__strdup(de->d_name) : NULL;
        if (nv)
            v = nv;
        if (!c)
            rc = skv__err(err, SKV_ENOMEM, "image list");
        else
            v[cnt++] = c;
    }
    closedir(d);
    if (rc < 0) {
        skv_image_list_free(v, cnt);
        return rc;
    }
    if (cnt)
        qsort(v, cnt, sizeof(char *), cmp_str);
    *names = v;
    *n = cnt;
    return 0;
}

int skv_image_remove(skv_image_store *s, const char *name, skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "image store is NULL");
    int rc = skv_image_name_check(name, err);
    if (rc < 0)
        return rc;
    char path[PATH_MAX], tmp[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", s->dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.rm-%s-%ld", s->dir, name, (long)getpid());
    /* Rename first: the name disappears at once, removal may take long. */
    if (rename(path, tmp) < 0)
        return errno == ENOENT
                   ? skv__err(err, SKV_ENOENT, "image '%s' does not exist",
                              name)
                   : skv__err_sys(err, errno, "rename %s", path);
    return skv__rt_rm_rf(tmp, err);
}
