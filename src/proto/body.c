/* Public body encode/decode/free over the generic engine.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

static const skv__pdesc *desc_of(skv_proto_type type, skv_error *err)
{
    if ((int)type <= SKV_PROTO_UNKNOWN || (int)type >= SKV_PROTO_TYPE_COUNT) {
        skv__err(err, SKV_EINVAL, "message type %d is not a known type",
                 (int)type);
        return NULL;
    }
    return skv__proto_types[type].desc;
}

int skv_proto_body_encode(void **out, size_t *out_len, skv_proto_type type,
                          const void *body, skv_error *err)
{
    if (!out || !out_len || !body)
        return skv__err(err, SKV_EINVAL, "body_encode: NULL argument");
    const skv__pdesc *d = desc_of(type, err);
    if (!d)
        return SKV_EINVAL;
    skv__mpw w;
    skv__mpw_init(&w);
    int rc = skv__proto_pack(&w, d, body, err);
    if (rc) {
        skv__mpw_dispose(&w);
        return rc;
    }
    size_t len = 0;
    uint8_t *buf = skv__mpw_take(&w, &len);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "body_encode: out of memory");
    *out = buf;
    *out_len = len;
    return 0;
}

int skv_proto_body_decode(void *out, skv_proto_type type, const void *buf,
                          size_t len, skv_error *err)
{
    if (!out || (!buf && len))
        return skv__err(err, SKV_EINVAL, "body_decode: NULL argument");
    const skv__pdesc *d = desc_of(type, err);
    if (!d)
        return SKV_EINVAL;
    memset(out, 0, d->size);
    skv__mpr r = {buf, (const uint8_t *)buf + len};
    int rc = skv__proto_unpack(&r, d, out, err);
    if (!rc && r.p != r.end)
        rc = skv__err(err, SKV_EPROTO, "%s: %zu trailing bytes after the body",
                      d->name, skv__mpr_left(&r));
    if (rc) {
        skv__proto_release(d, out);
        memset(out, 0, d->size);
    }
    return rc;
}

void skv_proto_body_free(skv_proto_type type, void *body)
{
    if (!body)
        return;
    const skv__pdesc *d = desc_of(type, NULL);
    if (!d)
        return;
    skv__proto_release(d, body);
    memset(body, 0, d->size);
}
