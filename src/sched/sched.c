/* Scheduler object: creation, destruction, resource groups and small
 * helpers shared by the other files.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"
#include "selector_frag.h"

int skv__sched_push(void **arr, uint32_t *len, uint32_t *cap, size_t elsz,
                    const void *el, skv_error *err)
{
    if (*len == *cap) {
        uint32_t ncap = *cap ? *cap * 2 : 8;
        void *n = skv__reallocarray(*arr, ncap, elsz);
        if (!n)
            return skv__err(err, SKV_ENOMEM, "sched: out of memory");
        *arr = n;
        *cap = ncap;
    }
    memcpy((char *)*arr + (size_t)*len * elsz, el, elsz);
    (*len)++;
    return 0;
}

int skv__sched_room(void **arr, uint32_t len, uint32_t *cap, size_t elsz,
                    skv_error *err)
{
    if (len < *cap)
        return 0;
    if (*cap > UINT32_MAX / 2)
        return skv__err(err, SKV_ENOMEM, "sched: table full");
    uint32_t ncap = *cap ? *cap * 2 : 8;
    void *n = skv__reallocarray(*arr, ncap, elsz);
    if (!n)
        return skv__err(err, SKV_ENOMEM, "sched: out of memory");
    *arr = n;
    *cap = ncap;
    return 0;
}

int skv__sched_table_room(void **tab, uint32_t **freel, uint32_t len,
                          uint32_t *cap, size_t elsz, skv_error *err)
{
    if (len < *cap)
        return 0;
    if (*cap > UINT32_MAX / 2)
        return skv__err(err, SKV_ENOMEM, "sched: table full");
    uint32_t ncap = *cap ? *cap * 2 : 8;
    /* the table may end up larger than *cap when the free list fails:
     * harmless, the next call grows it again */
    void *n = skv__reallocarray(*tab, ncap, elsz);
    if (!n)
        return skv__err(err, SKV_ENOMEM, "sched: out of memory");
    *tab = n;
    uint32_t *f = skv__reallocarray(*freel, ncap, sizeof(*f));
    if (!f)
        return skv__err(err, SKV_ENOMEM, "sched: out of memory");
    *freel = f;
    *cap = ncap;
    return 0;
}

static int builtins(skv_sched *s, skv_error *err)
{
    static const skv_sched_selector *const sels[] = {
        &skv__sel_concentrated, &skv__sel_dispersed, &skv__sel_roundrobin};
    static const skv_sched_sequencer *const seqs[] = {
        &skv__seq_fifo, &skv__seq_lifo, &skv__seq_priority, &skv__seq_drf,
        &skv__seq_fairshare};
    for (size_t i = 0; i < SKV__ARRAY_LEN(sels); i++) {
        int rc = skv_sched_register_selector(s, sels[i], err);
        if (rc)
            return rc;
    }
    /* fragmentation-aware selector (selector_frag.c) */
    int frc = skv_sched_register_selector(s, skv__sched_selector_frag(), err);
    if (frc)
        return frc;
    for (size_t i = 0; i < SKV__ARRAY_LEN(seqs); i++) {
        int rc = skv_sched_register_sequencer(s, seqs[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

SKV_EXTERN int skv_sched_new(skv_sched **out, const skv_sched_options *opts,
                             skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "skv_sched_new: out is NULL");
    skv_sched_options def = SKV_SCHED_OPTIONS_INIT;
    if (!opts)
        opts = &def;
    if (opts->version != SKV_SCHED_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION,
                        "skv_sched_options version %u, expected %u",
                        opts->version, SKV_SCHED_OPTIONS_VERSION);
    if (opts->fairshare_half_life_ms <= 0)
        return skv__err(err, SKV_EINVAL,
                        "fairshare_half_life_ms must be > 0 (got %lld)",
                        (long long)opts->fairshare_half_life_ms);
    skv_sched *s = skv__calloc(1, sizeof(*s));
    if (!s)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    s->half_life_ms = opts->fairshare_half_life_ms;
    s->next_seq = 1;
    int rc = builtins(s, err);
    if (rc) {
        skv_sched_free(s);
        return rc;
    }
    *out = s;
    return 0;
}


static void session_free(skv__session *x)
{
    if (!x)
        return;
    for (uint32_t k = 0; k < x->nk; k++) {
        skv__free(x->k[k].a.dev);
        /* only at skv_sched_free can a session still hold map results */
        for (uint8_t i = 0; i < x->k[k].a.nres; i++)
            skv_alloc_result_free(x->k[k].a.res[i]);
        skv__free(x->k[k].a.res);
    }
    skv__free(x->k);
    skv__free(x->id);
    skv__free(x->arch);
    for (size_t i = 0; i < x->nmodels; i++)
        skv__free(x->models[i]);
    skv__free(x->models);
    for (size_t i = 0; i < x->ndesignated; i++)
        skv__free(x->designated[i]);
    skv__free(x->designated);
    for (size_t i = 0; i < x->nneed_labels; i++) {
        skv__free((char *)x->need_labels[i].key);
        skv__free((char *)x->need_labels[i].value);
    }
    skv__free(x->need_labels);
    for (size_t i = 0; i < x->ndeps; i++)
        skv__free(x->deps[i]);
    skv__free(x->deps);
    skv__free(x->reason.detail_owned);
    skv__free(x);
}

void skv__sched_session_free(skv__session *x) { session_free(x); }

void skv__sched_agent_free(skv__agent *a)
{
    if (!a)
        return;
    skv__free(a->id);
    skv__free(a->arch);
    skv__free(a->gpu_model);
    for (size_t i = 0; i < a->nlabels; i++) {
        skv__free((char *)a->labels[i].key);
        skv__free((char *)a->labels[i].value);
    }
    skv__free(a->labels);
    for (uint32_t i = 0; i < a->d.ndev; i++)
        skv__free((char *)a->d.dev[i].id);
    skv__free(a->d.dev);
    skv__sched_health_free(a);
    skv_alloc_map_free(a->map);
    skv__sched_agent_topology_free(a);
    skv__free(a->allocs);
    skv__free(a);
}

SKV_EXTERN void skv_sched_free(skv_sched *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->ngroups; i++)
        skv__sched_group_free(s->groups[i]);
    skv__free(s->groups);
    for (uint32_t i = 0; i < s->nagents_tab; i++)
        skv__sched_agent_free(s->agents[i]);
    skv__free(s->agents);
    skv__free(s->agent_free);
    skv__hmap_fini(&s->agent_ix);
    for (uint32_t i = 0; i < s->nsess_tab; i++)
        session_free(s->sess[i]);
    skv__free(s->sess);
    skv__free(s->sess_free);
    skv__hmap_fini(&s->sess_ix);
    for (uint32_t i = 0; i < s->nowners; i++) {
        skv__free(s->owners[i]->name);
        skv__sched_owner_gq_free(s->owners[i]);
        skv__free(s->owners[i]);
    }
    skv__free(s->owners);
    for (int i = 0; i < SKV_SCHED_SCOPE_COUNT; i++)
        skv__hmap_fini(&s->owner_ix[i]);
    for (uint8_t i = 0; i < s->nslots; i++)
        skv__free(s->slot_name[i]);
    skv__free(s->selectors);
    skv__free(s->sequencers);
    skv__sched_plugins_close(s);
    skv__free(s);
}

skv__group *skv__sched_group(const skv_sched *s, const char *name,
                             uint32_t *idx)
{
    for (uint32_t i = 0; i < s->ngroups; i++)
        if (strcmp(s->groups[i]->name, name) == 0) {
            if (idx)
                *idx = i;
            return s->groups[i];
        }
    return NULL;
}

int skv__sched_name_check(const char *what, const char *name, skv_error *err)
{
    if (!name || !*name)
        return skv__err(err, SKV_EINVAL, "%s is empty", what);
    size_t n = strlen(name);
    if (n >= SKV_SCHED_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "%s is longer than %d bytes", what,
                        SKV_SCHED_NAME_MAX - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return skv__err(err, SKV_EINVAL,
                            "%s has a control character at byte %zu", what, i);
    return 0;
}
