/* Agent layouts (agent_numa, agent_links): the NUMA nodes and accelerator
 * links an agent registered, kept so that a restarted manager describes the
 * agent to the scheduler with its topology again.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_TOPOLOGY_H
#define SKV_MANAGER_STORE_TOPOLOGY_H

#include "db.h"
#include "sokovan/proto_msg.h"

typedef struct skv__mgr_layout {
    skv_proto_numa_node *numa;
    size_t n_numa;
    skv_proto_device_link *links;
    size_t n_links;
} skv__mgr_layout;

/* The "topology" component's tables. */
int skv__mgr_store_topology_schema(skv__db *db, skv_error *err);
/* Replace agent r->agent_id's layout with r's (inside the caller's
 * transaction, after its agents row). */
int skv__mgr_store_layout_put(skv__db *db, const skv_proto_agent_register *r,
                              skv_error *err);
/* Its stored layout (empty when none); free with skv__mgr_layout_free. */
int skv__mgr_store_layout(skv__db *db, const char *agent_id,
                          skv__mgr_layout *out, skv_error *err);
void skv__mgr_layout_free(skv__mgr_layout *l);

#endif
