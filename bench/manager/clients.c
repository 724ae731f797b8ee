/* The submitting clients: each thread has its own connection (a skv_client
 * is one thread's) and submits its share of the sessions one after the
 * other through skv_client_submit, stamping each before the request and
 * after the reply. Session i runs {"/bin/true", "bench:<i>"} (the tag the
 * simulated agents read). The first error stops every thread.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_manager.h"
#include "sokovan/client.h"
#include "sokovan/proto.h"

typedef struct bm_client_arg {
    bm_clients *all;
    skv_client *cl;
    skv_slots *slots;
    bm_times *times;
    int first, count;
} bm_client_arg;

static void fail(bm_clients *c, const char *what, const char *msg)
{
    if (atomic_exchange(&c->failed, 1) == 0)
        snprintf(c->why, sizeof(c->why), "%s: %s", what, msg);
}

static int submit(bm_client_arg *a, int i, skv_error *e)
{
    char tag[32];
    snprintf(tag, sizeof(tag), BM_TAG "%d", i);
    char *cmd[] = {"/bin/true", tag};
    skv_proto_kernel_spec k = {"main", NULL, a->slots};
    skv_proto_session_submit s = {0};
    s.session_type = "batch";
    s.cluster_mode = "single-node";
    s.cluster_size = 1;
    s.image = "busybox";
    s.command = cmd;
    s.n_command = 2;
    s.kernels = &k;
    s.n_kernels = 1;
    skv_proto_session_ref ref = {0};
    a->times->submit[i] = bm_now_ns();
    int rc = skv_client_submit(a->cl, &ref, &s, e);
    a->times->acked[i] = bm_now_ns();
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    return rc;
}

static void *run(void *arg)
{
    bm_client_arg *a = arg;
    skv_error e = SKV_ERROR_INIT;
    for (int i = a->first; i < a->first + a->count; i++) {
        if (atomic_load(&a->all->failed))
            break;
        if (submit(a, i, &e)) {
            char what[64];
            snprintf(what, sizeof(what), "session.submit #%d", i);
            fail(a->all, what, e.message);
            break;
        }
    }
    return NULL;
}

static int open_one(bm_client_arg *a, const char *endpoint, const char *ak,
                    const char *sk, const char *slots, char *why, size_t wl)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    o.endpoint = endpoint;
    o.access_key = ak;
    o.secret_key = sk;
    o.timeout_ms = 120000;
    if (skv_slots_parse(&a->slots, slots, NULL, &e) ||
        skv_client_connect(&a->cl, &o, &e)) {
        snprintf(why, wl, "client: %s", e.message);
        return -1;
    }
    return 0;
}

static void close_all(bm_clients *c)
{
    for (int i = 0; c->args && i < c->n; i++) {
        skv_client_free(c->args[i].cl);
        skv_slots_free(c->args[i].slots);
    }
    free(c->args);
    free(c->threads);
    c->args = NULL;
    c->threads = NULL;
}

int bm_clients_start(bm_clients *c, int n, int total, const char *endpoint,
                     const char *ak, const char *sk, const char *slots,
                     bm_times *times, char *why, size_t wl)
{
    memset(c, 0, sizeof(*c));
    c->args = calloc((size_t)n, sizeof(*c->args));
    c->threads = calloc((size_t)n, sizeof(*c->threads));
    if (!c->args || !c->threads) {
        snprintf(why, wl, "clients: out of memory");
        close_all(c);
        return -1;
    }
    c->n = n;
    /* All connections first: the clock starts with every client ready. */
    for (int i = 0, first = 0; i < n; i++) {
        bm_client_arg *a = &c->args[i];
        a->all = c;
        a->times = times;
        a->first = first;
        a->count = total / n + (i < total % n);
        first += a->count;
        if (open_one(a, endpoint, ak, sk, slots, why, wl)) {
            close_all(c);
            return -1;
        }
    }
    for (int i = 0; i < n; i++)
        if (pthread_create(&c->threads[i], NULL, run, &c->args[i]) != 0) {
            fail(c, "pthread_create", "failed");
            for (int j = 0; j < i; j++)
                pthread_join(c->threads[j], NULL);
            snprintf(why, wl, "clients: pthread_create failed");
            close_all(c);
            return -1;
        }
    return 0;
}

void bm_clients_join(bm_clients *c)
{
    for (int i = 0; c->threads && i < c->n; i++)
        pthread_join(c->threads[i], NULL);
    close_all(c);
}
