/* Agent layouts: one row per NUMA node and per accelerator pair, replaced
 * whole at each registration (see topology.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "migrate.h"
#include "store_int.h"
#include "topology.h"

/* The same text on both engines. */
static const char topology_v1[] =
    "CREATE TABLE IF NOT EXISTS agent_numa(agent_id TEXT NOT NULL"
    " REFERENCES agents(id) ON DELETE CASCADE, node_id BIGINT NOT NULL,"
    " cpus TEXT NOT NULL, cores BIGINT NOT NULL,"
    " memory_bytes BIGINT NOT NULL, PRIMARY KEY(agent_id, node_id));"
    "CREATE TABLE IF NOT EXISTS agent_links(agent_id TEXT NOT NULL"
    " REFERENCES agents(id) ON DELETE CASCADE, a TEXT NOT NULL,"
    " b TEXT NOT NULL, link TEXT NOT NULL, nvlink_mbps BIGINT NOT NULL,"
    " PRIMARY KEY(agent_id, a, b));";

static const skv__mgr_migration topology[] = {
    {1, topology_v1, topology_v1},
};

int skv__mgr_store_topology_schema(skv__db *db, skv_error *err)
{
    return skv__mgr_store_migrate(db, "topology", topology, 1, err);
}

static int numa_rows(skv__db *db, const skv_proto_agent_register *r,
                     skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO agent_numa(agent_id,node_id,"
                             "cpus,cores,memory_bytes) VALUES(?,?,?,?,?)",
                             &st, err);
    for (size_t i = 0; !rc && i < r->n_numa_nodes; i++) {
        const skv_proto_numa_node *x = &r->numa_nodes[i];
        skv__db_reset(st);
        skv__db_bind_text(st, 1, r->agent_id);
        skv__db_bind_int64(st, 2, x->id);
        skv__db_bind_text(st, 3, x->cpus ? x->cpus : "");
        skv__db_bind_int64(st, 4, x->cores);
        skv__db_bind_int64(st, 5, (int64_t)x->memory_bytes);
        rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    return rc;
}

static int link_rows(skv__db *db, const skv_proto_agent_register *r,
                     skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "INSERT INTO agent_links(agent_id,a,b,link,"
                             "nvlink_mbps) VALUES(?,?,?,?,?)", &st, err);
    for (size_t i = 0; !rc && i < r->n_links; i++) {
        const skv_proto_device_link *x = &r->links[i];
        skv__db_reset(st);
        skv__db_bind_text(st, 1, r->agent_id);
        skv__db_bind_text(st, 2, x->a);
        skv__db_bind_text(st, 3, x->b);
        skv__db_bind_text(st, 4, x->link);
        skv__db_bind_int64(st, 5, (int64_t)x->nvlink_mbps);
        rc = skv__mgr_store_run(st, err);
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_layout_put(skv__db *db, const skv_proto_agent_register *r,
                              skv_error *err)
{
    int rc = skv__mgr_store_exec_text(db, "DELETE FROM agent_numa WHERE "
                                      "agent_id=?", SKV__ARGS(r->agent_id),
                                      NULL, err);
    if (!rc)
        rc = skv__mgr_store_exec_text(db, "DELETE FROM agent_links WHERE "
                                      "agent_id=?", SKV__ARGS(r->agent_id),
                                      NULL, err);
    if (!rc)
        rc = numa_rows(db, r, err);
    if (!rc)
        rc = link_rows(db, r, err);
    return rc;
}

void skv__mgr_layout_free(skv__mgr_layout *l)
{
    for (size_t i = 0; i < l->n_numa; i++)
        skv__free(l->numa[i].cpus);
    for (size_t i = 0; i < l->n_links; i++) {
        skv__free(l->links[i].a);
        skv__free(l->links[i].b);
        skv__free(l->links[i].link);
    }
    skv__free(l->numa);
    skv__free(l->links);
    memset(l, 0, sizeof(*l));
}

/* Grow an array by one zeroed element; NULL when out of memory. */
static void *grow(void **arr, size_t *n, size_t size)
{
    void *p = skv__reallocarray(*arr, *n + 1, size);
    if (!p)
        return NULL;
    *arr = p;
    memset((char *)p + *n * size, 0, size);
    return (char *)p + (*n)++ * size;
}

static int read_numa(skv__db *db, const char *id, skv__mgr_layout *l,
                     skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "SELECT node_id,cpus,cores,memory_bytes FROM"
                             " agent_numa WHERE agent_id=? ORDER BY node_id",
                             &st, err);
    if (!rc)
        skv__db_bind_text(st, 1, id);
    while (!rc && skv__db_step(st, NULL) == SKV__DB_ROW) {
        skv_proto_numa_node *x = grow((void **)&l->numa, &l->n_numa,
                                      sizeof(*x));
        if (!x || !(x->cpus = skv__mgr_store_col_dup(st, 1))) {
            rc = skv__err(err, SKV_ENOMEM, "manager: out of memory");
            break;
        }
        x->id = (int32_t)skv__db_column_int64(st, 0);
        x->cores = (uint32_t)skv__db_column_int64(st, 2);
        x->memory_bytes = (uint64_t)skv__db_column_int64(st, 3);
    }
    skv__db_done(st);
    return rc;
}

static int read_links(skv__db *db, const char *id, skv__mgr_layout *l,
                      skv_error *err)
{
    skv__db_stmt *st = NULL;
    int rc = skv__db_prepare(db, "SELECT a,b,link,nvlink_mbps FROM "
                             "agent_links WHERE agent_id=? ORDER BY a,b",
                             &st, err);
    if (!rc)
        skv__db_bind_text(st, 1, id);
    while (!rc && skv__db_step(st, NULL) == SKV__DB_ROW) {
        skv_proto_device_link *x = grow((void **)&l->links, &l->n_links,
                                        sizeof(*x));
        if (x) {
            x->a = skv__mgr_store_col_dup(st, 0);
            x->b = skv__mgr_store_col_dup(st, 1);
            x->link = skv__mgr_store_col_dup(st, 2);
            x->nvlink_mbps = (uint64_t)skv__db_column_int64(st, 3);
        }
        if (!x || !x->a || !x->b || !x->link)
            rc = skv__err(err, SKV_ENOMEM, "manager: out of memory");
    }
    skv__db_done(st);
    return rc;
}

int skv__mgr_store_layout(skv__db *db, const char *agent_id,
                          skv__mgr_layout *out, skv_error *err)
{
    memset(out, 0, sizeof(*out));
    int rc = read_numa(db, agent_id, out, err);
    if (!rc)
        rc = read_links(db, agent_id, out, err);
    if (rc)
        skv__mgr_layout_free(out);
    return rc;
}
