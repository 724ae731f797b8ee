/* The manager's store: the only code that speaks SQL. Every function takes
 * the connection (db.h, SQLite or PostgreSQL) and plain values; callers in
 * src/manager hold the transaction (skv__mgr_begin/commit) and decide, the
 * store only reads and writes rows. Statements use db.h's common subset.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_STORE_H
#define SKV_MANAGER_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "sokovan/manager.h"
#include "sokovan/proto.h"
#include "sokovan/slots.h"

#define SKV__STORE_ID_MAX 256

void skv__mgr_store_ids_free(char **v, size_t n);

/* ---- units of a batched transaction (tx.c) ------------------------------ */
int skv__mgr_store_savepoint(skv__db *db, skv_error *err);
int skv__mgr_store_release(skv__db *db, skv_error *err);
void skv__mgr_store_rollback_to(skv__db *db);

/* ---- sessions (sessions.c, insert.c) ---------------------------------- */
int skv__mgr_store_history_add(skv__db *db, const char *sid,
                               const char *status, const char *reason,
                               int64_t now_ms, skv_error *err);
/* Status, reason, start/finish times and a history entry; SKV_ENOENT. */
int skv__mgr_store_session_status(skv__db *db, const char *sid,
                                  const char *status, const char *reason,
                                  int64_t now_ms, skv_error *err);
/* The same with the exit code: the final state in one statement. */
int skv__mgr_store_session_ended(skv__db *db, const char *sid,
                                 const char *status, const char *reason,
                                 int exit_code, int64_t now_ms,
                                 skv_error *err);
int skv__mgr_store_session_state(skv__db *db, const char *sid,
                                 skv_manager_session_state *out,
                                 skv_error *err);
int skv__mgr_store_session_end(skv__db *db, const char *sid,
                               const char *end_status, const char *reason,
                               skv_error *err);
int skv__mgr_store_session_started(skv__db *db, const char *sid,
                                   int64_t started, skv_error *err);
int skv__mgr_store_session_times(skv__db *db, const char *sid,
                                 int64_t *created, int64_t *started,
                                 skv_error *err);
typedef struct skv__mgr_store_finish {
    char end_status[32];
    char reason[256];
    bool stop_reason;    /* reason is why the session was stopped */
    int exit_code;       /* the main kernel's; -1 none */
    bool main_error;
} skv__mgr_store_finish;
int skv__mgr_store_session_finish_row(skv__db *db, const char *sid,
                                      skv__mgr_store_finish *out,
                                      skv_error *err);

int skv__mgr_store_session_insert(skv__db *db,
                                  const skv_proto_session_submit *s,
                                  const char *sid, const char *domain,
                                  const skv_slots *const *req, size_t n,
                                  int64_t now, skv_error *err);

/* ---- kernels (kernels.c); statuses are "A,B,C" -------------------------- */
int skv__mgr_store_kernel_ids(skv__db *db, const char *sid,
                              const char *statuses, char ***out, size_t *n,
                              skv_error *err);
int skv__mgr_store_kernels_move(skv__db *db, const char *sid,
                                const char *from, const char *to,
                                skv_error *err);
/* Kernels of sid whose status is (in) or is not (!in) in statuses. */
int skv__mgr_store_kernel_count(skv__db *db, const char *sid,
                                const char *statuses, bool in, bool main_only,
                                int *out, skv_error *err);
int skv__mgr_store_kernel_total(skv__db *db, const char *sid, int *out,
                                skv_error *err);
int skv__mgr_store_kernel_set(skv__db *db, const char *kid,
                              const char *status, skv_error *err);
int skv__mgr_store_kernel_running(skv__db *db, const char *kid,
                                  const char *container, skv_error *err);
int skv__mgr_store_kernel_ended(skv__db *db, const char *kid,
                                const char *status, int exit_code,
                                const char *reason, skv_error *err);
int skv__mgr_store_kernels_lost(skv__db *db, const char *sid,
                                const char *agent, const char *reason,
                                skv_error *err);
typedef struct skv__mgr_store_kernel {
    char sid[SKV__STORE_ID_MAX];
    int idx;
    char status[32];
    char agent[SKV__STORE_ID_MAX];    /* "" when not placed */
} skv__mgr_store_kernel;
int skv__mgr_store_kernel_info(skv__db *db, const char *kid,
                               skv__mgr_store_kernel *out, skv_error *err);
int skv__mgr_store_kernel_id_at(skv__db *db, const char *sid, uint32_t idx,
                                char *kid, size_t cap, skv_error *err);
bool skv__mgr_store_kernel_sent_to(skv__db *db, const char *kid,
                                   const char *agent);
int skv__mgr_store_kernel_stats(skv__db *db, const char *agent,
                                const skv_proto_kernel_stats *k, size_t n,
                                int64_t now, skv_error *err);
int skv__mgr_store_agent_kernels(skv__db *db, const char *agent,
                                 const char *statuses, char ***out,
                                 size_t *n, skv_error *err);

/* ---- placements and allocations (alloc.c) ------------------------------ */
typedef struct skv__mgr_store_alloc {
    const char *kernel_id;     /* NULL in rows read back */
    const char *device_id;
    const char *slot;
    int64_t amount;
    bool whole;
    char dev_buf[SKV__STORE_ID_MAX], slot_buf[64];   /* rows read back */
} skv__mgr_store_alloc;
int skv__mgr_store_kernel_place(skv__db *db, const char *kid,
                                const char *agent, skv_error *err);
int skv__mgr_store_kernel_place_as(skv__db *db, const char *kid,
                                   const char *agent, const char *status,
                                   skv_error *err);
int skv__mgr_store_alloc_add(skv__db *db, const skv__mgr_store_alloc *a,
                             size_t n, skv_error *err);
int skv__mgr_store_alloc_of(skv__db *db, const char *kid,
                            skv__mgr_store_alloc **out, size_t *n,
                            skv_error *err);
int skv__mgr_store_kernel_slots(skv__db *db, const char *kid,
                                skv_slots **out, skv_error *err);
int skv__mgr_store_session_unplace(skv__db *db, const char *sid,
                                   skv_error *err);

/* ---- suspects (suspects.c) ---------------------------------------------- */
typedef struct skv__mgr_store_suspect {
    char kid[SKV__STORE_ID_MAX];
    char agent[SKV__STORE_ID_MAX];
    char container[SKV__STORE_ID_MAX];
    int idx;
    int64_t started_ms;      /* the session's first start; 0 none */
} skv__mgr_store_suspect;
int skv__mgr_store_suspect_keep(skv__db *db, const char *sid,
                                const char *agent, int64_t now_ms,
                                int64_t *kept, skv_error *err);
int skv__mgr_store_kernel_ids_renew(skv__db *db, const char *sid,
                                    skv_error *err);
int skv__mgr_store_suspects_of(skv__db *db, const char *sid,
                               skv__mgr_store_suspect **out, size_t *n,
                               skv_error *err);
int skv__mgr_store_suspect_session(skv__db *db, const char *kid,
                                   const char *agent, char *sid, size_t cap,
                                   skv_error *err);
int skv__mgr_store_suspects_on(skv__db *db, const char *agent, char ***out,
                               size_t *n, skv_error *err);
int skv__mgr_store_suspect_drop(skv__db *db, const char *kid, skv_error *err);
int skv__mgr_store_suspects_adopt(skv__db *db, const char *sid,
                                  const skv__mgr_store_suspect *s, size_t n,
                                  skv_error *err);

/* ---- kernel.create's inputs (dispatch.c) ------------------------------- */
typedef struct skv__mgr_store_host {
    char kid[SKV__STORE_ID_MAX];
    uint32_t idx;
    bool placed, has_address;
    char agent[SKV__STORE_ID_MAX];
    char address[128];               /* the agent's */
} skv__mgr_store_host;
int skv__mgr_store_session_hosts(skv__db *db, const char *sid,
                                 skv__mgr_store_host **out, size_t *n,
                                 skv_error *err);
typedef struct skv__mgr_store_kernel_row {
    uint32_t idx;
    char *image;
    skv_slots *slots;
    char agent[SKV__STORE_ID_MAX];   /* "" when not placed */
} skv__mgr_store_kernel_row;
int skv__mgr_store_kernel_get(skv__db *db, const char *kid,
                              skv__mgr_store_kernel_row *out, skv_error *err);
void skv__mgr_store_kernel_row_free(skv__mgr_store_kernel_row *k);
int skv__mgr_store_sessions_to_create(skv__db *db, const char *agent,
                                      char ***out, size_t *n,
                                      skv_error *err);

/* ---- single-row reads (lookup.c) --------------------------------------- */
int skv__mgr_store_session_by_token(skv__db *db, const char *owner,
                                    const char *token, char *sid,
                                    size_t sid_cap, char *status,
                                    size_t status_cap, skv_error *err);
int skv__mgr_store_session_submit(skv__db *db, const char *sid,
                                  skv_proto_session_submit *out,
                                  char *domain, char *project, char *owner,
                                  skv_error *err);
/* The resource group of sid; SKV_ENOENT. */
int skv__mgr_store_session_group(skv__db *db, const char *sid, char *group,
                                 size_t cap, skv_error *err);
int skv__mgr_store_session_owner(skv__db *db, const char *sid, char *owner,
                                 size_t cap, skv_error *err);
int skv__mgr_store_session_result(skv__db *db, const char *sid,
                                  char *status, size_t cap, int *exit_code,
                                  skv_error *err);
bool skv__mgr_store_pending_mentions(skv__db *db, const char *sid);
int skv__mgr_store_kernel_agent(skv__db *db, const char *sid, const char *kid,
                                char *agent, size_t cap, skv_error *err);

/* ---- views (query.c) ---------------------------------------------------- */
int skv__mgr_store_session_list(skv__db *db, const skv_proto_session_list *l,
                                const char *owner,
                                skv_proto_session_list_reply *rep,
                                skv_error *err);
int skv__mgr_store_session_info(skv__db *db, const char *sid,
                                skv_proto_session_info *out, skv_error *err);
int skv__mgr_store_session_history(skv__db *db, skv_proto_session_info *i,
                                   skv_error *err);
int skv__mgr_store_session_kernels(skv__db *db, skv_proto_session_info *i,
                                   skv_error *err);
int skv__mgr_store_agent_load(skv__db *db, const char *agent, uint32_t *out,
                              skv_error *err);
int skv__mgr_store_unplaced(skv__db *db, const char *sid, char *why,
                            size_t cap, bool *before, skv_error *err);
int skv__mgr_store_pending_each(skv__db *db,
                                int (*fn)(void *arg, const char *sid,
                                          const char *group),
                                void *arg, skv_error *err);
bool skv__mgr_store_kernel_exists(skv__db *db, const char *kid);
bool skv__mgr_store_kernel_stopping_on(skv__db *db, const char *kid,
                                       const char *agent);
typedef struct skv__mgr_store_aging {
    char sid[SKV__STORE_ID_MAX];
    char key[SKV__STORE_ID_MAX];
    int64_t since_ms;
    int64_t own_limit_ms;   /* the session's own limit; 0: none */
    char group[SKV__STORE_ID_MAX];  /* its resource group */
} skv__mgr_store_aging;
int skv__mgr_store_sessions_aging(skv__db *db, bool running,
                                  skv__mgr_store_aging **out, size_t *n,
                                  skv_error *err);
typedef struct skv__mgr_store_live {
    char sid[SKV__STORE_ID_MAX];
    char status[32];
    int64_t created_ms, started_ms;
} skv__mgr_store_live;
/* Sessions not ended, in submission order. */
int skv__mgr_store_sessions_live(skv__db *db, skv__mgr_store_live **out,
                                 size_t *n, skv_error *err);
int skv__mgr_store_sessions_on(skv__db *db, const char *agent, char ***out,
                               size_t *n, skv_error *err);
#include "ops.h"
int skv__mgr_store_count_states(skv__db *db,
                                void (*fn)(void *arg, const char *status,
                                           uint64_t n),
                                void *arg, skv_error *err);

/* ---- agents (agents.c) -------------------------------------------------- */
int skv__mgr_store_agent_put(skv__db *db, const skv_proto_agent_register *r,
                             int64_t now_ms, skv_error *err);
int skv__mgr_store_agent_status(skv__db *db, const char *id,
                                const char *status, int64_t now_ms,
                                skv_error *err);
/* An agent's registered devices (free with skv__mgr_store_devices_free). */
int skv__mgr_store_devices(skv__db *db, const char *id,
                           skv_proto_device **out, size_t *n_out,
                           skv_error *err);
void skv__mgr_store_devices_free(skv_proto_device *d, size_t n);
typedef struct skv__mgr_store_agent {
    const char *id, *group, *arch, *address;   /* valid during the call */
} skv__mgr_store_agent;
int skv__mgr_store_agents_alive(skv__db *db,
                                int (*fn)(void *arg,
                                          const skv__mgr_store_agent *a),
                                void *arg, skv_error *err);

/* ---- request nonces (nonces.c) ------------------------------------------ */
typedef struct skv__mgr_store_nonce {
    const char *access_key;
    const void *nonce;
    size_t nonce_len;
    int64_t ts_ms;
} skv__mgr_store_nonce;
int skv__mgr_store_nonces_put(skv__db *db, const skv__mgr_store_nonce *v,
                              size_t n, skv_error *err);
int skv__mgr_store_nonces_prune(skv__db *db, int64_t before_ms,
                                skv_error *err);
int skv__mgr_store_nonces_each(skv__db *db, int64_t since_ms,
                               int (*fn)(void *arg,
                                         const skv__mgr_store_nonce *n),
                               void *arg, skv_error *err);

/* ---- cluster network (net.c) -------------------------------------------- */
int skv__mgr_store_agent_subnets(skv__db *db,
                                 void (*fn)(void *arg, const char *agent,
                                            const char *subnet),
                                 void *arg, skv_error *err);
int skv__mgr_store_agent_subnet(skv__db *db, const char *agent, char *buf,
                                size_t cap, skv_error *err);
int skv__mgr_store_agent_subnet_put(skv__db *db, const char *agent,
                                    const char *subnet, skv_error *err);
/* Routes with via = the agent's address as registered ("host:port"). */
int skv__mgr_store_routes(skv__db *db, skv_proto_route **out, size_t *n,
                          skv_error *err);
int skv__mgr_store_session_subnet(skv__db *db, const char *sid,
                                  const char *agent, char *buf, size_t cap,
                                  skv_error *err);
int skv__mgr_store_live_subnets(skv__db *db, const char *agent,
                                void (*fn)(void *arg, const char *subnet),
                                void *arg, skv_error *err);
int skv__mgr_store_session_subnet_put(skv__db *db, const char *sid,
                                      const char *agent, const char *subnet,
                                      skv_error *err);
int skv__mgr_store_kernel_rank(skv__db *db, const char *sid,
                               const char *agent, uint32_t idx,
                               unsigned *out, skv_error *err);
int skv__mgr_store_session_seed(skv__db *db, const char *sid, uint8_t *seed,
                                size_t len, skv_error *err);
int skv__mgr_store_session_seed_put(skv__db *db, const char *sid,
                                    const uint8_t *seed, size_t len,
                                    skv_error *err);
int skv__mgr_store_kernel_net_put(skv__db *db, const char *kid,
                                  const char *address, const char *published,
                                  skv_error *err);
int skv__mgr_store_kernel_net(skv__db *db, const char *kid, char **address,
                              char **published, skv_error *err);

/* ---- the SQLite file (open.c, backup.c, check.c) ------------------------ */
/* Open data_dir/manager.db (init: create a new cluster; refused where a
 * database exists), vetted, with its pragmas. */
int skv__mgr_store_open_sqlite(const char *data_dir, bool init,
                               skv__db **out, skv_error *err);
/* Inside the schema transaction: stamp the file as sokovan's. */
int skv__mgr_store_format_mark(skv__db *db, skv_error *err);
/* admin.backup's consistent copy into tmp (an empty file). */
int skv__mgr_store_backup(skv__db *db, const char *tmp, skv_error *err);

#endif
