/* "vfolder.upload": begin (resume: continue an earlier try's temp file),
 * write (the chunk must go where the file ends: a client that lost
 * track asks begin again), commit (fsync + rename, optional sha256 check),
 * abort. The content lands in a temp file beside the target (storage.h),
 * so a killed manager or client leaves the old file or the new one. The
 * open handles are per connection; a closed connection keeps its temp
 * file for a resumed begin. Stop-and-wait flow control: the client sends
 * the next chunk after the reply to the last.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_vfolder.h"

static skv__mgr_vf_up *find_up(skv_manager *m, uint64_t conn, const char *id)
{
    for (size_t i = 0; i < m->vf->n_ups; i++)
        if (m->vf->ups[i].conn == conn &&
            strcmp(m->vf->ups[i].upload_id, id) == 0)
            return &m->vf->ups[i];
    return NULL;
}

static void drop_up(skv_manager *m, skv__mgr_vf_up *u, bool abort)
{
    if (abort)
        skv_storage_upload_abort(u->u);
    else
        skv_storage_upload_close(u->u);
    *u = m->vf->ups[--m->vf->n_ups];
}

static size_t conn_ups(skv_manager *m, uint64_t conn)
{
    size_t n = 0;
    for (size_t i = 0; i < m->vf->n_ups; i++)
        n += m->vf->ups[i].conn == conn;
    return n;
}

static int begin(skv_manager *m, const skv__mgr_call *c,
                 const skv_proto_vfolder_upload *q, skv__mgr_vf_ref *f,
                 skv_proto_vfolder_upload_reply *r, skv_error *err)
{
    skv__mgr_vf_up *old = find_up(m, c->conn, q->upload_id);
    if (old)
        drop_up(m, old, false);
    if (conn_ups(m, c->conn) >= SKV__MGR_VF_UPLOADS_MAX ||
        m->vf->n_ups >= sizeof m->vf->ups / sizeof m->vf->ups[0])
        return skv__err(err, SKV_EBUSY, "vfolder.upload: too many uploads "
                        "open (%d per connection)", SKV__MGR_VF_UPLOADS_MAX);
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    o.upload_id = q->upload_id;
    o.resume = q->resume != 0;
    /* Hashing every byte costs as much CPU as the rest of the write path
     * (the request HMAC already covers each chunk in transit): only for
     * clients that will check the result. */
    o.sha256 = q->verify != 0;
    o.mode = q->mode;
    skv__mgr_vf_up *u = &m->vf->ups[m->vf->n_ups];
    memset(u, 0, sizeof *u);
    int rc = skv_storage_upload_begin(f->host->h, f->row.id, q->path, &o,
                                      &u->u, err);
    if (rc)
        return rc;
    u->conn = c->conn;
    u->verify = o.sha256;
    snprintf(u->upload_id, sizeof u->upload_id, "%s", q->upload_id);
    snprintf(u->folder_id, sizeof u->folder_id, "%s", f->row.id);
    m->vf->n_ups++;
    r->offset = skv_storage_upload_offset(u->u);
    return 0;
}

static int write_chunk(skv__mgr_vf_up *u, const skv_proto_vfolder_upload *q,
                       skv_proto_vfolder_upload_reply *r, skv_error *err)
{
    uint64_t at = skv_storage_upload_offset(u->u);
    if (q->offset != at)
        return skv__err(err, SKV_ERANGE, "vfolder.upload: chunk at %llu, "
                        "but the upload has %llu bytes (begin again with "
                        "resume to learn where to go on)",
                        (unsigned long long)q->offset,
                        (unsigned long long)at);
    int rc = q->data_len ? skv_storage_upload_write(u->u, q->data,
                                                    q->data_len, err) : 0;
    r->offset = skv_storage_upload_offset(u->u);
    return rc;
}

static int commit(skv_manager *m, skv__mgr_vf_up *u,
                  const skv_proto_vfolder_upload *q,
                  skv_proto_vfolder_upload_reply *r, uint8_t *sha,
                  skv_error *err)
{
    if (q->sha256_len && q->sha256_len != SKV_STORAGE_SHA256_BYTES)
        return skv__err(err, SKV_EINVAL, "vfolder.upload: sha256 must be "
                        "32 bytes");
    if (q->sha256_len && !u->verify)
        return skv__err(err, SKV_EINVAL, "vfolder.upload: a sha256 to check "
                        "needs 'verify' at begin");
    r->offset = skv_storage_upload_offset(u->u);
    int rc = skv_storage_upload_commit(u->u, q->sha256_len ? q->sha256 : NULL,
                                       u->verify ? sha : NULL, err);
    bool verified = u->verify;
    /* Committed or refused (a hash mismatch): the handle is done; a
     * mismatch keeps nothing of the bad content. */
    drop_up(m, u, rc != 0);
    if (!rc && verified) {
        r->sha256 = sha;
        r->sha256_len = SKV_STORAGE_SHA256_BYTES;
    }
    return rc;
}

static int step(skv_manager *m, const skv__mgr_call *c,
                const skv_proto_vfolder_upload *q, skv__mgr_vf_ref *f,
                skv_proto_vfolder_upload_reply *r, uint8_t *sha,
                skv_error *err)
{
    if (!strcmp(q->op, "begin"))
        return begin(m, c, q, f, r, err);
    skv__mgr_vf_up *u = find_up(m, c->conn, q->upload_id);
    if (u && strcmp(u->folder_id, f->row.id) != 0)
        u = NULL;
    if (!u)
        return skv__err(err, SKV_ENOENT, "vfolder.upload: no upload '%s' "
                        "begun on this connection", q->upload_id);
    if (!strcmp(q->op, "write"))
        return write_chunk(u, q, r, err);
    if (!strcmp(q->op, "commit"))
        return commit(m, u, q, r, sha, err);
    if (!strcmp(q->op, "abort")) {
        drop_up(m, u, true);
        return 0;
    }
    return skv__err(err, SKV_EINVAL, "vfolder.upload: unknown op '%s' "
                    "(begin, write, commit, abort)", q->op);
}

int skv__mgr_on_vfolder_upload(skv_manager *m, const skv__mgr_call *c,
                               skv_error *err)
{
    const skv_proto_vfolder_upload *q = c->body;
    skv__mgr_vf_ref f;
    skv_proto_vfolder_upload_reply r = {0};
    uint8_t sha[SKV_STORAGE_SHA256_BYTES];
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_SUBMIT, c->who->user,
                          err);
    if (!rc)
        rc = skv__mgr_vf_access(m, c->who, q->folder, SKV__VF_RW, &f, err);
    if (!rc)
        rc = step(m, c, q, &f, &r, sha, err);
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req,
                            SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
    return rc;
}
