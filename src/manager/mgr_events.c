/* Events from registered agents: heartbeat, kernel.status, kernel.exit,
 * agent.stats. Each must come from the agent itself, on the connection it
 * registered on.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_idle.h"

skv__mgr_agent *skv__mgr_reporter(skv_manager *m, const skv__mgr_call *c,
                                   const char *agent_id, skv_error *err)
{
    if (!agent_id)
        return skv__err(err, SKV_EINVAL, "%s: agent_id is required",
                        skv_proto_type_name(c->type)), NULL;
    if (skv_auth_may(c->who, SKV_AUTH_OP_AGENT_REPORT, agent_id, err))
        return NULL;
    skv__mgr_agent *a = skv__mgr_agent_find(m, agent_id);
    if (!a || a->conn != c->conn || a->state != SKV__AGENT_ALIVE)
        return skv__err(err, SKV_ESTATE, "agent '%s' is not registered on "
                        "this connection", agent_id), NULL;
    a->last_hb_ms = c->now_ms;
    skv__mgr_hb_note(m, a);
    return a;
}

int skv__mgr_on_heartbeat(skv_manager *m, const skv__mgr_call *c,
                          skv_error *err)
{
    const skv_proto_agent_heartbeat *h = c->body;
    return skv__mgr_reporter(m, c, h->agent_id, err) ? 0 : SKV_ESTATE;
}

int skv__mgr_on_kernel_status(skv_manager *m, const skv__mgr_call *c,
                              skv_error *err)
{
    const skv_proto_kernel_status *s = c->body;
    if (!skv__mgr_reporter(m, c, s->agent_id, err))
        return SKV_ESTATE;
    if (!s->kernel_id || !s->status)
        return skv__err(err, SKV_EINVAL, "kernel.status: kernel_id and status "
                        "are required");
    skv__log(SKV_LOG_DEBUG, "manager", "kernel %s on %s: %s", s->kernel_id,
             s->agent_id, s->status);
    if (strcmp(s->status, "running") && strcmp(s->status, "RUNNING"))
        return 0;
    int rc = skv__mgr_kernel_running(m, s->kernel_id, s->container_id,
                                     c->now_ms, err);
    return rc == SKV_ENOENT ? 0 : rc;
}

/* The agent's container of kernel kid: ours to record, or stale. */
static bool kernel_here(skv_manager *m, const char *kid, const char *agent)
{
    return skv__mgr_store_kernel_sent_to(m->store, kid, agent);
}

static void destroy_stale(skv_manager *m, skv__mgr_agent *a,
                          const skv_proto_kernel_exit *x)
{
    skv_proto_kernel_destroy d = {0};
    d.session_id = x->session_id;
    d.kernel_id = x->kernel_id;
    d.reason = "exit recorded";
    skv__mgr_request(m, a->conn, SKV__REQ_DESTROY, SKV_PROTO_KERNEL_DESTROY,
                     &d, x->kernel_id, 0, 0);
}

int skv__mgr_on_kernel_exit(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err)
{
    const skv_proto_kernel_exit *x = c->body;
    skv__mgr_agent *a = skv__mgr_reporter(m, c, x->agent_id, err);
    if (!a)
        return SKV_ESTATE;
    if (!x->kernel_id)
        return skv__err(err, SKV_EINVAL, "kernel.exit: kernel_id is required");
    if (kernel_here(m, x->kernel_id, a->id)) {
        int code = x->signal ? 128 + x->signal : x->exit_code;
        char why[256];
        snprintf(why, sizeof why, "%s", x->oom ? "oom-killed"
                 : x->reason ? x->reason : x->signal ? "killed by a signal"
                                                     : "exited");
        int rc = skv__mgr_kernel_ended(m, x->kernel_id, "TERMINATED", code,
                                       why, c->now_ms, err);
        if (rc)
            return rc;   /* not destroyed: the agent sends the exit again */
    } else {
        skv__log(SKV_LOG_INFO, "manager", "exit of kernel %s on %s is not "
                 "ours any more; destroying it", x->kernel_id, a->id);
    }
    destroy_stale(m, a, x);
    return 0;
}

/* The latest figures per kernel are kept on its row (one transaction). */
int skv__mgr_on_agent_stats(skv_manager *m, const skv__mgr_call *c,
                            skv_error *err)
{
    const skv_proto_agent_stats *s = c->body;
    if (!skv__mgr_reporter(m, c, s->agent_id, err))
        return SKV_ESTATE;
    int rc = skv__mgr_begin(m, err);
    if (!rc)
        rc = skv__mgr_store_kernel_stats(m->store, s->agent_id, s->kernels,
                                         s->n_kernels, c->now_ms, err);
    if (rc) {
        skv__mgr_rollback(m);
        return rc;
    }
    rc = skv__mgr_commit(m, err);
    for (size_t i = 0; !rc && i < s->n_kernels; i++)
        skv__mgr_idle_cpu(m, s->kernels[i].session_id,
                          s->kernels[i].kernel_id, s->kernels[i].cpu_usec,
                          c->now_ms);
    return rc;
}
