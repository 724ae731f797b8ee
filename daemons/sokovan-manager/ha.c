/* The election loop of sokovan-manager (ha.h). The manager object never
 * sees any of this: it is opened only once this host holds the lease, and
 * its write transactions are fenced by the lease's epoch (options.lease).
 *
 * Losing the lease ends the process instead of going back to standby: the
 * manager object's state may be ahead of what the store committed, and a
 * fresh start (a supervisor restarts it; it then stands by) is the one
 * path that loads it back exactly.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <unistd.h>

#include "ha.h"
#include "sokovan/proto.h"

bool mgr_ha_standby(const mgr_ha *h)
{
    return h->lease && skv_manager_lease_epoch(h->lease) == 0;
}

/* "host pid N at ADDRESS": what operators and standby answers show. */
static void name_self(mgr_ha *h, const skvd_manager_conf *c)
{
    char host[64] = "?";
    gethostname(host, sizeof(host) - 1);
    const char *at = c->tcp ? c->tcp : c->listen ? c->listen : "?";
    /* clipped at 127 bytes (the lease row's limit) */
    snprintf(h->holder, sizeof(h->holder), "%.40s pid %ld at %s%s", host,
             (long)getpid(), c->tcp ? "" : "unix:", at);
}

static void learn_leader(mgr_ha *h)
{
    char who[128];
    int64_t epoch = 0;
    if (skv_manager_lease_leader(h->lease, who, sizeof(who), &epoch, NULL))
        snprintf(h->leader, sizeof(h->leader), "unknown (the store did not "
                 "say)");
    else
        snprintf(h->leader, sizeof(h->leader), "%s (epoch %lld)",
                 who[0] ? who : "nobody yet", (long long)epoch);
}

static int won(mgr_ha *h)
{
    int64_t waited = h->standby_since_ms ? skvd_now_ms() -
                                               h->standby_since_ms : 0;
    skvd_log(SKV_LOG_WARN, "elected leader at epoch %lld (%s) after %lld ms "
             "standing by: loading the cluster from the store",
             (long long)skv_manager_lease_epoch(h->lease), h->holder,
             (long long)waited);
    return h->elected(h->ctx);
}

static void fail(mgr_ha *h, const char *what, const skv_error *e)
{
    skvd_log(SKV_LOG_ERROR, "%s: %s: stepping down (exiting; restarted, "
             "this manager stands by)", what, e->message);
    h->fatal(h->ctx);
}

static void on_poll(uv_timer_t *t)
{
    mgr_ha *h = t->data;
    skv_error e = SKV_ERROR_INIT;
    if (!mgr_ha_standby(h)) {
        if (skv_manager_lease_renew(h->lease, &e))
            fail(h, "lost the leader lease", &e);
        return;
    }
    int rc = skv_manager_lease_try(h->lease, skvd_now_ms(), &e);
    if (rc < 0)
        fail(h, "standby: the lease", &e);
    else if (rc == 0)
        learn_leader(h);
    else if (won(h))
        h->fatal(h->ctx);
}

int mgr_ha_start(mgr_ha *h, uv_loop_t *loop, const skvd_manager_conf *c)
{
    h->poll_ms = c->ha_poll_ms;
    if (!c->store || !strcmp(c->store, "sqlite") || !c->store[0])
        return 1;
    skv_manager_lease_options o = SKV_MANAGER_LEASE_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    name_self(h, c);
    o.store = c->store;
    o.holder = h->holder;
    o.lease_ms = (uint32_t)c->ha_lease_ms;
    int rc = skv_manager_lease_open(&h->lease, &o, &e);
    if (!rc)
        rc = skv_manager_lease_try(h->lease, skvd_now_ms(), &e);
    if (rc < 0) {
        skvd_log(SKV_LOG_ERROR, "manager lease: %s", e.message);
        return -1;
    }
    uv_timer_init(loop, &h->timer);
    /* The listeners keep the loop alive; a signal's stop must not wait
     * for this timer. */
    uv_unref((uv_handle_t *)&h->timer);
    h->timer.data = h;
    h->timer_on = true;
    if (rc == 0) {
        learn_leader(h);
        h->standby_since_ms = skvd_now_ms();
        skvd_log(SKV_LOG_WARN, "standby: the leader is %s; trying for the "
                 "lease every %llu ms", h->leader,
                 (unsigned long long)h->poll_ms);
    }
    return rc;
}

void mgr_ha_arm(mgr_ha *h)
{
    if (h->timer_on)
        uv_timer_start(&h->timer, on_poll, h->poll_ms, h->poll_ms);
}

int mgr_ha_answer(mgr_ha *h, skvd_conn *c, const void *p, size_t len)
{
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_envelope_decode(&env, p, len, &e))
        return -1;
    int rc = 0;
    if (env.kind == SKV_PROTO_REQUEST) {
        char msg[320];
        void *frame = NULL;
        size_t flen = 0;
        /* "standby" first: clients fail over on exactly that prefix. */
        snprintf(msg, sizeof(msg), "standby: this manager (%s) is a standby; "
                 "the leader is %s: ask the next manager", h->holder,
                 h->leader);
        rc = skv_proto_error_encode(&frame, &flen, env.request_id,
                                    SKV_ESTATE, msg, env.type_name,
                                    skvd_now_ms(), NULL, NULL);
        rc = rc ? -1 : skvd_conn_send(c, frame, flen);
        skv_free(frame);
    }
    skv_proto_envelope_free(&env);
    return rc;
}

static void closed(uv_handle_t *hd)
{
    (void)hd;
}

void mgr_ha_stop(mgr_ha *h)
{
    if (!h->timer_on)
        return;
    h->timer_on = false;
    uv_close((uv_handle_t *)&h->timer, closed);
}

void mgr_ha_free(mgr_ha *h)
{
    skv_manager_lease_free(h->lease);
    h->lease = NULL;
}
