/* agent.device_health: the agent's current set of unhealthy devices (the
 * whole set each time; devices not named are healthy). A device that
 * turns unhealthy leaves the schedulable capacity (the scheduler holds it,
 * skv_sched_agent_set_device_health) and the sessions using it follow
 * their group's fault_action: batch sessions are requeued (the default;
 * capacity comes back when the agent confirmed the destroys, mgr_drain.c),
 * terminated, or only marked degraded; interactive sessions are always
 * only marked degraded (a DEGRADED entry in their history: someone is
 * using them). A device that turns healthy again is schedulable again.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static const skv_proto_device_fault *
fault_in(const skv_proto_device_fault *v, size_t n, const char *id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].device_id && !strcmp(v[i].device_id, id))
            return &v[i];
    return NULL;
}

static bool has_device(const skv__mgr_agent *a, const char *id)
{
    for (size_t i = 0; i < a->n_dev; i++)
        if (!strcmp(a->dev_ids[i], id))
            return true;
    return false;
}

static void faults_free(skv_proto_device_fault *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        skv__free(v[i].device_id);
        skv__free(v[i].reason);
    }
    skv__free(v);
}

void skv__mgr_health_free(skv__mgr_agent *a)
{
    faults_free(a->unhealthy, a->n_unhealthy);
    a->unhealthy = NULL;
    a->n_unhealthy = 0;
}

static int faults_copy(skv_proto_device_fault **out,
                       const skv_proto_device_fault *v, size_t n)
{
    *out = n ? skv__calloc(n, sizeof **out) : NULL;
    if (n && !*out)
        return SKV_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        (*out)[i].device_id = skv__strdup(v[i].device_id);
        (*out)[i].reason = skv__strdup(v[i].reason ? v[i].reason : "");
        if (!(*out)[i].device_id || !(*out)[i].reason) {
            faults_free(*out, n);
            *out = NULL;
            return SKV_ENOMEM;
        }
    }
    return 0;
}

static void set_health(skv_manager *m, const skv__mgr_agent *a,
                       const char *dev, bool healthy)
{
    skv_error e = SKV_ERROR_INIT;
    if (a->in_sched && skv_sched_agent_set_device_health(m->sched, a->id, dev,
                                                         healthy, &e))
        skv__log(SKV_LOG_WARN, "manager", "agent %s device %s: %s", a->id,
                 dev, e.message);
}

/* A registration described a again: its known faults still hold until
 * it says otherwise. */
void skv__mgr_health_reapply(skv_manager *m, skv__mgr_agent *a)
{
    for (size_t i = 0; i < a->n_unhealthy; i++)
        set_health(m, a, a->unhealthy[i].device_id, false);
}

static void degrade(skv_manager *m, const char *sid, const char *why,
                    int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv__mgr_begin(m, &e) == 0 &&
        skv__mgr_history_add(m, sid, "DEGRADED", why, now, &e) == 0 &&
        skv__mgr_commit(m, &e) == 0) {
        skv__log(SKV_LOG_WARN, "manager", "session %s degraded: %s", sid, why);
        return;
    }
    skv__mgr_rollback(m);
    skv__log(SKV_LOG_ERROR, "manager", "session %s: %s", sid, e.message);
}

static void fault_session(skv_manager *m, const char *sid, const char *action,
                          const char *why, int64_t now)
{
    skv_proto_session_submit s = {0};
    char dom[SKV__MGR_ID_MAX], proj[SKV__MGR_ID_MAX], own[SKV__MGR_ID_MAX];
    bool batch = skv__mgr_load_submit(m, sid, &s, dom, proj, own, NULL) == 0 &&
                 s.session_type && !strcmp(s.session_type, "batch");
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
    skv_error e = SKV_ERROR_INIT;
    int rc = 0;
    if (!batch || !strcmp(action, "degrade"))
        degrade(m, sid, why, now);
    else if (!strcmp(action, "terminate"))
        rc = skv__mgr_session_stop(m, sid, SKV_SESSION_TERMINATED, why, NULL,
                                   now, &e);
    else
        rc = skv__mgr_session_requeue(m, sid, why, now, &e);
    if (rc)
        skv__log(SKV_LOG_ERROR, "manager", "%s after %s: %s", sid, why,
                 e.message);
}

static void device_down(skv_manager *m, const skv__mgr_agent *a,
                        const skv_proto_device_fault *f, int64_t now)
{
    char why[2 * SKV__MGR_ID_MAX + 96];
    snprintf(why, sizeof why, "device %s of agent %s unhealthy: %.80s",
             f->device_id, a->id, f->reason ? f->reason : "");
    skv__log(SKV_LOG_WARN, "manager", "%s", why);
    set_health(m, a, f->device_id, false);
    skv__mgr_store_gops o;
    char **ids = NULL;
    size_t n = 0;
    if (skv__mgr_store_group_ops(m->store, a->group, &o, NULL) ||
        skv__mgr_store_sessions_on_device(m->store, a->id, f->device_id, &ids,
                                          &n, NULL))
        return;
    for (size_t i = 0; i < n; i++)
        fault_session(m, ids[i], o.fault_action, why, now);
    skv__mgr_ids_free(ids, n);
}

static int check_faults(const skv__mgr_agent *a,
                        const skv_proto_agent_device_health *h,
                        skv_error *err)
{
    for (size_t i = 0; i < h->n_unhealthy; i++) {
        const char *id = h->unhealthy[i].device_id;
        if (!has_device(a, id))
            return skv__err(err, SKV_EINVAL, "agent.device_health: agent '%s' "
                            "registered no accelerator '%s'", a->id, id);
        if (fault_in(h->unhealthy, i, id))
            return skv__err(err, SKV_EINVAL, "agent.device_health: device "
                            "'%s' named twice", id);
    }
    return 0;
}

/* The reported set replaces the stored one before it is acted on, so a
 * restarted manager knows it (skv__mgr_health_restore). A store that
 * cannot take it does not stop the faulty device from leaving the
 * capacity now: only a restart would forget it until the next report. */
static void persist(skv_manager *m, const skv__mgr_agent *a,
                    const skv_proto_agent_device_health *h)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv__mgr_begin(m, &e) == 0 &&
        skv__mgr_store_health_set(m->store, a->id, h->unhealthy,
                                  h->n_unhealthy, &e) == 0 &&
        skv__mgr_commit(m, &e) == 0)
        return;
    skv__mgr_rollback(m);
    skv__log(SKV_LOG_ERROR, "manager", "agent %s: device health not stored "
             "(a restart forgets it until the agent reports again): %s",
             a->id, e.message);
}

/* On open, before a restored agent registers again: the faults it last
 * reported hold (its devices are out of the capacity) until it reports
 * its set again after registering. Rows for devices it no longer
 * registers are left out. */
int skv__mgr_health_restore(skv_manager *m, skv__mgr_agent *a, skv_error *err)
{
    skv_proto_device_fault *v = NULL;
    size_t n = 0, k = 0;
    int rc = skv__mgr_store_health(m->store, a->id, &v, &n, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++) {
        if (!has_device(a, v[i].device_id)) {
            skv__free(v[i].device_id);
            skv__free(v[i].reason);
            continue;
        }
        v[k++] = v[i];
    }
    skv__mgr_health_free(a);
    a->unhealthy = k ? v : NULL;
    a->n_unhealthy = k;
    if (!k)
        skv__free(v);
    skv__mgr_health_reapply(m, a);
    if (k)
        skv__log(SKV_LOG_INFO, "manager", "agent %s: %zu device(s) unhealthy "
                 "as last reported (first %s)", a->id, k, v[0].device_id);
    return 0;
}

int skv__mgr_on_device_health(skv_manager *m, const skv__mgr_call *c,
                              skv_error *err)
{
    const skv_proto_agent_device_health *h = c->body;
    skv__mgr_agent *a = skv__mgr_reporter(m, c, h->agent_id, err);
    if (!a)
        return SKV_ESTATE;
    int rc = check_faults(a, h, err);
    skv_proto_device_fault *now_set = NULL;
    if (!rc && faults_copy(&now_set, h->unhealthy, h->n_unhealthy))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    if (rc)
        return rc;
    persist(m, a, h);
    for (size_t i = 0; i < a->n_unhealthy; i++)
        if (!fault_in(h->unhealthy, h->n_unhealthy, a->unhealthy[i].device_id)) {
            skv__log(SKV_LOG_INFO, "manager", "device %s of agent %s healthy "
                     "again", a->unhealthy[i].device_id, a->id);
            set_health(m, a, a->unhealthy[i].device_id, true);
        }
    for (size_t i = 0; i < h->n_unhealthy; i++)
        if (!fault_in(a->unhealthy, a->n_unhealthy, h->unhealthy[i].device_id))
            device_down(m, a, &h->unhealthy[i], c->now_ms);
    skv__mgr_health_free(a);
    a->unhealthy = now_set;
    a->n_unhealthy = h->n_unhealthy;
    m->dirty = true;
    return 0;
}

size_t skv__mgr_unhealthy_devices(const skv_manager *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->n_agents; i++)
        n += m->agents[i].n_unhealthy;
    return n;
}
