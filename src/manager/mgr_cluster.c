/* agent.list and image.list (images as the agents registered them).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static const char *agent_status(const skv__mgr_agent *a)
{
    if (a->state == SKV__AGENT_LOST)
        return "lost";
    return a->state == SKV__AGENT_ALIVE && a->conn ? "alive" : "disconnected";
}

static uint32_t running_on(skv_manager *m, const char *id)
{
    uint32_t n = 0;
    if (skv__mgr_store_agent_load(m->store, id, &n, NULL))
        return 0;
    return n;
}

static int ops_info(const skv__mgr_agent *a, skv_proto_agent_info *i,
                    skv_error *err)
{
    i->admin_state = skv__strdup(skv__mgr_ops_name(a->ops));
    i->drain_deadline_ms = a->ops == SKV__OPS_DRAINING ? a->drain_deadline_ms
                                                       : 0;
    if (a->n_unhealthy && !(i->unhealthy = skv__calloc(a->n_unhealthy,
                                                       sizeof *i->unhealthy)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t k = 0; k < a->n_unhealthy; k++) {
        i->n_unhealthy++;
        i->unhealthy[k].device_id = skv__strdup(a->unhealthy[k].device_id);
        i->unhealthy[k].reason = skv__strdup(a->unhealthy[k].reason);
        if (!i->unhealthy[k].device_id || !i->unhealthy[k].reason)
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    return i->admin_state ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
}

int skv__mgr_agent_info(skv_manager *m, const skv__mgr_agent *a,
                        skv_proto_agent_info *i, skv_error *err)
{
    memset(i, 0, sizeof *i);
    i->agent_id = skv__strdup(a->id);
    i->resource_group = skv__strdup(a->group);
    i->architecture = skv__strdup(a->arch);
    i->status = skv__strdup(agent_status(a));
    i->address = skv__strdup(a->address);
    i->last_heartbeat_ms = a->last_hb_ms;
    i->n_running = running_on(m, a->id);
    if (!i->agent_id || !i->resource_group || !i->architecture ||
        !i->status || !i->address)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (a->n_labels && !(i->labels = skv__calloc(a->n_labels,
                                                   sizeof *i->labels)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t k = 0; k < a->n_labels; k++) {
        i->n_labels++;                   /* counted first: freed on failure */
        if (!(i->labels[k].key = skv__strdup(a->label_keys[k])) ||
            !(i->labels[k].value = skv__strdup(a->label_values[k])))
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    int rc = skv__mgr_store_devices(m->store, a->id, &i->devices, &i->n_devices, err);
    if (!rc)
        rc = ops_info(a, i, err);
    if (rc)
        return rc;
    if (a->in_sched)
        return skv_sched_agent_usage(&i->occupied, &i->capacity, m->sched,
                                     a->id, err);
    return 0;
}

int skv__mgr_on_agent_list(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err)
{
    const skv_proto_agent_list *q = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_CLUSTER_READ, NULL, err);
    if (rc)
        return rc;
    skv_proto_agent_list_reply rep = {0};
    rep.agents = skv__calloc(m->n_agents + 1, sizeof *rep.agents);
    if (!rep.agents)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if ((a->state == SKV__AGENT_LOST && !q->include_lost) ||
            (q->resource_group && strcmp(q->resource_group, a->group)))
            continue;
        rc = skv__mgr_agent_info(m, a, &rep.agents[rep.n_agents++], err);
    }
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_AGENT_LIST_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &rep);
    return rc;
}

static skv_proto_image_info *image_slot(skv_proto_image_list_reply *r,
                                        const char *name, const char *arch)
{
    for (size_t i = 0; i < r->n_images; i++)
        if (!strcmp(r->images[i].name, name) &&
            !strcmp(r->images[i].architecture, arch))
            return &r->images[i];
    skv_proto_image_info *v = skv__reallocarray(r->images, r->n_images + 1,
                                                sizeof *v);
    if (!v)
        return NULL;
    r->images = v;
    v = &v[r->n_images];
    memset(v, 0, sizeof *v);
    v->name = skv__strdup(name);
    v->architecture = skv__strdup(arch);
    if (!v->name || !v->architecture) {
        skv__free(v->name);
        skv__free(v->architecture);
        return NULL;
    }
    r->n_images++;
    return v;
}

/* Image i of agent a into the reply; size and digest from the first agent
 * that reports them. */
static int add_image(skv_proto_image_list_reply *r, const skv__mgr_agent *a,
                     size_t i)
{
    skv_proto_image_info *im = image_slot(r, a->images[i], a->arch);
    if (!im)
        return SKV_ENOMEM;
    if (!im->size_bytes)
        im->size_bytes = a->image_size[i];
    if (!im->digest && a->image_digest[i] &&
        !(im->digest = skv__strdup(a->image_digest[i])))
        return SKV_ENOMEM;
    char **v = skv__reallocarray(im->agents, im->n_agents + 1, sizeof *v);
    if (!v)
        return SKV_ENOMEM;
    im->agents = v;
    if (!(v[im->n_agents] = skv__strdup(a->id)))
        return SKV_ENOMEM;
    im->n_agents++;
    return 0;
}

int skv__mgr_on_image_list(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err)
{
    const skv_proto_image_list *q = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_CLUSTER_READ, NULL, err);
    if (rc)
        return rc;
    skv_proto_image_list_reply rep = {0};
    for (size_t i = 0; !rc && i < m->n_agents; i++) {
        const skv__mgr_agent *a = &m->agents[i];
        if (a->state != SKV__AGENT_ALIVE ||
            (q->architecture && strcmp(q->architecture, a->arch)))
            continue;
        for (size_t j = 0; !rc && j < a->n_images; j++)
            if (add_image(&rep, a, j))
                rc = skv__err(err, SKV_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_IMAGE_LIST_REPLY,
                            &rep);
    skv_proto_body_free(SKV_PROTO_IMAGE_LIST_REPLY, &rep);
    return rc;
}
