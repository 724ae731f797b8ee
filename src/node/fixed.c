/* The node mapper: amounts fixed by the caller (a manager's accelerator
 * decision, a placement restored after a restart) taken exactly, plugin by
 * plugin, before the rest of the request is placed around them.
 * SPDX-License-Identifier: Apache-2.0 */
#include "node_internal.h"

#define WANT(n, pi, s) ((n)->want[(pi) * SKV_ALLOC_MAP_SLOTS_MAX + (s)])

/* Plugin and slot index offering slot; false when none. */
static bool find_slot(const skv_node *n, const char *slot, size_t *pi,
                      size_t *s)
{
    for (*pi = 0; *pi < n->np; (*pi)++)
        if (skv_alloc_map_slot_index(n->p[*pi].map, slot, s) == 0)
            return true;
    return false;
}

static int resolve(const skv_node *n, const skv_device_amount *f, size_t *pi,
                   skv_alloc_entry *e, skv_error *err)
{
    if (!f->slot || !f->device_id)
        return skv__err(err, SKV_EINVAL, "fixed amount: %s is NULL",
                        !f->slot ? "slot" : "device id");
    if (!find_slot(n, f->slot, pi, &e->slot))
        return skv__err(err, SKV_EINVAL, "fixed amount: slot '%s' is offered "
                        "by no plugin of this node", f->slot);
    if (skv_alloc_map_device_index(n->p[*pi].map, f->device_id, &e->device))
        return skv__err(err, SKV_EINVAL, "fixed amount: plugin '%s' has no "
                        "device '%s'", skv_plugin_name(n->p[*pi].plugin),
                        f->device_id);
    if (f->qty <= 0 || f->qty == SKV_QTY_UNLIMITED)
        return skv__err(err, SKV_EINVAL, "fixed amount of '%s' on device "
                        "'%s': %lld is not a positive amount", f->slot,
                        f->device_id, (long long)f->qty);
    e->qty = f->qty;
    return 0;
}

/* Sum the fixed amounts per (plugin, slot) into sums, mark their plugins,
 * check them against the request and take those plugins out of it. */
int skv__node_fixed_prepare(skv_node *n, const skv_device_amount *fx,
                            size_t nfx, bool *fixed_plugin, skv_error *err)
{
    skv_qty *sums = skv__calloc(n->np * SKV_ALLOC_MAP_SLOTS_MAX,
                                sizeof(*sums));
    if (!sums)
        return skv__err(err, SKV_ENOMEM, "node allocation: out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nfx; i++) {
        size_t pi;
        skv_alloc_entry e;
        rc = resolve(n, &fx[i], &pi, &e, err);
        if (rc == 0) {
            fixed_plugin[pi] = true;
            sums[pi * SKV_ALLOC_MAP_SLOTS_MAX + e.slot] += e.qty;
        }
    }
    for (size_t pi = 0; rc == 0 && pi < n->np; pi++) {
        const skv_alloc_map *m = n->p[pi].map;
        for (size_t s = 0; fixed_plugin[pi] && rc == 0 &&
                           s < skv_alloc_map_slot_count(m); s++) {
            skv_qty sum = sums[pi * SKV_ALLOC_MAP_SLOTS_MAX + s];
            if (WANT(n, pi, s) != 0 && WANT(n, pi, s) != sum)
                rc = skv__err(err, SKV_EINVAL, "slot '%s': the request asks "
                              "%lld, the fixed amounts sum to %lld",
                              skv_alloc_map_slot_name(m, s),
                              (long long)WANT(n, pi, s), (long long)sum);
            WANT(n, pi, s) = 0;
        }
    }
    skv__free(sums);
    return rc;
}

/* Claim the fixed amounts of plugin pi in one result. */
int skv__node_fixed_claim(skv_alloc_result **out, skv_node *n, size_t pi,
                          const skv_device_amount *fx, size_t nfx,
                          skv_error *err)
{
    skv_alloc_entry *ents = skv__calloc(nfx + 1, sizeof(*ents));
    if (!ents)
        return skv__err(err, SKV_ENOMEM, "node allocation: out of memory");
    size_t k = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < nfx; i++) {
        size_t p;
        rc = resolve(n, &fx[i], &p, &ents[k], err);
        k += rc == 0 && p == pi;
    }
    if (rc == 0)
        rc = skv_alloc_map_claim(out, n->p[pi].map, ents, k, err);
    skv__free(ents);
    return rc;
}
