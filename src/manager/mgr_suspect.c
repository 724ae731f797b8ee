/* Suspected kernels and fresh kernel ids.
 *
 * An agent silent past the heartbeat timeout may be dead or only away (a
 * restart, a partition): its containers may still run or may have exited
 * with a real code. So when its session is requeued (lost_batch_policy
 * "requeue"), the kernels that had been sent to it are not forgotten but
 * kept as suspects (kernel_suspects, with their per-device allocation),
 * to be adopted if the agent comes back before the session is placed again
 * (mgr_adopt.c). The session's own kernel rows get new ids at every
 * requeue: the kernel id is the container id on the agent, and an agent
 * answers a create for an id it already has with that container, so a
 * reused id would either revive a stale container or run the command a
 * second time under the first one's name (and over its logs).
 * SPDX-License-Identifier: Apache-2.0 */
#include "mgr_int.h"

/* Inside the requeue transaction, before the allocation rows go: sid's
 * kernels that were sent to the lost agent (a container may exist). A
 * SCHEDULED kernel was never sent, so nothing of it can come back. */
int skv__mgr_suspect_keep(skv_manager *m, const char *sid, const char *agent,
                          int64_t now_ms, skv_error *err)
{
    int64_t kept = 0;
    int rc = skv__mgr_store_suspect_keep(m->store, sid, agent, now_ms, &kept,
                                         err);
    if (!rc && kept)
        skv__log(SKV_LOG_INFO, "manager", "session %s: %lld kernels on lost "
                 "agent %s kept as suspects", sid, (long long)kept, agent);
    return rc;
}

/* The current id of sid's kernel idx (ids change at requeue). */
int skv__mgr_kernel_id_at(skv_manager *m, const char *sid, uint32_t idx,
                          char *kid, size_t cap, skv_error *err)
{
    return skv__mgr_store_kernel_id_at(m->store, sid, idx, kid, cap, err);
}
