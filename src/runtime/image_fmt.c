/* docker-save archives, already unpacked into `src`: read manifest.json
 * with the bounded reader, choose the image (image_select.c), verify its
 * config against the digest that names it and every layer against the
 * config's rootfs.diff_ids (or its blob digest), then apply the layers in
 * order. Also the helpers the OCI walker (image_oci.c) shares.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "image_int.h"

int skv__img_read_doc(const char *src, const char *rel, char **out,
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

int skv__img_bad_doc(const char *rel, const char *why, skv_error *err)
{
    return skv__err(err, SKV_EPROTO, "image: malformed %s: %s", rel, why);
}

int skv__img_push(skv__img_layers *l, const char *s)
{
    if (l->n >= SKV__IMG_MAX_LAYERS || strlen(s) >= sizeof(l->v[0]))
        return -1;
    snprintf(l->v[l->n++], sizeof(l->v[0]), "%s", s);
    return 0;
}

const char *skv__img_blob_hex(const char *rel)
{
    const char *pre = "blobs/sha256/";
    if (strncmp(rel, pre, strlen(pre)) != 0)
        return NULL;
    const char *hex = rel + strlen(pre);
    return skv__img_hex64(hex) ? hex : NULL;
}

int skv__img_member_ok(const char *src, const char *rel, const char *doc,
                       skv_error *err)
{
    char p[PATH_MAX];
    struct stat st;
    if (!skv__img_rel_ok(rel))
        return skv__err(err, SKV_EPROTO, "image: %s names unsafe path '%s'",
                        doc, rel);
    snprintf(p, sizeof(p), "%s/%s", src, rel);
    if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
        return skv__err(err, SKV_EPROTO, "image: '%s' (named by %s) is "
                        "missing or not a regular file", rel, doc);
    return 0;
}

int skv__img_apply_layers(const char *src, const char *root,
                          const skv__img_layers *l, size_t first, size_t n,
                          const char *doc, skv_error *err)
{
    if (n == 0)
        return skv__img_bad_doc(doc, "no layers", err);
    for (size_t i = first; i < first + n; i++) {
        char p[PATH_MAX];
        int rc = skv__img_member_ok(src, l->v[i], doc, err);
        if (rc < 0)
            return rc;
        snprintf(p, sizeof(p), "%s/%s", src, l->v[i]);
        if ((rc = skv__img_apply(p, root, true, err)) < 0)
            return rc;
    }
    return 0;
}

static int string_array(skv__ij *c, skv__img_layers *l)
{
    char s[256];
    int r;
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1)
        if (skv__ij_string(c, s, sizeof(s)) < 0 || skv__img_push(l, s) < 0)
            return -1;
    return r;
}

/* RepoTags: null or an array of strings (the first few are kept). */
static int repo_tags(skv__ij *c, skv__img_entry *e)
{
    char s[SKV__IMG_NAME_MAX];
    int r;
    if (skv__ij_null(c))
        return 0;
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1) {
        if (skv__ij_string(c, s, sizeof(s)) < 0)
            return -1;
        if (e->nnames < SKV__IMG_MAX_NAMES)
            memcpy(e->names[e->nnames++], s, sizeof(s));
    }
    return r;
}

/* {"Config": "..", "RepoTags": [..], "Layers": ["path", ...], ...} */
static int docker_entry(skv__ij *c, skv__img_entry *e, skv__img_layers *l)
{
    char key[256];
    int r;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    e->first = l->n;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        int q = !strcmp(key, "Layers")     ? string_array(c, l)
                : !strcmp(key, "RepoTags") ? repo_tags(c, e)
                : !strcmp(key, "Config")   ? skv__ij_string(c, e->ref, sizeof(e->ref))
                                           : skv__ij_skip(c);
        if (q < 0)
            return -1;
    }
    e->n = l->n - e->first;
    return r;
}

static int docker_entries(skv__ij *c, skv__img_entry *v, size_t *n,
                          skv__img_layers *l)
{
    int r;
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1)
        if (*n >= SKV__IMG_MAX_IMAGES || docker_entry(c, &v[(*n)++], l) < 0)
            return -1;
    return r < 0 ? -1 : skv__ij_end(c);
}

/* {"rootfs": {"diff_ids": ["sha256:..", ...]}, ...} */
static int config_diff_ids(skv__ij *c, skv__img_layers *ids)
{
    char key[256];
    int r, r2;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        if (strcmp(key, "rootfs") != 0) {
            if (skv__ij_skip(c) < 0)
                return -1;
            continue;
        }
        if (skv__ij_obj_begin(c) < 0)
            return -1;
        while ((r2 = skv__ij_obj_next(c, key, sizeof(key))) == 1)
            if ((strcmp(key, "diff_ids") ? skv__ij_skip(c)
                                         : string_array(c, ids)) < 0)
                return -1;
        if (r2 < 0)
            return -1;
    }
    return r < 0 ? -1 : skv__ij_end(c);
}

/* The config is content-addressed: "<hex>.json" (classic docker save) or
 * "blobs/sha256/<hex>" (docker 25+). */
static int verify_config(const char *src, const char *cfg, skv_error *err)
{
    char hex[65] = "";
    const char *b = skv__img_blob_hex(cfg);
    int rc = skv__img_member_ok(src, cfg, "manifest.json", err);
    if (rc < 0)
        return rc;
    if (b)
        snprintf(hex, sizeof(hex), "%s", b);
    else if (strlen(cfg) == 69 && !strcmp(cfg + 64, ".json"))
        memcpy(hex, cfg, 64);
    if (!skv__img_hex64(hex))
        return skv__err(err, SKV_EPROTO, "image: config '%s' is not named by "
                        "its sha256 digest, so it cannot be verified", cfg);
    return skv__img_verify(src, cfg, hex, err);
}

/* Every layer against its blob digest or the config's diff_id. */
static int verify_layers(const char *src, const skv__img_entry *e,
                         const skv__img_layers *l, const skv__img_layers *ids,
                         skv_error *err)
{
    if (ids->n != e->n)
        return skv__err(err, SKV_EPROTO, "image: config '%s' lists %zu layer "
                        "digests for %zu layers", e->ref, ids->n, e->n);
    for (size_t i = 0; i < e->n; i++) {
        const char *rel = l->v[e->first + i], *id = ids->v[i];
        const char *hex = skv__img_blob_hex(rel);
        int rc = skv__img_member_ok(src, rel, "manifest.json", err);
        if (rc < 0)
            return rc;
        if (!hex && strncmp(id, "sha256:", 7) != 0)
            return skv__err(err, SKV_EPROTO, "image: config '%s': layer "
                            "digest '%s' is not sha256", e->ref, id);
        if ((rc = skv__img_verify(src, rel, hex ? hex : id + 7, err)) < 0)
            return rc;
    }
    return 0;
}

static int docker_image(const char *src, const char *root,
                        const skv__img_entry *e, const skv__img_layers *l,
                        skv_error *err)
{
    if (e->n == 0)
        return skv__img_bad_doc("manifest.json", "no layers", err);
    if (!e->ref[0])
        return skv__err(err, SKV_EPROTO, "image: manifest.json names no "
                        "Config, so the layers cannot be verified");
    skv__img_layers ids = {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*ids.v)), 0};
    char *doc = NULL;
    size_t len = 0;
    skv__ij c;
    int rc = ids.v ? verify_config(src, e->ref, err)
                   : skv__err(err, SKV_ENOMEM, "layer digests");
    if (rc == 0)
        rc = skv__img_read_doc(src, e->ref, &doc, &len, err);
    if (rc == 0) {
        skv__ij_init(&c, doc, len);
        if (config_diff_ids(&c, &ids) < 0)
            rc = skv__img_bad_doc(e->ref, "expected {\"rootfs\": {\"diff_ids\""
                                  ": [\"sha256:<hex>\", ...]}}", err);
    }
    if (rc == 0)
        rc = verify_layers(src, e, l, &ids, err);
    if (rc == 0)   /* the same config schema as OCI's: its services label */
        rc = skv__img_config_services(src, e->ref, root, err);
    if (rc == 0)
        rc = skv__img_apply_layers(src, root, l, e->first, e->n,
                                   "manifest.json", err);
    skv__free(doc);
    skv__free(ids.v);
    return rc;
}

int skv__img_docker(const char *src, const char *root, const char *want,
                    skv_error *err)
{
    char *doc = NULL;
    size_t len = 0, n = 0, pick = 0;
    int rc = skv__img_read_doc(src, "manifest.json", &doc, &len, err);
    if (rc < 0)
        return rc;
    skv__img_layers l = {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*l.v)), 0};
    skv__img_entry *v = skv__calloc(SKV__IMG_MAX_IMAGES, sizeof(*v));
    skv__ij c;
    skv__ij_init(&c, doc, len);
    if (!l.v || !v)
        rc = skv__err(err, SKV_ENOMEM, "layer list");
    else if (docker_entries(&c, v, &n, &l) < 0)
        rc = skv__img_bad_doc("manifest.json", "expected [{\"Config\": ..., "
                              "\"Layers\": [\"path\", ...]}] (bounded sizes)",
                              err);
    else if ((rc = skv__img_select(&pick, v, n, want, "manifest.json", err)) == 0)
        rc = docker_image(src, root, &v[pick], &l, err);
    skv__free(v);
    skv__free(l.v);
    skv__free(doc);
    return rc;
}
