/* "vfolder.file" (ls, stat, mkdir, rm, mv, sha256) and "vfolder.download"
 * (one ranged chunk per request: the client pulls, so the manager holds at
 * most one chunk per request and never a whole file). Paths are checked
 * by the storage library at the moment of use (openat2 RESOLVE_BENEATH).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_vfolder.h"

typedef struct ls_buf {
    skv_proto_vfolder_file_reply r;
    int rc;
} ls_buf;

static void ls_free(ls_buf *b)
{
    for (size_t i = 0; i < b->r.n_entries; i++)
        skv__free(b->r.entries[i].name);
    skv__free(b->r.entries);
}

static const char *type_word(char t)
{
    return t == 'f' ? "f" : t == 'd' ? "d" : t == 'l' ? "l" : "o";
}

static int on_entry(const skv_storage_entry *e, void *ud)
{
    ls_buf *b = ud;
    skv_proto_vfolder_entry *v = skv__reallocarray(
        b->r.entries, b->r.n_entries + 1, sizeof *v);
    if (!v || b->r.n_entries >= 100000)
        return (b->rc = v ? SKV_ERANGE : SKV_ENOMEM);
    b->r.entries = v;
    v = &v[b->r.n_entries];
    v->name = skv__strdup(e->name ? e->name : "");
    if (!v->name)
        return (b->rc = SKV_ENOMEM);
    b->r.n_entries++;
    v->type = (char *)type_word(e->type);
    v->size = e->size;
    v->mode = e->mode;
    v->mtime_s = e->mtime_s;
    return 0;
}

static int do_ls(skv_storage_host *h, const char *id, const char *path,
                 bool stat_only, ls_buf *b, skv_error *err)
{
    if (stat_only) {
        skv_storage_entry e;
        int rc = skv_storage_stat(h, id, path, &e, err);
        if (!rc) {
            e.name = path;
            rc = on_entry(&e, b);
        }
        return rc;
    }
    int rc = skv_storage_ls(h, id, path, on_entry, b, err);
    if (b->rc == SKV_ERANGE)
        return skv__err(err, SKV_ERANGE, "directory '%s' has more than "
                        "100000 entries", path);
    return b->rc ? skv__err(err, b->rc, "out of memory") : rc;
}

/* sha256 of a whole file, read in chunks (the manager's loop waits for it:
 * about a second per GB with SHA extensions). */
static int do_sha(skv_storage_host *h, const char *id, const char *path,
                  uint8_t out[SKV_STORAGE_SHA256_BYTES], skv_error *err)
{
    skv_storage_reader *r = NULL;
    int rc = skv_storage_read_open(h, id, path, 0, SKV_STORAGE_LEN_ALL,
                                   SKV_STORAGE_READ_SHA256, &r, err);
    uint8_t *buf = rc ? NULL : skv__malloc(SKV__MGR_VF_CHUNK_DEFAULT);
    if (!rc && !buf)
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    size_t got = 1;
    while (!rc && got)
        rc = skv_storage_read(r, buf, SKV__MGR_VF_CHUNK_DEFAULT, &got, err);
    if (!rc)
        rc = skv_storage_reader_sha256(r, out, err);
    skv__free(buf);
    skv_storage_read_close(r);
    return rc;
}

static skv__mgr_vf_perm need_of(const char *op)
{
    return !strcmp(op, "ls") || !strcmp(op, "stat") || !strcmp(op, "sha256")
               ? SKV__VF_RO : SKV__VF_RW;
}

static int file_op(skv__mgr_vf_ref *f, const skv_proto_vfolder_file *q,
                   ls_buf *b, uint8_t *sha, skv_error *err)
{
    skv_storage_host *h = f->host->h;
    const char *id = f->row.id, *path = q->path ? q->path : "";
    if (!strcmp(q->op, "ls") || !strcmp(q->op, "stat"))
        return do_ls(h, id, path, !strcmp(q->op, "stat"), b, err);
    if (!strcmp(q->op, "mkdir"))
        return skv_storage_mkdir(h, id, path, err);
    if (!strcmp(q->op, "rm"))
        return skv_storage_rm(h, id, path, q->recursive, err);
    if (!strcmp(q->op, "mv"))
        return q->to ? skv_storage_mv(h, id, path, q->to, err)
                     : skv__err(err, SKV_EINVAL, "vfolder mv: 'to' missing");
    if (!strcmp(q->op, "sha256")) {
        b->r.sha256 = sha;
        b->r.sha256_len = SKV_STORAGE_SHA256_BYTES;
        return do_sha(h, id, path, sha, err);
    }
    return skv__err(err, SKV_EINVAL, "vfolder.file: unknown op '%s' (ls, "
                    "stat, mkdir, rm, mv, sha256)", q->op);
}

int skv__mgr_on_vfolder_file(skv_manager *m, const skv__mgr_call *c,
                             skv_error *err)
{
    const skv_proto_vfolder_file *q = c->body;
    skv__mgr_vf_ref f;
    ls_buf b = {0};
    uint8_t sha[SKV_STORAGE_SHA256_BYTES];
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_SUBMIT, c->who->user,
                          err);
    if (!rc)
        rc = skv__mgr_vf_access(m, c->who, q->folder, need_of(q->op), &f,
                                err);
    if (!rc)
        rc = file_op(&f, q, &b, sha, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_VFOLDER_FILE_REPLY,
                            &b.r);
    ls_free(&b);
    return rc;
}

static int read_chunk(skv__mgr_vf_ref *f, const skv_proto_vfolder_download *q,
                      skv_proto_vfolder_download_reply *r, skv_error *err)
{
    uint32_t max = q->max_bytes ? q->max_bytes : SKV__MGR_VF_CHUNK_DEFAULT;
    if (max > SKV__MGR_VF_CHUNK_MAX)
        return skv__err(err, SKV_ERANGE, "vfolder.download: max_bytes %u "
                        "above %u", max, SKV__MGR_VF_CHUNK_MAX);
    skv_storage_reader *rd = NULL;
    int rc = skv_storage_read_open(f->host->h, f->row.id, q->path, q->offset,
                                   max, 0, &rd, err);
    if (!rc && !(r->data = skv__malloc(max)))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    size_t got = 1;
    while (!rc && got && r->data_len < max) {
        rc = skv_storage_read(rd, r->data + r->data_len, max - r->data_len,
                              &got, err);
        r->data_len += rc ? 0 : got;
    }
    if (!rc) {
        r->offset = q->offset;
        r->file_size = skv_storage_reader_file_size(rd);
        r->eof = q->offset + r->data_len >= r->file_size;
    }
    skv_storage_read_close(rd);
    return rc;
}

int skv__mgr_on_vfolder_download(skv_manager *m, const skv__mgr_call *c,
                                 skv_error *err)
{
    const skv_proto_vfolder_download *q = c->body;
    skv__mgr_vf_ref f;
    skv_proto_vfolder_download_reply r = {0};
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_SUBMIT, c->who->user,
                          err);
    if (!rc)
        rc = skv__mgr_vf_access(m, c->who, q->folder, SKV__VF_RO, &f, err);
    if (!rc)
        rc = read_chunk(&f, q, &r, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req,
                            SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, &r);
    skv__free(r.data);
    return rc;
}
