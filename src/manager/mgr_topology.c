/* Agent layouts in the manager: the NUMA nodes and accelerator links an
 * agent registered are checked, kept with the agent (and in the store) and
 * turned into the scheduler's skv_sched_agent_topology, so its per-agent
 * map chooses whole devices as the node mapper on that machine would.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "sokovan/alloc.h"
#include "sokovan/topo.h"

/* "pix".."sys" -> 1..5; 0 for anything else. */
static int link_parse(const char *s)
{
    for (int l = SKV_TOPO_LINK_PIX; s && l <= SKV_TOPO_LINK_SYS; l++)
        if (strcmp(s, skv_topo_link_name((skv_topo_link)l)) == 0)
            return l;
    return 0;
}

static long dev_index(const skv_proto_device *d, size_t n, const char *id)
{
    for (size_t i = 0; id && i < n; i++)
        if (strcmp(d[i].id, id) == 0)
            return (long)i;
    return -1;
}

static int check_numa(const skv_proto_agent_register *r, skv_error *err)
{
    for (size_t i = 0; i < r->n_numa_nodes; i++) {
        const skv_proto_numa_node *x = &r->numa_nodes[i];
        int *ids = NULL;
        size_t nids = 0;
        if (x->id < 0 || x->id > SKV_ALLOC_NUMA_MAX)
            return skv__err(err, SKV_EINVAL, "agent.register: NUMA node id "
                            "%d out of range", (int)x->id);
        for (size_t j = 0; j < i; j++)
            if (r->numa_nodes[j].id == x->id)
                return skv__err(err, SKV_EINVAL, "agent.register: NUMA node "
                                "%d listed twice", (int)x->id);
        if (x->cpus && skv_topo_cpulist_parse(&ids, &nids, x->cpus, NULL))
            return skv__err(err, SKV_EINVAL, "agent.register: NUMA node %d: "
                            "cpus '%s' is not a CPU list", (int)x->id,
                            x->cpus);
        skv_free(ids);
    }
    return 0;
}

int skv__mgr_layout_check(const skv_proto_agent_register *r, skv_error *err)
{
    int rc = check_numa(r, err);
    for (size_t i = 0; !rc && i < r->n_links; i++) {
        const skv_proto_device_link *l = &r->links[i];
        long a = dev_index(r->devices, r->n_devices, l->a);
        long b = dev_index(r->devices, r->n_devices, l->b);
        if (a < 0 || b < 0 || a == b)
            rc = skv__err(err, SKV_EINVAL, "agent.register: link %zu names "
                          "%s device '%s'", i, a == b && a >= 0 ? "twice the"
                          : "an unregistered", a < 0 ? l->a : l->b);
        else if (!link_parse(l->link))
            rc = skv__err(err, SKV_EINVAL, "agent.register: link %s-%s: "
                          "'%s' is not pix, pxb, phb, node or sys", l->a,
                          l->b, l->link);
    }
    return rc;
}

static char *dup_or(const char *s, bool *oom)
{
    char *d = skv__strdup(s ? s : "");
    *oom = *oom || !d;
    return d;
}

int skv__mgr_layout_copy(skv__mgr_layout *out,
                         const skv_proto_agent_register *r, skv_error *err)
{
    memset(out, 0, sizeof(*out));
    out->numa = skv__calloc(r->n_numa_nodes + 1, sizeof(*out->numa));
    out->links = skv__calloc(r->n_links + 1, sizeof(*out->links));
    bool oom = !out->numa || !out->links;
    for (size_t i = 0; !oom && i < r->n_numa_nodes; i++) {
        out->numa[i] = r->numa_nodes[i];
        out->numa[i].cpus = dup_or(r->numa_nodes[i].cpus, &oom);
        out->n_numa++;
    }
    for (size_t i = 0; !oom && i < r->n_links; i++) {
        const skv_proto_device_link *l = &r->links[i];
        out->links[i].a = dup_or(l->a, &oom);
        out->links[i].b = dup_or(l->b, &oom);
        out->links[i].link = dup_or(l->link, &oom);
        out->links[i].nvlink_mbps = l->nvlink_mbps;
        out->n_links++;
    }
    if (!oom)
        return 0;
    skv__mgr_layout_free(out);
    return skv__err(err, SKV_ENOMEM, "manager: out of memory");
}

/* Position of a device id among the scheduler's accelerators. */
static long acc_index(char *const *ids, size_t n, const char *id)
{
    for (size_t i = 0; id && i < n; i++)
        if (strcmp(ids[i], id) == 0)
            return (long)i;
    return -1;
}

/* Unlisted pairs (a device the agent could not place in its topology)
 * are judged by NUMA node, as the node mapper does. */
bool skv__mgr_topo_build(skv__mgr_topo *t, const skv__mgr_layout *l,
                         char *const *ids, const int32_t *numa, size_t n)
{
    bool any = l->n_links > 0;
    memset(t, 0, sizeof(*t));
    for (size_t i = 0; i < n; i++) {
        t->numa[i] = numa[i];
        any = any || numa[i] >= 0;
        for (size_t j = 0; j < n; j++)
            t->links[i * n + j] = numa[i] >= 0 && numa[i] == numa[j]
                                      ? SKV_TOPO_LINK_NODE
                                      : SKV_TOPO_LINK_SYS;
    }
    for (size_t k = 0; k < l->n_links; k++) {
        long a = acc_index(ids, n, l->links[k].a);
        long b = acc_index(ids, n, l->links[k].b);
        if (a < 0 || b < 0)
            continue; /* a pooled device */
        uint32_t bw = l->links[k].nvlink_mbps > UINT32_MAX
                          ? UINT32_MAX : (uint32_t)l->links[k].nvlink_mbps;
        t->links[a * n + b] = t->links[b * n + a] =
            (uint8_t)link_parse(l->links[k].link);
        t->bw[a * n + b] = t->bw[b * n + a] = bw;
    }
    t->t.device_numa = t->numa;
    t->t.links = t->links;
    t->t.nvlink_mbps = t->bw;
    return any && n > 0;
}
