/* The events of a running exec, relayed: from the client (stdin, output
 * credit, resize, signal) to the agent, and from the agent (output, stdin
 * credit, exit) to the client, each with the other hop's exec_id. The
 * manager counts the credit of both directions, so a client that sends
 * stdin beyond its window is stopped here (the agent's connection would
 * otherwise carry it) and output credit stays within the relay's cap.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_exec.h"

/* Every exec body starts with exec_id; the union gives one place to
 * rewrite it. */
typedef union exec_body {
    char *exec_id;
    skv_proto_exec_data d;
    skv_proto_exec_ack k;
    skv_proto_exec_resize r;
    skv_proto_exec_signal s;
    skv_proto_exec_exit x;
} exec_body;

static bool from_client(skv_proto_type t)
{
    return t == SKV_PROTO_EXEC_STDIN || t == SKV_PROTO_EXEC_OUTPUT_ACK ||
           t == SKV_PROTO_EXEC_RESIZE || t == SKV_PROTO_EXEC_SIGNAL;
}

/* A client over its stdin credit: the exec ends here and on the agent. */
static void over_credit(skv_manager *m, skv__mgr_exec *x)
{
    skv__log(SKV_LOG_WARN, "manager", "exec %s: stdin beyond the granted "
             "window; killing it", x->cid);
    skv__mgr_exec_kill_agent_side(m, x);
    skv__mgr_exec_end_client(m, x, "stdin data beyond the granted window");
    skv__mgr_exec_drop(m, x);
}

/* Output credit the client grants, as far as the relay's cap allows. */
static uint32_t grant(skv__mgr_exec *x, uint32_t bytes)
{
    uint64_t room = x->out_credit < SKV__MGR_EXEC_WINDOW_MAX
                        ? SKV__MGR_EXEC_WINDOW_MAX - x->out_credit : 0;
    uint32_t g = bytes < room ? bytes : (uint32_t)room;
    x->out_credit += g;
    return g;
}

static void client_event(skv_manager *m, skv__mgr_exec *x, skv_proto_type t,
                         exec_body *b)
{
    if (!x->started)  /* it has no credit and no process yet */
        return;
    if (t == SKV_PROTO_EXEC_STDIN) {
        if (b->d.data_len > x->in_credit) {
            over_credit(m, x);
            return;
        }
        x->in_credit -= b->d.data_len;
    } else if (t == SKV_PROTO_EXEC_OUTPUT_ACK &&
               (b->k.bytes = grant(x, b->k.bytes)) == 0) {
        return;
    }
    b->exec_id = x->aid;
    skv__mgr_exec_send(m, x->aconn, t, b);
}

static void agent_event(skv_manager *m, skv__mgr_exec *x, skv_proto_type t,
                        exec_body *b)
{
    if (t == SKV_PROTO_EXEC_OUTPUT) {
        x->out_credit = b->d.data_len < x->out_credit
                            ? x->out_credit - b->d.data_len : 0;
    } else if (t == SKV_PROTO_EXEC_STDIN_ACK) {
        x->in_credit += b->k.bytes;
    }
    b->exec_id = x->cid;
    skv__mgr_exec_send(m, x->cconn, t, b);
    if (t == SKV_PROTO_EXEC_EXIT) {
        skv__log(SKV_LOG_INFO, "manager", "exec %s ended (code %d, signal "
                 "%d)", x->cid, (int)b->x.exit_code, (int)b->x.signal);
        skv__mgr_exec_drop(m, x);
    }
}

/* Events have no reply: one for an exec the relay does not know (it ended
 * and the event crossed its exit, or it is another connection's) is
 * dropped. Clients find their execs by their own id on their connection,
 * agents by ours on theirs, so neither can steer another's exec. */
int skv__mgr_on_exec_event(skv_manager *m, const skv__mgr_call *c,
                           skv_error *err)
{
    SKV__UNUSED(err);
    exec_body b;
    memcpy(&b, c->body, skv_proto_type_size(c->type));
    bool client = from_client(c->type);
    skv__mgr_exec *x = client ? skv__mgr_exec_by_client(m, c->conn, b.exec_id)
                              : skv__mgr_exec_by_agent(m, c->conn, b.exec_id);
    if (!x) {
        skv__log(SKV_LOG_DEBUG, "manager", "%s for exec '%s', which is not "
                 "relayed on connection %llu; dropped",
                 skv_proto_type_name(c->type), b.exec_id ? b.exec_id : "",
                 (unsigned long long)c->conn);
        return 0;
    }
    if (client)
        client_event(m, x, c->type, &b);
    else
        agent_event(m, x, c->type, &b);
    return 0;
}
