/* The node mapper: one allocation (accelerators -> cores -> memory),
 * atomic through rollback, and its release.
 * SPDX-License-Identifier: Apache-2.0 */
#include "node_internal.h"

#define WANT(n, pi, s) ((n)->want[(pi) * SKV_ALLOC_MAP_SLOTS_MAX + (s)])

/* Route every request entry to its plugin's slot; returns the count of
 * non-zero amounts in *nwants. */
static int partition(skv_node *n, const skv_slots *req, size_t *nwants,
                     skv_error *err)
{
    memset(n->want, 0, n->np * SKV_ALLOC_MAP_SLOTS_MAX * sizeof(skv_qty));
    *nwants = 0;
    for (size_t i = 0; i < skv_slots_count(req); i++) {
        const char *name;
        skv_slot_kind kind;
        skv_qty qty;
        skv_slots_at(req, i, &name, &kind, &qty);
        size_t pi = 0, s = 0;
        while (pi < n->np &&
               skv_alloc_map_slot_index(n->p[pi].map, name, &s) != 0)
            pi++;
        if (pi == n->np)
            return skv__err(err, SKV_EINVAL, "slot '%s' is offered by no "
                            "plugin of this node", name);
        skv_alloc_slot_spec spec;
        skv_alloc_map_slot_spec(n->p[pi].map, s, &spec);
        if (spec.kind != kind)
            return skv__err(err, SKV_EINVAL, "slot '%s': requested as %s, "
                            "the node holds %s", name, skv_slot_kind_name(kind),
                            skv_slot_kind_name(spec.kind));
        WANT(n, pi, s) = qty;
        *nwants += qty != 0;
    }
    return 0;
}

static int place_accel(skv_alloc_result **out, skv_node *n, size_t pi,
                       size_t s, skv_qty want, const skv__node_step *st,
                       skv_error *err)
{
    skv_alloc_map *m = n->p[pi].map;
    skv_alloc_constraints c = SKV_ALLOC_CONSTRAINTS_INIT;
    if (want > 0 && want % SKV_QTY_SCALE == 0 && skv__node_whole_slot(m, s) &&
        skv__node_pick_devices(n, pi, s, (size_t)(want / SKV_QTY_SCALE), st)) {
        c.devices = n->pick;
        c.device_count = (size_t)(want / SKV_QTY_SCALE);
    }
    return skv_alloc_map_alloc_slot(out, m, s, want, &c, err);
}

static void rollback(skv_node *n, skv_node_placement *a)
{
    while (a->nres > 0) {
        skv__node_res *r = &a->res[--a->nres];
        skv_alloc_map_release(n->p[r->plugin].map, r->r, NULL);
        skv_alloc_result_free(r->r);
    }
}

/* The caller's fixed amounts of one allocation. */
typedef struct fixed_ctx {
    const skv_device_amount *fx;
    size_t nfx;
    bool *plugin;           /* [np] plugins whose amounts are fixed */
} fixed_ctx;

/* Remember where the fixed amounts of plugin pi landed, so that the placed
 * steps follow them (cores near accelerators, memory near cores). */
static void note_nodes(skv_node *n, size_t pi, skv__node_step *st,
                       const skv_alloc_result *r)
{
    const skv_alloc_map *m = n->p[pi].map;
    if (n->p[pi].role == SKV__NODE_ACCEL)
        skv__node_collect_nodes(st->accel_nodes, &st->naccel_nodes,
                                SKV__ARRAY_LEN(st->accel_nodes), m, r);
    else if (n->p[pi].role == SKV__NODE_CPU)
        skv__node_collect_nodes(st->core_nodes, &st->ncore_nodes,
                                SKV__ARRAY_LEN(st->core_nodes), m, r);
}

/* Place every non-zero slot of plugins with the given role; plugins with
 * fixed amounts take exactly those. */
static int place_role(skv_node_placement *a, skv_node *n, skv__node_role role,
                      skv__node_step *st, const fixed_ctx *fc,
                      skv_error *err)
{
    for (size_t pi = 0; pi < n->np; pi++) {
        if (n->p[pi].role != role)
            continue;
        if (fc->plugin && fc->plugin[pi]) {
            skv_alloc_result *r = NULL;
            int rc = skv__node_fixed_claim(&r, n, pi, fc->fx, fc->nfx, err);
            if (rc)
                return rc;
            a->res[a->nres++] = (skv__node_res){pi, r};
            note_nodes(n, pi, st, r);
            continue;
        }
        skv_alloc_map *m = n->p[pi].map;
        for (size_t s = 0; s < skv_alloc_map_slot_count(m); s++) {
            skv_qty want = WANT(n, pi, s);
            if (want == 0)
                continue;
            skv_alloc_result *r = NULL;
            int rc;
            if (role == SKV__NODE_ACCEL)
                rc = place_accel(&r, n, pi, s, want, st, err);
            else if (role == SKV__NODE_CPU && s == n->cpu_slot)
                rc = skv__node_place_cpu(&r, n, st, err);
            else if (role == SKV__NODE_MEM && s == n->mem_slot)
                rc = skv__node_place_mem(&r, n, st, err);
            else
                rc = skv_alloc_map_alloc_slot(&r, m, s, want, NULL, err);
            if (rc)
                return rc;
            a->res[a->nres++] = (skv__node_res){pi, r};
            if (role == SKV__NODE_ACCEL)
                skv__node_collect_nodes(st->accel_nodes, &st->naccel_nodes,
                                        SKV__ARRAY_LEN(st->accel_nodes), m, r);
        }
    }
    return 0;
}

static int options(skv__node_step *st, unsigned *flags, fixed_ctx *fc,
                   const skv_node_alloc_options *o, skv_error *err)
{
    memset(st, 0, sizeof(*st));
    memset(fc, 0, sizeof(*fc));
    st->policy = SKV_NODE_PREFER_SINGLE;
    *flags = 0;
    if (!o)
        return 0;
    /* Version 1 ends before the fixed amounts. */
    if (o->version != 1 && o->version != SKV_NODE_ALLOC_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "node allocation options: version "
                        "%u, this library knows 1..%u", o->version,
                        SKV_NODE_ALLOC_OPTIONS_VERSION);
    if (o->version >= 2 && o->nfixed > 0 && !o->fixed)
        return skv__err(err, SKV_EINVAL, "node allocation options: nfixed "
                        "is %zu but fixed is NULL", o->nfixed);
    if (o->version >= 2) {
        fc->fx = o->fixed;
        fc->nfx = o->nfixed;
    }
    if (o->policy != SKV_NODE_POLICY_DEFAULT &&
        o->policy != SKV_NODE_PREFER_SINGLE &&
        o->policy != SKV_NODE_INTERLEAVED)
        return skv__err(err, SKV_EINVAL, "node allocation options: invalid "
                        "policy %d", (int)o->policy);
    if (o->flags & ~SKV_NODE_NO_CONFIG)
        return skv__err(err, SKV_EINVAL, "node allocation options: unknown "
                        "flags 0x%x", o->flags & ~SKV_NODE_NO_CONFIG);
    if (o->policy != SKV_NODE_POLICY_DEFAULT)
        st->policy = o->policy;
    *flags = o->flags;
    return 0;
}

int skv_node_alloc(skv_node_placement **out, skv_node *node,
                   const skv_slots *request, const skv_node_alloc_options *opts,
                   skv_error *err)
{
    if (!out || !node || !request)
        return skv__err(err, SKV_EINVAL, "skv_node_alloc: %s is NULL",
                        !out ? "out" : !node ? "node" : "request");
    skv__node_step st;
    unsigned flags;
    size_t nwants;
    fixed_ctx fc;
    int rc = options(&st, &flags, &fc, opts, err);
    if (rc == 0)
        rc = partition(node, request, &nwants, err);
    if (rc == 0 && fc.nfx > 0) {
        fc.plugin = skv__calloc(node->np, sizeof(*fc.plugin));
        rc = fc.plugin ? skv__node_fixed_prepare(node, fc.fx, fc.nfx,
                                                 fc.plugin, err)
                       : skv__err(err, SKV_ENOMEM, "node allocation: out of "
                                  "memory");
    }
    if (rc) {
        skv__free(fc.plugin);
        return rc;
    }
    if (node->cpu >= 0)
        st.cpu_want = WANT(node, (size_t)node->cpu, node->cpu_slot);
    if (node->mem >= 0)
        st.mem_want = WANT(node, (size_t)node->mem, node->mem_slot);
    skv_node_placement *a = skv__calloc(1, sizeof(*a));
    if (a)
        a->res = skv__calloc(nwants + node->np + 1, sizeof(*a->res));
    if (!a || !a->res) {
        skv__free(a);
        skv__free(fc.plugin);
        return skv__err(err, SKV_ENOMEM, "node allocation: out of memory");
    }
    static const skv__node_role order[] = {SKV__NODE_ACCEL, SKV__NODE_CPU,
                                           SKV__NODE_MEM};
    for (size_t i = 0; rc == 0 && i < SKV__ARRAY_LEN(order); i++)
        rc = place_role(a, node, order[i], &st, &fc, err);
    skv__free(fc.plugin);
    if (rc == 0)
        rc = skv__node_finish(a, node, &st, flags & SKV_NODE_NO_CONFIG, err);
    if (rc) {
        rollback(node, a);
        skv_node_placement_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

int skv_node_release(skv_node *node, skv_node_placement *a, skv_error *err)
{
    if (!node || !a)
        return skv__err(err, SKV_EINVAL, "skv_node_release: %s is NULL",
                        node ? "allocation" : "node");
    if (a->released)
        return skv__err(err, SKV_ESTATE, "node allocation already released");
    /* Check everything first so that a foreign allocation changes nothing. */
    for (size_t i = 0; i < a->nres; i++) {
        skv_alloc_entry e;
        const skv__node_res *r = &a->res[i];
        if (r->plugin >= node->np)
            return skv__err(err, SKV_EINVAL, "allocation is not of this node");
        const skv_alloc_map *m = node->p[r->plugin].map;
        for (size_t j = 0; skv_alloc_result_at(r->r, j, &e) == 0; j++)
            if (skv_alloc_map_used(m, e.slot, e.device) < e.qty)
                return skv__err(err, SKV_EINVAL, "allocation is not of this "
                                "node (more than in use)");
    }
    for (size_t i = a->nres; i-- > 0;)
        skv_alloc_map_release(node->p[a->res[i].plugin].map, a->res[i].r,
                              NULL);
    a->released = 1;
    return 0;
}

void skv_node_placement_free(skv_node_placement *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->nres; i++)
        skv_alloc_result_free(a->res[i].r);
    skv__free(a->res);
    skv__free(a->amounts);
    skv__free(a->cpuset);
    skv__free(a->mems);
    skv_container_config_free(a->cfg);
    skv__free(a);
}
