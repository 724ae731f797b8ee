/* First start: the admin user and key, the default domain, project and
 * resource group, and the bootstrap agents' users and keys. Later starts
 * add only what is missing. Rows and key files are written in one
 * transaction; a failure removes the files written so far.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "admin_int.h"

#define MAX_FILES 64

typedef struct boot {
    skv__mgr_admin_ctx *ctx;
    int64_t now_ms;
    char *files[MAX_FILES];    /* written by this run (removed on failure) */
    size_t n_files;
} boot;

static int add_user(boot *bt, const char *name, const char *role,
                    skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(bt->ctx, &st,
        "INSERT INTO users (name, role, domain, description, active)"
        " VALUES (?1, ?2, 'default', 'created at first start', 1)", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, name);
    skv__mgr_admin_bind(st, 2, role);
    return skv__mgr_admin_done(bt->ctx, st, "insert user", err);
}

static int write_key(boot *bt, const char *path, const char *ak,
                     const char *sk, skv_error *err)
{
    if (bt->n_files == MAX_FILES)
        return skv__err(err, SKV_ERANGE, "bootstrap: more than %d key files",
                        MAX_FILES);
    char *copy = skv__strdup(path);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    int rc = skv__mgr_admin_keyfile_write(path, ak, sk, err);
    if (rc)
        skv__free(copy);
    else
        bt->files[bt->n_files++] = copy;
    return rc;
}

/* A fresh key pair for user, stored and written to path. */
static int new_key(boot *bt, const char *user, const char *path,
                   skv_error *err)
{
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    int rc = skv_auth_keypair_generate(ak, sk, err);
    if (!rc)
        rc = skv__mgr_admin_key_insert(bt->ctx, ak, sk, user, NULL,
                                       bt->now_ms, err);
    if (!rc)
        rc = write_key(bt, path, ak, sk, err);
    skv_auth_wipe(sk, sizeof sk);
    return rc;
}

static int boot_admin(boot *bt, skv_error *err)
{
    int rc = skv__mgr_admin_lookup(bt->ctx, NULL, 0,
        "SELECT 1 FROM users WHERE role='admin'", NULL, NULL, err);
    if (rc)
        return rc < 0 ? rc : 0;   /* not the first start */
    rc = skv__mgr_admin_exists(bt->ctx, "users", "admin", err);
    if (rc > 0)
        return skv__err(err, SKV_EEXIST, "bootstrap: user 'admin' exists "
                        "without the admin role and no admin is left");
    if (!rc)
        rc = skv__mgr_admin_exec(bt->ctx, "INSERT OR IGNORE INTO projects"
            " (name, domain, description, active) VALUES ('default',"
            " 'default', 'default project', 1)", err);
    if (!rc)
        rc = add_user(bt, "admin", "admin", err);
    char *path = rc ? NULL : skv__asprintf("%s/admin.key",
                                           bt->ctx->data_dir);
    if (!rc && !path)
        rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    if (!rc)
        rc = new_key(bt, "admin", path, err);
    skv__free(path);
    return rc;
}

static int boot_group(boot *bt, const skv__mgr_bootstrap *b, skv_error *err)
{
    const char *g = b->default_group ? b->default_group : "default";
    int rc = skv__mgr_admin_name_check("default resource group", g, err);
    if (!rc)
        rc = skv__mgr_admin_exists(bt->ctx, "resource_groups", g, err);
    if (rc)
        return rc < 0 ? rc : 0;
    rc = skv__mgr_admin_group_insert(bt->ctx, g, "default resource group",
        b->default_scheduler ? b->default_scheduler : "fifo",
        b->default_selector ? b->default_selector : "concentrated",
        "requeue", 0, "", err);
    if (!rc)
        rc = skv__mgr_admin_write(bt->ctx, "INSERT OR IGNORE INTO"
            " domain_groups (domain, resource_group) VALUES ('default', ?1)",
            g, NULL, err);
    return rc;
}

/* The agent id names a file: no '/', no leading '.'. */
static int agent_id_check(const char *id, skv_error *err)
{
    int rc = skv__mgr_admin_name_check("bootstrap agent id", id, err);
    if (!rc && (strchr(id, '/') || id[0] == '.'))
        rc = skv__err(err, SKV_EINVAL, "bootstrap agent id '%s': must not "
                      "contain '/' or start with '.'", id);
    return rc;
}

/* Write the agent's existing key to its file when the file is missing. */
static int rewrite_key(boot *bt, const char *id, const char *path,
                       skv_error *err)
{
    sqlite3_stmt *st;
    int rc = skv__mgr_admin_prepare(bt->ctx, &st,
        "SELECT access_key, secret_key FROM keypairs WHERE user=?1 AND"
        " active=1 ORDER BY created_ms, access_key LIMIT 1", err);
    if (rc)
        return rc;
    skv__mgr_admin_bind(st, 1, id);
    int s = sqlite3_step(st);
    if (s == SQLITE_ROW && access(path, F_OK) == 0)
        rc = 0;
    else if (s == SQLITE_ROW)
        rc = write_key(bt, path, (const char *)sqlite3_column_text(st, 0),
                       (const char *)sqlite3_column_text(st, 1), err);
    else if (s == SQLITE_DONE)
        rc = 1;    /* no active key: make one */
    else
        rc = skv__mgr_admin_dberr(bt->ctx, err, "read agent key");
    sqlite3_finalize(st);
    return rc;
}

static int boot_agent(boot *bt, const char *id, skv_error *err)
{
    char role[16] = "";
    int rc = agent_id_check(id, err);
    if (!rc)
        rc = skv__mgr_admin_lookup(bt->ctx, role, sizeof role,
            "SELECT role FROM users WHERE name=?1", id, NULL, err);
    if (rc > 0 && strcmp(role, "agent") != 0)
        return skv__err(err, SKV_EEXIST, "bootstrap agent '%s': a user of "
                        "role '%s' has that name", id, role);
    if (rc == 0)
        rc = add_user(bt, id, "agent", err);
    else if (rc > 0)
        rc = 0;
    char *path = rc ? NULL : skv__asprintf("%s/agents/%s.key",
                                           bt->ctx->data_dir, id);
    if (!rc && !path)
        rc = skv__err(err, SKV_ENOMEM, "admin: out of memory");
    if (!rc)
        rc = rewrite_key(bt, id, path, err);
    if (rc == 1)
        rc = new_key(bt, id, path, err);
    skv__free(path);
    return rc;
}

static int boot_agents(boot *bt, const char *list, skv_error *err)
{
    if (!list || !list[0])
        return 0;
    char *dir = skv__asprintf("%s/agents", bt->ctx->data_dir);
    if (!dir)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    int rc = 0;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        rc = skv__err_sys(err, errno, "bootstrap: cannot create '%s'", dir);
    skv__free(dir);
    char **ids = NULL;
    size_t n = 0;
    if (!rc)
        rc = skv__mgr_admin_split(&ids, &n, list, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = boot_agent(bt, ids[i], err);
    skv__mgr_admin_strv_free(ids, n);
    return rc;
}

static int boot_rows(boot *bt, const skv__mgr_bootstrap *b, skv_error *err)
{
    int rc = skv__mgr_admin_exec(bt->ctx, "INSERT OR IGNORE INTO domains"
        " (name, description, active) VALUES ('default', 'default domain',"
        " 1)", err);
    if (!rc)
        rc = boot_admin(bt, err);
    if (!rc)
        rc = boot_group(bt, b, err);
    if (!rc)
        rc = boot_agents(bt, b->bootstrap_agents, err);
    return rc;
}

/* The database holds secret keys: owner-only, with its WAL companions. */
static void protect_db(skv__mgr_admin_ctx *ctx)
{
    const char *db = sqlite3_db_filename(ctx->db, "main");
    if (!db || !db[0])
        return;    /* in-memory or temporary database */
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        char *p = skv__asprintf("%s%s", db, sfx[i]);
        if (p && chmod(p, 0600) < 0 && errno != ENOENT)
            skv__log(SKV_LOG_WARN, "manager", "cannot make %s owner-only: "
                     "%s", p, strerror(errno));
        skv__free(p);
    }
}

int skv__mgr_admin_bootstrap(skv__mgr_admin_ctx *ctx,
                             const skv__mgr_bootstrap *b, int64_t now_ms,
                             skv_error *err)
{
    if (!ctx || !ctx->db || !ctx->data_dir || !b)
        return skv__err(err, SKV_EINVAL, "admin bootstrap: missing context");
    boot bt;
    memset(&bt, 0, sizeof bt);
    bt.ctx = ctx;
    bt.now_ms = now_ms;
    protect_db(ctx);
    skv__mgr_admin_tx tx;
    int rc = skv__mgr_admin_begin(ctx, &tx, err);
    if (!rc)
        rc = boot_rows(&bt, b, err);
    if (!rc)
        rc = skv__mgr_admin_commit(ctx, &tx, err);
    else
        skv__mgr_admin_rollback(ctx, &tx);
    for (size_t i = 0; i < bt.n_files; i++) {
        if (rc)
            unlink(bt.files[i]);
        else
            skv__log(SKV_LOG_INFO, "manager", "wrote key file %s",
                     bt.files[i]);
        skv__free(bt.files[i]);
    }
    return rc;
}
