/* Private to the class index files (selector_frag_index.c, its reason
 * tally in selector_frag_reason.c): the index's classes and state.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SELECTOR_FRAG_INDEX_INT_H
#define SKV_SELECTOR_FRAG_INDEX_INT_H

#include "selector_frag_index.h"
#include "selector_frag_pset.h"

#define FC_SHAPES 4096u     /* distinct request shapes before a reset */
#define FC_SHEAD 8192u      /* shape hash buckets */
/* Cached scores of one group's classes, at most: a class's score for a
 * shape never changes (its key is its free state), so scores are kept for
 * every shape seen as long as they fit (openb at 9,704 nodes: ~150 shapes
 * x 9,706 class ids = 11 MB), one vector per shape so that a decision
 * reads its shape's scores from one array, not from every class. */
#define FC_CACHE_BYTES ((size_t)64 << 20)
#define FC_UNSET (INT64_MIN + 1) /* not computed (scores are > -2^61) */
#define FC_NOFIT (INT64_MIN + 2) /* REJECT: the map refuses the shape */

typedef struct fcls {
    uint64_t hash;
    uint32_t next;          /* hash chain */
    uint32_t apos;          /* position in the active list */
    uint32_t id;            /* its id */
    uint32_t *mem;          /* agent table indexes, unordered */
    uint32_t nmem, capmem;
    skv__fpset ps;          /* the members' group positions */
    char *arch, *model;
    bool schedulable;
    skv_qty cap[NSL], used[NSL];
    uint32_t ndev, dev_slot_mask, whole_slot_mask;
    skv_sched_device_view dev[SKV_SCHED_DEVICES_MAX]; /* ids not kept */
} fcls;

/* What the scan over classes reads first, packed: most classes do not
 * fit most requests late in a replay, and this rules them out without
 * touching the class, its member agent or the map. */
#define FC_HOT_SLOTS 3
typedef struct fhot {
    skv_qty free[FC_HOT_SLOTS]; /* pooled free of slots 0..2 (MAX: device
                                   slot, unlimited or not this agent's;
                                   -1 everywhere when not schedulable) */
    uint32_t nfree;             /* entirely free devices */
    uint32_t nmem;              /* its members (0: a free id) */
    uint32_t first;             /* its lowest member group position */
    bool sched;                 /* schedulable */
    uint32_t dev_mask;          /* slots served by devices */
    uint32_t w1;                /* members all in one word of the group's
                                   positions: that word (else UINT32_MAX) */
    uint64_t m1;                /* and which */
} fhot;

typedef struct fshape {
    skv_qty req[NSL];
    uint64_t hash;
    uint32_t next;
} fshape;

struct skv__fidx {
    bool valid;
    void *sel_state;        /* the selector the cached scores are from */
    fcls **cls;             /* by class id; NULL: free id */
    uint32_t capcls;
    uint32_t *freel, nfree;
    uint32_t *head, mask;   /* class hash buckets */
    uint32_t *active, nactive;
    fhot *hot;              /* by class id (ids are reused lowest-first,
                               so the walks over ids < hiw are dense and
                               read hot and a shape's scores in order) */
    uint32_t hiw;           /* ids in use are below */
    uint64_t *withfree;     /* by class id: has an entirely free device
                               (whole-device requests look only there) */
    skv_qty *avail;         /* by slot, then class id: the classes'
                               skv__dmap_avail (the reason's tally) */
    uint32_t *cid, ncid;    /* class id by group position (+1 sentinel) */
    uint32_t *dirty, ndirty;
    uint32_t *mk;           /* per class: members left out of this decision */
    uint32_t *excl, nexcl, capexcl; /* agents left out of this decision */
    uint32_t *rv, nrv;      /* the group's reserved agents in this pass */
    uint32_t rv_epoch, rv_n;/* the pass epoch and reservation count of rv */
    uint32_t *tied, ntied, *scored, nscored;
    int64_t *scval;         /* the value of scored[i] (this decision) */
    bool layouts;           /* some agent of the group has a layout */
    uint64_t *smask, *tmask;/* scored and tied group positions (decision) */
    uint32_t nwords;
    fshape *shapes;
    uint32_t nshapes, *shead;
    int64_t **sval;         /* by shape id, then class id: the class's base
                               score, REJECT or FC_UNSET; NULL: none kept */
    size_t cbytes;          /* held by sval */
    uint64_t gen;           /* changes whenever a class is made, changes
                               members or goes */
    struct fc_reason *rcache; /* by shape id (selector_frag_reason.c) */
};

/* The id of a request shape (0 .. FC_SHAPES-1); the table may be reset,
 * which changes gen. */
uint32_t skv__fidx_shape_id(skv__fidx *ix, const skv_qty *req);

/* The score vector of shape sid, NULL when over the cache budget. */
int64_t *skv__fidx_shape_scores(skv__fidx *ix, uint32_t sid);

/* Up to date with the group: built, and the touched agents reclassified. */
int skv__fidx_prepare(skv_sched *s, skv__group *g);
/* The session's own constraints the index handles (schedulable,
 * architecture, GPU models: part of the class key) admit class c. */
bool skv__fidx_class_ok(const skv__session *x, const fcls *c);

#endif
