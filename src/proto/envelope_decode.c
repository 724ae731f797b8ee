/* Decoding an envelope from untrusted bytes. The version is read first
 * (it must be the first key) and anything but SKV_PROTO_VERSION is
 * SKV_EVERSION before the rest is even looked at.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

enum { K_KIND, K_ID, K_TYPE, K_TS, K_BODY, K_AUTH, K_COUNT };
static const char *const env_keys[K_COUNT] = {"k", "id", "t", "ts", "b", "a"};

static int key_is(const char *k, uint32_t len, const char *want)
{
    return strlen(want) == len && memcmp(k, want, len) == 0;
}

static int read_version(skv__mpr *r, skv_error *err)
{
    const char *k;
    uint32_t klen;
    uint64_t v;
    int rc = skv__mpr_str(r, &k, &klen, err);
    if (!rc && !key_is(k, klen, "v"))
        rc = skv__err(err, SKV_EPROTO, "the first envelope key must be \"v\"");
    if (!rc)
        rc = skv__mpr_u64(r, &v, err);
    if (!rc && v != SKV_PROTO_VERSION)
        rc = skv__err(err, SKV_EVERSION, "protocol version %llu is not "
                      "supported (this side speaks %d)", (unsigned long long)v,
                      SKV_PROTO_VERSION);
    return rc;
}

static int read_bin_exact(skv__mpr *r, uint8_t *out, uint32_t want,
                          const char *what, skv_error *err)
{
    const uint8_t *b;
    uint32_t len;
    int rc = skv__mpr_bin(r, &b, &len, err);
    if (!rc && len != want)
        rc = skv__err(err, SKV_EPROTO, "auth %s of %u bytes (expected %u)",
                      what, len, want);
    if (!rc)
        memcpy(out, b, want);
    return rc;
}

static int read_auth_entry(skv__mpr *r, skv_auth_block *a, unsigned *seen,
                           skv_error *err)
{
    static const char *const names[4] = {"ak", "ts", "n", "s"};
    const char *k, *s;
    uint32_t klen, slen;
    int rc = skv__mpr_str(r, &k, &klen, err);
    for (unsigned i = 0; !rc && i < 4; i++) {
        if (!key_is(k, klen, names[i]))
            continue;
        if (*seen & (1u << i))
            return skv__err(err, SKV_EPROTO, "auth: duplicate key '%s'", names[i]);
        *seen |= 1u << i;
        switch (i) {
        case 0:
            rc = skv__mpr_str(r, &s, &slen, err);
            if (!rc && (slen == 0 || slen >= SKV_AUTH_ACCESS_KEY_MAX))
                return skv__err(err, SKV_EPROTO, "auth: access key of %u bytes",
                                slen);
            if (!rc) {
                memcpy(a->access_key, s, slen);
                a->access_key[slen] = 0;
                if (skv_auth_access_key_check(a->access_key, NULL))
                    return skv__err(err, SKV_EPROTO, "auth: malformed access key");
            }
            return rc;
        case 1: return skv__mpr_i64(r, &a->timestamp_ms, err);
        case 2: return read_bin_exact(r, a->nonce, SKV_AUTH_NONCE_BYTES, "nonce", err);
        default: return read_bin_exact(r, a->signature, SKV_AUTH_SIG_BYTES,
                                       "signature", err);
        }
    }
    return rc ? rc : skv__mpr_skip(r, err);
}

static int read_auth(skv__mpr *r, skv_auth_block *a, skv_error *err)
{
    uint32_t n;
    unsigned seen = 0;
    int rc = skv__mpr_map(r, &n, err);
    for (uint32_t i = 0; !rc && i < n; i++)
        rc = read_auth_entry(r, a, &seen, err);
    if (!rc && seen != 0xf)
        rc = skv__err(err, SKV_EPROTO, "auth block lacks one of ak, ts, n, s");
    return rc;
}

static int read_type(skv__mpr *r, skv_proto_envelope *env, skv_error *err)
{
    const char *s;
    uint32_t len;
    int rc = skv__mpr_str(r, &s, &len, err);
    if (!rc && (len == 0 || len >= SKV_PROTO_TYPE_NAME_MAX))
        rc = skv__err(err, SKV_EPROTO, "message type name of %u bytes", len);
    if (rc)
        return rc;
    memcpy(env->type_name, s, len);
    env->type_name[len] = 0;
    for (uint32_t i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_'))
            return skv__err(err, SKV_EPROTO, "message type name: invalid byte "
                            "0x%02x", (unsigned char)c);
    }
    skv_proto_type_from_name(&env->type, env->type_name, NULL);
    return 0;
}

static int read_body(skv__mpr *r, skv_proto_envelope *env, skv_error *err)
{
    const uint8_t *b;
    uint32_t len;
    int rc = skv__mpr_bin(r, &b, &len, err);
    if (!rc && len == 0)
        rc = skv__err(err, SKV_EPROTO, "empty body");
    if (rc)
        return rc;
    env->body = skv__malloc(len);
    if (!env->body)
        return skv__err(err, SKV_ENOMEM, "envelope: out of memory");
    memcpy(env->body, b, len);
    env->body_len = len;
    return 0;
}

static int read_field(skv__mpr *r, skv_proto_envelope *env, int which,
                      skv_error *err)
{
    uint64_t u;
    int rc;
    switch (which) {
    case K_KIND:
        rc = skv__mpr_u64(r, &u, err);
        if (!rc && u > SKV_PROTO_EVENT)
            rc = skv__err(err, SKV_EPROTO, "kind %llu is not request(0), "
                          "response(1) or event(2)", (unsigned long long)u);
        if (!rc)
            env->kind = (skv_proto_kind)u;
        return rc;
    case K_ID: return skv__mpr_u64(r, &env->request_id, err);
    case K_TYPE: return read_type(r, env, err);
    case K_TS: return skv__mpr_i64(r, &env->timestamp_ms, err);
    case K_BODY: return read_body(r, env, err);
    default:
        env->has_auth = 1;
        return read_auth(r, &env->auth, err);
    }
}

static int read_entries(skv__mpr *r, skv_proto_envelope *env, uint32_t n,
                        skv_error *err)
{
    unsigned seen = 0;
    for (uint32_t i = 1; i < n; i++) {
        const char *k;
        uint32_t klen;
        int rc = skv__mpr_str(r, &k, &klen, err);
        if (rc)
            return rc;
        int which = -1;
        for (int j = 0; j < K_COUNT; j++)
            if (key_is(k, klen, env_keys[j]))
                which = j;
        if (which < 0) {
            rc = skv__mpr_skip(r, err); /* a later minor revision's key */
        } else if (seen & (1u << which)) {
            rc = skv__err(err, SKV_EPROTO, "duplicate envelope key '%s'",
                          env_keys[which]);
        } else {
            seen |= 1u << which;
            rc = read_field(r, env, which, err);
            if (rc)
                skv__err_prefix(err, "envelope '%s'", env_keys[which]);
        }
        if (rc)
            return rc;
    }
    unsigned need = (1u << K_COUNT) - 1 - (1u << K_AUTH);
    if ((seen & need) != need)
        return skv__err(err, SKV_EPROTO, "envelope lacks one of k, id, t, ts, b");
    return 0;
}

int skv_proto_envelope_decode(skv_proto_envelope *out, const void *payload,
                              size_t len, skv_error *err)
{
    if (!out || (!payload && len))
        return skv__err(err, SKV_EINVAL, "envelope_decode: NULL argument");
    memset(out, 0, sizeof *out);
    skv__mpr r = {payload, (const uint8_t *)payload + len};
    uint32_t n;
    int rc = skv__mpr_map(&r, &n, err);
    if (!rc && n == 0)
        rc = skv__err(err, SKV_EPROTO, "empty envelope");
    if (!rc)
        rc = read_version(&r, err);
    if (!rc)
        rc = read_entries(&r, out, n, err);
    if (!rc && r.p != r.end)
        rc = skv__err(err, SKV_EPROTO, "%zu trailing bytes after the envelope",
                      skv__mpr_left(&r));
    if (!rc && out->type != SKV_PROTO_UNKNOWN &&
        out->kind != skv_proto_type_kind(out->type))
        rc = skv__err(err, SKV_EPROTO, "'%s' messages must have kind %d, not %d",
                      out->type_name, (int)skv_proto_type_kind(out->type),
                      (int)out->kind);
    if (rc) {
        if (rc != SKV_EVERSION && rc != SKV_ENOMEM)
            skv__err_prefix(err, "malformed frame");
        skv_proto_envelope_free(out);
        return rc;
    }
    out->version = SKV_PROTO_VERSION;
    return 0;
}
