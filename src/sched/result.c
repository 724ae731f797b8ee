/* Pass results: built with offsets while the pass runs, then laid out in
 * one caller-owned block (one free releases everything).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "pass_int.h"

static int grow(void **p, uint32_t *cap, uint32_t need, size_t el)
{
    if (need <= *cap)
        return 0;
    uint32_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *n = skv__reallocarray(*p, nc, el);
    if (!n)
        return SKV_ENOMEM;
    *p = n;
    *cap = nc;
    return 0;
}

static int add_str(skv__rb *rb, const char *s, uint32_t *off)
{
    size_t n = strlen(s) + 1;
    if (rb->nstr + n > UINT32_MAX / 2 ||
        grow((void **)&rb->str, &rb->str_cap, rb->nstr + (uint32_t)n, 1))
        return SKV_ENOMEM;
    memcpy(rb->str + rb->nstr, s, n);
    *off = rb->nstr;
    rb->nstr += (uint32_t)n;
    return 0;
}

int skv__rb_add_placement(skv__rb *rb, const skv_sched *s, uint32_t si,
                          skv_error *err)
{
    const skv__session *x = s->sess[si];
    uint32_t nd = 0;
    for (uint32_t k = 0; k < x->nk; k++)
        nd += x->k[k].a.ndev;
    skv__rb_place p = {si, rb->nks, x->nk, 0, 0};
    if (grow((void **)&rb->pl, &rb->pl_cap, rb->npl + 1, sizeof(*rb->pl)) ||
        grow((void **)&rb->ks, &rb->ks_cap, rb->nks + x->nk, sizeof(*rb->ks)) ||
        grow((void **)&rb->ds, &rb->ds_cap, rb->nds + nd, sizeof(*rb->ds)) ||
        add_str(rb, x->id, &p.id_off) ||
        add_str(rb, s->groups[x->group]->name, &p.group_off))
        return skv__err(err, SKV_ENOMEM, "out of memory building the result");
    for (uint32_t k = 0; k < x->nk; k++) {
        const skv__kalloc *ka = &x->k[k].a;
        skv__rb_kernel *e = &rb->ks[rb->nks + k];
        e->kernel = k;
        e->dfirst = rb->nds;
        e->nd = ka->ndev;
        if (add_str(rb, s->agents[ka->agent]->id, &e->agent_off))
            return skv__err(err, SKV_ENOMEM, "out of memory building the result");
        if (ka->ndev)
            memcpy(&rb->ds[rb->nds], ka->dev, ka->ndev * sizeof(*ka->dev));
        rb->nds += ka->ndev;
    }
    rb->nks += x->nk;
    rb->pl[rb->npl++] = p;
    return 0;
}

int skv__rb_add_preemption(skv__rb *rb, const skv_sched *s, uint32_t victim,
                           uint32_t waiter, skv_sched_preempt_cause cause,
                           skv_error *err)
{
    skv__rb_preempt p = {victim, waiter, 0, 0, cause};
    if (grow((void **)&rb->pre, &rb->pre_cap, rb->npre + 1, sizeof(*rb->pre)) ||
        add_str(rb, s->sess[victim]->id, &p.victim_off) ||
        add_str(rb, s->sess[waiter]->id, &p.waiter_off))
        return skv__err(err, SKV_ENOMEM, "out of memory building the result");
    rb->pre[rb->npre++] = p;
    return 0;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

int skv__rb_finish(skv_sched_result **out, skv__rb *rb, const skv_sched *s,
                   int64_t now, skv_error *err)
{
    size_t slots_str = 0;
    for (uint8_t i = 0; i < s->nslots; i++)
        slots_str += strlen(s->slot_name[i]) + 1;
    size_t o_pl = align8(sizeof(skv_sched_result));
    size_t o_ks = o_pl + align8(rb->npl * sizeof(skv_sched_placement));
    size_t o_ds = o_ks + align8(rb->nks * sizeof(skv_sched_kernel_placement));
    size_t o_pre = o_ds + align8(rb->nds * sizeof(skv_sched_device_share));
    size_t o_sn = o_pre + align8(rb->npre * sizeof(skv_sched_preemption));
    size_t o_str = o_sn + align8(s->nslots * sizeof(char *));
    char *b = skv__calloc(1, o_str + rb->nstr + slots_str + 1);
    if (!b)
        return skv__err(err, SKV_ENOMEM, "out of memory building the result");
    skv_sched_result *r = (skv_sched_result *)b;
    skv_sched_placement *pl = (skv_sched_placement *)(b + o_pl);
    skv_sched_kernel_placement *ks = (skv_sched_kernel_placement *)(b + o_ks);
    skv_sched_device_share *ds = (skv_sched_device_share *)(b + o_ds);
    skv_sched_preemption *pre = (skv_sched_preemption *)(b + o_pre);
    const char **sn = (const char **)(b + o_sn);
    char *str = b + o_str;
    if (rb->nstr)
        memcpy(str, rb->str, rb->nstr);
    if (rb->nds)
        memcpy(ds, rb->ds, rb->nds * sizeof(*ds));
    for (uint32_t i = 0; i < rb->nks; i++)
        ks[i] = (skv_sched_kernel_placement){rb->ks[i].kernel,
                                             str + rb->ks[i].agent_off,
                                             rb->ks[i].nd, ds + rb->ks[i].dfirst};
    for (uint32_t i = 0; i < rb->npl; i++)
        pl[i] = (skv_sched_placement){str + rb->pl[i].id_off,
                                      str + rb->pl[i].group_off, rb->pl[i].nk,
                                      ks + rb->pl[i].kfirst};
    for (uint32_t i = 0; i < rb->npre; i++)
        pre[i] = (skv_sched_preemption){str + rb->pre[i].victim_off,
                                        str + rb->pre[i].waiter_off,
                                        rb->pre[i].cause};
    char *sp = str + rb->nstr;
    for (uint8_t i = 0; i < s->nslots; i++) {
        size_t n = strlen(s->slot_name[i]) + 1;
        memcpy(sp, s->slot_name[i], n);
        sn[i] = sp;
        sp += n;
    }
    r->now_ms = now;
    r->n_placements = rb->npl;
    r->placements = pl;
    r->n_preemptions = rb->npre;
    r->preemptions = pre;
    r->n_considered = rb->considered;
    r->n_slots = s->nslots;
    r->slot_names = sn;
    *out = r;
    return 0;
}

void skv__rb_fini(skv__rb *rb)
{
    skv__free(rb->pl);
    skv__free(rb->ks);
    skv__free(rb->ds);
    skv__free(rb->pre);
    skv__free(rb->str);
    memset(rb, 0, sizeof(*rb));
}

SKV_EXTERN void skv_sched_result_free(skv_sched_result *r)
{
    skv__free(r);
}

SKV_EXTERN int skv_sched_session_placement(skv_sched_result **out,
                                           const skv_sched *s, const char *id,
                                           skv_error *err)
{
    uint32_t si;
    if (!out || !s)
        return skv__err(err, SKV_EINVAL, "session_placement: NULL argument");
    skv__session *x = skv__sched_session(s, id, &si, err);
    if (!x)
        return SKV_ENOENT;
    if (x->state != SKV_SCHED_SCHEDULED && x->state != SKV_SCHED_RUNNING)
        return skv__err(err, SKV_ESTATE, "session '%s' is %s and holds nothing",
                        id, skv_sched_state_name(x->state));
    skv__rb rb;
    memset(&rb, 0, sizeof(rb));
    int rc = skv__rb_add_placement(&rb, s, si, err);
    if (!rc)
        rc = skv__rb_finish(out, &rb, s, x->started, err);
    skv__rb_fini(&rb);
    return rc;
}
