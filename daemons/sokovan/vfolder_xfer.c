/* sokovan vfolder upload / download: a file moved in CLI_VF_CHUNK pieces,
 * one request in flight (the manager answers each before the next goes),
 * so neither side ever holds a whole file. Upload: begin (with --resume
 * the manager says how much an earlier try stored and the local file is
 * read from there), write..., commit with the sha256 computed here, which
 * the manager checks before it publishes the file. Download: ranged reads
 * from the local file's size with --resume; --sha256 compares with the
 * manager's hash of the stored file.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfolder.h"

typedef struct progress {
    int on;              /* stderr is a terminal and no --json */
    uint64_t total;
    int64_t start_ms, last_ms;
} progress;

static void progress_init(progress *p, const cli *c, uint64_t total)
{
    p->on = !c->json && isatty(2);
    p->total = total;
    p->start_ms = p->last_ms = cli_now_ms();
}

static void progress_show(progress *p, uint64_t done, int final)
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

static void hex(char *out, const uint8_t *d, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", d[i]);
}

/* Feed the first n bytes of fd into the hash (a resumed transfer's part
 * that is already there). */
static int hash_prefix(int fd, uint64_t n, crypto_hash_sha256_state *st,
                       uint8_t *buf)
{
    uint64_t done = 0;
    while (done < n) {
        size_t want = n - done < CLI_VF_CHUNK ? (size_t)(n - done)
                                              : CLI_VF_CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)done);
        if (got <= 0)
            return -1;
        crypto_hash_sha256_update(st, buf, (unsigned long long)got);
        done += (uint64_t)got;
    }
    return 0;
}

/* Same local file, same target: the same id, so --resume finds the
 * earlier try's temp file. */
static void upload_id(char *out, const char *folder, const char *path,
                      const struct stat *st)
{
    char key[8192];
    uint8_t d[crypto_hash_sha256_BYTES];
    snprintf(key, sizeof key, "%s\n%s\n%llu\n%lld", folder, path,
             (unsigned long long)st->st_size, (long long)st->st_mtime);
    crypto_hash_sha256(d, (const uint8_t *)key, strlen(key));
    memcpy(out, "cli-", 4);
    hex(out + 4, d, 12);
}

static int up_call(cli *c, skv_proto_vfolder_upload *q,
                   skv_proto_vfolder_upload_reply *r)
{
    memset(r, 0, sizeof *r);
    return cli_call(c, SKV_PROTO_VFOLDER_UPLOAD, q, r);
}

static int up_stream(cli *c, int fd, skv_proto_vfolder_upload *q,
                     uint64_t size, crypto_hash_sha256_state *st,
                     uint8_t *buf)
{
    skv_proto_vfolder_upload_reply r;
    progress p;
    progress_init(&p, c, size);
    q->op = "write";
    for (;;) {
        ssize_t got = pread(fd, buf, CLI_VF_CHUNK, (off_t)q->offset);
        if (got < 0)
            return cli_fail("upload: read: %s", strerror(errno));
        if (got == 0)
            break;
        crypto_hash_sha256_update(st, buf, (unsigned long long)got);
        q->data = buf;
        q->data_len = (size_t)got;
        if (up_call(c, q, &r))
            return CLI_FAIL;
        q->offset = r.offset;
        skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
        progress_show(&p, q->offset, 0);
    }
    progress_show(&p, q->offset, 1);
    q->data = NULL;
    q->data_len = 0;
    return CLI_OK;
}

static int up_commit(cli *c, skv_proto_vfolder_upload *q,
                     crypto_hash_sha256_state *st)
{
    uint8_t d[crypto_hash_sha256_BYTES];
    char h[2 * crypto_hash_sha256_BYTES + 1];
    skv_proto_vfolder_upload_reply r;
    crypto_hash_sha256_final(st, d);
    q->op = "commit";
    q->sha256 = d;
    q->sha256_len = sizeof d;
    if (up_call(c, q, &r))
        return CLI_FAIL;
    hex(h, d, sizeof d);
    if (c->json)
        printf("{\"path\":\"%s\",\"bytes\":%llu,\"sha256\":\"%s\"}\n",
               q->path, (unsigned long long)r.offset, h);
    else
        cli_line(stdout, "%s: %llu bytes, sha256 %s", q->path,
                 (unsigned long long)r.offset, h);
    skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
    return CLI_OK;
}

int cli_vf_upload(cli *c, const cli_vf_args *a)
{
    const char *local = a->pos[1];
    const char *base = strrchr(local, '/');
    char id[64];
    struct stat sb;
    int fd = open(local, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
        if (fd >= 0)
            close(fd);
        return cli_fail("upload: %s: %s", local,
                        fd < 0 ? strerror(errno) : "not a regular file");
    }
    skv_proto_vfolder_upload q;
    skv_proto_vfolder_upload_reply r;
    memset(&q, 0, sizeof q);
    q.folder = (char *)a->pos[0];
    q.path = (char *)(a->n > 2 ? a->pos[2] : base ? base + 1 : local);
    upload_id(id, q.folder, q.path, &sb);
    q.upload_id = id;
    q.op = "begin";
    q.resume = (uint8_t)a->resume;
    q.mode = sb.st_mode & 0777;
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    uint8_t *buf = malloc(CLI_VF_CHUNK);
    int rc = buf ? up_call(c, &q, &r) : cli_fail("out of memory");
    if (!rc) {
        q.offset = r.offset;
        skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
        if ((uint64_t)sb.st_size < q.offset ||
            hash_prefix(fd, q.offset, &st, buf))
            rc = cli_fail("upload: the stored part (%llu bytes) is not a "
                          "prefix of %s: start again without --resume",
                          (unsigned long long)q.offset, local);
    }
    if (!rc)
        rc = up_stream(c, fd, &q, (uint64_t)sb.st_size, &st, buf);
    if (!rc)
        rc = up_commit(c, &q, &st);
    free(buf);
    close(fd);
    return rc;
}

static int sha_remote(cli *c, const cli_vf_args *a, uint8_t *out)
{
    skv_proto_vfolder_file q;
    skv_proto_vfolder_file_reply r;
    memset(&q, 0, sizeof q);
    q.op = "sha256";
    q.folder = (char *)a->pos[0];
    q.path = (char *)a->pos[1];
    if (cli_call(c, SKV_PROTO_VFOLDER_FILE, &q, &r))
        return CLI_FAIL;
    int ok = r.sha256_len == crypto_hash_sha256_BYTES;
    if (ok)
        memcpy(out, r.sha256, r.sha256_len);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &r);
    return ok ? CLI_OK : cli_fail("download: the manager sent no sha256");
}

static int down_stream(cli *c, const cli_vf_args *a, int fd, uint64_t off,
                       crypto_hash_sha256_state *st, uint64_t *total)
{
    skv_proto_vfolder_download q = {(char *)a->pos[0], (char *)a->pos[1],
                                    off, CLI_VF_CHUNK};
    progress p = {0};
    for (int first = 1;; first = 0) {
        skv_proto_vfolder_download_reply r;
        memset(&r, 0, sizeof r);
        if (cli_call(c, SKV_PROTO_VFOLDER_DOWNLOAD, &q, &r))
            return CLI_FAIL;
        if (first)
            progress_init(&p, c, r.file_size);
        int bad = r.data_len && pwrite(fd, r.data, r.data_len,
                                       (off_t)q.offset) != (ssize_t)r.data_len;
        if (!bad)
            crypto_hash_sha256_update(st, r.data, r.data_len);
        q.offset += r.data_len;
        int eof = r.eof || r.data_len == 0;
        *total = r.file_size;
        skv_proto_body_free(SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, &r);
        if (bad)
            return cli_fail("download: write: %s", strerror(errno));
        progress_show(&p, q.offset, eof);
        if (eof)
            return CLI_OK;
    }
}

static int down_verify(cli *c, const cli_vf_args *a,
                       crypto_hash_sha256_state *st, uint64_t total,
                       const char *local)
{
    uint8_t mine[crypto_hash_sha256_BYTES], theirs[crypto_hash_sha256_BYTES];
    char h[2 * crypto_hash_sha256_BYTES + 1];
    crypto_hash_sha256_final(st, mine);
    hex(h, mine, sizeof mine);
    if (a->sha256 && sha_remote(c, a, theirs))
        return CLI_FAIL;
    if (a->sha256 && memcmp(mine, theirs, sizeof mine) != 0)
        return cli_fail("download: %s: sha256 %s differs from the stored "
                        "file's: the copy is damaged (download again)", local,
                        h);
    if (c->json)
        printf("{\"path\":\"%s\",\"bytes\":%llu,\"sha256\":\"%s\"}\n", local,
               (unsigned long long)total, h);
    else
        cli_line(stdout, "%s: %llu bytes, sha256 %s%s", local,
                 (unsigned long long)total, h,
                 a->sha256 ? " (verified)" : "");
    return CLI_OK;
}

int cli_vf_download(cli *c, const cli_vf_args *a)
{
    const char *base = strrchr(a->pos[1], '/');
    const char *local = a->n > 2 ? a->pos[2] : base ? base + 1 : a->pos[1];
    int fd = open(local, O_WRONLY | O_CREAT | O_CLOEXEC |
                             (a->resume ? 0 : O_TRUNC), 0644);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        if (fd >= 0)
            close(fd);
        return cli_fail("download: %s: %s", local, strerror(errno));
    }
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    uint64_t off = a->resume ? (uint64_t)sb.st_size : 0, total = 0;
    int rc = CLI_OK;
    if (off) {   /* the part already here counts for the hash */
        uint8_t *buf = malloc(CLI_VF_CHUNK);
        int rfd = open(local, O_RDONLY | O_CLOEXEC);
        if (!buf || rfd < 0 || hash_prefix(rfd, off, &st, buf))
            rc = cli_fail("download: cannot read %s to resume", local);
        if (rfd >= 0)
            close(rfd);
        free(buf);
    }
    if (!rc)
        rc = down_stream(c, a, fd, off, &st, &total);
    if (close(fd) < 0 && !rc)
        rc = cli_fail("download: %s: %s", local, strerror(errno));
    return rc ? rc : down_verify(c, a, &st, total, local);
}
