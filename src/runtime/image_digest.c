/* Content addressing of image blobs: every layer, manifest and config an
 * import reads is hashed (SHA-256, streamed with libsodium so a layer of
 * any size costs a fixed buffer) and compared with the digest that names
 * it, before it is parsed or unpacked. A mismatch means a corrupt or
 * tampered archive: the import is refused.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "image_int.h"

bool skv__img_hex64(const char *hex)
{
    return strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64;
}

static int hash_fd(int fd, unsigned char out[crypto_hash_sha256_BYTES],
                   const char *what, skv_error *err)
{
    enum { BUF = 64 * 1024 };
    unsigned char *buf = skv__malloc(BUF);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "image: hash buffer");
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    int rc = 0;
    for (;;) {
        ssize_t n = read(fd, buf, BUF);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = skv__err_sys(err, errno, "image: read %s", what);
            break;
        }
        if (n == 0)
            break;
        crypto_hash_sha256_update(&st, buf, (unsigned long long)n);
    }
    if (rc == 0)
        crypto_hash_sha256_final(&st, out);
    skv__free(buf);
    return rc;
}

int skv__img_sha256_file(const char *path, char hex[65], skv_error *err)
{
    if (sodium_init() < 0)
        return skv__err(err, SKV_ENOTSUP, "image: libsodium did not "
                        "initialise");
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return skv__err_sys(err, errno, "image: open %s", path);
    unsigned char d[crypto_hash_sha256_BYTES];
    int rc = hash_fd(fd, d, path, err);
    close(fd);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < sizeof(d); i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    return 0;
}

int skv__img_verify(const char *src, const char *rel, const char *hex,
                    skv_error *err)
{
    char p[4096], got[65];
    if (!skv__img_hex64(hex))
        return skv__err(err, SKV_EPROTO, "image: blob '%s': '%s' is not a "
                        "sha256 digest", rel, hex);
    if ((size_t)snprintf(p, sizeof(p), "%s/%s", src, rel) >= sizeof(p))
        return skv__err(err, SKV_EPROTO, "image: blob path '%s' too long", rel);
    int rc = skv__img_sha256_file(p, got, err);
    if (rc < 0)
        return rc;
    if (strcmp(got, hex) != 0)
        return skv__err(err, SKV_EPROTO, "image: blob '%s' is corrupt: its "
                        "sha256 is %s, the image names sha256:%s", rel, got,
                        hex);
    return 0;
}
