/* sokovan vfolder upload: a file moved in CLI_VF_CHUNK pieces with up to
 * CLI_VF_WINDOW writes in flight (vfolder_pipe.c), so neither side ever
 * holds a whole file and neither waits for the other. begin (with
 * --resume the manager says how much an earlier try stored and the local
 * file is read from there), write..., commit: the manager publishes the
 * file atomically (fsync + rename). Each chunk is signed (HMAC-SHA256
 * over the request, so it arrives as sent, at its offset); --sha256 also
 * hashes the whole file on both sides and the manager refuses to publish
 * content whose hash differs from the one computed here. The hashing is
 * optional because it costs as much CPU as the rest of the transfer.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfolder.h"

/* Same local file, same target: the same id, so --resume finds the
 * earlier try's temp file. */
static void upload_id(char *out, const char *folder, const char *path,
                      const struct stat *st)
{
    char key[8192];
    uint8_t d[CLI_VF_SHA_BYTES];
    unsigned n = 0;
    snprintf(key, sizeof key, "%s\n%s\n%llu\n%lld", folder, path,
             (unsigned long long)st->st_size, (long long)st->st_mtime);
    EVP_Digest(key, strlen(key), d, &n, EVP_sha256(), NULL);
    memcpy(out, "cli-", 4);
    cli_vf_hex(out + 4, d, 12);
}

static int up_call(cli *c, skv_proto_vfolder_upload *q,
                   skv_proto_vfolder_upload_reply *r)
{
    memset(r, 0, sizeof *r);
    return cli_call(c, SKV_PROTO_VFOLDER_UPLOAD, q, r);
}

/* Read the chunk at *next and send it; *eof at the end of the file. */
static int up_send(cli_vf_pipe *p, int fd, skv_proto_vfolder_upload *q,
                   uint64_t *next, EVP_MD_CTX *st, uint8_t *buf, int *eof)
{
    /* The kernel reads the chunks after this one while this one is
     * hashed, signed and sent: a cold file's reads overlap the rest. */
    posix_fadvise(fd, (off_t)(*next + CLI_VF_CHUNK),
                  (off_t)CLI_VF_CHUNK * CLI_VF_WINDOW, POSIX_FADV_WILLNEED);
    ssize_t got = pread(fd, buf, CLI_VF_CHUNK, (off_t)*next);
    if (got < 0)
        return cli_fail("upload: read: %s", strerror(errno));
    if (got == 0) {
        *eof = 1;
        return CLI_OK;
    }
    if (cli_vf_sha_add(st, buf, (size_t)got))
        return CLI_FAIL;
    q->offset = *next;
    q->data = buf;
    q->data_len = (size_t)got;
    *next += (uint64_t)got;
    return cli_vf_pipe_send(p, q);
}

/* The oldest write's reply: how much the manager has stored. */
static int up_ack(cli_vf_pipe *p, uint64_t *stored, cli_vf_progress *pr)
{
    skv_client_message m;
    if (cli_vf_pipe_recv(p, &m))
        return CLI_FAIL;
    *stored = ((const skv_proto_vfolder_upload_reply *)m.body)->offset;
    skv_client_message_free(&m);
    cli_vf_progress_show(pr, *stored, 0);
    return CLI_OK;
}

static int up_stream(cli *c, int fd, skv_proto_vfolder_upload *q,
                     uint64_t size, EVP_MD_CTX *st, uint8_t *buf)
{
    cli_vf_pipe p;
    cli_vf_progress pr;
    uint64_t next = q->offset, stored = q->offset;
    int eof = 0, rc = CLI_OK;
    cli_vf_pipe_init(&p, c, SKV_PROTO_VFOLDER_UPLOAD);
    cli_vf_progress_init(&pr, c, size);
    q->op = "write";
    while (!rc && (!eof || p.n)) {
        if (!eof && p.n < CLI_VF_WINDOW)
            rc = up_send(&p, fd, q, &next, st, buf, &eof);
        else
            rc = up_ack(&p, &stored, &pr);
    }
    if (!rc && stored != next)
        rc = cli_fail("upload: the manager stored %llu bytes of %llu",
                      (unsigned long long)stored, (unsigned long long)next);
    cli_vf_progress_show(&pr, stored, 1);
    q->offset = stored;
    q->data = NULL;
    q->data_len = 0;
    return rc;
}

static int up_commit(cli *c, skv_proto_vfolder_upload *q, EVP_MD_CTX *st)
{
    uint8_t d[CLI_VF_SHA_BYTES];
    char h[2 * CLI_VF_SHA_BYTES + 1] = "";
    skv_proto_vfolder_upload_reply r;
    if (st && cli_vf_sha_final(st, d))
        return CLI_FAIL;
    q->op = "commit";
    q->sha256 = st ? d : NULL;
    q->sha256_len = st ? sizeof d : 0;
    if (up_call(c, q, &r))
        return CLI_FAIL;
    if (st)
        cli_vf_hex(h, d, sizeof d);
    if (c->json)
        printf("{\"path\":\"%s\",\"bytes\":%llu%s%s%s}\n", q->path,
               (unsigned long long)r.offset, st ? ",\"sha256\":\"" : "", h,
               st ? "\"" : "");
    else
        cli_line(stdout, "%s: %llu bytes%s%s%s", q->path,
                 (unsigned long long)r.offset, st ? ", sha256 " : "", h,
                 st ? " (verified)" : "");
    skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
    return CLI_OK;
}

static int open_local(const char *local, int *fd, struct stat *sb)
{
    *fd = open(local, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0 && fstat(*fd, sb) == 0 && S_ISREG(sb->st_mode))
        return CLI_OK;
    int rc = cli_fail("upload: %s: %s", local,
                      *fd < 0 ? strerror(errno) : "not a regular file");
    if (*fd >= 0)
        close(*fd);
    return rc;
}

/* begin; with --resume the stored part goes into the hash first. */
static int up_begin(cli *c, skv_proto_vfolder_upload *q, int fd,
                    const struct stat *sb, EVP_MD_CTX *st, uint8_t *buf,
                    const char *local)
{
    skv_proto_vfolder_upload_reply r;
    if (up_call(c, q, &r))
        return CLI_FAIL;
    q->offset = r.offset;
    skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
    if ((uint64_t)sb->st_size < q->offset ||
        (st && cli_vf_hash_prefix(fd, q->offset, st, buf)))
        return cli_fail("upload: the stored part (%llu bytes) is not a "
                        "prefix of %s: start again without --resume",
                        (unsigned long long)q->offset, local);
    return CLI_OK;
}

int cli_vf_upload(cli *c, const cli_vf_args *a)
{
    const char *local = a->pos[1];
    const char *base = strrchr(local, '/');
    char id[64];
    struct stat sb;
    int fd;
    if (open_local(local, &fd, &sb))
        return CLI_FAIL;
    cli_vf_malloc_tune();
    skv_proto_vfolder_upload q;
    memset(&q, 0, sizeof q);
    q.folder = (char *)a->pos[0];
    q.path = (char *)(a->n > 2 ? a->pos[2] : base ? base + 1 : local);
    upload_id(id, q.folder, q.path, &sb);
    q.upload_id = id;
    q.op = "begin";
    q.resume = (uint8_t)a->resume;
    q.mode = sb.st_mode & 0777;
    q.verify = (uint8_t)a->sha256;
    EVP_MD_CTX *st = a->sha256 ? cli_vf_sha_new() : NULL;
    uint8_t *buf = malloc(CLI_VF_CHUNK);
    int rc = !buf || (a->sha256 && !st) ? cli_fail("out of memory")
                                        : cli_connect(c);
    if (!rc)
        rc = up_begin(c, &q, fd, &sb, st, buf, local);
    if (!rc)
        rc = up_stream(c, fd, &q, (uint64_t)sb.st_size, st, buf);
    if (!rc)
        rc = up_commit(c, &q, st);
    EVP_MD_CTX_free(st);
    free(buf);
    close(fd);
    return rc;
}
