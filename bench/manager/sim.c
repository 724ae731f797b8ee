/* Simulated agents: N connections to the manager served by one thread,
 * each speaking the agent protocol as sokovan-agent does (src/agent:
 * register.c, create.c, destroy.c, tick.c) with containers that end at
 * once. Per agent: agent.register signed with its real key (keys.c);
 * agent.heartbeat at the interval the reply
 * gives, reporting the kernels held; on kernel.create the
 * kernel.create.reply, kernel.status "running" and kernel.exit (code 0)
 * right away; on kernel.destroy the ack, after which the kernel is gone.
 * Messages go through the library's codec (skv_proto_*), nothing else.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench_manager.h"
#include "sokovan/proto.h"

#define HB_REPORT_MAX 4096      /* the schema's bound on reported kernels */

typedef struct sim_kernel {
    skv_proto_kernel_create req;   /* as decoded; reported in heartbeats */
    int idx;                       /* session index, -1 untagged */
} sim_kernel;

struct bm_sim_agent {
    int fd;
    char id[32];
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    char sk[SKV_AUTH_SECRET_KEY_MAX];
    skv_proto_reader *rd;
    uint8_t *out;                  /* frames not yet written */
    size_t out_len, out_off, out_cap;
    bool want_out;                 /* EPOLLOUT armed */
    uint64_t reg_id;
    bool registered;
    uint32_t hb_ms;
    int64_t next_hb_ms;
    uint64_t seq;
    sim_kernel **k;
    size_t nk, capk;
    long created;                  /* kernel.create requests served */
};

static int64_t now_ms(void)
{
    return bm_now_ns() / 1000000;
}

/* Wall clock for envelope timestamps (the manager checks the skew). */
static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int fail(bm_sim *s, const char *fmt, const char *a, const char *b)
{
    if (atomic_exchange(&s->failed, 1) == 0)
        snprintf(s->why, sizeof(s->why), fmt, a ? a : "", b ? b : "");
    return -1;
}

/* ---- output ---------------------------------------------------------------- */

static int out_append(bm_sim_agent *a, const void *frame, size_t len)
{
    if (a->out_len + len > a->out_cap) {
        size_t cap = a->out_cap ? a->out_cap : 4096;
        while (cap < a->out_len + len)
            cap *= 2;
        uint8_t *p = realloc(a->out, cap);
        if (!p)
            return -1;
        a->out = p;
        a->out_cap = cap;
    }
    memcpy(a->out + a->out_len, frame, len);
    a->out_len += len;
    return 0;
}

static int arm(bm_sim *s, bm_sim_agent *a, bool out)
{
    if (a->want_out == out)
        return 0;
    struct epoll_event ev = {EPOLLIN | (out ? EPOLLOUT : 0), {.ptr = a}};
    a->want_out = out;
    return epoll_ctl(s->ep, EPOLL_CTL_MOD, a->fd, &ev);
}

/* Write what is queued; the rest waits for EPOLLOUT. */
static int flush(bm_sim *s, bm_sim_agent *a)
{
    while (a->out_off < a->out_len) {
        ssize_t w = send(a->fd, a->out + a->out_off, a->out_len - a->out_off,
                         MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return arm(s, a, true);
        if (w < 0)
            return fail(s, "agent %s: send: %s", a->id, strerror(errno));
        a->out_off += (size_t)w;
    }
    a->out_off = a->out_len = 0;
    return arm(s, a, false);
}

/* Encode one message (events and requests signed with the agent's key,
 * responses not, as skv__agent_emit does) and queue it. */
static int emit(bm_sim *s, bm_sim_agent *a, skv_proto_kind kind, uint64_t id,
                skv_proto_type type, const void *body)
{
    skv_proto_credentials cred = {a->ak, a->sk};
    skv_error e = SKV_ERROR_INIT;
    void *frame = NULL;
    size_t len = 0;
    int rc = skv_proto_message_encode(&frame, &len, kind, id, type, body,
                                      wall_ms(),
                                      kind == SKV_PROTO_RESPONSE ? NULL
                                                                 : &cred, &e);
    if (rc)
        return fail(s, "encode %s: %s", skv_proto_type_name(type), e.message);
    rc = out_append(a, frame, len);
    skv_free(frame);
    atomic_fetch_add(&s->frames_out, 1);
    return rc ? fail(s, "agent %s: out of memory%s", a->id, "") : 0;
}

static int open_next(bm_sim *s);

/* ---- registration and heartbeats ----------------------------------------- */

static int pooled(skv_proto_device *d, const char *id, const skv_slots *cap,
                  skv_error *e)
{
    skv_slot_kind kind = strcmp(id, "mem") ? SKV_SLOT_COUNT : SKV_SLOT_BYTES;
    d->id = d->kind = (char *)id;
    d->numa_node = -1;
    d->model = d->bus_id = (char *)"";
    int rc = skv_slots_new(&d->slots, e);
    return rc ? rc : skv_slots_set(d->slots, id, kind,
                                   skv_slots_get(cap, id), e);
}

static int send_register(bm_sim *s, bm_sim_agent *a)
{
    skv_proto_agent_register m;
    skv_proto_device dev[2];
    skv_proto_image_detail det = {"busybox", NULL, 1 << 20};
    char *images[] = {"busybox"};
    skv_slots *cap = NULL;
    skv_error e = SKV_ERROR_INIT;
    memset(&m, 0, sizeof(m));
    memset(dev, 0, sizeof(dev));
    int rc = skv_slots_parse(&cap, s->capacity, NULL, &e);
    if (rc == 0)
        rc = pooled(&dev[0], "cpu", cap, &e);
    if (rc == 0)
        rc = pooled(&dev[1], "mem", cap, &e);
    m.agent_id = a->id;
    m.architecture = "x86_64";
    m.address = "127.0.0.1";
    m.version = (char *)skv_version_string();
    m.route_deltas = true;    /* as the agent does (older managers skip it) */
    m.devices = dev;
    m.n_devices = 2;
    m.images = images;
    m.n_images = 1;
    m.image_details = &det;
    m.n_image_details = 1;
    a->reg_id = 1;
    if (rc == 0)
        rc = emit(s, a, SKV_PROTO_REQUEST, a->reg_id,
                  SKV_PROTO_AGENT_REGISTER, &m);
    else
        fail(s, "agent capacity '%s': %s", s->capacity, e.message);
    skv_slots_free(dev[0].slots);
    skv_slots_free(dev[1].slots);
    skv_slots_free(cap);
    return rc;
}

static int heartbeat(bm_sim *s, bm_sim_agent *a)
{
    skv_proto_agent_heartbeat m;
    skv_proto_kernel_report r[HB_REPORT_MAX];
    skv_error e = SKV_ERROR_INIT;
    memset(&m, 0, sizeof(m));
    m.agent_id = a->id;
    m.seq = ++a->seq;
    m.kernels = r;
    /* Instant containers: every kernel held has exited (nothing occupied)
     * and waits for its kernel.destroy. */
    for (size_t i = 0; i < a->nk && m.n_kernels < HB_REPORT_MAX; i++) {
        const skv_proto_kernel_create *q = &a->k[i]->req;
        r[m.n_kernels++] = (skv_proto_kernel_report){
            q->session_id, q->kernel_id, "exited", q->alloc, q->n_alloc};
    }
    if (skv_slots_new(&m.occupied, &e))
        return fail(s, "heartbeat: %s%s", e.message, "");
    int rc = emit(s, a, SKV_PROTO_EVENT, 0, SKV_PROTO_AGENT_HEARTBEAT, &m);
    skv_slots_free(m.occupied);
    atomic_fetch_add(&s->heartbeats, 1);
    return rc;
}

static int on_register_reply(bm_sim *s, bm_sim_agent *a,
                             const skv_proto_envelope *env)
{
    skv_proto_agent_register_reply r;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_body_decode(&r, SKV_PROTO_AGENT_REGISTER_REPLY, env->body,
                              env->body_len, &e))
        return fail(s, "register reply: %s%s", e.message, "");
    a->registered = true;
    a->hb_ms = r.heartbeat_interval_ms ? r.heartbeat_interval_ms : 1000;
    a->next_hb_ms = now_ms() + a->hb_ms;
    skv_proto_body_free(SKV_PROTO_AGENT_REGISTER_REPLY, &r);
    atomic_fetch_add(&s->registered, 1);
    return open_next(s);
}

/* ---- kernels ----------------------------------------------------------------- */

/* The session index in the command's last word ("bench:<i>"), or -1. */
static int tag_of(const skv_proto_kernel_create *q, int n)
{
    const char *w = q->n_argv ? q->argv[q->n_argv - 1] : NULL;
    if (!w || strncmp(w, BM_TAG, strlen(BM_TAG)) != 0)
        return -1;
    char *end;
    long i = strtol(w + strlen(BM_TAG), &end, 10);
    return *end || i < 0 || i >= n ? -1 : (int)i;
}

static sim_kernel *find(bm_sim_agent *a, const char *kid, size_t *at)
{
    for (size_t i = 0; kid && i < a->nk; i++)
        if (!strcmp(a->k[i]->req.kernel_id, kid)) {
            if (at)
                *at = i;
            return a->k[i];
        }
    return NULL;
}

static int add(bm_sim_agent *a, sim_kernel *k)
{
    if (a->nk == a->capk) {
        size_t cap = a->capk ? a->capk * 2 : 16;
        sim_kernel **p = realloc(a->k, cap * sizeof(*p));
        if (!p)
            return -1;
        a->k = p;
        a->capk = cap;
    }
    a->k[a->nk++] = k;
    return 0;
}

static void kernel_free(sim_kernel *k)
{
    if (k)
        skv_proto_body_free(SKV_PROTO_KERNEL_CREATE, &k->req);
    free(k);
}

/* Created and started at once, then ended with code 0: the three messages
 * sokovan-agent sends for a container whose command exits immediately. */
static int answer_create(bm_sim *s, bm_sim_agent *a, uint64_t req,
                         const sim_kernel *k)
{
    const skv_proto_kernel_create *q = &k->req;
    skv_proto_kernel_create_reply r = {0};
    r.kernel_id = r.container_id = q->kernel_id;
    skv_proto_kernel_status st = {a->id, q->session_id, q->kernel_id,
                                  "running", NULL, q->kernel_id};
    skv_proto_kernel_exit x = {0};
    x.agent_id = a->id;
    x.session_id = q->session_id;
    x.kernel_id = q->kernel_id;
    x.finished_ms = wall_ms();
    x.reason = "exited with code 0";
    if (emit(s, a, SKV_PROTO_RESPONSE, req, SKV_PROTO_KERNEL_CREATE_REPLY,
             &r) ||
        emit(s, a, SKV_PROTO_EVENT, 0, SKV_PROTO_KERNEL_STATUS, &st))
        return -1;
    return emit(s, a, SKV_PROTO_EVENT, 0, SKV_PROTO_KERNEL_EXIT, &x);
}

static int on_create(bm_sim *s, bm_sim_agent *a, const skv_proto_envelope *env)
{
    int64_t t = bm_now_ns();
    skv_error e = SKV_ERROR_INIT;
    sim_kernel *k = calloc(1, sizeof(*k));
    if (!k)
        return fail(s, "out of memory%s%s", "", "");
    if (skv_proto_body_decode(&k->req, SKV_PROTO_KERNEL_CREATE, env->body,
                              env->body_len, &e)) {
        free(k);
        return fail(s, "kernel.create: %s%s", e.message, "");
    }
    atomic_fetch_add(&s->creates, 1);
    a->created++;
    const sim_kernel *old = find(a, k->req.kernel_id, NULL);
    if (old) {
        /* Asked again (as the real agent does: the same answer). */
        atomic_fetch_add(&s->dup_creates, 1);
        kernel_free(k);
        skv_proto_kernel_create_reply r = {0};
        r.kernel_id = r.container_id = old->req.kernel_id;
        return emit(s, a, SKV_PROTO_RESPONSE, env->request_id,
                    SKV_PROTO_KERNEL_CREATE_REPLY, &r);
    }
    k->idx = tag_of(&k->req, s->times->n);
    if (k->idx < 0)
        atomic_fetch_add(&s->untagged, 1);
    else if (s->times->dispatch[k->idx] == 0)
        s->times->dispatch[k->idx] = t;
    if (add(a, k)) {
        kernel_free(k);
        return fail(s, "out of memory%s%s", "", "");
    }
    return answer_create(s, a, env->request_id, k);
}

static int on_destroy(bm_sim *s, bm_sim_agent *a, const skv_proto_envelope *env)
{
    skv_proto_kernel_destroy d;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_body_decode(&d, SKV_PROTO_KERNEL_DESTROY, env->body,
                              env->body_len, &e))
        return fail(s, "kernel.destroy: %s%s", e.message, "");
    size_t at = 0;
    sim_kernel *k = find(a, d.kernel_id, &at);
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &d);
    atomic_fetch_add(&s->destroys, 1);
    skv_proto_ack ack = {k ? NULL : "unknown kernel"};
    if (k) {
        a->k[at] = a->k[--a->nk];
        if (k->idx >= 0 && s->times->end[k->idx] == 0) {
            s->times->end[k->idx] = bm_now_ns();
            atomic_fetch_add(&s->ended, 1);
        }
        kernel_free(k);
    }
    return emit(s, a, SKV_PROTO_RESPONSE, env->request_id, SKV_PROTO_ACK,
                &ack);
}

/* An error response from the manager: none is expected from a healthy run
 * (a refused registration, or an event refused because the manager took
 * the agent for lost), so any one stops the run with its message: figures
 * for fewer agents than asked must not pass as N agents'. */
static int on_error(bm_sim *s, bm_sim_agent *a, const skv_proto_envelope *env)
{
    skv_proto_error m;
    if (skv_proto_body_decode(&m, SKV_PROTO_ERROR, env->body, env->body_len,
                              NULL))
        memset(&m, 0, sizeof(m));
    atomic_fetch_add(&s->mgr_errors, 1);
    char msg[400];
    snprintf(msg, sizeof(msg), "%s (to its %s)", m.message ? m.message : "?",
             m.request_type ? m.request_type : "request");
    int rc = fail(s, "the manager answered agent %s with an error: %s",
                  a->id, msg);
    skv_proto_body_free(SKV_PROTO_ERROR, &m);
    return rc;
}

static int on_request(bm_sim *s, bm_sim_agent *a, const skv_proto_envelope *env)
{
    if (env->type == SKV_PROTO_KERNEL_CREATE)
        return on_create(s, a, env);
    if (env->type == SKV_PROTO_KERNEL_DESTROY)
        return on_destroy(s, a, env);
    void *frame = NULL;
    size_t len = 0;
    int rc = skv_proto_error_encode(&frame, &len, env->request_id,
                                    SKV_ENOTSUP, "a simulated agent does not "
                                    "serve this", env->type_name, wall_ms(),
                                    NULL, NULL);
    if (rc == 0)
        rc = out_append(a, frame, len);
    skv_free(frame);
    return rc ? fail(s, "agent %s: cannot answer %s", a->id, env->type_name)
              : 0;
}

static int on_frame(bm_sim *s, bm_sim_agent *a, const void *p, size_t len)
{
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    atomic_fetch_add(&s->frames_in, 1);
    if (skv_proto_envelope_decode(&env, p, len, &e))
        return fail(s, "frame from the manager: %s%s", e.message, "");
    int rc = 0;
    if (env.kind == SKV_PROTO_REQUEST)
        rc = on_request(s, a, &env);
    else if (env.kind == SKV_PROTO_RESPONSE &&
             env.type == SKV_PROTO_AGENT_REGISTER_REPLY)
        rc = on_register_reply(s, a, &env);
    else if (env.kind == SKV_PROTO_RESPONSE && env.type == SKV_PROTO_ERROR)
        rc = on_error(s, a, &env);
    else if (env.type == SKV_PROTO_AGENT_ROUTES ||
             env.type == SKV_PROTO_AGENT_ROUTES_DELTA)
        atomic_fetch_add(&s->routes_in, 1);
    /* route events and anything else: nothing to do for a simulation */
    skv_proto_envelope_free(&env);
    return rc;
}

/* ---- the loop ------------------------------------------------------------------- */

static int on_readable(bm_sim *s, bm_sim_agent *a)
{
    uint8_t buf[65536];
    skv_error e = SKV_ERROR_INIT;
    for (;;) {
        ssize_t r = recv(a->fd, buf, sizeof(buf), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (r <= 0)
            return fail(s, "agent %s: the manager closed the connection (%s)",
                        a->id, r < 0 ? strerror(errno) : "EOF");
        atomic_fetch_add(&s->bytes_in, r);
        if (skv_proto_reader_feed(a->rd, buf, (size_t)r, &e))
            return fail(s, "agent %s: %s", a->id, e.message);
        const void *p;
        size_t len;
        int got;
        while ((got = skv_proto_reader_next(a->rd, &p, &len, &e)) == 1)
            if (on_frame(s, a, p, len))
                return -1;
        if (got < 0)
            return fail(s, "agent %s: %s", a->id, e.message);
        if ((size_t)r < sizeof(buf))
            break;
    }
    return flush(s, a);
}

static int heartbeats_due(bm_sim *s)
{
    int64_t t = now_ms();
    for (int i = 0; i < s->n; i++) {
        bm_sim_agent *a = &s->a[i];
        if (!a->registered || t < a->next_hb_ms)
            continue;
        a->next_hb_ms = t + a->hb_ms;
        if (heartbeat(s, a) || flush(s, a))
            return -1;
    }
    return 0;
}

static void *loop(void *arg)
{
    bm_sim *s = arg;
    struct epoll_event ev[256];
    int64_t next_scan = 0;
    while (!atomic_load(&s->stop) && !atomic_load(&s->failed)) {
        int n = epoll_wait(s->ep, ev, 256, 10);
        if (n < 0 && errno != EINTR) {
            fail(s, "epoll_wait: %s%s", strerror(errno), "");
            break;
        }
        for (int i = 0; i < n; i++) {
            bm_sim_agent *a = ev[i].data.ptr;
            int rc = 0;
            if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                rc = on_readable(s, a);
            if (rc == 0 && (ev[i].events & EPOLLOUT))
                rc = flush(s, a);
            if (rc)
                break;
        }
        if (now_ms() >= next_scan) {
            heartbeats_due(s);
            next_scan = now_ms() + 10;
        }
    }
    return NULL;
}

/* ---- setup ---------------------------------------------------------------------- */

static int dial(const char *sock)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* Blocking: a full listen backlog makes connect wait, not fail. */
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static int open_agent(bm_sim *s, bm_sim_agent *a, const bm_key *key,
                      const char *sock)
{
    skv_error e = SKV_ERROR_INIT;
    snprintf(a->id, sizeof(a->id), "%s", key->id);
    snprintf(a->ak, sizeof(a->ak), "%s", key->ak);
    snprintf(a->sk, sizeof(a->sk), "%s", key->sk);
    if (skv_proto_reader_new(&a->rd, 0, &e))
        return fail(s, "reader: %s%s", e.message, "");
    if ((a->fd = dial(sock)) < 0)
        return fail(s, "connect %s: %s", sock, strerror(errno));
    struct epoll_event ev = {EPOLLIN, {.ptr = a}};
    if (epoll_ctl(s->ep, EPOLL_CTL_ADD, a->fd, &ev) < 0)
        return fail(s, "epoll_ctl: %s%s", strerror(errno), "");
    if (send_register(s, a))
        return -1;
    return flush(s, a);
}

/* The next agent not yet connected, if any. */
static int open_next(bm_sim *s)
{
    if (s->opened >= s->n)
        return 0;
    int i = s->opened++;
    return open_agent(s, &s->a[i], &s->keys[i], s->sock);
}

int bm_sim_start(bm_sim *s, int n, const char *sock, const bm_key *keys,
                 const char *capacity, bm_times *times, char *why, size_t wl)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    s->times = times;
    s->capacity = capacity;
    s->sock = sock;
    s->keys = keys;
    s->ep = epoll_create1(EPOLL_CLOEXEC);
    s->a = calloc((size_t)n, sizeof(*s->a));
    int rc = s->ep < 0 || !s->a ? fail(s, "setup: %s%s", strerror(errno), "")
                                : 0;
    for (int i = 0; s->a && i < n; i++)
        s->a[i].fd = -1;
    /* The rest follow as registrations are answered (on_register_reply). */
    for (int i = 0; rc == 0 && i < n && i < BM_REGISTER_WINDOW; i++)
        rc = open_next(s);
    if (rc == 0 && pthread_create(&s->thread, NULL, loop, s) != 0)
        rc = fail(s, "pthread_create failed%s%s", "", "");
    s->started = rc == 0;
    if (rc)
        snprintf(why, wl, "simulated agents: %s", s->why);
    return rc;
}

void bm_sim_stop(bm_sim *s)
{
    atomic_store(&s->stop, true);
    if (s->started)
        pthread_join(s->thread, NULL);
    /* How the manager spread the kernels (read after the join). */
    for (int i = 0; s->a && i < s->n; i++) {
        s->agents_used += s->a[i].created > 0;
        if (s->a[i].created > s->max_per_agent)
            s->max_per_agent = s->a[i].created;
    }
    for (int i = 0; s->a && i < s->n; i++) {
        bm_sim_agent *a = &s->a[i];
        if (a->fd >= 0)
            close(a->fd);
        skv_proto_reader_free(a->rd);
        for (size_t j = 0; j < a->nk; j++)
            kernel_free(a->k[j]);
        free(a->k);
        free(a->out);
        skv_auth_wipe(a->sk, sizeof(a->sk));
    }
    free(s->a);
    if (s->ep >= 0)
        close(s->ep);
    s->a = NULL;
    s->started = false;
}
