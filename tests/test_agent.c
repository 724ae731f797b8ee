/* The node agent, driven as the manager would drive it: frames built with
 * the protocol library go in, the frames it hands to its send callback are
 * captured and decoded. Registration (signed, device-level capacity, the
 * CPU/memory slice), refused frames, and with root the whole kernel
 * lifecycle on real containers: create (the manager's accelerator honoured),
 * exit report, logs, destroy, idempotency, and an agent restart that
 * re-attaches to a running container.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rt_fixture.h"
#include "skv_test.h"

#define NUMA4 "topologies/96em64t-4n4d3ca2co-pci.xml"
#define AK "AKAGENTTEST0000000001"
#define SK "agent-test-secret-key-0123456789"
#define MAXF 256

/* ---- a fake manager connection ------------------------------------------- */

typedef struct conn {
    void *frame[MAXF];
    size_t len[MAXF];
    size_t n;
    int refuse;                 /* the send callback fails */
} conn;

static int capture(const void *frame, size_t len, void *payload)
{
    conn *c = payload;
    if (c->refuse)
        return -1;
    ck_assert_uint_lt(c->n, MAXF);
    c->frame[c->n] = malloc(len);
    memcpy(c->frame[c->n], frame, len);
    c->len[c->n++] = len;
    return 0;
}

static void conn_clear(conn *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->frame[i]);
    c->n = 0;
}

/* Decode captured frame i (length prefix checked and stripped). */
static void decode(skv_proto_envelope *env, const conn *c, size_t i)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_uint_gt(c->len[i], SKV_PROTO_FRAME_HEADER);
    const uint8_t *f = c->frame[i];
    size_t n = ((size_t)f[0] << 24) | ((size_t)f[1] << 16) |
               ((size_t)f[2] << 8) | f[3];
    ck_assert_uint_eq(n + SKV_PROTO_FRAME_HEADER, c->len[i]);
    SKV_CK_OK(skv_proto_envelope_decode(env, f + SKV_PROTO_FRAME_HEADER, n,
                                        &e), &e);
}

/* Index of the first captured frame of type t from index from, or -1. */
static long find(const conn *c, size_t from, skv_proto_type t)
{
    for (size_t i = from; i < c->n; i++) {
        skv_proto_envelope env;
        decode(&env, c, i);
        skv_proto_type got = env.type;
        skv_proto_envelope_free(&env);
        if (got == t)
            return (long)i;
    }
    return -1;
}

/* Decode the body of captured frame i as type t into body. */
static void body_of(void *body, const conn *c, size_t i, skv_proto_type t,
                    skv_proto_envelope *env_out)
{
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    decode(&env, c, i);
    ck_assert_int_eq(env.type, t);
    SKV_CK_OK(skv_proto_body_decode(body, t, env.body, env.body_len, &e), &e);
    if (env_out)
        *env_out = env;
    else
        skv_proto_envelope_free(&env);
}

/* Feed one message to the agent as the manager would send it. */
static int feed(skv_agent *a, skv_proto_kind kind, uint64_t id,
                skv_proto_type t, const void *body, int64_t now)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_proto_message_encode(&frame, &len, kind, id, t, body, now,
                                       NULL, &e), &e);
    int rc = skv_agent_handle_frame(a, (uint8_t *)frame +
                                           SKV_PROTO_FRAME_HEADER,
                                    len - SKV_PROTO_FRAME_HEADER, now, &e);
    skv_free(frame);
    return rc;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- agents ------------------------------------------------------------------ */

static char tmp_state[PATH_MAX];

static void tmp_setup(void)
{
    snprintf(tmp_state, sizeof(tmp_state), "/tmp/skv-agent-%ld-XXXXXX",
             (long)getpid());
    ck_assert_ptr_nonnull(mkdtemp(tmp_state));
}

static void tmp_teardown(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_state);
    ck_assert_int_eq(system(cmd), 0);
}

/* Creator threads of the agents opened next: most tests check a create's
 * answer right after feeding it, so by default containers are created on
 * the test's thread; test_background_create uses threads. */
static int g_create_threads = -1;

static skv_agent *open_agent(conn *c, const char *state, const char *xml,
                             const char *cpus, uint64_t mem)
{
    char path[PATH_MAX];
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.create_threads = g_create_threads;
    o.agent_id = "a1";
    o.access_key = AK;
    o.secret_key = SK;
    o.state_dir = state;
    o.plugins = "cpu;mem;mock:count=2,prefix=cuda";
    o.topology_xml = xml ? skv_test_data_path(path, sizeof(path), xml) : NULL;
    o.cpus = cpus;
    o.memory_bytes = mem;
    o.labels = "zone=a,disk=ssd";
    o.stats_interval_ms = 100;
    if (!xml)
        o.image_dir = skv_rtfx_images;
    skv_agent *a = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_open(&a, &o, capture, c, wall_ms(), &e), &e);
    return a;
}

static const skv_proto_device *dev_named(const skv_proto_agent_register *r,
                                         const char *id)
{
    for (size_t i = 0; i < r->n_devices; i++)
        if (strcmp(r->devices[i].id, id) == 0)
            return &r->devices[i];
    return NULL;
}

/* Registration request at frame i: signed by the agent's key, verified as
 * the manager does; the decoded body goes to r. */
static void check_register(skv_proto_agent_register *r, const conn *c,
                           size_t i, int64_t now)
{
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    body_of(r, c, i, SKV_PROTO_AGENT_REGISTER, &env);
    ck_assert_int_eq(env.kind, SKV_PROTO_REQUEST);
    ck_assert_int_eq(env.has_auth, 1);
    skv_auth_verifier *v = NULL;
    skv_auth_principal p = {"a1", SKV_AUTH_ROLE_AGENT}, got;
    SKV_CK_OK(skv_auth_verifier_new(&v, NULL, &e), &e);
    SKV_CK_OK(skv_auth_verifier_add_key(v, AK, SK, &p, &e), &e);
    SKV_CK_OK(skv_proto_envelope_verify(v, &got, &env, now, &e), &e);
    ck_assert_str_eq(got.user, "a1");
    /* The same message again is a replay. */
    ck_assert_int_eq(skv_proto_envelope_verify(v, &got, &env, now, NULL),
                     SKV_EAUTH);
    skv_auth_verifier_free(v);
    skv_proto_envelope_free(&env);
}

START_TEST(test_register_and_heartbeat)
{
    conn c = {0};
    tmp_setup();
    int64_t now = wall_ms();
    skv_agent *a = open_agent(&c, tmp_state, NUMA4, "0-3", 1ull << 30);
    ck_assert_uint_eq(c.n, 0);      /* nothing before the connection */
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, now, &e), &e);
    ck_assert_uint_eq(c.n, 1);
    skv_proto_agent_register r = {0};
    check_register(&r, &c, 0, now);
    ck_assert_str_eq(r.agent_id, "a1");
    ck_assert_str_eq(r.resource_group, "default");
    ck_assert_uint_eq(r.n_labels, 2);
    ck_assert_str_eq(r.labels[1].key, "disk");
    ck_assert_uint_eq(r.n_kernels, 0);
    /* The slice: 4 cores of 96, 1 GiB; two accelerators named by slot. */
    ck_assert_uint_eq(r.n_devices, 4);
    ck_assert_int_eq(skv_slots_get(dev_named(&r, "cpu")->slots, "cpu"),
                     4 * SKV_QTY_SCALE);
    ck_assert_int_eq(skv_slots_get(dev_named(&r, "mem")->slots, "mem"),
                     1ll << 30);
    for (int g = 0; g < 2; g++) {
        char id[16];
        snprintf(id, sizeof(id), "cuda%d", g);
        const skv_proto_device *d = dev_named(&r, id);
        ck_assert_ptr_nonnull(d);
        ck_assert_str_eq(d->kind, "mock");
        ck_assert_int_eq(skv_slots_get(d->slots, "cuda.device"),
                         SKV_QTY_SCALE);
        ck_assert_int_gt(skv_slots_get(d->slots, "cuda.shares"), 0);
    }
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &r);
    /* No heartbeat before the reply; after it, at the manager's interval,
     * each with a fresh nonce and the next sequence number. */
    SKV_CK_OK(skv_agent_tick(a, now + 60000, &e), &e);
    ck_assert_int_eq(find(&c, 1, SKV_PROTO_AGENT_HEARTBEAT), -1);
    skv_proto_agent_register_reply rep = {250, 1000, now};
    ck_assert_int_eq(feed(a, SKV_PROTO_RESPONSE, 1,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep, now), 0);
    ck_assert_int_le(skv_agent_next_tick_ms(a, now), 250);
    size_t before = c.n;
    SKV_CK_OK(skv_agent_tick(a, now + 250, &e), &e);
    SKV_CK_OK(skv_agent_tick(a, now + 500, &e), &e);
    long h1 = find(&c, before, SKV_PROTO_AGENT_HEARTBEAT);
    ck_assert_int_ge(h1, 0);
    long h2 = find(&c, (size_t)h1 + 1, SKV_PROTO_AGENT_HEARTBEAT);
    ck_assert_int_ge(h2, 0);
    skv_proto_envelope e1, e2;
    skv_proto_agent_heartbeat hb1 = {0}, hb2 = {0};
    body_of(&hb1, &c, (size_t)h1, SKV_PROTO_AGENT_HEARTBEAT, &e1);
    body_of(&hb2, &c, (size_t)h2, SKV_PROTO_AGENT_HEARTBEAT, &e2);
    ck_assert_uint_eq(hb2.seq, hb1.seq + 1);
    ck_assert_int_eq(e1.has_auth && e2.has_auth, 1);
    ck_assert_int_ne(memcmp(e1.auth.nonce, e2.auth.nonce,
                            sizeof(e1.auth.nonce)), 0);
    skv_proto_body_free(SKV_PROTO_AGENT_HEARTBEAT, &hb1);
    skv_proto_body_free(SKV_PROTO_AGENT_HEARTBEAT, &hb2);
    skv_proto_envelope_free(&e1);
    skv_proto_envelope_free(&e2);
    /* Retained logs older than an hour are pruned on a tick. */
    char old[PATH_MAX + 32], fresh[PATH_MAX + 32];
    snprintf(old, sizeof(old), "%s/logs/s-1-0.stdout", tmp_state);
    snprintf(fresh, sizeof(fresh), "%s/logs/s-2-0.stdout", tmp_state);
    FILE *f1 = fopen(old, "w"), *f2 = fopen(fresh, "w");
    ck_assert_ptr_nonnull(f1);
    ck_assert_ptr_nonnull(f2);
    fclose(f1);
    fclose(f2);
    struct timeval tv[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
    ck_assert_int_eq(utimes(old, tv), 0);
    SKV_CK_OK(skv_agent_tick(a, now + 180000, &e), &e);
    ck_assert_int_ne(access(old, F_OK), 0);
    ck_assert_int_eq(access(fresh, F_OK), 0);
    /* Down: nothing is sent, the kernels stay. */
    skv_agent_disconnected(a, now);
    before = c.n;
    SKV_CK_OK(skv_agent_tick(a, now + 10000, &e), &e);
    ck_assert_uint_eq(c.n, before);
    skv_agent_free(a);
    conn_clear(&c);
    tmp_teardown();
}
END_TEST

/* Last captured frame is an error with this code; returns its message. */
static void expect_error(const conn *c, int code)
{
    ck_assert_uint_gt(c->n, 0);
    skv_proto_error m = {0};
    body_of(&m, c, c->n - 1, SKV_PROTO_ERROR, NULL);
    ck_assert_msg(m.code == code, "error %s (%s), expected %s",
                  skv_err_name(m.code), m.message, skv_err_name(code));
    ck_assert_ptr_nonnull(m.message);
    skv_proto_body_free(SKV_PROTO_ERROR, &m);
}

static skv_proto_device_alloc *make_alloc(size_t *n, skv_qty cpu, skv_qty mem,
                                          const char *gpu)
{
    skv_proto_device_alloc *al = calloc(3, sizeof(*al));
    al[0].device_id = "cpu";
    skv_slots_new(&al[0].slots, NULL);
    skv_slots_set(al[0].slots, "cpu", SKV_SLOT_COUNT, cpu, NULL);
    al[1].device_id = "mem";
    skv_slots_new(&al[1].slots, NULL);
    skv_slots_set(al[1].slots, "mem", SKV_SLOT_BYTES, mem, NULL);
    *n = 2;
    if (gpu) {
        al[2].device_id = (char *)gpu;
        skv_slots_new(&al[2].slots, NULL);
        skv_slots_set(al[2].slots, "cuda.device", SKV_SLOT_COUNT,
                      SKV_QTY_SCALE, NULL);
        *n = 3;
    }
    return al;
}

static void free_alloc(skv_proto_device_alloc *al, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv_slots_free(al[i].slots);
    free(al);
}

START_TEST(test_refused_frames)
{
    conn c = {0};
    tmp_setup();
    int64_t now = wall_ms();
    skv_agent *a = open_agent(&c, tmp_state, NUMA4, NULL, 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, now, &e), &e);
    /* Garbage: an error reply, and the host must drop the connection. */
    static const uint8_t junk[] = {0x93, 0x01, 0xc1, 0xff};
    ck_assert_int_lt(skv_agent_handle_frame(a, junk, sizeof(junk), now, &e),
                     0);
    ck_assert_int_eq(find(&c, 1, SKV_PROTO_ERROR), 1);
    /* A request an agent does not serve: refused, connection kept. */
    skv_proto_session_id sid = {"s-1"};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 7, SKV_PROTO_SESSION_SHOW,
                          &sid, now), 0);
    expect_error(&c, SKV_ENOTSUP);
    /* kernel.create naming a device the agent does not have, or an id
     * that would escape the state directory: errors, nothing held. */
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 1000, 1 << 20, "cuda7");
    char *argv[] = {"true"};
    skv_proto_kernel_create kc = {0};
    kc.session_id = "s-0123456789abcdef";
    kc.kernel_id = "s-0123456789abcdef-0";
    kc.image = "busybox";
    kc.argv = argv;
    kc.n_argv = 1;
    kc.alloc = al;
    kc.n_alloc = n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 8, SKV_PROTO_KERNEL_CREATE,
                          &kc, now), 0);
    expect_error(&c, SKV_EINVAL);
    kc.n_alloc = 2;
    kc.kernel_id = "../../etc";
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 9, SKV_PROTO_KERNEL_CREATE,
                          &kc, now), 0);
    expect_error(&c, SKV_EINVAL);
    /* More cpu than the agent has. */
    kc.kernel_id = "s-0123456789abcdef-0";
    skv_slots_set(al[0].slots, "cpu", SKV_SLOT_COUNT, 97 * SKV_QTY_SCALE,
                  NULL);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 10, SKV_PROTO_KERNEL_CREATE,
                          &kc, now), 0);
    expect_error(&c, SKV_ENOSPC);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    free_alloc(al, n);
    /* Destroying an unknown kernel is acknowledged; its logs do not exist. */
    skv_proto_kernel_destroy kd = {"s-1", "s-1-0", "test", 0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 11, SKV_PROTO_KERNEL_DESTROY,
                          &kd, now), 0);
    ck_assert_int_eq(find(&c, c.n - 1, SKV_PROTO_ACK), (long)c.n - 1);
    skv_proto_logs_request lq = {0};
    lq.session_id = "s-1";
    lq.kernel_id = "s-1-0";
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 12, SKV_PROTO_KERNEL_LOGS,
                          &lq, now), 0);
    expect_error(&c, SKV_ENOENT);
    lq.stream = "stdin";
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 13, SKV_PROTO_KERNEL_LOGS,
                          &lq, now), 0);
    expect_error(&c, SKV_EINVAL);
    /* The manager refuses the registration: the host must drop it. */
    SKV_CK_OK(skv_agent_connected(a, now, &e), &e);
    void *frame = NULL;
    size_t len = 0;
    uint64_t rid = 0;
    {
        skv_proto_envelope env;
        decode(&env, &c, c.n - 1);
        rid = env.request_id;
        skv_proto_envelope_free(&env);
    }
    SKV_CK_OK(skv_proto_error_encode(&frame, &len, rid, SKV_EAUTH,
                                     "bad signature", "agent.register", now,
                                     NULL, &e), &e);
    ck_assert_int_eq(skv_agent_handle_frame(a, (uint8_t *)frame + 4, len - 4,
                                            now, &e), SKV_EAUTH);
    ck_assert_ptr_nonnull(strstr(e.message, "bad signature"));
    skv_free(frame);
    skv_agent_free(a);
    conn_clear(&c);
    tmp_teardown();
}
END_TEST

START_TEST(test_accelerator_slice)
{
    conn c = {0};
    tmp_setup();
    char path[PATH_MAX];
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.agent_id = "a2";
    o.access_key = AK;
    o.secret_key = SK;
    o.state_dir = tmp_state;
    o.plugins = "cpu;mem;mock:count=2,prefix=cuda";
    o.topology_xml = skv_test_data_path(path, sizeof(path), NUMA4);
    o.accelerators = "cuda9";
    skv_agent *a = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "cuda9"));
    /* Version 1 options end before the field: all accelerators. */
    o.version = 1;
    SKV_CK_OK(skv_agent_open(&a, &o, capture, &c, 0, &e), &e);
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_agent_register r = {0};
    body_of(&r, &c, 0, SKV_PROTO_AGENT_REGISTER, NULL);
    ck_assert_uint_eq(r.n_devices, 4);
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &r);
    skv_agent_free(a);
    conn_clear(&c);
    /* Only cuda1: cuda0 is neither registered nor usable. */
    o.version = SKV_AGENT_OPTIONS_VERSION;
    o.accelerators = "cuda1";
    SKV_CK_OK(skv_agent_open(&a, &o, capture, &c, 0, &e), &e);
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    body_of(&r, &c, 0, SKV_PROTO_AGENT_REGISTER, NULL);
    ck_assert_uint_eq(r.n_devices, 3);
    ck_assert_ptr_null(dev_named(&r, "cuda0"));
    ck_assert_ptr_nonnull(dev_named(&r, "cuda1"));
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &r);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 1000, 1 << 20, "cuda0");
    char *argv[] = {"true"};
    skv_proto_kernel_create kc = {0};
    kc.session_id = "s-0123456789abcdef";
    kc.kernel_id = "s-0123456789abcdef-0";
    kc.image = "busybox";
    kc.argv = argv;
    kc.n_argv = 1;
    kc.alloc = al;
    kc.n_alloc = n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 8, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    expect_error(&c, SKV_EINVAL);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
    tmp_teardown();
}
END_TEST

START_TEST(test_bad_records)
{
    conn c = {0};
    tmp_setup();
    char dir[PATH_MAX + 16], p1[PATH_MAX + 64], p2[PATH_MAX + 64];
    snprintf(dir, sizeof(dir), "%s/kernels", tmp_state);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    snprintf(p1, sizeof(p1), "%s/s-1-0.rec", dir);
    snprintf(p2, sizeof(p2), "%s/s-2-0.rec", dir);
    FILE *f = fopen(p1, "wb");
    fputs("not a record", f);
    fclose(f);
    /* A length prefix promising more than there is. */
    static const uint8_t trunc[] = {0, 0, 0, 9, 0x81, 0xa1};
    f = fopen(p2, "wb");
    fwrite(trunc, 1, sizeof(trunc), f);
    fclose(f);
    skv_agent *a = open_agent(&c, tmp_state, NUMA4, NULL, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    ck_assert_int_ne(access(p1, F_OK), 0);
    strcat(p1, ".bad");
    strcat(p2, ".bad");
    ck_assert_int_eq(access(p1, F_OK), 0);
    ck_assert_int_eq(access(p2, F_OK), 0);
    skv_agent_free(a);
    /* Set aside once: the next agent does not read them again. */
    a = open_agent(&c, tmp_state, NUMA4, NULL, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    skv_agent_free(a);
    tmp_teardown();
}
END_TEST

START_TEST(test_open_errors)
{
    conn c = {0};
    skv_agent *a = NULL;
    skv_error e = SKV_ERROR_INIT;
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    o.agent_id = "a1";
    o.access_key = AK;
    o.secret_key = SK;
    o.state_dir = "relative/dir";
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    o.state_dir = "/tmp/x";
    o.agent_id = "bad/id";
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    o.agent_id = "a1";
    o.secret_key = NULL;
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    o.secret_key = SK;
    o.version = 99;
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e),
                     SKV_EVERSION);
    o.version = SKV_AGENT_OPTIONS_VERSION;
    ck_assert_int_eq(skv_agent_open(&a, &o, NULL, &c, 0, &e), SKV_EINVAL);
    /* Node problems: no cpu plugin; an unknown plugin; a CPU list without
     * a whole core. */
    tmp_setup();
    char path[PATH_MAX];
    o.state_dir = tmp_state;
    o.topology_xml = skv_test_data_path(path, sizeof(path), NUMA4);
    o.plugins = "mem";
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    o.plugins = "cpu;mem;nope";
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "nope"));
    o.plugins = "cpu;mem";
    o.cpus = "500";
    ck_assert_int_eq(skv_agent_open(&a, &o, capture, &c, 0, &e), SKV_EINVAL);
    ck_assert_ptr_null(a);
    tmp_teardown();
}
END_TEST

/* ---- containers (root) ----------------------------------------------------- */

static char *agent_state(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/state-%s", skv_rtfx_root, name);
    return buf;
}

static void build_create(skv_proto_kernel_create *kc, const char *kid,
                         char **argv, size_t argc, skv_proto_device_alloc *al,
                         size_t nal)
{
    memset(kc, 0, sizeof(*kc));
    kc->session_id = "s-00000000000000aa";
    kc->kernel_id = (char *)kid;
    kc->owner = "alice";
    kc->session_type = "batch";
    kc->image = "busybox";
    kc->argv = argv;
    kc->n_argv = argc;
    kc->alloc = al;
    kc->n_alloc = nal;
    kc->cluster_mode = "single-node";
    kc->cluster_role = "main";
    kc->cluster_idx = 1;
    kc->cluster_size = 1;
}

/* Tick (real time) until a kernel.exit for kid arrives; returns its frame
 * index. */
static long wait_exit(skv_agent *a, conn *c, size_t from, const char *kid)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 400; i++) {
        SKV_CK_OK(skv_agent_tick(a, wall_ms(), &e), &e);
        long x = find(c, from, SKV_PROTO_KERNEL_EXIT);
        if (x >= 0) {
            skv_proto_kernel_exit m = {0};
            body_of(&m, c, (size_t)x, SKV_PROTO_KERNEL_EXIT, NULL);
            int same = strcmp(m.kernel_id, kid) == 0;
            skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &m);
            if (same)
                return x;
            from = (size_t)x + 1;
            continue;
        }
        usleep(50 * 1000);
    }
    return -1;
}

static skv_proto_logs_reply logs(skv_agent *a, conn *c, const char *kid,
                                 const char *stream, uint64_t off)
{
    skv_proto_logs_request lq = {0};
    lq.session_id = "s-00000000000000aa";
    lq.kernel_id = (char *)kid;
    lq.stream = (char *)stream;
    lq.offset = off;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 50, SKV_PROTO_KERNEL_LOGS,
                          &lq, wall_ms()), 0);
    skv_proto_logs_reply r = {0};
    body_of(&r, c, c->n - 1, SKV_PROTO_LOGS_REPLY, NULL);
    return r;
}

static void registered(skv_agent *a, conn *c)
{
    skv_error e = SKV_ERROR_INIT;
    size_t from = c->n;
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    ck_assert_int_eq(find(c, from, SKV_PROTO_AGENT_REGISTER), (long)from);
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
    ck_assert_int_eq(feed(a, SKV_PROTO_RESPONSE, 1,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep, wall_ms()),
                     0);
}

START_TEST(test_kernel_lifecycle)
{
    SKV_RTFX_REQUIRE();
    conn c = {0};
    char state[PATH_MAX];
    skv_agent *a = open_agent(&c, agent_state(state, sizeof(state), "life"),
                              NULL, NULL, 0);
    registered(a, &c);
    /* The registration carries each image's size and digest. */
    skv_proto_agent_register reg;
    body_of(&reg, &c, (size_t)find(&c, 0, SKV_PROTO_AGENT_REGISTER),
            SKV_PROTO_AGENT_REGISTER, NULL);
    const skv_proto_image_detail *bb = NULL;
    for (size_t i = 0; i < reg.n_image_details; i++)
        if (!strcmp(reg.image_details[i].name, "busybox"))
            bb = &reg.image_details[i];
    ck_assert_ptr_nonnull(bb);
    ck_assert_uint_gt(bb->size_bytes, 0);
    ck_assert_msg(bb->digest && !strncmp(bb->digest, "sha256:", 7) &&
                      strlen(bb->digest) == 71, "digest %s",
                  bb->digest ? bb->digest : "(none)");
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &reg);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 500, 64 << 20, "cuda1");
    char *argv[] = {"sh", "-c", "echo hello; echo gpu=$CUDA_VISIBLE_DEVICES;"
                    " hostname; echo oops >&2; exit 3"};
    skv_proto_kernel_create kc;
    const char *kid = "s-00000000000000aa-0";
    build_create(&kc, kid, argv, 3, al, n);
    /* A container that cannot be created: an error naming the image, and
     * nothing held (no kernel, no record, the GPU free again below). */
    kc.image = "no-such-image";
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 19, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    {
        skv_proto_error m = {0};
        body_of(&m, &c, c.n - 1, SKV_PROTO_ERROR, NULL);
        ck_assert_ptr_nonnull(strstr(m.message, "no-such-image"));
        skv_proto_body_free(SKV_PROTO_ERROR, &m);
    }
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    kc.image = "busybox";
    size_t from = c.n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 20, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    long r = find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY);
    ck_assert_msg(r >= 0, "no create reply (last frame: error?)");
    skv_proto_kernel_create_reply cr = {0};
    skv_proto_envelope env;
    body_of(&cr, &c, (size_t)r, SKV_PROTO_KERNEL_CREATE_REPLY, &env);
    ck_assert_uint_eq(env.request_id, 20);
    ck_assert_int_eq(env.kind, SKV_PROTO_RESPONSE);
    ck_assert_str_eq(cr.container_id, kid);
    skv_proto_envelope_free(&env);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE_REPLY, &cr);
    long st = find(&c, from, SKV_PROTO_KERNEL_STATUS);
    ck_assert_int_ge(st, 0);
    skv_proto_kernel_status ks = {0};
    body_of(&ks, &c, (size_t)st, SKV_PROTO_KERNEL_STATUS, NULL);
    ck_assert_str_eq(ks.status, "running");
    skv_proto_body_free(SKV_PROTO_KERNEL_STATUS, &ks);
    /* The record names the accelerator the manager chose. */
    char rec[PATH_MAX + 64], buf[4096] = {0};
    snprintf(rec, sizeof(rec), "%s/kernels/%s.rec", state, kid);
    FILE *f = fopen(rec, "rb");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    ck_assert_uint_gt(got, 0);
    ck_assert_ptr_nonnull(memmem(buf, got, "cuda.device\t1\t1000", 18));
    /* Idempotent: the same create again answers, starts nothing. */
    from = c.n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 21, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    ck_assert_int_ge(find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    /* The exit is reported with its code; the kernel is kept. */
    long x = wait_exit(a, &c, from, kid);
    ck_assert_int_ge(x, 0);
    skv_proto_kernel_exit ke = {0};
    body_of(&ke, &c, (size_t)x, SKV_PROTO_KERNEL_EXIT, NULL);
    ck_assert_int_eq(ke.exit_code, 3);
    ck_assert_int_eq(ke.signal, 0);
    ck_assert_str_eq(ke.agent_id, "a1");
    ck_assert_int_gt(ke.finished_ms, 0);
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &ke);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    skv_proto_logs_reply lr = logs(a, &c, kid, NULL, 0);
    ck_assert_uint_gt(lr.data_len, 0);
    ck_assert_msg(memmem(lr.data, lr.data_len, "hello\ngpu=1\nmain1\n", 18),
                  "stdout: %.*s", (int)lr.data_len, (char *)lr.data);
    ck_assert_int_eq(lr.eof, 1);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    /* Destroy: ack, nothing held, logs kept (from an offset too). */
    skv_proto_kernel_destroy kd = {"s-00000000000000aa", (char *)kid, "done",
                                   0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 22, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_int_eq(find(&c, c.n - 1, SKV_PROTO_ACK), (long)c.n - 1);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    ck_assert_int_ne(access(rec, F_OK), 0);
    lr = logs(a, &c, kid, "stderr", 0);
    /* Ends with the command's output (under ASan the runtime's forked
     * side may warn first on the container's stderr). */
    ck_assert_msg(lr.data_len >= 5 &&
                      memcmp(lr.data + lr.data_len - 5, "oops\n", 5) == 0,
                  "stderr: %.*s", (int)lr.data_len, (char *)lr.data);
    ck_assert_int_eq(lr.eof, 1);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    lr = logs(a, &c, kid, "stdout", 6);
    ck_assert_uint_ge(lr.data_len, 6);
    ck_assert_int_eq(memcmp(lr.data, "gpu=1\n", 6), 0);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    /* Everything was released: the same GPU can be had again. */
    kc.kernel_id = "s-00000000000000aa-1";
    char *argv2[] = {"true"};
    kc.argv = argv2;
    kc.n_argv = 1;
    from = c.n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 23, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    ck_assert_int_ge(find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY), 0);
    ck_assert_int_ge(wait_exit(a, &c, from, kc.kernel_id), 0);
    kd.kernel_id = kc.kernel_id;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 24, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* Index of the first frame from `from` of type t answering request req
 * (0: any), ticking the agent meanwhile (up to ~10 s); -1 if none. */
static long tick_until(skv_agent *a, conn *c, size_t from, skv_proto_type t,
                       uint64_t req)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 1000; i++) {
        SKV_CK_OK(skv_agent_tick(a, wall_ms(), &e), &e);
        for (size_t j = from; j < c->n; j++) {
            skv_proto_envelope env;
            decode(&env, c, j);
            bool hit = env.type == t && (!req || env.request_id == req);
            skv_proto_envelope_free(&env);
            if (hit)
                return (long)j;
        }
        usleep(10 * 1000);
    }
    return -1;
}

/* Containers created by creator threads: answers come on ticks, a repeated
 * create moves the answer to the latest request, a destroy that comes
 * while the container is being created waits for it, and an agent freed
 * with a create in flight finds the kernel again when reopened. */
START_TEST(test_background_create)
{
    SKV_RTFX_REQUIRE();
    conn c = {0};
    char state[PATH_MAX];
    g_create_threads = 2;
    agent_state(state, sizeof(state), "bg");
    skv_agent *a = open_agent(&c, state, NULL, NULL, 0);
    registered(a, &c);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 500, 64 << 20, NULL);
    char *sleeper[] = {"sleep", "30"}, *seven[] = {"sh", "-c", "exit 7"};
    skv_proto_kernel_create k0, k1;
    build_create(&k0, "s-00000000000000aa-0", sleeper, 2, al, n);
    build_create(&k1, "s-00000000000000bb-0", seven, 3, al, n);
    size_t from = c.n;
    /* No tick in between: the agent cannot have answered either yet. */
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 30, SKV_PROTO_KERNEL_CREATE,
                          &k0, wall_ms()), 0);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 31, SKV_PROTO_KERNEL_CREATE,
                          &k0, wall_ms()), 0);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 32, SKV_PROTO_KERNEL_CREATE,
                          &k1, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 2);
    ck_assert_int_lt(find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY), 0);
    {
        /* Metrics show them as being created. */
        skv_metrics *reg = NULL;
        skv_error e = SKV_ERROR_INIT;
        SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
        SKV_CK_OK(skv_agent_metrics_collect(a, reg, wall_ms(), &e), &e);
        const char *st[] = {"creating"};
        double v = -1;
        SKV_CK_OK(skv_metrics_get(&v, skv_metrics_find(reg,
                                      "sokovan_agent_kernels"), st, 1, &e),
                  &e);
        ck_assert_double_eq(v, 2);
        skv_metrics_free(reg);
    }
    skv_proto_kernel_destroy kd = {"s-00000000000000aa", k0.kernel_id,
                                   "terminated", 0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 33, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_int_lt(find(&c, from, SKV_PROTO_ACK), 0);
    /* k0: answered to 31 only, then killed and acknowledged. */
    long r31 = tick_until(a, &c, from, SKV_PROTO_KERNEL_CREATE_REPLY, 31);
    ck_assert_int_ge(r31, 0);
    long ack = tick_until(a, &c, from, SKV_PROTO_ACK, 33);
    ck_assert_int_gt(ack, r31);
    long x = find(&c, (size_t)r31, SKV_PROTO_KERNEL_EXIT);
    ck_assert_int_ge(x, 0);
    ck_assert_int_lt(x, ack);
    skv_proto_kernel_exit ke = {0};
    body_of(&ke, &c, (size_t)x, SKV_PROTO_KERNEL_EXIT, NULL);
    ck_assert_str_eq(ke.kernel_id, k0.kernel_id);
    ck_assert_int_eq(ke.signal, SIGKILL);
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &ke);
    for (size_t i = from; i < c.n; i++) {
        skv_proto_envelope env;
        decode(&env, &c, i);
        ck_assert(env.request_id != 30 || env.kind != SKV_PROTO_RESPONSE);
        skv_proto_envelope_free(&env);
    }
    /* k1: answered and its exit code reported. */
    ck_assert_int_ge(tick_until(a, &c, from, SKV_PROTO_KERNEL_CREATE_REPLY,
                                32), 0);
    long x1 = wait_exit(a, &c, from, k1.kernel_id);
    ck_assert_int_ge(x1, 0);
    body_of(&ke, &c, (size_t)x1, SKV_PROTO_KERNEL_EXIT, NULL);
    ck_assert_int_eq(ke.exit_code, 7);
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &ke);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    /* Freed with a create in flight: the record came first, so the
     * reopened agent holds the kernel with its running container. */
    build_create(&k0, "s-00000000000000cc-0", sleeper, 2, al, n);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 34, SKV_PROTO_KERNEL_CREATE,
                          &k0, wall_ms()), 0);
    skv_agent_free(a);
    conn_clear(&c);
    a = open_agent(&c, state, NULL, NULL, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 2);
    registered(a, &c);
    const char *ids[] = {"s-00000000000000cc-0", "s-00000000000000bb-0"};
    for (uint64_t i = 0; i < 2; i++) {
        kd.kernel_id = (char *)ids[i];
        from = c.n;
        ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 40 + i,
                              SKV_PROTO_KERNEL_DESTROY, &kd, wall_ms()), 0);
        ck_assert_int_ge(tick_until(a, &c, from, SKV_PROTO_ACK, 40 + i), 0);
    }
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

START_TEST(test_restart_reattaches)
{
    SKV_RTFX_REQUIRE();
    conn c = {0};
    char state[PATH_MAX];
    agent_state(state, sizeof(state), "restart");
    skv_agent *a = open_agent(&c, state, NULL, NULL, 0);
    registered(a, &c);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 1000, 32 << 20, "cuda0");
    char *argv[] = {"sh", "-c", "sleep 2; echo done; exit 7"};
    skv_proto_kernel_create kc;
    const char *kid = "s-00000000000000aa-0";
    build_create(&kc, kid, argv, 3, al, n);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 30, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    ck_assert_int_ge(find(&c, 0, SKV_PROTO_KERNEL_CREATE_REPLY), 0);
    /* The agent goes away while the container runs. */
    skv_agent_free(a);
    conn_clear(&c);
    a = open_agent(&c, state, NULL, NULL, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_agent_register r = {0};
    check_register(&r, &c, 0, wall_ms());
    ck_assert_uint_eq(r.n_kernels, 1);
    ck_assert_str_eq(r.kernels[0].kernel_id, kid);
    ck_assert_uint_eq(r.kernels[0].n_alloc, 3);
    ck_assert_str_eq(r.kernels[0].alloc[2].device_id, "cuda0");
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &r);
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms()};
    ck_assert_int_eq(feed(a, SKV_PROTO_RESPONSE, 1,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep, wall_ms()),
                     0);
    /* Statistics of the running kernel it re-attached to. */
    size_t from = c.n;
    SKV_CK_OK(skv_agent_tick(a, wall_ms(), &e), &e);
    long sx = find(&c, from, SKV_PROTO_AGENT_STATS);
    ck_assert_int_ge(sx, 0);
    skv_proto_agent_stats as = {0};
    body_of(&as, &c, (size_t)sx, SKV_PROTO_AGENT_STATS, NULL);
    ck_assert_uint_eq(as.n_kernels, 1);
    ck_assert_str_eq(as.kernels[0].kernel_id, kid);
    skv_proto_body_free(SKV_PROTO_AGENT_STATS, &as);
    /* Its GPU is still held: asking for it again for another kernel fails. */
    build_create(&kc, "s-00000000000000aa-1", argv, 3, al, n);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 31, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    {
        skv_proto_error m = {0};
        body_of(&m, &c, c.n - 1, SKV_PROTO_ERROR, NULL);
        skv_proto_body_free(SKV_PROTO_ERROR, &m);
    }
    /* The exit is reported by the new agent, and again after the next
     * registration until kernel.destroy confirms it. */
    long x = wait_exit(a, &c, 0, kid);
    ck_assert_int_ge(x, 0);
    skv_proto_kernel_exit ke = {0};
    body_of(&ke, &c, (size_t)x, SKV_PROTO_KERNEL_EXIT, NULL);
    ck_assert_int_eq(ke.exit_code, 7);
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &ke);
    skv_agent_disconnected(a, wall_ms());
    from = c.n;
    registered(a, &c);
    ck_assert_int_ge(find(&c, from, SKV_PROTO_KERNEL_EXIT), 0);
    skv_proto_kernel_destroy kd = {"s-00000000000000aa", (char *)kid, "done",
                                   0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 32, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    skv_proto_logs_reply lr = logs(a, &c, kid, NULL, 0);
    ck_assert_uint_eq(lr.data_len, 5);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* Session networks (bridges, rules, forwarding) go into a network
 * namespace of the forked test process, gone with it. */
static void private_netns(void)
{
    ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %m");
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ioctl(fd, SIOCGIFFLAGS, &ifr), 0);
    ifr.ifr_flags |= IFF_UP;
    ck_assert_int_eq(ioctl(fd, SIOCSIFFLAGS, &ifr), 0);
    close(fd);
}

/* Links of session networks: in the private namespace, every link but the
 * loopback. */
static size_t net_links(void)
{
    char **names = NULL;
    size_t n = 0, count = 0;
    skv_error e = SKV_ERROR_INIT;
    const char *letters = "abcdefghijklmnopqrstuvwxyz";
    for (const char *l = letters; *l; l++) {
        char p[2] = {*l, '\0'};
        SKV_CK_OK(skv_net_links(p, &names, &n, &e), &e);
        for (size_t i = 0; i < n; i++)
            count += strcmp(names[i], "lo") != 0;
        skv_net_links_free(names, n);
    }
    return count;
}

START_TEST(test_cluster_kernel)
{
    SKV_RTFX_REQUIRE();
    private_netns();
    conn c = {0};
    char state[PATH_MAX];
    skv_agent *a = open_agent(&c, agent_state(state, sizeof(state), "clu"),
                              NULL, NULL, 0);
    registered(a, &c);
    /* The third kernel of a 3-kernel multi-node session: sub2, one whole
     * core (an exclusive placement), no accelerator. */
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 1000, 32 << 20, NULL);
    char *argv[] = {"sh", "-c", "echo $(hostname) $SOKOVAN_CLUSTER_HOSTS "
                    "$SOKOVAN_CLUSTER_SIZE $SOKOVAN_CLUSTER_LOCAL_RANK "
                    "$SOKOVAN_CLUSTER_MODE $FOO"};
    skv_proto_cluster_host hosts[3] = {{"main1", "main", 1, "10.0.0.1"},
                                       {"sub1", "sub", 1, "10.0.0.1"},
                                       {"sub2", "sub", 2, "10.0.0.2"}};
    skv_proto_kv env[] = {{"FOO", "bar"}};
    skv_proto_kernel_create kc;
    const char *kid = "s-00000000000000aa-2";
    build_create(&kc, kid, argv, 3, al, n);
    kc.cluster_mode = "multi-node";
    kc.cluster_role = "sub";
    kc.cluster_idx = 2;
    kc.cluster_size = 3;
    kc.cluster_hosts = hosts;
    kc.n_cluster_hosts = 3;
    kc.env = env;
    kc.n_env = 1;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 40, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    ck_assert_msg(find(&c, 0, SKV_PROTO_KERNEL_CREATE_REPLY) >= 0,
                  "no create reply");
    ck_assert_int_ge(wait_exit(a, &c, 0, kid), 0);
    skv_proto_logs_reply lr = logs(a, &c, kid, NULL, 0);
    static const char want[] = "sub2 main1,sub1,sub2 3 2 multi-node bar\n";
    ck_assert_msg(lr.data_len == sizeof(want) - 1 &&
                      memcmp(lr.data, want, lr.data_len) == 0,
                  "stdout: %.*s", (int)lr.data_len, (char *)lr.data);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    skv_proto_kernel_destroy kd = {"s-00000000000000aa", (char *)kid, "done",
                                   0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 41, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    /* Destroying a running kernel with a grace period does not block: the
     * ack comes from a later tick, after a kernel.exit that says how the
     * container ended (sleep as PID 1 ignores SIGTERM: SIGKILL after the
     * grace period). */
    char *sleeper[] = {"sleep", "30"};
    build_create(&kc, "s-00000000000000aa-3", sleeper, 2, al, n);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 42, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    size_t from = c.n;
    kd.kernel_id = kc.kernel_id;
    kd.grace_ms = 300;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 43, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(c.n, from);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < 200 && skv_agent_kernel_count(a) > 0; i++) {
        usleep(20 * 1000);
        SKV_CK_OK(skv_agent_tick(a, wall_ms(), &e), &e);
    }
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    long ak = find(&c, from, SKV_PROTO_ACK);
    ck_assert_int_ge(ak, 0);
    skv_proto_envelope ackenv;
    decode(&ackenv, &c, (size_t)ak);
    ck_assert_uint_eq(ackenv.request_id, 43);
    skv_proto_envelope_free(&ackenv);
    long x = find(&c, from, SKV_PROTO_KERNEL_EXIT);
    ck_assert_msg(x >= 0 && x < ak, "kernel.exit at %ld, ack at %ld", x, ak);
    skv_proto_kernel_exit ke;
    body_of(&ke, &c, (size_t)x, SKV_PROTO_KERNEL_EXIT, NULL);
    ck_assert_int_eq(ke.signal, SIGKILL);
    ck_assert_str_eq(ke.kernel_id, "s-00000000000000aa-3");
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &ke);
    /* A second destroy without grace (a forced terminate) ends a kernel
     * still in its grace period at once: both requests are answered. */
    build_create(&kc, "s-00000000000000aa-4", sleeper, 2, al, n);
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 44, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    kd.kernel_id = kc.kernel_id;
    kd.grace_ms = 60000;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 45, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    from = c.n;
    kd.grace_ms = 0;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 46, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    uint64_t acked[2] = {0, 0};
    for (int i = 0; i < 2; i++) {
        ak = find(&c, from, SKV_PROTO_ACK);
        ck_assert_int_ge(ak, 0);
        decode(&ackenv, &c, (size_t)ak);
        acked[i] = ackenv.request_id;
        skv_proto_envelope_free(&ackenv);
        from = (size_t)ak + 1;
    }
    ck_assert_uint_eq(acked[0], 45);
    ck_assert_uint_eq(acked[1], 46);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

static char *stdout_of(skv_agent *a, conn *c, const char *kid)
{
    skv_proto_logs_reply lr = logs(a, c, kid, NULL, 0);
    char *s = strndup((const char *)lr.data, lr.data_len);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &lr);
    return s;
}

/* Two kernels of one session on one agent: a bridge of their own, each
 * resolves the other by cluster hostname and they talk TCP; both have the
 * same SSH key pair; the main kernel's port is published; destroying the
 * last kernel removes every link. */
START_TEST(test_cluster_network)
{
    SKV_RTFX_REQUIRE();
    private_netns();
    conn c = {0};
    char state[PATH_MAX];
    skv_agent *a = open_agent(&c, agent_state(state, sizeof(state), "cnet"),
                              NULL, NULL, 0);
    registered(a, &c);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 500, 32 << 20, NULL);
#define SUMS                                                                 \
    "busybox md5sum /home/work/.ssh/id_ed25519 "                             \
    "/home/work/.ssh/authorized_keys 2>&1"
    char *main_argv[] = {"sh", "-c", "echo hello-from-$(hostname) | "
                         "busybox nc -l -p 7411; " SUMS};
    char *sub_argv[] = {"sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 "
                        "14 15 16 17 18 19 20; do busybox nc main1 7411 && "
                        "break; sleep 1; done; " SUMS};
    skv_proto_cluster_host hosts[2] = {{"main1", "main", 1, NULL},
                                       {"sub1", "sub", 1, NULL}};
    uint32_t ports[] = {7411};
    const char *kids[2] = {"s-00000000000000bb-0", "s-00000000000000bb-1"};
    skv_proto_kernel_create kc;
    for (int i = 0; i < 2; i++) {
        build_create(&kc, kids[i], i ? sub_argv : main_argv, 3, al, n);
        kc.session_id = "s-00000000000000bb";
        kc.cluster_role = i ? "sub" : "main";
        kc.cluster_size = 2;
        kc.cluster_hosts = hosts;
        kc.n_cluster_hosts = 2;
        kc.ports = ports;
        kc.n_ports = 1;
        size_t from = c.n;
        ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 60 + (uint64_t)i,
                              SKV_PROTO_KERNEL_CREATE, &kc, wall_ms()), 0);
        long r = find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY);
        ck_assert_msg(r >= 0, "kernel %d: no create reply", i);
        skv_proto_kernel_create_reply cr = {0};
        body_of(&cr, &c, (size_t)r, SKV_PROTO_KERNEL_CREATE_REPLY, NULL);
        ck_assert_str_eq(cr.address, i ? "10.250.0.3" : "10.250.0.2");
        /* Published ports: the main kernel's only. */
        ck_assert_uint_eq(cr.n_published, i ? 0 : 1);
        if (!i)
            ck_assert_msg(!strncmp(cr.published[0], "tcp:7411=", 9), "%s",
                          cr.published[0]);
        skv_proto_body_free(SKV_PROTO_KERNEL_CREATE_REPLY, &cr);
    }
    /* The session's bridge (the veths go when the kernels end). */
    ck_assert_uint_ge(net_links(), 1);
    ck_assert_int_ge(wait_exit(a, &c, 0, kids[0]), 0);
    ck_assert_int_ge(wait_exit(a, &c, 0, kids[1]), 0);
    char *out0 = stdout_of(a, &c, kids[0]);
    char *out1 = stdout_of(a, &c, kids[1]);
    ck_assert_msg(!strncmp(out1, "hello-from-main1\n", 17), "sub1: '%s'",
                  out1);
    /* The same two checksums, for the same files, in both kernels. */
    const char *sums1 = out1 + 17;
    size_t want = 2 * 34 + strlen("/home/work/.ssh/id_ed25519\n"
                                  "/home/work/.ssh/authorized_keys\n");
    ck_assert_msg(strlen(out0) == want &&
                      strcmp(out0, sums1) == 0 &&
                      strstr(out0, "  /home/work/.ssh/id_ed25519\n") &&
                      strstr(out0, "  /home/work/.ssh/authorized_keys\n"),
                  "main1: '%s' sub1: '%s'", out0, sums1);
    free(out0);
    free(out1);
    skv_proto_kernel_destroy kd = {"s-00000000000000bb", (char *)kids[0],
                                   "done", 0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 70, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    /* The bridge stays while sub1 is held. */
    ck_assert_uint_ge(net_links(), 1);
    kd.kernel_id = (char *)kids[1];
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 71, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    ck_assert_uint_eq(net_links(), 0);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* A restarted agent adopts the network of a session it still holds and
 * removes the network of one it no longer holds (its record is gone). */
START_TEST(test_cluster_network_restart)
{
    SKV_RTFX_REQUIRE();
    private_netns();
    conn c = {0};
    char state[PATH_MAX];
    agent_state(state, sizeof(state), "cnetr");
    skv_agent *a = open_agent(&c, state, NULL, NULL, 0);
    registered(a, &c);
    size_t n = 0;
    skv_proto_device_alloc *al = make_alloc(&n, 500, 32 << 20, NULL);
    char *argv[] = {"sleep", "30"};
    skv_proto_cluster_host hosts[2] = {{"main1", "main", 1, NULL},
                                       {"sub1", "sub", 1, NULL}};
    const char *kids[2] = {"s-00000000000000c1-0", "s-00000000000000c2-0"};
    const char *sids[2] = {"s-00000000000000c1", "s-00000000000000c2"};
    skv_proto_kernel_create kc;
    for (int i = 0; i < 2; i++) {
        build_create(&kc, kids[i], argv, 2, al, n);
        kc.session_id = (char *)sids[i];
        kc.cluster_size = 2;
        kc.cluster_hosts = hosts;
        kc.n_cluster_hosts = 2;
        size_t from = c.n;
        ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 80 + (uint64_t)i,
                              SKV_PROTO_KERNEL_CREATE, &kc, wall_ms()), 0);
        ck_assert_int_ge(find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY), 0);
    }
    /* Two bridges and two veths. */
    ck_assert_uint_eq(net_links(), 4);
    skv_agent_free(a);
    conn_clear(&c);
    char rec[PATH_MAX + 64];
    snprintf(rec, sizeof(rec), "%s/kernels/%s.rec", state, kids[1]);
    ck_assert_int_eq(unlink(rec), 0);
    a = open_agent(&c, state, NULL, NULL, 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 1);
    /* The second session's container and network are gone. */
    ck_assert_uint_eq(net_links(), 2);
    registered(a, &c);
    /* The same answer as before the restart. */
    build_create(&kc, kids[0], argv, 2, al, n);
    kc.session_id = (char *)sids[0];
    kc.cluster_size = 2;
    kc.cluster_hosts = hosts;
    kc.n_cluster_hosts = 2;
    size_t from = c.n;
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 90, SKV_PROTO_KERNEL_CREATE,
                          &kc, wall_ms()), 0);
    long r = find(&c, from, SKV_PROTO_KERNEL_CREATE_REPLY);
    ck_assert_int_ge(r, 0);
    skv_proto_kernel_create_reply cr = {0};
    body_of(&cr, &c, (size_t)r, SKV_PROTO_KERNEL_CREATE_REPLY, NULL);
    ck_assert_str_eq(cr.address, "10.250.0.2");
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE_REPLY, &cr);
    skv_proto_kernel_destroy kd = {(char *)sids[0], (char *)kids[0], "done",
                                   0};
    ck_assert_int_eq(feed(a, SKV_PROTO_REQUEST, 91, SKV_PROTO_KERNEL_DESTROY,
                          &kd, wall_ms()), 0);
    ck_assert_uint_eq(skv_agent_kernel_count(a), 0);
    ck_assert_uint_eq(net_links(), 0);
    free_alloc(al, n);
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* This agent's routes to its peers (protocol 173), on one line. */
#define ROUTES "ip route show proto 173 | cut -d' ' -f1-3 | tr '\\n' ' '"

/* The agent's subnet and routes from the manager: forwarding on, a route
 * per peer agent (not to itself), replaced as a whole by agent.routes,
 * and the subnet remembered in state_dir/network. */
START_TEST(test_cluster_routes)
{
    SKV_RTFX_REQUIRE();
    private_netns();
    ck_assert_int_eq(system("ip link add skvr0 type veth peer name skvr1 && "
                            "ip addr add 10.77.0.2/24 dev skvr0 && "
                            "ip link set skvr0 up && ip link set skvr1 up"),
                     0);
    conn c = {0};
    char state[PATH_MAX], out[512];
    skv_agent *a = open_agent(&c, agent_state(state, sizeof(state), "routes"),
                              NULL, NULL, 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_route routes[] = {{"10.128.0.0/20", "10.77.0.2", "a1"},
                                {"10.128.16.0/20", "10.77.0.3", "a2"},
                                {"10.128.32.0/20", "10.77.0.4", "a3"}};
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms(),
                                          "10.128.0.0/20", "10.128.0.0/9",
                                          routes, 3};
    ck_assert_int_eq(feed(a, SKV_PROTO_RESPONSE, 1,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep, wall_ms()),
                     0);
    skv_test_sh_output("cat /proc/sys/net/ipv4/ip_forward", out, sizeof(out));
    ck_assert_str_eq(out, "1\n");
    skv_test_sh_output(ROUTES, out, sizeof(out));
    ck_assert_str_eq(out, "10.128.16.0/20 via 10.77.0.3 "
                     "10.128.32.0/20 via 10.77.0.4 ");
    /* a2 left, a4 came. */
    skv_proto_route now[] = {{"10.128.32.0/20", "10.77.0.4", "a3"},
                             {"10.128.48.0/20", "10.77.0.5", "a4"}};
    skv_proto_agent_routes ev = {now, 2};
    ck_assert_int_eq(feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_ROUTES, &ev,
                          wall_ms()), 0);
    skv_test_sh_output(ROUTES, out, sizeof(out));
    ck_assert_str_eq(out, "10.128.32.0/20 via 10.77.0.4 "
                     "10.128.48.0/20 via 10.77.0.5 ");
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "cat %s/network", state);
    skv_test_sh_output(cmd, out, sizeof(out));
    ck_assert_str_eq(out, "subnet=10.128.0.0/20\ncluster_cidr=10.128.0.0/9\n");
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* agent.routes.delta (issue 14): after the table of the register reply,
 * withdrawals then additions, one route at a time; repeating a route that
 * is there or withdrawing one that is gone is fine; its own subnet is
 * never routed; agent.register says route_deltas. */
START_TEST(test_cluster_routes_delta)
{
    SKV_RTFX_REQUIRE();
    private_netns();
    ck_assert_int_eq(system("ip link add skvr0 type veth peer name skvr1 && "
                            "ip addr add 10.77.0.2/24 dev skvr0 && "
                            "ip link set skvr0 up && ip link set skvr1 up"),
                     0);
    conn c = {0};
    char state[PATH_MAX], out[512];
    skv_agent *a = open_agent(&c, agent_state(state, sizeof(state), "rdelta"),
                              NULL, NULL, 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_agent_connected(a, wall_ms(), &e), &e);
    skv_proto_agent_register reg;
    long at = find(&c, 0, SKV_PROTO_AGENT_REGISTER);
    ck_assert_int_ge(at, 0);
    body_of(&reg, &c, (size_t)at, SKV_PROTO_AGENT_REGISTER, NULL);
    ck_assert(reg.route_deltas);
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &reg);
    skv_proto_route routes[] = {{"10.128.0.0/20", "10.77.0.2", "a1"},
                                {"10.128.16.0/20", "10.77.0.3", "a2"}};
    skv_proto_agent_register_reply rep = {1000, 5000, wall_ms(),
                                          "10.128.0.0/20", "10.128.0.0/9",
                                          routes, 2};
    ck_assert_int_eq(feed(a, SKV_PROTO_RESPONSE, 1,
                          SKV_PROTO_AGENT_REGISTER_REPLY, &rep, wall_ms()),
                     0);
    skv_test_sh_output(ROUTES, out, sizeof(out));
    ck_assert_str_eq(out, "10.128.16.0/20 via 10.77.0.3 ");
    /* a3 joins (a2 repeated, as a delta right after the reply may) */
    skv_proto_route add1[] = {{"10.128.16.0/20", "10.77.0.3", "a2"},
                              {"10.128.32.0/20", "10.77.0.4", "a3"},
                              {"10.128.0.0/20", "10.77.0.2", "a1"}};
    skv_proto_agent_routes_delta d1 = {NULL, 0, add1, 3};
    ck_assert_int_eq(feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_ROUTES_DELTA,
                          &d1, wall_ms()), 0);
    skv_test_sh_output(ROUTES, out, sizeof(out));
    ck_assert_str_eq(out, "10.128.16.0/20 via 10.77.0.3 "
                     "10.128.32.0/20 via 10.77.0.4 ");
    /* a2 leaves, a3 moves to another host, a4 joins; a gone one again */
    skv_proto_route rm2[] = {{"10.128.16.0/20", "10.77.0.3", "a2"},
                             {"10.128.32.0/20", "10.77.0.4", "a3"},
                             {"10.128.64.0/20", "10.77.0.9", "gone"}};
    skv_proto_route add2[] = {{"10.128.32.0/20", "10.77.0.6", "a3"},
                              {"10.128.48.0/20", "10.77.0.5", "a4"}};
    skv_proto_agent_routes_delta d2 = {rm2, 3, add2, 2};
    ck_assert_int_eq(feed(a, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_ROUTES_DELTA,
                          &d2, wall_ms()), 0);
    skv_test_sh_output(ROUTES, out, sizeof(out));
    ck_assert_str_eq(out, "10.128.32.0/20 via 10.77.0.6 "
                     "10.128.48.0/20 via 10.77.0.5 ");
    skv_agent_free(a);
    conn_clear(&c);
}
END_TEST

/* Containers of agent state directories a failed test left behind. */
static void agent_fx_teardown(void)
{
    if (skv_rtfx_root[0]) {
        DIR *d = opendir(skv_rtfx_root);
        struct dirent *de;
        while (d && (de = readdir(d)) != NULL) {
            if (strncmp(de->d_name, "state-", 6) != 0)
                continue;
            char path[PATH_MAX];
            snprintf(path, sizeof(path), "%s/%s/containers", skv_rtfx_root,
                     de->d_name);
            destroy_all(path);
        }
        if (d)
            closedir(d);
    }
    skv_rtfx_teardown();
}

Suite *skv_test_suite_agent(void);
Suite *skv_test_suite_agent(void)
{
    Suite *s = suite_create("agent");
    TCase *tc = tcase_create("agent");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_register_and_heartbeat);
    tcase_add_test(tc, test_refused_frames);
    tcase_add_test(tc, test_open_errors);
    tcase_add_test(tc, test_accelerator_slice);
    tcase_add_test(tc, test_bad_records);
    suite_add_tcase(s, tc);
    TCase *rt = tcase_create("agent-containers");
    tcase_add_unchecked_fixture(rt, skv_rtfx_setup_import, agent_fx_teardown);
    tcase_set_timeout(rt, 60);
    tcase_add_test(rt, test_kernel_lifecycle);
    tcase_add_test(rt, test_background_create);
    tcase_add_test(rt, test_restart_reattaches);
    tcase_add_test(rt, test_cluster_kernel);
    tcase_add_test(rt, test_cluster_network);
    tcase_add_test(rt, test_cluster_network_restart);
    tcase_add_test(rt, test_cluster_routes);
    tcase_add_test(rt, test_cluster_routes_delta);
    suite_add_tcase(s, rt);
    return s;
}
