/* Kernel rows: ids by status, status changes of one kernel or of a
 * session's kernels, counts, the latest resource figures. Status sets are
 * passed as "A,B,C" and bound as parameters, so no caller writes SQL.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "kernel_cache.h"
#include "row_buf.h"
#include "store_int.h"

#define SET_MAX 8

/* "A,B" -> n text parameters; the SQL gets "?,?" at %s. */
typedef struct status_set {
    char buf[128];
    const char *v[SET_MAX];
    size_t n;
    char marks[2 * SET_MAX];
} status_set;

static int set_parse(status_set *s, const char *list, skv_error *err)
{
    memset(s, 0, sizeof *s);
    snprintf(s->buf, sizeof s->buf, "%s", list);
    for (char *p = s->buf, *save = NULL; (p = strtok_r(p, ",", &save));
         p = NULL) {
        if (s->n == SET_MAX)
            return skv__err(err, SKV_EINVAL, "status set too long");
        s->v[s->n++] = p;
    }
    for (size_t i = 0; i < s->n; i++)
        strcat(s->marks, i ? ",?" : "?");
    return s->n ? 0 : skv__err(err, SKV_EINVAL, "empty status set");
}

/* sql has %s for the marks; binds the set from parameter first on. */
static int prepare_set(skv__db *db, const char *sql, status_set *s,
                       const char *list, skv__db_stmt **st, int first,
                       skv_error *err)
{
    int rc = set_parse(s, list, err);
    char *text = rc ? NULL : skv__asprintf(sql, s->marks);
    if (!rc && !text)
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = skv__db_prepare(db, text, st, err);
    skv__free(text);
    for (size_t i = 0; !rc && i < s->n; i++)
        skv__db_bind_text(*st, first + (int)i, s->v[i]);
    return rc;
}

/* The end's columns in a row of session_rows' SELECT: the session's
 * (every row has them), the main kernel's exit from its own row. */
static void row_end(skv__db_stmt *st, int idx, skv__kc_fin *f)
{
    const char *es = skv__db_column_text(st, 6);
    const char *er = skv__db_column_text(st, 7);
    /* An end_reason without end_status (a stop that named no end) is
     * not what the cache holds: the end then reads the row. */
    f->known = es || !er;
    f->end_set = es != NULL;
    f->end_reason_set = er != NULL;
    snprintf(f->end_status, sizeof f->end_status, "%s", es ? es : "");
    snprintf(f->end_reason, sizeof f->end_reason, "%s", er ? er : "");
    if (idx != 0)
        return;
    const char *kr = skv__db_column_text(st, 5);
    f->exit_set = !skv__db_column_is_null(st, 4);
    f->exit_code = (int)skv__db_column_int64(st, 4);
    f->kreason_set = kr != NULL;
    snprintf(f->kreason, sizeof f->kreason, "%s", kr ? kr : "");
}

/* sid's kernels from the cache, read whole into it on a miss (one SELECT
 * instead of one per question; the same row gives the end's columns, so
 * the end reads nothing either). NULL with *rc 0: not cacheable (too many
 * kernels, ids too long, out of memory): the caller asks the database. */
static const skv__kc_kernel *session_rows(skv__db *db, const char *sid,
                                          size_t *n, int *rc, skv_error *err)
{
    const skv__kc_kernel *c = skv__mgr_store_kc_session(db, sid, n);
    skv__kc_kernel k[SKV__KCACHE_KERNELS + 1];
    skv__kc_fin fin = {0};
    skv__db_stmt *st;
    size_t m = 0;
    if (c || (*rc = skv__db_prepare(db, "SELECT k.id, k.idx, k.status, "
              "k.agent_id, k.exit_code, k.reason, s.end_status, s.end_reason"
              " FROM kernels k JOIN sessions s ON s.id=k.session_id WHERE "
              "k.session_id=? ORDER BY k.idx", &st, err)))
        return c;
    skv__db_bind_text(st, 1, sid);
    while ((*rc = skv__db_step(st, err)) == SKV__DB_ROW && m < sizeof k /
           sizeof *k) {
        const char *agent = skv__db_column_text(st, 3);
        snprintf(k[m].kid, sizeof k[m].kid, "%s", skv__db_column_text(st, 0));
        k[m].idx = (int)skv__db_column_int64(st, 1);
        snprintf(k[m].status, sizeof k[m].status, "%s",
                 skv__db_column_text(st, 2));
        snprintf(k[m].agent, sizeof k->agent, "%s", agent ? agent : "");
        row_end(st, k[m++].idx, &fin);
    }
    skv__db_done(st);
    if (*rc < 0)
        return NULL;
    /* Rows past the cache's room: not filled, so no entry claims to be
     * all of sid's kernels. A truncated id or status is refused there. */
    *rc = 0;
    if (m <= SKV__KCACHE_KERNELS) {
        skv__mgr_store_kc_fill(db, sid, k, m);
        skv__mgr_store_kc_fin_read(db, sid, &fin);
    }
    return skv__mgr_store_kc_session(db, sid, n);
}

static bool in_list(const char *status, const status_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(status, s->v[i]))
            return true;
    return false;
}

static bool final_status(const char *status)
{
    return !strcmp(status, "TERMINATED") || !strcmp(status, "CANCELLED") ||
           !strcmp(status, "ERROR");
}

static bool any_final(const status_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (final_status(s->v[i]))
            return true;
    return false;
}

/* What a status write does to the live marker (schema.c, core step 3):
 * a final status clears it, another sets it unless the kernel cache knows
 * the kernel is live already (the hot path): an UPDATE that does not
 * name live leaves the index kernels_live alone. */
static int live_change(skv__db *db, const char *kid, const char *status)
{
    if (final_status(status))
        return SKV__ROW_LIVE_CLEAR;
    return kid && skv__mgr_store_kc_live(db, kid) ? SKV__ROW_LIVE_KEEP
                                                  : SKV__ROW_LIVE_SET;
}

/* The ids of c[0..n) with a status in s, in index order. */
static int ids_of(const skv__kc_kernel *c, size_t n, const status_set *s,
                  char ***out, size_t *m, skv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!in_list(c[i].status, s))
            continue;
        char **v = skv__reallocarray(*out, *m + 1, sizeof *v);
        if (v)
            *out = v;
        if (!v || !(v[*m] = skv__strdup(c[i].kid))) {
            skv__mgr_store_ids_free(*out, *m);
            *out = NULL;
            *m = 0;
            return skv__err(err, SKV_ENOMEM, "out of memory");
        }
        (*m)++;
    }
    return 0;
}

int skv__mgr_store_kernel_ids(skv__db *db, const char *sid,
                              const char *statuses, char ***out, size_t *n,
                              skv_error *err)
{
    status_set s;
    skv__db_stmt *st;
    size_t nc = 0;
    *out = NULL;
    *n = 0;
    int rc = set_parse(&s, statuses, err);
    const skv__kc_kernel *c = rc ? NULL : session_rows(db, sid, &nc, &rc,
                                                       err);
    if (c || rc)
        return rc ? rc : ids_of(c, nc, &s, out, n, err);
    rc = prepare_set(db, "SELECT id FROM kernels WHERE status IN (%s) "
                     "AND session_id=? ORDER BY idx", &s, statuses, &st,
                     1, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, (int)s.n + 1, sid);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_kernels_move(skv__db *db, const char *sid,
                                const char *from, const char *to,
                                skv_error *err)
{
    status_set s;
    skv__db_stmt *st;
    bool fin = final_status(to);
    int rc = set_parse(&s, from, err);
    if (rc)
        return rc;
    const char *sql = fin ? "UPDATE kernels SET status=?, live=NULL WHERE "
                            "status IN (%s) AND session_id=?"
                      : any_final(&s) ? "UPDATE kernels SET status=?, live=1"
                            " WHERE status IN (%s) AND session_id=?"
                      : "UPDATE kernels SET status=? WHERE status IN (%s) "
                        "AND session_id=?";
    rc = prepare_set(db, sql, &s, from, &st, 2, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, to);
    skv__db_bind_text(st, (int)s.n + 2, sid);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    if (!rc)
        skv__mgr_store_kc_move(db, sid, s.v, s.n, true, NULL, to);
    return rc;
}

int skv__mgr_store_kernel_count(skv__db *db, const char *sid,
                                const char *statuses, bool in, bool main_only,
                                int *out, skv_error *err)
{
    status_set s;
    skv__db_stmt *st;
    const char *sql = in ? (main_only ? "SELECT count(*) FROM kernels WHERE "
                            "status IN (%s) AND session_id=? AND idx=0"
                            : "SELECT count(*) FROM kernels WHERE status IN "
                            "(%s) AND session_id=?")
                         : (main_only ? "SELECT count(*) FROM kernels WHERE "
                            "status NOT IN (%s) AND session_id=? AND idx=0"
                            : "SELECT count(*) FROM kernels WHERE status NOT"
                            " IN (%s) AND session_id=?");
    size_t nc = 0;
    int rc = set_parse(&s, statuses, err);
    const skv__kc_kernel *c = rc ? NULL : session_rows(db, sid, &nc, &rc,
                                                       err);
    *out = 0;
    for (size_t i = 0; c && i < nc; i++)
        *out += in_list(c[i].status, &s) == in && (!main_only || !c[i].idx);
    if (c || rc)
        return rc;
    rc = prepare_set(db, sql, &s, statuses, &st, 1, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, (int)s.n + 1, sid);
    rc = skv__db_step(st, err);
    *out = rc == SKV__DB_ROW ? (int)skv__db_column_int64(st, 0) : 0;
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

/* The three status writes of a kernel's life after its placement go
 * through row_buf.c: RUNNING and the exit, when one transaction has
 * both, are one UPDATE. */
int skv__mgr_store_kernel_set(skv__db *db, const char *kid,
                              const char *status, skv_error *err)
{
    skv__row_write w = {.kernel = true, .id = kid, .status = status};
    w.live = live_change(db, kid, status);
    int rc = skv__row_buf_add(db, &w, NULL, err);
    if (!rc)
        skv__mgr_store_kc_set(db, kid, status, NULL);
    return rc;
}

int skv__mgr_store_kernel_running(skv__db *db, const char *kid,
                                  const char *container, skv_error *err)
{
    skv__row_write w = {.kernel = true, .id = kid, .status = "RUNNING",
                        .container = container};
    w.live = live_change(db, kid, "RUNNING");
    int rc = skv__row_buf_add(db, &w, NULL, err);
    if (!rc)
        skv__mgr_store_kc_set(db, kid, "RUNNING", NULL);
    return rc;
}

/* A status that is not final (a caller's choice) sets live, as before. */
int skv__mgr_store_kernel_ended(skv__db *db, const char *kid,
                                const char *status, int exit_code,
                                const char *reason, skv_error *err)
{
    skv__row_write w = {.kernel = true, .id = kid, .status = status,
                        .reason = reason, .has_exit = true,
                        .exit_code = exit_code};
    w.live = final_status(status) ? SKV__ROW_LIVE_CLEAR : SKV__ROW_LIVE_SET;
    int rc = skv__row_buf_add(db, &w, NULL, err);
    if (!rc) {
        skv__mgr_store_kc_set(db, kid, status, NULL);
        skv__mgr_store_kc_fin_exit(db, kid, exit_code, reason);
    }
    return rc;
}

/* The kernels of sid still on the lost agent end with it. */
int skv__mgr_store_kernels_lost(skv__db *db, const char *sid,
                                const char *agent, const char *reason,
                                skv_error *err)
{
    static const char *const final[] = {"TERMINATED", "CANCELLED", "ERROR"};
    skv__mgr_store_kc_fin_forget(db, sid);  /* exits the entry cannot tell */
    int rc = skv__mgr_store_exec_text(db, "UPDATE kernels SET status='ERROR'"
        ", exit_code=-1, reason=?, live=NULL WHERE session_id=? AND "
        "agent_id=? AND status NOT IN ('TERMINATED','CANCELLED','ERROR')",
        SKV__ARGS(reason, sid, agent), NULL, err);
    if (!rc)
        skv__mgr_store_kc_move(db, sid, final, 3, false, agent, "ERROR");
    return rc;
}

int skv__mgr_store_kernel_info(skv__db *db, const char *kid,
                               skv__mgr_store_kernel *out, skv_error *err)
{
    skv__db_stmt *st;
    const char *sid = NULL;
    const skv__kc_kernel *c = skv__mgr_store_kc_kernel(db, kid, &sid);
    memset(out, 0, sizeof *out);
    if (c) {
        skv__strlcpy(out->sid, sid, sizeof out->sid);
        out->idx = c->idx;
        skv__strlcpy(out->status, c->status, sizeof out->status);
        skv__strlcpy(out->agent, c->agent, sizeof out->agent);
        return 0;
    }
    int rc = skv__db_prepare(db, "SELECT session_id, idx, status, agent_id "
                             "FROM kernels WHERE id=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, kid);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        const char *agent = skv__db_column_text(st, 3);
        snprintf(out->sid, sizeof out->sid, "%s", skv__db_column_text(st, 0));
        out->idx = (int)skv__db_column_int64(st, 1);
        snprintf(out->status, sizeof out->status, "%s",
                 skv__db_column_text(st, 2));
        snprintf(out->agent, sizeof out->agent, "%s", agent ? agent : "");
    }
    skv__db_done(st);
    if (rc < 0)
        return rc;
    return rc == SKV__DB_ROW ? 0 : skv__err(err, SKV_ENOENT, "no kernel "
                                            "'%s'", kid);
}

int skv__mgr_store_kernel_id_at(skv__db *db, const char *sid, uint32_t idx,
                                char *kid, size_t cap, skv_error *err)
{
    skv__db_stmt *st;
    size_t nc = 0;
    int rc = 0;
    const skv__kc_kernel *c = session_rows(db, sid, &nc, &rc, err);
    for (size_t i = 0; c && i < nc; i++)
        if (c[i].idx == (int)idx) {
            snprintf(kid, cap, "%s", c[i].kid);
            return 0;
        }
    if (c || rc)
        return rc ? rc : skv__err(err, SKV_ENOENT, "session '%s' has no "
                                  "kernel %u", sid, idx);
    rc = skv__db_prepare(db, "SELECT id FROM kernels WHERE session_id=? "
                         "AND idx=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, sid);
    skv__db_bind_int64(st, 2, idx);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        snprintf(kid, cap, "%s", skv__db_column_text(st, 0));
    skv__db_done(st);
    if (rc < 0)
        return rc;
    return rc == SKV__DB_ROW ? 0 : skv__err(err, SKV_ENOENT, "session '%s' "
                                            "has no kernel %u", sid, idx);
}

/* A kernel.exit is ours to record when the kernel was sent there. */
bool skv__mgr_store_kernel_sent_to(skv__db *db, const char *kid,
                                   const char *agent)
{
    static const status_set sent = {.v = {"PREPARING", "RUNNING",
        "TERMINATING", "TERMINATED", "ERROR"}, .n = 5};
    const char *sid;
    const skv__kc_kernel *c = skv__mgr_store_kc_kernel(db, kid, &sid);
    if (c)
        return agent && !strcmp(c->agent, agent) && in_list(c->status, &sent);
    int64_t n = 0;
    return skv__mgr_store_int1(db, "SELECT count(*) FROM kernels WHERE id=? "
                               "AND agent_id=? AND status IN ('PREPARING',"
                               "'RUNNING','TERMINATING','TERMINATED',"
                               "'ERROR')", SKV__ARGS(kid, agent), &n,
                               NULL) == 0 && n > 0;
}

int skv__mgr_store_kernel_stats(skv__db *db, const char *agent,
                                const skv_proto_kernel_stats *k, size_t n,
                                int64_t now, skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "UPDATE kernels SET cpu_usec=?, mem_bytes=?"
                             ", mem_peak_bytes=?, stats_ms=? WHERE id=? AND "
                             "agent_id=?", &st, err);
    for (size_t i = 0; !rc && i < n; i++) {
        skv__db_reset(st);
        skv__db_bind_int64(st, 1, (int64_t)k[i].cpu_usec);
        skv__db_bind_int64(st, 2, (int64_t)k[i].mem_bytes);
        skv__db_bind_int64(st, 3, (int64_t)k[i].mem_peak_bytes);
        skv__db_bind_int64(st, 4, now);
        skv__db_bind_text(st, 5, k[i].kernel_id);
        skv__db_bind_text(st, 6, agent);
        rc = skv__mgr_store_run(st, err);
    }
    if (st)
        skv__db_done(st);
    return rc;
}

/* Kernel ids on agent with a status in statuses. */
int skv__mgr_store_agent_kernels(skv__db *db, const char *agent,
                                 const char *statuses, char ***out,
                                 size_t *n, skv_error *err)
{
    status_set s;
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = set_parse(&s, statuses, err);
    if (!rc)    /* live rows only: over index kernels_live */
        rc = prepare_set(db, any_final(&s)
                         ? "SELECT id FROM kernels WHERE status IN (%s) AND "
                           "agent_id=? ORDER BY id"
                         : "SELECT id FROM kernels WHERE status IN (%s) AND "
                           "agent_id=? AND live=1 ORDER BY id", &s, statuses,
                         &st, 1, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, (int)s.n + 1, agent);
    rc = skv__mgr_store_col_list(st, 0, out, n, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_kernel_total(skv__db *db, const char *sid, int *out,
                                skv_error *err)
{
    size_t nc = 0;
    int rc = 0;
    if (session_rows(db, sid, &nc, &rc, err) || rc) {
        *out = (int)nc;
        return rc;
    }
    int64_t n = 0;
    rc = skv__mgr_store_int1(db, "SELECT count(*) FROM kernels WHERE "
                             "session_id=?", SKV__ARGS(sid), &n, err);
    *out = (int)n;
    return rc;
}
