/* Storage hosts and folders on real filesystems: a loopback btrfs with
 * qgroups (quota stops writes with EDQUOT, usage reported), every path
 * traversal refused (also a symlink swapped in while reading), atomic
 * uploads surviving kill -9, 1 GiB through the streamed API with sha256,
 * folder lifecycle, mount plans, a folder bind-mounted into a native
 * container, the plain ext4 root (no quota: refused unless quota=none) and
 * ext4/XFS project quotas where the kernel has them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sodium.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

#include "rt_fixture.h"
#include "skv_test.h"
#include "storage_fixture.h"
#include "sokovan/storage.h"

#define MiB (1024ull * 1024)

void skv__st_force_fallback(bool on); /* internal test hook */

/* ---- helpers ------------------------------------------------------------ */

/* A host on <btrfs mount>/<name> (or any given parent directory). */
static skv_storage_host *open_host_in(const char *parent, const char *name,
                                      skv_storage_quota_kind kind)
{
    char root[PATH_MAX];
    snprintf(root, sizeof(root), "%s/%s", parent, name);
    ck_assert(mkdir(root, 0755) == 0 || errno == EEXIST);
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    o.root = root;
    o.quota = kind;
    skv_storage_host *h = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_storage_host_open(&h, &o, &e), &e);
    return h;
}

static skv_storage_host *bt_host(const char *name)
{
    return open_host_in(stfx_mnt, name, SKV_STORAGE_QUOTA_AUTO);
}

static void fpath(char *buf, size_t n, skv_storage_host *h, const char *folder,
                  const char *rel)
{
    snprintf(buf, n, "%s/folders/%s/%s", skv_storage_host_root(h), folder,
             rel);
}

/* Upload `len` bytes of `byte` in 1 MiB chunks; returns the write's rc. */
static int put(skv_storage_host *h, const char *folder, const char *path,
               uint64_t len, int byte, skv_error *e)
{
    static char chunk[MiB];
    memset(chunk, byte, sizeof(chunk));
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    skv_storage_upload *u = NULL;
    int rc = skv_storage_upload_begin(h, folder, path, &o, &u, e);
    for (uint64_t done = 0; rc == 0 && done < len; done += sizeof(chunk)) {
        size_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);
        rc = skv_storage_upload_write(u, chunk, n, e);
    }
    if (rc == 0)
        rc = skv_storage_upload_commit(u, NULL, NULL, e);
    skv_storage_upload_close(u);
    return rc;
}

/* Whole content of a file in a folder, through the reader. */
static size_t get(skv_storage_host *h, const char *folder, const char *path,
                  char *buf, size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    skv_storage_reader *r = NULL;
    SKV_CK_OK(skv_storage_read_open(h, folder, path, 0, SKV_STORAGE_LEN_ALL,
                                    0, &r, &e), &e);
    size_t total = 0, got = 1;
    while (got && total < cap) {
        SKV_CK_OK(skv_storage_read(r, buf + total, cap - total, &got, &e), &e);
        total += got;
    }
    skv_storage_read_close(r);
    return total;
}

static uint64_t usage_of(skv_storage_host *h, const char *folder,
                         uint64_t *quota)
{
    skv_error e = SKV_ERROR_INIT;
    skv_storage_folder_info in = {.version = SKV_STORAGE_FOLDER_INFO_VERSION};
    SKV_CK_OK(skv_storage_folder_info_get(h, folder, &in, &e), &e);
    if (quota)
        *quota = in.quota_bytes;
    return in.usage_bytes;
}

/* ---- host ---------------------------------------------------------------- */

START_TEST(test_host_btrfs_and_bad_input)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("h1");
    ck_assert_int_eq(skv_storage_host_quota(h), SKV_STORAGE_QUOTA_BTRFS);
    skv_storage_host_close(h);
    skv_storage_host_close(NULL);
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    skv_storage_host *bad = NULL;
    ck_assert_int_eq(skv_storage_host_open(&bad, &o, &e), SKV_EINVAL);
    o.root = "relative/dir";
    ck_assert_int_eq(skv_storage_host_open(&bad, &o, &e), SKV_EINVAL);
    o.root = "/nonexistent/skv-storage";
    ck_assert_int_eq(skv_storage_host_open(&bad, &o, &e), SKV_ENOENT);
    o.root = stfx_mnt;
    o.quota = SKV_STORAGE_QUOTA_XFS;
    ck_assert_int_eq(skv_storage_host_open(&bad, &o, &e), SKV_ENOTSUP);
    ck_assert_msg(strstr(e.message, "is btrfs, not xfs"), "%s", e.message);
    o.version = 99;
    ck_assert_int_eq(skv_storage_host_open(&bad, &o, &e), SKV_EVERSION);
    ck_assert_ptr_null(bad);
    skv_storage_quota_kind k;
    SKV_CK_OK(skv_storage_quota_parse("none", &k, &e), &e);
    ck_assert_int_eq(k, SKV_STORAGE_QUOTA_NONE);
    ck_assert_int_eq(skv_storage_quota_parse("zfs", &k, &e), SKV_EINVAL);
    ck_assert_str_eq(skv_storage_quota_name(SKV_STORAGE_QUOTA_EXT4), "ext4");
}
END_TEST

/* btrfs with quotas off: refused with the reason, unless quota=none. */
START_TEST(test_host_btrfs_quota_off)
{
    STFX_REQUIRE();
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof(cmd), "btrfs quota disable %s", stfx_mnt);
    ck_assert_int_eq(system(cmd), 0);
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    o.root = stfx_mnt;
    skv_storage_host *h = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_storage_host_open(&h, &o, &e);
    snprintf(cmd, sizeof(cmd), "btrfs quota enable %s", stfx_mnt);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(rc, SKV_ENOTSUP);
    ck_assert_msg(strstr(e.message, "quotas are off"), "%s", e.message);
    o.quota = SKV_STORAGE_QUOTA_NONE;
    SKV_CK_OK(skv_storage_host_open(&h, &o, &e), &e);
    skv_storage_host_close(h);
}
END_TEST

/* ---- quota ---------------------------------------------------------------- */

START_TEST(test_quota_10m_edquot)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("q1");
    SKV_CK_OK(skv_storage_folder_create(h, "data", 10 * MiB, 1000, 1000, &e),
              &e);
    uint64_t quota = 0;
    ck_assert_uint_lt(usage_of(h, "data", &quota), 1 * MiB);
    ck_assert_uint_eq(quota, 10 * MiB);
    SKV_CK_OK(put(h, "data", "four", 4 * MiB, 'a', &e), &e);
    uint64_t used = usage_of(h, "data", NULL);
    ck_assert_msg(used >= 4 * MiB && used < 5 * MiB, "usage %llu",
                  (unsigned long long)used);
    /* Through the library: SKV_ENOSPC carrying EDQUOT. */
    int rc = put(h, "data", "big", 16 * MiB, 'b', &e);
    ck_assert_int_eq(rc, SKV_ENOSPC);
    ck_assert_int_eq(e.sys_errno, EDQUOT);
    /* The old content of a replaced file is untouched by a failed upload. */
    char buf[64];
    ck_assert_uint_eq(get(h, "data", "four", buf, sizeof(buf)), sizeof(buf));
    ck_assert_int_eq(buf[0], 'a');
    /* Directly through the kernel, as a session would write. */
    char p[PATH_MAX];
    fpath(p, sizeof(p), h, "data", "direct");
    int fd = open(p, O_WRONLY | O_CREAT, 0644);
    ck_assert_int_ge(fd, 0);
    static char chunk[MiB];
    int werr = 0;
    for (int i = 0; i < 32 && !werr; i++)
        if (write(fd, chunk, sizeof(chunk)) < 0 || (i % 4 == 3 && fsync(fd) < 0))
            werr = errno;
    if (!werr && fsync(fd) < 0)
        werr = errno;
    close(fd);
    ck_assert_int_eq(werr, EDQUOT);
    used = usage_of(h, "data", NULL);
    ck_assert_msg(used <= 11 * MiB && used >= 8 * MiB, "usage %llu",
                  (unsigned long long)used);
    /* Raising the limit lets writes through again. */
    SKV_CK_OK(skv_storage_folder_set_quota(h, "data", 64 * MiB, &e), &e);
    SKV_CK_OK(put(h, "data", "big", 16 * MiB, 'b', &e), &e);
    skv_storage_host_close(h);
}
END_TEST

/* ---- traversal ------------------------------------------------------------ */

static void expect_refused(int rc, const skv_error *e, const char *what)
{
    ck_assert_msg(rc == SKV_EPERM, "%s: %s (%s)", what, skv_err_name(rc),
                  e->message);
}

static int noop_entry(const skv_storage_entry *en, void *ud)
{
    (void)en;
    (void)ud;
    return 0;
}

static void all_ops_refuse(skv_storage_host *h, const char *bad)
{
    skv_error e = SKV_ERROR_INIT;
    skv_storage_reader *r = NULL;
    skv_storage_upload *u = NULL;
    skv_storage_entry st;
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    char b2[PATH_MAX];
    snprintf(b2, sizeof(b2), "%s/new", bad);
    expect_refused(skv_storage_read_open(h, "t", bad, 0, 10, 0, &r, &e), &e,
                   bad);
    expect_refused(skv_storage_ls(h, "t", bad, noop_entry, NULL, &e), &e, bad);
    expect_refused(skv_storage_stat(h, "t", b2, &st, &e), &e, bad);
    expect_refused(skv_storage_mkdir(h, "t", b2, &e), &e, bad);
    expect_refused(skv_storage_rm(h, "t", b2, true, &e), &e, bad);
    expect_refused(skv_storage_mv(h, "t", "inside", b2, &e), &e, bad);
    expect_refused(skv_storage_chown(h, "t", b2, 1, 1, true, &e), &e, bad);
    expect_refused(skv_storage_upload_begin(h, "t", b2, &o, &u, &e), &e, bad);
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(u);
}

static void traversal_case(const char *hostname, bool fallback)
{
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host(hostname);
    skv__st_force_fallback(fallback);
    SKV_CK_OK(skv_storage_folder_create(h, "t", 0, 0, 0, &e), &e);
    SKV_CK_OK(skv_storage_folder_create(h, "other", 0, 0, 0, &e), &e);
    SKV_CK_OK(put(h, "other", "secret", 10, 's', &e), &e);
    SKV_CK_OK(put(h, "t", "inside", 10, 'i', &e), &e);
    char p[PATH_MAX];
    fpath(p, sizeof(p), h, "t", "out");
    ck_assert_int_eq(symlink("/etc", p), 0);
    fpath(p, sizeof(p), h, "t", "up");
    ck_assert_int_eq(symlink("../other", p), 0);
    const char *bad[] = {"..", "../other", "a/../../other", "/etc",
                         "/etc/passwd", "out", "up", "up/secret"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        all_ops_refuse(h, bad[i]);
    skv_storage_reader *r = NULL;
    expect_refused(skv_storage_read_open(h, "t", "out/passwd", 0, 10, 0, &r,
                                         &e), &e, "out/passwd");
    expect_refused(skv_storage_read_open(h, "t", "up/secret", 0, 10, 0, &r,
                                         &e), &e, "up/secret");
    /* Folder names are not paths either. */
    ck_assert_int_eq(skv_storage_folder_create(h, "../x", 0, 0, 0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_storage_folder_create(h, ".hidden", 0, 0, 0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_storage_read_open(h, "../folders/t", "inside", 0, 1,
                                           0, &r, &e), SKV_EINVAL);
    /* A link that stays inside is fine (openat2 only; the fallback refuses
     * every link). */
    fpath(p, sizeof(p), h, "t", "alias");
    ck_assert_int_eq(symlink("inside", p), 0);
    char buf[16];
    if (!fallback)
        ck_assert_uint_eq(get(h, "t", "alias", buf, sizeof(buf)), 10);
    skv__st_force_fallback(false);
    skv_storage_host_close(h);
}

START_TEST(test_traversal_refused)
{
    STFX_REQUIRE();
    traversal_case("tr1", false);
}
END_TEST

START_TEST(test_traversal_refused_fallback)
{
    STFX_REQUIRE();
    traversal_case("tr2", true);
}
END_TEST

/* A directory swapped for a symlink out of the folder (RENAME_EXCHANGE,
 * atomic) while the main thread keeps reading through it: no read may
 * ever return the outside file. */
static atomic_bool swap_stop;
static int swap_dirfd;

static void *swapper(void *ud)
{
    (void)ud;
    while (!atomic_load(&swap_stop))
        renameat2(swap_dirfd, "d", swap_dirfd, "l", RENAME_EXCHANGE);
    return NULL;
}

START_TEST(test_traversal_symlink_swap_race)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("race");
    SKV_CK_OK(skv_storage_folder_create(h, "t", 0, 0, 0, &e), &e);
    SKV_CK_OK(skv_storage_folder_create(h, "victim", 0, 0, 0, &e), &e);
    SKV_CK_OK(put(h, "victim", "f", 8, 'X', &e), &e);
    SKV_CK_OK(skv_storage_mkdir(h, "t", "d", &e), &e);
    SKV_CK_OK(put(h, "t", "d/f", 8, 'i', &e), &e);
    char p[PATH_MAX], target[PATH_MAX];
    fpath(p, sizeof(p), h, "t", "l");
    fpath(target, sizeof(target), h, "victim", "");
    ck_assert_int_eq(symlink(target, p), 0);
    fpath(p, sizeof(p), h, "t", "");
    swap_dirfd = open(p, O_RDONLY | O_DIRECTORY);
    ck_assert_int_ge(swap_dirfd, 0);
    atomic_store(&swap_stop, false);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, swapper, NULL), 0);
    int inside = 0, refused = 0;
    for (int i = 0; i < 20000; i++) {
        skv_storage_reader *r = NULL;
        int rc = skv_storage_read_open(h, "t", "d/f", 0, 8, 0, &r, &e);
        if (rc == 0) {
            char c = 0;
            size_t got = 0;
            SKV_CK_OK(skv_storage_read(r, &c, 1, &got, &e), &e);
            skv_storage_read_close(r);
            ck_assert_msg(c == 'i', "read %c: escaped the folder", c);
            inside++;
        } else {
            ck_assert_msg(rc == SKV_EPERM || rc == SKV_ENOENT, "%s",
                          e.message);
            refused += rc == SKV_EPERM;
        }
    }
    atomic_store(&swap_stop, true);
    pthread_join(th, NULL);
    close(swap_dirfd);
    /* Both sides were really exercised. */
    ck_assert_int_gt(inside, 0);
    ck_assert_int_gt(refused, 0);
    skv_storage_host_close(h);
}
END_TEST

/* ---- atomic uploads ------------------------------------------------------- */

/* Every byte of the file is `c` and it has `len` bytes. */
static bool file_is(skv_storage_host *h, const char *folder, const char *path,
                    int c, size_t len)
{
    static char buf[8 * MiB + 1];
    size_t n = get(h, folder, path, buf, sizeof(buf));
    if (n != len)
        return false;
    for (size_t i = 0; i < n; i++)
        if (buf[i] != c)
            return false;
    return true;
}

/* A forked writer replacing "f" (1 MiB of 'A') with 8 MiB of 'B' is killed
 * with SIGKILL at a different moment each round, up to after its commit:
 * the file is always wholly old or wholly new. */
START_TEST(test_atomic_upload_kill9)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("atomic");
    SKV_CK_OK(skv_storage_folder_create(h, "w", 0, 0, 0, &e), &e);
    int olds = 0, news = 0;
    for (int round = 0; round < 12; round++) {
        SKV_CK_OK(put(h, "w", "f", MiB, 'A', &e), &e);
        int pfd[2];
        ck_assert_int_eq(pipe(pfd), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            close(pfd[0]);
            if (write(pfd[1], "s", 1) != 1)
                _exit(2);
            skv_error ce = SKV_ERROR_INIT;
            _exit(put(h, "w", "f", 8 * MiB, 'B', &ce) == 0 ? 0 : 1);
        }
        close(pfd[1]);
        char c;
        ck_assert_int_eq(read(pfd[0], &c, 1), 1);
        close(pfd[0]);
        /* From at once to well after the commit. */
        static const long ms[] = {0, 1, 2, 5, 10, 20, 40, 80, 160, 320,
                                  1000, 3000};
        struct timespec ts = {ms[round] / 1000, ms[round] % 1000 * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        bool old = file_is(h, "w", "f", 'A', MiB);
        bool nw = file_is(h, "w", "f", 'B', 8 * MiB);
        ck_assert_msg(old || nw, "round %d: torn file", round);
        olds += old;
        news += nw;
    }
    /* The kill really landed mid-stream, and the check tells the new
     * content from the old. */
    ck_assert_int_gt(olds, 0);
    ck_assert_int_gt(news, 0);
    fprintf(stderr, "atomic_upload_kill9: %d old, %d new\n", olds, news);
    skv_storage_host_close(h);
}
END_TEST

/* A resumable upload killed mid-stream continues from its offset in a new
 * process and its sha256 covers both parts; a wrong hash replaces nothing;
 * abort leaves no temp file. */
START_TEST(test_upload_resume_and_abort)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("resume");
    SKV_CK_OK(skv_storage_folder_create(h, "w", 0, 1000, 1000, &e), &e);
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    o.upload_id = "u-1";
    o.sha256 = true;
    skv_storage_upload *u = NULL;
    static char a[3 * MiB];
    for (size_t i = 0; i < sizeof(a); i++)
        a[i] = (char)(i * 7 + 3);
    pid_t pid = fork();
    if (pid == 0) {
        skv_error ce = SKV_ERROR_INIT;
        if (skv_storage_upload_begin(h, "w", "r.bin", &o, &u, &ce) != 0 ||
            skv_storage_upload_write(u, a, MiB, &ce) != 0)
            _exit(1);
        raise(SIGKILL);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFSIGNALED(status));
    skv_storage_entry st;
    ck_assert_int_eq(skv_storage_stat(h, "w", "r.bin", &st, &e), SKV_ENOENT);
    o.resume = true;
    SKV_CK_OK(skv_storage_upload_begin(h, "w", "r.bin", &o, &u, &e), &e);
    ck_assert_uint_eq(skv_storage_upload_offset(u), MiB);
    SKV_CK_OK(skv_storage_upload_write(u, a + MiB, sizeof(a) - MiB, &e), &e);
    uint8_t want[32], wrong[32] = {0}, got[32];
    crypto_hash_sha256(want, (const unsigned char *)a, sizeof(a));
    ck_assert_int_eq(skv_storage_upload_commit(u, wrong, NULL, &e),
                     SKV_EPROTO);
    ck_assert_int_eq(skv_storage_stat(h, "w", "r.bin", &st, &e), SKV_ENOENT);
    skv_storage_upload_abort(u);
    /* Again from scratch, completely, with the right hash. */
    o.resume = false;
    SKV_CK_OK(skv_storage_upload_begin(h, "w", "r.bin", &o, &u, &e), &e);
    ck_assert_uint_eq(skv_storage_upload_offset(u), 0);
    SKV_CK_OK(skv_storage_upload_write(u, a, sizeof(a), &e), &e);
    SKV_CK_OK(skv_storage_upload_commit(u, want, got, &e), &e);
    ck_assert(memcmp(want, got, 32) == 0);
    skv_storage_upload_close(u);
    SKV_CK_OK(skv_storage_stat(h, "w", "r.bin", &st, &e), &e);
    ck_assert_uint_eq(st.size, sizeof(a));
    ck_assert_uint_eq(st.uid, 1000); /* the folder owner's file */
    ck_assert_uint_eq(st.mode, 0644);
    /* No temp file is left in the directory. */
    char p[PATH_MAX], out[256];
    fpath(p, sizeof(p), h, "w", "");
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "ls -A %s", p);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_str_eq(out, "r.bin\n");
    /* Bad options. */
    o.upload_id = "../x";
    ck_assert_int_eq(skv_storage_upload_begin(h, "w", "z", &o, &u, &e),
                     SKV_EINVAL);
    o.upload_id = NULL;
    o.resume = true;
    ck_assert_int_eq(skv_storage_upload_begin(h, "w", "z", &o, &u, &e),
                     SKV_EINVAL);
    o.resume = false;
    ck_assert_int_eq(skv_storage_upload_begin(h, "w", ".skv-upload.x", &o, &u,
                                              &e), SKV_EINVAL);
    skv_storage_host_close(h);
}
END_TEST

/* Ranged reads: a download resumed at an offset gets exactly the rest. */
START_TEST(test_read_ranges)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("ranges");
    SKV_CK_OK(skv_storage_folder_create(h, "r", 0, 0, 0, &e), &e);
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    skv_storage_upload *u = NULL;
    SKV_CK_OK(skv_storage_upload_begin(h, "r", "digits", &o, &u, &e), &e);
    SKV_CK_OK(skv_storage_upload_write(u, "0123456789", 10, &e), &e);
    SKV_CK_OK(skv_storage_upload_commit(u, NULL, NULL, &e), &e);
    skv_storage_upload_close(u);
    skv_storage_reader *r = NULL;
    SKV_CK_OK(skv_storage_read_open(h, "r", "digits", 3, 4,
                                    SKV_STORAGE_READ_SHA256, &r, &e), &e);
    char buf[16] = {0};
    size_t got;
    SKV_CK_OK(skv_storage_read(r, buf, sizeof(buf), &got, &e), &e);
    ck_assert_uint_eq(got, 4);
    ck_assert(memcmp(buf, "3456", 4) == 0);
    SKV_CK_OK(skv_storage_read(r, buf, sizeof(buf), &got, &e), &e);
    ck_assert_uint_eq(got, 0);
    ck_assert_uint_eq(skv_storage_reader_file_size(r), 10);
    uint8_t d[32], want[32];
    SKV_CK_OK(skv_storage_reader_sha256(r, d, &e), &e);
    crypto_hash_sha256(want, (const unsigned char *)"3456", 4);
    ck_assert(memcmp(d, want, 32) == 0);
    skv_storage_read_close(r);
    SKV_CK_OK(skv_storage_read_open(h, "r", "digits", 10, 5, 0, &r, &e), &e);
    SKV_CK_OK(skv_storage_read(r, buf, sizeof(buf), &got, &e), &e);
    ck_assert_uint_eq(got, 0);
    skv_storage_read_close(r);
    ck_assert_int_eq(skv_storage_read_open(h, "r", "digits", 11, 1, 0, &r, &e),
                     SKV_ERANGE);
    ck_assert_int_eq(skv_storage_read_open(h, "r", "", 0, 1, 0, &r, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_storage_read_open(h, "r", "nope", 0, 1, 0, &r, &e),
                     SKV_ENOENT);
    skv_storage_host_close(h);
}
END_TEST

/* 1 GiB up and down through the streamed API, both hashed. */
START_TEST(test_1g_sha256)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("big");
    SKV_CK_OK(skv_storage_folder_create(h, "b", 1200 * MiB, 0, 0, &e), &e);
    skv_storage_upload_options o;
    skv_storage_upload_options_init(&o);
    o.sha256 = true;
    skv_storage_upload *u = NULL;
    SKV_CK_OK(skv_storage_upload_begin(h, "b", "1g", &o, &u, &e), &e);
    static unsigned char chunk[4 * MiB];
    crypto_hash_sha256_state st;
    crypto_hash_sha256_init(&st);
    for (int i = 0; i < 256; i++) {
        memset(chunk, i, sizeof(chunk));
        chunk[i] = 0xAB; /* not a constant stream */
        crypto_hash_sha256_update(&st, chunk, sizeof(chunk));
        SKV_CK_OK(skv_storage_upload_write(u, chunk, sizeof(chunk), &e), &e);
    }
    uint8_t want[32], up[32], down[32];
    crypto_hash_sha256_final(&st, want);
    SKV_CK_OK(skv_storage_upload_commit(u, want, up, &e), &e);
    skv_storage_upload_close(u);
    skv_storage_reader *r = NULL;
    SKV_CK_OK(skv_storage_read_open(h, "b", "1g", 0, SKV_STORAGE_LEN_ALL,
                                    SKV_STORAGE_READ_SHA256, &r, &e), &e);
    uint64_t total = 0;
    size_t got = 1;
    while (got) {
        SKV_CK_OK(skv_storage_read(r, chunk, sizeof(chunk), &got, &e), &e);
        total += got;
    }
    SKV_CK_OK(skv_storage_reader_sha256(r, down, &e), &e);
    skv_storage_read_close(r);
    ck_assert_uint_eq(total, 1024 * MiB);
    ck_assert(memcmp(want, down, 32) == 0);
    uint64_t used = usage_of(h, "b", NULL);
    ck_assert_msg(used >= 1024 * MiB, "usage %llu", (unsigned long long)used);
    skv_storage_host_close(h);
}
END_TEST

/* ---- lifecycle and file operations ---------------------------------------- */

static int collect(const char *name, void *ud)
{
    char *acc = ud;
    strcat(acc, name);
    strcat(acc, ";");
    return 0;
}

static int collect_entry(const skv_storage_entry *en, void *ud)
{
    char *acc = ud;
    size_t n = strlen(acc);
    snprintf(acc + n, 512 - n, "%s:%c;", en->name, en->type);
    return 0;
}

START_TEST(test_folder_lifecycle)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("life");
    SKV_CK_OK(skv_storage_folder_create(h, "a", 20 * MiB, 1000, 1001, &e), &e);
    ck_assert_int_eq(skv_storage_folder_create(h, "a", 0, 0, 0, &e),
                     SKV_EEXIST);
    SKV_CK_OK(put(h, "a", "x", 3 * MiB, 'x', &e), &e);
    SKV_CK_OK(skv_storage_folder_rename(h, "a", "b", &e), &e);
    ck_assert_int_eq(skv_storage_folder_rename(h, "a", "c", &e), SKV_ENOENT);
    SKV_CK_OK(skv_storage_folder_create(h, "c", 0, 0, 0, &e), &e);
    ck_assert_int_eq(skv_storage_folder_rename(h, "b", "c", &e), SKV_EEXIST);
    /* Clone: a snapshot with the same content, owner and quota, written to
     * independently. */
    SKV_CK_OK(skv_storage_folder_clone(h, "b", "b2", &e), &e);
    ck_assert_int_eq(skv_storage_folder_clone(h, "b", "c", &e), SKV_EEXIST);
    ck_assert(file_is(h, "b2", "x", 'x', 3 * MiB));
    skv_storage_folder_info in = {.version = SKV_STORAGE_FOLDER_INFO_VERSION};
    SKV_CK_OK(skv_storage_folder_info_get(h, "b2", &in, &e), &e);
    ck_assert_uint_eq(in.quota_bytes, 20 * MiB);
    ck_assert_uint_eq(in.uid, 1000);
    ck_assert_uint_eq(in.gid, 1001);
    ck_assert_uint_ne(in.quota_id, 0);
    SKV_CK_OK(put(h, "b2", "x", 10, 'y', &e), &e);
    ck_assert(file_is(h, "b", "x", 'x', 3 * MiB));
    char names[512] = "";
    SKV_CK_OK(skv_storage_folder_list(h, collect, names, &e), &e);
    ck_assert_uint_eq(strlen(names), strlen("b;b2;c;"));
    ck_assert(strstr(names, "b;") && strstr(names, "b2;") &&
              strstr(names, "c;"));
    /* Delete goes to the trash, purge destroys. */
    char tn[SKV_STORAGE_NAME_MAX + 32];
    SKV_CK_OK(skv_storage_folder_delete(h, "b", tn, sizeof(tn), &e), &e);
    ck_assert_int_eq(strncmp(tn, "b.", 2), 0);
    ck_assert_int_eq(skv_storage_folder_info_get(h, "b", &in, &e), SKV_ENOENT);
    names[0] = '\0';
    SKV_CK_OK(skv_storage_trash_list(h, collect, names, &e), &e);
    ck_assert_msg(strstr(names, tn), "%s", names);
    SKV_CK_OK(skv_storage_folder_delete(h, "c", NULL, 0, &e), &e);
    SKV_CK_OK(skv_storage_trash_purge(h, tn, &e), &e);
    ck_assert_int_eq(skv_storage_trash_purge(h, tn, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_storage_trash_purge(h, "../folders", &e), SKV_EINVAL);
    SKV_CK_OK(skv_storage_trash_purge(h, NULL, &e), &e);
    names[0] = '\0';
    SKV_CK_OK(skv_storage_trash_list(h, collect, names, &e), &e);
    ck_assert_str_eq(names, "");
    char cmd[PATH_MAX + 64], out[4096];
    snprintf(cmd, sizeof(cmd), "btrfs subvolume list %s", stfx_mnt);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "life/folders/b2"), "listing: %s", out);
    ck_assert_msg(!strstr(out, "life/trash/"), "subvolume left: %s", out);
    ck_assert_int_eq(skv_storage_folder_delete(h, "nope", NULL, 0, &e),
                     SKV_ENOENT);
    skv_storage_host_close(h);
}
END_TEST

START_TEST(test_file_ops)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("ops");
    SKV_CK_OK(skv_storage_folder_create(h, "f", 0, 1000, 1000, &e), &e);
    SKV_CK_OK(skv_storage_mkdir(h, "f", "d", &e), &e);
    ck_assert_int_eq(skv_storage_mkdir(h, "f", "d", &e), SKV_EEXIST);
    ck_assert_int_eq(skv_storage_mkdir(h, "f", "no/such", &e), SKV_ENOENT);
    SKV_CK_OK(put(h, "f", "d/a", 5, 'a', &e), &e);
    SKV_CK_OK(skv_storage_mkdir(h, "f", "d/sub", &e), &e);
    char acc[512] = "";
    SKV_CK_OK(skv_storage_ls(h, "f", "d", collect_entry, acc, &e), &e);
    ck_assert(strstr(acc, "a:f;") && strstr(acc, "sub:d;"));
    skv_storage_entry st;
    SKV_CK_OK(skv_storage_stat(h, "f", "d/sub", &st, &e), &e);
    ck_assert_int_eq(st.type, 'd');
    ck_assert_uint_eq(st.uid, 1000);
    SKV_CK_OK(skv_storage_mv(h, "f", "d/a", "b", &e), &e);
    ck_assert(file_is(h, "f", "b", 'a', 5));
    SKV_CK_OK(put(h, "f", "c", 1, 'c', &e), &e);
    ck_assert_int_eq(skv_storage_mv(h, "f", "c", "b", &e), SKV_EEXIST);
    SKV_CK_OK(skv_storage_chown(h, "f", "d", 2000, 2001, true, &e), &e);
    SKV_CK_OK(skv_storage_stat(h, "f", "d/sub", &st, &e), &e);
    ck_assert_uint_eq(st.uid, 2000);
    ck_assert_uint_eq(st.gid, 2001);
    ck_assert_int_eq(skv_storage_rm(h, "f", "d", false, &e), SKV_EBUSY);
    SKV_CK_OK(skv_storage_rm(h, "f", "d", true, &e), &e);
    ck_assert_int_eq(skv_storage_stat(h, "f", "d", &st, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_storage_rm(h, "f", "", true, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_storage_rm(h, "f", ".", true, &e), SKV_EPERM);
    ck_assert_int_eq(skv_storage_ls(h, "nope", "", collect_entry, acc, &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv_storage_ls(h, "f", "", NULL, NULL, &e), SKV_EINVAL);
    skv_storage_host_close(h);
}
END_TEST

/* ---- mounts --------------------------------------------------------------- */

START_TEST(test_mount_plan_rechecked)
{
    STFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("mnt");
    SKV_CK_OK(skv_storage_folder_create(h, "m", 0, 0, 0, &e), &e);
    skv_storage_mount m;
    SKV_CK_OK(skv_storage_mount_plan(h, "m", "/home/work/m", true, &m, &e),
              &e);
    ck_assert(m.readonly);
    ck_assert_str_eq(m.target, "/home/work/m");
    char want[PATH_MAX];
    snprintf(want, sizeof(want), "%s/mnt/folders/m", stfx_mnt);
    ck_assert_str_eq(m.source, want);
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, "st-plan", &e), &e);
    SKV_CK_OK(skv_storage_mount_add(h, &m, s, &e), &e);
    ck_assert_int_eq(skv_storage_mount_plan(h, "m", "rel", false, &m, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_storage_mount_plan(h, "m", "/a/../etc", false, &m,
                                            &e), SKV_EINVAL);
    ck_assert_int_eq(skv_storage_mount_plan(h, "m", "/", false, &m, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_storage_mount_plan(h, "zz", "/x", false, &m, &e),
                     SKV_ENOENT);
    /* The folder replaced after planning (same name, another folder; then
     * a symlink out of the root): refused at mount time. */
    SKV_CK_OK(skv_storage_mount_plan(h, "m", "/data", false, &m, &e), &e);
    SKV_CK_OK(skv_storage_folder_rename(h, "m", "m-old", &e), &e);
    SKV_CK_OK(skv_storage_folder_create(h, "m", 0, 0, 0, &e), &e);
    ck_assert_int_eq(skv_storage_mount_add(h, &m, s, &e), SKV_EPERM);
    SKV_CK_OK(skv_storage_folder_delete(h, "m", NULL, 0, &e), &e);
    ck_assert_int_eq(symlink("/etc", m.source), 0);
    ck_assert_int_eq(skv_storage_mount_add(h, &m, s, &e), SKV_EPERM);
    ck_assert_msg(strstr(e.message, "outside"), "%s", e.message);
    unlink(m.source);
    skv_container_spec_free(s);
    skv_storage_host_close(h);
}
END_TEST

static void both_setup(void)
{
    stfx_setup();
    skv_rtfx_setup_import();
}

static void both_teardown(void)
{
    skv_rtfx_teardown();
    stfx_teardown();
}

/* A folder bind-mounted rw into a native container running as the folder's
 * owner hits EDQUOT at its quota; a ro mount refuses writes. */
START_TEST(test_container_quota_and_ro)
{
    STFX_REQUIRE();
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_storage_host *h = bt_host("ctr");
    SKV_CK_OK(skv_storage_folder_create(h, "rw", 10 * MiB, 1000, 1000, &e),
              &e);
    SKV_CK_OK(skv_storage_folder_create(h, "ro", 0, 1000, 1000, &e), &e);
    skv_storage_mount mrw, mro;
    SKV_CK_OK(skv_storage_mount_plan(h, "rw", "/home/work/rw", false, &mrw,
                                     &e), &e);
    SKV_CK_OK(skv_storage_mount_plan(h, "ro", "/home/work/ro", true, &mro, &e),
              &e);
    char state[PATH_MAX];
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), "storage");
    o.image_dir = skv_rtfx_images;
    o.stop_grace_ms = 200;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, "st-c1", &e), &e);
    SKV_CK_OK(skv_container_spec_set_image(s, "busybox", &e), &e);
    const char *argv[] = {
        "sh", "-c",
        "id -u; dd if=/dev/zero of=/home/work/rw/big bs=1M count=20 2>&1 "
        "| grep -o 'Disk quota exceeded' | head -1; "
        "touch /home/work/ro/x 2>/dev/null; echo ro=$?"};
    SKV_CK_OK(skv_container_spec_set_argv(s, 3, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_user(s, 1000, 1000, &e), &e);
    SKV_CK_OK(skv_storage_mount_add(h, &mrw, s, &e), &e);
    SKV_CK_OK(skv_storage_mount_add(h, &mro, s, &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "st-c1", &e), &e);
    skv_container_status cs = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "st-c1", 30000, &cs, &e), &e);
    char *path = NULL, out[512] = "";
    SKV_CK_OK(skv_runtime_log_path(rt, "st-c1", "stdout", &path, &e), &e);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    out[fread(out, 1, sizeof(out) - 1, f)] = '\0';
    fclose(f);
    skv_free(path);
    SKV_CK_OK(skv_runtime_destroy(rt, "st-c1", 100, &e), &e);
    ck_assert_msg(strcmp(out, "1000\nDisk quota exceeded\nro=1\n") == 0,
                  "container said: %s", out);
    uint64_t used = usage_of(h, "rw", NULL);
    ck_assert_msg(used >= 8 * MiB && used <= 11 * MiB, "usage %llu",
                  (unsigned long long)used);
    skv_storage_entry st;
    SKV_CK_OK(skv_storage_stat(h, "rw", "big", &st, &e), &e);
    ck_assert_uint_eq(st.uid, 1000);
    skv_container_spec_free(s);
    skv_runtime_free(rt);
    skv_storage_host_close(h);
}
END_TEST

/* ---- other filesystems ---------------------------------------------------- */

/* The plain root filesystem (ext4 without quota support here): refused
 * with the reason, unless quota=none; then usage is walked, no limit. */
START_TEST(test_plain_fs_none)
{
    if (geteuid() != 0) {
        fprintf(stderr, "SKIP %s: needs root (chown)\n", __func__);
        return;
    }
    char dir[] = "/tmp/skv-st-plain-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    o.root = dir;
    skv_storage_host *h = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_storage_host_open(&h, &o, &e);
    if (rc == 0) {
        /* A kernel with ext4 project quotas mounted with prjquota: the
         * ext4 case below covers it. */
        fprintf(stderr, "%s: %s has quotas (%s)\n", __func__, dir,
                skv_storage_quota_name(skv_storage_host_quota(h)));
        skv_storage_host_close(h);
    } else {
        ck_assert_int_eq(rc, SKV_ENOTSUP);
        ck_assert_msg(strstr(e.message, "quota=none"), "%s", e.message);
    }
    o.quota = SKV_STORAGE_QUOTA_NONE;
    SKV_CK_OK(skv_storage_host_open(&h, &o, &e), &e);
    ck_assert_int_eq(skv_storage_folder_create(h, "n", MiB, 0, 0, &e),
                     SKV_ENOTSUP);
    SKV_CK_OK(skv_storage_folder_create(h, "n", 0, 0, 0, &e), &e);
    SKV_CK_OK(skv_storage_mkdir(h, "n", "d", &e), &e);
    SKV_CK_OK(put(h, "n", "d/x", 2 * MiB, 'x', &e), &e);
    uint64_t quota = 1;
    uint64_t used = usage_of(h, "n", &quota);
    ck_assert_uint_eq(quota, 0);
    ck_assert_msg(used >= 2 * MiB && used < 3 * MiB, "%llu",
                  (unsigned long long)used);
    SKV_CK_OK(skv_storage_folder_clone(h, "n", "n2", &e), &e);
    ck_assert(file_is(h, "n2", "d/x", 'x', 2 * MiB));
    SKV_CK_OK(skv_storage_folder_delete(h, "n", NULL, 0, &e), &e);
    SKV_CK_OK(skv_storage_trash_purge(h, NULL, &e), &e);
    skv_storage_host_close(h);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ext4 and XFS project quotas, where the kernel has them: an image made
 * with project quotas on, a 10 MiB folder, EDQUOT past it. */
static void project_case(const char *fs)
{
    if (geteuid() != 0) {
        fprintf(stderr, "SKIP project_%s: needs root\n", fs);
        return;
    }
    bool xfs = strcmp(fs, "xfs") == 0;
    char cmd[1024], dir[] = "/tmp/skv-st-prj-XXXXXX";
    snprintf(cmd, sizeof(cmd), "command -v mkfs.%s >/dev/null", fs);
    if (system(cmd) != 0) {
        fprintf(stderr, "SKIP project_%s: mkfs.%s is not installed%s\n", fs,
                fs, xfs ? " (xfsprogs; this kernel lacks CONFIG_XFS_QUOTA "
                          "anyway)" : "");
        return;
    }
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(cmd, sizeof(cmd),
             "cd %s && truncate -s 256M img && mkdir mnt && %s img "
             ">/dev/null 2>&1 && mount -o loop,prjquota img mnt 2>/dev/null",
             dir, xfs ? "mkfs.xfs -q" : "mkfs.ext4 -q -O quota,project");
    int mounted = system(cmd) == 0;
    skv_storage_host *h = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = -1;
    if (mounted) {
        char root[PATH_MAX];
        snprintf(root, sizeof(root), "%s/mnt", dir);
        skv_storage_host_options o;
        skv_storage_host_options_init(&o);
        o.root = root;
        rc = skv_storage_host_open(&h, &o, &e);
    }
    if (!mounted || rc == SKV_ENOTSUP) {
        fprintf(stderr, "SKIP project_%s: %s\n", fs,
                mounted ? e.message
                        : "the kernel refused a prjquota mount (no "
                          "project quota support: CONFIG_QFMT_V2 / "
                          "CONFIG_XFS_QUOTA off)");
    } else {
        SKV_CK_OK(rc, &e);
        ck_assert_int_eq(skv_storage_host_quota(h), xfs
                             ? SKV_STORAGE_QUOTA_XFS : SKV_STORAGE_QUOTA_EXT4);
        SKV_CK_OK(skv_storage_folder_create(h, "p", 10 * MiB, 0, 0, &e), &e);
        rc = put(h, "p", "big", 16 * MiB, 'p', &e);
        ck_assert_int_eq(rc, SKV_ENOSPC);
        ck_assert_int_eq(e.sys_errno, EDQUOT);
        uint64_t q;
        ck_assert_uint_le(usage_of(h, "p", &q), 11 * MiB);
        ck_assert_uint_eq(q, 10 * MiB);
        skv_storage_host_close(h);
    }
    snprintf(cmd, sizeof(cmd), "umount %s/mnt 2>/dev/null; rm -rf %s", dir,
             dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_project_quota_ext4)
{
    project_case("ext4");
}
END_TEST

START_TEST(test_project_quota_xfs)
{
    project_case("xfs");
}
END_TEST

/* The fixture's own clean-up: after teardown neither the mount nor the
 * loop device of the image remains. */
START_TEST(test_cleanup_no_mount_no_loop)
{
    stfx_setup_size("256M");
    STFX_REQUIRE();
    skv_storage_host *h = bt_host("c");
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_storage_folder_create(h, "x", MiB, 0, 0, &e), &e);
    skv_storage_host_close(h);
    char img[PATH_MAX], mnt[PATH_MAX], cmd[PATH_MAX + 64], out[1024];
    snprintf(img, sizeof(img), "%s", stfx_img);
    snprintf(mnt, sizeof(mnt), "%s", stfx_mnt);
    snprintf(cmd, sizeof(cmd), "losetup -j %s", img);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(strstr(out, "/dev/loop"), "no loop device while mounted");
    stfx_teardown();
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_msg(out[0] == '\0', "loop device left: %s", out);
    snprintf(cmd, sizeof(cmd), "grep -c ' %s ' /proc/self/mountinfo", mnt);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_str_eq(out, "0\n");
}
END_TEST

Suite *skv_test_suite_storage(void);
Suite *skv_test_suite_storage(void)
{
    Suite *s = suite_create("storage");
    TCase *bt = tcase_create("btrfs");
    tcase_add_unchecked_fixture(bt, stfx_setup, stfx_teardown);
    tcase_set_timeout(bt, 600);
    tcase_add_test(bt, test_host_btrfs_and_bad_input);
    tcase_add_test(bt, test_quota_10m_edquot);
    tcase_add_test(bt, test_traversal_refused);
    tcase_add_test(bt, test_traversal_refused_fallback);
    tcase_add_test(bt, test_traversal_symlink_swap_race);
    tcase_add_test(bt, test_atomic_upload_kill9);
    tcase_add_test(bt, test_upload_resume_and_abort);
    tcase_add_test(bt, test_read_ranges);
    tcase_add_test(bt, test_folder_lifecycle);
    tcase_add_test(bt, test_file_ops);
    tcase_add_test(bt, test_mount_plan_rechecked);
    tcase_add_test(bt, test_1g_sha256);
    tcase_add_test(bt, test_host_btrfs_quota_off); /* last: toggles quota */
    suite_add_tcase(s, bt);
    TCase *ct = tcase_create("container");
    tcase_add_unchecked_fixture(ct, both_setup, both_teardown);
    tcase_set_timeout(ct, 120);
    tcase_add_test(ct, test_container_quota_and_ro);
    suite_add_tcase(s, ct);
    TCase *fs = tcase_create("other_fs");
    tcase_set_timeout(fs, 120);
    tcase_add_test(fs, test_plain_fs_none);
    tcase_add_test(fs, test_project_quota_ext4);
    tcase_add_test(fs, test_project_quota_xfs);
    tcase_add_test(fs, test_cleanup_no_mount_no_loop);
    suite_add_tcase(s, fs);
    return s;
}
