/* Container runtime: spec validation, the native backend end to end (as
 * root, on a busybox image), restart survival, the OCI backend under runc
 * and the process backend's opt-in.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "skv_test.h"
#include "rt_fixture.h"
#include "skv_caps.h"

/* ---- helpers ------------------------------------------------------------ */

static skv_runtime *open_rt(const char *name, const char *backend)
{
    char state[PATH_MAX];
    skv_error e = SKV_ERROR_INIT;
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), name);
    o.image_dir = skv_rtfx_images;
    o.backend = backend;
    o.allow_process_backend = backend && strcmp(backend, "process") == 0;
    o.stop_grace_ms = 200;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    return rt;
}

static skv_container_spec *new_spec(const char *id, const char *cmd)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, id, &e), &e);
    SKV_CK_OK(skv_container_spec_set_image(s, "busybox", &e), &e);
    const char *argv[] = {"sh", "-c", cmd};
    SKV_CK_OK(skv_container_spec_set_argv(s, 3, argv, &e), &e);
    return s;
}

/* Create, start, wait (10 s), return the status; *out gets stdout. */
static skv_container_status run_spec(skv_runtime *rt, skv_container_spec *s,
                                     char *out, size_t outsz)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    const char *id = skv_container_spec_id(s);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, id, &e), &e);
    SKV_CK_OK(skv_runtime_wait(rt, id, 10000, &st, &e), &e);
    if (out) {
        char *path = NULL;
        SKV_CK_OK(skv_runtime_log_path(rt, id, "stdout", &path, &e), &e);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(out, 1, outsz - 1, f);
        out[n] = '\0';
        fclose(f);
        skv_free(path);
    }
    return st;
}

static void destroy(skv_runtime *rt, const char *id)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_runtime_destroy(rt, id, 100, &e), &e);
}

static const char *run_cmd(const char *name, const char *cmd, char *out,
                           size_t n, int *code)
{
    skv_runtime *rt = open_rt(name, NULL);
    skv_container_spec *s = new_spec("c1", cmd);
    skv_container_status st = run_spec(rt, s, out, n);
    ck_assert_int_eq(st.state, SKV_CONTAINER_EXITED);
    *code = st.exit_code;
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
    return out;
}

/* ---- spec validation (no root needed) ----------------------------------- */

START_TEST(test_spec_bad_input)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    ck_assert_int_eq(skv_container_spec_new(&s, "", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_new(&s, "../x", &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "../x"));
    ck_assert_int_eq(skv_container_spec_new(&s, "-x", &e), SKV_EINVAL);
    ck_assert_ptr_null(s);
    SKV_CK_OK(skv_container_spec_new(&s, "good.id_1", &e), &e);
    ck_assert_int_eq(skv_container_spec_set_image(s, "../etc", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_rootfs(s, "rel/dir", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_rootfs(s, "/a/../b", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_env(s, "1BAD", "v", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_env(s, "A=B", "v", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_argv(s, 0, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_hostname(s, "bad host", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_cpuset(s, "0-x", NULL, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_mount(s, "/tmp", "/", false, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_mount(s, "tmp", "/x", false, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_device(s, "/etc/passwd", 'c', 1,
                                                   3, "rw", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_device(s, "/dev/null", 'x', 1, 3,
                                                   "rw", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_device(s, "/dev/null", 'c', 1, 3,
                                                   "rwx", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_cap(s, "CAP_NOPE", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_syscall(s, "bad name", false, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_network(s, (skv_network_mode)7,
                                                    &e), SKV_EINVAL);
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.memory_bytes = 1000;
    ck_assert_int_eq(skv_container_spec_set_limits(s, &lim, &e), SKV_ERANGE);
    ck_assert_ptr_nonnull(strstr(e.message, "memory_bytes"));
    lim.memory_bytes = 0;
    lim.version = 99;
    ck_assert_int_eq(skv_container_spec_set_limits(s, &lim, &e), SKV_EVERSION);
    SKV_CK_OK(skv_container_spec_set_env(s, "A", "1", &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "A", "2", &e), &e);
    skv_container_spec_free(s);
    skv_container_spec_free(NULL);
}
END_TEST

START_TEST(test_cluster_env)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    SKV_CK_OK(skv_container_spec_new(&s, "k", &e), &e);
    skv_cluster_role roles[] = {{"main", 1}, {"sub", 2}};
    skv_cluster_info ci = SKV_CLUSTER_INFO_INIT;
    ci.session_id = "sess";
    ci.kernel_id = "kern";
    ci.mode = "multi-node";
    ci.roles = roles;
    ci.n_roles = 2;
    ci.role = "sub";
    ci.idx = 3;
    ck_assert_int_eq(skv_container_spec_set_cluster(s, &ci, &e), SKV_ERANGE);
    ci.idx = 2;
    ci.role = "gpu";
    ck_assert_int_eq(skv_container_spec_set_cluster(s, &ci, &e), SKV_EINVAL);
    ci.role = "sub";
    ci.mode = "cluster";
    ck_assert_int_eq(skv_container_spec_set_cluster(s, &ci, &e), SKV_EINVAL);
    ci.mode = "multi-node";
    SKV_CK_OK(skv_container_spec_set_cluster(s, &ci, &e), &e);
    skv_container_spec_free(s);
}
END_TEST

START_TEST(test_runtime_open_bad)
{
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = NULL;
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EINVAL);
    o.state_dir = "relative";
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EINVAL);
    o.state_dir = "/tmp/skv-rt-never-made";
    o.backend = "docker";
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "docker"));
    o.backend = "process";
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EPERM);
    o.backend = NULL;
    o.version = 7;
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EVERSION);
    skv_runtime_backend bad = *skv_runtime_backend_native();
    bad.abi_version = 99;
    o.version = SKV_RUNTIME_OPTIONS_VERSION;
    o.custom_backend = &bad;
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EVERSION);
    ck_assert_ptr_null(rt);
    ck_assert_int_ne(access("/tmp/skv-rt-never-made", F_OK), 0);
    skv_runtime_free(NULL);
}
END_TEST

/* ---- native backend ------------------------------------------------------- */

START_TEST(test_echo_hello)
{
    SKV_RTFX_REQUIRE();
    char out[256];
    int code = -1;
    run_cmd("echo", "echo hello", out, sizeof(out), &code);
    ck_assert_str_eq(out, "hello\n");
    ck_assert_int_eq(code, 0);
}
END_TEST

START_TEST(test_exit_code_and_pid1)
{
    SKV_RTFX_REQUIRE();
    char out[256];
    int code = -1;
    /* PID 1 inside, and no host process visible in /proc. */
    run_cmd("exit", "echo $$; ls /proc | grep -c '^[0-9]'; exit 42", out,
            sizeof(out), &code);
    ck_assert_int_eq(code, 42);
    /* sh, ls and perhaps grep: a count, since grep may start late */
    ck_assert_msg(strcmp(out, "1\n2\n") == 0 || strcmp(out, "1\n3\n") == 0,
                  "out: %s", out);
}
END_TEST

START_TEST(test_signal_kill)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("signal", NULL);
    skv_container_spec *s = new_spec("c1", "sleep 30");
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_status(rt, "c1", &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_CREATED);
    SKV_CK_OK(skv_runtime_start(rt, "c1", &e), &e);
    SKV_CK_OK(skv_runtime_status(rt, "c1", &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_RUNNING);
    ck_assert_int_gt(st.pid, 1);
    ck_assert_int_eq(skv_runtime_wait(rt, "c1", 50, &st, &e), SKV_ETIMEDOUT);
    SKV_CK_OK(skv_runtime_signal(rt, "c1", SIGKILL, &e), &e);
    SKV_CK_OK(skv_runtime_wait(rt, "c1", 5000, &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_EXITED);
    ck_assert_int_eq(st.signal, SIGKILL);
    ck_assert(!st.oom_killed);
    ck_assert_int_eq(skv_runtime_signal(rt, "c1", SIGTERM, &e), SKV_ESTATE);
    ck_assert_int_eq(skv_runtime_signal(rt, "nope", SIGTERM, &e), SKV_ENOENT);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_stop_escalates)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("stop", NULL);
    /* sh as PID 1 ignores SIGTERM without a trap: destroy must escalate to
     * SIGKILL after the grace period, also for the background child. */
    skv_container_spec *s = new_spec("c1", "sleep 30 & sleep 30");
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "c1", &e), &e);
    skv_container_stats stats = SKV_CONTAINER_STATS_INIT;
    for (int i = 0; i < 200 && stats.pids_current < 2; i++) {
        SKV_CK_OK(skv_runtime_stats(rt, "c1", &stats, &e), &e);
        usleep(10000);
    }
    ck_assert_uint_ge(stats.pids_current, 2); /* both sleeps */
    ck_assert_uint_gt(stats.memory_current, 0);
    SKV_CK_OK(skv_runtime_destroy(rt, "c1", 100, &e), &e);
    char **ids = NULL;
    size_t n = 9;
    SKV_CK_OK(skv_runtime_list(rt, &ids, &n, &e), &e);
    ck_assert_uint_eq(n, 0);
    skv_runtime_list_free(ids, n);
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_oom_reported)
{
    SKV_RTFX_REQUIRE();
    skv_runtime *rt = open_rt("oom", NULL);
    skv_container_spec *s = new_spec("c1", "x=$(head -c 67108864 /dev/zero | "
                                           "tr '\\0' a); echo survived");
    skv_error e = SKV_ERROR_INIT;
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.memory_bytes = 16u << 20;
    SKV_CK_OK(skv_container_spec_set_limits(s, &lim, &e), &e);
    char out[64];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.state, SKV_CONTAINER_EXITED);
    ck_assert_msg(st.oom_killed, "not OOM-killed: code %d signal %d out %s",
                  st.exit_code, st.signal, out);
    ck_assert_int_eq(st.signal, SIGKILL);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_env_hostname_hosts)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("env", NULL);
    skv_container_spec *s = new_spec(
        "c1", "env; echo H=$(hostname); cat /etc/hosts /etc/hostname");
    skv_cluster_role roles[] = {{"main", 1}, {"sub", 2}};
    skv_cluster_info ci = SKV_CLUSTER_INFO_INIT;
    ci.session_id = "sess-1";
    ci.kernel_id = "kern-7";
    ci.mode = "single-node";
    ci.roles = roles;
    ci.n_roles = 2;
    ci.role = "sub";
    ci.idx = 2;
    SKV_CK_OK(skv_container_spec_set_cluster(s, &ci, &e), &e);
    SKV_CK_OK(skv_container_spec_set_env(s, "MY_VAR", "a b\"c", &e), &e);
    char out[8192];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 0);
    const char *want[] = {
        "MY_VAR=a b\"c\n", "SOKOVAN_SESSION_ID=sess-1\n",
        "SOKOVAN_KERNEL_ID=kern-7\n", "SOKOVAN_CLUSTER_MODE=single-node\n",
        "SOKOVAN_CLUSTER_SIZE=3\n", "SOKOVAN_CLUSTER_ROLE=sub\n",
        "SOKOVAN_CLUSTER_IDX=2\n", "SOKOVAN_CLUSTER_LOCAL_RANK=2\n",
        "SOKOVAN_CLUSTER_HOST=sub2\n",
        "SOKOVAN_CLUSTER_HOSTS=main1,sub1,sub2\n",
        "SOKOVAN_CLUSTER_REPLICAS=main:1,sub:2\n",
        "BACKENDAI_CLUSTER_HOSTS=main1,sub1,sub2\n",
        "BACKENDAI_SESSION_ID=sess-1\n", "BACKENDAI_CLUSTER_LOCAL_RANK=2\n",
        "H=sub2\n", "127.0.1.1\tsub2\n", "\nsub2\n"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_msg(strstr(out, want[i]), "missing '%s' in:\n%s", want[i],
                      out);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_identity_caps_seccomp)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("ident", NULL);
    /* Default user: nobody, no capabilities at all. */
    skv_container_spec *s = new_spec(
        "c1", "id -u; id -g; grep -E '^Cap(Eff|Bnd)' /proc/self/status");
    char out[1024];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 0);
    char bnd[64];
    /* Docker's default set; without a v1 devices controller (no device
     * allow-list) minus CAP_MKNOD (27). */
    uint64_t want = skv__caps_default_mask();
    if (access("/sys/fs/cgroup/devices/devices.allow", F_OK) != 0)
        want &= ~((uint64_t)1 << 27);
    snprintf(bnd, sizeof(bnd), "CapBnd:\t%016llx\n", (unsigned long long)want);
    ck_assert_msg(strstr(out, "65534\n65534\n"), "uid/gid: %s", out);
    ck_assert_msg(strstr(out, "CapEff:\t0000000000000000\n"), "caps: %s", out);
    ck_assert_msg(strstr(out, bnd), "bounding set: %s", out);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    /* root in the container: the default set only; mount is denied by
     * seccomp/caps, and an extra denial (mkdir) applies. */
    s = new_spec("c2", "grep CapEff /proc/self/status; "
                       "mount -t tmpfs none /tmp 2>&1; echo mount=$?; "
                       "mkdir /tmp/d 2>&1; echo mkdir=$?");
    SKV_CK_OK(skv_container_spec_set_user(s, 0, 0, &e), &e);
    SKV_CK_OK(skv_container_spec_add_syscall(s, "mkdir", false, &e), &e);
    SKV_CK_OK(skv_container_spec_add_syscall(s, "mkdirat", false, &e), &e);
    st = run_spec(rt, s, out, sizeof(out));
    char eff[64];
    snprintf(eff, sizeof(eff), "CapEff:\t%016llx\n", (unsigned long long)want);
    ck_assert_msg(strstr(out, eff), "root caps: %s", out);
    ck_assert_msg(strstr(out, "mount=255") || strstr(out, "mount=1"),
                  "mount: %s", out);
    ck_assert_msg(strstr(out, "not permitted"), "EPERM: %s", out);
    ck_assert_msg(strstr(out, "mkdir=1"), "mkdir: %s", out);
    destroy(rt, "c2");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_cpuset_and_logcap)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("cpuset", NULL);
    skv_container_spec *s = new_spec(
        "c1", "grep -E '^(Cpus|Mems)_allowed_list' /proc/self/status; "
              "head -c 100000 /dev/zero | tr '\\0' a");
    SKV_CK_OK(skv_container_spec_set_cpuset(s, "0", "0", &e), &e);
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.log_max_bytes = 4096;
    lim.cpu_quota_us = 50000;
    lim.pids_max = 16;
    SKV_CK_OK(skv_container_spec_set_limits(s, &lim, &e), &e);
    char out[8192];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 0);
    ck_assert_msg(strncmp(out, "Cpus_allowed_list:\t0\nMems_allowed_list:\t0\n",
                          41) == 0, "out: %.100s", out);
    /* The log stops at the cap, with one line saying so, while the writer
     * still completes. */
    const char *cut = "\n[sokovan: log truncated at 4096 bytes (the log cap); "
                      "later output is discarded]\n";
    ck_assert_uint_eq(strlen(out), 4096 + strlen(cut));
    ck_assert_str_eq(out + 4096, cut);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

static bool cgroup_left(const char *prefix)
{
    const char *hier[] = {"memory", "pids", "cpu", "cpuset", "unified"};
    for (size_t i = 0; i < sizeof(hier) / sizeof(hier[0]); i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/sokovan", hier[i]);
        DIR *d = opendir(path);
        struct dirent *de;
        bool found = false;
        while (d && (de = readdir(d)) != NULL)
            found |= strncmp(de->d_name, prefix, strlen(prefix)) == 0;
        if (d)
            closedir(d);
        if (found)
            return true;
    }
    return false;
}

static bool mount_left(const char *needle)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[4096];
    bool found = false;
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, needle) != NULL;
    if (f)
        fclose(f);
    return found;
}

START_TEST(test_mounts_devices_cleanup)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("mounts", NULL);
    char data[PATH_MAX], ro[PATH_MAX], state[PATH_MAX], path[PATH_MAX];
    snprintf(data, sizeof(data), "%s/persist", skv_rtfx_root);
    snprintf(ro, sizeof(ro), "%s/readonly", skv_rtfx_root);
    ck_assert_int_eq(mkdir(data, 0777), 0);
    ck_assert_int_eq(mkdir(ro, 0755), 0);
    skv_container_spec *s = new_spec(
        "mnt-c1", "echo data > /data/f; echo junk > /junk; touch /ro/x 2>&1;"
                  " echo ro=$?; test -c /dev/kmsg && echo dev-ok; "
                  "test -c /dev/null && test -c /dev/urandom && "
                  "test -d /dev/pts && test -d /dev/shm && echo std-dev-ok; "
                  "touch /sys/x 2>/dev/null || echo sys-ro; "
                  "echo x 2>/dev/null > /dev/kmsg || echo kmsg-ro; "
                  "mknod /dev/t1 c 4 1 2>/dev/null || echo mknod-denied");
    SKV_CK_OK(skv_container_spec_set_user(s, 0, 0, &e), &e);
    SKV_CK_OK(skv_container_spec_add_mount(s, data, "/data", false, &e), &e);
    SKV_CK_OK(skv_container_spec_add_mount(s, ro, "/ro", true, &e), &e);
    SKV_CK_OK(skv_container_spec_add_device(s, "/dev/kmsg", 'c', 1, 11, "r",
                                            &e), &e);
    char out[1024];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 0);
    ck_assert_msg(strstr(out, "ro=1\n"), "out: %s", out);
    ck_assert_msg(strstr(out, "dev-ok\nstd-dev-ok\nsys-ro\n"), "out: %s", out);
    /* Root cannot make other device nodes: the v1 device allow-list, or
     * without that controller no CAP_MKNOD. */
    ck_assert_msg(strstr(out, "mknod-denied\n"), "out: %s", out);
    if (access("/sys/fs/cgroup/devices/devices.allow", F_OK) == 0)
        ck_assert_msg(strstr(out, "kmsg-ro\n"), "granted 'r' only: %s", out);
    snprintf(path, sizeof(path), "%s/mnt-c1/scratch/upper/junk",
             skv_rtfx_state(state, sizeof(state), "mounts"));
    ck_assert_int_eq(access(path, F_OK), 0);
    ck_assert(cgroup_left("mnt-c1-"));
    destroy(rt, "mnt-c1");
    /* The rootfs change vanished with the scratch layer; the bind-mounted
     * data stayed; no cgroup and no mount remain. */
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/mnt-c1", state);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/f", data);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(out, sizeof(out), f));
    fclose(f);
    ck_assert_str_eq(out, "data\n");
    ck_assert(!cgroup_left("mnt-c1-"));
    ck_assert(!mount_left(state));
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

/* Every bad input fails before anything exists; repeated with successful
 * cycles in between, nothing accumulates. */
START_TEST(test_bad_create_leaves_nothing)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("bad", NULL);
    for (int round = 0; round < 34; round++) { /* 204 creates */
        skv_container_spec *s = new_spec("bad-c1", "true");
        SKV_CK_OK(skv_container_spec_set_image(s, "missing", &e), &e);
        ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_ENOENT);
        ck_assert_ptr_nonnull(strstr(e.message, "missing"));
        SKV_CK_OK(skv_container_spec_set_image(s, "busybox", &e), &e);
        SKV_CK_OK(skv_container_spec_add_mount(s, "/nonexistent/src", "/x",
                                               false, &e), &e);
        ck_assert_int_ne(skv_runtime_create(rt, s, &e), 0);
        ck_assert_ptr_nonnull(strstr(e.message, "/nonexistent/src"));
        skv_container_spec_free(s);
        s = new_spec("bad-c1", "true");
        SKV_CK_OK(skv_container_spec_add_device(s, "/dev/null", 'c', 1, 5,
                                                "rw", &e), &e);
        ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_EINVAL);
        skv_container_spec_free(s);
        s = new_spec("bad-c1", "true");
        SKV_CK_OK(skv_container_spec_add_device(s, "/dev/no-such-dev", 'c', 1,
                                                5, "rw", &e), &e);
        ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_ENOENT);
        skv_container_spec_free(s);
        s = new_spec("bad-c1", "true");
        SKV_CK_OK(skv_container_spec_add_syscall(s, "no_such_call", false, &e),
                  &e);
        ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_EINVAL);
        skv_container_spec_free(s);
        s = new_spec("bad-c1", "true");
        skv_container_status st = run_spec(rt, s, NULL, 0);
        ck_assert_int_eq(st.exit_code, 0);
        ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_EEXIST);
        destroy(rt, "bad-c1");
        skv_container_spec_free(s);
    }
    char **ids = NULL;
    size_t n = 1;
    SKV_CK_OK(skv_runtime_list(rt, &ids, &n, &e), &e);
    ck_assert_uint_eq(n, 0);
    skv_runtime_list_free(ids, n);
    ck_assert(!cgroup_left("bad-c1-"));
    char state[PATH_MAX];
    ck_assert(!mount_left(skv_rtfx_state(state, sizeof(state), "bad")));
    skv_runtime_free(rt);
}
END_TEST

/* The "agent" creates two containers and dies by SIGKILL; a new handle
 * re-attaches to the running one and collects the other's exit status. */
START_TEST(test_restart_survival)
{
    SKV_RTFX_REQUIRE();
    pid_t agent = fork();
    ck_assert_int_ge(agent, 0);
    if (agent == 0) {
        skv_runtime *rt = open_rt("restart", NULL);
        skv_container_spec *a = new_spec("long", "sleep 30");
        skv_container_spec *b = new_spec("short", "sleep 0.2; exit 7");
        if (skv_runtime_create(rt, a, NULL) || skv_runtime_start(rt, "long", NULL) ||
            skv_runtime_create(rt, b, NULL) || skv_runtime_start(rt, "short", NULL))
            _exit(1);
        kill(getpid(), SIGKILL);
    }
    int ws = 0;
    ck_assert_int_eq(waitpid(agent, &ws, 0), agent);
    ck_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    usleep(500000); /* "short" ends while no handle exists */
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("restart", NULL);
    size_t n = 0;
    SKV_CK_OK(skv_runtime_restore(rt, &n, &e), &e);
    ck_assert_uint_eq(n, 2);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_status(rt, "short", &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_EXITED);
    ck_assert_int_eq(st.exit_code, 7);
    SKV_CK_OK(skv_runtime_status(rt, "long", &st, &e), &e);
    ck_assert_int_eq(st.state, SKV_CONTAINER_RUNNING);
    SKV_CK_OK(skv_runtime_signal(rt, "long", SIGKILL, &e), &e);
    SKV_CK_OK(skv_runtime_wait(rt, "long", 5000, &st, &e), &e);
    ck_assert_int_eq(st.signal, SIGKILL);
    destroy(rt, "long");
    destroy(rt, "short");
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_oci_runc)
{
    SKV_RTFX_REQUIRE();
    if (access("/usr/sbin/runc", X_OK) != 0) {
        fprintf(stderr, "test_oci_runc: skipped: /usr/sbin/runc missing\n");
        return;
    }
    skv_runtime *rt = open_rt("oci", "oci");
    skv_container_spec *s = new_spec(
        "oci-c1", "echo hello-oci; echo $$; id -u; hostname; exit 3");
    char out[256], state[PATH_MAX];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.state, SKV_CONTAINER_EXITED);
    ck_assert_int_eq(st.exit_code, 3);
    ck_assert_str_eq(out, "hello-oci\n1\n65534\noci-c1\n");
    /* a new handle re-attaches (runc state) and destroys through runc */
    skv_runtime_free(rt);
    rt = open_rt("oci", NULL);
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_runtime_restore(rt, &n, &e), &e);
    ck_assert_uint_eq(n, 1);
    destroy(rt, "oci-c1");
    /* a running one: cgroup stats, runc kill, and a memory limit */
    skv_container_spec *s2 = new_spec("oci-c2", "sleep 30");
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.memory_bytes = 64u << 20;
    SKV_CK_OK(skv_container_spec_set_limits(s2, &lim, &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s2, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "oci-c2", &e), &e);
    skv_container_stats stats = SKV_CONTAINER_STATS_INIT;
    SKV_CK_OK(skv_runtime_stats(rt, "oci-c2", &stats, &e), &e);
    ck_assert_uint_ge(stats.pids_current, 1);
    SKV_CK_OK(skv_runtime_signal(rt, "oci-c2", SIGKILL, &e), &e);
    SKV_CK_OK(skv_runtime_wait(rt, "oci-c2", 5000, &st, &e), &e);
    ck_assert_int_eq(st.signal, SIGKILL);
    destroy(rt, "oci-c2");
    skv_container_spec_free(s2);
    ck_assert(!mount_left(skv_rtfx_state(state, sizeof(state), "oci")));
    ck_assert(!cgroup_left("oci-c1-"));
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

START_TEST(test_process_backend)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    char state[PATH_MAX];
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = skv_rtfx_state(state, sizeof(state), "process");
    o.backend = "process";
    skv_runtime *rt = NULL;
    ck_assert_int_eq(skv_runtime_open(&rt, &o, &e), SKV_EPERM);
    ck_assert_ptr_nonnull(strstr(e.message, "allow_process_backend"));
    rt = open_rt("process", "process");
    skv_container_spec *s = new_spec("p1", "echo host-$(id -u); exit 5");
    char out[64];
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 5);
    ck_assert_str_eq(out, "host-0\n");
    destroy(rt, "p1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

/* A fork bomb is held by the pids limit; a trapped SIGTERM ends the command
 * gracefully with its own exit code. */
START_TEST(test_pids_limit_and_sigterm)
{
    SKV_RTFX_REQUIRE();
    skv_error e = SKV_ERROR_INIT;
    skv_runtime *rt = open_rt("pids", NULL);
    skv_container_spec *s = new_spec(
        "c1", "trap 'exit 3' TERM; (i=0; while [ $i -lt 30 ]; do "
              "sleep 30 & i=$((i+1)); done) 2>/dev/null; echo spawned; "
              "while true; do sleep 0.05 2>/dev/null; done");
    skv_container_limits lim = SKV_CONTAINER_LIMITS_INIT;
    lim.pids_max = 6;
    SKV_CK_OK(skv_container_spec_set_limits(s, &lim, &e), &e);
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    SKV_CK_OK(skv_runtime_start(rt, "c1", &e), &e);
    char *path = NULL, buf[64] = "";
    SKV_CK_OK(skv_runtime_log_path(rt, "c1", "stdout", &path, &e), &e);
    for (int i = 0; i < 500 && !strstr(buf, "spawned"); i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        buf[n] = '\0';
        if (f)
            fclose(f);
        usleep(10000);
    }
    skv_free(path);
    ck_assert_ptr_nonnull(strstr(buf, "spawned"));
    skv_container_stats stats = SKV_CONTAINER_STATS_INIT;
    SKV_CK_OK(skv_runtime_stats(rt, "c1", &stats, &e), &e);
    ck_assert_uint_le(stats.pids_current, 6);
    ck_assert_uint_ge(stats.pids_current, 2);
    SKV_CK_OK(skv_runtime_signal(rt, "c1", SIGTERM, &e), &e);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "c1", 5000, &st, &e), &e);
    ck_assert_int_eq(st.signal, 0);
    ck_assert_int_eq(st.exit_code, 3);
    destroy(rt, "c1");
    skv_container_spec_free(s);
    skv_runtime_free(rt);
}
END_TEST

/* User namespace: root inside is host_base outside; its capabilities do
 * not reach host-owned files; bad ranges and other backends refuse. */
START_TEST(test_userns)
{
    SKV_RTFX_REQUIRE();
    enum { BASE = 200000, COUNT = 65536 };
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = new_spec("u1", "id -u; cat /proc/self/uid_map; "
        "echo x > /data/f && echo data-ok; echo y > /etc/hosts && "
        "echo etc-ok; touch /newfile && echo root-ok; "
        "touch /bin/x && echo bin-rw; "
        "touch /hostdir/x 2>/dev/null || echo host-denied; "
        "stat -c %u /bin/busybox; test -e /proc/self/fd/5 && echo fd-leak; "
        "true");
    ck_assert_int_eq(skv_container_spec_set_userns(s, 0, 10, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_set_userns(s, UINT32_MAX - 5, 10, &e),
                     SKV_EINVAL);
    /* The default uid 65534 does not fit into 1000 ids. */
    SKV_CK_OK(skv_container_spec_set_userns(s, BASE, 1000, &e), &e);
    skv_runtime *rt = open_rt("userns", NULL);
    ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_EINVAL);
    ck_assert_msg(strstr(e.message, "user namespace"), "%s", e.message);
    SKV_CK_OK(skv_container_spec_set_userns(s, BASE, COUNT, &e), &e);
    SKV_CK_OK(skv_container_spec_set_user(s, 0, 0, &e), &e);
    char data[PATH_MAX], host[PATH_MAX], path[PATH_MAX], out[1024];
    struct stat sb;
    snprintf(data, sizeof(data), "%s/userns-data", skv_rtfx_root);
    snprintf(host, sizeof(host), "%s/userns-host", skv_rtfx_root);
    ck_assert_int_eq(mkdir(data, 0755), 0);
    ck_assert_int_eq(chown(data, BASE, BASE), 0);
    ck_assert_int_eq(mkdir(host, 0755), 0); /* host root's */
    SKV_CK_OK(skv_container_spec_add_mount(s, data, "/data", false, &e), &e);
    SKV_CK_OK(skv_container_spec_add_mount(s, host, "/hostdir", false, &e),
              &e);
    skv_container_status st = run_spec(rt, s, out, sizeof(out));
    ck_assert_int_eq(st.exit_code, 0);
    ck_assert_msg(strstr(out, "0\n"), "id: %s", out);
    ck_assert_msg(strstr(out, "200000") && strstr(out, "65536"), "map: %s",
                  out);
    /* The image layer is idmapped: its files are the container root's,
     * so root may change them (in its own upper layer). */
    ck_assert_msg(strstr(out, "data-ok\netc-ok\nroot-ok\nbin-rw\n"
                              "host-denied\n0\n"), "out: %s", out);
    /* The idmap's user namespace descriptor does not reach the command. */
    ck_assert_msg(!strstr(out, "fd-leak"), "out: %s", out);
    snprintf(path, sizeof(path), "%s/busybox/rootfs/bin/busybox",
             skv_rtfx_images);
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_uid, 0);     /* the image itself is untouched */
    snprintf(path, sizeof(path), "%s/busybox/rootfs/bin/x", skv_rtfx_images);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/f", data);
    ck_assert_int_eq(stat(path, &sb), 0);
    ck_assert_int_eq(sb.st_uid, BASE);
    ck_assert_int_eq(sb.st_gid, BASE);
    snprintf(path, sizeof(path), "%s/x", host);
    ck_assert_int_ne(access(path, F_OK), 0);
    destroy(rt, "u1");
    ck_assert(!cgroup_left("u1-"));
    skv_runtime_free(rt);
    /* Backends without it refuse, leaving nothing. */
    rt = open_rt("userns-oci", "oci");
    ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_ENOTSUP);
    ck_assert(!cgroup_left("u1-"));
    skv_runtime_free(rt);
    rt = open_rt("userns-proc", "process");
    ck_assert_int_eq(skv_runtime_create(rt, s, &e), SKV_ENOTSUP);
    skv_runtime_free(rt);
    skv_container_spec_free(s);
}
END_TEST

Suite *skv_test_suite_runtime(void);
Suite *skv_test_suite_runtime(void)
{
    Suite *s = suite_create("runtime");
    TCase *tc = tcase_create("spec");
    tcase_add_test(tc, test_spec_bad_input);
    tcase_add_test(tc, test_cluster_env);
    tcase_add_test(tc, test_runtime_open_bad);
    suite_add_tcase(s, tc);
    tc = tcase_create("native");
    tcase_add_unchecked_fixture(tc, skv_rtfx_setup_import, skv_rtfx_teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_echo_hello);
    tcase_add_test(tc, test_exit_code_and_pid1);
    tcase_add_test(tc, test_signal_kill);
    tcase_add_test(tc, test_stop_escalates);
    tcase_add_test(tc, test_oom_reported);
    tcase_add_test(tc, test_env_hostname_hosts);
    tcase_add_test(tc, test_identity_caps_seccomp);
    tcase_add_test(tc, test_cpuset_and_logcap);
    tcase_add_test(tc, test_mounts_devices_cleanup);
    tcase_add_test(tc, test_bad_create_leaves_nothing);
    tcase_add_test(tc, test_restart_survival);
    tcase_add_test(tc, test_oci_runc);
    tcase_add_test(tc, test_process_backend);
    tcase_add_test(tc, test_pids_limit_and_sigterm);
    tcase_add_test(tc, test_userns);
    suite_add_tcase(s, tc);
    return s;
}
