/* skv_manager_lease: the host's side of leadership on a PostgreSQL store
 * (sokovan/manager_lease.h). A thin owner of one store connection and the
 * epoch it won; election and fencing are store/lease.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "sokovan/manager_lease.h"
#include "store/lease.h"
#include "store/store_uri.h"

struct skv_manager_lease {
    skv__db *db;
    char holder[128];
    uint32_t lease_ms;
    int64_t epoch;          /* 0 while not elected */
};

enum { LEASE_MS_MIN = 200, LEASE_MS_MAX = 3600000 };

static int check_opts(const skv_manager_lease_options *o, skv_error *err)
{
    if (!o)
        return skv__err(err, SKV_EINVAL, "manager lease: NULL options");
    if (o->version != SKV_MANAGER_LEASE_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "manager lease options version "
                        "%u, expected %u", o->version,
                        SKV_MANAGER_LEASE_OPTIONS_VERSION);
    if (!o->holder || !o->holder[0] || strlen(o->holder) > 127)
        return skv__err(err, SKV_EINVAL, "manager lease: holder must be 1 "
                        "to 127 bytes");
    if (o->lease_ms < LEASE_MS_MIN || o->lease_ms > LEASE_MS_MAX)
        return skv__err(err, SKV_ERANGE, "manager lease: lease_ms %u "
                        "outside %d..%d", o->lease_ms, LEASE_MS_MIN,
                        LEASE_MS_MAX);
    int rc = skv__mgr_store_uri_check(o->store, err);
    if (!rc && !skv__mgr_store_uri_is_postgres(o->store))
        rc = skv__err(err, SKV_EINVAL, "manager lease: standby managers need "
                      "a PostgreSQL store; SQLite ('%s') serves one manager "
                      "per data_dir", o->store ? o->store : "sqlite");
    return rc;
}

SKV_EXTERN int skv_manager_lease_open(skv_manager_lease **out,
                                      const skv_manager_lease_options *o,
                                      skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "manager lease: NULL out");
    *out = NULL;
    int rc = check_opts(o, err);
    if (rc)
        return rc;
    skv_manager_lease *l = skv__calloc(1, sizeof *l);
    if (!l)
        return skv__err(err, SKV_ENOMEM, "manager lease: out of memory");
    snprintf(l->holder, sizeof l->holder, "%s", o->holder);
    l->lease_ms = o->lease_ms;
    rc = skv__db_open_postgres(o->store, &l->db, err);
    if (!rc)
        rc = skv__mgr_store_lease_hold(l->db, l->lease_ms, err);
    if (!rc)
        rc = skv__mgr_store_lease_schema(l->db, err);
    if (rc) {
        skv_manager_lease_free(l);
        return rc;
    }
    *out = l;
    return 0;
}

SKV_EXTERN int skv_manager_lease_try(skv_manager_lease *l, int64_t now_ms,
                                     skv_error *err)
{
    if (!l)
        return skv__err(err, SKV_EINVAL, "manager lease: NULL lease");
    if (l->epoch)
        return 1;
    return skv__mgr_store_lease_try(l->db, l->holder, now_ms, &l->epoch,
                                    err);
}

SKV_EXTERN int skv_manager_lease_renew(skv_manager_lease *l, skv_error *err)
{
    if (!l)
        return skv__err(err, SKV_EINVAL, "manager lease: NULL lease");
    if (!l->epoch)
        return skv__err(err, SKV_ESTATE, "manager lease: not elected");
    return skv__mgr_store_lease_renew(l->db, l->epoch, err);
}

SKV_EXTERN int64_t skv_manager_lease_epoch(const skv_manager_lease *l)
{
    return l ? l->epoch : 0;
}

SKV_EXTERN int skv_manager_lease_leader(skv_manager_lease *l, char *holder,
                                        size_t n, int64_t *epoch,
                                        skv_error *err)
{
    if (!l || !holder || n == 0)
        return skv__err(err, SKV_EINVAL, "manager lease: NULL lease or "
                        "buffer");
    char h[128];
    int64_t e = 0;
    int rc = skv__mgr_store_lease_read(l->db, &e, h, err);
    snprintf(holder, n, "%s", rc ? "" : h);
    if (epoch)
        *epoch = rc ? 0 : e;
    return rc;
}

SKV_EXTERN void skv_manager_lease_free(skv_manager_lease *l)
{
    if (!l)
        return;
    if (l->epoch)
        skv__mgr_store_lease_release(l->db);
    skv__db_close(l->db);
    skv__free(l);
}

/* For skv_manager_open (options v6): the epoch and bound to fence with. */
int skv__mgr_lease_terms(const skv_manager_lease *l, int64_t *epoch,
                         uint32_t *lease_ms, skv_error *err)
{
    if (!l->epoch)
        return skv__err(err, SKV_ESTATE, "manager_open: the lease given in "
                        "the options is not elected (skv_manager_lease_try "
                        "first)");
    *epoch = l->epoch;
    *lease_ms = l->lease_ms;
    return 0;
}
