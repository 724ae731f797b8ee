/* bench_proto: cost of the wire protocol on the manager's hot path — a
 * signed session.submit from a client, and the manager's side of it:
 * frame reader, envelope decode, signature + replay check, body decode.
 *
 *   bench_proto [ITERATIONS]     (default 200,000)
 *
 * Prints ns per operation and ends with one JSON line of the figures;
 * exits non-zero if an operation fails.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sokovan/proto.h"

#define AK "AKBENCH"
#define SK "bench-secret-key-0123456789"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double report(const char *what, double t0, long n)
{
    double ns = (now_ns() - t0) / (double)n;
    printf("%-44s %9.1f ns/op\n", what, ns);
    return ns;
}

/* A typical `sokovan run --cpu 0.1 /bin/true` submission. */
static void make_submit(skv_proto_session_submit *s, skv_proto_kernel_spec *k)
{
    static char *cmd[] = {"/bin/true"};
    memset(s, 0, sizeof *s);
    memset(k, 0, sizeof *k);
    k->role = "main";
    skv_slots_parse(&k->slots, "cpu=0.1,mem=64m", NULL, NULL);
    s->name = "bench";
    s->resource_group = "default";
    s->session_type = "batch";
    s->cluster_mode = "single-node";
    s->cluster_size = 1;
    s->image = "busybox";
    s->command = cmd;
    s->n_command = 1;
    s->kernels = k;
    s->n_kernels = 1;
    s->client_token = "0123456789abcdef";
}

static int encode_many(void **frames, size_t *lens, long n,
                       const skv_proto_session_submit *s, double *ns)
{
    skv_proto_credentials cred = {AK, SK};
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (skv_proto_message_encode(&frames[i], &lens[i], SKV_PROTO_REQUEST,
                                     (uint64_t)i + 1, SKV_PROTO_SESSION_SUBMIT, s,
                                     1700000000000LL + i / 1000, &cred, NULL))
            return 1;
    *ns = report("encode + sign session.submit", t0, n);
    return 0;
}

/* The manager side: reader, envelope, verify, body, free. */
static int handle_many(void **frames, size_t *lens, long n, double *ns)
{
    skv_auth_verifier *v;
    skv_auth_verifier_options o = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    o.max_nonces_per_key = (size_t)n + 1;
    skv_auth_principal p = {"bench", SKV_AUTH_ROLE_USER};
    skv_proto_reader *r;
    if (skv_auth_verifier_new(&v, &o, NULL) ||
        skv_auth_verifier_add_key(v, AK, SK, &p, NULL) ||
        skv_proto_reader_new(&r, 0, NULL))
        return 1;
    int bad = 0;
    double t0 = now_ns();
    for (long i = 0; i < n && !bad; i++) {
        const void *pl;
        size_t len;
        skv_proto_envelope env;
        skv_proto_session_submit s;
        bad = skv_proto_reader_feed(r, frames[i], lens[i], NULL) ||
              skv_proto_reader_next(r, &pl, &len, NULL) != 1 ||
              skv_proto_envelope_decode(&env, pl, len, NULL);
        if (bad)
            break;
        bad = skv_proto_envelope_verify(v, NULL, &env, 1700000000000LL + i / 1000, NULL) ||
              skv_proto_body_decode(&s, env.type, env.body, env.body_len, NULL);
        skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT, &s);
        skv_proto_envelope_free(&env);
    }
    *ns = report("read + decode + verify session.submit", t0, n);
    skv_proto_reader_free(r);
    skv_auth_verifier_free(v);
    return bad;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    if (n <= 0) {
        fprintf(stderr, "usage: %s [ITERATIONS]\n", argv[0]);
        return 2;
    }
    skv_proto_session_submit s;
    skv_proto_kernel_spec k;
    make_submit(&s, &k);
    void **frames = calloc((size_t)n, sizeof *frames);
    size_t *lens = calloc((size_t)n, sizeof *lens);
    double enc_ns = 0, dec_ns = 0;
    int rc = !frames || !lens || encode_many(frames, lens, n, &s, &enc_ns) ||
             handle_many(frames, lens, n, &dec_ns);
    if (rc)
        fprintf(stderr, "bench_proto: an operation failed\n");
    else
        printf("{\"bench\":\"proto\",\"iterations\":%ld,\"frame_bytes\":%zu,"
               "\"encode_sign_ns\":%.0f,\"decode_verify_ns\":%.0f,"
               "\"submits_per_s_one_core\":%.0f}\n",
               n, lens[0], enc_ns, dec_ns, 1e9 / dec_ns);
    for (long i = 0; frames && i < n; i++)
        skv_free(frames[i]);
    free(frames);
    free(lens);
    skv_slots_free(k.slots);
    return rc;
}
