/* Native backend (and the unisolated process backend, which shares it):
 * create prepares scratch layer, cgroup and shim; the rest works from the
 * container's state directory, so a new handle can pick any container up.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/capability.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "native.h"

/* Cgroup name: the id plus a hash of the state directory, so two runtimes
 * with distinct state directories never share a cgroup. */
void skv__rt_cgroup_name(char *buf, size_t n, const skv_runtime *rt,
                        const char *id)
{
    uint32_t h = 2166136261u;
    for (const char *p = rt->state_dir; *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    snprintf(buf, n, "%s-%08" PRIx32, id, h);
}

/* Whether an extra hosts entry ("ip\tname\n") names the container. */
static bool own_entry(const skv_container_spec *spec)
{
    size_t n = strlen(spec->hostname);
    for (size_t i = 0; i < spec->n_hosts; i++) {
        const char *tab = strchr(spec->hosts[i], '\t');
        if (tab && strncmp(tab + 1, spec->hostname, n) == 0 &&
            tab[1 + n] == '\n')
            return true;
    }
    return false;
}

int skv__rt_scratch_prepare(const skv_container_spec *spec, const char *dir,
                           bool isolate, skv_error *err)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/exec.fifo", dir);
    if (mkfifo(path, 0600) < 0)
        return skv__err_sys(err, errno, "mkfifo %s", path);
    if (!isolate)
        return 0;
    static const char *const sub[] = {"scratch", "scratch/upper",
                                      "scratch/work", "scratch/merged",
                                      "scratch/upper/etc"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(sub); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, sub[i]);
        if (mkdir(path, 0755) < 0)
            return skv__err_sys(err, errno, "mkdir %s", path);
    }
    /* Mount point of the idmapped image layer (native_child.c). */
    snprintf(path, sizeof(path), "%s/scratch/lower", dir);
    if (spec->userns_count && mkdir(path, 0755) < 0)
        return skv__err_sys(err, errno, "mkdir %s", path);
    /* Written into the upper layer: they shadow the image's files. When an
     * extra entry names the container itself (its session address), that
     * one replaces the 127.0.1.1 line so peers and itself agree. */
    bool own = own_entry(spec);
    char *hosts = skv__asprintf("127.0.0.1\tlocalhost\n::1\tlocalhost "
                                "ip6-localhost ip6-loopback\n%s%s%s",
                                own ? "" : "127.0.1.1\t",
                                own ? "" : spec->hostname, own ? "" : "\n");
    for (size_t i = 0; hosts && i < spec->n_hosts; i++) {
        char *more = skv__asprintf("%s%s", hosts, spec->hosts[i]);
        skv__free(hosts);
        hosts = more;
    }
    char *hn = skv__asprintf("%s\n", spec->hostname);
    int rc = hosts && hn ? 0 : skv__err(err, SKV_ENOMEM, "/etc files");
    snprintf(path, sizeof(path), "%s/scratch/upper/etc/hosts", dir);
    if (rc == 0)
        rc = skv__rt_write_file(path, hosts, strlen(hosts), err);
    snprintf(path, sizeof(path), "%s/scratch/upper/etc/hostname", dir);
    if (rc == 0)
        rc = skv__rt_write_file(path, hn, strlen(hn), err);
    skv__free(hosts);
    skv__free(hn);
    return rc;
}

static int cgroup_prepare(skv_cgroup **out, const skv_container_spec *spec,
                          const char *name, skv_error *err)
{
    skv_cgroup_config cfg = {0};
    skv_cgroup_limits lim;
    memset(&lim, 0, sizeof(lim));
    lim.cpus = spec->cpus;
    lim.mems = spec->mems;
    const skv_container_limits *sl = &spec->limits;
    uint64_t period = sl->cpu_period_us ? sl->cpu_period_us : 100000;
    if (sl->cpu_quota_us)
        lim.cpu = (skv_qty)(sl->cpu_quota_us * 1000 / period);
    lim.cpu_period_us = sl->cpu_quota_us ? period : 0;
    lim.memory_bytes = (int64_t)sl->memory_bytes;
    lim.pids_max = (int64_t)sl->pids_max;
    int rc = skv__cgroup_create(out, &cfg, name, err);
    if (rc < 0)
        return rc;
    rc = skv__cgroup_apply(*out, &lim, err);
    if (rc < 0) {
        skv__cgroup_destroy(*out, NULL);
        skv__cgroup_free(*out);
        *out = NULL;
    }
    return rc;
}

int skv__rt_write_state(const char *dir, const char *backend, pid_t pid,
                       pid_t shim, const char *cg, skv_error *err)
{
    char *text = skv__asprintf(
        "backend=%s\npid=%ld\npid_start=%" PRIu64 "\nshim=%ld\n"
        "shim_start=%" PRIu64 "\ncgroup=%s\n", backend, (long)pid,
        skv__rt_proc_start_time(pid), (long)shim,
        skv__rt_proc_start_time(shim), cg);
    if (!text)
        return skv__err(err, SKV_ENOMEM, "state file");
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/state", dir);
    int rc = skv__rt_write_file(path, text, strlen(text), err);
    skv__free(text);
    return rc;
}

static int cgroup_setup(skv_cgroup **cg, const native_plan *p,
                        const char *name, bool *drop_mknod, skv_error *err);

/* The first process's next report: 'R' (0), 'U' (1) or an error. With
 * 'U' the image layer was idmapped unless it says otherwise. */
static int next_report(int rep, skv_error *err)
{
    skv__rt_msg m;
    int rc = skv__rt_msg_read(rep, &m, err);
    if (rc == 0 && m.tag == 'U' && m.value == 0)
        skv__log(SKV_LOG_WARN, "runtime", "image layer not idmapped (%s): "
                 "image files show as nobody in the container",
                 m.text[0] ? m.text : "no idmapped mounts here");
    if (rc == 0 && m.tag == 'E')
        rc = skv__err_sys(err, (int)m.value, "container setup: %s", m.text);
    else if (rc == 0 && m.tag != 'R' && m.tag != 'U')
        rc = skv__err(err, SKV_EPROTO, "unexpected setup message");
    return rc < 0 ? rc : m.tag == 'U';
}

/* Spawn; make the cgroup (cgname; NULL: none) while the first process
 * mounts its root, place it there, let it go on, wait for its report; with
 * a user namespace, write the id maps when it asks ('U'). The go-ahead
 * byte also carries whether to drop CAP_MKNOD ('m'): the first process
 * has its own copy of the plan by then. */
static int launch(const skv__rt_launch *l, const native_plan *p,
                  const char *cgname, skv_cgroup **cg, pid_t *pid,
                  pid_t *shim, skv_error *err)
{
    int rep = -1, go = -1;
    bool drop_mknod = false;
    int rc = skv__rt_shim_spawn(l, pid, shim, &rep, &go, err);
    if (rc < 0)
        return rc;
    if (cgname)
        rc = cgroup_setup(cg, p, cgname, &drop_mknod, err);
    if (rc == 0 && *cg)
        rc = skv__cgroup_add_pid(*cg, *pid, err);
    if (rc < 0) {
        /* It may have failed first (and be gone): its report says why. */
        close(go);
        go = -1;
        skv_error why = SKV_ERROR_INIT;
        if (next_report(rep, &why) < 0 && why.code != SKV_EIO && err)
            *err = why;
        rc = err ? err->code : rc;
    }
    if (rc == 0 && write(go, drop_mknod ? "m" : "1", 1) != 1)
        rc = skv__err_sys(err, errno, "releasing the container's setup");
    if (rc == 0)
        rc = next_report(rep, err);
    /* 'U' comes exactly when the spec has a user namespace. */
    if (rc >= 0 && rc != (int)p->userns)
        rc = skv__err(err, SKV_EPROTO, "unexpected user namespace report");
    if (rc == 1)
        rc = skv__rt_userns_map(*pid, p->spec, err);
    if (rc == 0 && p->userns && write(go, "1", 1) != 1)
        rc = skv__err_sys(err, errno, "releasing the container's setup");
    if (rc == 0 && p->userns) {
        int r = next_report(rep, err);
        rc = r == 1 ? skv__err(err, SKV_EPROTO, "second user namespace "
                               "report") : r;
    }
    if (go >= 0)
        close(go); /* without the byte(s) the first process exits */
    close(rep);
    return rc;
}

/* After a failed create: the first process exits (it got no go-ahead, or
 * reported an error); wait for the shim too, so it writes nothing into the
 * directory the caller is about to remove. */
static void wait_shim_gone(pid_t shim)
{
    uint64_t st = skv__rt_proc_start_time(shim);
    for (int i = 0; i < 2000 && skv__rt_proc_same(shim, st); i++)
        usleep(1000);
}

static bool spec_adds_cap(const skv_container_spec *spec, int cap)
{
    for (size_t i = 0; i < spec->n_caps; i++) {
        int c;
        if (skv__caps_parse(&c, spec->caps[i], NULL) == 0 && c == cap)
            return true;
    }
    return false;
}

/* Cgroup with limits and device allow-list. Without one (a v2 host where
 * the eBPF device program was refused) CAP_MKNOD would let root in the
 * container create and open any host device node, so it is dropped unless
 * the spec asks for it. */
static int cgroup_setup(skv_cgroup **cg, const native_plan *p,
                        const char *name, bool *drop_mknod, skv_error *err)
{
    int rc = cgroup_prepare(cg, p->spec, name, err);
    if (rc == 0)
        rc = skv__rt_devices_apply(*cg, p->spec, err);
    if (rc < 0 && *cg) {
        skv__cgroup_destroy(*cg, NULL);
        skv__cgroup_free(*cg);
        *cg = NULL;
    }
    *drop_mknod = rc == 0 && !skv__rt_devices_supported(*cg) &&
                  !spec_adds_cap(p->spec, CAP_MKNOD);
    return rc;
}

static int create_common(skv_runtime *rt, const skv_container_spec *spec,
                         const char *dir, bool isolate, skv_error *err)
{
    native_plan p;
    skv_cgroup *cg = NULL;
    char cgname[128] = "";
    int rc = skv__rt_native_plan_build(&p, rt, spec, dir, isolate, err);
    if (rc == 0)
        rc = skv__rt_scratch_prepare(spec, dir, isolate, err);
    if (rc == 0)
        rc = skv__rt_exec_conf_write(&p, dir, err);
    if (rc == 0 && p.userns)
        rc = skv__rt_userns_chown_scratch(spec, dir, err);
    if (rc == 0 && p.userns)
        rc = skv__rt_userns_fd(spec, &p.userns_fd, err);
    if (isolate)
        skv__rt_cgroup_name(cgname, sizeof(cgname), rt, spec->id);
    char out[PATH_MAX], errp[PATH_MAX], ex[PATH_MAX], ext[PATH_MAX];
    snprintf(out, sizeof(out), "%s/stdout.log", dir);
    snprintf(errp, sizeof(errp), "%s/stderr.log", dir);
    snprintf(ex, sizeof(ex), "%s/exit", dir);
    snprintf(ext, sizeof(ext), "%s/exit.tmp", dir);
    skv__rt_launch l = {
        .dir = dir, .exit_path = ex, .exit_tmp = ext, .stdout_path = out,
        .stderr_path = errp,
        .log_max = spec->limits.log_max_bytes ? spec->limits.log_max_bytes
                                              : SKV__RT_DEFAULT_LOG_MAX,
        .clone_flags = isolate ? (unsigned long)(CLONE_NEWPID | CLONE_NEWNS |
                                                 CLONE_NEWUTS | CLONE_NEWIPC |
                                                 (spec->network ==
                                                          SKV_NETWORK_NONE
                                                      ? CLONE_NEWNET : 0))
                               : 0,
        .child = skv__rt_native_child, .payload = &p,
        .keep_fd = p.userns_fd};
    pid_t pid = 0, shim = 0;
    if (rc == 0)
        rc = launch(&l, &p, isolate ? cgname : NULL, &cg, &pid, &shim, err);
    if (rc == 0)
        rc = skv__rt_write_state(dir, isolate ? "native" : "process", pid, shim,
                         cgname, err);
    if (rc < 0 && pid > 0 && !cg)
        kill(pid, SIGKILL);
    if (rc < 0 && shim > 0)
        wait_shim_gone(shim);
    if (rc < 0 && cg)
        skv__cgroup_destroy(cg, NULL);
    skv__cgroup_free(cg);
    skv__rt_native_plan_free(&p);
    return rc;
}

static int native_create(skv_runtime *rt, const skv_container_spec *spec,
                         const char *dir, skv_error *err)
{
    return create_common(rt, spec, dir, true, err);
}

static int process_create(skv_runtime *rt, const skv_container_spec *spec,
                          const char *dir, skv_error *err)
{
    if (spec->userns_count)
        return skv__err(err, SKV_ENOTSUP, "the process backend has no "
                        "namespaces; a user namespace needs the native "
                        "backend");
    if (!rt->opts.allow_process_backend)
        return skv__err(err, SKV_EPERM, "the process backend runs containers "
                        "without isolation and is disabled; set "
                        "allow_process_backend for development use");
    return create_common(rt, spec, dir, false, err);
}

static int native_start(skv_runtime *rt, const char *dir, skv_error *err)
{
    SKV__UNUSED(rt);
    return skv__rt_release(dir, err);
}

static int native_signal(skv_runtime *rt, const char *dir, int sig,
                         skv_error *err)
{
    SKV__UNUSED(rt);
    return skv__rt_signal_pid(dir, sig, err);
}

static int native_wait(skv_runtime *rt, const char *dir, int timeout_ms,
                       skv_container_status *out, skv_error *err)
{
    SKV__UNUSED(rt);
    return skv__rt_wait_exit(dir, timeout_ms, out, err);
}

/* The container's cgroup, or *out NULL when it has none (any more). */
static int open_cgroup(const char *dir, skv_cgroup **out, skv_error *err)
{
    char path[PATH_MAX], name[160], *text = NULL;
    *out = NULL;
    snprintf(path, sizeof(path), "%s/state", dir);
    int rc = skv__rt_read_file(path, &text, err);
    if (rc < 0)
        return rc;
    skv_cgroup_config cfg = {0};
    if (skv__rt_kv_get(text, "cgroup", name, sizeof(name)) && name[0]) {
        rc = skv__cgroup_open(out, &cfg, name, err);
        if (rc == SKV_ENOENT)
            rc = 0;
    }
    skv__free(text);
    return rc;
}

int skv__rt_native_stats(skv_runtime *rt, const char *dir,
                        skv_container_stats *out, skv_error *err)
{
    SKV__UNUSED(rt);
    skv_cgroup *cg = NULL;
    int rc = open_cgroup(dir, &cg, err);
    if (rc < 0)
        return rc;
    if (!cg)
        return skv__err(err, SKV_ENOTSUP, "container in %s has no cgroup "
                        "(process backend, or already destroyed)", dir);
    skv_cgroup_stats cs;
    memset(&cs, 0, sizeof(cs));
    rc = skv__cgroup_stats(cg, &cs, err);
    skv__cgroup_free(cg);
    if (rc < 0)
        return rc;
    out->cpu_time_ns = cs.cpu_usage_ns;
    out->memory_current = cs.memory_current;
    out->memory_peak = cs.memory_peak;
    out->pids_current = cs.pids_current;
    return 0;
}

/* SIGTERM and grace for a running command, then SIGKILL for everything:
 * the cgroup when there is one, else the first process. */
static int stop_all(const char *dir, uint32_t grace_ms, skv_cgroup *cg,
                    skv_error *err)
{
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv__rt_status_ex(dir, &st, false, err);
    if (rc < 0)
        return rc;
    bool live = st.state == SKV_CONTAINER_RUNNING ||
                st.state == SKV_CONTAINER_CREATED;
    if (st.state == SKV_CONTAINER_RUNNING && grace_ms > 0 &&
        skv__rt_signal_pid(dir, SIGTERM, NULL) == 0)
        skv__rt_wait_exit(dir, (int)(grace_ms > INT32_MAX ? INT32_MAX
                                                         : grace_ms),
                          &st, NULL);
    /* An ended container needs no kill here: the pid namespace went with
     * its first process, and destroy's cgroup removal kills whatever else
     * might have been moved into the cgroup. */
    if (cg && live)
        rc = skv__cgroup_kill(cg, 5000, err);
    else if (live)
        skv__rt_signal_pid(dir, SIGKILL, NULL);
    /* Let the shim record the status before the directory goes away. */
    if (rc == 0 && live)
        skv__rt_wait_exit(dir, 5000, &st, NULL);
    return rc;
}

static int native_destroy(skv_runtime *rt, const char *dir, uint32_t grace_ms,
                          skv_error *err)
{
    SKV__UNUSED(rt);
    skv_cgroup *cg = NULL;
    int rc = open_cgroup(dir, &cg, err);
    if (rc == SKV_ENOENT) /* no state file: creation never finished */
        rc = 0;
    else if (rc == 0)
        rc = stop_all(dir, grace_ms, cg, err);
    if (rc == 0 && cg)
        rc = skv__cgroup_destroy(cg, err);
    skv__cgroup_free(cg);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/scratch", dir);
    if (rc == 0)
        rc = skv__rt_rm_rf(path, err);
    return rc;
}

static int native_restore(skv_runtime *rt, const char *dir, skv_error *err)
{
    SKV__UNUSED(rt);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv__rt_status(dir, &st, err);
    if (rc < 0 || st.state == SKV_CONTAINER_EXITED ||
        st.state == SKV_CONTAINER_LOST)
        return rc;
    /* A live container must still have its cgroup. */
    skv_cgroup *cg = NULL;
    char path[PATH_MAX], name[160] = "", *text = NULL;
    snprintf(path, sizeof(path), "%s/state", dir);
    rc = skv__rt_read_file(path, &text, err);
    if (rc == 0 && skv__rt_kv_get(text, "cgroup", name, sizeof(name)) &&
        name[0]) {
        skv_cgroup_config cfg = {0};
        rc = skv__cgroup_open(&cg, &cfg, name, err);
    }
    skv__free(text);
    skv__cgroup_free(cg);
    return rc;
}

static const skv_runtime_backend native_backend = {
    SKV_RUNTIME_BACKEND_ABI, "native", native_create, native_start,
    native_signal, native_wait, skv__rt_native_stats, native_destroy, native_restore};

static const skv_runtime_backend process_backend = {
    SKV_RUNTIME_BACKEND_ABI, "process", process_create, native_start,
    native_signal, native_wait, skv__rt_native_stats, native_destroy, native_restore};

const skv_runtime_backend *skv_runtime_backend_native(void)
{
    return &native_backend;
}

const skv_runtime_backend *skv_runtime_backend_process(void)
{
    return &process_backend;
}
