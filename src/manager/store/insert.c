/* Inserting a submitted session: the session row (with the submit body as
 * accepted, for restarts), one row per kernel and the first history entry.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "create_cache.h"
#include "dispatch_cache.h"
#include "kernel_cache.h"
#include "state_cache.h"
#include "store_int.h"

static int total_slots(skv_slots **out, const skv_slots *const *req,
                       size_t n, skv_error *err)
{
    int rc = skv_slots_new(out, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = skv_slots_add(*out, req[i], err);
    if (rc) {
        skv_slots_free(*out);
        *out = NULL;
    }
    return rc;
}

static int bind_session(skv__db_stmt *st, const skv_proto_session_submit *s,
                        const char *sid, const char *domain, int64_t now,
                        const void *blob, size_t len, const skv_slots *total,
                        skv_error *err)
{
    skv__db_bind_text(st, 1, sid);
    skv__db_bind_text(st, 2, s->name);
    skv__db_bind_text(st, 3, s->owner);
    skv__db_bind_text(st, 4, domain);
    skv__db_bind_text(st, 5, s->project);
    skv__db_bind_text(st, 6, s->resource_group);
    skv__db_bind_text(st, 7, s->session_type);
    skv__db_bind_int64(st, 8, s->priority);
    skv__db_bind_text(st, 9, s->cluster_mode);
    skv__db_bind_int64(st, 10, s->cluster_size);
    skv__db_bind_text(st, 11, s->image);
    skv__db_bind_blob(st, 12, blob, len);
    int rc = skv__mgr_store_bind_slots(st, 13, total, err);
    skv__db_bind_int64(st, 14, now);
    skv__db_bind_text(st, 15, s->client_token);
    return rc;
}

static int session_row(skv__db *db, const skv_proto_session_submit *s,
                       const char *sid, const char *domain,
                       const skv_slots *const *req, size_t n, int64_t now,
                       skv_error *err)
{
    skv_slots *total = NULL;
    skv__db_stmt *st = NULL;
    void *blob = NULL;
    size_t len = 0;
    int rc = total_slots(&total, req, n, err);
    if (!rc)
        rc = skv_proto_body_encode(&blob, &len, SKV_PROTO_SESSION_SUBMIT, s,
                                   err);
    if (!rc)
        rc = skv__db_prepare(db,
            "INSERT INTO sessions(id,name,owner,domain,project,resource_group,"
            "session_type,priority,cluster_mode,cluster_size,image,spec,slots,"
            "status,created_ms,client_token) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,"
            "'PENDING',?,?)", &st, err);
    if (!rc)
        rc = bind_session(st, s, sid, domain, now, blob, len, total, err);
    if (!rc)
        rc = skv__mgr_store_run(st, err);
    /* kernel.create reads the body back once the session is placed; the
     * state cache knows the row from now on (sessions.c status_row) */
    if (!rc) {
        skv__mgr_store_cc_submit_note(db, sid, blob, len, domain, s->project,
                                      s->owner);
        skv__mgr_store_state_note(db, sid, SKV_SESSION_PENDING);
    }
    skv__db_done(st);
    skv_free(blob);
    skv_slots_free(total);
    return rc;
}

/* The row's image and slots for the dispatch cache: kernel.create reads
 * them back within the same pass. Out of memory: not noted, a miss. */
static void note_spec(skv__db *db, const char *sid, size_t i,
                      const char *image, const skv_slots *slots)
{
    void *buf = NULL;
    size_t len = 0;
    if (slots && skv_slots_encode(&buf, &len, slots, NULL))
        return;
    skv__mgr_store_dc_spec_note(db, sid, (int)i, image, buf, len);
    skv_free(buf);
}

static int kernel_rows(skv__db *db, const skv_proto_session_submit *s,
                       const char *sid, const skv_slots *const *req, size_t n,
                       skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db,
        "INSERT INTO kernels(id,session_id,idx,role,image,slots,status)"
        " VALUES(?,?,?,?,?,?,'PENDING')", &st, err);
    for (size_t i = 0; !rc && i < n; i++) {
        char kid[SKV__STORE_ID_MAX];
        snprintf(kid, sizeof kid, "%s-%zu", sid, i);
        const skv_proto_kernel_spec *k =
            &s->kernels[s->n_kernels > 1 ? i : 0];
        skv__db_reset(st);
        skv__db_bind_text(st, 1, kid);
        skv__db_bind_text(st, 2, sid);
        skv__db_bind_int64(st, 3, (int64_t)i);
        skv__db_bind_text(st, 4, i ? "sub" : "main");
        skv__db_bind_text(st, 5, k->image ? k->image : s->image);
        rc = skv__mgr_store_bind_slots(st, 6, req[i], err);
        if (!rc)
            rc = skv__mgr_store_run(st, err);
        if (!rc)
            note_spec(db, sid, i, k->image ? k->image : s->image, req[i]);
    }
    skv__db_done(st);
    return rc;
}

/* The rows kernel_rows wrote, for the kernel cache: a new session's
 * kernels are read at each of its steps. */
static void note_kernels(skv__db *db, const char *sid, size_t n)
{
    skv__kc_kernel k[SKV__KCACHE_KERNELS];
    if (n > SKV__KCACHE_KERNELS)
        return;
    memset(k, 0, sizeof k);
    for (size_t i = 0; i < n; i++) {
        snprintf(k[i].kid, sizeof k[i].kid, "%s-%zu", sid, i);
        snprintf(k[i].status, sizeof k[i].status, "PENDING");
        k[i].idx = (int)i;
    }
    skv__mgr_store_kc_fill(db, sid, k, n);
    skv__mgr_store_kc_fin_new(db, sid);     /* no stop, no exit yet */
}

/* The session's own lifetime limit, only when it asked for one. */
static int limits_row(skv__db *db, const skv_proto_session_submit *s,
                      const char *sid, skv_error *err)
{
    if (!s->max_lifetime_ms)
        return 0;
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO session_limits(session_id,"
                             "max_lifetime_ms) VALUES(?,?)", &st, err);
    if (!rc) {
        skv__db_bind_text(st, 1, sid);
        skv__db_bind_int64(st, 2, (int64_t)s->max_lifetime_ms);
        rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    return rc;
}

/* A new PENDING session with one row per kernel (requests, in index
 * order) and its first history entry; inside the caller's transaction. */
int skv__mgr_store_session_insert(skv__db *db,
                                  const skv_proto_session_submit *s,
                                  const char *sid, const char *domain,
                                  const skv_slots *const *req, size_t n,
                                  int64_t now, skv_error *err)
{
    int rc = session_row(db, s, sid, domain, req, n, now, err);
    if (!rc)
        rc = kernel_rows(db, s, sid, req, n, err);
    if (!rc)
        note_kernels(db, sid, n);
    if (!rc)
        rc = limits_row(db, s, sid, err);
    if (!rc)
        rc = skv__mgr_store_history_add(db, sid, "PENDING", "submitted", now,
                                        err);
    return rc;
}
