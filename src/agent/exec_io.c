/* The data path of an exec: stdin bytes from the manager into the command
 * (buffered up to the window the agent granted, acknowledged as written),
 * its output out as exec.output frames while the manager's credit lasts
 * (no credit: the descriptor is not watched, the pipe fills and the
 * command waits), and its exit once the output it left is sent. The host
 * watches the descriptors; skv_agent_io() brings readiness here.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_internal.h"

enum { IN = 0, OUT = 1, ERR = 2, PID = 3 };

/* The descriptor stdin bytes go to: the terminal's master with a tty. */
static int in_fd(const skv__agent_exec *e)
{
    return e->tty ? e->fd[OUT] : e->fd[IN];
}

static bool in_pending(const skv__agent_exec *e)
{
    return e->in_off < e->in_len;
}

static unsigned want(const skv__agent_exec *e, int i)
{
    if (e->fd[i] < 0)
        return 0;
    switch (i) {
    case IN:
        return !e->tty && in_pending(e) ? SKV_AGENT_IO_WRITE : 0;
    case OUT:
    case ERR: {
        unsigned ev = !e->out_eof[i] && e->out_credit ? SKV_AGENT_IO_READ : 0;
        if (i == OUT && e->tty && in_pending(e))
            ev |= SKV_AGENT_IO_WRITE;
        return ev;
    }
    default:
        return e->exited ? 0 : SKV_AGENT_IO_READ;
    }
}

void skv__agent_exec_watch(skv_agent *a, skv__agent_exec *e)
{
    for (int i = 0; i < 4; i++) {
        unsigned w = want(e, i);
        if (w != e->watched[i] && a->watch)
            a->watch(e->fd[i], w, a->watch_payload);
        e->watched[i] = w;
    }
}

static void send_stdin_ack(skv_agent *a, skv__agent_exec *e, int64_t now_ms)
{
    skv_proto_exec_ack m = {e->id, (uint32_t)e->in_written};
    if (skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_STDIN_ACK, &m,
                        now_ms, NULL) == 0) {
        e->in_credit += e->in_written;
        e->in_written = 0;
    }
}

/* End of input once the buffer is written: close the pipe (unwatched
 * first: the host must not poll a closed descriptor), or ^D. */
static void close_stdin(skv_agent *a, skv__agent_exec *e)
{
    if (!e->tty && e->fd[IN] >= 0 && e->watched[IN] && a->watch)
        a->watch(e->fd[IN], 0, a->watch_payload);
    e->watched[IN] = 0;
    skv_exec_close_stdin(e->x, NULL);
    e->fd[IN] = -1;
    e->in_eof = false;
    e->in_off = e->in_len = 0;
}

/* write() to a pipe whose reader is gone raises SIGPIPE, which would kill
 * a host that does not ignore it: blocked around the write, and one raised
 * by it taken off the thread again. */
static ssize_t write_nosig(int fd, const void *buf, size_t len)
{
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    ssize_t n = write(fd, buf, len);
    int saved = errno;
    if (n < 0 && errno == EPIPE && !sigismember(&old, SIGPIPE)) {
        struct timespec zero = {0, 0};
        sigtimedwait(&pipe_set, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
    return n;
}

static void pump_stdin(skv_agent *a, skv__agent_exec *e, int64_t now_ms)
{
    int fd = in_fd(e);
    while (in_pending(e) && fd >= 0) {
        ssize_t n = write_nosig(fd, e->in + e->in_off, e->in_len - e->in_off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            break;
        /* EPIPE: the command closed its input; what it did not read is
         * dropped (and acknowledged, so the client is not stuck). */
        size_t done = n > 0 ? (size_t)n : e->in_len - e->in_off;
        e->in_off += done;
        e->in_written += done;
    }
    if (!in_pending(e))
        e->in_off = e->in_len = 0;
    if (e->in_written && (!in_pending(e) ||
                          e->in_written >= SKV__AGENT_EXEC_WINDOW / 4))
        send_stdin_ack(a, e, now_ms);
    if (e->in_eof && !in_pending(e))
        close_stdin(a, e);
}

static const char *const stream_name[] = {NULL, "stdout", "stderr"};

/* Output of stream i while credit lasts. After the exit, "nothing to read
 * now" is the end: a background child keeping the pipe open does not
 * hold the exec (it is killed with the exec's process group). */
static void pump_output(skv_agent *a, skv__agent_exec *e, int i,
                        int64_t now_ms)
{
    uint8_t buf[SKV__AGENT_EXEC_CHUNK];
    while (!e->out_eof[i] && e->out_credit > 0) {
        size_t want_n = e->out_credit < sizeof(buf) ? (size_t)e->out_credit
                                                    : sizeof(buf);
        ssize_t n = read(e->fd[i], buf, want_n);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) {
            e->out_eof[i] = e->exited;
            return;
        }
        if (n <= 0) { /* EOF, or EIO: the terminal's last user is gone */
            e->out_eof[i] = true;
            return;
        }
        skv_proto_exec_data m = {e->id, (char *)stream_name[i], buf,
                                 (size_t)n, 0};
        if (skv__agent_emit(a, SKV_PROTO_EVENT, 0, SKV_PROTO_EXEC_OUTPUT, &m,
                            now_ms, NULL) < 0)
            return; /* the connection is down: disconnected() ends it */
        e->out_credit -= (uint64_t)n;
    }
}

void skv__agent_exec_pump(skv_agent *a, skv__agent_exec *e, int64_t now_ms)
{
    if (!e->exited && skv_exec_wait(e->x, 0, NULL, NULL, NULL) == 0)
        e->exited = true;
    pump_stdin(a, e, now_ms);
    for (int i = OUT; i <= ERR; i++)
        pump_output(a, e, i, now_ms);
    if (e->exited && e->out_eof[OUT] && e->out_eof[ERR]) {
        skv__agent_exec_end(a, e, true, now_ms);
        return;
    }
    skv__agent_exec_watch(a, e);
}

/* ---- host interface ------------------------------------------------------- */

void skv_agent_set_watch(skv_agent *a, skv_agent_watch_fn watch,
                         void *payload)
{
    if (!a)
        return;
    a->watch = watch;
    a->watch_payload = payload;
}

int skv_agent_io(skv_agent *a, int fd, unsigned events, int64_t now_ms,
                 skv_error *err)
{
    SKV__UNUSED(events); /* the pump tries everything that may move */
    if (!a || fd < 0)
        return skv__err(err, SKV_EINVAL, "skv_agent_io: %s",
                        !a ? "agent is NULL" : "bad descriptor");
    for (size_t i = 0; i < a->nex; i++)
        for (int j = 0; j < 4; j++)
            if (a->ex[i]->fd[j] == fd) {
                skv__agent_exec_pump(a, a->ex[i], now_ms);
                return 0;
            }
    return 0;
}

size_t skv_agent_exec_count(const skv_agent *a)
{
    return a ? a->nex : 0;
}
