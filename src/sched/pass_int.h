/* Private to the pass: its context and the steps shared by pass.c,
 * queue.c, place.c, reserve.c, preempt.c, reason.c and result.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SCHED_PASS_INT_H
#define SKV_SCHED_PASS_INT_H

#include "sched_int.h"

/* Result under construction: offsets instead of pointers until the end. */
typedef struct skv__rb_place {
    uint32_t sess;
    uint32_t kfirst, nk;
    uint32_t id_off, group_off;
} skv__rb_place;

typedef struct skv__rb_kernel {
    uint32_t kernel;
    uint32_t agent_off;
    uint32_t dfirst, nd;
} skv__rb_kernel;

typedef struct skv__rb_preempt {
    uint32_t victim, waiter;
    uint32_t victim_off, waiter_off;
    skv_sched_preempt_cause cause;
} skv__rb_preempt;

typedef struct skv__rb {
    skv__rb_place *pl;
    uint32_t npl, pl_cap;
    skv__rb_kernel *ks;
    uint32_t nks, ks_cap;
    skv_sched_device_share *ds;
    uint32_t nds, ds_cap;
    skv__rb_preempt *pre;
    uint32_t npre, pre_cap;
    char *str;
    uint32_t nstr, str_cap;
    size_t considered;
} skv__rb;

int skv__rb_add_placement(skv__rb *rb, const skv_sched *s, uint32_t si,
                          skv_error *err);
int skv__rb_add_preemption(skv__rb *rb, const skv_sched *s, uint32_t victim,
                           uint32_t waiter, skv_sched_preempt_cause cause,
                           skv_error *err);
int skv__rb_finish(skv_sched_result **out, skv__rb *rb, const skv_sched *s,
                   int64_t now, skv_error *err);
void skv__rb_fini(skv__rb *rb);

/* Why a placement attempt failed. */
typedef struct skv__miss {
    uint32_t kernel;         /* the kernel no agent could take */
    uint32_t resv_blocked;   /* fitting agents skipped for reservations */
    uint32_t resv_holder;    /* one such reservation's session */
} skv__miss;

typedef struct skv__pass {
    skv_sched *s;
    skv__group *g;
    int64_t now;
    const skv_sched_pass_options *o;
    uint32_t epoch;
    uint32_t nresv;
    bool ignore_resv;        /* preemption trials */
    bool trial_only;         /* place on the mirror only, not the maps */
    size_t placed;           /* placements in this pass (all groups) */
    skv__rb *rb;
    /* scratch */
    skv__aref *arefs;
    uint32_t narefs_cap;
    /* failure memo (see pass.c) */
    uint32_t *memo;
    uint32_t memo_cap;
    /* the group's RUNNING preemptible sessions, gathered by the first
     * preemption attempt of the group's pass (preempt.c) */
    uint32_t *running;
    uint32_t nrunning;
    bool running_built;
} skv__pass;

/* May x run on a at all (schedulable, architecture, models, designated,
 * labels)?
 * Inline: it runs for every candidate agent, and most sessions carry no
 * placement constraint, leaving only the schedulable flag to read. */
bool skv__pass_agent_ok_constrained(const skv__session *x, const skv__agent *a);
static inline bool skv__pass_agent_ok(const skv__session *x, const skv__agent *a)
{
    if (!a->schedulable)
        return false;
    if (!x->arch && !x->nmodels && !x->ndesignated && !x->nneed_labels)
        return true;
    return skv__pass_agent_ok_constrained(x, a);
}
/* Place every kernel (maps changed, kalloc filled) or nothing. 0, SKV_ENOSPC
 * (miss filled) or SKV_ENOMEM. */
int skv__pass_place(skv__pass *P, uint32_t si, skv__miss *miss);
/* Whether agent ai alone would take session si (one kernel, or all of a
 * single-node session): the test skv__pass_place's choice makes of each
 * agent, without choosing or changing anything. */
bool skv__pass_fits_on(skv__pass *P, uint32_t si, uint32_t ai);
/* Undo a skv__pass_place that was not committed. */
void skv__pass_unplace(skv__pass *P, uint32_t si);
/* Tell the selector about a committed session. */
void skv__pass_notify(skv__pass *P, uint32_t si);

/* Reason for a resource failure (second scan). */
void skv__pass_reason_resources(skv__pass *P, uint32_t si,
                                const skv__miss *miss);
/* Try to reserve agents for a blocked session; true when done. */
bool skv__pass_reserve(skv__pass *P, uint32_t si, skv_error *err);
/* Try to choose preemption victims; 1 when chosen (or already waiting),
 * 0 when none helps, negative on error. */
int skv__pass_preempt(skv__pass *P, uint32_t si, skv_error *err);
/* Tests: plan victims the reference way (preempt.c), to compare. */
extern bool skv__preempt_reference;

/* The ordered list of sessions to try (queue.c). Calls `fn` for each in
 * order; fn returns whether it placed the session (for re-ranking) or a
 * negative error, which stops the walk. */
typedef int (*skv__pass_visit_fn)(skv__pass *P, uint32_t si);
int skv__pass_walk(skv__pass *P, const uint32_t *cand, uint32_t n,
                   skv__pass_visit_fn fn, skv_error *err);
int32_t skv__pass_aged(const skv__group *g, const skv__session *x, int64_t now);
/* The group sequencer's rank of a pending session (queue.c). */
int64_t skv__pass_rank(skv__pass *P, uint32_t si);

/* Incremental walk (pass_inc.c): for groups whose order is static and
 * that do not preempt; visits in the full walk's order every session that
 * can do anything and skips the rest (their reason is deferred). */
bool skv__pass_inc_eligible(const skv__pass *P);
int skv__pass_inc_walk(skv__pass *P, skv__pass_visit_fn fn, skv_error *err);
/* A full walk sets every reason: forget which ones were marked deferred. */
void skv__pass_inc_forget(skv__group *g);
void skv__pass_owner_view(skv_sched_owner_view *v, skv_sched *s,
                          skv__owner *o, int64_t now);

const char *skv__sched_scope_name(skv_sched_scope sc);

#endif
