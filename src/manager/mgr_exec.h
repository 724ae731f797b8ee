/* The manager's exec relay (mgr_exec.c, mgr_exec_relay.c): a client's
 * exec.start for a session goes to the agent that holds the kernel, and
 * the exec's events are relayed both ways with the exec_id rewritten on
 * each hop. Per exec the manager keeps one small record and no data: the
 * credit the client grants is passed on (capped per exec), so at most one
 * window per direction is in flight, in the hosts' write queues.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MGR_EXEC_H
#define SKV_MGR_EXEC_H

#include "mgr_int.h"

/* Output credit the manager lets a client hand the agent at once: what a
 * client grants beyond it is not passed on (a client that acknowledges
 * output it has not read cannot make the manager queue more). */
#define SKV__MGR_EXEC_WINDOW_MAX (4u * 1024 * 1024)
#define SKV__MGR_EXEC_WINDOW_DEFAULT (256u * 1024)
/* Execs one client connection may run at once. */
#define SKV__MGR_EXEC_PER_CONN 64
#define SKV__MGR_EXEC_ID_MAX 65

typedef struct skv__mgr_exec {
    uint64_t cconn;                     /* the client's connection */
    char cid[SKV__MGR_EXEC_ID_MAX];     /* the client's exec_id */
    uint64_t creq;                      /* its exec.start request id */
    uint64_t aconn;                     /* the agent's connection */
    char aid[32];                       /* the agent-side exec_id */
    uint64_t areq;                      /* our exec.start to the agent */
    char agent[SKV__MGR_ID_MAX];
    char sid[SKV__MGR_ID_MAX];
    bool started;                       /* the agent's reply came */
    uint64_t out_credit;                /* output the agent may still send */
    uint64_t in_credit;                 /* stdin the client may still send */
} skv__mgr_exec;

struct skv__mgr_execs {
    skv__mgr_exec **v;
    size_t n, cap;
    uint64_t next;                      /* agent-side ids "m<next>" */
};

/* mgr_exec.c */
skv__mgr_exec *skv__mgr_exec_by_client(skv_manager *m, uint64_t conn,
                                       const char *cid);
skv__mgr_exec *skv__mgr_exec_by_agent(skv_manager *m, uint64_t conn,
                                      const char *aid);
void skv__mgr_exec_drop(skv_manager *m, skv__mgr_exec *x);
/* Send one event body of `type` to conn (unsigned, like every frame the
 * manager sends). */
void skv__mgr_exec_send(skv_manager *m, uint64_t conn, skv_proto_type type,
                        const void *body);
/* End the agent side of x (SIGKILL, and credit to drain what is left, so
 * the agent can finish it) without telling the client. */
void skv__mgr_exec_kill_agent_side(skv_manager *m, const skv__mgr_exec *x);
/* Tell the client its exec ended with `reason` (exec.exit, SIGKILL). */
void skv__mgr_exec_end_client(skv_manager *m, const skv__mgr_exec *x,
                              const char *reason);

#endif
