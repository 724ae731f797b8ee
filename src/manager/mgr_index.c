/* Hash indexes over the manager's agent and connection arrays: every
 * heartbeat, kernel event and reply looks an agent up by name or a
 * connection by id, and at a thousand agents the linear scans were a few
 * percent of the manager's CPU. Open addressing with linear probing and
 * backward-shift deletion; an entry holds the key's hash and the array
 * position plus one, never the key: the arrays move on realloc, so keys
 * are compared in the array itself.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

typedef bool (*ix_eq)(const skv_manager *m, uint32_t pos, const void *key);

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a, as the scheduler's id index */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

static uint32_t hash_u64(uint64_t x)
{
    x ^= x >> 33; /* murmur3's finalizer: connection ids are sequential */
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

/* The slot holding key, or of the empty entry that ends its probe. */
static size_t probe(const skv__mgr_ix *ix, uint32_t h, ix_eq eq,
                    const skv_manager *m, const void *key)
{
    size_t mask = ix->cap - 1;
    size_t i = h & mask;
    while (ix->e[i].pos1 &&
           !(ix->e[i].hash == h && eq(m, ix->e[i].pos1 - 1, key)))
        i = (i + 1) & mask;
    return i;
}

static uint32_t ix_get(const skv__mgr_ix *ix, uint32_t h, ix_eq eq,
                       const skv_manager *m, const void *key)
{
    if (!ix->cap)
        return UINT32_MAX;
    return ix->e[probe(ix, h, eq, m, key)].pos1 - 1; /* empty: UINT32_MAX */
}

static void put_raw(skv__mgr_ixent *t, size_t cap, skv__mgr_ixent e)
{
    size_t i = e.hash & (cap - 1);
    while (t[i].pos1)
        i = (i + 1) & (cap - 1);
    t[i] = e;
}

/* Load at most one half: probes stay short. */
static int ix_room(skv__mgr_ix *ix)
{
    if ((ix->n + 1) * 2 <= ix->cap)
        return 0;
    size_t ncap = ix->cap ? ix->cap * 2 : 64;
    skv__mgr_ixent *nt = skv__calloc(ncap, sizeof *nt);
    if (!nt)
        return SKV_ENOMEM;
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->e[i].pos1)
            put_raw(nt, ncap, ix->e[i]);
    skv__free(ix->e);
    ix->e = nt;
    ix->cap = ncap;
    return 0;
}

/* The key must not be in the index yet. */
static int ix_put(skv__mgr_ix *ix, uint32_t h, uint32_t pos)
{
    if (pos == UINT32_MAX || ix_room(ix))
        return SKV_ENOMEM;
    put_raw(ix->e, ix->cap, (skv__mgr_ixent){h, pos + 1});
    ix->n++;
    return 0;
}

/* Backward-shift deletion: later entries of the run move up so no probe
 * stops early at the hole. */
static void ix_del(skv__mgr_ix *ix, uint32_t h, ix_eq eq,
                   const skv_manager *m, const void *key)
{
    if (!ix->cap)
        return;
    size_t mask = ix->cap - 1;
    size_t i = probe(ix, h, eq, m, key);
    if (!ix->e[i].pos1)
        return;
    for (size_t j = (i + 1) & mask; ix->e[j].pos1; j = (j + 1) & mask) {
        size_t home = ix->e[j].hash & mask;
        /* j may fill the hole at i unless its home lies in (i, j] */
        if (((j - home) & mask) >= ((j - i) & mask)) {
            ix->e[i] = ix->e[j];
            i = j;
        }
    }
    ix->e[i].pos1 = 0;
    ix->n--;
}

static bool agent_eq(const skv_manager *m, uint32_t pos, const void *key)
{
    return strcmp(m->agents[pos].id, key) == 0;
}

static bool conn_eq(const skv_manager *m, uint32_t pos, const void *key)
{
    return m->conns[pos].id == *(const uint64_t *)key;
}

skv__mgr_agent *skv__mgr_agent_find(skv_manager *m, const char *id)
{
    if (!id)
        return NULL;
    uint32_t pos = ix_get(&m->agent_ix, hash_str(id), agent_eq, m, id);
    return pos == UINT32_MAX ? NULL : &m->agents[pos];
}

int skv__mgr_agent_ix_add(skv_manager *m, size_t pos)
{
    return ix_put(&m->agent_ix, hash_str(m->agents[pos].id),
                  pos < UINT32_MAX ? (uint32_t)pos : UINT32_MAX);
}

skv__mgr_conn *skv__mgr_conn_find(skv_manager *m, uint64_t id)
{
    uint32_t pos = ix_get(&m->conn_ix, hash_u64(id), conn_eq, m, &id);
    return pos == UINT32_MAX ? NULL : &m->conns[pos];
}

int skv__mgr_conn_ix_add(skv_manager *m, size_t pos)
{
    return ix_put(&m->conn_ix, hash_u64(m->conns[pos].id),
                  pos < UINT32_MAX ? (uint32_t)pos : UINT32_MAX);
}

/* Before the array drops conns[pos] by moving its last entry there. */
void skv__mgr_conn_ix_del(skv_manager *m, size_t pos)
{
    uint64_t id = m->conns[pos].id;
    ix_del(&m->conn_ix, hash_u64(id), conn_eq, m, &id);
    size_t last = m->n_conns - 1;
    if (last == pos)
        return;
    uint64_t lid = m->conns[last].id;
    skv__mgr_ixent *e = &m->conn_ix.e[probe(&m->conn_ix, hash_u64(lid),
                                             conn_eq, m, &lid)];
    e->pos1 = (uint32_t)pos + 1;
}

void skv__mgr_ix_free(skv_manager *m)
{
    skv__free(m->agent_ix.e);
    skv__free(m->conn_ix.e);
    memset(&m->agent_ix, 0, sizeof m->agent_ix);
    memset(&m->conn_ix, 0, sizeof m->conn_ix);
}

/* Every array entry found at its own position and nothing else indexed:
 * the manager suite's check that the index follows the arrays. */
int skv__mgr_ix_verify(skv_manager *m, skv_error *err)
{
    for (size_t i = 0; i < m->n_agents; i++)
        if (skv__mgr_agent_find(m, m->agents[i].id) != &m->agents[i])
            return skv__err(err, SKV_EIO, "agent index: '%s' not at %zu",
                            m->agents[i].id, i);
    for (size_t i = 0; i < m->n_conns; i++)
        if (skv__mgr_conn_find(m, m->conns[i].id) != &m->conns[i])
            return skv__err(err, SKV_EIO, "connection index: %llu not at %zu",
                            (unsigned long long)m->conns[i].id, i);
    if (m->agent_ix.n != m->n_agents || m->conn_ix.n != m->n_conns)
        return skv__err(err, SKV_EIO, "index holds %zu agents / %zu "
                        "connections, arrays %zu / %zu", m->agent_ix.n,
                        m->conn_ix.n, m->n_agents, m->n_conns);
    return 0;
}
