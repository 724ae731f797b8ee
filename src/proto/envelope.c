/* The envelope: a msgpack map whose first key is "v" (protocol version),
 * so that any future version can change everything after it and still be
 * recognised and refused cleanly. The body travels as a byte string: the
 * exact bytes that are signed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

#define MAX_KIND SKV_PROTO_EVENT

static int type_name_check(const char *s, size_t len, int code, skv_error *err)
{
    if (len == 0 || len >= SKV_PROTO_TYPE_NAME_MAX)
        return skv__err(err, code, "message type name of %zu bytes (must be "
                        "1..%d)", len, SKV_PROTO_TYPE_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_'))
            return skv__err(err, code, "message type name: invalid byte 0x%02x",
                            (unsigned char)c);
    }
    return 0;
}

static void pack_auth(skv__mpw *w, const skv_auth_block *a)
{
    msgpack_pack_map(&w->pk, 4);
    skv__mpw_cstr(w, "ak");
    skv__mpw_cstr(w, a->access_key);
    skv__mpw_cstr(w, "ts");
    msgpack_pack_int64(&w->pk, a->timestamp_ms);
    skv__mpw_cstr(w, "n");
    msgpack_pack_bin(&w->pk, SKV_AUTH_NONCE_BYTES);
    msgpack_pack_bin_body(&w->pk, a->nonce, SKV_AUTH_NONCE_BYTES);
    skv__mpw_cstr(w, "s");
    msgpack_pack_bin(&w->pk, SKV_AUTH_SIG_BYTES);
    msgpack_pack_bin_body(&w->pk, a->signature, SKV_AUTH_SIG_BYTES);
}

static int check_env_out(const skv_proto_envelope *env, const char **name,
                          skv_error *err)
{
    if (env->version != SKV_PROTO_VERSION)
        return skv__err(err, SKV_EVERSION, "envelope version %u (this library "
                        "speaks %d)", env->version, SKV_PROTO_VERSION);
    if ((unsigned)env->kind > MAX_KIND)
        return skv__err(err, SKV_EINVAL, "envelope kind %d", (int)env->kind);
    if ((int)env->type < 0 || (int)env->type >= SKV_PROTO_TYPE_COUNT)
        return skv__err(err, SKV_EINVAL, "envelope type %d", (int)env->type);
    *name = env->type == SKV_PROTO_UNKNOWN ? env->type_name
                                            : skv_proto_type_name(env->type);
    int rc = type_name_check(*name, strnlen(*name, SKV_PROTO_TYPE_NAME_MAX),
                             SKV_EINVAL, err);
    if (rc)
        return rc;
    if (env->type != SKV_PROTO_UNKNOWN && env->kind != skv_proto_type_kind(env->type))
        return skv__err(err, SKV_EINVAL, "'%s' messages must have kind %d, not %d",
                        *name, (int)skv_proto_type_kind(env->type), (int)env->kind);
    if (!env->body || !env->body_len)
        return skv__err(err, SKV_EINVAL, "envelope without a body");
    if (env->has_auth)
        return skv_auth_access_key_check(env->auth.access_key, err);
    return 0;
}

int skv_proto_envelope_encode(void **frame, size_t *frame_len,
                              const skv_proto_envelope *env, size_t max_frame,
                              skv_error *err)
{
    const char *name = NULL;
    if (!frame || !frame_len || !env)
        return skv__err(err, SKV_EINVAL, "envelope_encode: NULL argument");
    int rc = check_env_out(env, &name, err);
    if (rc)
        return rc;
    skv__mpw w;
    skv__mpw_init(&w);
    static const uint8_t placeholder[SKV_PROTO_FRAME_HEADER] = {0};
    w.pk.callback(&w, (const char *)placeholder, sizeof placeholder);
    msgpack_pack_map(&w.pk, env->has_auth ? 7 : 6);
    skv__mpw_cstr(&w, "v");
    msgpack_pack_uint32(&w.pk, env->version);
    skv__mpw_cstr(&w, "k");
    msgpack_pack_uint32(&w.pk, (uint32_t)env->kind);
    skv__mpw_cstr(&w, "id");
    msgpack_pack_uint64(&w.pk, env->request_id);
    skv__mpw_cstr(&w, "t");
    skv__mpw_cstr(&w, name);
    skv__mpw_cstr(&w, "ts");
    msgpack_pack_int64(&w.pk, env->timestamp_ms);
    skv__mpw_cstr(&w, "b");
    msgpack_pack_bin(&w.pk, env->body_len);
    msgpack_pack_bin_body(&w.pk, env->body, env->body_len);
    if (env->has_auth) {
        skv__mpw_cstr(&w, "a");
        pack_auth(&w, &env->auth);
    }
    size_t len = 0;
    uint8_t *buf = skv__mpw_take(&w, &len);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "envelope_encode: out of memory");
    rc = skv_proto_frame_header(buf, len - SKV_PROTO_FRAME_HEADER, max_frame, err);
    if (rc) {
        skv__free(buf);
        return rc;
    }
    *frame = buf;
    *frame_len = len;
    return 0;
}

void skv_proto_envelope_free(skv_proto_envelope *env)
{
    if (!env)
        return;
    skv__free(env->body);
    memset(env, 0, sizeof *env);
}
