/* Dependencies against the database, so the scheduler need not remember
 * every ended session: a dependency that already ended well (TERMINATED,
 * exit code 0) is dropped from the spec; one that ended otherwise refuses a
 * new submission (at a restart the session stays blocked, with the
 * scheduler's "dependency unknown" reason). Ended sessions leave the
 * scheduler once no pending session names them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

/* 1: ended well, 0: live, negative: error (ended badly or unknown). */
static int dep_state(skv_manager *m, const char *id, skv_error *err)
{
    char s[32];
    int code = 0;
    int rc = skv__mgr_store_session_result(m->store, id, s, sizeof s, &code,
                                           err);
    if (rc == SKV_ENOENT)
        return skv__err(err, SKV_ENOENT, "dependency '%s': no such session",
                        id);
    if (rc)
        return rc;
    if (!strcmp(s, "TERMINATED") && code == 0)
        rc = 1;
    else if (!strcmp(s, "TERMINATED") || !strcmp(s, "CANCELLED") ||
             !strcmp(s, "ERROR"))
        rc = skv__err(err, SKV_EINVAL, "dependency '%s' ended %s (exit "
                      "code %d)", id, s, code);
    return rc;
}

int skv__mgr_spec_deps(skv_manager *m, skv__mgr_spec *x, bool strict,
                       skv_error *err)
{
    size_t keep = 0;
    for (size_t i = 0; i < x->spec.n_depends; i++) {
        skv_error e = SKV_ERROR_INIT;
        int rc = dep_state(m, x->deps[i], &e);
        if (rc < 0 && strict) {
            if (err)
                *err = e;
            return rc;
        }
        if (rc != 1)
            x->deps[keep++] = x->deps[i];
    }
    x->spec.n_depends = keep;
    return 0;
}

/* Forget an ended session in the scheduler unless a pending session may
 * still name it as a dependency (its id appears in a pending spec). */
void skv__mgr_sched_forget(skv_manager *m, const char *sid)
{
    if (!skv__mgr_store_pending_mentions(m->store, sid))
        skv_sched_session_remove(m->sched, sid, NULL);
}
