/* A resource group's operations policy (store/ops.c): what a drain does to
 * the sessions of a draining agent (drain_action, drain_grace_ms), what a
 * device fault does to batch sessions on it (fault_action), and whether
 * fractional GPU shares an agent cannot enforce may start
 * (allow_unenforced_fractions). Checked, merged with the stored values and
 * written by admin.resource_group (groups.c), shown in its replies.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"
#include "../store/ops.h"

static bool one_of(const char *v, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (!strcmp(v, words[i]))
            return true;
    return false;
}

int skv__mgr_admin_gops_check(const skv_proto_resource_group *g,
                              skv_error *err)
{
    static const char *const drain[] = {"requeue", "terminate", NULL};
    static const char *const fault[] = {"requeue", "terminate", "degrade",
                                        NULL};
    static const char *const onoff[] = {"on", "off", NULL};
    if (g->drain_action && !one_of(g->drain_action, drain))
        return skv__err(err, SKV_EINVAL, "drain_action '%s' is not 'requeue' "
                        "or 'terminate'", g->drain_action);
    if (g->fault_action && !one_of(g->fault_action, fault))
        return skv__err(err, SKV_EINVAL, "fault_action '%s' is not 'requeue',"
                        " 'terminate' or 'degrade'", g->fault_action);
    if (g->allow_unenforced_fractions &&
        !one_of(g->allow_unenforced_fractions, onoff))
        return skv__err(err, SKV_EINVAL, "allow_unenforced_fractions '%s' is "
                        "not 'on' or 'off'", g->allow_unenforced_fractions);
    return 0;
}

/* The policy after the change: the request's fields over old (create: the
 * defaults). */
void skv__mgr_admin_gops_merge(const skv_proto_resource_group *g,
                               const skv__mgr_store_gops *old,
                               skv__mgr_store_gops *out)
{
    *out = *old;
    if (g->drain_action)
        snprintf(out->drain_action, sizeof out->drain_action, "%s",
                 g->drain_action);
    if (g->drain_grace_ms)
        out->drain_grace_ms = g->drain_grace_ms < 0 ? 0 : g->drain_grace_ms;
    if (g->fault_action)
        snprintf(out->fault_action, sizeof out->fault_action, "%s",
                 g->fault_action);
    if (g->allow_unenforced_fractions)
        out->allow_unenforced = !strcmp(g->allow_unenforced_fractions, "on");
}

static int fill_one(skv__db *db, skv_proto_resource_group *g, skv_error *err)
{
    skv__mgr_store_gops o;
    int rc = skv__mgr_store_group_ops(db, g->name, &o, err);
    if (rc)
        return rc;
    g->drain_action = skv__strdup(o.drain_action);
    g->drain_grace_ms = o.drain_grace_ms;
    g->fault_action = skv__strdup(o.fault_action);
    g->allow_unenforced_fractions = skv__strdup(o.allow_unenforced ? "on"
                                                                  : "off");
    if (!g->drain_action || !g->fault_action ||
        !g->allow_unenforced_fractions)
        return skv__err(err, SKV_ENOMEM, "admin: out of memory");
    return 0;
}

int skv__mgr_admin_gops_fill(skv__db *db,
                             skv_proto_admin_resource_group_reply *rp,
                             skv_error *err)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < rp->n_groups; i++)
        rc = fill_one(db, &rp->groups[i], err);
    return rc;
}
