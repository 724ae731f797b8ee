/* The manager's transactions. Every transaction first writes the nonces
 * of the requests accepted since the last commit: a request's nonce is
 * durable no later than its effect (mgr_nonces.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include "mgr_int.h"

int skv__mgr_begin(skv_manager *m, skv_error *err)
{
    int rc = skv__db_begin(m->store, err);
    if (!rc && (rc = skv__mgr_nonce_flush(m, err)))
        skv__mgr_rollback(m);
    return rc;
}

int skv__mgr_commit(skv_manager *m, skv_error *err)
{
    int rc = skv__db_commit(m->store, err);
    skv__mgr_nonce_settle(m, rc == 0);
    return rc;
}

void skv__mgr_rollback(skv_manager *m)
{
    skv__mgr_nonce_settle(m, false);
    skv__db_rollback(m->store);
}
