/* Inserting a submitted session: the session row (with the submit body as
 * accepted, for restarts), one row per kernel and the first history entry.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static int total_slots(skv_slots **out, const skv__mgr_spec *x,
                       skv_error *err)
{
    int rc = skv_slots_new(out, err);
    for (size_t i = 0; !rc && i < x->spec.n_kernels; i++)
        rc = skv_slots_add(*out, x->kernels[i].request, err);
    if (rc) {
        skv_slots_free(*out);
        *out = NULL;
    }
    return rc;
}

static int bind_session(sqlite3_stmt *st, const skv_proto_session_submit *s,
                        const char *sid, const char *domain, int64_t now,
                        const skv_slots *total, skv_error *err)
{
    void *blob = NULL;
    size_t len = 0;
    int rc = skv_proto_body_encode(&blob, &len, SKV_PROTO_SESSION_SUBMIT, s,
                                   err);
    if (rc)
        return rc;
    skv__mgr_bind_text(st, 1, sid);
    skv__mgr_bind_text(st, 2, s->name);
    skv__mgr_bind_text(st, 3, s->owner);
    skv__mgr_bind_text(st, 4, domain);
    skv__mgr_bind_text(st, 5, s->project);
    skv__mgr_bind_text(st, 6, s->resource_group);
    skv__mgr_bind_text(st, 7, s->session_type);
    sqlite3_bind_int(st, 8, s->priority);
    skv__mgr_bind_text(st, 9, s->cluster_mode);
    sqlite3_bind_int64(st, 10, s->cluster_size);
    skv__mgr_bind_text(st, 11, s->image);
    sqlite3_bind_blob(st, 12, blob, (int)len, SQLITE_TRANSIENT);
    skv_free(blob);
    rc = skv__mgr_bind_slots(st, 13, total, err);
    sqlite3_bind_int64(st, 14, now);
    skv__mgr_bind_text(st, 15, s->client_token);
    return rc;
}

static int session_row(skv_manager *m, const skv_proto_session_submit *s,
                       const char *sid, const char *domain,
                       const skv__mgr_spec *x, int64_t now, skv_error *err)
{
    skv_slots *total = NULL;
    sqlite3_stmt *st = NULL;
    int rc = total_slots(&total, x, err);
    if (!rc)
        rc = skv__mgr_db_prepare(m, &st,
            "INSERT INTO sessions(id,name,owner,domain,project,resource_group,"
            "session_type,priority,cluster_mode,cluster_size,image,spec,slots,"
            "status,created_ms,client_token) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,"
            "'PENDING',?,?)", err);
    if (!rc)
        rc = bind_session(st, s, sid, domain, now, total, err);
    if (!rc && sqlite3_step(st) != SQLITE_DONE)
        rc = skv__mgr_db_err(m, err, "insert session");
    skv__mgr_db_done(m, st);
    skv_slots_free(total);
    return rc;
}

static int kernel_rows(skv_manager *m, const skv_proto_session_submit *s,
                       const char *sid, const skv__mgr_spec *x, skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_db_prepare(m, &st,
        "INSERT INTO kernels(id,session_id,idx,role,image,slots,status)"
        " VALUES(?,?,?,?,?,?,'PENDING')", err);
    for (size_t i = 0; !rc && i < x->spec.n_kernels; i++) {
        char kid[SKV__MGR_ID_MAX];
        snprintf(kid, sizeof kid, "%s-%zu", sid, i);
        const skv_proto_kernel_spec *k =
            &s->kernels[s->n_kernels > 1 ? i : 0];
        sqlite3_reset(st);
        skv__mgr_bind_text(st, 1, kid);
        skv__mgr_bind_text(st, 2, sid);
        sqlite3_bind_int64(st, 3, (int64_t)i);
        skv__mgr_bind_text(st, 4, i ? "sub" : "main");
        skv__mgr_bind_text(st, 5, k->image ? k->image : s->image);
        rc = skv__mgr_bind_slots(st, 6, x->kernels[i].request, err);
        if (!rc && sqlite3_step(st) != SQLITE_DONE)
            rc = skv__mgr_db_err(m, err, "insert kernel");
    }
    skv__mgr_db_done(m, st);
    return rc;
}

int skv__mgr_session_insert(skv_manager *m, const skv_proto_session_submit *s,
                            const char *sid, const char *domain,
                            const skv__mgr_spec *x, int64_t now,
                            skv_error *err)
{
    int rc = session_row(m, s, sid, domain, x, now, err);
    if (!rc)
        rc = kernel_rows(m, s, sid, x, err);
    if (!rc)
        rc = skv__mgr_history_add(m, sid, "PENDING", "submitted", now, err);
    return rc;
}
