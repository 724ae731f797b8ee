/* Messages from the agent to the manager: encoding, signing (events and the
 * registration request carry the agent's signature, with a fresh random
 * nonce each), and the kernel reports, exits and status changes.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

int skv__agent_emit(skv_agent *a, skv_proto_kind kind, uint64_t id,
                    skv_proto_type type, const void *body, int64_t now_ms,
                    skv_error *err)
{
    if (!a->connected)
        return skv__err(err, SKV_ESTATE, "agent: not connected to the "
                        "manager");
    skv_proto_credentials cred = {a->access_key, a->secret_key};
    void *frame = NULL;
    size_t len = 0;
    int rc = skv_proto_message_encode(&frame, &len, kind, id, type, body,
                                      now_ms,
                                      kind == SKV_PROTO_RESPONSE ? NULL : &cred,
                                      err);
    if (rc)
        return rc;
    rc = a->send(frame, len, a->payload);
    skv_free(frame);
    if (rc < 0)
        return skv__err(err, SKV_EIO, "agent: the connection to the manager "
                        "refused a %s message", skv_proto_type_name(type));
    return 0;
}

int skv__agent_reply_error(skv_agent *a, uint64_t id, int code,
                           const char *message, const char *request_type,
                           int64_t now_ms)
{
    if (!a->connected)
        return SKV_ESTATE;
    void *frame = NULL;
    size_t len = 0;
    int rc = skv_proto_error_encode(&frame, &len, id, code, message,
                                    request_type, now_ms, NULL, NULL);
    if (rc == 0) {
        rc = a->send(frame, len, a->payload) < 0 ? SKV_EIO : 0;
        skv_free(frame);
    }
    return rc;
}

skv_proto_kernel_report *skv__agent_reports(const skv_agent *a, size_t *n,
                                            skv_error *err)
{
    skv_proto_kernel_report *r = skv__calloc(a->nk + 1, sizeof(*r));
    if (!r) {
        skv__err(err, SKV_ENOMEM, "agent: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < a->nk; i++) {
        skv__agent_kernel *k = a->k[i];
        r[i].session_id = k->req.session_id;
        r[i].kernel_id = k->req.kernel_id;
        r[i].status = k->exited ? "exited" : "running";
        r[i].alloc = k->req.alloc;
        r[i].n_alloc = k->req.n_alloc;
    }
    *n = a->nk;
    return r;
}

static const char *exit_reason(const skv__agent_kernel *k, char *buf,
                               size_t n)
{
    if (k->st.state == SKV_CONTAINER_LOST)
        return "container lost (its supervisor vanished)";
    if (k->st.oom_killed)
        return "oom-killed";
    if (k->st.signal)
        snprintf(buf, n, "killed by signal %d (%s)", k->st.signal,
                 strsignal(k->st.signal));
    else
        snprintf(buf, n, "exited with code %d", k->st.exit_code);
    return buf;
}

/* The end as the runtime saw it, then what the logs lost ("no space left
 * for logs on ..."): the exit code stays the command's own. A note too
 * long for the reason (a very long run_dir) is only in the agent's log:
 * a reason cut inside a multi-byte character would not be valid UTF-8. */
static const char *exit_reason_note(skv_agent *a, const skv__agent_kernel *k,
                                    char *buf, size_t n)
{
    char base[128], *note = NULL;
    const char *r = exit_reason(k, base, sizeof(base));
    if (skv_runtime_log_note(a->rt, k->req.kernel_id, &note, NULL) != 0 ||
        !note) {
        snprintf(buf, n, "%s", r);
        return buf;
    }
    skv__log(SKV_LOG_WARN, "agent", "kernel %s: %s", k->req.kernel_id, note);
    if ((size_t)snprintf(buf, n, "%s; %s", r, note) >= n)
        snprintf(buf, n, "%s; its logs are incomplete (see the agent's log)",
                 r);
    skv_free(note);
    return buf;
}

int skv__agent_send_exit(skv_agent *a, skv__agent_kernel *k,
                         int64_t now_ms, skv_error *err)
{
    char reason[1024];
    skv_proto_kernel_exit m;
    memset(&m, 0, sizeof(m));
    m.agent_id = a->agent_id;
    m.session_id = k->req.session_id;
    m.kernel_id = k->req.kernel_id;
    /* A lost container has no status: report it as failed. */
    m.exit_code = k->st.state == SKV_CONTAINER_LOST ? -1 : k->st.exit_code;
    m.signal = k->st.signal;
    m.oom = k->st.oom_killed ? 1 : 0;
    m.finished_ms = k->finished_ms;
    m.reason = (char *)exit_reason_note(a, k, reason, sizeof(reason));
    int rc = skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_KERNEL_EXIT, &m,
                             now_ms, err);
    if (rc == 0)
        k->exit_sent = true;
    return rc;
}

int skv__agent_send_status(skv_agent *a, const skv__agent_kernel *k,
                           const char *status, const char *reason,
                           int64_t now_ms, skv_error *err)
{
    skv_proto_kernel_status m;
    memset(&m, 0, sizeof(m));
    m.agent_id = a->agent_id;
    m.session_id = k->req.session_id;
    m.kernel_id = k->req.kernel_id;
    m.status = (char *)status;
    m.reason = (char *)reason;
    m.container_id = k->req.kernel_id;
    return skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_KERNEL_STATUS, &m,
                           now_ms, err);
}
