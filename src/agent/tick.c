/* The agent's periodic work: container exit polling, heartbeats, per-kernel
 * statistics and log retention.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <string.h>

#include "agent_internal.h"

/* Whether k's container has ended (recorded in k). */
static bool ended(skv_agent *a, skv__agent_kernel *k, int64_t now_ms)
{
    if (k->exited)
        return true;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_runtime_wait(a->rt, k->req.kernel_id, 0, &st, &e);
    if (rc == SKV_ETIMEDOUT)
        return false;
    if (rc) {
        /* The runtime cannot tell: the container is gone for us. */
        skv__log(SKV_LOG_ERROR, "agent", "kernel %s: %s", k->req.kernel_id,
                 e.message);
        st.state = SKV_CONTAINER_LOST;
    }
    k->exited = true;
    k->st = st;
    k->finished_ms = now_ms;
    return true;
}

void skv__agent_poll_exits(skv_agent *a, int64_t now_ms)
{
    for (size_t i = 0; i < a->nk;) {
        skv__agent_kernel *k = a->k[i];
        if (k->destroying) {
            /* The manager asked for the end: it gets the ack, not an exit. */
            if (ended(a, k, now_ms) || now_ms >= k->destroy_deadline) {
                skv__agent_destroy_finish(a, k, now_ms, NULL);
                continue;           /* k is gone; a->k[i] is the next one */
            }
        } else if (!k->exited && ended(a, k, now_ms) && a->registered) {
            skv__agent_send_exit(a, k, now_ms, NULL);
        }
        i++;
    }
}

static int heartbeat(skv_agent *a, int64_t now_ms, skv_error *err)
{
    skv_proto_agent_heartbeat m;
    memset(&m, 0, sizeof(m));
    m.agent_id = a->agent_id;
    m.seq = ++a->seq;
    int rc = skv_slots_new(&m.occupied, err);
    for (size_t i = 0; rc == 0 && i < a->nk; i++)
        if (!a->k[i]->exited && a->k[i]->req.slots)
            rc = skv_slots_add(m.occupied, a->k[i]->req.slots, err);
    if (rc == 0 && !(m.kernels = skv__agent_reports(a, &m.n_kernels, err)))
        rc = SKV_ENOMEM;
    if (rc == 0)
        rc = skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_HEARTBEAT,
                             &m, now_ms, err);
    skv__free(m.kernels);
    skv_slots_free(m.occupied);
    return rc;
}

static int stats(skv_agent *a, int64_t now_ms, skv_error *err)
{
    skv_proto_agent_stats m;
    memset(&m, 0, sizeof(m));
    m.agent_id = a->agent_id;
    m.kernels = skv__calloc(a->nk + 1, sizeof(*m.kernels));
    if (!m.kernels)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    for (size_t i = 0; i < a->nk; i++) {
        const skv__agent_kernel *k = a->k[i];
        skv_container_stats st = SKV_CONTAINER_STATS_INIT;
        if (k->exited ||
            skv_runtime_stats(a->rt, k->req.kernel_id, &st, NULL) != 0)
            continue;
        skv_proto_kernel_stats *s = &m.kernels[m.n_kernels++];
        s->session_id = k->req.session_id;
        s->kernel_id = k->req.kernel_id;
        s->cpu_usec = st.cpu_time_ns / 1000;
        s->mem_bytes = st.memory_current;
        s->mem_peak_bytes = st.memory_peak;
        s->pids = (uint32_t)st.pids_current;
    }
    int rc = m.n_kernels == 0 ? 0
                              : skv__agent_emit(a, SKV_PROTO_EVENT, 0,
                                                SKV_PROTO_AGENT_STATS, &m,
                                                now_ms, err);
    skv__free(m.kernels);
    return rc;
}

int skv_agent_tick(skv_agent *a, int64_t now_ms, skv_error *err)
{
    if (!a)
        return skv__err(err, SKV_EINVAL, "skv_agent_tick: agent is NULL");
    int rc = 0;
    skv__agent_jobs_finish(a, false, now_ms);
    if (now_ms >= a->next_poll) {
        skv__agent_poll_exits(a, now_ms);
        skv__agent_execs_check(a, now_ms);
        skv_error he = SKV_ERROR_INIT;
        if (skv__agent_health_check(a, now_ms, &he))
            skv__log(SKV_LOG_WARN, "agent", "device health: %s", he.message);
        a->next_poll = now_ms + a->poll_ms;
    }
    if (a->registered && now_ms >= a->next_hb) {
        rc = heartbeat(a, now_ms, err);
        a->next_hb = now_ms + a->hb_ms;
    }
    if (rc == 0 && a->registered && now_ms >= a->next_stats) {
        rc = stats(a, now_ms, err);
        a->next_stats = now_ms + a->stats_ms;
    }
    if (now_ms >= a->next_prune)
        skv__agent_prune_logs(a, now_ms);
    return rc;
}

int64_t skv_agent_next_tick_ms(const skv_agent *a, int64_t now_ms)
{
    if (!a)
        return 1000;
    /* Exit polling matters only while a container runs. */
    bool running = a->nex > 0;
    for (size_t i = 0; !running && i < a->nk; i++)
        running = !a->k[i]->exited;
    int64_t next = running ? a->next_poll : a->next_prune;
    if (a->registered && a->next_hb < next)
        next = a->next_hb;
    if (a->registered && a->next_stats < next)
        next = a->next_stats;
    if (a->next_prune < next)
        next = a->next_prune;
    /* Finished background creates, when no wake-up announces them. */
    if (a->njobs && !a->wake && now_ms + 2 < next)
        next = now_ms + 2;
    return next > now_ms ? next - now_ms : 0;
}
