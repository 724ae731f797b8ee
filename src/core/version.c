/* Runtime version of the loaded library.
 * SPDX-License-Identifier: Apache-2.0 */
#include "skv_internal.h"

unsigned skv_version(void)
{
    return SKV_VERSION_NUMBER;
}

const char *skv_version_string(void)
{
    return SKV_VERSION_STRING;
}
