/* Listing, signalling and killing a cgroup's processes, and removing the
 * cgroup. Processes exit, fork and get reaped while this runs: ESRCH is
 * normal, lists are re-read until they stay empty, and the freezer (when
 * there is one) stops forks between reading the list and killing it.
 * A pid is signalled right after it was listed; reuse of a pid within that
 * window would need the whole pid space (pid_max) to wrap meanwhile.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

#define SKV__CG_KILL_TIMEOUT_MS 5000
#define SKV__CG_RMDIR_TIMEOUT_MS 2000

typedef struct pidset {
    pid_t *v;
    size_t n, cap;
} pidset;

static int pidset_add(pidset *s, pid_t p)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == p)
            return 0;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        pid_t *nv = skv__reallocarray(s->v, nc, sizeof(*nv));
        if (!nv)
            return SKV_ENOMEM;
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = p;
    return 0;
}

/* Add the pids of dir/cgroup.procs; a vanished directory adds none. */
static int read_procs(pidset *s, const char *dir, skv_error *err)
{
    char path[PATH_MAX], *text = NULL;
    int rc = skv__cg_join(path, sizeof(path), dir, "cgroup.procs", err);
    if (rc == 0)
        rc = skv__sys_read_alloc(path, &text, NULL, err);
    if (rc == SKV_ENOENT)
        return 0;
    if (rc < 0)
        return rc;
    for (char *p = text; rc == 0 && *p;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || (*end && *end != '\n')) {
            rc = skv__err(err, SKV_EPROTO, "%s: malformed pid list", path);
            break;
        }
        if (pidset_add(s, (pid_t)v) < 0)
            rc = skv__err(err, SKV_ENOMEM, "pid list");
        p = *end ? end + 1 : end;
    }
    skv__free(text);
    return rc;
}

/* The directory whose cgroup.procs lists the container's processes. */
static const skv__cg_dir *tracking(const skv_cgroup *cg)
{
    static const char *const order[] = {"unified", "pids", "freezer",
                                        "memory"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(order); i++) {
        const skv__cg_dir *d = skv__cg_find(cg, order[i]);
        if (d)
            return d;
    }
    return cg->n ? &cg->d[0] : NULL;
}

int skv__cgroup_pids(const skv_cgroup *cg, pid_t **out, size_t *count,
                     skv_error *err)
{
    if (!cg || !out || !count)
        return skv__err(err, SKV_EINVAL, "cgroup pids: NULL argument");
    pidset s = {0};
    const skv__cg_dir *d = tracking(cg);
    int rc = d ? read_procs(&s, d->dir, err) : 0;
    if (rc < 0) {
        skv__free(s.v);
        return rc;
    }
    *out = s.v;
    *count = s.n;
    return 0;
}

/* Every hierarchy is read: a process moved into only some of them still
 * belongs to the container. */
static int all_pids(pidset *s, const skv_cgroup *cg, skv_error *err)
{
    s->n = 0;
    for (size_t i = 0; i < cg->n; i++) {
        int rc = read_procs(s, cg->d[i].dir, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

bool skv__cgroup_is_empty(const skv_cgroup *cg)
{
    if (!cg)
        return true;
    pidset s = {0};
    int rc = all_pids(&s, cg, NULL);
    skv__free(s.v);
    return rc < 0 ? false : s.n == 0;
}

static void signal_all(const pidset *s, int sig)
{
    for (size_t i = 0; i < s->n; i++)
        (void)kill(s->v[i], sig); /* ESRCH: it exited meanwhile */
}

int skv__cgroup_signal(skv_cgroup *cg, int sig, skv_error *err)
{
    if (!cg || sig <= 0 || sig >= NSIG)
        return skv__err(err, SKV_EINVAL, "cgroup signal: bad argument (%d)",
                        sig);
    pidset s = {0};
    int rc = all_pids(&s, cg, err);
    if (rc == 0)
        signal_all(&s, sig);
    skv__free(s.v);
    return rc;
}

/* Whether cur holds a pid that prev did not: something forked. */
static bool has_new(const pidset *cur, const pidset *prev)
{
    for (size_t i = 0; i < cur->n; i++) {
        bool seen = false;
        for (size_t k = 0; k < prev->n && !seen; k++)
            seen = prev->v[k] == cur->v[i];
        if (!seen)
            return true;
    }
    return false;
}

/* SIGKILL what s lists. With the freezer, nothing can fork between the
 * listing and the kill; thawing lets the killed tasks exit (v1 freezer). A
 * freeze costs milliseconds of RCU synchronisation on some kernels, so it is
 * only used once forking is seen or a few rounds did not empty the cgroup. */
static int kill_round(skv_cgroup *cg, pidset *s, bool freeze, skv_error *err)
{
    bool frozen = freeze && cg->ops->freeze(cg, true, NULL) == 0;
    int rc = frozen ? all_pids(s, cg, err) : 0;
    if (rc == 0)
        signal_all(s, SIGKILL);
    if (frozen)
        (void)cg->ops->freeze(cg, false, NULL);
    return rc;
}

static int kill_loop(skv_cgroup *cg, uint64_t deadline, pidset *s,
                     pidset *prev, skv_error *err)
{
    const skv__cg_dir *u = skv__cg_find(cg, "unified");
    bool freeze = false;
    unsigned nap_us = 100;
    int rc;
    for (int round = 0; (rc = all_pids(s, cg, err)) == 0 && s->n > 0; round++) {
        if (skv__cg_now_ms() >= deadline)
            return skv__err(err, SKV_ETIMEDOUT,
                            "cgroup %s: %zu processes (first %ld) survive "
                            "SIGKILL", cg->rel, s->n, (long)s->v[0]);
        /* cgroup.kill also catches tasks forked while it runs. */
        if (round == 0 && u && skv__cg_has(u->dir, "cgroup.kill"))
            (void)skv__cg_write(u->dir, "cgroup.kill", "1", NULL);
        freeze = freeze || round >= 3 || (round > 0 && has_new(s, prev));
        if ((rc = kill_round(cg, s, freeze, err)) < 0)
            return rc;
        pidset t = *prev;
        *prev = *s;
        *s = t;
        skv__cg_sleep_us(nap_us);
        nap_us = nap_us < 5000 ? nap_us * 2 : nap_us;
    }
    return rc;
}

int skv__cgroup_kill(skv_cgroup *cg, unsigned timeout_ms, skv_error *err)
{
    if (!cg)
        return skv__err(err, SKV_EINVAL, "cgroup kill: NULL handle");
    uint64_t deadline = skv__cg_now_ms() +
                        (timeout_ms ? timeout_ms : SKV__CG_KILL_TIMEOUT_MS);
    pidset a = {0}, b = {0};
    int rc = kill_loop(cg, deadline, &a, &b, err);
    skv__free(a.v);
    skv__free(b.v);
    return rc;
}

int skv__cgroup_destroy(skv_cgroup *cg, skv_error *err)
{
    if (!cg)
        return skv__err(err, SKV_EINVAL, "cgroup destroy: NULL handle");
    int rc = skv__cgroup_kill(cg, 0, err);
    if (rc < 0)
        return rc; /* rmdir cannot succeed while processes remain */
    /* Remove every directory even if one fails; report the first error. */
    for (size_t i = cg->n; i-- > 0;) {
        skv_error e = SKV_ERROR_INIT;
        int r = skv__cg_rmdir(cg->d[i].dir, cg->d[i].mount.ctrls,
                              SKV__CG_RMDIR_TIMEOUT_MS, &e);
        if (r < 0 && rc == 0) {
            rc = r;
            if (err)
                *err = e;
        }
    }
    return rc;
}

int skv__cgroup_stats(const skv_cgroup *cg, skv_cgroup_stats *out,
                      skv_error *err)
{
    if (!cg || !out)
        return skv__err(err, SKV_EINVAL, "cgroup stats: NULL argument");
    const skv__cg_dir *d = tracking(cg);
    if (d && !skv__sys_exists(d->dir))
        return skv__err(err, SKV_ENOENT, "cgroup %s is gone", d->dir);
    return cg->ops->stats(cg, out, err);
}
