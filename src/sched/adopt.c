/* skv_sched_adopt: re-admit a session that already holds resources (a
 * manager restarting from its database). The placement is a fact, not a
 * decision: constraints, quotas and concurrency limits are not applied
 * again, but capacity is - an adoption that no longer fits (the agent came
 * back smaller, or two stored sessions claim the same device) is refused
 * whole, so the model never holds more than the agents have. Once adopted,
 * the session is linked exactly like one a pass committed (the same
 * allocation-map results, agent lists and owner charges), so every later
 * call and skv_sched_check treat it the same.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

#define UNIT SKV_QTY_SCALE

static int find_device(uint32_t *out, const skv__agent *a, const char *id)
{
    for (uint32_t i = 0; i < a->d.ndev; i++)
        if (strcmp(a->d.dev[i].id, id) == 0) {
            *out = i;
            return 0;
        }
    return SKV_ENOENT;
}

/* One named share -> indexes, checked against the device's slots. */
static int resolve_share(skv_sched_device_share *out, const skv_sched *s,
                         const skv__agent *a, const skv_sched_adopt_share *in,
                         uint32_t k, skv_error *err)
{
    if (!in->device_id || !in->slot)
        return skv__err(err, SKV_EINVAL, "kernel %u: share without a device "
                        "id or slot", k);
    uint32_t dv = 0;
    if (find_device(&dv, a, in->device_id))
        return skv__err(err, SKV_ENOENT, "kernel %u: agent '%s' has no device "
                        "'%s'", k, a->id, in->device_id);
    uint8_t slot = skv__sched_slot_find(s, in->slot);
    if (slot == SKV_SCHED_NO_SLOT)
        return skv__err(err, SKV_ENOENT, "kernel %u: no slot '%s'", k, in->slot);
    const skv_sched_device_view *v = &a->d.dev[dv];
    if (in->whole ? slot != v->whole_slot : slot != v->share_slot)
        return skv__err(err, SKV_EINVAL, "kernel %u: device '%s' of agent '%s' "
                        "is not taken %s through slot '%s'", k, in->device_id,
                        a->id, in->whole ? "whole" : "shared", in->slot);
    if (in->whole ? in->amount != UNIT
                  : (in->amount <= 0 || in->amount > v->share_capacity))
        return skv__err(err, SKV_EINVAL, "kernel %u: device '%s': bad amount "
                        "%lld", k, in->device_id, (long long)in->amount);
    *out = (skv_sched_device_share){dv, slot, in->whole, in->amount};
    return 0;
}

/* The kernel's device shares: each device once, and per device slot the
 * shares add up to exactly the kernel's request (what release takes back). */
static int resolve_kernel(skv__kernel *kn, const skv_sched *s,
                          const skv__agent *a, const skv_sched_adopt_kernel *in,
                          uint32_t k, skv_error *err)
{
    if (in->n_shares > SKV_SCHED_DEVICES_MAX || (in->n_shares && !in->shares))
        return skv__err(err, SKV_EINVAL, "kernel %u: %zu shares (at most %d, "
                        "with an array)", k, in->n_shares, SKV_SCHED_DEVICES_MAX);
    skv__kalloc *ka = &kn->a;
    if (in->n_shares && !(ka->dev = skv__calloc(in->n_shares, sizeof(*ka->dev))))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv_qty sum[NSL] = {0};
    uint64_t seen = 0;
    for (size_t i = 0; i < in->n_shares; i++) {
        skv_sched_device_share *sh = &ka->dev[i];
        int rc = resolve_share(sh, s, a, &in->shares[i], k, err);
        if (rc)
            return rc;
        if (seen & (1ull << sh->device))
            return skv__err(err, SKV_EINVAL, "kernel %u: device '%s' listed "
                            "twice", k, in->shares[i].device_id);
        seen |= 1ull << sh->device;
        sum[sh->slot] += sh->amount;
        ka->ndev = (uint16_t)(i + 1);
    }
    for (int j = 0; j < NSL; j++)
        if ((a->d.dev_slot_mask & (1u << j)) && sum[j] != kn->req[j])
            return skv__err(err, SKV_EINVAL, "kernel %u: slot '%s' requests "
                            "%lld but the shares on agent '%s' sum to %lld", k,
                            s->slot_name[j], (long long)kn->req[j], a->id,
                            (long long)sum[j]);
    return 0;
}

/* Agents of every kernel, in the session's group, laid out as its cluster
 * mode allows. */
static int resolve_agents(uint32_t *ag, const skv_sched *s,
                          const skv__session *x,
                          const skv_sched_adopt_kernel *kernels, skv_error *err)
{
    for (uint32_t k = 0; k < x->nk; k++) {
        const skv__agent *a = skv__sched_agent(s, kernels[k].agent_id, &ag[k], err);
        if (!a) {
            skv__err_prefix(err, "kernel %u", k);
            return SKV_ENOENT;
        }
        if (a->group != x->group)
            return skv__err(err, SKV_EINVAL, "kernel %u: agent '%s' is in "
                            "resource group '%s', the session in '%s'", k,
                            a->id, s->groups[a->group]->name,
                            s->groups[x->group]->name);
        for (uint32_t j = 0; j < k; j++) {
            if (x->mode == SKV_SCHED_SINGLE_NODE && ag[j] != ag[k])
                return skv__err(err, SKV_EINVAL, "single-node session on "
                                "two agents ('%s' and '%s')",
                                s->agents[ag[j]]->id, a->id);
            if (x->one_per_agent && ag[j] == ag[k])
                return skv__err(err, SKV_EINVAL, "kernels %u and %u share "
                                "agent '%s' (one_kernel_per_agent)", j, k, a->id);
        }
        int rc = resolve_kernel(&x->k[k], s, a, &kernels[k], k, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* Does kernel k fit agent a now (earlier kernels already applied)? */
static int fits(const skv_sched *s, const skv__agent *a, const skv__kernel *kn,
                uint32_t k, skv_error *err)
{
    for (int j = 0; j < NSL; j++) {
        if (!kn->req[j] || (a->d.dev_slot_mask & (1u << j)) ||
            a->cap[j] == SKV_QTY_UNLIMITED)
            continue;
        if (kn->req[j] > a->cap[j] - a->d.used[j])
            return skv__err(err, SKV_ENOSPC, "agent '%s' slot '%s': kernel %u "
                            "holds %lld but only %lld is free", a->id,
                            s->slot_name[j], k, (long long)kn->req[j],
                            (long long)(a->cap[j] - a->d.used[j]));
    }
    for (uint16_t i = 0; i < kn->a.ndev; i++) {
        const skv_sched_device_share *sh = &kn->a.dev[i];
        const skv_sched_device_view *v = &a->d.dev[sh->device];
        bool ok = sh->whole ? !v->whole_taken && v->share_used == 0
                            : !v->whole_taken &&
                                  sh->amount <= v->share_capacity - v->share_used;
        if (!ok)
            return skv__err(err, SKV_ENOSPC, "agent '%s' slot '%s': device '%s' "
                            "has no room for kernel %u", a->id,
                            s->slot_name[sh->slot], v->id, k);
    }
    return 0;
}

/* Take the shares on the agent's real allocation map, as a pass would. */
static int claim(const skv_sched *s, skv__agent *a, skv__kalloc *ka,
                 skv_error *err)
{
    if (!ka->ndev)
        return 0;
    skv_alloc_entry e[SKV_SCHED_DEVICES_MAX];
    for (uint16_t i = 0; i < ka->ndev; i++)
        e[i] = (skv_alloc_entry){a->mslot[ka->dev[i].slot], ka->dev[i].device,
                                 ka->dev[i].amount};
    if (!(ka->res = skv__calloc(1, sizeof(*ka->res))))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv_error me = SKV_ERROR_INIT;
    int rc = skv_alloc_map_claim(&ka->res[0], a->map, e, ka->ndev, &me);
    if (rc) {
        skv__free(ka->res);
        ka->res = NULL;
        if (rc == SKV_ENOMEM)
            return skv__err(err, SKV_ENOMEM, "out of memory");
        return skv__err(err, SKV_ENOSPC, "agent '%s' slot '%s': %s", a->id,
                        s->slot_name[ka->dev[0].slot], me.message);
    }
    ka->nres = 1;
    return 0;
}

static void unplace(skv_sched *s, skv__session *x)
{
    for (uint32_t k = x->nk; k-- > 0;) {
        skv__kalloc *ka = &x->k[k].a;
        if (ka->agent == SKV__NONE)
            continue;
        skv__agent *a = s->agents[ka->agent];
        skv__sched_map_release(a, ka);
        skv__sched_agent_release(s, a, x->k[k].req, ka->dev, ka->ndev);
        ka->agent = SKV__NONE;
    }
}

/* All kernels onto their agents (maps and mirrors) or none. */
static int place_all(skv_sched *s, skv__session *x, const uint32_t *ag,
                     skv_error *err)
{
    for (uint32_t k = 0; k < x->nk; k++) {
        skv__agent *a = s->agents[ag[k]];
        skv__kalloc *ka = &x->k[k].a;
        int rc = fits(s, a, &x->k[k], k, err);
        if (!rc)
            rc = claim(s, a, ka, err);
        if (rc) {
            unplace(s, x);
            return rc;
        }
        skv__sched_agent_apply(s, a, x->k[k].req, ka->dev, ka->ndev);
        ka->agent = ag[k];
    }
    return 0;
}

static int adopt_args(const skv_sched *s, const skv_sched_session_spec *sp,
                      const skv_sched_adopt_kernel *kernels, size_t n_kernels,
                      skv_sched_state state, skv_error *err)
{
    if (!s || !sp || (!kernels && n_kernels))
        return skv__err(err, SKV_EINVAL, "adopt: NULL argument");
    if (sp->version != SKV_SCHED_SESSION_SPEC_VERSION)
        return skv__err(err, SKV_EVERSION, "session spec version %u, expected %u",
                        sp->version, SKV_SCHED_SESSION_SPEC_VERSION);
    int rc = skv__sched_name_check("session id", sp->id, err);
    if (rc)
        return rc;
    if (state != SKV_SCHED_SCHEDULED && state != SKV_SCHED_RUNNING)
        return skv__err(err, SKV_EINVAL, "session '%s': adopted state must be "
                        "scheduled or running, not %s", sp->id,
                        skv_sched_state_name(state));
    if (n_kernels != sp->n_kernels)
        return skv__err(err, SKV_EINVAL, "session '%s': %zu kernel placements "
                        "for %zu kernels", sp->id, n_kernels, sp->n_kernels);
    if (skv__hmap_get(&s->sess_ix, sp->id) != SKV__NONE)
        return skv__err(err, SKV_EEXIST, "session '%s' already exists", sp->id);
    return 0;
}

static int owners_of(skv_sched *s, skv__session *x,
                     const skv_sched_session_spec *sp, skv_error *err)
{
    const char *names[3] = {sp->domain, sp->project, sp->user};
    for (int sc = 0; sc < SKV_SCHED_SCOPE_COUNT; sc++) {
        int rc = skv__sched_owner(s, &x->owner[sc], (skv_sched_scope)sc,
                                  names[sc] ? names[sc] : "", err);
        if (rc)
            return rc;
    }
    return skv__sched_session_gq(s, x, err);
}

/* Link the placed session like a pass commit: through the pending list, so
 * the owners' pending and active counts move exactly as they would. */
static int link_session(skv_sched *s, skv__session *x, int64_t at,
                        skv_error *err)
{
    uint32_t si = 0;
    int rc = skv__sched_session_link(s, x, &si, err);
    if (rc)
        return rc;
    skv__sched_pending_add(s, si);
    rc = skv__sched_commit(s, si, at, err);
    if (rc) {
        skv__sched_pending_del(s, si);
        skv__hmap_del(&s->sess_ix, x->id);
        s->sess[si] = NULL;
        s->sess_free[s->nsess_free++] = si;
        return skv__err(err, rc, "out of memory");
    }
    return 0;
}

SKV_EXTERN int skv_sched_adopt(skv_sched *s, const skv_sched_session_spec *sp,
                               const skv_sched_adopt_kernel *kernels,
                               size_t n_kernels, skv_sched_state state,
                               int64_t submitted_ms, int64_t started_ms,
                               skv_error *err)
{
    int rc = adopt_args(s, sp, kernels, n_kernels, state, err);
    if (rc)
        return rc;
    uint8_t n0 = s->nslots;
    skv__session *x = NULL;
    uint32_t *ag = NULL;
    bool placed = false;
    rc = skv__sched_session_build(&x, s, sp, err);
    if (!rc && !(ag = skv__calloc(x->nk, sizeof(*ag))))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (!rc)
        rc = resolve_agents(ag, s, x, kernels, err);
    if (!rc && !(rc = place_all(s, x, ag, err)))
        placed = true;
    if (!rc)
        rc = owners_of(s, x, sp, err);
    if (!rc)
        rc = link_session(s, x, started_ms, err);
    skv__free(ag);
    if (rc) {
        if (placed)
            unplace(s, x);
        skv__sched_session_free(x);
        while (s->nslots > n0)
            skv__free(s->slot_name[--s->nslots]);
        skv__err_prefix(err, "adopt session '%s'", sp->id);
        return rc;
    }
    x->submitted = submitted_ms;
    x->started = started_ms;
    x->seq = s->next_seq++;
    x->state = state;
    s->groups[x->group]->nlive++;
    return 0;
}
