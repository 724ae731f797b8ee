/* Core conventions: errors, version, allocator hook, logger, sysroot.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "skv_test.h"
#include "skv_internal.h"

/* skv__strlcpy is snprintf(dst, cap, "%s", src): what fits, terminated,
 * the source's length returned. */
START_TEST(test_strlcpy)
{
    char b[6];
    memset(b, 'x', sizeof b);
    ck_assert_uint_eq(skv__strlcpy(b, "abc", sizeof b), 3);
    ck_assert_str_eq(b, "abc");
    ck_assert_uint_eq(skv__strlcpy(b, "abcdef", sizeof b), 6);
    ck_assert_str_eq(b, "abcde");
    ck_assert_uint_eq(skv__strlcpy(b, "abcde", sizeof b), 5);
    ck_assert_str_eq(b, "abcde");
    ck_assert_uint_eq(skv__strlcpy(b, "", sizeof b), 0);
    ck_assert_str_eq(b, "");
    b[0] = 'q';
    ck_assert_uint_eq(skv__strlcpy(b, "zz", 0), 2);
    ck_assert_int_eq(b[0], 'q');
    ck_assert_uint_eq(skv__strlcpy(b, "zz", 1), 2);
    ck_assert_str_eq(b, "");
}
END_TEST

START_TEST(test_version)
{
    ck_assert_uint_eq(skv_version(), SKV_VERSION_NUMBER);
    ck_assert_str_eq(skv_version_string(), SKV_VERSION_STRING);
    ck_assert_uint_eq(skv_version() >> 16, SKV_VERSION_MAJOR);
}
END_TEST

START_TEST(test_error_names)
{
    for (int c = 0; c >= SKV_ERR_MIN; c--) {
        ck_assert_str_ne(skv_err_name(c), "SKV_E?");
        ck_assert_str_ne(skv_strerror(c), "unknown error");
    }
    ck_assert_str_eq(skv_err_name(SKV_EINVAL), "SKV_EINVAL");
    ck_assert_str_eq(skv_err_name(SKV_ERR_MIN - 1), "SKV_E?");
    ck_assert_str_eq(skv_strerror(12345), "unknown error");
}
END_TEST

START_TEST(test_error_detail)
{
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv__err(&e, SKV_ERANGE, "value %d too big", 7), SKV_ERANGE);
    ck_assert_int_eq(e.code, SKV_ERANGE);
    ck_assert_str_eq(e.message, "value 7 too big");
    skv__err_prefix(&e, "slot '%s'", "cpu");
    ck_assert_str_eq(e.message, "slot 'cpu': value 7 too big");
    ck_assert_int_eq(skv__err_sys(&e, 2, "open x"), SKV_ESYS);
    ck_assert_int_eq(e.sys_errno, 2);
    ck_assert_ptr_nonnull(strstr(e.message, "open x: "));
    skv_error_clear(&e);
    ck_assert_int_eq(e.code, 0);
    ck_assert_str_eq(e.message, "");
    skv_error_clear(NULL);
    /* NULL detail object: still returns the code. */
    ck_assert_int_eq(skv__err(NULL, SKV_ENOENT, "x"), SKV_ENOENT);
}
END_TEST

static size_t counting_allocs;
static void *count_malloc(size_t n, void *p) { (void)p; counting_allocs++; return malloc(n); }
static void *count_realloc(void *q, size_t n, void *p) { (void)p; counting_allocs++; return realloc(q, n); }
static void count_free(void *q, void *p) { (void)p; free(q); }

START_TEST(test_allocator_hook)
{
    skv_error e = SKV_ERROR_INIT;
    skv_allocator a = {SKV_ALLOCATOR_VERSION, count_malloc, count_realloc, count_free, NULL};
    skv_allocator bad = a;
    bad.version = 99;
    ck_assert_int_eq(skv_set_allocator(&bad, &e), SKV_EVERSION);
    bad = a;
    bad.free_fn = NULL;
    ck_assert_int_eq(skv_set_allocator(&bad, &e), SKV_EINVAL);
    SKV_CK_OK(skv_set_allocator(&a, &e), &e);
    char *s = skv__strdup("hello");
    ck_assert_str_eq(s, "hello");
    ck_assert_uint_eq(counting_allocs, 1);
    skv_free(s);
    ck_assert_ptr_null(skv__calloc(SIZE_MAX / 2, 4)); /* overflow refused */
    ck_assert_uint_eq(counting_allocs, 1);
    SKV_CK_OK(skv_set_allocator(NULL, &e), &e);
    skv_free(NULL);
}
END_TEST

static char last_line[256];
static int last_level = -1;
static void capture_log(skv_log_level lvl, const char *mod, const char *msg, void *p)
{
    (void)p;
    last_level = (int)lvl;
    snprintf(last_line, sizeof(last_line), "%s: %s", mod, msg);
}

START_TEST(test_logger)
{
    skv__log(SKV_LOG_ERROR, "core", "dropped %d", 1); /* no logger: silent */
    skv_set_logger(capture_log, SKV_LOG_INFO, NULL);
    skv__log(SKV_LOG_DEBUG, "core", "below threshold");
    ck_assert_int_eq(last_level, -1);
    skv__log(SKV_LOG_WARN, "core", "value %d", 42);
    ck_assert_int_eq(last_level, SKV_LOG_WARN);
    ck_assert_str_eq(last_line, "core: value 42");
    ck_assert_str_eq(skv_log_level_name(SKV_LOG_ERROR), "error");
    skv_set_logger(NULL, SKV_LOG_INFO, NULL);
}
END_TEST

START_TEST(test_sysroot)
{
    skv_error e = SKV_ERROR_INIT;
    char dir[] = "/tmp/skv-sysroot-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof(path), "%s/proc", dir);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/proc/value", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("123\n", f);
    fclose(f);

    ck_assert_int_eq(skv_sysroot_set("relative", &e), SKV_EINVAL);
    SKV_CK_OK(skv_sysroot_set(dir, &e), &e);
    ck_assert_str_eq(skv_sysroot_get(), dir);
    char buf[64];
    size_t len = 0;
    SKV_CK_OK(skv__sys_read("/proc/value", buf, sizeof(buf), &len, &e), &e);
    ck_assert_str_eq(buf, "123\n");
    ck_assert_uint_eq(len, 4);
    SKV_CK_OK(skv__sys_write("/proc/value", "77", &e), &e);
    char *all = NULL;
    SKV_CK_OK(skv__sys_read_alloc("/proc/value", &all, &len, &e), &e);
    ck_assert_str_eq(all, "77");
    skv_free(all);
    ck_assert(skv__sys_exists("/proc/value"));
    ck_assert(!skv__sys_exists("/proc/missing"));
    ck_assert_int_eq(skv__sys_read("/proc/missing", buf, sizeof(buf), NULL, &e),
                     SKV_ENOENT);
    ck_assert_ptr_nonnull(strstr(e.message, "/proc/missing"));
    ck_assert_int_eq(skv__sys_read("proc", buf, sizeof(buf), NULL, &e), SKV_EINVAL);
    SKV_CK_OK(skv_sysroot_set("/", &e), &e);
    ck_assert_str_eq(skv_sysroot_get(), "/");
    unlink(path);
    snprintf(path, sizeof(path), "%s/proc", dir);
    rmdir(path);
    rmdir(dir);
}
END_TEST

Suite *skv_test_suite_core(void);
Suite *skv_test_suite_core(void)
{
    Suite *s = suite_create("core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_version);
    tcase_add_test(tc, test_strlcpy);
    tcase_add_test(tc, test_error_names);
    tcase_add_test(tc, test_error_detail);
    tcase_add_test(tc, test_allocator_hook);
    tcase_add_test(tc, test_logger);
    tcase_add_test(tc, test_sysroot);
    suite_add_tcase(s, tc);
    return s;
}
