/* End-to-end: virtual folders through the real daemons (issue 18). A
 * loopback btrfs with quotas (tests/storage_fixture.h) is the manager's
 * storage host "vol"; a plain directory is host "loc" (quota=none, not
 * shared). Folders are made, shared and filled through the manager and
 * mounted into busybox sessions on a real agent:
 *   basic    create/list/share/accept/revoke; ro and rw shares enforced
 *            inside containers (and at submit); EDQUOT past the quota
 *            inside a container, usage reported; traversal refused in
 *            every operation and at mount; a mounted folder cannot be
 *            deleted; data survives the session's end and a manager
 *            restart; a multi-node session with a folder on an unshared
 *            host is refused before placement.
 *   multinode a two-kernel session on two agents shares one folder of the
 *            shared host.
 *   transfer 1 GiB (sparse, random blocks) up and down with the `sokovan`
 *            CLI, sha256 checked end to end (the MB/s go to stderr); in
 *            between a session writes beside it, the agent and then the
 *            manager are killed with SIGKILL and restarted, and a new
 *            session sees the files; a resumed download.
 *   killed   kill -9 of the manager in the middle of an upload that
 *            replaces a file: the old file is intact, never a torn one;
 *            after a restart `upload --resume` finishes the new one.
 * Needs root, busybox, btrfs-progs and the daemons in <build>/bin;
 * otherwise each test says why it is skipped.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "skv_test.h"
#include "e2e_cluster.h"
#include "storage_fixture.h"

static e2e_cluster g;
static const char *g_skip;
static char g_loc[PATH_MAX];

static void vf_setup(void)
{
    g.root[0] = '\0';
    g_skip = e2e_prepare(&g, skv_test_build_dir());
    if (!g_skip) {
        stfx_setup_size("2G");
        g_skip = stfx_skip;
    }
    snprintf(g_loc, sizeof(g_loc), "%s/loc", g.root);
    mkdir(g_loc, 0755);
}

static void vf_teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
    stfx_teardown();
}

#define E2E_REQUIRE()                                                          \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: SKIP: %s\n", __func__, g_skip);               \
            return;                                                            \
        }                                                                      \
    } while (0)

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* e2e_start_manager with the two storage hosts. */
static void start_manager(void)
{
    char exe[PATH_MAX + 32], key[PATH_MAX + 16], vol[PATH_MAX + 32];
    char loc[PATH_MAX + 48];
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g.bin);
    snprintf(key, sizeof(key), "%s/admin.key", g.data);
    snprintf(vol, sizeof(vol), "vol=%s,quota=btrfs", stfx_mnt);
    snprintf(loc, sizeof(loc), "loc=%s,quota=none,shared=no", g_loc);
    char *const argv[] = {exe, "--data-dir", g.data, "--listen", g.sock,
                          "--tcp", "none", "--bootstrap-agents", "a1,a2",
                          "--heartbeat-interval-ms", "500",
                          "--storage-host", vol, "--storage-host", loc, NULL};
    unlink(g.sock);
    g.mgr = e2e_spawn(&g, "manager", argv);
    ck_assert_int_gt(g.mgr, 0);
    for (int64_t end = e2e_now_ms() + 15000; e2e_now_ms() < end;) {
        if (!e2e_alive(g.mgr)) {
            char tail[400];
            e2e_log_tail(&g, "manager", tail, sizeof(tail));
            ck_abort_msg("sokovan-manager exited: %s", tail);
        }
        if (e2e_file_exists(g.sock) && e2e_file_exists(key))
            break;
        e2e_sleep_ms(20);
    }
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_client_read_keyfile(g.admin_ak, g.admin_sk, key, &e), &e);
}

static void cluster_up(skv_client **admin)
{
    start_manager();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(g.agent_cpus[0], sizeof(g.agent_cpus[0]), "0-%ld",
             n > 1 ? n - 1 : 0);
    E2E_OK(e2e_start_agent(&g, 0));
    E2E_OK(e2e_connect(&g, admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, *admin, 1));
}

/* A user with a keypair: a client as them and a CLI key file. */
static void user_client(skv_client *admin, const char *name, skv_client **cl)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = (char *)name;
    u.user.role = "user";
    u.user.active = 1;
    skv_proto_admin_user_reply ur = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_USER, &u, &ur, &e), &e);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER_REPLY, &ur);
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = (char *)name;
    k.keypair.active = 1;
    skv_proto_admin_keypair_reply kr = {0};
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_ADMIN_KEYPAIR, &k, &kr, &e),
              &e);
    ck_assert_uint_eq(kr.n_keypairs, 1);
    E2E_OK(e2e_connect(&g, cl, kr.keypairs[0].access_key,
                       kr.keypairs[0].secret_key));
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
}

/* One "vfolder" request; the reply's first folder id into id (may be
 * NULL). arg: new name or user; host: the host, or share's perm.
 * Returns the client's code, message in e. */
static int vf(skv_client *cl, const char *op, const char *name,
              const char *arg, const char *host, uint64_t quota, char *id,
              skv_error *e)
{
    skv_proto_vfolder q = {0};
    skv_proto_vfolder_reply r = {0};
    q.op = (char *)op;
    q.name = (char *)name;
    q.host = (char *)host;
    q.quota_bytes = quota;
    if (!strcmp(op, "rename") || !strcmp(op, "clone"))
        q.new_name = (char *)arg;
    if (!strcmp(op, "share") || !strcmp(op, "revoke"))
        q.user = (char *)arg;
    if (!strcmp(op, "share"))
        q.perm = (char *)host, q.host = NULL;
    int rc = skv_client_call(cl, SKV_PROTO_VFOLDER, &q, &r, e);
    if (!rc && id && r.n_folders)
        snprintf(id, 64, "%s", r.folders[0].id);
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    return rc;
}

static int vf_file(skv_client *cl, const char *op, const char *folder,
                   const char *path, skv_error *e)
{
    skv_proto_vfolder_file q = {0};
    skv_proto_vfolder_file_reply r = {0};
    q.op = (char *)op;
    q.folder = (char *)folder;
    q.path = (char *)path;
    int rc = skv_client_call(cl, SKV_PROTO_VFOLDER_FILE, &q, &r, e);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &r);
    return rc;
}

/* Submit a one-kernel session of owner's client with one mount. */
static int submit_mount(skv_client *cl, char *sid, const char *script,
                        const char *folder, const char *target, bool ro,
                        uint32_t cluster, skv_error *e)
{
    skv_slots *req = NULL;
    /* a gang of 0.6-CPU kernels does not fit one 1-CPU agent */
    int rc = skv_slots_parse(&req, cluster > 1 ? "cpu=0.6,mem=64m"
                                               : "cpu=0.1,mem=64m", NULL, e);
    if (rc)
        return rc;
    char *cmd[] = {"sh", "-c", (char *)script};
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_mount m = {(char *)folder, (char *)target, ro, NULL, NULL};
    skv_proto_session_submit s = {0};
    s.session_type = "batch";
    s.cluster_mode = cluster > 1 ? "multi-node" : "single-node";
    s.cluster_size = cluster ? cluster : 1;
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 3;
    s.kernels = &k;
    s.n_kernels = 1;
    s.mounts = &m;
    s.n_mounts = 1;
    skv_proto_session_ref ref = {0};
    rc = skv_client_submit(cl, &ref, &s, e);
    if (!rc)
        snprintf(sid, E2E_ID_MAX, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
    return rc;
}

/* Run a session to its end; its stdout into out. */
static void run_session(skv_client *cl, const char *script,
                        const char *folder, bool ro, char *out, size_t cap)
{
    char sid[E2E_ID_MAX];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(submit_mount(cl, sid, script, folder, NULL, ro, 1, &e), &e);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, cl, sid, 60000, &r));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    SKV_CK_OK(e2e_logs(cl, sid, NULL, out, cap, &e), &e);
}

static void folder_dir(char *buf, size_t n, const char *id)
{
    snprintf(buf, n, "%s/folders/%s", stfx_mnt, id);
}

static void check_traversal(skv_client *cl, const char *id)
{
    skv_error e = SKV_ERROR_INIT;
    char dir[PATH_MAX], link[PATH_MAX + 8];
    folder_dir(dir, sizeof(dir), id);
    snprintf(link, sizeof(link), "%s/esc", dir);
    ck_assert_int_eq(symlink("/etc", link), 0);
    const char *bad[] = {"../x", "/etc", "a/../../x", "esc/passwd", "esc"};
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(vf_file(cl, "ls", "data", bad[i], &e), SKV_EPERM);
        ck_assert_int_ne(vf_file(cl, "mkdir", "data", bad[i], &e), 0);
    }
    skv_proto_vfolder_download d = {"data", "esc/passwd", 0, 0};
    skv_proto_vfolder_download_reply dr = {0};
    ck_assert_int_eq(skv_client_call(cl, SKV_PROTO_VFOLDER_DOWNLOAD, &d, &dr,
                                     &e), SKV_EPERM);
    /* at mount time: a target with "..", the manager's own fields */
    char sid[E2E_ID_MAX];
    ck_assert_int_eq(submit_mount(cl, sid, "true", "data", "/home/../etc",
                                  false, 1, &e), SKV_EINVAL);
    unlink(link);
}

START_TEST(test_vf_basic)
{
    E2E_REQUIRE();
    skv_client *admin = NULL, *alice = NULL, *bob = NULL;
    skv_error e = SKV_ERROR_INIT;
    char id[64], out[4096];
    cluster_up(&admin);
    user_client(admin, "alice", &alice);
    user_client(admin, "bob", &bob);
    SKV_CK_OK(vf(alice, "create", "data", NULL, "vol", 10u << 20, id, &e),
              &e);
    ck_assert_int_eq(vf(alice, "create", "data", NULL, "vol", 0, NULL, &e),
                     SKV_EEXIST);
    ck_assert_int_eq(vf(alice, "create", "q", NULL, "loc", 1u << 20, NULL,
                        &e), SKV_ENOTSUP);   /* quota=none host */
    ck_assert_int_eq(vf(alice, "create", "x", NULL, "nohost", 0, NULL, &e),
                     SKV_ENOENT);
    ck_assert_int_eq(vf(alice, "create", "../x", NULL, NULL, 0, NULL, &e),
                     SKV_EINVAL);
    /* bob sees nothing of alice's until invited and accepted */
    ck_assert_int_eq(vf(bob, "info", "data", NULL, NULL, 0, NULL, &e),
                     SKV_ENOENT);
    check_traversal(alice, id);

    /* rw for alice: the container writes as the folder's owner */
    run_session(alice, "echo hello > /home/work/data/hi && cat "
                "/home/work/data/hi && echo rc=$?", "data", false, out,
                sizeof(out));
    ck_assert_msg(strstr(out, "hello") && strstr(out, "rc=0"), "%s", out);
    /* past the 10 MiB quota inside the container: EDQUOT */
    run_session(alice, "seq 1 3000000 > /tmp/src; cat /tmp/src > "
                "/home/work/data/big 2>/tmp/err; echo rc=$?; cat /tmp/err",
                "data", false, out, sizeof(out));
    ck_assert_msg(strstr(out, "Disk quota exceeded") && !strstr(out, "rc=0"),
                  "writing past the quota: %s", out);
    skv_proto_vfolder q = {"info", "data"};
    skv_proto_vfolder_reply r = {0};
    SKV_CK_OK(skv_client_call(alice, SKV_PROTO_VFOLDER, &q, &r, &e), &e);
    ck_assert_uint_eq(r.n_folders, 1);
    ck_assert_uint_eq(r.folders[0].quota_bytes, 10u << 20);
    ck_assert_msg(r.folders[0].usage_bytes > (8u << 20) &&
                  r.folders[0].usage_bytes <= (11u << 20), "usage %llu",
                  (unsigned long long)r.folders[0].usage_bytes);
    skv_proto_body_free(SKV_PROTO_VFOLDER_REPLY, &r);
    SKV_CK_OK(vf_file(alice, "rm", "data", "big", &e), &e);

    /* share ro: invitation, accept, read inside bob's container, no
     * write; an rw mount of an ro share is refused at submit */
    SKV_CK_OK(vf(alice, "share", "data", "bob", "ro", 0, NULL, &e), &e);
    char sid[E2E_ID_MAX];
    ck_assert_int_eq(submit_mount(bob, sid, "true", "data", NULL, true, 1,
                                  &e), SKV_ENOENT);   /* not accepted yet */
    SKV_CK_OK(vf(bob, "accept", "data", NULL, NULL, 0, NULL, &e), &e);
    ck_assert_int_eq(submit_mount(bob, sid, "true", "data", NULL, false, 1,
                                  &e), SKV_EPERM);
    run_session(bob, "cat /home/work/data/hi; (echo x > /home/work/data/b) "
                "2>/tmp/err; echo rc=$?; cat /tmp/err", "data", true, out,
                sizeof(out));
    ck_assert_msg(strstr(out, "hello") && strstr(out, "Read-only file system")
                  && !strstr(out, "rc=0"), "ro share: %s", out);
    /* rw: bob writes */
    SKV_CK_OK(vf(alice, "share", "data", "bob", "rw", 0, NULL, &e), &e);
    run_session(bob, "echo frombob > /home/work/data/b; echo rc=$?", "data",
                false, out, sizeof(out));
    ck_assert_msg(strstr(out, "rc=0"), "rw share: %s", out);
    SKV_CK_OK(vf(alice, "revoke", "data", "bob", NULL, 0, NULL, &e), &e);
    ck_assert_int_eq(vf_file(bob, "ls", "data", "", &e), SKV_ENOENT);

    /* a running session's folder cannot be deleted */
    SKV_CK_OK(submit_mount(alice, sid, "sleep 120", "data", NULL, false, 1,
                           &e), &e);
    E2E_OK(e2e_wait_running(&g, alice, sid, 30000));
    ck_assert_int_eq(vf(alice, "delete", "data", NULL, NULL, 0, NULL, &e),
                     SKV_EBUSY);
    ck_assert_msg(strstr(e.message, sid), "%s", e.message);
    skv_proto_session_ref tr = {0};
    SKV_CK_OK(skv_client_terminate(alice, &tr, sid, "test", 0, &e), &e);
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &tr);
    skv_proto_session_show_reply sr;
    E2E_OK(e2e_wait_final(&g, alice, sid, 30000, &sr));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sr);

    /* multi-node with a folder on an unshared host: refused at submit */
    SKV_CK_OK(vf(alice, "create", "scratch", NULL, "loc", 0, NULL, &e), &e);
    ck_assert_int_eq(submit_mount(alice, sid, "true", "scratch", NULL, false,
                                  2, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "shared"), "%s", e.message);
    /* single-node, it mounts (a quota=none host, like the default one) */
    run_session(alice, "echo s > /home/work/scratch/s; echo rc=$?",
                "scratch", false, out, sizeof(out));
    ck_assert_msg(strstr(out, "rc=0"), "scratch: %s", out);

    /* data survives the session's end and a manager restart */
    skv_client_free(alice);
    skv_client_free(bob);
    skv_client_free(admin);
    e2e_kill(&g, &g.mgr, SIGTERM, "manager");
    start_manager();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 1));
    skv_proto_vfolder_download d = {"data", "b", 0, 0};
    skv_proto_vfolder_download_reply dr = {0};
    /* admins see every folder */
    SKV_CK_OK(skv_client_call(admin, SKV_PROTO_VFOLDER_DOWNLOAD, &d, &dr, &e),
              &e);
    ck_assert_uint_eq(dr.data_len, 8);
    ck_assert_int_eq(memcmp(dr.data, "frombob\n", 8), 0);
    skv_proto_body_free(SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, &dr);
    SKV_CK_OK(vf(admin, "delete", "data", NULL, NULL, 0, NULL, &e), &e);
    SKV_CK_OK(vf(admin, "purge", NULL, NULL, NULL, 0, NULL, &e), &e);
    char dir[PATH_MAX];
    folder_dir(dir, sizeof(dir), id);
    ck_assert_int_ne(access(dir, F_OK), 0);
    skv_client_free(admin);
    e2e_stop(&g);
}
END_TEST

/* The CLI with the admin's key file; its exit status. */
static int cli(const char *args, char *out, size_t cap)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof(cmd), "%s/sokovan --endpoint unix:%s --key-file "
             "%s/admin.key %s 2>&1", g.bin, g.sock, g.data, args);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void sha_of(const char *path, char *hex65)
{
    char cmd[PATH_MAX + 32], out[256];
    snprintf(cmd, sizeof(cmd), "sha256sum %s", path);
    skv_test_sh_output(cmd, out, sizeof(out));
    snprintf(hex65, 65, "%s", out);
}

/* A sparse file of size bytes with 128 random 64 KiB blocks at scattered
 * offsets: quick to make and to read, yet a chunk lost, repeated or put
 * in the wrong place changes its sha256. */
static void make_sparse(const char *path, off_t size)
{
    static char blk[65536];
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int rnd = open("/dev/urandom", O_RDONLY);
    ck_assert_msg(fd >= 0 && rnd >= 0, "%s: %s", path, strerror(errno));
    ck_assert_int_eq(ftruncate(fd, size), 0);
    off_t stride = size / 128;
    for (int i = 0; i < 128; i++) {
        off_t at = i * stride + (off_t)i * 7919 % (stride - (off_t)sizeof blk);
        ck_assert_int_eq(read(rnd, blk, sizeof blk), (ssize_t)sizeof blk);
        ck_assert_int_eq(pwrite(fd, blk, sizeof blk, at), (ssize_t)sizeof blk);
    }
    close(rnd);
    close(fd);
}

/* 1 GiB (and a ragged end) up and down with sha256 on both sides; in
 * between the data outlives the session that wrote next to it, a kill -9
 * of the agent and one of the manager: a session after both restarts
 * sees the files, the download after them gets the same bytes. */
START_TEST(test_vf_transfer)
{
    E2E_REQUIRE();
    const off_t size = (1LL << 30) + 12345;
    skv_client *admin = NULL;
    char src[PATH_MAX + 16], dst[PATH_MAX + 16], args[PATH_MAX * 2];
    char out[4096], h1[65], h2[65], want[64];
    cluster_up(&admin);
    snprintf(src, sizeof(src), "%s/src.bin", g.root);
    snprintf(dst, sizeof(dst), "%s/dst.bin", g.root);
    make_sparse(src, size);
    sha_of(src, h1);
    ck_assert_int_eq(cli("vfolder create big --host vol", out, sizeof(out)),
                     0);
    ck_assert_int_eq(cli("vfolder mkdir big d", out, sizeof(out)), 0);
    int64_t t0 = e2e_now_ms();
    snprintf(args, sizeof(args), "vfolder upload big %s d/f.bin --sha256",
             src);
    ck_assert_msg(cli(args, out, sizeof(out)) == 0, "%s", out);
    int64_t t1 = e2e_now_ms();
    ck_assert_msg(strstr(out, h1) && strstr(out, "(verified)"),
                  "upload's sha256: %s (want %s)", out, h1);

    /* a session writes beside it and ends; kill -9 the agent, then the
     * manager; restart both; a new session sees both files */
    run_session(admin, "echo s1 > /home/work/big/from-s1 && echo rc=$?",
                "big", false, out, sizeof(out));
    ck_assert_msg(strstr(out, "rc=0"), "%s", out);
    e2e_kill(&g, &g.agent[0], SIGKILL, "a1");
    E2E_OK(e2e_start_agent(&g, 0));
    skv_client_free(admin);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    start_manager();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 1));
    run_session(admin, "busybox stat -c size=%s /home/work/big/d/f.bin; "
                "cat /home/work/big/from-s1", "big", true, out, sizeof(out));
    snprintf(want, sizeof(want), "size=%lld", (long long)size);
    ck_assert_msg(strstr(out, want) && strstr(out, "s1"),
                  "after the restarts: '%s' (want %s and s1)", out, want);

    int64_t t2 = e2e_now_ms();
    snprintf(args, sizeof(args), "vfolder download big d/f.bin %s --sha256",
             dst);
    ck_assert_msg(cli(args, out, sizeof(out)) == 0, "%s", out);
    int64_t t3 = e2e_now_ms();
    ck_assert_msg(strstr(out, h1) && strstr(out, "(verified)"), "%s", out);
    sha_of(dst, h2);
    ck_assert_str_eq(h1, h2);
    fprintf(stderr, "vfolder transfer of %lld bytes: upload %.0f MB/s, "
            "download %.0f MB/s (both with --sha256)\n", (long long)size,
            (double)size / 1e3 / (double)(t1 - t0 + 1),
            (double)size / 1e3 / (double)(t3 - t2 + 1));
    /* a resumed download from a truncated copy ends identical */
    ck_assert_int_eq(truncate(dst, size - 50000000), 0);
    snprintf(args, sizeof(args), "vfolder download big d/f.bin %s --resume "
             "--sha256", dst);
    ck_assert_msg(cli(args, out, sizeof(out)) == 0, "%s", out);
    sha_of(dst, h2);
    ck_assert_str_eq(h1, h2);
    skv_client_free(admin);
    e2e_stop(&g);
}
END_TEST

/* The upload temp file's size in dir (0 when there is none). */
static long long temp_size(const char *dir)
{
    DIR *d = opendir(dir);
    long long size = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        struct stat st;
        char p[PATH_MAX * 2];
        snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
        if (!strncmp(de->d_name, ".skv-upload", 11) && stat(p, &st) == 0)
            size = st.st_size;
    }
    if (d)
        closedir(d);
    return size;
}

START_TEST(test_vf_killed_upload)
{
    E2E_REQUIRE();
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    char v1[PATH_MAX + 16], v2[PATH_MAX + 16], got[PATH_MAX + 16];
    char args[PATH_MAX * 2], out[4096], h1[65], h2[65], h[65], id[64];
    char dir[PATH_MAX];
    cluster_up(&admin);
    snprintf(v1, sizeof(v1), "%s/v1.bin", g.root);
    snprintf(v2, sizeof(v2), "%s/v2.bin", g.root);
    snprintf(got, sizeof(got), "%s/got.bin", g.root);
    ck_assert_int_eq(e2e_sh("head -c 1000000 /dev/urandom > %s; head -c "
                            "400000000 /dev/urandom > %s", v1, v2), 0);
    sha_of(v1, h1);
    sha_of(v2, h2);
    SKV_CK_OK(vf(admin, "create", "ck", NULL, "vol", 0, id, &e), &e);
    folder_dir(dir, sizeof(dir), id);
    snprintf(args, sizeof(args), "vfolder upload ck %s model.bin", v1);
    ck_assert_msg(cli(args, out, sizeof(out)) == 0, "%s", out);

    /* replace it with v2; kill -9 the manager half-way */
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof(cmd), "%s/sokovan --endpoint unix:%s --key-file "
             "%s/admin.key vfolder upload ck %s model.bin > %s/up.log 2>&1 &",
             g.bin, g.sock, g.data, v2, g.root);
    ck_assert_int_eq(system(cmd), 0);
    int64_t end = e2e_now_ms() + 60000;
    while (temp_size(dir) < 50000000 && e2e_now_ms() < end)
        e2e_sleep_ms(5);
    long long part = temp_size(dir);
    ck_assert_msg(part >= 50000000 && part < 400000000, "temp file %lld",
                  part);
    e2e_kill(&g, &g.mgr, SIGKILL, "manager");
    skv_client_free(admin);
    /* the old file, whole */
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/model.bin", dir);
    sha_of(path, h);
    ck_assert_str_eq(h, h1);

    /* a restarted manager: the upload resumes from what was stored */
    start_manager();
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 1));
    snprintf(args, sizeof(args), "vfolder upload ck %s model.bin --resume "
             "--sha256", v2);
    ck_assert_msg(cli(args, out, sizeof(out)) == 0, "%s", out);
    ck_assert_msg(strstr(out, h2), "%s", out);
    sha_of(path, h);
    ck_assert_str_eq(h, h2);
    ck_assert_int_eq(temp_size(dir), 0);
    skv_client_free(admin);
    e2e_stop(&g);
}
END_TEST

/* A two-kernel session on two agents mounts one folder of a shared host:
 * each kernel writes its name there and main waits to see sub's file. */
START_TEST(test_vf_multinode)
{
    E2E_REQUIRE();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
        fprintf(stderr, "%s: SKIP: needs 2 CPUs (one per agent)\n",
                __func__);
        return;
    }
    skv_client *admin = NULL;
    skv_error e = SKV_ERROR_INIT;
    char sid[E2E_ID_MAX], out[4096];
    start_manager();
    for (int i = 0; i < 2; i++) {
        snprintf(g.agent_cpus[i], sizeof(g.agent_cpus[i]), "%d", i);
        E2E_OK(e2e_start_agent(&g, i));
    }
    E2E_OK(e2e_connect(&g, &admin, NULL, NULL));
    E2E_OK(e2e_wait_agents(&g, admin, 2));
    SKV_CK_OK(vf(admin, "create", "shared", NULL, "vol", 0, NULL, &e), &e);
    SKV_CK_OK(submit_mount(admin, sid, "d=/home/work/shared; n=$SOKOVAN_"
                           "CLUSTER_ROLE$SOKOVAN_CLUSTER_IDX; echo $n > $d/$n; "
                           "if [ $n = main1 ]; then for i in $(seq 1 60); do "
                           "[ -e $d/sub1 ] && break; sleep 1; done; cat "
                           "$d/sub1; else sleep 600; fi", "shared", NULL,
                           false, 2, &e), &e);
    skv_proto_session_show_reply r;
    E2E_OK(e2e_wait_final(&g, admin, sid, 90000, &r));
    ck_assert_str_eq(r.session.status, "TERMINATED");
    ck_assert_uint_eq(r.session.n_kernels, 2);
    ck_assert_str_ne(r.session.kernels[0].agent_id,
                     r.session.kernels[1].agent_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    SKV_CK_OK(e2e_logs(admin, sid, NULL, out, sizeof(out), &e), &e);
    ck_assert_msg(strstr(out, "sub1"), "main saw: '%s'", out);
    SKV_CK_OK(vf_file(admin, "stat", "shared", "main1", &e), &e);
    SKV_CK_OK(vf_file(admin, "stat", "shared", "sub1", &e), &e);
    skv_client_free(admin);
    e2e_stop(&g);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, vf_setup, vf_teardown);               \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_e2e_vfolder(void);
Suite *skv_test_suite_e2e_vfolder(void)
{
    Suite *s = suite_create("e2e_vfolder");
    ADD_CASE(s, "vf_basic", test_vf_basic);
    ADD_CASE(s, "vf_transfer", test_vf_transfer);
    ADD_CASE(s, "vf_killed_upload", test_vf_killed_upload);
    ADD_CASE(s, "vf_multinode", test_vf_multinode);
    return s;
}
