/* skv_runtime_exec: a command inside a running container (the caller's
 * side; exec_child.c is the forked side, exec_conf.c what create recorded).
 * Steps: check the container runs and pin its first process with a pidfd
 * (a recycled pid cannot redirect the exec); build identity, capability
 * mask, seccomp program and environment; fork the helper, move it into the
 * container's cgroup (every hierarchy) before it goes on, so the command
 * it forks starts there; read its reports until the command has executed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_int.h"

/* Everything prepared for one exec, freed by prep_free. */
typedef struct prep {
    skv__exec_conf conf;
    skv__exec_launch l;
    skv_seccomp_prog *prog;
    bool prog_owned;
    pid_t init_pid;
    char cgroup[160];
    int pipes[3][2];            /* [i][0] read end, [i][1] write end */
    int sock[2];                /* report: [0] caller, [1] helper */
    int go[2];
} prep;

static int check_opts(const skv_exec_options *o, skv_error *err)
{
    if (!o || o->version != SKV_EXEC_OPTIONS_VERSION)
        return skv__err(err, o ? SKV_EVERSION : SKV_EINVAL, "exec options "
                        "are NULL or of another version");
    if (!o->argv || o->argc == 0 || !o->argv[0] || !o->argv[0][0])
        return skv__err(err, SKV_EINVAL, "exec: argv is empty");
    if (o->argc > 65536 || o->n_env > 65536 || (o->n_env && !o->env))
        return skv__err(err, SKV_EINVAL, "exec: argv or env too long");
    for (size_t i = 0; i < o->argc; i++)
        if (!o->argv[i])
            return skv__err(err, SKV_EINVAL, "exec: argv[%zu] is NULL", i);
    for (size_t i = 0; i < o->n_env; i++) {
        const char *eq = o->env[i] ? strchr(o->env[i], '=') : NULL;
        if (!eq || eq == o->env[i])
            return skv__err(err, SKV_EINVAL, "exec: env entry %zu is not "
                            "NAME=value", i);
    }
    if (o->cwd)
        return skv__rt_check_abs_path(o->cwd, "exec cwd", err);
    return 0;
}

/* Add or replace NAME=value in the recorded environment (room was made
 * for n_env more entries). */
static void merge_env(skv__exec_conf *c, const skv_exec_options *o)
{
    for (size_t i = 0; i < o->n_env; i++) {
        size_t nl = (size_t)(strchr(o->env[i], '=') - o->env[i]) + 1;
        size_t j = 0;
        while (j < c->n_envp && strncmp(c->envp[j], o->env[i], nl) != 0)
            j++;
        c->envp[j] = (char *)o->env[i];
        if (j == c->n_envp)
            c->n_envp++;
    }
}

static const char *env_path(const skv__exec_conf *c)
{
    for (size_t i = 0; i < c->n_envp; i++)
        if (strncmp(c->envp[i], "PATH=", 5) == 0)
            return c->envp[i] + 5;
    return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

/* The first process (pid, start time, cgroup) from the state file, and a
 * pidfd on it once it is known to be that very process. */
static int pin_init(prep *p, const char *dir, const char *id, skv_error *err)
{
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    int rc = skv__rt_status_ex(dir, &st, false, err);
    if (rc == 0 && st.state != SKV_CONTAINER_RUNNING)
        return skv__err(err, SKV_ESTATE, "container '%s' is not running "
                        "(%s): nothing to exec into", id,
                        st.state == SKV_CONTAINER_CREATED ? "not started"
                        : st.state == SKV_CONTAINER_LOST ? "lost" : "exited");
    char path[PATH_MAX], *text = NULL;
    snprintf(path, sizeof(path), "%s/state", dir);
    if (rc == 0)
        rc = skv__rt_read_file(path, &text, err);
    if (rc < 0)
        return rc;
    int64_t pid = 0, start = 0;
    skv__rt_kv_get_i64(text, "pid", &pid);
    skv__rt_kv_get_i64(text, "pid_start", &start);
    skv__rt_kv_get(text, "cgroup", p->cgroup, sizeof(p->cgroup));
    skv__free(text);
    p->init_pid = (pid_t)pid;
    p->l.pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
    if (p->l.pidfd < 0 || !skv__rt_proc_same((pid_t)pid, (uint64_t)start))
        return skv__err(err, SKV_ESTATE, "container '%s' is not running "
                        "(its first process is gone)", id);
    return 0;
}

/* Whether the first process's namespace `ns` differs from the caller's. */
static bool ns_differs(pid_t pid, const char *ns)
{
    char a[64], pa[PATH_MAX], pb[PATH_MAX];
    struct stat sa, sb;
    snprintf(a, sizeof(a), "/proc/%ld/ns/%s", (long)pid, ns);
    if (skv__sys_path(pa, sizeof(pa), a, NULL) < 0 || stat(pa, &sa) < 0)
        return false;
    snprintf(a, sizeof(a), "/proc/self/ns/%s", ns);
    if (skv__sys_path(pb, sizeof(pb), a, NULL) < 0 || stat(pb, &sb) < 0)
        return true;
    return sa.st_ino != sb.st_ino || sa.st_dev != sb.st_dev;
}

static void pick_namespaces(prep *p)
{
    static const struct {
        const char *name;
        int flag;
    } ns[] = {{"mnt", CLONE_NEWNS},    {"pid", CLONE_NEWPID},
              {"net", CLONE_NEWNET},   {"ipc", CLONE_NEWIPC},
              {"uts", CLONE_NEWUTS},   {"cgroup", CLONE_NEWCGROUP}};
    for (size_t i = 0; i < SKV__ARRAY_LEN(ns); i++)
        if (ns_differs(p->init_pid, ns[i].name))
            p->l.ns_flags |= ns[i].flag;
    p->l.userns = p->conf.userns && ns_differs(p->init_pid, "user");
}

/* The first process's bounding set: the exec keeps no capability the
 * container's process has given up (CAP_MKNOD on hosts without a device
 * allow-list, or a drop of its own). */
static int init_bounding(pid_t pid, uint64_t *out, skv_error *err)
{
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
    int rc = skv__sys_read(path, buf, sizeof(buf), NULL, err);
    const char *b = rc == 0 ? strstr(buf, "\nCapBnd:") : NULL;
    if (rc == 0 && (!b || sscanf(b + 8, "%" SCNx64, out) != 1))
        rc = skv__err(err, SKV_EPROTO, "%s has no CapBnd", path);
    return rc;
}

static int build_identity(prep *p, skv_runtime *rt, skv_error *err)
{
    skv__caps_plan_init(&p->l.caps);
    p->l.caps.set_ids = true;
    p->l.caps.uid = p->conf.uid;
    p->l.caps.gid = p->conf.gid;
    p->l.caps.no_new_privs = true;
    uint64_t bnd = 0;
    int rc = init_bounding(p->init_pid, &bnd, err);
    p->l.caps.keep = p->conf.caps & bnd;
    if (rc == 0)
        rc = skv__rt_seccomp_prog(rt, p->conf.syscalls, p->conf.n_syscalls,
                                  &p->prog, &p->prog_owned, err);
    p->l.prog = p->prog;
    p->l.tty_uid = p->conf.host_uid;
    p->l.tty_gid = p->conf.host_gid;
    return rc;
}

static int make_channels(prep *p, bool tty, skv_error *err)
{
    for (int i = 0; !tty && i < 3; i++)
        if (pipe2(p->pipes[i], O_CLOEXEC) < 0)
            return skv__err_sys(err, errno, "exec pipes");
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->sock) < 0 ||
        pipe2(p->go, O_CLOEXEC) < 0)
        return skv__err_sys(err, errno, "exec report channel");
    for (int i = 0; !tty && i < 3; i++)
        p->l.stdio[i] = p->pipes[i][i == 0 ? 0 : 1];
    p->l.report_fd = p->sock[1];
    p->l.go_fd = p->go[0];
    return 0;
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void prep_init(prep *p)
{
    memset(p, 0, sizeof(*p));
    int *fds[] = {&p->l.pidfd, &p->sock[0], &p->sock[1], &p->go[0], &p->go[1]};
    for (size_t i = 0; i < SKV__ARRAY_LEN(fds); i++)
        *fds[i] = -1;
    for (int i = 0; i < 3; i++)
        p->pipes[i][0] = p->pipes[i][1] = p->l.stdio[i] = -1;
}

static void prep_free(prep *p)
{
    close_fd(&p->l.pidfd);
    close_fd(&p->sock[0]);
    close_fd(&p->sock[1]);
    close_fd(&p->go[0]);
    close_fd(&p->go[1]);
    for (int i = 0; i < 3; i++) {
        close_fd(&p->pipes[i][0]);
        close_fd(&p->pipes[i][1]);
    }
    if (p->prog_owned)
        skv__seccomp_prog_free(p->prog);
    skv__exec_conf_free(&p->conf);
}

static int prepare(prep *p, skv_runtime *rt, const char *dir, const char *id,
                   const skv_exec_options *o, skv_error *err)
{
    int rc = skv__exec_conf_read(&p->conf, dir, o->n_env, err);
    if (rc == 0 && p->conf.isolate)
        rc = pin_init(p, dir, id, err);
    if (rc == 0 && !p->conf.isolate) {
        skv_container_status st = SKV_CONTAINER_STATUS_INIT;
        rc = skv__rt_status_ex(dir, &st, false, err);
        if (rc == 0 && st.state != SKV_CONTAINER_RUNNING)
            rc = skv__err(err, SKV_ESTATE, "container '%s' is not running: "
                          "nothing to exec into", id);
    }
    if (rc == 0 && p->conf.isolate) {
        pick_namespaces(p);
        rc = build_identity(p, rt, err);
    }
    if (rc < 0)
        return rc;
    merge_env(&p->conf, o);
    p->l.isolate = p->conf.isolate;
    p->l.tty = o->tty;
    p->l.ws.ws_row = o->rows ? o->rows : 24;
    p->l.ws.ws_col = o->cols ? o->cols : 80;
    p->l.cwd = o->cwd ? o->cwd : p->conf.cwd;
    p->l.argv = (char *const *)o->argv;
    p->l.envp = p->conf.envp;
    p->l.path_env = env_path(&p->conf);
    return make_channels(p, o->tty, err);
}

/* argv must be NULL-terminated for execve; the options hold a count. */
static int argv_copy(const skv_exec_options *o, const char ***out,
                     skv_error *err)
{
    *out = skv__calloc(o->argc + 1, sizeof(char *));
    if (!*out)
        return skv__err(err, SKV_ENOMEM, "exec argv");
    memcpy(*out, o->argv, o->argc * sizeof(char *));
    return 0;
}

static void reap(pid_t pid)
{
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
}

/* Reports until EOF: the helper's 'P' (command pid, terminal master) and
 * an 'E' from either process. */
static int collect(prep *p, pid_t *cmd, int *master, skv_error *err)
{
    skv__rt_msg m;
    int fd, rc, e_errno = 0;
    char what[sizeof(m.text)] = "";
    while ((rc = skv__exec_report_recv(p->sock[0], &m, &fd, err)) == 1) {
        if (m.tag == 'P') {
            *cmd = (pid_t)m.value;
            *master = fd;
        } else if (fd >= 0) {
            close(fd);
        }
        if (m.tag == 'E' && !e_errno) {
            e_errno = m.value > 0 ? (int)m.value : EIO;
            memcpy(what, m.text, sizeof(what));
        }
    }
    if (rc < 0 || !e_errno)
        return rc;
    /* A command not found is the caller's mistake, not a system failure. */
    if (e_errno == ENOENT)
        return skv__err(err, SKV_ENOENT, "exec: %s: %s", what,
                        strerror(ENOENT));
    return skv__err_sys(err, e_errno, "exec: %s", what);
}

/* Fork the helper, place it, let it go, collect the outcome. */
static int launch(prep *p, skv_exec *e, skv_error *err)
{
    skv_cgroup *cg = NULL;
    int rc = 0;
    if (p->conf.isolate && p->cgroup[0]) {
        skv_cgroup_config cfg = {0};
        rc = skv__cgroup_open(&cg, &cfg, p->cgroup, err);
    }
    pid_t helper = rc == 0 ? fork() : -1;
    if (helper == 0)
        skv__exec_child(&p->l);
    if (rc == 0 && helper < 0)
        rc = skv__err_sys(err, errno, "fork");
    /* Only the helper and the command hold these ends now: EOF on the
     * report socket means both are done. */
    close_fd(&p->sock[1]);
    close_fd(&p->go[0]);
    if (rc == 0 && cg)
        rc = skv__cgroup_add_pid(cg, helper, err);
    skv__cgroup_free(cg);
    if (rc == 0 && write(p->go[1], "1", 1) != 1)
        rc = skv__err_sys(err, errno, "releasing the exec helper");
    close_fd(&p->go[1]); /* without the byte the helper exits */
    e->pid = -1;
    int master = -1;
    int crc = helper > 0 ? collect(p, &e->pid, &master, err) : 0;
    rc = rc < 0 ? rc : crc;
    if (helper > 0)
        reap(helper);
    e->in = e->out = master;
    if (rc < 0 && e->pid > 0) {
        kill(e->pid, SIGKILL);
        reap(e->pid);
    }
    if (rc == 0 && e->pid <= 0)
        rc = skv__err(err, SKV_EIO, "exec: the helper ended without "
                      "starting the command");
    return rc;
}

int skv_runtime_exec(skv_runtime *rt, const char *id,
                     const skv_exec_options *opts, skv_exec **out,
                     skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b = NULL;
    if (!out)
        return skv__err(err, SKV_EINVAL, "exec: out is NULL");
    *out = NULL;
    int rc = check_opts(opts, err);
    if (rc == 0)
        rc = skv__rt_lookup(rt, id, dir, sizeof(dir), &b, err);
    bool oci = rc == 0 && b == skv_runtime_backend_oci();
    if (rc == 0 && b != skv_runtime_backend_native() &&
        b != skv_runtime_backend_process() && !oci)
        rc = skv__err(err, SKV_ENOTSUP, "exec into container '%s' of backend "
                      "'%s' is not supported (native, process and oci only)",
                      id, b->name);
    if (rc < 0)
        return rc;
    prep p;
    prep_init(&p);
    const char **argv = NULL;
    skv_exec *e = skv__calloc(1, sizeof(*e));
    rc = e ? argv_copy(opts, &argv, err) : skv__err(err, SKV_ENOMEM, "exec");
    if (e) {
        e->tty = opts->tty;
        e->in = e->out = e->errfd = e->pidfd = e->cmd_pidfd = -1;
        e->pid = e->cmd_pid = -1;
    }
    if (rc == 0 && oci)
        rc = skv__oci_exec(rt, dir, id, opts, e, err);
    else if (rc == 0)
        rc = prepare(&p, rt, dir, id, opts, err);
    p.l.argv = (char *const *)argv;
    if (rc == 0 && !oci)
        rc = launch(&p, e, err);
    if (rc == 0 && !oci)
        rc = skv__exec_take(e, p.pipes, "the command", err);
    prep_free(&p);
    skv__free(argv);
    /* A keeper is ended by skv_exec_free: SIGKILL would orphan its
     * command. */
    if (rc < 0 && e && !e->keeper && e->pid > 0 && !e->reaped) {
        kill(e->pid, SIGKILL);
        reap(e->pid);
        e->reaped = true;
    }
    if (rc < 0) {
        skv__err_prefix(err, "container '%s'", id);
        skv_exec_free(e);
        return rc;
    }
    *out = e;
    return 0;
}
