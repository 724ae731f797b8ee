/* OCI image layouts, already unpacked into `src`: index.json -> (nested
 * indexes) -> image manifest -> layers. At each index the manifest is
 * chosen explicitly (image_select.c: by reference name, then platform);
 * every blob read - nested index, manifest, config, layer - is verified
 * against its sha256 digest before it is parsed or applied.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "image_int.h"

/* "sha256:<64 hex>" -> "blobs/sha256/<hex>". */
static int blob_path(const char *digest, char *out, size_t cap)
{
    if (strncmp(digest, "sha256:", 7) != 0 || !skv__img_hex64(digest + 7))
        return -1;
    snprintf(out, cap, "blobs/sha256/%s", digest + 7);
    return 0;
}

static int platform(skv__ij *c, skv__img_entry *e)
{
    char key[256];
    int r;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        char *dst = !strcmp(key, "architecture") ? e->arch
                    : !strcmp(key, "os")         ? e->os
                    : !strcmp(key, "variant")    ? e->variant
                                                 : NULL;
        if ((dst ? skv__ij_string(c, dst, sizeof(e->arch)) : skv__ij_skip(c)) < 0)
            return -1;
    }
    return r;
}

/* Reference names: the OCI ref.name and containerd's full image name. */
static int annotations(skv__ij *c, skv__img_entry *e)
{
    char key[256], val[SKV__IMG_NAME_MAX];
    int r;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        bool ref = !strcmp(key, "org.opencontainers.image.ref.name") ||
                   !strcmp(key, "io.containerd.image.name");
        if (!ref) {
            if (skv__ij_skip(c) < 0)
                return -1;
            continue;
        }
        if (skv__ij_string(c, val, sizeof(val)) < 0)
            return -1;
        if (e->nnames < SKV__IMG_MAX_NAMES)
            memcpy(e->names[e->nnames++], val, sizeof(val));
    }
    return r;
}

/* {"digest": "sha256:..", "platform": {..}, "annotations": {..}, ...};
 * e->ref receives the blob path. */
static int descriptor(skv__ij *c, skv__img_entry *e)
{
    char key[256], d[128];
    int r, q;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        if (!strcmp(key, "digest"))
            q = skv__ij_string(c, d, sizeof(d)) < 0 ||
                        blob_path(d, e->ref, sizeof(e->ref)) < 0
                    ? -1 : 0;
        else if (!strcmp(key, "platform"))
            q = platform(c, e);
        else if (!strcmp(key, "annotations"))
            q = annotations(c, e);
        else
            q = skv__ij_skip(c);
        if (q < 0)
            return -1;
    }
    return r < 0 || !e->ref[0] ? -1 : 0;
}

typedef struct oci_parse {
    skv__img_entry *mf;      /* "manifests" */
    size_t nmf;
    skv__img_layers layers;  /* "layers", as blob paths */
    char config[256];        /* "config" blob path, "" when absent */
} oci_parse;

static int descriptors(skv__ij *c, oci_parse *o, bool layers)
{
    int r;
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    while ((r = skv__ij_arr_next(c)) == 1) {
        skv__img_entry tmp;
        skv__img_entry *e = layers ? &tmp : &o->mf[o->nmf];
        if (!layers && o->nmf >= SKV__IMG_MAX_IMAGES)
            return -1;
        memset(e, 0, sizeof(*e));
        if (descriptor(c, e) < 0 ||
            (layers && skv__img_push(&o->layers, e->ref) < 0))
            return -1;
        o->nmf += !layers;
    }
    return r;
}

/* An OCI index ("manifests") or image manifest ("config", "layers"). */
static int oci_doc(skv__ij *c, oci_parse *o)
{
    char key[256];
    int r, q;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof(key))) == 1) {
        if (!strcmp(key, "layers") || !strcmp(key, "manifests")) {
            q = descriptors(c, o, key[0] == 'l');
        } else if (!strcmp(key, "config")) {
            skv__img_entry e;
            memset(&e, 0, sizeof(e));
            q = descriptor(c, &e);
            snprintf(o->config, sizeof(o->config), "%s", e.ref);
        } else {
            q = skv__ij_skip(c);
        }
        if (q < 0)
            return -1;
    }
    return r < 0 ? -1 : skv__ij_end(c);
}

static int verify_blob(const char *src, const char *rel, const char *doc,
                       skv_error *err)
{
    int rc = skv__img_member_ok(src, rel, doc, err);
    return rc < 0 ? rc : skv__img_verify(src, rel, skv__img_blob_hex(rel), err);
}

/* The image manifest's config and layers, verified, then applied. */
static int oci_image(const char *src, const char *root, const oci_parse *o,
                     const char *doc, skv_error *err)
{
    int rc = o->config[0] ? verify_blob(src, o->config, doc, err) : 0;
    if (rc == 0 && o->config[0])   /* its services label, if any */
        rc = skv__img_config_services(src, o->config, root, err);
    for (size_t i = 0; rc == 0 && i < o->layers.n; i++)
        rc = verify_blob(src, o->layers.v[i], doc, err);
    if (rc == 0)
        rc = skv__img_apply_layers(src, root, &o->layers, 0, o->layers.n, doc,
                                   err);
    return rc;
}

/* Read and parse one document; `name` is the next one when it was an
 * index. Returns 1 when it was an image manifest. */
static int oci_hop(const char *src, char *name, size_t cap, oci_parse *o,
                   const char *want, skv_error *err)
{
    char *doc = NULL;
    size_t len = 0, pick = 0;
    skv__ij c;
    o->nmf = o->layers.n = 0;
    o->config[0] = '\0';
    int rc = skv__img_blob_hex(name) ? verify_blob(src, name, "an index", err) : 0;
    if (rc == 0)
        rc = skv__img_read_doc(src, name, &doc, &len, err);
    if (rc < 0)
        return rc;
    skv__ij_init(&c, doc, len);
    if (oci_doc(&c, o) < 0)
        rc = skv__img_bad_doc(name, "expected {\"manifests\"|\"layers\": "
                              "[{\"digest\": \"sha256:<hex>\"}]}", err);
    else if (o->layers.n)
        rc = 1;
    else if (o->nmf == 0)
        rc = skv__img_bad_doc(name, "no manifests or layers", err);
    else if ((rc = skv__img_select(&pick, o->mf, o->nmf, want, name, err)) == 0)
        snprintf(name, cap, "%s", o->mf[pick].ref);
    skv__free(doc);
    return rc;
}

int skv__img_oci(const char *src, const char *root, const char *want,
                 skv_error *err)
{
    char name[256] = "index.json", p[PATH_MAX];
    oci_parse o = {skv__calloc(SKV__IMG_MAX_IMAGES, sizeof(*o.mf)), 0,
                   {skv__calloc(SKV__IMG_MAX_LAYERS, sizeof(*o.layers.v)), 0},
                   ""};
    int rc = o.mf && o.layers.v ? 0 : skv__err(err, SKV_ENOMEM, "OCI lists");
    struct stat st;
    snprintf(p, sizeof(p), "%s/oci-layout", src);
    if (rc == 0 && (lstat(p, &st) < 0 || !S_ISREG(st.st_mode)))
        rc = skv__err(err, SKV_EPROTO, "image: no oci-layout file");
    /* index.json -> (at most two nested indexes) -> image manifest */
    for (int hop = 0; rc == 0 && hop < 4; hop++)
        rc = oci_hop(src, name, sizeof(name), &o, want, err);
    if (rc == 0)
        rc = skv__img_bad_doc("index.json", "indexes nested too deep", err);
    if (rc == 1)
        rc = oci_image(src, root, &o, name, err);
    skv__free(o.mf);
    skv__free(o.layers.v);
    return rc;
}
