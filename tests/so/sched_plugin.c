/* Test plugin for the scheduler: a selector preferring the last agent of
 * the group and a sequencer ordering by descending session id.
 * SPDX-License-Identifier: Apache-2.0 */
#include "sokovan/sched.h"

#define SKV_PLUGIN_EXPORT __attribute__((visibility("default")))

static int64_t last_score(void *st, const skv_sched_agent_view *a,
                          const skv_sched_kernel_view *k)
{
    (void)st;
    (void)k;
    return (int64_t)a->index;
}

static int64_t rev_rank(void *st, const skv_sched_session_view *s,
                        const skv_sched_owner_view *o, int64_t now)
{
    (void)st;
    (void)o;
    (void)now;
    /* first two characters, reversed */
    return -(((int64_t)(unsigned char)s->id[0] << 8) | (unsigned char)s->id[1]);
}

static const skv_sched_selector sel = {
    SKV_SCHED_SELECTOR_ABI, "test-last", NULL, NULL, last_score, NULL, NULL};
static const skv_sched_sequencer seq = {
    SKV_SCHED_SEQUENCER_ABI, "test-reverse-id", 0, SKV_SCHED_SCOPE_USER, NULL,
    NULL, rev_rank};

const skv_sched_selector *skv_sched_selector_plugin(void);
const skv_sched_sequencer *skv_sched_sequencer_plugin(void);

SKV_PLUGIN_EXPORT const skv_sched_selector *skv_sched_selector_plugin(void)
{
    return &sel;
}

SKV_PLUGIN_EXPORT const skv_sched_sequencer *skv_sched_sequencer_plugin(void)
{
    return &seq;
}
