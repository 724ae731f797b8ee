/* Plugin registries (selectors, sequencers), loading plugins from shared
 * objects, and resource groups, which instantiate one of each.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <string.h>

#include "sched_int.h"
#include "selector_frag_index.h"

static const skv_sched_selector *find_sel(const skv_sched *s, const char *n)
{
    for (uint32_t i = 0; i < s->nselectors; i++)
        if (strcmp(s->selectors[i]->name, n) == 0)
            return s->selectors[i];
    return NULL;
}

static const skv_sched_sequencer *find_seq(const skv_sched *s, const char *n)
{
    for (uint32_t i = 0; i < s->nsequencers; i++)
        if (strcmp(s->sequencers[i]->name, n) == 0)
            return s->sequencers[i];
    return NULL;
}

static int grow_ptrs(void *arrp, uint32_t n, skv_error *err)
{
    void ***arr = arrp;
    void **na = skv__reallocarray(*arr, (size_t)n + 1, sizeof(void *));
    if (!na)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    *arr = na;
    return 0;
}

SKV_EXTERN int skv_sched_register_selector(skv_sched *s,
                                           const skv_sched_selector *sel,
                                           skv_error *err)
{
    if (!s || !sel)
        return skv__err(err, SKV_EINVAL, "register_selector: NULL argument");
    if (sel->abi_version != SKV_SCHED_SELECTOR_ABI)
        return skv__err(err, SKV_EVERSION,
                        "selector plugin ABI %u, this library speaks %u",
                        sel->abi_version, SKV_SCHED_SELECTOR_ABI);
    int rc = skv__sched_name_check("selector name", sel->name, err);
    if (rc)
        return rc;
    if (!sel->score)
        return skv__err(err, SKV_EINVAL, "selector '%s' has no score function",
                        sel->name);
    if (find_sel(s, sel->name) || skv__sched_sel_auto_name(sel->name))
        return skv__err(err, SKV_EEXIST, "selector '%s' is already registered",
                        sel->name);
    if ((rc = grow_ptrs(&s->selectors, s->nselectors, err)))
        return rc;
    s->selectors[s->nselectors++] = sel;
    return 0;
}

SKV_EXTERN int skv_sched_register_sequencer(skv_sched *s,
                                            const skv_sched_sequencer *seq,
                                            skv_error *err)
{
    if (!s || !seq)
        return skv__err(err, SKV_EINVAL, "register_sequencer: NULL argument");
    if (seq->abi_version != SKV_SCHED_SEQUENCER_ABI)
        return skv__err(err, SKV_EVERSION,
                        "sequencer plugin ABI %u, this library speaks %u",
                        seq->abi_version, SKV_SCHED_SEQUENCER_ABI);
    int rc = skv__sched_name_check("sequencer name", seq->name, err);
    if (rc)
        return rc;
    if (!seq->rank)
        return skv__err(err, SKV_EINVAL, "sequencer '%s' has no rank function",
                        seq->name);
    if ((unsigned)seq->scope >= SKV_SCHED_SCOPE_COUNT)
        return skv__err(err, SKV_EINVAL, "sequencer '%s': bad scope %d",
                        seq->name, (int)seq->scope);
    if (find_seq(s, seq->name))
        return skv__err(err, SKV_EEXIST, "sequencer '%s' is already registered",
                        seq->name);
    if ((rc = grow_ptrs(&s->sequencers, s->nsequencers, err)))
        return rc;
    s->sequencers[s->nsequencers++] = seq;
    return 0;
}

typedef const skv_sched_selector *(*sel_entry_fn)(void);
typedef const skv_sched_sequencer *(*seq_entry_fn)(void);

static int load_entries(skv_sched *s, void *h, const char *path,
                        skv_error *err)
{
    sel_entry_fn fsel;
    seq_entry_fn fseq;
    /* dlsym returns void*; converting through memcpy keeps -pedantic quiet */
    void *p1 = dlsym(h, "skv_sched_selector_plugin");
    void *p2 = dlsym(h, "skv_sched_sequencer_plugin");
    if (!p1 && !p2)
        return skv__err(err, SKV_ENOENT,
                        "%s exports neither skv_sched_selector_plugin nor "
                        "skv_sched_sequencer_plugin", path);
    uint32_t nsel0 = s->nselectors;
    int rc = 0;
    if (p1) {
        memcpy(&fsel, &p1, sizeof(fsel));
        const skv_sched_selector *t = fsel();
        rc = t ? skv_sched_register_selector(s, t, err)
               : skv__err(err, SKV_EINVAL, "%s: selector entry returned NULL", path);
    }
    if (!rc && p2) {
        memcpy(&fseq, &p2, sizeof(fseq));
        const skv_sched_sequencer *t = fseq();
        rc = t ? skv_sched_register_sequencer(s, t, err)
               : skv__err(err, SKV_EINVAL, "%s: sequencer entry returned NULL", path);
    }
    if (rc) {
        s->nselectors = nsel0; /* undo a half registration */
        skv__err_prefix(err, "plugin %s", path);
    }
    return rc;
}

SKV_EXTERN int skv_sched_load_plugin(skv_sched *s, const char *path,
                                     skv_error *err)
{
    if (!s || !path || !*path)
        return skv__err(err, SKV_EINVAL, "load_plugin: NULL or empty path");
    int rc = grow_ptrs(&s->dl_handles, s->ndl, err);
    if (rc)
        return rc;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        return skv__err(err, SKV_ENOENT, "cannot load plugin %s: %s", path,
                        e ? e : "?");
    }
    rc = load_entries(s, h, path, err);
    if (rc) {
        dlclose(h);
        return rc;
    }
    s->dl_handles[s->ndl++] = h;
    return 0;
}

void skv__sched_plugins_close(skv_sched *s)
{
    for (uint32_t i = 0; i < s->ndl; i++)
        dlclose(s->dl_handles[i]);
    skv__free(s->dl_handles);
}

static int group_plugins(skv__group *g, skv_sched *s,
                         const skv_sched_group_options *o, skv_error *err)
{
    const char *seqn = o->sequencer ? o->sequencer : "fifo";
    const char *seln = o->selector;
    g->seq = find_seq(s, seqn);
    if (!g->seq)
        return skv__err(err, SKV_ENOENT, "group '%s': unknown sequencer '%s'",
                        g->name, seqn);
    bool autosel = skv__sched_sel_auto_name(seln);
    g->sel = autosel ? NULL : find_sel(s, seln);
    if (!autosel && !g->sel)
        return skv__err(err, SKV_ENOENT, "group '%s': unknown selector '%s'",
                        g->name, seln);
    int rc = 0;
    if (g->seq->create &&
        (rc = g->seq->create(&g->seq_state, o->sequencer_config, err))) {
        g->seq = NULL;
        skv__err_prefix(err, "group '%s' sequencer '%s'", g->name, seqn);
        return rc;
    }
    if (autosel)
        return skv__sched_sel_auto_start(s, g, o->selector_config, err);
    if (g->sel->create &&
        (rc = g->sel->create(&g->sel_state, o->selector_config, err))) {
        g->sel = NULL;
        skv__err_prefix(err, "group '%s' selector '%s'", g->name, seln);
        return rc;
    }
    return 0;
}

void skv__sched_group_free(skv__group *g)
{
    if (!g)
        return;
    if (g->sel && g->sel->destroy)
        g->sel->destroy(g->sel_state);
    skv__sched_sel_auto_drop(g);
    if (g->seq && g->seq->destroy)
        g->seq->destroy(g->seq_state);
    for (int i = 0; i < SKV__NBUCKETS; i++) {
        skv__free(g->bucket[i].ag);
        skv__free(g->bucket[i].room);
    }
    skv__fidx_free(g->fidx);
    skv__inc_free(g->inc);
    skv__free(g->agents);
    skv__free(g->pending);
    skv__free(g->name);
    skv__free(g);
}

SKV_EXTERN int skv_sched_group_add(skv_sched *s, const char *name,
                                   const skv_sched_group_options *opts,
                                   skv_error *err)
{
    skv_sched_group_options def = SKV_SCHED_GROUP_OPTIONS_INIT;
    if (!s)
        return skv__err(err, SKV_EINVAL, "group_add: scheduler is NULL");
    int rc = skv__sched_name_check("resource group name", name, err);
    if (rc)
        return rc;
    if (!opts)
        opts = &def;
    if (opts->version != SKV_SCHED_GROUP_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "group options version %u, expected %u",
                        opts->version, SKV_SCHED_GROUP_OPTIONS_VERSION);
    if (opts->aging_ms < 0 || opts->preempt_min_runtime_ms < 0)
        return skv__err(err, SKV_EINVAL,
                        "group '%s': aging_ms and preempt_min_runtime_ms must be >= 0",
                        name);
    if (skv__sched_group(s, name, NULL))
        return skv__err(err, SKV_EEXIST, "resource group '%s' exists", name);
    skv__group *g = skv__calloc(1, sizeof(*g));
    if (!g || !(g->name = skv__strdup(name)) ||
        (rc = grow_ptrs(&s->groups, s->ngroups, err))) {
        if (g)
            skv__free(g->name);
        skv__free(g);
        return rc ? rc : skv__err(err, SKV_ENOMEM, "out of memory");
    }
    if ((rc = group_plugins(g, s, opts, err))) {
        skv__sched_group_free(g);
        return rc;
    }
    g->aging_ms = opts->aging_ms;
    g->max_reservations = opts->max_reservations;
    g->preemption = opts->preemption;
    g->min_runtime_ms = opts->preempt_min_runtime_ms;
    s->groups[s->ngroups++] = g;
    return 0;
}

SKV_EXTERN int skv_sched_group_set_selector(skv_sched *s, const char *name,
                                            const char *selector,
                                            const char *config,
                                            skv_error *err)
{
    if (!s || !name || !selector)
        return skv__err(err, SKV_EINVAL, "group_set_selector: NULL argument");
    skv__group *g = skv__sched_group(s, name, NULL);
    if (!g)
        return skv__err(err, SKV_ENOENT, "no resource group '%s'", name);
    if (skv__sched_sel_auto_name(selector))
        return skv__sched_sel_auto_start(s, g, config, err);
    const skv_sched_selector *sel = find_sel(s, selector);
    if (!sel)
        return skv__err(err, SKV_ENOENT, "group '%s': unknown selector '%s'",
                        name, selector);
    /* The new state first: on failure the group keeps its selector. */
    void *state = NULL;
    int rc = sel->create ? sel->create(&state, config, err) : 0;
    if (rc) {
        skv__err_prefix(err, "group '%s' selector '%s'", name, selector);
        return rc;
    }
    if (g->sel && g->sel->destroy)
        g->sel->destroy(g->sel_state);
    skv__sched_sel_auto_drop(g); /* a named selector ends "auto" */
    g->sel = sel;
    g->sel_state = state;
    skv__fidx_invalidate(g); /* its cached scores are the old selector's */
    return 0;
}

SKV_EXTERN int skv_sched_group_set_preemption(skv_sched *s, const char *name,
                                              bool preemption,
                                              int64_t min_runtime_ms,
                                              skv_error *err)
{
    if (!s || !name)
        return skv__err(err, SKV_EINVAL, "group_set_preemption: NULL argument");
    if (min_runtime_ms < 0)
        return skv__err(err, SKV_EINVAL, "group '%s': min_runtime_ms must be "
                        ">= 0", name);
    skv__group *g = skv__sched_group(s, name, NULL);
    if (!g)
        return skv__err(err, SKV_ENOENT, "no resource group '%s'", name);
    /* Read by every pass (the incremental walk checks it each time), so
     * nothing cached needs to change. */
    g->preemption = preemption;
    g->min_runtime_ms = min_runtime_ms;
    return 0;
}

SKV_EXTERN int skv_sched_group_set_preempt_order(skv_sched *s,
                                                 const char *name,
                                                 skv_sched_preempt_order order,
                                                 skv_error *err)
{
    if (!s || !name)
        return skv__err(err, SKV_EINVAL,
                        "group_set_preempt_order: NULL argument");
    if (order != SKV_SCHED_PREEMPT_ORDER_LOWEST_PRIORITY &&
        order != SKV_SCHED_PREEMPT_ORDER_NEWEST)
        return skv__err(err, SKV_EINVAL, "group '%s': preemption order %d is "
                        "neither lowest-priority nor newest", name,
                        (int)order);
    skv__group *g = skv__sched_group(s, name, NULL);
    if (!g)
        return skv__err(err, SKV_ENOENT, "no resource group '%s'", name);
    g->preempt_order = order; /* read by each pass's victim sort */
    return 0;
}

SKV_EXTERN int skv_sched_group_remove(skv_sched *s, const char *name,
                                      skv_error *err)
{
    uint32_t gi;
    if (!s || !name)
        return skv__err(err, SKV_EINVAL, "group_remove: NULL argument");
    skv__group *g = skv__sched_group(s, name, &gi);
    if (!g)
        return skv__err(err, SKV_ENOENT, "no resource group '%s'", name);
    if (g->nagents || g->nlive)
        return skv__err(err, SKV_EBUSY,
                        "resource group '%s' still has %u agents and %u sessions",
                        name, g->nagents, g->nlive);
    /* group indexes are stored in agents and sessions: shift them */
    for (uint32_t i = 0; i < s->nagents_tab; i++)
        if (s->agents[i] && s->agents[i]->group > gi)
            s->agents[i]->group--;
    for (uint32_t i = 0; i < s->nsess_tab; i++)
        if (s->sess[i] && s->sess[i]->group > gi)
            s->sess[i]->group--;
    skv__sched_group_free(g);
    memmove(&s->groups[gi], &s->groups[gi + 1],
            (s->ngroups - gi - 1) * sizeof(*s->groups));
    s->ngroups--;
    return 0;
}
