/* One runner for every module's suite; suites are listed by the Makefile in
 * suites.inc (one SKV_SUITE(name) line per tests/test_<name>.c).
 * CK_RUN_SUITE / CK_RUN_CASE select a subset at run time; tests fork.
 * SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <stdlib.h>

#define SKV_SUITE(name) Suite *skv_test_suite_##name(void);
#include "suites.inc"
#undef SKV_SUITE

int main(void)
{
    SRunner *sr = srunner_create(NULL);
#define SKV_SUITE(name) srunner_add_suite(sr, skv_test_suite_##name());
#include "suites.inc"
#undef SKV_SUITE
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
