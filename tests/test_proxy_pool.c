/* sokovan-proxy's upstream pools (daemons/sokovan-proxy/pool.c), driven
 * directly: pool.c is compiled into this suite with a short idle time, on a
 * real libuv loop, against an upstream of the test's own (a libuv TCP
 * listener on 127.0.0.1 that counts its connections and can close them).
 * A "request" is what the proxy's handler does: proxy_pool_for, a connect
 * through h2o's socket pool, then the socket returned (keep-alive) or
 * closed (the service closed it), then proxy_pool_warm.
 *
 * Keying: a connection pooled for session A / user U is never handed to
 * session B or user V on the same host:port (with a pool per target only,
 * test_proxy_pool_keys fails: B's request gets A's connection back).
 * Connect ahead: the parked connection is the next request's; one the
 * upstream closed is not handed out; idle ones close when the session's
 * traffic stops and when the proxy stops. Bounded: at most POOLS pools,
 * each holding at most one connection nobody asked for. Each case ends with
 * the process's open descriptors back to where they started.
 * SPDX-License-Identifier: Apache-2.0 */
#define POOL_IDLE_MS 100
#include "../daemons/sokovan-proxy/pool.c"

#include <dirent.h>
#include <time.h>

#include "skv_test.h"

#define UP_MAX 1024

/* The upstream: accepted connections, open until either side closes. */
typedef struct upstream {
    uv_tcp_t listener;
    uint16_t port;
    uv_tcp_t *conn[UP_MAX];
    uint16_t peer[UP_MAX];       /* the proxy side's local port */
    bool open[UP_MAX];
    int accepted;
} upstream;

static proxy g_p;
static upstream g_up;

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1;   /* the directory's own */
}

static void on_up_closed(uv_handle_t *h)
{
    free(h);
}

static void up_alloc(uv_handle_t *h, size_t want, uv_buf_t *b)
{
    static char buf[256];
    (void)h;
    (void)want;
    *b = uv_buf_init(buf, sizeof buf);
}

/* The proxy side closed (or wrote, which it never does here): close too. */
static void up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b)
{
    (void)b;
    if (n >= 0)
        return;
    for (int i = 0; i < g_up.accepted; i++)
        if (g_up.conn[i] == (uv_tcp_t *)s && g_up.open[i]) {
            g_up.open[i] = false;
            uv_close((uv_handle_t *)s, on_up_closed);
        }
}

static void up_accept(uv_stream_t *l, int status)
{
    ck_assert_int_eq(status, 0);
    ck_assert_int_lt(g_up.accepted, UP_MAX);
    uv_tcp_t *c = malloc(sizeof *c);
    ck_assert_ptr_nonnull(c);
    uv_tcp_init(l->loop, c);
    ck_assert_int_eq(uv_accept(l, (uv_stream_t *)c), 0);
    struct sockaddr_in sa;
    int len = sizeof sa;
    uv_tcp_getpeername(c, (struct sockaddr *)&sa, &len);
    int i = g_up.accepted++;
    g_up.conn[i] = c;
    g_up.peer[i] = ntohs(sa.sin_port);
    g_up.open[i] = true;
    uv_read_start((uv_stream_t *)c, up_alloc, up_read);
}

/* The upstream closes its side of connection i (busybox httpd after its
 * answer, or a service dropping an idle connection). */
static void up_close(int i)
{
    ck_assert(g_up.open[i]);
    g_up.open[i] = false;
    uv_close((uv_handle_t *)g_up.conn[i], on_up_closed);
}

static int up_open(void)
{
    int n = 0;
    for (int i = 0; i < g_up.accepted; i++)
        n += g_up.open[i];
    return n;
}

static int g_base_fds;

static void pool_setup(void)
{
    /* libuv's first loop opens a process-wide pipe (its signal lock) that
     * stays: count from after it */
    uv_loop_t warm;
    ck_assert_int_eq(uv_loop_init(&warm), 0);
    ck_assert_int_eq(uv_loop_close(&warm), 0);
    g_base_fds = open_fds();
    memset(&g_p, 0, sizeof g_p);
    memset(&g_up, 0, sizeof g_up);
    ck_assert_int_eq(uv_loop_init(&g_p.loop), 0);
    uv_tcp_init(&g_p.loop, &g_up.listener);
    struct sockaddr_in sa;
    uv_ip4_addr("127.0.0.1", 0, &sa);
    ck_assert_int_eq(uv_tcp_bind(&g_up.listener, (struct sockaddr *)&sa, 0),
                     0);
    ck_assert_int_eq(uv_listen((uv_stream_t *)&g_up.listener, 1024,
                               up_accept), 0);
    int len = sizeof sa;
    uv_tcp_getsockname(&g_up.listener, (struct sockaddr *)&sa, &len);
    g_up.port = ntohs(sa.sin_port);
}

/* Turn the loop until cond holds (generous deadline: CI under ASan). */
#define SPIN_UNTIL(cond)                                                       \
    do {                                                                       \
        struct timespec t0_, t_;                                               \
        clock_gettime(CLOCK_MONOTONIC, &t0_);                                  \
        for (;;) {                                                             \
            uv_run(&g_p.loop, UV_RUN_NOWAIT);                                  \
            if (cond)                                                          \
                break;                                                         \
            clock_gettime(CLOCK_MONOTONIC, &t_);                               \
            ck_assert_msg(t_.tv_sec - t0_.tv_sec < 20, "timed out: %s",        \
                          #cond);                                              \
            usleep(1000);                                                      \
        }                                                                      \
    } while (0)

/* The proxy stops; everything it opened is closed and freed. */
static void stop_and_check_fds(void)
{
    proxy_pool_stop(&g_p);
    ck_assert_ptr_null(g_pools);
    SPIN_UNTIL(up_open() == 0);   /* the upstream saw every one close */
    for (int i = 0; i < g_up.accepted; i++)
        if (g_up.open[i])
            up_close(i);
    uv_close((uv_handle_t *)&g_up.listener, NULL);
    uv_run(&g_p.loop, UV_RUN_NOWAIT);
    ck_assert_int_eq(uv_loop_close(&g_p.loop), 0);
    ck_assert_int_eq(open_fds(), g_base_fds);
}

static proxy_target target(const char *user)
{
    proxy_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.host, sizeof t.host, "127.0.0.1");
    t.port = g_up.port;
    snprintf(t.protocol, sizeof t.protocol, "http");
    snprintf(t.user, sizeof t.user, "%s", user);
    return t;
}

/* A request's upstream connection. */
typedef struct taken {
    h2o_socketpool_t *sp;
    void *ref;
    h2o_socket_t *sock;
    uint16_t port;               /* its local port: which connection */
    bool done;
} taken;

static void on_taken(h2o_socket_t *sock, const char *err, void *data)
{
    taken *k = data;
    ck_assert_msg(!err, "connect: %s", err);
    k->sock = sock;
    k->done = true;
}

static taken take(const char *sid, const char *user)
{
    taken k;
    memset(&k, 0, sizeof k);
    proxy_target t = target(user);
    k.sp = proxy_pool_for(&g_p, h2o_iovec_init(sid, strlen(sid)), &t, &k.ref);
    ck_assert_ptr_nonnull(k.sp);
    h2o_socketpool_connect(NULL, k.sp, &g_p.loop,
                           &g_p.ctx.receivers.hostinfo_getaddr, on_taken, &k);
    SPIN_UNTIL(k.done);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    ck_assert_int_eq(getsockname(h2o_socket_get_fd(k.sock),
                                 (struct sockaddr *)&sa, &len), 0);
    k.port = ntohs(sa.sin_port);
    return k;
}

/* The request is answered: its connection kept (keep-alive) or closed. */
static void finish(taken *k, bool keep)
{
    if (keep)
        h2o_socketpool_return(k->sp, k->sock);
    else
        h2o_socket_close(k->sock);
    proxy_pool_warm(&g_p, k->ref);
}

static int accepted_from(uint16_t port)
{
    for (int i = 0; i < g_up.accepted; i++)
        if (g_up.peer[i] == port)
            return i;
    return -1;
}

static size_t idle(const h2o_socketpool_t *sp)
{
    size_t n = 0;
    for (h2o_linklist_t *l = sp->_shared.sockets.next;
         l != &sp->_shared.sockets; l = l->next)
        n++;
    return n;
}

/* A kept-alive connection of session A / user alice goes back to A/alice
 * only; B/alice and A/victor on the same host:port get their own. */
START_TEST(test_proxy_pool_keys)
{
    pool_setup();
    taken a = take("sessA", "alice");
    SPIN_UNTIL(g_up.accepted == 1);
    finish(&a, true);   /* idle in A/alice's pool: no connect ahead */
    ck_assert_ptr_null(((pool *)a.ref)->warming);

    taken b = take("sessB", "alice");
    ck_assert_msg(b.port != a.port, "session B got session A's upstream "
                  "connection (local port %u)", a.port);
    ck_assert_ptr_ne(b.sp, a.sp);
    taken v = take("sessA", "victor");
    ck_assert_msg(v.port != a.port && v.port != b.port, "user victor got "
                  "another user's upstream connection (local port %u)",
                  v.port);
    SPIN_UNTIL(g_up.accepted == 3);
    ck_assert_int_ge(accepted_from(b.port), 1);
    ck_assert_int_ge(accepted_from(v.port), 1);

    taken a2 = take("sessA", "alice");   /* A/alice's own: reused */
    ck_assert_ptr_eq(a2.sp, a.sp);
    ck_assert_uint_eq(a2.port, a.port);
    ck_assert_int_eq(g_up.accepted, 3);
    finish(&a2, true);
    finish(&b, true);
    finish(&v, true);
    stop_and_check_fds();
}
END_TEST

/* The connection opened ahead is the next request's; one the upstream
 * closed meanwhile is not handed out (the request connects afresh) and
 * is closed; when the session's requests stop, the idle connection closes
 * and the pool goes; nothing is left open. */
START_TEST(test_proxy_pool_ahead)
{
    pool_setup();
    taken r1 = take("sessA", "alice");
    SPIN_UNTIL(g_up.accepted == 1);
    finish(&r1, false);   /* httpd closes after its answer */
    pool *x = r1.ref;
    SPIN_UNTIL(g_up.accepted == 2 && idle(&x->sp) == 1);   /* parked */
    ck_assert_ptr_null(x->warming);

    taken r2 = take("sessA", "alice");
    ck_assert_int_eq(accepted_from(r2.port), 1);   /* the parked one */
    ck_assert_int_eq(idle(&x->sp), 0);
    finish(&r2, false);
    SPIN_UNTIL(g_up.accepted == 3 && idle(&x->sp) == 1);
    ck_assert_int_eq(up_open(), 1);   /* only the parked one is open */

    up_close(2);   /* the service drops the parked connection */
    taken r3 = take("sessA", "alice");
    SPIN_UNTIL(g_up.accepted == 4);
    ck_assert_int_eq(accepted_from(r3.port), 3);   /* a fresh one */
    ck_assert_int_eq(idle(&x->sp), 0);   /* the dead one dropped */
    finish(&r3, false);
    SPIN_UNTIL(g_up.accepted == 5 && idle(&x->sp) == 1);
    ck_assert_ptr_null(x->warming);
    ck_assert_uint_eq(x->sp._shared.count, 1);   /* one parked, no more */

    /* no more requests: the parked connection closes, the pool goes */
    SPIN_UNTIL(up_open() == 0);
    SPIN_UNTIL(g_pools == NULL);
    ck_assert_uint_eq(g_n, 0);
    stop_and_check_fds();
}
END_TEST

/* The proxy stops with a connection parked in one pool and a connect
 * ahead still in flight in another: the parked one is closed, the connect
 * cancelled, the pools freed. */
START_TEST(test_proxy_pool_stop)
{
    pool_setup();
    taken r1 = take("sessA", "alice");
    finish(&r1, false);
    pool *x = r1.ref;
    SPIN_UNTIL(g_up.accepted == 2 && idle(&x->sp) == 1);
    taken r2 = take("sessB", "alice");
    finish(&r2, false);   /* its connect ahead starts */
    ck_assert_ptr_nonnull(((pool *)r2.ref)->warming);
    stop_and_check_fds();
}
END_TEST

/* Many sessions: at most POOLS pools (past that a request connects on its
 * own), at most one parked connection each; when the traffic stops they
 * all close and go, and new sessions get pools again. */
START_TEST(test_proxy_pool_bounded)
{
    pool_setup();
    proxy_target t = target("alice");
    void *refs[POOLS + 44];
    int pooled = 0;
    for (int i = 0; i < POOLS + 44; i++) {
        char sid[32];
        snprintf(sid, sizeof sid, "sess%d", i);
        h2o_socketpool_t *sp = proxy_pool_for(
            &g_p, h2o_iovec_init(sid, strlen(sid)), &t, &refs[i]);
        ck_assert((sp != NULL) == (refs[i] != NULL));
        pooled += sp != NULL;
    }
    ck_assert_int_eq(pooled, POOLS);
    ck_assert_uint_eq(g_n, POOLS);
    for (int i = 0; i < POOLS + 44; i++)
        proxy_pool_warm(&g_p, refs[i]);   /* each parks one */
    SPIN_UNTIL(g_up.accepted == POOLS);
    for (pool *x = g_pools; x; x = x->next)
        SPIN_UNTIL(!x->warming);
    for (pool *x = g_pools; x; x = x->next)
        ck_assert_uint_le(x->sp._shared.count, 1);
    SPIN_UNTIL(up_open() == 0);   /* idle: all closed */
    SPIN_UNTIL(g_pools == NULL);
    ck_assert_int_eq(g_up.accepted, POOLS);
    taken k = take("later", "alice");
    finish(&k, true);
    stop_and_check_fds();
}
END_TEST

Suite *skv_test_suite_proxy_pool(void);
Suite *skv_test_suite_proxy_pool(void)
{
    Suite *s = suite_create("proxy_pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_proxy_pool_keys);
    tcase_add_test(tc, test_proxy_pool_ahead);
    tcase_add_test(tc, test_proxy_pool_stop);
    tcase_add_test(tc, test_proxy_pool_bounded);
    suite_add_tcase(s, tc);
    return s;
}
