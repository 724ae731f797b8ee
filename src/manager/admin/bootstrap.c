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
    return skv__mgr_store_admin_user_add(bt->ctx->db, name, role,
                                         "created at first start", err);
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
    int rc = skv__mgr_store_admin_user_any_admin(bt->ctx->db, err);
    if (rc)
        return rc < 0 ? rc : 0;   /* not the first start */
    rc = skv__mgr_store_admin_exists(bt->ctx->db, SKV__MGR_STORE_ADMIN_USERS,
                                     "admin", err);
    if (rc > 0)
        return skv__err(err, SKV_EEXIST, "bootstrap: user 'admin' exists "
                        "without the admin role and no admin is left");
    if (!rc)
        rc = skv__mgr_store_admin_project_ensure(bt->ctx->db, "default",
                                                 "default", "default project",
                                                 err);
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
        rc = skv__mgr_store_admin_exists(bt->ctx->db,
                                         SKV__MGR_STORE_ADMIN_GROUPS, g, err);
    if (rc)
        return rc < 0 ? rc : 0;
    skv__mgr_store_admin_group row = {
        g, "default resource group",
        b->default_scheduler ? b->default_scheduler : "fifo",
        b->default_selector ? b->default_selector : SKV_SCHED_SELECTOR_AUTO,
        "requeue", 0, "", true};
    rc = skv__mgr_admin_group_insert(bt->ctx, &row, err);
    if (!rc)
        rc = skv__mgr_store_admin_domain_add_group(bt->ctx->db, "default", g,
                                                   err);
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

/* Write the agent's existing key to its file when the file is missing;
 * 1 when the agent has no active key (make one). */
static int rewrite_key(boot *bt, const char *id, const char *path,
                       skv_error *err)
{
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    int rc = skv__mgr_store_admin_key_first(bt->ctx->db, id, ak, sizeof ak,
                                            sk, sizeof sk, err);
    if (rc == 0)
        rc = 1;
    else if (rc > 0)
        rc = access(path, F_OK) == 0 ? 0 : write_key(bt, path, ak, sk, err);
    skv_auth_wipe(sk, sizeof sk);
    return rc;
}

static int user_role(boot *bt, const char *name, char *role, size_t sz,
                     skv_error *err)
{
    skv__mgr_store_admin_user_row row;
    int rc = skv__mgr_store_admin_user_get(bt->ctx->db, name, &row, err);
    if (rc > 0)
        snprintf(role, sz, "%s", row.role);
    return rc;
}

static int boot_agent(boot *bt, const char *id, skv_error *err)
{
    char role[16] = "";
    int rc = agent_id_check(id, err);
    if (!rc)
        rc = user_role(bt, id, role, sizeof role, err);
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
        rc = skv__mgr_store_admin_split(&ids, &n, list, err);
    for (size_t i = 0; !rc && i < n; i++)
        rc = boot_agent(bt, ids[i], err);
    skv__mgr_store_admin_strv_free(ids, n);
    return rc;
}

static int boot_rows(boot *bt, const skv__mgr_bootstrap *b, skv_error *err)
{
    int rc = skv__mgr_store_admin_domain_ensure(bt->ctx->db, "default",
                                                "default domain", err);
    if (!rc)
        rc = boot_admin(bt, err);
    if (!rc)
        rc = boot_group(bt, b, err);
    if (!rc)
        rc = boot_agents(bt, b->bootstrap_agents, err);
    return rc;
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
    skv__mgr_store_admin_protect(ctx->db);   /* it holds secret keys */
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
