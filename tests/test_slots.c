/* Resource slots: quantities, registry, vectors, arithmetic, comparison,
 * dominant share, msgpack (including hostile input) and a randomized
 * property test.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "skv_slots_msgpack.h"
#include "skv_test.h"

#define GiB ((skv_qty)1 << 30)

/* ---- helpers ------------------------------------------------------------ */

static skv_slots *vec(const char *text)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *s = NULL;
    int rc = skv_slots_parse(&s, text, NULL, &e);
    ck_assert_msg(rc == 0, "parse '%s': %s", text, e.message);
    return s;
}

static void assert_text(const skv_slots *s, const char *want)
{
    char *got = NULL;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_slots_format(&got, s, &e), &e);
    ck_assert_str_eq(got, want);
    skv_free(got);
}

/* Expect `rc` to be `code` and the message to contain `part`. */
#define CK_FAILS(expr, want_, part_)                                             \
    do {                                                                       \
        skv_error ck_e_ = SKV_ERROR_INIT;                                      \
        int ck_rc_ = (expr);                                                   \
        ck_assert_msg(ck_rc_ == (want_), "%s -> %s, want %s (%s)", #expr,       \
                      skv_err_name(ck_rc_), skv_err_name(want_),              \
                      ck_e_.message);                                          \
        ck_assert_msg(strstr(ck_e_.message, (part_)) != NULL,                   \
                      "%s: message '%s' lacks '%s'", #expr, ck_e_.message,    \
                      (part_));                                                 \
        ck_assert_int_eq(ck_e_.code, (want_));                                  \
    } while (0)
/* Inside CK_FAILS, `E` is the detail object to pass. */
#define E (&ck_e_)

/* Counting allocator (tests fork, so the global is per test). */
static size_t n_alloc;
static long fail_after = -1; /* fail the N-th next allocation; -1 never */
static void *c_malloc(size_t n, void *p)
{
    (void)p;
    n_alloc++;
    if (fail_after >= 0 && fail_after-- == 0)
        return NULL;
    return malloc(n);
}
static void *c_realloc(void *q, size_t n, void *p)
{
    (void)p;
    n_alloc++;
    if (fail_after >= 0 && fail_after-- == 0)
        return NULL;
    return realloc(q, n);
}
static void c_free(void *q, void *p)
{
    (void)p;
    free(q);
}
static void use_counting_allocator(void)
{
    skv_allocator a = {SKV_ALLOCATOR_VERSION, c_malloc, c_realloc, c_free, NULL};
    ck_assert_int_eq(skv_set_allocator(&a, NULL), 0);
}

/* ---- kinds and names ------------------------------------------------------ */

START_TEST(test_kind_names)
{
    ck_assert_str_eq(skv_slot_kind_name(SKV_SLOT_COUNT), "count");
    ck_assert_str_eq(skv_slot_kind_name(SKV_SLOT_BYTES), "bytes");
    ck_assert_str_eq(skv_slot_kind_name(SKV_SLOT_UNIQUE), "unique");
    ck_assert_str_eq(skv_slot_kind_name((skv_slot_kind)0), "?");
    ck_assert_str_eq(skv_slot_kind_name((skv_slot_kind)99), "?");
}
END_TEST

START_TEST(test_name_check)
{
    static const char *good[] = {"cpu", "mem", "cuda.shares", "cuda.device",
                                 "a-b_c.d9", "x1.y-2_"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        ck_assert_msg(skv_slot_name_check(good[i], NULL) == 0, "%s", good[i]);
    char longest[SKV_SLOT_NAME_MAX];
    memset(longest, 'a', sizeof(longest) - 1);
    longest[sizeof(longest) - 1] = '\0';
    ck_assert_int_eq(skv_slot_name_check(longest, NULL), 0);
    char too_long[SKV_SLOT_NAME_MAX + 1];
    memset(too_long, 'a', sizeof(too_long) - 1);
    too_long[sizeof(too_long) - 1] = '\0';
    CK_FAILS(skv_slot_name_check(too_long, E), SKV_EINVAL, "longer than 63");
    CK_FAILS(skv_slot_name_check("", E), SKV_EINVAL, "empty slot name");
    CK_FAILS(skv_slot_name_check(NULL, E), SKV_EINVAL, "NULL");
    CK_FAILS(skv_slot_name_check("Cpu", E), SKV_EINVAL, "'Cpu': invalid character 'C' at position 0");
    CK_FAILS(skv_slot_name_check("9cpu", E), SKV_EINVAL, "'9cpu'");
    CK_FAILS(skv_slot_name_check("a.b.c", E), SKV_EINVAL, "position 3");
    CK_FAILS(skv_slot_name_check(".a", E), SKV_EINVAL, "'.a'");
    CK_FAILS(skv_slot_name_check("a.", E), SKV_EINVAL, "ends with '.'");
    CK_FAILS(skv_slot_name_check("a..b", E), SKV_EINVAL, "'a..b'");
    CK_FAILS(skv_slot_name_check("a b", E), SKV_EINVAL, "'a b'");
    CK_FAILS(skv_slot_name_check("cuda.9x", E), SKV_EINVAL, "'cuda.9x'");
    CK_FAILS(skv_slot_name_check("-a", E), SKV_EINVAL, "'-a'");
    CK_FAILS(skv_slot_name_check("a\x01", E), SKV_EINVAL, "'a?'");
}
END_TEST

/* ---- quantities ------------------------------------------------------------ */

static skv_qty qp(const char *text, skv_slot_kind kind)
{
    skv_error e = SKV_ERROR_INIT;
    skv_qty q = -1;
    int rc = skv_qty_parse(&q, text, kind, &e);
    ck_assert_msg(rc == 0, "qty '%s': %s", text, e.message);
    return q;
}

START_TEST(test_qty_parse_count)
{
    ck_assert_int_eq(qp("4", SKV_SLOT_COUNT), 4000);
    ck_assert_int_eq(qp("0", SKV_SLOT_COUNT), 0);
    ck_assert_int_eq(qp("0.5", SKV_SLOT_COUNT), 500);
    ck_assert_int_eq(qp("0.25", SKV_SLOT_COUNT), 250);
    ck_assert_int_eq(qp("0.125", SKV_SLOT_COUNT), 125);
    ck_assert_int_eq(qp("0.001", SKV_SLOT_COUNT), 1);
    ck_assert_int_eq(qp("0.5000", SKV_SLOT_COUNT), 500); /* zeros add no precision */
    ck_assert_int_eq(qp("007", SKV_SLOT_COUNT), 7000);
    ck_assert_int_eq(qp("unlimited", SKV_SLOT_COUNT), SKV_QTY_UNLIMITED);
    ck_assert_int_eq(qp("Unlimited", SKV_SLOT_COUNT), SKV_QTY_UNLIMITED);
    ck_assert_int_eq(qp("inf", SKV_SLOT_BYTES), SKV_QTY_UNLIMITED);
    ck_assert_int_eq(qp("9223372036854775.806", SKV_SLOT_COUNT), SKV_QTY_MAX);
    ck_assert_int_eq(qp("2", SKV_SLOT_UNIQUE), 2000);
    skv_qty q = 42;
    CK_FAILS(skv_qty_parse(&q, "0.0001", SKV_SLOT_COUNT, E), SKV_EINVAL,
             "'0.0001' has more decimals than the 0.001 quantum");
    CK_FAILS(skv_qty_parse(&q, "-1", SKV_SLOT_COUNT, E), SKV_EINVAL, "'-1' is negative");
    CK_FAILS(skv_qty_parse(&q, "4g", SKV_SLOT_COUNT, E), SKV_EINVAL, "'4g' has a unit");
    CK_FAILS(skv_qty_parse(&q, "", SKV_SLOT_COUNT, E), SKV_EINVAL, "empty quantity");
    CK_FAILS(skv_qty_parse(&q, ".5", SKV_SLOT_COUNT, E), SKV_EINVAL, "'.5' is not a number");
    CK_FAILS(skv_qty_parse(&q, "5.", SKV_SLOT_COUNT, E), SKV_EINVAL, "'5.'");
    CK_FAILS(skv_qty_parse(&q, "abc", SKV_SLOT_COUNT, E), SKV_EINVAL, "'abc'");
    CK_FAILS(skv_qty_parse(&q, " 4", SKV_SLOT_COUNT, E), SKV_EINVAL, "' 4'");
    CK_FAILS(skv_qty_parse(&q, "+4", SKV_SLOT_COUNT, E), SKV_EINVAL, "'+4'");
    CK_FAILS(skv_qty_parse(&q, "1e3", SKV_SLOT_COUNT, E), SKV_EINVAL, "'1e3'");
    CK_FAILS(skv_qty_parse(&q, "9223372036854775.807", SKV_SLOT_COUNT, E),
             SKV_ERANGE, "too large");
    CK_FAILS(skv_qty_parse(&q, "99999999999999999999999", SKV_SLOT_COUNT, E),
             SKV_ERANGE, "too large");
    CK_FAILS(skv_qty_parse(&q, "0.5", SKV_SLOT_UNIQUE, E), SKV_EINVAL, "not a whole number");
    CK_FAILS(skv_qty_parse(&q, "1", (skv_slot_kind)7, E), SKV_EINVAL, "invalid slot kind 7");
    CK_FAILS(skv_qty_parse(&q, NULL, SKV_SLOT_COUNT, E), SKV_EINVAL, "text is NULL");
    CK_FAILS(skv_qty_parse(NULL, "1", SKV_SLOT_COUNT, E), SKV_EINVAL, "out is NULL");
    ck_assert_int_eq(q, 42); /* untouched by every failure */
}
END_TEST

START_TEST(test_qty_parse_bytes)
{
    ck_assert_int_eq(qp("1024", SKV_SLOT_BYTES), 1024);
    ck_assert_int_eq(qp("16g", SKV_SLOT_BYTES), 16 * GiB);
    ck_assert_int_eq(qp("16G", SKV_SLOT_BYTES), 16 * GiB);
    ck_assert_int_eq(qp("16GiB", SKV_SLOT_BYTES), 16 * GiB);
    ck_assert_int_eq(qp("16gb", SKV_SLOT_BYTES), 16 * GiB);
    ck_assert_int_eq(qp("16gi", SKV_SLOT_BYTES), 16 * GiB);
    ck_assert_int_eq(qp("512MiB", SKV_SLOT_BYTES), 512 << 20);
    ck_assert_int_eq(qp("1.5T", SKV_SLOT_BYTES), 1536 * GiB);
    ck_assert_int_eq(qp("1.5tb", SKV_SLOT_BYTES), 1536 * GiB);
    ck_assert_int_eq(qp("0.5k", SKV_SLOT_BYTES), 512);
    ck_assert_int_eq(qp("0.25K", SKV_SLOT_BYTES), 256);
    ck_assert_int_eq(qp("1b", SKV_SLOT_BYTES), 1);
    ck_assert_int_eq(qp("2p", SKV_SLOT_BYTES), (skv_qty)2 << 50);
    ck_assert_int_eq(qp("7e", SKV_SLOT_BYTES), (skv_qty)7 << 60);
    ck_assert_int_eq(qp("0", SKV_SLOT_BYTES), 0);
    skv_qty q = 42;
    CK_FAILS(skv_qty_parse(&q, "1.5", SKV_SLOT_BYTES, E), SKV_EINVAL,
             "'1.5' is not a whole number of bytes");
    CK_FAILS(skv_qty_parse(&q, "1.1k", SKV_SLOT_BYTES, E), SKV_EINVAL, "whole number of bytes");
    CK_FAILS(skv_qty_parse(&q, "0.00000000000000000001e", SKV_SLOT_BYTES, E),
             SKV_EINVAL, "whole number of bytes");
    CK_FAILS(skv_qty_parse(&q, "16x", SKV_SLOT_BYTES, E), SKV_EINVAL, "'16x' has an unknown unit");
    CK_FAILS(skv_qty_parse(&q, "16ib", SKV_SLOT_BYTES, E), SKV_EINVAL, "unknown unit");
    CK_FAILS(skv_qty_parse(&q, "16kk", SKV_SLOT_BYTES, E), SKV_EINVAL, "unknown unit");
    CK_FAILS(skv_qty_parse(&q, "16 g", SKV_SLOT_BYTES, E), SKV_EINVAL, "unknown unit");
    CK_FAILS(skv_qty_parse(&q, "-5g", SKV_SLOT_BYTES, E), SKV_EINVAL, "negative");
    CK_FAILS(skv_qty_parse(&q, "8e", SKV_SLOT_BYTES, E), SKV_ERANGE, "'8e' is too large");
    CK_FAILS(skv_qty_parse(&q, "16e", SKV_SLOT_BYTES, E), SKV_ERANGE, "too large");
    CK_FAILS(skv_qty_parse(&q, "7.99999999999999999e", SKV_SLOT_BYTES, E),
             SKV_EINVAL, "whole number of bytes");
    CK_FAILS(skv_qty_parse(&q, "99999999999999999999", SKV_SLOT_BYTES, E),
             SKV_ERANGE, "too large");
    ck_assert_int_eq(q, 42);
}
END_TEST

static void assert_fmt(skv_qty q, skv_slot_kind kind, const char *want)
{
    char buf[SKV_QTY_FORMAT_MAX];
    int n = skv_qty_format(buf, sizeof(buf), q, kind);
    ck_assert_int_eq(n, (int)strlen(want));
    ck_assert_str_eq(buf, want);
    ck_assert_int_eq(qp(buf, kind), q); /* formatting round-trips */
}

START_TEST(test_qty_format)
{
    assert_fmt(4000, SKV_SLOT_COUNT, "4");
    assert_fmt(500, SKV_SLOT_COUNT, "0.5");
    assert_fmt(125, SKV_SLOT_COUNT, "0.125");
    assert_fmt(1, SKV_SLOT_COUNT, "0.001");
    assert_fmt(1010, SKV_SLOT_COUNT, "1.01");
    assert_fmt(0, SKV_SLOT_COUNT, "0");
    assert_fmt(3000, SKV_SLOT_UNIQUE, "3");
    assert_fmt(SKV_QTY_MAX, SKV_SLOT_COUNT, "9223372036854775.806");
    assert_fmt(16 * GiB, SKV_SLOT_BYTES, "16g");
    assert_fmt((skv_qty)1536 << 20, SKV_SLOT_BYTES, "1536m");
    assert_fmt(1000, SKV_SLOT_BYTES, "1000");
    assert_fmt(1024, SKV_SLOT_BYTES, "1k");
    assert_fmt(0, SKV_SLOT_BYTES, "0");
    assert_fmt((skv_qty)1 << 60, SKV_SLOT_BYTES, "1e");
    assert_fmt(SKV_QTY_MAX, SKV_SLOT_BYTES, "9223372036854775806");
    assert_fmt(SKV_QTY_UNLIMITED, SKV_SLOT_BYTES, "unlimited");
    assert_fmt(SKV_QTY_UNLIMITED, SKV_SLOT_COUNT, "unlimited");
    char buf[SKV_QTY_FORMAT_MAX];
    ck_assert_int_eq(skv_qty_format(buf, 3, 4500, SKV_SLOT_COUNT), SKV_ERANGE);
    ck_assert_int_eq(skv_qty_format(buf, 4, 4500, SKV_SLOT_COUNT), 3);
    ck_assert_int_eq(skv_qty_format(buf, 0, 1, SKV_SLOT_COUNT), SKV_ERANGE);
    ck_assert_int_eq(skv_qty_format(buf, sizeof(buf), -1, SKV_SLOT_COUNT), SKV_EINVAL);
    ck_assert_int_eq(skv_qty_format(buf, sizeof(buf), 1, (skv_slot_kind)0), SKV_EINVAL);
    ck_assert_int_eq(skv_qty_format(NULL, 8, 1, SKV_SLOT_COUNT), SKV_EINVAL);
}
END_TEST

/* ---- registry ---------------------------------------------------------- */

START_TEST(test_registry)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slot_registry *r = NULL;
    SKV_CK_OK(skv_slot_registry_new_default(&r, &e), &e);
    ck_assert_uint_eq(skv_slot_registry_count(r), 4);
    static const char *order[] = {"cpu", "cuda.device", "cuda.shares", "mem"};
    static const char *units[] = {"core", "GPU", "fGPU", "B"};
    for (size_t i = 0; i < 4; i++) {
        const char *name, *unit;
        skv_slot_kind kind;
        SKV_CK_OK(skv_slot_registry_at(r, i, &name, &kind, &unit), NULL);
        ck_assert_str_eq(name, order[i]);
        ck_assert_str_eq(unit, units[i]);
        ck_assert_int_eq(kind, i == 3 ? SKV_SLOT_BYTES : SKV_SLOT_COUNT);
    }
    ck_assert_int_eq(skv_slot_registry_at(r, 4, NULL, NULL, NULL), SKV_ERANGE);
    ck_assert_int_eq(skv_slot_registry_at(NULL, 0, NULL, NULL, NULL), SKV_ERANGE);
    const char *unit = NULL;
    skv_slot_kind kind = 0;
    SKV_CK_OK(skv_slot_registry_lookup(r, "mem", &kind, &unit), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_BYTES);
    ck_assert_str_eq(unit, "B");
    SKV_CK_OK(skv_slot_registry_lookup(r, "cpu", NULL, NULL), NULL);
    ck_assert_int_eq(skv_slot_registry_lookup(r, "tpu", &kind, &unit), SKV_ENOENT);
    ck_assert_int_eq(kind, SKV_SLOT_BYTES); /* untouched */
    ck_assert_int_eq(skv_slot_registry_lookup(NULL, "cpu", NULL, NULL), SKV_EINVAL);
    ck_assert_int_eq(skv_slot_registry_lookup(r, NULL, NULL, NULL), SKV_EINVAL);
    /* Re-registering identically is a no-op; differently is EEXIST. */
    SKV_CK_OK(skv_slot_registry_add(r, "cpu", SKV_SLOT_COUNT, "core", &e), &e);
    ck_assert_uint_eq(skv_slot_registry_count(r), 4);
    CK_FAILS(skv_slot_registry_add(r, "cpu", SKV_SLOT_BYTES, "core", E), SKV_EEXIST,
             "slot type 'cpu' is already registered as count 'core'");
    CK_FAILS(skv_slot_registry_add(r, "cpu", SKV_SLOT_COUNT, "cores", E), SKV_EEXIST, "'cpu'");
    CK_FAILS(skv_slot_registry_add(r, "Tpu", SKV_SLOT_COUNT, NULL, E), SKV_EINVAL, "'Tpu'");
    CK_FAILS(skv_slot_registry_add(r, "tpu", (skv_slot_kind)9, NULL, E), SKV_EINVAL,
             "slot type 'tpu': invalid kind 9");
    CK_FAILS(skv_slot_registry_add(r, "tpu", SKV_SLOT_COUNT, "a-very-long-unit-name-that-goes-on", E),
             SKV_EINVAL, "slot type 'tpu': unit");
    CK_FAILS(skv_slot_registry_add(r, "tpu", SKV_SLOT_COUNT, "a\nb", E), SKV_EINVAL,
             "control character");
    CK_FAILS(skv_slot_registry_add(NULL, "tpu", SKV_SLOT_COUNT, NULL, E), SKV_EINVAL, "reg is NULL");
    ck_assert_uint_eq(skv_slot_registry_count(r), 4);
    skv_slot_registry_free(r);
}
END_TEST

START_TEST(test_registry_grow)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slot_registry *r = NULL;
    const char *unit = NULL;
    skv_slot_kind kind = 0;
    SKV_CK_OK(skv_slot_registry_new_default(&r, &e), &e);
    /* Unit strings stay put while the registry grows. */
    const char *cpu_unit = NULL;
    SKV_CK_OK(skv_slot_registry_lookup(r, "cpu", NULL, &cpu_unit), NULL);
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "vendor.k%02d", i);
        SKV_CK_OK(skv_slot_registry_add(r, name, SKV_SLOT_UNIQUE, NULL, &e), &e);
    }
    ck_assert_str_eq(cpu_unit, "core");
    SKV_CK_OK(skv_slot_registry_lookup(r, "vendor.k07", &kind, &unit), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_UNIQUE);
    ck_assert_str_eq(unit, "");
    ck_assert_uint_eq(skv_slot_registry_count(r), 44);
    ck_assert_uint_eq(skv_slot_registry_count(NULL), 0);
    skv_slot_registry_free(r);
    skv_slot_registry_free(NULL);
    CK_FAILS(skv_slot_registry_new(NULL, E), SKV_EINVAL, "out is NULL");
}
END_TEST

/* ---- vectors ------------------------------------------------------------- */

START_TEST(test_vector_entries)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *s = NULL;
    SKV_CK_OK(skv_slots_new(&s, &e), &e);
    ck_assert_uint_eq(skv_slots_count(s), 0);
    SKV_CK_OK(skv_slots_set(s, "mem", SKV_SLOT_BYTES, 16 * GiB, &e), &e);
    SKV_CK_OK(skv_slots_set(s, "cpu", SKV_SLOT_COUNT, 4000, &e), &e);
    SKV_CK_OK(skv_slots_set(s, "tpu.device", SKV_SLOT_UNIQUE, 2000, &e), &e);
    SKV_CK_OK(skv_slots_set(s, "cuda.shares", SKV_SLOT_COUNT, SKV_QTY_UNLIMITED, &e), &e);
    SKV_CK_OK(skv_slots_set(s, "cpu", SKV_SLOT_COUNT, 8000, &e), &e); /* replace */
    ck_assert_uint_eq(skv_slots_count(s), 4);
    static const char *order[] = {"cpu", "cuda.shares", "mem", "tpu.device"};
    for (size_t i = 0; i < 4; i++) {
        const char *name;
        SKV_CK_OK(skv_slots_at(s, i, &name, NULL, NULL), NULL);
        ck_assert_str_eq(name, order[i]);
    }
    ck_assert_int_eq(skv_slots_at(s, 4, NULL, NULL, NULL), SKV_ERANGE);
    ck_assert_int_eq(skv_slots_get(s, "cpu"), 8000);
    ck_assert_int_eq(skv_slots_get(s, "nothing"), 0);
    ck_assert_int_eq(skv_slots_get(NULL, "cpu"), 0);
    ck_assert_int_eq(skv_slots_get(s, NULL), 0);
    skv_slot_kind kind = 0;
    skv_qty q = -5;
    SKV_CK_OK(skv_slots_lookup(s, "mem", &kind, &q), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_BYTES);
    ck_assert_int_eq(q, 16 * GiB);
    ck_assert_int_eq(skv_slots_lookup(s, "gpu", &kind, &q), SKV_ENOENT);
    ck_assert_int_eq(q, 16 * GiB);
    ck_assert_int_eq(skv_slots_lookup(s, NULL, NULL, NULL), SKV_EINVAL);
    /* Bad input leaves the vector as it was. */
    CK_FAILS(skv_slots_set(s, "Bad", SKV_SLOT_COUNT, 1, E), SKV_EINVAL, "'Bad'");
    CK_FAILS(skv_slots_set(s, "x", SKV_SLOT_COUNT, -1, E), SKV_EINVAL,
             "slot 'x': negative quantity -1");
    CK_FAILS(skv_slots_set(s, "tpu.device", SKV_SLOT_UNIQUE, 1500, E), SKV_EINVAL,
             "slot 'tpu.device': unique quantity 1500");
    CK_FAILS(skv_slots_set(s, "cpu", SKV_SLOT_BYTES, 1, E), SKV_EINVAL,
             "slot 'cpu' is a count slot, not bytes");
    CK_FAILS(skv_slots_set(s, "x", (skv_slot_kind)0, 1, E), SKV_EINVAL, "invalid kind 0");
    CK_FAILS(skv_slots_set(NULL, "x", SKV_SLOT_COUNT, 1, E), SKV_EINVAL, "slots is NULL");
    CK_FAILS(skv_slots_set(s, NULL, SKV_SLOT_COUNT, 1, E), SKV_EINVAL, "NULL");
    assert_text(s, "cpu=8,cuda.shares=unlimited,mem=16g,tpu.device=2");
    skv_slots_remove(s, "cuda.shares");
    skv_slots_remove(s, "absent");
    skv_slots_remove(NULL, "cpu");
    skv_slots_remove(s, NULL);
    assert_text(s, "cpu=8,mem=16g,tpu.device=2");
    skv_slots_clear(s);
    skv_slots_clear(NULL);
    ck_assert_uint_eq(skv_slots_count(s), 0);
    ck_assert_uint_eq(skv_slots_count(NULL), 0);
    skv_slots_free(s);
    skv_slots_free(NULL);
    CK_FAILS(skv_slots_new(NULL, E), SKV_EINVAL, "out is NULL");
}
END_TEST

START_TEST(test_vector_copy_dup)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *a = vec("cpu=4,mem=1g"), *b = vec("cuda.shares=0.5"), *c = NULL;
    SKV_CK_OK(skv_slots_copy(b, a, &e), &e);
    assert_text(b, "cpu=4,mem=1g");
    SKV_CK_OK(skv_slots_copy(b, b, &e), &e);
    SKV_CK_OK(skv_slots_dup(&c, a, &e), &e);
    ck_assert(skv_slots_eq(c, a));
    SKV_CK_OK(skv_slots_set(c, "cpu", SKV_SLOT_COUNT, 1, &e), &e);
    ck_assert_int_eq(skv_slots_get(a, "cpu"), 4000); /* deep copy */
    CK_FAILS(skv_slots_copy(NULL, a, E), SKV_EINVAL, "dst is NULL");
    CK_FAILS(skv_slots_copy(a, NULL, E), SKV_EINVAL, "src is NULL");
    CK_FAILS(skv_slots_dup(NULL, a, E), SKV_EINVAL, "out is NULL");
    CK_FAILS(skv_slots_dup(&c, NULL, E), SKV_EINVAL, "src is NULL");
    skv_slots_free(a);
    skv_slots_free(b);
    skv_slots_free(c);
}
END_TEST

START_TEST(test_vector_parse)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *s = vec("cpu=4,mem=16g,cuda.shares=0.5");
    skv_slot_kind kind;
    SKV_CK_OK(skv_slots_lookup(s, "mem", &kind, NULL), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_BYTES);
    SKV_CK_OK(skv_slots_lookup(s, "cuda.shares", &kind, NULL), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_COUNT);
    assert_text(s, "cpu=4,cuda.shares=0.5,mem=16g");
    skv_slots_free(s);
    s = vec("  cpu = 0.5 ,\tcuda.mem=512MiB , x = unlimited ");
    assert_text(s, "cpu=0.5,cuda.mem=512m,x=unlimited");
    skv_slots_free(s);
    s = vec("");
    ck_assert_uint_eq(skv_slots_count(s), 0);
    skv_slots_free(s);
    s = vec("   ");
    ck_assert_uint_eq(skv_slots_count(s), 0);
    skv_slots_free(s);
    /* A registry decides kinds and refuses unknown names. */
    skv_slot_registry *r = NULL;
    SKV_CK_OK(skv_slot_registry_new_default(&r, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(r, "tpu.device", SKV_SLOT_UNIQUE, NULL, &e), &e);
    SKV_CK_OK(skv_slots_parse(&s, "cpu=2,mem=1.5t,tpu.device=1", r, &e), &e);
    SKV_CK_OK(skv_slots_lookup(s, "tpu.device", &kind, NULL), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_UNIQUE);
    assert_text(s, "cpu=2,mem=1536g,tpu.device=1");
    skv_slots *keep = s;
    CK_FAILS(skv_slots_parse(&s, "cpu=2,foo=1", r, E), SKV_EINVAL, "unknown slot 'foo'");
    CK_FAILS(skv_slots_parse(&s, "tpu.device=0.5", r, E), SKV_EINVAL,
             "slot 'tpu.device': '0.5' is not a whole number");
    ck_assert_ptr_eq(s, keep); /* out untouched on failure */
    skv_slots_free(s);
    skv_slot_registry_free(r);
}
END_TEST

START_TEST(test_vector_parse_errors)
{
    skv_slots *s = NULL;
    CK_FAILS(skv_slots_parse(&s, "cpu=0.0001", NULL, E), SKV_EINVAL,
             "slot 'cpu': '0.0001' has more decimals than the 0.001 quantum");
    CK_FAILS(skv_slots_parse(&s, "cpu=4,cpu=2", NULL, E), SKV_EINVAL, "duplicate slot 'cpu'");
    CK_FAILS(skv_slots_parse(&s, "cpu=4, cpu =2", NULL, E), SKV_EINVAL, "duplicate slot 'cpu'");
    CK_FAILS(skv_slots_parse(&s, "=4", NULL, E), SKV_EINVAL, "entry '=4': empty slot name");
    CK_FAILS(skv_slots_parse(&s, "cpu=", NULL, E), SKV_EINVAL, "slot 'cpu': empty quantity");
    CK_FAILS(skv_slots_parse(&s, "cpu= ", NULL, E), SKV_EINVAL, "slot 'cpu': empty quantity");
    CK_FAILS(skv_slots_parse(&s, "cpu", NULL, E), SKV_EINVAL, "entry 'cpu' has no '='");
    CK_FAILS(skv_slots_parse(&s, "cpu=4,,mem=1g", NULL, E), SKV_EINVAL, "entry 2 is empty");
    CK_FAILS(skv_slots_parse(&s, "cpu=4,", NULL, E), SKV_EINVAL, "entry 2 is empty");
    CK_FAILS(skv_slots_parse(&s, ",cpu=4", NULL, E), SKV_EINVAL, "entry 1 is empty");
    CK_FAILS(skv_slots_parse(&s, "Cpu=4", NULL, E), SKV_EINVAL, "slot name 'Cpu'");
    CK_FAILS(skv_slots_parse(&s, "cpu=-1", NULL, E), SKV_EINVAL, "slot 'cpu': '-1' is negative");
    CK_FAILS(skv_slots_parse(&s, "mem=1.5", NULL, E), SKV_EINVAL,
             "slot 'mem': '1.5' is not a whole number of bytes");
    CK_FAILS(skv_slots_parse(&s, "mem=16q", NULL, E), SKV_EINVAL, "slot 'mem': '16q' has an unknown unit");
    CK_FAILS(skv_slots_parse(&s, "cpu=4g", NULL, E), SKV_EINVAL, "slot 'cpu': '4g' has a unit");
    CK_FAILS(skv_slots_parse(&s, "cpu=1=2", NULL, E), SKV_EINVAL, "slot 'cpu': '1=2'");
    CK_FAILS(skv_slots_parse(&s, "mem=9e", NULL, E), SKV_ERANGE, "slot 'mem': '9e' is too large");
    CK_FAILS(skv_slots_parse(&s, NULL, NULL, E), SKV_EINVAL, "text is NULL");
    CK_FAILS(skv_slots_parse(NULL, "cpu=1", NULL, E), SKV_EINVAL, "out is NULL");
    ck_assert_ptr_null(s);
}
END_TEST

START_TEST(test_vector_format)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *s = NULL;
    SKV_CK_OK(skv_slots_new(&s, &e), &e);
    assert_text(s, "");
    SKV_CK_OK(skv_slots_set(s, "mem", SKV_SLOT_BYTES, 1536 * GiB + 1, &e), &e);
    SKV_CK_OK(skv_slots_set(s, "cpu", SKV_SLOT_COUNT, 1, &e), &e);
    assert_text(s, "cpu=0.001,mem=1649267441665");
    char *text = NULL;
    CK_FAILS(skv_slots_format(NULL, s, E), SKV_EINVAL, "out is NULL");
    CK_FAILS(skv_slots_format(&text, NULL, E), SKV_EINVAL, "slots is NULL");
    ck_assert_ptr_null(text);
    skv_slots_free(s);
}
END_TEST

/* ---- arithmetic --------------------------------------------------------- */

START_TEST(test_add)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *a = vec("cpu=4,mem=8g"), *b = vec("cpu=0.5,cuda.shares=0.25,mem=8g");
    SKV_CK_OK(skv_slots_add(a, b, &e), &e);
    assert_text(a, "cpu=4.5,cuda.shares=0.25,mem=16g");
    SKV_CK_OK(skv_slots_add(a, a, &e), &e); /* aliasing is fine */
    assert_text(a, "cpu=9,cuda.shares=0.5,mem=32g");
    skv_slots *u = vec("aa=1,cpu=unlimited,zz=2");
    SKV_CK_OK(skv_slots_add(a, u, &e), &e); /* new keys at both ends */
    assert_text(a, "aa=1,cpu=unlimited,cuda.shares=0.5,mem=32g,zz=2");
    /* Failures leave dst as it was. */
    skv_slots *bad = vec("aa=1,mem=1");
    SKV_CK_OK(skv_slots_set(bad, "new", SKV_SLOT_COUNT, 1000, &e), &e);
    skv_slots_remove(bad, "mem");
    SKV_CK_OK(skv_slots_set(bad, "mem", SKV_SLOT_COUNT, 1000, &e), &e);
    CK_FAILS(skv_slots_add(a, bad, E), SKV_EINVAL,
             "slot 'mem': cannot combine a bytes slot with a count slot");
    skv_slots *big = NULL;
    SKV_CK_OK(skv_slots_new(&big, &e), &e);
    SKV_CK_OK(skv_slots_set(big, "aa", SKV_SLOT_COUNT, 5, &e), &e);
    SKV_CK_OK(skv_slots_set(big, "zz", SKV_SLOT_COUNT, SKV_QTY_MAX, &e), &e);
    CK_FAILS(skv_slots_add(a, big, E), SKV_ERANGE, "slot 'zz': 2 + 9223372036854775.806 overflows");
    assert_text(a, "aa=1,cpu=unlimited,cuda.shares=0.5,mem=32g,zz=2");
    CK_FAILS(skv_slots_add(NULL, a, E), SKV_EINVAL, "dst is NULL");
    CK_FAILS(skv_slots_add(a, NULL, E), SKV_EINVAL, "src is NULL");
    skv_slots_free(a);
    skv_slots_free(b);
    skv_slots_free(u);
    skv_slots_free(bad);
    skv_slots_free(big);
}
END_TEST

START_TEST(test_sub)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *a = vec("cpu=4,mem=16g,x=unlimited"), *b = vec("cpu=4,mem=4g");
    SKV_CK_OK(skv_slots_sub(a, b, 0, &e), &e);
    assert_text(a, "cpu=0,mem=12g,x=unlimited"); /* zero entries stay */
    CK_FAILS(skv_slots_sub(a, b, 0, E), SKV_ERANGE, "slot 'cpu': 0 - 4 goes below zero");
    assert_text(a, "cpu=0,mem=12g,x=unlimited");
    SKV_CK_OK(skv_slots_sub(a, b, SKV_SLOTS_CLAMP, &e), &e);
    assert_text(a, "cpu=0,mem=8g,x=unlimited");
    skv_slots *c = vec("gpu=1,x=unlimited");
    CK_FAILS(skv_slots_sub(a, c, 0, E), SKV_ERANGE, "slot 'gpu': 0 - 1 goes below zero");
    SKV_CK_OK(skv_slots_sub(a, c, SKV_SLOTS_CLAMP, &e), &e); /* missing key -> 0 */
    assert_text(a, "cpu=0,gpu=0,mem=8g,x=unlimited");
    skv_slots *d = vec("mem=unlimited");
    CK_FAILS(skv_slots_sub(a, d, 0, E), SKV_ERANGE, "slot 'mem': 8g - unlimited goes below zero");
    SKV_CK_OK(skv_slots_sub(a, d, SKV_SLOTS_CLAMP, &e), &e);
    assert_text(a, "cpu=0,gpu=0,mem=0,x=unlimited");
    skv_slots *z = vec("new=0");
    SKV_CK_OK(skv_slots_sub(a, z, 0, &e), &e);
    assert_text(a, "cpu=0,gpu=0,mem=0,new=0,x=unlimited");
    CK_FAILS(skv_slots_sub(a, b, 0x10, E), SKV_EINVAL, "unknown flags 0x10");
    CK_FAILS(skv_slots_sub(NULL, b, 0, E), SKV_EINVAL, "dst is NULL");
    skv_slots *k = vec("cpu=1");
    SKV_CK_OK(skv_slots_set(k, "mem", SKV_SLOT_COUNT, 0, &e), &e);
    CK_FAILS(skv_slots_sub(a, k, SKV_SLOTS_CLAMP, E), SKV_EINVAL, "cannot combine");
    skv_slots_free(a);
    skv_slots_free(b);
    skv_slots_free(c);
    skv_slots_free(d);
    skv_slots_free(z);
    skv_slots_free(k);
}
END_TEST

START_TEST(test_min_max)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *a = vec("cpu=4,mem=16g,x=unlimited"), *b = vec("cpu=2,gpu=1,x=3");
    skv_slots *m = NULL;
    SKV_CK_OK(skv_slots_dup(&m, a, &e), &e);
    SKV_CK_OK(skv_slots_min(m, b, &e), &e);
    assert_text(m, "cpu=2,gpu=0,mem=0,x=3");
    SKV_CK_OK(skv_slots_copy(m, a, &e), &e);
    SKV_CK_OK(skv_slots_max(m, b, &e), &e);
    assert_text(m, "cpu=4,gpu=1,mem=16g,x=unlimited");
    SKV_CK_OK(skv_slots_min(m, m, &e), &e);
    assert_text(m, "cpu=4,gpu=1,mem=16g,x=unlimited");
    skv_slots *k = vec("cpu=1");
    SKV_CK_OK(skv_slots_set(k, "mem", SKV_SLOT_COUNT, 0, &e), &e);
    CK_FAILS(skv_slots_min(m, k, E), SKV_EINVAL, "slot 'mem'");
    CK_FAILS(skv_slots_max(m, k, E), SKV_EINVAL, "slot 'mem'");
    assert_text(m, "cpu=4,gpu=1,mem=16g,x=unlimited");
    CK_FAILS(skv_slots_min(NULL, k, E), SKV_EINVAL, "skv_slots_min: dst is NULL");
    CK_FAILS(skv_slots_max(m, NULL, E), SKV_EINVAL, "skv_slots_max: src is NULL");
    skv_slots_free(a);
    skv_slots_free(b);
    skv_slots_free(m);
    skv_slots_free(k);
}
END_TEST

START_TEST(test_scale)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *a = vec("cpu=0.5,mem=1g,x=unlimited");
    SKV_CK_OK(skv_slots_scale(a, 3, &e), &e);
    assert_text(a, "cpu=1.5,mem=3g,x=unlimited");
    skv_slots *big = vec("cpu=1,mem=4e");
    CK_FAILS(skv_slots_scale(big, 2, E), SKV_ERANGE, "slot 'mem': 4e * 2 overflows");
    assert_text(big, "cpu=1,mem=4e");
    CK_FAILS(skv_slots_scale(a, -1, E), SKV_EINVAL, "negative factor -1");
    CK_FAILS(skv_slots_scale(NULL, 1, E), SKV_EINVAL, "dst is NULL");
    SKV_CK_OK(skv_slots_scale(a, 0, &e), &e);
    assert_text(a, "cpu=0,mem=0,x=0");
    skv_slots_free(a);
    skv_slots_free(big);
}
END_TEST

/* Allocation behaviour the scheduler relies on, and ENOMEM atomicity. */
START_TEST(test_no_alloc_hot_path)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *cap = vec("cpu=64,cuda.shares=8,mem=512g");
    skv_slots *req = vec("cpu=4,mem=16g");
    use_counting_allocator();
    n_alloc = 0;
    for (int i = 0; i < 10; i++) {
        ck_assert(skv_slots_fits(req, cap));
        ck_assert(!skv_slots_eq(req, cap));
        ck_assert_int_eq(skv_slots_get(cap, "cpu"), 64000);
        SKV_CK_OK(skv_slots_sub(cap, req, 0, &e), &e);
        SKV_CK_OK(skv_slots_add(cap, req, &e), &e);
        SKV_CK_OK(skv_slots_min(cap, cap, &e), &e);
    }
    ck_assert_uint_eq(n_alloc, 0);
    /* A growth that fails leaves dst exactly as it was. */
    skv_slots *more = vec("aa=1,cpu=1,xx=1,zz=1"); /* outgrows 4 entries */
    fail_after = 0;
    CK_FAILS(skv_slots_add(req, more, E), SKV_ENOMEM, "out of memory");
    assert_text(req, "cpu=4,mem=16g");
    fail_after = -1;
    SKV_CK_OK(skv_slots_add(req, more, &e), &e);
    assert_text(req, "aa=1,cpu=5,mem=16g,xx=1,zz=1");
    skv_slots_free(cap);
    skv_slots_free(req);
    skv_slots_free(more);
    skv_set_allocator(NULL, NULL);
}
END_TEST

/* Every allocating entry point, with the N-th allocation failing: either it
 * succeeds or it returns SKV_ENOMEM and leaves nothing behind (ASan's leak
 * check runs when the forked test exits). */
START_TEST(test_enomem_everywhere)
{
    skv_slots *src = vec("a=1,b.mem=2k,cpu=4,mem=16g,zz=unlimited");
    void *enc = NULL;
    size_t enc_len = 0;
    ck_assert_int_eq(skv_slots_encode(&enc, &enc_len, src, NULL), 0);
    use_counting_allocator();
    int failures = 0;
    for (long k = 0; k < 12; k++) {
        skv_slots *v = NULL;
        skv_slot_registry *r = NULL;
        char *text = NULL;
        int rc[5];
        fail_after = k;
        rc[0] = skv_slots_parse(&v, "cpu=4,mem=1g,a=1,b=2,c=3,d=4", NULL, NULL);
        skv_slots_free(v);
        fail_after = k;
        rc[1] = skv_slots_dup(&v, src, NULL);
        skv_slots_free(v);
        fail_after = k;
        rc[2] = skv_slot_registry_new_default(&r, NULL);
        skv_slot_registry_free(r);
        fail_after = k;
        rc[3] = skv_slots_decode(&v, enc, enc_len, NULL, NULL);
        skv_slots_free(v);
        fail_after = k;
        rc[4] = skv_slots_format(&text, src, NULL);
        skv_free(text);
        for (int i = 0; i < 5; i++) {
            ck_assert_msg(rc[i] == 0 || rc[i] == SKV_ENOMEM, "call %d, fail %ld: %s",
                          i, k, skv_err_name(rc[i]));
            failures += rc[i] != 0;
        }
    }
    fail_after = -1;
    ck_assert_int_gt(failures, 5);
    skv_set_allocator(NULL, NULL);
    skv_free(enc);
    skv_slots_free(src);
}
END_TEST

/* ---- comparison ---------------------------------------------------------- */

START_TEST(test_compare)
{
    skv_slots *req = vec("cpu=4,gpu=0,mem=16g");
    skv_slots *cap = vec("cpu=8,cuda.shares=1,mem=16g");
    skv_slots *small = vec("cpu=2,mem=32g");
    skv_slots *unl = vec("cpu=unlimited,mem=unlimited");
    ck_assert(skv_slots_fits(req, cap));   /* gpu=0 needs nothing */
    ck_assert(skv_slots_le(req, cap));
    ck_assert(!skv_slots_fits(cap, req)); /* cuda.shares missing in req */
    ck_assert(!skv_slots_fits(req, small));
    ck_assert(skv_slots_fits(req, unl));
    ck_assert(!skv_slots_fits(unl, cap));
    ck_assert(skv_slots_fits(unl, unl));
    ck_assert(skv_slots_fits(NULL, cap));
    ck_assert(!skv_slots_fits(req, NULL));
    skv_slots *same = vec("mem=16g,cpu=4"), *zeros = vec("a=0,b=0");
    skv_slots *one = vec("zz=1");
    ck_assert(skv_slots_eq(req, same)); /* missing = 0 */
    ck_assert(skv_slots_eq(same, req));
    ck_assert(!skv_slots_eq(req, cap));
    ck_assert(!skv_slots_eq(cap, req));
    ck_assert(skv_slots_eq(NULL, zeros));
    ck_assert(!skv_slots_eq(one, NULL));
    ck_assert(!skv_slots_eq(one, zeros));
    ck_assert(skv_slots_is_zero(zeros));
    ck_assert(skv_slots_is_zero(NULL));
    ck_assert(!skv_slots_is_zero(req));
    const char *name = NULL;
    skv_qty shortfall = -1;
    ck_assert_int_eq(skv_slots_first_short(req, small, &name, &shortfall), 1);
    ck_assert_str_eq(name, "cpu");
    ck_assert_int_eq(shortfall, 2000);
    ck_assert_int_eq(skv_slots_first_short(small, req, &name, &shortfall), 1);
    ck_assert_str_eq(name, "mem");
    ck_assert_int_eq(shortfall, 16 * GiB);
    ck_assert_int_eq(skv_slots_first_short(cap, req, &name, &shortfall), 1);
    ck_assert_str_eq(name, "cpu");
    ck_assert_int_eq(skv_slots_first_short(one, req, &name, &shortfall), 1);
    ck_assert_str_eq(name, "zz");
    ck_assert_int_eq(shortfall, 1000);
    ck_assert_int_eq(skv_slots_first_short(unl, cap, &name, &shortfall), 1);
    ck_assert_int_eq(shortfall, SKV_QTY_UNLIMITED);
    name = "untouched";
    ck_assert_int_eq(skv_slots_first_short(req, cap, &name, NULL), 0);
    ck_assert_str_eq(name, "untouched");
    ck_assert_int_eq(skv_slots_first_short(req, small, NULL, NULL), 1);
    skv_slots_free(same);
    skv_slots_free(zeros);
    skv_slots_free(one);
    skv_slots_free(req);
    skv_slots_free(cap);
    skv_slots_free(small);
    skv_slots_free(unl);
}
END_TEST

START_TEST(test_dominant_share)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *cap = vec("cpu=8,cuda.shares=1,mem=16g,x=unlimited");
    skv_slots *v = vec("cpu=2,mem=4g");
    double share = -1;
    const char *slot = NULL;
    SKV_CK_OK(skv_slots_dominant_share(&share, &slot, v, cap, &e), &e);
    ck_assert(share == 0.25);
    ck_assert_str_eq(slot, "cpu"); /* tie: first name wins */
    skv_slots_free(v);
    v = vec("cpu=2,cuda.shares=0.5,mem=4g,x=1000");
    SKV_CK_OK(skv_slots_dominant_share(&share, &slot, v, cap, &e), &e);
    ck_assert(share == 0.5);
    ck_assert_str_eq(slot, "cuda.shares");
    skv_slots_free(v);
    v = vec("cpu=1,gpu=1");
    SKV_CK_OK(skv_slots_dominant_share(&share, &slot, v, cap, &e), &e);
    ck_assert(isinf(share) && share > 0);
    ck_assert_str_eq(slot, "gpu");
    skv_slots_free(v);
    v = vec("cpu=unlimited");
    SKV_CK_OK(skv_slots_dominant_share(&share, NULL, v, cap, &e), &e);
    ck_assert(isinf(share));
    skv_slots_free(v);
    v = vec("gpu=0,x=5");
    SKV_CK_OK(skv_slots_dominant_share(&share, &slot, v, cap, &e), &e);
    ck_assert(share == 0.0);
    ck_assert_ptr_null(slot);
    CK_FAILS(skv_slots_dominant_share(NULL, NULL, v, cap, E), SKV_EINVAL, "share_out is NULL");
    CK_FAILS(skv_slots_dominant_share(&share, NULL, NULL, cap, E), SKV_EINVAL, "v is NULL");
    CK_FAILS(skv_slots_dominant_share(&share, NULL, v, NULL, E), SKV_EINVAL, "capacity is NULL");
    skv_slots_free(v);
    skv_slots_free(cap);
}
END_TEST

/* ---- msgpack ------------------------------------------------------------- */

START_TEST(test_msgpack_roundtrip)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *v = vec("mem=1g,cpu=4");
    void *buf = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_slots_encode(&buf, &len, v, &e), &e);
    static const unsigned char want[] = {
        0x82, 0xa3, 'c', 'p', 'u', 0x92, 0x01, 0xcd, 0x0f, 0xa0,
        0xa3, 'm', 'e', 'm', 0x92, 0x02, 0xce, 0x40, 0x00, 0x00, 0x00};
    ck_assert_uint_eq(len, sizeof(want));
    ck_assert_mem_eq(buf, want, sizeof(want));
    skv_slots *back = NULL;
    SKV_CK_OK(skv_slots_decode(&back, buf, len, NULL, &e), &e);
    assert_text(back, "cpu=4,mem=1g");
    skv_free(buf);
    skv_slots_free(back);
    skv_slots_free(v);
    /* All kinds, UNLIMITED, the largest finite value, the empty vector. */
    v = vec("a=0.001,b.mem=unlimited,zz=9223372036854775.806");
    SKV_CK_OK(skv_slots_set(v, "tpu.device", SKV_SLOT_UNIQUE, 3000, &e), &e);
    skv_slot_registry *r = NULL;
    SKV_CK_OK(skv_slot_registry_new(&r, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(r, "a", SKV_SLOT_COUNT, NULL, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(r, "b.mem", SKV_SLOT_BYTES, NULL, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(r, "tpu.device", SKV_SLOT_UNIQUE, NULL, &e), &e);
    SKV_CK_OK(skv_slot_registry_add(r, "zz", SKV_SLOT_COUNT, NULL, &e), &e);
    SKV_CK_OK(skv_slots_encode(&buf, &len, v, &e), &e);
    SKV_CK_OK(skv_slots_decode(&back, buf, len, r, &e), &e);
    ck_assert(skv_slots_eq(back, v));
    skv_slot_kind kind;
    SKV_CK_OK(skv_slots_lookup(back, "tpu.device", &kind, NULL), NULL);
    ck_assert_int_eq(kind, SKV_SLOT_UNIQUE);
    skv_free(buf);
    skv_slots_free(back);
    skv_slots_clear(v);
    SKV_CK_OK(skv_slots_encode(&buf, &len, v, &e), &e);
    ck_assert_uint_eq(len, 1);
    ck_assert_uint_eq(((unsigned char *)buf)[0], 0x80);
    SKV_CK_OK(skv_slots_decode(&back, buf, len, r, &e), &e);
    ck_assert_uint_eq(skv_slots_count(back), 0);
    skv_free(buf);
    skv_slots_free(back);
    CK_FAILS(skv_slots_encode(NULL, &len, v, E), SKV_EINVAL, "out_buf is NULL");
    CK_FAILS(skv_slots_encode(&buf, NULL, v, E), SKV_EINVAL, "out_len is NULL");
    CK_FAILS(skv_slots_encode(&buf, &len, NULL, E), SKV_EINVAL, "slots is NULL");
    skv_slots_free(v);
    skv_slot_registry_free(r);
}
END_TEST

/* The internal helpers embed a vector in a larger document. */
START_TEST(test_msgpack_embedded)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *v = vec("cpu=2,cuda.shares=0.5,mem=8g");
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_array(&pk, 3);
    msgpack_pack_str_with_body(&pk, "alloc", 5);
    SKV_CK_OK(skv__slots_pack(&pk, v, &e), &e);
    msgpack_pack_int(&pk, 7);
    size_t end = 0;
    SKV_CK_OK(skv__slots_msgpack_skim(&end, sb.data, sb.size, &e), &e);
    ck_assert_uint_eq(end, sb.size);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    ck_assert_int_eq(msgpack_unpack_next(&u, sb.data, sb.size, &off), MSGPACK_UNPACK_SUCCESS);
    skv_slots *back = NULL;
    SKV_CK_OK(skv__slots_unpack(&back, &u.data.via.array.ptr[1], NULL, &e), &e);
    ck_assert(skv_slots_eq(back, v));
    CK_FAILS(skv__slots_unpack(&back, &u.data, NULL, E), SKV_EPROTO, "expected a map, got array");
    CK_FAILS(skv__slots_unpack(&back, NULL, NULL, E), SKV_EINVAL, "obj is NULL");
    CK_FAILS(skv__slots_pack(NULL, v, E), SKV_EINVAL, "pk is NULL");
    msgpack_unpacked_destroy(&u);
    msgpack_sbuffer_destroy(&sb);
    skv_slots_free(back);
    skv_slots_free(v);
}
END_TEST

/* Decode must fail with EPROTO and a message containing `part`. */
static void bad_decode(const void *buf, size_t len, const skv_slot_registry *r,
                       const char *part)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots *out = NULL;
    int rc = skv_slots_decode(&out, buf, len, r, &e);
    ck_assert_msg(rc == SKV_EPROTO, "decode -> %s (%s), want SKV_EPROTO for '%s'",
                  skv_err_name(rc), e.message, part);
    ck_assert_msg(strstr(e.message, part), "message '%s' lacks '%s'", e.message, part);
    ck_assert_ptr_null(out);
}
#define BAD(r, part, ...)                                                      \
    do {                                                                       \
        static const unsigned char b_[] = {__VA_ARGS__};                       \
        bad_decode(b_, sizeof(b_), (r), (part));                               \
    } while (0)

START_TEST(test_msgpack_bad_input)
{
    /* valid: {"cpu": [1, 4000]} */
    BAD(NULL, "truncated", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0x01, 0xcd, 0x0f);
    BAD(NULL, "1 trailing bytes", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0x01, 0x01, 0xc0);
    BAD(NULL, "expected a map, got array", 0x90);
    BAD(NULL, "expected a map, got nil", 0xc0);
    BAD(NULL, "entry 1: key has type integer", 0x81, 0x01, 0x92, 0x01, 0x01);
    BAD(NULL, "slot 'cpu': expected a [kind, qty] array, got integer",
        0x81, 0xa3, 'c', 'p', 'u', 0x01);
    BAD(NULL, "array has 3 elements", 0x81, 0xa3, 'c', 'p', 'u', 0x93, 1, 1, 1);
    BAD(NULL, "slot 'cpu': invalid kind", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0x00, 0x01);
    BAD(NULL, "slot 'cpu': invalid kind", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0x04, 0x01);
    BAD(NULL, "invalid kind", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0xa1, '1', 0x01);
    BAD(NULL, "invalid kind", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 0xff, 0x01);
    BAD(NULL, "slot 'cpu': negative quantity -1", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 1, 0xff);
    BAD(NULL, "quantity has type float", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 1,
        0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0);
    BAD(NULL, "quantity 9223372036854775808 is out of range", 0x81, 0xa3, 'c', 'p', 'u',
        0x92, 1, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0);
    BAD(NULL, "unique quantity 500", 0x81, 0xa3, 'c', 'p', 'u', 0x92, 3, 0xcd, 0x01, 0xf4);
    BAD(NULL, "slot name 'Cpu'", 0x81, 0xa3, 'C', 'p', 'u', 0x92, 1, 1);
    BAD(NULL, "slot name 'c?u'", 0x81, 0xa3, 'c', 0, 'u', 0x92, 1, 1);
    BAD(NULL, "empty slot name", 0x81, 0xa0, 0x92, 1, 1);
    BAD(NULL, "duplicate slot 'b'", 0x83, 0xa1, 'b', 0x92, 1, 1, 0xa1, 'a', 0x92, 1, 1,
        0xa1, 'b', 0x92, 1, 2);
    BAD(NULL, "invalid msgpack type byte 0xc1 at byte 1", 0x81, 0xc1, 0x01);
    BAD(NULL, "truncated", 0xdf);
    /* Hostile counts are refused before msgpack-c allocates for them. */
    BAD(NULL, "declares more elements", 0xdf, 0xff, 0xff, 0xff, 0xff);
    BAD(NULL, "declares more elements", 0xdd, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);
    BAD(NULL, "declares more elements", 0x81, 0xa3, 'c', 'p', 'u', 0xdd, 0x7f, 0xff,
        0xff, 0xff, 1, 1);
    BAD(NULL, "truncated", 0x81, 0xa3, 'c', 'p', 'u', 0xdb, 0xff, 0xff, 0xff, 0xff, 'x');
    BAD(NULL, "truncated", 0x81, 0xc6, 0xff, 0xff, 0xff, 0xff, 0);
    BAD(NULL, "truncated", 0x81, 0xc9, 0xff, 0xff, 0xff, 0xff, 1, 0);
    bad_decode("", 0, NULL, "truncated");
    bad_decode(NULL, 0, NULL, "truncated");
    skv_slots *out = NULL;
    CK_FAILS(skv_slots_decode(&out, NULL, 3, NULL, E), SKV_EINVAL, "buf is NULL");
    CK_FAILS(skv_slots_decode(NULL, "\x80", 1, NULL, E), SKV_EINVAL, "out is NULL");
}
END_TEST

START_TEST(test_msgpack_limits)
{
    skv_error e = SKV_ERROR_INIT;
    /* 1025 entries: structurally fine, over the entry limit. */
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, SKV_SLOTS_DECODE_MAX + 1);
    for (int i = 0; i <= SKV_SLOTS_DECODE_MAX; i++) {
        char name[16];
        int n = snprintf(name, sizeof(name), "s%04d", i);
        msgpack_pack_str_with_body(&pk, name, (size_t)n);
        msgpack_pack_array(&pk, 2);
        msgpack_pack_int(&pk, 1);
        msgpack_pack_int(&pk, i);
    }
    bad_decode(sb.data, sb.size, NULL, "more than the limit of 1024");
    msgpack_sbuffer_destroy(&sb);
    /* Longer than any valid encoding: refused up front. */
    size_t big = 200 * 1024;
    unsigned char *junk = calloc(1, big);
    ck_assert_ptr_nonnull(junk);
    bad_decode(junk, big, NULL, "longer than any valid encoding");
    free(junk);
    /* Nesting deeper than msgpack-c's parser stack: an error, not a crash. */
    unsigned char deep[1 + 4 + 1 + 100];
    size_t k = 0;
    deep[k++] = 0x81;
    deep[k++] = 0xa3, deep[k++] = 'c', deep[k++] = 'p', deep[k++] = 'u';
    while (k < sizeof(deep) - 1)
        deep[k++] = 0x91;
    deep[k++] = 0x01;
    bad_decode(deep, sizeof(deep), NULL, "nested deeper than 24");
    deep[5 + 22] = 0x01; /* 22 + 2 levels: accepted by the pre-check */
    bad_decode(deep, 5 + 23, NULL, "[kind, qty] array has 1 elements");
    /* Registry checks. */
    skv_slot_registry *r = NULL;
    SKV_CK_OK(skv_slot_registry_new_default(&r, &e), &e);
    BAD(r, "unknown slot 'foo'", 0x81, 0xa3, 'f', 'o', 'o', 0x92, 1, 1);
    BAD(r, "slot 'mem' is a bytes slot in the registry, encoded as count",
        0x81, 0xa3, 'm', 'e', 'm', 0x92, 1, 1);
    skv_slot_registry_free(r);
    /* Encoding when memory runs out: an error and nothing leaked. */
    skv_slots *v = vec("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1");
    use_counting_allocator();
    void *buf = NULL;
    size_t len = 0;
    fail_after = 0;
    CK_FAILS(skv_slots_encode(&buf, &len, v, E), SKV_ENOMEM, "out of memory");
    fail_after = 1; /* the first growth */
    CK_FAILS(skv_slots_encode(&buf, &len, v, E), SKV_ENOMEM, "out of memory");
    ck_assert_ptr_null(buf);
    fail_after = -1;
    skv_slots_free(v);
    skv_set_allocator(NULL, NULL);
}
END_TEST

/* ---- randomized tests ------------------------------------------------------ */

/* Check's ck_assert reports every passing assertion to the parent process
 * (one write() each); the randomized loops check millions of facts, so they
 * only call into Check when something fails. */
#define PROP(cond)                                                             \
    do {                                                                       \
        if (!(cond))                                                           \
            ck_abort_msg("property failed: %s", #cond);                        \
    } while (0)
#define OK(expr)                                                               \
    do {                                                                       \
        int ok_rc_ = (expr);                                                   \
        if (ok_rc_ != 0)                                                       \
            ck_abort_msg("%s -> %s", #expr, skv_err_name(ok_rc_));             \
    } while (0)

static uint64_t rng_next(uint64_t *s) /* xorshift64*, explicit seed */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* Decoding must either fail with EPROTO or give a well-formed vector. */
static int decode_checked(const void *buf, size_t len)
{
    skv_slots *out = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_slots_decode(&out, buf, len, NULL, &e);
    if (rc != 0 && rc != SKV_EPROTO)
        ck_abort_msg("rc %s: %s", skv_err_name(rc), e.message);
    if (rc == 0) {
        for (size_t i = 1; i < skv_slots_count(out); i++) {
            const char *p, *q;
            skv_slots_at(out, i - 1, &p, NULL, NULL);
            skv_slots_at(out, i, &q, NULL, NULL);
            PROP(strcmp(p, q) < 0);
        }
        char *text = NULL;
        OK(skv_slots_format(&text, out, &e));
        skv_free(text);
        skv_slots_free(out);
    } else {
        PROP(out == NULL);
    }
    return rc;
}

START_TEST(test_msgpack_fuzz)
{
    static const char *samples[] = {
        "cpu=4,mem=16g,cuda.shares=0.5", "", "x=unlimited,y.mem=1",
        "a=1,b=2,c=3,d=4,e=5,f=6,g=7,h=8,i=9,j=10,k=11,l=12,m=13,n=14,o=15,p=16,q=17",
    };
    skv_error e = SKV_ERROR_INIT;
    uint64_t seed = 0x5eed1234abcdULL;
    for (size_t s = 0; s < sizeof(samples) / sizeof(samples[0]); s++) {
        skv_slots *v = vec(samples[s]);
        void *buf = NULL;
        size_t len = 0;
        SKV_CK_OK(skv_slots_encode(&buf, &len, v, &e), &e);
        for (size_t cut = 0; cut < len; cut++) /* every truncation fails */
            PROP(decode_checked(buf, cut) == SKV_EPROTO);
        unsigned char *m = malloc(len);
        for (int i = 0; i < 500; i++) { /* 1-3 flipped bytes */
            memcpy(m, buf, len);
            for (int f = 0; f < 1 + i % 3; f++)
                m[rng_next(&seed) % len] ^= (unsigned char)(1 + rng_next(&seed) % 255);
            decode_checked(m, len);
        }
        free(m);
        skv_free(buf);
        skv_slots_free(v);
    }
    int failed = 0, total = 3000;
    unsigned char junk[64];
    for (int i = 0; i < total; i++) {
        size_t len = rng_next(&seed) % sizeof(junk);
        for (size_t k = 0; k < len; k++)
            junk[k] = (unsigned char)rng_next(&seed);
        if (len && i % 2) /* half start as a map to get past the first check */
            junk[0] = (unsigned char)(0x80 | (junk[0] & 0x0f));
        failed += decode_checked(junk, len) != 0;
    }
    ck_assert_int_ge(failed, total * 9 / 10);
}
END_TEST

static const struct {
    const char *name;
    skv_slot_kind kind;
} pool[] = {
    {"cpu", SKV_SLOT_COUNT}, {"cuda.device", SKV_SLOT_COUNT},
    {"cuda.shares", SKV_SLOT_COUNT}, {"mem", SKV_SLOT_BYTES},
    {"npu.mem", SKV_SLOT_BYTES}, {"tpu.device", SKV_SLOT_UNIQUE},
    {"x", SKV_SLOT_COUNT}, {"zz", SKV_SLOT_COUNT},
};
#define POOL_LEN (sizeof(pool) / sizeof(pool[0]))

static skv_qty random_qty(uint64_t *seed, skv_slot_kind kind, bool unl)
{
    uint64_t r = rng_next(seed);
    if (r % 16 == 0)
        return 0;
    if (unl && r % 8 == 1)
        return SKV_QTY_UNLIMITED;
    r >>= 8;
    switch (kind) {
    case SKV_SLOT_BYTES:
        return (r % 2) ? (skv_qty)(r % ((uint64_t)1 << 44))
                       : (skv_qty)((r % 4096) << 30);
    case SKV_SLOT_UNIQUE:
        return (skv_qty)(r % 16) * 1000;
    default:
        return (skv_qty)(r % 1000000000);
    }
}

static void random_vec(skv_slots *v, uint64_t *seed, bool unl)
{
    skv_slots_clear(v);
    uint64_t pick = rng_next(seed);
    for (size_t i = 0; i < POOL_LEN; i++)
        if (pick >> i & 1)
            OK(skv_slots_set(v, pool[i].name, pool[i].kind,
                             random_qty(seed, pool[i].kind, unl), NULL));
}

/* Text and msgpack forms give back an equal vector. */
static void check_roundtrips(const skv_slots *a, const skv_slot_registry *r)
{
    char *text = NULL;
    skv_slots *back = NULL;
    OK(skv_slots_format(&text, a, NULL));
    OK(skv_slots_parse(&back, text, r, NULL));
    if (!skv_slots_eq(back, a))
        ck_abort_msg("text round trip: %s", text);
    skv_free(text);
    skv_slots_free(back);
    void *buf = NULL;
    size_t len = 0;
    OK(skv_slots_encode(&buf, &len, a, NULL));
    OK(skv_slots_decode(&back, buf, len, r, NULL));
    PROP(skv_slots_eq(back, a));
    skv_free(buf);
    skv_slots_free(back);
}

struct work {
    skv_slots *a, *b, *c, *t, *u, *mn, *mx, *tmp;
};

/* Laws over one random triple; finite: no UNLIMITED values. */
static void check_laws(struct work *w, bool finite)
{
    skv_slots *a = w->a, *b = w->b, *c = w->c;
    /* a + b - b == a; a fits a + b; monotonicity along a chain. */
    OK(skv_slots_copy(w->t, a, NULL));
    OK(skv_slots_add(w->t, b, NULL));
    PROP(skv_slots_fits(a, w->t) && skv_slots_fits(b, w->t));
    OK(skv_slots_copy(w->u, w->t, NULL));
    OK(skv_slots_add(w->u, c, NULL));
    PROP(skv_slots_le(w->t, w->u) && skv_slots_fits(a, w->u));
    if (skv_slots_fits(a, b) && skv_slots_le(b, c))
        PROP(skv_slots_fits(a, c));
    PROP(skv_slots_first_short(a, b, NULL, NULL) == !skv_slots_fits(a, b));
    /* min/max: bounds, commutativity, min + max == a + b. */
    OK(skv_slots_copy(w->mn, a, NULL));
    OK(skv_slots_min(w->mn, b, NULL));
    OK(skv_slots_copy(w->mx, a, NULL));
    OK(skv_slots_max(w->mx, b, NULL));
    PROP(skv_slots_le(w->mn, a) && skv_slots_le(w->mn, b));
    PROP(skv_slots_le(a, w->mx) && skv_slots_le(b, w->mx));
    OK(skv_slots_copy(w->tmp, b, NULL));
    OK(skv_slots_min(w->tmp, a, NULL));
    PROP(skv_slots_eq(w->tmp, w->mn));
    OK(skv_slots_add(w->tmp, w->mx, NULL));
    PROP(skv_slots_eq(w->tmp, w->t));
    if (!finite)
        return;
    OK(skv_slots_sub(w->t, b, 0, NULL));
    PROP(skv_slots_eq(w->t, a));
    /* Clamped a - b == a - min(a, b); scaling by 2 == a + a. */
    OK(skv_slots_copy(w->tmp, a, NULL));
    OK(skv_slots_sub(w->tmp, b, SKV_SLOTS_CLAMP, NULL));
    PROP(skv_slots_le(w->tmp, a));
    OK(skv_slots_add(w->tmp, w->mn, NULL));
    PROP(skv_slots_eq(w->tmp, a));
    OK(skv_slots_copy(w->tmp, a, NULL));
    OK(skv_slots_scale(w->tmp, 2, NULL));
    OK(skv_slots_copy(w->u, a, NULL));
    OK(skv_slots_add(w->u, a, NULL));
    PROP(skv_slots_eq(w->tmp, w->u));
}

START_TEST(test_property_random)
{
    skv_slot_registry *r = NULL;
    OK(skv_slot_registry_new(&r, NULL));
    for (size_t i = 0; i < POOL_LEN; i++)
        OK(skv_slot_registry_add(r, pool[i].name, pool[i].kind, NULL, NULL));
    struct work w;
    skv_slots **all[] = {&w.a, &w.b, &w.c, &w.t, &w.u, &w.mn, &w.mx, &w.tmp};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        OK(skv_slots_new(all[i], NULL));
    uint64_t seed = 0x1234567890abcdefULL;
    for (int i = 0; i < 100000; i++) {
        bool finite = i % 8 != 7;
        random_vec(w.a, &seed, !finite);
        random_vec(w.b, &seed, !finite);
        random_vec(w.c, &seed, !finite);
        check_laws(&w, finite);
        if (i % 4 == 0)
            check_roundtrips(w.a, i % 8 ? r : NULL);
    }
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        skv_slots_free(*all[i]);
    skv_slot_registry_free(r);
}
END_TEST

Suite *skv_test_suite_slots(void);
Suite *skv_test_suite_slots(void)
{
    Suite *s = suite_create("slots");
    TCase *tc = tcase_create("slots");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_name_check);
    tcase_add_test(tc, test_qty_parse_count);
    tcase_add_test(tc, test_qty_parse_bytes);
    tcase_add_test(tc, test_qty_format);
    tcase_add_test(tc, test_registry);
    tcase_add_test(tc, test_registry_grow);
    tcase_add_test(tc, test_vector_entries);
    tcase_add_test(tc, test_vector_copy_dup);
    tcase_add_test(tc, test_vector_parse);
    tcase_add_test(tc, test_vector_parse_errors);
    tcase_add_test(tc, test_vector_format);
    tcase_add_test(tc, test_add);
    tcase_add_test(tc, test_sub);
    tcase_add_test(tc, test_min_max);
    tcase_add_test(tc, test_scale);
    tcase_add_test(tc, test_no_alloc_hot_path);
    tcase_add_test(tc, test_enomem_everywhere);
    tcase_add_test(tc, test_compare);
    tcase_add_test(tc, test_dominant_share);
    tcase_add_test(tc, test_msgpack_roundtrip);
    tcase_add_test(tc, test_msgpack_embedded);
    tcase_add_test(tc, test_msgpack_bad_input);
    tcase_add_test(tc, test_msgpack_limits);
    tcase_add_test(tc, test_msgpack_fuzz);
    tcase_add_test(tc, test_property_random);
    suite_add_tcase(s, tc);
    return s;
}
