/* Per-session SSH key pairs: OpenSSH private key structure decoded back,
 * public line, determinism from a seed, files on disk, and (when installed)
 * ssh-keygen reading the key.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <sodium.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/sshkey.h"

#define BEGIN "-----BEGIN OPENSSH PRIVATE KEY-----\n"
#define END "-----END OPENSSH PRIVATE KEY-----\n"

/* A reader over the decoded blob; every read is bounds-checked. */
typedef struct rd {
    const uint8_t *p;
    size_t len, off;
} rd;

static uint32_t rd_u32(rd *r)
{
    ck_assert_msg(r->len - r->off >= 4, "truncated uint32 at %zu", r->off);
    const uint8_t *b = r->p + r->off;
    r->off += 4;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static const uint8_t *rd_string(rd *r, size_t *n)
{
    *n = rd_u32(r);
    ck_assert_msg(r->len - r->off >= *n, "string of %zu overruns", *n);
    const uint8_t *s = r->p + r->off;
    r->off += *n;
    return s;
}

static void expect_string(rd *r, const char *want)
{
    size_t n;
    const uint8_t *s = rd_string(r, &n);
    ck_assert_uint_eq(n, strlen(want));
    ck_assert(memcmp(s, want, n) == 0);
}

/* Armour: BEGIN line, lines of at most 70 base64 characters, END line. */
static size_t unarmour(uint8_t *bin, size_t cap, const char *text)
{
    ck_assert(strncmp(text, BEGIN, strlen(BEGIN)) == 0);
    size_t tl = strlen(text);
    ck_assert(tl > strlen(BEGIN) + strlen(END));
    ck_assert_str_eq(text + tl - strlen(END), END);
    const char *b = text + strlen(BEGIN), *e = text + tl - strlen(END);
    for (const char *l = b; l < e;) {
        const char *nl = memchr(l, '\n', (size_t)(e - l));
        ck_assert(nl);
        ck_assert_int_le(nl - l, 70);
        if (nl + 1 < e)
            ck_assert_int_eq(nl - l, 70); /* only the last line is short */
        l = nl + 1;
    }
    size_t n = 0;
    ck_assert_int_eq(sodium_base642bin(bin, cap, b, (size_t)(e - b), "\n", &n,
                                       NULL, sodium_base64_VARIANT_ORIGINAL), 0);
    return n;
}

static void check_public_blob(const uint8_t *blob, size_t n, const uint8_t *pk)
{
    rd r = {blob, n, 0};
    size_t kn;
    expect_string(&r, "ssh-ed25519");
    const uint8_t *k = rd_string(&r, &kn);
    ck_assert_uint_eq(kn, 32);
    ck_assert(memcmp(k, pk, 32) == 0);
    ck_assert_uint_eq(r.off, n);
}

static void check_private_section(const uint8_t *s, size_t n, const uint8_t *pk,
                                  const char *comment)
{
    rd r = {s, n, 0};
    size_t len;
    ck_assert_uint_eq(n % 8, 0);
    uint32_t c1 = rd_u32(&r), c2 = rd_u32(&r);
    ck_assert_uint_eq(c1, c2);
    expect_string(&r, "ssh-ed25519");
    const uint8_t *k = rd_string(&r, &len);
    ck_assert_uint_eq(len, 32);
    ck_assert(memcmp(k, pk, 32) == 0);
    const uint8_t *sk = rd_string(&r, &len);
    ck_assert_uint_eq(len, 64);
    ck_assert(memcmp(sk + 32, pk, 32) == 0); /* seed || public key */
    /* The secret must really belong to the public key: sign and verify. */
    uint8_t sig[crypto_sign_BYTES];
    static const uint8_t msg[] = "sokovan";
    ck_assert_int_eq(crypto_sign_detached(sig, NULL, msg, sizeof msg, sk), 0);
    ck_assert_int_eq(crypto_sign_verify_detached(sig, msg, sizeof msg, pk), 0);
    expect_string(&r, comment);
    for (uint8_t pad = 1; r.off < n; pad++)
        ck_assert_uint_eq(s[r.off++], pad);
}

/* Decode the whole private file and check every field. */
static void check_private(const skv_sshkey *k, const char *comment)
{
    uint8_t bin[2048];
    size_t n = unarmour(bin, sizeof bin, skv_sshkey_private(k));
    rd r = {bin, n, 0};
    ck_assert(n > 15 && memcmp(bin, "openssh-key-v1\0", 15) == 0);
    r.off = 15;
    expect_string(&r, "none");
    expect_string(&r, "none");
    expect_string(&r, "");
    ck_assert_uint_eq(rd_u32(&r), 1);
    size_t len;
    const uint8_t *pub = rd_string(&r, &len);
    check_public_blob(pub, len, skv_sshkey_public_raw(k));
    const uint8_t *sec = rd_string(&r, &len);
    check_private_section(sec, len, skv_sshkey_public_raw(k), comment);
    ck_assert_uint_eq(r.off, n);
}

/* "ssh-ed25519 <b64> [comment]\n" with the same key. */
static void check_public_line(const skv_sshkey *k, const char *comment)
{
    const char *line = skv_sshkey_public(k);
    ck_assert(strncmp(line, "ssh-ed25519 ", 12) == 0);
    ck_assert(line[strlen(line) - 1] == '\n');
    ck_assert_ptr_eq(strchr(line, '\n'), line + strlen(line) - 1); /* one line */
    const char *b = line + 12, *e = strpbrk(b, " \n");
    uint8_t blob[128];
    size_t n = 0;
    ck_assert_int_eq(sodium_base642bin(blob, sizeof blob, b, (size_t)(e - b), NULL,
                                       &n, NULL, sodium_base64_VARIANT_ORIGINAL), 0);
    check_public_blob(blob, n, skv_sshkey_public_raw(k));
    if (comment[0]) {
        ck_assert(*e == ' ');
        ck_assert(strncmp(e + 1, comment, strlen(comment)) == 0);
        ck_assert_str_eq(e + 1 + strlen(comment), "\n");
    } else {
        ck_assert_str_eq(e, "\n");
    }
}

START_TEST(test_generate_structure)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sshkey *a, *b;
    SKV_CK_OK(skv_sshkey_generate(&a, "sokovan session s-1", &e), &e);
    SKV_CK_OK(skv_sshkey_generate(&b, NULL, &e), &e);
    check_private(a, "sokovan session s-1");
    check_public_line(a, "sokovan session s-1");
    check_private(b, "");
    check_public_line(b, "");
    ck_assert(memcmp(skv_sshkey_public_raw(a), skv_sshkey_public_raw(b), 32) != 0);
    skv_sshkey_free(a);
    skv_sshkey_free(b);
    skv_sshkey_free(NULL);
    ck_assert_ptr_null(skv_sshkey_private(NULL));
    ck_assert_ptr_null(skv_sshkey_public(NULL));
}
END_TEST

START_TEST(test_seed_deterministic)
{
    skv_error e = SKV_ERROR_INIT;
    uint8_t seed[SKV_SSHKEY_SEED_BYTES], pk[32], sk[64];
    for (size_t i = 0; i < sizeof seed; i++)
        seed[i] = (uint8_t)(i * 7 + 1);
    skv_sshkey *a, *b, *c;
    SKV_CK_OK(skv_sshkey_from_seed(&a, seed, "x", &e), &e);
    SKV_CK_OK(skv_sshkey_from_seed(&b, seed, "x", &e), &e);
    ck_assert_str_eq(skv_sshkey_private(a), skv_sshkey_private(b));
    ck_assert_str_eq(skv_sshkey_public(a), skv_sshkey_public(b));
    /* Same key as libsodium derives from the seed. */
    ck_assert_int_eq(crypto_sign_seed_keypair(pk, sk, seed), 0);
    ck_assert(memcmp(pk, skv_sshkey_public_raw(a), 32) == 0);
    check_private(a, "x");
    SKV_CK_OK(skv_sshkey_seed_generate(seed, &e), &e);
    SKV_CK_OK(skv_sshkey_from_seed(&c, seed, "x", &e), &e);
    ck_assert_str_ne(skv_sshkey_public(a), skv_sshkey_public(c));
    skv_sshkey_free(a);
    skv_sshkey_free(b);
    skv_sshkey_free(c);
}
END_TEST

START_TEST(test_bad_arguments)
{
    skv_error e = SKV_ERROR_INIT;
    skv_sshkey *k = (skv_sshkey *)&e; /* must stay untouched on failure */
    uint8_t seed[SKV_SSHKEY_SEED_BYTES] = {0};
    ck_assert_int_eq(skv_sshkey_generate(NULL, "c", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sshkey_generate(&k, "bad\ncomment", &e), SKV_EINVAL);
    ck_assert(strstr(e.message, "non-printable") != NULL);
    ck_assert_int_eq(skv_sshkey_generate(&k, "caf\xc3\xa9", &e), SKV_EINVAL);
    char longc[SKV_SSHKEY_COMMENT_MAX + 2];
    memset(longc, 'a', sizeof longc - 1);
    longc[sizeof longc - 1] = 0;
    ck_assert_int_eq(skv_sshkey_from_seed(&k, seed, longc, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sshkey_from_seed(&k, NULL, "c", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sshkey_seed_generate(NULL, &e), SKV_EINVAL);
    ck_assert_ptr_eq(k, (skv_sshkey *)&e);
    longc[SKV_SSHKEY_COMMENT_MAX] = 0; /* exactly the maximum is fine */
    SKV_CK_OK(skv_sshkey_from_seed(&k, seed, longc, &e), &e);
    check_private(k, longc);
    check_public_line(k, longc);
    ck_assert_int_eq(skv_sshkey_write_files(k, "/nonexistent/dir", &e), SKV_ESYS);
    ck_assert_int_eq(skv_sshkey_write_files(k, "", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_sshkey_write_files(NULL, "/tmp", &e), SKV_EINVAL);
    skv_sshkey_free(k);
}
END_TEST

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "open %s", path);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    return st.st_mode & 07777;
}

static void cleanup_dir(const char *dir)
{
    static const char *names[] = {"id_ed25519", "id_ed25519.pub",
                                  "authorized_keys"};
    char p[512];
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unlink(p);
    }
    ck_assert_int_eq(rmdir(dir), 0); /* fails if anything else is left */
}

/* ssh-keygen -y reads the private file and prints the public key. */
static void check_with_ssh_keygen(const char *dir, const skv_sshkey *k)
{
    if (access("/usr/bin/ssh-keygen", X_OK) != 0) {
        fprintf(stderr, "sshkey: /usr/bin/ssh-keygen not installed, "
                        "skipping the OpenSSH cross-check\n");
        return;
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "/usr/bin/ssh-keygen -y -f '%s/id_ed25519' 2>&1", dir);
    FILE *p = popen(cmd, "r");
    ck_assert(p != NULL);
    char out[1024] = {0};
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    ck_assert_int_eq(pclose(p), 0);
    const char *want = skv_sshkey_public(k);
    /* Older OpenSSH prints no comment: compare type and key at least. */
    size_t key_end = (size_t)(strchr(want + 12, ' ') - want);
    ck_assert_msg(strncmp(out, want, key_end) == 0, "ssh-keygen: %s", out);
    if (out[key_end] == ' ')
        ck_assert_str_eq(out, want);
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* A directory in the way of the last rename: the call fails and removes
 * what it had already put in place, leaving no temporary file. */
START_TEST(test_write_files_rollback)
{
    skv_error e = SKV_ERROR_INIT;
    char dir[] = "/tmp/skv-sshkey-XXXXXX", blocker[600];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(blocker, sizeof blocker, "%s/authorized_keys", dir);
    ck_assert_int_eq(mkdir(blocker, 0700), 0);
    skv_sshkey *k;
    SKV_CK_OK(skv_sshkey_generate(&k, NULL, &e), &e);
    ck_assert_int_eq(skv_sshkey_write_files(k, dir, &e), SKV_ESYS);
    ck_assert(strstr(e.message, "authorized_keys") != NULL);
    ck_assert_uint_eq(count_entries(dir), 1); /* only the blocker */
    ck_assert_int_eq(rmdir(blocker), 0);
    skv_sshkey_free(k);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(test_write_files)
{
    skv_error e = SKV_ERROR_INIT;
    char dir[] = "/tmp/skv-sshkey-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_sshkey *k;
    SKV_CK_OK(skv_sshkey_generate(&k, "kernel@main1", &e), &e);
    SKV_CK_OK(skv_sshkey_write_files(k, dir, &e), &e);
    SKV_CK_OK(skv_sshkey_write_files(k, dir, &e), &e); /* replaces */
    char p[512];
    snprintf(p, sizeof p, "%s/id_ed25519", dir);
    ck_assert_str_eq(slurp(p), skv_sshkey_private(k));
    ck_assert_uint_eq(mode_of(p), 0600);
    snprintf(p, sizeof p, "%s/id_ed25519.pub", dir);
    ck_assert_str_eq(slurp(p), skv_sshkey_public(k));
    ck_assert_uint_eq(mode_of(p), 0644);
    snprintf(p, sizeof p, "%s/authorized_keys", dir);
    ck_assert_str_eq(slurp(p), skv_sshkey_public(k));
    ck_assert_uint_eq(mode_of(p), 0600);
    check_with_ssh_keygen(dir, k);
    skv_sshkey_free(k);
    cleanup_dir(dir);
}
END_TEST

Suite *skv_test_suite_sshkey(void);
Suite *skv_test_suite_sshkey(void)
{
    Suite *s = suite_create("sshkey");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_generate_structure);
    tcase_add_test(tc, test_seed_deterministic);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_test(tc, test_write_files);
    tcase_add_test(tc, test_write_files_rollback);
    suite_add_tcase(s, tc);
    return s;
}
