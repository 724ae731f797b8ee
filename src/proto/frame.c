/* Incremental frame reader: bytes in as they arrive, whole frames out.
 * The 4-byte length is validated as soon as it is complete, so a hostile
 * length is refused before any of its payload is buffered; the buffer
 * only ever holds bytes the caller actually fed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/proto.h"

struct skv_proto_reader {
    size_t max_frame;
    uint8_t *buf;
    size_t start;   /* first unconsumed byte */
    size_t scan;    /* first frame header not yet validated (>= start) */
    size_t len;     /* end of buffered data */
    size_t cap;
    int failed;     /* sticky error code, 0 when healthy */
    char why[SKV_ERROR_MESSAGE_MAX];
};

int skv_proto_frame_header(uint8_t out[SKV_PROTO_FRAME_HEADER],
                           size_t payload_len, size_t max_frame, skv_error *err)
{
    if (max_frame == 0)
        max_frame = SKV_PROTO_DEFAULT_MAX_FRAME;
    if (!out)
        return skv__err(err, SKV_EINVAL, "frame_header: NULL buffer");
    if (payload_len == 0 || payload_len > max_frame || payload_len > UINT32_MAX)
        return skv__err(err, SKV_ERANGE, "frame payload of %zu bytes (must be "
                        "1..%zu)", payload_len, max_frame);
    out[0] = (uint8_t)(payload_len >> 24);
    out[1] = (uint8_t)(payload_len >> 16);
    out[2] = (uint8_t)(payload_len >> 8);
    out[3] = (uint8_t)payload_len;
    return 0;
}

int skv_proto_reader_new(skv_proto_reader **out, size_t max_frame,
                         skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "reader_new: NULL out-pointer");
    if (max_frame == 0)
        max_frame = SKV_PROTO_DEFAULT_MAX_FRAME;
    if (max_frame > SKV_PROTO_MAX_FRAME_LIMIT)
        return skv__err(err, SKV_EINVAL, "reader_new: max_frame %zu above the "
                        "limit %u", max_frame, SKV_PROTO_MAX_FRAME_LIMIT);
    skv_proto_reader *r = skv__calloc(1, sizeof *r);
    if (!r)
        return skv__err(err, SKV_ENOMEM, "reader_new: out of memory");
    r->max_frame = max_frame;
    *out = r;
    return 0;
}

void skv_proto_reader_free(skv_proto_reader *r)
{
    if (!r)
        return;
    skv__free(r->buf);
    skv__free(r);
}

/* Declared here: set_max_frame re-checks buffered headers with it. */
static int scan_headers(skv_proto_reader *r, skv_error *err);

int skv_proto_reader_set_max_frame(skv_proto_reader *r, size_t max_frame,
                                   skv_error *err)
{
    if (!r)
        return skv__err(err, SKV_EINVAL, "reader_set_max_frame: NULL reader");
    if (max_frame == 0)
        max_frame = SKV_PROTO_DEFAULT_MAX_FRAME;
    if (max_frame > SKV_PROTO_MAX_FRAME_LIMIT)
        return skv__err(err, SKV_EINVAL, "reader_set_max_frame: %zu above the "
                        "limit %u", max_frame, SKV_PROTO_MAX_FRAME_LIMIT);
    if (r->failed)
        return skv__err(err, r->failed, "%s (connection unusable)", r->why);
    /* The limit covers every frame not yet taken out, so headers already
     * buffered are checked again against it. */
    r->max_frame = max_frame;
    r->scan = r->start;
    return scan_headers(r, err);
}

size_t skv_proto_reader_buffered(const skv_proto_reader *r)
{
    return r ? r->len - r->start : 0;
}

static int fail(skv_proto_reader *r, skv_error *err, int code,
                const char *fmt, ...) SKV_PRINTF(4, 5);
static int fail(skv_proto_reader *r, skv_error *err, int code,
                const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->failed = code;
    return skv__err(err, code, "%s", r->why);
}

static int sticky(const skv_proto_reader *r, skv_error *err)
{
    return skv__err(err, r->failed, "%s (connection unusable)", r->why);
}

/* Check every complete frame header in the buffer, without consuming. */
static size_t frame_len_at(const uint8_t *h)
{
    return ((size_t)h[0] << 24) | ((size_t)h[1] << 16) | ((size_t)h[2] << 8) | h[3];
}

/* Validate the headers of frames that arrived since the last scan; each
 * header is checked once its 4 bytes are in, so feeding stays linear. */
static int scan_headers(skv_proto_reader *r, skv_error *err)
{
    size_t at = r->scan > r->start ? r->scan : r->start;
    while (r->len - at >= SKV_PROTO_FRAME_HEADER) {
        size_t n = frame_len_at(r->buf + at);
        if (n == 0)
            return fail(r, err, SKV_EPROTO, "zero-length frame at offset %zu",
                        at - r->start);
        if (n > r->max_frame)
            return fail(r, err, SKV_EPROTO, "frame of %zu bytes exceeds the "
                        "maximum of %zu", n, r->max_frame);
        if (r->len - at - SKV_PROTO_FRAME_HEADER < n)
            break;
        at += SKV_PROTO_FRAME_HEADER + n;
        r->scan = at;
    }
    return 0;
}

/* Make room for len more bytes, first by moving unconsumed data to the
 * front (consumed frames are dead), then by growing. */
static int reserve(skv_proto_reader *r, size_t len, skv_error *err)
{
    if (r->start) {
        memmove(r->buf, r->buf + r->start, r->len - r->start);
        r->len -= r->start;
        r->scan = r->scan > r->start ? r->scan - r->start : 0;
        r->start = 0;
    }
    if (len <= r->cap - r->len)
        return 0;
    size_t need = r->len + len;
    if (need < r->len)
        return fail(r, err, SKV_ERANGE, "reader buffer size overflow");
    size_t ncap = r->cap ? r->cap : 4096;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    uint8_t *nb = skv__realloc(r->buf, ncap);
    if (!nb)
        return fail(r, err, SKV_ENOMEM, "reader: out of memory for %zu bytes",
                    ncap);
    r->buf = nb;
    r->cap = ncap;
    return 0;
}

int skv_proto_reader_feed(skv_proto_reader *r, const void *data, size_t len,
                          skv_error *err)
{
    if (!r || (!data && len))
        return skv__err(err, SKV_EINVAL, "reader_feed: NULL argument");
    if (r->failed)
        return sticky(r, err);
    if (len == 0)
        return 0;
    /* Validate a pending header before buffering the payload behind it. */
    size_t have = r->len - r->start;
    if (have < SKV_PROTO_FRAME_HEADER) {
        size_t head = SKV_PROTO_FRAME_HEADER - have;
        if (head > len)
            head = len;
        int rc = reserve(r, head, err);
        if (rc)
            return rc;
        memcpy(r->buf + r->len, data, head);
        r->len += head;
        rc = scan_headers(r, err);
        if (rc || head == len)
            return rc;
        data = (const uint8_t *)data + head;
        len -= head;
    }
    int rc = reserve(r, len, err);
    if (rc)
        return rc;
    memcpy(r->buf + r->len, data, len);
    r->len += len;
    return scan_headers(r, err);
}

int skv_proto_reader_next(skv_proto_reader *r, const void **payload,
                          size_t *len, skv_error *err)
{
    if (!r || !payload || !len)
        return skv__err(err, SKV_EINVAL, "reader_next: NULL argument");
    if (r->failed)
        return sticky(r, err);
    size_t have = r->len - r->start;
    if (have < SKV_PROTO_FRAME_HEADER)
        return 0;
    const uint8_t *h = r->buf + r->start;
    size_t n = frame_len_at(h);
    if (n == 0 || n > r->max_frame) /* scan_headers refused it already */
        return fail(r, err, SKV_EPROTO, "invalid frame length %zu", n);
    if (have - SKV_PROTO_FRAME_HEADER < n)
        return 0;
    *payload = h + SKV_PROTO_FRAME_HEADER;
    *len = n;
    r->start += SKV_PROTO_FRAME_HEADER + n;
    if (r->start == r->len)
        r->start = r->len = r->scan = 0; /* the frame stays in place */
    return 1;
}
