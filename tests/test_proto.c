/* Wire protocol: framing, envelope, every message body, hostile input.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "proto_fill.h"
#include "skv_internal.h"
#include "skv_test.h"
#include "sokovan/proto.h"

#define BODY_MAX 1024 /* larger than every body struct */

static void encode_filled(skv_proto_type t, int seed, void **buf, size_t *len)
{
    skv_error e = SKV_ERROR_INIT;
    _Alignas(max_align_t) unsigned char body[BODY_MAX];
    ck_assert_uint_le(skv_proto_type_size(t), sizeof body);
    skv_test_fill(t, body, seed);
    SKV_CK_OK(skv_proto_body_encode(buf, len, t, body, &e), &e);
    skv_proto_body_free(t, body);
}

/* ---- types -------------------------------------------------------------- */

START_TEST(test_type_table)
{
    skv_error e = SKV_ERROR_INIT;
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        const char *name = skv_proto_type_name((skv_proto_type)t);
        skv_proto_type back;
        ck_assert_str_ne(name, "?");
        SKV_CK_OK(skv_proto_type_from_name(&back, name, &e), &e);
        ck_assert_int_eq(back, t);
        ck_assert_uint_gt(skv_proto_type_size((skv_proto_type)t), 0);
        skv_proto_type reply = skv_proto_type_reply((skv_proto_type)t);
        if (skv_proto_type_kind((skv_proto_type)t) == SKV_PROTO_REQUEST) {
            ck_assert_int_eq(skv_proto_type_kind(reply), SKV_PROTO_RESPONSE);
            ck_assert_int_ne(skv_proto_type_op((skv_proto_type)t), 0);
        } else {
            ck_assert_int_eq(reply, SKV_PROTO_UNKNOWN);
        }
    }
    skv_proto_type out = SKV_PROTO_ACK;
    ck_assert_int_eq(skv_proto_type_from_name(&out, "no.such", &e), SKV_ENOENT);
    ck_assert_int_eq(out, SKV_PROTO_UNKNOWN);
    ck_assert_str_eq(skv_proto_type_name(SKV_PROTO_TYPE_COUNT), "?");
    ck_assert_uint_eq(skv_proto_type_size(SKV_PROTO_UNKNOWN), 0);
    ck_assert_int_eq(skv_proto_type_reply(SKV_PROTO_SESSION_SUBMIT),
                     SKV_PROTO_SESSION_SUBMIT_REPLY);
    ck_assert_int_eq(skv_proto_type_op(SKV_PROTO_SESSION_TERMINATE),
                     SKV_AUTH_OP_SESSION_CONTROL);
    ck_assert_int_eq(skv_proto_type_kind(SKV_PROTO_KERNEL_EXIT), SKV_PROTO_EVENT);
}
END_TEST

/* ---- bodies ---------------------------------------------------------------- */

/* Every type: fill every field, encode, decode, encode again: identical
 * bytes (encoding is deterministic, so any lost field would show). */
START_TEST(test_roundtrip_every_type)
{
    skv_error e = SKV_ERROR_INIT;
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        void *b1, *b2;
        size_t l1, l2;
        encode_filled((skv_proto_type)t, t, &b1, &l1);
        _Alignas(max_align_t) unsigned char dec[BODY_MAX];
        SKV_CK_OK(skv_proto_body_decode(dec, (skv_proto_type)t, b1, l1, &e), &e);
        SKV_CK_OK(skv_proto_body_encode(&b2, &l2, (skv_proto_type)t, dec, &e), &e);
        ck_assert_msg(l1 == l2 && memcmp(b1, b2, l1) == 0,
                      "type %s does not round-trip", skv_proto_type_name(t));
        skv_proto_body_free((skv_proto_type)t, dec);
        for (size_t i = 0; i < skv_proto_type_size((skv_proto_type)t); i++)
            ck_assert_uint_eq(dec[i], 0); /* free zeroes */
        skv_free(b1);
        skv_free(b2);
    }
}
END_TEST

START_TEST(test_roundtrip_values)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_kernel_create k;
    memset(&k, 0, sizeof k);
    char *argv[] = {"/bin/sh", "-c", "echo hi"};
    skv_proto_kv env[] = {{"A", "1"}, {"PATH", "/bin"}};
    uint32_t cpus[] = {0, 1, 7};
    skv_proto_device_alloc alloc[1] = {{"cuda:0", NULL}};
    skv_proto_cluster_host hosts[] = {{"main1", "main", 0, "10.0.0.1"},
                                      {"sub1", "sub", 1, "10.0.0.2"}};
    SKV_CK_OK(skv_slots_parse(&alloc[0].slots, "cuda.shares=0.5", NULL, &e), &e);
    k.session_id = "s1";
    k.kernel_id = "k1";
    k.image = "busybox";
    k.argv = argv;
    k.n_argv = 3;
    k.env = env;
    k.n_env = 2;
    k.alloc = alloc;
    k.n_alloc = 1;
    k.cpuset = cpus;
    k.n_cpuset = 3;
    k.cluster_idx = 1;
    k.cluster_size = 2;
    k.cluster_hosts = hosts;
    k.n_cluster_hosts = 2;
    void *buf;
    size_t len;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_KERNEL_CREATE, &k, &e), &e);
    skv_proto_kernel_create d;
    SKV_CK_OK(skv_proto_body_decode(&d, SKV_PROTO_KERNEL_CREATE, buf, len, &e), &e);
    ck_assert_str_eq(d.session_id, "s1");
    ck_assert_str_eq(d.image, "busybox");
    ck_assert_uint_eq(d.n_argv, 3);
    ck_assert_str_eq(d.argv[2], "echo hi");
    ck_assert_str_eq(d.env[1].key, "PATH");
    ck_assert_str_eq(d.env[1].value, "/bin");
    ck_assert_uint_eq(d.n_cpuset, 3);
    ck_assert_uint_eq(d.cpuset[2], 7);
    ck_assert_ptr_null(d.mems);
    ck_assert_ptr_null(d.workdir);
    ck_assert_str_eq(d.alloc[0].device_id, "cuda:0");
    ck_assert(skv_slots_eq(d.alloc[0].slots, alloc[0].slots));
    ck_assert_int_eq(skv_slots_get(d.alloc[0].slots, "cuda.shares"), 500);
    ck_assert_uint_eq(d.cluster_idx, 1);
    ck_assert_str_eq(d.cluster_hosts[1].address, "10.0.0.2");
    ck_assert_uint_eq(d.cluster_hosts[1].idx, 1);
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &d);
    skv_slots_free(alloc[0].slots);
    skv_free(buf);
}
END_TEST

START_TEST(test_roundtrip_logs_and_exit)
{
    skv_error e = SKV_ERROR_INIT;
    uint8_t data[4] = {0, 'a', 0xff, '\n'};
    skv_proto_logs_reply lr;
    memset(&lr, 0, sizeof lr);
    lr.kernel_id = "k";
    lr.data = data;
    lr.data_len = 4;
    lr.next_offset = 4;
    lr.eof = 1;
    void *buf;
    size_t len;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_LOGS_REPLY, &lr, &e), &e);
    skv_proto_logs_reply d;
    SKV_CK_OK(skv_proto_body_decode(&d, SKV_PROTO_LOGS_REPLY, buf, len, &e), &e);
    ck_assert_uint_eq(d.data_len, 4);
    ck_assert_mem_eq(d.data, data, 4);
    ck_assert_uint_eq(d.eof, 1);
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &d);
    skv_free(buf);

    skv_proto_kernel_exit x = {"a1", "s1", "k1", -1, 9, 1, 123, "killed"};
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_KERNEL_EXIT, &x, &e), &e);
    skv_proto_kernel_exit dx;
    SKV_CK_OK(skv_proto_body_decode(&dx, SKV_PROTO_KERNEL_EXIT, buf, len, &e), &e);
    ck_assert_int_eq(dx.exit_code, -1);
    ck_assert_int_eq(dx.signal, 9);
    ck_assert_int_eq(dx.oom, 1);
    ck_assert_int_eq(dx.finished_ms, 123);
    skv_proto_body_free(SKV_PROTO_KERNEL_EXIT, &dx);
    skv_free(buf);
}
END_TEST

/* Every prefix of every valid encoding is refused, and leaves nothing. */
START_TEST(test_truncation_every_byte)
{
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        void *buf;
        size_t len;
        encode_filled((skv_proto_type)t, 3, &buf, &len);
        for (size_t cut = 0; cut < len; cut++) {
            _Alignas(max_align_t) unsigned char dec[BODY_MAX];
            skv_error e = SKV_ERROR_INIT;
            int rc = skv_proto_body_decode(dec, (skv_proto_type)t, buf, cut, &e);
            ck_assert_msg(rc == SKV_EPROTO, "%s cut at %zu: rc %d",
                          skv_proto_type_name(t), cut, rc);
            ck_assert_str_ne(e.message, "");
            for (size_t i = 0; i < skv_proto_type_size((skv_proto_type)t); i++)
                ck_assert_uint_eq(dec[i], 0);
        }
        skv_free(buf);
    }
}
END_TEST

/* Decode hand-made bytes as an agent.register body; expect rc. */
static void expect_register(const char *bytes, size_t len, int rc_want,
                            const char *needle)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_agent_register r;
    int rc = skv_proto_body_decode(&r, SKV_PROTO_AGENT_REGISTER, bytes, len, &e);
    ck_assert_msg(rc == rc_want, "rc %d, want %d: %s", rc, rc_want, e.message);
    if (needle)
        ck_assert_msg(strstr(e.message, needle), "'%s' lacks '%s'", e.message, needle);
    if (rc == 0)
        skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &r);
}

#define B(s) s, sizeof(s) - 1

START_TEST(test_wrong_types)
{
    expect_register(B("\x81\xa8" "agent_id" "\xa2" "a1"), 0, NULL);
    expect_register(B("\x91\xa1x"), SKV_EPROTO, "expected a map");
    expect_register(B("\x81\xa8" "agent_id" "\x05"), SKV_EPROTO, "agent_id");
    /* labels must be a map of strings */
    expect_register(B("\x82\xa8" "agent_id" "\xa2" "a1" "\xa6" "labels" "\x91\x01"),
                    SKV_EPROTO, "labels");
    expect_register(B("\x82\xa8" "agent_id" "\xa2" "a1" "\xa6" "labels" "\x81\xa1k\x01"),
                    SKV_EPROTO, "labels");
    /* devices[0].slots must be a slot vector */
    expect_register(B("\x82\xa8" "agent_id" "\xa2" "a1" "\xa7" "devices"
                      "\x91\x82\xa2id\xa1" "c" "\xa5slots\xa3xyz"),
                    SKV_EPROTO, "slots");
    /* map key not a string */
    expect_register(B("\x81\x01\x02"), SKV_EPROTO, "map key");
    /* missing required field */
    expect_register(B("\x81\xa7" "address" "\xa1x"), SKV_EPROTO, "agent_id");
    /* empty required string */
    expect_register(B("\x81\xa8" "agent_id" "\xa0"), 0, NULL);
    /* duplicate key */
    expect_register(B("\x82\xa8" "agent_id" "\xa1" "a" "\xa8" "agent_id" "\xa1" "b"),
                    SKV_EPROTO, "duplicate");
    /* duplicate label keys */
    expect_register(B("\x82\xa8" "agent_id" "\xa1" "a" "\xa6" "labels"
                      "\x82\xa1k\xa1" "1" "\xa1k\xa1" "2"), SKV_EPROTO, "duplicate");
    /* embedded NUL */
    expect_register(B("\x81\xa8" "agent_id" "\xa3" "a\0b"), SKV_EPROTO, "NUL");
    /* strings must be UTF-8: valid multi-byte, then malformed forms */
    expect_register(B("\x81\xa8" "agent_id" "\xa7" "\xc3\xa9\xe2\x82\xac\xf0\x9f"), SKV_EPROTO, "UTF-8");
    expect_register(B("\x81\xa8" "agent_id" "\xa9" "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), 0, NULL);
    expect_register(B("\x81\xa8" "agent_id" "\xa2" "\xc0\xaf"), SKV_EPROTO, "UTF-8");
    expect_register(B("\x81\xa8" "agent_id" "\xa3" "\xed\xa0\x80"), SKV_EPROTO, "UTF-8");
    expect_register(B("\x81\xa8" "agent_id" "\xa4" "\xf4\x90\x80\x80"), SKV_EPROTO, "UTF-8");
    expect_register(B("\x81\xa8" "agent_id" "\xa1" "\xff"), SKV_EPROTO, "UTF-8");
    /* trailing bytes */
    expect_register(B("\x81\xa8" "agent_id" "\xa1" "a" "\xc0"), SKV_EPROTO, "trailing");
    /* unknown keys are skipped, nil means absent */
    expect_register(B("\x83\xa8" "agent_id" "\xa1" "a" "\xa3new\x92\x81\xa1x\x01\xc3"
                      "\xa7" "address" "\xc0"), 0, NULL);
    /* invalid msgpack byte inside a skipped value */
    expect_register(B("\x82\xa8" "agent_id" "\xa1" "a" "\xa3new\xc1"), SKV_EPROTO,
                    "invalid msgpack");
}
END_TEST

START_TEST(test_bounds)
{
    skv_error e = SKV_ERROR_INIT;
    /* an array header claiming 2^32-1 entries in a handful of bytes */
    expect_register(B("\x82\xa8" "agent_id" "\xa1" "a" "\xa6" "images"
                      "\xdd\xff\xff\xff\xff"), SKV_EPROTO, "entries");
    expect_register(B("\x82\xa8" "agent_id" "\xa1" "a" "\xa3new\xdf\xff\xff\xff\xff"),
                    SKV_EPROTO, "entries");
    /* a string longer than its field allows (ids: 256 bytes) */
    char big[300];
    memcpy(big, "\x81\xa8" "agent_id" "\xd9\xff", 12); /* str8 of 255 */
    memset(big + 12, 'x', 255);
    expect_register(big, 12 + 255, 0, NULL);
    memcpy(big, "\x81\xa8" "agent_id" "\xda\x01\x01", 13);
    memset(big + 13, 'x', 257);
    expect_register(big, 13 + 257, SKV_EPROTO, "exceeds 256");
    /* numbers out of range */
    skv_proto_kernel_exit x;
    ck_assert_int_eq(skv_proto_body_decode(&x, SKV_PROTO_KERNEL_EXIT,
        B("\x82\xa9kernel_id\xa1k\xa9" "exit_code\xce\x80\x00\x00\x00"), &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "exit_code"));
    skv_proto_agent_register_reply rr;
    ck_assert_int_eq(skv_proto_body_decode(&rr, SKV_PROTO_AGENT_REGISTER_REPLY,
        B("\x81\xb5heartbeat_interval_ms\xff"), &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "negative"));
    ck_assert_int_eq(skv_proto_body_decode(&rr, SKV_PROTO_AGENT_REGISTER_REPLY,
        B("\x81\xaeserver_time_ms\xcf\xff\xff\xff\xff\xff\xff\xff\xff"), &e), SKV_EPROTO);
    /* admin op out of range */
    skv_proto_admin_user au;
    ck_assert_int_eq(skv_proto_body_decode(&au, SKV_PROTO_ADMIN_USER,
        B("\x81\xa2op\x09"), &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "op 9"));
    SKV_CK_OK(skv_proto_body_decode(&au, SKV_PROTO_ADMIN_USER, B("\x81\xa2op\x04"), &e), &e);
    ck_assert_uint_eq(au.op, SKV_PROTO_ADMIN_LIST);
    ck_assert_ptr_null(au.user.name);
    skv_proto_body_free(SKV_PROTO_ADMIN_USER, &au);
    /* an embedded object: absent is fine, present must be complete */
    skv_proto_session_show_reply sr;
    SKV_CK_OK(skv_proto_body_decode(&sr, SKV_PROTO_SESSION_SHOW_REPLY, B("\x80"), &e), &e);
    void *enc;
    size_t enclen;
    SKV_CK_OK(skv_proto_body_encode(&enc, &enclen, SKV_PROTO_SESSION_SHOW_REPLY, &sr, &e), &e);
    ck_assert_uint_eq(enclen, 1); /* {} */
    skv_free(enc);
    ck_assert_int_eq(skv_proto_body_decode(&sr, SKV_PROTO_SESSION_SHOW_REPLY,
        B("\x81\xa7session\x80"), &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "session_id"));
    /* bad arguments */
    ck_assert_int_eq(skv_proto_body_decode(&au, SKV_PROTO_UNKNOWN, B("\x80"), &e), SKV_EINVAL);
    ck_assert_int_eq(skv_proto_body_decode(NULL, SKV_PROTO_ACK, B("\x80"), &e), SKV_EINVAL);
    skv_proto_body_free(SKV_PROTO_ACK, NULL);
}
END_TEST

static size_t alloc_biggest;
static void *track_malloc(size_t n, void *p)
{
    (void)p;
    if (n > alloc_biggest)
        alloc_biggest = n;
    return malloc(n);
}
static void *track_realloc(void *q, size_t n, void *p)
{
    (void)p;
    if (n > alloc_biggest)
        alloc_biggest = n;
    return realloc(q, n);
}
static void track_free(void *q, void *p)
{
    (void)p;
    free(q);
}

/* Memory follows the bytes present, not the counts claimed. */
START_TEST(test_allocation_bounded)
{
    skv_error e = SKV_ERROR_INIT;
    skv_allocator a = {SKV_ALLOCATOR_VERSION, track_malloc, track_realloc, track_free, NULL};
    SKV_CK_OK(skv_set_allocator(&a, &e), &e);
    skv_proto_session_list_reply lr;
    /* 10000 sessions claimed, 3 bytes present: refused before allocating */
    alloc_biggest = 0;
    ck_assert_int_eq(skv_proto_body_decode(&lr, SKV_PROTO_SESSION_LIST_REPLY,
        B("\x81\xa8sessions\xdc\x27\x10\x80\x80\x80"), &e), SKV_EPROTO);
    ck_assert_uint_lt(alloc_biggest, 1024);
    /* 10000 sessions really present (1 byte each): one array, bounded */
    size_t n = 13 + 10000;
    char *buf = malloc(n);
    memcpy(buf, "\x81\xa8sessions\xdc\x27\x10", 13);
    memset(buf + 13, 0x80, 10000);
    alloc_biggest = 0;
    ck_assert_int_eq(skv_proto_body_decode(&lr, SKV_PROTO_SESSION_LIST_REPLY, buf, n, &e),
                     SKV_EPROTO); /* the first session lacks session_id */
    ck_assert_uint_ge(alloc_biggest, 10000 * sizeof(skv_proto_session_info));
    ck_assert_uint_le(alloc_biggest, 10000 * sizeof(skv_proto_session_info));
    ck_assert_uint_le(alloc_biggest, 512 * n);
    /* one more than the list bound: refused before allocating */
    memcpy(buf, "\x81\xa8sessions\xdc\x27\x11", 13);
    buf = realloc(buf, n + 1);
    buf[n] = (char)0x80;
    alloc_biggest = 0;
    ck_assert_int_eq(skv_proto_body_decode(&lr, SKV_PROTO_SESSION_LIST_REPLY, buf, n + 1, &e),
                     SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "at most 10000"));
    ck_assert_uint_lt(alloc_biggest, 1024);
    free(buf);
    SKV_CK_OK(skv_set_allocator(NULL, &e), &e);
}
END_TEST

START_TEST(test_encode_validation)
{
    skv_error e = SKV_ERROR_INIT;
    void *buf = NULL;
    size_t len = 0;
    skv_proto_session_id sid = {NULL};
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SHOW, &sid, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "session_id"));
    char longid[300];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = 0;
    sid.session_id = longid;
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SHOW, &sid, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "longer than 256"));
    sid.session_id = "bad\xff";
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SHOW, &sid, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "UTF-8"));
    skv_proto_admin_domain ad;
    memset(&ad, 0, sizeof ad);
    ad.domain.name = "d";
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_ADMIN_DOMAIN, &ad, &e),
                     SKV_EINVAL);
    ad.op = 77;
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_ADMIN_DOMAIN, &ad, &e),
                     SKV_EINVAL);
    skv_proto_kv dup[] = {{"A", "1"}, {"A", "2"}};
    skv_proto_session_submit s;
    memset(&s, 0, sizeof s);
    s.image = "img";
    s.env = dup;
    s.n_env = 2;
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SUBMIT, &s, &e),
                     SKV_EINVAL);
    ck_assert_ptr_nonnull(strstr(e.message, "duplicate"));
    s.n_env = 0;
    s.n_command = 3; /* count without an array */
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_SESSION_SUBMIT, &s, &e),
                     SKV_EINVAL);
    ck_assert_ptr_null(buf);
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len, SKV_PROTO_TYPE_COUNT, &s, &e),
                     SKV_EINVAL);
}
END_TEST

/* ---- envelope ---------------------------------------------------------------- */

static void make_frame(void **frame, size_t *len, skv_proto_type t,
                       skv_proto_kind kind)
{
    skv_error e = SKV_ERROR_INIT;
    _Alignas(max_align_t) unsigned char body[BODY_MAX];
    skv_test_fill(t, body, 1);
    SKV_CK_OK(skv_proto_message_encode(frame, len, kind, 42, t, body, 1000, NULL, &e), &e);
    skv_proto_body_free(t, body);
}

/* agent.register's route_deltas (issue 14): an older agent does not send
 * the key (decoded as false), a newer one's goes both ways; an older
 * decoder skips it; agent.routes.delta keeps both lists and their order. */
START_TEST(test_route_deltas_compat)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_agent_register r = {0}, out;
    r.agent_id = "a1";
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_AGENT_REGISTER, &r,
                                    &e), &e);
    ck_assert_ptr_null(memmem(buf, len, "route_deltas", 12));
    SKV_CK_OK(skv_proto_body_decode(&out, SKV_PROTO_AGENT_REGISTER, buf, len,
                                    &e), &e);
    ck_assert(!out.route_deltas);
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &out);
    skv_free(buf);
    r.route_deltas = true;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_AGENT_REGISTER, &r,
                                    &e), &e);
    ck_assert_ptr_nonnull(memmem(buf, len, "route_deltas", 12));
    SKV_CK_OK(skv_proto_body_decode(&out, SKV_PROTO_AGENT_REGISTER, buf, len,
                                    &e), &e);
    ck_assert(out.route_deltas);
    ck_assert_str_eq(out.agent_id, "a1");
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER, &out);
    skv_free(buf);
    skv_proto_route rm[] = {{"10.128.16.0/20", "10.0.0.3", "a2"}};
    skv_proto_route add[] = {{"10.128.16.0/20", "10.0.0.9", "a2"},
                             {"10.128.32.0/20", "10.0.0.4", NULL}};
    skv_proto_agent_routes_delta d = {rm, 1, add, 2}, dout;
    SKV_CK_OK(skv_proto_body_encode(&buf, &len, SKV_PROTO_AGENT_ROUTES_DELTA,
                                    &d, &e), &e);
    SKV_CK_OK(skv_proto_body_decode(&dout, SKV_PROTO_AGENT_ROUTES_DELTA, buf,
                                    len, &e), &e);
    ck_assert_uint_eq(dout.n_removed, 1);
    ck_assert_uint_eq(dout.n_added, 2);
    ck_assert_str_eq(dout.removed[0].via, "10.0.0.3");
    ck_assert_str_eq(dout.added[0].via, "10.0.0.9");
    ck_assert_str_eq(dout.added[1].subnet, "10.128.32.0/20");
    ck_assert_ptr_null(dout.added[1].agent_id);
    skv_proto_body_free(SKV_PROTO_AGENT_ROUTES_DELTA, &dout);
    skv_free(buf);
    ck_assert_str_eq(skv_proto_type_name(SKV_PROTO_AGENT_ROUTES_DELTA),
                     "agent.routes.delta");
    /* a route without its gateway is refused */
    skv_proto_route bad[] = {{"10.128.16.0/20", NULL, "a2"}};
    skv_proto_agent_routes_delta db = {NULL, 0, bad, 1};
    ck_assert_int_eq(skv_proto_body_encode(&buf, &len,
                                           SKV_PROTO_AGENT_ROUTES_DELTA, &db,
                                           &e), SKV_EINVAL);
}
END_TEST

START_TEST(test_envelope_roundtrip)
{
    skv_error e = SKV_ERROR_INIT;
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        void *frame;
        size_t len;
        make_frame(&frame, &len, (skv_proto_type)t, skv_proto_type_kind(t));
        const uint8_t *f = frame;
        size_t plen = ((size_t)f[0] << 24) | ((size_t)f[1] << 16) | ((size_t)f[2] << 8) | f[3];
        ck_assert_uint_eq(plen + 4, len);
        skv_proto_envelope env;
        SKV_CK_OK(skv_proto_envelope_decode(&env, f + 4, plen, &e), &e);
        ck_assert_int_eq(env.type, t);
        ck_assert_str_eq(env.type_name, skv_proto_type_name(t));
        ck_assert_uint_eq(env.request_id, 42);
        ck_assert_int_eq(env.timestamp_ms, 1000);
        ck_assert_int_eq(env.version, SKV_PROTO_VERSION);
        ck_assert_int_eq(env.has_auth, 0);
        _Alignas(max_align_t) unsigned char body[BODY_MAX];
        SKV_CK_OK(skv_proto_body_decode(body, env.type, env.body, env.body_len, &e), &e);
        skv_proto_body_free(env.type, body);
        /* every truncation of the payload is refused */
        for (size_t cut = 0; cut < plen; cut++) {
            skv_proto_envelope bad;
            ck_assert_int_eq(skv_proto_envelope_decode(&bad, f + 4, cut, NULL), SKV_EPROTO);
            ck_assert_ptr_null(bad.body);
        }
        skv_proto_envelope_free(&env);
        skv_free(frame);
    }
    skv_proto_envelope_free(NULL);
}
END_TEST

static int decode_payload(const char *bytes, size_t len, skv_proto_envelope *env,
                          skv_error *e)
{
    return skv_proto_envelope_decode(env, bytes, len, e);
}

START_TEST(test_envelope_hostile)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_envelope env;
    /* version 2: refused as a version problem before anything else */
    ck_assert_int_eq(decode_payload(B("\x82\xa1v\x02\xa1k\xff"), &env, &e), SKV_EVERSION);
    ck_assert_ptr_nonnull(strstr(e.message, "version 2"));
    /* "v" must come first */
    ck_assert_int_eq(decode_payload(B("\x82\xa1k\x00\xa1v\x01"), &env, &e), SKV_EPROTO);
    /* a minimal valid request of an unknown type */
    const char ok[] = "\x86\xa1v\x01\xa1k\x00\xa2id\x07\xa1t\xa7zz.todo"
                      "\xa2ts\x05\xa1" "b\xc4\x01\x80";
    SKV_CK_OK(decode_payload(ok, sizeof ok - 1, &env, &e), &e);
    ck_assert_int_eq(env.type, SKV_PROTO_UNKNOWN);
    ck_assert_str_eq(env.type_name, "zz.todo");
    ck_assert_uint_eq(env.request_id, 7);
    skv_proto_envelope_free(&env);
    /* known type with the wrong kind */
    const char kind[] = "\x86\xa1v\x01\xa1k\x02\xa2id\x07\xa1t\xa3" "ack"
                        "\xa2ts\x05\xa1" "b\xc4\x01\x80";
    ck_assert_int_eq(decode_payload(kind, sizeof kind - 1, &env, &e), SKV_EPROTO);
    /* kind out of range, bad type characters, missing body, trailing byte */
    const char k9[] = "\x86\xa1v\x01\xa1k\x09\xa2id\x07\xa1t\xa3" "ack"
                      "\xa2ts\x05\xa1" "b\xc4\x01\x80";
    ck_assert_int_eq(decode_payload(k9, sizeof k9 - 1, &env, &e), SKV_EPROTO);
    const char badt[] = "\x86\xa1v\x01\xa1k\x01\xa2id\x07\xa1t\xa3" "A/b"
                        "\xa2ts\x05\xa1" "b\xc4\x01\x80";
    ck_assert_int_eq(decode_payload(badt, sizeof badt - 1, &env, &e), SKV_EPROTO);
    const char nob[] = "\x85\xa1v\x01\xa1k\x01\xa2id\x07\xa1t\xa3" "ack\xa2ts\x05";
    ck_assert_int_eq(decode_payload(nob, sizeof nob - 1, &env, &e), SKV_EPROTO);
    char trail[sizeof ok];
    memcpy(trail, ok, sizeof ok - 1);
    trail[sizeof ok - 1] = (char)0xc0;
    ck_assert_int_eq(decode_payload(trail, sizeof ok, &env, &e), SKV_EPROTO);
    ck_assert_int_eq(decode_payload(B("\xc1"), &env, &e), SKV_EPROTO);
    ck_assert_int_eq(decode_payload(B("\x80"), &env, &e), SKV_EPROTO);
    /* auth block with a short nonce */
    const char sn[] = "\x87\xa1v\x01\xa1k\x00\xa2id\x07\xa1t\xa7zz.todo"
                      "\xa2ts\x05\xa1" "b\xc4\x01\x80\xa1" "a\x84\xa2" "ak\xa2" "AK"
                      "\xa2ts\x01\xa1n\xc4\x01\x00\xa1s\xc4\x01\x00";
    ck_assert_int_eq(decode_payload(sn, sizeof sn - 1, &env, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "nonce"));
}
END_TEST

START_TEST(test_envelope_encode_checks)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_envelope env;
    memset(&env, 0, sizeof env);
    uint8_t body[1] = {0x80};
    void *frame = NULL;
    size_t len;
    env.version = 3;
    env.type = SKV_PROTO_ACK;
    env.kind = SKV_PROTO_RESPONSE;
    env.body = body;
    env.body_len = 1;
    ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &env, 0, &e), SKV_EVERSION);
    env.version = SKV_PROTO_VERSION;
    env.kind = SKV_PROTO_EVENT;
    ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &env, 0, &e), SKV_EINVAL);
    env.kind = SKV_PROTO_RESPONSE;
    env.body_len = 0;
    ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &env, 0, &e), SKV_EINVAL);
    env.body_len = 1;
    ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &env, 8, &e), SKV_ERANGE);
    ck_assert_ptr_null(frame);
    env.type = SKV_PROTO_UNKNOWN;
    strcpy(env.type_name, "Bad Name");
    ck_assert_int_eq(skv_proto_envelope_encode(&frame, &len, &env, 0, &e), SKV_EINVAL);
    strcpy(env.type_name, "custom.ext");
    SKV_CK_OK(skv_proto_envelope_encode(&frame, &len, &env, 0, &e), &e);
    skv_proto_envelope d;
    SKV_CK_OK(skv_proto_envelope_decode(&d, (uint8_t *)frame + 4, len - 4, &e), &e);
    ck_assert_str_eq(d.type_name, "custom.ext");
    skv_proto_envelope_free(&d);
    skv_free(frame);
}
END_TEST

START_TEST(test_error_reply)
{
    skv_error e = SKV_ERROR_INIT;
    void *frame;
    size_t len;
    SKV_CK_OK(skv_proto_error_encode(&frame, &len, 9, SKV_EPROTO, "bad frame",
                                     "session.submit", 5, NULL, &e), &e);
    skv_proto_envelope env;
    SKV_CK_OK(skv_proto_envelope_decode(&env, (uint8_t *)frame + 4, len - 4, &e), &e);
    ck_assert_int_eq(env.type, SKV_PROTO_ERROR);
    ck_assert_int_eq(env.kind, SKV_PROTO_RESPONSE);
    ck_assert_uint_eq(env.request_id, 9);
    skv_proto_error er;
    SKV_CK_OK(skv_proto_body_decode(&er, SKV_PROTO_ERROR, env.body, env.body_len, &e), &e);
    ck_assert_int_eq(er.code, SKV_EPROTO);
    ck_assert_str_eq(er.message, "bad frame");
    ck_assert_str_eq(er.request_type, "session.submit");
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    skv_proto_envelope_free(&env);
    skv_free(frame);
    ck_assert_int_eq(skv_proto_error_encode(&frame, &len, 9, 0, "x", NULL, 5, NULL, &e),
                     SKV_EINVAL);
    /* an overlong message from a hostile request is clipped, not refused */
    char huge[5000];
    memset(huge, 'm', sizeof huge - 1);
    huge[sizeof huge - 1] = 0;
    for (size_t i = 1000; i + 2 < sizeof huge; i += 2)
        memcpy(huge + i, "\xc3\xa9", 2); /* multi-byte across the clip point */
    huge[10] = (char)0xff;                 /* and a malformed byte */
    SKV_CK_OK(skv_proto_error_encode(&frame, &len, 1, SKV_EINVAL, huge, NULL, 5, NULL, &e), &e);
    SKV_CK_OK(skv_proto_envelope_decode(&env, (uint8_t *)frame + 4, len - 4, &e), &e);
    SKV_CK_OK(skv_proto_body_decode(&er, SKV_PROTO_ERROR, env.body, env.body_len, &e), &e);
    ck_assert_uint_le(strlen(er.message), 1023);
    ck_assert_int_eq(er.message[10], '?');
    skv_proto_body_free(SKV_PROTO_ERROR, &er);
    skv_proto_envelope_free(&env);
    skv_free(frame);
}
END_TEST

/* ---- framing ------------------------------------------------------------------- */

START_TEST(test_reader_byte_at_a_time)
{
    skv_error e = SKV_ERROR_INIT;
    void *f1, *f2;
    size_t l1, l2;
    make_frame(&f1, &l1, SKV_PROTO_AGENT_REGISTER, SKV_PROTO_REQUEST);
    make_frame(&f2, &l2, SKV_PROTO_AGENT_HEARTBEAT, SKV_PROTO_EVENT);
    skv_proto_reader *r;
    SKV_CK_OK(skv_proto_reader_new(&r, 0, &e), &e);
    int got = 0;
    const uint8_t *src[2] = {f1, f2};
    size_t lens[2] = {l1, l2};
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < lens[k]; i++) {
            SKV_CK_OK(skv_proto_reader_feed(r, src[k] + i, 1, &e), &e);
            const void *p;
            size_t n;
            int rc = skv_proto_reader_next(r, &p, &n, &e);
            ck_assert_int_ge(rc, 0);
            if (i + 1 < lens[k]) {
                ck_assert_int_eq(rc, 0);
                continue;
            }
            ck_assert_int_eq(rc, 1);
            ck_assert_uint_eq(n, lens[k] - 4);
            ck_assert_mem_eq(p, src[k] + 4, n);
            got++;
        }
    }
    ck_assert_int_eq(got, 2);
    ck_assert_uint_eq(skv_proto_reader_buffered(r), 0);
    skv_proto_reader_free(r);
    skv_free(f1);
    skv_free(f2);
}
END_TEST

START_TEST(test_reader_many_in_one_buffer)
{
    skv_error e = SKV_ERROR_INIT;
    void *f;
    size_t l;
    make_frame(&f, &l, SKV_PROTO_SESSION_SUBMIT, SKV_PROTO_REQUEST);
    size_t total = 5 * l + 3;
    uint8_t *all = malloc(total);
    for (int i = 0; i < 5; i++)
        memcpy(all + i * l, f, l);
    memcpy(all + 5 * l, f, 3); /* a partial header of the sixth */
    skv_proto_reader *r;
    SKV_CK_OK(skv_proto_reader_new(&r, 0, &e), &e);
    SKV_CK_OK(skv_proto_reader_feed(r, all, total, &e), &e);
    const void *p;
    size_t n;
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), 1);
        skv_proto_envelope env;
        SKV_CK_OK(skv_proto_envelope_decode(&env, p, n, &e), &e);
        ck_assert_int_eq(env.type, SKV_PROTO_SESSION_SUBMIT);
        skv_proto_envelope_free(&env);
    }
    ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), 0);
    ck_assert_uint_eq(skv_proto_reader_buffered(r), 3);
    SKV_CK_OK(skv_proto_reader_feed(r, (uint8_t *)f + 3, l - 3, &e), &e);
    ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), 1);
    ck_assert_uint_eq(n, l - 4);
    skv_proto_reader_free(r);
    free(all);
    skv_free(f);
}
END_TEST

START_TEST(test_reader_oversized_and_zero)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_reader *r;
    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    /* announced 4 GiB - 1: refused on the header alone */
    ck_assert_int_eq(skv_proto_reader_feed(r, "\xff\xff\xff\xff" "abc", 7, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "exceeds"));
    ck_assert_uint_le(skv_proto_reader_buffered(r), 4);
    const void *p;
    size_t n;
    ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), SKV_EPROTO); /* sticky */
    ck_assert_int_eq(skv_proto_reader_feed(r, "x", 1, &e), SKV_EPROTO);
    skv_proto_reader_free(r);

    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    ck_assert_int_eq(skv_proto_reader_feed(r, "\x00\x00\x00\x65", 4, &e), SKV_EPROTO);
    skv_proto_reader_free(r);
    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    SKV_CK_OK(skv_proto_reader_feed(r, "\x00\x00\x00\x64", 4, &e), &e); /* 100: fine */
    skv_proto_reader_free(r);

    SKV_CK_OK(skv_proto_reader_new(&r, 0, &e), &e);
    SKV_CK_OK(skv_proto_reader_feed(r, "\x00\x00", 2, &e), &e);
    ck_assert_int_eq(skv_proto_reader_feed(r, "\x00\x00", 2, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "zero-length"));
    skv_proto_reader_free(r);
    /* a bad header behind a good frame is caught on the same feed */
    SKV_CK_OK(skv_proto_reader_new(&r, 0, &e), &e);
    ck_assert_int_eq(skv_proto_reader_feed(r, "\x00\x00\x00\x01\x80\x00\x00\x00\x00", 9, &e),
                     SKV_EPROTO);
    skv_proto_reader_free(r);

    ck_assert_int_eq(skv_proto_reader_new(&r, SKV_PROTO_MAX_FRAME_LIMIT + 1u, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_proto_reader_new(NULL, 0, &e), SKV_EINVAL);
    skv_proto_reader_free(NULL);
    uint8_t h[4];
    ck_assert_int_eq(skv_proto_frame_header(h, 0, 0, &e), SKV_ERANGE);
    ck_assert_int_eq(skv_proto_frame_header(h, 101, 100, &e), SKV_ERANGE);
    SKV_CK_OK(skv_proto_frame_header(h, 0x010203, 0, &e), &e);
    ck_assert_mem_eq(h, "\x00\x01\x02\x03", 4);
}
END_TEST

/* A server's limit rises after authentication; a lowered limit re-checks
 * the headers already buffered. */
START_TEST(test_reader_set_max_frame)
{
    skv_error e = SKV_ERROR_INIT;
    skv_proto_reader *r;
    const void *p;
    size_t n;
    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    /* a 100-byte frame, then the header of a 200-byte one behind it */
    static uint8_t buf[4 + 100 + 4];
    memcpy(buf, "\x00\x00\x00\x64", 4);
    memcpy(buf + 104, "\x00\x00\x00\xc8", 4);
    SKV_CK_OK(skv_proto_reader_feed(r, buf, 104, &e), &e);
    ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), 1);
    SKV_CK_OK(skv_proto_reader_set_max_frame(r, 1000, &e), &e);
    SKV_CK_OK(skv_proto_reader_feed(r, buf + 104, 4, &e), &e);   /* 200 ok */
    /* lowering below the buffered header fails the reader, stickily */
    ck_assert_int_eq(skv_proto_reader_set_max_frame(r, 150, &e), SKV_EPROTO);
    ck_assert_ptr_nonnull(strstr(e.message, "exceeds"));
    ck_assert_int_eq(skv_proto_reader_next(r, &p, &n, &e), SKV_EPROTO);
    ck_assert_int_eq(skv_proto_reader_set_max_frame(r, 1000, &e), SKV_EPROTO);
    skv_proto_reader_free(r);
    /* without the raise the same bytes are refused */
    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    ck_assert_int_eq(skv_proto_reader_feed(r, buf, sizeof(buf), &e),
                     SKV_EPROTO);
    skv_proto_reader_free(r);
    ck_assert_int_eq(skv_proto_reader_set_max_frame(NULL, 10, &e), SKV_EINVAL);
    SKV_CK_OK(skv_proto_reader_new(&r, 100, &e), &e);
    ck_assert_int_eq(skv_proto_reader_set_max_frame(
                         r, SKV_PROTO_MAX_FRAME_LIMIT + 1u, &e), SKV_EINVAL);
    SKV_CK_OK(skv_proto_reader_set_max_frame(r, 0, &e), &e);   /* default */
    SKV_CK_OK(skv_proto_reader_feed(r, "\x01\x00\x00\x00", 4, &e), &e);
    skv_proto_reader_free(r);
}
END_TEST

Suite *skv_test_suite_proto(void);
Suite *skv_test_suite_proto(void)
{
    Suite *s = suite_create("proto");
    TCase *tc = tcase_create("proto");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_type_table);
    tcase_add_test(tc, test_roundtrip_every_type);
    tcase_add_test(tc, test_roundtrip_values);
    tcase_add_test(tc, test_roundtrip_logs_and_exit);
    tcase_add_test(tc, test_truncation_every_byte);
    tcase_add_test(tc, test_wrong_types);
    tcase_add_test(tc, test_bounds);
    tcase_add_test(tc, test_allocation_bounded);
    tcase_add_test(tc, test_encode_validation);
    tcase_add_test(tc, test_route_deltas_compat);
    tcase_add_test(tc, test_envelope_roundtrip);
    tcase_add_test(tc, test_envelope_hostile);
    tcase_add_test(tc, test_envelope_encode_checks);
    tcase_add_test(tc, test_error_reply);
    tcase_add_test(tc, test_reader_byte_at_a_time);
    tcase_add_test(tc, test_reader_many_in_one_buffer);
    tcase_add_test(tc, test_reader_oversized_and_zero);
    tcase_add_test(tc, test_reader_set_max_frame);
    suite_add_tcase(s, tc);
    return s;
}
