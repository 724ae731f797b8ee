/* Session ids: "s-" + 8 hex digits of the submission's second + 8 hex
 * digits of a per-manager counter that starts at a random value.
 *
 * Why ordered: the session id keys the sessions, kernels, kernel_alloc
 * and history indexes. Random ids put each new session's rows on a
 * random leaf of every one of them, so a batch of N sessions dirtied
 * about N pages per index and every commit and checkpoint wrote them all
 * (22 page writes per session at 40,000 sessions, growing with the
 * table). Ids that grow with time append at each index's right edge.
 *
 * Why unique: within one manager the counter never repeats before 2^32
 * ids, whatever the clock does (a step back only repeats the seconds).
 * A restarted or failed-over manager starts its counter at a new random
 * value, so it can only meet an earlier id within the same second and a
 * window of 2^32; the UNIQUE index refuses the rest. The id is a name,
 * not a secret: every session operation checks the caller's rights.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "mgr_int.h"

static int seed(skv_manager *m, skv_error *err)
{
    uint8_t r[SKV_AUTH_NONCE_BYTES];
    int rc = skv_auth_nonce_generate(r, err);
    if (rc)
        return rc;
    memcpy(&m->ids.next, r, sizeof m->ids.next);
    m->ids.seeded = true;
    return 0;
}

int skv__mgr_session_id_new(skv_manager *m, int64_t now_ms,
                            char out[SKV__MGR_SID_MAX], skv_error *err)
{
    if (!m->ids.seeded) {
        int rc = seed(m, err);
        if (rc)
            return rc;
    }
    uint32_t secs = now_ms > 0 ? (uint32_t)(now_ms / 1000) : 0;
    snprintf(out, SKV__MGR_SID_MAX, "s-%08x%08x", (unsigned)secs,
             (unsigned)m->ids.next++);
    return 0;
}
