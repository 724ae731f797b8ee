/* Pieces shared by upload and download: the progress bar, SHA-256 on
 * OpenSSL (SHA extensions where the CPU has them; a NULL state hashes
 * nothing, for transfers without --sha256), hex output.
 * SPDX-License-Identifier: Apache-2.0 */
#include <malloc.h>
#include <string.h>
#include <unistd.h>

#include "vfolder.h"

void cli_vf_progress_init(cli_vf_progress *p, const cli *c, uint64_t total)
{
    p->on = !c->json && isatty(2);
    p->total = total;
    p->start_ms = p->last_ms = cli_now_ms();
}

void cli_vf_progress_show(cli_vf_progress *p, uint64_t done, int final)
{
    int64_t now = cli_now_ms();
    if (!p->on || (!final && now - p->last_ms < 200))
        return;
    p->last_ms = now;
    int pct = p->total ? (int)(done * 100 / p->total) : 100;
    double secs = (double)(now - p->start_ms) / 1000.0;
    char bar[31];
    memset(bar, ' ', 30);
    memset(bar, '#', (size_t)(pct * 30 / 100));
    bar[30] = 0;
    fprintf(stderr, "\r[%s] %3d%% %llu/%llu bytes %.1f MB/s", bar, pct,
            (unsigned long long)done, (unsigned long long)p->total,
            secs > 0 ? (double)done / secs / 1e6 : 0.0);
    if (final)
        fputc('\n', stderr);
}

EVP_MD_CTX *cli_vf_sha_new(void)
{
    EVP_MD_CTX *st = EVP_MD_CTX_new();
    if (st && EVP_DigestInit_ex(st, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(st);
        st = NULL;
    }
    return st;
}

int cli_vf_sha_add(EVP_MD_CTX *st, const void *p, size_t n)
{
    return st && n && EVP_DigestUpdate(st, p, n) != 1
               ? cli_fail("sha256: OpenSSL failed")
               : CLI_OK;
}

int cli_vf_sha_final(EVP_MD_CTX *st, uint8_t d[CLI_VF_SHA_BYTES])
{
    unsigned n = 0;
    return EVP_DigestFinal_ex(st, d, &n) == 1 && n == CLI_VF_SHA_BYTES
               ? CLI_OK
               : cli_fail("sha256: OpenSSL failed");
}

void cli_vf_hex(char *out, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

int cli_vf_hash_prefix(int fd, uint64_t n, EVP_MD_CTX *st, uint8_t *buf)
{
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < CLI_VF_CHUNK ? (size_t)(n - done)
                                              : CLI_VF_CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)done);
        if (got <= 0 || cli_vf_sha_add(st, buf, (size_t)got))
            return -1;
        done += (uint64_t)got;
    }
    return 0;
}

void cli_vf_malloc_tune(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
