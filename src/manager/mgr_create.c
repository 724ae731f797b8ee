/* kernel.create, the outbox's send step: built from the recorded rows
 * (session, kernel, its per-device allocation and the cluster's hosts)
 * for the kernels placed and not yet started, whether just placed by a
 * pass or found when their agent reconnects; the kernels (and sessions)
 * become PREPARING in one transaction and the frames leave once it
 * committed. Agents answer a create for a kernel they already have with
 * its existing container, so re-sending after a restart is safe.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

typedef struct create_ctx {
    skv_proto_session_submit sub;      /* command, env */
    skv_proto_kernel_create kc;        /* shared fields */
    bool cluster;                      /* a cluster network */
    uint8_t seed[32];
    char subnet[32];                   /* of the kernel being sent */
    char domain[SKV__MGR_ID_MAX], project[SKV__MGR_ID_MAX];
    char owner[SKV__MGR_ID_MAX];
    bool placed;    /* in the placement's unit: PREPARING already written */
    size_t sent;
} create_ctx;

static void hosts_free(skv_proto_kernel_create *kc)
{
    for (size_t i = 0; i < kc->n_cluster_hosts; i++) {
        skv__free(kc->cluster_hosts[i].hostname);
        skv__free(kc->cluster_hosts[i].address);
    }
    skv__free(kc->cluster_hosts);
    kc->cluster_hosts = NULL;
    kc->n_cluster_hosts = 0;
}

/* Cluster network: the kernel's address on its session subnet (an agent
 * without a placement yet: none); else the agent's address. */
static int host_address(skv_manager *m, const char *sid,
                        const skv__mgr_store_host *h, bool cluster,
                        char **out, skv_error *err)
{
    if (!cluster || !h->placed) {
        *out = h->has_address ? skv__strdup(h->address) : NULL;
        return h->has_address && !*out
                   ? skv__err(err, SKV_ENOMEM, "out of memory") : 0;
    }
    char subnet[32], addr[32];
    int rc = skv__mgr_net_kernel(m, sid, h->agent, h->idx, subnet, addr, err);
    if (!rc && !(*out = skv__strdup(addr)))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    return rc;
}

static int hosts_load(skv_manager *m, const char *sid,
                      skv_proto_kernel_create *kc, skv_error *err)
{
    skv__mgr_store_host *rows = NULL;
    size_t n = 0;
    int rc = skv__mgr_store_session_hosts(m->store, sid, &rows, &n, err);
    if (!rc && n && !(kc->cluster_hosts = skv__calloc(n, sizeof
                                                      *kc->cluster_hosts)))
        rc = skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        skv_proto_cluster_host *h = &kc->cluster_hosts[kc->n_cluster_hosts++];
        uint32_t idx = rows[i].idx;
        h->role = idx ? "sub" : "main";
        h->idx = idx ? idx : 1;
        h->hostname = skv__asprintf("%s%u", h->role, h->idx);
        h->address = NULL;
        rc = host_address(m, sid, &rows[i], kc->cluster_size > 1, &h->address,
                          err);
    }
    skv__free(rows);
    return rc;
}

static void ctx_free(create_ctx *c)
{
    hosts_free(&c->kc);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &c->sub);
}

static int ctx_load(skv_manager *m, const char *sid, create_ctx *c,
                    skv_error *err)
{
    memset(c, 0, sizeof *c);
    int rc = skv__mgr_load_submit(m, sid, &c->sub, c->domain, c->project,
                                  c->owner, err);
    if (rc)
        return rc;
    skv_proto_kernel_create *kc = &c->kc;
    kc->session_id = (char *)sid;
    kc->owner = c->owner;
    kc->session_type = c->sub.session_type;
    kc->argv = c->sub.command;
    kc->n_argv = c->sub.n_command;
    kc->env = c->sub.env;
    kc->n_env = c->sub.n_env;
    kc->cluster_mode = c->sub.cluster_mode;
    kc->cluster_size = c->sub.cluster_size;
    /* A published port (a service) needs the session network even for one
     * kernel: the agent publishes ports of cluster-network kernels only. */
    c->cluster = kc->cluster_size > 1 || c->sub.n_ports > 0;
    kc->network = c->cluster ? "cluster" : NULL;
    kc->ports = c->sub.ports;
    kc->n_ports = c->sub.n_ports;
    kc->mounts = c->sub.mounts;     /* resolved at submit (mgr_vf_mount.c) */
    kc->n_mounts = c->sub.n_mounts;
    /* Only the agent knows whether it can enforce fractional shares: it
     * refuses them unless the session's group allows them unenforced. */
    skv__mgr_store_gops o;
    rc = skv__mgr_store_group_ops(m->store, c->sub.resource_group
                                  ? c->sub.resource_group : m->default_group,
                                  &o, err);
    kc->allow_unenforced_shares = !rc && o.allow_unenforced;
    kc->numa_policy = c->sub.numa_policy;
    rc = rc ? rc : c->cluster ? skv__mgr_net_seed(m, sid, c->seed, err) : 0;
    if (!rc)
        rc = hosts_load(m, sid, kc, err);
    if (rc)
        ctx_free(c);
    return rc;
}

static void allocs_free(skv_proto_kernel_create *kc)
{
    for (size_t i = 0; i < kc->n_alloc; i++) {
        skv__free(kc->alloc[i].device_id);
        skv_slots_free(kc->alloc[i].slots);
    }
    skv__free(kc->alloc);
    kc->alloc = NULL;
    kc->n_alloc = 0;
}

static skv_proto_device_alloc *alloc_for(skv_proto_kernel_create *kc,
                                         const char *dev, skv_error *err)
{
    for (size_t i = 0; i < kc->n_alloc; i++)
        if (strcmp(kc->alloc[i].device_id, dev) == 0)
            return &kc->alloc[i];
    skv_proto_device_alloc *a = skv__reallocarray(kc->alloc, kc->n_alloc + 1,
                                                  sizeof *a);
    if (!a)
        return skv__err(err, SKV_ENOMEM, "out of memory"), NULL;
    kc->alloc = a;
    a = &a[kc->n_alloc];
    memset(a, 0, sizeof *a);
    if (!(a->device_id = skv__strdup(dev)) || skv_slots_new(&a->slots, err)) {
        skv__free(a->device_id);
        return skv__err(err, SKV_ENOMEM, "out of memory"), NULL;
    }
    kc->n_alloc++;
    return a;
}

static int allocs_load(skv_manager *m, const char *kid,
                       skv_proto_kernel_create *kc, skv_error *err)
{
    skv__mgr_store_alloc *rows = NULL;
    size_t n = 0;
    int rc = skv__mgr_store_alloc_of(m->store, kid, &rows, &n, err);
    for (size_t i = 0; !rc && i < n; i++) {
        skv_slot_kind kind = SKV_SLOT_COUNT;
        skv_slots_lookup(kc->slots, rows[i].slot, &kind, NULL);
        skv_proto_device_alloc *a = alloc_for(kc, rows[i].device_id, err);
        rc = a ? skv_slots_set(a->slots, rows[i].slot, kind, rows[i].amount,
                               err)
               : SKV_ENOMEM;
    }
    skv__free(rows);
    return rc;
}

/* Send one kernel's create; 1 when sent. */
static int send_one(skv_manager *m, create_ctx *c, const char *kid,
                    skv__mgr_store_kernel_row *row, const skv__mgr_agent *a,
                    skv_error *err)
{
    skv_proto_kernel_create *kc = &c->kc;
    uint32_t idx = row->idx;
    kc->kernel_id = (char *)kid;
    kc->image = row->image;
    kc->cluster_role = idx ? "sub" : "main";
    kc->cluster_idx = idx ? idx : 1;
    kc->slots = row->slots;    /* the row keeps ownership */
    int rc = 0;
    char addr[32];
    kc->subnet = NULL;
    kc->ssh_seed = c->cluster ? c->seed : NULL;
    kc->ssh_seed_len = c->cluster ? sizeof c->seed : 0;
    if (!rc && c->cluster &&
        !(rc = skv__mgr_net_kernel(m, c->kc.session_id, a->id, idx,
                                   c->subnet, addr, err)))
        kc->subnet = c->subnet;
    if (!rc)
        rc = allocs_load(m, kid, kc, err);
    if (!rc)
        rc = skv__mgr_request(m, a->conn, SKV__REQ_CREATE,
                              SKV_PROTO_KERNEL_CREATE, kc, kid, 0, 0);
    allocs_free(kc);
    kc->slots = NULL;
    kc->image = NULL;
    return rc ? rc : 1;
}

static int mark_preparing(skv_manager *m, const char *sid, int64_t now,
                          skv_error *err)
{
    skv_manager_session_state s;
    int rc = skv__mgr_session_get_state(m, sid, &s, err);
    if (!rc && s == SKV_SESSION_SCHEDULED)
        rc = skv__mgr_session_set(m, sid, SKV_SESSION_PREPARING,
                                  "kernel.create sent", now, err);
    return rc;
}

/* One kernel row (id, idx, image, slots, agent_id); sends when its agent is
 * connected (and is agent_id when given). 1 when sent. */
static int send_kernel(skv_manager *m, create_ctx *c, const char *kid,
                       const char *agent_id, int64_t now, skv_error *err)
{
    skv__mgr_store_kernel_row row;
    int rc = skv__mgr_store_kernel_get(m->store, kid, &row, err);
    if (rc < 0)
        return rc;
    rc = 0;
    skv__mgr_agent *a = skv__mgr_agent_find(m, row.agent);
    if (skv__mgr_agent_takes_creates(a) &&
        (!agent_id || !strcmp(agent_id, row.agent)))
        rc = send_one(m, c, kid, &row, a, err);
    skv__mgr_store_kernel_row_free(&row);
    if (rc == 1 && !c->placed &&
        skv__mgr_kernel_set(m, kid, "PREPARING", err))
        rc = SKV_EIO;
    if (rc == 1)
        skv__mgr_metrics_create_sent(m, kid, now);
    return rc;
}

static int send_all(skv_manager *m, create_ctx *c, const char *sid,
                    const char *agent_id, int64_t now, skv_error *err)
{
    char **ids = NULL;
    size_t n = 0;
    int rc = skv__mgr_kernel_ids(m, sid, "SCHEDULED,PREPARING", &ids, &n,
                                 err);
    int sent = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        rc = send_kernel(m, c, ids[i], agent_id, now, err);
        if (rc == 1) {
            sent++;
            c->sent++;
            rc = 0;
        }
    }
    skv__mgr_ids_free(ids, n);
    return !rc && sent ? mark_preparing(m, sid, now, err) : rc;
}

/* One session's creates as a unit of the outbox's transaction: its
 * frames wait in the outbox and leave after the commit that marks them
 * PREPARING; a failure undoes the unit and drops its frames alone. */
static void creates_unit(skv_manager *m, const char *sid,
                         const char *agent_id, int64_t now)
{
    create_ctx c;
    skv_error e = SKV_ERROR_INIT;
    int rc = ctx_load(m, sid, &c, &e);
    if (rc) {
        skv__log(SKV_LOG_ERROR, "manager", "kernel.create for %s: %s", sid,
                 e.message);
        return;
    }
    size_t mark = skv__mgr_outbox_mark(m);
    rc = skv__mgr_store_savepoint(m->store, &e);
    if (!rc && !(rc = send_all(m, &c, sid, agent_id, now, &e)))
        rc = skv__mgr_store_release(m->store, &e);
    if (rc) {
        skv__mgr_store_rollback_to(m->store);
        skv__mgr_outbox_drop(m, mark, e.message);
        skv__log(SKV_LOG_ERROR, "manager", "kernel.create for %s: %s", sid,
                 e.message);
    }
    ctx_free(&c);
}

/* A pass's placement, in its unit (mgr_pass.c): the kernels on agents
 * that take creates were placed as PREPARING and the session made
 * PREPARING with them; this sends their creates. A failure fails the
 * unit, placement included; the unit drops the frames. */
int skv__mgr_creates_placed(skv_manager *m, const char *sid, size_t expect,
                            int64_t now_ms, skv_error *err)
{
    create_ctx c;
    int rc = ctx_load(m, sid, &c, err);
    if (rc)
        return rc;
    c.placed = true;
    rc = send_all(m, &c, sid, NULL, now_ms, err);
    if (!rc && c.sent != expect)    /* the rows would not say what went */
        rc = skv__err(err, SKV_ESTATE, "%s: %zu kernel.create sent, %zu "
                      "placed as PREPARING", sid, c.sent, expect);
    ctx_free(&c);
    return rc;
}

/* The outbox's send step for recorded sessions: kernel.create for their
 * placed, unstarted kernels (on agent_id only when given), all marked
 * PREPARING in one transaction, sent once it committed. */
static void creates_units(skv_manager *m, const char *const *sids, size_t n,
                          const char *agent_id, int64_t now_ms)
{
    for (size_t i = 0; i < n; i++)
        creates_unit(m, sids[i], agent_id, now_ms);
}

void skv__mgr_send_creates_sessions(skv_manager *m, const char *const *sids,
                                    size_t n, const char *agent_id,
                                    int64_t now_ms)
{
    if (!n)
        return;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv__mgr_begin(m, &e);
    if (!rc)
        creates_units(m, sids, n, agent_id, now_ms);
    if (!rc)
        rc = skv__mgr_commit(m, &e);
    if (rc) {
        skv__mgr_rollback(m);
        skv__log(SKV_LOG_ERROR, "manager", "kernel.create for %zu sessions: "
                 "%s", n, e.message);
    }
}

void skv__mgr_send_creates_session(skv_manager *m, const char *sid,
                                   const char *agent_id, int64_t now_ms)
{
    skv__mgr_send_creates_sessions(m, &sid, 1, agent_id, now_ms);
}

void skv__mgr_send_creates(skv_manager *m, const char *agent_id,
                           int64_t now_ms)
{
    char **ids = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv__mgr_store_sessions_to_create(m->store, agent_id, &ids, &n, &e)) {
        skv__log(SKV_LOG_ERROR, "manager", "kernel.create for agent %s: %s",
                 agent_id, e.message);
        return;
    }
    skv__mgr_send_creates_sessions(m, (const char *const *)ids, n, agent_id,
                                   now_ms);
    skv__mgr_ids_free(ids, n);
}
