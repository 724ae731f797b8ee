/* Following a session (run --wait) and copying kernel output (logs).
 * Output is pulled with session.logs from byte offsets, so nothing is lost
 * or repeated across polls; polls back off from 20 ms to 500 ms while
 * nothing changes.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "cli.h"

#define BACKOFF_MIN_MS 20
#define BACKOFF_MAX_MS 500
#define DRAIN_IDLE_ROUNDS 10    /* no-progress polls after the end (~3 s) */
#define PUMP_MAX_CHUNKS 4096    /* per stream per poll: keep polling status */

typedef struct pump {
    const char *stream;         /* "stdout" / "stderr" */
    FILE *out;
    uint64_t offset;
    int eof;
    int failed;                 /* last fetch failed */
    skv_error err;
} pump;

/* Fetch what is there from p->offset; *got says how many bytes came. */
static int pump_once(cli *c, const char *sid, const char *kernel, pump *p,
                     size_t *got)
{
    skv_proto_logs_request req = {(char *)sid, (char *)kernel, p->offset, 0,
                                  (char *)p->stream};
    skv_proto_logs_reply r;
    *got = 0;
    int rc = cli_call_retry(c, SKV_PROTO_SESSION_LOGS, &req, &r, &p->err);
    p->failed = rc != 0;
    if (rc)
        return rc;
    if (r.data_len) {
        fwrite(r.data, 1, r.data_len, p->out);
        fflush(p->out);
    }
    *got = r.data_len;
    /* A server that reports no advance must not make us spin or repeat. */
    if (r.next_offset > p->offset)
        p->offset = r.next_offset;
    else
        p->offset += r.data_len;
    p->eof = r.eof;
    skv_proto_body_free(SKV_PROTO_LOGS_REPLY, &r);
    return 0;
}

/* Everything available now; returns 1 when any byte came. */
static int pump_all(cli *c, const char *sid, const char *kernel, pump *p)
{
    int progress = 0;
    for (int i = 0; i < PUMP_MAX_CHUNKS && !p->eof; i++) {
        size_t got;
        if (pump_once(c, sid, kernel, p, &got) || got == 0)
            break;
        progress = 1;
    }
    return progress;
}

static int next_backoff(int backoff, int progress)
{
    if (progress)
        return BACKOFF_MIN_MS;
    return backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
}

/* logs --follow while the kernel's agent is away (the manager answers
 * SKV_ESTATE, e.g. agents reconnecting after a manager restart): keep
 * following for up to CLI_RETRY_MS, saying why once. 0: give up. */
static int follow_through(int follow, const pump *p, int64_t *since)
{
    if (!p->failed) {
        *since = 0;
        return 1;
    }
    if (!follow || p->err.code != SKV_ESTATE)
        return 0;
    if (!*since) {
        *since = cli_now_ms();
        cli_line(stderr, "sokovan: waiting: %s", p->err.message);
    }
    return cli_now_ms() - *since < CLI_RETRY_MS;
}

int cli_stream_logs(cli *c, const char *sid, const char *kernel,
                    const char *stream, int follow, FILE *out)
{
    int rc = cli_connect(c);
    if (rc)
        return rc;
    pump p;
    memset(&p, 0, sizeof p);
    p.stream = stream;
    p.out = out;
    int backoff = BACKOFF_MIN_MS;
    int64_t away_since = 0;
    for (;;) {
        int progress = pump_all(c, sid, kernel, &p);
        if (!follow_through(follow, &p, &away_since))
            return cli_fail_err("session.logs", p.err.code, &p.err);
        if (p.eof || (!follow && !progress))
            return CLI_OK;
        if (!progress)
            cli_sleep_ms(backoff);
        backoff = next_backoff(backoff, progress);
    }
}

static int is_terminal(const char *st)
{
    return strcmp(st, "TERMINATED") == 0 || strcmp(st, "CANCELLED") == 0 ||
           strcmp(st, "ERROR") == 0;
}

static int has_output(const char *st)
{
    return strcmp(st, "RUNNING") == 0 || strcmp(st, "TERMINATING") == 0 ||
           is_terminal(st);
}

/* After the end: pull until both streams report eof (or stay idle). */
static void drain(cli *c, const char *sid, pump *ps, int quiet)
{
    int backoff = BACKOFF_MIN_MS;
    for (int idle = 0; idle < DRAIN_IDLE_ROUNDS;) {
        int progress = 0;
        for (int i = 0; i < 2; i++)
            progress |= pump_all(c, sid, NULL, &ps[i]);
        if (ps[0].eof && ps[1].eof)
            return;
        idle = progress ? 0 : idle + 1;
        cli_sleep_ms(backoff);
        backoff = next_backoff(backoff, progress);
    }
    for (int i = 0; i < 2 && !quiet; i++)
        if (!ps[i].eof)
            cli_line(stderr, "sokovan: warning: %s may be incomplete%s%s",
                     ps[i].stream, ps[i].failed ? ": " : "",
                     ps[i].failed ? ps[i].err.message : "");
}

static int final_code(const skv_proto_session_info *s)
{
    const char *st = s->status;
    const char *why = s->status_reason && s->status_reason[0]
                          ? s->status_reason : "no reason given";
    if (strcmp(st, "TERMINATED") != 0) {
        cli_line(stderr, "sokovan: session %s ended in %s: %s",
                 s->session_id, st, why);
        return CLI_FAIL;
    }
    /* A plain exit code speaks for itself; a signal, the OOM killer or
     * output the agent could not keep (full disk, the log cap) deserves
     * the manager's words: the user would otherwise read a short log as
     * the command's whole output. */
    if (s->status_reason && (s->exit_code >= 128 ||
                             strstr(s->status_reason, "oom") ||
                             strstr(s->status_reason, "log")))
        cli_line(stderr, "sokovan: session %s: %s", s->session_id,
                 s->status_reason);
    if (s->exit_code < 0 || s->exit_code > 255)
        return 255;
    return s->exit_code;
}

int cli_wait_session(cli *c, const char *sid)
{
    pump ps[2];
    memset(ps, 0, sizeof ps);
    ps[0].stream = "stdout";
    ps[0].out = stdout;
    ps[1].stream = "stderr";
    ps[1].out = stderr;
    int backoff = BACKOFF_MIN_MS;
    char last[32] = "";
    for (;;) {
        skv_proto_session_show_reply r;
        skv_error e = SKV_ERROR_INIT;
        skv_proto_session_id req = {(char *)sid};
        int rc = cli_call_retry(c, SKV_PROTO_SESSION_SHOW, &req, &r, &e);
        if (rc)
            return cli_fail_err("session.show", rc, &e);
        const char *st = r.session.status ? r.session.status : "";
        int progress = strcmp(st, last) != 0;
        snprintf(last, sizeof last, "%s", st);
        if (has_output(st))
            for (int i = 0; i < 2; i++)
                progress |= pump_all(c, sid, NULL, &ps[i]);
        if (is_terminal(st)) {
            /* CANCELLED sessions never ran: nothing to drain. */
            if (strcmp(st, "CANCELLED") != 0)
                drain(c, sid, ps, strcmp(st, "TERMINATED") != 0);
            rc = final_code(&r.session);
            skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
            return rc;
        }
        skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
        if (!progress)
            cli_sleep_ms(backoff);
        backoff = next_backoff(backoff, progress);
    }
}
