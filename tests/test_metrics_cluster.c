/* The cluster's metrics: an in-process manager driven with protocol frames
 * (a fake agent and an admin user) and an agent on a fake topology are
 * collected into registries, rendered, parsed back as Prometheus text, and
 * the numbers compared with the state that was set up: sessions by state,
 * capacity and use per slot, pending reasons, placements, histograms, and
 * (with root) a real container's cgroup figures appearing and going away.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_fixture.h"
#include "skv_test.h"
#include "sokovan/agent.h"
#include "sokovan/manager.h"
#include "sokovan/metrics.h"
#include "sokovan/proto.h"

#define T0 1700000000000LL
#define OUT_MAX 256
#define AGENT 1
#define ADMIN 2
#define GIB (1024.0 * 1024 * 1024)

/* ---- a Prometheus text (0.0.4) reader, strict enough to catch mistakes -- */

typedef struct sample {
    char name[128];
    char labels[512];   /* "k=v,k=v" unescaped, in exposition order */
    double value;
} sample;

typedef struct prom {
    sample s[1024];
    size_t n;
    char typed[64][128]; /* families with a # TYPE line */
    size_t n_typed;
} prom;

static int name_char(int c, bool first)
{
    return isalpha(c) || c == '_' || c == ':' || (!first && isdigit(c));
}

static const char *parse_name(char *out, size_t n, const char *p)
{
    size_t i = 0;
    ck_assert_msg(name_char((unsigned char)*p, true), "bad name at '%.20s'", p);
    while (name_char((unsigned char)*p, i == 0) && i + 1 < n)
        out[i++] = *p++;
    out[i] = 0;
    return p;
}

/* One label value: "..." with \\ \" \n escapes. */
static const char *parse_value(char *out, size_t n, size_t *len,
                               const char *p)
{
    ck_assert_msg(*p == '"', "label value not quoted at '%.20s'", p);
    for (p++; *p != '"'; p++) {
        ck_assert_msg(*p && *p != '\n', "unterminated label value");
        char c = *p;
        if (c == '\\') {
            p++;
            ck_assert_msg(*p == '\\' || *p == '"' || *p == 'n',
                          "bad escape \\%c", *p);
            c = *p == 'n' ? '\n' : *p;
        }
        ck_assert_uint_lt(*len + 1, n);
        out[(*len)++] = c;
    }
    out[*len] = 0;
    return p + 1;
}

static const char *parse_labels(sample *s, const char *p)
{
    size_t len = 0;
    for (p++; *p != '}';) {
        char key[128];
        p = parse_name(key, sizeof key, p);
        ck_assert_msg(*p == '=', "no '=' after label %s", key);
        len += (size_t)snprintf(s->labels + len, sizeof s->labels - len,
                                "%s%s=", len ? "," : "", key);
        p = parse_value(s->labels, sizeof s->labels, &len, p + 1);
        if (*p == ',')
            p++;
        else
            ck_assert_msg(*p == '}', "expected , or } at '%.20s'", p);
    }
    return p + 1;
}

static double parse_number(const char *p)
{
    if (!strcmp(p, "+Inf"))
        return INFINITY;
    if (!strcmp(p, "-Inf"))
        return -INFINITY;
    if (!strcmp(p, "NaN"))
        return NAN;
    char *end;
    double v = strtod(p, &end);
    ck_assert_msg(end != p && *end == 0, "bad value '%s'", p);
    return v;
}

static bool typed(const prom *pr, const char *name)
{
    static const char *const sfx[] = {"", "_bucket", "_sum", "_count"};
    for (size_t i = 0; i < pr->n_typed; i++)
        for (size_t k = 0; k < 4; k++) {
            size_t n = strlen(pr->typed[i]);
            if (!strncmp(name, pr->typed[i], n) && !strcmp(name + n, sfx[k]))
                return true;
        }
    return false;
}

static void parse_comment(prom *pr, const char *line)
{
    char name[128];
    if (!strncmp(line, "# HELP ", 7)) {
        parse_name(name, sizeof name, line + 7);
        return;
    }
    ck_assert_msg(!strncmp(line, "# TYPE ", 7), "bad comment: %s", line);
    const char *p = parse_name(name, sizeof name, line + 7);
    ck_assert_msg(!strcmp(p, " counter") || !strcmp(p, " gauge") ||
                      !strcmp(p, " histogram"),
                  "bad TYPE line: %s", line);
    ck_assert_uint_lt(pr->n_typed, 64);
    snprintf(pr->typed[pr->n_typed++], 128, "%s", name);
}

static void parse_sample(prom *pr, const char *line)
{
    ck_assert_uint_lt(pr->n, 1024);
    sample *s = &pr->s[pr->n++];
    memset(s, 0, sizeof *s);
    const char *p = parse_name(s->name, sizeof s->name, line);
    if (*p == '{')
        p = parse_labels(s, p);
    ck_assert_msg(*p == ' ', "no value in: %s", line);
    s->value = parse_number(p + 1);
    ck_assert_msg(typed(pr, s->name), "%s has no TYPE line before it",
                  s->name);
}

static void prom_parse(prom *pr, const char *text)
{
    char line[2048];
    memset(pr, 0, sizeof *pr);
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        ck_assert_msg(nl != NULL, "last line not terminated");
        ck_assert_uint_lt((size_t)(nl - p), sizeof line);
        memcpy(line, p, (size_t)(nl - p));
        line[nl - p] = 0;
        ck_assert_msg(line[0], "empty line in the exposition");
        if (line[0] == '#')
            parse_comment(pr, line);
        else
            parse_sample(pr, line);
        p = nl + 1;
    }
}

static const sample *find_sample(const prom *pr, const char *name,
                                 const char *labels)
{
    for (size_t i = 0; i < pr->n; i++)
        if (!strcmp(pr->s[i].name, name) && !strcmp(pr->s[i].labels, labels))
            return &pr->s[i];
    return NULL;
}

static double val(const prom *pr, const char *name, const char *labels)
{
    const sample *s = find_sample(pr, name, labels);
    ck_assert_msg(s != NULL, "no sample %s{%s}", name, labels);
    return s->value;
}

/* Render reg and parse it into pr. */
static void scrape(prom *pr, const skv_metrics *reg)
{
    char *text = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_render(&text, &len, reg, &e), &e);
    ck_assert_uint_eq(strlen(text), len);
    prom_parse(pr, text);
    skv_free(text);
}

/* ---- an in-process manager with a fake agent ----------------------------- */

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

static int send_cb(uint64_t conn, const void *frame, size_t len, void *p)
{
    (void)p;
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

static skv_manager *open_mgr(int64_t now)
{
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    skv_manager *m = NULL;
    snprintf(dir, sizeof dir, "/tmp/skv-mcl-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    o.data_dir = dir;
    o.bootstrap_agents = "a1";
    SKV_CK_OK(skv_manager_open(&m, &o, send_cb, NULL, now, &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, AGENT, "test-agent", &e), &e);
    SKV_CK_OK(skv_manager_conn_open(m, ADMIN, "test-admin", &e), &e);
    return m;
}

static void close_mgr(skv_manager *m)
{
    char cmd[128];
    skv_manager_free(m);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    out_clear();
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
}

/* Encode (signed when c) and hand to the manager. id: in (0: fresh). */
static void feed(skv_manager *m, uint64_t conn, skv_proto_type type,
                 const void *body, const cred *c, int64_t now, uint64_t id)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    skv_proto_credentials pc = {c ? c->ak : NULL, c ? c->sk : NULL};
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, skv_proto_type_kind(type),
                                       id ? id : ++next_id, type, body, now,
                                       c ? &pc : NULL, &e), &e);
    SKV_CK_OK(skv_manager_handle_frame(m, conn, (uint8_t *)frame + 4, len - 4,
                                       now, &e), &e);
    skv_free(frame);
    SKV_CK_OK(skv_manager_flush(m, now, &e), &e);   /* submissions' replies */
}

/* Take the first frame of type sent to conn; decode it into body. */
static bool take(uint64_t conn, skv_proto_type type, void *body,
                 uint64_t *req_id)
{
    for (size_t i = 0; i < n_out; i++) {
        skv_proto_envelope env;
        skv_error e = SKV_ERROR_INIT;
        if (outq[i].conn != conn)
            continue;
        SKV_CK_OK(skv_proto_envelope_decode(&env, outq[i].buf + 4,
                                            outq[i].len - 4, &e), &e);
        if (env.type != type) {
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
        return true;
    }
    return false;
}

static skv_slots *slots(const char *text)
{
    skv_slots *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_parse(&s, text, NULL, &e), &e);
    return s;
}

/* Agent a1: cpu=4, mem=8g and two shareable GPUs. */
static void register_agent(skv_manager *m, const cred *c, int64_t now)
{
    skv_proto_device dev[4];
    char *images[] = {"busybox"};
    memset(dev, 0, sizeof dev);
    dev[0] = (skv_proto_device){.id = "cpu", .kind = "cpu",
                                .slots = slots("cpu=4")};
    dev[1] = (skv_proto_device){.id = "mem", .kind = "mem",
                                .slots = slots("mem=8g")};
    dev[2] = (skv_proto_device){.id = "cuda0", .kind = "cuda",
                                .slots = slots("cuda.device=1,cuda.shares=1")};
    dev[3] = (skv_proto_device){.id = "cuda1", .kind = "cuda",
                                .slots = slots("cuda.device=1,cuda.shares=1")};
    skv_proto_agent_register r = {0};
    r.agent_id = "a1";
    r.architecture = "x86_64";
    r.address = "127.0.0.1:6001";
    r.devices = dev;
    r.n_devices = 4;
    r.images = images;
    r.n_images = 1;
    feed(m, AGENT, SKV_PROTO_AGENT_REGISTER, &r, c, now, 0);
    ck_assert(take(AGENT, SKV_PROTO_AGENT_REGISTER_REPLY, NULL, NULL));
    for (int i = 0; i < 4; i++)
        skv_slots_free(dev[i].slots);
}

/* Submit one kernel asking for req; returns the session id in sid. */
static void submit(skv_manager *m, const cred *c, const char *req, char *sid,
                   int64_t now)
{
    char *cmd[] = {"/bin/true"};
    skv_proto_kernel_spec k = {0};
    k.slots = slots(req);
    skv_proto_session_submit s = {0};
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 1;
    s.kernels = &k;
    s.n_kernels = 1;
    s.session_type = "batch";
    feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &s, c, now, 0);
    skv_slots_free(k.slots);
    skv_proto_session_ref ref;
    ck_assert_msg(take(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY, &ref, NULL),
                  "submit of %s refused", req);
    snprintf(sid, 64, "%s", ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
}

static void tick(skv_manager *m, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_tick(m, now, &e), &e);
}

static void collect(skv_manager *m, skv_metrics *reg, prom *pr, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_manager_metrics_collect(m, reg, now, &e), &e);
    scrape(pr, reg);
}

static void expect_sessions(const prom *pr, double pending, double preparing,
                            double running, double terminated)
{
    ck_assert_double_eq(val(pr, "sokovan_sessions", "state=pending"), pending);
    ck_assert_double_eq(val(pr, "sokovan_sessions", "state=preparing"),
                        preparing);
    ck_assert_double_eq(val(pr, "sokovan_sessions", "state=running"), running);
    ck_assert_double_eq(val(pr, "sokovan_sessions", "state=terminated"),
                        terminated);
    ck_assert_double_eq(val(pr, "sokovan_sessions", "state=error"), 0);
}

static void expect_pool(const prom *pr, const char *fam, double cpu,
                        double mem, double gpus, double shares)
{
    ck_assert_double_eq(val(pr, fam, "resource_group=default,slot=cpu"), cpu);
    ck_assert_double_eq(val(pr, fam, "resource_group=default,slot=mem"), mem);
    ck_assert_double_eq(val(pr, fam, "resource_group=default,slot=cuda.device"),
                        gpus);
    ck_assert_double_eq(val(pr, fam, "resource_group=default,slot=cuda.shares"),
                        shares);
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(test_manager_numbers_match_state)
{
    static prom pr;
    skv_manager *m = open_mgr(T0);
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");

    /* Before any agent: nothing offered, every state at zero. */
    collect(m, reg, &pr, T0);
    expect_sessions(&pr, 0, 0, 0, 0);
    ck_assert_double_eq(val(&pr, "sokovan_agents", "state=alive"), 0);
    ck_assert_ptr_null(find_sample(&pr, "sokovan_capacity",
                                   "resource_group=default,slot=cpu"));

    register_agent(m, &ag, T0 + 1);
    char s1[64], s2[64], kid[96];
    submit(m, &ad, "cpu=1,mem=1g,cuda.shares=0.5", s1, T0 + 2);
    submit(m, &ad, "cpu=8", s2, T0 + 3);   /* never fits on 4 CPUs */
    tick(m, T0 + 4);
    skv_proto_kernel_create kc;
    uint64_t create_id = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &create_id));
    snprintf(kid, sizeof kid, "%s", kc.kernel_id);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);

    collect(m, reg, &pr, T0 + 10);
    expect_sessions(&pr, 1, 1, 0, 0);
    ck_assert_double_eq(val(&pr, "sokovan_agents", "state=alive"), 1);
    ck_assert_double_eq(val(&pr, "sokovan_agents", "state=lost"), 0);
    expect_pool(&pr, "sokovan_capacity", 4, 8 * GIB, 2, 2);
    expect_pool(&pr, "sokovan_used", 1, 1 * GIB, 0, 0.5);
    ck_assert_double_eq(val(&pr, "sokovan_pending_sessions",
                            "resource_group=default,reason=resources"), 1);
    ck_assert_double_eq(val(&pr, "sokovan_placements_total", ""), 1);
    ck_assert_double_ge(val(&pr, "sokovan_sched_passes_total", ""), 1);

    /* The create reply 1.5 s after the create: running, one start timed. */
    skv_proto_kernel_create_reply cr = {kid, kid};
    feed(m, AGENT, SKV_PROTO_KERNEL_CREATE_REPLY, &cr, NULL, T0 + 1504,
         create_id);
    collect(m, reg, &pr, T0 + 2010);
    expect_sessions(&pr, 1, 0, 1, 0);
    ck_assert_double_eq(val(&pr, "sokovan_placements_total", ""), 0 + 1);
    /* One placement in the 2 s before the previous collect, none since. */
    ck_assert_double_eq(val(&pr, "sokovan_placements_per_second", ""), 0);
    ck_assert_double_eq(val(&pr, "sokovan_container_start_seconds_count", ""),
                        1);
    ck_assert_double_eq(val(&pr, "sokovan_container_start_seconds_sum", ""),
                        1.5);
    ck_assert_double_eq(val(&pr, "sokovan_container_start_seconds_bucket",
                            "le=1"), 0);
    ck_assert_double_eq(val(&pr, "sokovan_container_start_seconds_bucket",
                            "le=2.5"), 1);
    ck_assert_double_ge(val(&pr, "sokovan_sched_pass_duration_seconds_count",
                            ""), 1);

    /* The kernel exits: the session ends and gives everything back. */
    skv_proto_kernel_exit x = {0};
    x.agent_id = "a1";
    x.session_id = s1;
    x.kernel_id = kid;
    feed(m, AGENT, SKV_PROTO_KERNEL_EXIT, &x, &ag, T0 + 2100, 0);
    collect(m, reg, &pr, T0 + 3010);
    expect_sessions(&pr, 1, 0, 0, 1);
    expect_pool(&pr, "sokovan_used", 0, 0, 0, 0);
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    SKV_CK_OK(skv_manager_get_stats(m, &st, &e), &e);
    ck_assert_double_eq(val(&pr, "sokovan_requests_total", ""),
                        (double)st.requests);
    ck_assert_double_eq(val(&pr, "sokovan_requests_refused_total", ""),
                        (double)st.requests_refused);
    close_mgr(m);
    skv_metrics_free(reg);
}
END_TEST

/* Placements per second: the placements between two collects over the
 * time between them. */
START_TEST(test_manager_placement_rate)
{
    static prom pr;
    skv_manager *m = open_mgr(T0);
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, T0 + 1);
    collect(m, reg, &pr, T0 + 10);
    ck_assert_double_eq(val(&pr, "sokovan_placements_per_second", ""), 0);
    char sid[64];
    for (int i = 0; i < 3; i++)
        submit(m, &ad, "cpu=1", sid, T0 + 20 + i);
    tick(m, T0 + 30);
    collect(m, reg, &pr, T0 + 2010);   /* 3 placements in 2 s */
    ck_assert_double_eq(val(&pr, "sokovan_placements_total", ""), 3);
    ck_assert_double_eq(val(&pr, "sokovan_placements_per_second", ""), 1.5);
    ck_assert_double_eq(val(&pr, "sokovan_sessions", "state=preparing"), 3);
    close_mgr(m);
    skv_metrics_free(reg);
}
END_TEST

/* Bad arguments and a registry whose names are taken; detaching lets the
 * registry go while the manager keeps working, and a new one can bind. */
START_TEST(test_manager_errors_and_rebind)
{
    static prom pr;
    skv_manager *m = open_mgr(T0);
    skv_metrics *reg = NULL, *reg2 = NULL;
    skv_metric *mine = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    ck_assert_int_eq(skv_manager_metrics_collect(NULL, reg, T0, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_manager_metrics_collect(m, NULL, T0, &e),
                     SKV_EINVAL);
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    o.type = SKV_METRIC_COUNTER;
    o.name = "sokovan_agents";
    SKV_CK_OK(skv_metrics_register(&mine, reg, &o, &e), &e);
    ck_assert_int_eq(skv_manager_metrics_collect(m, reg, T0, &e), SKV_EEXIST);
    ck_assert_ptr_nonnull(strstr(e.message, "sokovan_agents"));
    skv_metrics_free(reg);

    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    collect(m, reg, &pr, T0 + 1);
    skv_manager_metrics_detach(m);
    skv_manager_metrics_detach(m);
    skv_manager_metrics_detach(NULL);
    skv_metrics_free(reg);
    /* Passes run with no registry bound. */
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, T0 + 2);
    char sid[64];
    submit(m, &ad, "cpu=1", sid, T0 + 3);
    tick(m, T0 + 4);
    SKV_CK_OK(skv_metrics_new(&reg2, &e), &e);
    collect(m, reg2, &pr, T0 + 5);
    ck_assert_double_eq(val(&pr, "sokovan_placements_total", ""), 1);
    ck_assert_double_eq(val(&pr, "sokovan_sched_pass_duration_seconds_count",
                            ""), 0);
    /* Collecting again changes nothing but the values. */
    size_t fams = skv_metrics_family_count(reg2);
    collect(m, reg2, &pr, T0 + 6);
    ck_assert_uint_eq(skv_metrics_family_count(reg2), fams);
    close_mgr(m);
    skv_metrics_free(reg2);
}
END_TEST

/* ---- the agent ----------------------------------------------------------- */

#define NUMA4 "topologies/96em64t-4n4d3ca2co-pci.xml"
#define AK "AKAGENTTEST0000000001"
#define SK "agent-test-secret-key-0123456789"

typedef struct agent_conn {
    size_t frames;
} agent_conn;

static int agent_send(const void *frame, size_t len, void *payload)
{
    (void)frame;
    (void)len;
    ((agent_conn *)payload)->frames++;
    return 0;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static skv_agent *open_agent(agent_conn *c, const char *state, bool fake)
{
    char path[PATH_MAX];
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.create_threads = -1; /* answers checked right after each request */
    o.agent_id = "a1";
    o.access_key = AK;
    o.secret_key = SK;
    o.state_dir = state;
    o.plugins = "cpu;mem";
    o.topology_xml = fake ? skv_test_data_path(path, sizeof path, NUMA4)
                          : NULL;
    o.cpus = "0-1";
    o.memory_bytes = 1ull << 30;
    if (!fake)
        o.image_dir = skv_rtfx_images;
    skv_agent *a = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_open(&a, &o, agent_send, c, wall_ms(), &e), &e);
    return a;
}

/* Without containers: the slice's capacity and no kernel series. */
START_TEST(test_agent_capacity)
{
    static prom pr;
    char state[] = "/tmp/skv-mca-XXXXXX", cmd[64];
    ck_assert_ptr_nonnull(mkdtemp(state));
    agent_conn c = {0};
    skv_agent *a = open_agent(&c, state, true);
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    ck_assert_int_eq(skv_agent_metrics_collect(NULL, reg, 0, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_agent_metrics_collect(a, NULL, 0, &e), SKV_EINVAL);
    SKV_CK_OK(skv_agent_metrics_collect(a, reg, wall_ms(), &e), &e);
    SKV_CK_OK(skv_agent_metrics_collect(a, reg, wall_ms(), &e), &e);
    scrape(&pr, reg);
    ck_assert_double_eq(val(&pr, "sokovan_agent_kernels", "state=running"), 0);
    ck_assert_double_eq(val(&pr, "sokovan_agent_kernels", "state=exited"), 0);
    ck_assert_double_eq(val(&pr, "sokovan_agent_kernels", "state=creating"),
                        0);
    ck_assert_double_eq(val(&pr, "sokovan_agent_capacity", "slot=cpu"), 2);
    ck_assert_double_eq(val(&pr, "sokovan_agent_capacity", "slot=mem"), GIB);
    ck_assert_double_eq(val(&pr, "sokovan_agent_used", "slot=cpu"), 0);
    for (size_t i = 0; i < pr.n; i++)
        ck_assert_msg(strncmp(pr.s[i].name, "sokovan_kernel_", 15),
                      "unexpected %s", pr.s[i].name);
    skv_metrics_free(reg);
    skv_agent_free(a);
    snprintf(cmd, sizeof cmd, "rm -rf %s", state);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static int agent_feed(skv_agent *a, skv_proto_kind kind, uint64_t id,
                      skv_proto_type t, const void *body)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    int64_t now = wall_ms();
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, kind, id, t, body, now,
                                       NULL, &e), &e);
    int rc = skv_agent_handle_frame(a, (uint8_t *)frame + 4, len - 4, now,
                                    &e);
    skv_free(frame);
    return rc;
}

static void agent_create(skv_agent *a, const char *kid, char **argv,
                         size_t argc)
{
    skv_proto_device_alloc al[2];
    memset(al, 0, sizeof al);
    al[0].device_id = "cpu";
    al[0].slots = slots("cpu=0.5");
    al[1].device_id = "mem";
    al[1].slots = slots("mem=64m");
    skv_proto_kernel_create kc;
    memset(&kc, 0, sizeof kc);
    kc.session_id = "s-00000000000000bb";
    kc.kernel_id = (char *)kid;
    kc.owner = "alice";
    kc.session_type = "batch";
    kc.image = "busybox";
    kc.argv = argv;
    kc.n_argv = argc;
    kc.alloc = al;
    kc.n_alloc = 2;
    kc.cluster_mode = "single-node";
    kc.cluster_role = "main";
    kc.cluster_idx = 1;
    kc.cluster_size = 1;
    ck_assert_int_eq(agent_feed(a, SKV_PROTO_REQUEST, 20,
                                SKV_PROTO_KERNEL_CREATE, &kc), 0);
    skv_slots_free(al[0].slots);
    skv_slots_free(al[1].slots);
}

/* A running container's cgroup figures appear under its labels and go
 * away with it. */
START_TEST(test_agent_kernel_series)
{
    SKV_RTFX_REQUIRE();
    static prom pr;
    char state[PATH_MAX];
    agent_conn c = {0};
    skv_agent *a = open_agent(&c, skv_rtfx_state(state, sizeof state, "mx"),
                              false);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
    ck_assert_int_eq(agent_feed(a, SKV_PROTO_RESPONSE, 1,
                                SKV_PROTO_AGENT_REGISTER_REPLY, &rep), 0);
    const char *kid = "s-00000000000000bb-0";
    char *argv[] = {"sh", "-c", "i=0; while [ $i -lt 20000 ]; do "
                    "i=$((i+1)); done; sleep 30"};
    agent_create(a, kid, argv, 3);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    skv_metrics *reg = NULL;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *lbl = "session=s-00000000000000bb,kernel=s-00000000000000bb-0";
    /* The loop burns some CPU: wait until the cgroup has counted it. */
    double cpu = 0;
    for (int i = 0; i < 200 && cpu <= 0; i++) {
        SKV_CK_OK(skv_agent_metrics_collect(a, reg, wall_ms(), &e), &e);
        scrape(&pr, reg);
        const sample *sc = find_sample(&pr, "sokovan_kernel_cpu_seconds_total",
                                       lbl);
        cpu = sc ? sc->value : 0;
        if (cpu <= 0)
            usleep(20 * 1000);
    }
    ck_assert_double_gt(cpu, 0);
    ck_assert_double_ge(val(&pr, "sokovan_kernel_pids", lbl), 1);
    ck_assert_double_gt(val(&pr, "sokovan_kernel_memory_bytes", lbl), 0);
    ck_assert_double_ge(val(&pr, "sokovan_kernel_memory_peak_bytes", lbl),
                        val(&pr, "sokovan_kernel_memory_bytes", lbl));
    ck_assert_double_eq(val(&pr, "sokovan_agent_kernels", "state=running"), 1);
    ck_assert_double_eq(val(&pr, "sokovan_agent_used", "slot=cpu"), 0.5);
    ck_assert_double_eq(val(&pr, "sokovan_agent_used", "slot=mem"),
                        64.0 * 1024 * 1024);
    /* Destroyed: the kernel's series are gone. */
    skv_proto_kernel_destroy kd = {"s-00000000000000bb", (char *)kid, "done",
                                   0};
    ck_assert_int_eq(agent_feed(a, SKV_PROTO_REQUEST, 22,
                                SKV_PROTO_KERNEL_DESTROY, &kd), 0);
    for (int i = 0; i < 400 && skv_agent_kernel_count(a) > 0; i++) {
        SKV_CK_OK(skv_agent_tick(a, wall_ms(), &e), &e);
        usleep(25 * 1000);
    }
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    SKV_CK_OK(skv_agent_metrics_collect(a, reg, wall_ms(), &e), &e);
    scrape(&pr, reg);
    ck_assert_ptr_null(find_sample(&pr, "sokovan_kernel_cpu_seconds_total",
                                   lbl));
    ck_assert_ptr_null(find_sample(&pr, "sokovan_kernel_pids", lbl));
    ck_assert_double_eq(val(&pr, "sokovan_agent_kernels", "state=running"), 0);
    ck_assert_double_eq(val(&pr, "sokovan_agent_used", "slot=cpu"), 0);
    skv_metrics_free(reg);
    skv_agent_free(a);
}
END_TEST

static void mcl_fx_teardown(void)
{
    if (skv_rtfx_root[0]) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/state-mx/containers", skv_rtfx_root);
        destroy_all(path);
    }
    skv_rtfx_teardown();
}

/* agent.device_health: an unhealthy GPU leaves the capacity and is
 * counted by sokovan_unhealthy_devices until the agent says it is healthy
 * again; the batch session on it is requeued, its GPUs released only when
 * the agent confirmed the destroy; a device the agent did not register, or
 * named twice, is refused and changes nothing. */
START_TEST(test_manager_unhealthy_devices)
{
    static prom pr;
    skv_manager *m = open_mgr(T0);
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, T0 + 1);
    /* a batch session on both GPUs, running */
    char s1[64];
    submit(m, &ad, "cpu=1,cuda.device=2", s1, T0 + 2);
    tick(m, T0 + 2);
    skv_proto_kernel_create kc;
    uint64_t cid = 0, did = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &cid));
    skv_proto_kernel_create_reply cr = {kc.kernel_id, kc.kernel_id};
    feed(m, AGENT, SKV_PROTO_KERNEL_CREATE_REPLY, &cr, NULL, T0 + 2, cid);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    collect(m, reg, &pr, T0 + 2);
    ck_assert_double_eq(val(&pr, "sokovan_unhealthy_devices", ""), 0);
    skv_proto_device_fault f[2] = {{"cuda1", "xid 79"}, {"cuda1", "again"}};
    skv_proto_agent_device_health h = {"a1", f, 1};
    feed(m, AGENT, SKV_PROTO_AGENT_DEVICE_HEALTH, &h, &ag, T0 + 3, 0);
    /* requeued: its kernel is destroyed, its GPUs stay taken until the
     * agent confirms */
    skv_proto_kernel_destroy kd;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_DESTROY, &kd, &did));
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &kd);
    tick(m, T0 + 3);
    collect(m, reg, &pr, T0 + 4);
    ck_assert_double_eq(val(&pr, "sokovan_unhealthy_devices", ""), 1);
    expect_pool(&pr, "sokovan_capacity", 4, 8 * GIB, 1, 1);
    ck_assert_double_eq(val(&pr, "sokovan_used",
                            "resource_group=default,slot=cuda.device"), 2);
    skv_proto_ack ack = {0};
    feed(m, AGENT, SKV_PROTO_ACK, &ack, NULL, T0 + 4, did);
    tick(m, T0 + 5);
    collect(m, reg, &pr, T0 + 5);
    ck_assert_double_eq(val(&pr, "sokovan_used",
                            "resource_group=default,slot=cuda.device"), 0);
    /* one healthy GPU: it waits */
    ck_assert_double_eq(val(&pr, "sokovan_pending_sessions",
                            "resource_group=default,reason=resources"), 1);
    /* refused: named twice, not registered */
    h.n_unhealthy = 2;
    feed(m, AGENT, SKV_PROTO_AGENT_DEVICE_HEALTH, &h, &ag, T0 + 5, 0);
    ck_assert(take(AGENT, SKV_PROTO_ERROR, NULL, NULL));
    f[0].device_id = "cuda7";
    h.n_unhealthy = 1;
    feed(m, AGENT, SKV_PROTO_AGENT_DEVICE_HEALTH, &h, &ag, T0 + 6, 0);
    ck_assert(take(AGENT, SKV_PROTO_ERROR, NULL, NULL));
    collect(m, reg, &pr, T0 + 7);
    ck_assert_double_eq(val(&pr, "sokovan_unhealthy_devices", ""), 1);
    /* healthy again */
    h.n_unhealthy = 0;
    feed(m, AGENT, SKV_PROTO_AGENT_DEVICE_HEALTH, &h, &ag, T0 + 8, 0);
    tick(m, T0 + 9);
    collect(m, reg, &pr, T0 + 9);
    ck_assert_double_eq(val(&pr, "sokovan_unhealthy_devices", ""), 0);
    expect_pool(&pr, "sokovan_capacity", 4, 8 * GIB, 2, 2);
    /* and it is placed again */
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &cid));
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    close_mgr(m);
    skv_metrics_free(reg);
}
END_TEST

/* An interactive session on a GPU that fails is not moved: it is marked
 * DEGRADED in its history and keeps running (no kernel.destroy). */
START_TEST(test_manager_fault_degrades_interactive)
{
    static prom pr;
    skv_manager *m = open_mgr(T0);
    skv_metrics *reg = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    cred ag, ad;
    read_key(&ag, "agents/a1.key");
    read_key(&ad, "admin.key");
    register_agent(m, &ag, T0 + 1);
    char *cmd[] = {"/bin/true"};
    skv_proto_kernel_spec k = {0};
    k.slots = slots("cpu=1,cuda.device=2");
    skv_proto_session_submit sub = {0};
    sub.image = "busybox";
    sub.command = cmd;
    sub.n_command = 1;
    sub.kernels = &k;
    sub.n_kernels = 1;
    sub.session_type = "interactive";
    feed(m, ADMIN, SKV_PROTO_SESSION_SUBMIT, &sub, &ad, T0 + 2, 0);
    skv_slots_free(k.slots);
    skv_proto_session_ref ref;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_SUBMIT_REPLY, &ref, NULL));
    tick(m, T0 + 3);
    skv_proto_kernel_create kc;
    uint64_t cid = 0;
    ck_assert(take(AGENT, SKV_PROTO_KERNEL_CREATE, &kc, &cid));
    skv_proto_kernel_create_reply cr = {kc.kernel_id, kc.kernel_id};
    feed(m, AGENT, SKV_PROTO_KERNEL_CREATE_REPLY, &cr, NULL, T0 + 4, cid);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &kc);
    skv_proto_device_fault f[1] = {{"cuda1", "xid 79"}};
    skv_proto_agent_device_health h = {"a1", f, 1};
    feed(m, AGENT, SKV_PROTO_AGENT_DEVICE_HEALTH, &h, &ag, T0 + 5, 0);
    tick(m, T0 + 6);
    ck_assert(!take(AGENT, SKV_PROTO_KERNEL_DESTROY, NULL, NULL));
    skv_proto_session_id q = {ref.session_id};
    feed(m, ADMIN, SKV_PROTO_SESSION_SHOW, &q, &ad, T0 + 7, 0);
    skv_proto_session_show_reply sh;
    ck_assert(take(ADMIN, SKV_PROTO_SESSION_SHOW_REPLY, &sh, NULL));
    bool degraded = false;
    for (size_t i = 0; i < sh.session.n_history; i++)
        degraded |= sh.session.history[i].status &&
                    !strcmp(sh.session.history[i].status, "DEGRADED") &&
                    sh.session.history[i].reason &&
                    strstr(sh.session.history[i].reason, "cuda1");
    ck_assert_str_eq(sh.session.status, "RUNNING");
    ck_assert(degraded);
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &sh);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    collect(m, reg, &pr, T0 + 8);
    ck_assert_double_eq(val(&pr, "sokovan_unhealthy_devices", ""), 1);
    close_mgr(m);
    skv_metrics_free(reg);
}
END_TEST

Suite *skv_test_suite_metrics_cluster(void);
Suite *skv_test_suite_metrics_cluster(void)
{
    Suite *s = suite_create("metrics_cluster");
    TCase *tc = tcase_create("metrics_cluster");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_manager_numbers_match_state);
    tcase_add_test(tc, test_manager_placement_rate);
    tcase_add_test(tc, test_manager_errors_and_rebind);
    tcase_add_test(tc, test_manager_unhealthy_devices);
    tcase_add_test(tc, test_manager_fault_degrades_interactive);
    tcase_add_test(tc, test_agent_capacity);
    suite_add_tcase(s, tc);
    TCase *rt = tcase_create("metrics_cluster-containers");
    tcase_add_unchecked_fixture(rt, skv_rtfx_setup_import, mcl_fx_teardown);
    tcase_set_timeout(rt, 60);
    tcase_add_test(rt, test_agent_kernel_series);
    suite_add_tcase(s, rt);
    return s;
}
