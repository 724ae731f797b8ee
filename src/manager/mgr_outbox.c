/* The outbox: decide -> persist -> send. A frame produced while a
 * transaction is open (a reply announcing what it wrote, a kernel.create
 * for a kernel it placed) waits here and leaves only after that
 * transaction commits, so no peer ever hears of a state the database may
 * still lose. A rollback drops what waited: replies become errors (the
 * request was not recorded), our own requests leave the request table
 * unsent, errors and events go out as they are.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"

static void deliver(skv_manager *m, const skv__mgr_out *o)
{
    skv__mgr_conn *c = skv__mgr_conn_find(m, o->conn);
    if (c && !c->dead && m->send(o->conn, o->frame, o->len, m->payload) < 0) {
        c->dead = true;
        skv__log(SKV_LOG_WARN, "manager", "connection %llu: send failed",
                 (unsigned long long)o->conn);
    }
}

/* Takes ownership of frame. Out of memory: sent at once (the commit it
 * waits for is the caller's next step; losing the frame would be worse). */
void skv__mgr_outbox_put(skv_manager *m, const skv__mgr_out *o)
{
    if (m->n_out == m->cap_out) {
        size_t cap = m->cap_out ? 2 * m->cap_out : 64;
        skv__mgr_out *v = skv__reallocarray(m->out, cap, sizeof *v);
        if (!v) {
            deliver(m, o);
            skv_free(o->frame);
            return;
        }
        m->out = v;
        m->cap_out = cap;
    }
    m->out[m->n_out++] = *o;
}

/* After a commit: everything that waited goes out, in order. */
void skv__mgr_outbox_release(skv_manager *m)
{
    for (size_t i = 0; i < m->n_out; i++) {
        deliver(m, &m->out[i]);
        skv_free(m->out[i].frame);
    }
    m->n_out = 0;
}

static void forget_request(skv_manager *m, uint64_t conn, uint64_t id)
{
    skv__mgr_req r;
    skv__mgr_req_take(m, conn, id, &r);
}

/* After a rollback of everything from mark on. */
void skv__mgr_outbox_drop(skv_manager *m, size_t mark, const char *why)
{
    size_t n = m->n_out;
    m->n_out = mark < n ? mark : n;
    for (size_t i = m->n_out; i < n; i++) {
        skv__mgr_out o = m->out[i];
        if (o.kind == SKV__OUT_REPLY)
            skv__mgr_error(m, o.conn, o.req, SKV_EIO, why, NULL);
        else if (o.kind == SKV__OUT_REQUEST)
            forget_request(m, o.conn, o.req);
        else
            skv__mgr_outbox_put(m, &o);    /* errors, events: as they are */
        if (o.kind != SKV__OUT_OTHER)
            skv_free(o.frame);
    }
    if (!skv__db_in_transaction(m->store))
        skv__mgr_outbox_release(m);
}

size_t skv__mgr_outbox_mark(const skv_manager *m)
{
    return m->n_out;
}

void skv__mgr_outbox_free(skv_manager *m)
{
    for (size_t i = 0; i < m->n_out; i++)
        skv_free(m->out[i].frame);
    skv__free(m->out);
    m->out = NULL;
    m->n_out = m->cap_out = 0;
}
