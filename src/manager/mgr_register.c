/* agent.register: record the agent and its devices, describe it to the
 * scheduler (schedulable again), answer, reconcile what it runs with the
 * database, then send the kernel.create requests still owed to it.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_app.h"

static int check_register(skv_manager *m, const skv__mgr_call *c,
                          const skv_proto_agent_register *r, skv_error *err)
{
    if (!r->agent_id || !r->agent_id[0])
        return skv__err(err, SKV_EINVAL, "agent.register: agent_id is "
                        "required");
    if (strlen(r->agent_id) >= SKV__MGR_ID_MAX)
        return skv__err(err, SKV_EINVAL, "agent.register: agent_id too long");
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_AGENT_REPORT, r->agent_id, err);
    if (rc)
        return rc;
    const skv__mgr_conn *conn = skv__mgr_conn_find(m, c->conn);
    if (conn && conn->agent_id[0] && strcmp(conn->agent_id, r->agent_id))
        return skv__err(err, SKV_EPERM, "this connection is agent '%s''s",
                        conn->agent_id);
    if ((rc = skv__mgr_layout_check(r, err)))
        return rc;
    skv__mgr_group_info gi;
    return skv__mgr_admin_group(&m->admin, &gi,
                                r->resource_group ? r->resource_group
                                                  : m->default_group, err);
}

/* The register's detail for image name, or NULL. */
static const skv_proto_image_detail *
image_detail(const skv_proto_agent_register *r, const char *name)
{
    for (size_t i = 0; i < r->n_image_details; i++)
        if (r->image_details[i].name &&
            !strcmp(r->image_details[i].name, name))
            return &r->image_details[i];
    return NULL;
}

/* Labels as registered, for agent.list. */
static int copy_labels(skv__mgr_agent *a, const skv_proto_agent_register *r)
{
    skv__mgr_ids_free(a->label_keys, a->n_labels);
    skv__mgr_ids_free(a->label_values, a->n_labels);
    a->label_keys = a->label_values = NULL;
    a->n_labels = 0;
    if (r->n_labels == 0)
        return 0;
    a->label_keys = skv__calloc(r->n_labels, sizeof *a->label_keys);
    a->label_values = skv__calloc(r->n_labels, sizeof *a->label_values);
    if (!a->label_keys || !a->label_values)
        return SKV_ENOMEM;
    for (size_t i = 0; i < r->n_labels; i++) {
        a->n_labels++;
        if (!(a->label_keys[i] = skv__strdup(r->labels[i].key)) ||
            !(a->label_values[i] = skv__strdup(r->labels[i].value)))
            return SKV_ENOMEM;
    }
    return 0;
}

static int copy_images(skv__mgr_agent *a, const skv_proto_agent_register *r)
{
    skv__mgr_ids_free(a->images, a->n_images);
    skv__mgr_ids_free(a->image_digest, a->n_images);
    skv__mgr_image_meta_free(a->image_meta, a->n_images);
    skv__free(a->image_size);
    a->images = a->image_digest = NULL;
    a->image_size = NULL;
    a->image_meta = NULL;
    a->n_images = 0;
    if (r->n_images == 0)
        return 0;
    a->images = skv__calloc(r->n_images, sizeof *a->images);
    a->image_digest = skv__calloc(r->n_images, sizeof *a->image_digest);
    a->image_size = skv__calloc(r->n_images, sizeof *a->image_size);
    a->image_meta = skv__calloc(r->n_images, sizeof *a->image_meta);
    if (!a->images || !a->image_digest || !a->image_size || !a->image_meta)
        return SKV_ENOMEM;
    for (size_t i = 0; i < r->n_images; i++) {
        const char *name = r->images[i] ? r->images[i] : "";
        const skv_proto_image_detail *d = image_detail(r, name);
        a->n_images++;
        if (!(a->images[i] = skv__strdup(name)) ||
            (d && d->digest && !(a->image_digest[i] = skv__strdup(d->digest))))
            return SKV_ENOMEM;
        a->image_size[i] = d ? d->size_bytes : 0;
        if (d && skv__mgr_image_meta_copy(&a->image_meta[i], d))
            return SKV_ENOMEM;
    }
    return 0;
}

static int store(skv_manager *m, skv_proto_agent_register *r, int64_t now,
                 skv_error *err)
{
    int rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = skv__mgr_store_agent_put(m->store, r, now, err);
    if (!rc)
        rc = skv__mgr_store_layout_put(m->store, r, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    return skv__mgr_commit(m, err);
}

/* Describe the agent to the scheduler. One that changed its devices or
 * group while holding allocations keeps its previous description (the
 * scheduler cannot move them) and is told so in the log. */
static int describe_agent(skv_manager *m, skv__mgr_agent *a,
                          const skv_proto_agent_register *r, skv_error *err)
{
    skv_error e = SKV_ERROR_INIT;
    skv__mgr_layout old = a->layout;
    int rc = skv__mgr_layout_copy(&a->layout, r, err);
    if (rc) {
        a->layout = old;
        return rc;
    }
    rc = skv__mgr_agent_spec(m, a, r->resource_group, r->architecture,
                             r->devices, r->n_devices, r->labels,
                             r->n_labels, true, &e);
    /* A refused description keeps the layout that goes with the old one. */
    skv__mgr_layout *drop = rc ? &a->layout : &old;
    skv__mgr_layout keep = rc ? old : a->layout;
    skv__mgr_layout_free(drop);
    a->layout = keep;
    if (rc == SKV_EBUSY && a->in_sched) {
        skv__log(SKV_LOG_WARN, "manager", "drift: agent %s changed while "
                 "holding allocations (%s); keeping its previous description",
                 a->id, e.message);
        return skv_sched_agent_set_schedulable(m->sched, a->id,
                                               a->ops == SKV__OPS_NONE, err);
    }
    if (rc && err)
        *err = e;
    return rc;
}

/* A previous connection of the same agent is superseded. */
static void take_over(skv_manager *m, skv__mgr_agent *a, uint64_t conn)
{
    if (a->conn && a->conn != conn) {
        skv__mgr_conn *old = skv__mgr_conn_find(m, a->conn);
        if (old)
            old->agent_id[0] = 0;
        skv__log(SKV_LOG_WARN, "manager", "agent %s registered again on a "
                 "new connection", a->id);
    }
    a->conn = conn;
}

int skv__mgr_on_register(skv_manager *m, const skv__mgr_call *c,
                         skv_error *err)
{
    skv_proto_agent_register *r = c->body;
    int rc = check_register(m, c, r, err);
    if (rc)
        return rc;
    if (!r->resource_group && !(r->resource_group = skv__strdup(m->default_group)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv__mgr_agent *a = skv__mgr_agent_slot(m, r->agent_id);
    if (!a)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    rc = describe_agent(m, a, r, err);
    if (!rc)    /* cordoned, draining, devices out of service */
        skv__mgr_ops_registered(m, a);
    if (!rc)
        rc = store(m, r, c->now_ms, err);
    if (!rc && (copy_images(a, r) || copy_labels(a, r)))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (rc)
        return rc;
    snprintf(a->address, sizeof a->address, "%s", r->address ? r->address : "");
    take_over(m, a, c->conn);
    skv__mgr_conn *conn = skv__mgr_conn_find(m, c->conn);
    snprintf(conn->agent_id, sizeof conn->agent_id, "%s", a->id);
    a->state = SKV__AGENT_ALIVE;
    a->last_hb_ms = c->now_ms;
    skv__mgr_hb_note(m, a);
    skv__log(SKV_LOG_INFO, "manager", "agent %s registered (group %s, %zu "
             "devices, %zu kernels)", a->id, a->group, r->n_devices,
             r->n_kernels);
    skv_proto_agent_register_reply rep = {m->hb_interval_ms, m->hb_timeout_ms,
                                          c->now_ms, NULL, NULL, NULL, 0};
    skv_error ne = SKV_ERROR_INIT;
    /* Without a subnet the agent still runs sessions on its own pool. */
    if (skv__mgr_net_register_reply(m, a->id, &rep, &ne))
        skv__log(SKV_LOG_ERROR, "manager", "agent %s: no cluster subnet: %s",
                 a->id, ne.message);
    skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_AGENT_REGISTER_REPLY, &rep);
    /* The others learn the route to it (or its new address) at the tick. */
    skv__mgr_routes_registered(m, a, rep.subnet, r->route_deltas);
    skv__mgr_net_reply_free(&rep);
    skv__mgr_reconcile(m, a, r, c->now_ms);
    skv__mgr_send_creates(m, a->id, c->now_ms);
    m->dirty = true;
    return 0;
}
