/* The agent's own record of each kernel, written atomically before its
 * container is created: the manager's kernel.create body and the node
 * placement (slot, plugin device, amount), so that a restarted agent takes
 * back exactly the same cores, memory and accelerators.
 * File state_dir/kernels/<kernel id>.rec: two length-prefixed parts (the
 * protocol's frame header), the body and the placement as text lines
 * "slot<TAB>device<TAB>qty".
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_internal.h"

#define RECORD_MAX (4u * 1024 * 1024)

char *skv__agent_path(const skv_agent *a, const char *rel)
{
    return skv__asprintf("%s/%s", a->state_dir, rel);
}

static char *record_path(const skv_agent *a, const char *id)
{
    return skv__asprintf("%s/kernels/%s.rec", a->state_dir, id);
}

static int placement_text(char **out, size_t *len, const skv__agent_kernel *k,
                          skv_error *err)
{
    /* A header line: the part is never empty (the frame format forbids). */
    static const char head[] = "# slot\tdevice\tqty\n";
    size_t cap = 64, n = sizeof(head) - 1;
    char *buf = skv__malloc(cap);
    if (buf)
        memcpy(buf, head, n);
    skv_node_amount am;
    for (size_t i = 0; buf && skv_node_placement_at(k->pl, i, &am) == 0;
         i++) {
        size_t need = strlen(am.slot) + strlen(am.device) + 32;
        if (n + need >= cap) {
            cap = (n + need) * 2;
            char *p = skv__realloc(buf, cap);
            if (!p) {
                skv__free(buf);
                buf = NULL;
                break;
            }
            buf = p;
        }
        n += (size_t)snprintf(buf + n, cap - n, "%s\t%s\t%lld\n", am.slot,
                              am.device, (long long)am.qty);
    }
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    *out = buf;
    *len = n;
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Write tmp, fsync, rename over path: readers see the old or the new. */
static int write_atomic(const char *path, const void *bytes, size_t len,
                        skv_error *err)
{
    char *tmp = skv__asprintf("%s.tmp", path);
    if (!tmp)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int rc = fd < 0 ? -1 : write_all(fd, bytes, len);
    if (rc == 0)
        rc = fsync(fd);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -1;
        e = errno;
    }
    if (rc)
        unlink(tmp);
    skv__free(tmp);
    return rc ? skv__err_sys(err, e, "agent: cannot write %s", path) : 0;
}

/* The record as bytes (both parts with their headers) and its path, so a
 * background creator can store it without touching the agent's node. */
int skv__agent_record_render(skv__agent_record *out, const skv_agent *a,
                             const skv__agent_kernel *k, const void *body,
                             size_t len, skv_error *err)
{
    char *text = NULL;
    size_t tlen = 0;
    uint8_t h1[SKV_PROTO_FRAME_HEADER], h2[SKV_PROTO_FRAME_HEADER];
    memset(out, 0, sizeof(*out));
    int rc = placement_text(&text, &tlen, k, err);
    if (rc == 0)
        rc = skv_proto_frame_header(h1, len, RECORD_MAX, err);
    if (rc == 0)
        rc = skv_proto_frame_header(h2, tlen, RECORD_MAX, err);
    size_t total = sizeof(h1) + len + sizeof(h2) + tlen;
    if (rc == 0 && (!(out->path = record_path(a, k->req.kernel_id)) ||
                    !(out->bytes = skv__malloc(total))))
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc == 0) {
        char *p = out->bytes;
        memcpy(p, h1, sizeof(h1));
        memcpy(p += sizeof(h1), body, len);
        memcpy(p += len, h2, sizeof(h2));
        memcpy(p + sizeof(h2), text, tlen);
        out->len = total;
    }
    skv__free(text);
    if (rc)
        skv__agent_record_clear(out);
    return rc;
}

int skv__agent_record_store(const skv__agent_record *r, skv_error *err)
{
    return write_atomic(r->path, r->bytes, r->len, err);
}

void skv__agent_record_clear(skv__agent_record *r)
{
    skv__free(r->path);
    skv__free(r->bytes);
    memset(r, 0, sizeof(*r));
}

int skv__agent_record_write(skv_agent *a, const skv__agent_kernel *k,
                            const void *body, size_t len, skv_error *err)
{
    skv__agent_record r;
    int rc = skv__agent_record_render(&r, a, k, body, len, err);
    if (rc == 0)
        rc = skv__agent_record_store(&r, err);
    skv__agent_record_clear(&r);
    return rc;
}

void skv__agent_record_remove(skv_agent *a, const char *kernel_id)
{
    char *path = record_path(a, kernel_id);
    if (path && unlink(path) < 0 && errno != ENOENT)
        skv__log(SKV_LOG_WARN, "agent", "cannot remove %s: %s", path,
                 strerror(errno));
    skv__free(path);
}
