/* Private to the image store: a bounded JSON reader for manifest.json /
 * index.json, layer application with whiteouts (libarchive), and the
 * docker-save / OCI-layout walkers.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_IMAGE_INT_H
#define SKV_IMAGE_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "rt_internal.h"

/* Largest manifest/index document read; more is refused, not truncated. */
#define SKV__IJ_MAX_DOC (1u << 20)
#define SKV__IJ_MAX_DEPTH 32
#define SKV__IMG_MAX_LAYERS 512

/* Cursor over a NUL-free JSON text; every call fails (-1) once `bad` is set. */
typedef struct skv__ij {
    const char *p, *end;
    int depth;
    bool bad;
} skv__ij;

void skv__ij_init(skv__ij *c, const char *text, size_t len);
/* '{' / '[' ; 0 or -1. */
int skv__ij_obj_begin(skv__ij *c);
int skv__ij_arr_begin(skv__ij *c);
/* Next member: 1 (key read, ':' consumed), 0 at '}', -1 on error. */
int skv__ij_obj_next(skv__ij *c, char *key, size_t cap);
/* Next element: 1 (one follows), 0 at ']', -1 on error. */
int skv__ij_arr_next(skv__ij *c);
/* A string value into buf (ASCII escapes only); -1 if too long or bad. */
int skv__ij_string(skv__ij *c, char *buf, size_t cap);
int skv__ij_skip(skv__ij *c);
/* 1 when a `null` literal was next (and is consumed), else 0. */
int skv__ij_null(skv__ij *c);
/* Only whitespace remains. */
int skv__ij_end(skv__ij *c);

/* Write <image_dir>/info (size of <image_dir>/rootfs; the sha256 of src
 * unless it is a directory). image_info.c */
int skv__img_info_write(const char *image_dir, const char *src, bool is_dir,
                        skv_error *err);
/* Relative member name check: no leading '/', no ".." component. */
bool skv__img_rel_ok(const char *name);
/* Unpack one archive into the directory `root` (an absolute, symlink-free
 * path). layer: honour whiteouts and keep owners; else a plain unpack of
 * an outer docker-save/OCI archive. */
int skv__img_apply(const char *archive, const char *root, bool layer,
                   skv_error *err);
/* Scan an archive's member names: 1 docker save (manifest.json), 2 OCI
 * layout (oci-layout), 0 anything else. */
int skv__img_detect(const char *archive, int *kind, skv_error *err);
/* Shared by the docker-save and OCI walkers (image_fmt.c). */
typedef struct skv__img_layers {
    char (*v)[256];
    size_t n;
} skv__img_layers;

/* A bounded, NUL-free, regular-file document <src>/<rel>. */
int skv__img_read_doc(const char *src, const char *rel, char **out,
                      size_t *len, skv_error *err);
int skv__img_bad_doc(const char *rel, const char *why, skv_error *err);
/* Append; -1 when full or too long. */
int skv__img_push(skv__img_layers *l, const char *s);
/* The hex of "blobs/sha256/<hex>", else NULL. */
const char *skv__img_blob_hex(const char *rel);
/* <src>/<rel> is a safe relative path to a regular file. */
int skv__img_member_ok(const char *src, const char *rel, const char *doc,
                       skv_error *err);
/* Apply layers l[first..first+n) of src onto root, in order. */
int skv__img_apply_layers(const char *src, const char *root,
                          const skv__img_layers *l, size_t first, size_t n,
                          const char *doc, skv_error *err);

/* Apply the layers of an unpacked docker-save / OCI layout in `src`.
 * `want` is the name the image is imported as: when the archive holds
 * several images, the one whose tag / reference matches is taken. */
int skv__img_docker(const char *src, const char *root, const char *want,
                    skv_error *err);
int skv__img_oci(const char *src, const char *root, const char *want,
                 skv_error *err);

/* ---- service ports from the image config's labels (image_labels.c) ---- */
/* <image dir>/SKV__IMG_SERVICES_FILE: "NAME=PORT/PROTO" a line. */
#define SKV__IMG_SERVICES_FILE "services"
/* The label's value "NAME:PROTOCOL:PORT,..." -> declarations, a line each,
 * into out; SKV_EPROTO naming the label and the bad entry. */
int skv__img_label_services(const char *value, char *out, size_t cap,
                            skv_error *err);
/* Read the image config <src>/<config>; when it has the services label,
 * write its declarations beside root ("<image dir>/rootfs"). */
int skv__img_config_services(const char *src, const char *config,
                             const char *root, skv_error *err);
/* Append the declarations kept beside rootfs to m->services (none: 0). */
struct skv_image_meta;
int skv__img_services_read(const char *rootfs, struct skv_image_meta *m,
                           skv_error *err);

/* ---- blob digests (image_digest.c) ---- */
bool skv__img_hex64(const char *hex);
/* Streamed SHA-256 of a file, lowercase hex. */
int skv__img_sha256_file(const char *path, char hex[65], skv_error *err);
/* <src>/<rel> must hash to hex (64 lowercase hex digits): SKV_EPROTO naming
 * the blob otherwise. */
int skv__img_verify(const char *src, const char *rel, const char *hex,
                    skv_error *err);

/* ---- choosing one image of several (image_select.c) ---- */
#define SKV__IMG_MAX_IMAGES 64
#define SKV__IMG_MAX_NAMES 4
#define SKV__IMG_NAME_MAX 256

/* One image (docker manifest.json entry) or manifest (OCI index entry). */
typedef struct skv__img_entry {
    char names[SKV__IMG_MAX_NAMES][SKV__IMG_NAME_MAX]; /* tags / refs */
    size_t nnames;
    char arch[32], os[32], variant[32]; /* OCI platform; "" when absent */
    char ref[SKV__IMG_NAME_MAX]; /* docker: Config path; OCI: blob path */
    size_t first, n;             /* docker: its layers in the layer list */
} skv__img_entry;

/* The entry to import: the only one; else the one a name of which matches
 * `want` (exactly, with ":latest" added, or by repository when `want` has no
 * tag; registry and namespace prefixes ignored); else, among those, the one
 * for this host's platform. None or several: SKV_EINVAL listing them. */
int skv__img_select(size_t *out, const skv__img_entry *v, size_t n,
                    const char *want, const char *doc, skv_error *err);

#endif
