/* Reconciliation when an agent registers: kernels it reports that the
 * database places there are adopted as running; kernels it held when it was
 * lost are adopted back or destroyed by their session (mgr_adopt.c);
 * kernels it reports that the
 * database does not know (or knows as finished, or elsewhere) are destroyed;
 * kernels the database says run there but the agent does not report ended
 * ("lost on agent"). Then the scheduler's sums are checked. Every repair is
 * logged.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static void destroy_unknown(skv_manager *m, skv__mgr_agent *a,
                            const skv_proto_kernel_report *k, const char *why)
{
    skv_proto_kernel_destroy d = {0};
    d.session_id = k->session_id;
    d.kernel_id = k->kernel_id;
    d.reason = (char *)why;
    d.grace_ms = 1000;
    skv__log(SKV_LOG_WARN, "manager", "drift: agent %s runs kernel %s (%s); "
             "destroying it", a->id, k->kernel_id, why);
    skv__mgr_request(m, a->conn, SKV__REQ_DESTROY, SKV_PROTO_KERNEL_DESTROY,
                     &d, k->kernel_id, 0, 0);
}

/* Does the agent's view of a kernel's allocation match the record? Only
 * compared when the agent sent one. */
static bool alloc_matches(skv_manager *m, const skv_proto_kernel_report *k)
{
    skv__mgr_store_alloc *rows = NULL;
    size_t n = 0, reported = 0;
    bool same = true;
    if (k->n_alloc == 0 ||
        skv__mgr_store_alloc_of(m->store, k->kernel_id, &rows, &n, NULL))
        return true;
    for (size_t r = 0; r < n; r++) {
        skv_qty got = -1;
        for (size_t i = 0; i < k->n_alloc; i++)
            if (k->alloc[i].device_id &&
                !strcmp(k->alloc[i].device_id, rows[r].device_id))
                got = skv_slots_get(k->alloc[i].slots, rows[r].slot);
        same = same && got == rows[r].amount;
    }
    skv__free(rows);
    for (size_t i = 0; i < k->n_alloc; i++)
        reported += k->alloc[i].slots ? skv_slots_count(k->alloc[i].slots) : 0;
    return same && n == reported;
}

static void adopt_reported(skv_manager *m, skv__mgr_agent *a,
                           const skv_proto_agent_register *r,
                           const skv_proto_kernel_report *k, int64_t now)
{
    char status[32] = "", agent[SKV__MGR_ID_MAX] = "";
    skv__mgr_store_kernel row;
    if (!k->kernel_id)
        return;
    if (skv__mgr_store_kernel_info(m->store, k->kernel_id, &row, NULL) == 0) {
        snprintf(status, sizeof status, "%s", row.status);
        snprintf(agent, sizeof agent, "%s", row.agent);
    }
    if ((!status[0] || strcmp(agent, a->id)) &&
        skv__mgr_adopt_suspect(m, a, r, k, now))
        return;
    if (!status[0] || strcmp(agent, a->id))
        return destroy_unknown(m, a, k, "unknown to the manager");
    if (!strcmp(status, "TERMINATED") || !strcmp(status, "CANCELLED") ||
        !strcmp(status, "ERROR") || !strcmp(status, "PENDING"))
        return destroy_unknown(m, a, k, "finished for the manager");
    if (!strcmp(status, "TERMINATING"))
        return skv__mgr_send_destroy(m, k->kernel_id, "session terminating");
    if (!alloc_matches(m, k))
        skv__log(SKV_LOG_WARN, "manager", "drift: agent %s reports another "
                 "allocation for kernel %s than recorded; the record stands",
                 a->id, k->kernel_id);
    if (strcmp(status, "RUNNING")) {
        skv__log(SKV_LOG_INFO, "manager", "kernel %s reported by %s: adopted "
                 "as running", k->kernel_id, a->id);
        skv__mgr_kernel_running(m, k->kernel_id, k->kernel_id, now, NULL);
    }
}

static bool reported(const skv_proto_agent_register *r, const char *kid)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        if (r->kernels[i].kernel_id && !strcmp(r->kernels[i].kernel_id, kid))
            return true;
    return false;
}

/* Kernels recorded as started on a but not reported by it. */
static void end_missing(skv_manager *m, skv__mgr_agent *a,
                        const skv_proto_agent_register *r, int64_t now)
{
    char **all = NULL, **ids = NULL;
    size_t n_all = 0, n = 0;
    if (skv__mgr_store_agent_kernels(m->store, a->id, "RUNNING,TERMINATING",
                                     &all, &n_all, NULL))
        return;
    ids = skv__calloc(n_all ? n_all : 1, sizeof *ids);
    for (size_t i = 0; ids && i < n_all; i++)
        if (!reported(r, all[i]))
            ids[n++] = all[i];
    for (size_t i = 0; i < n; i++) {
        skv__log(SKV_LOG_WARN, "manager", "drift: kernel %s is not on agent "
                 "%s any more; treated as exited", ids[i], a->id);
        skv__mgr_kernel_ended(m, ids[i], "TERMINATED", -1, "lost on agent",
                              now, NULL);
    }
    skv__free(ids);
    skv__mgr_ids_free(all, n_all);
}

void skv__mgr_reconcile(skv_manager *m, skv__mgr_agent *a,
                        const skv_proto_agent_register *r, int64_t now_ms)
{
    for (size_t i = 0; i < r->n_kernels; i++)
        adopt_reported(m, a, r, &r->kernels[i], now_ms);
    end_missing(m, a, r, now_ms);
    skv__mgr_suspects_forget(m, a, r);
    skv_error e = SKV_ERROR_INIT;
    if (skv_sched_check(m->sched, &e))
        skv__log(SKV_LOG_ERROR, "manager", "allocation check after agent %s "
                 "registered: %s", a->id, e.message);
}
