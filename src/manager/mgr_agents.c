/* The manager's live view of agents and the translation of registered
 * devices into the scheduler's agent description: devices with a "*.device"
 * slot are accelerators (whole_slot, and share_slot "*.shares" when
 * shareable); every other device's slots are summed into pooled capacity.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_app.h"

/* Find or append (zeroed) the agent named id. */
skv__mgr_agent *skv__mgr_agent_slot(skv_manager *m, const char *id)
{
    skv__mgr_agent *a = skv__mgr_agent_find(m, id);
    if (a)
        return a;
    a = skv__reallocarray(m->agents, m->n_agents + 1, sizeof *a);
    if (!a)
        return NULL;
    m->agents = a;
    a = &m->agents[m->n_agents];
    memset(a, 0, sizeof *a);
    snprintf(a->id, sizeof a->id, "%s", id);
    if (skv__mgr_agent_ix_add(m, m->n_agents))
        return NULL; /* not counted: the next append reuses the entry */
    m->n_agents++;
    skv__mgr_hb_note(m, a);   /* last_hb_ms 0 until it registers */
    return a;
}

static void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv__free(v[i]);
    skv__free(v);
}

void skv__mgr_agent_clear(skv__mgr_agent *a)
{
    strv_free(a->dev_ids, a->n_dev);
    strv_free(a->pool_dev, a->n_pool);
    strv_free(a->pool_slot, a->n_pool);
    strv_free(a->images, a->n_images);
    strv_free(a->image_digest, a->n_images);
    skv__mgr_image_meta_free(a->image_meta, a->n_images);
    a->image_meta = NULL;
    skv__free(a->image_size);
    a->image_size = NULL;
    skv__mgr_health_free(a);
    strv_free(a->label_keys, a->n_labels);
    strv_free(a->label_values, a->n_labels);
    a->label_keys = a->label_values = NULL;
    a->n_labels = 0;
    a->dev_ids = a->pool_dev = a->pool_slot = a->images = NULL;
    a->image_digest = NULL;
    a->n_dev = a->n_pool = a->n_images = 0;
    skv__mgr_layout_free(&a->layout);
}

static const char *slot_ending(const skv_slots *s, const char *suffix,
                               skv_qty *qty)
{
    size_t ls = strlen(suffix);
    for (size_t i = 0; s && i < skv_slots_count(s); i++) {
        const char *name;
        skv_qty q;
        skv_slots_at(s, i, &name, NULL, &q);
        size_t ln = strlen(name);
        if (ln > ls && strcmp(name + ln - ls, suffix) == 0) {
            if (qty)
                *qty = q;
            return name;
        }
    }
    return NULL;
}

static int push_str(char ***v, size_t *n, const char *s)
{
    char **nv = skv__reallocarray(*v, *n + 1, sizeof *nv);
    if (!nv)
        return SKV_ENOMEM;
    *v = nv;
    if (!(nv[*n] = skv__strdup(s ? s : "")))
        return SKV_ENOMEM;
    (*n)++;
    return 0;
}

/* Remember which device offers each pooled slot (first one wins). */
static int pool_note(skv__mgr_agent *a, const skv_proto_device *d)
{
    for (size_t i = 0; d->slots && i < skv_slots_count(d->slots); i++) {
        const char *name;
        skv_slots_at(d->slots, i, &name, NULL, NULL);
        bool known = false;
        for (size_t j = 0; j < a->n_pool; j++)
            known = known || strcmp(a->pool_slot[j], name) == 0;
        if (known)
            continue;
        size_t n2 = a->n_pool;
        if (push_str(&a->pool_slot, &n2, name) ||
            push_str(&a->pool_dev, &a->n_pool, d->id))
            return SKV_ENOMEM;
    }
    return 0;
}

typedef struct spec_parts {
    skv_slots *cap;
    skv_sched_device_spec devs[SKV_SCHED_DEVICES_MAX];
    int32_t numa[SKV_SCHED_DEVICES_MAX];
    size_t n_devs;
    const char *gpu_model;
    skv__mgr_topo topo;         /* from the agent's layout (mgr_topology.c) */
} spec_parts;

static int split_devices(skv__mgr_agent *a, spec_parts *p,
                         const skv_proto_device *devs, size_t n, skv_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const skv_proto_device *d = &devs[i];
        const char *whole = slot_ending(d->slots, ".device", NULL);
        if (!whole) {
            int rc = d->slots ? skv_slots_add(p->cap, d->slots, err) : 0;
            if (rc || pool_note(a, d))
                return rc ? rc : skv__err(err, SKV_ENOMEM, "out of memory");
            continue;
        }
        if (p->n_devs == SKV_SCHED_DEVICES_MAX)
            return skv__err(err, SKV_ERANGE, "agent '%s': more than %d "
                            "accelerators", a->id, SKV_SCHED_DEVICES_MAX);
        p->numa[p->n_devs] = d->numa_node;
        skv_sched_device_spec *ds = &p->devs[p->n_devs++];
        ds->id = d->id;
        ds->whole_slot = whole;
        ds->share_slot = slot_ending(d->slots, ".shares", &ds->share_capacity);
        if (!p->gpu_model)
            p->gpu_model = d->model;
        if (push_str(&a->dev_ids, &a->n_dev, d->id))
            return skv__err(err, SKV_ENOMEM, "out of memory");
    }
    return 0;
}

static void arrays_free(skv__mgr_agent *a)
{
    strv_free(a->dev_ids, a->n_dev);
    strv_free(a->pool_dev, a->n_pool);
    strv_free(a->pool_slot, a->n_pool);
    a->dev_ids = a->pool_dev = a->pool_slot = NULL;
    a->n_dev = a->n_pool = 0;
}

static int describe(skv_manager *m, skv__mgr_agent *t, spec_parts *p,
                    const skv_proto_kv *labels, size_t n_labels,
                    bool schedulable, skv_error *err)
{
    skv_sched_label *lab = n_labels ? skv__calloc(n_labels, sizeof *lab)
                                    : NULL;
    if (n_labels && !lab)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n_labels; i++)
        lab[i] = (skv_sched_label){labels[i].key, labels[i].value};
    skv_sched_agent_spec s = SKV_SCHED_AGENT_SPEC_INIT;
    s.id = t->id;
    s.resource_group = t->group;
    s.architecture = t->arch;
    s.gpu_model = p->gpu_model;
    s.schedulable = schedulable;
    s.capacity = p->cap;
    s.n_devices = p->n_devs;
    s.devices = p->devs;
    s.n_labels = n_labels;
    s.labels = lab;
    if (skv__mgr_topo_build(&p->topo, &t->layout, t->dev_ids, p->numa,
                            p->n_devs))
        s.topology = &p->topo.t;
    int rc = t->in_sched ? skv_sched_agent_update(m->sched, &s, err)
                         : skv_sched_agent_add(m->sched, &s, err);
    skv__free(lab);
    return rc;
}

/* (Re)describe agent a to the scheduler (add when unknown, update else);
 * a changes only when the scheduler accepted the new description. */
int skv__mgr_agent_spec(skv_manager *m, skv__mgr_agent *a, const char *group,
                        const char *arch, const skv_proto_device *devs,
                        size_t n_dev, const skv_proto_kv *labels,
                        size_t n_labels, bool schedulable, skv_error *err)
{
    skv__mgr_agent t;
    memcpy(&t, a, sizeof t);
    t.dev_ids = t.pool_dev = t.pool_slot = NULL;
    t.n_dev = t.n_pool = 0;
    snprintf(t.group, sizeof t.group, "%s", group);
    snprintf(t.arch, sizeof t.arch, "%s", arch ? arch : "");
    spec_parts p = {0};
    int rc = skv_slots_new(&p.cap, err);
    if (!rc)
        rc = split_devices(&t, &p, devs, n_dev, err);
    if (!rc)
        rc = describe(m, &t, &p, labels, n_labels, schedulable, err);
    skv_slots_free(p.cap);
    if (rc) {
        arrays_free(&t);
        return rc;
    }
    arrays_free(a);
    memcpy(a, &t, sizeof t);
    a->in_sched = true;
    return 0;
}
