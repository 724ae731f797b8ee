/* Whether a client's connection can still carry requests: lets a caller
 * tell an answer of the manager (the connection stays usable) from a
 * failure of the connection itself (reconnect), whatever the code.
 * SPDX-License-Identifier: Apache-2.0 */
#include "client_internal.h"

int skv_client_usable(const skv_client *c)
{
    return c && c->fd >= 0 && !c->broken;
}
