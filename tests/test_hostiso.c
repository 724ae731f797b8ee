/* Host protection through the real daemons (issue 13): kernels on a
 * cluster network reach no service of the agent's host but those of the
 * agent's host_allow, and session containers together stay within the
 * sessions' budget (sessions_pids_max) however hard they fork, so the
 * host and the daemons keep working.
 *
 * Same set-up as the e2e suite (tests/e2e_cluster.h): needs root,
 * /bin/busybox and the daemons in <build>/bin; otherwise the tests say why
 * they are skipped. The unchecked teardown kills what a failed test left:
 * daemons, containers (fork bombs included), the host server, the network
 * namespace, and restores the sessions' parent cgroup's pids.max.
 * SPDX-License-Identifier: Apache-2.0 */
#include <nftables/libnftables.h>

#include "skv_test.h"
#include "e2e_cluster.h"
#include "sokovan/agent.h"

static e2e_cluster g;
static const char *g_skip;
/* Named by the setup, in the runner process, so that its teardown knows
 * them too. */
static char g_ns[32];          /* network namespace of the guard test */
static char g_pids_dir[64];    /* the sessions' parent in the pids tree */
static char g_pids_max[32];    /* its pids.max before the test, or "" */
static pid_t g_server = -1;    /* the guard test's host server */

static bool pids_parent(void);

static void hi_setup(void)
{
    g_skip = NULL;
    g.root[0] = g_pids_max[0] = '\0';
    snprintf(g_ns, sizeof(g_ns), "skvG%ld", (long)getpid() % 100000);
    pids_parent();
    g_skip = e2e_prepare(&g, skv_test_build_dir());
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0)
        fprintf(stderr, "hostiso: cannot write %s\n", path);
    if (f)
        fclose(f);
}

/* The host server recorded under root/pids (hostsrv.<pid>), if it still
 * is one (a pid may have been reused). */
static void kill_host_server(const char *root)
{
    char dir[PATH_MAX + 8], p[64], cmd[128];
    snprintf(dir, sizeof(dir), "%s/pids", root);
    DIR *d = root[0] ? opendir(dir) : NULL;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "hostsrv.", 8) != 0)
            continue;
        long pid = strtol(de->d_name + 8, NULL, 10);
        snprintf(p, sizeof(p), "/proc/%ld/cmdline", pid);
        FILE *f = fopen(p, "r");
        size_t n = f ? fread(cmd, 1, sizeof(cmd) - 1, f) : 0;
        if (f)
            fclose(f);
        cmd[n] = '\0';
        if (pid > 1 && !strcmp(cmd, "/bin/busybox")) {
            kill((pid_t)pid, SIGKILL);
            waitpid((pid_t)pid, NULL, 0);
        }
    }
    if (d)
        closedir(d);
}

static void hi_teardown(void)
{
    kill_host_server(g.root);
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "ip netns list 2>/dev/null | grep -qw %s && "
             "ip netns del %s", g_ns, g_ns);
    if (system(cmd) == 0)
        fprintf(stderr, "hostiso: removed netns %s\n", g_ns);
    if (g_pids_max[0]) { /* the host's budget as it was */
        char p[96];
        snprintf(p, sizeof(p), "%s/pids.max", g_pids_dir);
        write_file(p, g_pids_max);
        g_pids_max[0] = '\0';
    }
}

#define HI_REQUIRE()                                                           \
    do {                                                                       \
        if (g_skip) {                                                          \
            fprintf(stderr, "%s: skipped: %s\n", __func__, g_skip);            \
            return;                                                            \
        }                                                                      \
    } while (0)

#define HI_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* Agent a1 with extra flags (NULL-terminated), in namespace ns ("" for
 * the test's own). */
static void start_agent(const char *ns, const char *const *extra)
{
    char exe[PATH_MAX + 32], mgr[PATH_MAX + 16], state[PATH_MAX + 32];
    char run[PATH_MAX + 48];
    snprintf(exe, sizeof(exe), "%s/sokovan-agent", g.bin);
    snprintf(mgr, sizeof(mgr), "unix:%s", g.sock);
    snprintf(state, sizeof(state), "%s/agent-a1", g.root);
    e2e_run_dir(&g, "a1", run, sizeof(run));
    char *argv[40] = {exe, "--agent-id", "a1", "--manager", mgr,
                      "--data-dir", g.data, "--state-dir", state,
                      "--run-dir", run, "--image-dir", g.images, "--memory",
                      "4g", "--poll-interval-ms", "10", "--stats-interval-ms",
                      "1000", "--reconnect-max-ms", "500"};
    size_t n = 21;
    for (size_t i = 0; extra && extra[i] && n < 39; i++)
        argv[n++] = (char *)extra[i];
    argv[n] = NULL;
    g.agent[0] = e2e_spawn_ns(&g, ns, "a1", argv);
    ck_assert_int_gt(g.agent[0], 0);
    g.nagents = 1;
}

static void submit_ok(skv_client *cl, char *sid, const e2e_job *j)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(e2e_submit(cl, sid, j, &e), &e);
    ck_assert_uint_gt(strlen(sid), 0);
}

/* The session ends TERMINATED with exit 0; its main kernel's output. */
static void run_ok(skv_client *cl, const e2e_job *j, char *out, size_t cap)
{
    char sid[E2E_ID_MAX];
    skv_proto_session_show_reply r;
    skv_error e = SKV_ERROR_INIT;
    submit_ok(cl, sid, j);
    HI_OK(e2e_wait_final(&g, cl, sid, 90000, &r));
    ck_assert_msg(!strcmp(r.session.status, "TERMINATED") &&
                      r.session.exit_code == 0, "%s: %s (%s) exit %d", sid,
                  r.session.status, r.session.status_reason ?
                  r.session.status_reason : "", r.session.exit_code);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    SKV_CK_OK(e2e_logs(cl, sid, NULL, out, cap, &e), &e);
}

/* ---- host guard -------------------------------------------------------- */

/* The agent's host is a namespace with a second address (192.168.78.1)
 * and a TCP server on 0.0.0.0:7520 answering "host-says-hi". */
static void guard_host_up(void)
{
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "set -e; ip netns add %s; ip -n %s link set "
             "lo up; ip -n %s link add hga type veth peer name hgb; "
             "ip -n %s addr add 192.168.78.1/24 dev hga; ip -n %s link set "
             "hga up; ip -n %s link set hgb up", g_ns, g_ns, g_ns, g_ns, g_ns,
             g_ns);
    ck_assert_msg(system(cmd) == 0, "cannot set up namespace %s", g_ns);
    char *const argv[] = {"/bin/busybox", "nc", "-ll", "-p", "7520", "-e",
                          "/bin/busybox", "echo", "host-says-hi", NULL};
    g_server = e2e_spawn_ns(&g, g_ns, "hostsrv", argv);
    ck_assert_int_gt(g_server, 0);
}

/* main1 asks sub1 (its own session) and the host's two addresses (the
 * other one and its gateway) and prints what each said. */
static const e2e_job guard_job = {
    "guard",
    "if test $SOKOVAN_CLUSTER_ROLE = main; then "
    "for i in $(seq 1 30); do p=$(busybox nc sub1 7413 </dev/null) && "
    "test -n \"$p\" && break; sleep 1; done; echo \"peer:$p\"; "
    "h=$(busybox nc -w 3 192.168.78.1 7520 </dev/null); "
    "echo \"host:${h:-none}\"; "
    "gw=$(busybox ip route | busybox awk '/default/ {print $3}'); "
    "h=$(busybox nc -w 3 $gw 7520 </dev/null); echo \"gw:${h:-none}\"; "
    "else echo sub-hi | busybox nc -l -p 7413; fi",
    "cpu=0.2,mem=32m", 2, false, NULL, NULL, 0};

/* No table of the library left in the namespace (polled: the network goes
 * when the agent destroys the session's last kernel). */
static int ns_tables(void)
{
    char nsf[64];
    snprintf(nsf, sizeof(nsf), "/run/netns/%s", g_ns);
    int fd = open(nsf, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) < 0)
        return 2;
    struct nft_ctx *c = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!c || nft_ctx_buffer_output(c) || nft_ctx_buffer_error(c) ||
        nft_run_cmd_from_buffer(c, "list tables"))
        return 3;
    bool ours = strstr(nft_ctx_get_output_buffer(c), "sokovan") != NULL;
    nft_ctx_free(c);
    return ours ? 1 : 0;
}

static bool ns_nft_clean(void)
{
    for (int i = 0; i < 150; i++) {
        pid_t pid = fork();
        ck_assert(pid >= 0);
        if (pid == 0)
            _exit(ns_tables());
        int st = 0;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) <= 1, "listing the "
                      "tables of %s failed", g_ns);
        if (WEXITSTATUS(st) == 0)
            return true;
        e2e_sleep_ms(100);
    }
    return false;
}

START_TEST(test_hostiso_guard)
{
    HI_REQUIRE();
    if (access("/usr/sbin/ip", X_OK) != 0) {
        fprintf(stderr, "%s: skipped: needs /usr/sbin/ip\n", __func__);
        return;
    }
    skv_client *cl = NULL;
    char out[1024];
    guard_host_up();
    HI_OK(e2e_start_manager(&g, "a1"));
    start_agent(g_ns, NULL);
    HI_OK(e2e_connect(&g, &cl, NULL, NULL));
    HI_OK(e2e_wait_agents(&g, cl, 1));
    /* Default: the kernels reach each other, not the host. */
    run_ok(cl, &guard_job, out, sizeof(out));
    ck_assert_msg(!strcmp(out, "peer:sub-hi\nhost:none\ngw:none\n"),
                  "without host_allow: '%s'", out);
    ck_assert_msg(ns_nft_clean(), "a sokovan table is left in %s", g_ns);
    /* The same agent allowed the port reaches it at both addresses. */
    e2e_kill(&g, &g.agent[0], SIGTERM, "a1");
    const char *const allow[] = {"--host-allow", "dns,tcp:7520", NULL};
    start_agent(g_ns, allow);
    HI_OK(e2e_wait_agents(&g, cl, 1));
    run_ok(cl, &guard_job, out, sizeof(out));
    ck_assert_msg(!strcmp(out, "peer:sub-hi\nhost:host-says-hi\n"
                          "gw:host-says-hi\n"), "with host_allow: '%s'", out);
    ck_assert_msg(ns_nft_clean(), "a sokovan table is left in %s", g_ns);
    skv_client_free(cl);
    e2e_kill(&g, &g_server, SIGKILL, "hostsrv");
    e2e_stop(&g);
    snprintf(out, sizeof(out), "ip netns del %s", g_ns);
    ck_assert_int_eq(system(out), 0);
}
END_TEST

/* A bad allow-list stops the agent at start with the reason. */
START_TEST(test_hostiso_bad_allow)
{
    HI_REQUIRE();
    HI_OK(e2e_start_manager(&g, "a1"));
    const char *const bad[] = {"--host-allow", "tcp:70000", NULL};
    start_agent("", bad);
    int st = 0;
    pid_t pid = g.agent[0];
    for (int i = 0; i < 600 && waitpid(pid, &st, WNOHANG) == 0; i++)
        e2e_sleep_ms(50);
    ck_assert_msg(!e2e_alive(pid), "the agent runs with host_allow "
                  "tcp:70000");
    g.agent[0] = -1;
    char tail[400];
    e2e_log_tail(&g, "a1", tail, sizeof(tail));
    ck_assert_msg(strstr(tail, "tcp:70000"), "log: %s", tail);
    e2e_stop(&g);
}
END_TEST

/* ---- fork bombs ------------------------------------------------------- */

#define BUDGET 200

static uint64_t read_u64(const char *dir, const char *file, const char *key)
{
    char p[128], buf[256] = "";
    snprintf(p, sizeof(p), "%s/%s", dir, file);
    FILE *f = fopen(p, "r");
    ck_assert_msg(f != NULL, "cannot read %s", p);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *v = key ? strstr(buf, key) : buf;
    ck_assert_msg(v != NULL, "%s: no %s in '%s'", p, key, buf);
    return strtoull(v + (key ? strlen(key) : 0), NULL, 10);
}

/* Forks refused for the pids limit in dir and its children: depending on
 * the kernel, counted at the cgroup whose limit was hit or at the one that
 * forked (v1 since 6.9), hierarchically on v2. */
static uint64_t refusals(const char *dir)
{
    uint64_t n = read_u64(dir, "pids.events", "max ");
    DIR *d = opendir(dir);
    struct dirent *de;
    char sub[PATH_MAX];
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_type != DT_DIR || de->d_name[0] == '.')
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
        n += read_u64(sub, "pids.events", "max ");
    }
    if (d)
        closedir(d);
    return n;
}

/* Sub-directories (cgroups) of dir. */
static int cgroups_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += de->d_type == DT_DIR && de->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static int64_t heartbeat_of(skv_client *cl, char *status, size_t cap)
{
    skv_proto_agent_list req = {0};
    skv_proto_agent_list_reply rep = {0};
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_client_call(cl, SKV_PROTO_AGENT_LIST, &req, &rep, &e), &e);
    ck_assert_uint_eq(rep.n_agents, 1);
    int64_t hb = rep.agents[0].last_heartbeat_ms;
    snprintf(status, cap, "%s", rep.agents[0].status ? rep.agents[0].status
                                                     : "?");
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    return hb;
}

/* Wait until the session runs (true) or has ended (false). */
static bool started(skv_client *cl, const char *sid)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 600; i++) {
        skv_proto_session_show_reply r = {0};
        SKV_CK_OK(skv_client_show(cl, &r, sid, &e), &e);
        bool run = r.session.status && !strcmp(r.session.status, "RUNNING");
        bool end = e2e_final(r.session.status);
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (run || end)
            return run;
        e2e_sleep_ms(100);
    }
    ck_abort_msg("session %s neither ran nor ended in 60 s", sid);
    return false;
}

/* The sessions' parent in the pids hierarchy (v1, or the v2 tree). */
static bool pids_parent(void)
{
    g_pids_max[0] = '\0';
    if (access("/sys/fs/cgroup/pids/pids.current", F_OK) == 0 ||
        access("/sys/fs/cgroup/pids", F_OK) == 0)
        snprintf(g_pids_dir, sizeof(g_pids_dir), "/sys/fs/cgroup/pids/sokovan");
    else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
        snprintf(g_pids_dir, sizeof(g_pids_dir), "/sys/fs/cgroup/sokovan");
    else
        return false;
    char p[96];
    snprintf(p, sizeof(p), "%s/pids.max", g_pids_dir);
    FILE *f = fopen(p, "r");
    if (!f) /* made by the agent; the default is restored then */
        snprintf(g_pids_max, sizeof(g_pids_max), "max");
    else if (!fgets(g_pids_max, sizeof(g_pids_max), f))
        snprintf(g_pids_max, sizeof(g_pids_max), "max");
    if (f)
        fclose(f);
    return true;
}

START_TEST(test_hostiso_fork_bombs)
{
    HI_REQUIRE();
    if (!g_pids_max[0]) {
        fprintf(stderr, "%s: skipped: no pids controller\n", __func__);
        return;
    }
    skv_client *cl = NULL;
    skv_error e = SKV_ERROR_INIT;
    char budget[16], st[32], out[256];
    int cgroups_before = cgroups_in(g_pids_dir);
    HI_OK(e2e_start_manager(&g, "a1"));
    snprintf(budget, sizeof(budget), "%d", BUDGET);
    const char *const extra[] = {"--sessions-pids-max", budget, NULL};
    start_agent("", extra);
    HI_OK(e2e_connect(&g, &cl, NULL, NULL));
    HI_OK(e2e_wait_agents(&g, cl, 1));
    ck_assert_uint_eq(read_u64(g_pids_dir, "pids.max", NULL), BUDGET);
    uint64_t refused0 = refusals(g_pids_dir);
    /* Three classic fork bombs, each far below its own limit of 4096
     * tasks, each on a fifth of a CPU. */
    e2e_job bomb = {"bomb", "f(){ f|f& }; f; exec sleep 600",
                    "cpu=0.2,mem=64m", 1, false, NULL, NULL, 0};
    char sid[3][E2E_ID_MAX];
    for (int i = 0; i < 3; i++)
        submit_ok(cl, sid[i], &bomb);
    /* A bomb whose shell finds the budget already spent cannot fork its
     * first pipeline and ends at once: that one was contained too. */
    bool running[3];
    int nrunning = 0;
    for (int i = 0; i < 3; i++)
        nrunning += running[i] = started(cl, sid[i]);
    ck_assert_int_ge(nrunning, 1);
    int64_t hb0 = heartbeat_of(cl, st, sizeof(st));
    uint64_t most = 0;
    /* Six seconds of bombing: the total never passes the budget, the
     * kernel refuses forks at the sessions' parent, and the host (this
     * process) still forks. */
    for (int i = 0; i < 30; i++) {
        uint64_t now = read_u64(g_pids_dir, "pids.current", NULL);
        most = now > most ? now : most;
        /* Forks are refused at the budget, but the agent moves each
         * session's first process in through cgroup.procs, which the pids
         * controller never refuses: a session starting once the bombs
         * have spent the budget adds its one process over it (CI saw
         * 201). Anything beyond one per session is a fork let through. */
        ck_assert_msg(now <= BUDGET + 3, "%llu tasks in the sessions",
                      (unsigned long long)now);
        ck_assert_int_eq(system("exit 0"), 0);
        e2e_sleep_ms(200);
    }
    ck_assert_msg(refusals(g_pids_dir) > refused0, "no fork was refused "
                  "(most %llu)", (unsigned long long)most);
    ck_assert_msg(most >= BUDGET * 9 / 10, "the bombs reached %llu tasks "
                  "only", (unsigned long long)most);
    /* The agent kept its heartbeats. */
    int64_t hb1 = heartbeat_of(cl, st, sizeof(st));
    ck_assert_msg(hb1 > hb0 && !strcmp(st, "alive"), "agent %s, heartbeat "
                  "%lld -> %lld", st, (long long)hb0, (long long)hb1);
    for (int i = 0; i < 3; i++) {
        skv_proto_session_ref ref = {0};
        if (running[i])
            SKV_CK_OK(skv_client_terminate(cl, &ref, sid[i], "bomb", 0, &e),
                      &e);
        skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    }
    for (int i = 0; i < 3; i++) {
        skv_proto_session_show_reply r;
        HI_OK(e2e_wait_final(&g, cl, sid[i], 60000, &r));
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    }
    /* A new session runs to completion. */
    e2e_job small = {"after", "echo alive", "cpu=0.2,mem=16m", 1, false,
                     NULL, NULL, 0};
    run_ok(cl, &small, out, sizeof(out));
    ck_assert_str_eq(out, "alive\n");
    /* Nothing of the bombs is left: no task, no cgroup (the containers
     * go when the manager confirms their exits). */
    int left = -1;
    uint64_t tasks = 1;
    for (int i = 0; i < 150; i++) {
        tasks = read_u64(g_pids_dir, "pids.current", NULL);
        left = cgroups_in(g_pids_dir) - cgroups_before;
        if (tasks == 0 && left == 0)
            break;
        e2e_sleep_ms(100);
    }
    ck_assert_msg(tasks == 0 && left == 0, "%llu tasks and %d cgroups left",
                  (unsigned long long)tasks, left);
    skv_client_free(cl);
    e2e_stop(&g);
}
END_TEST

/* ---- the agent's budget, library level ------------------------------- */

static int drop_frame(const void *frame, size_t len, void *payload)
{
    (void)frame;
    (void)len;
    (void)payload;
    return 0;
}

/* skv_agent_open's result (the agent freed again). */
static int open_rc(const skv_agent_options *o, skv_error *e)
{
    skv_agent *a = NULL;
    int rc = skv_agent_open(&a, o, drop_frame, NULL, 0, e);
    skv_agent_free(a);
    return rc;
}

static uint64_t proc_u64(const char *path, const char *key)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(path, '/') - path),
             path);
    return read_u64(dir, strrchr(path, '/') + 1, key);
}

START_TEST(test_hostiso_agent_budget)
{
    HI_REQUIRE();
    if (!g_pids_max[0]) {
        fprintf(stderr, "%s: skipped: no pids controller\n", __func__);
        return;
    }
    char state[PATH_MAX + 16], xml[PATH_MAX];
    snprintf(state, sizeof(state), "%s/agent-lib", g.root);
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.agent_id = "lib";
    o.access_key = "AKLIBTEST";
    o.secret_key = "SKLIBTEST";
    o.state_dir = state;
    o.plugins = "cpu;mem";
    o.topology_xml = skv_test_data_path(xml, sizeof(xml), "topologies/"
                                        "96em64t-4n4d3ca2co-pci.xml");
    o.create_threads = -1;
    uint64_t pid_max = proc_u64("/proc/sys/kernel/pid_max", NULL);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    /* Bad values are refused before anything is made. */
    struct {
        const char *allow;
        int64_t pids;
        uint64_t mem;
        uint32_t cpu;
        int code;
    } bad[] = {{"udp:0", 0, 0, 0, SKV_EINVAL},
               {NULL, -2, 0, 0, SKV_EINVAL},
               {NULL, (int64_t)pid_max, 0, 0, SKV_ERANGE},
               {NULL, 0, UINT64_MAX / 2, 0, SKV_ERANGE},
               {NULL, 0, 0, (uint32_t)ncpu * 1000, SKV_ERANGE}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        skv_error e = SKV_ERROR_INIT;
        o.host_allow = bad[i].allow;
        o.sessions_pids_max = bad[i].pids;
        o.sessions_memory_reserve = bad[i].mem;
        o.sessions_cpu_reserve = bad[i].cpu;
        ck_assert_msg(open_rc(&o, &e) == bad[i].code, "%zu: %s", i,
                      e.message);
        ck_assert_msg(access(state, F_OK) != 0, "%zu made %s", i, state);
    }
    o.host_allow = "dns";
    o.sessions_memory_reserve = 0;
    o.sessions_cpu_reserve = 0;
    /* The configured total, then the default, then left alone. */
    skv_error e = SKV_ERROR_INIT;
    o.sessions_pids_max = 5000;
    SKV_CK_OK(open_rc(&o, &e), &e);
    ck_assert_uint_eq(read_u64(g_pids_dir, "pids.max", NULL), 5000);
    o.sessions_pids_max = 0;
    SKV_CK_OK(open_rc(&o, &e), &e);
    uint64_t reserve = pid_max / 8 > 1024 ? pid_max / 8 : 1024;
    ck_assert_uint_eq(read_u64(g_pids_dir, "pids.max", NULL),
                      pid_max - reserve);
    /* Memory: the host's less max(512 MiB, 1/16), page-aligned by v1. */
    uint64_t total = proc_u64("/proc/meminfo", "MemTotal:") * 1024;
    uint64_t mreserve = total / 16 > (512ull << 20) ? total / 16
                                                    : 512ull << 20;
    mreserve = mreserve > total / 2 ? total / 2 : mreserve;
    uint64_t mem = access("/sys/fs/cgroup/memory", F_OK) == 0
                       ? proc_u64("/sys/fs/cgroup/memory/sokovan/"
                                  "memory.limit_in_bytes", NULL)
                       : proc_u64("/sys/fs/cgroup/sokovan/memory.max", NULL);
    ck_assert_uint_eq(mem / 4096, (total - mreserve) / 4096);
    o.sessions_pids_max = 5000;
    SKV_CK_OK(open_rc(&o, &e), &e);
    o.sessions_pids_max = -1;
    SKV_CK_OK(open_rc(&o, &e), &e);
    ck_assert_uint_eq(read_u64(g_pids_dir, "pids.max", NULL), 5000);
}
END_TEST

#define ADD_CASE(s, name, test)                                                \
    do {                                                                       \
        TCase *tc_ = tcase_create(name);                                       \
        tcase_set_timeout(tc_, 300);                                           \
        tcase_add_unchecked_fixture(tc_, hi_setup, hi_teardown);               \
        tcase_add_test(tc_, test);                                             \
        suite_add_tcase(s, tc_);                                               \
    } while (0)

Suite *skv_test_suite_hostiso(void);
Suite *skv_test_suite_hostiso(void)
{
    Suite *s = suite_create("hostiso");
    ADD_CASE(s, "guard", test_hostiso_guard);
    ADD_CASE(s, "bad_allow", test_hostiso_bad_allow);
    ADD_CASE(s, "fork_bombs", test_hostiso_fork_bombs);
    ADD_CASE(s, "agent_budget", test_hostiso_agent_budget);
    return s;
}
