/* Operations state (ops.c): agents' cordon/drain state, resource groups'
 * operations policy, sessions on a device.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_OPS_H
#define SKV_MANAGER_STORE_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "sokovan/proto_msg.h"

int skv__mgr_store_ops_schema(skv__db *db, skv_error *err);
/* state "cordoned" / "draining"; NULL or "": schedulable (row removed). */
int skv__mgr_store_agent_ops_set(skv__db *db, const char *agent,
                                 const char *state, int64_t deadline_ms,
                                 skv_error *err);
/* 1 with the state, 0 none (state ""), or < 0. */
int skv__mgr_store_agent_ops(skv__db *db, const char *agent, char *state,
                             size_t cap, int64_t *deadline_ms,
                             skv_error *err);
typedef struct skv__mgr_store_gops {
    char drain_action[16];      /* "requeue" / "terminate" */
    int64_t drain_grace_ms;
    char fault_action[16];      /* "requeue" / "terminate" / "degrade" */
    int allow_unenforced;       /* fractional shares not enforced: start */
} skv__mgr_store_gops;
void skv__mgr_store_gops_default(skv__mgr_store_gops *g);
int skv__mgr_store_group_ops_set(skv__db *db, const char *name,
                                 const skv__mgr_store_gops *g, skv_error *err);
int skv__mgr_store_group_ops_delete(skv__db *db, const char *name,
                                    skv_error *err);
/* The group's policy (the defaults without a row), from the admin cache
 * when it has it (admin_cache.h); _read always asks the database. */
int skv__mgr_store_group_ops(skv__db *db, const char *name,
                             skv__mgr_store_gops *out, skv_error *err);
int skv__mgr_store_group_ops_read(skv__db *db, const char *name,
                                  skv__mgr_store_gops *out, skv_error *err);
int skv__mgr_store_sessions_on_device(skv__db *db, const char *agent,
                                      const char *device, char ***out,
                                      size_t *n, skv_error *err);
/* Device health (health.c): the agent's whole set of unhealthy devices
 * replaces what was stored (none: every device healthy). */
int skv__mgr_store_health_set(skv__db *db, const char *agent,
                              const skv_proto_device_fault *v, size_t n,
                              skv_error *err);
/* Its stored set (*out NULL when none); free with
 * skv__mgr_store_health_free. */
int skv__mgr_store_health(skv__db *db, const char *agent,
                          skv_proto_device_fault **out, size_t *n,
                          skv_error *err);
void skv__mgr_store_health_free(skv_proto_device_fault *v, size_t n);

#endif
