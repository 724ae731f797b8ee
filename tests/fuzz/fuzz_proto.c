/* libFuzzer target: hostile bytes through the frame reader, the envelope
 * decoder, signature verification and every body decoder. Invariants
 * checked besides "no crash, no leak, no huge allocation": whatever
 * decodes re-encodes, and the re-encoding is a fixed point (decode +
 * encode again gives the same bytes).
 * Build and run: tests/fuzz/run.sh [seconds].
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sokovan/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BODY_MAX 1024

static void check_fixed_point(skv_proto_type t, const void *msg)
{
    void *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, l2 = 0;
    _Alignas(max_align_t) unsigned char again[BODY_MAX];
    if (skv_proto_body_encode(&b1, &l1, t, msg, NULL) != 0)
        abort(); /* decoded fine but cannot be encoded: bounds disagree */
    if (skv_proto_body_decode(again, t, b1, l1, NULL) != 0)
        abort();
    if (skv_proto_body_encode(&b2, &l2, t, again, NULL) != 0)
        abort();
    if (l1 != l2 || memcmp(b1, b2, l1) != 0)
        abort();
    skv_proto_body_free(t, again);
    skv_free(b1);
    skv_free(b2);
}

static void try_body(skv_proto_type t, const void *buf, size_t len)
{
    _Alignas(max_align_t) unsigned char msg[BODY_MAX];
    if (skv_proto_body_decode(msg, t, buf, len, NULL) == 0) {
        check_fixed_point(t, msg);
        skv_proto_body_free(t, msg);
    }
}

static skv_auth_verifier *verifier(void)
{
    static skv_auth_verifier *v;
    if (!v) {
        skv_auth_verifier_options o = SKV_AUTH_VERIFIER_OPTIONS_INIT;
        o.max_nonces_per_key = 1024; /* bounded across the whole run */
        skv_auth_principal p = {"fuzz", SKV_AUTH_ROLE_USER};
        if (skv_auth_verifier_new(&v, &o, NULL) ||
            skv_auth_verifier_add_key(v, "AKFUZZ", "fuzz-secret-key-0123", &p, NULL))
            abort();
    }
    return v;
}

static void try_frame(const void *payload, size_t len)
{
    skv_proto_envelope env;
    if (skv_proto_envelope_decode(&env, payload, len, NULL) != 0)
        return;
    if (env.has_auth)
        skv_proto_envelope_verify(verifier(), NULL, &env, env.auth.timestamp_ms, NULL);
    if (env.type != SKV_PROTO_UNKNOWN)
        try_body(env.type, env.body, env.body_len);
    void *frame = NULL;
    size_t flen = 0;
    if (skv_proto_envelope_encode(&frame, &flen, &env, 0, NULL) != 0)
        abort(); /* a decoded envelope must encode again */
    skv_free(frame);
    skv_proto_envelope_free(&env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* first byte: feeding chunk size, so partial deliveries are covered */
    size_t chunk = (size_t)data[0] + 1;
    skv_proto_reader *r;
    if (skv_proto_reader_new(&r, 1u << 20, NULL))
        abort();
    for (size_t at = 1; at < size; at += chunk) {
        size_t n = size - at < chunk ? size - at : chunk;
        if (skv_proto_reader_feed(r, data + at, n, NULL) != 0)
            break;
        const void *p;
        size_t plen;
        while (skv_proto_reader_next(r, &p, &plen, NULL) == 1)
            try_frame(p, plen);
    }
    skv_proto_reader_free(r);
    /* the raw bytes as an envelope payload and as every body */
    try_frame(data + 1, size - 1);
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++)
        try_body((skv_proto_type)t, data + 1, size - 1);
    return 0;
}
