/* Service ports declared by an OCI image's own config labels, so an image
 * built with the usual tools (a Dockerfile's `LABEL`) needs no
 * /etc/sokovan/image.json to get its services:
 *   LABEL ai.sokovan.service-ports="jupyter:prefix:8888,ssh:tcp:2200"
 * Each entry is NAME:PROTOCOL:PORT (Backend.AI's service-ports order), and
 * becomes the service declaration "NAME=PORT/PROTOCOL" (checked by
 * skv_proto_service_parse, as session.submit checks --service).
 *
 * The label is read once, at import, from the image config the manifest
 * names (its digest already verified), and kept as <image>/services, one
 * declaration a line, beside rootfs: a store file, not the image's, so a
 * session cannot rewrite it. skv_image_meta_get reads it back; image.json's
 * services, when it has any, win whole (image_meta.c). A malformed label
 * fails the import naming the label: the image's builder meant services,
 * and an image silently without them would be worse. A config that is
 * not a JSON image config (the import checks its digest only) declares
 * nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image_int.h"
#include "sokovan/image.h"
#include "sokovan/proto.h"

#define LABEL_MAX 4096u   /* the label's value */

static int bad_label(const char *why, const char *entry, skv_error *err)
{
    return skv__err(err, SKV_EPROTO, "image config label %s: %s%s%s%s: want "
                    "NAME:PROTOCOL:PORT[,...] (PROTOCOL http, prefix or tcp; "
                    "at most %d)", SKV_IMAGE_LABEL_SERVICES, why,
                    entry ? " '" : "", entry ? entry : "", entry ? "'" : "",
                    SKV_IMAGE_META_MAX_SERVICES);
}

/* One "NAME:PROTOCOL:PORT" -> "NAME=PORT/PROTOCOL\n" appended to out. */
static int entry(const char *e, char *out, size_t cap, skv_error *err)
{
    char name[64], proto[16], port[16], decl[128];
    char nm[SKV_PROTO_SERVICE_NAME_MAX], pr[8];
    uint32_t p;
    int n = 0;
    if (sscanf(e, "%63[^:]:%15[^:]:%15[0-9]%n", name, proto, port, &n) != 3
        || e[n])
        return bad_label("malformed entry", e, err);
    snprintf(decl, sizeof decl, "%s=%s/%s", name, port, proto);
    skv_error pe = SKV_ERROR_INIT;
    if (skv_proto_service_parse(decl, nm, &p, pr, &pe))
        return bad_label(pe.message, e, err);
    size_t used = strlen(out);
    if (used + strlen(decl) + 2 > cap)
        return bad_label("too long", NULL, err);
    snprintf(out + used, cap - used, "%s\n", decl);
    return 0;
}

int skv__img_label_services(const char *value, char *out, size_t cap,
                            skv_error *err)
{
    char buf[LABEL_MAX];
    out[0] = '\0';
    if (strlen(value) >= sizeof buf)
        return bad_label("too long", NULL, err);
    snprintf(buf, sizeof buf, "%s", value);
    int count = 0;
    char *save = NULL;
    for (char *e = strtok_r(buf, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
        while (*e == ' ')
            e++;
        if (++count > SKV_IMAGE_META_MAX_SERVICES)
            return bad_label("too many entries", NULL, err);
        int rc = entry(e, out, cap, err);
        if (rc)
            return rc;
    }
    return count ? 0 : bad_label("no entries", NULL, err);
}

/* {"Labels": {...}}: the service label's value into val ("" if none);
 * *bad when its value is not a string that fits. */
static int labels(skv__ij *c, char *val, size_t cap, bool *bad)
{
    char key[256];
    int r;
    if (skv__ij_null(c))
        return 0;
    if (skv__ij_obj_begin(c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(c, key, sizeof key)) == 1) {
        bool ours = !strcmp(key, SKV_IMAGE_LABEL_SERVICES);
        if (ours && skv__ij_string(c, val, cap) < 0)
            return *bad = true, -1;
        if (!ours && skv__ij_skip(c) < 0)
            return -1;
    }
    return r;
}

/* The image config: {"config": {"Labels": {...}, ...}, ...}. */
static int config_label(const char *doc, size_t len, char *val, size_t cap,
                        bool *bad)
{
    skv__ij c;
    char key[256];
    int r, q;
    skv__ij_init(&c, doc, len);
    if (skv__ij_obj_begin(&c) < 0)
        return -1;
    while ((r = skv__ij_obj_next(&c, key, sizeof key)) == 1) {
        if (strcmp(key, "config")) {
            q = skv__ij_skip(&c);
        } else if (skv__ij_null(&c)) {
            q = 0;
        } else {
            q = skv__ij_obj_begin(&c);
            while (q == 0 && (q = skv__ij_obj_next(&c, key, sizeof key)) == 1)
                q = !strcmp(key, "Labels") ? labels(&c, val, cap, bad)
                                           : skv__ij_skip(&c);
        }
        if (q < 0)
            return -1;
    }
    return r < 0 ? -1 : skv__ij_end(&c);
}

/* root is "<image dir>/rootfs": the declarations go beside it. */
static int write_services(const char *root, const char *text, skv_error *err)
{
    char path[PATH_MAX];
    const char *slash = strrchr(root, '/');
    int n = slash ? (int)(slash - root) : 0;
    snprintf(path, sizeof path, "%.*s/%s", n, root, SKV__IMG_SERVICES_FILE);
    return skv__rt_write_file(path, text, strlen(text), err);
}

int skv__img_config_services(const char *src, const char *config,
                             const char *root, skv_error *err)
{
    char *doc = NULL, val[LABEL_MAX] = "";
    bool bad = false;
    char decl[SKV_IMAGE_META_MAX_SERVICES * 64];
    size_t len = 0;
    /* The import never required the config to be a JSON document (only
     * its digest is checked): one that is not, or that is too large for
     * the reader, declares nothing. */
    if (skv__img_read_doc(src, config, &doc, &len, NULL) < 0)
        return 0;
    int rc = config_label(doc, len, val, sizeof val, &bad);
    skv__free(doc);
    if (bad)
        return bad_label("not a string of at most 4 KiB", NULL, err);
    if (rc < 0 || !val[0])
        return 0;
    rc = skv__img_label_services(val, decl, sizeof decl, err);
    return rc < 0 ? rc : write_services(root, decl, err);
}

/* <image dir>/services -> m (services only), when image.json named none. */
int skv__img_services_read(const char *rootfs, skv_image_meta *m,
                           skv_error *err)
{
    char path[PATH_MAX], *text = NULL;
    const char *slash = strrchr(rootfs, '/');
    int n = slash ? (int)(slash - rootfs) : 0;
    snprintf(path, sizeof path, "%.*s/%s", n, rootfs, SKV__IMG_SERVICES_FILE);
    if (access(path, F_OK) != 0)
        return errno == ENOENT ? 0 : skv__err_sys(err, errno, "%s", path);
    int rc = skv__rt_read_file(path, &text, err);
    char *save = NULL;
    for (char *l = rc ? NULL : strtok_r(text, "\n", &save); l && !rc;
         l = strtok_r(NULL, "\n", &save)) {
        char **v = skv__reallocarray(m->services, m->n_services + 1,
                                     sizeof *v);
        if (!v || !(v[m->n_services] = skv__strdup(l)))
            rc = skv__err(err, SKV_ENOMEM, "image services");
        if (v) {
            m->services = v;
            m->n_services += !rc;
        }
    }
    skv__free(text);
    return rc;
}
