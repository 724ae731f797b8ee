/* The manager's database opened and its schema brought up to date: the
 * store's components migrated (store/schema.c) and the admin plane's
 * tables, in one transaction.
 * SPDX-License-Identifier: Apache-2.0 */
#include "mgr_int.h"
#include "store/admin_store.h"
#include "store/lease.h"
#include "store/schema.h"

static int schema(skv_manager *m, skv_error *err)
{
    int rc = skv__mgr_begin(m, err);
    if (rc)
        return rc;
    rc = skv__mgr_store_schema(m->store, err);
    if (!rc)
        rc = skv__mgr_store_admin_schema(m->store, err);
    if (!rc)
        rc = skv__mgr_store_format_mark(m->store, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    return skv__mgr_commit(m, err);
}

int skv__mgr_db_open(skv_manager *m, bool init, skv_error *err)
{
    int rc = m->store_uri
                 ? skv__db_open_postgres(m->store_uri, &m->store, err)
                 : skv__mgr_store_open_sqlite(m->data_dir, init, &m->store,
                                              err);
    if (rc)
        return rc;
    m->admin.db = m->store;
    /* A leader fences its connection before its first transaction. */
    if (m->ha_epoch && (rc = skv__mgr_store_lease_fence(m->store,
                                                        &m->ha_epoch,
                                                        m->ha_lease_ms, err)))
        return rc;
    return schema(m, err);
}

void skv__mgr_db_close(skv_manager *m)
{
    skv__db_close(m->store);
    m->store = NULL;
    m->admin.db = NULL;
}
