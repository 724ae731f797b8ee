/* The stream of one `sokovan exec`: exec.start, then one poll loop over
 * the manager's connection, stdin (with -i, while stdin credit lasts) and
 * the signal pipe, until exec.exit. Output is acknowledged once written,
 * so the remote command never runs more than one window ahead of the
 * local terminal; the local terminal is restored on every way out.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec.h"

#define EXEC_ID "x1"

typedef struct stream {
    cli *c;
    const cli_exec *x;
    int sigfd;
    uint64_t in_credit;         /* stdin bytes we may send */
    int in_open;                /* stdin still forwarded */
    int done;
    int32_t code, sig;
    char reason[512];
} stream;

static int send_event(stream *s, skv_proto_type t, const void *body)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_client_send(s->c->client, SKV_PROTO_EVENT, t, body, NULL,
                             &e);
    return rc ? cli_fail_err("exec: sending to the manager", rc, &e) : 0;
}

/* ---- start -------------------------------------------------------------- */

static void fill_start(const stream *s, skv_proto_exec_start *q)
{
    memset(q, 0, sizeof *q);
    q->session_id = (char *)s->x->session_id;
    q->kernel_id = (char *)s->x->kernel_id;
    q->exec_id = EXEC_ID;
    q->argv = s->x->argv;
    q->n_argv = s->x->argc;
    q->tty = s->x->tty ? 1 : 0;
    q->window = CLI_EXEC_WINDOW;
    if (s->x->tty && !cli_term_size(&q->rows, &q->cols))
        q->rows = q->cols = 0;  /* the agent's 24x80 */
}

/* The answer to our exec.start (events for no exec yet are skipped). */
static int await_start(stream *s, uint64_t id)
{
    int wait_ms = s->c->timeout_ms ? s->c->timeout_ms
                                   : CLI_DEFAULT_TIMEOUT_MS;
    for (int64_t end = cli_now_ms() + wait_ms;;) {
        skv_client_message m;
        skv_error e = SKV_ERROR_INIT;
        int left = (int)(end - cli_now_ms());
        int rc = skv_client_recv(s->c->client, left > 0 ? left : 0, &m, &e);
        if (rc < 0)
            return cli_fail_err("exec", rc, &e);
        /* 0 also when a signal cut the wait short: its byte waits in the
         * signal pipe for the stream loop; only the deadline ends this. */
        if (rc == 0 && left > 0)
            continue;
        if (rc == 0)
            return cli_fail("exec: no answer from the manager within %d ms",
                            wait_ms);
        int ours = m.kind == SKV_PROTO_RESPONSE && m.request_id == id;
        if (ours && m.type == SKV_PROTO_ERROR) {
            const skv_proto_error *pe = m.body;
            e.code = pe->code;
            snprintf(e.message, sizeof e.message, "%s",
                     pe->message ? pe->message : "");
            rc = cli_fail_err("exec", pe->code, &e);
        } else if (ours && m.type == SKV_PROTO_EXEC_START_REPLY) {
            s->in_credit = ((skv_proto_exec_start_reply *)m.body)->window;
            rc = 0;
        } else if (ours) {
            rc = cli_fail("exec: the manager answered exec.start with '%s'",
                          skv_proto_type_name(m.type));
        }
        skv_client_message_free(&m);
        if (ours)
            return rc;
    }
}

static int start(stream *s)
{
    skv_proto_exec_start q;
    fill_start(s, &q);
    skv_error e = SKV_ERROR_INIT;
    uint64_t id = 0;
    int rc = skv_client_send(s->c->client, SKV_PROTO_REQUEST,
                             SKV_PROTO_EXEC_START, &q, &id, &e);
    if (rc)
        return cli_fail_err("exec", rc, &e);
    return await_start(s, id);
}

/* ---- from the manager ------------------------------------------------------- */

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return cli_fail("exec: writing the command's output: %s",
                            strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int on_output(stream *s, const skv_proto_exec_data *d)
{
    int fd = d->stream && strcmp(d->stream, "stderr") == 0 ? 2 : 1;
    int rc = write_all(fd, d->data, d->data_len);
    if (rc || !d->data_len)
        return rc;
    skv_proto_exec_ack k = {EXEC_ID, (uint32_t)d->data_len};
    return send_event(s, SKV_PROTO_EXEC_OUTPUT_ACK, &k);
}

static void on_exit_msg(stream *s, const skv_proto_exec_exit *x)
{
    s->done = 1;
    s->code = x->exit_code;
    s->sig = x->signal;
    snprintf(s->reason, sizeof s->reason, "%s", x->reason ? x->reason : "");
}

static int on_message(stream *s, const skv_client_message *m)
{
    const char *id = m->body ? *(char *const *)m->body : NULL;
    if (m->kind != SKV_PROTO_EVENT || !id || strcmp(id, EXEC_ID) != 0)
        return 0;   /* not this exec's: a stray or late message */
    if (m->type == SKV_PROTO_EXEC_OUTPUT)
        return on_output(s, m->body);
    if (m->type == SKV_PROTO_EXEC_STDIN_ACK)
        s->in_credit += ((skv_proto_exec_ack *)m->body)->bytes;
    else if (m->type == SKV_PROTO_EXEC_EXIT)
        on_exit_msg(s, m->body);
    return 0;
}

static int drain(stream *s)
{
    int rc = 0;
    while (!rc && !s->done) {
        skv_client_message m;
        skv_error e = SKV_ERROR_INIT;
        int got = skv_client_recv(s->c->client, 0, &m, &e);
        if (got < 0)
            return cli_fail_err("exec: the connection to the manager", got,
                                &e);
        if (got == 0)
            return 0;
        rc = on_message(s, &m);
        skv_client_message_free(&m);
    }
    return rc;
}

/* ---- to the manager ----------------------------------------------------------- */

static int send_eof(stream *s)
{
    s->in_open = 0;
    skv_proto_exec_data d = {EXEC_ID, NULL, NULL, 0, 1};
    return send_event(s, SKV_PROTO_EXEC_STDIN, &d);
}

static int on_stdin(stream *s)
{
    uint8_t buf[CLI_EXEC_CHUNK];
    size_t want = s->in_credit < sizeof buf ? (size_t)s->in_credit
                                            : sizeof buf;
    ssize_t n = read(STDIN_FILENO, buf, want);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (n <= 0)     /* end of input, or an input that broke: the same */
        return send_eof(s);
    s->in_credit -= (uint64_t)n;
    skv_proto_exec_data d = {EXEC_ID, NULL, buf, (size_t)n, 0};
    return send_event(s, SKV_PROTO_EXEC_STDIN, &d);
}

/* SIGWINCH: the new size; the others are the command's (a closed
 * terminal, SIGHUP, also ends our input). */
static int on_signal(stream *s, int sig)
{
    if (sig == SIGWINCH) {
        skv_proto_exec_resize r = {EXEC_ID, 0, 0};
        if (!s->x->tty || !cli_term_size(&r.rows, &r.cols))
            return 0;
        return send_event(s, SKV_PROTO_EXEC_RESIZE, &r);
    }
    if (sig == SIGHUP)
        s->in_open = 0;
    skv_proto_exec_signal m = {EXEC_ID, sig};
    return send_event(s, SKV_PROTO_EXEC_SIGNAL, &m);
}

static int on_signals(stream *s)
{
    unsigned char b[16];
    ssize_t n = read(s->sigfd, b, sizeof b);
    int rc = 0;
    for (ssize_t i = 0; !rc && i < n; i++)
        rc = on_signal(s, b[i]);
    return rc;
}

/* ---- the loop ------------------------------------------------------------------ */

static int step(stream *s)
{
    /* Frames may wait in the client's buffer already (they came in one
     * read with the start reply): poll would not wake for them. */
    int rc = drain(s);
    if (rc || s->done)
        return rc;
    struct pollfd p[3] = {{skv_client_fd(s->c->client), POLLIN, 0},
                          {s->sigfd, POLLIN, 0},
                          {STDIN_FILENO, POLLIN, 0}};
    nfds_t n = s->in_open && s->in_credit ? 3 : 2;
    if (poll(p, n, -1) < 0)
        return errno == EINTR ? 0 : cli_fail("exec: poll: %s",
                                             strerror(errno));
    if (p[1].revents)
        rc = on_signals(s);
    if (!rc && n == 3 && p[2].revents)
        rc = on_stdin(s);
    return rc ? rc : drain(s);
}

static int status_of(const stream *s)
{
    if (s->reason[0])
        cli_fail("exec: %s", s->reason);
    if (s->sig)
        return 128 + (s->sig & 127);
    return s->code & 255;
}

static int stream_run(stream *s)
{
    int rc = start(s);
    if (rc)
        return rc;
    /* Without -i the command's stdin is closed at once (a tty keeps
     * it: ^D would end an interactive shell). */
    s->in_open = s->x->interactive;
    if (!s->x->interactive && !s->x->tty && (rc = send_eof(s)) != 0)
        return rc;
    if (s->x->tty && cli_term_raw() < 0)
        return cli_fail("exec: cannot put the terminal in raw mode: %s",
                        strerror(errno));
    while (!rc && !s->done)
        rc = step(s);
    cli_term_restore();
    return rc ? rc : status_of(s);
}

int cli_exec_run(cli *c, const cli_exec *x)
{
    stream s;
    memset(&s, 0, sizeof s);
    s.c = c;
    s.x = x;
    s.sigfd = cli_term_signals();
    if (s.sigfd < 0)
        return cli_fail("exec: signal pipe: %s", strerror(errno));
    int rc = cli_connect(c);
    if (!rc)
        rc = stream_run(&s);
    cli_term_restore();
    cli_term_signals_close();
    return rc;
}
