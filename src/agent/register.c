/* Registration with the manager: device-level capacity (pooled "cpu" and
 * "mem", every accelerator with its *.device / *.shares slots), images,
 * labels and the kernels held; then, on the reply, the heartbeat interval
 * and the exits the manager has not confirmed yet.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "agent_internal.h"

/* A pooled resource: device id, kind and slot are the same name. */
static int pooled(skv_proto_device *d, const char *id, skv_slot_kind kind,
                  skv_qty cap, skv_error *err)
{
    d->id = (char *)id;
    d->kind = (char *)id;
    d->numa_node = -1;
    d->model = (char *)"";
    d->bus_id = (char *)"";
    int rc = skv_slots_new(&d->slots, err);
    return rc ? rc : skv_slots_set(d->slots, id, kind, cap, err);
}

static int accel(skv_proto_device *d, const skv_agent *a,
                 const skv__agent_dev *dev, skv_error *err)
{
    skv_plugin *p = skv_node_plugin_at(a->node, dev->plugin);
    const skv_device *pd = skv_device_list_find(skv_plugin_devices(p),
                                                dev->dev);
    const skv_alloc_map *m = skv_node_map(a->node, dev->plugin);
    d->id = dev->id;
    d->kind = dev->kind;
    d->numa_node = pd ? pd->numa_node : -1;
    d->model = (char *)(pd ? pd->model : "");
    d->bus_id = (char *)(pd ? pd->pci_bus_id : "");
    size_t di;
    int rc = skv_slots_new(&d->slots, err);
    if (rc || skv_alloc_map_device_index(m, dev->dev, &di) != 0)
        return rc ? rc : skv__err(err, SKV_ENOENT, "device %s", dev->id);
    for (size_t s = 0; rc == 0 && s < skv_alloc_map_slot_count(m); s++) {
        skv_alloc_slot_spec spec;
        skv_alloc_map_slot_spec(m, s, &spec);
        skv_qty cap = skv_alloc_map_capacity(m, s, di);
        if (cap > 0)
            rc = skv_slots_set(d->slots, spec.name, spec.kind, cap, err);
    }
    return rc;
}

static void free_devices(skv_proto_device *d, size_t n)
{
    for (size_t i = 0; d && i < n; i++)
        skv_slots_free(d[i].slots);
    skv__free(d);
}

static int devices(skv_proto_agent_register *m, const skv_agent *a,
                   skv_error *err)
{
    m->devices = skv__calloc(a->ndevs + 2, sizeof(*m->devices));
    if (!m->devices)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    m->n_devices = 2;
    int rc = pooled(&m->devices[0], "cpu", SKV_SLOT_COUNT, a->cpu_cap, err);
    if (rc == 0)
        rc = pooled(&m->devices[1], "mem", SKV_SLOT_BYTES, a->mem_cap, err);
    for (size_t i = 0; rc == 0 && i < a->ndevs; i++)
        if (!a->devs[i].excluded)
            rc = accel(&m->devices[m->n_devices++], a, &a->devs[i], err);
    return rc;
}

/* "k=v,k=v" into kv pairs pointing into buf (modified). */
static int labels(skv_proto_agent_register *m, char *buf, skv_error *err)
{
    size_t n = 1;
    for (char *c = buf; c && *c; c++)
        n += *c == ',';
    m->labels = skv__calloc(n, sizeof(*m->labels));
    if (!m->labels)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    char *save = NULL;
    for (char *t = buf ? strtok_r(buf, ",", &save) : NULL; t;
         t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq || eq == t)
            return skv__err(err, SKV_EINVAL, "agent labels: '%s' is not "
                            "key=value", t);
        *eq = '\0';
        m->labels[m->n_labels++] = (skv_proto_kv){t, eq + 1};
    }
    return 0;
}

static void free_details(skv_proto_image_detail *d, size_t n)
{
    for (size_t i = 0; d && i < n; i++) {
        skv__free(d[i].digest);
        skv_image_meta meta = {d[i].services, d[i].n_services, d[i].command,
                               d[i].n_command};
        skv_image_meta_clear(&meta);
    }
    skv__free(d);
}

/* The image's own services and command (image.json), which the manager
 * applies to sessions that name none. A malformed document is the image
 * builder's mistake: the image is listed without it, and the log says why. */
static void image_meta(const skv_agent *a, skv_proto_image_detail *d)
{
    skv_image_meta meta;
    skv_error e = SKV_ERROR_INIT;
    if (skv_image_meta_get(a->images, d->name, &meta, &e) != 0) {
        skv__log(SKV_LOG_WARN, "agent", "image %s: metadata ignored: %s",
                 d->name, e.message);
        return;
    }
    d->services = meta.services;
    d->n_services = meta.n_services;
    d->command = meta.command;
    d->n_command = meta.n_command;
}

/* Size and digest of each listed image; one the store cannot measure is
 * listed without them (its name still goes out in m->images). */
static int image_details(skv_proto_agent_register *m, const skv_agent *a,
                         skv_error *err)
{
    if (m->n_images == 0)
        return 0;
    m->image_details = skv__calloc(m->n_images, sizeof(*m->image_details));
    if (!m->image_details)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < m->n_images; i++) {
        skv_proto_image_detail *d = &m->image_details[m->n_image_details];
        char dig[SKV_IMAGE_DIGEST_MAX];
        d->name = m->images[i];
        if (skv_image_size(a->images, d->name, &d->size_bytes, NULL) != 0 ||
            skv_image_digest(a->images, d->name, dig, sizeof(dig), NULL) != 0)
            continue;
        if (dig[0] && !(d->digest = skv__strdup(dig)))
            return skv__err(err, SKV_ENOMEM, "out of memory");
        image_meta(a, d);
        m->n_image_details++;
    }
    return 0;
}

int skv__agent_send_register(skv_agent *a, int64_t now_ms, skv_error *err)
{
    skv_proto_agent_register m;
    memset(&m, 0, sizeof(m));
    struct utsname u;
    if (uname(&u) < 0)
        snprintf(u.machine, sizeof(u.machine), "unknown");
    m.agent_id = a->agent_id;
    m.resource_group = a->resource_group;
    m.architecture = u.machine;
    m.address = a->address;
    m.version = (char *)skv_version_string();
    m.route_deltas = true;    /* net_routes_delta.c applies them */
    char *lab = a->labels ? skv__strdup(a->labels) : NULL;
    int rc = (a->labels && !lab) ? skv__err(err, SKV_ENOMEM, "out of memory")
                                 : labels(&m, lab, err);
    if (rc == 0)
        rc = devices(&m, a, err);
    if (rc == 0)
        rc = skv__agent_layout(&m, a, err);
    if (rc == 0)
        rc = skv_image_list(a->images, &m.images, &m.n_images, err);
    if (rc == 0)
        rc = image_details(&m, a, err);
    if (rc == 0 && !(m.kernels = skv__agent_reports(a, &m.n_kernels, err)))
        rc = SKV_ENOMEM;
    if (rc == 0) {
        a->register_id = ++a->next_req_id;
        rc = skv__agent_emit(a, SKV_PROTO_REQUEST, a->register_id,
                             SKV_PROTO_AGENT_REGISTER, &m, now_ms, err);
    }
    skv__free(m.kernels);
    free_details(m.image_details, m.n_image_details);
    skv_image_list_free(m.images, m.n_images);
    skv__agent_layout_free(&m);
    free_devices(m.devices, m.n_devices);
    skv__free(m.labels);
    skv__free(lab);
    return rc;
}

int skv__agent_on_register_reply(skv_agent *a, const skv_proto_envelope *env,
                                 int64_t now_ms, skv_error *err)
{
    skv_proto_agent_register_reply r;
    memset(&r, 0, sizeof(r));
    int rc = skv_proto_body_decode(&r, SKV_PROTO_AGENT_REGISTER_REPLY,
                                   env->body, env->body_len, err);
    if (rc)
        return rc;
    a->registered = true;
    a->health_told = false;     /* the manager hears the set again */
    a->hb_ms = r.heartbeat_interval_ms ? r.heartbeat_interval_ms
                                       : SKV__AGENT_DEFAULT_HEARTBEAT_MS;
    a->next_hb = now_ms + a->hb_ms;
    skv_error e = SKV_ERROR_INIT;
    /* Kernels on this agent still run without the peers' routes. */
    if (skv__agent_net_registered(a, &r, &e) != 0)
        skv__log(SKV_LOG_WARN, "agent", "cluster network: %s", e.message);
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &r);
    skv__log(SKV_LOG_INFO, "agent", "registered as %s (heartbeat %u ms, "
             "%zu kernels)", a->agent_id, a->hb_ms, a->nk);
    /* Exits are never lost: every one not yet confirmed is sent again. */
    for (size_t i = 0; rc == 0 && i < a->nk; i++)
        if (a->k[i]->exited)
            rc = skv__agent_send_exit(a, a->k[i], now_ms, err);
    return rc;
}
