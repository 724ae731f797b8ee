/* Authentication (keys, HMAC signatures, skew, replay cache) and
 * authorization.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "skv_internal.h"
#include "skv_sha256.h"
#include "skv_test.h"
#include "sokovan/auth.h"
#include "sokovan/proto.h"

#define AK "AKTESTKEY0001"
#define SK "s3cret-s3cret-s3cret-s3cret"
#define NOW 1700000000000LL

static const uint8_t body_bytes[] = {0x81, 0xa1, 'x', 0x01};

static void msg_init(skv_auth_message *m)
{
    m->version = 1;
    m->kind = 0;
    m->request_id = 77;
    m->type = "session.show";
    m->body = body_bytes;
    m->body_len = sizeof body_bytes;
}

static void block_init(skv_auth_block *b, int64_t ts, uint8_t nonce_seed)
{
    memset(b, 0, sizeof *b);
    strcpy(b->access_key, AK);
    b->timestamp_ms = ts;
    for (int i = 0; i < SKV_AUTH_NONCE_BYTES; i++)
        b->nonce[i] = (uint8_t)(nonce_seed + i);
}

static skv_auth_verifier *verifier_with_key(int64_t skew, size_t max_nonces)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier_options o = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    o.max_skew_ms = skew;
    o.max_nonces_per_key = max_nonces;
    skv_auth_verifier *v;
    SKV_CK_OK(skv_auth_verifier_new(&v, &o, &e), &e);
    skv_auth_principal p = {"alice", SKV_AUTH_ROLE_USER};
    SKV_CK_OK(skv_auth_verifier_add_key(v, AK, SK, &p, &e), &e);
    return v;
}

START_TEST(test_keypair_generate)
{
    skv_error e = SKV_ERROR_INIT;
    char ak1[SKV_AUTH_ACCESS_KEY_MAX], sk1[SKV_AUTH_SECRET_KEY_MAX];
    char ak2[SKV_AUTH_ACCESS_KEY_MAX], sk2[SKV_AUTH_SECRET_KEY_MAX];
    SKV_CK_OK(skv_auth_keypair_generate(ak1, sk1, &e), &e);
    SKV_CK_OK(skv_auth_keypair_generate(ak2, sk2, &e), &e);
    ck_assert_uint_eq(strlen(ak1), SKV_AUTH_GENERATED_ACCESS_KEY_LEN);
    ck_assert_uint_eq(strlen(sk1), SKV_AUTH_GENERATED_SECRET_KEY_LEN);
    ck_assert(strncmp(ak1, "AK", 2) == 0);
    ck_assert_str_ne(ak1, ak2);
    ck_assert_str_ne(sk1, sk2);
    SKV_CK_OK(skv_auth_access_key_check(ak1, &e), &e);
    SKV_CK_OK(skv_auth_secret_key_check(sk1, &e), &e);
    skv_auth_wipe(sk1, sizeof sk1);
    for (size_t i = 0; i < sizeof sk1; i++)
        ck_assert_int_eq(sk1[i], 0);
    skv_auth_wipe(NULL, 3);
    uint8_t n1[SKV_AUTH_NONCE_BYTES], n2[SKV_AUTH_NONCE_BYTES];
    SKV_CK_OK(skv_auth_nonce_generate(n1, &e), &e);
    SKV_CK_OK(skv_auth_nonce_generate(n2, &e), &e);
    ck_assert(memcmp(n1, n2, sizeof n1) != 0);
    ck_assert_int_eq(skv_auth_nonce_generate(NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_keypair_generate(NULL, sk1, &e), SKV_EINVAL);
}
END_TEST

START_TEST(test_key_checks)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_auth_access_key_check("", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_access_key_check("AK 1", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_access_key_check(NULL, &e), SKV_EINVAL);
    char longk[80];
    memset(longk, 'A', sizeof longk - 1);
    longk[sizeof longk - 1] = 0;
    ck_assert_int_eq(skv_auth_access_key_check(longk, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_secret_key_check("short", &e), SKV_EINVAL);
    ck_assert_ptr_null(strstr(e.message, "short")); /* never echo secrets */
    ck_assert_int_eq(skv_auth_secret_key_check("has a space in the secret", &e), SKV_EINVAL);
    skv_auth_role r;
    SKV_CK_OK(skv_auth_role_parse(&r, "admin", &e), &e);
    ck_assert_int_eq(r, SKV_AUTH_ROLE_ADMIN);
    ck_assert_int_eq(skv_auth_role_parse(&r, "root", &e), SKV_EINVAL);
    ck_assert_str_eq(skv_auth_role_name(SKV_AUTH_ROLE_AGENT), "agent");
    ck_assert_str_eq(skv_auth_role_name((skv_auth_role)9), "?");
}
END_TEST

/* The canonical string is exactly as documented, and the signature is the
 * plain HMAC-SHA256 of it (what another implementation would compute). */
START_TEST(test_canonical_and_sign)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m);
    block_init(&b, NOW, 0);
    void *c;
    size_t clen;
    SKV_CK_OK(skv_auth_canonical(&c, &clen, &b, &m, &e), &e);
    const char head[] = "SKV-HMAC-SHA256\n1\n0\n77\nsession.show\n" AK "\n1700000000000\n"
                        "000102030405060708090a0b0c0d0e0f\n";
    ck_assert_uint_eq(clen, strlen(head) + sizeof body_bytes);
    ck_assert_mem_eq(c, head, strlen(head));
    ck_assert_mem_eq((char *)c + strlen(head), body_bytes, sizeof body_bytes);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    uint8_t mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, (const unsigned char *)SK, strlen(SK));
    crypto_auth_hmacsha256_update(&st, c, clen);
    crypto_auth_hmacsha256_final(&st, mac);
    ck_assert_mem_eq(mac, b.signature, sizeof mac);
    skv_free(c);
    ck_assert_int_eq(skv_auth_sign(&b, &m, "tiny", &e), SKV_EINVAL);
    /* the numbers at their extremes, as printf would write them */
    m.version = UINT32_MAX;
    m.request_id = UINT64_MAX;
    b.timestamp_ms = INT64_MIN;
    SKV_CK_OK(skv_auth_canonical(&c, &clen, &b, &m, &e), &e);
    const char ends[] = "SKV-HMAC-SHA256\n4294967295\n0\n18446744073709551615\n"
                        "session.show\n" AK "\n-9223372036854775808\n";
    ck_assert_mem_eq(c, ends, strlen(ends));
    skv_free(c);
    m.type = "Bad Type";
    ck_assert_int_eq(skv_auth_sign(&b, &m, SK, &e), SKV_EINVAL);
}
END_TEST

static int verify_at(skv_auth_verifier *v, const skv_auth_block *b,
                     const skv_auth_message *m, int64_t now, skv_error *e)
{
    return skv_auth_verify(v, NULL, b, m, now, e);
}

START_TEST(test_verify_and_tamper)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(60000, 100);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m);
    block_init(&b, NOW, 1);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    skv_auth_principal who;
    SKV_CK_OK(skv_auth_verify(v, &who, &b, &m, NOW + 10, &e), &e);
    ck_assert_str_eq(who.user, "alice");
    ck_assert_int_eq(who.role, SKV_AUTH_ROLE_USER);
    /* each tampered part fails (fresh nonces so replay is not the cause) */
    uint8_t bad_body[sizeof body_bytes];
    memcpy(bad_body, body_bytes, sizeof bad_body);
    bad_body[3] ^= 1;
    skv_auth_message mt = m;
    mt.body = bad_body;
    skv_auth_block bt;
    block_init(&bt, NOW, 2);
    SKV_CK_OK(skv_auth_sign(&bt, &m, SK, &e), &e);
    ck_assert_int_eq(verify_at(v, &bt, &mt, NOW, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "signature"));
    skv_auth_block bts = bt;
    bts.timestamp_ms += 1;
    ck_assert_int_eq(verify_at(v, &bts, &m, NOW, &e), SKV_EAUTH);
    skv_auth_block bn = bt;
    bn.nonce[0] ^= 0x80;
    ck_assert_int_eq(verify_at(v, &bn, &m, NOW, &e), SKV_EAUTH);
    mt = m;
    mt.request_id = 78;
    ck_assert_int_eq(verify_at(v, &bt, &mt, NOW, &e), SKV_EAUTH);
    mt = m;
    mt.type = "session.terminate";
    ck_assert_int_eq(verify_at(v, &bt, &mt, NOW, &e), SKV_EAUTH);
    skv_auth_block bs = bt;
    bs.signature[31] ^= 1;
    ck_assert_int_eq(verify_at(v, &bs, &m, NOW, &e), SKV_EAUTH);
    /* the untampered one still verifies: failures left no nonce behind */
    SKV_CK_OK(verify_at(v, &bt, &m, NOW, &e), &e);
    /* unknown key; key signed with the wrong secret */
    skv_auth_block bu = bt;
    strcpy(bu.access_key, "AKOTHER");
    ck_assert_int_eq(verify_at(v, &bu, &m, NOW, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "unknown access key"));
    skv_auth_block bw;
    block_init(&bw, NOW, 3);
    SKV_CK_OK(skv_auth_sign(&bw, &m, "another-secret-of-length", &e), &e);
    ck_assert_int_eq(verify_at(v, &bw, &m, NOW, &e), SKV_EAUTH);
    skv_auth_verifier_free(v);
}
END_TEST

START_TEST(test_replay_and_skew)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(1000, 100);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m);
    block_init(&b, NOW, 1);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    SKV_CK_OK(verify_at(v, &b, &m, NOW, &e), &e);
    ck_assert_int_eq(verify_at(v, &b, &m, NOW + 500, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "replayed"));
    /* after the window it is refused as stale, never accepted again */
    ck_assert_int_eq(verify_at(v, &b, &m, NOW + 1001, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "stale"));
    /* future beyond the skew */
    skv_auth_block f;
    block_init(&f, NOW + 5000, 9);
    SKV_CK_OK(skv_auth_sign(&f, &m, SK, &e), &e);
    ck_assert_int_eq(verify_at(v, &f, &m, NOW + 1001, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "future"));
    /* a clock that steps back does not reopen the window */
    skv_auth_block s;
    block_init(&s, NOW, 10);
    SKV_CK_OK(skv_auth_sign(&s, &m, SK, &e), &e);
    ck_assert_int_eq(verify_at(v, &s, &m, NOW, &e), SKV_EAUTH);
    /* extreme values do not overflow */
    skv_auth_block x;
    block_init(&x, INT64_MIN, 11);
    SKV_CK_OK(skv_auth_sign(&x, &m, SK, &e), &e);
    ck_assert_int_eq(verify_at(v, &x, &m, INT64_MAX, &e), SKV_EAUTH);
    skv_auth_verifier_free(v);
}
END_TEST

START_TEST(test_nonce_cache_bound)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(1000, 4);
    skv_auth_message m;
    msg_init(&m);
    for (int i = 0; i < 4; i++) {
        skv_auth_block b;
        block_init(&b, NOW + i, (uint8_t)(16 * i));
        SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
        SKV_CK_OK(verify_at(v, &b, &m, NOW + i, &e), &e);
    }
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, AK), 4);
    skv_auth_block full;
    block_init(&full, NOW + 5, 200);
    SKV_CK_OK(skv_auth_sign(&full, &m, SK, &e), &e);
    ck_assert_int_eq(verify_at(v, &full, &m, NOW + 5, &e), SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "full"));
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, AK), 4);
    /* once the old ones are out of the window, room again */
    skv_auth_block later;
    block_init(&later, NOW + 3000, 201);
    SKV_CK_OK(skv_auth_sign(&later, &m, SK, &e), &e);
    SKV_CK_OK(verify_at(v, &later, &m, NOW + 3000, &e), &e);
    ck_assert_uint_le(skv_auth_verifier_nonce_count(v, AK), 4);
    ck_assert_uint_ge(skv_auth_verifier_nonce_count(v, AK), 1);
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, "AKNONE"), 0);
    skv_auth_verifier_free(v);
}
END_TEST

/* A key busier than the cache holds per window (issue 14: a client
 * submitting thousands of sessions/s): its oldest time slices go early and
 * its floor rises past them; it is not refused, and a replay of a
 * forgotten nonce is refused by the floor. skew 1000 ms: 16 ms slices. */
static void signed_at(skv_auth_block *b, const skv_auth_message *m,
                      int64_t ts, uint8_t seed)
{
    skv_error e = SKV_ERROR_INIT;
    block_init(b, ts, seed);
    SKV_CK_OK(skv_auth_sign(b, m, SK, &e), &e);
}

START_TEST(test_nonce_cache_busy_key)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(1000, 4);
    skv_auth_message m;
    msg_init(&m);
    skv_auth_block b[6];
    signed_at(&b[0], &m, NOW, 10);        /* slice 0 */
    signed_at(&b[1], &m, NOW + 1, 20);
    signed_at(&b[2], &m, NOW + 16, 30);   /* slice 1 */
    signed_at(&b[3], &m, NOW + 17, 40);
    signed_at(&b[4], &m, NOW + 32, 50);   /* slice 2: the cache is full */
    for (int i = 0; i < 5; i++)
        SKV_CK_OK(verify_at(v, &b[i], &m, NOW + 32, &e), &e);
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, AK), 3);
    /* slice 0 was forgotten: its replays are refused by the floor */
    ck_assert_int_eq(verify_at(v, &b[0], &m, NOW + 33, &e), SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "older than this key's replay"));
    ck_assert_int_eq(verify_at(v, &b[1], &m, NOW + 33, &e), SKV_EBUSY);
    /* remembered ones as before */
    ck_assert_int_eq(verify_at(v, &b[2], &m, NOW + 33, &e), SKV_EAUTH);
    ck_assert_int_eq(verify_at(v, &b[4], &m, NOW + 33, &e), SKV_EAUTH);
    /* a fresh request below the floor too (sign it again: accepted) */
    signed_at(&b[5], &m, NOW + 5, 60);
    ck_assert_int_eq(verify_at(v, &b[5], &m, NOW + 33, &e), SKV_EBUSY);
    signed_at(&b[5], &m, NOW + 33, 60);
    SKV_CK_OK(verify_at(v, &b[5], &m, NOW + 33, &e), &e);
    /* a restart's restore of a forgotten nonce is covered, not an error */
    SKV_CK_OK(skv_auth_verifier_remember(v, AK, b[0].nonce, NOW, NOW + 33,
                                         &e), &e);
    ck_assert_uint_le(skv_auth_verifier_nonce_count(v, AK), 4);
    skv_auth_verifier_free(v);
}
END_TEST

/* 200,000 requests of one key in 40 s at the default options (131,072
 * nonces, 300 s): all accepted (the old cache refused every request after
 * the 131,072nd within the window), none accepted twice. */
START_TEST(test_nonce_cache_long_run)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(300000, 131072);
    skv_auth_message m;
    msg_init(&m);
    skv_auth_block first, b;
    for (int i = 0; i < 200000; i++) {
        int64_t t = NOW + i / 5;
        block_init(&b, t, 0);
        memcpy(b.nonce, &i, sizeof i);
        SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
        SKV_CK_OK(verify_at(v, &b, &m, t, &e), &e);
        if (i == 0)
            first = b;
        if (i % 50000 == 49999)
            ck_assert_int_eq(verify_at(v, &b, &m, t, &e), SKV_EAUTH);
    }
    ck_assert_uint_le(skv_auth_verifier_nonce_count(v, AK), 131072);
    ck_assert_int_ne(verify_at(v, &first, &m, NOW + 40000, &e), 0);
    skv_auth_verifier_free(v);
}
END_TEST

/* Many nonces in one bucket: the hash set grows and still finds replays. */
START_TEST(test_nonce_cache_many)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(100000, 5000);
    skv_auth_message m;
    msg_init(&m);
    skv_auth_block first;
    for (int i = 0; i < 3000; i++) {
        skv_auth_block b;
        block_init(&b, NOW, 0);
        memcpy(b.nonce, &i, sizeof i);
        SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
        SKV_CK_OK(verify_at(v, &b, &m, NOW, &e), &e);
        if (i == 1234)
            first = b;
    }
    ck_assert_uint_eq(skv_auth_verifier_nonce_count(v, AK), 3000);
    ck_assert_int_eq(verify_at(v, &first, &m, NOW, &e), SKV_EAUTH);
    skv_auth_verifier_free(v);
}
END_TEST

START_TEST(test_verifier_keys)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v;
    skv_auth_verifier_options o = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    o.version = 99;
    ck_assert_int_eq(skv_auth_verifier_new(&v, &o, &e), SKV_EVERSION);
    o.version = SKV_AUTH_VERIFIER_OPTIONS_VERSION;
    o.max_skew_ms = 0;
    ck_assert_int_eq(skv_auth_verifier_new(&v, &o, &e), SKV_EINVAL);
    o.max_skew_ms = 10;
    o.max_nonces_per_key = 0;
    ck_assert_int_eq(skv_auth_verifier_new(&v, &o, &e), SKV_EINVAL);
    SKV_CK_OK(skv_auth_verifier_new(&v, NULL, &e), &e);
    skv_auth_principal p = {"bob", SKV_AUTH_ROLE_ADMIN};
    SKV_CK_OK(skv_auth_verifier_add_key(v, "AKB", SK, &p, &e), &e);
    SKV_CK_OK(skv_auth_verifier_add_key(v, "AKA", SK, &p, &e), &e);
    SKV_CK_OK(skv_auth_verifier_add_key(v, "AKC", SK, &p, &e), &e);
    ck_assert_int_eq(skv_auth_verifier_add_key(v, "AKA", SK, &p, &e), SKV_EEXIST);
    ck_assert_int_eq(skv_auth_verifier_add_key(v, "AK D", SK, &p, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_verifier_add_key(v, "AKD", "short", &p, &e), SKV_EINVAL);
    skv_auth_principal bad = {"", SKV_AUTH_ROLE_USER};
    ck_assert_int_eq(skv_auth_verifier_add_key(v, "AKD", SK, &bad, &e), SKV_EINVAL);
    bad = (skv_auth_principal){"x", (skv_auth_role)0};
    ck_assert_int_eq(skv_auth_verifier_add_key(v, "AKD", SK, &bad, &e), SKV_EINVAL);
    ck_assert_uint_eq(skv_auth_verifier_key_count(v), 3);
    SKV_CK_OK(skv_auth_verifier_remove_key(v, "AKB", &e), &e);
    ck_assert_int_eq(skv_auth_verifier_remove_key(v, "AKB", &e), SKV_ENOENT);
    ck_assert_uint_eq(skv_auth_verifier_key_count(v), 2);
    /* a removed key no longer verifies */
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m);
    block_init(&b, NOW, 0);
    strcpy(b.access_key, "AKB");
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &m, NOW, &e), SKV_EAUTH);
    strcpy(b.access_key, "AKC");
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    SKV_CK_OK(skv_auth_verify(v, &p, &b, &m, NOW, &e), &e);
    ck_assert_str_eq(p.user, "bob");
    skv_auth_verifier_free(v);
    skv_auth_verifier_free(NULL);
}
END_TEST

/* Signed envelopes end to end: encode, frame, decode, verify. */
START_TEST(test_envelope_signed)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier_with_key(60000, 100);
    skv_proto_credentials cred = {AK, SK};
    skv_proto_session_id body = {"sess-1"};
    void *frame;
    size_t len;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, 5,
                                       SKV_PROTO_SESSION_SHOW, &body, NOW, &cred, &e), &e);
    skv_proto_envelope env;
    SKV_CK_OK(skv_proto_envelope_decode(&env, (uint8_t *)frame + 4, len - 4, &e), &e);
    ck_assert_int_eq(env.has_auth, 1);
    ck_assert_str_eq(env.auth.access_key, AK);
    skv_auth_principal who;
    SKV_CK_OK(skv_proto_envelope_verify(v, &who, &env, NOW + 1, &e), &e);
    ck_assert_str_eq(who.user, "alice");
    ck_assert_int_eq(skv_proto_envelope_verify(v, &who, &env, NOW + 2, &e), SKV_EAUTH);
    skv_proto_envelope_free(&env);
    /* flip one byte of the body inside the frame: signature fails */
    uint8_t *f = frame;
    size_t at = len - SKV_AUTH_SIG_BYTES - SKV_AUTH_NONCE_BYTES - 40;
    for (size_t i = 4; i + 6 < len; i++) {
        if (memcmp(f + i, "sess-1", 6) == 0)
            at = i + 5;
    }
    f[at] ^= 0x01;
    SKV_CK_OK(skv_proto_envelope_decode(&env, f + 4, len - 4, &e), &e);
    ck_assert_int_eq(skv_proto_envelope_verify(v, NULL, &env, NOW + 1, &e), SKV_EAUTH);
    skv_proto_envelope_free(&env);
    skv_free(frame);
    /* unsigned messages are refused by verify */
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, 6,
                                       SKV_PROTO_SESSION_SHOW, &body, NOW, NULL, &e), &e);
    SKV_CK_OK(skv_proto_envelope_decode(&env, (uint8_t *)frame + 4, len - 4, &e), &e);
    ck_assert_int_eq(skv_proto_envelope_verify(v, NULL, &env, NOW, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "unsigned"));
    skv_proto_envelope_free(&env);
    skv_free(frame);
    /* deterministic signing with a fixed nonce */
    skv_proto_envelope a, b2;
    memset(&a, 0, sizeof a);
    a.version = SKV_PROTO_VERSION;
    a.type = SKV_PROTO_SESSION_SHOW;
    a.body = (void *)body_bytes;
    a.body_len = sizeof body_bytes;
    b2 = a;
    uint8_t nonce[SKV_AUTH_NONCE_BYTES] = {1, 2, 3};
    SKV_CK_OK(skv_proto_envelope_sign(&a, &cred, NOW, nonce, &e), &e);
    SKV_CK_OK(skv_proto_envelope_sign(&b2, &cred, NOW, nonce, &e), &e);
    ck_assert_mem_eq(a.auth.signature, b2.auth.signature, SKV_AUTH_SIG_BYTES);
    skv_proto_credentials badc = {"bad key", SK};
    ck_assert_int_eq(skv_proto_envelope_sign(&a, &badc, NOW, nonce, &e), SKV_EINVAL);
    skv_auth_verifier_free(v);
}
END_TEST

START_TEST(test_authorization)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_principal alice = {"alice", SKV_AUTH_ROLE_USER};
    skv_auth_principal root = {"root", SKV_AUTH_ROLE_ADMIN};
    skv_auth_principal agent = {"agent-1", SKV_AUTH_ROLE_AGENT};
    SKV_CK_OK(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_CONTROL, "alice", &e), &e);
    SKV_CK_OK(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_READ, "alice", &e), &e);
    SKV_CK_OK(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_SUBMIT, "alice", &e), &e);
    SKV_CK_OK(skv_auth_may(&alice, SKV_AUTH_OP_CLUSTER_READ, NULL, &e), &e);
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_CONTROL, "bob", &e), SKV_EPERM);
    ck_assert_ptr_nonnull(strstr(e.message, "bob"));
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_READ, "bob", &e), SKV_EPERM);
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_SUBMIT, "bob", &e), SKV_EPERM);
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_ADMIN, NULL, &e), SKV_EPERM);
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_AGENT_REPORT, "alice", &e), SKV_EPERM);
    SKV_CK_OK(skv_auth_may(&root, SKV_AUTH_OP_SESSION_CONTROL, "bob", &e), &e);
    SKV_CK_OK(skv_auth_may(&root, SKV_AUTH_OP_ADMIN, NULL, &e), &e);
    ck_assert_int_eq(skv_auth_may(&root, SKV_AUTH_OP_AGENT_REPORT, "agent-1", &e), SKV_EPERM);
    SKV_CK_OK(skv_auth_may(&agent, SKV_AUTH_OP_AGENT_REPORT, "agent-1", &e), &e);
    ck_assert_int_eq(skv_auth_may(&agent, SKV_AUTH_OP_AGENT_REPORT, "agent-2", &e), SKV_EPERM);
    ck_assert_int_eq(skv_auth_may(&agent, SKV_AUTH_OP_SESSION_READ, "agent-1", &e), SKV_EPERM);
    ck_assert_int_eq(skv_auth_may(&agent, SKV_AUTH_OP_CLUSTER_READ, NULL, &e), SKV_EPERM);
    /* bad input */
    ck_assert_int_eq(skv_auth_may(&alice, SKV_AUTH_OP_SESSION_READ, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_may(NULL, SKV_AUTH_OP_ADMIN, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_auth_may(&alice, (skv_auth_op)99, NULL, &e), SKV_EINVAL);
    skv_auth_principal odd = {"x", (skv_auth_role)42};
    ck_assert_int_eq(skv_auth_may(&odd, SKV_AUTH_OP_ADMIN, NULL, &e), SKV_EINVAL);
    ck_assert_str_eq(skv_auth_op_name(SKV_AUTH_OP_ADMIN), "admin");
    /* the type table's operations combine with skv_auth_may */
    int op = skv_proto_type_op(SKV_PROTO_ADMIN_RESOURCE_GROUP);
    ck_assert_int_eq(skv_auth_may(&alice, (skv_auth_op)op, NULL, &e), SKV_EPERM);
}
END_TEST

Suite *skv_test_suite_auth(void);
/* HMAC-SHA256 against RFC 4231's test cases 1 and 2, twice each (a
 * context reused or copied per MAC must not carry state), so a wrong digest
 * or a key left over from the last MAC cannot sign frames unnoticed. */
static void hmac_hex(const void *key, size_t klen, const char *data,
                     char hex[65])
{
    skv_error e = SKV_ERROR_INIT;
    skv__hmac256 h;
    uint8_t mac[SKV__SHA256_BYTES];
    SKV_CK_OK(skv__hmac256_init(&h, key, klen, &e), &e);
    skv__hmac256_update(&h, data, strlen(data));
    SKV_CK_OK(skv__hmac256_final(&h, mac, &e), &e);
    skv__hmac256_free(&h);
    for (int i = 0; i < SKV__SHA256_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
}

START_TEST(test_hmac_sha256_vectors)
{
    uint8_t k1[20];
    memset(k1, 0x0b, sizeof k1);
    char hex[65];
    for (int round = 0; round < 2; round++) {
        hmac_hex(k1, sizeof k1, "Hi There", hex);
        ck_assert_str_eq(hex, "b0344c61d8db38535ca8afceaf0bf12b"
                              "881dc200c9833da726e9376c2e32cff7");
        hmac_hex("Jefe", 4, "what do ya want for nothing?", hex);
        ck_assert_str_eq(hex, "5bdcc146bf60754e6a042426089575c7"
                              "5a003f089d2739839dec58b964ec3843");
    }
}
END_TEST

Suite *skv_test_suite_auth(void)
{
    Suite *s = suite_create("auth");
    TCase *tc = tcase_create("auth");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_keypair_generate);
    tcase_add_test(tc, test_hmac_sha256_vectors);
    tcase_add_test(tc, test_key_checks);
    tcase_add_test(tc, test_canonical_and_sign);
    tcase_add_test(tc, test_verify_and_tamper);
    tcase_add_test(tc, test_replay_and_skew);
    tcase_add_test(tc, test_nonce_cache_bound);
    tcase_add_test(tc, test_nonce_cache_many);
    tcase_add_test(tc, test_nonce_cache_busy_key);
    tcase_add_test(tc, test_nonce_cache_long_run);
    tcase_add_test(tc, test_verifier_keys);
    tcase_add_test(tc, test_envelope_signed);
    tcase_add_test(tc, test_authorization);
    suite_add_tcase(s, tc);
    return s;
}
