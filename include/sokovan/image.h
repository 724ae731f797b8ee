/*
 * sokovan/image.h - the agent's image store: a name maps to a root file
 * system directory <store>/<name>/rootfs. Images are imported from rootfs
 * tarballs (`docker export`), `docker save` archives or OCI image layouts
 * with libarchive, unpacked into a temporary directory and renamed into place, so a half-imported image is
 * never visible.
 *
 * Thread-safety: a skv_image_store may be read concurrently (list, path);
 * import and remove need exclusive access to the name they touch. Distinct
 * stores are independent.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_IMAGE_H
#define SOKOVAN_IMAGE_H

#include <stddef.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct skv_image_store skv_image_store;

/* Open (creating if missing) the store in an absolute directory. */
SKV_EXTERN int skv_image_store_open(skv_image_store **out, const char *dir,
                                    skv_error *err);
SKV_EXTERN void skv_image_store_free(skv_image_store *store);

/* Whether `name` is a valid image name: 1-128 characters of
 * [A-Za-z0-9._:-], starting with a letter or digit, never "..". */
SKV_EXTERN int skv_image_name_check(const char *name, skv_error *err);

/* Import an image archive, its format detected by content as
 * skv_image_import with SKV_IMAGE_FORMAT_AUTO does. SKV_EEXIST when the name
 * is taken. Nothing is left behind on failure. */
SKV_EXTERN int skv_image_import_tar(skv_image_store *store, const char *name,
                                    const char *tarball, skv_error *err);
/* Root filesystem directory of an image; free with skv_free. */
SKV_EXTERN int skv_image_path(const skv_image_store *store, const char *name,
                              char **out, skv_error *err);
/* Names, sorted; free with skv_image_list_free. */
SKV_EXTERN int skv_image_list(const skv_image_store *store, char ***names,
                              size_t *n, skv_error *err);
SKV_EXTERN void skv_image_list_free(char **names, size_t n);
SKV_EXTERN int skv_image_remove(skv_image_store *store, const char *name,
                                skv_error *err);

/* "sha256:" + 64 hex digits + NUL. */
#define SKV_IMAGE_DIGEST_MAX 72

/* Bytes of the image's regular files, each inode counted once (hard links
 * share their data). Images imported by an older version have it computed
 * on the first call (a walk of the tree) and cached. SKV_ENOENT: no such
 * image. */
SKV_EXTERN int skv_image_size(const skv_image_store *store, const char *name,
                              uint64_t *out, skv_error *err);
/* "sha256:<hex>" of the archive the image was imported from (compare with
 * `sha256sum`), or "" when unknown (imported from an unpacked directory,
 * or by an older version). cap >= SKV_IMAGE_DIGEST_MAX. */
SKV_EXTERN int skv_image_digest(const skv_image_store *store,
                                const char *name, char *out, size_t cap,
                                skv_error *err);

/* What an image says about how sessions use it, from the JSON document
 * /etc/sokovan/image.json inside its root file system:
 *   {"services": ["jupyter=8888/prefix", "ssh=2200/tcp"],
 *    "command": ["/usr/local/bin/start"]}
 * services: service declarations as session.submit takes them (checked
 * there); command: the session's command when a submit names none. Both
 * optional; other members are ignored (room for more). */
#define SKV_IMAGE_META_PATH "/etc/sokovan/image.json"
/* An OCI image may declare its services in its config's labels instead:
 *   "ai.sokovan.service-ports": "jupyter:prefix:8888,ssh:tcp:2200"
 * (NAME:PROTOCOL:PORT, comma-separated), read when it is imported (a bad
 * label fails the import, naming it). When image.json lists services,
 * those win whole; otherwise the label's are the image's services. */
#define SKV_IMAGE_LABEL_SERVICES "ai.sokovan.service-ports"
#define SKV_IMAGE_META_MAX_SERVICES 16
#define SKV_IMAGE_META_MAX_ARGS 64
typedef struct skv_image_meta {
    char **services;
    size_t n_services;
    char **command;
    size_t n_command;
} skv_image_meta;

/* Read image `name`'s metadata into *out (owned by the caller: clear with
 * skv_image_meta_clear). An image without the document has none (0, both
 * lists empty). The document is read without following symlinks (it is
 * the image's, not the host's) and bounded (64 KiB, the list sizes above,
 * 4 KiB a string); anything else is SKV_EPROTO naming the problem.
 * SKV_ENOENT: no such image. */
SKV_EXTERN int skv_image_meta_get(const skv_image_store *store,
                                  const char *name, skv_image_meta *out,
                                  skv_error *err);
/* Free the lists and zero *meta; NULL is fine. */
SKV_EXTERN void skv_image_meta_clear(skv_image_meta *meta);

/* Image source formats. AUTO detects by content: an archive (or directory)
 * with manifest.json is a docker-save archive, one with oci-layout an OCI
 * image layout, any other archive a rootfs tarball. */
typedef enum skv_image_format {
    SKV_IMAGE_FORMAT_AUTO = 0,
    SKV_IMAGE_FORMAT_ROOTFS = 1,      /* `docker export` tar, any compression */
    SKV_IMAGE_FORMAT_DOCKER_SAVE = 2, /* manifest.json + layer tarballs */
    SKV_IMAGE_FORMAT_OCI_LAYOUT = 3   /* oci-layout, index.json, blobs/ */
} skv_image_format;

/* Import `source` (an absolute path: an archive, or for docker-save / OCI
 * also an unpacked directory) as image `name`. Layers are applied in order
 * with whiteouts (.wh.NAME, .wh..wh..opq); owners and modes are kept.
 * Absolute or ".." member names, links leaving the root and extraction
 * through symlinks are refused (SKV_EPROTO), as are malformed manifests;
 * unreadable archives give SKV_EIO. Every blob is verified against its
 * sha256 digest (OCI: manifests, config, layers; docker save: the config
 * against its file name, layers against its rootfs.diff_ids): a mismatch is
 * SKV_EPROTO naming the blob. An archive holding several images imports the
 * one whose tag / reference name matches `name` ("busybox" matches
 * "busybox:latest" or the only busybox tag; registry prefixes are ignored),
 * then the one for this host's platform; none or several: SKV_EINVAL
 * listing them. Nothing is left behind on failure. */
SKV_EXTERN int skv_image_import(skv_image_store *store, const char *name,
                                const char *source, skv_image_format format,
                                skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_IMAGE_H */
