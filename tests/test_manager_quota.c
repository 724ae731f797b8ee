/* admin.quota and admin.quota_tree in the manager's admin plane against a
 * real SQLite database and scheduler: stored rows, their mirror in the
 * scheduler (a limit holds in a pass), restore on load, refusals that
 * change nothing, owners and groups busy while they hold quotas, and the
 * tree's used / borrowed / lent figures.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/manager/admin/admin.h"
#include "../src/manager/store/admin_store.h"
#include "skv_test.h"

#define NOW 1700000000000LL

typedef struct fx {
    char dir[64], path[128];
    sqlite3 *db;
    skv__db *sdb;
    skv_sched *sched;
    skv_auth_verifier *ver;
    skv__mgr_admin_ctx ctx;
    skv_auth_principal admin;
} fx;

static void fx_db(fx *f)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(sqlite3_open(f->path, &f->db), SQLITE_OK);
    ck_assert_int_eq(sqlite3_exec(f->db, "PRAGMA foreign_keys=ON", NULL,
                                  NULL, NULL), SQLITE_OK);
    SKV_CK_OK(skv_sched_new(&f->sched, NULL, &e), &e);
    SKV_CK_OK(skv_auth_verifier_new(&f->ver, NULL, &e), &e);
    SKV_CK_OK(skv__db_wrap_sqlite(f->db, &f->sdb, &e), &e);
    f->ctx = (skv__mgr_admin_ctx){f->sdb, f->sched, f->ver, f->dir};
    SKV_CK_OK(skv__mgr_store_admin_schema(f->sdb, &e), &e);
}

static void fx_open(fx *f)
{
    skv_error e = SKV_ERROR_INIT;
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/skv-quota-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/manager.db", f->dir);
    fx_db(f);
    f->admin = (skv_auth_principal){"admin", SKV_AUTH_ROLE_ADMIN};
    skv__mgr_bootstrap b = {"default", "fifo", "concentrated", NULL};
    SKV_CK_OK(skv__mgr_admin_bootstrap(&f->ctx, &b, NOW, &e), &e);
    SKV_CK_OK(skv__mgr_admin_load(&f->ctx, &e), &e);
}

static void fx_drop(fx *f)
{
    skv__db_close(f->sdb);
    skv_sched_free(f->sched);
    skv_auth_verifier_free(f->ver);
}

static void fx_close(fx *f)
{
    fx_drop(f);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    ck_assert_int_eq(system(cmd), 0);
}

static int64_t rows(fx *f)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(f->db, "SELECT count(*) FROM quotas",
                                        -1, &st, NULL), 0);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static skv_slots *sl(const char *text)
{
    skv_slots *v = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_parse(&v, text, NULL, &e), &e);
    return v;
}

/* admin.quota op on (scope, owner, group) with the three vectors (NULL:
 * left out). The reply's quota count, or the error code. */
static int quota(fx *f, uint32_t op, const char *scope, const char *owner,
                 const char *group, const char *g, const char *l,
                 const char *b, skv_error *e)
{
    skv_proto_admin_quota rq = {op, {(char *)scope, (char *)owner,
                                     (char *)group, g ? sl(g) : NULL,
                                     l ? sl(l) : NULL, b ? sl(b) : NULL}};
    skv_proto_admin_quota_reply rp = {0};
    int rc = skv__mgr_admin_handle(&f->ctx, &f->admin, SKV_PROTO_ADMIN_QUOTA,
                                   &rq, &rp, NOW, e);
    int n = rc ? rc : (int)rp.n_quotas;
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rp);
    skv_slots_free(rq.quota.guaranteed);
    skv_slots_free(rq.quota.limit);
    skv_slots_free(rq.quota.borrow_limit);
    return n;
}

static void project(fx *f, const char *name)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_project rq = {SKV_PROTO_ADMIN_CREATE, {(char *)name,
                                  NULL, NULL, NULL, 1}};
    skv_proto_admin_project_reply rp = {0};
    SKV_CK_OK(skv__mgr_admin_handle(&f->ctx, &f->admin,
                                    SKV_PROTO_ADMIN_PROJECT, &rq, &rp, NOW,
                                    &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_PROJECT_REPLY, &rp);
}

/* Sessions of 1 GPU for project p on a fresh 8-GPU agent: how many start
 * in one pass (the project's limit in the scheduler decides). */
static size_t placed(fx *f, const char *p, int n)
{
    skv_error e = SKV_ERROR_INIT;
    static int agents;
    char id[32];
    snprintf(id, sizeof id, "ag%d", agents++);
    skv_sched_device_spec dev[8];
    for (int i = 0; i < 8; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", NULL, 0};
    skv_slots *cap = sl("cpu=64");
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = id;
    a.resource_group = "default";
    a.capacity = cap;
    a.n_devices = 8;
    a.devices = dev;
    SKV_CK_OK(skv_sched_agent_add(f->sched, &a, &e), &e);
    skv_slots_free(cap);
    skv_slots *req = sl("cuda.device=1");
    for (int i = 0; i < n; i++) {
        char sid[48];
        snprintf(sid, sizeof sid, "%s-%s-%d", id, p, i);
        skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
        skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
        sp.id = sid;
        sp.domain = "default";
        sp.project = p;
        sp.user = "u";
        sp.resource_group = "default";
        sp.n_kernels = 1;
        sp.kernels = &k;
        SKV_CK_OK(skv_sched_submit(f->sched, &sp, NOW, &e), &e);
    }
    skv_slots_free(req);
    skv_sched_result *r = NULL;
    SKV_CK_OK(skv_sched_pass(&r, f->sched, NOW, NULL, &e), &e);
    size_t got = r->n_placements;
    skv_sched_result_free(r);
    return got;
}

START_TEST(test_quota_store_mirror_restore)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    project(&f, "pa");
    project(&f, "pb");
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_CREATE, "project", "pa",
                           "default", "cuda.device=2", "cuda.device=3", NULL,
                           &e), 1);
    ck_assert_int_eq(rows(&f), 1);
    ck_assert_uint_eq(placed(&f, "pa", 5), 3);
    /* UPDATE keeps what it leaves out; CREATE again is refused */
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_CREATE, "project", "pa",
                           "default", "cuda.device=1", NULL, NULL, &e),
                     SKV_EEXIST);
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_UPDATE, "project", "pa",
                           "default", NULL, "cuda.device=4", NULL, &e), 1);
    ck_assert_uint_eq(placed(&f, "pa", 0), 1);  /* the 4th of 5 pending */
    skv_proto_admin_quota_reply rp = {0};
    SKV_CK_OK(skv__mgr_store_admin_quota_read(f.sdb, &rp, "project", "pa",
                                              "default", &e), &e);
    ck_assert_uint_eq(rp.n_quotas, 1);
    ck_assert_int_eq(skv_slots_get(rp.quotas[0].guaranteed, "cuda.device"),
                     2000);
    ck_assert_int_eq(skv_slots_get(rp.quotas[0].limit, "cuda.device"), 4000);
    ck_assert_ptr_null(rp.quotas[0].borrow_limit);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rp);
    /* a restart: a fresh scheduler gets the quota from the rows */
    fx_drop(&f);
    fx_db(&f);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    ck_assert_uint_eq(placed(&f, "pa", 6), 4);
    /* --no-quota: the row and the scheduler's quota go */
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_DELETE, "project", "pa",
                           "default", NULL, NULL, NULL, &e), 0);
    ck_assert_int_eq(rows(&f), 0);
    ck_assert_uint_eq(placed(&f, "pa", 0), 2);
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_DELETE, "project", "pa",
                           "default", NULL, NULL, NULL, &e), SKV_ENOENT);
    fx_close(&f);
}
END_TEST

START_TEST(test_quota_refused)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    project(&f, "pa");
    static const struct {
        const char *scope, *owner, *group, *g, *l;
        int rc;
        const char *msg;
    } bad[] = {
        {"team", "pa", "default", "cpu=1", NULL, SKV_EINVAL, "scope"},
        {NULL, "pa", "default", "cpu=1", NULL, SKV_EINVAL, "scope"},
        {"project", "nope", "default", "cpu=1", NULL, SKV_ENOENT, "nope"},
        {"project", "pa", "nogroup", "cpu=1", NULL, SKV_ENOENT, "nogroup"},
        {"project", "pa", "default", NULL, NULL, SKV_EINVAL, "needs"},
        {"project", "pa", "default", "cpu=4", "cpu=2", SKV_EINVAL,
         "above its limit"},
        {"project", "bad name", "default", "cpu=1", NULL, SKV_EINVAL, ""},
        {"user", "ghost", "default", "cpu=1", NULL, SKV_ENOENT, "ghost"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = quota(&f, SKV_PROTO_ADMIN_UPDATE, bad[i].scope, bad[i].owner,
                       bad[i].group, bad[i].g, bad[i].l, NULL, &e);
        ck_assert_msg(rc == bad[i].rc, "case %zu: %d (%s)", i, rc, e.message);
        ck_assert_msg(strstr(e.message, bad[i].msg), "case %zu: %s", i,
                      e.message);
    }
    /* more slot names than the scheduler holds */
    char text[512] = "";
    for (int i = 0; i < SKV_SCHED_SLOTS_MAX + 1; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%sx%d=1",
                 i ? "," : "", i);
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_UPDATE, "project", "pa",
                           "default", text, NULL, NULL, &e), SKV_ERANGE);
    ck_assert_int_eq(rows(&f), 0);
    /* busy owners and groups */
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_UPDATE, "project", "pa",
                           "default", "cpu=1", NULL, NULL, &e), 1);
    skv_proto_admin_project pd = {SKV_PROTO_ADMIN_DELETE, {"pa", NULL, NULL,
                                  NULL, 0}};
    skv_proto_admin_project_reply pr = {0};
    ck_assert_int_eq(skv__mgr_admin_handle(&f.ctx, &f.admin,
                                           SKV_PROTO_ADMIN_PROJECT, &pd, &pr,
                                           NOW, &e), SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "has a quota"));
    skv_proto_admin_resource_group gd = {SKV_PROTO_ADMIN_DELETE,
                                         {.name = "default"}};
    skv_proto_admin_resource_group_reply gr = {0};
    ck_assert_int_eq(skv__mgr_admin_handle(&f.ctx, &f.admin,
                                           SKV_PROTO_ADMIN_RESOURCE_GROUP,
                                           &gd, &gr, NOW, &e), SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "holds quotas"));
    ck_assert_int_eq(rows(&f), 1);
    /* list filters */
    skv_proto_admin_quota lq = {SKV_PROTO_ADMIN_LIST, {"user", NULL, NULL,
                                NULL, NULL, NULL}};
    skv_proto_admin_quota_reply lr = {0};
    SKV_CK_OK(skv__mgr_admin_handle(&f.ctx, &f.admin, SKV_PROTO_ADMIN_QUOTA,
                                    &lq, &lr, NOW, &e), &e);
    ck_assert_uint_eq(lr.n_quotas, 0);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &lr);
    lq.quota.scope = "project";
    SKV_CK_OK(skv__mgr_admin_handle(&f.ctx, &f.admin, SKV_PROTO_ADMIN_QUOTA,
                                    &lq, &lr, NOW, &e), &e);
    ck_assert_uint_eq(lr.n_quotas, 1);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &lr);
    /* not for users */
    skv_auth_principal bob = {"bob", SKV_AUTH_ROLE_USER};
    ck_assert_int_eq(skv__mgr_admin_handle(&f.ctx, &bob, SKV_PROTO_ADMIN_QUOTA,
                                           &lq, &lr, NOW, &e), SKV_EPERM);
    fx_close(&f);
}
END_TEST

static const skv_proto_quota_node *node(
    const skv_proto_admin_quota_tree_reply *t, const char *scope,
    const char *name)
{
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!strcmp(t->nodes[i].scope, scope) && !strcmp(t->nodes[i].name, name))
            return &t->nodes[i];
    return NULL;
}

/* pb uses 3 GPUs with no guarantee; pa (guaranteed 2) and pc (guaranteed
 * 4) are idle: pa lends 2, pc the remaining 1 (name order). */
START_TEST(test_quota_tree_figures)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    project(&f, "pa");
    project(&f, "pb");
    project(&f, "pc");
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_UPDATE, "project", "pa",
                           "default", "cuda.device=2", NULL, NULL, &e), 1);
    ck_assert_int_eq(quota(&f, SKV_PROTO_ADMIN_UPDATE, "project", "pc",
                           "default", "cuda.device=4", NULL, NULL, &e), 1);
    ck_assert_uint_eq(placed(&f, "pb", 3), 3);
    skv_proto_admin_quota_tree rq = {"default"};
    skv_proto_admin_quota_tree_reply t = {0};
    SKV_CK_OK(skv__mgr_admin_handle(&f.ctx, &f.admin,
                                    SKV_PROTO_ADMIN_QUOTA_TREE, &rq, &t, NOW,
                                    &e), &e);
    const skv_proto_quota_node *d = node(&t, "domain", "default"),
                               *a = node(&t, "project", "pa"),
                               *b = node(&t, "project", "pb"),
                               *c = node(&t, "project", "pc");
    ck_assert(d && a && b && c);
    ck_assert_ptr_null(d->parent);
    ck_assert_str_eq(b->parent, "default");
    ck_assert_int_eq(skv_slots_get(b->used, "cuda.device"), 3000);
    ck_assert_int_eq(skv_slots_get(b->borrowed, "cuda.device"), 3000);
    ck_assert_int_eq(skv_slots_get(a->lent, "cuda.device"), 2000);
    ck_assert_int_eq(skv_slots_get(c->lent, "cuda.device"), 1000);
    ck_assert_int_eq(skv_slots_get(a->used, "cuda.device"), 0);
    ck_assert_ptr_null(node(&t, "project", "default"));  /* nothing there */
    /* depth first: the domain before its projects */
    ck_assert_str_eq(t.nodes[0].scope, "domain");
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, &t);
    rq.resource_group = "nogroup";
    ck_assert_int_eq(skv__mgr_admin_handle(&f.ctx, &f.admin,
                                           SKV_PROTO_ADMIN_QUOTA_TREE, &rq,
                                           &t, NOW, &e), SKV_ENOENT);
    ck_assert_uint_eq(t.n_nodes, 0);
    fx_close(&f);
}
END_TEST

Suite *skv_test_suite_manager_quota(void);
Suite *skv_test_suite_manager_quota(void)
{
    Suite *s = suite_create("manager_quota");
    TCase *tc = tcase_create("quota");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_quota_store_mirror_restore);
    tcase_add_test(tc, test_quota_refused);
    tcase_add_test(tc, test_quota_tree_figures);
    suite_add_tcase(s, tc);
    return s;
}
