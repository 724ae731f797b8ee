/* Requests an agent does not answer while its connection stays up (a hung
 * or broken agent; a closed connection is handled at once, see
 * skv__mgr_reqs_conn_gone). Each request is stamped by the first sweep
 * that sees it (sweeps run once a second) and expires after its kind's
 * time: an unanswered kernel.create ends the kernel and its session in
 * ERROR with the reason (and a kernel.destroy follows, for a container
 * that starts late); an unanswered kernel.destroy is sent again; a user
 * waiting for logs gets SKV_ETIMEDOUT.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include "mgr_int.h"

#define CREATE_TIMEOUT_MS 120000
#define DESTROY_TIMEOUT_MS 60000
#define LOGS_TIMEOUT_MS 30000

static int64_t timeout_of(skv__mgr_req_kind kind)
{
    switch (kind) {
    case SKV__REQ_CREATE: return CREATE_TIMEOUT_MS;
    case SKV__REQ_DESTROY: return DESTROY_TIMEOUT_MS;
    case SKV__REQ_LOGS: return LOGS_TIMEOUT_MS;
    case SKV__REQ_EXEC: return LOGS_TIMEOUT_MS;
    }
    return CREATE_TIMEOUT_MS;
}

static void expired(skv_manager *m, const skv__mgr_req *r, int64_t now_ms)
{
    char why[160];
    if (r->kind == SKV__REQ_EXEC) {
        skv__mgr_exec_expired(m, r);
        return;
    }
    snprintf(why, sizeof why, "the agent did not answer %s within %lld s",
             r->kind == SKV__REQ_CREATE    ? "kernel.create"
             : r->kind == SKV__REQ_DESTROY ? "kernel.destroy"
                                           : "kernel.logs",
             (long long)(timeout_of(r->kind) / 1000));
    skv__log(SKV_LOG_WARN, "manager", "kernel %s: %s", r->kernel_id, why);
    if (r->kind == SKV__REQ_LOGS) {
        skv__mgr_error(m, r->user_conn, r->user_req, SKV_ETIMEDOUT, why,
                       "session.logs");
    } else if (r->kind == SKV__REQ_CREATE) {
        skv_proto_error e = {SKV_ETIMEDOUT, why, "kernel.create"};
        skv__mgr_create_failed(m, r, &e, now_ms);
        skv__mgr_send_destroy(m, r->kernel_id, "kernel.create timed out");
    } else {
        skv__mgr_send_destroy(m, r->kernel_id, "kernel.destroy again");
    }
}

void skv__mgr_reqs_expire(skv_manager *m, int64_t now_ms)
{
    size_t i = 0;
    while (i < m->n_reqs) {
        skv__mgr_req *r = &m->reqs[i];
        if (!r->seen_ms)
            r->seen_ms = now_ms;
        if (now_ms - r->seen_ms < timeout_of(r->kind)) {
            i++;
            continue;
        }
        /* Out of the table first: the actions add requests (destroys),
         * which may move it; new ones are unstamped, so not expired now. */
        skv__mgr_req copy = *r;
        m->reqs[i] = m->reqs[--m->n_reqs];
        expired(m, &copy, now_ms);
    }
}
