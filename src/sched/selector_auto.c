/* The default agent selector, "auto" (a group created without a selector
 * name): `frag` for a group with accelerators, `concentrated` otherwise.
 *
 * Why: frag places GPU work so that less GPU capacity is stranded (it
 * beats the published FGD numbers on the openb workloads) and, by classes
 * of free state, decides as fast as the bin-packer (bench/RESULTS.md,
 * issue 16); on CPU-only agents it has no GPUs to keep whole and the
 * bin-packer is what users expect. Whether a group has accelerators is
 * known only when its agents join, so the group starts with concentrated
 * and switches, once, when the first agent with a device joins (added,
 * moved in, or updated with devices). It stays frag after that, also if
 * those agents leave: decisions do not flip back and forth with agent
 * churn. The frag state is made when the group is (from the group's
 * selector_config), so the switch cannot fail and a config frag refuses
 * is refused when the group is made. Naming a selector, `auto` included,
 * with skv_sched_group_set_selector() replaces all of this.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"
#include "selector_frag.h"
#include "selector_frag_index.h"

bool skv__sched_sel_auto_name(const char *name)
{
    return !name || strcmp(name, SKV_SCHED_SELECTOR_AUTO) == 0;
}

void skv__sched_sel_auto_drop(skv__group *g)
{
    if (g->auto_state)
        skv__sched_selector_frag()->destroy(g->auto_state);
    g->auto_state = NULL;
}

/* The group's first agent with a device, or NULL. */
static const skv__agent *with_devices(const skv_sched *s, const skv__group *g)
{
    for (uint32_t i = 0; i < g->nagents; i++)
        if (s->agents[g->agents[i]]->d.ndev > 0)
            return s->agents[g->agents[i]];
    return NULL;
}

/* a joined g, or changed in it: switch an auto group that still uses
 * concentrated to frag when a has a device. */
void skv__sched_sel_auto_agent(skv__group *g, const skv__agent *a)
{
    if (!g->auto_state || a->d.ndev == 0)
        return;
    g->sel = skv__sched_selector_frag();
    g->sel_state = g->auto_state;
    g->auto_state = NULL;
    skv__fidx_invalidate(g); /* scores cached for another selector */
}

/* Make g an auto group: concentrated now, frag's state ready for the
 * switch (made from config). On error g is left as it was. */
int skv__sched_sel_auto_start(skv_sched *s, skv__group *g, const char *config,
                              skv_error *err)
{
    const skv_sched_selector *frag = skv__sched_selector_frag();
    void *st = NULL;
    int rc = frag->create(&st, config, err);
    if (rc) {
        skv__err_prefix(err, "group '%s' selector '%s' (its frag)", g->name,
                        SKV_SCHED_SELECTOR_AUTO);
        return rc;
    }
    skv__sched_sel_auto_drop(g);
    if (g->sel && g->sel->destroy)
        g->sel->destroy(g->sel_state);
    g->sel = &skv__sel_concentrated;
    g->sel_state = NULL;
    g->auto_state = st;
    skv__fidx_invalidate(g);
    const skv__agent *a = with_devices(s, g); /* set_selector: agents */
    if (a)
        skv__sched_sel_auto_agent(g, a);
    return 0;
}
