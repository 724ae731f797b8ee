/* Why session.logs cannot reach a kernel's output right now. The output
 * lives on the kernel's agent, so when that agent is away (disconnected,
 * past its heartbeat timeout, or not back since the manager started) the
 * answer says so and that the output comes back with the agent; a kernel
 * sent back to the queue after its agent was lost is told apart from one
 * that was never placed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <string.h>

#include "mgr_int.h"

static void agent_away(const skv__mgr_agent *a, const char *agent,
                       const char *kid, int64_t now_ms, skv_error *err)
{
    char how[96];
    if (!a)
        snprintf(how, sizeof how, "not registered");
    else if (a->state == SKV__AGENT_LOST)
        snprintf(how, sizeof how, "lost: no heartbeat for %" PRId64 " s",
                 (now_ms - a->last_hb_ms) / 1000);
    else if (a->state == SKV__AGENT_KNOWN)
        snprintf(how, sizeof how, "not reconnected since the manager "
                 "started");
    else
        snprintf(how, sizeof how, "disconnected");
    skv__err(err, SKV_ESTATE, "agent '%s' of kernel '%s' is away (%s); its "
             "output can be read again when the agent reconnects", agent,
             kid, how);
}

/* A kernel with no agent: was its session placed before (then requeued:
 * its agent was lost, it was preempted)? The status reason says why. */
static void unplaced(skv_manager *m, const char *sid, const char *kid,
                     skv_error *err)
{
    char why[256] = "";
    bool before = false;
    skv__mgr_store_unplaced(m->store, sid, why, sizeof why, &before, NULL);
    if (!before)
        skv__err(err, SKV_ESTATE, "kernel '%s' has not been placed yet", kid);
    else
        skv__err(err, SKV_ESTATE, "kernel '%s' is on no agent now: it was "
                 "placed, then its session went back to the queue (%s); "
                 "its output comes again when that agent returns with it "
                 "(the kernel is then adopted) or the session runs again", kid,
                 why[0] ? why : "no reason recorded");
}

void skv__mgr_logs_unavailable(skv_manager *m, const char *sid,
                               const char *kid, const char *agent,
                               int64_t now_ms, skv_error *err)
{
    if (!agent[0])
        unplaced(m, sid, kid, err);
    else
        agent_away(skv__mgr_agent_find(m, agent), agent, kid, now_ms, err);
}
