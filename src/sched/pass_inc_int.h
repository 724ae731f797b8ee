/* Private to the incremental pass (pass_inc.c, pass_inc_owner.c): the
 * walk order kept across passes and the shape classes.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SCHED_PASS_INC_INT_H
#define SKV_SCHED_PASS_INC_INT_H

#include "pass_int.h"

bool skv__pass_static_ok(skv__pass *P, skv__session *x);

/* What the walk needs to skip a session without reading it (a skip must
 * cost a few nanoseconds: the queue may hold thousands). */
typedef struct ord_ent {
    int64_t rank;
    uint64_t seq;
    uint32_t si;
    uint32_t cls;              /* SKV__NONE: not plain, always visited */
    int64_t est_dur, not_before;
    uint32_t owner[SKV_SCHED_SCOPE_COUNT];
    uint32_t gen;              /* the session's pend_gen when merged */
    bool deferred;             /* its reason is already marked deferred */
    bool gone;                 /* left the list: dropped after the walk */
} ord_ent;

enum { FITS_NONE, FITS_FREE, FITS_RESERVED };

typedef struct inc_cls {
    skv_qty req[NSL];
    uint64_t ver;              /* state the verdict below belongs to */
    uint64_t pass;             /* pass it belongs to */
    uint8_t fits;
    int64_t until;             /* FITS_RESERVED: latest known start of a
                                  reservation on a fitting agent */
    /* this pass: unreserved agents before free_from cannot fit, and once
     * none fits, reserved agents outside [scan_from, scan_to) cannot */
    uint32_t free_from, scan_from, scan_to;
} inc_cls;

typedef struct skv__inc skv__inc;
struct skv__inc {
    const skv_sched_sequencer *seq; /* the order below is by its ranks */
    int64_t aging_ms;
    ord_ent *ord, *tmp;
    uint32_t n, cap;
    inc_cls *cls;
    uint32_t ncls, cls_cap;
    uint32_t *ht;              /* class hash, open addressing */
    uint32_t ht_cap;
    uint64_t ver;              /* bumped by every visit that changed state */
    uint64_t pass;             /* bumped by every pass */
    uint64_t looked;           /* agents the verdicts looked at, this pass */
    uint32_t *fresh;           /* sessions added to the pending list since */
    uint32_t nfresh, fresh_cap;
    bool fresh_lost;           /* fresh overflowed: scan the pending list */
    uint32_t nfresh_seen;      /* most arrivals merged by one pass */
    bool policies;             /* some owner has a policy (quota_ok) */
    bool per_owner;            /* drf / fairshare: ord by (owner, seq) */
};

/* The entry still stands for the session's present stay on the pending
 * list. */
bool skv__inc_live(const skv__pass *P, const ord_ent *e);
/* Visit or skip one entry: 1 keep it, 0 drop it (the session left), < 0
 * error; *visited: the visit function ran. */
int skv__inc_step(skv__pass *P, skv__inc *I, ord_ent *e, skv__pass_visit_fn fn,
                  bool *visited);
/* Tests: agents the verdicts looked at in the group's last incremental
 * pass (SKV_ENOENT: no such group). */
int skv__pass_inc_looked(const skv_sched *s, const char *group, uint64_t *out,
                         skv_error *err);
/* The walk of a per-owner order (pass_inc_owner.c). */
int skv__inc_walk_owners(skv__pass *P, skv__inc *I, skv__pass_visit_fn fn,
                         skv_error *err);

#endif
