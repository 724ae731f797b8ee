/* Topology-aware whole devices in the scheduler: an agent that registered
 * its layout (skv_sched_agent_spec v2) gets multi-GPU kernels on the
 * closest free GPUs on the fewest NUMA nodes, as the node mapper would
 * choose on the machine; an agent without one keeps the device order (the
 * old per-agent map), shown side by side on the DGX-2 topology.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <unistd.h>

#include "sched_util.h"
#include "topo_layout.h"

#define DGX2 "topologies/nvidia-dgx2.xml"

typedef struct fx {
    skv_topo *topo;
    topo_layout l;
    skv_sched *s;
} fx;

static bool load(fx *f)
{
    char path[4096];
    skv_error e = SKV_ERROR_INIT;
    memset(f, 0, sizeof(*f));
    if (access(skv_test_data_path(path, sizeof(path), DGX2), R_OK) != 0) {
        fprintf(stderr, "SKIP sched_topo: %s is absent\n", path);
        return false;
    }
    SKV_CK_OK(skv_topo_load_xml(&f->topo, path, &e), &e);
    topo_layout_fill(&f->l, f->topo);
    ck_assert_uint_eq(f->l.n, 16);
    f->s = mk_sched("fifo", "concentrated");
    return true;
}

static void unload(fx *f)
{
    skv_sched_free(f->s);
    skv_topo_free(f->topo);
}

static int add(fx *f, const char *id, const skv_sched_agent_topology *t,
               unsigned version, skv_error *e)
{
    skv_sched_device_spec dev[16];
    for (int i = 0; i < 16; i++)
        dev[i] = (skv_sched_device_spec){NULL, "cuda.device", "cuda.shares",
                                         0};
    skv_slots *c = sl("cpu=64,mem=512g");
    skv_sched_agent_spec a = SKV_SCHED_AGENT_SPEC_INIT;
    a.version = version;
    a.id = id;
    a.resource_group = "default";
    a.capacity = c;
    a.n_devices = 16;
    a.devices = dev;
    a.topology = t;
    int rc = skv_sched_agent_add(f->s, &a, e);
    skv_slots_free(c);
    return rc;
}

/* Submit one single-kernel session designated to agent, run a pass and
 * return its devices (ascending) in out; returns how many. */
static size_t run(fx *f, const char *id, const char *agent, const char *req,
                  size_t *out)
{
    static int64_t now = 1000;
    skv_error e = SKV_ERROR_INIT;
    skv_slots *r = sl(req);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    const char *des[1] = {agent};
    sp.id = id;
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &k;
    sp.n_designated = 1;
    sp.designated_agents = des;
    SKV_CK_OK(skv_sched_submit(f->s, &sp, now++, &e), &e);
    skv_slots_free(r);
    skv_sched_result *res = NULL;
    SKV_CK_OK(skv_sched_pass(&res, f->s, now++, NULL, &e), &e);
    ck_assert_uint_eq(res->n_placements, 1);
    const skv_sched_kernel_placement *kp = &res->placements[0].kernels[0];
    size_t n = kp->n_devices;
    for (size_t i = 0; i < n; i++)
        out[i] = kp->devices[i].device;
    skv_sched_result_free(res);
    CHECK(f->s);
    return n;
}

static int worst_link(const fx *f, const size_t *d, size_t n)
{
    int w = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (topo_layout_link(&f->l, d[i], d[j]) > w)
                w = topo_layout_link(&f->l, d[i], d[j]);
    return w;
}

static size_t nodes_of(const fx *f, const size_t *d, size_t n)
{
    bool seen[2] = {false, false};
    for (size_t i = 0; i < n; i++)
        seen[f->l.numa[d[i]] == 1] = true;
    return (size_t)seen[0] + seen[1];
}

/* After one 1-GPU kernel, a 2-GPU kernel behind one PCIe switch and an
 * 8-GPU kernel on one NUMA node; the old map crosses both. */
START_TEST(test_sched_topo_dgx2)
{
    fx f;
    if (!load(&f))
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(add(&f, "topo", &f.l.t, SKV_SCHED_AGENT_SPEC_VERSION, &e), &e);
    SKV_CK_OK(add(&f, "flat", NULL, 1, &e), &e);
    size_t d[16], n;
    const char *agents[2] = {"topo", "flat"};
    int pair_link[2], big_nodes[2];
    for (int a = 0; a < 2; a++) {
        char id[32];
        snprintf(id, sizeof id, "one-%s", agents[a]);
        ck_assert_uint_eq(run(&f, id, agents[a], "cuda.device=1", d), 1);
        snprintf(id, sizeof id, "two-%s", agents[a]);
        n = run(&f, id, agents[a], "cuda.device=2", d);
        ck_assert_uint_eq(n, 2);
        pair_link[a] = worst_link(&f, d, n);
        snprintf(id, sizeof id, "eight-%s", agents[a]);
        n = run(&f, id, agents[a], "cuda.device=8", d);
        ck_assert_uint_eq(n, 8);
        big_nodes[a] = (int)nodes_of(&f, d, n);
    }
    ck_assert_int_eq(pair_link[0], SKV_TOPO_LINK_PIX);
    ck_assert_int_eq(big_nodes[0], 1);
    /* The device-order map the manager used before: across a switch and
     * across both NUMA nodes in the same situation. */
    ck_assert_int_gt(pair_link[1], SKV_TOPO_LINK_PIX);
    ck_assert_int_eq(big_nodes[1], 2);
    unload(&f);
}
END_TEST

/* Freed pairs are reused whole: after the pairs are filled and one is
 * freed, a new 2-GPU kernel takes exactly that pair. */
START_TEST(test_sched_topo_refill)
{
    fx f;
    if (!load(&f))
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(add(&f, "topo", &f.l.t, SKV_SCHED_AGENT_SPEC_VERSION, &e), &e);
    size_t d[16], freed[2] = {0, 0};
    char id[32];
    for (int i = 0; i < 8; i++) {
        snprintf(id, sizeof id, "p%d", i);
        ck_assert_uint_eq(run(&f, id, "topo", "cuda.device=2", d), 2);
        ck_assert_int_eq(worst_link(&f, d, 2), SKV_TOPO_LINK_PIX);
        if (i == 5)
            memcpy(freed, d, sizeof freed);
    }
    SKV_CK_OK(skv_sched_mark_finished(f.s, "p5", false, 5000, &e), &e);
    ck_assert_uint_eq(run(&f, "again", "topo", "cuda.device=2", d), 2);
    ck_assert_uint_eq(d[0], freed[0]);
    ck_assert_uint_eq(d[1], freed[1]);
    unload(&f);
}
END_TEST

/* Bad layouts are refused whole (nothing added, nothing leaked). */
START_TEST(test_sched_topo_bad)
{
    fx f;
    if (!load(&f))
        return;
    skv_error e = SKV_ERROR_INIT;
    skv_sched_agent_topology t = f.l.t;
    t.device_numa = NULL;
    ck_assert_int_eq(add(&f, "a", &t, 2, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "device_numa"));
    int32_t numa[16];
    memcpy(numa, f.l.numa, sizeof numa);
    numa[3] = -7;
    t = f.l.t;
    t.device_numa = numa;
    ck_assert_int_eq(add(&f, "a", &t, 2, &e), SKV_EINVAL);
    uint8_t links[256];
    memcpy(links, f.l.links, sizeof links);
    links[1] = 9;
    t = f.l.t;
    t.links = links;
    ck_assert_int_eq(add(&f, "a", &t, 2, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "link"));
    ck_assert_int_eq(add(&f, "a", &f.l.t, 3, &e), SKV_EVERSION);
    ck_assert_int_eq(skv_sched_agent_usage(NULL, NULL, f.s, "a", &e),
                     SKV_ENOENT);
    /* Without links: by NUMA node, still on one node. */
    t = f.l.t;
    t.links = NULL;
    t.nvlink_mbps = NULL;
    SKV_CK_OK(add(&f, "a", &t, 2, &e), &e);
    size_t d[16];
    ck_assert_uint_eq(run(&f, "one", "a", "cuda.device=1", d), 1);
    ck_assert_uint_eq(run(&f, "eight", "a", "cuda.device=8", d), 8);
    ck_assert_uint_eq(nodes_of(&f, d, 8), 1);
    unload(&f);
}
END_TEST

/* ---- choosing the agent by layout --------------------------------------- */

/* Place one undesignated session asking req; its agent into agent, its
 * devices into d (returns how many). */
static size_t run_any(fx *f, const char *id, const char *req, char *agent,
                      size_t cap, size_t *d)
{
    static int64_t now = 100000;
    skv_error e = SKV_ERROR_INIT;
    skv_slots *r = sl(req);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, r};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = id;
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &k;
    SKV_CK_OK(skv_sched_submit(f->s, &sp, now++, &e), &e);
    skv_slots_free(r);
    skv_sched_result *res = NULL;
    SKV_CK_OK(skv_sched_pass(&res, f->s, now++, NULL, &e), &e);
    ck_assert_uint_eq(res->n_placements, 1);
    const skv_sched_kernel_placement *kp = &res->placements[0].kernels[0];
    snprintf(agent, cap, "%s", kp->agent_id);
    size_t n = kp->n_devices;
    for (size_t i = 0; i < n; i++)
        d[i] = kp->devices[i].device;
    skv_sched_result_free(res);
    CHECK(f->s);
    return n;
}

/* Fill agent with 16 one-GPU sessions, then end the two on devices x and
 * y: two free GPUs, placed where the test wants them. */
static void leave_free(fx *f, const char *agent, size_t x, size_t y)
{
    char ids[16][32];
    size_t d[16];
    for (int i = 0; i < 16; i++) {
        char id[32];
        snprintf(id, sizeof id, "%s-%d", agent, i);
        ck_assert_uint_eq(run(f, id, agent, "cuda.device=1", d), 1);
        snprintf(ids[d[0]], sizeof ids[0], "%s", id);
    }
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_mark_finished(f->s, ids[x], false, 5000, &e), &e);
    SKV_CK_OK(skv_sched_mark_finished(f->s, ids[y], false, 5000, &e), &e);
}

/* Two agents that differ only by where their two free GPUs sit: "a"
 * (first in group order) across the sockets, "b" behind one PCIe switch.
 * Returns the worst link of the devices the 2-GPU session got; its agent
 * in agent. */
static int layout_choice(const char *sel, const char *config, bool layouts,
                         char *agent, size_t cap)
{
    fx f;
    if (!load(&f))
        return -1;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_group_set_selector(f.s, "default", sel, config, &e),
              &e);
    const skv_sched_agent_topology *t = layouts ? &f.l.t : NULL;
    unsigned v = layouts ? SKV_SCHED_AGENT_SPEC_VERSION : 1;
    SKV_CK_OK(add(&f, "a", t, v, &e), &e);
    SKV_CK_OK(add(&f, "b", t, v, &e), &e);
    size_t n0 = 0, n1 = 0, p0 = 0, p1 = 0;
    while (f.l.numa[n0] != 0)
        n0++;
    while (f.l.numa[n1] != 1)
        n1++;
    while (topo_layout_link(&f.l, p0, p1 = (p0 % 2 ? p0 - 1 : p0 + 1)) !=
           SKV_TOPO_LINK_PIX)
        ck_assert_uint_lt(++p0, 15);
    leave_free(&f, "a", n0, n1);
    leave_free(&f, "b", p0, p1);
    size_t d[16];
    ck_assert_uint_eq(run_any(&f, "pair", "cuda.device=2", agent, cap, d),
                      2);
    int w = worst_link(&f, d, 2);
    unload(&f);
    return w;
}

/* Only the layout tells the agents apart: with layouts every selector
 * path (frag's class index, frag's scan over the nodes, concentrated's
 * free-device levels) takes the agent with the pair behind one switch;
 * without layouts the first agent, as before. */
START_TEST(test_sched_topo_agent_choice)
{
    static const char *sel[][2] = {{"auto", NULL}, {"frag", "scan=nodes"},
                                   {"frag", "ties=index"},
                                   {"concentrated", NULL}};
    for (size_t i = 0; i < sizeof sel / sizeof sel[0]; i++) {
        char agent[32];
        int w = layout_choice(sel[i][0], sel[i][1], true, agent,
                              sizeof agent);
        if (w < 0)
            return;
        ck_assert_msg(!strcmp(agent, "b") && w == SKV_TOPO_LINK_PIX,
                      "%s %s: on %s, link %d", sel[i][0],
                      sel[i][1] ? sel[i][1] : "", agent, w);
        w = layout_choice(sel[i][0], sel[i][1], false, agent, sizeof agent);
        ck_assert_msg(!strcmp(agent, "a"), "%s without layouts: on %s",
                      sel[i][0], agent);
    }
}
END_TEST

/* One step of the churn below on scheduler s: end a running session
 * (chosen by r) or submit one of 1, 2 or 4 GPUs; the pass's placements as
 * text "id@agent:d,d,...;". */
static void churn_step(skv_sched *s, uint64_t r, unsigned ev, char run[][16],
                       unsigned *nrun, char *out, size_t cap)
{
    skv_error e = SKV_ERROR_INIT;
    int64_t now = 1000 + ev;
    if (*nrun && r % 3 == 0) {
        unsigned k = (unsigned)((r >> 8) % *nrun);
        SKV_CK_OK(skv_sched_mark_finished(s, run[k], false, now, &e), &e);
        memcpy(run[k], run[--*nrun], sizeof run[k]);
    } else {
        static const char *req[3] = {"cuda.device=1", "cuda.device=2",
                                     "cuda.device=4"};
        char id[16];
        snprintf(id, sizeof id, "c%u", ev);
        skv_slots *q = sl(req[(r >> 16) % 3]);
        skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, q};
        skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
        sp.id = id;
        sp.resource_group = "default";
        sp.n_kernels = 1;
        sp.kernels = &k;
        SKV_CK_OK(skv_sched_submit(s, &sp, now, &e), &e);
        skv_slots_free(q);
    }
    skv_sched_result *res = NULL;
    SKV_CK_OK(skv_sched_pass(&res, s, now, NULL, &e), &e);
    out[0] = 0;
    for (size_t p = 0; p < res->n_placements; p++) {
        const skv_sched_kernel_placement *kp = &res->placements[p].kernels[0];
        snprintf(out + strlen(out), cap - strlen(out), "%s@%s:",
                 res->placements[p].session_id, kp->agent_id);
        for (size_t d = 0; d < kp->n_devices; d++)
            snprintf(out + strlen(out), cap - strlen(out), "%u,",
                     kp->devices[d].device);
        snprintf(out + strlen(out), cap - strlen(out), ";");
        if (*nrun < 256)
            snprintf(run[(*nrun)++], sizeof run[0], "%s",
                     res->placements[p].session_id);
    }
    skv_sched_result_free(res);
}

/* frag's class index and its scan over every node rank the same best
 * candidates by layout: the same placements (agents and devices) pass
 * for pass over a seeded churn of 1-, 2- and 4-GPU sessions on six DGX-2
 * agents, four of them with their layout. */
START_TEST(test_sched_topo_index_equals_scan)
{
    fx f[2];
    if (!load(&f[0]) || !load(&f[1]))
        return;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_group_set_selector(f[0].s, "default", "auto", NULL,
                                           &e), &e);
    SKV_CK_OK(skv_sched_group_set_selector(f[1].s, "default", "frag",
                                           "scan=nodes", &e), &e);
    for (int i = 0; i < 2; i++)
        for (int a = 0; a < 6; a++) {
            char id[8];
            snprintf(id, sizeof id, "g%d", a);
            bool lay = a % 3 != 2;
            SKV_CK_OK(add(&f[i], id, lay ? &f[i].l.t : NULL,
                          lay ? SKV_SCHED_AGENT_SPEC_VERSION : 1, &e), &e);
        }
    static char run[2][256][16];
    unsigned nrun[2] = {0, 0};
    static char out[2][8192];
    uint64_t r = 12345;
    for (unsigned ev = 0; ev < 600; ev++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        for (int i = 0; i < 2; i++)
            churn_step(f[i].s, r >> 20, ev, run[i], &nrun[i], out[i],
                       sizeof out[i]);
        ck_assert_msg(!strcmp(out[0], out[1]), "event %u: index %s, scan %s",
                      ev, out[0], out[1]);
    }
    CHECK(f[0].s);
    unload(&f[0]);
    unload(&f[1]);
}
END_TEST

Suite *skv_test_suite_sched_topo(void);
Suite *skv_test_suite_sched_topo(void)
{
    Suite *s = suite_create("sched_topo");
    TCase *tc = tcase_create("sched_topo");
    tcase_add_test(tc, test_sched_topo_dgx2);
    tcase_add_test(tc, test_sched_topo_refill);
    tcase_add_test(tc, test_sched_topo_bad);
    tcase_add_test(tc, test_sched_topo_agent_choice);
    tcase_add_test(tc, test_sched_topo_index_equals_scan);
    suite_add_tcase(s, tc);
    return s;
}
