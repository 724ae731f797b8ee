/* The manager's admin plane (src/manager/admin/) against a real
 * SQLite database, scheduler and verifier: bootstrap, load, every admin.*
 * object, validation, authorization and rollback.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/manager/admin/admin.h"
#include "../src/manager/store/admin_cache.h"
#include "../src/manager/store/admin_store.h"
#include "../src/manager/store/migrate.h"
#include "skv_test.h"

#define NOW 1700000000000LL

typedef struct fx {
    char dir[64];
    sqlite3 *db;                /* the handle, for the checks below */
    skv__db *sdb;               /* owns db; what the admin plane uses */
    skv_sched *sched;
    skv_auth_verifier *ver;
    skv__mgr_admin_ctx ctx;
    skv_auth_principal admin, user;
} fx;

static void fx_open(fx *f)
{
    skv_error e = SKV_ERROR_INIT;
    memset(f, 0, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/skv-admin-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
    char path[128];
    snprintf(path, sizeof path, "%s/manager.db", f->dir);
    ck_assert_int_eq(sqlite3_open(path, &f->db), SQLITE_OK);
    /* As the manager core opens it. */
    ck_assert_int_eq(sqlite3_exec(f->db, "PRAGMA journal_mode=WAL;"
                                  " PRAGMA foreign_keys=ON", NULL, NULL,
                                  NULL), SQLITE_OK);
    SKV_CK_OK(skv_sched_new(&f->sched, NULL, &e), &e);
    SKV_CK_OK(skv_auth_verifier_new(&f->ver, NULL, &e), &e);
    SKV_CK_OK(skv__db_wrap_sqlite(f->db, &f->sdb, &e), &e);
    f->ctx = (skv__mgr_admin_ctx){f->sdb, f->sched, f->ver, f->dir};
    ck_assert_int_eq(sqlite3_exec(f->db, "BEGIN", NULL, NULL, NULL), 0);
    SKV_CK_OK(skv__mgr_store_admin_schema(f->sdb, &e), &e);
    ck_assert_int_eq(sqlite3_exec(f->db, "COMMIT", NULL, NULL, NULL), 0);
    f->admin = (skv_auth_principal){"admin", SKV_AUTH_ROLE_ADMIN};
    f->user = (skv_auth_principal){"bob", SKV_AUTH_ROLE_USER};
}

static void rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            rm_tree(p);
        else
            unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static void fx_close(fx *f)
{
    skv__db_close(f->sdb);      /* closes f->db */
    skv_sched_free(f->sched);
    skv_auth_verifier_free(f->ver);
    rm_tree(f->dir);
}

static void fx_boot(fx *f, const char *agents)
{
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_bootstrap b = {"default", "fifo", "concentrated", agents};
    SKV_CK_OK(skv__mgr_admin_bootstrap(&f->ctx, &b, NOW, &e), &e);
}

static int64_t count(fx *f, const char *sql)
{
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(f->db, sql, -1, &st, NULL), 0);
    ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static void sql(fx *f, const char *text)
{
    char *msg = NULL;
    ck_assert_msg(sqlite3_exec(f->db, text, NULL, NULL, &msg) == SQLITE_OK,
                  "%s: %s", text, msg ? msg : "?");
}

/* A checksum of every admin table, to prove that a refused request
 * changed nothing. */
static int64_t db_state(fx *f)
{
    return count(f, "SELECT (SELECT count(*) FROM users)"
                    " + 10*(SELECT count(*) FROM keypairs WHERE active=1)"
                    " + 100*(SELECT count(*) FROM projects)"
                    " + 1000*(SELECT count(*) FROM domains)"
                    " + 10000*(SELECT count(*) FROM resource_policies)"
                    " + 100000*(SELECT count(*) FROM resource_groups)"
                    " + 1000000*(SELECT count(*) FROM user_projects)"
                    " + 10000000*(SELECT count(*) FROM domain_groups)"
                    " + 100000000*(SELECT count(*) FROM users WHERE active=1)");
}

static void read_file(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "cannot open %s", path);
    size_t got = fread(buf, 1, n - 1, fp);
    buf[got] = '\0';
    fclose(fp);
}

/* The key file holds exactly the user's key pair from the database. */
static void check_keyfile(fx *f, const char *rel, const char *user)
{
    char path[256], text[512], want[512];
    snprintf(path, sizeof path, "%s/%s", f->dir, rel);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    read_file(path, text, sizeof text);
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(f->db, "SELECT 'access_key=' ||"
        " access_key || char(10) || 'secret_key=' || secret_key || char(10)"
        " FROM keypairs WHERE user=?1", -1, &q, NULL), 0);
    sqlite3_bind_text(q, 1, user, -1, SQLITE_STATIC);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    snprintf(want, sizeof want, "%s", sqlite3_column_text(q, 0));
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);  /* exactly one key */
    sqlite3_finalize(q);
    ck_assert_str_eq(text, want);
}

/* Run an admin request; the reply is freed unless out is given. */
static int adm(fx *f, const skv_auth_principal *p, skv_proto_type t,
               const void *body, void *out, skv_error *e)
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
    skv_error_clear(e);
    int rc = skv__mgr_admin_handle(&f->ctx, p, t, body, out ? out : &reply,
                                   NOW, e);
    if (!out && rc == 0)   /* on failure the handler freed it */
        skv_proto_body_free(skv_proto_type_reply(t), &reply);
    return rc;
}

static int user_op(fx *f, uint32_t op, const char *name, const char *domain,
                   const char *policy, skv_error *e)
{
    skv_proto_admin_user rq;
    memset(&rq, 0, sizeof rq);
    rq.op = op;
    rq.user.name = (char *)name;
    rq.user.domain = (char *)domain;
    rq.user.resource_policy = (char *)policy;
    rq.user.active = 1;
    return adm(f, &f->admin, SKV_PROTO_ADMIN_USER, &rq, NULL, e);
}

/* Create a key pair for user; the reply's access key goes to ak. */
static int key_create(fx *f, const char *user, char *ak, char *sk,
                      skv_error *e)
{
    skv_proto_admin_keypair rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.keypair.user = (char *)user;
    skv_proto_admin_keypair_reply rp;
    memset(&rp, 0, sizeof rp);
    int rc = adm(f, &f->admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, &rp, e);
    if (!rc) {
        ck_assert_uint_eq(rp.n_keypairs, 1);
        ck_assert_ptr_nonnull(rp.keypairs[0].secret_key);
        ck_assert_str_eq(rp.keypairs[0].user, user);
        snprintf(ak, SKV_AUTH_ACCESS_KEY_MAX, "%s", rp.keypairs[0].access_key);
        if (sk)
            snprintf(sk, SKV_AUTH_SECRET_KEY_MAX, "%s",
                     rp.keypairs[0].secret_key);
    }
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &rp);
    return rc;
}

/* Sign a message with (ak, sk) and verify it: 0 and the principal. */
static int verify_with(fx *f, const char *ak, const char *sk,
                       skv_auth_principal *who, uint8_t seed)
{
    static const uint8_t body[] = {0x80};
    skv_auth_message m = {1, 0, 7, "session.list", body, sizeof body};
    skv_auth_block b;
    memset(&b, 0, sizeof b);
    snprintf(b.access_key, sizeof b.access_key, "%s", ak);
    b.timestamp_ms = NOW;
    for (int i = 0; i < SKV_AUTH_NONCE_BYTES; i++)
        b.nonce[i] = (uint8_t)(seed + i);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_auth_sign(&b, &m, sk, &e), &e);
    return skv_auth_verify(f->ver, who, &b, &m, NOW, &e);
}

static int policy_op(fx *f, uint32_t op, const char *name, const char *slots,
                     uint32_t max_pending, skv_error *e)
{
    skv_proto_admin_resource_policy rq;
    memset(&rq, 0, sizeof rq);
    rq.op = op;
    rq.policy.name = (char *)name;
    rq.policy.max_pending_sessions = max_pending;
    rq.policy.max_cluster_size = 4;
    rq.policy.max_session_lifetime_ms = 60000;
    if (slots)
        SKV_CK_OK(skv_slots_parse(&rq.policy.max_slots, slots, NULL, e), e);
    int rc = adm(f, &f->admin, SKV_PROTO_ADMIN_RESOURCE_POLICY, &rq, NULL, e);
    skv_slots_free(rq.policy.max_slots);
    return rc;
}

static int group_op(fx *f, uint32_t op, const char *name, const char *sched,
                    skv_error *e)
{
    skv_proto_admin_resource_group rq;
    memset(&rq, 0, sizeof rq);
    rq.op = op;
    rq.group.name = (char *)name;
    rq.group.scheduler = (char *)sched;
    rq.group.active = 1;
    return adm(f, &f->admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, NULL, e);
}

static int submit(fx *f, const char *id, const char *user, const char *group,
                  skv_error *e)
{
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=1", NULL, e), e);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
    skv_sched_session_spec s = SKV_SCHED_SESSION_SPEC_INIT;
    s.id = id;
    s.domain = "default";
    s.project = "default";
    s.user = user;
    s.resource_group = group;
    s.n_kernels = 1;
    s.kernels = &k;
    int rc = skv_sched_submit(f->sched, &s, NOW, e);
    skv_slots_free(req);
    return rc;
}

static void add_agent(fx *f, const char *id, const char *group)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *cap = NULL;
    SKV_CK_OK(skv_slots_parse(&cap, "cpu=4,mem=8g", NULL, &e), &e);
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.id = id;
    a.resource_group = group;
    a.capacity = cap;
    SKV_CK_OK(skv_sched_agent_add(f->sched, &a, &e), &e);
    skv_slots_free(cap);
}

/* Whether the scheduler knows group g (remove + add back). */
static bool sched_has_group(fx *f, const char *g)
{
    skv_sched_group_options o = SKV_SCHED_GROUP_OPTIONS_INIT;
    int rc = skv_sched_group_add(f->sched, g, &o, NULL);
    if (rc == 0)
        skv_sched_group_remove(f->sched, g, NULL);
    return rc == SKV_EEXIST;
}

START_TEST(test_bootstrap_idempotent)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, "a1,a2");
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM users"), 3);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM keypairs"), 3);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM users WHERE"
                               " name='admin' AND role='admin'"), 1);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM users WHERE"
                               " role='agent'"), 2);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM projects WHERE"
                               " name='default' AND domain='default'"), 1);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM domain_groups WHERE"
                               " domain='default' AND resource_group="
                               "'default'"), 1);
    check_keyfile(&f, "admin.key", "admin");
    check_keyfile(&f, "agents/a1.key", "a1");
    check_keyfile(&f, "agents/a2.key", "a2");
    char p[256];
    struct stat st;
    snprintf(p, sizeof p, "%s/manager.db", f.dir);   /* holds secrets */
    ck_assert_int_eq(stat(p, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    int64_t s0 = db_state(&f);
    /* Again: nothing changes, the files stay. */
    fx_boot(&f, "a1,a2");
    ck_assert_int_eq(db_state(&f), s0);
    check_keyfile(&f, "admin.key", "admin");
    /* A lost agent key file is written again from the database; a new
     * agent gets a user and a key. */
    snprintf(p, sizeof p, "%s/agents/a1.key", f.dir);
    ck_assert_int_eq(unlink(p), 0);
    fx_boot(&f, "a1,a2,a3");
    check_keyfile(&f, "agents/a1.key", "a1");
    check_keyfile(&f, "agents/a3.key", "a3");
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM keypairs"), 4);
    /* Load: every key and the default group. */
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    ck_assert_uint_eq(skv_auth_verifier_key_count(f.ver), 4);
    ck_assert(sched_has_group(&f, "default"));
    /* A bad agent id is refused and leaves nothing behind. */
    s0 = db_state(&f);
    skv__mgr_bootstrap bad = {"default", "fifo", "concentrated", "a4,../x"};
    ck_assert_int_eq(skv__mgr_admin_bootstrap(&f.ctx, &bad, NOW, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "../x"));
    ck_assert_int_eq(db_state(&f), s0);
    snprintf(p, sizeof p, "%s/agents/a4.key", f.dir);
    ck_assert_int_eq(access(p, F_OK), -1);
    fx_close(&f);
}
END_TEST

START_TEST(test_load_and_verify)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, "a1");
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    /* The agent can sign with the key in its file. */
    char path[256], text[512], ak[64], sk[128];
    snprintf(path, sizeof path, "%s/agents/a1.key", f.dir);
    read_file(path, text, sizeof text);
    ck_assert_int_eq(sscanf(text, "access_key=%63s\nsecret_key=%127s", ak,
                            sk), 2);
    skv_auth_principal who;
    ck_assert_int_eq(verify_with(&f, ak, sk, &who, 1), 0);
    ck_assert_str_eq(who.user, "a1");
    ck_assert_int_eq(who.role, SKV_AUTH_ROLE_AGENT);
    fx_close(&f);
}
END_TEST

START_TEST(test_non_admin_refused)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    int64_t s0 = db_state(&f);
    skv_proto_admin_user rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.user.name = "eve";
    ck_assert_int_eq(adm(&f, &f.user, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EPERM);
    skv_auth_principal agent = {"a1", SKV_AUTH_ROLE_AGENT};
    rq.op = SKV_PROTO_ADMIN_LIST;
    ck_assert_int_eq(adm(&f, &agent, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EPERM);
    skv_proto_admin_resource_group g;
    memset(&g, 0, sizeof g);
    g.op = SKV_PROTO_ADMIN_CREATE;
    g.group.name = "mine";
    ck_assert_int_eq(adm(&f, &f.user, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g,
                         NULL, &e), SKV_EPERM);
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert(!sched_has_group(&f, "mine"));
    /* Not an admin request type at all. */
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_SESSION_LIST, &rq, NULL, &e),
                     SKV_EINVAL);
    fx_close(&f);
}
END_TEST

START_TEST(test_user_crud)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    skv_proto_admin_user rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.user.name = "bob";
    rq.user.email = "bob@example.org";
    char *projects[] = {"default"};
    rq.user.projects = projects;
    rq.user.n_projects = 1;
    skv_proto_admin_user_reply rp;
    memset(&rp, 0, sizeof rp);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, &rp, &e), &e);
    ck_assert_uint_eq(rp.n_users, 1);
    ck_assert_str_eq(rp.users[0].name, "bob");
    ck_assert_str_eq(rp.users[0].role, "user");
    ck_assert_str_eq(rp.users[0].domain, "default");
    ck_assert_uint_eq(rp.users[0].n_projects, 1);
    ck_assert_int_eq(rp.users[0].active, 1);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &rp);
    skv__mgr_user_info ui;
    SKV_CK_OK(skv__mgr_admin_user(&f.ctx, &ui, "bob", &e), &e);
    ck_assert_str_eq(ui.domain, "default");
    ck_assert_str_eq(ui.role, "user");
    ck_assert_int_eq(ui.active, 1);
    /* UPDATE: NULL strings keep their value. */
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.user.name = "bob";
    rq.user.description = "the builder";
    rq.user.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, &rp, &e), &e);
    ck_assert_str_eq(rp.users[0].email, "bob@example.org");
    ck_assert_str_eq(rp.users[0].description, "the builder");
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &rp);
    /* LIST: everybody, or one. */
    rq.op = SKV_PROTO_ADMIN_LIST;
    rq.user.name = NULL;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, &rp, &e), &e);
    ck_assert_uint_eq(rp.n_users, 2);
    ck_assert_str_eq(rp.users[0].name, "admin");
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &rp);
    /* DELETE returns what was deleted. */
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_DELETE, "bob", NULL, NULL, &e), &e);
    ck_assert_int_eq(skv__mgr_admin_user(&f.ctx, &ui, "bob", &e), SKV_ENOENT);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM user_projects"), 0);
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_DELETE, "bob", NULL, NULL,
                             &e), SKV_ENOENT);
    fx_close(&f);
}
END_TEST

START_TEST(test_user_validation)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL, &e), &e);
    int64_t s0 = db_state(&f);
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL,
                             &e), SKV_EEXIST);
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "has space", NULL,
                             NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "space"));
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "", NULL, NULL, &e),
                     SKV_EINVAL);
    char longname[200];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, longname, NULL, NULL,
                             &e), SKV_EINVAL);
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "carol", "nowhere",
                             NULL, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "domain 'nowhere'"));
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "carol", NULL,
                             "nopolicy", &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "resource policy 'nopolicy'"));
    skv_proto_admin_user rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.user.name = "carol";
    rq.user.role = "root";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EINVAL);
    rq.user.role = NULL;
    rq.user.email = "no-at-sign";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EINVAL);
    rq.user.email = NULL;
    char *projects[] = {"ghost"};
    rq.user.projects = projects;
    rq.user.n_projects = 1;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "project 'ghost'"));
    rq.op = 9;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EINVAL);
    /* Admins cannot lock themselves out. */
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_DELETE, "admin", NULL, NULL,
                             &e), SKV_EPERM);
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.user.name = "admin";
    rq.user.active = 0;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EPERM);
    rq.user.active = 1;
    rq.user.role = "user";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &rq, NULL, &e),
                     SKV_EPERM);
    ck_assert_int_eq(db_state(&f), s0);
    fx_close(&f);
}
END_TEST

START_TEST(test_keypair_lifecycle)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL, &e), &e);
    size_t n0 = skv_auth_verifier_key_count(f.ver);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    SKV_CK_OK(key_create(&f, "bob", ak, sk, &e), &e);
    ck_assert_uint_eq(skv_auth_verifier_key_count(f.ver), n0 + 1);
    skv_auth_principal who;
    ck_assert_int_eq(verify_with(&f, ak, sk, &who, 1), 0);
    ck_assert_str_eq(who.user, "bob");
    ck_assert_int_eq(who.role, SKV_AUTH_ROLE_USER);
    /* LIST never shows secrets. */
    skv_proto_admin_keypair rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_LIST;
    skv_proto_admin_keypair_reply rp;
    memset(&rp, 0, sizeof rp);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, &rp, &e), &e);
    ck_assert_uint_eq(rp.n_keypairs, 2);
    for (size_t i = 0; i < rp.n_keypairs; i++)
        ck_assert_ptr_null(rp.keypairs[i].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &rp);
    /* Deactivate: forgotten; reactivate: known again. */
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.keypair.access_key = ak;
    rq.keypair.active = 0;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, ak, sk, NULL, 2), SKV_EAUTH);
    rq.keypair.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, ak, sk, NULL, 3), 0);
    /* The user's deactivation takes its keys away too. */
    skv_proto_admin_user u;
    memset(&u, 0, sizeof u);
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.name = "bob";
    u.user.active = 0;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, ak, sk, NULL, 4), SKV_EAUTH);
    u.user.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    /* A role change re-registers the keys with the new role. */
    u.user.role = "admin";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, ak, sk, &who, 5), 0);
    ck_assert_int_eq(who.role, SKV_AUTH_ROLE_ADMIN);
    /* Immutable parts, unknown keys, secrets that do not pass. */
    rq.keypair.secret_key = "another-secret-another";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_EINVAL);
    rq.keypair.secret_key = NULL;
    rq.op = SKV_PROTO_ADMIN_DELETE;
    rq.keypair.access_key = "AKNOSUCHKEY";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_ENOENT);
    ck_assert_int_eq(key_create(&f, "ghost", ak, NULL, &e), SKV_ENOENT);
    /* DELETE: forgotten. */
    rq.keypair.access_key = ak;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, ak, sk, NULL, 6), SKV_EAUTH);
    ck_assert_uint_eq(skv_auth_verifier_key_count(f.ver), n0);
    fx_close(&f);
}
END_TEST

START_TEST(test_keypair_import_and_self)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL, &e), &e);
    skv_proto_admin_keypair rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.keypair.user = "bob";
    rq.keypair.access_key = "AKIMPORTED01";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_EINVAL);   /* half a key pair */
    rq.keypair.secret_key = "short";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_EINVAL);
    rq.keypair.secret_key = "an-imported-secret-key";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL, &e), &e);
    ck_assert_int_eq(verify_with(&f, "AKIMPORTED01", "an-imported-secret-key",
                                 NULL, 1), 0);
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_EEXIST);
    /* The admin cannot drop its own last key. */
    char ak[SKV_AUTH_ACCESS_KEY_MAX] = "";
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(f.db, "SELECT access_key FROM"
        " keypairs WHERE user='admin'", -1, &q, NULL), 0);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
    snprintf(ak, sizeof ak, "%s", sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_DELETE;
    rq.keypair.access_key = ak;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL,
                         &e), SKV_EPERM);
    char ak2[SKV_AUTH_ACCESS_KEY_MAX];
    SKV_CK_OK(key_create(&f, "admin", ak2, NULL, &e), &e);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &rq, NULL, &e), &e);
    /* Deleting a user deletes and forgets its keys. */
    size_t n = skv_auth_verifier_key_count(f.ver);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_DELETE, "bob", NULL, NULL, &e), &e);
    ck_assert_uint_eq(skv_auth_verifier_key_count(f.ver), n - 1);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM keypairs WHERE"
                               " user='bob'"), 0);
    fx_close(&f);
}
END_TEST

START_TEST(test_group_crud)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    skv_proto_admin_resource_group rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_CREATE;
    rq.group.name = "gpu";
    rq.group.scheduler = "fifo";
    rq.group.lost_batch_policy = "fail";
    rq.group.pending_timeout_ms = 5000;
    char *types[] = {"batch"};
    rq.group.session_types = types;
    rq.group.n_session_types = 1;
    skv_proto_admin_resource_group_reply rp;
    memset(&rp, 0, sizeof rp);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, &rp, &e),
              &e);
    ck_assert_uint_eq(rp.n_groups, 1);
    ck_assert_str_eq(rp.groups[0].scheduler, "fifo");
    ck_assert_uint_eq(rp.groups[0].n_session_types, 1);
    ck_assert_str_eq(rp.groups[0].session_types[0], "batch");
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &rp);
    ck_assert(sched_has_group(&f, "gpu"));
    skv__mgr_group_info gi;
    SKV_CK_OK(skv__mgr_admin_group(&f.ctx, &gi, "gpu", &e), &e);
    ck_assert_str_eq(gi.lost_batch_policy, "fail");
    ck_assert_uint_eq(gi.pending_timeout_ms, 5000);
    /* A scheduler the scheduler does not know: refused, nothing stored. */
    int64_t s0 = db_state(&f);
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_CREATE, "odd", "nope", &e),
                     SKV_ENOENT);
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert(!sched_has_group(&f, "odd"));
    rq.group.name = "bad";
    rq.group.lost_batch_policy = "retry";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq,
                         NULL, &e), SKV_EINVAL);
    rq.group.lost_batch_policy = NULL;
    types[0] = "sleepy";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq,
                         NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "sleepy"));
    ck_assert_int_eq(db_state(&f), s0);
    /* In use: an agent in it. Delete and scheduler change are refused and
     * nothing changes. */
    add_agent(&f, "ag1", "gpu");
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_DELETE, "gpu", NULL, &e),
                     SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "gpu"));
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_UPDATE, "gpu", "drf", &e),
                     SKV_EBUSY);
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND scheduler='fifo'"), 1);
    ck_assert(sched_has_group(&f, "gpu"));
    /* Updating other fields of a busy group is fine. */
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_UPDATE, "gpu", NULL, &e), &e);
    /* So is its agent selector, which changes in place; an unknown one is
     * refused with nothing changed. Created without one: the default. */
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND selector='auto'"), 1);
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.group.name = "gpu";
    rq.group.selector = "dispersed";
    rq.group.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, &rp, &e),
              &e);
    ck_assert_str_eq(rp.groups[0].selector, "dispersed");
    ck_assert_str_eq(rp.groups[0].scheduler, "fifo");
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &rp);
    s0 = db_state(&f);
    rq.group.selector = "nope";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq,
                         NULL, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "nope"));
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND selector='dispersed'"), 1);
    ck_assert(sched_has_group(&f, "gpu"));
    /* The preemption order: stored and answered; a name that is no order
     * is refused with nothing changed. */
    rq.group.selector = NULL;
    rq.group.preempt_order = "oldest";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq,
                         NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "preempt_order 'oldest'"));
    ck_assert_int_eq(db_state(&f), s0);
    rq.group.preempt_order = "newest";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, &rp, &e),
              &e);
    ck_assert_str_eq(rp.groups[0].preempt_order, "newest");
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &rp);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND preempt_order='newest'"), 1);
    /* The NUMA policy of sessions that give none: prefer-single-node until
     * set; a name that is no policy is refused with nothing changed; set,
     * it is stored, answered and what the manager resolves; an update
     * without it keeps it. */
    char np[24];
    SKV_CK_OK(skv__mgr_admin_group_numa(&f.ctx, np, sizeof np, "gpu", &e), &e);
    ck_assert_str_eq(np, "prefer-single-node");
    rq.group.preempt_order = NULL;
    rq.group.numa_policy = "spread";
    s0 = db_state(&f);
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq,
                         NULL, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "numa_policy 'spread'"));
    ck_assert_int_eq(db_state(&f), s0);
    rq.group.numa_policy = "interleaved";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, &rp, &e),
              &e);
    ck_assert_str_eq(rp.groups[0].numa_policy, "interleaved");
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &rp);
    rq.group.numa_policy = NULL;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, &rp, &e),
              &e);
    ck_assert_str_eq(rp.groups[0].numa_policy, "interleaved");
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &rp);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND numa_policy='interleaved'"), 1);
    SKV_CK_OK(skv__mgr_admin_group_numa(&f.ctx, np, sizeof np, "gpu", &e), &e);
    ck_assert_str_eq(np, "interleaved");
    ck_assert_int_eq(skv__mgr_admin_group_numa(&f.ctx, np, sizeof np, "nope",
                                               &e), SKV_ENOENT);
    /* A stored value that is no policy (a hand-edited row) is not passed
     * on to an agent. */
    sql(&f, "UPDATE resource_groups SET numa_policy='x' WHERE name='gpu'");
    /* (by hand means offline: the manager starts again afterwards and
     * keeps no admin answer from before) */
    skv__mgr_store_admin_cache_forget(f.sdb);
    ck_assert_int_eq(skv__mgr_admin_group_numa(&f.ctx, np, sizeof np, "gpu",
                                               &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "stored numa_policy 'x'"));
    sql(&f, "UPDATE resource_groups SET numa_policy='interleaved'");
    SKV_CK_OK(skv_sched_agent_remove(f.sched, "ag1", &e), &e);
    /* Empty: a new scheduler, then delete. */
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_UPDATE, "gpu", "drf", &e), &e);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND scheduler='drf'"), 1);
    ck_assert(sched_has_group(&f, "gpu"));
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_UPDATE, "gpu", "nope", &e),
                     SKV_ENOENT);
    ck_assert(sched_has_group(&f, "gpu"));   /* restored */
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='gpu' AND scheduler='drf'"), 1);
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_DELETE, "gpu", NULL, &e), &e);
    ck_assert(!sched_has_group(&f, "gpu"));
    ck_assert_int_eq(skv__mgr_admin_group(&f.ctx, &gi, "gpu", &e), SKV_ENOENT);
    fx_close(&f);
}
END_TEST

START_TEST(test_policy_limits)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(policy_op(&f, SKV_PROTO_ADMIN_CREATE, "small", "cpu=2", 1, &e),
              &e);
    ck_assert_int_eq(policy_op(&f, SKV_PROTO_ADMIN_CREATE, "small", NULL, 1,
                               &e), SKV_EEXIST);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, "small", &e),
              &e);
    skv__mgr_user_limits lim;
    SKV_CK_OK(skv__mgr_admin_user_limits(&f.ctx, &lim, "bob", &e), &e);
    ck_assert_uint_eq(lim.max_cluster_size, 4);
    ck_assert_uint_eq(lim.max_session_lifetime_ms, 60000);
    SKV_CK_OK(skv__mgr_admin_user_limits(&f.ctx, &lim, "admin", &e), &e);
    ck_assert_uint_eq(lim.max_cluster_size, 0);
    /* max_pending 1: the second pending submission is refused. */
    SKV_CK_OK(submit(&f, "s1", "bob", "default", &e), &e);
    ck_assert_int_eq(submit(&f, "s2", "bob", "default", &e), SKV_ENOSPC);
    uint32_t n_pending = 0;
    SKV_CK_OK(skv_sched_owner_usage(NULL, NULL, &n_pending, f.sched,
                                    SKV_SCHED_SCOPE_USER, "bob", &e), &e);
    ck_assert_uint_eq(n_pending, 1);
    /* UPDATE raises the limit for every user of the policy. */
    SKV_CK_OK(policy_op(&f, SKV_PROTO_ADMIN_UPDATE, "small", "cpu=2", 2, &e),
              &e);
    SKV_CK_OK(submit(&f, "s2", "bob", "default", &e), &e);
    ck_assert_int_eq(submit(&f, "s3", "bob", "default", &e), SKV_ENOSPC);
    /* In use: not deleted. */
    int64_t s0 = db_state(&f);
    ck_assert_int_eq(policy_op(&f, SKV_PROTO_ADMIN_DELETE, "small", NULL, 0,
                               &e), SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "bob"));
    ck_assert_int_eq(db_state(&f), s0);
    /* The user drops the policy: unlimited again. */
    skv_proto_admin_user u;
    memset(&u, 0, sizeof u);
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.name = "bob";
    u.user.resource_policy = "";
    u.user.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    SKV_CK_OK(submit(&f, "s3", "bob", "default", &e), &e);
    /* A key pair's policy applies when the user has none of its own. */
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    skv_proto_admin_keypair k;
    memset(&k, 0, sizeof k);
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = "bob";
    k.keypair.resource_policy = "small";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &k, NULL, &e), &e);
    ck_assert_int_eq(submit(&f, "s4", "bob", "default", &e), SKV_ENOSPC);
    (void)ak;
    /* LIST shows the limits with their slot vector. */
    skv_proto_admin_resource_policy rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_LIST;
    skv_proto_admin_resource_policy_reply rp;
    memset(&rp, 0, sizeof rp);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_POLICY, &rq, &rp,
                  &e), &e);
    ck_assert_uint_eq(rp.n_policies, 1);
    ck_assert_int_eq(skv_slots_get(rp.policies[0].max_slots, "cpu"), 2000);
    ck_assert_uint_eq(rp.policies[0].max_pending_sessions, 2);
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, &rp);
    /* Policies come back after a restart (load into a fresh scheduler). */
    skv_sched_free(f.sched);
    SKV_CK_OK(skv_sched_new(&f.sched, NULL, &e), &e);
    f.ctx.sched = f.sched;
    skv_auth_verifier_free(f.ver);
    SKV_CK_OK(skv_auth_verifier_new(&f.ver, NULL, &e), &e);
    f.ctx.verifier = f.ver;
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(submit(&f, "s1", "bob", "default", &e), &e);
    SKV_CK_OK(submit(&f, "s2", "bob", "default", &e), &e);
    ck_assert_int_eq(submit(&f, "s3", "bob", "default", &e), SKV_ENOSPC);
    fx_close(&f);
}
END_TEST

START_TEST(test_domain_project)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_CREATE, "batch", "fifo", &e), &e);
    skv_proto_admin_domain d;
    memset(&d, 0, sizeof d);
    d.op = SKV_PROTO_ADMIN_CREATE;
    d.domain.name = "lab";
    char *groups[] = {"ghost"};
    d.domain.resource_groups = groups;
    d.domain.n_resource_groups = 1;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, NULL, &e),
                     SKV_ENOENT);
    groups[0] = "batch";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, NULL, &e), &e);
    skv_proto_admin_project p;
    memset(&p, 0, sizeof p);
    p.op = SKV_PROTO_ADMIN_CREATE;
    p.project.name = "p1";
    p.project.domain = "lab";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    p.project.name = "p2";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    /* carol in lab, member of p1. A project of another domain: refused. */
    skv_proto_admin_user u;
    memset(&u, 0, sizeof u);
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = "carol";
    u.user.domain = "lab";
    char *projects[] = {"default"};
    u.user.projects = projects;
    u.user.n_projects = 1;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "domain"));
    projects[0] = "p1";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    SKV_CK_OK(skv__mgr_admin_user_in_project(&f.ctx, "carol", "p1", &e), &e);
    /* Moving to another domain keeps projects only of that domain. */
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.domain = "default";
    u.user.n_projects = 0;
    u.user.active = 1;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "'p1'"));
    u.user.domain = "lab";
    u.user.n_projects = 1;
    SKV_CK_OK(skv__mgr_admin_user_in_project(&f.ctx, "carol", "default", &e),
              &e);
    ck_assert_int_eq(skv__mgr_admin_user_in_project(&f.ctx, "carol", "p2",
                                                    &e), SKV_EPERM);
    ck_assert_ptr_nonnull(strstr(e.message, "carol"));
    ck_assert_ptr_nonnull(strstr(e.message, "p2"));
    ck_assert_int_eq(skv__mgr_admin_user_in_project(&f.ctx, "carol", "p9",
                                                    &e), SKV_ENOENT);
    /* Groups the domain may use. */
    SKV_CK_OK(skv__mgr_admin_group_allows(&f.ctx, "carol", "batch",
                                          "interactive", &e), &e);
    ck_assert_int_eq(skv__mgr_admin_group_allows(&f.ctx, "carol", "default",
                                                 "batch", &e), SKV_EPERM);
    ck_assert_int_eq(skv__mgr_admin_group_allows(&f.ctx, "carol", "nope",
                                                 "batch", &e), SKV_ENOENT);
    SKV_CK_OK(skv__mgr_admin_group_allows(&f.ctx, "admin", "default",
                                          "batch", &e), &e);
    /* Session types of the group. */
    skv_proto_admin_resource_group g;
    memset(&g, 0, sizeof g);
    g.op = SKV_PROTO_ADMIN_UPDATE;
    g.group.name = "batch";
    char *types[] = {"batch"};
    g.group.session_types = types;
    g.group.n_session_types = 1;
    g.group.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g, NULL, &e),
              &e);
    ck_assert_int_eq(skv__mgr_admin_group_allows(&f.ctx, "carol", "batch",
                                                 "interactive", &e),
                     SKV_EPERM);
    SKV_CK_OK(skv__mgr_admin_group_allows(&f.ctx, "carol", "batch", "batch",
                                          &e), &e);
    g.group.active = 0;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g, NULL, &e),
              &e);
    ck_assert_int_eq(skv__mgr_admin_group_allows(&f.ctx, "carol", "batch",
                                                 "batch", &e), SKV_EPERM);
    /* In use: domain with users, project with members. */
    int64_t s0 = db_state(&f);
    d.op = SKV_PROTO_ADMIN_DELETE;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, NULL, &e),
                     SKV_EBUSY);
    ck_assert_ptr_nonnull(strstr(e.message, "carol"));
    p.op = SKV_PROTO_ADMIN_DELETE;
    p.project.name = "p1";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e),
                     SKV_EBUSY);
    ck_assert_int_eq(db_state(&f), s0);
    /* Deactivated users and projects. */
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.n_projects = 0;
    u.user.active = 0;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e), &e);
    ck_assert_int_eq(skv__mgr_admin_user_in_project(&f.ctx, "carol", "p1",
                                                    &e), SKV_EPERM);
    /* Tear down in order: user, projects, domain. */
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_DELETE, "carol", NULL, NULL, &e),
              &e);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    p.project.name = "p2";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, NULL, &e), &e);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM domain_groups WHERE"
                               " domain='lab'"), 0);
    fx_close(&f);
}
END_TEST

START_TEST(test_project_policy)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(policy_op(&f, SKV_PROTO_ADMIN_CREATE, "one", NULL, 1, &e), &e);
    skv_proto_admin_project p;
    memset(&p, 0, sizeof p);
    p.op = SKV_PROTO_ADMIN_UPDATE;
    p.project.name = "default";
    p.project.resource_policy = "one";
    p.project.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    SKV_CK_OK(submit(&f, "s1", "admin", "default", &e), &e);
    ck_assert_int_eq(submit(&f, "s2", "admin", "default", &e), SKV_ENOSPC);
    p.project.resource_policy = "";
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e), &e);
    SKV_CK_OK(submit(&f, "s2", "admin", "default", &e), &e);
    p.project.resource_policy = "missing";
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, NULL, &e),
                     SKV_ENOENT);
    fx_close(&f);
}
END_TEST

/* The scheduler refuses the change: the transaction is rolled back and the
 * scheduler keeps the old policy. */
START_TEST(test_rollback_on_sched_failure)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(policy_op(&f, SKV_PROTO_ADMIN_CREATE, "small", NULL, 1, &e),
              &e);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, "small", &e),
              &e);
    /* More slot names than the scheduler holds: refused up front... */
    char text[512] = "";
    for (int i = 0; i < SKV_SCHED_SLOTS_MAX + 4; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%sx%d=1",
                 i ? "," : "", i);
    ck_assert_int_eq(policy_op(&f, SKV_PROTO_ADMIN_CREATE, "huge", text, 0,
                               &e), SKV_ERANGE);
    /* ...and when such a row exists anyway, applying it fails in the
     * scheduler and the user keeps its policy. */
    skv_slots *v = NULL;
    SKV_CK_OK(skv_slots_parse(&v, text, NULL, &e), &e);
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_slots_encode(&buf, &len, v, &e), &e);
    sqlite3_stmt *q;
    ck_assert_int_eq(sqlite3_prepare_v2(f.db, "INSERT INTO resource_policies"
        " (name, max_slots) VALUES ('huge', ?1)", -1, &q, NULL), 0);
    sqlite3_bind_blob(q, 1, buf, (int)len, SQLITE_TRANSIENT);
    ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
    sqlite3_finalize(q);
    skv_free(buf);
    skv_slots_free(v);
    int64_t s0 = db_state(&f);
    skv_proto_admin_user u;
    memset(&u, 0, sizeof u);
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.name = "bob";
    u.user.resource_policy = "huge";
    u.user.active = 1;
    ck_assert_int_eq(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, NULL, &e),
                     SKV_ERANGE);
    ck_assert_ptr_nonnull(strstr(e.message, "at most"));
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM users WHERE name='bob'"
                               " AND resource_policy='small'"), 1);
    SKV_CK_OK(submit(&f, "s1", "bob", "default", &e), &e);
    ck_assert_int_eq(submit(&f, "s2", "bob", "default", &e), SKV_ENOSPC);
    ck_assert(sqlite3_get_autocommit(f.db));   /* no transaction left open */
    fx_close(&f);
}
END_TEST

START_TEST(test_lists)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, "a1");
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL, &e), &e);
    SKV_CK_OK(key_create(&f, "bob", ak, NULL, &e), &e);
    SKV_CK_OK(key_create(&f, "bob", ak, NULL, &e), &e);
    skv_proto_admin_keypair k;
    memset(&k, 0, sizeof k);
    k.op = SKV_PROTO_ADMIN_LIST;
    k.keypair.user = "bob";
    skv_proto_admin_keypair_reply kr;
    memset(&kr, 0, sizeof kr);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e), &e);
    ck_assert_uint_eq(kr.n_keypairs, 2);
    ck_assert_str_eq(kr.keypairs[1].user, "bob");
    ck_assert_int_eq(kr.keypairs[1].created_ms, NOW);
    ck_assert_int_eq(kr.keypairs[1].active, 1);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
    skv_proto_admin_domain d;
    memset(&d, 0, sizeof d);
    d.op = SKV_PROTO_ADMIN_LIST;
    skv_proto_admin_domain_reply dr;
    memset(&dr, 0, sizeof dr);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, &dr, &e), &e);
    ck_assert_uint_eq(dr.n_domains, 1);
    ck_assert_str_eq(dr.domains[0].name, "default");
    ck_assert_uint_eq(dr.domains[0].n_resource_groups, 1);
    ck_assert_str_eq(dr.domains[0].resource_groups[0], "default");
    skv_proto_body_free(SKV_PROTO_ADMIN_DOMAIN_REPLY, &dr);
    /* UPDATE with an empty group list keeps the groups. */
    d.op = SKV_PROTO_ADMIN_UPDATE;
    d.domain.name = "default";
    d.domain.description = "home";
    d.domain.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_DOMAIN, &d, &dr, &e), &e);
    ck_assert_str_eq(dr.domains[0].description, "home");
    ck_assert_uint_eq(dr.domains[0].n_resource_groups, 1);
    skv_proto_body_free(SKV_PROTO_ADMIN_DOMAIN_REPLY, &dr);
    skv_proto_admin_project p;
    memset(&p, 0, sizeof p);
    p.op = SKV_PROTO_ADMIN_LIST;
    p.project.domain = "default";
    skv_proto_admin_project_reply pr;
    memset(&pr, 0, sizeof pr);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &p, &pr, &e), &e);
    ck_assert_uint_eq(pr.n_projects, 1);
    ck_assert_str_eq(pr.projects[0].domain, "default");
    skv_proto_body_free(SKV_PROTO_ADMIN_PROJECT_REPLY, &pr);
    skv_proto_admin_resource_group g;
    memset(&g, 0, sizeof g);
    g.op = SKV_PROTO_ADMIN_LIST;
    skv_proto_admin_resource_group_reply gr;
    memset(&gr, 0, sizeof gr);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g, &gr, &e),
              &e);
    ck_assert_uint_eq(gr.n_groups, 1);
    ck_assert_str_eq(gr.groups[0].scheduler, "fifo");
    ck_assert_str_eq(gr.groups[0].lost_batch_policy, "requeue");
    ck_assert_uint_eq(gr.groups[0].n_session_types, 0);
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &gr);
    /* DELETE replies with the deleted object. */
    skv_proto_admin_user u;
    memset(&u, 0, sizeof u);
    u.op = SKV_PROTO_ADMIN_DELETE;
    u.user.name = "bob";
    skv_proto_admin_user_reply ur;
    memset(&ur, 0, sizeof ur);
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    ck_assert_uint_eq(ur.n_users, 1);
    ck_assert_str_eq(ur.users[0].name, "bob");
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    fx_close(&f);
}
END_TEST

/* Called inside the core's transaction, the change nests as a savepoint:
 * it is undone with the outer transaction, and a refused change leaves the
 * outer transaction open and untouched. */
START_TEST(test_nested_transaction)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    int64_t s0 = db_state(&f);
    ck_assert_int_eq(sqlite3_exec(f.db, "BEGIN", NULL, NULL, NULL), 0);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", NULL, NULL, &e), &e);
    ck_assert_int_eq(user_op(&f, SKV_PROTO_ADMIN_CREATE, "x y", NULL, NULL,
                             &e), SKV_EINVAL);
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_CREATE, "odd", "nope", &e),
                     SKV_ENOENT);
    ck_assert(!sqlite3_get_autocommit(f.db));
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM users WHERE"
                               " name='bob'"), 1);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='odd'"), 0);
    ck_assert_int_eq(sqlite3_exec(f.db, "ROLLBACK", NULL, NULL, NULL), 0);
    ck_assert_int_eq(db_state(&f), s0);
    fx_close(&f);
}
END_TEST

/* A stale key file (left by an earlier database, readable by others) is
 * replaced by the new key with mode 0600. */
START_TEST(test_stale_keyfile)
{
    fx f;
    fx_open(&f);
    char p[256];
    snprintf(p, sizeof p, "%s/agents", f.dir);
    ck_assert_int_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof p, "%s/agents/a5.key", f.dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "junk\n", 5), 5);
    close(fd);
    ck_assert_int_eq(chmod(p, 0644), 0);
    fx_boot(&f, "a5");
    check_keyfile(&f, "agents/a5.key", "a5");
    fx_close(&f);
}
END_TEST

/* A group with a live session (no agent) cannot go either. */
START_TEST(test_group_busy_session)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_CREATE, "q", NULL, &e), &e);
    SKV_CK_OK(submit(&f, "s1", "admin", "q", &e), &e);
    ck_assert_int_eq(group_op(&f, SKV_PROTO_ADMIN_DELETE, "q", NULL, &e),
                     SKV_EBUSY);
    ck_assert(sched_has_group(&f, "q"));
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " name='q'"), 1);
    SKV_CK_OK(skv_sched_cancel(f.sched, "s1", NOW, &e), &e);
    SKV_CK_OK(group_op(&f, SKV_PROTO_ADMIN_DELETE, "q", NULL, &e), &e);
    ck_assert(!sched_has_group(&f, "q"));
    fx_close(&f);
}
END_TEST

/* Create (op CREATE) or update user `name` with the one project given. */
static int member_op(fx *f, uint32_t op, const char *name,
                     const char *project, skv_error *e)
{
    char *projects[1] = {(char *)project};
    skv_proto_admin_user rq;
    memset(&rq, 0, sizeof rq);
    rq.op = op;
    rq.user.name = (char *)name;
    rq.user.projects = projects;
    rq.user.n_projects = 1;
    rq.user.active = 1;
    return adm(f, &f->admin, SKV_PROTO_ADMIN_USER, &rq, NULL, e);
}

static int64_t count_of(fx *f, const char *table, const char *col,
                        const char *name)
{
    char q[160];
    snprintf(q, sizeof q, "SELECT count(*) FROM %s WHERE \"%s\"='%s'", table,
             col, name);
    return count(f, q);
}

/* A change of several rows that fails part-way (a fault injected with a
 * trigger) leaves none of them, leaves the verifier as it was, closes its
 * transaction (or, inside the caller's, only its savepoint), and leaves
 * the store's cached statements reusable: once the fault is gone the same
 * change goes through. */
START_TEST(test_failed_write_leaves_nothing)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, NULL);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    skv_proto_admin_project pj;
    memset(&pj, 0, sizeof pj);
    pj.op = SKV_PROTO_ADMIN_CREATE;
    pj.project.name = "p1";
    pj.project.active = 1;
    SKV_CK_OK(adm(&f, &f.admin, SKV_PROTO_ADMIN_PROJECT, &pj, NULL, &e), &e);
    SKV_CK_OK(member_op(&f, SKV_PROTO_ADMIN_CREATE, "bob", "p1", &e), &e);
    char ak[SKV_AUTH_ACCESS_KEY_MAX], sk[SKV_AUTH_SECRET_KEY_MAX];
    SKV_CK_OK(key_create(&f, "bob", ak, sk, &e), &e);
    int64_t s0 = db_state(&f);
    /* DELETE removes the user's keys, memberships, then the user: the
     * last write fails. */
    sql(&f, "CREATE TRIGGER no_user_delete BEFORE DELETE ON users"
            " BEGIN SELECT RAISE(ABORT, 'injected fault'); END");
    ck_assert_int_lt(user_op(&f, SKV_PROTO_ADMIN_DELETE, "bob", NULL, NULL,
                             &e), 0);
    ck_assert_ptr_nonnull(strstr(e.message, "injected fault"));
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert_int_eq(count_of(&f, "keypairs", "user", "bob"), 1);
    ck_assert_int_eq(count_of(&f, "user_projects", "user", "bob"), 1);
    ck_assert(sqlite3_get_autocommit(f.db));
    skv_auth_principal who;
    ck_assert_int_eq(verify_with(&f, ak, sk, &who, 1), 0);
    ck_assert_str_eq(who.user, "bob");
    /* CREATE writes the user, then its memberships: the second fails. */
    sql(&f, "DROP TRIGGER no_user_delete;"
            " CREATE TRIGGER no_member BEFORE INSERT ON user_projects"
            " BEGIN SELECT RAISE(ABORT, 'injected fault'); END");
    ck_assert_int_lt(member_op(&f, SKV_PROTO_ADMIN_CREATE, "carol", "p1",
                               &e), 0);
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert_int_eq(count_of(&f, "users", "name", "carol"), 0);
    ck_assert(sqlite3_get_autocommit(f.db));
    /* Inside the caller's transaction: back to the savepoint, the
     * caller's earlier change kept and its transaction still open. */
    sql(&f, "BEGIN");
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_CREATE, "dave", NULL, NULL, &e),
              &e);
    ck_assert_int_lt(member_op(&f, SKV_PROTO_ADMIN_CREATE, "carol", "p1",
                               &e), 0);
    ck_assert(!sqlite3_get_autocommit(f.db));
    ck_assert_int_eq(count_of(&f, "users", "name", "dave"), 1);
    ck_assert_int_eq(count_of(&f, "users", "name", "carol"), 0);
    sql(&f, "ROLLBACK");
    ck_assert_int_eq(db_state(&f), s0);
    /* The fault gone, the same changes go through. */
    sql(&f, "DROP TRIGGER no_member");
    SKV_CK_OK(member_op(&f, SKV_PROTO_ADMIN_CREATE, "carol", "p1", &e), &e);
    ck_assert_int_eq(count_of(&f, "user_projects", "user", "carol"), 1);
    SKV_CK_OK(user_op(&f, SKV_PROTO_ADMIN_DELETE, "bob", NULL, NULL, &e), &e);
    ck_assert_int_eq(count_of(&f, "keypairs", "user", "bob"), 0);
    ck_assert_int_eq(count_of(&f, "user_projects", "user", "bob"), 0);
    ck_assert_int_ne(verify_with(&f, ak, sk, &who, 2), 0);
    fx_close(&f);
}
END_TEST

/* The admin tables are the "admin" component of the versioned schema: a
 * database from before versions were recorded (admin tables with rows, no
 * schema_version) is taken as version 1 with its rows; a newer one is
 * refused and left alone. */
START_TEST(test_admin_migration)
{
    fx f;
    fx_open(&f);
    skv_error e = SKV_ERROR_INIT;
    fx_boot(&f, "a1");
    int v = 0;
    SKV_CK_OK(skv__mgr_store_schema_version(f.sdb, "admin", &v, &e), &e);
    ck_assert_int_eq(v, 6);
    int64_t s0 = db_state(&f);
    sql(&f, "DROP TABLE schema_version");
    /* As such a database was: without the columns steps 2, 4, 5 and 6
     * add. */
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN preemption");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN preempt_min_runtime_ms");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN preempt_mode");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN idle_timeout_ms");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN max_lifetime_ms");
    sql(&f, "ALTER TABLE resource_policies DROP COLUMN idle_timeout_ms");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN preempt_order");
    sql(&f, "ALTER TABLE resource_groups DROP COLUMN numa_policy");
    SKV_CK_OK(skv__mgr_store_admin_schema(f.sdb, &e), &e);
    SKV_CK_OK(skv__mgr_store_schema_version(f.sdb, "admin", &v, &e), &e);
    ck_assert_int_eq(v, 6);
    ck_assert_int_eq(count(&f, "SELECT count(*) FROM resource_groups WHERE"
                               " numa_policy='prefer-single-node'"),
                     count(&f, "SELECT count(*) FROM resource_groups"));
    ck_assert_int_eq(db_state(&f), s0);
    SKV_CK_OK(skv__mgr_admin_load(&f.ctx, &e), &e);
    ck_assert_uint_eq(skv_auth_verifier_key_count(f.ver), 2);
    sql(&f, "UPDATE schema_version SET version=7 WHERE component='admin'");
    ck_assert_int_eq(skv__mgr_store_admin_schema(f.sdb, &e), SKV_EVERSION);
    ck_assert_int_eq(db_state(&f), s0);
    ck_assert(sqlite3_get_autocommit(f.db));
    fx_close(&f);
}
END_TEST

Suite *skv_test_suite_manager_admin(void);
Suite *skv_test_suite_manager_admin(void)
{
    Suite *s = suite_create("manager_admin");
    TCase *tc = tcase_create("admin");
    tcase_add_test(tc, test_bootstrap_idempotent);
    tcase_add_test(tc, test_load_and_verify);
    tcase_add_test(tc, test_non_admin_refused);
    tcase_add_test(tc, test_user_crud);
    tcase_add_test(tc, test_user_validation);
    tcase_add_test(tc, test_keypair_lifecycle);
    tcase_add_test(tc, test_keypair_import_and_self);
    tcase_add_test(tc, test_group_crud);
    tcase_add_test(tc, test_policy_limits);
    tcase_add_test(tc, test_domain_project);
    tcase_add_test(tc, test_project_policy);
    tcase_add_test(tc, test_rollback_on_sched_failure);
    tcase_add_test(tc, test_lists);
    tcase_add_test(tc, test_nested_transaction);
    tcase_add_test(tc, test_stale_keyfile);
    tcase_add_test(tc, test_group_busy_session);
    tcase_add_test(tc, test_failed_write_leaves_nothing);
    tcase_add_test(tc, test_admin_migration);
    suite_add_tcase(s, tc);
    return s;
}
