/* Idle and lifetime limits of running sessions (mgr_idle.c,
 * mgr_reclaim.c). A session is active while the app proxy reports traffic
 * for it (app.activity), while an exec into it is open (the manager relays
 * every exec, so it knows), and while one of its kernels uses at least
 * idle_cpu_percent of a CPU (agent.stats' cumulative cpu_usec, differenced
 * here). What was last seen is kept in memory only: a manager that starts
 * counts every running session as active at that moment, so a restart
 * (or a fail-over) can delay a reclaim by at most one idle_timeout, never
 * hasten one.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_IDLE_H
#define SKV_MGR_IDLE_H

#include "mgr_int.h"

/* sid was active at now_ms. */
void skv__mgr_idle_touch(skv_manager *m, const char *sid, int64_t now_ms);
/* Kernel kid of sid had used cpu_usec of CPU in all at now_ms: active when
 * the use since its previous figure reaches the threshold. */
void skv__mgr_idle_cpu(skv_manager *m, const char *sid, const char *kid,
                       uint64_t cpu_usec, int64_t now_ms);
/* When sid was last active: now_ms while an exec into it is open, else
 * the latest of since_ms (it started running), the manager's start and
 * what was reported. Marks sid as still running for _prune. */
int64_t skv__mgr_idle_last(skv_manager *m, const char *sid, int64_t since_ms,
                           int64_t now_ms);
/* Forget sessions (and their kernels) _last did not see since the
 * previous _prune: they are no longer running. */
void skv__mgr_idle_prune(skv_manager *m);
void skv__mgr_idle_free(skv_manager *m);

/* The running sessions' sweep (mgr_reclaim.c, once a second from
 * skv__mgr_sweep): a session past a maximum lifetime (its own, its
 * group's, its owner's policy's; the shortest) or idle for its group's or
 * owner's policy's idle_timeout (the shortest) is terminated through the
 * normal path, the reason (which limit, how long) in its status. */
void skv__mgr_reclaim(skv_manager *m, int64_t now_ms);

/* "1h2m3s" of ms (whole seconds; "0s" below one). */
void skv__mgr_idle_dur(char *buf, size_t cap, uint64_t ms);

#endif
