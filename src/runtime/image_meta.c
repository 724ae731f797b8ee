/* An image's own metadata: /etc/sokovan/image.json in its root file system
 * names the services its sessions get and the command they run when the
 * submit names none (the interactive image of examples/interactive starts
 * Jupyter and sshd that way). The agent reports it with its images, the
 * manager resolves it into the stored submit body.
 * The document comes with the image, i.e. from whoever built it: it is
 * opened one component at a time without following symlinks (a link to a
 * host file would otherwise be read with the agent's rights), bounded in
 * size, and parsed by the store's bounded JSON reader.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image_int.h"
#include "sokovan/image.h"

#define META_MAX_DOC (64u * 1024)
#define META_MAX_STR 4096u

void skv_image_meta_clear(skv_image_meta *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_services; i++)
        skv__free(m->services[i]);
    for (size_t i = 0; i < m->n_command; i++)
        skv__free(m->command[i]);
    skv__free(m->services);
    skv__free(m->command);
    memset(m, 0, sizeof *m);
}

/* Open <rootfs>/etc/sokovan/image.json refusing symlinks on the way:
 * fd >= 0, -1 with errno (ENOENT: the image has no metadata). */
static int open_doc(const char *rootfs)
{
    static const char *const parts[] = {"etc", "sokovan", "image.json"};
    int dir = open(rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; dir >= 0 && i < SKV__ARRAY_LEN(parts); i++) {
        bool last = i + 1 == SKV__ARRAY_LEN(parts);
        int fd = openat(dir, parts[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
                                           (last ? 0 : O_DIRECTORY));
        int saved = errno;
        close(dir);
        errno = saved;
        dir = fd;
    }
    return dir;
}

static int read_doc(int fd, char **out, size_t *len, skv_error *err)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return skv__err_sys(err, errno, "image: " SKV_IMAGE_META_PATH);
    if (!S_ISREG(st.st_mode) || st.st_size > (off_t)META_MAX_DOC)
        return skv__err(err, SKV_EPROTO, "image: " SKV_IMAGE_META_PATH
                        " is not a regular file of at most %u bytes",
                        META_MAX_DOC);
    char *buf = skv__malloc((size_t)st.st_size + 1);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "image metadata");
    ssize_t n = pread(fd, buf, (size_t)st.st_size, 0);
    if (n != (ssize_t)st.st_size || memchr(buf, '\0', (size_t)n)) {
        skv__free(buf);
        return skv__err(err, SKV_EPROTO, "image: cannot read "
                        SKV_IMAGE_META_PATH " whole (short read or NUL)");
    }
    buf[n] = '\0';
    *out = buf;
    *len = (size_t)n;
    return 0;
}

/* ["word", ...] into *v / *n, at most max strings. -1 on any error. */
static int strings(skv__ij *c, char ***v, size_t *n, size_t max)
{
    char buf[META_MAX_STR];
    if (skv__ij_arr_begin(c) < 0)
        return -1;
    int more;
    while ((more = skv__ij_arr_next(c)) == 1) {
        if (*n == max || skv__ij_string(c, buf, sizeof buf) < 0)
            return -1;
        char **nv = skv__reallocarray(*v, *n + 1, sizeof **v);
        if (!nv)
            return -1;
        *v = nv;
        if (!(nv[*n] = skv__strdup(buf)))
            return -1;
        (*n)++;
    }
    return more;
}

static int parse(const char *doc, size_t len, skv_image_meta *m)
{
    skv__ij c;
    char key[64];
    int more;
    skv__ij_init(&c, doc, len);
    if (skv__ij_obj_begin(&c) < 0)
        return -1;
    while ((more = skv__ij_obj_next(&c, key, sizeof key)) == 1) {
        int rc = !strcmp(key, "services")
                     ? strings(&c, &m->services, &m->n_services,
                               SKV_IMAGE_META_MAX_SERVICES)
                 : !strcmp(key, "command")
                     ? strings(&c, &m->command, &m->n_command,
                               SKV_IMAGE_META_MAX_ARGS)
                     : skv__ij_skip(&c);
        if (rc < 0)
            return -1;
    }
    return more < 0 ? -1 : skv__ij_end(&c);
}

/* image.json from fd (or none: fd < 0); its services win whole over the
 * config label's kept beside rootfs. Takes rootfs and fd. */
static int meta_done(int fd, char *rootfs, const char *name,
                     skv_image_meta *out, int rc, skv_error *err)
{
    char *doc = NULL;
    size_t len = 0;
    if (fd >= 0) {
        rc = read_doc(fd, &doc, &len, err);
        close(fd);
    }
    if (!rc && doc && parse(doc, len, out) < 0)
        rc = skv__err(err, SKV_EPROTO, "image %s: malformed "
                      SKV_IMAGE_META_PATH ": want {\"services\": [\"NAME="
                      "PORT/PROTO\", ... at most %d], \"command\": [\"ARG\", "
                      "... at most %d]}, strings under %u bytes", name,
                      SKV_IMAGE_META_MAX_SERVICES, SKV_IMAGE_META_MAX_ARGS,
                      META_MAX_STR);
    if (!rc && doc && !out->n_services)
        rc = skv__img_services_read(rootfs, out, err);
    if (rc)
        skv_image_meta_clear(out);
    skv__free(doc);
    skv__free(rootfs);
    return rc;
}

int skv_image_meta_get(const skv_image_store *s, const char *name,
                       skv_image_meta *out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "image metadata: out is NULL");
    memset(out, 0, sizeof *out);
    char *rootfs = NULL;
    int rc = skv_image_path(s, name, &rootfs, err);
    if (rc < 0)
        return rc;
    int fd = open_doc(rootfs);
    int saved = errno;
    if (fd < 0 && saved == ENOENT)   /* no image.json: the label's, if any */
        rc = skv__img_services_read(rootfs, out, err);
    if (fd >= 0 || saved == ENOENT || rc)
        return meta_done(fd, rootfs, name, out, rc, err);
    skv__free(rootfs);
    return saved == ELOOP || saved == ENOTDIR
                   ? skv__err(err, SKV_EPROTO, "image %s: "
                              SKV_IMAGE_META_PATH " or a directory above "
                              "it is a symlink or not a directory", name)
                   : skv__err_sys(err, saved, "image %s: "
                                  SKV_IMAGE_META_PATH, name);
}
