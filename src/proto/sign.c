/* Signing and verifying envelopes, and the one-call message encoders.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

static void auth_message(skv_auth_message *m, const skv_proto_envelope *env)
{
    m->version = env->version;
    m->kind = (uint32_t)env->kind;
    m->request_id = env->request_id;
    m->type = env->type == SKV_PROTO_UNKNOWN ? env->type_name
                                             : skv_proto_type_name(env->type);
    m->body = env->body;
    m->body_len = env->body_len;
}

int skv_proto_envelope_sign(skv_proto_envelope *env,
                            const skv_proto_credentials *cred, int64_t now_ms,
                            const uint8_t *nonce, skv_error *err)
{
    if (!env || !cred || !cred->access_key || !cred->secret_key)
        return skv__err(err, SKV_EINVAL, "envelope_sign: NULL argument");
    int rc = skv_auth_access_key_check(cred->access_key, err);
    if (rc)
        return rc;
    skv_auth_block blk;
    memset(&blk, 0, sizeof blk);
    strcpy(blk.access_key, cred->access_key);
    blk.timestamp_ms = now_ms;
    if (nonce)
        memcpy(blk.nonce, nonce, SKV_AUTH_NONCE_BYTES);
    else
        rc = skv_auth_nonce_generate(blk.nonce, err);
    skv_auth_message m;
    auth_message(&m, env);
    if (!rc)
        rc = skv_auth_sign(&blk, &m, cred->secret_key, err);
    if (rc)
        return rc;
    env->auth = blk;
    env->has_auth = 1;
    env->timestamp_ms = now_ms;
    return 0;
}

int skv_proto_envelope_verify(skv_auth_verifier *v,
                              skv_auth_principal *principal,
                              const skv_proto_envelope *env, int64_t now_ms,
                              skv_error *err)
{
    if (!v || !env)
        return skv__err(err, SKV_EINVAL, "envelope_verify: NULL argument");
    if (!env->has_auth)
        return skv__err(err, SKV_EAUTH, "unsigned '%s' message refused",
                        env->type_name[0] ? env->type_name
                                          : skv_proto_type_name(env->type));
    skv_auth_message m;
    auth_message(&m, env);
    return skv_auth_verify(v, principal, &env->auth, &m, now_ms, err);
}

int skv_proto_message_encode(void **frame, size_t *frame_len,
                             skv_proto_kind kind, uint64_t request_id,
                             skv_proto_type type, const void *body,
                             int64_t now_ms, const skv_proto_credentials *cred,
                             skv_error *err)
{
    if (!frame || !frame_len || !body)
        return skv__err(err, SKV_EINVAL, "message_encode: NULL argument");
    skv_proto_envelope env;
    memset(&env, 0, sizeof env);
    env.version = SKV_PROTO_VERSION;
    env.kind = kind;
    env.request_id = request_id;
    env.type = type;
    env.timestamp_ms = now_ms;
    int rc = skv_proto_body_encode(&env.body, &env.body_len, type, body, err);
    if (rc)
        return rc;
    if (cred)
        rc = skv_proto_envelope_sign(&env, cred, now_ms, NULL, err);
    if (!rc)
        rc = skv_proto_envelope_encode(frame, frame_len, &env, 0, err);
    skv__free(env.body);
    return rc;
}

/* Copy text into out (size cap) as valid UTF-8: malformed bytes become
 * '?', and clipping never splits a character. */
static void clip_utf8(char *out, size_t cap, const char *text)
{
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < cap;) {
        size_t n = 1;
        while (n <= 4 && !(strnlen(p, n) == n && skv__proto_utf8_valid(p, n)))
            n++;
        if (n > 4) {
            out[o++] = '?';
            p++;
            continue;
        }
        if (o + n >= cap)
            break;
        memcpy(out + o, p, n);
        o += n;
        p += n;
    }
    out[o] = 0;
}

int skv_proto_error_encode(void **frame, size_t *frame_len, uint64_t request_id,
                           int code, const char *message,
                           const char *request_type, int64_t now_ms,
                           const skv_proto_credentials *cred, skv_error *err)
{
    if (code >= 0 || code < SKV_ERR_MIN)
        return skv__err(err, SKV_EINVAL, "error_encode: %d is not an SKV_E* "
                        "code", code);
    /* The texts may echo untrusted input: clean and clip, never fail. */
    char msg[1024], rtype[SKV_PROTO_TYPE_NAME_MAX];
    clip_utf8(msg, sizeof msg, message ? message : skv_strerror(code));
    clip_utf8(rtype, sizeof rtype, request_type ? request_type : "");
    skv_proto_error e = {code, msg, rtype[0] ? rtype : NULL};
    return skv_proto_message_encode(frame, frame_len, SKV_PROTO_RESPONSE,
                                    request_id, SKV_PROTO_ERROR, &e, now_ms,
                                    cred, err);
}
