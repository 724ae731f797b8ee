/* What kernel.create is built from: a session's hosts (its kernels with
 * their agents' addresses), one kernel's row, and the sessions with
 * placed kernels not yet started on an agent.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "dispatch_cache.h"
#include "kernel_cache.h"
#include "store_int.h"

/* One host from memory: the kernel cache's row and its agent's address.
 * false: the address is not cached. */
static bool host_cached(skv__db *db, const skv__kc_kernel *k,
                        skv__mgr_store_host *v)
{
    char addr[SKV__DCACHE_ADDR] = "";
    bool has = false;
    if (*k->agent && !skv__mgr_store_dc_agent(db, k->agent, &has, addr))
        return false;
    v->idx = (uint32_t)k->idx;
    snprintf(v->kid, sizeof v->kid, "%s", k->kid);
    v->has_address = has;
    v->placed = *k->agent != 0;
    snprintf(v->address, sizeof v->address, "%s", addr);
    snprintf(v->agent, sizeof v->agent, "%s", k->agent);
    return true;
}

/* sid's hosts when its kernels and all their agents are cached: 1 with
 * *out, 0 on a miss (or out of memory: the SELECT says it). */
static int hosts_cached(skv__db *db, const char *sid,
                        skv__mgr_store_host **out, size_t *n)
{
    size_t m = 0;
    const skv__kc_kernel *k = skv__mgr_store_kc_session(db, sid, &m);
    skv__mgr_store_host *v = k && m ? skv__calloc(m, sizeof *v) : NULL;
    for (size_t i = 0; v && i < m; i++)
        if (!host_cached(db, &k[i], &v[i])) {
            skv__free(v);
            return 0;
        }
    *out = v;
    *n = v ? m : 0;
    return v != NULL;
}

int skv__mgr_store_session_hosts(skv__db *db, const char *sid,
                                 skv__mgr_store_host **out, size_t *n,
                                 skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    if (hosts_cached(db, sid, out, n))
        return 0;
    int rc = skv__db_prepare(db, "SELECT k.idx, a.address, k.agent_id, k.id FROM "
                             "kernels k LEFT JOIN agents a ON a.id=k.agent_id"
                             " WHERE k.session_id=? ORDER BY k.idx", &st,
                             err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW) {
        skv__mgr_store_host *v = skv__reallocarray(*out, *n + 1, sizeof *v);
        if (!v) {
            rc = skv__err(err, SKV_ENOMEM, "out of memory");
            break;
        }
        *out = v;
        v = &v[(*n)++];
        const char *addr = skv__db_column_text(st, 1);
        const char *agent = skv__db_column_text(st, 2);
        v->idx = (uint32_t)skv__db_column_int64(st, 0);
        snprintf(v->kid, sizeof v->kid, "%s", skv__db_column_text(st, 3));
        v->has_address = addr != NULL;
        v->placed = agent != NULL;
        snprintf(v->address, sizeof v->address, "%s", addr ? addr : "");
        snprintf(v->agent, sizeof v->agent, "%s", agent ? agent : "");
        skv__mgr_store_dc_agent_note(db, agent, addr);
    }
    skv__db_done(st);
    if (rc < 0) {
        skv__free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}

void skv__mgr_store_kernel_row_free(skv__mgr_store_kernel_row *k)
{
    skv__free(k->image);
    skv_slots_free(k->slots);
    memset(k, 0, sizeof *k);
}

/* kid's image and slots from memory: 1 with them, 0 on a miss, < 0 out
 * of memory. The kernel cache says kid exists and where it sits. */
int skv__mgr_store_kernel_spec_cached(skv__db *db, const char *kid,
                                      const skv__kc_kernel **k, char **image,
                                      skv_slots **slots, skv_error *err)
{
    const char *sid = NULL, *img = NULL;
    const void *buf = NULL;
    size_t len = 0;
    *k = skv__mgr_store_kc_kernel(db, kid, &sid);
    if (!*k || !skv__mgr_store_dc_spec(db, sid, (*k)->idx, &img, &buf, &len))
        return 0;
    *image = img ? skv__strdup(img) : NULL;
    int rc = len ? skv_slots_decode(slots, buf, len, NULL, err)
                 : skv_slots_new(slots, err);
    if (!rc && img && !*image)
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (rc) {
        skv__free(*image);
        skv_slots_free(*slots);
        *image = NULL;
        *slots = NULL;
    }
    return rc ? rc : 1;
}

/* 1 with the row, 0 when kid does not exist. */
int skv__mgr_store_kernel_get(skv__db *db, const char *kid,
                              skv__mgr_store_kernel_row *out, skv_error *err)
{
    skv__db_stmt *st;
    const skv__kc_kernel *k;
    memset(out, 0, sizeof *out);
    int rc = skv__mgr_store_kernel_spec_cached(db, kid, &k, &out->image,
                                               &out->slots, err);
    if (rc > 0) {
        out->idx = (uint32_t)k->idx;
        snprintf(out->agent, sizeof out->agent, "%s", k->agent);
        return SKV__DB_ROW;
    }
    if (rc < 0)
        return rc;
    rc = skv__db_prepare(db, "SELECT idx, image, slots, agent_id FROM "
                             "kernels WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *agent = skv__db_column_text(st, 3);
        out->idx = (uint32_t)skv__db_column_int64(st, 0);
        out->image = skv__mgr_store_col_dup(st, 1);
        snprintf(out->agent, sizeof out->agent, "%s", agent ? agent : "");
        if (skv__mgr_store_col_slots(&out->slots, st, 2, err))
            rc = SKV_ENOMEM;
    }
    skv__db_done(st);
    if (rc < 0)
        skv__mgr_store_kernel_row_free(out);
    return rc;
}

/* Live sessions with kernels placed on agent and not yet running. */
int skv__mgr_store_sessions_to_create(skv__db *db, const char *agent,
                                      char ***out, size_t *n,
                                      skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT DISTINCT k.session_id FROM kernels "
                             "k JOIN sessions s ON s.id=k.session_id WHERE "
                             "k.agent_id=? AND k.live=1 AND k.status IN "
                             "('SCHEDULED','PREPARING') AND s.status IN "
                             "('SCHEDULED','PREPARING','RUNNING')", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, agent);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}
