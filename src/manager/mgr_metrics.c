/* skv_manager_metrics_collect: bind the caller's registry, register the
 * families and bring every series up to date from the manager's state.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <string.h>

#include "mgr_int.h"
#include "mgr_metrics.h"

/* Lower-case state names ("running"), as Prometheus label values go. */
static void state_label(char *buf, size_t n, skv_manager_session_state s)
{
    snprintf(buf, n, "%s", skv_manager_session_state_name(s));
    for (char *p = buf; *p; p++)
        *p = (char)tolower((unsigned char)*p);
}

static int counters(skv__mgr_metrics *x, const skv_manager_stats *st,
                    int64_t now_ms, skv_error *err)
{
    const skv__mgr_families *f = &x->f;
    int rc = skv_metrics_set(f->placements, NULL, 0, (double)st->placements,
                             err);
    if (!rc)
        rc = skv_metrics_set(f->passes, NULL, 0, (double)st->passes, err);
    if (!rc)
        rc = skv_metrics_set(f->requests, NULL, 0, (double)st->requests, err);
    if (!rc)
        rc = skv_metrics_set(f->refused, NULL, 0,
                             (double)st->requests_refused, err);
    if (!rc)
        rc = skv_metrics_set(f->preemptions, NULL, 0,
                             (double)st->preemptions, err);
    const char *idle[] = {"idle"}, *life[] = {"lifetime"};
    if (!rc)
        rc = skv_metrics_set(f->reclaimed, idle, 1,
                             (double)st->reclaimed_idle, err);
    if (!rc)
        rc = skv_metrics_set(f->reclaimed, life, 1,
                             (double)st->reclaimed_lifetime, err);
    /* The rate over the interval since the previous collect; 0 until two
     * collects (or a clock that did not move) make one. */
    double pps = 0;
    if (x->have_last && now_ms > x->last_ms &&
        st->placements >= x->last_placements)
        pps = (double)(st->placements - x->last_placements) * 1000.0 /
              (double)(now_ms - x->last_ms);
    if (!rc)
        rc = skv_metrics_set(f->pps, NULL, 0, pps, err);
    if (!rc) {
        x->have_last = true;
        x->last_ms = now_ms;
        x->last_placements = st->placements;
    }
    return rc;
}

static int sessions(const skv__mgr_families *f, const skv_manager_stats *st,
                    skv_error *err)
{
    for (int s = SKV_SESSION_PENDING; s <= SKV_SESSION_ERROR; s++) {
        char name[32];
        const char *lv[1] = {name};
        state_label(name, sizeof name, (skv_manager_session_state)s);
        int rc = skv_metrics_set(f->sessions, lv, 1,
                                 (double)st->sessions_by_state[s], err);
        if (rc)
            return rc;
    }
    return 0;
}

/* The state of m, created on first use. */
static int state_get(skv__mgr_metrics **out, skv_manager *m, skv_error *err)
{
    if (!m->metrics) {
        m->metrics = skv__calloc(1, sizeof *m->metrics);
        if (!m->metrics)
            return skv__err(err, SKV_ENOMEM, "metrics: out of memory");
    }
    *out = m->metrics;
    return 0;
}

/* Register the families in reg and remember it for the hooks. */
static int bind_reg(skv__mgr_metrics *x, skv_metrics *reg, skv_error *err)
{
    if (x->reg == reg)
        return 0;
    skv__mgr_families f;
    int rc = skv__mgr_metrics_families(&f, reg, err);
    if (rc)
        return rc;
    skv__mgr_metrics_forget_starts(x);
    x->reg = reg;
    x->f = f;
    x->have_last = false;
    return 0;
}

SKV_EXTERN int skv_manager_metrics_collect(skv_manager *m, skv_metrics *reg,
                                           int64_t now_ms, skv_error *err)
{
    if (!m || !reg)
        return skv__err(err, SKV_EINVAL,
                        "manager_metrics_collect: NULL manager or registry");
    skv__mgr_metrics *x = NULL;
    skv_manager_stats st = {SKV_MANAGER_STATS_VERSION};
    int rc = state_get(&x, m, err);
    if (!rc)
        rc = bind_reg(x, reg, err);
    if (!rc)
        rc = skv_manager_get_stats(m, &st, err);
    if (!rc)
        rc = sessions(&x->f, &st, err);
    if (!rc)
        rc = counters(x, &st, now_ms, err);
    if (!rc)
        rc = skv__mgr_metrics_agents(m, &x->f, err);
    if (!rc)
        rc = skv__mgr_metrics_pool(m, &x->f, err);
    if (!rc)
        rc = skv__mgr_metrics_pending(m, &x->f, err);
    return rc;
}

SKV_EXTERN void skv_manager_metrics_detach(skv_manager *m)
{
    if (!m || !m->metrics)
        return;
    skv__mgr_metrics_forget_starts(m->metrics);
    m->metrics->reg = NULL;
    m->metrics->have_last = false;
}
