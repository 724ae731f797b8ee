/* docker-save archives and OCI image layouts, already unpacked into `src`:
 * read manifest.json (docker) or index.json -> manifest (OCI) with the
 * bounded reader, check every referenced path, then apply the layers in
 * order. Only the first image of a multi-image archive is imported.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "image_int.h"

typedef struct {
    char (*v)[256];
    size_t n;
} layer_list;

static int read_doc(const char *src, const char *rel, char **out,
                    size_t *len, skv_error *err)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", src, rel);
    if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
        return skv__err(err, SKV_EPROTO, "image: '%s' is missing or not a "
                        "regular file", rel);
    if (st.st_size > (off_t)SKV__IJ_MAX_DOC)
        return skv__err(err, SKV_EPROTO, "image: '%s' is larger than %u "
                        "bytes", rel, SKV__IJ_MAX_DOC);
    int rc = skv__rt_read_file(p, out, err);
    if (rc < 0)
        return rc;
    *len = strlen(*out);
    if (*len != (size_t)st.st_size) {
        skv__free(*out);
        return skv__err(err, SKV_EPROTO, "image: '%s' contains NUL bytes",
                        rel);
    }
    return 0;
}

static int bad_doc(const char *rel, const char *why, skv_error *err)
{
    return skv__err(err, SKV_EPROTO, "image: malformed %s: %s", rel, why);
}

static int push(layer_list *l, const char *s)
{
    if (l->n >= SKV__IMG_MAX_LAYERS || strlen(s) >= sizeof(l->v[0]))
        return -1;
    snprintf(l->v[l->n++], sizeof(l->v[0]), "%s", s);
    return 0;
}

/* {"Layers": ["path", ...], ...}: the first manifest.json entry. */
static int docker_entry(skv__ij *c, layer_list *l)
{
    char key[256], s[256];
    int r;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        if (strcmp(key, "Layers") != 0) {
            if (skv__ij_skip(c) < 0)
                return -1;
            continue;
        }
        if (skv__ij_arr_begin(c) < 0)
            return -1;
        while ((r = skv__ij_arr_next(c)) == 1)
            if (skv__ij_string(c, s, sizeof(s)) < 0 || push(l, s) < 0)
                return -1;
        if (r < 0)
            return -1;
    }
    return r;
}

static int docker_layers(skv__ij *c, layer_list *l)
{
    int r;
    if (skv__ij_arr_begin(c) < 0 || skv__ij_arr_next(c) != 1 ||
        docker_entry(c, l) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1)
        if (skv__ij_skip(c) < 0)
            return -1;
    return r < 0 ? -1 : skv__ij_end(c);
}

static int apply_all(const char *src, const char *root, const layer_list *l,
                     const char *doc, skv_error *err)
{
    if (l->n == 0)
        return bad_doc(doc, "no layers", err);
    for (size_t i = 0; i < l->n; i++) {
        char p[PATH_MAX];
        struct stat st;
        if (!skv__img_rel_ok(l->v[i]))
            return skv__err(err, SKV_EPROTO, "image: %s names unsafe layer "
                            "path '%s'", doc, l->v[i]);
        snprintf(p, sizeof(p), "%s/%s", src, l->v[i]);
        if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
            return skv__err(err, SKV_EPROTO, "image: layer '%s' is missing "
                            "or not a regular file", l->v[i]);
        int rc = skv__img_apply(p, root, true, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int skv__img_docker(const char *src, const char *root, skv_error *err)
{
    char *doc = NULL;
    size_t len = 0;
    int rc = read_doc(src, "manifest.json", &doc, &len, err);
    if (rc < 0)
        return rc;
    layer_list l = {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*l.v)), 0};
    skv__ij c;
    skv__ij_init(&c, doc, len);
    if (!l.v)
        rc = skv__err(err, SKV_ENOMEM, "layer list");
    else if (docker_layers(&c, &l) < 0)
        rc = bad_doc("manifest.json", "expected [{\"Layers\": [\"path\", "
                     "...]}] (bounded sizes)", err);
    else
        rc = apply_all(src, root, &l, "manifest.json", err);
    skv__free(l.v);
    skv__free(doc);
    return rc;
}

/* "sha256:<64 hex>" -> "blobs/sha256/<hex>". */
static int blob_path(const char *digest, char *out, size_t cap)
{
    const char *hex = digest + 7;
    if (strncmp(digest, "sha256:", 7) != 0 || strlen(hex) != 64 ||
        strspn(hex, "0123456789abcdef") != 64)
        return -1;
    snprintf(out, cap, "blobs/sha256/%s", hex);
    return 0;
}

/* [{"digest": "sha256:..", ...}, ...] into l as blob paths. */
static int digest_array(skv__ij *c, layer_list *l)
{
    char key[256], d[128], p[256];
    int r, r2;
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1) {
        if (skv__ij_obj_begin(c) < 0)
            return -1;
        while ((r2 = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
            if (strcmp(key, "digest") != 0) {
                if (skv__ij_skip(c) < 0)
                    return -1;
            } else if (skv__ij_string(c, d, sizeof(d)) < 0 ||
                       blob_path(d, p, sizeof(p)) < 0 || push(l, p) < 0) {
                return -1;
            }
        }
        if (r2 < 0)
            return -1;
    }
    return r;
}

/* An OCI index ("manifests") or image manifest ("layers"). */
static int oci_doc(skv__ij *c, layer_list *layers, layer_list *manifests)
{
    char key[256];
    int r;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        layer_list *l = !strcmp(key, "layers")      ? layers
                        : !strcmp(key, "manifests") ? manifests
                                                    : NULL;
        if ((l ? digest_array(c, l) : skv__ij_skip(c)) < 0)
            return -1;
    }
    return r < 0 ? -1 : skv__ij_end(c);
}

int skv__img_oci(const char *src, const char *root, skv_error *err)
{
    char doc_name[256] = "index.json", *doc = NULL;
    layer_list layers = {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*layers.v)),
                         0};
    layer_list mf = {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*mf.v)), 0};
    int rc = layers.v && mf.v ? 0 : skv__err(err, SKV_ENOMEM, "OCI lists");
    struct stat st;
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s/oci-layout", src);
    if (rc == 0 && (lstat(p, &st) < 0 || !S_ISREG(st.st_mode)))
        rc = skv__err(err, SKV_EPROTO, "image: no oci-layout file");
    /* index.json -> (at most two nested indexes) -> image manifest */
    for (int hop = 0; rc == 0 && hop < 4 && layers.n == 0; hop++) {
        size_t len = 0;
        skv__ij c;
        mf.n = 0;
        if ((rc = read_doc(src, doc_name, &doc, &len, err)) < 0)
            break;
        skv__ij_init(&c, doc, len);
        if (oci_doc(&c, &layers, &mf) < 0)
            rc = bad_doc(doc_name, "expected {\"manifests\"|\"layers\": "
                         "[{\"digest\": \"sha256:<hex>\"}]}", err);
        else if (layers.n == 0 && mf.n == 0)
            rc = bad_doc(doc_name, "no manifests or layers", err);
        else if (layers.n == 0)
            snprintf(doc_name, sizeof(doc_name), "%s", mf.v[0]);
        skv__free(doc);
        doc = NULL;
    }
    if (rc == 0)
        rc = apply_all(src, root, &layers, doc_name, err);
    skv__free(layers.v);
    skv__free(mf.v);
    return rc;
}
