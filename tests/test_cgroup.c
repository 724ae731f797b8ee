/* cgroup manager: fake-cgroupfs tests for v1, v2 and hybrid layouts (exact
 * files and values, detection, stats parsing, bad input, rollback), and real
 * cgroup tests when running as root on a host with cgroupfs.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skv_cgroup.h"
#include "skv_internal.h"
#include "skv_test.h"

/* ---- a fake cgroupfs ------------------------------------------------------ */

static char root[256];

static void put_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_msg(fd >= 0, "create %s: %s", path, strerror(errno));
    ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

static void fput(const char *text, const char *fmt, ...) SKV_PRINTF(2, 3);
static void fput(const char *text, const char *fmt, ...)
{
    char p[1024];
    int n = snprintf(p, sizeof(p), "%s", root);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p + n, sizeof(p) - (size_t)n, fmt, ap);
    va_end(ap);
    put_file(p, text);
}

static const char *fget(const char *fmt, ...) SKV_PRINTF(1, 2);
static const char *fget(const char *fmt, ...)
{
    static char buf[4096];
    char p[1024];
    int n = snprintf(p, sizeof(p), "%s", root);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p + n, sizeof(p) - (size_t)n, fmt, ap);
    va_end(ap);
    int fd = open(p, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t r = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    buf[r < 0 ? 0 : r] = '\0';
    return buf;
}

static bool fexists(const char *fmt, ...) SKV_PRINTF(1, 2);
static bool fexists(const char *fmt, ...)
{
    char p[1024];
    int n = snprintf(p, sizeof(p), "%s", root);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p + n, sizeof(p) - (size_t)n, fmt, ap);
    va_end(ap);
    struct stat st;
    return stat(p, &st) == 0;
}

static void mkdirs(const char *rel)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s%s", root, rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        mkdir(p, 0755);
        *s = '/';
    }
    mkdir(p, 0755);
}

/* Control files a new directory shows, by controller (the kernel's part). */
static const char *const files_cpuset[] = {"cpuset.cpus", "", "cpuset.mems", "", NULL};
static const char *const files_cpu[] = {"cpu.cfs_period_us", "100000\n",
                                        "cpu.cfs_quota_us", "-1\n", NULL};
static const char *const files_cpuacct[] = {"cpuacct.usage", "0\n", NULL};
static const char *const files_memory[] = {
    "memory.limit_in_bytes", "9223372036854771712\n",
    "memory.memsw.limit_in_bytes", "9223372036854771712\n",
    "memory.usage_in_bytes", "0\n", "memory.max_usage_in_bytes", "0\n",
    "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n", NULL};
static const char *const files_pids[] = {"pids.max", "max\n", "pids.current", "0\n", NULL};
static const char *const files_freezer[] = {"freezer.state", "THAWED\n", NULL};
static const char *const files_unified[] = {
    "cgroup.controllers", "", "cgroup.subtree_control", "", "cgroup.kill", "",
    "cgroup.freeze", "0\n", "cgroup.events", "populated 0\nfrozen 0\n", NULL};
static const char *const files_v2[] = {
    "cgroup.controllers", "cpuset cpu io memory pids\n",
    "cgroup.subtree_control", "", "cgroup.kill", "", "cgroup.freeze", "0\n",
    "cgroup.events", "populated 0\nfrozen 0\n", "cpuset.cpus", "", "cpuset.mems", "",
    "cpu.max", "max 100000\n", "cpu.stat", "usage_usec 0\n", "memory.max", "max\n",
    "memory.swap.max", "max\n", "memory.current", "0\n", "memory.peak", "0\n",
    "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n", "pids.max", "max\n",
    "pids.current", "0\n", NULL};

static bool fake_v2; /* "unified" means a full v2 tree, not hybrid's */

static bool has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, w, n) == 0)
            return true;
        p += len + (p[len] == ',');
    }
    return false;
}

static void put_set(const char *dir, const char *const *set)
{
    char p[1024];
    for (size_t i = 0; set[i]; i += 2) {
        snprintf(p, sizeof(p), "%s/%s", dir, set[i]);
        put_file(p, set[i + 1]);
    }
}

static void fake_after_mkdir(const char *path, const char *ctrl, void *payload)
{
    (void)payload;
    char p[1024];
    snprintf(p, sizeof(p), "%s/cgroup.procs", path);
    put_file(p, "");
    if (strcmp(ctrl, "unified") == 0) {
        put_set(path, fake_v2 ? files_v2 : files_unified);
        return;
    }
    if (has_word(ctrl, "cpuset")) put_set(path, files_cpuset);
    if (has_word(ctrl, "cpu")) put_set(path, files_cpu);
    if (has_word(ctrl, "cpuacct")) put_set(path, files_cpuacct);
    if (has_word(ctrl, "memory")) put_set(path, files_memory);
    if (has_word(ctrl, "pids")) put_set(path, files_pids);
    if (has_word(ctrl, "freezer")) put_set(path, files_freezer);
}

static void fake_before_rmdir(const char *path, const char *ctrl, void *payload)
{
    (void)ctrl;
    (void)payload;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d))) {
        if (e->d_type != DT_REG)
            continue;
        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static const skv__cgroup_fs_hooks fake_hooks = {fake_after_mkdir,
                                                fake_before_rmdir, NULL};

#define MI_PREFIX "30 22 0:27 / /sys/fs/cgroup rw,relatime - "
#define MI_V1(id, dir, opts) \
    id " 30 0:" id " / /sys/fs/cgroup/" dir " rw,relatime - cgroup cgroup rw," opts "\n"
#define MI_V1_ALL                                                           \
    MI_V1("31", "cpu", "cpu") MI_V1("32", "cpuacct", "cpuacct")              \
    MI_V1("33", "cpuset", "cpuset") MI_V1("34", "memory", "memory")          \
    MI_V1("38", "pids", "pids") MI_V1("36", "freezer", "freezer")            \
    MI_V1("39", "systemd", "name=systemd")
#define MI_UNIFIED "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"

static const char *const v1_dirs[] = {"cpu", "cpuacct", "cpuset", "memory",
                                      "pids", "freezer", "systemd", NULL};

static void fake_root(const char *mountinfo, bool v2)
{
    snprintf(root, sizeof(root), "/tmp/skv-cgtest-%ld-XXXXXX", (long)getppid());
    ck_assert_ptr_nonnull(mkdtemp(root));
    mkdirs("/proc/self");
    fput(mountinfo, "/proc/self/mountinfo");
    fput("0::/\n", "/proc/self/cgroup");
    fake_v2 = v2;
    if (v2) {
        mkdirs("/sys/fs/cgroup");
        char p[512];
        snprintf(p, sizeof(p), "%s/sys/fs/cgroup", root);
        put_set(p, files_v2);
        fput("0-3\n", "/sys/fs/cgroup/cpuset.cpus.effective");
    } else {
        for (size_t i = 0; v1_dirs[i]; i++) {
            char rel[128], p[512];
            snprintf(rel, sizeof(rel), "/sys/fs/cgroup/%s", v1_dirs[i]);
            mkdirs(rel);
            snprintf(p, sizeof(p), "%s%s", root, rel);
            fake_after_mkdir(p, v1_dirs[i], NULL);
        }
        fput("0-3\n", "/sys/fs/cgroup/cpuset/cpuset.cpus");
        fput("0-1\n", "/sys/fs/cgroup/cpuset/cpuset.mems");
        mkdirs("/sys/fs/cgroup/unified");
        fput("", "/sys/fs/cgroup/unified/cgroup.procs");
    }
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sysroot_set(root, &e), &e);
    skv__cgroup_set_fs_hooks(&fake_hooks);
}

/* Each test runs in its own process; the tree is removed at the end. */
static void fake_cleanup(void)
{
    skv__cgroup_set_fs_hooks(NULL);
    skv_sysroot_set(NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    ck_assert_int_eq(system(cmd), 0);
}

/* Runs in the runner after the case: removes the trees of failed tests. */
static void fake_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf /tmp/skv-cgtest-%ld-*", (long)getpid());
    if (system(cmd) != 0)
        fprintf(stderr, "warning: '%s' failed\n", cmd);
}

/* Debug log lines "path <- value": the exact writes, in order. */
static char writes[16384];
static void capture(skv_log_level l, const char *m, const char *msg, void *p)
{
    (void)l;
    (void)p;
    if (strcmp(m, "cgroup") != 0 || !strstr(msg, " <- "))
        return;
    const char *rel = strncmp(msg, root, strlen(root)) == 0 ? msg + strlen(root)
                                                           : msg;
    size_t n = strlen(writes);
    snprintf(writes + n, sizeof(writes) - n, "%s\n", rel);
}

static void capture_writes(void)
{
    writes[0] = '\0';
    skv_set_logger(capture, SKV_LOG_DEBUG, NULL);
}

static const skv_cgroup_config cfg_default = {SKV_CGROUP_MODE_AUTO, NULL, false};

/* ---- detection ------------------------------------------------------------ */

START_TEST(test_detect_modes)
{
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup_mode m;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    SKV_CK_OK(skv__cgroup_detect(&m, &e), &e);
    ck_assert_int_eq(m, SKV_CGROUP_MODE_HYBRID);
    ck_assert_str_eq(skv__cgroup_mode_name(m), "hybrid");
    fput(MI_V1_ALL, "/proc/self/mountinfo");
    SKV_CK_OK(skv__cgroup_detect(&m, &e), &e);
    ck_assert_int_eq(m, SKV_CGROUP_MODE_V1);
    fput(MI_PREFIX "cgroup2 cgroup2 rw,nsdelegate\n", "/proc/self/mountinfo");
    SKV_CK_OK(skv__cgroup_detect(&m, &e), &e);
    ck_assert_int_eq(m, SKV_CGROUP_MODE_V2);
    /* A tmpfs with nothing cgroup below it. */
    fput(MI_PREFIX "tmpfs tmpfs rw\n", "/proc/self/mountinfo");
    ck_assert_int_eq(skv__cgroup_detect(&m, &e), SKV_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.message, "/sys/fs/cgroup"));
    /* cgroup2 mounted elsewhere does not count as the host's mode. */
    fput("50 22 0:40 / /mnt/cg rw - cgroup2 cgroup2 rw\n", "/proc/self/mountinfo");
    ck_assert_int_eq(skv__cgroup_detect(&m, &e), SKV_ENOTSUP);
    char mi[512];
    snprintf(mi, sizeof(mi), "%s/proc/self/mountinfo", root);
    unlink(mi);
    ck_assert_int_eq(skv__cgroup_detect(&m, &e), SKV_ENOENT);
    ck_assert_int_eq(skv__cgroup_detect(NULL, &e), SKV_EINVAL);
    ck_assert_str_eq(skv__cgroup_mode_name((skv_cgroup_mode)42), "?");
    fake_cleanup();
}
END_TEST

/* cpu,cpuacct co-mounted (the systemd default) is one hierarchy. */
START_TEST(test_detect_comounted)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1("31", "cpu,cpuacct", "cpu,cpuacct")
              MI_V1("34", "memory", "memory") MI_V1("38", "pids", "pids")
              MI_V1("33", "cpuset", "cpuset"), false);
    mkdirs("/sys/fs/cgroup/cpu,cpuacct");
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/fs/cgroup/cpu,cpuacct", root);
    fake_after_mkdir(p, "cpu,cpuacct", NULL);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "k1", &e), &e);
    ck_assert_int_eq(skv__cgroup_mode(cg), SKV_CGROUP_MODE_V1);
    ck_assert_str_eq(skv__cgroup_dir(cg, "cpu"), "/sys/fs/cgroup/cpu,cpuacct/sokovan/k1");
    ck_assert_str_eq(skv__cgroup_dir(cg, "cpuacct"), skv__cgroup_dir(cg, "cpu"));
    ck_assert_ptr_null(skv__cgroup_dir(cg, "freezer"));
    ck_assert_ptr_null(skv__cgroup_dir(cg, "unified"));
    ck_assert_str_eq(skv__cgroup_rel_path(cg), "/sokovan/k1");
    skv_cgroup_limits lim = {.cpu = 2000};
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    ck_assert_str_eq(fget("/sys/fs/cgroup/cpu,cpuacct/sokovan/k1/cpu.cfs_quota_us"), "200000");
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    ck_assert(!fexists("/sys/fs/cgroup/cpu,cpuacct/sokovan/k1"));
    ck_assert(fexists("/sys/fs/cgroup/cpu,cpuacct/sokovan"));
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

/* ---- hybrid: every v1 file with the exact value, plus the unified dir ------ */

/* A pid goes into every hierarchy, the unified one included. */
static void add_pid_everywhere(skv_cgroup *cg)
{
    skv_error e = SKV_ERROR_INIT;
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_add_pid(cg, 4242, &e), &e);
    ck_assert_str_eq(fget("/sys/fs/cgroup/unified/sokovan/k-1/cgroup.procs"), "4242");
    ck_assert_str_eq(fget("/sys/fs/cgroup/freezer/sokovan/k-1/cgroup.procs"), "4242");
    ck_assert_ptr_nonnull(strstr(writes, "/sys/fs/cgroup/cpuset/sokovan/k-1/cgroup.procs <- 4242"));
    pid_t *pids = NULL;
    size_t n = 0;
    SKV_CK_OK(skv__cgroup_pids(cg, &pids, &n, &e), &e);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(pids[0], 4242);
    skv__free(pids);
    ck_assert(!skv__cgroup_is_empty(cg));
    /* Empty the fake lists again before anything could signal pid 4242. */
    for (size_t i = 0; v1_dirs[i]; i++)
        if (strcmp(v1_dirs[i], "systemd") != 0)
            fput("", "/sys/fs/cgroup/%s/sokovan/k-1/cgroup.procs", v1_dirs[i]);
    fput("", "/sys/fs/cgroup/unified/sokovan/k-1/cgroup.procs");
    ck_assert(skv__cgroup_is_empty(cg));
}

START_TEST(test_hybrid_lifecycle)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    capture_writes();
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "k-1", &e), &e);
    ck_assert_int_eq(skv__cgroup_mode(cg), SKV_CGROUP_MODE_HYBRID);
    /* cpuset: the new parent and the leaf copy cpus/mems from above. */
    ck_assert_str_eq(writes,
                     "/sys/fs/cgroup/cpuset/sokovan/cpuset.cpus <- 0-3\n\n"
                     "/sys/fs/cgroup/cpuset/sokovan/cpuset.mems <- 0-1\n\n"
                     "/sys/fs/cgroup/cpuset/sokovan/k-1/cpuset.cpus <- 0-3\n\n"
                     "/sys/fs/cgroup/cpuset/sokovan/k-1/cpuset.mems <- 0-1\n\n");
    for (size_t i = 0; v1_dirs[i]; i++)
        if (strcmp(v1_dirs[i], "systemd") != 0)
            ck_assert_msg(fexists("/sys/fs/cgroup/%s/sokovan/k-1", v1_dirs[i]),
                          "%s", v1_dirs[i]);
    ck_assert(!fexists("/sys/fs/cgroup/systemd/sokovan"));
    ck_assert(fexists("/sys/fs/cgroup/unified/sokovan/k-1/cgroup.kill"));

    skv_cgroup_limits lim = {.cpus = "1,3", .mems = "1", .cpu = 1500,
                             .memory_bytes = 64 << 20, .pids_max = 64};
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    ck_assert_str_eq(writes,
                     "/sys/fs/cgroup/cpuset/sokovan/k-1/cpuset.cpus <- 1,3\n"
                     "/sys/fs/cgroup/cpuset/sokovan/k-1/cpuset.mems <- 1\n"
                     "/sys/fs/cgroup/cpu/sokovan/k-1/cpu.cfs_period_us <- 100000\n"
                     "/sys/fs/cgroup/cpu/sokovan/k-1/cpu.cfs_quota_us <- 150000\n"
                     "/sys/fs/cgroup/memory/sokovan/k-1/memory.limit_in_bytes <- 67108864\n"
                     "/sys/fs/cgroup/memory/sokovan/k-1/memory.memsw.limit_in_bytes <- 67108864\n"
                     "/sys/fs/cgroup/pids/sokovan/k-1/pids.max <- 64\n");
    ck_assert_str_eq(fget("/sys/fs/cgroup/memory/sokovan/k-1/memory.memsw.limit_in_bytes"),
                     "67108864");

    add_pid_everywhere(cg);

    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    for (size_t i = 0; v1_dirs[i]; i++)
        ck_assert(!fexists("/sys/fs/cgroup/%s/sokovan/k-1", v1_dirs[i]));
    ck_assert(!fexists("/sys/fs/cgroup/unified/sokovan/k-1"));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e); /* idempotent */
    skv__cgroup_free(cg);
    skv__cgroup_free(NULL);
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    fake_cleanup();
}
END_TEST

/* v1 without swap accounting: no memsw write; raising a limit above the
 * current memsw limit writes memsw first. */
START_TEST(test_v1_memory_order)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL, false);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "m", &e), &e);
    ck_assert_int_eq(skv__cgroup_mode(cg), SKV_CGROUP_MODE_V1);
    ck_assert_ptr_null(skv__cgroup_dir(cg, "unified"));
    skv_cgroup_limits lim = {.memory_bytes = 32 << 20, .allow_swap = true};
    capture_writes();
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    ck_assert_str_eq(writes, "/sys/fs/cgroup/memory/sokovan/m/memory.limit_in_bytes <- 33554432\n");
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/fs/cgroup/memory/sokovan/m/memory.memsw.limit_in_bytes", root);
    unlink(p);
    lim.allow_swap = false;
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    ck_assert_str_eq(writes, "/sys/fs/cgroup/memory/sokovan/m/memory.limit_in_bytes <- 33554432\n");
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    skv__cgroup_destroy(cg, NULL);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

/* ---- v2 -------------------------------------------------------------------- */

START_TEST(test_v2_lifecycle)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_PREFIX "cgroup2 cgroup2 rw\n", true);
    capture_writes();
    skv_cgroup_config cfg = {SKV_CGROUP_MODE_AUTO, "agents/a1", false};
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "k2", &e), &e);
    ck_assert_int_eq(skv__cgroup_mode(cg), SKV_CGROUP_MODE_V2);
    ck_assert_str_eq(skv__cgroup_dir(cg, "unified"), "/sys/fs/cgroup/agents/a1/k2");
    ck_assert_str_eq(skv__cgroup_rel_path(cg), "/agents/a1/k2");
    /* Controllers enabled at the root and at each new parent, not the leaf. */
    static const char *const levels[] = {"", "/agents", "/agents/a1"};
    for (size_t i = 0; i < 3; i++) {
        char want[256];
        snprintf(want, sizeof(want),
                 "/sys/fs/cgroup%s/cgroup.subtree_control <- +cpuset\n"
                 "/sys/fs/cgroup%s/cgroup.subtree_control <- +cpu\n"
                 "/sys/fs/cgroup%s/cgroup.subtree_control <- +memory\n"
                 "/sys/fs/cgroup%s/cgroup.subtree_control <- +pids\n",
                 levels[i], levels[i], levels[i], levels[i]);
        ck_assert_msg(strstr(writes, want), "%s missing in\n%s", want, writes);
    }
    ck_assert_ptr_null(strstr(writes, "k2/cgroup.subtree_control"));

    skv_cgroup_limits lim = {.cpus = "0-1", .mems = "0", .cpu = 500,
                             .cpu_period_us = 50000, .memory_bytes = 256 << 20,
                             .pids_max = 100};
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    ck_assert_str_eq(writes,
                     "/sys/fs/cgroup/agents/a1/k2/cpuset.cpus <- 0-1\n"
                     "/sys/fs/cgroup/agents/a1/k2/cpuset.mems <- 0\n"
                     "/sys/fs/cgroup/agents/a1/k2/cpu.max <- 25000 50000\n"
                     "/sys/fs/cgroup/agents/a1/k2/memory.max <- 268435456\n"
                     "/sys/fs/cgroup/agents/a1/k2/memory.swap.max <- 0\n"
                     "/sys/fs/cgroup/agents/a1/k2/pids.max <- 100\n");

    /* A controller that could not be enabled: its file is missing. */
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/fs/cgroup/agents/a1/k2/pids.max", root);
    unlink(p);
    ck_assert_int_eq(skv__cgroup_apply(cg, &lim, &e), SKV_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.message, "pids.max"));

    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_kill(cg, 100, &e), &e); /* empty: nothing to do */
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    ck_assert(!fexists("/sys/fs/cgroup/agents/a1/k2"));
    ck_assert(fexists("/sys/fs/cgroup/agents/a1"));
    skv__cgroup_free(cg);
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    fake_cleanup();
}
END_TEST

/* ---- stats parsing --------------------------------------------------------- */

START_TEST(test_stats_v1)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "s", &e), &e);
    fput("123456789\n", "/sys/fs/cgroup/cpuacct/sokovan/s/cpuacct.usage");
    fput("1048576\n", "/sys/fs/cgroup/memory/sokovan/s/memory.usage_in_bytes");
    fput("2097152\n", "/sys/fs/cgroup/memory/sokovan/s/memory.max_usage_in_bytes");
    fput("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
         "/sys/fs/cgroup/memory/sokovan/s/memory.oom_control");
    fput("7\n", "/sys/fs/cgroup/pids/sokovan/s/pids.current");
    skv_cgroup_stats st;
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert(st.has_cpu && st.has_memory && st.has_memory_peak && st.has_pids &&
              st.has_oom_kills);
    ck_assert_uint_eq(st.cpu_usage_ns, 123456789u);
    ck_assert_uint_eq(st.memory_current, 1048576u);
    ck_assert_uint_eq(st.memory_peak, 2097152u);
    ck_assert_uint_eq(st.oom_kills, 3);
    ck_assert_uint_eq(st.pids_current, 7);
    /* Old kernel: no oom_kill line -> flagged, not an error. */
    fput("oom_kill_disable 0\nunder_oom 0\n", "/sys/fs/cgroup/memory/sokovan/s/memory.oom_control");
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert(!st.has_oom_kills && st.has_memory);
    /* Malformed values are errors naming the file. */
    fput("12x\n", "/sys/fs/cgroup/pids/sokovan/s/pids.current");
    ck_assert_int_eq(skv__cgroup_stats(cg, &st, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "pids.current"));
    fput("7\n", "/sys/fs/cgroup/pids/sokovan/s/pids.current");
    fput("oom_kill -1\n", "/sys/fs/cgroup/memory/sokovan/s/memory.oom_control");
    ck_assert_int_eq(skv__cgroup_stats(cg, &st, &e), SKV_EPROTO);
    fput("", "/sys/fs/cgroup/cpuacct/sokovan/s/cpuacct.usage");
    ck_assert_int_eq(skv__cgroup_stats(cg, &st, &e), SKV_EPROTO);
    ck_assert_int_eq(skv__cgroup_stats(cg, NULL, &e), SKV_EINVAL);
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    ck_assert_int_eq(skv__cgroup_stats(cg, &st, &e), SKV_ENOENT);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

START_TEST(test_stats_v2)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_PREFIX "cgroup2 cgroup2 rw\n", true);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "s", &e), &e);
    fput("usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n", "/sys/fs/cgroup/sokovan/s/cpu.stat");
    fput("4096\n", "/sys/fs/cgroup/sokovan/s/memory.current");
    fput("8192\n", "/sys/fs/cgroup/sokovan/s/memory.peak");
    fput("low 0\nhigh 0\nmax 5\noom 2\noom_kill 1\noom_group_kill 0\n",
         "/sys/fs/cgroup/sokovan/s/memory.events");
    fput("3\n", "/sys/fs/cgroup/sokovan/s/pids.current");
    skv_cgroup_stats st;
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert_uint_eq(st.cpu_usage_ns, 2500000u);
    ck_assert_uint_eq(st.memory_current, 4096);
    ck_assert_uint_eq(st.memory_peak, 8192);
    ck_assert_uint_eq(st.oom_kills, 1);
    ck_assert_uint_eq(st.pids_current, 3);
    /* memory.peak appeared in Linux 5.19. */
    char p[512];
    snprintf(p, sizeof(p), "%s/sys/fs/cgroup/sokovan/s/memory.peak", root);
    unlink(p);
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert(!st.has_memory_peak && st.has_memory && st.has_cpu);
    fput("usage_usec twelve\n", "/sys/fs/cgroup/sokovan/s/cpu.stat");
    ck_assert_int_eq(skv__cgroup_stats(cg, &st, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "usage_usec"));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

/* ---- kill: timeout and the freezer path, with a zombie as the "survivor" --- */

/* A zombie child: SIGKILL to it succeeds and changes nothing, so a fake
 * cgroup.procs that lists it never empties. Nothing else is ever signalled. */
static pid_t make_zombie(void)
{
    pid_t z = fork();
    ck_assert_int_ge(z, 0);
    if (z == 0)
        _exit(0);
    siginfo_t si;
    ck_assert_int_eq(waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT), 0);
    return z;
}

static void kill_timeout(bool v2)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(v2 ? MI_PREFIX "cgroup2 cgroup2 rw\n" : MI_V1_ALL MI_UNIFIED, v2);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "z", &e), &e);
    pid_t z = make_zombie();
    char pid[32];
    snprintf(pid, sizeof(pid), "%ld\n", (long)z);
    fput(pid, v2 ? "/sys/fs/cgroup/sokovan/z/cgroup.procs"
                 : "/sys/fs/cgroup/pids/sokovan/z/cgroup.procs");
    capture_writes();
    ck_assert_int_eq(skv__cgroup_kill(cg, 60, &e), SKV_ETIMEDOUT);
    ck_assert_msg(strstr(e.message, pid) || strstr(e.message, "survive"), "%s", e.message);
    /* cgroup.kill once, then rounds that end up frozen. */
    const char *kill_file = v2 ? "/sys/fs/cgroup/sokovan/z/cgroup.kill <- 1"
                               : "/sys/fs/cgroup/unified/sokovan/z/cgroup.kill <- 1";
    ck_assert_msg(strstr(writes, kill_file), "%s", writes);
    const char *first = strstr(writes, "cgroup.kill <-");
    ck_assert_ptr_null(strstr(first + 1, "cgroup.kill <-")); /* only once */
    const char *freeze = v2 ? "/sys/fs/cgroup/sokovan/z/cgroup.freeze <- 1"
                            : "/sys/fs/cgroup/freezer/sokovan/z/freezer.state <- FROZEN";
    const char *thaw = v2 ? "/sys/fs/cgroup/sokovan/z/cgroup.freeze <- 0"
                          : "/sys/fs/cgroup/freezer/sokovan/z/freezer.state <- THAWED";
    ck_assert_msg(strstr(writes, freeze) && strstr(writes, thaw), "%s", writes);
    ck_assert(!skv__cgroup_is_empty(cg));
    fput("", v2 ? "/sys/fs/cgroup/sokovan/z/cgroup.procs"
                : "/sys/fs/cgroup/pids/sokovan/z/cgroup.procs");
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    ck_assert(!fexists("/sys/fs/cgroup/%s/sokovan/z", v2 ? "" : "memory"));
    skv__cgroup_free(cg);
    ck_assert_int_eq(waitpid(z, NULL, 0), z);
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    fake_cleanup();
}

START_TEST(test_kill_timeout_hybrid)
{
    kill_timeout(false);
}
END_TEST

START_TEST(test_kill_timeout_v2)
{
    kill_timeout(true);
}
END_TEST

/* ---- bad input: clear errors, nothing written or left ---------------------- */

static void count_entries(const char *rel, int *out)
{
    char p[512];
    snprintf(p, sizeof(p), "%s%s", root, rel);
    DIR *d = opendir(p);
    *out = 0;
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_type == DT_DIR && e->d_name[0] != '.')
            (*out)++;
    closedir(d);
}

START_TEST(test_bad_names)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    skv_cgroup *cg = NULL;
    static const char *const names[] = {"", "..", ".", "a/b", "a b", "x\n"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(names); i++) {
        ck_assert_int_eq(skv__cgroup_create(&cg, &cfg_default, names[i], &e), SKV_EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "cgroup name"));
    }
    static const char *const parents[] = {"/abs", "a/../b", "a//.", "x y"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(parents); i++) {
        skv_cgroup_config cfg = {SKV_CGROUP_MODE_AUTO, parents[i], false};
        ck_assert_int_eq(skv__cgroup_create(&cg, &cfg, "ok", &e), SKV_EINVAL);
        ck_assert_msg(strstr(e.message, parents[i]), "%s", e.message);
    }
    char longname[200];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    ck_assert_int_eq(skv__cgroup_create(&cg, &cfg_default, longname, &e), SKV_EINVAL);
    skv_cgroup_config badmode = {(skv_cgroup_mode)9, NULL, false};
    ck_assert_int_eq(skv__cgroup_create(&cg, &badmode, "ok", &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_create(&cg, NULL, "ok", &e), SKV_EINVAL);
    ck_assert_ptr_null(cg);
    int n;
    count_entries("/sys/fs/cgroup/memory", &n);
    ck_assert_int_eq(n, 0);
    fake_cleanup();
}
END_TEST

START_TEST(test_bad_limits)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "b", &e), &e);
    static const struct { skv_cgroup_limits l; int code; const char *word; } bad[] = {
        {{.cpus = "0-"}, SKV_EINVAL, "cpus"},
        {{.cpus = "a"}, SKV_EINVAL, "cpus"},
        {{.cpus = "3-1"}, SKV_ERANGE, "cpus"},
        {{.cpus = "0,,1"}, SKV_EINVAL, "cpus"},
        {{.mems = "0;1"}, SKV_EINVAL, "mems"},
        {{.cpu = -5}, SKV_EINVAL, "cpu quota"},
        {{.cpu = 5}, SKV_ERANGE, "1000 us"},
        {{.cpu = 1000, .cpu_period_us = 999}, SKV_ERANGE, "cpu_period_us"},
        {{.cpu = INT64_MAX - 1}, SKV_ERANGE, "too large"},
        {{.memory_bytes = -1}, SKV_EINVAL, "memory"},
        {{.memory_bytes = 4096}, SKV_ERANGE, "1 MiB"},
        {{.pids_max = -2}, SKV_EINVAL, "pids"},
    };
    capture_writes();
    for (size_t i = 0; i < SKV__ARRAY_LEN(bad); i++) {
        skv_cgroup_limits l = bad[i].l;
        l.pids_max = l.pids_max ? l.pids_max : 10; /* valid, must not be written */
        ck_assert_int_eq(skv__cgroup_apply(cg, &l, &e), bad[i].code);
        ck_assert_msg(strstr(e.message, bad[i].word), "case %zu: %s", i, e.message);
        ck_assert_msg(strstr(e.message, "/sokovan/b"), "case %zu: %s", i, e.message);
    }
    ck_assert_str_eq(writes, "");
    ck_assert_str_eq(fget("/sys/fs/cgroup/pids/sokovan/b/pids.max"), "max\n");
    ck_assert_int_eq(skv__cgroup_apply(cg, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_add_pid(cg, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_signal(cg, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_kill(NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_destroy(NULL, &e), SKV_EINVAL);
    /* Unlimited CPU and empty lists are "no limit": nothing written. */
    skv_cgroup_limits none = {.cpus = "", .cpu = SKV_QTY_UNLIMITED};
    SKV_CK_OK(skv__cgroup_apply(cg, &none, &e), &e);
    ck_assert_str_eq(writes, "");
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Device rules are validated before anything is loaded; a cgroup without a
 * cgroup2 directory is refused; a failed attach leaves no fd open. */
START_TEST(test_devices_bad_rules)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "d", &e), &e);
    static const struct { skv_cgroup_device d; int code; const char *word; } bad[] = {
        {{'x', 1, 3, "rw"}, SKV_EINVAL, "type 'x'"},
        {{'\0', 1, 3, "rw"}, SKV_EINVAL, "type '?'"},
        {{'c', 1, 3, "rwx"}, SKV_EINVAL, "access 'rwx'"},
        {{'c', 1, 3, ""}, SKV_EINVAL, "access ''"},
        {{'c', 1, 3, NULL}, SKV_EINVAL, "access '(null)'"},
        {{'c', 1, 3, "rwmr"}, SKV_EINVAL, "access 'rwmr'"},
        {{'c', 1, 3, "rr"}, SKV_EINVAL, "repeats 'r'"},
        {{'b', 4096, 0, "r"}, SKV_ERANGE, "major 4096"},
        {{'b', -2, 0, "r"}, SKV_ERANGE, "major -2"},
        {{'c', 1, 1048576, "r"}, SKV_ERANGE, "minor 1048576"},
    };
    for (size_t i = 0; i < SKV__ARRAY_LEN(bad); i++) {
        skv_cgroup_device two[2] = {{'c', 1, -1, "r"}, bad[i].d};
        ck_assert_int_eq(skv__cgroup_devices_set(cg, two, 2, &e), bad[i].code);
        ck_assert_msg(strstr(e.message, "rule 1") && strstr(e.message, bad[i].word),
                      "case %zu: %s", i, e.message);
        ck_assert(!skv__cgroup_devices_filtered(cg));
    }
    ck_assert_int_eq(skv__cgroup_devices_set(NULL, NULL, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv__cgroup_devices_set(cg, NULL, 1, &e), SKV_EINVAL);
    ck_assert(!skv__cgroup_devices_filtered(NULL));
    /* The fake unified directory is no cgroup: the kernel refuses (or, not
     * root, refuses the load); nothing stays open. */
    int fds = count_fds();
    ck_assert_int_lt(skv__cgroup_devices_set(cg, NULL, 0, &e), 0);
    ck_assert_msg(strstr(e.message, "device allow-list"), "%s", e.message);
    ck_assert_int_eq(count_fds(), fds);
    ck_assert(!skv__cgroup_devices_filtered(cg));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    /* Plain v1: no cgroup2 directory at all. */
    const skv_cgroup_config v1 = {SKV_CGROUP_MODE_V1, NULL, false};
    SKV_CK_OK(skv__cgroup_create(&cg, &v1, "d1", &e), &e);
    ck_assert_int_eq(skv__cgroup_devices_set(cg, NULL, 0, &e), SKV_ENOTSUP);
    ck_assert_msg(strstr(e.message, "no cgroup2 directory"), "%s", e.message);
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

/* A missing controller: the limit is refused with SKV_ENOTSUP. */
START_TEST(test_missing_controller)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1("31", "cpu", "cpu") MI_V1("34", "memory", "memory"), false);
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "nc", &e), &e);
    skv_cgroup_limits l = {.pids_max = 5};
    ck_assert_int_eq(skv__cgroup_apply(cg, &l, &e), SKV_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.message, "pids"));
    skv_cgroup_limits c = {.cpus = "0"};
    ck_assert_int_eq(skv__cgroup_apply(cg, &c, &e), SKV_ENOTSUP);
    ck_assert_ptr_nonnull(strstr(e.message, "cpuset"));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    fake_cleanup();
}
END_TEST

/* The leaf exists in one hierarchy only: create fails with SKV_EEXIST and
 * removes everything it made (the new "sokovan" parents included). */
START_TEST(test_create_rollback)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    mkdirs("/sys/fs/cgroup/pids/sokovan/dup");
    skv_cgroup *cg = NULL;
    ck_assert_int_eq(skv__cgroup_create(&cg, &cfg_default, "dup", &e), SKV_EEXIST);
    ck_assert_ptr_nonnull(strstr(e.message, "pids/sokovan/dup"));
    ck_assert_ptr_null(cg);
    static const char *const gone[] = {"cpu", "cpuacct", "cpuset", "memory",
                                       "freezer", "unified"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(gone); i++)
        ck_assert_msg(!fexists("/sys/fs/cgroup/%s/sokovan", gone[i]), "%s", gone[i]);
    ck_assert(fexists("/sys/fs/cgroup/pids/sokovan/dup"));
    /* A cpuset parent with nothing to copy: also rolled back. */
    fput("", "/sys/fs/cgroup/cpuset/cpuset.mems");
    ck_assert_int_eq(skv__cgroup_create(&cg, &cfg_default, "k", &e), SKV_ESTATE);
    ck_assert_ptr_nonnull(strstr(e.message, "cpuset.mems"));
    for (size_t i = 0; i < SKV__ARRAY_LEN(gone); i++)
        ck_assert_msg(!fexists("/sys/fs/cgroup/%s/sokovan", gone[i]), "%s", gone[i]);
    ck_assert(!fexists("/sys/fs/cgroup/pids/sokovan/k"));
    /* Twice the same name: the second create fails, the first survives. */
    fput("0\n", "/sys/fs/cgroup/cpuset/cpuset.mems");
    skv_cgroup *a = NULL;
    SKV_CK_OK(skv__cgroup_create(&a, &cfg_default, "k", &e), &e);
    ck_assert_int_eq(skv__cgroup_create(&cg, &cfg_default, "k", &e), SKV_EEXIST);
    ck_assert(fexists("/sys/fs/cgroup/memory/sokovan/k/memory.limit_in_bytes"));
    SKV_CK_OK(skv__cgroup_destroy(a, &e), &e);
    skv__cgroup_free(a);
    fake_cleanup();
}
END_TEST

/* Re-attaching after an agent restart. */
START_TEST(test_open)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    skv_cgroup *cg = NULL, *again = NULL;
    ck_assert_int_eq(skv__cgroup_open(&cg, &cfg_default, "r", &e), SKV_ENOENT);
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "r", &e), &e);
    skv__cgroup_free(cg);
    SKV_CK_OK(skv__cgroup_open(&again, &cfg_default, "r", &e), &e);
    ck_assert_int_eq(skv__cgroup_mode(again), SKV_CGROUP_MODE_HYBRID);
    ck_assert_str_eq(skv__cgroup_dir(again, "memory"), "/sys/fs/cgroup/memory/sokovan/r");
    SKV_CK_OK(skv__cgroup_destroy(again, &e), &e);
    ck_assert(!fexists("/sys/fs/cgroup/memory/sokovan/r"));
    skv__cgroup_free(again);
    fake_cleanup();
}
END_TEST

/* nest_in_self: below the caller's own cgroup, per hierarchy. */
START_TEST(test_nest_in_self)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    fput("9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/agent/x\n3:cpuset:/\n"
         "2:cpuacct:/\n1:cpu:/\n0::/agent.slice\n", "/proc/self/cgroup");
    mkdirs("/sys/fs/cgroup/memory/agent/x");
    mkdirs("/sys/fs/cgroup/unified/agent.slice");
    skv_cgroup_config cfg = {SKV_CGROUP_MODE_AUTO, "sk", true};
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "n", &e), &e);
    ck_assert_str_eq(skv__cgroup_dir(cg, "memory"), "/sys/fs/cgroup/memory/agent/x/sk/n");
    ck_assert_str_eq(skv__cgroup_dir(cg, "pids"), "/sys/fs/cgroup/pids/sk/n");
    ck_assert_str_eq(skv__cgroup_dir(cg, "unified"), "/sys/fs/cgroup/unified/agent.slice/sk/n");
    ck_assert(fexists("/sys/fs/cgroup/memory/agent/x/sk/n/memory.oom_control"));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    /* Without a line for the hierarchy: a clear error, nothing made. */
    fput("0::/\n", "/proc/self/cgroup");
    ck_assert_int_eq(skv__cgroup_create(&cg, &cfg, "n2", &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "/proc/self/cgroup"));
    fake_cleanup();
}
END_TEST

/* ---- real cgroups (root only) ------------------------------------------------ */

/* All real tests work below "skv-cgtest-<runner pid>" in each hierarchy; the
 * runner's teardown removes whatever a failed test left there. */
static char real_parent[64];

static bool real_setup(skv_cgroup_config *cfg)
{
    skv_cgroup_mode m;
    skv_error e = SKV_ERROR_INIT;
    if (geteuid() != 0) {
        printf("note: real cgroup test skipped (not root)\n");
        return false;
    }
    if (skv__cgroup_detect(&m, &e) < 0) {
        printf("note: real cgroup test skipped (%s)\n", e.message);
        return false;
    }
    snprintf(real_parent, sizeof(real_parent), "skv-cgtest-%ld", (long)getppid());
    cfg->mode = SKV_CGROUP_MODE_AUTO;
    cfg->parent = real_parent;
    cfg->nest_in_self = false;
    return true;
}

static void kill_and_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *en;
    char p[1024];
    while ((en = readdir(d))) {
        if (en->d_type != DT_DIR || en->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s", dir, en->d_name);
        kill_and_rmdir(p);
    }
    closedir(d);
    snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
    for (int round = 0; round < 200; round++) {
        FILE *f = fopen(p, "r");
        long pid;
        int n = 0;
        while (f && fscanf(f, "%ld", &pid) == 1) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
        if (f)
            fclose(f);
        if (n == 0 && rmdir(dir) == 0)
            return;
        usleep(5000);
    }
}

static void real_teardown(void)
{
    DIR *d = opendir("/sys/fs/cgroup");
    if (!d || geteuid() != 0) {
        if (d)
            closedir(d);
        return;
    }
    struct dirent *en;
    char p[512];
    while ((en = readdir(d))) {
        if (en->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/skv-cgtest-%ld", en->d_name,
                 (long)getpid());
        kill_and_rmdir(p);
    }
    closedir(d);
    snprintf(p, sizeof(p), "rm -rf /tmp/skv-cgdev-%ld-*", (long)getpid());
    if (system(p) != 0)
        fprintf(stderr, "warning: '%s' failed\n", p);
}

/* Every hierarchy directory of cg, then the test parent, must be gone. */
static void assert_removed(skv_cgroup *cg)
{
    static const char *const ctrls[] = {"cpuset", "cpu", "cpuacct", "memory",
                                        "pids", "freezer", "devices", "unified"};
    char dirs[SKV__ARRAY_LEN(ctrls)][512];
    size_t n = 0;
    for (size_t i = 0; i < SKV__ARRAY_LEN(ctrls); i++) {
        const char *d = skv__cgroup_dir(cg, ctrls[i]);
        if (d)
            snprintf(dirs[n++], sizeof(dirs[0]), "%s", d);
    }
    ck_assert_uint_gt(n, 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    struct stat st;
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(stat(dirs[i], &st) != 0 && errno == ENOENT, "%s left", dirs[i]);
        char *slash = strrchr(dirs[i], '/');
        *slash = '\0'; /* the test parent: ours to remove, must be empty */
        ck_assert_msg(rmdir(dirs[i]) == 0 || errno == ENOENT, "rmdir %s: %s",
                      dirs[i], strerror(errno));
    }
    /* Nothing of ours in any hierarchy, known to the library or not. */
    DIR *d = opendir("/sys/fs/cgroup");
    ck_assert_ptr_nonnull(d);
    struct dirent *en;
    while ((en = readdir(d))) {
        char p[512];
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/%s", en->d_name, real_parent);
        ck_assert_msg(en->d_name[0] == '.' || stat(p, &st) != 0, "%s left", p);
    }
    closedir(d);
}

static long cg_file_long(skv_cgroup *cg, const char *ctrl, const char *file)
{
    char p[512], buf[64] = "";
    snprintf(p, sizeof(p), "%s/%s", skv__cgroup_dir(cg, ctrl), file);
    FILE *f = fopen(p, "r");
    ck_assert_msg(f != NULL, "%s", p);
    ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
    fclose(f);
    return strtol(buf, NULL, 10);
}

/* A child that waits for "go", then runs fn and reports one int back. */
typedef int (*child_fn)(void);
static pid_t spawn(child_fn fn, int *go_fd, int *report_fd)
{
    int go[2], rep[2];
    ck_assert_int_eq(pipe(go), 0);
    ck_assert_int_eq(pipe(rep), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        char c;
        close(go[1]);
        close(rep[0]);
        if (read(go[0], &c, 1) != 1)
            _exit(99);
        int r = fn();
        if (write(rep[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(98);
        for (;;)
            pause();
    }
    close(go[0]);
    close(rep[1]);
    *go_fd = go[1];
    *report_fd = rep[0];
    return pid;
}

static int report(int go_fd, int report_fd)
{
    int r = -1;
    ck_assert_int_eq(write(go_fd, "g", 1), 1);
    ck_assert_int_eq(read(report_fd, &r, sizeof(r)), (ssize_t)sizeof(r));
    close(go_fd);
    close(report_fd);
    return r;
}

static int affinity_is_cpu0(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return -1;
    return CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set);
}

/* On the real host, mountinfo-based detection agrees with the statfs magic
 * numbers that crun and runc use. */
START_TEST(test_real_detect_matches_statfs)
{
    struct statfs fs;
    skv_cgroup_mode m, want;
    skv_error e = SKV_ERROR_INIT;
    if (statfs("/sys/fs/cgroup", &fs) != 0) {
        printf("note: no /sys/fs/cgroup, detection check skipped\n");
        return;
    }
    if (fs.f_type == CGROUP2_SUPER_MAGIC)
        want = SKV_CGROUP_MODE_V2;
    else if (statfs("/sys/fs/cgroup/unified", &fs) == 0 &&
             fs.f_type == CGROUP2_SUPER_MAGIC)
        want = SKV_CGROUP_MODE_HYBRID;
    else
        want = SKV_CGROUP_MODE_V1;
    SKV_CK_OK(skv__cgroup_detect(&m, &e), &e);
    ck_assert_str_eq(skv__cgroup_mode_name(m), skv__cgroup_mode_name(want));
}
END_TEST

START_TEST(test_real_lifecycle)
{
    skv_cgroup_config cfg;
    if (!real_setup(&cfg))
        return;
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "life", &e), &e);
    skv_cgroup_limits lim = {.cpus = "0", .mems = "0", .cpu = 500,
                             .memory_bytes = 64 << 20, .pids_max = 32};
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    int go, rep;
    pid_t child = spawn(affinity_is_cpu0, &go, &rep);
    SKV_CK_OK(skv__cgroup_add_pid(cg, child, &e), &e);
    ck_assert_int_eq(report(go, rep), 1); /* cpuset applied to the child */

    if (skv__cgroup_mode(cg) != SKV_CGROUP_MODE_V2) {
        ck_assert_int_eq(cg_file_long(cg, "cpu", "cpu.cfs_quota_us"), 50000);
        ck_assert_int_eq(cg_file_long(cg, "memory", "memory.limit_in_bytes"), 64 << 20);
        ck_assert_int_eq(cg_file_long(cg, "pids", "pids.max"), 32);
    }
    pid_t *pids = NULL;
    size_t n = 0;
    SKV_CK_OK(skv__cgroup_pids(cg, &pids, &n, &e), &e);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(pids[0], child);
    skv__free(pids);
    skv_cgroup_stats st;
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert(st.has_pids && st.pids_current == 1);
    ck_assert(st.has_memory && st.memory_current > 0);
    ck_assert(st.has_cpu && st.cpu_usage_ns > 0);

    /* Kill before reaping: the zombie must not hold the cgroup. */
    SKV_CK_OK(skv__cgroup_kill(cg, 3000, &e), &e);
    ck_assert(skv__cgroup_is_empty(cg));
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    assert_removed(cg);
    skv__cgroup_free(cg);
}
END_TEST

static int fork_many(void)
{
    int ok = 0;
    for (int i = 0; i < 20; i++) {
        pid_t p = fork();
        if (p == 0) {
            for (;;)
                pause();
        }
        if (p > 0)
            ok++;
    }
    return ok;
}

START_TEST(test_real_pids_limit)
{
    skv_cgroup_config cfg;
    if (!real_setup(&cfg))
        return;
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "pids", &e), &e);
    skv_cgroup_limits lim = {.pids_max = 8};
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    int go, rep;
    pid_t child = spawn(fork_many, &go, &rep);
    SKV_CK_OK(skv__cgroup_add_pid(cg, child, &e), &e);
    ck_assert_int_eq(report(go, rep), 7); /* 8 tasks: the child and 7 more */
    skv_cgroup_stats st;
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    ck_assert_uint_eq(st.pids_current, 8);
    SKV_CK_OK(skv__cgroup_signal(cg, SIGKILL, &e), &e);
    SKV_CK_OK(skv__cgroup_kill(cg, 3000, &e), &e);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    assert_removed(cg);
    skv__cgroup_free(cg);
}
END_TEST

static int eat_memory(void)
{
    size_t sz = 96 << 20;
    char *p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return -1;
    for (size_t i = 0; i < sz; i += 4096)
        p[i] = 1;
    return 0; /* survived: the limit did not hold */
}

static void spawn_eater(skv_cgroup *cg, pid_t *child)
{
    skv_error e = SKV_ERROR_INIT;
    int go, rep;
    *child = spawn(eat_memory, &go, &rep);
    SKV_CK_OK(skv__cgroup_add_pid(cg, *child, &e), &e);
    ck_assert_int_eq(write(go, "g", 1), 1);
    int r = 7;
    /* OOM-killed: the pipe closes without a report. */
    ck_assert_int_eq(read(rep, &r, sizeof(r)), 0);
    close(go);
    close(rep);
}

START_TEST(test_real_oom)
{
    skv_cgroup_config cfg;
    if (!real_setup(&cfg))
        return;
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "oom", &e), &e);
    skv_cgroup_limits lim = {.memory_bytes = 16 << 20, .pids_max = 16};
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    pid_t child;
    spawn_eater(cg, &child);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    skv_cgroup_stats st;
    SKV_CK_OK(skv__cgroup_stats(cg, &st, &e), &e);
    if (st.has_oom_kills)
        ck_assert_uint_ge(st.oom_kills, 1);
    if (st.has_memory_peak)
        ck_assert_uint_ge(st.memory_peak, 8u << 20);
    assert_removed(cg);
    skv__cgroup_free(cg);
}
END_TEST

static int bomb(void)
{
    for (int i = 0; i < 4; i++) {
        pid_t p = fork();
        if (p == 0) { /* every child forks on and on, held by pids.max */
            for (;;)
                if (fork() < 0)
                    usleep(100);
        }
    }
    return 1;
}

/* Processes fork and exit while they are being killed. In the host's mode
 * (cgroup.kill in hybrid/v2) and forced to v1 (freezer + SIGKILL loop). */
static void kill_race(skv_cgroup_mode mode)
{
    skv_cgroup_config cfg;
    if (!real_setup(&cfg))
        return;
    cfg.mode = mode;
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "race", &e), &e);
    skv_cgroup_limits lim = {.pids_max = 48, .memory_bytes = 128 << 20};
    SKV_CK_OK(skv__cgroup_apply(cg, &lim, &e), &e);
    int go, rep;
    pid_t child = spawn(bomb, &go, &rep);
    SKV_CK_OK(skv__cgroup_add_pid(cg, child, &e), &e);
    ck_assert_int_eq(report(go, rep), 1);
    usleep(20000);
    ck_assert(!skv__cgroup_is_empty(cg));
    SKV_CK_OK(skv__cgroup_kill(cg, 5000, &e), &e);
    ck_assert(skv__cgroup_is_empty(cg));
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    if (mode != SKV_CGROUP_MODE_AUTO)
        ck_assert_int_eq(skv__cgroup_mode(cg), mode);
    assert_removed(cg);
    skv__cgroup_free(cg);
}

/* ---- eBPF device filter on the real unified hierarchy ---------------------- */
static char dev_tmp[64]; /* nodes made outside the cgroup, before the fork */

static bool opens(const char *path, int flags, int *why)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0) {
        *why = errno;
        return false;
    }
    close(fd);
    return true;
}

/* Bits: 1 null rw, 2 zero rw, 4 kmsg (1:11) read refused with EPERM,
 * 8 mknod 1:11 refused with EPERM, 16 mknod of an allowed 1:3 works. */
static int dev_round_std(void)
{
    char p[128];
    int why = 0, r = 0;
    r |= opens("/dev/null", O_RDWR, &why) ? 1 : 0;
    r |= opens("/dev/zero", O_RDWR, &why) ? 2 : 0;
    snprintf(p, sizeof(p), "%s/kmsg", dev_tmp);
    r |= !opens(p, O_RDONLY, &why) && why == EPERM ? 4 : 0;
    snprintf(p, sizeof(p), "%s/kmsg2", dev_tmp);
    r |= mknod(p, S_IFCHR | 0600, makedev(1, 11)) < 0 && errno == EPERM ? 8 : 0;
    snprintf(p, sizeof(p), "%s/null2", dev_tmp);
    r |= mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0 ? 16 : 0;
    return r;
}

/* After "c 1:* r": 1 kmsg opens read-only, 2 write refused with EPERM,
 * 4 mknod 1:11 still refused (no 'm'), 8 block devices still refused. */
static int dev_round_wild(void)
{
    char p[128];
    int why = 0, r = 0;
    snprintf(p, sizeof(p), "%s/kmsg", dev_tmp);
    r |= opens(p, O_RDONLY, &why) ? 1 : 0;
    r |= !opens(p, O_WRONLY, &why) && why == EPERM ? 2 : 0;
    snprintf(p, sizeof(p), "%s/kmsg3", dev_tmp);
    r |= mknod(p, S_IFCHR | 0600, makedev(1, 11)) < 0 && errno == EPERM ? 4 : 0;
    snprintf(p, sizeof(p), "%s/loop", dev_tmp);
    r |= mknod(p, S_IFBLK | 0600, makedev(7, 0)) < 0 && errno == EPERM ? 8 : 0;
    return r;
}

static pid_t dev_child(skv_cgroup *cg, child_fn fn, int *result)
{
    skv_error e = SKV_ERROR_INIT;
    int go, rep;
    pid_t child = spawn(fn, &go, &rep);
    SKV_CK_OK(skv__cgroup_add_pid(cg, child, &e), &e);
    *result = report(go, rep);
    return child;
}

START_TEST(test_real_devices)
{
    skv_cgroup_config cfg;
    if (!real_setup(&cfg))
        return;
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup *cg = NULL;
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg, "dev", &e), &e);
    int rc = skv__cgroup_devices_set(cg, NULL, 0, &e);
    if (rc == SKV_ENOTSUP) {
        printf("note: eBPF device filter test skipped (%s)\n", e.message);
        SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
        skv__cgroup_free(cg);
        return;
    }
    SKV_CK_OK(rc, &e);
    ck_assert(skv__cgroup_devices_filtered(cg));
    snprintf(dev_tmp, sizeof(dev_tmp), "/tmp/skv-cgdev-%ld-XXXXXX", (long)getppid());
    ck_assert_ptr_nonnull(mkdtemp(dev_tmp));
    char p[128];
    int why = 0;
    snprintf(p, sizeof(p), "%s/kmsg", dev_tmp);
    ck_assert_int_eq(mknod(p, S_IFCHR | 0600, makedev(1, 11)), 0);
    ck_assert_msg(opens(p, O_RDONLY, &why), "kmsg outside: %s", strerror(why));
    int ra, rb;
    pid_t a = dev_child(cg, dev_round_std, &ra);
    /* Replace the list: the new one is attached, the old one detached. */
    skv_cgroup_device wild = {'c', 1, -1, "r"};
    SKV_CK_OK(skv__cgroup_devices_set(cg, &wild, 1, &e), &e);
    pid_t b = dev_child(cg, dev_round_wild, &rb);
    /* Clean up first: a wrong answer must not leave the cgroup behind. */
    assert_removed(cg);
    skv__cgroup_free(cg);
    ck_assert_int_eq(waitpid(a, NULL, 0), a);
    ck_assert_int_eq(waitpid(b, NULL, 0), b);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dev_tmp);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(ra, 1 | 2 | 4 | 8 | 16);
    ck_assert_int_eq(rb, 1 | 2 | 4 | 8);
}
END_TEST

START_TEST(test_real_kill_race)
{
    kill_race(SKV_CGROUP_MODE_AUTO);
}
END_TEST

START_TEST(test_real_kill_race_v1)
{
    kill_race(SKV_CGROUP_MODE_V1);
}
END_TEST

/* ---- the sessions' parent: one budget for all containers (issue 13) ----- */

static const skv_cgroup_limits parent_lim = {.cpu = 1500, .memory_bytes =
                                                 1 << 30, .allow_swap = true,
                                             .pids_max = 300};

START_TEST(test_parent_limit_v2)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_PREFIX "cgroup2 cgroup2 rw\n", true);
    capture_writes();
    SKV_CK_OK(skv__cgroup_parent_limit(&cfg_default, &parent_lim, &e), &e);
    /* Made with the controllers enabled at the root, then limited. */
    ck_assert_msg(strstr(writes, "/sys/fs/cgroup/cgroup.subtree_control <- "
                         "+pids\n"), "%s", writes);
    ck_assert_msg(strstr(writes,
                         "/sys/fs/cgroup/sokovan/cpu.max <- 150000 100000\n"
                         "/sys/fs/cgroup/sokovan/memory.max <- 1073741824\n"
                         "/sys/fs/cgroup/sokovan/pids.max <- 300\n"),
                  "%s", writes);
    ck_assert_ptr_null(strstr(writes, "swap"));
    /* A container below it: the parent passes the controllers on. */
    skv_cgroup *cg = NULL;
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_create(&cg, &cfg_default, "k1", &e), &e);
    ck_assert_msg(strstr(writes, "/sys/fs/cgroup/sokovan/cgroup.subtree_control"
                         " <- +pids\n"), "%s", writes);
    /* Again (an agent restart): the existing parent, new values. */
    skv_cgroup_limits more = parent_lim;
    more.pids_max = 500;
    writes[0] = '\0';
    SKV_CK_OK(skv__cgroup_parent_limit(&cfg_default, &more, &e), &e);
    ck_assert_str_eq(fget("/sys/fs/cgroup/sokovan/pids.max"), "500");
    ck_assert_ptr_null(strstr(writes, "subtree_control"));
    SKV_CK_OK(skv__cgroup_destroy(cg, &e), &e);
    skv__cgroup_free(cg);
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    fake_cleanup();
}
END_TEST

START_TEST(test_parent_limit_hybrid)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_V1_ALL MI_UNIFIED, false);
    capture_writes();
    skv_cgroup_config cfg = {SKV_CGROUP_MODE_AUTO, "site/sessions", false};
    SKV_CK_OK(skv__cgroup_parent_limit(&cfg, &parent_lim, &e), &e);
    /* Every limit in its v1 hierarchy; no memsw with swap allowed. */
    ck_assert_str_eq(fget("/sys/fs/cgroup/pids/site/sessions/pids.max"),
                     "300");
    ck_assert_str_eq(fget("/sys/fs/cgroup/memory/site/sessions/"
                          "memory.limit_in_bytes"), "1073741824");
    ck_assert_str_eq(fget("/sys/fs/cgroup/cpu/site/sessions/"
                          "cpu.cfs_quota_us"), "150000");
    ck_assert_ptr_null(strstr(writes, "memsw"));
    ck_assert(fexists("/sys/fs/cgroup/unified/site/sessions"));
    /* cpuset parents are usable: cpus and mems copied down. */
    ck_assert_str_eq(fget("/sys/fs/cgroup/cpuset/site/sessions/cpuset.cpus"),
                     "0-3\n");
    skv_set_logger(NULL, SKV_LOG_ERROR, NULL);
    fake_cleanup();
}
END_TEST

START_TEST(test_parent_limit_bad_input)
{
    skv_error e = SKV_ERROR_INIT;
    fake_root(MI_PREFIX "cgroup2 cgroup2 rw\n", true);
    skv_cgroup_limits neg = {.pids_max = -1}, tiny = {.memory_bytes = 4096},
                      cpus = {.cpus = "0", .pids_max = 10};
    const skv_cgroup_limits *bad[] = {&neg, &tiny, &cpus};
    for (size_t i = 0; i < 3; i++) {
        int rc = skv__cgroup_parent_limit(&cfg_default, bad[i], &e);
        ck_assert_msg(rc == SKV_EINVAL || rc == SKV_ERANGE, "%zu: %d", i, rc);
    }
    static const char *const parents[] = {"", "/abs", "a/", "a/../b", "a b"};
    for (size_t i = 0; i < 5; i++) {
        skv_cgroup_config c = {SKV_CGROUP_MODE_AUTO, parents[i], false};
        ck_assert_int_eq(skv__cgroup_parent_limit(&c, &parent_lim, &e),
                         SKV_EINVAL);
    }
    ck_assert_int_eq(skv__cgroup_parent_limit(NULL, &parent_lim, &e),
                     SKV_EINVAL);
    /* Nothing was made. */
    int n = 0;
    count_entries("/sys/fs/cgroup", &n);
    ck_assert_int_eq(n, 0);
    ck_assert(!fexists("/sys/fs/cgroup/a"));
    fake_cleanup();
}
END_TEST

Suite *skv_test_suite_cgroup(void);
Suite *skv_test_suite_cgroup(void)
{
    Suite *s = suite_create("cgroup");
    TCase *f = tcase_create("fake");
    tcase_add_unchecked_fixture(f, NULL, fake_teardown);
    tcase_add_test(f, test_detect_modes);
    tcase_add_test(f, test_detect_comounted);
    tcase_add_test(f, test_hybrid_lifecycle);
    tcase_add_test(f, test_v1_memory_order);
    tcase_add_test(f, test_v2_lifecycle);
    tcase_add_test(f, test_stats_v1);
    tcase_add_test(f, test_stats_v2);
    tcase_add_test(f, test_kill_timeout_hybrid);
    tcase_add_test(f, test_kill_timeout_v2);
    tcase_add_test(f, test_bad_names);
    tcase_add_test(f, test_bad_limits);
    tcase_add_test(f, test_missing_controller);
    tcase_add_test(f, test_devices_bad_rules);
    tcase_add_test(f, test_create_rollback);
    tcase_add_test(f, test_open);
    tcase_add_test(f, test_nest_in_self);
    tcase_add_test(f, test_parent_limit_v2);
    tcase_add_test(f, test_parent_limit_hybrid);
    tcase_add_test(f, test_parent_limit_bad_input);
    suite_add_tcase(s, f);
    TCase *r = tcase_create("real");
    tcase_add_unchecked_fixture(r, NULL, real_teardown);
    tcase_set_timeout(r, 30);
    tcase_add_test(r, test_real_detect_matches_statfs);
    tcase_add_test(r, test_real_lifecycle);
    tcase_add_test(r, test_real_pids_limit);
    tcase_add_test(r, test_real_oom);
    tcase_add_test(r, test_real_devices);
    tcase_add_test(r, test_real_kill_race);
    tcase_add_test(r, test_real_kill_race_v1);
    suite_add_tcase(s, r);
    return s;
}
