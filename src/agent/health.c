/* Device health: at every poll the agent asks each accelerator plugin for
 * its unhealthy devices (skv_plugin_health) and, when the set changed or
 * after each registration, sends the whole set to the manager in
 * agent.device_health (an empty set: all healthy). The manager takes
 * unhealthy devices out of the schedulable capacity and handles the
 * sessions on them (mgr_health.c). A plugin whose report fails keeps its
 * devices' last known state (logged): a broken probe must not look like a
 * recovery.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "agent_internal.h"

typedef struct hscan {
    skv_agent *a;
    size_t plugin;
    skv_proto_device_fault *v;
    size_t n, cap;
} hscan;

static int add(void *arg, const char *dev, const char *reason)
{
    hscan *h = arg;
    for (size_t i = 0; i < h->a->ndevs; i++) {
        const skv__agent_dev *d = &h->a->devs[i];
        if (d->plugin != h->plugin || strcmp(d->dev, dev) || d->excluded)
            continue;
        for (size_t j = 0; j < h->n; j++)
            if (h->v[j].device_id == d->id)
                return 0;               /* reported twice: once is enough */
        if (h->n == h->cap)
            return SKV_ENOMEM;          /* cap = every device: cannot be */
        /* the plugin's string lives during this call only */
        if (!(h->v[h->n].reason = skv__strdup(reason)))
            return SKV_ENOMEM;
        h->v[h->n++].device_id = d->id;
        return 0;
    }
    return 0;       /* a device outside the slice: not the manager's */
}

/* "id\treason\n" per unhealthy device: what was last sent. */
static char *render(const skv_proto_device_fault *v, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i].device_id) + strlen(v[i].reason) + 2;
    char *s = skv__calloc(1, len);
    for (size_t i = 0; s && i < n; i++) {
        strcat(s, v[i].device_id);
        strcat(s, "\t");
        strcat(s, v[i].reason);
        strcat(s, "\n");
    }
    return s;
}

static int scan_plugin(hscan *h, size_t pi, skv_error *err)
{
    h->plugin = pi;
    skv_error le = SKV_ERROR_INIT;
    int rc = skv_plugin_health(skv_node_plugin_at(h->a->node, pi), add, h,
                               &le);
    if (rc == SKV_ENOMEM)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc)
        *err = le;
    return rc;
}

static void scan_free(hscan *h)
{
    for (size_t i = 0; i < h->n; i++)
        skv__free(h->v[i].reason);
    skv__free(h->v);
}

static int send_set(skv_agent *a, hscan *h, char *text, int64_t now_ms,
                    skv_error *err)
{
    skv_proto_agent_device_health m = {a->agent_id, h->v, h->n};
    int rc = skv__agent_emit(a, SKV_PROTO_EVENT, 0,
                             SKV_PROTO_AGENT_DEVICE_HEALTH, &m, now_ms, err);
    if (rc) {
        skv__free(text);
        return rc;
    }
    if (strcmp(text, a->health_sent ? a->health_sent : ""))
        skv__log(h->n ? SKV_LOG_WARN : SKV_LOG_INFO, "agent", "device health: "
                 "%zu unhealthy%s%s", h->n, h->n ? ": " : "",
                 h->n ? h->v[0].device_id : "");
    skv__free(a->health_sent);
    a->health_sent = text;
    a->health_told = true;
    return 0;
}

int skv__agent_health_check(skv_agent *a, int64_t now_ms, skv_error *err)
{
    if (!a->registered || !a->ndevs)
        return 0;
    hscan h = {a, 0, skv__calloc(a->ndevs, sizeof *h.v), 0, a->ndevs};
    if (!h.v)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    int rc = 0;
    for (size_t pi = 0; !rc && pi < skv_node_plugin_count(a->node); pi++)
        rc = scan_plugin(&h, pi, err);
    char *text = rc ? NULL : render(h.v, h.n);
    if (!rc && !text)
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (!rc && a->health_told && a->health_sent &&
        !strcmp(text, a->health_sent))
        skv__free(text);                /* nothing new */
    else if (!rc)
        rc = send_set(a, &h, text, now_ms, err);
    scan_free(&h);
    return rc;
}
