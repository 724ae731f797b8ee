/* The subnet pool (sokovan/subnet.h): I/O-free, no privileges needed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_test.h"
#include "sokovan/subnet.h"

START_TEST(test_pool)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_pool *p = NULL;
    ck_assert_int_eq(skv_net_pool_new(&p, "10.128.0.0/9", 8, &e), SKV_ERANGE);
    ck_assert_int_eq(skv_net_pool_new(&p, "10.128.0.1/9", 24, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_net_pool_new(&p, "10.0.0.0/8", 30, &e), SKV_ERANGE);
    SKV_CK_OK(skv_net_pool_new(&p, "10.128.0.0/9", 24, &e), &e);
    ck_assert_uint_eq(skv_net_pool_available(p), 32768);
    char a[SKV_NET_ADDR_MAX], b[SKV_NET_ADDR_MAX];
    SKV_CK_OK(skv_net_pool_alloc(p, a, sizeof(a), &e), &e);
    ck_assert_str_eq(a, "10.128.0.0/24");
    SKV_CK_OK(skv_net_pool_reserve(p, "10.128.1.0/24", &e), &e);
    ck_assert_int_eq(skv_net_pool_reserve(p, "10.128.1.0/24", &e), SKV_EEXIST);
    ck_assert_int_eq(skv_net_pool_reserve(p, "10.0.1.0/24", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_net_pool_reserve(p, "10.128.2.0/25", &e),
                     SKV_ERANGE);
    SKV_CK_OK(skv_net_pool_alloc(p, b, sizeof(b), &e), &e);
    ck_assert_str_eq(b, "10.128.2.0/24");
    SKV_CK_OK(skv_net_pool_release(p, a, &e), &e);
    ck_assert_int_eq(skv_net_pool_release(p, a, &e), SKV_ENOENT);
    SKV_CK_OK(skv_net_pool_alloc(p, a, sizeof(a), &e), &e);
    ck_assert_str_eq(a, "10.128.0.0/24");
    ck_assert_uint_eq(skv_net_pool_available(p), 32768 - 3);
    skv_net_pool_free(p);
    /* A small pool runs out with a clear error. */
    SKV_CK_OK(skv_net_pool_new(&p, "192.168.0.0/23", 24, &e), &e);
    SKV_CK_OK(skv_net_pool_alloc(p, a, sizeof(a), &e), &e);
    SKV_CK_OK(skv_net_pool_alloc(p, a, sizeof(a), &e), &e);
    ck_assert_str_eq(a, "192.168.1.0/24");
    ck_assert_int_eq(skv_net_pool_alloc(p, a, sizeof(a), &e), SKV_ENOSPC);
    ck_assert_int_eq(skv_net_pool_alloc(p, a, 4, &e), SKV_ENOSPC);
    skv_net_pool_free(p);
}
END_TEST

Suite *skv_test_suite_subnet(void);
Suite *skv_test_suite_subnet(void)
{
    Suite *s = suite_create("subnet");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, test_pool);
    suite_add_tcase(s, tc);
    return s;
}
