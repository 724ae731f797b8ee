/* Allocation maps: building, FILL / EVENLY / INTERLEAVE placement on
 * unequal devices, anti-fragmentation, exclusive slot groups, constraints,
 * bad requests, claim, result records, snapshots (including hostile bytes),
 * allocation failures and a randomized 100k-cycle property test.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <string.h>

#include "sokovan/alloc.h"
#include "skv_test.h"

#define GiB ((skv_qty)1 << 30)
#define MiB ((skv_qty)1 << 20)

/* Expect `expr` to fail with `want_` and a message containing `part_`;
 * inside it, E is the detail object. */
#define CK_FAILS(expr, want_, part_)                                           \
    do {                                                                       \
        skv_error ck_e_ = SKV_ERROR_INIT;                                      \
        int ck_rc_ = (expr);                                                   \
        ck_assert_msg(ck_rc_ == (want_), "%s -> %s, want %s (%s)", #expr,      \
                      skv_err_name(ck_rc_), skv_err_name(want_),              \
                      ck_e_.message);                                          \
        ck_assert_msg(strstr(ck_e_.message, (part_)) != NULL,                  \
                      "%s: message '%s' lacks '%s'", #expr, ck_e_.message,    \
                      (part_));                                                \
    } while (0)
#define E (&ck_e_)

/* ---- helpers ------------------------------------------------------------ */

static skv_alloc_map *new_map(skv_alloc_strategy st)
{
    skv_alloc_map_options o = SKV_ALLOC_MAP_OPTIONS_INIT;
    o.strategy = st;
    skv_alloc_map *m = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_new(&m, &o, &e), &e);
    return m;
}

static size_t add_slot(skv_alloc_map *m, const char *name, skv_slot_kind kind,
                       skv_alloc_mode mode, skv_qty quantum, unsigned group,
                       unsigned flags)
{
    skv_alloc_slot_spec sp = SKV_ALLOC_SLOT_SPEC_INIT;
    sp.name = name;
    sp.kind = kind;
    sp.mode = mode;
    sp.quantum = quantum;
    sp.exclusive_group = group;
    sp.flags = flags;
    size_t idx = 99;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_add_slot(m, &idx, &sp, &e), &e);
    return idx;
}

static size_t add_dev(skv_alloc_map *m, const char *id, int numa)
{
    size_t idx = 99;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_add_device(m, &idx, id, numa, &e), &e);
    return idx;
}

static void set_cap(skv_alloc_map *m, size_t dev, const char *slot, skv_qty q)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_set_capacity(m, dev, slot, q, &e), &e);
}

static skv_slots *vec(const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *s = NULL;
    SKV_CK_OK(skv_slots_parse(&s, text, NULL, &e), &e);
    return s;
}

/* Allocate text; expect success. */
static skv_alloc_result *take(skv_alloc_map *m, const char *text,
                              const skv_alloc_constraints *c)
{
    skv_slots *req = vec(text);
    skv_alloc_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_check(m, req, c, &e), &e);
    SKV_CK_OK(skv_alloc_map_alloc(&r, m, req, c, &e), &e);
    skv_slots_free(req);
    return r;
}

/* Allocate text; expect code and an unchanged map. */
static void refuse(skv_alloc_map *m, const char *text,
                   const skv_alloc_constraints *c, int code, const char *part)
{
    skv_alloc_map *before = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_dup(&before, m, &e), &e);
    skv_slots *req = vec(text);
    skv_alloc_result *r = NULL;
    CK_FAILS(skv_alloc_map_check(m, req, c, E), code, part);
    CK_FAILS(skv_alloc_map_alloc(&r, m, req, c, E), code, part);
    ck_assert_ptr_null(r);
    ck_assert(skv_alloc_map_equal(m, before));
    skv_slots_free(req);
    skv_alloc_map_free(before);
}

static skv_qty amount(const skv_alloc_map *m, const skv_alloc_result *r,
                     const char *slot, const char *dev)
{
    size_t s, d;
    ck_assert_int_eq(skv_alloc_map_slot_index(m, slot, &s), 0);
    ck_assert_int_eq(skv_alloc_map_device_index(m, dev, &d), 0);
    return skv_alloc_result_get(r, s, d);
}

static void give_back(skv_alloc_map *m, skv_alloc_result *r)
{
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_release(m, r, &e), &e);
    skv_alloc_result_free(r);
}

/* Three devices of unequal capacity (1.0, 2.0, 0.5) in one fractional slot. */
static skv_alloc_map *unequal_map(skv_alloc_strategy st, unsigned flags)
{
    skv_alloc_map *m = new_map(st);
    add_slot(m, "x.shares", SKV_SLOT_COUNT, SKV_ALLOC_FRACTIONAL, 0, 0, flags);
    const char *ids[] = {"d0", "d1", "d2"};
    const skv_qty caps[] = {1000, 2000, 500};
    for (size_t i = 0; i < 3; i++)
        set_cap(m, add_dev(m, ids[i], 0), "x.shares", caps[i]);
    return m;
}

/* Two GPUs with whole-device and share slots in one exclusive group. */
static skv_alloc_map *gpu_map(size_t n)
{
    skv_alloc_map *m = new_map(SKV_ALLOC_FILL);
    add_slot(m, "cuda.device", SKV_SLOT_COUNT, SKV_ALLOC_DISCRETE, 0, 1, 0);
    add_slot(m, "cuda.shares", SKV_SLOT_COUNT, SKV_ALLOC_FRACTIONAL, 0, 1, 0);
    for (size_t i = 0; i < n; i++) {
        char id[8];
        snprintf(id, sizeof(id), "g%zu", i);
        size_t d = add_dev(m, id, (int)(i % 2));
        set_cap(m, d, "cuda.device", 1000);
        set_cap(m, d, "cuda.shares", 1000);
    }
    return m;
}

/* Eight cores, 0-3 on node 0 and 4-7 on node 1. */
static skv_alloc_map *core_map(skv_alloc_strategy st)
{
    skv_alloc_map *m = new_map(st);
    add_slot(m, "cpu", SKV_SLOT_COUNT, SKV_ALLOC_DISCRETE, 0, 0, 0);
    for (int i = 0; i < 8; i++) {
        char id[8];
        snprintf(id, sizeof(id), "%d", i);
        set_cap(m, add_dev(m, id, i / 4), "cpu", 1000);
    }
    return m;
}

/* The cores a result took, as a bit mask of device indexes. */
static unsigned core_bits(const skv_alloc_result *r)
{
    unsigned bits = 0;
    skv_alloc_entry en;
    for (size_t i = 0; skv_alloc_result_at(r, i, &en) == 0; i++) {
        ck_assert_int_eq(en.qty, 1000);
        bits |= 1u << en.device;
    }
    return bits;
}

/* ---- building ----------------------------------------------------------- */

START_TEST(test_build_errors)
{
    skv_alloc_map *m = NULL;
    skv_alloc_map_options o = SKV_ALLOC_MAP_OPTIONS_INIT;
    o.version = 7;
    CK_FAILS(skv_alloc_map_new(&m, &o, E), SKV_EVERSION, "version 7");
    o = (skv_alloc_map_options)SKV_ALLOC_MAP_OPTIONS_INIT;
    o.strategy = SKV_ALLOC_DEFAULT;
    CK_FAILS(skv_alloc_map_new(&m, &o, E), SKV_EINVAL, "strategy");
    ck_assert_ptr_null(m);
    m = new_map(SKV_ALLOC_FILL);
    skv_alloc_slot_spec sp = SKV_ALLOC_SLOT_SPEC_INIT;
    sp.name = "Bad Name";
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EINVAL, "Bad");
    sp.name = "u.slice";
    sp.kind = SKV_SLOT_UNIQUE;
    sp.mode = SKV_ALLOC_FRACTIONAL;
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EINVAL, "discrete");
    sp = (skv_alloc_slot_spec)SKV_ALLOC_SLOT_SPEC_INIT;
    sp.name = "x.shares";
    sp.quantum = 3;
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EINVAL, "quantum");
    sp.quantum = -10;
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EINVAL, "quantum");
    sp.quantum = 0;
    sp.flags = 0x80;
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EINVAL, "flags");
    sp.flags = 0;
    sp.version = 2;
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EVERSION, "slot spec");
    ck_assert_uint_eq(skv_alloc_map_slot_count(m), 0);
    size_t s = add_slot(m, "x.shares", SKV_SLOT_COUNT, SKV_ALLOC_FRACTIONAL, 0,
                        0, 0);
    ck_assert_uint_eq(s, 0);
    sp = (skv_alloc_slot_spec)SKV_ALLOC_SLOT_SPEC_INIT;
    sp.name = "x.shares";
    CK_FAILS(skv_alloc_map_add_slot(m, NULL, &sp, E), SKV_EEXIST, "x.shares");
    skv_alloc_slot_spec got;
    ck_assert_int_eq(skv_alloc_map_slot_spec(m, 0, &got), 0);
    ck_assert_int_eq(got.quantum, SKV_ALLOC_FRACTION_QUANTUM);
    ck_assert_str_eq(got.name, "x.shares");
    ck_assert_int_eq(skv_alloc_map_slot_spec(m, 1, &got), SKV_ERANGE);

    CK_FAILS(skv_alloc_map_add_device(m, NULL, "", 0, E), SKV_EINVAL, "empty");
    CK_FAILS(skv_alloc_map_add_device(m, NULL, "a b", 0, E), SKV_EINVAL,
             "printable");
    CK_FAILS(skv_alloc_map_add_device(m, NULL, "g0", -2, E), SKV_EINVAL,
             "NUMA node -2");
    char longid[200];
    memset(longid, 'x', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    CK_FAILS(skv_alloc_map_add_device(m, NULL, longid, 0, E), SKV_EINVAL,
             "longer");
    size_t d = add_dev(m, "g0", 0);
    CK_FAILS(skv_alloc_map_add_device(m, NULL, "g0", 1, E), SKV_EEXIST, "g0");
    CK_FAILS(skv_alloc_map_set_capacity(m, d, "nope", 1000, E), SKV_ENOENT,
             "nope");
    CK_FAILS(skv_alloc_map_set_capacity(m, 5, "x.shares", 1000, E), SKV_ERANGE,
             "index 5");
    CK_FAILS(skv_alloc_map_set_capacity(m, d, "x.shares", 1005, E), SKV_EINVAL,
             "multiple of the quantum");
    CK_FAILS(skv_alloc_map_set_capacity(m, d, "x.shares", -10, E), SKV_EINVAL,
             "capacity");
    set_cap(m, d, "x.shares", 1000);
    skv_alloc_result *r = take(m, "x.shares=0.5", NULL);
    CK_FAILS(skv_alloc_map_set_capacity(m, d, "x.shares", 400, E), SKV_EBUSY,
             "in use");
    set_cap(m, d, "x.shares", 600); /* shrinking above the usage is fine */
    ck_assert_int_eq(skv_alloc_map_free_qty(m, 0, d), 100);
    give_back(m, r);
    skv_alloc_map_free(m);
    skv_alloc_map_free(NULL);
    skv_alloc_result_free(NULL);
}
END_TEST

START_TEST(test_unique_slot)
{
    skv_alloc_map *m = new_map(SKV_ALLOC_FILL);
    add_slot(m, "tpu.slice", SKV_SLOT_UNIQUE, SKV_ALLOC_DISCRETE, 0, 0, 0);
    size_t d0 = add_dev(m, "t0", 0), d1 = add_dev(m, "t1", 0);
    CK_FAILS(skv_alloc_map_set_capacity(m, d0, "tpu.slice", 2000, E),
             SKV_EINVAL, "unique");
    set_cap(m, d0, "tpu.slice", 1000);
    set_cap(m, d1, "tpu.slice", 1000);
    skv_alloc_result *r = NULL;
    CK_FAILS(skv_alloc_map_alloc_slot(&r, m, 0, 2000, NULL, E), SKV_EINVAL,
             "unique");
    SKV_CK_OK(skv_alloc_map_alloc_slot(&r, m, 0, 1000, NULL, NULL), NULL);
    ck_assert_int_eq(skv_alloc_result_get(r, 0, d0), 1000);
    give_back(m, r);
    skv_alloc_map_free(m);
}
END_TEST

/* ---- placement ---------------------------------------------------------- */

START_TEST(test_fill_unequal)
{
    skv_alloc_map *m = unequal_map(SKV_ALLOC_FILL, 0);
    /* Empty devices tie on use: the tightest (d2, 0.5 free) fills first. */
    skv_alloc_result *a = take(m, "x.shares=0.3", NULL);
    ck_assert_int_eq(amount(m, a, "x.shares", "d2"), 300);
    ck_assert_uint_eq(skv_alloc_result_count(a), 1);
    /* The most used device is drained before another is touched. */
    skv_alloc_result *b = take(m, "x.shares=0.3", NULL);
    ck_assert_int_eq(amount(m, b, "x.shares", "d2"), 200);
    ck_assert_int_eq(amount(m, b, "x.shares", "d0"), 100);
    ck_assert_int_eq(amount(m, b, "x.shares", "d1"), 0);
    ck_assert_int_eq(skv_alloc_map_used(m, 0, SKV_ALLOC_ALL), 600);
    give_back(m, b);
    give_back(m, a);
    ck_assert_int_eq(skv_alloc_map_used(m, 0, SKV_ALLOC_ALL), 0);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_evenly_unequal)
{
    skv_alloc_map *m = unequal_map(SKV_ALLOC_EVENLY, 0);
    skv_alloc_result *a = take(m, "x.shares=0.3", NULL);
    ck_assert_int_eq(amount(m, a, "x.shares", "d0"), 100);
    ck_assert_int_eq(amount(m, a, "x.shares", "d1"), 100);
    ck_assert_int_eq(amount(m, a, "x.shares", "d2"), 100);
    skv_alloc_result *b = take(m, "x.shares=0.6", NULL);
    ck_assert_int_eq(amount(m, b, "x.shares", "d2"), 200);
    /* Water-filling stops at d2's capacity and levels the others. */
    skv_alloc_result *c = take(m, "x.shares=0.9", NULL);
    ck_assert_int_eq(amount(m, c, "x.shares", "d0"), 350);
    ck_assert_int_eq(amount(m, c, "x.shares", "d1"), 350);
    ck_assert_int_eq(amount(m, c, "x.shares", "d2"), 200);
    ck_assert_int_eq(skv_alloc_map_free_qty(m, 0, 2), 0);
    /* A remainder below one quantum per device goes in device order. */
    skv_alloc_result *d = take(m, "x.shares=0.01", NULL);
    ck_assert_int_eq(amount(m, d, "x.shares", "d0"), 10);
    give_back(m, d);
    give_back(m, c);
    give_back(m, b);
    give_back(m, a);
    skv_alloc_map_free(m);

    /* Three equal devices, 0.1: 0.03 each plus 0.01 to the first. */
    m = new_map(SKV_ALLOC_EVENLY);
    add_slot(m, "x.shares", SKV_SLOT_COUNT, SKV_ALLOC_FRACTIONAL, 0, 0, 0);
    for (int i = 0; i < 3; i++) {
        char id[4] = {'e', (char)('0' + i), 0};
        set_cap(m, add_dev(m, id, 0), "x.shares", 1000);
    }
    a = take(m, "x.shares=0.1", NULL);
    ck_assert_int_eq(amount(m, a, "x.shares", "e0"), 40);
    ck_assert_int_eq(amount(m, a, "x.shares", "e1"), 30);
    ck_assert_int_eq(amount(m, a, "x.shares", "e2"), 30);
    give_back(m, a);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_antifrag)
{
    /* FILL with anti-fragmentation: one device, the fullest that fits. */
    skv_alloc_map *m = unequal_map(SKV_ALLOC_FILL, SKV_ALLOC_SLOT_ANTIFRAG);
    skv_alloc_result *a = take(m, "x.shares=0.3", NULL);
    ck_assert_int_eq(amount(m, a, "x.shares", "d2"), 300);
    skv_alloc_result *b = take(m, "x.shares=0.3", NULL); /* d2 has 0.2 */
    ck_assert_uint_eq(skv_alloc_result_count(b), 1);
    ck_assert_int_eq(amount(m, b, "x.shares", "d0"), 300);
    skv_alloc_result *c = take(m, "x.shares=0.8", NULL);
    ck_assert_int_eq(amount(m, c, "x.shares", "d1"), 800);
    /* Fits no single device: split, most used first (d1, then d2/d0 tie
     * on use and d2 is tighter). */
    skv_alloc_result *d = take(m, "x.shares=2", NULL);
    ck_assert_int_eq(amount(m, d, "x.shares", "d1"), 1200);
    ck_assert_int_eq(amount(m, d, "x.shares", "d2"), 200);
    ck_assert_int_eq(amount(m, d, "x.shares", "d0"), 600);
    refuse(m, "x.shares=0.2", NULL, SKV_ENOSPC, "0.1 available");
    give_back(m, d);
    give_back(m, c);
    give_back(m, b);
    give_back(m, a);
    skv_alloc_map_free(m);

    /* Without the slot flag the same request splits, with the request flag
     * it does not; EVENLY picks the least used, then the emptiest. */
    m = unequal_map(SKV_ALLOC_EVENLY, 0);
    skv_alloc_constraints af = SKV_ALLOC_CONSTRAINTS_INIT;
    af.flags = SKV_ALLOC_ANTIFRAG;
    a = take(m, "x.shares=0.3", &af);
    ck_assert_int_eq(amount(m, a, "x.shares", "d1"), 300);
    b = take(m, "x.shares=0.3", &af);
    ck_assert_int_eq(amount(m, b, "x.shares", "d0"), 300);
    c = take(m, "x.shares=0.3", NULL);
    ck_assert_uint_eq(skv_alloc_result_count(c), 1); /* d2 is least used */
    ck_assert_int_eq(amount(m, c, "x.shares", "d2"), 300);
    give_back(m, a);
    give_back(m, b);
    give_back(m, c);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_one_device)
{
    skv_alloc_map *m = unequal_map(SKV_ALLOC_FILL, 0);
    skv_alloc_constraints one = SKV_ALLOC_CONSTRAINTS_INIT;
    one.flags = SKV_ALLOC_ONE_DEVICE;
    skv_alloc_result *a = take(m, "x.shares=1.5", &one);
    ck_assert_int_eq(amount(m, a, "x.shares", "d1"), 1500);
    refuse(m, "x.shares=1.5", &one, SKV_ENOSPC, "single device");
    /* Split is fine: d1's rest, then the tighter of the two unused. */
    skv_alloc_result *b = take(m, "x.shares=1.5", NULL);
    ck_assert_uint_eq(skv_alloc_result_count(b), 3);
    ck_assert_int_eq(amount(m, b, "x.shares", "d1"), 500);
    ck_assert_int_eq(amount(m, b, "x.shares", "d2"), 500);
    ck_assert_int_eq(amount(m, b, "x.shares", "d0"), 500);
    give_back(m, a);
    give_back(m, b);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_exclusive_group)
{
    skv_alloc_map *m = gpu_map(2);
    skv_alloc_result *sh = take(m, "cuda.shares=0.5", NULL);
    ck_assert_int_eq(amount(m, sh, "cuda.shares", "g0"), 500);
    /* g0 is shared now: not available whole. */
    ck_assert_int_eq(skv_alloc_map_available(m, 0, 0), 0);
    ck_assert_int_eq(skv_alloc_map_free_qty(m, 0, 0), 1000);
    ck_assert_int_eq(skv_alloc_map_available(m, 0, SKV_ALLOC_ALL), 1000);
    refuse(m, "cuda.device=2", NULL, SKV_ENOSPC, "cuda.device");
    skv_alloc_result *whole = take(m, "cuda.device=1", NULL);
    ck_assert_int_eq(amount(m, whole, "cuda.device", "g1"), 1000);
    /* g1 is whole now: shares only fit what g0 has left. */
    ck_assert_int_eq(skv_alloc_map_available(m, 1, 1), 0);
    refuse(m, "cuda.shares=0.6", NULL, SKV_ENOSPC, "0.5 available");
    skv_alloc_result *sh2 = take(m, "cuda.shares=0.5", NULL);
    ck_assert_int_eq(amount(m, sh2, "cuda.shares", "g0"), 500);
    refuse(m, "cuda.device=1,cuda.shares=0.1", NULL, SKV_EINVAL,
           "mutually exclusive");
    give_back(m, sh);
    give_back(m, sh2);
    /* Both shares gone: g0 can be handed out whole again. */
    skv_alloc_result *w2 = take(m, "cuda.device=1", NULL);
    ck_assert_int_eq(amount(m, w2, "cuda.device", "g0"), 1000);
    give_back(m, whole);
    give_back(m, w2);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_cores_numa)
{
    skv_alloc_map *m = core_map(SKV_ALLOC_FILL);
    skv_alloc_result *a = take(m, "cpu=3", NULL);
    ck_assert_uint_eq(core_bits(a), 0x07);
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    int prefer[] = {1};
    c.numa_prefer = prefer;
    c.numa_prefer_count = 1;
    skv_alloc_result *b = take(m, "cpu=2", &c);
    ck_assert_uint_eq(core_bits(b), 0x30);
    /* Preference spills to other nodes once the first is exhausted. */
    skv_alloc_result *d = take(m, "cpu=3", &c);
    ck_assert_uint_eq(core_bits(d), 0xc8);
    give_back(m, d);
    uint64_t mask = 1u << 1;
    skv_alloc_constraints mc = SKV_ALLOC_CONSTRAINTS_INIT;
    mc.numa_mask = &mask;
    mc.numa_mask_words = 1;
    refuse(m, "cpu=3", &mc, SKV_ENOSPC, "2 available");
    refuse(m, "cpu=0.5", NULL, SKV_EINVAL, "finer than the 1 quantum");
    refuse(m, "cpu=9", NULL, SKV_ERANGE, "total capacity is 8");
    refuse(m, "gpu=1", NULL, SKV_EINVAL, "'gpu' is not in this");
    skv_alloc_result *e = take(m, "cpu=2", &mc);
    ck_assert_uint_eq(core_bits(e), 0xc0);
    give_back(m, a);
    give_back(m, b);
    give_back(m, e);
    skv_alloc_map_free(m);

    /* INTERLEAVE alternates nodes; EVENLY on single-unit cores follows
     * device order. */
    m = core_map(SKV_ALLOC_INTERLEAVE);
    a = take(m, "cpu=5", NULL);
    ck_assert_uint_eq(core_bits(a), 0x37);
    give_back(m, a);
    c.strategy = SKV_ALLOC_EVENLY;
    c.numa_prefer = NULL;
    c.numa_prefer_count = 0;
    a = take(m, "cpu=3", &c);
    ck_assert_uint_eq(core_bits(a), 0x07);
    give_back(m, a);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_subset_and_constraint_errors)
{
    skv_alloc_map *m = core_map(SKV_ALLOC_FILL);
    size_t sub[] = {6, 2, 5};
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    c.devices = sub;
    c.device_count = 3;
    skv_alloc_result *a = take(m, "cpu=2", &c);
    ck_assert_uint_eq(core_bits(a), 0x24); /* device order, not list order */
    refuse(m, "cpu=2", &c, SKV_ENOSPC, "1 available");
    give_back(m, a);
    size_t dup[] = {1, 1};
    c.devices = dup;
    c.device_count = 2;
    refuse(m, "cpu=1", &c, SKV_EINVAL, "listed twice");
    size_t far[] = {8};
    c.devices = far;
    c.device_count = 1;
    refuse(m, "cpu=1", &c, SKV_EINVAL, "out of range");
    c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    int pref[] = {0, 0};
    c.numa_prefer = pref;
    c.numa_prefer_count = 2;
    refuse(m, "cpu=1", &c, SKV_EINVAL, "listed twice");
    c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    c.flags = 0x100;
    refuse(m, "cpu=1", &c, SKV_EINVAL, "unknown flags");
    c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    c.version = 9;
    refuse(m, "cpu=1", &c, SKV_EVERSION, "version 9");
    c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    c.strategy = (skv_alloc_strategy)42;
    refuse(m, "cpu=1", &c, SKV_EINVAL, "strategy");
    /* Bad amounts through the index API. */
    skv_alloc_result *r = NULL;
    CK_FAILS(skv_alloc_map_alloc_slot(&r, m, 0, -1000, NULL, E), SKV_EINVAL,
             "negative");
    CK_FAILS(skv_alloc_map_alloc_slot(&r, m, 0, SKV_QTY_UNLIMITED, NULL, E),
             SKV_EINVAL, "unlimited");
    CK_FAILS(skv_alloc_map_alloc_slot(&r, m, 3, 1000, NULL, E), SKV_EINVAL,
             "slot index 3");
    CK_FAILS(skv_alloc_map_check_slot(m, 0, 500, NULL, E), SKV_EINVAL,
             "finer");
    ck_assert_ptr_null(r);
    /* A kind mismatch: "cpu" requested as bytes. */
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_new(&req, NULL), NULL);
    SKV_CK_OK(skv_slots_set(req, "cpu", SKV_SLOT_BYTES, 1000, NULL), NULL);
    CK_FAILS(skv_alloc_map_alloc(&r, m, req, NULL, E), SKV_EINVAL, "bytes");
    skv_slots_free(req);
    /* Zero amounts are no requests at all. */
    SKV_CK_OK(skv_alloc_map_alloc_slot(&r, m, 0, 0, NULL, NULL), NULL);
    ck_assert_uint_eq(skv_alloc_result_count(r), 0);
    give_back(m, r);
    ck_assert_int_eq(skv_alloc_map_used(m, 0, SKV_ALLOC_ALL), 0);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_bytes_slot)
{
    skv_alloc_map *m = new_map(SKV_ALLOC_INTERLEAVE);
    add_slot(m, "mem", SKV_SLOT_BYTES, SKV_ALLOC_FRACTIONAL, MiB, 0, 0);
    set_cap(m, add_dev(m, "node0", 0), "mem", 64 * GiB);
    set_cap(m, add_dev(m, "node1", 1), "mem", 64 * GiB);
    skv_alloc_result *a = take(m, "mem=32g", NULL);
    ck_assert_int_eq(amount(m, a, "mem", "node0"), 16 * GiB);
    ck_assert_int_eq(amount(m, a, "mem", "node1"), 16 * GiB);
    refuse(m, "mem=1000", NULL, SKV_EINVAL, "quantum");
    give_back(m, a);
    skv_alloc_constraints ev = SKV_ALLOC_CONSTRAINTS_INIT;
    ev.strategy = SKV_ALLOC_EVENLY;
    skv_alloc_constraints fill = SKV_ALLOC_CONSTRAINTS_INIT;
    fill.strategy = SKV_ALLOC_FILL;
    int pref[] = {0};
    fill.numa_prefer = pref;
    fill.numa_prefer_count = 1;
    a = take(m, "mem=10g", &fill);
    ck_assert_int_eq(amount(m, a, "mem", "node0"), 10 * GiB);
    skv_alloc_result *b = take(m, "mem=20g", &ev);
    ck_assert_int_eq(amount(m, b, "mem", "node0"), 5 * GiB);
    ck_assert_int_eq(amount(m, b, "mem", "node1"), 15 * GiB);
    skv_slots *cap = NULL, *used = NULL;
    SKV_CK_OK(skv_slots_new(&cap, NULL), NULL);
    SKV_CK_OK(skv_slots_new(&used, NULL), NULL);
    SKV_CK_OK(skv_alloc_map_totals(cap, used, m, NULL), NULL);
    ck_assert_int_eq(skv_slots_get(cap, "mem"), 128 * GiB);
    ck_assert_int_eq(skv_slots_get(used, "mem"), 30 * GiB);
    skv_slots_free(cap);
    skv_slots_free(used);
    give_back(m, a);
    give_back(m, b);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_queries_and_names)
{
    skv_alloc_map *m = gpu_map(3);
    ck_assert_uint_eq(skv_alloc_map_device_count(m), 3);
    ck_assert_str_eq(skv_alloc_map_device_id(m, 2), "g2");
    ck_assert_ptr_null(skv_alloc_map_device_id(m, 3));
    ck_assert_int_eq(skv_alloc_map_device_numa(m, 1), 1);
    ck_assert_int_eq(skv_alloc_map_device_numa(m, 9), -1);
    ck_assert_str_eq(skv_alloc_map_slot_name(m, 1), "cuda.shares");
    ck_assert_ptr_null(skv_alloc_map_slot_name(m, 2));
    ck_assert_int_eq(skv_alloc_map_slot_index(m, "nope", NULL), SKV_ENOENT);
    ck_assert_int_eq(skv_alloc_map_device_index(m, "g9", NULL), SKV_ENOENT);
    ck_assert_int_eq(skv_alloc_map_capacity(m, 0, SKV_ALLOC_ALL), 3000);
    ck_assert_int_eq(skv_alloc_map_capacity(m, 7, 0), 0);
    ck_assert_int_eq(skv_alloc_map_strategy(m), SKV_ALLOC_FILL);
    skv_alloc_strategy st;
    SKV_CK_OK(skv_alloc_strategy_parse(&st, "interleave", NULL), NULL);
    ck_assert_int_eq(st, SKV_ALLOC_INTERLEAVE);
    CK_FAILS(skv_alloc_strategy_parse(&st, "spread", E), SKV_EINVAL, "spread");
    ck_assert_str_eq(skv_alloc_strategy_name(SKV_ALLOC_EVENLY), "evenly");
    ck_assert_str_eq(skv_alloc_strategy_name((skv_alloc_strategy)9), "?");
    skv_alloc_map *c = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&c, m, NULL), NULL);
    ck_assert(skv_alloc_map_equal(m, c));
    set_cap(c, 0, "cuda.shares", 500);
    ck_assert(!skv_alloc_map_equal(m, c));
    skv_alloc_map_free(c);
    skv_alloc_map_free(m);
}
END_TEST

/* ---- release, claim, records -------------------------------------------- */

START_TEST(test_release_rules)
{
    skv_alloc_map *m = gpu_map(2);
    skv_alloc_result *r = take(m, "cuda.device=2", NULL);
    ck_assert_int_eq(skv_alloc_result_released(r), 0);
    SKV_CK_OK(skv_alloc_map_release(m, r, NULL), NULL);
    ck_assert_int_eq(skv_alloc_result_released(r), 1);
    CK_FAILS(skv_alloc_map_release(m, r, E), SKV_ESTATE, "already released");
    skv_alloc_result_free(r);
    /* A result of a bigger map does not fit a smaller one. */
    skv_alloc_map *big = gpu_map(4);
    r = take(big, "cuda.device=4", NULL);
    CK_FAILS(skv_alloc_map_release(m, r, E), SKV_EINVAL, "outside this map");
    /* A result whose amounts are not in use there is refused whole. */
    skv_alloc_map *other = gpu_map(4);
    skv_alloc_result *part = take(other, "cuda.device=1", NULL);
    CK_FAILS(skv_alloc_map_release(other, r, E), SKV_ESTATE, "more than");
    ck_assert_int_eq(skv_alloc_map_used(other, 0, SKV_ALLOC_ALL), 1000);
    give_back(other, part);
    give_back(big, r);
    skv_alloc_map_free(other);
    skv_alloc_map_free(big);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_claim)
{
    skv_alloc_map *m = gpu_map(2);
    skv_alloc_map *start = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&start, m, NULL), NULL);
    skv_alloc_entry en[] = {{1, 0, 300}, {0, 1, 1000}, {1, 0, 200}};
    skv_alloc_result *r = NULL;
    SKV_CK_OK(skv_alloc_map_claim(&r, m, en, 3, NULL), NULL);
    ck_assert_uint_eq(skv_alloc_result_count(r), 2); /* merged */
    skv_alloc_entry got;
    ck_assert_int_eq(skv_alloc_result_at(r, 0, &got), 0);
    ck_assert_uint_eq(got.slot, 0);
    ck_assert_int_eq(got.qty, 1000);
    ck_assert_int_eq(skv_alloc_result_at(r, 1, &got), 0);
    ck_assert_int_eq(got.qty, 500);
    ck_assert_int_eq(skv_alloc_result_at(r, 2, &got), SKV_ERANGE);
    skv_alloc_map *mid = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&mid, m, NULL), NULL);
    skv_alloc_result *bad = NULL;
    skv_alloc_entry over[] = {{1, 0, 600}};
    CK_FAILS(skv_alloc_map_claim(&bad, m, over, 1, E), SKV_ENOSPC,
             "does not fit");
    skv_alloc_entry excl[] = {{0, 0, 1000}};
    CK_FAILS(skv_alloc_map_claim(&bad, m, excl, 1, E), SKV_EBUSY, "exclusive");
    skv_alloc_map *fresh = gpu_map(2);
    skv_alloc_entry both[] = {{0, 0, 1000}, {1, 0, 100}};
    CK_FAILS(skv_alloc_map_claim(&bad, fresh, both, 2, E), SKV_EBUSY,
             "exclusive");
    skv_alloc_entry fine[] = {{1, 1, 5}};
    CK_FAILS(skv_alloc_map_claim(&bad, fresh, fine, 1, E), SKV_EINVAL,
             "invalid amount");
    skv_alloc_entry range[] = {{2, 0, 10}};
    CK_FAILS(skv_alloc_map_claim(&bad, fresh, range, 1, E), SKV_EINVAL,
             "outside");
    ck_assert_ptr_null(bad);
    ck_assert(skv_alloc_map_equal(m, mid));
    give_back(m, r);
    ck_assert(skv_alloc_map_equal(m, start));
    skv_alloc_map_free(fresh);
    skv_alloc_map_free(mid);
    skv_alloc_map_free(start);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_result_records)
{
    skv_alloc_map *m = gpu_map(4);
    skv_alloc_map *start = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&start, m, NULL), NULL);
    skv_alloc_result *a = take(m, "cuda.device=2", NULL);
    skv_alloc_result *b = take(m, "cuda.shares=1.5", NULL);
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_alloc_result_encode(&buf, &len, m, b, NULL), NULL);
    /* An agent restart: a fresh map claims the stored records. */
    skv_alloc_map *again = gpu_map(4);
    void *abuf = NULL;
    size_t alen = 0;
    SKV_CK_OK(skv_alloc_result_encode(&abuf, &alen, m, a, NULL), NULL);
    skv_alloc_result *ca = NULL, *cb = NULL;
    SKV_CK_OK(skv_alloc_map_claim_encoded(&ca, again, abuf, alen, NULL), NULL);
    SKV_CK_OK(skv_alloc_map_claim_encoded(&cb, again, buf, len, NULL), NULL);
    ck_assert(skv_alloc_map_equal(m, again));
    skv_alloc_result *dup = NULL;
    CK_FAILS(skv_alloc_map_claim_encoded(&dup, again, buf, len, E),
             SKV_ENOSPC, "does not fit");
    /* Decoding without claiming releases usage restored elsewhere. */
    skv_alloc_result *db = NULL;
    SKV_CK_OK(skv_alloc_result_decode(&db, m, buf, len, NULL), NULL);
    ck_assert_uint_eq(skv_alloc_result_count(db), skv_alloc_result_count(b));
    give_back(m, db);
    skv_alloc_result_free(b);
    give_back(m, a);
    ck_assert(skv_alloc_map_equal(m, start));
    /* Hostile records: every truncation and a few corruptions. */
    for (size_t cut = 0; cut < len; cut++) {
        skv_alloc_result *x = NULL;
        ck_assert_int_eq(skv_alloc_result_decode(&x, m, buf, cut, NULL),
                         SKV_EPROTO);
    }
    unsigned char huge[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x93};
    skv_alloc_result *x = NULL;
    CK_FAILS(skv_alloc_result_decode(&x, m, huge, sizeof(huge), E),
             SKV_EPROTO, "not an array");
    unsigned char unknown[] = {0x91, 0x93, 0xa1, 'z', 0xa2, 'g', '0', 0x01};
    CK_FAILS(skv_alloc_result_decode(&x, m, unknown, sizeof(unknown), E),
             SKV_EPROTO, "slot");
    skv_free(buf);
    skv_free(abuf);
    skv_alloc_result_free(ca);
    skv_alloc_result_free(cb);
    skv_alloc_map_free(again);
    skv_alloc_map_free(start);
    skv_alloc_map_free(m);
}
END_TEST

/* ---- snapshots ----------------------------------------------------------- */

/* A map with every feature in use. */
static skv_alloc_map *busy_map(skv_alloc_result **keep)
{
    skv_alloc_map *m = gpu_map(4);
    add_slot(m, "mem", SKV_SLOT_BYTES, SKV_ALLOC_FRACTIONAL, MiB, 0, 0);
    set_cap(m, 0, "mem", 8 * GiB);
    set_cap(m, 3, "mem", 4 * GiB);
    *keep = take(m, "cuda.device=1,cuda.shares=0,mem=6g", NULL);
    skv_alloc_result *b = take(m, "cuda.shares=0.75", NULL);
    skv_alloc_result_free(b); /* stays allocated in the map */
    return m;
}

START_TEST(test_snapshot_roundtrip)
{
    skv_alloc_result *keep = NULL;
    skv_alloc_map *m = busy_map(&keep);
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_alloc_map_snapshot(&buf, &len, m, NULL), NULL);
    skv_alloc_map *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_alloc_map_restore(&r, buf, len, &e), &e);
    ck_assert(skv_alloc_map_equal(m, r));
    /* The restored map behaves the same: same decisions, same release. */
    skv_alloc_result *x = take(m, "cuda.shares=0.5", NULL);
    skv_alloc_result *y = take(r, "cuda.shares=0.5", NULL);
    ck_assert(skv_alloc_map_equal(m, r));
    give_back(r, y);
    give_back(r, keep);
    give_back(m, x);
    ck_assert(!skv_alloc_map_equal(m, r));
    skv_free(buf);
    skv_alloc_map_free(r);
    skv_alloc_map_free(m);
}
END_TEST

START_TEST(test_snapshot_hostile)
{
    skv_alloc_result *keep = NULL;
    skv_alloc_map *m = busy_map(&keep);
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_alloc_map_snapshot(&buf, &len, m, NULL), NULL);
    for (size_t cut = 0; cut < len; cut++) {
        skv_alloc_map *r = NULL;
        ck_assert_int_eq(skv_alloc_map_restore(&r, buf, cut, NULL),
                         SKV_EPROTO);
        ck_assert_ptr_null(r);
    }
    unsigned char *b = malloc(len + 1);
    memcpy(b, buf, len);
    b[len] = 0xc0;
    skv_alloc_map *r = NULL;
    CK_FAILS(skv_alloc_map_restore(&r, b, len + 1, E), SKV_EPROTO, "trailing");
    /* Every single-byte corruption is refused or yields a consistent map. */
    static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0xff, 0xc0, 0xdd,
                                         0xcf, 0xd3, 0x9f, 0xa0, 0xe0};
    size_t accepted = 0;
    for (size_t i = 0; i < len; i++) {
        for (size_t v = 0; v < sizeof(vals); v++) {
            memcpy(b, buf, len);
            b[i] = vals[v];
            r = NULL;
            int rc = skv_alloc_map_restore(&r, b, len, NULL);
            ck_assert_msg(rc == 0 || rc == SKV_EPROTO, "byte %zu=%02x: %s", i,
                          vals[v], skv_err_name(rc));
            if (rc)
                continue;
            accepted++;
            for (size_t s = 0; s < skv_alloc_map_slot_count(r); s++) {
                skv_qty sum = 0;
                for (size_t d = 0; d < skv_alloc_map_device_count(r); d++) {
                    ck_assert_int_le(skv_alloc_map_used(r, s, d),
                                     skv_alloc_map_capacity(r, s, d));
                    sum += skv_alloc_map_used(r, s, d);
                }
                ck_assert_int_eq(sum, skv_alloc_map_used(r, s, SKV_ALLOC_ALL));
            }
            skv_alloc_map_free(r);
        }
    }
    ck_assert_uint_gt(accepted, 0); /* e.g. a changed capacity is valid */
    unsigned char huge[] = {0x95, 0xad, 's', 'k', 'v', '-', 'a', 'l', 'l', 'o',
                            'c', '-', 'm', 'a', 'p', 0x01, 0x01, 0xdd, 0x7f,
                            0xff, 0xff, 0xff};
    CK_FAILS(skv_alloc_map_restore(&r, huge, sizeof(huge), E), SKV_EPROTO,
             "slot list");
    unsigned char wrong[] = {0x95, 0xa3, 'f', 'o', 'o'};
    CK_FAILS(skv_alloc_map_restore(&r, wrong, sizeof(wrong), E), SKV_EPROTO,
             "not an allocation map");
    free(b);
    skv_free(buf);
    skv_alloc_result_free(keep);
    skv_alloc_map_free(m);
}
END_TEST

/* ---- allocation failures -------------------------------------------------- */

static long fail_after = -1;
static void *f_malloc(size_t n, void *p)
{
    (void)p;
    if (fail_after >= 0 && fail_after-- == 0)
        return NULL;
    return malloc(n);
}
static void *f_realloc(void *q, size_t n, void *p)
{
    (void)p;
    if (fail_after >= 0 && fail_after-- == 0)
        return NULL;
    return realloc(q, n);
}
static void f_free(void *q, void *p)
{
    (void)p;
    free(q);
}

START_TEST(test_out_of_memory)
{
    skv_allocator a = {SKV_ALLOCATOR_VERSION, f_malloc, f_realloc, f_free, NULL};
    SKV_CK_OK(skv_set_allocator(&a, NULL), NULL);
    skv_alloc_result *keep = NULL;
    skv_alloc_map *m = busy_map(&keep);
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_alloc_map_snapshot(&buf, &len, m, NULL), NULL);
    skv_slots *req = vec("cuda.shares=0.2");
    skv_alloc_map *before = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&before, m, NULL), NULL);
    int ok = 0;
    for (long k = 0; k < 400 && ok < 4; k++) {
        skv_alloc_map *r = NULL, *d = NULL;
        skv_alloc_result *x = NULL;
        fail_after = k;
        int rc1 = skv_alloc_map_restore(&r, buf, len, NULL);
        fail_after = k;
        int rc2 = skv_alloc_map_dup(&d, m, NULL);
        fail_after = k;
        int rc3 = skv_alloc_map_alloc(&x, m, req, NULL, NULL);
        fail_after = -1;
        ck_assert(rc1 == 0 || rc1 == SKV_ENOMEM);
        ck_assert(rc2 == 0 || rc2 == SKV_ENOMEM);
        ck_assert(rc3 == 0 || rc3 == SKV_ENOMEM);
        if (rc3) {
            ck_assert(skv_alloc_map_equal(m, before));
        } else {
            give_back(m, x);
        }
        ok = rc1 == 0 && rc2 == 0 && rc3 == 0 ? ok + 1 : 0;
        skv_alloc_map_free(r);
        skv_alloc_map_free(d);
    }
    ck_assert_int_eq(ok, 4);
    skv_slots_free(req);
    skv_free(buf);
    skv_alloc_result_free(keep);
    skv_alloc_map_free(before);
    skv_alloc_map_free(m);
    SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
}
END_TEST

/* ---- randomized ----------------------------------------------------------- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* xorshift64*: explicit seed, same sequence on every run. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * UINT64_C(2685821657736338717);
}

#define LIVE_MAX 24

/* Maps of different strategies with unequal GPUs, shares, bytes on
 * devices of several NUMA nodes. */
static skv_alloc_map *random_map(skv_alloc_strategy st)
{
    skv_alloc_map *m = new_map(st);
    add_slot(m, "cuda.device", SKV_SLOT_COUNT, SKV_ALLOC_DISCRETE, 0, 1, 0);
    add_slot(m, "cuda.shares", SKV_SLOT_COUNT, SKV_ALLOC_FRACTIONAL, 0, 1,
             st == SKV_ALLOC_FILL ? SKV_ALLOC_SLOT_ANTIFRAG : 0);
    add_slot(m, "cuda.mem", SKV_SLOT_BYTES, SKV_ALLOC_FRACTIONAL, MiB, 0, 0);
    static const skv_qty shares[] = {1000, 2000, 500, 1000, 1500, 250};
    for (int i = 0; i < 6; i++) {
        char id[8];
        snprintf(id, sizeof(id), "gpu%d", i);
        size_t d = add_dev(m, id, i == 5 ? -1 : i % 3);
        set_cap(m, d, "cuda.device", 1000);
        set_cap(m, d, "cuda.shares", shares[i]);
        set_cap(m, d, "cuda.mem", (skv_qty)(i + 1) * GiB);
    }
    return m;
}

static size_t n_allocs;
static void *n_malloc(size_t n, void *p)
{
    (void)p;
    n_allocs++;
    return malloc(n);
}
static void *n_realloc(void *q, size_t n, void *p)
{
    (void)p;
    n_allocs++;
    return realloc(q, n);
}

/* The hot paths the scheduler runs: check allocates nothing, alloc only
 * its result, release nothing. */
START_TEST(test_hot_path_allocations)
{
    skv_allocator a = {SKV_ALLOCATOR_VERSION, n_malloc, n_realloc, f_free, NULL};
    SKV_CK_OK(skv_set_allocator(&a, NULL), NULL);
    skv_alloc_map *m = random_map(SKV_ALLOC_FILL);
    skv_slots *req = vec("cuda.device=2,cuda.mem=3g");
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    int prefer[] = {1};
    c.numa_prefer = prefer;
    c.numa_prefer_count = 1;
    c.strategy = SKV_ALLOC_EVENLY;
    for (int i = 0; i < 3; i++) {
        n_allocs = 0;
        ck_assert_int_eq(skv_alloc_map_check(m, req, &c, NULL), 0);
        ck_assert_int_eq(skv_alloc_map_check_slot(m, 0, 9000, NULL, NULL),
                         SKV_ERANGE);
        ck_assert_uint_eq(n_allocs, 0);
        skv_alloc_result *r = NULL;
        SKV_CK_OK(skv_alloc_map_alloc(&r, m, req, &c, NULL), NULL);
        ck_assert_uint_eq(n_allocs, 1);
        SKV_CK_OK(skv_alloc_map_release(m, r, NULL), NULL);
        ck_assert_uint_eq(n_allocs, 1);
        skv_alloc_result_free(r);
    }
    skv_slots_free(req);
    skv_alloc_map_free(m);
    SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
}
END_TEST

static void random_request(skv_slots *req, skv_alloc_constraints *c,
                           uint64_t *mask, int *prefer, size_t *subset)
{
    skv_slots_clear(req);
    *c = (skv_alloc_constraints)SKV_ALLOC_CONSTRAINTS_INIT;
    uint64_t x = rnd();
    if (x % 2)
        skv_slots_set(req, "cuda.device", SKV_SLOT_COUNT,
                      (skv_qty)(rnd() % 4) * 1000 + (x % 17 == 0 ? 5 : 0),
                      NULL);
    else
        skv_slots_set(req, "cuda.shares", SKV_SLOT_COUNT,
                      (skv_qty)(rnd() % 160) * 10 + (x % 19 == 0 ? 3 : 0),
                      NULL);
    if (x % 3 == 0)
        skv_slots_set(req, "cuda.mem", SKV_SLOT_BYTES,
                      (skv_qty)(rnd() % 4096) * MiB, NULL);
    if (x % 23 == 0) /* two exclusive slots at once: always refused */
        skv_slots_set(req, "cuda.device", SKV_SLOT_COUNT, 1000, NULL);
    if (x % 5 == 0)
        c->flags |= SKV_ALLOC_ONE_DEVICE;
    if (x % 7 == 0) {
        *mask = rnd() % 8;
        c->numa_mask = mask;
        c->numa_mask_words = 1;
    }
    if (x % 11 == 0) {
        prefer[0] = (int)(rnd() % 3);
        prefer[1] = -1;
        c->numa_prefer = prefer;
        c->numa_prefer_count = 2;
    }
    if (x % 13 == 0) {
        subset[0] = rnd() % 3;
        subset[1] = 3 + rnd() % 3;
        c->devices = subset;
        c->device_count = 2;
    }
    c->strategy = (skv_alloc_strategy)(rnd() % 4);
}

/* Usage equals the sum of the live results, never exceeds capacity, and
 * no device is held through two exclusive slots. */
static void verify(const skv_alloc_map *m, skv_alloc_result *const *live,
                   size_t nlive)
{
    for (size_t s = 0; s < skv_alloc_map_slot_count(m); s++) {
        skv_qty total = 0;
        for (size_t d = 0; d < skv_alloc_map_device_count(m); d++) {
            skv_qty want = 0;
            for (size_t i = 0; i < nlive; i++)
                want += skv_alloc_result_get(live[i], s, d);
            skv_qty used = skv_alloc_map_used(m, s, d);
            ck_assert_int_eq(used, want);
            ck_assert_int_le(used, skv_alloc_map_capacity(m, s, d));
            total += used;
        }
        ck_assert_int_eq(total, skv_alloc_map_used(m, s, SKV_ALLOC_ALL));
    }
    for (size_t d = 0; d < skv_alloc_map_device_count(m); d++)
        ck_assert(skv_alloc_map_used(m, 0, d) == 0 ||
                  skv_alloc_map_used(m, 1, d) == 0);
}

static void random_cycles(skv_alloc_strategy st, uint64_t seed, long cycles)
{
    rng_state = seed;
    skv_alloc_map *m = random_map(st);
    skv_alloc_map *start = NULL;
    SKV_CK_OK(skv_alloc_map_dup(&start, m, NULL), NULL);
    skv_alloc_result *live[LIVE_MAX];
    size_t nlive = 0;
    skv_slots *req = NULL;
    SKV_CK_OK(skv_slots_new(&req, NULL), NULL);
    long ok = 0, refused = 0;
    for (long i = 0; i < cycles; i++) {
        if (nlive == LIVE_MAX || (nlive > 0 && rnd() % 2)) {
            size_t k = rnd() % nlive;
            give_back(m, live[k]);
            live[k] = live[--nlive];
        } else {
            skv_alloc_constraints c;
            uint64_t mask;
            int prefer[2];
            size_t subset[2];
            random_request(req, &c, &mask, prefer, subset);
            int want = skv_alloc_map_check(m, req, &c, NULL);
            skv_alloc_result *r = NULL;
            int rc = skv_alloc_map_alloc(&r, m, req, &c, NULL);
            ck_assert_msg(rc == want, "cycle %ld: alloc %s, check %s", i,
                          skv_err_name(rc), skv_err_name(want));
            if (rc == 0) {
                /* Exactly the requested amounts. */
                for (size_t s = 0; s < 3; s++)
                    ck_assert_int_eq(
                        skv_alloc_result_get(r, s, SKV_ALLOC_ALL),
                        skv_slots_get(req, skv_alloc_map_slot_name(m, s)));
                live[nlive++] = r;
                ok++;
            } else {
                ck_assert_ptr_null(r);
                refused++;
            }
        }
        if (i % 97 == 0)
            verify(m, live, nlive);
    }
    verify(m, live, nlive);
    while (nlive > 0)
        give_back(m, live[--nlive]);
    ck_assert(skv_alloc_map_equal(m, start));
    ck_assert_int_gt(ok, cycles / 10);
    ck_assert_int_gt(refused, cycles / 100);
    skv_slots_free(req);
    skv_alloc_map_free(start);
    skv_alloc_map_free(m);
}

START_TEST(test_random_fill)
{
    random_cycles(SKV_ALLOC_FILL, 0x5eed0001u, 100000);
}
END_TEST

START_TEST(test_random_evenly)
{
    random_cycles(SKV_ALLOC_EVENLY, 0x5eed0002u, 100000);
}
END_TEST

START_TEST(test_random_interleave)
{
    random_cycles(SKV_ALLOC_INTERLEAVE, 0x5eed0003u, 30000);
}
END_TEST

Suite *skv_test_suite_alloc(void);
Suite *skv_test_suite_alloc(void)
{
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("alloc");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_build_errors);
    tcase_add_test(tc, test_unique_slot);
    tcase_add_test(tc, test_fill_unequal);
    tcase_add_test(tc, test_evenly_unequal);
    tcase_add_test(tc, test_antifrag);
    tcase_add_test(tc, test_one_device);
    tcase_add_test(tc, test_exclusive_group);
    tcase_add_test(tc, test_cores_numa);
    tcase_add_test(tc, test_subset_and_constraint_errors);
    tcase_add_test(tc, test_bytes_slot);
    tcase_add_test(tc, test_queries_and_names);
    tcase_add_test(tc, test_release_rules);
    tcase_add_test(tc, test_claim);
    tcase_add_test(tc, test_result_records);
    tcase_add_test(tc, test_snapshot_roundtrip);
    tcase_add_test(tc, test_snapshot_hostile);
    tcase_add_test(tc, test_out_of_memory);
    tcase_add_test(tc, test_hot_path_allocations);
    tcase_add_test(tc, test_random_fill);
    tcase_add_test(tc, test_random_evenly);
    tcase_add_test(tc, test_random_interleave);
    suite_add_tcase(s, tc);
    return s;
}
