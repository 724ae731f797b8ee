/* bench_slots: throughput of the slot-vector operations on the scheduler's
 * hot path (fits, add/sub booking, eq) and of the codecs.
 *
 *   bench_slots [ITERATIONS]     (default 2,000,000)
 *
 * Prints ns per operation; exits non-zero if an operation fails.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sokovan.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void report(const char *what, double t0, long n)
{
    printf("%-34s %8.1f ns/op\n", what, (now_ns() - t0) / (double)n);
}

/* Fits, then book and release: the scheduler's inner loop. */
static int bench_hot(const skv_slots *req, skv_slots *cap, long n)
{
    volatile int sink = 0;
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        sink += skv_slots_fits(req, cap);
    report("fits (4 keys into 6)", t0, n);
    t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (skv_slots_sub(cap, req, 0, NULL) || skv_slots_add(cap, req, NULL))
            return 1;
    report("sub + add (same keys, no alloc)", t0, n);
    t0 = now_ns();
    for (long i = 0; i < n; i++)
        sink += skv_slots_eq(req, cap);
    report("eq", t0, n);
    t0 = now_ns();
    for (long i = 0; i < n; i++)
        sink += (int)skv_slots_get(cap, "mem");
    report("get", t0, n);
    double share = 0;
    t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (skv_slots_dominant_share(&share, NULL, req, cap, NULL))
            return 1;
    report("dominant_share", t0, n);
    return sink < 0;
}

static int bench_codecs(const skv_slots *cap, long n)
{
    double t0 = now_ns();
    for (long i = 0; i < n; i++) {
        skv_slots *v = NULL;
        if (skv_slots_parse(&v, "cpu=4,mem=16g,cuda.shares=0.5", NULL, NULL))
            return 1;
        skv_slots_free(v);
    }
    report("parse text (3 keys)", t0, n);
    void *buf = NULL;
    size_t len = 0;
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        skv_free(buf);
        if (skv_slots_encode(&buf, &len, cap, NULL))
            return 1;
    }
    report("msgpack encode (6 keys)", t0, n);
    t0 = now_ns();
    for (long i = 0; i < n; i++) {
        skv_slots *v = NULL;
        if (skv_slots_decode(&v, buf, len, NULL, NULL))
            return 1;
        skv_slots_free(v);
    }
    report("msgpack decode (6 keys)", t0, n);
    skv_free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    skv_slots *req = NULL, *cap = NULL;
    int rc = skv_slots_parse(&req, "cpu=4,cuda.shares=0.5,mem=64g,npu.device=1", NULL, NULL) ||
             skv_slots_parse(&cap, "cpu=64,cuda.device=8,cuda.shares=8,mem=1t,"
                             "npu.device=4,x.mem=80g", NULL, NULL);
    if (!rc)
        rc = bench_hot(req, cap, n) || bench_codecs(cap, n / 10);
    skv_slots_free(req);
    skv_slots_free(cap);
    if (rc)
        fprintf(stderr, "bench_slots: an operation failed\n");
    return rc ? 1 : 0;
}
