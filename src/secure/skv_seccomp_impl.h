/* Private to src/secure/: the seccomp profile's representation.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SECCOMP_IMPL_H
#define SKV_SECCOMP_IMPL_H

#include <sys/types.h>

#include "skv_seccomp.h"

struct skv_seccomp_profile {
    char **names;             /* denied calls (EPERM), unique */
    size_t n, cap;
    bool clone_ns_filter;     /* clone() with CLONE_NEW* flags -> EPERM */
    bool clone3_enosys;       /* clone3() -> ENOSYS (libc falls back) */
    bool personality_filter;  /* only the usual personas */
};

/* The built-in denial list. */
const char *const *skv__seccomp_default_list(size_t *count);
/* SKV_EINVAL unless libseccomp knows the name on some architecture. */
int skv__seccomp_check_name(const char *name, skv_error *err);

#endif
