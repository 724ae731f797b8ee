/* The manager's vfolder requests driven in-process (no daemons, no root
 * needed for the default "local" host without quotas): every op and its
 * refusals, uploads begun, broken off (connection closed) and resumed,
 * a hash mismatch that replaces nothing, ranged downloads. Under
 * ASan/UBSan this is where a leak on an error path would show.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"

#define T0 1700000000000LL
#define OUT_MAX 64
#define ADMIN 2
#define USER2 3

typedef struct out_frame {
    uint64_t conn;
    uint8_t *buf;
    size_t len;
} out_frame;

static out_frame outq[OUT_MAX];
static size_t n_out;
static char dir[64];
static uint64_t next_id = 100;
static int64_t now = T0;

typedef struct cred {
    char ak[64];
    char sk[128];
} cred;

static int send_cb(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)p;
    ck_assert_uint_lt(n_out, OUT_MAX);
    outq[n_out].conn = conn;
    outq[n_out].buf = malloc(len);
    memcpy(outq[n_out].buf, frame, len);
    outq[n_out++].len = len;
    return 0;
}

static void out_clear(void)
{
    for (size_t i = 0; i < n_out; i++)
        free(outq[i].buf);
    n_out = 0;
}

static skv_manager *open_mgr(void)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, now, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "test-admin", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, USER2, "test-user", &e), &e);
    return m;
}

static void read_key(cred *c)
{
    char path[256], line[256];
    snprintf(path, sizeof path, "%s/admin.key", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    memset(c, 0, sizeof *c);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "access_key=", 11))
            snprintf(c->ak, sizeof c->ak, "%s", line + 11);
        if (!strncmp(line, "secret_key=", 11))
            snprintf(c->sk, sizeof c->sk, "%s", line + 11);
    }
    fclose(f);
}

/* Signed request; the reply (or error) decoded into reply / *code. */
static int call(skv_manager *m, uint64_t conn, const cred *c,
                skv_proto_type type, const void *body, void *reply,
                char *msg, size_t cap)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    skv_proto_credentials pc = {c->ak, c->sk};
    now += 1;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST,
                                       ++next_id, type, body, now, &pc, &e),
              &e);
    int rc = skv_manager_handle_frame(m, conn, (uint8_t *)frame + 4, len - 4,
                                      now, &e);
    skv_free(frame);
    ck_assert_int_eq(rc, 0);
    SKV_CK_OK(skv_manager_flush(m, now, &e), &e);
    ck_assert_uint_eq(n_out, 1);
    skv_proto_envelope env;
    SKV_CK_OK(skv_proto_envelope_decode(&env, outq[0].buf + 4,
                                        outq[0].len - 4, &e), &e);
    int code = 0;
    if (env.type == SKV_PROTO_ERROR) {
        skv_proto_error er = {0};
        SKV_CK_OK(skv_proto_body_decode(&er, env.type, env.body, env.body_len,
                                        &e), &e);
        code = er.code ? er.code : -1;
        if (msg)
            snprintf(msg, cap, "%s", er.message ? er.message : "");
        skv_proto_body_free(SKV_PROTO_ERROR, &er);
    } else {
        ck_assert_int_eq(env.type, skv_proto_type_reply(type));
        if (reply)
            SKV_CK_OK(skv_proto_body_decode(reply, env.type, env.body,
                                            env.body_len, &e), &e);
    }
    skv_proto_envelope_free(&env);
    out_clear();
    return code;
}

static int vf(skv_manager *m, const cred *c, skv_proto_vfolder *q,
              skv_proto_vfolder_reply *r)
{
    skv_proto_vfolder_reply tmp = {0};
    int rc = call(m, ADMIN, c, SKV_PROTO_VFOLDER, q, r ? r : &tmp, NULL, 0);
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &tmp);
    return rc;
}

/* begin's verify flag (hash what is stored, so commit can check sha256) */
static bool up_verify = true;

static int up(skv_manager *m, uint64_t conn, const cred *c, const char *op,
              uint64_t off, const void *data, size_t n, const uint8_t *sha,
              uint64_t *got)
{
    skv_proto_vfolder_upload q = {0};
    skv_proto_vfolder_upload_reply r = {0};
    q.op = (char *)op;
    q.folder = "data";
    q.path = "f.bin";
    q.upload_id = "u1";
    q.offset = off;
    q.data = (uint8_t *)data;
    q.data_len = n;
    q.sha256 = (uint8_t *)sha;
    q.sha256_len = sha ? 32 : 0;
    q.resume = 1;
    q.verify = up_verify;
    int rc = call(m, conn, c, SKV_PROTO_VFOLDER_UPLOAD, &q, &r, NULL, 0);
    if (got)
        *got = r.offset;
    skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &r);
    return rc;
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-mvf-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    out_clear();
}

START_TEST(test_folder_ops)
{
    setup();
    skv_manager *m = open_mgr();
    cred ad;
    read_key(&ad);
    skv_proto_vfolder q = {0};
    skv_proto_vfolder_reply r = {0};
    q.op = "create";
    q.name = "data";
    ck_assert_int_eq(vf(m, &ad, &q, &r), 0);
    ck_assert_uint_eq(r.n_folders, 1);
    ck_assert_str_eq(r.folders[0].host, "local");
    ck_assert_str_eq(r.folders[0].perm, "owner");
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_EEXIST);
    q.quota_bytes = 1 << 20;       /* "local" has quota=none */
    q.name = "limited";
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_ENOTSUP);
    q.quota_bytes = 0;
    const char *bad[] = {"../x", "", ".hidden", "f-123", "a/b"};
    for (size_t i = 0; i < 5; i++) {
        q.name = (char *)bad[i];
        ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_EINVAL);
    }
    q.name = "x";
    q.host = "nohost";
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_ENOENT);
    q = (skv_proto_vfolder){0};
    q.op = "frobnicate";
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_EINVAL);
    /* clone, rename, list, share to an unknown user, delete, purge */
    q = (skv_proto_vfolder){"clone", "data", "copy"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), 0);
    q = (skv_proto_vfolder){"rename", "copy", "copy2"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), 0);
    q = (skv_proto_vfolder){"rename", "copy2", "data"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_EEXIST);
    q = (skv_proto_vfolder){"share", "data"};
    q.user = "nobody-here";
    ck_assert_int_ne(vf(m, &ad, &q, NULL), 0);
    q.user = "admin";              /* the owner */
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_EINVAL);
    q = (skv_proto_vfolder){"list"};
    ck_assert_int_eq(vf(m, &ad, &q, &r), 0);
    ck_assert_uint_eq(r.n_folders, 2);
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    q = (skv_proto_vfolder){"delete", "copy2"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), 0);
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_ENOENT);
    q = (skv_proto_vfolder){"list"};
    q.trash = 1;
    ck_assert_int_eq(vf(m, &ad, &q, &r), 0);
    ck_assert_uint_eq(r.n_folders, 1);
    ck_assert_str_eq(r.folders[0].status, "trash");
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    q = (skv_proto_vfolder){"purge", "copy2"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), 0);
    ck_assert_int_eq(vf(m, &ad, &q, NULL), SKV_ENOENT);
    skv_manager_free(m);
    teardown();
}
END_TEST

START_TEST(test_upload_download)
{
    setup();
    skv_manager *m = open_mgr();
    cred ad;
    read_key(&ad);
    skv_proto_vfolder q = {"create", "data"};
    ck_assert_int_eq(vf(m, &ad, &q, NULL), 0);
    enum { N = 300000 };
    uint8_t *buf = malloc(N), sha[32], bad[32];
    for (size_t i = 0; i < N; i++)
        buf[i] = (uint8_t)(i * 7);
    crypto_hash_sha256(sha, buf, N);
    memset(bad, 0, sizeof bad);
    uint64_t off = 0;
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 0, buf, 10, NULL, NULL),
                     SKV_ENOENT);  /* not begun */
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_uint_eq(off, 0);
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 0, buf, 100000, NULL, &off),
                     0);
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 5, buf, 10, NULL, NULL),
                     SKV_ERANGE);
    /* the connection breaks: the temp file stays for a resumed begin */
    skv_manager_conn_close(m, ADMIN, now);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "again", &e), &e);
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_uint_eq(off, 100000);
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", off, buf + off, N - off,
                        NULL, &off), 0);
    ck_assert_uint_eq(off, N);
    /* a wrong hash publishes nothing */
    ck_assert_int_eq(up(m, ADMIN, &ad, "commit", 0, NULL, 0, bad, NULL),
                     SKV_EPROTO);
    skv_proto_vfolder_file f = {"stat", "data", "f.bin"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, NULL,
                          NULL, 0), SKV_ENOENT);
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_uint_eq(off, 0);     /* the refused content went */
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 0, buf, N, NULL, &off), 0);
    ck_assert_int_eq(up(m, ADMIN, &ad, "commit", 0, NULL, 0, sha, NULL), 0);
    /* ranged reads */
    skv_proto_vfolder_download d = {"data", "f.bin", 1000, 5000};
    skv_proto_vfolder_download_reply dr = {0};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_DOWNLOAD, &d, &dr,
                          NULL, 0), 0);
    ck_assert_uint_eq(dr.data_len, 5000);
    ck_assert_uint_eq(dr.file_size, N);
    ck_assert(!dr.eof);
    ck_assert_int_eq(memcmp(dr.data, buf + 1000, 5000), 0);
    skv_proto_body_free(SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, &dr);
    d.offset = N + 1;
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_DOWNLOAD, &d, &dr,
                          NULL, 0), SKV_ERANGE);
    d.offset = 0;
    d.max_bytes = 64u << 20;
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_DOWNLOAD, &d, &dr,
                          NULL, 0), SKV_ERANGE);
    /* file ops and their refusals */
    skv_proto_vfolder_file_reply fr = {0};
    f = (skv_proto_vfolder_file){"sha256", "data", "f.bin"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, &fr,
                          NULL, 0), 0);
    ck_assert_uint_eq(fr.sha256_len, 32);
    ck_assert_int_eq(memcmp(fr.sha256, sha, 32), 0);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &fr);
    f = (skv_proto_vfolder_file){"mkdir", "data", "d"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, NULL,
                          NULL, 0), 0);
    f = (skv_proto_vfolder_file){"mv", "data", "f.bin", "d/g.bin"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, NULL,
                          NULL, 0), 0);
    f = (skv_proto_vfolder_file){"ls", "data", "d"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, &fr,
                          NULL, 0), 0);
    ck_assert_uint_eq(fr.n_entries, 1);
    ck_assert_str_eq(fr.entries[0].name, "g.bin");
    ck_assert_uint_eq(fr.entries[0].size, N);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &fr);
    const char *esc[] = {"../x", "/etc", "d/../../x"};
    for (size_t i = 0; i < 3; i++) {
        f = (skv_proto_vfolder_file){"ls", "data", (char *)esc[i]};
        ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f,
                              NULL, NULL, 0), SKV_EPERM);
    }
    f = (skv_proto_vfolder_file){"chmod", "data", "d"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, NULL,
                          NULL, 0), SKV_EINVAL);
    f = (skv_proto_vfolder_file){"rm", "data", "d", NULL, 1};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, NULL,
                          NULL, 0), 0);
    /* begun without verify: nothing is hashed, so a sha256 to check is
     * refused (the upload stays open); a plain commit publishes the file
     * and answers without a hash */
    up_verify = false;
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 0, buf, 1000, NULL, &off),
                     0);
    char why[256];
    skv_proto_vfolder_upload cq = {"commit", "data", "f.bin", "u1"};
    cq.sha256 = sha;
    cq.sha256_len = 32;
    skv_proto_vfolder_upload_reply ur = {0};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_UPLOAD, &cq, &ur,
                          why, sizeof why), SKV_EINVAL);
    ck_assert_msg(strstr(why, "verify"), "%s", why);
    cq.sha256 = NULL;
    cq.sha256_len = 0;
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_UPLOAD, &cq, &ur,
                          NULL, 0), 0);
    ck_assert_uint_eq(ur.offset, 1000);
    ck_assert_uint_eq(ur.sha256_len, 0);
    skv_proto_body_free(SKV_PROTO_VFOLDER_UPLOAD_REPLY, &ur);
    f = (skv_proto_vfolder_file){"stat", "data", "f.bin"};
    ck_assert_int_eq(call(m, ADMIN, &ad, SKV_PROTO_VFOLDER_FILE, &f, &fr,
                          NULL, 0), 0);
    ck_assert_uint_eq(fr.entries[0].size, 1000);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &fr);
    up_verify = true;
    /* an upload left open when the manager goes keeps its temp file */
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_int_eq(up(m, ADMIN, &ad, "write", 0, buf, 10, NULL, &off), 0);
    skv_manager_free(m);
    m = open_mgr();
    ck_assert_int_eq(up(m, ADMIN, &ad, "begin", 0, NULL, 0, NULL, &off), 0);
    ck_assert_uint_eq(off, 10);
    ck_assert_int_eq(up(m, ADMIN, &ad, "abort", 0, NULL, 0, NULL, NULL), 0);
    free(buf);
    skv_manager_free(m);
    teardown();
}
END_TEST

Suite *skv_test_suite_manager_vfolder(void);
Suite *skv_test_suite_manager_vfolder(void)
{
    Suite *s = suite_create("manager_vfolder");
    TCase *tc = tcase_create("manager_vfolder");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_folder_ops);
    tcase_add_test(tc, test_upload_download);
    suite_add_tcase(s, tc);
    return s;
}
