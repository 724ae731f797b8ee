/* A scheduling pass: run skv_sched_pass (decide), record every placement
 * in one transaction, each as a unit: its kernels with their agent and
 * per-device allocation, a cluster session's subnets and key seed, the
 * session's state, and the kernel.create frames for its kernels on agents
 * that take them (the outbox; they leave after the commit). Those
 * kernels and their session are written PREPARING at once (the history
 * keeps SCHEDULED before it): a status written twice per row in one
 * transaction cost two UPDATEs and index moves each. Then handle
 * preemptions (victims are destroyed and requeued).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <time.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* A kernel's allocation rows, written as one statement once all are
 * known (store/alloc.c). The strings are the agent's and the result's. */
typedef struct {
    skv__mgr_store_alloc *v;
    size_t n;
} alloc_rows;

static void alloc_row(alloc_rows *r, const char *kid, const char *dev,
                      const char *slot, skv_qty amount, bool whole)
{
    skv__mgr_store_alloc *a = &r->v[r->n++];
    memset(a, 0, sizeof *a);
    a->kernel_id = kid;
    a->device_id = dev;
    a->slot = slot;
    a->amount = amount;
    a->whole = whole;
}

/* Pooled slots (e.g. memory) belong to a device of the agent, not to the
 * scheduler's devices: one row per pooled slot the kernel asked for. */
static int pooled_rows(skv_manager *m, const char *kid,
                       const skv__mgr_agent *a, alloc_rows *r,
                       skv_error *err)
{
    skv_slots *req = NULL;
    int rc = skv__mgr_store_kernel_slots(m->store, kid, &req, err);
    for (size_t j = 0; !rc && req && j < a->n_pool; j++) {
        skv_qty q = skv_slots_get(req, a->pool_slot[j]);
        if (q > 0)
            alloc_row(r, kid, a->pool_dev[j], a->pool_slot[j], q, false);
    }
    skv_slots_free(req);
    return rc;
}

static int device_rows(const skv_sched_result *res, const char *kid,
                       const skv_sched_kernel_placement *kp,
                       const skv__mgr_agent *a, alloc_rows *r,
                       skv_error *err)
{
    for (size_t d = 0; d < kp->n_devices; d++) {
        const skv_sched_device_share *sh = &kp->devices[d];
        if (sh->device >= a->n_dev || sh->slot >= res->n_slots)
            return skv__err(err, SKV_ESTATE, "placement of %s names device "
                            "%u of agent '%s' that it does not have", kid,
                            sh->device, a->id);
        alloc_row(r, kid, a->dev_ids[sh->device], res->slot_names[sh->slot],
                  sh->amount, sh->whole);
    }
    return 0;
}

/* A kernel on an agent that takes creates now is placed as PREPARING:
 * its create goes out in the same unit (skv__mgr_creates_placed). */
static int kernel_rows(skv_manager *m, const skv_sched_result *res,
                       const char *sid, const skv_sched_kernel_placement *kp,
                       size_t *sends, skv_error *err)
{
    char kid[SKV__MGR_ID_MAX];
    const skv__mgr_agent *a = skv__mgr_agent_find(m, kp->agent_id);
    if (!a)
        return skv__err(err, SKV_ENOENT, "placement on unknown agent '%s'",
                        kp->agent_id);
    alloc_rows r = {skv__calloc(kp->n_devices + a->n_pool + 1, sizeof *r.v),
                    0};
    if (!r.v)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    /* ids change at every requeue (mgr_suspect.c) */
    int rc = skv__mgr_kernel_id_at(m, sid, kp->kernel, kid, sizeof kid, err);
    bool send = skv__mgr_agent_takes_creates(a);
    if (!rc)
        rc = skv__mgr_store_kernel_place_as(m->store, kid, kp->agent_id,
                                            send ? "PREPARING" : "SCHEDULED",
                                            err);
    *sends += send;
    if (!rc)
        rc = device_rows(res, kid, kp, a, &r, err);
    if (!rc)
        rc = pooled_rows(m, kid, a, &r, err);
    if (!rc && r.n)
        rc = skv__mgr_store_alloc_add(m->store, r.v, r.n, err);
    skv__free(r.v);
    return rc;
}

/* A cluster session's network is decided with its placement: its subnet
 * on every agent it landed on (hence each kernel's address) and its SSH
 * key seed, so sending kernel.create later only reads. */
static int network(skv_manager *m, const skv_sched_placement *p,
                   skv_error *err)
{
    if (p->n_kernels < 2)
        return 0;
    uint8_t seed[32];
    int rc = skv__mgr_net_seed(m, p->session_id, seed, err);
    for (size_t k = 0; !rc && k < p->n_kernels; k++) {
        char subnet[32], addr[32];
        rc = skv__mgr_net_kernel(m, p->session_id, p->kernels[k].agent_id,
                                 p->kernels[k].kernel, subnet, addr, err);
    }
    return rc;
}

/* SCHEDULED, then PREPARING at once when creates go out in this unit: the
 * history has both, the row is written once. */
static int session_row(skv_manager *m, const skv_sched_placement *p,
                       size_t sends, int64_t now, skv_error *err)
{
    char why[SKV__MGR_ID_MAX + 32];
    snprintf(why, sizeof why, "placed (main kernel on %s)",
             p->n_kernels ? p->kernels[0].agent_id : "?");
    if (!sends)
        return skv__mgr_session_set(m, p->session_id, SKV_SESSION_SCHEDULED,
                                    why, now, err);
    int rc = skv__mgr_history_add(m, p->session_id, "SCHEDULED", why, now,
                                  err);
    if (!rc)
        rc = skv__mgr_session_set(m, p->session_id, SKV_SESSION_PREPARING,
                                  "kernel.create sent", now, err);
    return rc;
}

static int placement_rows(skv_manager *m, const skv_sched_result *res,
                          const skv_sched_placement *p, int64_t now,
                          size_t *sends, skv_error *err)
{
    int rc = 0;
    for (size_t k = 0; !rc && k < p->n_kernels; k++)
        rc = kernel_rows(m, res, p->session_id, &p->kernels[k], sends, err);
    if (!rc)
        rc = network(m, p, err);
    return rc ? rc : session_row(m, p, *sends, now, err);
}

/* One placement and its creates as a unit of the pass's transaction: a
 * failure undoes it alone and puts its session back to pending. */
static bool record_one(skv_manager *m, const skv_sched_result *res,
                       const skv_sched_placement *p, int64_t now)
{
    skv_error e = SKV_ERROR_INIT;
    size_t sends = 0, mark = skv__mgr_outbox_mark(m);
    int rc = skv__mgr_store_savepoint(m->store, &e);
    if (!rc)
        rc = placement_rows(m, res, p, now, &sends, &e);
    if (!rc)
        rc = skv__mgr_creates_placed(m, p->session_id, sends, now, &e);
    if (!rc)
        rc = skv__mgr_store_release(m->store, &e);
    if (!rc)
        return true;
    skv__mgr_store_rollback_to(m->store);
    skv__mgr_outbox_drop(m, mark, e.message);    /* its creates */
    skv__log(SKV_LOG_ERROR, "manager", "placement of %s not recorded (%s); "
             "back to pending", p->session_id, e.message);
    skv_sched_requeue(m->sched, p->session_id, now, NULL);
    return false;
}

/* Decide, persist: every placement of the pass with its kernel.create
 * frames (in the outbox) in one unit of the tick's batch (mgr_units.c);
 * the creates leave once the batch committed, and go back to pending if
 * it fails. */
static size_t record(skv_manager *m, const skv_sched_result *res,
                     int64_t now, const char **placed)
{
    skv_error e = SKV_ERROR_INIT;
    size_t n = 0;
    skv__mgr_units_join(m, 0, now);     /* a unit of the tick's batch */
    int rc = skv__mgr_begin(m, &e);
    for (size_t i = 0; !rc && i < res->n_placements; i++)
        if (record_one(m, res, &res->placements[i], now)) {
            placed[n++] = res->placements[i].session_id;
            skv__mgr_after(m, SKV__AFTER_PLACED, placed[n - 1], false, now);
        }
    if (!rc)
        rc = skv__mgr_commit(m, &e);
    if (rc)
        skv__mgr_rollback(m);
    skv__mgr_units_leave(m);
    if (!rc) {
        m->st.placements += n;
        return n;
    }
    skv__log(SKV_LOG_ERROR, "manager", "the pass's %zu placements were not "
             "recorded (%s); back to pending", res->n_placements, e.message);
    for (size_t i = 0; i < res->n_placements; i++)
        skv_sched_requeue(m->sched, res->placements[i].session_id, now, NULL);
    return 0;
}

/* The victim's group says what happens to it: back to PENDING in its
 * original place (requeue, the default) or TERMINATED. */
static bool terminates(skv_manager *m, const char *victim)
{
    skv__mgr_group_info gi;
    char group[SKV__MGR_ID_MAX];
    return skv__mgr_store_session_group(m->store, victim, group,
                                        sizeof group, NULL) == 0 &&
           skv__mgr_admin_group(&m->admin, &gi, group, NULL) == 0 &&
           strcmp(gi.preempt_mode, "terminate") == 0;
}

static void preempt(skv_manager *m, const skv_sched_preemption *v, int64_t now)
{
    char why[SKV__MGR_ID_MAX + 64];
    snprintf(why, sizeof why, "preempted for %s (%s)", v->for_session_id,
             v->cause == SKV_SCHED_PREEMPT_RECLAIM ? "reclaiming borrowed "
             "capacity" : "higher priority");
    skv_error e = SKV_ERROR_INIT;
    int rc = terminates(m, v->victim_id)
                 ? skv__mgr_session_stop(m, v->victim_id,
                                         SKV_SESSION_TERMINATED, why, NULL,
                                         now, &e)
                 : skv__mgr_session_requeue_for(m, v->victim_id,
                                                v->for_session_id, why, now,
                                                &e);
    if (rc)
        skv__log(SKV_LOG_ERROR, "manager", "preempting %s: %s", v->victim_id,
                 e.message);
    else
        m->st.preemptions++;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int skv__mgr_pass(skv_manager *m, int64_t now_ms, skv_error *err)
{
    skv_sched_pass_options po = SKV_SCHED_PASS_OPTIONS_INIT;
    po.max_placements = m->max_per_pass;
    skv_sched_result *res = NULL;
    uint64_t t0 = mono_ns();
    m->dirty = false;
    m->last_pass_ms = now_ms;
    int rc = skv_sched_pass(&res, m->sched, now_ms, &po, err);
    if (rc)
        return rc;
    uint64_t ns = mono_ns() - t0;
    m->st.passes++;
    m->st.pass_ns_total += ns;
    skv__mgr_metrics_pass(m, ns);
    /* Strings in res stay valid: the result is independent of the
     * scheduler. Record every placement, then send (the outbox), before
     * acting on preemptions. */
    const char **placed = skv__calloc(res->n_placements + 1, sizeof *placed);
    if (!placed) {
        for (size_t i = 0; i < res->n_placements; i++)
            skv_sched_requeue(m->sched, res->placements[i].session_id,
                              now_ms, NULL);
        skv_sched_result_free(res);
        m->dirty = true;
        return skv__err(err, SKV_ENOMEM, "manager pass: out of memory");
    }
    record(m, res, now_ms, placed);
    skv__free(placed);
    for (size_t i = 0; i < res->n_preemptions; i++)
        preempt(m, &res->preemptions[i], now_ms);
    if (res->n_placements || res->n_preemptions)
        m->dirty = true;   /* more may fit after preemptions or limits */
    if (res->n_placements == 0 && res->n_preemptions == 0)
        m->dirty = false;
    skv_sched_result_free(res);
    return 0;
}
