/* The manager's transactions. Every transaction first writes the nonces
 * of the requests accepted since the last commit: a request's nonce is
 * durable no later than its effect (mgr_nonces.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include "mgr_int.h"

int skv__mgr_tx_open(skv_manager *m, skv_error *err)
{
    int rc = skv__db_begin(m->store, err);
    if (!rc && (rc = skv__mgr_nonce_flush(m, err)))
        skv__mgr_rollback(m);
    return rc;
}

/* An agent's kernel event joins the open batch as a unit (mgr_units.c).
 * Anything else: a batch still open commits first (mgr_batch.c), so
 * every other change starts from what was acknowledged. */
int skv__mgr_begin(skv_manager *m, skv_error *err)
{
    if (m->batch.join)
        return skv__mgr_unit_begin(m, err);
    if (m->batch.open)
        skv__mgr_batch_commit(m, m->batch.now_ms, NULL);
    return skv__mgr_tx_open(m, err);
}

/* Frames produced inside the transaction leave only now (mgr_outbox.c);
 * a unit's wait for its batch's commit. */
int skv__mgr_commit(skv_manager *m, skv_error *err)
{
    if (m->batch.in_unit)
        return skv__mgr_unit_commit(m, err);
    int rc = skv__db_commit(m->store, err);
    skv__mgr_nonce_settle(m, rc == 0);
    if (rc)
        skv__mgr_outbox_drop(m, 0, err ? err->message : "not recorded");
    else
        skv__mgr_outbox_release(m);
    return rc;
}

void skv__mgr_rollback(skv_manager *m)
{
    if (m->batch.join) {    /* a unit's own; never the whole batch */
        if (m->batch.in_unit)
            skv__mgr_unit_rollback(m);
        return;
    }
    skv__mgr_nonce_settle(m, false);
    skv__db_rollback(m->store);
    skv__mgr_outbox_drop(m, 0, "not recorded: the manager's transaction "
                         "was rolled back");
}
