/* Private to src/alloc/: the layout of allocation maps and results and the
 * helpers the module's files share.
 *
 * Capacities and usage are stored slot-major (one array per slot indexed by
 * device), because every placement walks one slot across all devices. The
 * map also owns scratch arrays sized with it, so that alloc needs no heap
 * memory beyond the result object.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_ALLOC_INTERNAL_H
#define SKV_ALLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/alloc.h"

typedef struct skv__alloc_slot {
    char name[SKV_SLOT_NAME_MAX];
    skv_slot_kind kind;
    skv_alloc_mode mode;
    skv_qty quantum;        /* resolved, > 0 */
    unsigned group;
    unsigned flags;
    uint32_t partners;      /* bits of the other slots of the same group */
    skv_qty total_cap;
    skv_qty total_used;
    skv_qty *cap;           /* [dev_alloc] */
    skv_qty *used;          /* [dev_alloc] */
    skv_qty *plan;          /* [dev_alloc] scratch: amounts being placed */
} skv__alloc_slot;

typedef struct skv__alloc_dev {
    char *id;
    int numa;
    uint32_t node;          /* index into map->nodes */
    uint32_t busy;          /* bit s set when slot s has usage here */
} skv__alloc_dev;

struct skv_alloc_map {
    skv_alloc_strategy strategy;
    size_t nslots;
    skv__alloc_slot *slots; /* [nslots]: a manager holds one map per agent,
                               so nothing is reserved for unused slots */
    skv__alloc_dev *devs;
    size_t ndevs;
    size_t dev_alloc;
    uint32_t *tier;         /* [dev_alloc] scratch: tier per device, or
                               SKV__ALLOC_OUT when not eligible */
    int *nodes;             /* distinct NUMA ids of the devices, ascending */
    size_t nnodes;
    size_t node_alloc;
    uint32_t *node_tier;    /* [node_alloc] scratch */
    skv_qty *node_free;     /* [node_alloc] scratch */
    skv_qty *node_amt;      /* [node_alloc] scratch */
    skv_qty *tier_free;     /* [node_alloc + 1] scratch */
    uint32_t ntiers;        /* tiers of the current request */
};

#define SKV__ALLOC_OUT UINT32_MAX

struct skv_alloc_result {
    size_t count;
    int released;
    skv_alloc_entry e[];    /* sorted by (slot, device), qty > 0, unique */
};

/* One slot of a validated request. */
typedef struct skv__alloc_want {
    size_t slot;
    skv_qty qty;
} skv__alloc_want;

/* A validated view of the constraints. */
typedef struct skv__alloc_ctx {
    skv_alloc_strategy strategy;
    unsigned flags;
    const uint64_t *mask;
    size_t mask_words;
    const int *prefer;
    size_t nprefer;
    const size_t *subset;
    size_t nsubset;
} skv__alloc_ctx;

static inline skv_qty skv__alloc_free_at(const skv__alloc_slot *s, size_t d)
{
    return s->cap[d] - s->used[d];
}

static inline bool skv__alloc_numa_ok(const skv__alloc_ctx *c, int numa)
{
    if (!c->mask)
        return true;
    if (numa < 0 || (size_t)numa / 64 >= c->mask_words)
        return false;
    return (c->mask[numa / 64] >> (numa % 64)) & 1u;
}

/* Whether device d may give slot s anything, apart from the constraints. */
static inline bool skv__alloc_slot_open(const skv_alloc_map *m, size_t s,
                                        size_t d)
{
    return (m->devs[d].busy & m->slots[s].partners) == 0 &&
           m->slots[s].cap[d] > m->slots[s].used[d];
}

/* ---- map.c ---- */
/* Grow the per-device arrays to hold at least `need` devices. */
int skv__alloc_map_reserve(skv_alloc_map *m, size_t need, skv_error *err);
/* Index of the slot named name, or -1. */
long skv__alloc_slot_find(const skv_alloc_map *m, const char *name);

/* ---- device.c ---- */
/* Position of NUMA id in m->nodes, or -(insertion point) - 1. */
long skv__alloc_node_find(const skv_alloc_map *m, int id);

/* ---- check.c ---- */
/* Validate c (NULL allowed) into ctx. */
int skv__alloc_ctx_init(skv__alloc_ctx *ctx, const skv_alloc_map *m,
                        const skv_alloc_constraints *c, skv_error *err);
/* Validate one slot amount (EINVAL cases). */
int skv__alloc_validate_qty(const skv_alloc_map *m, size_t slot, skv_qty qty,
                            skv_error *err);
/* Turn a request vector into wants sorted by slot index (zero amounts
 * dropped); *n receives the count. */
int skv__alloc_request_wants(skv__alloc_want wants[SKV_ALLOC_MAP_SLOTS_MAX],
                             size_t *n, const skv_alloc_map *m,
                             const skv_slots *request, skv_error *err);
/* Feasibility of one validated want under ctx (0, ERANGE, ENOSPC). */
int skv__alloc_fits(const skv_alloc_map *m, const skv__alloc_want *w,
                    const skv__alloc_ctx *ctx, skv_error *err);

/* ---- place.c ---- */
/* Fill m->tier for ctx. */
void skv__alloc_tiers(skv_alloc_map *m, const skv__alloc_ctx *ctx);
/* Compute m->slots[w->slot].plan for a feasible want; returns the number
 * of devices used. */
size_t skv__alloc_plan(skv_alloc_map *m, const skv__alloc_want *w,
                       const skv__alloc_ctx *ctx);

/* ---- result.c ---- */
skv_alloc_result *skv__alloc_result_new(size_t count);
/* Sort entries by (slot, device) and merge duplicates; returns new count. */
size_t skv__alloc_entries_normalize(skv_alloc_entry *e, size_t n);
/* Check that entries can be taken (range, quantum, capacity, exclusivity);
 * entries normalized. code: error code for failures (EINVAL or EPROTO). */
int skv__alloc_entries_check(const skv_alloc_map *m, const skv_alloc_entry *e,
                             size_t n, int code, skv_error *err);
/* Add entries to usage (validated before). */
void skv__alloc_entries_apply(skv_alloc_map *m, const skv_alloc_entry *e,
                              size_t n);

/* ---- msgpack (mp.c): a writer into an skv buffer and a pull reader that
 * never allocates, for untrusted input ---- */
typedef struct skv__mp_buf {
    char *data;
    size_t len;
    size_t cap;
    bool failed;
} skv__mp_buf;

typedef struct skv__mp_reader {
    const unsigned char *p;
    size_t left;
} skv__mp_reader;

void skv__mp_put_array(skv__mp_buf *b, uint32_t n);
void skv__mp_put_int(skv__mp_buf *b, int64_t v);
void skv__mp_put_str(skv__mp_buf *b, const char *s);
/* Hand the buffer out (free with skv_free) or fail with SKV_ENOMEM. */
int skv__mp_finish(void **out, size_t *out_len, skv__mp_buf *b,
                   skv_error *err);

/* Each returns false on a type mismatch or truncation. */
bool skv__mp_get_array(skv__mp_reader *r, uint32_t *n);
bool skv__mp_get_int(skv__mp_reader *r, int64_t *v);
/* String bytes (not NUL-terminated) borrowed from the input. */
bool skv__mp_get_str(skv__mp_reader *r, const char **s, size_t *len);

#endif
