/* Virtual folder rows (vfolders.h): vfolders, vfolder_shares,
 * vfolder_mounts (component "vfolders": schema.c, schema_pg.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "store_int.h"
#include "vfolders.h"

#define COLS "id, name, host, owner, project, status, trash_name, " \
             "quota_bytes, created_ms"

static void txt(char *dst, size_t cap, skv__db_stmt *st, int i)
{
    const char *s = skv__db_column_text(st, i);
    snprintf(dst, cap, "%s", s ? s : "");
}

static void row_of(skv__mgr_vfolder_row *r, skv__db_stmt *st)
{
    memset(r, 0, sizeof *r);
    txt(r->id, sizeof r->id, st, 0);
    txt(r->name, sizeof r->name, st, 1);
    txt(r->host, sizeof r->host, st, 2);
    txt(r->owner, sizeof r->owner, st, 3);
    txt(r->project, sizeof r->project, st, 4);
    txt(r->status, sizeof r->status, st, 5);
    txt(r->trash_name, sizeof r->trash_name, st, 6);
    r->quota_bytes = (uint64_t)skv__db_column_int64(st, 7);
    r->created_ms = skv__db_column_int64(st, 8);
}

int skv__mgr_store_vfolder_insert(skv__db *db, const skv__mgr_vfolder_row *r,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "INSERT INTO vfolders(" COLS ") VALUES"
                             "(?,?,?,?,?,?,?,?,?)", &st, err);
    if (rc)
        return rc;
    const char *t[] = {r->id, r->name, r->host, r->owner, r->project,
                       r->status, r->trash_name};
    for (int i = 0; i < 7; i++)
        skv__db_bind_text(st, i + 1, t[i]);
    skv__db_bind_int64(st, 8, (int64_t)r->quota_bytes);
    skv__db_bind_int64(st, 9, r->created_ms);
    rc = skv__mgr_store_run(st, err);
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_vfolder_get(skv__db *db, const char *id,
                               skv__mgr_vfolder_row *out, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT " COLS " FROM vfolders WHERE id=?",
                             &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, id);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        row_of(out, st);
    skv__db_done(st);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}

/* Who may see a folder: its owner, a grantee, a member of its project. */
#define VISIBLE "(owner=? OR id IN (SELECT folder_id FROM vfolder_shares " \
                "WHERE grantee=?) OR (project<>'' AND project IN (SELECT " \
                "project FROM user_projects WHERE \"user\"=?)))"

int skv__mgr_store_vfolder_find(skv__db *db, const char *user,
                                const char *key, bool all, char *id,
                                size_t cap, skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, all ?
        "SELECT id FROM vfolders WHERE status='ready' AND (id=? OR name=?) "
        "ORDER BY CASE WHEN owner=? THEN 0 ELSE 1 END, id LIMIT 1" :
        "SELECT id FROM vfolders WHERE status='ready' AND (id=? OR name=?) "
        "AND " VISIBLE " ORDER BY CASE WHEN owner=? THEN 0 WHEN project='' "
        "THEN 1 ELSE 2 END, id LIMIT 1", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, key);
    skv__db_bind_text(st, 2, key);
    for (int i = 3; i <= (all ? 3 : 6); i++)
        skv__db_bind_text(st, i, user);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW)
        txt(id, cap, st, 0);
    skv__db_done(st);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}

int skv__mgr_store_vfolder_name_taken(skv__db *db, const char *owner,
                                      const char *name, skv_error *err)
{
    int64_t n = 0;
    int rc = skv__mgr_store_int1(db, "SELECT COUNT(*) FROM vfolders WHERE "
                                 "owner=? AND name=? AND status='ready'",
                                 SKV__ARGS(owner, name), &n, err);
    return rc < 0 ? rc : n > 0;
}

static int push_row(skv__mgr_vfolder_row **out, size_t *n, skv__db_stmt *st,
                    skv_error *err)
{
    skv__mgr_vfolder_row *v = skv__reallocarray(*out, *n + 1, sizeof *v);
    if (!v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *out = v;
    row_of(&v[(*n)++], st);
    return 0;
}

int skv__mgr_store_vfolder_list(skv__db *db, const char *user, bool all,
                                const char *status,
                                skv__mgr_vfolder_row **out, size_t *n,
                                skv_error *err)
{
    skv__db_stmt *st;
    *out = NULL;
    *n = 0;
    int rc = skv__db_prepare(db, all ?
        "SELECT " COLS " FROM vfolders WHERE status=? ORDER BY owner, name" :
        "SELECT " COLS " FROM vfolders WHERE status=? AND " VISIBLE
        " ORDER BY owner, name", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, status);
    for (int i = 2; !all && i <= 4; i++)
        skv__db_bind_text(st, i, user);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW)
        if ((rc = push_row(out, n, st, err)))
            break;
    skv__db_done(st);
    if (rc < 0) {
        skv__free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_vfolder_rename(skv__db *db, const char *id,
                                  const char *name, skv_error *err)
{
    return skv__mgr_store_exec_text(db, "UPDATE vfolders SET name=? WHERE "
                                    "id=?", SKV__ARGS(name, id), NULL, err);
}

int skv__mgr_store_vfolder_trash(skv__db *db, const char *id,
                                 const char *trash_name, skv_error *err)
{
    return skv__mgr_store_exec_text(db, "UPDATE vfolders SET status='trash',"
                                    " trash_name=? WHERE id=?",
                                    SKV__ARGS(trash_name, id), NULL, err);
}

int skv__mgr_store_vfolder_remove(skv__db *db, const char *id,
                                  skv_error *err)
{
    int rc = skv__mgr_store_exec_text(db, "DELETE FROM vfolder_shares WHERE "
                                      "folder_id=?", SKV__ARGS(id), NULL, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "DELETE FROM vfolder_mounts WHERE "
                                      "folder_id=?", SKV__ARGS(id), NULL, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "DELETE FROM vfolders WHERE id=?",
                                      SKV__ARGS(id), NULL, err);
    return rc;
}

/* A new invitation, or a changed permission (which keeps the acceptance). */
int skv__mgr_store_vfolder_share_put(skv__db *db, const char *id,
                                     const char *user, const char *perm,
                                     skv_error *err)
{
    return skv__mgr_store_exec_text(db, "INSERT INTO vfolder_shares(folder_id,"
                                    " grantee, perm, accepted) VALUES(?,?,?,0)"
                                    " ON CONFLICT (folder_id, grantee) DO "
                                    "UPDATE SET perm=excluded.perm",
                                    SKV__ARGS(id, user, perm), NULL, err);
}

int skv__mgr_store_vfolder_share_accept(skv__db *db, const char *id,
                                        const char *user, skv_error *err)
{
    int64_t ch = 0;
    int rc = skv__mgr_store_exec_text(db, "UPDATE vfolder_shares SET "
                                      "accepted=1 WHERE folder_id=? AND "
                                      "grantee=?", SKV__ARGS(id, user), &ch,
                                      err);
    return rc ? rc : ch > 0;
}

int skv__mgr_store_vfolder_share_del(skv__db *db, const char *id,
                                     const char *user, skv_error *err)
{
    int64_t ch = 0;
    int rc = skv__mgr_store_exec_text(db, "DELETE FROM vfolder_shares WHERE "
                                      "folder_id=? AND grantee=?",
                                      SKV__ARGS(id, user), &ch, err);
    return rc ? rc : ch > 0;
}

int skv__mgr_store_vfolder_share_get(skv__db *db, const char *id,
                                     const char *user, char *perm,
                                     size_t cap, bool *accepted,
                                     skv_error *err)
{
    skv__db_stmt *st;
    perm[0] = 0;
    *accepted = false;
    int rc = skv__db_prepare(db, "SELECT perm, accepted FROM vfolder_shares "
                             "WHERE folder_id=? AND grantee=?", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, id);
    skv__db_bind_text(st, 2, user);
    rc = skv__db_step(st, err);
    if (rc == SKV__DB_ROW) {
        txt(perm, cap, st, 0);
        *accepted = skv__db_column_int64(st, 1) != 0;
    }
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_vfolder_shares(skv__db *db, const char *id,
                                  skv__mgr_vfolder_share_fn fn, void *ud,
                                  skv_error *err)
{
    skv__db_stmt *st;
    int rc = skv__db_prepare(db, "SELECT grantee, perm, accepted FROM "
                             "vfolder_shares WHERE folder_id=? ORDER BY "
                             "grantee", &st, err);
    if (rc)
        return rc;
    skv__db_bind_text(st, 1, id);
    while ((rc = skv__db_step(st, err)) == SKV__DB_ROW)
        fn(ud, skv__db_column_text(st, 0), skv__db_column_text(st, 1),
           skv__db_column_int64(st, 2) != 0);
    skv__db_done(st);
    return rc < 0 ? rc : 0;
}

int skv__mgr_store_vfolder_member(skv__db *db, const char *user,
                                  const char *project, skv_error *err)
{
    int64_t n = 0;
    int rc = skv__mgr_store_int1(db, "SELECT COUNT(*) FROM user_projects "
                                 "WHERE \"user\"=? AND project=?",
                                 SKV__ARGS(user, project), &n, err);
    return rc < 0 ? rc : n > 0;
}

int skv__mgr_store_vfolder_mount_put(skv__db *db, const char *sid,
                                     const char *id, skv_error *err)
{
    return skv__mgr_store_exec_text(db, "INSERT INTO vfolder_mounts("
                                    "session_id, folder_id) VALUES(?,?) ON "
                                    "CONFLICT (session_id, folder_id) DO "
                                    "NOTHING", SKV__ARGS(sid, id), NULL, err);
}

int skv__mgr_store_vfolder_mounted(skv__db *db, const char *id, char *sid,
                                   size_t cap, skv_error *err)
{
    int rc = skv__mgr_store_text1(db, "SELECT m.session_id FROM "
                                  "vfolder_mounts m JOIN sessions s ON "
                                  "s.id=m.session_id WHERE m.folder_id=? AND"
                                  " s.live=1 AND s.status NOT IN "
                                  "('TERMINATED','CANCELLED','ERROR') "
                                  "ORDER BY "
                                  "m.session_id LIMIT 1", SKV__ARGS(id), sid,
                                  cap, err);
    return rc < 0 ? rc : rc == SKV__DB_ROW;
}
