/* sokovan vfolder download: ranged reads of CLI_VF_CHUNK with up to
 * CLI_VF_WINDOW in flight (vfolder_pipe.c); the first alone, to learn the
 * file's size, then the next ones up to it. With --resume from the local
 * file's size; --sha256 hashes the local copy (a resumed one from its
 * start) and compares with the manager's hash of the stored file.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfolder.h"

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
    int ok = r.sha256_len == CLI_VF_SHA_BYTES;
    if (ok)
        memcpy(out, r.sha256, r.sha256_len);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &r);
    return ok ? CLI_OK : cli_fail("download: the manager sent no sha256");
}

typedef struct down {
    cli_vf_pipe p;
    skv_proto_vfolder_download q;
    int fd;
    EVP_MD_CTX *st;
    uint64_t next;   /* offset of the next request */
    uint64_t at;     /* bytes of the file written here so far */
    uint64_t size;   /* the file's size as last reported */
    int eof;
} down;

static int down_send(down *d)
{
    d->q.offset = d->next;
    d->next += CLI_VF_CHUNK;
    return cli_vf_pipe_send(&d->p, &d->q);
}

/* The oldest request's data, written where it belongs. */
static int down_take(down *d, const char *local)
{
    skv_client_message m;
    if (cli_vf_pipe_recv(&d->p, &m))
        return CLI_FAIL;
    const skv_proto_vfolder_download_reply *r = m.body;
    int rc = CLI_OK;
    if (r->offset != d->at)
        rc = cli_fail("download: data for offset %llu, expected %llu",
                      (unsigned long long)r->offset,
                      (unsigned long long)d->at);
    else if (r->data_len && pwrite(d->fd, r->data, r->data_len,
                                   (off_t)d->at) != (ssize_t)r->data_len)
        rc = cli_fail("download: %s: %s", local, strerror(errno));
    else
        rc = cli_vf_sha_add(d->st, r->data, r->data_len);
    d->at += r->data_len;
    d->size = r->file_size;
    d->eof = r->eof || r->data_len == 0;
    skv_client_message_free(&m);
    /* requests go only up to the size: an end before them all came back
     * means the file shrank under the transfer */
    if (!rc && d->eof && d->p.n)
        rc = cli_fail("download: %s changed (now %llu bytes) during the "
                      "transfer: download again", d->q.path,
                      (unsigned long long)d->size);
    return rc;
}

static int down_stream(cli *c, const cli_vf_args *a, down *d,
                       const char *local)
{
    cli_vf_progress pr = {0};
    d->q.folder = (char *)a->pos[0];
    d->q.path = (char *)a->pos[1];
    d->q.max_bytes = CLI_VF_CHUNK;
    cli_vf_pipe_init(&d->p, c, SKV_PROTO_VFOLDER_DOWNLOAD);
    int rc = down_send(d);
    for (int first = 1; !rc && !d->eof; first = 0) {
        rc = down_take(d, local);
        if (first)
            cli_vf_progress_init(&pr, c, d->size);
        while (!rc && !d->eof && d->p.n < CLI_VF_WINDOW &&
               (d->next < d->size || d->p.n == 0))
            rc = down_send(d);
        cli_vf_progress_show(&pr, d->at, 0);
    }
    cli_vf_progress_show(&pr, d->at, 1);
    return rc;
}

static int down_verify(cli *c, const cli_vf_args *a, EVP_MD_CTX *st,
                       uint64_t total, const char *local)
{
    uint8_t mine[CLI_VF_SHA_BYTES], theirs[CLI_VF_SHA_BYTES];
    char h[2 * CLI_VF_SHA_BYTES + 1] = "";
    if (st && (cli_vf_sha_final(st, mine) || sha_remote(c, a, theirs)))
        return CLI_FAIL;
    if (st)
        cli_vf_hex(h, mine, sizeof mine);
    if (st && memcmp(mine, theirs, sizeof mine) != 0)
        return cli_fail("download: %s: sha256 %s differs from the stored "
                        "file's: the copy is damaged (download again)", local,
                        h);
    if (c->json)
        printf("{\"path\":\"%s\",\"bytes\":%llu%s%s%s}\n", local,
               (unsigned long long)total, st ? ",\"sha256\":\"" : "", h,
               st ? "\"" : "");
    else
        cli_line(stdout, "%s: %llu bytes%s%s%s", local,
                 (unsigned long long)total, st ? ", sha256 " : "", h,
                 st ? " (verified)" : "");
    return CLI_OK;
}

/* --resume with --sha256: the part already here counts for the hash. */
static int hash_local(const char *local, uint64_t off, EVP_MD_CTX *st)
{
    if (!off || !st)
        return CLI_OK;
    uint8_t *buf = malloc(CLI_VF_CHUNK);
    int rfd = open(local, O_RDONLY | O_CLOEXEC);
    int rc = !buf || rfd < 0 || cli_vf_hash_prefix(rfd, off, st, buf)
                 ? cli_fail("download: cannot read %s to resume", local)
                 : CLI_OK;
    if (rfd >= 0)
        close(rfd);
    free(buf);
    return rc;
}

int cli_vf_download(cli *c, const cli_vf_args *a)
{
    const char *base = strrchr(a->pos[1], '/');
    const char *local = a->n > 2 ? a->pos[2] : base ? base + 1 : a->pos[1];
    down d;
    memset(&d, 0, sizeof d);
    cli_vf_malloc_tune();
    d.fd = open(local, O_WRONLY | O_CREAT | O_CLOEXEC |
                           (a->resume ? 0 : O_TRUNC), 0644);
    struct stat sb;
    if (d.fd < 0 || fstat(d.fd, &sb) < 0) {
        if (d.fd >= 0)
            close(d.fd);
        return cli_fail("download: %s: %s", local, strerror(errno));
    }
    d.st = a->sha256 ? cli_vf_sha_new() : NULL;
    d.next = d.at = a->resume ? (uint64_t)sb.st_size : 0;
    int rc = a->sha256 && !d.st ? cli_fail("out of memory") : CLI_OK;
    if (!rc)
        rc = hash_local(local, d.at, d.st);
    if (!rc)
        rc = cli_connect(c);
    if (!rc)
        rc = down_stream(c, a, &d, local);
    if (close(d.fd) < 0 && !rc)
        rc = cli_fail("download: %s: %s", local, strerror(errno));
    if (!rc)
        rc = down_verify(c, a, d.st, d.size, local);
    EVP_MD_CTX_free(d.st);
    return rc;
}
