/* Link name prefixes (IPv4 addresses and CIDR blocks as text are the
 * subnet module's, src/subnet/cidr.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "net_internal.h"

int skv__net_prefix_check(const char *prefix, const char **out,
                          skv_error *err)
{
    if (!prefix)
        prefix = SKV_NET_DEFAULT_PREFIX;
    size_t n = strlen(prefix);
    if (n == 0 || n > 4 || strspn(prefix, "abcdefghijklmnopqrstuvwxyz") != n)
        return skv__err(err, SKV_EINVAL, "link prefix '%s' must be 1..4 "
                        "letters a-z", prefix);
    *out = prefix;
    return 0;
}
