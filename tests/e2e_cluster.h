/* A local cluster of real daemons for the end-to-end suite (test_e2e.c) and
 * benchmark (bench/e2e): a scratch directory, a busybox image, one
 * sokovan-manager on a Unix socket and agents as child processes, and
 * helpers over the client library. Plain C (no Check), header-only and all
 * `static inline`, so both the suite and the benchmark can include it.
 *
 * Cleanup is by the scratch directory: every spawned daemon's pid is written
 * to <root>/pids/<name>.<pid>, so a teardown running in another process (an
 * unchecked Check fixture, after the test's own process died on a failed
 * assertion) still finds and kills them, destroys the agents' containers
 * and removes the directory (SKV_E2E_KEEP=1 keeps it, with the daemons'
 * logs under logs/, for debugging).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_E2E_CLUSTER_H
#define SKV_TEST_E2E_CLUSTER_H

#include <dirent.h>
#include <sched.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sokovan/auth.h"
#include "sokovan/client.h"
#include "sokovan/image.h"
#include "sokovan/proto.h"
#include "sokovan/runtime.h"

#define E2E_MAX_AGENTS 4
#define E2E_ID_MAX 64

typedef struct e2e_cluster {
    char bin[PATH_MAX];        /* directory of sokovan-manager / -agent */
    char root[PATH_MAX];       /* scratch directory: everything lives here */
    /* Where agents keep their containers' directories (--run-dir
     * <run_root>/agent-<id>/containers); "" = root. */
    char run_root[PATH_MAX];
    char data[PATH_MAX];       /* manager data dir */
    char sock[PATH_MAX];       /* manager Unix socket */
    char endpoint[PATH_MAX + 8];
    char images[PATH_MAX];     /* image store shared by the agents */
    char tarball[PATH_MAX];    /* busybox rootfs tarball */
    char mgr_ns[32];           /* network namespace of the manager, or "" */
    char mgr_tcp[64];          /* its TCP listen address, or "" (none) */
    pid_t mgr;
    int nagents;
    pid_t agent[E2E_MAX_AGENTS];
    char agent_cpus[E2E_MAX_AGENTS][32];
    /* Agent i's --plugins, e.g. "cpu;mem;mock:count=2,prefix=cuda"; ""
     * = the agent's default. */
    char agent_plugins[E2E_MAX_AGENTS][128];
    /* Agent i's --topology-xml FILE and --memory (""= none / "4g"). */
    char agent_xml[E2E_MAX_AGENTS][PATH_MAX];
    char agent_mem[E2E_MAX_AGENTS][32];
    char admin_ak[SKV_AUTH_ACCESS_KEY_MAX];
    char admin_sk[SKV_AUTH_SECRET_KEY_MAX];
    char why[768];             /* the last failure, for assertion messages */
    /* The manager's --heartbeat-timeout-ms; "" = 15000. Lost-agent tests
     * shorten it to keep an agent "away longer than the timeout" quick. */
    char hb_timeout_ms[16];
    /* More manager arguments, e.g. {"--sched-plugins", path}; NULL ends
     * them. Borrowed: they must outlive the cluster. */
    const char *mgr_extra[8];
    /* Agent i's --backend (e.g. "oci": runc); "" = the agent's default. */
    char agent_backend[E2E_MAX_AGENTS][16];
} e2e_cluster;

static inline int64_t e2e_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void e2e_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static inline int e2e_fail(e2e_cluster *c, const char *fmt, const char *a,
                           const char *b)
{
    snprintf(c->why, sizeof(c->why), fmt, a ? a : "", b ? b : "");
    return -1;
}

/* ---- scratch directory, image ------------------------------------------ */

/* The daemons' directory: $SKV_E2E_BIN, else <build>/bin. 0 when both
 * daemons are there and executable. */
static inline int e2e_find_bin(char *out, size_t cap, const char *build_dir)
{
    const char *env = getenv("SKV_E2E_BIN");
    char p[PATH_MAX + 32];
    if (env)
        snprintf(out, cap, "%s", env);
    else
        snprintf(out, cap, "%s/bin", build_dir);
    snprintf(p, sizeof(p), "%s/sokovan-manager", out);
    if (access(p, X_OK) != 0)
        return -1;
    snprintf(p, sizeof(p), "%s/sokovan-agent", out);
    return access(p, X_OK) == 0 ? 0 : -1;
}

static inline int e2e_sh(const char *fmt, const char *a, const char *b)
{
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof(cmd), fmt, a, b);
    return system(cmd) == 0 ? 0 : -1;
}

/* busybox with the applets the sessions use, as a rootfs tarball, imported
 * as "busybox" into the shared store. Laid out like an exported image:
 * /proc, /sys, /dev and a 1777 /tmp exist (the runtime tests cover images
 * without them). */
static inline int e2e_make_image(e2e_cluster *c)
{
    char rfs[PATH_MAX + 8];
    skv_error e = SKV_ERROR_INIT;
    snprintf(rfs, sizeof(rfs), "%s/rfs", c->root);
    char cmd[PATH_MAX * 4];
    snprintf(cmd, sizeof(cmd), "set -e; cd %s/..; mkdir -p rfs/bin rfs/etc "
             "rfs/tmp rfs/proc rfs/sys rfs/dev; chmod 1777 rfs/tmp; "
             "cp /bin/busybox rfs/bin/; for a in sh true false echo sleep cat "
             "env test printf seq; do ln -s busybox rfs/bin/$a; done", rfs);
    if (system(cmd) != 0)
        return e2e_fail(c, "cannot build the busybox rootfs in %s%s", rfs, "");
    if (e2e_sh("tar -C %s -cf %s .", rfs, c->tarball) != 0)
        return e2e_fail(c, "cannot tar %s into %s", rfs, c->tarball);
    skv_image_store *st = NULL;
    int rc = skv_image_store_open(&st, c->images, &e);
    if (rc == 0)
        rc = skv_image_import_tar(st, "busybox", c->tarball, &e);
    skv_image_store_free(st);
    return rc ? e2e_fail(c, "busybox import: %s%s", e.message, "") : 0;
}

/* A scratch directory under /tmp with the image imported. */
static inline int e2e_init(e2e_cluster *c, const char *bin)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->bin, sizeof(c->bin), "%s", bin);
    snprintf(c->root, sizeof(c->root), "/tmp/skv-e2e-%ld-XXXXXX",
             (long)getpid());
    if (!mkdtemp(c->root))
        return e2e_fail(c, "mkdtemp %s: failed%s", c->root, "");
    snprintf(c->data, sizeof(c->data), "%s/mgr", c->root);
    snprintf(c->sock, sizeof(c->sock), "%s/m.sock", c->root);
    snprintf(c->endpoint, sizeof(c->endpoint), "unix:%s", c->sock);
    snprintf(c->images, sizeof(c->images), "%s/images", c->root);
    snprintf(c->tarball, sizeof(c->tarball), "%s/busybox.tar", c->root);
    if (e2e_sh("mkdir -p %s/pids %s/logs", c->root, c->root) != 0)
        return e2e_fail(c, "mkdir in %s%s", c->root, "");
    return e2e_make_image(c);
}

/* ---- processes ----------------------------------------------------------- */

/* fork + exec argv with stdout/stderr appended to <root>/logs/<name>.log;
 * the pid is recorded under <root>/pids for any later teardown. */
/* Start a daemon with stdout/stderr to root/logs/<name>.log, in network
 * namespace ns (a name under /run/netns) unless ns is NULL or "". setns()
 * rather than `ip netns exec`: that would remount /sys and hide the
 * cgroup tree from the daemon. */
static inline pid_t e2e_spawn_ns(e2e_cluster *c, const char *ns,
                                 const char *name, char *const argv[])
{
    char log[PATH_MAX + 64], pidf[PATH_MAX + 96], nsf[64];
    snprintf(log, sizeof(log), "%s/logs/%s.log", c->root, name);
    snprintf(nsf, sizeof(nsf), "/run/netns/%s", ns ? ns : "");
    pid_t pid = fork();
    if (pid == 0) {
        int nfd = ns && ns[0] ? open(nsf, O_RDONLY | O_CLOEXEC) : -2;
        if (nfd == -1 || (nfd >= 0 && setns(nfd, CLONE_NEWNET) < 0))
            _exit(127);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 ||
            dup2(fd, 2) < 0)
            _exit(127);
        /* its own process group: a signal to the test's group (Check's
         * timeout) does not reach it, the teardown does */
        setpgid(0, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid < 0)
        return -1;
    snprintf(pidf, sizeof(pidf), "%s/pids/%s.%ld", c->root, name, (long)pid);
    FILE *f = fopen(pidf, "w");
    if (f)
        fclose(f);
    return pid;
}

static inline pid_t e2e_spawn(e2e_cluster *c, const char *name,
                              char *const argv[])
{
    return e2e_spawn_ns(c, NULL, name, argv);
}

/* The last lines of a daemon's log, for failure messages. */
static inline void e2e_log_tail(const e2e_cluster *c, const char *name,
                                char *out, size_t cap)
{
    char cmd[PATH_MAX + 96];
    snprintf(cmd, sizeof(cmd), "tail -c %zu %s/logs/%s.log 2>/dev/null",
             cap > 1 ? cap - 1 : 0, c->root, name);
    out[0] = '\0';
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    pclose(p);
}

static inline bool e2e_alive(pid_t pid)
{
    int st;
    return pid > 0 && waitpid(pid, &st, WNOHANG) == 0;
}

/* Kill one daemon with sig and reap it; its pid file goes. */
static inline void e2e_kill(e2e_cluster *c, pid_t *pid, int sig,
                            const char *name)
{
    char pidf[PATH_MAX + 96];
    if (*pid <= 0)
        return;
    kill(*pid, sig);
    for (int i = 0; i < 500 && e2e_alive(*pid); i++)
        e2e_sleep_ms(10);
    if (e2e_alive(*pid)) {
        kill(*pid, SIGKILL);
        waitpid(*pid, NULL, 0);
    }
    snprintf(pidf, sizeof(pidf), "%s/pids/%s.%ld", c->root, name, (long)*pid);
    unlink(pidf);
    *pid = -1;
}

static inline bool e2e_file_exists(const char *p)
{
    return access(p, F_OK) == 0;
}

/* Start (or restart: same data dir) the manager; wait for its socket and
 * the admin key file, then read the admin key. */
static inline int e2e_start_manager(e2e_cluster *c, const char *agents)
{
    char exe[PATH_MAX + 32], key[PATH_MAX + 16];
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", c->bin);
    snprintf(key, sizeof(key), "%s/admin.key", c->data);
    char *argv[32] = {exe, "--data-dir", c->data, "--listen", c->sock,
                      "--tcp", c->mgr_tcp[0] ? c->mgr_tcp : "none",
                      "--bootstrap-agents", (char *)agents,
                      "--heartbeat-interval-ms", "500",
                      "--heartbeat-timeout-ms",
                      c->hb_timeout_ms[0] ? c->hb_timeout_ms : "15000",
                      NULL};
    size_t na = 13;
    for (size_t i = 0; i < 8 && c->mgr_extra[i]; i++)
        argv[na++] = (char *)c->mgr_extra[i];
    unlink(c->sock);
    c->mgr = e2e_spawn_ns(c, c->mgr_ns, "manager", argv);
    if (c->mgr < 0)
        return e2e_fail(c, "fork: %s%s", strerror(errno), "");
    for (int64_t end = e2e_now_ms() + 15000; e2e_now_ms() < end;) {
        if (!e2e_alive(c->mgr)) {
            char tail[400];
            e2e_log_tail(c, "manager", tail, sizeof(tail));
            c->mgr = -1;
            return e2e_fail(c, "sokovan-manager exited: %s%s", tail, "");
        }
        if (e2e_file_exists(c->sock) && e2e_file_exists(key))
            break;
        e2e_sleep_ms(20);
    }
    skv_error e = SKV_ERROR_INIT;
    if (skv_client_read_keyfile(c->admin_ak, c->admin_sk, key, &e))
        return e2e_fail(c, "admin key: %s%s", e.message, "");
    return 0;
}

/* Agent id's --run-dir. */
static inline void e2e_run_dir(const e2e_cluster *c, const char *id,
                               char *buf, size_t n)
{
    snprintf(buf, n, "%s/agent-%s/containers",
             c->run_root[0] ? c->run_root : c->root, id);
}

/* Start (or restart) agent i ("a<i+1>") on its CPU slice. */
static inline int e2e_start_agent(e2e_cluster *c, int i)
{
    char exe[PATH_MAX + 32], id[16], mgr[PATH_MAX + 16], state[PATH_MAX + 32];
    char run[PATH_MAX + 48];
    snprintf(exe, sizeof(exe), "%s/sokovan-agent", c->bin);
    snprintf(id, sizeof(id), "a%d", i + 1);
    snprintf(mgr, sizeof(mgr), "unix:%s", c->sock);
    snprintf(state, sizeof(state), "%s/agent-%s", c->root, id);
    e2e_run_dir(c, id, run, sizeof(run));
    if (i >= E2E_MAX_AGENTS)
        return e2e_fail(c, "at most 4 agents%s%s", "", "");
    char *plugins = c->agent_plugins[i][0] ? c->agent_plugins[i] : NULL;
    char *xml = c->agent_xml[i][0] ? c->agent_xml[i] : NULL;
    if (!c->agent_mem[i][0])
        snprintf(c->agent_mem[i], sizeof(c->agent_mem[i]), "%s", "4g");
    if (!c->agent_cpus[i][0])
        snprintf(c->agent_cpus[i], sizeof(c->agent_cpus[i]), "%s", "0");
    char *argv[32] = {exe, "--agent-id", id, "--manager", mgr,
                      "--data-dir", c->data, "--state-dir", state,
                      "--run-dir", run, "--image-dir", c->images, "--cpus",
                      c->agent_cpus[i], "--memory", c->agent_mem[i],
                      "--poll-interval-ms", "10", "--stats-interval-ms",
                      "1000", "--reconnect-max-ms", "500"};
    int argc = 23;
    if (plugins) {
        argv[argc++] = "--plugins";
        argv[argc++] = plugins;
    }
    if (xml) {
        argv[argc++] = "--topology-xml";
        argv[argc++] = xml;
    }
    if (c->agent_backend[i][0]) {
        argv[argc++] = "--backend";
        argv[argc++] = c->agent_backend[i];
    }
    c->agent[i] = e2e_spawn(c, id, argv);
    if (c->agent[i] < 0)
        return e2e_fail(c, "fork: %s%s", strerror(errno), "");
    if (i >= c->nagents)
        c->nagents = i + 1;
    return 0;
}

/* Destroy every container left in one agent's runtime state. */
static inline void e2e_destroy_containers(const char *state_dir)
{
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = state_dir;
    skv_runtime *rt = NULL;
    if (skv_runtime_open(&rt, &o, NULL) != 0)
        return;
    char **ids = NULL;
    size_t n = 0;
    if (skv_runtime_list(rt, &ids, &n, NULL) == 0) {
        for (size_t i = 0; i < n; i++)
            skv_runtime_destroy(rt, ids[i], 0, NULL);
        skv_runtime_list_free(ids, n);
    }
    skv_runtime_free(rt);
}

/* Only a process whose command line names a sokovan daemon is killed (a
 * recorded pid may have been reused since). */
static inline bool e2e_is_daemon(long pid)
{
    char p[64], cmd[256] = "";
    snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return false;
    size_t n = fread(cmd, 1, sizeof(cmd) - 1, f);
    fclose(f);
    cmd[n] = '\0';
    return strstr(cmd, "sokovan-manager") || strstr(cmd, "sokovan-agent") ||
           strstr(cmd, "sokovan-proxy");
}

/* Kill every daemon recorded under root/pids (in any process), destroy the
 * agents' containers and remove root. Safe to call twice. */
/* Destroy the containers of every agent-* under root. */
static inline void e2e_destroy_agents(const char *root)
{
    char p[PATH_MAX * 2];
    DIR *d = opendir(root);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "agent-", 6) != 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s/containers", root, de->d_name);
        e2e_destroy_containers(p);
    }
    if (d)
        closedir(d);
}

/* A separate run root: its containers and then the directory. */
static inline void e2e_teardown_run_root(const char *run_root)
{
    char p[PATH_MAX + 64];
    if (!run_root[0])
        return;
    e2e_destroy_agents(run_root);
    if (getenv("SKV_E2E_KEEP"))
        return;
    snprintf(p, sizeof(p), "rm -rf --one-file-system %s", run_root);
    if (system(p) != 0)
        fprintf(stderr, "e2e: could not remove %s\n", run_root);
}

static inline void e2e_teardown_root(const char *root)
{
    char dir[PATH_MAX + 16], p[PATH_MAX * 2];
    if (!root[0])
        return;
    snprintf(dir, sizeof(dir), "%s/pids", root);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        const char *dot = strrchr(de->d_name, '.');
        long pid = dot ? strtol(dot + 1, NULL, 10) : 0;
        if (pid > 1 && e2e_is_daemon(pid)) {
            kill((pid_t)pid, SIGKILL);
            for (int i = 0; i < 200 && e2e_is_daemon(pid); i++)
                e2e_sleep_ms(10);
            waitpid((pid_t)pid, NULL, WNOHANG);
        }
    }
    if (d)
        closedir(d);
    e2e_destroy_agents(root);
    if (getenv("SKV_E2E_KEEP")) { /* debugging: keep logs and databases */
        fprintf(stderr, "e2e: kept %s\n", root);
        return;
    }
    /* never cross into a mount left behind (an image lower layer) */
    snprintf(p, sizeof(p), "rm -rf --one-file-system %s", root);
    if (system(p) != 0)
        fprintf(stderr, "e2e: could not remove %s\n", root);
}

/* Stop the daemons gently (SIGTERM), then everything else. */
static inline void e2e_stop(e2e_cluster *c)
{
    char id[16];
    for (int i = 0; i < c->nagents; i++) {
        snprintf(id, sizeof(id), "a%d", i + 1);
        e2e_kill(c, &c->agent[i], SIGTERM, id);
    }
    e2e_kill(c, &c->mgr, SIGTERM, "manager");
    e2e_teardown_root(c->root);
    c->root[0] = '\0';
    e2e_teardown_run_root(c->run_root);
    c->run_root[0] = '\0';
}

/* ---- client helpers ------------------------------------------------------ */

static inline int e2e_connect(e2e_cluster *c, skv_client **out,
                              const char *ak, const char *sk)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    o.endpoint = c->endpoint;
    o.access_key = ak ? ak : c->admin_ak;
    o.secret_key = sk ? sk : c->admin_sk;
    o.timeout_ms = 20000;
    int rc = -1;
    /* the manager may be (re)starting: retry for a while */
    for (int64_t end = e2e_now_ms() + 15000; e2e_now_ms() < end;) {
        if ((rc = skv_client_connect(out, &o, &e)) == 0)
            return 0;
        e2e_sleep_ms(50);
    }
    return e2e_fail(c, "connect %s: %s", c->endpoint, e.message);
}

/* Wait until n agents are alive. */
static inline int e2e_wait_agents(e2e_cluster *c, skv_client *cl, size_t n)
{
    skv_error e = SKV_ERROR_INIT;
    size_t alive = 0;
    for (int64_t end = e2e_now_ms() + 20000; e2e_now_ms() < end;) {
        skv_proto_agent_list req = {0};
        skv_proto_agent_list_reply rep = {0};
        int rc = skv_client_call(cl, SKV_PROTO_AGENT_LIST, &req, &rep, &e);
        if (rc)
            return e2e_fail(c, "agent.list: %s%s", e.message, "");
        alive = 0;
        for (size_t i = 0; i < rep.n_agents; i++)
            alive += rep.agents[i].status &&
                     strcmp(rep.agents[i].status, "alive") == 0;
        skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
        if (alive >= n)
            return 0;
        e2e_sleep_ms(50);
    }
    char tail[400];
    e2e_log_tail(c, "a1", tail, sizeof(tail));
    return e2e_fail(c, "agents did not register; a1 log: %s%s", tail, "");
}

typedef struct e2e_job {
    const char *name;          /* may be NULL */
    const char *script;        /* run with sh -c */
    const char *slots;         /* per kernel, e.g. "cpu=0.1,mem=32m" */
    uint32_t cluster_size;     /* 0/1: single kernel */
    bool multi_node;
    const char *token;         /* client_token; may be NULL */
    char *const *argv;         /* the command itself instead of sh -c
                                  script (NULL-terminated); may be NULL */
    uint32_t port;             /* main1's TCP port to publish; 0 none */
} e2e_job;

/* Submit; *sid (E2E_ID_MAX) receives the session id. Returns the client's
 * code (negative SKV_E*) with the message in err. */
static inline int e2e_submit(skv_client *cl, char *sid, const e2e_job *j,
                             skv_error *err)
{
    skv_slots *req = NULL;
    int rc = skv_slots_parse(&req, j->slots, NULL, err);
    if (rc)
        return rc;
    char *cmd[] = {"sh", "-c", (char *)j->script};
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit s = {0};
    s.name = (char *)j->name;
    s.session_type = "batch";
    s.cluster_mode = j->multi_node ? "multi-node" : "single-node";
    s.cluster_size = j->cluster_size ? j->cluster_size : 1;
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 3;
    if (j->argv) {
        s.command = (char **)j->argv;
        for (s.n_command = 0; j->argv[s.n_command]; s.n_command++)
            ;
    }
    s.kernels = &k;
    s.n_kernels = 1;
    s.client_token = (char *)j->token;
    uint32_t port = j->port;
    if (port) {
        s.ports = &port;
        s.n_ports = 1;
    }
    skv_proto_session_ref ref = {0};
    rc = skv_client_submit(cl, &ref, &s, err);
    if (rc == 0)
        snprintf(sid, E2E_ID_MAX, "%s", ref.session_id ? ref.session_id : "");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    skv_slots_free(req);
    return rc;
}

static inline bool e2e_final(const char *status)
{
    return status && (!strcmp(status, "TERMINATED") ||
                      !strcmp(status, "CANCELLED") || !strcmp(status, "ERROR"));
}

/* Poll session.show until the session reaches a final state (or
 * timeout_ms passes). *out is the last show reply: free it with
 * skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, out). */
static inline int e2e_wait_final(e2e_cluster *c, skv_client *cl,
                                 const char *sid, int timeout_ms,
                                 skv_proto_session_show_reply *out)
{
    skv_error e = SKV_ERROR_INIT;
    memset(out, 0, sizeof(*out));
    for (int64_t end = e2e_now_ms() + timeout_ms;;) {
        int rc = skv_client_show(cl, out, sid, &e);
        if (rc)
            return e2e_fail(c, "show %s: %s", sid, e.message);
        if (e2e_final(out->session.status))
            return 0;
        if (e2e_now_ms() >= end)
            return e2e_fail(c, "session %s still %s after the timeout", sid,
                            out->session.status);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, out);
        e2e_sleep_ms(50);
    }
}

/* Wait until the session is RUNNING. */
static inline int e2e_wait_running(e2e_cluster *c, skv_client *cl,
                                   const char *sid, int timeout_ms)
{
    skv_error e = SKV_ERROR_INIT;
    for (int64_t end = e2e_now_ms() + timeout_ms; e2e_now_ms() < end;) {
        skv_proto_session_show_reply r = {0};
        if (skv_client_show(cl, &r, sid, &e))
            return e2e_fail(c, "show %s: %s", sid, e.message);
        bool running = r.session.status && !strcmp(r.session.status, "RUNNING");
        bool final = e2e_final(r.session.status);
        char st[32];
        snprintf(st, sizeof(st), "%s", r.session.status ? r.session.status : "?");
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (running)
            return 0;
        if (final)
            return e2e_fail(c, "session %s ended (%s) before running", sid, st);
        e2e_sleep_ms(20);
    }
    return e2e_fail(c, "session %s did not start%s", sid, "");
}

/* All of one kernel's stdout (kernel_id NULL: the main one) into buf. */
static inline int e2e_logs(skv_client *cl, const char *sid,
                           const char *kernel_id, char *buf, size_t cap,
                           skv_error *err)
{
    size_t len = 0;
    uint64_t off = 0;
    for (int round = 0; round < 1000; round++) {
        skv_proto_logs_request q = {(char *)sid, (char *)kernel_id, off, 0,
                                    "stdout"};
        skv_proto_logs_reply r = {0};
        int rc = skv_client_logs(cl, &r, &q, err);
        /* SKV_ESTATE: the kernel's agent is not connected, e.g. still
         * reconnecting to a restarted manager; it comes back. */
        for (int i = 0; rc == SKV_ESTATE && i < 150; i++) {
            e2e_sleep_ms(100);
            rc = skv_client_logs(cl, &r, &q, err);
        }
        if (rc)
            return rc;
        size_t n = r.data_len < cap - 1 - len ? r.data_len : cap - 1 - len;
        if (n)
            memcpy(buf + len, r.data, n);   /* data is NULL when empty */
        len += n;
        bool done = r.eof || r.data_len == 0 || r.next_offset == off;
        off = r.next_offset;
        skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &r);
        if (done)
            break;
    }
    buf[len] = '\0';
    return 0;
}

/* Why an end-to-end suite must skip (root, busybox, built daemons, a
 * scratch directory with the image), or NULL with c ready (e2e_init). */
/* A network namespace of the test's own (PREFIX and the pid: suites in
 * parallel never share one) with its loopback up; 0 or -1. */
static inline int e2e_netns_add(char *name, size_t cap, const char *prefix)
{
    snprintf(name, cap, "%s%ld", prefix, (long)getpid() % 100000);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "ip netns add %s && ip -n %s link set lo up",
             name, name);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void e2e_netns_del(const char *name)
{
    if (!name[0])
        return;   /* skipped before it was made */
    char cmd[64];
    snprintf(cmd, sizeof cmd, "ip netns del %s 2>/dev/null", name);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove netns %s\n", name);
}

static inline const char *e2e_prepare(e2e_cluster *c, const char *build_dir)
{
    char bin[PATH_MAX];
    if (geteuid() != 0)
        return "needs root (the agents run containers)";
    if (access("/bin/busybox", X_OK) != 0)
        return "needs /bin/busybox (Debian package busybox-static)";
    if (e2e_find_bin(bin, sizeof(bin), build_dir) != 0)
        return "needs build/bin/sokovan-manager and sokovan-agent (make progs)";
    if (e2e_init(c, bin) != 0) {
        fprintf(stderr, "e2e setup: %s\n", c->why);
        return "could not prepare the scratch directory and image";
    }
    return NULL;
}

#endif
