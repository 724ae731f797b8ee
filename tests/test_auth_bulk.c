/* Signatures of bulk bodies (64 KiB and more: file chunks), which enter
 * the HMAC through a per-message Poly1305 tag (src/auth/body_mac.c): the
 * documented construction recomputed here with OpenSSL directly, a
 * tampered chunk, a replayed chunk, a chunk moved to another message, a
 * signature of the small-body form, and the boundary.
 * SPDX-License-Identifier: Apache-2.0 */
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>

#include "skv_internal.h"
#include "skv_test.h"
#include "sokovan/auth.h"
#include "sokovan/proto.h"

#define AK "AKTESTKEY0001"
#define SK "s3cret-s3cret-s3cret-s3cret"
#define NOW 1700000000000LL
#define BULK 65536
#define CHUNK (1024 * 1024)

static uint8_t *chunk_new(size_t len)
{
    uint8_t *p = malloc(len);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)(i * 131 + (i >> 9));
    return p;
}

static void msg_init(skv_auth_message *m, const uint8_t *body, size_t len)
{
    m->version = 1;
    m->kind = 0;
    m->request_id = 9;
    m->type = "vfolder.upload";
    m->body = body;
    m->body_len = len;
}

static void block_init(skv_auth_block *b, uint8_t nonce_seed)
{
    memset(b, 0, sizeof *b);
    strcpy(b->access_key, AK);
    b->timestamp_ms = NOW;
    for (int i = 0; i < SKV_AUTH_NONCE_BYTES; i++)
        b->nonce[i] = (uint8_t)(nonce_seed + i);
}

static skv_auth_verifier *verifier(void)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier_options o = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    o.max_skew_ms = 60000;
    skv_auth_verifier *v;
    SKV_CK_OK(skv_auth_verifier_new(&v, &o, &e), &e);
    skv_auth_principal p = {"alice", SKV_AUTH_ROLE_USER};
    SKV_CK_OK(skv_auth_verifier_add_key(v, AK, SK, &p, &e), &e);
    return v;
}

static void hmac(uint8_t out[32], const void *a, size_t alen, const void *b,
                 size_t blen, const void *c, size_t clen)
{
    uint8_t buf[512];
    ck_assert_uint_lt(alen + blen + clen, sizeof buf);
    memcpy(buf, a, alen);
    memcpy(buf + alen, b, blen);
    memcpy(buf + alen + blen, c, clen);
    unsigned n = 0;
    ck_assert_ptr_nonnull(HMAC(EVP_sha256(), SK, (int)strlen(SK), buf,
                               alen + blen + clen, out, &n));
    ck_assert_uint_eq(n, 32);
}

static void poly1305(uint8_t tag[16], const uint8_t key[32],
                     const void *body, size_t len)
{
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
    EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
    size_t n = 0;
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(EVP_MAC_init(c, key, 32, NULL), 1);
    ck_assert_int_eq(EVP_MAC_update(c, body, len), 1);
    ck_assert_int_eq(EVP_MAC_final(c, tag, &n, 16), 1);
    ck_assert_uint_eq(n, 16);
    EVP_MAC_CTX_free(c);
    EVP_MAC_free(mac);
}

/* What another implementation computes (docs/protocol.md, section 5). */
START_TEST(test_bulk_construction)
{
    skv_error e = SKV_ERROR_INIT;
    uint8_t *body = chunk_new(CHUNK);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m, body, CHUNK);
    block_init(&b, 0);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    const char lines[] = "1\n0\n9\nvfolder.upload\n" AK "\n1700000000000\n"
                         "000102030405060708090a0b0c0d0e0f\n";
    const char kp[] = "SKV-POLY1305-KEY\n", sp[] = "SKV-HMAC-SHA256-POLY1305\n";
    uint8_t key[32], tag[16], sig[32];
    hmac(key, kp, strlen(kp), lines, strlen(lines), "", 0);
    poly1305(tag, key, body, CHUNK);
    hmac(sig, sp, strlen(sp), lines, strlen(lines), tag, sizeof tag);
    ck_assert_mem_eq(sig, b.signature, sizeof sig);
    /* the canonical string would need the secret: refused, not wrong */
    void *c = NULL;
    size_t clen = 0;
    ck_assert_int_eq(skv_auth_canonical(&c, &clen, &b, &m, &e), SKV_ENOTSUP);
    ck_assert_ptr_null(c);
    free(body);
}
END_TEST

/* One flipped bit anywhere in a chunk, or its last byte cut, is refused;
 * the untampered chunk then still verifies (no nonce was spent). */
START_TEST(test_bulk_tampered)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier();
    uint8_t *body = chunk_new(CHUNK);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m, body, CHUNK);
    block_init(&b, 1);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    const size_t at[] = {0, 4095, CHUNK / 2, CHUNK - 1};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        body[at[i]] ^= 0x10;
        ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &m, NOW, &e), SKV_EAUTH);
        ck_assert_ptr_nonnull(strstr(e.message, "bad signature"));
        body[at[i]] ^= 0x10;
    }
    skv_auth_message cut = m;
    cut.body_len--;
    ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &cut, NOW, &e), SKV_EAUTH);
    /* the same chunk under another request id or nonce */
    skv_auth_message moved = m;
    moved.request_id = 10;
    ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &moved, NOW, &e), SKV_EAUTH);
    skv_auth_block bn = b;
    bn.nonce[5] ^= 1;
    ck_assert_int_eq(skv_auth_verify(v, NULL, &bn, &m, NOW, &e), SKV_EAUTH);
    SKV_CK_OK(skv_auth_verify(v, NULL, &b, &m, NOW, &e), &e);
    skv_auth_verifier_free(v);
    free(body);
}
END_TEST

START_TEST(test_bulk_replayed)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier();
    uint8_t *body = chunk_new(CHUNK);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m, body, CHUNK);
    block_init(&b, 2);
    SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
    SKV_CK_OK(skv_auth_verify(v, NULL, &b, &m, NOW, &e), &e);
    ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &m, NOW + 1, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "replayed"));
    skv_auth_verifier_free(v);
    free(body);
}
END_TEST

/* A signature of the other form never verifies: the small-body string
 * (HMAC over the whole body) of a bulk body, and each side of the
 * boundary signs and verifies in its own form. */
START_TEST(test_bulk_forms_apart)
{
    skv_error e = SKV_ERROR_INIT;
    skv_auth_verifier *v = verifier();
    uint8_t *body = chunk_new(BULK);
    skv_auth_message m;
    skv_auth_block b;
    msg_init(&m, body, BULK);
    block_init(&b, 3);
    const char head[] = "SKV-HMAC-SHA256\n1\n0\n9\nvfolder.upload\n" AK
                        "\n1700000000000\n"
                        "030405060708090a0b0c0d0e0f101112\n";
    size_t hl = strlen(head);
    uint8_t *whole = malloc(hl + BULK);
    ck_assert_ptr_nonnull(whole);
    memcpy(whole, head, hl);
    memcpy(whole + hl, body, BULK);
    unsigned n = 0;
    HMAC(EVP_sha256(), SK, (int)strlen(SK), whole, hl + BULK, b.signature, &n);
    ck_assert_int_eq(skv_auth_verify(v, NULL, &b, &m, NOW, &e), SKV_EAUTH);
    free(whole);
    for (size_t len = BULK - 1; len <= BULK; len++) {
        msg_init(&m, body, len);
        block_init(&b, (uint8_t)(10 + len - BULK + 1));
        SKV_CK_OK(skv_auth_sign(&b, &m, SK, &e), &e);
        SKV_CK_OK(skv_auth_verify(v, NULL, &b, &m, NOW, &e), &e);
    }
    skv_auth_verifier_free(v);
    free(body);
}
END_TEST

Suite *skv_test_suite_auth_bulk(void);
Suite *skv_test_suite_auth_bulk(void)
{
    Suite *s = suite_create("auth_bulk");
    TCase *tc = tcase_create("auth_bulk");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bulk_construction);
    tcase_add_test(tc, test_bulk_tampered);
    tcase_add_test(tc, test_bulk_replayed);
    tcase_add_test(tc, test_bulk_forms_apart);
    suite_add_tcase(s, tc);
    return s;
}
