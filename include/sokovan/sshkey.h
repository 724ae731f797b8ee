/*
 * sokovan/sshkey.h - per-session SSH key pairs for the kernels of a session.
 *
 * Every kernel of a multi-container session gets the same Ed25519 key pair
 * (private key, public key and an authorized_keys entry), so tools such as
 * mpirun can ssh from one kernel to another. Keys come from libsodium
 * (crypto_sign); this module only encodes them in the formats OpenSSH reads:
 *
 *   private key: an "openssh-key-v1" file, unencrypted (cipher and KDF
 *                "none"), base64 wrapped at 70 columns between
 *                "-----BEGIN OPENSSH PRIVATE KEY-----" and
 *                "-----END OPENSSH PRIVATE KEY-----";
 *   public key:  one line "ssh-ed25519 AAAA... comment\n" for
 *                id_ed25519.pub and authorized_keys.
 *
 * skv_sshkey_generate() draws a fresh key from libsodium's CSPRNG (the one
 * place without a seed, by design). skv_sshkey_from_seed() derives the same
 * files byte for byte from a 32-byte seed, so a manager can hand one seed
 * to every agent of a session and all kernels receive identical keys.
 *
 * Ownership: skv_sshkey objects are freed with skv_sshkey_free(), which
 * wipes the secret material (sodium_memzero) before releasing it. Strings
 * returned by the getters are borrowed and live as long as the object.
 *
 * Thread-safety: an skv_sshkey is immutable after creation and may be read
 * from any number of threads; distinct objects are independent.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_SSHKEY_H
#define SOKOVAN_SSHKEY_H

#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SKV_SSHKEY_SEED_BYTES 32      /* Ed25519 seed */
#define SKV_SSHKEY_PUBLIC_BYTES 32    /* Ed25519 public key */
/* Comments: 0..255 printable ASCII characters (0x20..0x7e). */
#define SKV_SSHKEY_COMMENT_MAX 255

typedef struct skv_sshkey skv_sshkey;

/* A fresh random key pair. comment may be NULL (no comment). SKV_EINVAL for
 * a bad comment, SKV_ENOTSUP when libsodium cannot initialise. */
SKV_EXTERN int skv_sshkey_generate(skv_sshkey **out, const char *comment,
                                   skv_error *err);

/* Fill seed with 32 random bytes (libsodium's CSPRNG), e.g. once per
 * session on the manager, to be handed to every agent for
 * skv_sshkey_from_seed(). SKV_ENOTSUP when libsodium cannot initialise. */
SKV_EXTERN int skv_sshkey_seed_generate(uint8_t seed[SKV_SSHKEY_SEED_BYTES],
                                        skv_error *err);

/* The key pair derived from seed: the same seed and comment always give the
 * same private and public files (the private file's check integers are
 * derived from the public key). Keep the seed as secret as the key. */
SKV_EXTERN int skv_sshkey_from_seed(skv_sshkey **out,
                                    const uint8_t seed[SKV_SSHKEY_SEED_BYTES],
                                    const char *comment, skv_error *err);

/* Wipes the private key and the seed, then frees. Accepts NULL. */
SKV_EXTERN void skv_sshkey_free(skv_sshkey *key);

/* The OpenSSH private key file, NUL-terminated, ending with a newline.
 * Borrowed; write it with mode 0600. */
SKV_EXTERN const char *skv_sshkey_private(const skv_sshkey *key);
/* "ssh-ed25519 <base64> <comment>\n" (no " <comment>" when the comment is
 * empty). Borrowed. */
SKV_EXTERN const char *skv_sshkey_public(const skv_sshkey *key);
/* The raw 32-byte Ed25519 public key. Borrowed. */
SKV_EXTERN const uint8_t *skv_sshkey_public_raw(const skv_sshkey *key);

/* Write <dir>/id_ed25519 (0600), <dir>/id_ed25519.pub (0644) and
 * <dir>/authorized_keys (0600, the public line) into an existing directory,
 * typically a kernel's ~/.ssh. Each file is written to a temporary name and
 * renamed into place, so readers never see a partial key; existing files of
 * these names are replaced. On failure no temporary file is left behind,
 * and files already renamed into place are removed again. Ownership
 * (chown) is the caller's business. SKV_ESYS with errno on I/O errors. */
SKV_EXTERN int skv_sshkey_write_files(const skv_sshkey *key, const char *dir,
                                      skv_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_SSHKEY_H */
