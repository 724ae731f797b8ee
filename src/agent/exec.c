/* exec into a kernel this agent holds: exec.start (checked, then run with
 * skv_runtime_exec), the events that steer a running exec (stdin, output
 * credit, resize, signal), and every way an exec ends. The data path is
 * in exec_io.c.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "agent_internal.h"

skv__agent_exec *skv__agent_exec_find(const skv_agent *a, const char *id)
{
    for (size_t i = 0; id && i < a->nex; i++)
        if (strcmp(a->ex[i]->id, id) == 0)
            return a->ex[i];
    return NULL;
}

static void exec_free(skv__agent_exec *e)
{
    skv_exec_free(e->x);
    skv__free(e->in);
    skv__free(e->id);
    skv__free(e->kernel_id);
    skv__free(e);
}

static void send_exit(skv_agent *a, skv__agent_exec *e, int64_t now_ms)
{
    skv_proto_exec_exit m;
    memset(&m, 0, sizeof(m));
    m.exec_id = e->id;
    m.reason = (char *)e->end_reason;
    if (e->exited)
        skv_exec_wait(e->x, 0, &m.exit_code, &m.signal, NULL);
    else
        m.signal = SIGKILL; /* ended by sokovan: skv_exec_free kills it */
    skv_error err = SKV_ERROR_INIT;
    if (a->connected &&
        skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_EXIT, &m,
                        now_ms, &err) < 0)
        skv__log(SKV_LOG_WARN, "agent", "exec %s: %s", e->id, err.message);
}

void skv__agent_exec_end(skv_agent *a, skv__agent_exec *e, bool send,
                         int64_t now_ms)
{
    for (int i = 0; i < 4; i++)
        if (e->fd[i] >= 0 && e->watched[i] && a->watch)
            a->watch(e->fd[i], 0, a->watch_payload);
    if (send)
        send_exit(a, e, now_ms);
    size_t i = 0;
    while (i < a->nex && a->ex[i] != e)
        i++;
    if (i < a->nex)
        a->ex[i] = a->ex[--a->nex];
    skv__log(SKV_LOG_DEBUG, "agent", "exec %s ended%s%s", e->id,
             e->end_reason ? ": " : "", e->end_reason ? e->end_reason : "");
    exec_free(e);
}

void skv__agent_execs_end(skv_agent *a, const char *kernel_id,
                          const char *reason, bool send, int64_t now_ms)
{
    for (size_t i = a->nex; i-- > 0;) {
        skv__agent_exec *e = a->ex[i];
        if (kernel_id && strcmp(e->kernel_id, kernel_id) != 0)
            continue;
        e->end_reason = reason;
        skv__agent_exec_end(a, e, send, now_ms);
    }
}

void skv__agent_execs_check(skv_agent *a, int64_t now_ms)
{
    for (size_t i = a->nex; i-- > 0;) {
        if (i >= a->nex)
            continue;
        skv__agent_exec *e = a->ex[i];
        const skv__agent_kernel *k = skv__agent_kernel_find(a, e->kernel_id);
        if (!k || k->exited || k->destroying) {
            e->end_reason = "the kernel ended";
            skv__agent_exec_end(a, e, true, now_ms);
        }
    }
}

/* ---- exec.start ---------------------------------------------------------- */

static bool id_ok(const char *id)
{
    size_t n = strlen(id);
    if (n < 1 || n > 64)
        return false;
    for (const char *p = id; *p; p++)
        if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
              *p == '-'))
            return false;
    return true;
}

/* An environment variable name: [A-Za-z_][A-Za-z0-9_]*. */
static bool env_name_ok(const char *k)
{
    if (!k || !*k || (*k >= '0' && *k <= '9'))
        return false;
    for (; *k; k++)
        if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
              (*k >= '0' && *k <= '9') || *k == '_'))
            return false;
    return true;
}

/* The request's fields beyond what the schema checks; SKV_E* and a
 * message for the reply. */
static int check_start(const skv_agent *a, const skv_proto_exec_start *m,
                       char *msg, size_t n)
{
    if (!a->watch)
        return snprintf(msg, n, "this agent's host cannot stream execs"),
               SKV_ENOTSUP;
    if (!id_ok(m->exec_id))
        return snprintf(msg, n, "exec_id must be 1..64 of [A-Za-z0-9_.-]"),
               SKV_EINVAL;
    if (skv__agent_exec_find(a, m->exec_id))
        return snprintf(msg, n, "exec '%s' already exists", m->exec_id),
               SKV_EEXIST;
    if (m->n_argv == 0 || !m->argv[0][0])
        return snprintf(msg, n, "argv is empty"), SKV_EINVAL;
    for (size_t i = 0; i < m->n_env; i++)
        if (!env_name_ok(m->env[i].key))
            return snprintf(msg, n, "env name '%.64s' is not "
                            "[A-Za-z_][A-Za-z0-9_]*", m->env[i].key),
                   SKV_EINVAL;
    if (m->rows > 65535 || m->cols > 65535)
        return snprintf(msg, n, "window size %ux%u is out of range",
                        m->rows, m->cols), SKV_EINVAL;
    if (m->window > SKV__AGENT_EXEC_WINDOW_MAX)
        return snprintf(msg, n, "window %u is above %u", m->window,
                        SKV__AGENT_EXEC_WINDOW_MAX), SKV_EINVAL;
    if (a->nex >= SKV__AGENT_EXEC_MAX)
        return snprintf(msg, n, "%d execs run on this agent already",
                        SKV__AGENT_EXEC_MAX), SKV_ENOSPC;
    return 0;
}

/* The kernel to exec into: held here, of that session, running. */
static int check_kernel(const skv_agent *a, const skv_proto_exec_start *m,
                        char *msg, size_t n)
{
    const char *kid = m->kernel_id;
    const skv__agent_kernel *k = kid ? skv__agent_kernel_find(a, kid) : NULL;
    if (!kid)
        return snprintf(msg, n, "kernel_id is required"), SKV_EINVAL;
    if (!k && skv__agent_job_find(a, kid))
        return snprintf(msg, n, "kernel '%s' is still being created", kid),
               SKV_ESTATE;
    if (!k || strcmp(k->req.session_id, m->session_id) != 0)
        return snprintf(msg, n, "kernel '%s' of session '%s' is not on this "
                        "agent", kid, m->session_id), SKV_ENOENT;
    if (k->exited || k->destroying)
        return snprintf(msg, n, "kernel '%s' has ended", kid), SKV_ESTATE;
    return 0;
}

/* "NAME=value" strings of the request's env (pointers into buf). */
static char **env_strings(const skv_proto_exec_start *m)
{
    char **v = skv__calloc(m->n_env + 1, sizeof(char *));
    for (size_t i = 0; v && i < m->n_env; i++) {
        v[i] = skv__asprintf("%s=%s", m->env[i].key,
                             m->env[i].value ? m->env[i].value : "");
        if (!v[i]) {
            for (size_t j = 0; j < i; j++)
                skv__free(v[j]);
            skv__free(v);
            return NULL;
        }
    }
    return v;
}

static int run(skv_agent *a, const skv_proto_exec_start *m, skv_exec **x,
               skv_error *err)
{
    char **env = env_strings(m);
    if (!env)
        return skv__err(err, SKV_ENOMEM, "exec environment");
    skv_exec_options o = SKV_EXEC_OPTIONS_INIT;
    o.argv = (const char *const *)m->argv;
    o.argc = m->n_argv;
    o.env = (const char *const *)env;
    o.n_env = m->n_env;
    o.cwd = m->workdir;
    o.tty = m->tty != 0;
    o.rows = (uint16_t)m->rows;
    o.cols = (uint16_t)m->cols;
    int rc = skv_runtime_exec(a->rt, m->kernel_id, &o, x, err);
    for (size_t i = 0; i < m->n_env; i++)
        skv__free(env[i]);
    skv__free(env);
    return rc;
}

static skv__agent_exec *exec_new(const skv_proto_exec_start *m, skv_exec *x)
{
    skv__agent_exec *e = skv__calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->x = x;
    e->tty = m->tty != 0;
    e->id = skv__strdup(m->exec_id);
    e->kernel_id = skv__strdup(m->kernel_id);
    e->in = skv__malloc(SKV__AGENT_EXEC_WINDOW);
    static const skv_exec_stream s[4] = {SKV_EXEC_STDIN, SKV_EXEC_STDOUT,
                                         SKV_EXEC_STDERR, SKV_EXEC_PIDFD};
    for (int i = 0; i < 4; i++)
        e->fd[i] = skv_exec_fd(x, s[i]);
    /* A terminal is one descriptor both ways: watched as stdout only. */
    if (e->tty)
        e->fd[0] = -1;
    e->out_eof[2] = e->fd[2] < 0;
    e->in_credit = SKV__AGENT_EXEC_WINDOW;
    e->out_credit = m->window ? m->window : SKV__AGENT_EXEC_WINDOW;
    if (!e->id || !e->kernel_id || !e->in) {
        e->x = NULL; /* the caller frees x */
        exec_free(e);
        return NULL;
    }
    return e;
}

static int add(skv_agent *a, skv__agent_exec *e, skv_error *err)
{
    if (a->nex == a->capex) {
        size_t cap = a->capex ? a->capex * 2 : 8;
        void *p = skv__reallocarray(a->ex, cap, sizeof(*a->ex));
        if (!p)
            return skv__err(err, SKV_ENOMEM, "exec table");
        a->ex = p;
        a->capex = cap;
    }
    a->ex[a->nex++] = e;
    return 0;
}

static int reply(skv_agent *a, uint64_t req, const skv__agent_exec *e,
                 int64_t now_ms, skv_error *err)
{
    skv_proto_exec_start_reply r;
    memset(&r, 0, sizeof(r));
    r.exec_id = e->id;
    r.pid = skv_exec_pid(e->x);
    r.window = SKV__AGENT_EXEC_WINDOW;
    return skv__agent_emit(a, SKV_PROTO_RESPONSE, req,
                           SKV_PROTO_EXEC_START_REPLY, &r, now_ms, err);
}

/* Run it and take it into the table; the reply goes out before any
 * output (the pump runs after). */
static int start(skv_agent *a, const skv_proto_envelope *env,
                 const skv_proto_exec_start *m, int64_t now_ms,
                 skv_error *err)
{
    skv_exec *x = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = run(a, m, &x, &e);
    skv__agent_exec *ex = rc == 0 ? exec_new(m, x) : NULL;
    if (rc == 0 && !ex)
        rc = skv__err(&e, SKV_ENOMEM, "exec");
    if (rc == 0 && (rc = add(a, ex, &e)) < 0) {
        ex->x = NULL;
        exec_free(ex);
    }
    if (rc < 0) {
        skv_exec_free(x);
        return skv__agent_reply_error(a, env->request_id, rc, e.message,
                                      env->type_name, now_ms);
    }
    rc = reply(a, env->request_id, ex, now_ms, err);
    skv__agent_exec_pump(a, ex, now_ms);
    return rc;
}

int skv__agent_on_exec_start(skv_agent *a, const skv_proto_envelope *env,
                             int64_t now_ms, skv_error *err)
{
    skv_proto_exec_start m;
    memset(&m, 0, sizeof(m));
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_body_decode(&m, env->type, env->body, env->body_len,
                                   &e);
    char msg[256] = "";
    if (rc == 0 && (rc = check_start(a, &m, msg, sizeof(msg))) == 0)
        rc = check_kernel(a, &m, msg, sizeof(msg));
    if (rc < 0)
        rc = skv__agent_reply_error(a, env->request_id, rc,
                                    msg[0] ? msg : e.message, env->type_name,
                                    now_ms);
    else
        rc = start(a, env, &m, now_ms, err);
    skv_proto_body_free(env->type, &m);
    return rc;
}

/* ---- the steering events -------------------------------------------------- */

static void on_resize(skv__agent_exec *e, const skv_proto_exec_resize *m)
{
    skv_error err = SKV_ERROR_INIT;
    if (skv_exec_resize(e->x, m->rows, m->cols, &err) < 0)
        skv__log(SKV_LOG_WARN, "agent", "exec %s: resize: %s", e->id,
                 err.message);
}

static void on_signal(skv__agent_exec *e, const skv_proto_exec_signal *m)
{
    skv_error err = SKV_ERROR_INIT;
    if (!e->exited && skv_exec_signal(e->x, m->signal, &err) < 0)
        skv__log(SKV_LOG_WARN, "agent", "exec %s: %s", e->id, err.message);
}

/* Credit beyond the maximum window is the sender's error: cap it. */
static void on_ack(skv__agent_exec *e, const skv_proto_exec_ack *m)
{
    e->out_credit += m->bytes;
    if (e->out_credit > SKV__AGENT_EXEC_WINDOW_MAX)
        e->out_credit = SKV__AGENT_EXEC_WINDOW_MAX;
}

static void on_stdin(skv__agent_exec *e, const skv_proto_exec_data *m)
{
    if (m->data_len > e->in_credit || (e->in_eof && m->data_len)) {
        e->end_reason = e->in_eof ? "stdin data after its end"
                                  : "stdin data beyond the granted window";
        return;
    }
    if (m->data_len && e->in_len + m->data_len > SKV__AGENT_EXEC_WINDOW) {
        memmove(e->in, e->in + e->in_off, e->in_len - e->in_off);
        e->in_len -= e->in_off;
        e->in_off = 0;
    }
    if (m->data_len)
        memcpy(e->in + e->in_len, m->data, m->data_len);
    e->in_len += m->data_len;
    e->in_credit -= m->data_len;
    e->in_eof = e->in_eof || m->eof;
}

/* The steering events' bodies; exec_id is the first member of each. */
typedef union steer_body {
    skv_proto_exec_data d;
    skv_proto_exec_ack k;
    skv_proto_exec_resize r;
    skv_proto_exec_signal s;
} steer_body;

static void steer(skv__agent_exec *e, skv_proto_type t, const steer_body *u)
{
    if (t == SKV_PROTO_EXEC_STDIN)
        on_stdin(e, &u->d);
    else if (t == SKV_PROTO_EXEC_OUTPUT_ACK)
        on_ack(e, &u->k);
    else if (t == SKV_PROTO_EXEC_RESIZE)
        on_resize(e, &u->r);
    else
        on_signal(e, &u->s);
}

/* Events have no reply: a bad one is logged and dropped, and one for an
 * exec that has just ended is normal (it crossed exec.exit). */
int skv__agent_on_exec_event(skv_agent *a, const skv_proto_envelope *env,
                             int64_t now_ms, skv_error *err)
{
    SKV__UNUSED(err);
    steer_body u;
    memset(&u, 0, sizeof(u));
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_body_decode(&u, env->type, env->body, env->body_len,
                              &e) < 0) {
        skv__log(SKV_LOG_WARN, "agent", "dropping a bad %s: %s",
                 env->type_name, e.message);
        return 0;
    }
    skv__agent_exec *x = skv__agent_exec_find(a, u.d.exec_id);
    if (!x)
        skv__log(SKV_LOG_DEBUG, "agent", "%s for exec '%s', which is not "
                 "running", env->type_name, u.d.exec_id);
    else
        steer(x, env->type, &u);
    skv_proto_body_free(env->type, &u);
    if (x && x->end_reason)
        skv__agent_exec_end(a, x, true, now_ms);
    else if (x)
        skv__agent_exec_pump(a, x, now_ms);
    return 0;
}
