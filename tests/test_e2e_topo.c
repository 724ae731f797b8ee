/* Topology-aware devices through the real daemons: two agents on the
 * DGX-2 hwloc XML (../shared/data/topologies/nvidia-dgx2.xml: 16 V100s
 * behind PCIe switches in pairs, 2 NUMA nodes with 2 PUs each) with mock
 * GPUs at the XML's PCI addresses. `sokovan run --gpus N` sessions land
 * where the node mapper would put them: a 2-GPU kernel behind one PCIe
 * switch, an 8-GPU kernel on one NUMA node, even when earlier sessions
 * make the device order cross them; the container's cores and memory
 * nodes follow the GPUs.
 *
 * What is checked about cores, honestly: this host has fewer CPUs and
 * NUMA nodes than the XML. The agent places cores and memory on the XML's
 * machine (SOKOVAN_TOPOLOGY_CPUSET/_MEMS in the container: asserted to be
 * on the GPU pair's NUMA node of the XML) and gives the cgroup the host
 * CPUs/nodes of the same ranks (Cpus_allowed_list / Mems_allowed_list as
 * the container's kernel reports them: asserted to be exactly that map).
 * Needs root, /bin/busybox, the daemons and CLI, and the XML (else SKIP).
 * SPDX-License-Identifier: Apache-2.0 */
#include <sched.h>

#include "skv_test.h"
#include "e2e_cluster.h"
#include "topo_layout.h"

#define DGX2 "topologies/nvidia-dgx2.xml"

static e2e_cluster g;
static const char *g_skip;
static char g_cli[PATH_MAX + 16];
static char g_xml[PATH_MAX];

static void setup(void)
{
    g.root[0] = '\0';
    skv_test_data_path(g_xml, sizeof(g_xml), DGX2);
    g_skip = access(g_xml, R_OK) != 0
                 ? "needs ../shared/data/topologies/nvidia-dgx2.xml"
                 : e2e_prepare(&g, skv_test_build_dir());
    if (!g_skip && (snprintf(g_cli, sizeof(g_cli), "%s/sokovan", g.bin) < 0 ||
                    access(g_cli, X_OK) != 0))
        g_skip = "needs build/bin/sokovan (make progs)";
}

static void teardown(void)
{
    e2e_teardown_root(g.root);
    g.root[0] = '\0';
}

#define E2E_OK(expr) ck_assert_msg((expr) == 0, "%s: %s", #expr, g.why)

/* `sokovan --endpoint <cluster> run ...` as the admin; the session id it
 * prints into sid. */
static void cli_run(const char *const *args, char *sid)
{
    char ak[SKV_AUTH_ACCESS_KEY_MAX + 32], sk[SKV_AUTH_SECRET_KEY_MAX + 32];
    snprintf(ak, sizeof(ak), "SOKOVAN_ACCESS_KEY=%s", g.admin_ak);
    snprintf(sk, sizeof(sk), "SOKOVAN_SECRET_KEY=%s", g.admin_sk);
    char *envp[] = {ak, sk, "HOME=/nonexistent", "PATH=/usr/bin:/bin", NULL};
    char *argv[40] = {g_cli, "--endpoint", g.endpoint, "run"};
    int n = 4;
    for (int i = 0; args[i] && n < 39; i++)
        argv[n++] = (char *)args[i];
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execve(g_cli, argv, envp);
        _exit(127);
    }
    close(fd[1]);
    char out[512];
    ssize_t len = 0, r;
    while (len < (ssize_t)sizeof(out) - 1 &&
           (r = read(fd[0], out + len, sizeof(out) - 1 - (size_t)len)) > 0)
        len += r;
    out[len] = '\0';
    close(fd[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sokovan run: %s",
                  out);
    ck_assert_int_eq(sscanf(out, "%63s", sid), 1);
}

#define SCRIPT "env; cat /proc/self/status /proc/self/numa_maps; " \
               "echo END-OF-STATUS; sleep 600"
/* Run `--gpus gpus` on agent (designated), printing its environment and
 * /proc/self/status, then staying; *log receives that output. */
static void run_on(skv_client *cl, const char *agent, const char *gpus,
                   const char *cpu, const char *policy, char *log, size_t cap)
{
    char cons[64], sid[E2E_ID_MAX];
    snprintf(cons, sizeof cons, "agent=%s", agent);
    const char *args[] = {"--gpus", gpus, "--cpu", cpu, "--mem", "64m",
                          "--constraint", cons, "--numa-policy",
                          policy ? policy : "prefer-single-node", "busybox",
                          "--", "sh", "-c", SCRIPT, NULL};
    cli_run(args, sid);
    E2E_OK(e2e_wait_running(&g, cl, sid, 60000));
    skv_error e = SKV_ERROR_INIT;
    for (int64_t end = e2e_now_ms() + 30000; e2e_now_ms() < end;) {
        SKV_CK_OK(e2e_logs(cl, sid, NULL, log, cap, &e), &e);
        if (strstr(log, "END-OF-STATUS"))
            return;
        e2e_sleep_ms(50);
    }
    ck_abort_msg("session %s printed no status: %s", sid, log);
}

/* The value of "KEY=" or "Key:\t" at a line start in text, into out. */
static void field(const char *text, const char *key, char *out, size_t cap)
{
    size_t kl = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1
                                                           : NULL)
        if (strncmp(p, key, kl) == 0) {
            p += kl;
            while (*p == '\t' || *p == ' ')
                p++;
            size_t n = strcspn(p, "\n");
            snprintf(out, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
            return;
        }
    ck_abort_msg("no %s in: %s", key, text);
}

/* The layout positions of the GPUs in CUDA_VISIBLE_DEVICES (UUIDs of the
 * XML's GPUs, as the mock plugin sets them). */
static size_t gpus_of(const skv_topo *t, const topo_layout *l,
                      const char *log, size_t *dev)
{
    char list[2048];
    field(log, "CUDA_VISIBLE_DEVICES=", list, sizeof list);
    size_t n = 0;
    for (char *save = NULL, *u = strtok_r(list, ",", &save); u;
         u = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < l->n && strcmp(skv_topo_accel_at(t, l->accel[i])->uuid, u))
            i++;
        ck_assert_msg(i < l->n, "GPU %s is not in the XML", u);
        dev[n++] = i;
    }
    return n;
}

/* The host lists standing for the XML's (same ranks, modulo the host's
 * counts), computed here independently of the agent. */
static void host_map(const skv_topo *t, const char *xml_list, bool nodes,
                     char *out, size_t cap)
{
    int *ids = NULL, host[1024];
    size_t n = 0, nh = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_topo_cpulist_parse(&ids, &n, xml_list, &e), &e);
    if (nodes) {
        char buf[256] = "0";
        FILE *f = fopen("/sys/devices/system/node/online", "r");
        if (f && fgets(buf, sizeof buf, f))
            buf[strcspn(buf, "\n")] = '\0';
        if (f)
            fclose(f);
        int *hn = NULL;
        SKV_CK_OK(skv_topo_cpulist_parse(&hn, &nh, buf, &e), &e);
        memcpy(host, hn, nh * sizeof(int));
        skv_free(hn);
    } else {
        cpu_set_t set;
        ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
        for (int c = 0; c < CPU_SETSIZE && nh < 1024; c++)
            if (CPU_ISSET(c, &set))
                host[nh++] = c;
    }
    for (size_t i = 0; i < n; i++) {
        size_t r = 0, cnt = nodes ? skv_topo_numa_count(t)
                                  : skv_topo_pu_count(t);
        while (r < cnt && (nodes ? skv_topo_numa_at(t, r)->id
                                 : skv_topo_pu_at(t, r)->os_index) != ids[i])
            r++;
        ck_assert_uint_lt(r, cnt);
        ids[i] = host[r % nh];
    }
    char *s = NULL;
    SKV_CK_OK(skv_topo_cpulist_format(&s, ids, n, &e), &e);
    snprintf(out, cap, "%s", s);
    skv_free(s);
    skv_free(ids);
}

static int worst_link(const topo_layout *l, const size_t *d, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (topo_layout_link(l, d[i], d[j]) > w)
                w = topo_layout_link(l, d[i], d[j]);
    return w;
}

/* Every XML id in list is on NUMA node `node` (PUs, or nodes). */
static void on_node(const skv_topo *t, const char *list, bool nodes, int node)
{
    int *ids = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_topo_cpulist_parse(&ids, &n, list, &e), &e);
    ck_assert_uint_gt(n, 0);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg((nodes ? ids[i] : skv_topo_pu_find(t, ids[i])->numa_node)
                          == node, "'%s' is not on node %d", list, node);
    skv_free(ids);
}

START_TEST(test_e2e_topo_dgx2)
{
    if (g_skip) {
        fprintf(stderr, "SKIP e2e_topo: %s\n", g_skip);
        return;
    }
    skv_topo *t = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_topo_load_xml(&t, g_xml, &e), &e);
    static topo_layout l;
    topo_layout_fill(&l, t);
    ck_assert_uint_eq(l.n, 16);
    E2E_OK(e2e_start_manager(&g, "a1,a2"));
    skv_client *cl = NULL;
    E2E_OK(e2e_connect(&g, &cl, NULL, NULL));
    for (int i = 0; i < 2; i++) {
        snprintf(g.agent_xml[i], sizeof g.agent_xml[i], "%s", g_xml);
        snprintf(g.agent_cpus[i], sizeof g.agent_cpus[i], "%s",
                 skv_topo_cpuset(t));
        snprintf(g.agent_mem[i], sizeof g.agent_mem[i], "0");
        E2E_OK(e2e_start_agent(&g, i));
    }
    E2E_OK(e2e_wait_agents(&g, cl, 2));
    static char log[65536];
    size_t d[16];
    /* a1: 8 GPUs, then 1: the free GPUs behind a switch are split ... */
    run_on(cl, "a1", "8", "1", NULL, log, sizeof log);
    ck_assert_uint_eq(gpus_of(t, &l, log, d), 8);
    run_on(cl, "a1", "1", "1", NULL, log, sizeof log);
    ck_assert_uint_eq(gpus_of(t, &l, log, d), 1);
    /* ... and `sokovan run --gpus 2` takes a whole pair behind one switch;
     * its cores and memory node are on that pair's NUMA node. */
    run_on(cl, "a1", "2", "1", "prefer-single-node", log, sizeof log);
    ck_assert_uint_eq(gpus_of(t, &l, log, d), 2);
    ck_assert_int_eq(worst_link(&l, d, 2), SKV_TOPO_LINK_PIX);
    int node = l.numa[d[0]];
    char xcpus[256], xmems[256], hcpus[256], hmems[256], want[256];
    field(log, "SOKOVAN_TOPOLOGY_CPUSET=", xcpus, sizeof xcpus);
    field(log, "SOKOVAN_TOPOLOGY_MEMS=", xmems, sizeof xmems);
    on_node(t, xcpus, false, node);
    on_node(t, xmems, true, node);
    field(log, "Cpus_allowed_list:", hcpus, sizeof hcpus);
    field(log, "Mems_allowed_list:", hmems, sizeof hmems);
    host_map(t, xcpus, false, want, sizeof want);
    ck_assert_str_eq(hcpus, want);
    host_map(t, xmems, true, want, sizeof want);
    ck_assert_str_eq(hmems, want);
    /* prefer-single-node: memory bound to those nodes (libnuma, before
     * exec; /proc/PID/numa_maps shows the task's policy). */
    char pol[64];
    snprintf(pol, sizeof pol, " bind:%s ", want);
    ck_assert_msg(strstr(log, pol), "no '%s' in numa_maps: %s", pol, log);
    /* a2: after 1 GPU, an 8-GPU kernel stays on one NUMA node. */
    run_on(cl, "a2", "1", "1", NULL, log, sizeof log);
    run_on(cl, "a2", "8", "1", NULL, log, sizeof log);
    ck_assert_uint_eq(gpus_of(t, &l, log, d), 8);
    for (size_t i = 1; i < 8; i++)
        ck_assert_int_eq(l.numa[d[i]], l.numa[d[0]]);
    field(log, "SOKOVAN_TOPOLOGY_CPUSET=", xcpus, sizeof xcpus);
    on_node(t, xcpus, false, l.numa[d[0]]);
    /* --numa-policy interleaved: cores and memory over both nodes, the
     * memory policy MPOL_INTERLEAVE over the session's (host) nodes. */
    run_on(cl, "a2", "1", "2", "interleaved", log, sizeof log);
    field(log, "SOKOVAN_TOPOLOGY_CPUSET=", xcpus, sizeof xcpus);
    field(log, "SOKOVAN_TOPOLOGY_MEMS=", xmems, sizeof xmems);
    ck_assert_str_eq(xmems, "0-1");
    int *ids = NULL;
    size_t nids = 0;
    SKV_CK_OK(skv_topo_cpulist_parse(&ids, &nids, xcpus, &e), &e);
    ck_assert_uint_eq(nids, 2);
    ck_assert_int_ne(skv_topo_pu_find(t, ids[0])->numa_node,
                     skv_topo_pu_find(t, ids[1])->numa_node);
    skv_free(ids);
    host_map(t, xmems, true, want, sizeof want);
    snprintf(pol, sizeof pol, " interleave:%s ", want);
    ck_assert_msg(strstr(log, pol), "no '%s' in numa_maps: %s", pol, log);
    skv_client_free(cl);
    skv_topo_free(t);
}
END_TEST

Suite *skv_test_suite_e2e_topo(void);
Suite *skv_test_suite_e2e_topo(void)
{
    Suite *s = suite_create("e2e_topo");
    TCase *tc = tcase_create("topo_dgx2");
    tcase_set_timeout(tc, 300);
    tcase_add_unchecked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_e2e_topo_dgx2);
    suite_add_tcase(s, tc);
    return s;
}
