/* exec.start from a client: who may exec where (the session's owner, or an
 * admin), into which kernel on which agent, and the relay record that
 * follows the exec until it ends; the agent's answer, and the ends that
 * come from a connection closing. The events themselves are relayed in
 * mgr_exec_relay.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <string.h>

#include "mgr_exec.h"

/* ---- the table ------------------------------------------------------------ */

static struct skv__mgr_execs *table(skv_manager *m)
{
    if (!m->execs)
        m->execs = skv__calloc(1, sizeof *m->execs);
    return m->execs;
}

skv__mgr_exec *skv__mgr_exec_by_client(skv_manager *m, uint64_t conn,
                                       const char *cid)
{
    struct skv__mgr_execs *t = m->execs;
    for (size_t i = 0; t && cid && i < t->n; i++)
        if (t->v[i]->cconn == conn &&
            strcmp(t->v[i]->cid, cid) == 0)
            return t->v[i];
    return NULL;
}

skv__mgr_exec *skv__mgr_exec_by_agent(skv_manager *m, uint64_t conn,
                                      const char *aid)
{
    struct skv__mgr_execs *t = m->execs;
    for (size_t i = 0; t && aid && i < t->n; i++)
        if (t->v[i]->aconn == conn && strcmp(t->v[i]->aid, aid) == 0)
            return t->v[i];
    return NULL;
}

static skv__mgr_exec *by_request(skv_manager *m, uint64_t conn, uint64_t req)
{
    struct skv__mgr_execs *t = m->execs;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->v[i]->aconn == conn && t->v[i]->areq == req &&
            !t->v[i]->started)
            return t->v[i];
    return NULL;
}

void skv__mgr_exec_drop(skv_manager *m, skv__mgr_exec *x)
{
    struct skv__mgr_execs *t = m->execs;
    for (size_t i = 0; t && i < t->n; i++)
        if (t->v[i] == x) {
            t->v[i] = t->v[--t->n];
            skv__free(x);
            return;
        }
}

static int push(skv_manager *m, skv__mgr_exec *x, skv_error *err)
{
    struct skv__mgr_execs *t = table(m);
    if (t && t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        void *p = skv__reallocarray(t->v, cap, sizeof *t->v);
        if (p) {
            t->v = p;
            t->cap = cap;
        }
    }
    if (!t || t->n == t->cap)
        return skv__err(err, SKV_ENOMEM, "exec relay table");
    t->v[t->n++] = x;
    return 0;
}

static size_t count_conn(const skv_manager *m, uint64_t conn)
{
    size_t n = 0;
    for (size_t i = 0; m->execs && i < m->execs->n; i++)
        n += m->execs->v[i]->cconn == conn;
    return n;
}

size_t skv__mgr_exec_count_session(const skv_manager *m, const char *sid)
{
    size_t n = 0;
    for (size_t i = 0; m && sid && m->execs && i < m->execs->n; i++)
        n += strcmp(m->execs->v[i]->sid, sid) == 0;
    return n;
}

void skv__mgr_execs_free(skv_manager *m)
{
    if (!m->execs)
        return;
    for (size_t i = 0; i < m->execs->n; i++)
        skv__free(m->execs->v[i]);
    skv__free(m->execs->v);
    skv__free(m->execs);
    m->execs = NULL;
}

/* ---- sending --------------------------------------------------------------- */

void skv__mgr_exec_send(skv_manager *m, uint64_t conn, skv_proto_type type,
                        const void *body)
{
    void *frame = NULL;
    size_t len = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_message_encode(&frame, &len, SKV_PROTO_EVENT, 0, type, body,
                                 0, NULL, &e) == 0)
        skv__mgr_send_frame(m, conn, frame, len);
    else
        skv__log(SKV_LOG_ERROR, "manager", "encoding %s: %s",
                 skv_proto_type_name(type), e.message);
}

/* A command killed while its output has no credit would sit on the agent
 * with a full pipe: the grant lets the agent drain it (to us: dropped) and
 * finish the exec. */
void skv__mgr_exec_kill_agent_side(skv_manager *m, const skv__mgr_exec *x)
{
    if (!skv__mgr_conn_find(m, x->aconn))
        return;
    skv_proto_exec_signal s = {(char *)x->aid, SIGKILL};
    skv__mgr_exec_send(m, x->aconn, SKV_PROTO_EXEC_SIGNAL, &s);
    skv_proto_exec_ack k = {(char *)x->aid, SKV__MGR_EXEC_WINDOW_MAX};
    skv__mgr_exec_send(m, x->aconn, SKV_PROTO_EXEC_OUTPUT_ACK, &k);
}

void skv__mgr_exec_end_client(skv_manager *m, const skv__mgr_exec *x,
                              const char *reason)
{
    skv_proto_exec_exit e = {(char *)x->cid, -1, SIGKILL, (char *)reason};
    if (skv__mgr_conn_find(m, x->cconn))
        skv__mgr_exec_send(m, x->cconn, SKV_PROTO_EXEC_EXIT, &e);
}

/* ---- exec.start ------------------------------------------------------------- */

static bool id_ok(const char *id)
{
    size_t n = id ? strlen(id) : 0;
    if (n < 1 || n >= SKV__MGR_EXEC_ID_MAX)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return false;
    return true;
}

/* What the relay itself needs of the request; the agent checks the rest
 * (argv, env names, window size) and its answer is relayed. */
static int check_request(skv_manager *m, const skv__mgr_call *c,
                         const skv_proto_exec_start *q, skv_error *err)
{
    if (!q->session_id || !q->session_id[0])
        return skv__err(err, SKV_EINVAL, "session_id is required");
    if (!id_ok(q->exec_id))
        return skv__err(err, SKV_EINVAL, "exec_id must be 1..64 of "
                        "[A-Za-z0-9_.-]");
    if (q->n_argv == 0 || !q->argv[0] || !q->argv[0][0])
        return skv__err(err, SKV_EINVAL, "argv is empty: name the command "
                        "to run");
    if (skv__mgr_exec_by_client(m, c->conn, q->exec_id))
        return skv__err(err, SKV_EEXIST, "exec '%s' is already running on "
                        "this connection", q->exec_id);
    if (count_conn(m, c->conn) >= SKV__MGR_EXEC_PER_CONN)
        return skv__err(err, SKV_ENOSPC, "%d execs run on this connection "
                        "already", SKV__MGR_EXEC_PER_CONN);
    return 0;
}

/* The session's owner (or an admin), and a session that runs. */
static int check_session(skv_manager *m, const skv__mgr_call *c,
                         const char *sid, skv_error *err)
{
    char owner[SKV__MGR_ID_MAX];
    int rc = skv__mgr_store_session_owner(m->store, sid, owner, sizeof owner,
                                          err);
    if (rc)
        return rc;
    skv_error why = SKV_ERROR_INIT;
    if (skv_auth_may(c->who, SKV_AUTH_OP_SESSION_CONTROL, owner, &why))
        return skv__err(err, SKV_EPERM, "session '%s' belongs to another "
                        "user: %s may not exec into it (%s)", sid,
                        c->who->user, why.message);
    skv_manager_session_state s;
    rc = skv__mgr_session_get_state(m, sid, &s, err);
    if (rc || s == SKV_SESSION_RUNNING)
        return rc;
    if (s >= SKV_SESSION_TERMINATING)
        return skv__err(err, SKV_ESTATE, "session '%s' has ended (%s): "
                        "there is nothing to exec into", sid,
                        skv_manager_session_state_name(s));
    return skv__err(err, SKV_ESTATE, "session '%s' is not running yet (%s); "
                    "exec when it is RUNNING", sid,
                    skv_manager_session_state_name(s));
}

/* The kernel (given, else the main one) and its agent, connected. */
static skv__mgr_agent *kernel_agent(skv_manager *m, const char *sid,
                                    char *kid, size_t cap, int64_t now_ms,
                                    skv_error *err)
{
    if (!kid[0] && skv__mgr_kernel_id_at(m, sid, 0, kid, cap, NULL))
        snprintf(kid, cap, "%s-0", sid);
    char agent[SKV__MGR_ID_MAX] = "";
    int found = skv__mgr_store_kernel_agent(m->store, sid, kid, agent,
                                            sizeof agent, err);
    if (found < 0)
        return NULL;
    if (!found)
        return skv__err(err, SKV_ENOENT, "session '%s' has no kernel '%s'",
                        sid, kid), NULL;
    skv__mgr_agent *a = skv__mgr_agent_find(m, agent);
    if (agent[0] && a && a->conn && a->state == SKV__AGENT_ALIVE)
        return a;
    skv__mgr_logs_unavailable(m, sid, kid, agent, now_ms, err);
    return NULL;
}

static skv__mgr_exec *record(const skv__mgr_call *c,
                             const skv_proto_exec_start *q,
                             const skv__mgr_agent *a, uint64_t n)
{
    skv__mgr_exec *x = skv__calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->cconn = c->conn;
    x->creq = c->req;
    snprintf(x->cid, sizeof x->cid, "%s", q->exec_id);
    x->aconn = a->conn;
    snprintf(x->aid, sizeof x->aid, "m%llu", (unsigned long long)n);
    snprintf(x->agent, sizeof x->agent, "%s", a->id);
    snprintf(x->sid, sizeof x->sid, "%s", q->session_id);
    uint32_t w = q->window ? q->window : SKV__MGR_EXEC_WINDOW_DEFAULT;
    x->out_credit = w < SKV__MGR_EXEC_WINDOW_MAX ? w
                                                 : SKV__MGR_EXEC_WINDOW_MAX;
    return x;
}

/* Forward with our id, the kernel and the capped window. */
static int forward(skv_manager *m, skv__mgr_exec *x,
                   const skv_proto_exec_start *q, char *kid, skv_error *err)
{
    skv_proto_exec_start fwd = *q;
    fwd.exec_id = x->aid;
    fwd.kernel_id = kid;
    fwd.window = (uint32_t)x->out_credit;
    int rc = skv__mgr_request(m, x->aconn, SKV__REQ_EXEC,
                              SKV_PROTO_EXEC_START, &fwd, kid, x->cconn,
                              x->creq);
    if (rc)
        return skv__err(err, rc, "cannot forward exec.start to agent '%s'",
                        x->agent);
    x->areq = m->next_req;  /* the id skv__mgr_request just used */
    return 0;
}

int skv__mgr_on_exec_start(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err)
{
    const skv_proto_exec_start *q = c->body;
    int rc = check_request(m, c, q, err);
    if (!rc)
        rc = check_session(m, c, q->session_id, err);
    if (rc)
        return rc;
    char kid[SKV__MGR_ID_MAX + 8];
    snprintf(kid, sizeof kid, "%s", q->kernel_id ? q->kernel_id : "");
    skv__mgr_agent *a = kernel_agent(m, q->session_id, kid, sizeof kid,
                                     c->now_ms, err);
    if (!a)
        return err && err->code ? err->code : SKV_ESTATE;
    struct skv__mgr_execs *t = table(m);
    skv__mgr_exec *x = t ? record(c, q, a, ++t->next) : NULL;
    if (!x)
        return skv__err(err, SKV_ENOMEM, "exec relay record");
    if ((rc = push(m, x, err)) != 0) {
        skv__free(x);
        return rc;
    }
    rc = forward(m, x, q, kid, err);
    if (rc)
        skv__mgr_exec_drop(m, x);
    else
        skv__log(SKV_LOG_INFO, "manager", "exec %s of %s into %s on %s as %s",
                 x->cid, c->who->user, kid, x->agent, x->aid);
    return rc;
}

/* ---- the agent's answer ------------------------------------------------------ */

static void started(skv_manager *m, skv__mgr_exec *x,
                    const skv_proto_exec_start_reply *r)
{
    x->started = true;
    x->in_credit = r->window;
    skv_proto_exec_start_reply fwd = *r;
    fwd.exec_id = x->cid;
    skv__mgr_reply(m, x->cconn, x->creq, SKV_PROTO_EXEC_START_REPLY, &fwd);
}

void skv__mgr_exec_on_reply(skv_manager *m, const skv__mgr_req *r,
                            const skv_proto_envelope *env, const void *body)
{
    skv__mgr_exec *x = by_request(m, r->conn, r->id);
    if (!x)
        return;
    if (env->type != SKV_PROTO_ERROR) {
        started(m, x, body);
        return;
    }
    const skv_proto_error *e = body;
    {
        char msg[600];
        snprintf(msg, sizeof msg, "agent '%s': %s", x->agent,
                 e->message ? e->message : skv_strerror(e->code));
        skv__mgr_error(m, x->cconn, x->creq, e->code, msg, "exec.start");
    }
    skv__mgr_exec_drop(m, x);
}

void skv__mgr_exec_expired(skv_manager *m, const skv__mgr_req *r)
{
    skv__mgr_exec *x = by_request(m, r->conn, r->id);
    if (!x)
        return;
    skv__mgr_error(m, x->cconn, x->creq, SKV_ETIMEDOUT, "the kernel's "
                       "agent did not answer exec.start", "exec.start");
    skv__mgr_exec_drop(m, x);
}

/* ---- a connection closed ------------------------------------------------------ */

static void agent_gone(skv_manager *m, skv__mgr_exec *x)
{
    char why[SKV__MGR_ID_MAX + 96];
    snprintf(why, sizeof why, "the connection to agent '%s', which ran the "
             "exec, was lost; the exec is over", x->agent);
    if (!x->started)
        skv__mgr_error(m, x->cconn, x->creq, SKV_EIO, why, "exec.start");
    else
        skv__mgr_exec_end_client(m, x, why);
    skv__mgr_exec_drop(m, x);
}

/* The client left: the exec is killed on its agent. One not answered yet
 * is killed too: the agent reads our frames in order, so the signal
 * follows the exec.start (and is dropped there when the start failed). */
static void client_gone(skv_manager *m, skv__mgr_exec *x)
{
    skv__log(SKV_LOG_INFO, "manager", "exec %s (%s on %s): its client left; "
             "killing it", x->cid, x->aid, x->agent);
    skv__mgr_exec_kill_agent_side(m, x);
    skv__mgr_exec_drop(m, x);
}

void skv__mgr_execs_conn_gone(skv_manager *m, uint64_t conn)
{
    struct skv__mgr_execs *t = m->execs;
    for (size_t i = t ? t->n : 0; i-- > 0;) {
        if (i >= t->n)
            continue;
        skv__mgr_exec *x = t->v[i];
        if (x->aconn == conn)
            agent_gone(m, x);
        else if (x->cconn == conn)
            client_gone(m, x);
    }
}
