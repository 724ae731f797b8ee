/* OCI backend: writes <dir>/config.json (the container's state directory is
 * the bundle) and drives an OCI runtime binary (runc by default) as a
 * subprocess. The root file system is the same overlay as the native
 * backend's, mounted on the host at <dir>/scratch/merged for the runtime.
 * `runc create` runs as the shim's first process; the shim is a child
 * subreaper, so when runc create exits the container's init is re-parented
 * to the shim, which then holds its exit status like for native containers.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci.h"

#define RUNC_ARGS_MAX 16

typedef struct runc_cmd {
    const char *argv[RUNC_ARGS_MAX];
    size_t argc;
    char root[PATH_MAX];
    char log[PATH_MAX];
} runc_cmd;

/* "<runtime> --root <state>/.runc --log <dir>/runc.log" then the words. */
static void runc_argv(runc_cmd *c, const skv_runtime *rt, const char *dir,
                      const char *const *words)
{
    snprintf(c->root, sizeof(c->root), "%s/.runc", rt->state_dir);
    snprintf(c->log, sizeof(c->log), "%s/runc.log", dir);
    c->argc = 0;
    const char *head[] = {rt->oci_runtime, "--root", c->root, "--log", c->log};
    for (size_t i = 0; i < SKV__ARRAY_LEN(head); i++)
        c->argv[c->argc++] = head[i];
    for (; *words && c->argc + 1 < RUNC_ARGS_MAX; words++)
        c->argv[c->argc++] = *words;
    c->argv[c->argc] = NULL;
}

/* Runs one runtime command; its output's last line goes into the error. */
static int runc(const skv_runtime *rt, const char *dir,
                const char *const *words, skv_error *err)
{
    runc_cmd c;
    char out[PATH_MAX];
    runc_argv(&c, rt, dir, words);
    snprintf(out, sizeof(out), "%s/runc.out", dir);
    int st = 0;
    int rc = skv__rt_run(c.argv, out, &st, err);
    if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        char *text = NULL;
        skv__rt_read_file(out, &text, NULL);
        size_t n = text ? strlen(text) : 0;
        while (n && text[n - 1] == '\n')
            text[--n] = '\0';
        const char *last = text ? strrchr(text, '\n') : NULL;
        rc = skv__err(err, SKV_EIO, "%s %s failed: %s", rt->oci_runtime,
                      words[0], last ? last + 1 : (text && *text ? text : "?"));
        skv__free(text);
    }
    unlink(out);
    return rc;
}

static void oci_child(const skv__rt_launch *l, void *payload)
{
    const runc_cmd *c = payload;
    char b;
    if (read(l->go_fd, &b, 1) != 1)
        _exit(1);
    static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(c->argv[0], (char *const *)c->argv, env);
    _exit(127);
}

static int write_config(const skv_container_spec *spec, const native_plan *p,
                        const char *dir, const char *cgname, skv_error *err)
{
    skv__json j = {0};
    char cgpath[200], path[PATH_MAX];
    snprintf(cgpath, sizeof(cgpath), "/sokovan/%s", cgname);
    int rc = skv__rt_oci_config(&j, spec, p, p->merged, cgpath, err);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    if (rc == 0)
        rc = skv__rt_write_file(path, j.buf, j.len, err);
    skv__json_free(&j);
    return rc;
}

static int oci_launch(skv_runtime *rt, const skv_container_spec *spec,
                      const char *dir, pid_t *pid, pid_t *shim, skv_error *err)
{
    char out[PATH_MAX], errp[PATH_MAX], ex[PATH_MAX], ext[PATH_MAX],
        pidf[PATH_MAX];
    snprintf(out, sizeof(out), "%s/stdout.log", dir);
    snprintf(errp, sizeof(errp), "%s/stderr.log", dir);
    snprintf(ex, sizeof(ex), "%s/exit", dir);
    snprintf(ext, sizeof(ext), "%s/exit.tmp", dir);
    snprintf(pidf, sizeof(pidf), "%s/oci.pid", dir);
    runc_cmd c;
    const char *words[] = {"create", "--bundle", dir, "--pid-file", pidf,
                           spec->id, NULL};
    runc_argv(&c, rt, dir, words);
    skv__rt_launch l = {
        .keep_fd = -1,
        .dir = dir, .exit_path = ex, .exit_tmp = ext, .stdout_path = out,
        .stderr_path = errp,
        .log_max = spec->limits.log_max_bytes ? spec->limits.log_max_bytes
                                              : SKV__RT_DEFAULT_LOG_MAX,
        .pid_file = pidf, .child = oci_child, .payload = &c};
    int rep = -1, go = -1;
    int rc = skv__rt_shim_spawn(&l, pid, shim, &rep, &go, err);
    if (rc < 0)
        return rc;
    if (write(go, "1", 1) != 1)
        rc = skv__err_sys(err, errno, "releasing %s create", rt->oci_runtime);
    close(go);
    skv__rt_msg m;
    if (rc == 0)
        rc = skv__rt_msg_read(rep, &m, err);
    close(rep);
    if (rc == 0 && m.tag != 'R')
        rc = skv__err(err, SKV_EIO, "%s create failed (see %s)",
                      rt->oci_runtime, c.log);
    if (rc == 0)
        *pid = (pid_t)m.value;
    return rc;
}

static int oci_create(skv_runtime *rt, const skv_container_spec *spec,
                      const char *dir, skv_error *err)
{
    native_plan p;
    char cgname[128];
    bool mounted = false;
    pid_t pid = 0, shim = 0;
    if (spec->userns_count)
        return skv__err(err, SKV_ENOTSUP, "user namespaces are implemented "
                        "by the native backend only, not for OCI bundles");
    /* BIND is what the bundle's cpuset.mems enforces already. */
    if (spec->mempolicy == SKV_MEMPOLICY_INTERLEAVE)
        return skv__err(err, SKV_ENOTSUP, "an interleaved memory policy is "
                        "set by the native backend only, not for OCI bundles");
    if (access(rt->oci_runtime, X_OK) < 0)
        return skv__err(err, SKV_ENOENT, "OCI runtime '%s' is not an "
                        "executable", rt->oci_runtime);
    skv__rt_cgroup_name(cgname, sizeof(cgname), rt, spec->id);
    int rc = skv__rt_native_plan_build(&p, rt, spec, dir, true, err);
    if (rc == 0)
        rc = skv__rt_scratch_prepare(spec, dir, true, err);
    if (rc == 0 && mount("overlay", p.merged, "overlay", 0,
                         p.overlay_opts) < 0)
        rc = skv__err_sys(err, errno, "mount overlay at %s", p.merged);
    mounted = rc == 0;
    if (rc == 0)
        rc = write_config(spec, &p, dir, cgname, err);
    if (rc == 0)
        rc = oci_launch(rt, spec, dir, &pid, &shim, err);
    if (rc == 0)
        rc = skv__rt_write_state(dir, "oci", pid, shim, cgname, err);
    if (rc < 0) {
        const char *del[] = {"delete", "--force", spec->id, NULL};
        runc(rt, dir, del, NULL);
        if (mounted)
            umount2(p.merged, MNT_DETACH);
    }
    skv__rt_native_plan_free(&p);
    return rc;
}

/* The container id is the state directory's last component. */
static const char *dir_id(const char *dir)
{
    const char *s = strrchr(dir, '/');
    return s ? s + 1 : dir;
}

static int oci_start(skv_runtime *rt, const char *dir, skv_error *err)
{
    const char *words[] = {"start", dir_id(dir), NULL};
    int rc = runc(rt, dir, words, err);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/started", dir);
    if (rc == 0)
        rc = skv__rt_write_file(path, "", 0, err);
    return rc;
}

static int oci_signal(skv_runtime *rt, const char *dir, int sig,
                      skv_error *err)
{
    char num[16];
    snprintf(num, sizeof(num), "%d", sig);
    const char *words[] = {"kill", dir_id(dir), num, NULL};
    return runc(rt, dir, words, err);
}

static int oci_wait(skv_runtime *rt, const char *dir, int timeout_ms,
                    skv_container_status *out, skv_error *err)
{
    SKV__UNUSED(rt);
    return skv__rt_wait_exit(dir, timeout_ms, out, err);
}

static int oci_destroy(skv_runtime *rt, const char *dir, uint32_t grace_ms,
                       skv_error *err)
{
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    char path[PATH_MAX];
    int rc = skv__rt_status(dir, &st, NULL);
    bool live = rc == 0 && (st.state == SKV_CONTAINER_RUNNING ||
                            st.state == SKV_CONTAINER_CREATED);
    if (rc == 0 && st.state == SKV_CONTAINER_RUNNING && grace_ms > 0 &&
        oci_signal(rt, dir, SIGTERM, NULL) == 0)
        skv__rt_wait_exit(dir, (int)(grace_ms > INT32_MAX ? INT32_MAX
                                                         : grace_ms),
                          &st, NULL);
    /* delete --force kills whatever is left and removes runc's cgroup. */
    const char *del[] = {"delete", "--force", dir_id(dir), NULL};
    rc = runc(rt, dir, del, err);
    if (rc < 0 && skv__rt_status(dir, &st, NULL) == 0 &&
        (st.state == SKV_CONTAINER_EXITED || st.state == SKV_CONTAINER_LOST))
        rc = 0; /* runc forgot it already: nothing runs any more */
    if (rc == 0 && live)
        skv__rt_wait_exit(dir, 5000, &st, NULL);
    snprintf(path, sizeof(path), "%s/scratch/merged", dir);
    if (rc == 0 && umount2(path, MNT_DETACH) < 0 && errno != EINVAL &&
        errno != ENOENT)
        rc = skv__err_sys(err, errno, "umount %s", path);
    snprintf(path, sizeof(path), "%s/scratch", dir);
    if (rc == 0)
        rc = skv__rt_rm_rf(path, err);
    return rc;
}

static int oci_restore(skv_runtime *rt, const char *dir, skv_error *err)
{
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv__rt_status(dir, &st, err);
    if (rc < 0 || st.state == SKV_CONTAINER_EXITED ||
        st.state == SKV_CONTAINER_LOST)
        return rc;
    const char *words[] = {"state", dir_id(dir), NULL};
    return runc(rt, dir, words, err);
}

static const skv_runtime_backend oci_backend = {
    SKV_RUNTIME_BACKEND_ABI, "oci", oci_create, oci_start, oci_signal,
    oci_wait, skv__rt_native_stats, oci_destroy, oci_restore};

const skv_runtime_backend *skv_runtime_backend_oci(void)
{
    return &oci_backend;
}
