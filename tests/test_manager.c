/* The manager core driven in-process: a fake agent and fake users speak the
 * wire protocol (built with the proto library, signed with the keys the
 * manager's bootstrap wrote) and everything the manager sends is captured.
 * SPDX-License-Identifier: Apache-2.0 */
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/manager/mgr_int.h"
#include "skv_test.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"

#define T0 1700000000000LL
#define OUT_MAX 512
#define AGENT 1
#define ADMIN 2
#define USER2 3

typedef struct out_frame {
    uint64_t conn;
    uint8_t *buf;
    size_t len;
} out_frame;

static out_frame outq[OUT_MAX];
static size_t n_out;
static char dir[64];
static uint64_t next_id = 100;

typedef struct cred {
    char ak[64];
    char sk[128];
} cred;

static int drift_logs;       /* "drift:" warnings seen */

static void log_cb(skv_log_level level, const char *module, const char *msg,
                   void *p)
{
    (void)p;
    (void)module;
    if (level >= SKV_LOG_WARN && strstr(msg, "drift:"))
        drift_logs++;
}

static uint64_t fail_conn;   /* the send callback fails for this one */
static skv_manager *g_watch; /* counts frames sent inside a transaction */
static int sent_in_tx;

static int send_cb(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)p;
    if (g_watch && skv__db_in_transaction(g_watch->store))
        sent_in_tx++;
    if (conn == fail_conn)
        return -1;
    ck_assert_uint_lt(n_out, OUT_MAX);
    outq[n_out].conn = conn;
    outq[n_out].buf = malloc(len);
    memcpy(outq[n_out].buf, frame, len);
    outq[n_out++].len = len;
    return 0;
}

static void out_clear(void)
{
    for (size_t i = 0; i < n_out; i++)
        free(outq[i].buf);
    n_out = 0;
}

static void rm_tree(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    out_clear();
}

static const char *mgr_store;    /* NULL: SQLite in dir */

static skv_manager *open_mgr(int64_t now, uint32_t hb_timeout)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    o.store = mgr_store;
    o.bootstrap_agents = "a1";
    o.heartbeat_timeout_ms = hb_timeout;
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, now, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, AGENT, "test-agent", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "test-admin", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, USER2, "test-user", &e), &e);
    return m;
}

static void setup_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/skv-mgr-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void read_key(cred *c, const char *rel)
{
    char path[256], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no key file %s", path);
    memset(c, 0, sizeof *c);
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!strncmp(line, "access_key=", 11))
            snprintf(c->ak, sizeof c->ak, "%s", line + 11);
        if (!strncmp(line, "secret_key=", 11))
            snprintf(c->sk, sizeof c->sk, "%s", line + 11);
    }
    fclose(f);
    ck_assert(c->ak[0] && c->sk[0]);
}

static bool no_flush;    /* leave submissions in the open batch */

/* Encode (signed when c) and hand to the manager; returns its rc. The
 * batch of submissions is committed (replies sent) unless no_flush. */
static int feed(skv_manager *m, uint64_t conn, skv_proto_type type,
                const void *body, const cred *c, int64_t now, uint64_t *id)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    skv_proto_credentials pc = {c ? c->ak : NULL, c ? c->sk : NULL};
    uint64_t rid = id && *id ? *id : ++next_id;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, skv_proto_type_kind(type),
                                       rid, type, body, now, c ? &pc : NULL,
                                       &e), &e);
    if (id)
        *id = rid;
    int rc = skv_manager_handle_frame(m, conn, (uint8_t *)frame + 4, len - 4,
                                      now, &e);
    skv_free(frame);
    if (!no_flush)
        SKV_CK_OK(skv_manager_flush(m, now, &e), &e);
    return rc;
}

/* Take the first frame sent to conn (any type when type is UNKNOWN);
 * decode its body into body (when not NULL). Returns the envelope's id. */
static int take(uint64_t conn, skv_proto_type type, void *body,
                uint64_t *req_id)
{
    for (size_t i = 0; i < n_out; i++) {
        skv_proto_envelope env;
        skv_error e = SKV_ERROR_INIT;
        if (outq[i].conn != conn)
            continue;
        SKV_CK_OK(skv_proto_envelope_decode(&env, outq[i].buf + 4,
                                            outq[i].len - 4, &e), &e);
        if (type != SKV_PROTO_UNKNOWN && env.type != type) {
            skv_proto_envelope_free(&env);
            continue;
        }
        if (body)
            SKV_CK_OK(skv_proto_body_decode(body, env.type, env.body,
                                            env.body_len, &e), &e);
        if (req_id)
            *req_id = env.request_id;
        skv_proto_envelope_free(&env);
        free(outq[i].buf);
        memmove(&outq[i], &outq[i + 1], (n_out - i - 1) * sizeof outq[0]);
        n_out--;
        return 1;
    }
    return 0;
}

static int count_type(uint64_t conn, skv_proto_type type)
{
    int n = 0;
    for (size_t i = 0; i < n_out; i++) {
        skv_proto_envelope env;
        if (outq[i].conn != conn ||
            skv_proto_envelope_decode(&env, outq[i].buf + 4, outq[i].len - 4,
                                      NULL))
            continue;
        n += env.type == type;
        skv_proto_envelope_free(&env);
    }
    return n;
}

static skv_slots *slots(const char *text)
{
    skv_slots *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_parse(&s, text, NULL, &e), &e);
    return s;
}

/* Constraints for the next submit_n (then cleared). */
static skv_proto_kv *g_constraints;
static size_t g_n_constraints;
/* Labels for the next agent registration (then cleared). */
static skv_proto_kv *g_labels;
static size_t g_n_labels;

#define DIGEST64 \
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* Register agent a1 with devs; optionally reporting kernels. */
static void register_devs(skv_manager *m, const cred *c, skv_proto_device *dev,
                          size_t nd, skv_proto_kernel_report *k, size_t nk,
                          int64_t now)
{
    char *images[] = {"busybox"};
    skv_proto_image_detail det = {"busybox", "sha256:" DIGEST64, 1234567};
    skv_proto_agent_register r = {0};
    r.agent_id = "a1";
    r.architecture = "x86_64";
    r.address = "127.0.0.1:6001";
    r.devices = dev;
    r.n_devices = nd;
    r.images = images;
    r.n_images = 1;
    r.image_details = &det;
    r.n_image_details = 1;
    r.labels = g_labels;
    r.n_labels = g_n_labels;
    g_labels = NULL;
    g_n_labels = 0;
    r.kernels = k;
    r.n_kernels = nk;
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_REGISTER, &r, c, now,
                          NULL), 0);
    skv_proto_agent_register_reply rep;
    skv_proto_error er = {0};
    if (take(AGENT, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("register refused: %s", er.message);
    ck_assert(take(AGENT, SKV_PROTO_AGENT_REGISTER_REPLY, &rep, NULL));
    ck_assert_uint_gt(rep.heartbeat_interval_ms, 0);
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
}

/* cpu/mem devices, plus n_gpu shareable "cudaN" accelerators. */
static size_t make_devs(skv_proto_device *dev, const char *cpu,
                        const char *mem, int n_gpu)
{
    static const char *ids[] = {"cuda0", "cuda1", "cuda2", "cuda3"};
    memset(dev, 0, sizeof(skv_proto_device) * (size_t)(2 + n_gpu));
    dev[0].id = "cpu";
    dev[0].kind = "cpu";
    dev[0].slots = slots(cpu);
    dev[1].id = "mem";
    dev[1].kind = "mem";
    dev[1].slots = slots(mem);
    for (int i = 0; i < n_gpu; i++) {
        dev[2 + i].id = (char *)ids[i];
        dev[2 + i].kind = "cuda";
        dev[2 + i].numa_node = 0;
        dev[2 + i].slots = slots("cuda.device=1,cuda.shares=1");
    }
    return (size_t)(2 + n_gpu);
}

static void free_devs(skv_proto_device *dev, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv_slots_free(dev[i].slots);
}

static void register_agent(skv_manager *m, const cred *c, const char *cap_cpu,
                           const char *cap_mem, skv_proto_kernel_report *k,
                           size_t nk, int64_t now)
{
    skv_proto_device dev[6];
    size_t n = make_devs(dev, cap_cpu, cap_mem, 0);
    register_devs(m, c, dev, n, k, nk, now);
    free_devs(dev, n);
}

/* Submit as c (on conn); returns the session id (static buffer). */
/* A one-kernel "/bin/true" submission of busybox with slots req (free
 * k->slots after use). */
static void basic_submit(skv_proto_session_submit *s, skv_proto_kernel_spec *k,
                         const char *req)
{
    static char *cmd[] = {"/bin/true"};
    memset(k, 0, sizeof *k);
    memset(s, 0, sizeof *s);
    k->slots = slots(req);
    s->image = "busybox";
    s->command = cmd;
    s->n_command = 1;
    s->kernels = k;
    s->n_kernels = 1;
}

static const char *submit_n(skv_manager *m, uint64_t conn, const cred *c,
                            const char *req, const char *type,
                            const char *token, uint32_t n, int64_t now)
{
    static char sid[64];
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    basic_submit(&s, &k, req);
    s.session_type = (char *)type;
    s.client_token = (char *)token;
    s.cluster_size = n;
    s.constraints = g_constraints;
    s.n_constraints = g_n_constraints;
    g_constraints = NULL;
    g_n_constraints = 0;
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_SESSION_SUBMIT, &s, c, now,
                          NULL), 0);
    skv_slots_free(k.slots);
    skv_proto_session_ref ref;
    skv_proto_error er = {0};
    if (take(conn, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("submit refused: %s", er.message);
    ck_assert(take(conn, SKV_PROTO_SESSION_SUBMIT_REPLY, &ref, NULL));
    snprintf(sid, sizeof sid, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    return sid;
}

static const char *submit(skv_manager *m, uint64_t conn, const cred *c,
                          const char *req, const char *type,
                          const char *token, int64_t now)
{
    return submit_n(m, conn, c, req, type, token, 1, now);
}

static void tick(skv_manager *m, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_tick(m, now, &e), &e);
}

/* session.show as c: fills *rep; returns 0 or the error code received. */
static int show(skv_manager *m, uint64_t conn, const cred *c, const char *sid,
                skv_proto_session_show_reply *rep, int64_t now)
{
    skv_proto_session_id q = {(char *)sid};
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_SESSION_SHOW, &q, c, now, NULL),
                     0);
    skv_proto_error er = {0};
    if (take(conn, SKV_PROTO_ERROR, &er, NULL)) {
        int code = er.code;
        skv_proto_body_free(SKV_PROTO_ERROR, &er);
        return code;
    }
    ck_assert(take(conn, SKV_PROTO_SESSION_SHOW_REPLY, rep, NULL));
    return 0;
}

static void expect_status(skv_manager *m, const cred *c, const char *sid,
                          const char *status, int64_t now)
{
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, c, sid, &rep, now), 0);
    ck_assert_msg(!strcmp(rep.session.status, status), "%s is %s (%s), not %s",
                  sid, rep.session.status,
                  rep.session.status_reason ? rep.session.status_reason : "",
                  status);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
}

/* The next kernel.create to the agent: returns its request id, kernel id. */
static uint64_t take_create(char *kid)
{
    skv_proto_kernel_create kc;
    uint64_t id = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &id));
    snprintf(kid, 96, "%s", kc.kernel_id);
    ck_assert_uint_ge(kc.n_alloc, 1);
    ck_assert_str_eq(kc.cluster_role, "main");
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    return id;
}

static void answer_create(skv_manager *m, uint64_t id, const char *kid,
                          int64_t now)
{
    skv_proto_kernel_create_reply r = {(char *)kid, (char *)kid};
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_KERNEL_CREATE_REPLY, &r, NULL,
                          now, &id), 0);
}

static void send_exit(skv_manager *m, const cred *c, const char *sid,
                      const char *kid, int code, int64_t now)
{
    skv_proto_kernel_exit x = {0};
    x.agent_id = "a1";
    x.session_id = (char *)sid;
    x.kernel_id = (char *)kid;
    x.exit_code = code;
    x.finished_ms = now;
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_KERNEL_EXIT, &x, c, now, NULL),
                     0);
}

static void send_signal_exit(skv_manager *m, const cred *c, const char *sid,
                             const char *kid, int sig, int64_t now)
{
    skv_proto_kernel_exit x = {0};
    x.agent_id = "a1";
    x.session_id = (char *)sid;
    x.kernel_id = (char *)kid;
    x.signal = sig;
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_KERNEL_EXIT, &x, c, now, NULL),
                     0);
}

/* ---- tests ----------------------------------------------------------------- */

START_TEST(test_lifecycle)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1,mem=1g",
                                           "batch", NULL, T0 + 1));
    ck_assert_int_eq(strncmp(sid, "s-", 2), 0);
    ck_assert_uint_eq(strlen(sid), 18);
    tick(m, T0 + 2);
    uint64_t id = take_create(kid);
    ck_assert_int_eq(strncmp(kid, sid, strlen(sid)), 0);
    expect_status(m, &ad, sid, "PREPARING", T0 + 3);
    answer_create(m, id, kid, T0 + 4);
    expect_status(m, &ad, sid, "RUNNING", T0 + 5);
    send_exit(m, &ag, sid, kid, 3, T0 + 6);
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, NULL, NULL));
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 7), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 3);
    /* every state in order, SCHEDULED too though the pass writes the row
     * PREPARING at once (mgr_pass.c) */
    static const char *const states[] = {"PENDING", "SCHEDULED", "PREPARING",
                                         "RUNNING", "TERMINATED"};
    ck_assert_uint_eq(rep.session.n_history, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(rep.session.history[i].status, states[i]);
    ck_assert_str_eq(rep.session.history[1].reason, "placed (main kernel on "
                     "a1)");
    ck_assert_int_eq(rep.session.history[1].timestamp_ms, T0 + 2);
    ck_assert_uint_eq(rep.session.n_kernels, 1);
    ck_assert_str_eq(rep.session.kernels[0].agent_id, "a1");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    skv_proto_agent_list al = {0};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_AGENT_LIST, &al, &ad, T0 + 8,
                          NULL), 0);
    skv_proto_agent_list_reply alr;
    ck_assert(take(ADMIN, SKV_PROTO_AGENT_LIST_REPLY, &alr, NULL));
    ck_assert_uint_eq(alr.n_agents, 1);
    ck_assert_str_eq(alr.agents[0].agent_id, "a1");
    ck_assert_str_eq(alr.agents[0].status, "alive");
    ck_assert_str_eq(alr.agents[0].address, "127.0.0.1:6001");
    ck_assert_uint_eq(alr.agents[0].n_devices, 2);
    ck_assert_int_eq(skv_slots_get(alr.agents[0].capacity, "cpu"), 4000);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &alr);
    skv_proto_image_list il = {0};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_IMAGE_LIST, &il, &ad, T0 + 9,
                          NULL), 0);
    skv_proto_image_list_reply ilr;
    ck_assert(take(ADMIN, SKV_PROTO_IMAGE_LIST_REPLY, &ilr, NULL));
    ck_assert_uint_eq(ilr.n_images, 1);
    ck_assert_str_eq(ilr.images[0].name, "busybox");
    ck_assert_uint_eq(ilr.images[0].n_agents, 1);
    ck_assert_uint_eq(ilr.images[0].size_bytes, 1234567);
    ck_assert_str_eq(ilr.images[0].digest, "sha256:" DIGEST64);
    skv_proto_body_free(SKV_PROTO_IMAGE_LIST_REPLY, &ilr);
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    ck_assert_uint_eq(st.sessions_by_state[SKV_SESSION_TERMINATED], 1);
    ck_assert_uint_eq(st.agents_alive, 1);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

static void expect_ends(skv_manager *m, const cred *ad, const char *sid,
                        const char *session, const char *kernel, int64_t now)
{
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, ad, sid, &rep, now), 0);
    ck_assert_str_eq(rep.session.status, session);
    ck_assert_uint_eq(rep.session.n_kernels, 1);
    ck_assert_str_eq(rep.session.kernels[0].status, kernel);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
}

/* A kernel's exit and its session's end are one unit (mgr_kernels.c,
 * mgr_sessions.c): when the end's write fails, the exit is undone with it
 * (no kernel TERMINATED under a RUNNING session, no kernel.destroy), and
 * the agent's repeated exit records both, as a single exit would. */
START_TEST(test_exit_end_one_unit)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    skv_error e = SKV_ERROR_INIT;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1,mem=1g",
                                           "batch", NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    expect_status(m, &ad, sid, "RUNNING", T0 + 4);
    SKV_CK_OK(skv__db_exec(m->store, "CREATE TRIGGER no_end BEFORE UPDATE OF"
                           " status ON sessions WHEN NEW.status='TERMINATED' "
                           "BEGIN SELECT RAISE(ABORT, 'injected fault'); END",
                           &e), &e);
    send_exit(m, &ag, sid, kid, 3, T0 + 5);
    skv_proto_error er = {0};
    ck_assert(take(AGENT, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_ptr_nonnull(strstr(er.message, "injected fault"));
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    ck_assert(!take(AGENT, SKV_PROTO_KERNEL_DESTROY, NULL, NULL));
    expect_ends(m, &ad, sid, "RUNNING", "RUNNING", T0 + 6);
    SKV_CK_OK(skv__db_exec(m->store, "DROP TRIGGER no_end", &e), &e);
    send_exit(m, &ag, sid, kid, 3, T0 + 7);
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, NULL, NULL));
    expect_ends(m, &ad, sid, "TERMINATED", "TERMINATED", T0 + 8);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 9), 0);
    ck_assert_int_eq(rep.session.exit_code, 3);
    ck_assert_int_eq(rep.session.kernels[0].exit_code, 3);
    ck_assert_uint_eq(rep.session.n_history, 5);
    ck_assert_str_eq(rep.session.history[4].status, "TERMINATED");
    ck_assert_str_eq(rep.session.history[4].reason, "exited");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* Session ids grow with time (mgr_ids.c: index appends): "s-", the
 * second in 8 hex digits, a counter in 8; a restart in the same second
 * starts its counter elsewhere, and a clock stepped back changes nothing
 * about uniqueness. */
static void submit_id(skv_manager *m, const cred *ad, int64_t now, char *out)
{
    snprintf(out, 64, "%s", submit(m, ADMIN, ad, "cpu=1", "batch", NULL,
                                   now));
    ck_assert_uint_eq(strlen(out), 18);
    ck_assert_uint_eq(strspn(out + 2, "0123456789abcdef"), 16);
    char secs[16];
    snprintf(secs, sizeof secs, "%08llx", (unsigned long long)(now / 1000));
    ck_assert_int_eq(strncmp(out + 2, secs, 8), 0);
}

START_TEST(test_session_ids)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad;
    read_key(&ad, "admin.key");
    char id[6][64];
    submit_id(m, &ad, T0 + 1, id[0]);
    submit_id(m, &ad, T0 + 2, id[1]);
    submit_id(m, &ad, T0 + 1500, id[2]);
    ck_assert_int_lt(strcmp(id[0], id[1]), 0);
    ck_assert_int_lt(strcmp(id[1], id[2]), 0);
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 1600, 0);
    submit_id(m, &ad, T0 + 1600, id[3]);   /* the same second as id[2] */
    submit_id(m, &ad, T0 - 5000, id[4]);   /* the clock went back */
    submit_id(m, &ad, T0 + 2500, id[5]);
    for (int i = 0; i < 6; i++)
        for (int j = i + 1; j < 6; j++)
            ck_assert_str_ne(id[i], id[j]);
    skv_proto_session_show_reply rep;
    for (int i = 0; i < 6; i++) {
        ck_assert_int_eq(show(m, ADMIN, &ad, id[i], &rep, T0 + 2600), 0);
        ck_assert_str_eq(rep.session.status, "PENDING");
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    }
    skv_manager_free(m);
}
END_TEST

START_TEST(test_refused_frames)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad, bad;
    read_key(&ad, "admin.key");
    skv_error e = SKV_ERROR_INIT;
    /* garbage */
    ck_assert_int_lt(skv_manager_handle_frame(m, USER2, "\x81\xa1x", 3, T0,
                                              &e), 0);
    ck_assert(take(USER2, SKV_PROTO_ERROR, NULL, NULL));
    /* wrong secret */
    bad = ad;
    bad.sk[0] = bad.sk[0] == 'A' ? 'B' : 'A';
    skv_proto_session_list l = {0};
    ck_assert_int_lt(feed(m, USER2, SKV_PROTO_SESSION_LIST, &l, &bad, T0,
                          NULL), 0);
    skv_proto_error er;
    ck_assert(take(USER2, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_EAUTH);
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    /* unsigned request */
    ck_assert_int_lt(feed(m, USER2, SKV_PROTO_SESSION_LIST, &l, NULL, T0,
                          NULL), 0);
    ck_assert(take(USER2, SKV_PROTO_ERROR, NULL, NULL));
    /* replay: the same signed frame twice */
    void *frame = NULL;
    size_t len = 0;
    skv_proto_credentials pc = {ad.ak, ad.sk};
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, SKV_PROTO_REQUEST, 7,
                                       SKV_PROTO_SESSION_LIST, &l, T0, &pc,
                                       &e), &e);
    ck_assert_int_eq(skv_manager_handle_frame(m, ADMIN, (uint8_t *)frame + 4,
                                              len - 4, T0, &e), 0);
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_LIST_REPLY, NULL, NULL));
    ck_assert_int_lt(skv_manager_handle_frame(m, ADMIN, (uint8_t *)frame + 4,
                                              len - 4, T0 + 1, &e), 0);
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, NULL, NULL));
    skv_free(frame);
    /* a response from a connection that is not an agent's */
    skv_proto_ack ack = {0};
    ck_assert_int_lt(feed(m, USER2, SKV_PROTO_ACK, &ack, NULL, T0, NULL), 0);
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    ck_assert_uint_ge(st.requests_refused, 5);
    /* a connection whose sends fail is closed on the next tick */
    fail_conn = ADMIN;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LIST, &l, &ad, T0 + 2,
                          NULL), 0);
    tick(m, T0 + 3);
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LIST, &l, &ad, T0 + 4,
                          NULL), SKV_ENOENT);
    fail_conn = 0;
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* Create user `name` with a keypair (as admin). */
static void make_user(skv_manager *m, const cred *ad, const char *name,
                      cred *out, int64_t now)
{
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_CREATE;
    u.user.name = (char *)name;
    u.user.role = "user";
    u.user.domain = "default";
    u.user.active = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_USER, &u, ad, now, NULL),
                     0);
    skv_proto_error er = {0};
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("admin.user: %s", er.message);
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_USER_REPLY, NULL, NULL));
    skv_proto_admin_keypair k = {0};
    k.op = SKV_PROTO_ADMIN_CREATE;
    k.keypair.user = (char *)name;
    k.keypair.active = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_KEYPAIR, &k, ad, now + 1,
                          NULL), 0);
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("admin.keypair: %s", er.message);
    skv_proto_admin_keypair_reply kr;
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr, NULL));
    ck_assert_uint_eq(kr.n_keypairs, 1);
    snprintf(out->ak, sizeof out->ak, "%s", kr.keypairs[0].access_key);
    snprintf(out->sk, sizeof out->sk, "%s", kr.keypairs[0].secret_key);
    skv_proto_body_free(SKV_PROTO_ADMIN_KEYPAIR_REPLY, &kr);
}

START_TEST(test_users_isolated)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad, alice, bob;
    read_key(&ad, "admin.key");
    make_user(m, &ad, "alice", &alice, T0);
    make_user(m, &ad, "bob", &bob, T0 + 10);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", submit(m, USER2, &alice, "cpu=1",
                                           "batch", NULL, T0 + 20));
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, USER2, &bob, sid, &rep, T0 + 21), SKV_EPERM);
    skv_proto_session_terminate t = {(char *)sid, NULL, 0};
    ck_assert_int_eq(feed(m, USER2, SKV_PROTO_SESSION_TERMINATE, &t, &bob,
                          T0 + 22, NULL), 0);
    skv_proto_error er;
    ck_assert(take(USER2, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_EPERM);
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    /* bob's list does not show alice's session; listing hers is refused */
    skv_proto_session_list l = {0};
    ck_assert_int_eq(feed(m, USER2, SKV_PROTO_SESSION_LIST, &l, &bob, T0 + 23,
                          NULL), 0);
    skv_proto_session_list_reply lr;
    ck_assert(take(USER2, SKV_PROTO_SESSION_LIST_REPLY, &lr, NULL));
    ck_assert_uint_eq(lr.n_sessions, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    l.owner = "alice";
    ck_assert_int_eq(feed(m, USER2, SKV_PROTO_SESSION_LIST, &l, &bob, T0 + 24,
                          NULL), 0);
    ck_assert(take(USER2, SKV_PROTO_ERROR, NULL, NULL));
    /* an admin lists everyone's with owner "*" */
    l.owner = "*";
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LIST, &l, &ad, T0 + 24,
                          NULL), 0);
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_LIST_REPLY, &lr, NULL));
    ck_assert_uint_eq(lr.n_sessions, 1);
    ck_assert_uint_eq(lr.total, 1);
    ck_assert_str_eq(lr.sessions[0].owner, "alice");
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    /* alice may terminate her own pending session: CANCELLED */
    ck_assert_int_eq(feed(m, USER2, SKV_PROTO_SESSION_TERMINATE, &t, &alice,
                          T0 + 25, NULL), 0);
    skv_proto_session_ref ref;
    ck_assert(take(USER2, SKV_PROTO_SESSION_TERMINATE_REPLY, &ref, NULL));
    ck_assert_str_eq(ref.status, "CANCELLED");
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_pending_reason)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=2", "mem=4g", NULL, 0, T0);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=8", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 3), 0);
    ck_assert_str_eq(rep.session.status, "PENDING");
    ck_assert_uint_eq(rep.session.n_pending, 1);
    ck_assert_ptr_nonnull(rep.session.pending[0].predicate);
    ck_assert_ptr_nonnull(rep.session.pending[0].message);
    ck_assert_ptr_nonnull(rep.session.pending[0].slot);
    ck_assert_str_eq(rep.session.pending[0].slot, "cpu");
    ck_assert_int_gt(rep.session.pending[0].shortfall, 0);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    /* bad submissions are refused with a message */
    skv_proto_session_submit s = {0};
    s.image = "busybox";
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, &ad, T0 + 4,
                          NULL), 0);
    skv_proto_error er;
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(er.message, "command"));
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_idempotent_submit)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad;
    read_key(&ad, "admin.key");
    char a[64], b[64];
    snprintf(a, sizeof a, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", "tok-1",
                                       T0));
    snprintf(b, sizeof b, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", "tok-1",
                                       T0 + 1));
    ck_assert_str_eq(a, b);
    snprintf(b, sizeof b, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", "tok-2",
                                       T0 + 2));
    ck_assert_str_ne(a, b);
    /* also across a restart */
    skv_manager_free(m);
    m = open_mgr(T0 + 3, 0);
    snprintf(b, sizeof b, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", "tok-1",
                                       T0 + 4));
    ck_assert_str_eq(a, b);
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    ck_assert_uint_eq(st.sessions_by_state[SKV_SESSION_PENDING], 2);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* The agent comes back reporting both kernels: k1's allocation as
 * recorded, k2's different (logged as drift). */
static void report_two(skv_manager *m, const cred *ag, char *s1, char *k1,
                       char *s2, char *k2, int64_t now)
{
    skv_proto_kernel_report rk[2] = {{0}};
    skv_proto_device_alloc al[2] = {{"cpu", slots("cpu=1")},
                                    {"cpu", slots("cpu=0.5")}};
    rk[0].session_id = s1;
    rk[0].kernel_id = k1;
    rk[0].status = "running";
    rk[0].alloc = &al[0];
    rk[0].n_alloc = 1;
    rk[1].session_id = s2;
    rk[1].kernel_id = k2;
    rk[1].status = "running";
    rk[1].alloc = &al[1];
    rk[1].n_alloc = 1;
    drift_logs = 0;
    skv_set_logger(log_cb, SKV_LOG_WARN, NULL);
    register_agent(m, ag, "cpu=4", "mem=8g", rk, 2, now);
    skv_set_logger(NULL, SKV_LOG_WARN, NULL);
    ck_assert_int_eq(drift_logs, 1);
    skv_slots_free(al[0].slots);
    skv_slots_free(al[1].slots);
}

START_TEST(test_restart)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char run[64], prep[64], pend[64], done[64], k1[96], k2[96], k4[96];
    snprintf(run, sizeof run, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(k1), k1, T0 + 3);
    snprintf(prep, sizeof prep, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                             NULL, T0 + 4));
    tick(m, T0 + 5);
    take_create(k2);   /* sent, never answered */
    snprintf(done, sizeof done, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                             NULL, T0 + 6));
    tick(m, T0 + 7);
    answer_create(m, take_create(k4), k4, T0 + 8);
    send_exit(m, &ag, done, k4, 4, T0 + 9);
    snprintf(pend, sizeof pend, "%s", submit(m, ADMIN, &ad, "cpu=16",
                                             "batch", NULL, T0 + 10));
    tick(m, T0 + 11);
    skv_manager_free(m);   /* "crash" */
    out_clear();
    m = open_mgr(T0 + 100, 0);
    expect_status(m, &ad, run, "RUNNING", T0 + 101);
    expect_status(m, &ad, prep, "PREPARING", T0 + 102);
    expect_status(m, &ad, done, "TERMINATED", T0 + 103);
    /* the end's columns come back from the database: one UPDATE writes
     * the final status, its times and the exit code (store/sessions.c) */
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, done, &rep, T0 + 103), 0);
    ck_assert_int_eq(rep.session.exit_code, 4);
    ck_assert_int_eq(rep.session.started_ms, T0 + 8);
    ck_assert_int_eq(rep.session.finished_ms, T0 + 9);
    ck_assert_str_eq(rep.session.status_reason, "exited");
    ck_assert_str_eq(rep.session.history[rep.session.n_history - 1].status,
                     "TERMINATED");
    ck_assert_uint_eq(rep.session.n_kernels, 1);
    ck_assert_str_eq(rep.session.kernels[0].status, "TERMINATED");
    ck_assert_int_eq(rep.session.kernels[0].exit_code, 4);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    expect_status(m, &ad, pend, "PENDING", T0 + 104);
    /* nothing is created twice */
    report_two(m, &ag, run, k1, prep, k2, T0 + 110);
    tick(m, T0 + 111);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    expect_status(m, &ad, prep, "RUNNING", T0 + 112);
    expect_status(m, &ad, pend, "PENDING", T0 + 113);
    send_exit(m, &ag, run, k1, 0, T0 + 114);
    expect_status(m, &ad, run, "TERMINATED", T0 + 115);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_restart_resends_create)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96], again[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    take_create(kid);   /* lost in the crash */
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 0);
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0 + 110);
    answer_create(m, take_create(again), again, T0 + 111);
    ck_assert_str_eq(kid, again);
    expect_status(m, &ad, sid, "RUNNING", T0 + 112);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_agent_lost)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96], bsid[64], bkid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1",
                                           "interactive", NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    snprintf(bsid, sizeof bsid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                             NULL, T0 + 4));
    tick(m, T0 + 5);
    answer_create(m, take_create(bkid), bkid, T0 + 6);
    skv_proto_agent_heartbeat hb = {0};
    hb.agent_id = "a1";
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_HEARTBEAT, &hb, &ag,
                          T0 + 500, NULL), 0);
    tick(m, T0 + 1200);
    expect_status(m, &ad, sid, "RUNNING", T0 + 1201);
    ck_assert_int_le(skv_manager_next_tick_ms(m, T0 + 1201), 1000);
    tick(m, T0 + 1600);
    expect_status(m, &ad, sid, "ERROR", T0 + 1601);
    expect_status(m, &ad, bsid, "PENDING", T0 + 1602);   /* "requeue" */
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    ck_assert_uint_eq(st.agents_lost, 1);
    ck_assert_uint_eq(st.agents_alive, 0);
    /* its heartbeat now is refused: it must register again */
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_HEARTBEAT, &hb, &ag,
                          T0 + 1700, NULL), 0);
    ck_assert(take(AGENT, SKV_PROTO_ERROR, NULL, NULL));
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* The next kernel.create: checks its cuda share, returns id and kernel. */
static uint64_t take_gpu_create(char *kid, uint32_t *idx)
{
    skv_proto_kernel_create kc;
    uint64_t id = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &id));
    snprintf(kid, 96, "%s", kc.kernel_id);
    *idx = kc.cluster_idx;
    bool gpu = false;
    for (size_t i = 0; i < kc.n_alloc; i++)
        if (!strncmp(kc.alloc[i].device_id, "cuda", 4)) {
            ck_assert_int_eq(skv_slots_get(kc.alloc[i].slots, "cuda.shares"),
                             500);
            gpu = true;
        }
    ck_assert(gpu);
    ck_assert_int_eq(skv_slots_get(kc.slots, "cpu"), 1000);
    ck_assert_uint_eq(kc.n_cluster_hosts, 2);
    ck_assert_str_eq(kc.cluster_hosts[0].hostname, "main1");
    ck_assert_str_eq(kc.cluster_hosts[1].hostname, "sub1");
    ck_assert_uint_eq(kc.cluster_size, 2);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    return id;
}

/* Answer the kernel.destroy sent for kid with an ack (no kernel.exit). */
static void ack_destroy(skv_manager *m, const char *kid, int64_t now)
{
    skv_proto_kernel_destroy d;
    uint64_t did = 0;
    bool found = false;
    while (!found && take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, &did)) {
        found = !strcmp(d.kernel_id, kid);
        skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    }
    ck_assert(found);
    skv_proto_ack ack = {0};
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_ACK, &ack, NULL, now, &did), 0);
}

START_TEST(test_multi_kernel_gpu)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    skv_proto_device dev[6];
    size_t nd = make_devs(dev, "cpu=8", "mem=16g", 2);
    register_devs(m, &ag, dev, nd, NULL, 0, T0);
    char sid[64], k0[96], k1[96];
    snprintf(sid, sizeof sid, "%s",
             submit_n(m, ADMIN, &ad, "cpu=1,mem=1g,cuda.shares=0.5", "batch",
                      NULL, 2, T0 + 1));
    tick(m, T0 + 2);
    uint32_t i0, i1;
    uint64_t id0 = take_gpu_create(k0, &i0), id1 = take_gpu_create(k1, &i1);
    ck_assert_uint_eq(i0, 1);   /* main1 and sub1 */
    ck_assert_uint_eq(i1, 1);
    answer_create(m, id0, k0, T0 + 3);
    expect_status(m, &ad, sid, "PREPARING", T0 + 4);
    answer_create(m, id1, k1, T0 + 5);
    expect_status(m, &ad, sid, "RUNNING", T0 + 6);
    /* restart: both kernels re-adopted with their device shares */
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 0);
    skv_proto_kernel_report rk[2] = {{0}};
    rk[0].session_id = rk[1].session_id = sid;
    rk[0].kernel_id = k0;
    rk[1].kernel_id = k1;
    register_devs(m, &ag, dev, nd, rk, 2, T0 + 101);
    tick(m, T0 + 102);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    char main_k[96], sub_k[96];
    snprintf(main_k, sizeof main_k, "%s-0", sid);
    snprintf(sub_k, sizeof sub_k, "%s-1", sid);
    ck_assert(!strcmp(k0, main_k) || !strcmp(k1, main_k));
    send_exit(m, &ag, sid, main_k, 5, T0 + 103);
    expect_status(m, &ad, sid, "TERMINATING", T0 + 104);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 2);
    /* the agent removes the sub kernel without an exit event: its ack of
     * kernel.destroy ends it */
    ack_destroy(m, sub_k, T0 + 105);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 106), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 5);
    ck_assert_str_eq(rep.session.kernels[1].status, "TERMINATED");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    /* everything was freed: two whole GPUs fit now */
    out_clear();
    submit(m, ADMIN, &ad, "cpu=1,cuda.device=2", "batch", NULL, T0 + 107);
    tick(m, T0 + 108);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 1);
    free_devs(dev, nd);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_logs_relay)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    skv_proto_logs_request q = {0};
    q.session_id = sid;
    uint64_t user_req = 0;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LOGS, &q, &ad, T0 + 4,
                          &user_req), 0);
    skv_proto_logs_request fwd;
    uint64_t agent_req = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_LOGS, &fwd, &agent_req));
    ck_assert_str_eq(fwd.kernel_id, kid);
    skv_proto_body_free(SKV_PROTO_KERNEL_LOGS, &fwd);
    skv_proto_logs_reply lr = {0};
    lr.session_id = sid;
    lr.kernel_id = kid;
    lr.data = (uint8_t *)"hello\n";
    lr.data_len = 6;
    lr.next_offset = 6;
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_LOGS_REPLY, &lr, NULL, T0 + 5,
                          &agent_req), 0);
    skv_proto_logs_reply got;
    uint64_t got_id = 0;
    ck_assert(take(ADMIN, SKV_PROTO_LOGS_REPLY, &got, &got_id));
    ck_assert_uint_eq(got_id, user_req);
    ck_assert_uint_eq(got.data_len, 6);
    ck_assert_int_eq(memcmp(got.data, "hello\n", 6), 0);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &got);
    /* the agent goes away while a request is outstanding: error */
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LOGS, &q, &ad, T0 + 6,
                          NULL), 0);
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_LOGS, NULL, NULL));
    skv_manager_conn_close(m, AGENT, T0 + 7);
    skv_proto_error er;
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_ESTATE);
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    /* and later requests are refused at once */
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LOGS, &q, &ad, T0 + 8,
                          NULL), 0);
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, NULL, NULL));
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* The error session.logs of sid answers (SKV_ESTATE) into msg. */
static void logs_refused(skv_manager *m, const cred *ad, const char *sid,
                         int64_t now, char *msg, size_t n)
{
    skv_proto_logs_request q = {0};
    q.session_id = (char *)sid;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LOGS, &q, ad, now,
                          NULL), 0);
    skv_proto_error er;
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_ESTATE);
    snprintf(msg, n, "%s", er.message);
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
}

/* session.logs while the kernel's agent is away says so, and that the
 * output comes back with it: disconnected, not back since a manager
 * restart, lost past the heartbeat timeout. A session never placed is
 * still "not placed yet". */
START_TEST(test_logs_agent_away)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], never[64], kid[96], msg[SKV_ERROR_MESSAGE_MAX], want[200];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    snprintf(never, sizeof never, "%s", submit(m, ADMIN, &ad, "cpu=64",
                                               "batch", NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    logs_refused(m, &ad, never, T0 + 4, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "has not been placed yet"), "%s", msg);
    skv_manager_conn_close(m, AGENT, T0 + 5);
    logs_refused(m, &ad, sid, T0 + 6, msg, sizeof msg);
    snprintf(want, sizeof want, "agent 'a1' of kernel '%s' is away "
             "(disconnected); its output can be read again when the agent "
             "reconnects", kid);
    ck_assert_str_eq(msg, want);
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 1000);
    tick(m, T0 + 101);
    logs_refused(m, &ad, sid, T0 + 102, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "agent 'a1' of kernel") &&
                  strstr(msg, "is away (not reconnected since the manager "
                         "started)"), "%s", msg);
    tick(m, T0 + 1200);         /* past the heartbeat timeout: lost */
    logs_refused(m, &ad, sid, T0 + 1201, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "is away (lost: no heartbeat for") ||
                  strstr(msg, "went back to the queue (agent a1 lost)"),
                  "%s", msg);
    ck_assert_ptr_null(strstr(msg, "not been placed"));
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_pending_timeout)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad;
    read_key(&ad, "admin.key");
    skv_proto_admin_resource_group g = {0};
    g.op = SKV_PROTO_ADMIN_UPDATE;
    g.group.name = "default";
    g.group.lost_batch_policy = "requeue";
    g.group.pending_timeout_ms = 500;
    g.group.active = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g, &ad,
                          T0, NULL), 0);
    skv_proto_error er = {0};
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("admin.resource_group: %s", er.message);
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, NULL, NULL));
    char sid[64];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    expect_status(m, &ad, sid, "PENDING", T0 + 3);
    tick(m, T0 + 1100);
    expect_status(m, &ad, sid, "CANCELLED", T0 + 1101);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* A crash between a kernel's exit and the session's final transition, and
 * an agent running a kernel the manager never placed. */
START_TEST(test_restart_repairs)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    send_exit(m, &ag, sid, kid, 7, T0 + 4);
    skv_manager_free(m);
    out_clear();
    char path[128], sql[256];
    sqlite3 *db = NULL;
    snprintf(path, sizeof path, "%s/manager.db", dir);
    ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
    /* as the store writes RUNNING: live with it (core step 3) */
    snprintf(sql, sizeof sql, "UPDATE sessions SET status='RUNNING', "
             "exit_code=NULL, live=1 WHERE id='%s'", sid);
    ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    m = open_mgr(T0 + 100, 0);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 101), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 7);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    /* the agent reports a kernel nobody placed: destroyed */
    skv_proto_kernel_report rk = {0};
    rk.session_id = "s-0000000000000000";
    rk.kernel_id = "s-0000000000000000-0";
    register_agent(m, &ag, "cpu=4", "mem=8g", &rk, 1, T0 + 102);
    skv_proto_kernel_destroy d;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, NULL));
    ck_assert_str_eq(d.kernel_id, "s-0000000000000000-0");
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* After a restart an agent that never registers again is lost after the
 * heartbeat timeout, and its batch session requeued. */
START_TEST(test_restart_agent_gone)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 1000);
    tick(m, T0 + 101);
    expect_status(m, &ad, sid, "RUNNING", T0 + 102);
    tick(m, T0 + 1200);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 1201), 0);
    ck_assert_str_eq(rep.session.status, "PENDING");
    ck_assert_ptr_nonnull(strstr(rep.session.status_reason, "a1"));
    ck_assert_str_eq(rep.session.kernels[0].status, "PENDING");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    ck_assert_uint_eq(st.agents_lost, 1);
    /* it comes back: registered anew, the session runs again on it */
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0 + 1300);
    tick(m, T0 + 1301);
    answer_create(m, take_create(kid), kid, T0 + 1302);
    expect_status(m, &ad, sid, "RUNNING", T0 + 1303);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

static const char *terminate(skv_manager *m, const cred *c, const char *sid,
                             int64_t now)
{
    static char status[32];
    skv_proto_session_terminate t = {(char *)sid, "test", 0};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_TERMINATE, &t, c, now,
                          NULL), 0);
    skv_proto_session_ref ref;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_TERMINATE_REPLY, &ref, NULL));
    snprintf(status, sizeof status, "%s", ref.status);
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    return status;
}

static int error_logs;       /* errors logged (allocation check among them) */

static void error_cb(skv_log_level level, const char *module, const char *msg,
                     void *p)
{
    (void)p;
    (void)module;
    (void)msg;
    error_logs += level >= SKV_LOG_ERROR;
}

static void report_one(skv_manager *m, const cred *ag, char *sid, char *kid,
                       const char *status, int64_t now)
{
    skv_proto_kernel_report rk = {0};
    rk.session_id = sid;
    rk.kernel_id = kid;
    rk.status = (char *)status;
    register_agent(m, ag, "cpu=4", "mem=8g", &rk, 1, now);
}

/* Issue 13: an agent lost past the heartbeat timeout comes back with the
 * kernel of its requeued batch session (across a manager restart): the
 * kernel is adopted (same id, no second create, its CPU held again, no
 * allocation-check error) and its own exit code ends the session. */
START_TEST(test_lost_agent_adopt)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96], big[64], kbig[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    tick(m, T0 + 1200);
    expect_status(m, &ad, sid, "PENDING", T0 + 1201);
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 1300, 1000);
    expect_status(m, &ad, sid, "PENDING", T0 + 1301);
    error_logs = 0;
    skv_set_logger(error_cb, SKV_LOG_ERROR, NULL);
    report_one(m, &ag, sid, kid, "running", T0 + 1400);
    tick(m, T0 + 1401);
    skv_set_logger(NULL, SKV_LOG_WARN, NULL);
    ck_assert_int_eq(error_logs, 0);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 1402), 0);
    ck_assert_str_eq(rep.session.status, "RUNNING");
    ck_assert_str_eq(rep.session.kernels[0].kernel_id, kid);
    ck_assert_str_eq(rep.session.kernels[0].agent_id, "a1");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    /* its CPU is held again: a session wanting all 4 waits for it */
    snprintf(big, sizeof big, "%s", submit(m, ADMIN, &ad, "cpu=4", "batch",
                                           NULL, T0 + 1403));
    tick(m, T0 + 1404);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    send_exit(m, &ag, sid, kid, 7, T0 + 1405);
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 1406), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 7);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    tick(m, T0 + 1407);
    take_create(kbig);
    ck_assert(strncmp(kbig, big, strlen(big)) == 0);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* Issue 13: kernels that cannot come back. One session ended while its
 * agent was away: its kernel is destroyed when the agent returns, and the
 * history says so. Another one's kernel is not reported: its session runs
 * again under a new kernel id (never the old container's). */
START_TEST(test_lost_agent_reject)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char s1[64], k1[96], s2[64], k2[96], again[96];
    snprintf(s1, sizeof s1, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                         NULL, T0 + 1));
    snprintf(s2, sizeof s2, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                         NULL, T0 + 2));
    tick(m, T0 + 3);
    uint64_t c1 = take_create(k1), c2 = take_create(k2);
    answer_create(m, c1, k1, T0 + 4);
    answer_create(m, c2, k2, T0 + 5);
    if (strncmp(k1, s1, strlen(s1))) {   /* creates in either order */
        char t[96];
        snprintf(t, sizeof t, "%s", k1);
        snprintf(k1, sizeof k1, "%s", k2);
        snprintf(k2, sizeof k2, "%s", t);
    }
    tick(m, T0 + 1200);
    expect_status(m, &ad, s1, "PENDING", T0 + 1201);
    expect_status(m, &ad, s2, "PENDING", T0 + 1202);
    ck_assert_str_eq(terminate(m, &ad, s1, T0 + 1203), "CANCELLED");
    report_one(m, &ag, s1, k1, "running", T0 + 1300);
    skv_proto_kernel_destroy d;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, NULL));
    ck_assert_str_eq(d.kernel_id, k1);
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, s1, &rep, T0 + 1301), 0);
    ck_assert_str_eq(rep.session.status, "CANCELLED");
    const char *last = rep.session.history[rep.session.n_history - 1].reason;
    ck_assert_msg(strstr(last, k1) && strstr(last, "destroyed"), "%s", last);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    tick(m, T0 + 1302);
    answer_create(m, take_create(again), again, T0 + 1303);
    ck_assert_str_ne(again, k2);
    ck_assert(strncmp(again, s2, strlen(s2)) == 0);
    expect_status(m, &ad, s2, "RUNNING", T0 + 1304);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_terminate)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64], kid[96];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(kid), kid, T0 + 3);
    /* re-registering with less capacity than in use is accepted (the old
     * description stays while the kernel holds it) */
    skv_proto_kernel_report rk = {0};
    rk.session_id = sid;
    rk.kernel_id = kid;
    register_agent(m, &ag, "cpu=0.5", "mem=8g", &rk, 1, T0 + 3);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    ck_assert_str_eq(terminate(m, &ad, sid, T0 + 4), "TERMINATING");
    skv_proto_kernel_destroy d;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, NULL));
    ck_assert_str_eq(d.kernel_id, kid);
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    send_signal_exit(m, &ag, sid, kid, 15, T0 + 5);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, sid, &rep, T0 + 6), 0);
    ck_assert_str_eq(rep.session.status, "TERMINATED");
    ck_assert_int_eq(rep.session.exit_code, 143);
    ck_assert_ptr_nonnull(strstr(rep.session.status_reason, "terminated by"));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    /* placed on a disconnected agent, never started: CANCELLED */
    skv_manager_conn_close(m, AGENT, T0 + 7);
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 8));
    tick(m, T0 + 9);
    expect_status(m, &ad, sid, "SCHEDULED", T0 + 10);
    ck_assert_str_eq(terminate(m, &ad, sid, T0 + 11), "CANCELLED");
    /* forced: ended at once, the agent told to kill without grace */
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_conn_open(m, AGENT, "test-agent", &e), &e);
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0 + 12);
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 13));
    tick(m, T0 + 14);
    answer_create(m, take_create(kid), kid, T0 + 15);
    skv_proto_session_terminate t = {sid, "now", 1};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_TERMINATE, &t, &ad,
                          T0 + 16, NULL), 0);
    skv_proto_session_ref ref;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_TERMINATE_REPLY, &ref, NULL));
    ck_assert_str_eq(ref.status, "TERMINATED");
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    /* (destroys of the earlier sessions' kernels may be queued first) */
    uint32_t graces[2] = {99, 99};
    int n = 0;
    while (n < 2 && take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, NULL)) {
        if (!strcmp(d.kernel_id, kid))
            graces[n++] = d.grace_ms;
        skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    }
    ck_assert_int_eq(n, 2);
    ck_assert_uint_eq(graces[0], 5000);
    ck_assert_uint_eq(graces[1], 0);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* "label.KEY" constraints place only on agents registered with the label;
 * an unknown constraint key is refused at submit. */
START_TEST(test_label_constraint)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    skv_proto_kv labels[] = {{"net", "ib"}};
    g_labels = labels;
    g_n_labels = 1;
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    skv_proto_kv eth[] = {{"label.net", "eth"}};
    g_constraints = eth;
    g_n_constraints = 1;
    char s_eth[64], s_ib[64], kid[96];
    snprintf(s_eth, sizeof s_eth, "%s", submit(m, ADMIN, &ad, "cpu=1",
                                               "batch", NULL, T0 + 1));
    skv_proto_kv ib[] = {{"label.net", "ib"}};
    g_constraints = ib;
    g_n_constraints = 1;
    snprintf(s_ib, sizeof s_ib, "%s", submit(m, ADMIN, &ad, "cpu=1",
                                             "batch", NULL, T0 + 2));
    tick(m, T0 + 3);
    take_create(kid);
    ck_assert_int_eq(strncmp(kid, s_ib, strlen(s_ib)), 0);
    expect_status(m, &ad, s_eth, "PENDING", T0 + 4);
    /* agent.list shows the labels */
    skv_proto_agent_list al = {0};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_AGENT_LIST, &al, &ad, T0 + 4,
                          NULL), 0);
    skv_proto_agent_list_reply alr;
    ck_assert(take(ADMIN, SKV_PROTO_AGENT_LIST_REPLY, &alr, NULL));
    ck_assert_uint_eq(alr.n_agents, 1);
    ck_assert_uint_eq(alr.agents[0].n_labels, 1);
    ck_assert_str_eq(alr.agents[0].labels[0].key, "net");
    ck_assert_str_eq(alr.agents[0].labels[0].value, "ib");
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &alr);
    /* unknown constraint keys: refused with the list of known ones */
    skv_proto_kv odd[] = {{"color", "blue"}};
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    basic_submit(&s, &k, "cpu=1");
    s.constraints = odd;
    s.n_constraints = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, &ad, T0 + 5,
                          NULL), 0);
    skv_slots_free(k.slots);
    skv_proto_error er;
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, &er, NULL));
    ck_assert_int_eq(er.code, SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(er.message, "label.KEY"));
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* Whether a kernel.destroy for kid is queued to the agent (drains the
 * destroys before it). */
static bool destroy_for(const char *kid)
{
    skv_proto_kernel_destroy d;
    bool found = false;
    while (!found && take(AGENT, SKV_PROTO_KERNEL_DESTROY, &d, NULL)) {
        found = !strcmp(d.kernel_id, kid);
        skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    }
    return found;
}

/* An agent that keeps its connection but answers nothing: after their
 * time a user waiting for logs gets SKV_ETIMEDOUT, an unanswered
 * kernel.create ends its session in ERROR with the reason (and a destroy
 * follows), an unanswered kernel.destroy is sent again. */
START_TEST(test_request_timeouts)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 1000u * 1000u * 1000u);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char s1[64], k1[96], s2[64], k2[96];
    snprintf(s1, sizeof s1, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                         NULL, T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(k1), k1, T0 + 3);
    skv_proto_logs_request q = {0};
    q.session_id = s1;
    uint64_t user_req = 0;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LOGS, &q, &ad, T0 + 4,
                          &user_req), 0);
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_LOGS, NULL, NULL));
    snprintf(s2, sizeof s2, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                         NULL, T0 + 5));
    int64_t t = T0 + 1006;
    tick(m, t);                          /* stamps logs; sends s2's create */
    take_create(k2);
    tick(m, t + 1001);                   /* stamps the create */
    tick(m, t + 29500);
    ck_assert(!take(ADMIN, SKV_PROTO_ERROR, NULL, NULL));
    tick(m, t + 31001);
    skv_proto_error er;
    uint64_t er_id = 0;
    ck_assert(take(ADMIN, SKV_PROTO_ERROR, &er, &er_id));
    ck_assert_int_eq(er.code, SKV_ETIMEDOUT);
    ck_assert_uint_eq(er_id, user_req);
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    expect_status(m, &ad, s2, "PREPARING", t + 31002);
    t += 1001 + 120001;
    tick(m, t);
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, &ad, s2, &rep, t + 1), 0);
    ck_assert_str_eq(rep.session.status, "ERROR");
    ck_assert_ptr_nonnull(strstr(rep.session.status_reason,
                                 "did not answer kernel.create"));
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
    ck_assert(destroy_for(k2));
    /* terminate s1; its agent never acknowledges: the destroy again */
    ck_assert_str_eq(terminate(m, &ad, s1, t + 2), "TERMINATING");
    ck_assert(destroy_for(k1));
    tick(m, t + 1003);                   /* stamps it */
    tick(m, t + 1003 + 59000);
    ck_assert(!destroy_for(k1));
    tick(m, t + 1003 + 60001);
    ck_assert(destroy_for(k1));
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* Submit "cpu=1" depending on dep; returns 0 or the error code. */
static int submit_dep(skv_manager *m, const cred *c, const char *dep,
                      char *sid, int64_t now)
{
    char *deps[] = {(char *)dep};
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    basic_submit(&s, &k, "cpu=1");
    s.dependencies = deps;
    s.n_dependencies = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, c, now,
                          NULL), 0);
    skv_slots_free(k.slots);
    skv_proto_error er = {0};
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL)) {
        int code = er.code;
        skv_proto_body_free(SKV_PROTO_ERROR, &er);
        return code;
    }
    skv_proto_session_ref ref;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY, &ref, NULL));
    snprintf(sid, 64, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    return 0;
}

START_TEST(test_dependencies)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char a[64], b[64], c[64], ka[96], kb[96];
    snprintf(a, sizeof a, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", NULL,
                                       T0 + 1));
    ck_assert_int_eq(submit_dep(m, &ad, a, b, T0 + 2), 0);
    tick(m, T0 + 3);
    answer_create(m, take_create(ka), ka, T0 + 4);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    expect_status(m, &ad, b, "PENDING", T0 + 5);
    send_exit(m, &ag, a, ka, 0, T0 + 6);
    tick(m, T0 + 7);
    answer_create(m, take_create(kb), kb, T0 + 8);
    ck_assert_str_eq(kb, strcat(strcpy(c, b), "-0"));
    send_exit(m, &ag, b, kb, 1, T0 + 9);
    /* a failed or unknown dependency is refused at submit */
    ck_assert_int_eq(submit_dep(m, &ad, b, c, T0 + 10), SKV_EINVAL);
    ck_assert_int_eq(submit_dep(m, &ad, "s-0123456789abcdef", c, T0 + 11),
                     SKV_ENOENT);
    /* a dependency that ended before a restart is met after it */
    ck_assert_int_eq(submit_dep(m, &ad, a, c, T0 + 12), 0);
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 0);
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0 + 101);
    tick(m, T0 + 102);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 1);
    expect_status(m, &ad, c, "PREPARING", T0 + 103);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* A dependant pending across a restart keeps its dependency known to the
 * scheduler when that one ends (the restore path notes the dependants it
 * hands over, mgr_deps.c); once no live session depends on anything, a
 * session's end looks at nothing. */
START_TEST(test_dependencies_restart)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char a[64], b[64], ka[96], kb[96];
    snprintf(a, sizeof a, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch", NULL,
                                       T0 + 1));
    tick(m, T0 + 2);
    answer_create(m, take_create(ka), ka, T0 + 3);
    ck_assert_int_eq(submit_dep(m, &ad, a, b, T0 + 4), 0);
    tick(m, T0 + 5);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    skv_manager_free(m);   /* "crash" */
    out_clear();
    m = open_mgr(T0 + 100, 0);
    ck_assert_uint_eq(m->deps.n, 1);    /* b, from the restore */
    skv_proto_kernel_report rk = {0};
    skv_proto_device_alloc al = {"cpu", slots("cpu=1")};
    rk.session_id = a;
    rk.kernel_id = ka;
    rk.status = "running";
    rk.alloc = &al;
    rk.n_alloc = 1;
    register_agent(m, &ag, "cpu=4", "mem=8g", &rk, 1, T0 + 101);
    skv_slots_free(al.slots);
    expect_status(m, &ad, a, "RUNNING", T0 + 102);
    expect_status(m, &ad, b, "PENDING", T0 + 103);
    send_exit(m, &ag, a, ka, 0, T0 + 104);
    tick(m, T0 + 105);
    answer_create(m, take_create(kb), kb, T0 + 106);
    expect_status(m, &ad, b, "RUNNING", T0 + 107);
    send_exit(m, &ag, b, kb, 0, T0 + 108);
    expect_status(m, &ad, b, "TERMINATED", T0 + 109);
    ck_assert_uint_eq(m->deps.n, 0);    /* b ended: nothing depends */
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* The group policy kernel.create carries (allow_unenforced_shares) is
 * the one in force when the create is built: an admin change between a
 * session's submission and its dispatch is honoured, though the policy
 * is answered from memory (store/ops.c, the admin cache). */
static bool create_allows(void)
{
    skv_proto_kernel_create kc;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, NULL));
    bool allow = kc.allow_unenforced_shares;
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    return allow;
}

static void group_unenforced(skv_manager *m, const cred *ad, const char *v,
                             int64_t now)
{
    skv_proto_admin_resource_group rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_UPDATE;
    rq.group.name = "default";
    rq.group.active = 1;
    rq.group.allow_unenforced_fractions = (char *)v;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP, &rq, ad,
                          now, NULL), 0);
    skv_proto_error er = {0};
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("admin.resource_group: %s", er.message);
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, NULL, NULL));
}

START_TEST(test_create_group_policy)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    submit(m, ADMIN, &ad, "cpu=1", "batch", NULL, T0 + 1);
    tick(m, T0 + 2);
    ck_assert(!create_allows());
    submit(m, ADMIN, &ad, "cpu=1", "batch", NULL, T0 + 3);
    group_unenforced(m, &ad, "on", T0 + 4);
    tick(m, T0 + 5);
    ck_assert(create_allows());
    submit(m, ADMIN, &ad, "cpu=1", "batch", NULL, T0 + 6);
    tick(m, T0 + 7);
    ck_assert(create_allows());
    submit(m, ADMIN, &ad, "cpu=1", "batch", NULL, T0 + 8);
    group_unenforced(m, &ad, "off", T0 + 9);
    tick(m, T0 + 10);
    ck_assert(!create_allows());
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* A connection is authenticated by its first verified request, not by
 * frames that fail verification or decoding. */
START_TEST(test_conn_authenticated)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad, bad;
    read_key(&ad, "admin.key");
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_list l = {0};
    ck_assert_int_eq(skv_manager_conn_authenticated(m, ADMIN), 0);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, USER2), 0);
    /* wrong secret, garbage: still not authenticated */
    bad = ad;
    bad.sk[0] = bad.sk[0] == 'A' ? 'B' : 'A';
    ck_assert_int_lt(feed(m, USER2, SKV_PROTO_SESSION_LIST, &l, &bad, T0,
                          NULL), 0);
    ck_assert_int_lt(skv_manager_handle_frame(m, USER2, "\x81\xa1x", 3, T0,
                                              &e), 0);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, USER2), 0);
    out_clear();
    /* a verified request authenticates its connection only */
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LIST, &l, &ad, T0,
                          NULL), 0);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, ADMIN), 1);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, USER2), 0);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, 424242), SKV_ENOENT);
    ck_assert_int_eq(skv_manager_conn_authenticated(NULL, ADMIN), SKV_EINVAL);
    skv_manager_conn_close(m, ADMIN, T0);
    ck_assert_int_eq(skv_manager_conn_authenticated(m, ADMIN), SKV_ENOENT);
    out_clear();
    skv_manager_free(m);
    rm_tree();
}
END_TEST

START_TEST(test_state_names)
{
    skv_manager_session_state s;
    for (int i = 0; i <= SKV_SESSION_ERROR; i++) {
        const char *n = skv_manager_session_state_name(
            (skv_manager_session_state)i);
        ck_assert_str_ne(n, "?");
        ck_assert_int_eq(skv_manager_session_state_parse(&s, n, NULL), 0);
        ck_assert_int_eq(s, i);
    }
    ck_assert_str_eq(skv_manager_session_state_name(
                         (skv_manager_session_state)42), "?");
    ck_assert_int_eq(skv_manager_session_state_parse(&s, "RUN", NULL),
                     SKV_EINVAL);
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_manager *m = NULL;
    o.data_dir = "relative";
    ck_assert_int_eq(skv_manager_open(&m, &o, send_cb, NULL, T0, NULL),
                     SKV_EINVAL);
    o.version = 99;
    ck_assert_int_eq(skv_manager_open(&m, &o, send_cb, NULL, T0, NULL),
                     SKV_EVERSION);
    ck_assert_ptr_null(m);
}
END_TEST

/* Cluster networking: the agent's subnet (stable across a restart) and
 * routes in the registration reply; a multi-kernel session's kernels get
 * network "cluster", the session's /27 on the agent, consecutive addresses
 * and one SSH seed; the create reply's address and ports show up in
 * session.show. */
START_TEST(test_cluster_network)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    skv_proto_device dev[2];
    size_t nd = make_devs(dev, "cpu=4", "mem=8g", 0);
    skv_proto_agent_register r = {0};
    r.agent_id = "a1";
    r.address = "10.77.0.2";
    r.devices = dev;
    r.n_devices = nd;
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_REGISTER, &r, &ag, T0,
                          NULL), 0);
    skv_proto_agent_register_reply rep = {0};
    ck_assert(take(AGENT, SKV_PROTO_AGENT_REGISTER_REPLY, &rep, NULL));
    ck_assert_str_eq(rep.subnet, "10.128.0.0/20");
    ck_assert_str_eq(rep.cluster_cidr, "10.128.0.0/9");
    ck_assert_uint_eq(rep.n_routes, 1);
    ck_assert_str_eq(rep.routes[0].via, "10.77.0.2");
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
    /* an agent without route_deltas: the whole table, at the tick */
    tick(m, T0 + 1);
    ck_assert_int_ge(count_type(AGENT, SKV_PROTO_AGENT_ROUTES), 1);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_AGENT_ROUTES_DELTA), 0);
    const char *sid = submit_n(m, ADMIN, &ad, "cpu=1", "batch", NULL, 2,
                               T0 + 1);
    char s[64];
    snprintf(s, sizeof s, "%s", sid);
    tick(m, T0 + 2);
    skv_proto_kernel_create kc[2];
    uint64_t id[2];
    for (int i = 0; i < 2; i++)
        ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc[i], &id[i]));
    for (int i = 0; i < 2; i++) {
        ck_assert_str_eq(kc[i].network, "cluster");
        ck_assert_str_eq(kc[i].subnet, "10.128.0.0/27");
        ck_assert_uint_eq(kc[i].ssh_seed_len, 32);
        ck_assert_int_eq(memcmp(kc[i].ssh_seed, kc[0].ssh_seed, 32), 0);
        ck_assert_uint_eq(kc[i].n_cluster_hosts, 2);
        ck_assert_str_eq(kc[i].cluster_hosts[0].address, "10.128.0.2");
        ck_assert_str_eq(kc[i].cluster_hosts[1].address, "10.128.0.3");
    }
    char *pub[] = {"tcp:22=30001"};
    skv_proto_kernel_create_reply cr = {kc[0].kernel_id, kc[0].kernel_id,
                                        "10.128.0.2", pub, 1};
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_KERNEL_CREATE_REPLY, &cr, NULL,
                          T0 + 3, &id[0]), 0);
    skv_proto_session_show_reply sr;
    ck_assert_int_eq(show(m, ADMIN, &ad, s, &sr, T0 + 4), 0);
    ck_assert_uint_eq(sr.session.n_kernels, 2);
    ck_assert_str_eq(sr.session.kernels[0].address, "10.128.0.2");
    ck_assert_uint_eq(sr.session.kernels[0].n_published, 1);
    ck_assert_str_eq(sr.session.kernels[0].published[0], "tcp:22=30001");
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sr);
    for (int i = 0; i < 2; i++)
        skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc[i]);
    /* The same subnet after a restart. */
    skv_manager_free(m);
    out_clear();
    m = open_mgr(T0 + 100, 0);
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_REGISTER, &r, &ag,
                          T0 + 101, NULL), 0);
    ck_assert(take(AGENT, SKV_PROTO_AGENT_REGISTER_REPLY, &rep, NULL));
    ck_assert_str_eq(rep.subnet, "10.128.0.0/20");
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
    free_devs(dev, nd);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* decide -> persist -> send: no frame leaves while a transaction is open
 * (a pass's kernel.create waits for the commit that recorded it PREPARING,
 * a cluster session's subnets are recorded with its placement), and what
 * a rolled-back transaction would have announced never leaves. */
START_TEST(test_outbox_after_commit)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    g_watch = m;
    sent_in_tx = 0;
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", submit_n(m, ADMIN, &ad, "cpu=1", "batch",
                                             NULL, 2, T0 + 1));
    tick(m, T0 + 2);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 2);
    ck_assert_int_eq(sent_in_tx, 0);
    char subnet[32];
    ck_assert_int_eq(skv__mgr_store_session_subnet(m->store, sid, "a1",
                                                   subnet, sizeof subnet,
                                                   NULL), 1);
    ck_assert_str_eq(subnet, "10.128.0.0/27");
    /* A reply made inside a transaction waits for its commit... */
    out_clear();
    skv_error e = SKV_ERROR_INIT;
    skv_proto_session_ref ref = {sid, "RUNNING"};
    SKV_CK_OK(skv__mgr_begin(m, &e), &e);
    ck_assert_int_eq(skv__mgr_reply(m, ADMIN, 77,
                                    SKV_PROTO_SESSION_TERMINATE_REPLY, &ref),
                     0);
    ck_assert_uint_eq(n_out, 0);
    SKV_CK_OK(skv__mgr_commit(m, &e), &e);
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_TERMINATE_REPLY, &ref, NULL));
    skv_proto_body_free(SKV_PROTO_SESSION_TERMINATE_REPLY, &ref);
    /* ...and after a rollback becomes an error; our requests are not
     * sent and leave the request table. */
    skv_proto_session_ref ref2 = {sid, "RUNNING"};
    size_t reqs = m->n_reqs;
    SKV_CK_OK(skv__mgr_begin(m, &e), &e);
    ck_assert_int_eq(skv__mgr_reply(m, ADMIN, 78,
                                    SKV_PROTO_SESSION_TERMINATE_REPLY, &ref2),
                     0);
    skv_proto_kernel_destroy d = {sid, "nope", "test", 0};
    ck_assert_int_eq(skv__mgr_request(m, AGENT, SKV__REQ_DESTROY,
                                      SKV_PROTO_KERNEL_DESTROY, &d, "nope", 0,
                                      0), 0);
    ck_assert_uint_eq(m->n_reqs, reqs + 1);
    ck_assert_uint_eq(n_out, 0);
    skv__mgr_rollback(m);
    ck_assert_uint_eq(m->n_reqs, reqs);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_TERMINATE_REPLY), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_ERROR), 1);
    ck_assert_int_eq(sent_in_tx, 0);
    g_watch = NULL;
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* A submission fed without committing the batch (no reply yet). */
static void submit_pending_ack(skv_manager *m, const cred *c, int64_t now)
{
    skv_proto_kernel_spec k;
    skv_proto_session_submit s;
    basic_submit(&s, &k, "cpu=1");
    no_flush = true;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, c, now,
                          NULL), 0);
    no_flush = false;
    skv_slots_free(k.slots);
}

static uint64_t pending_sessions(skv_manager *m)
{
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, NULL), NULL);
    return st.sessions_by_state[SKV_SESSION_PENDING];
}

/* Submissions share one transaction until the batch commits (tick, flush
 * or another request); none is acknowledged before that commit, so a
 * manager killed in between loses only unacknowledged ones. */
START_TEST(test_submit_batch)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ad;
    read_key(&ad, "admin.key");
    for (int i = 0; i < 3; i++)
        submit_pending_ack(m, &ad, T0 + 1);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 0);
    ck_assert(skv__db_in_transaction(m->store));
    ck_assert_int_eq(skv_manager_next_tick_ms(m, T0 + 1), 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_flush(m, T0 + 2, &e), &e);
    ck_assert(!skv__db_in_transaction(m->store));
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 3);
    /* Another request commits the batch first and sees it. */
    out_clear();
    submit_pending_ack(m, &ad, T0 + 3);
    submit_pending_ack(m, &ad, T0 + 3);
    skv_proto_session_list l = {0};
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_SESSION_LIST, &l, &ad, T0 + 4,
                          NULL), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 2);
    skv_proto_session_list_reply lr;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_LIST_REPLY, &lr, NULL));
    ck_assert_uint_eq(lr.total, 5);
    skv_proto_body_free(SKV_PROTO_SESSION_LIST_REPLY, &lr);
    skv_manager_free(m);
    out_clear();
    /* kill -9 with a batch open: 2 acknowledged, 2 not. */
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        skv_manager *k = open_mgr(T0 + 10, 0);
        submit_pending_ack(k, &ad, T0 + 11);
        submit_pending_ack(k, &ad, T0 + 11);
        skv_manager_flush(k, T0 + 12, NULL);
        int acked = count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY);
        submit_pending_ack(k, &ad, T0 + 13);
        submit_pending_ack(k, &ad, T0 + 13);
        int later = count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY);
        _exit(acked == 2 && later == 2 ? 0 : 1);  /* like kill -9 */
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    m = open_mgr(T0 + 20, 0);
    ck_assert_uint_eq(pending_sessions(m), 5 + 2);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* ---- route deltas (issue 14) ---------------------------------------- */
#define RA1 11
#define RA2 12
#define RA3 13

static void route_reg(skv_manager *m, uint64_t conn, const char *id,
                      const char *addr, bool deltas, int64_t now,
                      size_t want_routes)
{
    char rel[64];
    cred c;
    snprintf(rel, sizeof rel, "agents/%s.key", id);
    read_key(&c, rel);
    skv_proto_device dev[2];
    size_t nd = make_devs(dev, "cpu=4", "mem=8g", 0);
    skv_proto_agent_register r = {0};
    r.agent_id = (char *)id;
    r.address = (char *)addr;
    r.devices = dev;
    r.n_devices = nd;
    r.route_deltas = deltas;
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_AGENT_REGISTER, &r, &c, now,
                          NULL), 0);
    free_devs(dev, nd);
    skv_proto_agent_register_reply rep = {0};
    ck_assert(take(conn, SKV_PROTO_AGENT_REGISTER_REPLY, &rep, NULL));
    ck_assert_uint_eq(rep.n_routes, want_routes);   /* the full table */
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
}

static void route_hb(skv_manager *m, uint64_t conn, const char *id,
                     int64_t now)
{
    char rel[64];
    cred c;
    snprintf(rel, sizeof rel, "agents/%s.key", id);
    read_key(&c, rel);
    skv_proto_agent_heartbeat hb = {0};
    hb.agent_id = (char *)id;
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_AGENT_HEARTBEAT, &hb, &c, now,
                          NULL), 0);
}

/* "-10.0.0.1 a1 +10.0.0.2 a2 ": the one delta frame queued for conn. */
static void route_delta(uint64_t conn, const char *want)
{
    int n = count_type(conn, SKV_PROTO_AGENT_ROUTES_DELTA);
    ck_assert_msg(n == 1, "want one delta (%s), got %d", want, n);
    ck_assert_int_eq(count_type(conn, SKV_PROTO_AGENT_ROUTES), 0);
    skv_proto_agent_routes_delta d;
    ck_assert(take(conn, SKV_PROTO_AGENT_ROUTES_DELTA, &d, NULL));
    char got[512] = "";
    size_t o = 0;
    for (size_t i = 0; i < d.n_removed; i++)
        o += (size_t)snprintf(got + o, sizeof got - o, "-%s %s ",
                              d.removed[i].via, d.removed[i].agent_id);
    for (size_t i = 0; i < d.n_added; i++)
        o += (size_t)snprintf(got + o, sizeof got - o, "+%s %s ",
                              d.added[i].via, d.added[i].agent_id);
    ck_assert_str_eq(got, want);
    skv_proto_body_free(SKV_PROTO_AGENT_ROUTES_DELTA, &d);
}

static size_t route_full(uint64_t conn)
{
    ck_assert_int_eq(count_type(conn, SKV_PROTO_AGENT_ROUTES), 1);
    ck_assert_int_eq(count_type(conn, SKV_PROTO_AGENT_ROUTES_DELTA), 0);
    skv_proto_agent_routes r;
    ck_assert(take(conn, SKV_PROTO_AGENT_ROUTES, &r, NULL));
    size_t n = r.n_routes;
    skv_proto_body_free(SKV_PROTO_AGENT_ROUTES, &r);
    return n;
}

/* Registrations send only what changed, once per tick, to agents that
 * apply deltas (the full table once, in the register reply); older agents
 * get the whole table per tick with changes; a lost agent's route is
 * withdrawn, a moved one's replaced, a repeated registration sends
 * nothing. (Before: every registration sent the whole table to every
 * agent, N^2 frames.) */
START_TEST(test_route_deltas)
{
    setup_dir();
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    o.data_dir = dir;
    o.bootstrap_agents = "a1,a2,a3";
    o.heartbeat_timeout_ms = 1000;
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, T0, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, RA1, "a1", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, RA2, "a2", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, RA3, "a3", &e), &e);
    route_reg(m, RA1, "a1", "10.77.0.1:6001", true, T0, 1);
    route_reg(m, RA2, "a2", "10.77.0.2:6001", true, T0, 2);
    ck_assert_int_eq(count_type(RA1, SKV_PROTO_AGENT_ROUTES_DELTA), 0);
    tick(m, T0 + 1);    /* both registrations in one delta */
    route_delta(RA1, "+10.77.0.1 a1 +10.77.0.2 a2 ");
    route_delta(RA2, "+10.77.0.1 a1 +10.77.0.2 a2 ");
    /* a3 is an older agent (no route_deltas) */
    route_reg(m, RA3, "a3", "10.77.0.3:6001", false, T0 + 2, 3);
    tick(m, T0 + 3);
    route_delta(RA1, "+10.77.0.3 a3 ");
    route_delta(RA2, "+10.77.0.3 a3 ");
    ck_assert_uint_eq(route_full(RA3), 3);
    /* registering again from the same host: nothing to say */
    route_reg(m, RA2, "a2", "10.77.0.2:6002", true, T0 + 4, 3);
    tick(m, T0 + 5);
    ck_assert_int_eq(count_type(RA1, SKV_PROTO_AGENT_ROUTES_DELTA), 0);
    ck_assert_int_eq(count_type(RA3, SKV_PROTO_AGENT_ROUTES), 0);
    /* a2 stops heartbeating: lost, its route withdrawn */
    route_hb(m, RA1, "a1", T0 + 800);
    route_hb(m, RA3, "a3", T0 + 800);
    tick(m, T0 + 1100);
    route_delta(RA1, "-10.77.0.2 a2 ");
    ck_assert_int_eq(count_type(RA2, SKV_PROTO_AGENT_ROUTES_DELTA), 0);
    ck_assert_uint_eq(route_full(RA3), 2);
    /* a1 moves host: replaced; a2 comes back (table without itself
     * lost: a1, a3 and a2 again) */
    route_reg(m, RA1, "a1", "10.77.0.11:6001", true, T0 + 1200, 2);
    route_reg(m, RA2, "a2", "10.77.0.2:6001", true, T0 + 1200, 3);
    tick(m, T0 + 1201);
    route_delta(RA1, "-10.77.0.1 a1 +10.77.0.11 a1 +10.77.0.2 a2 ");
    route_delta(RA2, "-10.77.0.1 a1 +10.77.0.11 a1 +10.77.0.2 a2 ");
    ck_assert_uint_eq(route_full(RA3), 3);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* ---- kernel events in the batch (issue 14) --------------------------- */
/* Two sessions placed on a1 and their kernels running (each step flushed). */
static void two_running(skv_manager *m, const cred *ag, const cred *ad,
                        char sid[2][64], char kid[2][96], int64_t now)
{
    register_agent(m, ag, "cpu=2", "mem=8g", NULL, 0, now);
    for (int i = 0; i < 2; i++)
        snprintf(sid[i], 64, "%s", submit(m, ADMIN, ad, "cpu=1", "batch",
                                          NULL, now + 1));
    tick(m, now + 2);
    for (int i = 0; i < 2; i++) {
        uint64_t id = take_create(kid[i]);
        answer_create(m, id, kid[i], now + 3);
        if (strncmp(kid[i], sid[i], strlen(sid[i])))
            snprintf(sid[i], 64, "%.*s", (int)strlen(sid[1 - i]), kid[i]);
    }
    out_clear();
}

static bool sched_live(skv_manager *m, const char *sid)
{
    skv_sched_state ss;
    return skv_sched_session_state(&ss, m->sched, sid, NULL) == 0 &&
           (ss == SKV_SCHED_SCHEDULED || ss == SKV_SCHED_RUNNING);
}

/* kernel.exit events join the open batch: their state changes commit
 * together, and what follows from them (the kernel.destroy, the
 * scheduler freeing the capacity) waits for that commit. A manager
 * killed before it sent nothing about them and recorded nothing. */
START_TEST(test_kernel_events_batch)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);    /* writes the keys */
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    skv_manager_free(m);
    char sid[2][64], kid[2][96];
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {     /* killed with both exits in the open batch */
        skv_manager *k = open_mgr(T0, 0);
        two_running(k, &ag, &ad, sid, kid, T0);
        no_flush = true;
        for (int i = 0; i < 2; i++)
            send_exit(k, &ag, sid[i], kid[i], 0, T0 + 4);
        bool held = count_type(AGENT, SKV_PROTO_KERNEL_DESTROY) == 0 &&
                    skv__db_in_transaction(k->store);
        _exit(held ? 0 : 1);   /* like kill -9 */
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "a kernel.destroy left before the exits were committed");
    m = open_mgr(T0 + 10, 0);
    skv_manager_stats stats = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &stats, NULL), NULL);
    ck_assert_uint_eq(stats.sessions_by_state[SKV_SESSION_RUNNING], 2);
    ck_assert_uint_eq(stats.sessions_by_state[SKV_SESSION_TERMINATED], 0);
    skv_manager_free(m);
    rm_tree();
    out_clear();
    /* The same without the kill: one commit, then everything follows. */
    setup_dir();
    m = open_mgr(T0, 0);
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    two_running(m, &ag, &ad, sid, kid, T0);
    no_flush = true;
    for (int i = 0; i < 2; i++)
        send_exit(m, &ag, sid[i], kid[i], 0, T0 + 4);
    no_flush = false;
    ck_assert(skv__db_in_transaction(m->store));
    ck_assert_int_eq(skv_manager_next_tick_ms(m, T0 + 4), 0);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    ck_assert(sched_live(m, sid[0]) && sched_live(m, sid[1]));
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_flush(m, T0 + 5, &e), &e);
    ck_assert(!skv__db_in_transaction(m->store));
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 2);
    ck_assert(!sched_live(m, sid[0]) && !sched_live(m, sid[1]));
    for (int i = 0; i < 2; i++)
        expect_status(m, &ad, sid[i], "TERMINATED", T0 + 6);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* A batch whose commit fails (here a deferred foreign key breaks it):
 * the exit in it is not recorded, no kernel.destroy leaves, the scheduler
 * keeps the capacity, and the agent's connection is closed so that it
 * registers again; its report then ends the kernel for real. */
START_TEST(test_kernel_events_batch_fails)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    char sid[2][64], kid[2][96];
    two_running(m, &ag, &ad, sid, kid, T0);
    no_flush = true;
    send_exit(m, &ag, sid[0], kid[0], 0, T0 + 4);
    no_flush = false;
    skv_error e = SKV_ERROR_INIT;
    ck_assert(skv__db_in_transaction(m->store));
    SKV_CK_OK(skv__db_exec(m->store, "PRAGMA defer_foreign_keys=ON", &e), &e);
    SKV_CK_OK(skv__db_exec(m->store, "INSERT INTO session_history(session_id,"
                           "status,ts_ms) VALUES('nope','X',0)", &e), &e);
    ck_assert_int_ne(skv_manager_flush(m, T0 + 5, &e), 0);
    ck_assert(!skv__db_in_transaction(m->store));
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_DESTROY), 0);
    ck_assert(sched_live(m, sid[0]));
    ck_assert(skv__mgr_conn_find(m, AGENT)->dead);
    expect_status(m, &ad, sid[0], "RUNNING", T0 + 6);
    tick(m, T0 + 7);
    ck_assert_ptr_null(skv__mgr_conn_find(m, AGENT));
    /* The agent comes back and reports only the kernel still running. */
    SKV_CK_OK(skv_manager_conn_open(m, AGENT, "test-agent", &e), &e);
    skv_proto_kernel_report rk = {0};
    rk.kernel_id = kid[1];
    rk.session_id = sid[1];
    register_agent(m, &ag, "cpu=2", "mem=8g", &rk, 1, T0 + 8);
    expect_status(m, &ad, sid[0], "TERMINATED", T0 + 9);
    expect_status(m, &ad, sid[1], "RUNNING", T0 + 9);
    ck_assert(!sched_live(m, sid[0]));
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* ---- idle and lifetime limits (mgr_idle.c, mgr_reclaim.c) ----------------- */

/* admin.resource_group update of "default": idle and lifetime limits (0
 * keeps, < 0 clears). */
static void group_limits(skv_manager *m, const cred *ad, int64_t idle,
                         int64_t life, int64_t now)
{
    skv_proto_admin_resource_group g = {0};
    g.op = SKV_PROTO_ADMIN_UPDATE;
    g.group.name = "default";
    g.group.active = 1;
    g.group.idle_timeout_ms = idle;
    g.group.max_lifetime_ms = life;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP, &g, ad,
                          now, NULL), 0);
    skv_proto_error er = {0};
    if (take(ADMIN, SKV_PROTO_ERROR, &er, NULL))
        ck_abort_msg("admin.resource_group: %s", er.message);
    skv_proto_admin_resource_group_reply r;
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &r, NULL));
    ck_assert_uint_eq(r.n_groups, 1);
    if (idle)
        ck_assert_int_eq(r.groups[0].idle_timeout_ms, idle < 0 ? 0 : idle);
    if (life)
        ck_assert_int_eq(r.groups[0].max_lifetime_ms, life < 0 ? 0 : life);
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, &r);
}

/* Sessions submitted on conn as c, placed and running: ids in sid[],
 * their kernels' in kid[]. */
static void run_n(skv_manager *m, uint64_t conn, const cred *c, size_t n,
                  char sid[][64], char kid[][96], int64_t now)
{
    for (size_t i = 0; i < n; i++)
        snprintf(sid[i], 64, "%s", submit(m, conn, c, "cpu=1", "interactive",
                                          NULL, now));
    tick(m, now + 1);
    for (size_t i = 0; i < n; i++) {
        skv_proto_kernel_create kc;
        uint64_t id = 0;
        ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &id));
        size_t j = 0;
        while (j < n && strcmp(sid[j], kc.session_id))
            j++;
        ck_assert_uint_lt(j, n);
        snprintf(kid[j], 96, "%s", kc.kernel_id);
        skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
        answer_create(m, id, kid[j], now + 2);
    }
    for (size_t i = 0; i < n; i++)
        expect_status(m, c, sid[i], "RUNNING", now + 3);
}

/* The proxy's report (an admin key's); rc of the reply. */
static int activity(skv_manager *m, uint64_t conn, const cred *c,
                    char **ids, size_t n, int64_t now)
{
    skv_proto_app_activity a = {ids, n};
    ck_assert_int_eq(feed(m, conn, SKV_PROTO_APP_ACTIVITY, &a, c, now, NULL),
                     0);
    skv_proto_error er = {0};
    if (take(conn, SKV_PROTO_ERROR, &er, NULL)) {
        int code = er.code;
        skv_proto_body_free(SKV_PROTO_ERROR, &er);
        return code;
    }
    ck_assert(take(conn, SKV_PROTO_ACK, NULL, NULL));
    return 0;
}

static void cpu_stats(skv_manager *m, const cred *ag, const char *sid,
                      const char *kid, uint64_t usec, int64_t now)
{
    skv_proto_kernel_stats k = {0};
    k.session_id = (char *)sid;
    k.kernel_id = (char *)kid;
    k.cpu_usec = usec;
    skv_proto_agent_stats s = {"a1", &k, 1};
    ck_assert_int_eq(feed(m, AGENT, SKV_PROTO_AGENT_STATS, &s, ag, now,
                          NULL), 0);
}

/* Stopped by the manager, the reason holding want (and want2). */
static void expect_reclaimed(skv_manager *m, const cred *c, const char *sid,
                             const char *want, const char *want2,
                             int64_t now)
{
    skv_proto_session_show_reply rep;
    ck_assert_int_eq(show(m, ADMIN, c, sid, &rep, now), 0);
    const char *why = rep.session.status_reason;
    ck_assert_msg(!strcmp(rep.session.status, "TERMINATING") ||
                  !strcmp(rep.session.status, "TERMINATED"), "%s is %s",
                  sid, rep.session.status);
    ck_assert_msg(why && strstr(why, want) && strstr(why, want2),
                  "%s: reason '%s' lacks '%s' / '%s'", sid, why ? why : "",
                  want, want2);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &rep);
}

static uint64_t reclaimed(skv_manager *m, bool idle)
{
    skv_manager_stats st = {.version = SKV_MANAGER_STATS_VERSION};
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_get_stats(m, &st, &e), &e);
    return idle ? st.reclaimed_idle : st.reclaimed_lifetime;
}

/* idle_timeout of the group: a session with neither proxy traffic nor
 * CPU use is terminated once idle that long; one the proxy reports and
 * one whose kernel is busy are not, until they go quiet. */
START_TEST(test_idle_timeout)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 600000);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    group_limits(m, &ad, 2000, 0, T0 + 1);
    char sid[3][64], kid[3][96];
    run_n(m, ADMIN, &ad, 3, sid, kid, T0 + 10);   /* idle, proxy, cpu */
    /* 1 % of a CPU for the first, 50 % for the third, every 500 ms */
    int64_t t = T0 + 20;
    uint64_t u0 = 0, u2 = 0;
    char *served[] = {sid[1]};
    for (; t < T0 + 6000; t += 500) {
        ck_assert_int_eq(activity(m, ADMIN, &ad, served, 1, t), 0);
        cpu_stats(m, &ag, sid[0], kid[0], u0 += 5000, t);
        cpu_stats(m, &ag, sid[2], kid[2], u2 += 250000, t);
        tick(m, t);
    }
    expect_reclaimed(m, &ad, sid[0], "idle for 2s", "resource group "
                     "'default' idle_timeout", t);
    expect_status(m, &ad, sid[1], "RUNNING", t);
    expect_status(m, &ad, sid[2], "RUNNING", t);
    ck_assert_uint_eq(reclaimed(m, true), 1);
    /* a user cannot claim traffic for a session */
    cred al;
    make_user(m, &ad, "alice", &al, t);
    ck_assert_int_eq(activity(m, USER2, &al, served, 1, t + 2), SKV_EPERM);
    /* quiet from now on: both go at their idle_timeout */
    tick(m, t + 1000);
    expect_status(m, &ad, sid[1], "RUNNING", t + 1001);
    tick(m, t + 2200);
    expect_reclaimed(m, &ad, sid[1], "idle for 2s", "no app proxy traffic",
                     t + 2201);
    expect_reclaimed(m, &ad, sid[2], "idle for 2s", "CPU below 5%",
                     t + 2202);
    ck_assert_uint_eq(reclaimed(m, true), 3);
    ck_assert_uint_eq(reclaimed(m, false), 0);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* The tick's pass records its placements in the batch: a failed commit
 * sends no kernel.create and puts the session placed in it back to
 * pending, and the next pass places it again. */
START_TEST(test_pass_batch_fails)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 0);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=2", "mem=8g", NULL, 0, T0);
    char sid[64];
    snprintf(sid, sizeof sid, "%s", submit(m, ADMIN, &ad, "cpu=1", "batch",
                                           NULL, T0 + 1));
    out_clear();
    submit_pending_ack(m, &ad, T0 + 2);   /* opens the batch */
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv__db_exec(m->store, "PRAGMA defer_foreign_keys=ON", &e), &e);
    SKV_CK_OK(skv__db_exec(m->store, "INSERT INTO session_history(session_id,"
                           "status,ts_ms) VALUES('nope','X',0)", &e), &e);
    tick(m, T0 + 3);
    ck_assert(!skv__db_in_transaction(m->store));
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY), 0);
    ck_assert_int_eq(count_type(ADMIN, SKV_PROTO_ERROR), 1);   /* not recorded */
    out_clear();
    skv_sched_state ss;
    ck_assert_int_eq(skv_sched_session_state(&ss, m->sched, sid, NULL), 0);
    ck_assert_int_eq(ss, SKV_SCHED_PENDING);
    expect_status(m, &ad, sid, "PENDING", T0 + 4);
    tick(m, T0 + 5);
    ck_assert_int_eq(count_type(AGENT, SKV_PROTO_KERNEL_CREATE), 1);
    expect_status(m, &ad, sid, "PREPARING", T0 + 6);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

/* max_lifetime of the group ends a busy session; a policy's idle_timeout
 * applies to its users' sessions; the metric counts both reasons. */
START_TEST(test_group_lifetime_policy_idle)
{
    setup_dir();
    skv_manager *m = open_mgr(T0, 600000);
    cred ag, ad, al;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, "cpu=4", "mem=8g", NULL, 0, T0);
    group_limits(m, &ad, 0, 1500, T0 + 1);
    char sid[1][64], kid[1][96];
    run_n(m, ADMIN, &ad, 1, sid, kid, T0 + 10);
    char *served[] = {sid[0]};
    int64_t t = T0 + 20;
    for (; t < T0 + 3000; t += 500) {
        ck_assert_int_eq(activity(m, ADMIN, &ad, served, 1, t), 0);
        tick(m, t);
    }
    expect_reclaimed(m, &ad, sid[0], "maximum lifetime reached",
                     "resource group 'default' max_lifetime", t);
    ck_assert_uint_eq(reclaimed(m, false), 1);
    group_limits(m, &ad, 0, -1, t);
    /* a policy with idle_timeout for alice */
    skv_proto_admin_resource_policy p = {0};
    p.op = SKV_PROTO_ADMIN_CREATE;
    p.policy.name = "short";
    p.policy.idle_timeout_ms = 1000;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_RESOURCE_POLICY, &p, &ad,
                          t, NULL), 0);
    skv_proto_admin_resource_policy_reply pr;
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, &pr, NULL));
    ck_assert_uint_eq(pr.policies[0].idle_timeout_ms, 1000);
    skv_proto_body_free(SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, &pr);
    make_user(m, &ad, "alice", &al, t);
    skv_proto_admin_user u = {0};
    u.op = SKV_PROTO_ADMIN_UPDATE;
    u.user.name = "alice";
    u.user.resource_policy = "short";
    u.user.active = 1;
    ck_assert_int_eq(feed(m, ADMIN, SKV_PROTO_ADMIN_USER, &u, &ad, t + 2,
                          NULL), 0);
    ck_assert(take(ADMIN, SKV_PROTO_ADMIN_USER_REPLY, NULL, NULL));
    run_n(m, USER2, &al, 1, sid, kid, t + 10);
    tick(m, t + 2000);
    expect_reclaimed(m, &ad, sid[0], "idle for", "resource policy 'short' "
                     "idle_timeout", t + 2001);
    ck_assert_uint_eq(reclaimed(m, true), 1);
    /* the metric, by reason */
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    SKV_CK_OK(skv_manager_metrics_collect(m, reg, t + 2002, &e), &e);
    char *text = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_metrics_render(&text, &len, reg, &e), &e);
    ck_assert_msg(strstr(text, "sokovan_sessions_reclaimed_total{reason="
                               "\"idle\"} 1\n") &&
                  strstr(text, "sokovan_sessions_reclaimed_total{reason="
                               "\"lifetime\"} 1\n"), "%s", text);
    skv_free(text);
    skv_metrics_free(reg);
    skv_manager_free(m);
    rm_tree();
}
END_TEST

#include "manager_index.h"
#include "manager_units_conns.h"
#include "manager_pg_units.h"

Suite *skv_test_suite_manager(void);
Suite *skv_test_suite_manager(void)
{
    Suite *s = suite_create("manager");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_state_names);
    tcase_add_test(tc, test_lifecycle);
    tcase_add_test(tc, test_exit_end_one_unit);
    tcase_add_test(tc, test_session_ids);
    tcase_add_test(tc, test_refused_frames);
    tcase_add_test(tc, test_conn_authenticated);
    tcase_add_test(tc, test_users_isolated);
    tcase_add_test(tc, test_pending_reason);
    tcase_add_test(tc, test_idempotent_submit);
    tcase_add_test(tc, test_restart);
    tcase_add_test(tc, test_restart_resends_create);
    tcase_add_test(tc, test_agent_lost);
    tcase_add_test(tc, test_multi_kernel_gpu);
    tcase_add_test(tc, test_logs_relay);
    tcase_add_test(tc, test_logs_agent_away);
    tcase_add_test(tc, test_pending_timeout);
    tcase_add_test(tc, test_restart_repairs);
    tcase_add_test(tc, test_restart_agent_gone);
    tcase_add_test(tc, test_lost_agent_adopt);
    tcase_add_test(tc, test_lost_agent_reject);
    tcase_add_test(tc, test_terminate);
    tcase_add_test(tc, test_request_timeouts);
    tcase_add_test(tc, test_label_constraint);
    tcase_add_test(tc, test_dependencies);
    tcase_add_test(tc, test_dependencies_restart);
    tcase_add_test(tc, test_create_group_policy);
    tcase_add_test(tc, test_cluster_network);
    tcase_add_test(tc, test_route_deltas);
    tcase_add_test(tc, test_outbox_after_commit);
    tcase_add_test(tc, test_submit_batch);
    tcase_add_test(tc, test_pg_optimistic_batch_then_careful);
    tcase_add_loop_test(tc, test_lifecycle_updates, 0, 2);
    tcase_add_test(tc, test_kernel_events_batch);
    tcase_add_test(tc, test_kernel_events_batch_fails);
    tcase_add_test(tc, test_pass_batch_fails);
    tcase_add_test(tc, test_idle_timeout);
    tcase_add_test(tc, test_group_lifetime_policy_idle);
    suite_add_tcase(s, tc);
    add_index_tcase(s);
    add_batch_conns_tcase(s);
    return s;
}
