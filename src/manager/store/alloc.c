/* Placements and their allocation rows: a kernel placed on an agent with
 * its per-device shares (kernel_alloc), read back for kernel.create and
 * reconciliation, and undone at a requeue.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "create_cache.h"
#include "dispatch_cache.h"
#include "history_buf.h"
#include "kernel_cache.h"
#include "state_cache.h"
#include "store_int.h"

/* Whether kid is PENDING as the kernel cache knows it: then it has no
 * allocation rows (create_cache.h). */
static bool pending(skv__db *db, const char *kid)
{
    const char *sid = NULL;
    const skv__kc_kernel *k = skv__mgr_store_kc_kernel(db, kid, &sid);
    return k && !strcmp(k->status, "PENDING");
}

/* status: SCHEDULED, or PREPARING when its kernel.create goes out in the
 * same unit (mgr_pass.c): one write instead of two. */
int skv__mgr_store_kernel_place_as(skv__db *db, const char *kid,
                                   const char *agent, const char *status,
                                   skv_error *err)
{
    bool fresh = pending(db, kid);
    int rc = skv__mgr_store_exec_text(db, "UPDATE kernels SET agent_id=?, "
                                      "status=?, live=1 WHERE id=?",
                                      SKV__ARGS(agent, status, kid), NULL,
                                      err);
    if (!rc)
        skv__mgr_store_kc_set(db, kid, status, agent);
    if (!rc && fresh)    /* the rows the pass adds next are all it has */
        skv__mgr_store_cc_alloc_start(db, kid);
    return rc;
}

int skv__mgr_store_kernel_place(skv__db *db, const char *kid,
                                const char *agent, skv_error *err)
{
    return skv__mgr_store_kernel_place_as(db, kid, agent, "SCHEDULED", err);
}

/* One multi-row INSERT per chunk (multirow.c): a kernel's rows (a device
 * share and its pooled memory, usually) were one statement each. */
static int alloc_chunk(skv__db *db, const skv__mgr_store_alloc *a, size_t n,
                       skv_error *err)
{
    char sql[2048];
    skv__db_stmt *st;
    int rc = skv__db_values_sql(sql, sizeof sql, "INSERT INTO kernel_alloc"
                                "(kernel_id,device_id,slot,amount,whole) "
                                "VALUES", 5, n, "", err);
    if (rc || (rc = skv__db_prepare(db, sql, &st, err)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        int p = (int)i * 5;
        skv__db_bind_text(st, p + 1, a[i].kernel_id);
        skv__db_bind_text(st, p + 2, a[i].device_id);
        skv__db_bind_text(st, p + 3, a[i].slot);
        skv__db_bind_int64(st, p + 4, a[i].amount);
        skv__db_bind_int64(st, p + 5, a[i].whole);
    }
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    for (size_t i = 0; !rc && i < n; i++)
        skv__mgr_store_cc_alloc_note(db, &a[i]);
    return rc;
}

int skv__mgr_store_alloc_add(skv__db *db, const skv__mgr_store_alloc *a,
                             size_t n, skv_error *err)
{
    int rc = 0;
    for (size_t k = 0; !rc && n; a += k, n -= k)
        rc = alloc_chunk(db, a, k = skv__db_chunk(n), err);
    return rc;
}

static int alloc_cmp(const void *x, const void *y)
{
    const skv__mgr_store_alloc *a = x, *b = y;
    int d = strcmp(a->dev_buf, b->dev_buf);
    return d ? d : strcmp(a->slot_buf, b->slot_buf);
}

/* The rows of kid in (device, slot) byte order, whatever the engine's
 * collation: the order the cache keeps them in (create_cache.h). */
int skv__mgr_store_alloc_of(skv__db *db, const char *kid,
                            skv__mgr_store_alloc **out, size_t *n,
                            skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__mgr_store_cc_alloc(db, kid, out, n, err);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv__db_prepare(db, "SELECT device_id, slot, amount, whole FROM"
                             " kernel_alloc WHERE kernel_id=? ORDER BY "
                             "device_id, slot", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_alloc *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        memset(v, 0, sizeof *v);
        snprintf(v->dev_buf, sizeof v->dev_buf, "%s",
                 skv__db_column_text(st, 0));
        snprintf(v->slot_buf, sizeof v->slot_buf, "%s",
                 skv__db_column_text(st, 1));
        v->amount = skv__db_column_int64(st, 2);
        v->whole = skv__db_column_int64(st, 3) != 0;
    }
    skv__db_done(st);
    if (*n > 1)
        qsort(*out, *n, sizeof **out, alloc_cmp);
    for (size_t i = 0; i < *n; i++) {    /* after the last realloc */
        (*out)[i].device_id = (*out)[i].dev_buf;
        (*out)[i].slot = (*out)[i].slot_buf;
        (*out)[i].kernel_id = NULL;
    }
    if (rc < 0) {
        skv__free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}

/* The slot request of kernel kid (an empty vector when it has none). */
int skv__mgr_store_kernel_slots(skv__db *db, const char *kid,
                                skv_slots **out, skv_error *err)
{
    skv__db_stmt *st;
    const skv__kc_kernel *k;
    char *image = NULL;
    *out = NULL;
    int rc = skv__mgr_store_kernel_spec_cached(db, kid, &k, &image, out, err);
    skv__free(image);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv__db_prepare(db, "SELECT slots FROM kernels WHERE id=?", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        rc = skv__mgr_store_col_slots(out, st, 0, err);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* Back to PENDING: allocations go, every kernel gets a new id and loses
 * its placement, the session its start and end marks. */
int skv__mgr_store_session_unplace(skv__db *db, const char *sid,
                                   skv_error *err)
{
    skv__mgr_store_kc_drop(db, sid);    /* new ids: read afresh */
    skv__mgr_store_cc_alloc_forget(db);
    int rc = skv__mgr_store_exec_text(db, "DELETE FROM kernel_alloc WHERE "
                                      "kernel_id IN (SELECT id FROM kernels "
                                      "WHERE session_id=?)", SKV__ARGS(sid),
                                      NULL, err);
    if (!rc)
        rc = skv__mgr_store_kernel_ids_renew(db, sid, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "UPDATE kernels SET agent_id=NULL, "
                                      "container_id=NULL, status='PENDING', "
                                      "exit_code=NULL, reason=NULL, live=1 "
                                      "WHERE session_id=?", SKV__ARGS(sid),
                                      NULL, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "UPDATE sessions SET end_status="
                                      "NULL, end_reason=NULL, started_ms=NULL"
                                      " WHERE id=?", SKV__ARGS(sid), NULL,
                                      err);
    return rc;
}
