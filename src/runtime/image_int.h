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
/* Only whitespace remains. */
int skv__ij_end(skv__ij *c);

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
/* Apply the layers of an unpacked docker-save / OCI layout in `src`. */
int skv__img_docker(const char *src, const char *root, skv_error *err);
int skv__img_oci(const char *src, const char *root, skv_error *err);

#endif
