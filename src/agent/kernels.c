/* The agent's kernel table and what a kernel holds: its pooled cpu/mem
 * amounts (the ledger the manager sees) and its node placement (cores,
 * NUMA memory, and exactly the accelerators the manager chose).
 * Fractional CPU amounts (0.5 core) share the slice's cores and are
 * enforced by the CPU quota only; whole cores are exclusive placements.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

skv__agent_kernel *skv__agent_kernel_find(const skv_agent *a, const char *id)
{
    for (size_t i = 0; id && i < a->nk; i++)
        if (strcmp(a->k[i]->req.kernel_id, id) == 0)
            return a->k[i];
    return NULL;
}

int skv__agent_kernel_add(skv_agent *a, skv__agent_kernel *k, skv_error *err)
{
    if (a->nk == a->capk) {
        size_t cap = a->capk ? a->capk * 2 : 16;
        void *p = skv__reallocarray(a->k, cap, sizeof(*a->k));
        if (!p)
            return skv__err(err, SKV_ENOMEM, "agent: out of memory");
        a->k = p;
        a->capk = cap;
    }
    a->k[a->nk++] = k;
    return 0;
}

void skv__agent_kernel_free(skv__agent_kernel *k)
{
    if (!k)
        return;
    skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &k->req);
    skv_node_placement_free(k->pl);
    skv__free(k->ssh_dir);
    skv__free(k);
}

void skv__agent_kernel_remove(skv_agent *a, skv__agent_kernel *k)
{
    for (size_t i = 0; i < a->nk; i++)
        if (a->k[i] == k) {
            memmove(&a->k[i], &a->k[i + 1], (a->nk - i - 1) * sizeof(*a->k));
            a->nk--;
            break;
        }
    skv__agent_kernel_free(k);
}

void skv__agent_kernel_release(skv_agent *a, skv__agent_kernel *k)
{
    if (k->pl)
        skv_node_release(a->node, k->pl, NULL);
    skv_node_placement_free(k->pl);
    k->pl = NULL;
    a->cpu_used -= k->cpu;
    a->mem_used -= k->mem;
    k->cpu = k->mem = 0;
}

/* The accelerator amounts of alloc[] as fixed amounts of plugin devices;
 * pooled cpu/mem summed into k. */
static int split_alloc(skv_agent *a, skv__agent_kernel *k,
                       skv_device_amount *fx, size_t *nfx, skv_error *err)
{
    const skv_proto_kernel_create *r = &k->req;
    for (size_t i = 0; i < r->n_alloc; i++) {
        const skv_proto_device_alloc *d = &r->alloc[i];
        const skv__agent_dev *dev = skv__agent_dev_find(a, d->device_id);
        if (dev && dev->excluded)
            return skv__err(err, SKV_EINVAL, "alloc: device '%s' is outside "
                            "this agent's accelerator slice", d->device_id);
        for (size_t j = 0; j < skv_slots_count(d->slots); j++) {
            const char *slot;
            skv_slot_kind kind;
            skv_qty q;
            skv_slots_at(d->slots, j, &slot, &kind, &q);
            size_t si;
            if (strcmp(slot, "cpu") == 0 && !dev)
                k->cpu += q;
            else if (strcmp(slot, "mem") == 0 && !dev)
                k->mem += q;
            else if (!dev)
                return skv__err(err, SKV_EINVAL, "alloc: this agent has no "
                                "device '%s'", d->device_id);
            else if (skv_alloc_map_slot_index(skv_node_map(a->node,
                                                           dev->plugin),
                                              slot, &si) != 0)
                return skv__err(err, SKV_EINVAL, "alloc: device '%s' has no "
                                "slot '%s'", d->device_id, slot);
            else if (q > 0)
                fx[(*nfx)++] = (skv_device_amount){dev->dev, slot, q};
        }
    }
    return 0;
}

/* Without alloc[] (a manager that left the choice to the agent): the
 * pooled amounts and the accelerator slots come from slots. */
static int from_slots(skv__agent_kernel *k, skv_slots *req, skv_error *err)
{
    const skv_slots *s = k->req.slots;
    for (size_t j = 0; j < skv_slots_count(s); j++) {
        const char *slot;
        skv_slot_kind kind;
        skv_qty q;
        skv_slots_at(s, j, &slot, &kind, &q);
        if (strcmp(slot, "cpu") == 0)
            k->cpu = q;
        else if (strcmp(slot, "mem") == 0)
            k->mem = q;
        else {
            int rc = skv_slots_set(req, slot, kind, q, err);
            if (rc)
                return rc;
        }
    }
    return 0;
}

static size_t alloc_entries(const skv_proto_kernel_create *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_alloc; i++)
        n += skv_slots_count(r->alloc[i].slots);
    return n;
}

static int ledger_check(const skv_agent *a, const skv__agent_kernel *k,
                        skv_error *err)
{
    if (k->cpu < 0 || k->mem < 0)
        return skv__err(err, SKV_EINVAL, "alloc: negative amount");
    if (k->cpu > a->cpu_cap - a->cpu_used)
        return skv__err(err, SKV_ENOSPC, "not enough cpu on agent '%s': "
                        "%lld asked, %lld of %lld free (milli-cores)",
                        a->agent_id, (long long)k->cpu,
                        (long long)(a->cpu_cap - a->cpu_used),
                        (long long)a->cpu_cap);
    if (k->mem > a->mem_cap - a->mem_used)
        return skv__err(err, SKV_ENOSPC, "not enough mem on agent '%s': "
                        "%lld bytes asked, %lld free", a->agent_id,
                        (long long)k->mem,
                        (long long)(a->mem_cap - a->mem_used));
    return 0;
}

static int place(skv_agent *a, skv__agent_kernel *k, skv_slots *req,
                 const skv_device_amount *fx, size_t nfx, bool restore,
                 skv_error *err)
{
    int rc = 0;
    if (!restore && k->cpu > 0 && k->cpu % SKV_QTY_SCALE == 0)
        rc = skv_slots_set(req, "cpu", SKV_SLOT_COUNT, k->cpu, err);
    if (rc == 0 && !restore && k->mem > 0)
        rc = skv_slots_set(req, "mem", SKV_SLOT_BYTES, k->mem, err);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.fixed = fx;
    o.nfixed = nfx;
    /* The session's NUMA policy (none: the node mapper's default). */
    if (rc == 0 && k->req.numa_policy && *k->req.numa_policy)
        rc = skv_node_policy_parse(&o.policy, k->req.numa_policy, err);
    if (rc == 0)
        rc = skv_node_alloc(&k->pl, a->node, req, &o, err);
    return rc;
}

int skv__agent_kernel_take(skv_agent *a, skv__agent_kernel *k,
                           const skv_device_amount *fixed, size_t nfixed,
                           skv_error *err)
{
    k->cpu = k->mem = 0;
    size_t nfx = 0;
    skv_device_amount *fx = skv__calloc(alloc_entries(&k->req) + 1,
                                        sizeof(*fx));
    skv_slots *req = NULL;
    int rc = fx ? skv_slots_new(&req, err)
                : skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc == 0 && k->req.n_alloc > 0)
        rc = split_alloc(a, k, fx, &nfx, err);
    else if (rc == 0)
        rc = from_slots(k, req, err);
    if (rc == 0)
        rc = ledger_check(a, k, err);
    if (rc == 0 && fixed)
        skv_slots_clear(req);
    if (rc == 0)
        rc = place(a, k, req, fixed ? fixed : fx, fixed ? nfixed : nfx,
                   fixed != NULL, err);
    if (rc == 0) {
        a->cpu_used += k->cpu;
        a->mem_used += k->mem;
    } else {
        k->cpu = k->mem = 0;
    }
    skv_slots_free(req);
    skv__free(fx);
    return rc;
}
