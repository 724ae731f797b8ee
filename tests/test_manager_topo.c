/* The manager's side of topology-aware devices: an agent.register layout
 * (accelerator links) decides which whole GPUs the manager's per-agent map
 * gives a kernel; a bad layout is refused; the layout is stored and a
 * restarted manager describes the agent with it again.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "../src/manager/admin/admin_int.h"
#include "../src/manager/mgr_int.h"
#include "../src/manager/store/admin_store.h"
#include "skv_test.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"

#define T0 1700000000000LL
#define AGENT 1

static char dir[64];
static uint8_t *outq[64];
static size_t outlen[64], n_out;
static char ak[64], sk[128];

static int send_cb(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)p;
    (void)conn;
    ck_assert_uint_lt(n_out, 64);
    outq[n_out] = malloc(len);
    memcpy(outq[n_out], frame, len);
    outlen[n_out++] = len;
    return 0;
}

static void out_clear(void)
{
    while (n_out > 0)
        free(outq[--n_out]);
}

static skv_manager *open_mgr(int64_t now)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    o.bootstrap_agents = "a1";
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, now, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, AGENT, "test-agent", &e), &e);
    return m;
}

static void read_key(void)
{
    char path[256], line[256];
    snprintf(path, sizeof path, "%s/agents/a1.key", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "access_key=", 11))
            snprintf(ak, sizeof ak, "%s", line + 11);
        if (!strncmp(line, "secret_key=", 11))
            snprintf(sk, sizeof sk, "%s", line + 11);
    }
    fclose(f);
}

/* Register a1 (4 GPUs on NUMA node 0; cuda0-cuda2 and cuda1-cuda3 behind
 * one switch each, the rest over the host bridge) with links; the reply's
 * type (REGISTER_REPLY or ERROR) and an error message. */
static skv_proto_type register_a1(skv_manager *m, skv_proto_device_link *l,
                                  size_t nl, char *msg, size_t cap)
{
    static const char *ids[] = {"cuda0", "cuda1", "cuda2", "cuda3"};
    skv_proto_device dev[6];
    skv_error e = SKV_ERROR_INIT;
    memset(dev, 0, sizeof dev);
    dev[0] = (skv_proto_device){"cpu", "cpu", -1, NULL, "", ""};
    dev[1] = (skv_proto_device){"mem", "mem", -1, NULL, "", ""};
    SKV_CK_OK(skv_slots_parse(&dev[0].slots, "cpu=8", NULL, &e), &e);
    SKV_CK_OK(skv_slots_parse(&dev[1].slots, "mem=8g", NULL, &e), &e);
    for (int i = 0; i < 4; i++) {
        dev[2 + i] = (skv_proto_device){(char *)ids[i], "cuda", 0, NULL, "V100",
                                        ""};
        SKV_CK_OK(skv_slots_parse(&dev[2 + i].slots, "cuda.device=1,"
                                  "cuda.shares=1", NULL, &e), &e);
    }
    skv_proto_numa_node numa = {0, "0-7", 8, 8ull << 30};
    skv_proto_agent_register r = {0};
    r.agent_id = "a1";
    r.architecture = "x86_64";
    r.devices = dev;
    r.n_devices = 6;
    r.numa_nodes = &numa;
    r.n_numa_nodes = 1;
    r.links = l;
    r.n_links = nl;
    void *frame = NULL;
    size_t len = 0;
    skv_proto_credentials pc = {ak, sk};
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, 7,
                                       SKV_PROTO_AGENT_REGISTER, &r, T0, &pc,
                                       &e), &e);
    out_clear();
    skv_manager_handle_frame(m, AGENT, (uint8_t *)frame + 4, len - 4, T0, &e);
    SKV_CK_OK(skv_manager_flush(m, T0, &e), &e);
    skv_free(frame);
    for (int i = 0; i < 6; i++)
        skv_slots_free(dev[i].slots);
    skv_proto_type t = SKV_PROTO_UNKNOWN;
    for (size_t i = 0; i < n_out && t == SKV_PROTO_UNKNOWN; i++) {
        skv_proto_envelope env;
        SKV_CK_OK(skv_proto_envelope_decode(&env, outq[i] + 4, outlen[i] - 4,
                                            &e), &e);
        if (env.type == SKV_PROTO_ERROR && msg) {
            skv_proto_error er = {0};
            SKV_CK_OK(skv_proto_body_decode(&er, env.type, env.body,
                                            env.body_len, &e), &e);
            snprintf(msg, cap, "%s", er.message ? er.message : "");
            skv_proto_body_free(SKV_PROTO_ERROR, &er);
        }
        if (env.type == SKV_PROTO_ERROR ||
            env.type == SKV_PROTO_AGENT_REGISTER_REPLY)
            t = env.type;
        skv_proto_envelope_free(&env);
    }
    out_clear();
    return t;
}

/* A 2-GPU kernel straight on the manager's scheduler: its two devices. */
static void place_two(skv_manager *m, const char *sid, uint32_t *d)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cuda.device=2", NULL, &e), &e);
    skv_sched_kernel_spec k = {SKV_SCHED_ROLE_MAIN, req};
    skv_sched_session_spec sp = SKV_SCHED_SESSION_SPEC_INIT;
    sp.id = sid;
    sp.resource_group = "default";
    sp.n_kernels = 1;
    sp.kernels = &k;
    SKV_CK_OK(skv_sched_submit(m->sched, &sp, T0, &e), &e);
    skv_slots_free(req);
    skv_sched_result *r = NULL;
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    SKV_CK_OK(skv_sched_pass(&r, m->sched, T0, &po, &e), &e);
    ck_assert_uint_eq(r->n_placements, 1);
    ck_assert_uint_eq(r->placements[0].kernels[0].n_devices, 2);
    d[0] = r->placements[0].kernels[0].devices[0].device;
    d[1] = r->placements[0].kernels[0].devices[1].device;
    skv_sched_result_free(r);
}

static skv_proto_device_link links[] = {
    {"cuda0", "cuda2", "pix", 0}, {"cuda1", "cuda3", "pix", 0},
    {"cuda0", "cuda1", "phb", 0}, {"cuda0", "cuda3", "phb", 0},
    {"cuda1", "cuda2", "phb", 0}, {"cuda2", "cuda3", "phb", 0}};

/* Pairs behind one switch; in device order cuda0+cuda1 would be taken. */
static void assert_pair(const uint32_t *d)
{
    ck_assert_msg((d[0] == 0 && d[1] == 2) || (d[0] == 1 && d[1] == 3),
                  "devices %u,%u are not behind one switch", d[0], d[1]);
}

static char g_sid[64];      /* the session submit_policy's last accepted */

/* session.submit with numa_policy text as admin: the reply's error
 * message ("" when accepted, its id in g_sid). */
static void submit_policy(skv_manager *m, const char *policy, char *msg,
                          size_t cap)
{
    char path[256], line[256], aak[64] = "", ask[128] = "";
    snprintf(path, sizeof path, "%s/admin.key", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "access_key=", 11))
            snprintf(aak, sizeof aak, "%s", line + 11);
        if (!strncmp(line, "secret_key=", 11))
            snprintf(ask, sizeof ask, "%s", line + 11);
    }
    fclose(f);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_conn_open(m, 2, "test-admin", &e), &e);
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_parse(&req, "cpu=1", NULL, &e), &e);
    char *cmd[] = {"true"};
    skv_proto_kernel_spec k = {"main", NULL, req};
    skv_proto_session_submit sub = {0};
    sub.image = "busybox";
    sub.command = cmd;
    sub.n_command = 1;
    sub.kernels = &k;
    sub.n_kernels = 1;
    sub.numa_policy = (char *)policy;
    void *frame = NULL;
    size_t len = 0;
    skv_proto_credentials pc = {aak, ask};
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, 9,
                                       SKV_PROTO_SESSION_SUBMIT, &sub, T0,
                                       &pc, &e), &e);
    out_clear();
    skv_manager_handle_frame(m, 2, (uint8_t *)frame + 4, len - 4, T0, &e);
    SKV_CK_OK(skv_manager_flush(m, T0, &e), &e);
    skv_free(frame);
    skv_slots_free(req);
    msg[0] = '\0';
    for (size_t i = 0; i < n_out; i++) {
        skv_proto_envelope env;
        SKV_CK_OK(skv_proto_envelope_decode(&env, outq[i] + 4, outlen[i] - 4,
                                            &e), &e);
        if (env.type == SKV_PROTO_ERROR) {
            skv_proto_error er = {0};
            SKV_CK_OK(skv_proto_body_decode(&er, env.type, env.body,
                                            env.body_len, &e), &e);
            snprintf(msg, cap, "%s", er.message ? er.message : "?");
            skv_proto_body_free(SKV_PROTO_ERROR, &er);
        }
        if (env.type == SKV_PROTO_SESSION_SUBMIT_REPLY) {
            skv_proto_session_ref ref = {0};
            SKV_CK_OK(skv_proto_body_decode(&ref, env.type, env.body,
                                            env.body_len, &e), &e);
            snprintf(g_sid, sizeof g_sid, "%s", ref.session_id);
            skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
        }
        skv_proto_envelope_free(&env);
    }
    out_clear();
    skv_manager_conn_close(m, 2, T0);
}

START_TEST(test_manager_topo_numa_policy)
{
    snprintf(dir, sizeof dir, "/tmp/skv-mtopo-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_manager *m = open_mgr(T0);
    char msg[512];
    submit_policy(m, "bogus", msg, sizeof msg);
    ck_assert_msg(strstr(msg, "numa_policy 'bogus'"), "got '%s'", msg);
    submit_policy(m, "interleaved", msg, sizeof msg);
    ck_assert_msg(msg[0] == '\0', "interleaved refused: %s", msg);
    skv_manager_free(m);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The NUMA policy a session stores (and so sends to its agent). */
static void assert_stored_policy(skv_manager *m, const char *want)
{
    skv_proto_session_submit sub = {0};
    char d[128], p[128], o[128];
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_load_submit(m, g_sid, &sub, d, p, o, &e), &e);
    ck_assert_str_eq(sub.numa_policy, want);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &sub);
}

/* A group's stored NUMA default changes the way admin requests change it
 * (admin/groups.c): inside an admin transaction, whose end makes the
 * submit path forget the admin answers it keeps (store/admin_cache.h). */
static void set_group_numa(skv_manager *m, const char *policy)
{
    skv__mgr_admin_tx tx;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__mgr_admin_begin(&m->admin, &tx, &e), &e);
    SKV_CK_OK(skv__mgr_store_admin_group_numa_set(m->admin.db, "default",
                                                  policy, &e), &e);
    SKV_CK_OK(skv__mgr_admin_commit(&m->admin, &tx, &e), &e);
}

/* A session without a policy takes its group's (admin group
 * --numa-policy); one that gives a policy keeps it; a group whose stored
 * value is no policy refuses the first kind with a clear error. */
START_TEST(test_manager_topo_group_default)
{
    snprintf(dir, sizeof dir, "/tmp/skv-mtopo-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_manager *m = open_mgr(T0);
    char msg[512];
    submit_policy(m, NULL, msg, sizeof msg);
    ck_assert_msg(msg[0] == '\0', "refused: %s", msg);
    assert_stored_policy(m, "prefer-single-node");
    set_group_numa(m, "interleaved");
    submit_policy(m, NULL, msg, sizeof msg);
    ck_assert_msg(msg[0] == '\0', "refused: %s", msg);
    assert_stored_policy(m, "interleaved");
    submit_policy(m, "prefer-single-node", msg, sizeof msg);
    ck_assert_msg(msg[0] == '\0', "refused: %s", msg);
    assert_stored_policy(m, "prefer-single-node");
    set_group_numa(m, "spread");
    submit_policy(m, NULL, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "stored numa_policy 'spread'"), "got '%s'",
                  msg);
    submit_policy(m, "interleaved", msg, sizeof msg);
    ck_assert_msg(msg[0] == '\0', "refused: %s", msg);
    skv_manager_free(m);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(test_manager_topo_register_restart)
{
    snprintf(dir, sizeof dir, "/tmp/skv-mtopo-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    skv_manager *m = open_mgr(T0);
    read_key();
    char msg[512] = "";
    /* Refused whole: an unknown device, a device with itself, a bad class,
     * a NUMA node twice. */
    skv_proto_device_link bad[] = {{"cuda0", "gpu9", "pix", 0},
                                   {"cuda1", "cuda1", "pix", 0},
                                   {"cuda0", "cuda1", "nvswitch", 0}};
    const char *why[] = {"gpu9", "twice", "nvswitch"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(register_a1(m, &bad[i], 1, msg, sizeof msg),
                         SKV_PROTO_ERROR);
        ck_assert_msg(strstr(msg, why[i]), "%d: %s", i, msg);
    }
    ck_assert_ptr_null(skv__mgr_agent_find(m, "a1"));
    ck_assert_int_eq(register_a1(m, links, 6, NULL, 0),
                     SKV_PROTO_AGENT_REGISTER_REPLY);
    uint32_t d[2];
    place_two(m, "s-1", d);
    assert_pair(d);
    skv_manager_free(m);
    /* Restarted: the stored layout describes a1 again before it returns. */
    m = open_mgr(T0 + 1000);
    skv__mgr_agent *a = skv__mgr_agent_find(m, "a1");
    ck_assert_ptr_nonnull(a);
    ck_assert_uint_eq(a->layout.n_links, 6);
    ck_assert_uint_eq(a->layout.n_numa, 1);
    ck_assert_str_eq(a->layout.numa[0].cpus, "0-7");
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_sched_agent_set_schedulable(m->sched, "a1", true, &e), &e);
    skv_sched_cancel(m->sched, "s-1", T0 + 1000, NULL);
    place_two(m, "s-2", d);
    assert_pair(d);
    skv_manager_free(m);
    out_clear();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *skv_test_suite_manager_topo(void);
Suite *skv_test_suite_manager_topo(void)
{
    Suite *s = suite_create("manager_topo");
    TCase *tc = tcase_create("manager_topo");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_manager_topo_register_restart);
    tcase_add_test(tc, test_manager_topo_numa_policy);
    tcase_add_test(tc, test_manager_topo_group_default);
    suite_add_tcase(s, tc);
    return s;
}
