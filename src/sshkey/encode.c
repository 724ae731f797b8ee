/* OpenSSH encodings of an Ed25519 key pair (see PROTOCOL.key in OpenSSH):
 *
 *   "openssh-key-v1\0" string("none") string("none") string("")
 *   uint32(1) string(public blob) string(private section)
 *   public blob:     string("ssh-ed25519") string(pk)
 *   private section: uint32(check) uint32(check) string("ssh-ed25519")
 *                    string(pk) string(seed||pk) string(comment)
 *                    padding 1,2,3,... to a multiple of 8 (cipher "none")
 *
 * string(x) is a big-endian uint32 length followed by the bytes.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <string.h>

#include "skv_internal.h"
#include "sshkey_internal.h"

#define KEY_TYPE "ssh-ed25519"
#define MAGIC "openssh-key-v1" /* written with its NUL */
#define WRAP_COLUMNS 70
#define BLOCK_SIZE 8 /* the "none" cipher's block size */
#define BEGIN_LINE "-----BEGIN OPENSSH PRIVATE KEY-----\n"
#define END_LINE "-----END OPENSSH PRIVATE KEY-----\n"
/* Comfortably above the largest blob (255-byte comment): ~420 bytes. */
#define BLOB_MAX 1024

/* Bounded writer; ok turns false on overflow instead of writing past. */
typedef struct writer {
    uint8_t *buf;
    size_t cap, len;
    int ok;
} writer;

static void put_bytes(writer *w, const void *p, size_t n)
{
    if (!w->ok || n > w->cap - w->len) {
        w->ok = 0;
        return;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u32(writer *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8),
                    (uint8_t)v};
    put_bytes(w, b, sizeof b);
}

static void put_string(writer *w, const void *p, size_t n)
{
    put_u32(w, (uint32_t)n);
    put_bytes(w, p, n);
}

static void put_public_blob(writer *w, const uint8_t *pk)
{
    put_string(w, KEY_TYPE, strlen(KEY_TYPE));
    put_string(w, pk, SKV_SSHKEY_PUBLIC_BYTES);
}

/* The check integers only detect a wrong passphrase; deriving them from the
 * public key (instead of random) makes from_seed() reproducible. */
static uint32_t check_int(const uint8_t *pk)
{
    static const char ctx[] = "sokovan-sshkey-checkint";
    uint8_t h[16];
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, sizeof h);
    crypto_generichash_update(&st, (const uint8_t *)ctx, sizeof ctx - 1);
    crypto_generichash_update(&st, pk, SKV_SSHKEY_PUBLIC_BYTES);
    crypto_generichash_final(&st, h, sizeof h);
    return (uint32_t)h[0] << 24 | (uint32_t)h[1] << 16 | (uint32_t)h[2] << 8 | h[3];
}

static void put_private_section(writer *w, const skv_sshkey *k,
                                const char *comment)
{
    size_t start = w->len;
    uint32_t check = check_int(k->pk);
    put_u32(w, check);
    put_u32(w, check);
    put_string(w, KEY_TYPE, strlen(KEY_TYPE));
    put_string(w, k->pk, SKV_SSHKEY_PUBLIC_BYTES);
    put_string(w, k->sk, SKV__SSHKEY_SECRET_BYTES);
    put_string(w, comment, strlen(comment));
    for (uint8_t pad = 1; w->ok && (w->len - start) % BLOCK_SIZE; pad++)
        put_bytes(w, &pad, 1);
}

/* The whole binary private key file body; the private section's length
 * is only known afterwards, so it is written first into a second buffer. */
static int private_blob(writer *w, const skv_sshkey *k, const char *comment)
{
    uint8_t sec[BLOB_MAX];
    writer s = {sec, sizeof sec, 0, 1};
    uint8_t pub[64];
    writer p = {pub, sizeof pub, 0, 1};
    put_private_section(&s, k, comment);
    put_public_blob(&p, k->pk);
    put_bytes(w, MAGIC, sizeof MAGIC); /* with the NUL */
    put_string(w, "none", 4);
    put_string(w, "none", 4);
    put_string(w, "", 0);
    put_u32(w, 1);
    put_string(w, pub, p.len);
    put_string(w, sec, s.len);
    int ok = w->ok && s.ok && p.ok;
    sodium_memzero(sec, sizeof sec);
    return ok ? 0 : -1;
}

/* base64 of blob, wrapped at 70 columns, between the armour lines. */
static char *armour(const uint8_t *blob, size_t n)
{
    size_t b64cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
    char *b64 = skv__malloc(b64cap);
    if (!b64)
        return NULL;
    sodium_bin2base64(b64, b64cap, blob, n, sodium_base64_VARIANT_ORIGINAL);
    size_t len = strlen(b64);
    size_t cap = strlen(BEGIN_LINE) + len + len / WRAP_COLUMNS + 1 +
                 strlen(END_LINE) + 1;
    char *out = skv__malloc(cap);
    if (out) {
        size_t o = 0;
        memcpy(out, BEGIN_LINE, strlen(BEGIN_LINE));
        o = strlen(BEGIN_LINE);
        for (size_t i = 0; i < len; i += WRAP_COLUMNS) {
            size_t chunk = len - i < WRAP_COLUMNS ? len - i : WRAP_COLUMNS;
            memcpy(out + o, b64 + i, chunk);
            o += chunk;
            out[o++] = '\n';
        }
        memcpy(out + o, END_LINE, strlen(END_LINE) + 1);
    }
    sodium_memzero(b64, b64cap);
    skv__free(b64);
    return out;
}

static char *public_line(const uint8_t *pk, const char *comment)
{
    uint8_t pub[64];
    writer p = {pub, sizeof pub, 0, 1};
    put_public_blob(&p, pk);
    char b64[sodium_base64_ENCODED_LEN(64, sodium_base64_VARIANT_ORIGINAL)];
    sodium_bin2base64(b64, sizeof b64, pub, p.len, sodium_base64_VARIANT_ORIGINAL);
    return comment[0] ? skv__asprintf("%s %s %s\n", KEY_TYPE, b64, comment)
                      : skv__asprintf("%s %s\n", KEY_TYPE, b64);
}

int skv__sshkey_encode(skv_sshkey *key, const char *comment, skv_error *err)
{
    uint8_t blob[BLOB_MAX];
    writer w = {blob, sizeof blob, 0, 1};
    if (private_blob(&w, key, comment) != 0) {
        sodium_memzero(blob, sizeof blob);
        return skv__err(err, SKV_ERANGE, "sshkey: private key does not fit");
    }
    char *priv = armour(blob, w.len);
    sodium_memzero(blob, sizeof blob);
    char *pub = public_line(key->pk, comment);
    if (!priv || !pub) {
        if (priv)
            sodium_memzero(priv, strlen(priv));
        skv__free(priv);
        skv__free(pub);
        return skv__err(err, SKV_ENOMEM, "sshkey: out of memory");
    }
    key->private_text = priv;
    key->private_len = strlen(priv);
    key->public_line = pub;
    return 0;
}
