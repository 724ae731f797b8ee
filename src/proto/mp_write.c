/* msgpack writer: msgpack-c's packer writing into a buffer that comes from
 * the library's allocator, so encoded messages are freed with skv_free.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mp.h"

static int grow_write(void *data, const char *buf, size_t len)
{
    skv__mpw *w = data;
    if (w->failed)
        return -1;
    if (len > w->cap - w->len) {
        size_t ncap = w->cap ? w->cap : 256;
        while (len > ncap - w->len) {
            if (ncap > SIZE_MAX / 2) {
                w->failed = true;
                return -1;
            }
            ncap *= 2;
        }
        uint8_t *nb = skv__realloc(w->buf, ncap);
        if (!nb) {
            w->failed = true;
            return -1;
        }
        w->buf = nb;
        w->cap = ncap;
    }
    memcpy(w->buf + w->len, buf, len);
    w->len += len;
    return 0;
}

void skv__mpw_init(skv__mpw *w)
{
    memset(w, 0, sizeof *w);
    msgpack_packer_init(&w->pk, w, grow_write);
}

uint8_t *skv__mpw_take(skv__mpw *w, size_t *len)
{
    if (w->failed) {
        skv__mpw_dispose(w);
        return NULL;
    }
    uint8_t *b = w->buf;
    *len = w->len;
    if (!b) /* nothing written: still hand out a valid buffer */
        b = skv__malloc(1);
    w->buf = NULL;
    w->len = w->cap = 0;
    return b;
}

void skv__mpw_dispose(skv__mpw *w)
{
    skv__free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

void skv__mpw_str(skv__mpw *w, const char *s, size_t len)
{
    msgpack_pack_str(&w->pk, len);
    msgpack_pack_str_body(&w->pk, s, len);
}

void skv__mpw_cstr(skv__mpw *w, const char *s)
{
    skv__mpw_str(w, s, strlen(s));
}
