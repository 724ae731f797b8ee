/* What an inbound connection may cost before and after it authenticated.
 *
 * Anyone who can reach the socket can open connections and send bytes;
 * only a verified request makes a peer someone. So until the host says a
 * connection authenticated (skvd_conn_authenticated: the manager verified
 * its first request), it gets a small frame limit and a deadline, and it
 * is the first to go when connections or buffered bytes run out:
 *  - frames: the reader starts at preauth_frame_max, raised to max_frame;
 *  - bytes: incomplete frames of all connections together stay under
 *    max_buffered; unauthenticated holders are dropped oldest first to
 *    make room, and a reader that still does not fit is dropped itself;
 *  - time: a frame must arrive whole within frame_timeout_ms of its first
 *    byte, a connection must authenticate within auth_timeout_ms;
 *  - descriptors: at most `cap` inbound connections, cap derived from
 *    RLIMIT_NOFILE less SKVD_FD_RESERVE, so accept() never meets EMFILE
 *    (libuv's answer to EMFILE is to reset whoever connects next, agents
 *    and admins included); at the cap the oldest unauthenticated
 *    connection makes room for the new one.
 * Dropping is immediate (no flush): a peer that does not read must not
 * keep its descriptor. Drops are logged once per interval, not one line
 * each: a flood would otherwise flood the log too. Unauthenticated
 * connections wait in a FIFO and the cap is a counter, so a flood at the
 * cap costs O(1) per accept, not a walk over every connection.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <sys/resource.h>

#include "sokovan/proto.h"
#include "skvd.h"

#define REPORT_MS 10000

struct skvd_limits {
    skvd_limits_conf cf;
    size_t cap;              /* inbound connections */
    size_t inbound;          /* counted ones (admitted, not released) */
    skvd_conn *uhead, *utail; /* unauthenticated, oldest first */
    size_t buffered;         /* sum of conns' held */
    uv_timer_t timer;        /* the timeout sweep */
    skvd_net *net;
    uint64_t last_report_ms;
    uint64_t n_evicted, n_timed_out, n_refused; /* since the last report */
    uint64_t n_bad_frames;   /* unusable frames before authentication */
};

/* The reader limit counts payload bytes; an error reply is tiny. */
static void drop(skvd_conn *c, int code, const char *msg)
{
    void *frame = NULL;
    size_t len = 0;
    skvd_log(SKV_LOG_DEBUG, "conn %llu (%s): %s: closing it",
             (unsigned long long)c->id, c->peer, msg);
    if (!c->closing &&
        skv_proto_error_encode(&frame, &len, 0, code, msg, NULL,
                               skvd_now_ms(), NULL, NULL) == 0)
        skvd_conn_send(c, frame, len);
    skv_free(frame);
    skvd_limits_release(c);
    skvd_conn_close(c, false);
}

static bool live_inbound(const skvd_conn *c)
{
    return !c->outbound && !uv_is_closing(&c->h.handle);
}

static void fifo_push(struct skvd_limits *L, skvd_conn *c)
{
    c->unext = NULL;
    c->uprev = L->utail;
    if (L->utail)
        L->utail->unext = c;
    else
        L->uhead = c;
    L->utail = c;
    c->queued = true;
}

static void fifo_remove(struct skvd_limits *L, skvd_conn *c)
{
    if (!c->queued)
        return;
    if (c->uprev)
        c->uprev->unext = c->unext;
    else
        L->uhead = c->unext;
    if (c->unext)
        c->unext->uprev = c->uprev;
    else
        L->utail = c->uprev;
    c->uprev = c->unext = NULL;
    c->queued = false;
}

/* The oldest unauthenticated connection (other than but) holding at
 * least min_held bytes. */
static skvd_conn *oldest_unauth(struct skvd_limits *L, const skvd_conn *but,
                                size_t min_held)
{
    for (skvd_conn *c = L->uhead; c; c = c->unext)
        if (c != but && c->held >= min_held)
            return c;
    return NULL;
}

void skvd_limits_release(skvd_conn *c)
{
    struct skvd_limits *L = c->net->limits;
    if (L) {
        L->buffered -= c->held < L->buffered ? c->held : L->buffered;
        fifo_remove(L, c);
        if (c->counted)
            L->inbound--;
    }
    c->counted = false;
    c->held = 0;
    c->partial_ms = 0;
}

size_t skvd_limits_frame_max(const skvd_conn *c)
{
    const struct skvd_limits *L = c->net->limits;
    if (!L || c->outbound || c->authed)
        return c->net->max_frame;
    return L->cf.preauth_frame_max < c->net->max_frame
               ? L->cf.preauth_frame_max : c->net->max_frame;
}

bool skvd_limits_admit(skvd_conn *c)
{
    struct skvd_limits *L = c->net->limits;
    if (!L)
        return true;
    c->accepted_ms = uv_now(c->net->loop);
    if (L->inbound >= L->cap) {
        skvd_conn *victim = L->uhead;
        if (!victim) {
            L->n_refused++;
            return false;
        }
        L->n_evicted++;
        drop(victim, SKV_EBUSY, "connection limit reached: the oldest "
             "unauthenticated connection makes room");
    }
    c->counted = true;
    L->inbound++;
    fifo_push(L, c);
    return true;
}

bool skvd_limits_read(skvd_conn *c, size_t nread)
{
    struct skvd_limits *L = c->net->limits;
    if (!L || c->outbound)
        return true;
    while (L->buffered + nread > L->cf.max_buffered) {
        skvd_conn *victim = oldest_unauth(L, c, 1);
        if (!victim)
            break;
        L->n_evicted++;
        drop(victim, SKV_EBUSY, "buffered bytes limit reached: the oldest "
             "unauthenticated connection makes room");
    }
    if (L->buffered + nread <= L->cf.max_buffered)
        return true;
    if (c->authed)
        skvd_log(SKV_LOG_WARN, "conn %llu (%s): incomplete frames of all "
                 "connections would exceed max_buffered_bytes (%zu): closing "
                 "it", (unsigned long long)c->id, c->peer,
                 L->cf.max_buffered);
    else
        L->n_evicted++;   /* in the summary, not a line each */
    drop(c, SKV_EBUSY, "the manager holds too many incomplete frames "
         "(max_buffered_bytes); retry later");
    return false;
}

void skvd_limits_held(skvd_conn *c, bool took)
{
    struct skvd_limits *L = c->net->limits;
    if (!L || c->outbound || uv_is_closing(&c->h.handle))
        return;
    size_t now = skv_proto_reader_buffered(c->reader);
    L->buffered = L->buffered - c->held + now;
    c->held = now;
    /* The incomplete frame began in this read when a frame completed in
     * it, else it is the one already being timed. */
    if (now == 0)
        c->partial_ms = 0;
    else if (took || c->partial_ms == 0)
        c->partial_ms = uv_now(c->net->loop);
}

bool skvd_limits_counted(skvd_conn *c)
{
    struct skvd_limits *L = c->net->limits;
    if (!L || c->outbound || c->authed)
        return false;
    L->n_bad_frames++;
    return true;
}

void skvd_conn_authenticated(skvd_conn *c)
{
    skv_error e = SKV_ERROR_INIT;
    if (c->authed)
        return;
    c->authed = true;
    if (c->net->limits)
        fifo_remove(c->net->limits, c);
    if (skv_proto_reader_set_max_frame(c->reader, c->net->max_frame, &e))
        skvd_log(SKV_LOG_WARN, "conn %llu (%s): %s",
                 (unsigned long long)c->id, c->peer, e.message);
}

static void report(struct skvd_limits *L, uint64_t now)
{
    if (now - L->last_report_ms < REPORT_MS)
        return;
    if (L->n_evicted || L->n_timed_out || L->n_refused || L->n_bad_frames)
        skvd_log(SKV_LOG_WARN, "in the last %llu s: %llu unauthenticated "
                 "connections dropped to make room, %llu timed out, %llu "
                 "refused, %llu closed for an oversized or empty frame "
                 "(max_connections %zu, max_buffered_bytes %zu, "
                 "preauth_frame_max %zu)",
                 (unsigned long long)(now - L->last_report_ms) / 1000,
                 (unsigned long long)L->n_evicted,
                 (unsigned long long)L->n_timed_out,
                 (unsigned long long)L->n_refused,
                 (unsigned long long)L->n_bad_frames, L->cap,
                 L->cf.max_buffered, L->cf.preauth_frame_max);
    L->n_evicted = L->n_timed_out = L->n_refused = L->n_bad_frames = 0;
    L->last_report_ms = now;
}

/* Why c has run out of time at now, or NULL. */
static const char *expired(const struct skvd_limits *L, const skvd_conn *c,
                           uint64_t now)
{
    if (!c->authed && now - c->accepted_ms >= L->cf.auth_timeout_ms)
        return "no authenticated request within auth_timeout_ms";
    if (c->partial_ms && now - c->partial_ms >= L->cf.frame_timeout_ms)
        return "frame incomplete for frame_timeout_ms";
    return NULL;
}

static void sweep_cb(uv_timer_t *t)
{
    struct skvd_limits *L = t->data;
    uint64_t now = uv_now(t->loop);
    skvd_conn *next;
    for (skvd_conn *c = L->net->conns; c; c = next) {
        next = c->next;   /* drop() only unlinks in the close callback */
        const char *why = live_inbound(c) ? expired(L, c, now) : NULL;
        if (why) {
            L->n_timed_out++;
            drop(c, SKV_ETIMEDOUT, why);
        }
    }
    report(L, now);
}

/* The connection cap RLIMIT_NOFILE allows, and the configured one. */
static int compute_cap(size_t *cap, uint64_t want, char *why, size_t wl)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return snprintf(why, wl, "getrlimit(RLIMIT_NOFILE) failed"), -1;
    uint64_t cur = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX / 2
                                                 : (uint64_t)rl.rlim_cur;
    if (cur < SKVD_FD_RESERVE + 8)
        return snprintf(why, wl, "RLIMIT_NOFILE %llu leaves no room for "
                        "connections (%d descriptors are kept for the "
                        "daemon itself); raise it (ulimit -n, LimitNOFILE=)",
                        (unsigned long long)cur, SKVD_FD_RESERVE), -1;
    uint64_t room = cur - SKVD_FD_RESERVE;
    if (want > room)
        skvd_log(SKV_LOG_WARN, "max_connections %llu lowered to %llu: "
                 "RLIMIT_NOFILE is %llu", (unsigned long long)want,
                 (unsigned long long)room, (unsigned long long)cur);
    *cap = (size_t)(want && want < room ? want : room);
    return 0;
}

static uint64_t sweep_period(const skvd_limits_conf *cf)
{
    uint64_t p = cf->auth_timeout_ms < cf->frame_timeout_ms
                     ? cf->auth_timeout_ms : cf->frame_timeout_ms;
    p /= 4;
    return p < 25 ? 25 : p > 1000 ? 1000 : p;
}

int skvd_limits_start(skvd_net *n, const skvd_limits_conf *cf, char *why,
                      size_t wl)
{
    struct skvd_limits *L = calloc(1, sizeof(*L));
    if (!L)
        return snprintf(why, wl, "out of memory"), -1;
    if (compute_cap(&L->cap, cf->max_connections, why, wl)) {
        free(L);
        return -1;
    }
    L->cf = *cf;
    L->net = n;
    L->last_report_ms = uv_now(n->loop);
    uv_timer_init(n->loop, &L->timer);
    L->timer.data = L;
    uint64_t p = sweep_period(cf);
    uv_timer_start(&L->timer, sweep_cb, p, p);
    n->limits = L;
    skvd_log(SKV_LOG_INFO, "inbound connections: at most %zu, frames of "
             "%zu bytes until authenticated (within %llu ms)", L->cap,
             cf->preauth_frame_max, (unsigned long long)cf->auth_timeout_ms);
    return 0;
}

static void free_cb(uv_handle_t *h)
{
    free(h->data);
}

void skvd_limits_stop(skvd_net *n)
{
    struct skvd_limits *L = n->limits;
    if (!L)
        return;
    n->limits = NULL;
    for (skvd_conn *c = n->conns; c; c = c->next) {
        c->held = 0;
        c->counted = c->queued = false;
        c->uprev = c->unext = NULL;
    }
    uv_close((uv_handle_t *)&L->timer, free_cb);
}
