/* The submit path's admin answers from memory (store/admin_cache.c,
 * admin/cache.c) on SQLite and PostgreSQL: every kind of admin change
 * counts on the very next admission, a rolled-back change and a fence
 * forget what was cached, and admissions in steady state read no admin
 * row at all.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/manager/admin/admin.h"
#include "../src/manager/store/admin_cache.h"
#include "../src/manager/store/admin_store.h"
#include "../src/manager/store/schema.h"
#include "pg_harness.h"
#include "skv_test.h"

#define NOW 1700000000000LL

typedef struct fx {
    char dir[64];
    skv_pg pg;
    skv__db *db;
    skv_sched *sched;
    skv_auth_verifier *ver;
    skv__mgr_admin_ctx ctx;
    skv_auth_principal admin;
} fx;

static void schema(fx *f)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_begin(f->db, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema(f->db, &e), &e);
    SKV_CK_OK(skv__mgr_store_admin_schema(f->db, &e), &e);
    SKV_CK_OK(skv__db_commit(f->db, &e), &e);
}

/* false (and SKIP printed) when the engine cannot run here. */
static bool fx_open(fx *f, bool pg)
{
    skv_error e = SKV_ERROR_INIT;
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/skv-acache-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    if (pg) {
        const char *skip = skv_pg_start(&f->pg);
        if (skip) {
            fprintf(stderr, "admin_cache on postgres: SKIP: %s\n", skip);
            rmdir(f->dir);
            return false;
        }
        ck_assert_msg(skv_pg_running(&f->pg), "postgres: %s", f->pg.why);
        SKV_CK_OK(skv__db_open_postgres(f->pg.conninfo, &f->db, &e), &e);
    } else {
        char path[128];
        sqlite3 *h = NULL;
        snprintf(path, sizeof path, "%s/manager.db", f->dir);
        ck_assert_int_eq(sqlite3_open(path, &h), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(h, "PRAGMA foreign_keys=ON", NULL,
                                      NULL, NULL), SQLITE_OK);
        SKV_CK_OK(skv__db_wrap_sqlite(h, &f->db, &e), &e);
    }
    schema(f);
    SKV_CK_OK(skv_sched_new(&f->sched, NULL, &e), &e);
    SKV_CK_OK(skv_auth_verifier_new(&f->ver, NULL, &e), &e);
    f->ctx = (skv__mgr_admin_ctx){f->db, f->sched, f->ver, f->dir};
    f->admin = (skv_auth_principal){"admin", SKV_AUTH_ROLE_ADMIN};
    skv__mgr_bootstrap b = {"default", "fifo", "concentrated", NULL};
    SKV_CK_OK(skv__mgr_admin_bootstrap(&f->ctx, &b, NOW, &e), &e);
    return true;
}

static void fx_close(fx *f)
{
    skv__db_close(f->db);
    skv_sched_free(f->sched);
    skv_auth_verifier_free(f->ver);
    if (f->pg.keeper)
        skv_pg_stop(&f->pg);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* An admin request as the admin; the reply is freed. */
static void adm(fx *f, skv_proto_type t, const void *body)
{
    union {
        skv_proto_admin_user_reply u;
        skv_proto_admin_keypair_reply k;
        skv_proto_admin_project_reply p;
        skv_proto_admin_domain_reply d;
        skv_proto_admin_resource_policy_reply r;
        skv_proto_admin_resource_group_reply g;
    } reply;
    memset(&reply, 0, sizeof reply);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_admin_handle(&f->ctx, &f->admin, t, body, &reply, NOW,
                                    &e), &e);
    skv_proto_body_free(skv_proto_type_reply(t), &reply);
}

/* What session.submit asks (mgr_submit.c admission() and numa_default())
 * for a batch session of user in project on group with cluster_size n;
 * numa gets the group's default policy. */
static int admit(fx *f, const char *user, const char *project,
                 const char *group, uint32_t n, char *numa, skv_error *e)
{
    skv__mgr_user_info ui;
    skv__mgr_user_limits lim;
    char pol[24];
    skv_error_clear(e);
    int rc = skv__mgr_admin_user(&f->ctx, &ui, user, e);
    if (!rc && !ui.active)
        rc = skv__err(e, SKV_EPERM, "user '%s' is not active", user);
    if (!rc)
        rc = skv__mgr_admin_user_in_project(&f->ctx, user, project, e);
    if (!rc)
        rc = skv__mgr_admin_group_allows(&f->ctx, user, group, "batch", e);
    if (!rc)
        rc = skv__mgr_admin_user_limits(&f->ctx, &lim, user, e);
    if (!rc && lim.max_cluster_size && n > lim.max_cluster_size)
        rc = skv__err(e, SKV_ENOSPC, "cluster_size %u is above the limit %u",
                      n, lim.max_cluster_size);
    if (!rc)
        rc = skv__mgr_admin_group_numa(&f->ctx, pol, sizeof pol, group, e);
    if (!rc && numa)
        snprintf(numa, 24, "%s", pol);
    return rc;
}

/* Admitted, twice: the second time from memory. */
static void admitted(fx *f, const char *user, const char *project,
                     const char *group, uint32_t n)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(admit(f, user, project, group, n, NULL, &e), &e);
    SKV_CK_OK(admit(f, user, project, group, n, NULL, &e), &e);
}

/* The very next admission is refused with rc and a message naming what. */
static void refused(fx *f, const char *user, const char *project,
                    const char *group, uint32_t n, int rc, const char *what)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(admit(f, user, project, group, n, NULL, &e), rc);
    ck_assert_msg(strstr(e.message, what), "'%s' lacks '%s'", e.message,
                  what);
}

static skv_proto_user user_row(const char *name, char **projects, size_t n,
                               const char *policy, uint8_t active)
{
    skv_proto_user u = {0};
    u.name = (char *)name;
    u.domain = "default";
    u.role = "user";
    u.projects = projects;
    u.n_projects = n;
    u.resource_policy = (char *)policy;
    u.active = active;
    return u;
}

static void user_put(fx *f, uint32_t op, skv_proto_user u)
{
    skv_proto_admin_user rq = {op, u};
    adm(f, SKV_PROTO_ADMIN_USER, &rq);
}

static void policy_put(fx *f, uint32_t op, const char *name, uint32_t max)
{
    skv_proto_admin_resource_policy rq = {0};
    rq.op = op;
    rq.policy.name = (char *)name;
    rq.policy.max_cluster_size = max;
    adm(f, SKV_PROTO_ADMIN_RESOURCE_POLICY, &rq);
}

static void project_put(fx *f, uint32_t op, const char *name, uint8_t active)
{
    skv_proto_admin_project rq = {0};
    rq.op = op;
    rq.project.name = (char *)name;
    rq.project.domain = "default";
    rq.project.active = active;
    adm(f, SKV_PROTO_ADMIN_PROJECT, &rq);
}

static void domain_put(fx *f, char **groups, size_t n, uint8_t active)
{
    skv_proto_admin_domain rq = {0};
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.domain.name = "default";
    rq.domain.resource_groups = groups;
    rq.domain.n_resource_groups = n;
    rq.domain.active = active;
    adm(f, SKV_PROTO_ADMIN_DOMAIN, &rq);
}

static void group_put(fx *f, uint32_t op, const char *name, uint8_t active,
                      char **types, size_t ntypes, const char *numa)
{
    skv_proto_admin_resource_group rq = {0};
    rq.op = op;
    rq.group.name = (char *)name;
    rq.group.scheduler = "fifo";
    rq.group.active = active;
    rq.group.session_types = types;
    rq.group.n_session_types = ntypes;
    rq.group.numa_policy = (char *)numa;
    adm(f, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq);
}

static void key_put(fx *f, uint32_t op, const char *ak, const char *user,
                    const char *policy, uint8_t active, char *out_ak)
{
    skv_proto_admin_keypair rq = {0};
    rq.op = op;
    rq.keypair.access_key = (char *)ak;
    rq.keypair.user = (char *)user;
    rq.keypair.resource_policy = (char *)policy;
    rq.keypair.active = active;
    skv_proto_admin_keypair_reply rp = {0};
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_admin_handle(&f->ctx, &f->admin, SKV_PROTO_ADMIN_KEYPAIR,
                                    &rq, &rp, NOW, &e), &e);
    if (out_ak) {
        ck_assert_uint_eq(rp.n_keypairs, 1);
        snprintf(out_ak, SKV_AUTH_ACCESS_KEY_MAX, "%s",
                 rp.keypairs[0].access_key);
    }
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &rp);
}

/* Users, projects, domains and their activity. */
static void user_changes(fx *f)
{
    char *p1[] = {"p1"}, *p2[] = {"p2"};
    project_put(f, SKV_PROTO_ADMIN_CREATE, "p1", 1);
    project_put(f, SKV_PROTO_ADMIN_CREATE, "p2", 1);
    user_put(f, SKV_PROTO_ADMIN_CREATE, user_row("bob", p1, 1, NULL, 1));
    admitted(f, "bob", "p1", "default", 1);
    user_put(f, SKV_PROTO_ADMIN_UPDATE, user_row("bob", NULL, 0, NULL, 0));
    refused(f, "bob", "p1", "default", 1, SKV_EPERM, "not active");
    user_put(f, SKV_PROTO_ADMIN_UPDATE, user_row("bob", NULL, 0, NULL, 1));
    admitted(f, "bob", "p1", "default", 1);
    user_put(f, SKV_PROTO_ADMIN_UPDATE, user_row("bob", p2, 1, NULL, 1));
    refused(f, "bob", "p1", "default", 1, SKV_EPERM, "not a member");
    admitted(f, "bob", "p2", "default", 1);
    project_put(f, SKV_PROTO_ADMIN_UPDATE, "p2", 0);
    refused(f, "bob", "p2", "default", 1, SKV_EPERM, "deactivated");
    project_put(f, SKV_PROTO_ADMIN_UPDATE, "p2", 1);
    admitted(f, "bob", "p2", "default", 1);
    char *dg[] = {"default"};
    domain_put(f, dg, 1, 0);
    refused(f, "bob", "p2", "default", 1, SKV_EPERM, "deactivated");
    domain_put(f, dg, 1, 1);
    admitted(f, "bob", "p2", "default", 1);
    user_put(f, SKV_PROTO_ADMIN_UPDATE, user_row("bob", p1, 1, NULL, 1));
    user_put(f, SKV_PROTO_ADMIN_DELETE, user_row("bob", NULL, 0, NULL, 1));
    refused(f, "bob", "p1", "default", 1, SKV_ENOENT, "does not exist");
}

/* Resource groups: the domain's access, activity, session types, NUMA. */
static void group_changes(fx *f)
{
    user_put(f, SKV_PROTO_ADMIN_CREATE, user_row("ann", NULL, 0, NULL, 1));
    group_put(f, SKV_PROTO_ADMIN_CREATE, "gpu", 1, NULL, 0, NULL);
    char *both[] = {"default", "gpu"}, *one[] = {"default"};
    domain_put(f, both, 2, 1);
    admitted(f, "ann", "default", "gpu", 1);
    domain_put(f, one, 1, 1);
    refused(f, "ann", "default", "gpu", 1, SKV_EPERM, "may not use");
    domain_put(f, both, 2, 1);
    admitted(f, "ann", "default", "gpu", 1);
    group_put(f, SKV_PROTO_ADMIN_UPDATE, "gpu", 0, NULL, 0, NULL);
    refused(f, "ann", "default", "gpu", 1, SKV_EPERM, "deactivated");
    group_put(f, SKV_PROTO_ADMIN_UPDATE, "gpu", 1, NULL, 0, NULL);
    admitted(f, "ann", "default", "gpu", 1);
    char *inf[] = {"inference"};
    group_put(f, SKV_PROTO_ADMIN_UPDATE, "gpu", 1, inf, 1, NULL);
    refused(f, "ann", "default", "gpu", 1, SKV_EPERM, "does not allow batch");
    char *bat[] = {"batch"};
    group_put(f, SKV_PROTO_ADMIN_UPDATE, "gpu", 1, bat, 1, NULL);
    char numa[24];
    skv_error e = SKV_ERROR_INIT;
    admitted(f, "ann", "default", "gpu", 1);
    SKV_CK_OK(admit(f, "ann", "default", "gpu", 1, numa, &e), &e);
    ck_assert_str_eq(numa, "prefer-single-node");
    group_put(f, SKV_PROTO_ADMIN_UPDATE, "gpu", 1, NULL, 0, "interleaved");
    SKV_CK_OK(admit(f, "ann", "default", "gpu", 1, numa, &e), &e);
    ck_assert_str_eq(numa, "interleaved");
    skv__mgr_group_info gi;
    SKV_CK_OK(skv__mgr_admin_group(&f->ctx, &gi, "gpu", &e), &e);
    ck_assert_str_eq(gi.lost_batch_policy, "requeue");
    skv_proto_admin_resource_group rq = {0};
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.group.name = "gpu";
    rq.group.active = 1;
    rq.group.lost_batch_policy = "fail";
    adm(f, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq);
    SKV_CK_OK(skv__mgr_admin_group(&f->ctx, &gi, "gpu", &e), &e);
    ck_assert_str_eq(gi.lost_batch_policy, "fail");
}

/* Resource policies: the user's own, lowered; a key's, revoked. */
static void limit_changes(fx *f)
{
    policy_put(f, SKV_PROTO_ADMIN_CREATE, "big", 4);
    user_put(f, SKV_PROTO_ADMIN_CREATE, user_row("cy", NULL, 0, "big", 1));
    admitted(f, "cy", "default", "default", 3);
    policy_put(f, SKV_PROTO_ADMIN_UPDATE, "big", 2);
    refused(f, "cy", "default", "default", 3, SKV_ENOSPC, "limit 2");
    /* dy has no policy of its own: its key's applies while it is active */
    policy_put(f, SKV_PROTO_ADMIN_CREATE, "one", 1);
    user_put(f, SKV_PROTO_ADMIN_CREATE, user_row("dy", NULL, 0, NULL, 1));
    admitted(f, "dy", "default", "default", 3);
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    key_put(f, SKV_PROTO_ADMIN_CREATE, NULL, "dy", "one", 1, ak);
    refused(f, "dy", "default", "default", 3, SKV_ENOSPC, "limit 1");
    key_put(f, SKV_PROTO_ADMIN_UPDATE, ak, NULL, NULL, 0, NULL);
    admitted(f, "dy", "default", "default", 3);
}

static void changes(bool pg)
{
    fx f;
    if (!fx_open(&f, pg))
        return;
    user_changes(&f);
    group_changes(&f);
    limit_changes(&f);
    fx_close(&f);
}

START_TEST(test_changes_sqlite) { changes(false); }
END_TEST

START_TEST(test_changes_pg) { changes(true); }
END_TEST

static uint64_t misses(fx *f)
{
    uint64_t h, m;
    skv__mgr_store_admin_cache_stats(f->db, &h, &m);
    return m;
}

/* A change rolled back, or one made inside the core's transaction or
 * unit that is rolled back with it, leaves the old answers; a fence
 * forgets them. */
static void rollback_fence(bool pg)
{
    fx f;
    if (!fx_open(&f, pg))
        return;
    skv_error e = SKV_ERROR_INIT;
    user_put(&f, SKV_PROTO_ADMIN_CREATE, user_row("eve", NULL, 0, NULL, 1));
    admitted(&f, "eve", "default", "default", 1);
    /* The core's transaction holds an admin change (a savepoint), then
     * fails: eve is active again, though the cache saw her inactive. */
    SKV_CK_OK(skv__db_begin(f.db, &e), &e);
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("eve", NULL, 0, NULL, 0));
    refused(&f, "eve", "default", "default", 1, SKV_EPERM, "not active");
    skv__db_rollback(f.db);
    admitted(&f, "eve", "default", "default", 1);
    /* The same inside one of the core's units (db_unit.c's lazy
     * savepoint), undone alone while its transaction commits. */
    SKV_CK_OK(skv__db_begin(f.db, &e), &e);
    SKV_CK_OK(skv__db_unit_begin(f.db, &e), &e);
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("eve", NULL, 0, NULL, 0));
    refused(&f, "eve", "default", "default", 1, SKV_EPERM, "not active");
    skv__db_unit_rollback(f.db);
    admitted(&f, "eve", "default", "default", 1);
    SKV_CK_OK(skv__db_commit(f.db, &e), &e);
    admitted(&f, "eve", "default", "default", 1);
    /* and the other way round: read inside, kept after the rollback */
    SKV_CK_OK(skv__db_begin(f.db, &e), &e);
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("eve", NULL, 0, NULL, 0));
    skv__db_rollback(f.db);
    SKV_CK_OK(skv__db_begin(f.db, &e), &e);
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("eve", NULL, 0, NULL, 0));
    refused(&f, "eve", "default", "default", 1, SKV_EPERM, "not active");
    SKV_CK_OK(skv__db_commit(f.db, &e), &e);
    refused(&f, "eve", "default", "default", 1, SKV_EPERM, "not active");
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("eve", NULL, 0, NULL, 1));
    admitted(&f, "eve", "default", "default", 1);
    /* A new leader's fence: nothing cached before is answered after. */
    uint64_t m0 = misses(&f);
    skv__db_on_begin(f.db, NULL, NULL);
    SKV_CK_OK(admit(&f, "eve", "default", "default", 1, NULL, &e), &e);
    ck_assert_uint_gt(misses(&f), m0);
    fx_close(&f);
}

START_TEST(test_rollback_fence_sqlite) { rollback_fence(false); }
END_TEST

START_TEST(test_rollback_fence_pg) { rollback_fence(true); }
END_TEST

/* Steady state: admissions read no admin row (every lookup a hit), on
 * either engine, until an admin change; then one round of misses. */
static void steady(bool pg)
{
    fx f;
    if (!fx_open(&f, pg))
        return;
    skv_error e = SKV_ERROR_INIT;
    char *p1[] = {"p1"};
    project_put(&f, SKV_PROTO_ADMIN_CREATE, "p1", 1);
    policy_put(&f, SKV_PROTO_ADMIN_CREATE, "big", 4);
    user_put(&f, SKV_PROTO_ADMIN_CREATE, user_row("fay", p1, 1, "big", 1));
    SKV_CK_OK(admit(&f, "fay", "p1", "default", 1, NULL, &e), &e);
    uint64_t h0, m0, h1, m1;
    skv__mgr_store_admin_cache_stats(f.db, &h0, &m0);
    for (int i = 0; i < 100; i++)
        SKV_CK_OK(admit(&f, "fay", "p1", "default", 1, NULL, &e), &e);
    skv__mgr_store_admin_cache_stats(f.db, &h1, &m1);
    ck_assert_uint_eq(m1, m0);
    ck_assert_uint_eq(h1 - h0, 100 * 5);   /* five questions a submission */
    user_put(&f, SKV_PROTO_ADMIN_UPDATE, user_row("fay", NULL, 0, NULL, 1));
    SKV_CK_OK(admit(&f, "fay", "p1", "default", 1, NULL, &e), &e);
    skv__mgr_store_admin_cache_stats(f.db, &h0, &m0);
    ck_assert_uint_gt(m0, m1);
    fx_close(&f);
}

START_TEST(test_steady_sqlite) { steady(false); }
END_TEST

START_TEST(test_steady_pg) { steady(true); }
END_TEST

Suite *skv_test_suite_admin_cache(void);
Suite *skv_test_suite_admin_cache(void)
{
    Suite *s = suite_create("admin_cache");
    TCase *tc = tcase_create("admin_cache");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_changes_sqlite);
    tcase_add_test(tc, test_changes_pg);
    tcase_add_test(tc, test_rollback_fence_sqlite);
    tcase_add_test(tc, test_rollback_fence_pg);
    tcase_add_test(tc, test_steady_sqlite);
    tcase_add_test(tc, test_steady_pg);
    suite_add_tcase(s, tc);
    return s;
}
