/* Shared helpers for the Check suites.
 * Each tests/test_<name>.c defines `Suite *skv_test_suite_<name>(void)`.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_H
#define SKV_TEST_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "sokovan.h"

/* Assert a libsokovan call succeeded, showing the error detail if not. */
#define SKV_CK_OK(expr, errp)                                                  \
    do {                                                                       \
        const skv_error *skv_ck_e_ = (errp);                                   \
        int skv_ck_rc_ = (expr);                                               \
        ck_assert_msg(skv_ck_rc_ == 0, "%s -> %s (%s): %s", #expr,             \
                      skv_err_name(skv_ck_rc_), skv_strerror(skv_ck_rc_),      \
                      skv_ck_e_ ? skv_ck_e_->message : "");                    \
    } while (0)

/* Path of a file in ../shared/data (beside the project root); the source
 * root comes from SKV_TEST_SRC_DIR (set by make) or the cwd. */
static inline const char *skv_test_data_path(char *buf, size_t n,
                                             const char *rel)
{
    const char *src = getenv("SKV_TEST_SRC_DIR");
    snprintf(buf, n, "%s/../shared/data/%s", src ? src : ".", rel);
    return buf;
}

/* Directory holding build outputs (test plugins in so/, programs in bin/). */
static inline const char *skv_test_build_dir(void)
{
    const char *b = getenv("SKV_TEST_BUILD_DIR");
    return b ? b : "build";
}

/* What a shell command prints on stdout (up to cap - 1 bytes). */
static inline void skv_test_sh_output(const char *cmd, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    pclose(p);
}

#endif
