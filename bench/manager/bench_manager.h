/* bench/manager: one real sokovan-manager under N protocol-level simulated
 * agents and several submitting clients. Shared pieces of the benchmark's
 * files: the run's settings, the per-session timestamps every thread
 * writes, the simulated agents (sim.c), the clients (clients.c) and the
 * manager's process figures (procfs.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_BENCH_MANAGER_H
#define SKV_BENCH_MANAGER_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sokovan/auth.h"

/* Each session's command is {"/bin/true", "bench:<index>"}: the index tells
 * the simulated agent whose timestamps a kernel.create belongs to. */
#define BM_TAG "bench:"

/* One run's settings (command-line options). */
typedef struct bm_opts {
    int sessions;           /* submitted in total, over all clients */
    int clients;            /* submitting threads, one connection each */
    int agents[8];          /* agent counts to run, one cluster each */
    int n_agents;
    const char *store;      /* --store passed to the manager; NULL: none */
    const char *mgr_args[16];  /* extra manager arguments, passed as given */
    int n_mgr_args;
    const char *slots;      /* per session, e.g. "cpu=1,mem=256m" */
    const char *capacity;   /* per simulated agent, "cpu=64,mem=256g" */
    int timeout_s;          /* per cluster */
    const char *profile;    /* command run against the manager pid, or NULL */
} bm_opts;

/* Per-session timestamps (CLOCK_MONOTONIC ns), indexed by session index;
 * each slot is written by one thread only (a client, or the agents'
 * thread), and read after those threads were joined. */
typedef struct bm_times {
    int n;
    int64_t *submit;        /* before session.submit was sent */
    int64_t *acked;         /* its reply came back */
    int64_t *dispatch;      /* the kernel.create reached its agent */
    int64_t *end;           /* the kernel.destroy after its exit */
} bm_times;

int bm_times_init(bm_times *t, int n);
void bm_times_free(bm_times *t);
int64_t bm_now_ns(void);

/* ---- agent credentials (keys.c) ------------------------------------------ */

typedef struct bm_key {
    char id[32];            /* sim<i> */
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    char sk[SKV_AUTH_SECRET_KEY_MAX];
} bm_key;

/* Users of role agent sim1..simN with a keypair each, over the admin API. */
int bm_keys_make(bm_key **out, int n, const char *endpoint, const char *ak,
                 const char *sk, char *why, size_t wl);
void bm_keys_free(bm_key *k, int n);

/* ---- simulated agents (sim.c) ------------------------------------------- */

typedef struct bm_sim_agent bm_sim_agent;

typedef struct bm_sim {
    int n;
    bm_sim_agent *a;
    int ep;                 /* epoll */
    pthread_t thread;
    bool started;
    atomic_bool stop;
    bm_times *times;
    const char *capacity;
    const char *sock;       /* the manager's Unix socket */
    const bm_key *keys;
    int opened;             /* agents connected so far */
    /* Counters the main thread watches. */
    atomic_int registered;  /* agents whose registration was answered */
    atomic_int ended;       /* sessions whose kernel.destroy came */
    atomic_long creates, destroys, dup_creates, untagged, mgr_errors;
    atomic_long frames_in, frames_out, heartbeats, routes_in;
    atomic_llong bytes_in;
    atomic_int failed;      /* 1: the thread stopped on an error (why) */
    int agents_used;        /* after bm_sim_stop: agents given a kernel */
    long max_per_agent;     /* ... and the most kernels one agent got */
    char why[512];
} bm_sim;

/* Connect N agents (keys[i]: id and keypair) to the manager's Unix socket
 * and register them, at most BM_REGISTER_WINDOW unanswered at a time (as
 * a rolling start: the manager drops a connection whose first request it
 * has not served within its auth_timeout_ms), from the thread that then
 * serves them. */
#define BM_REGISTER_WINDOW 16
int bm_sim_start(bm_sim *s, int n, const char *sock, const bm_key *keys,
                 const char *capacity, bm_times *times, char *why,
                 size_t wl);
void bm_sim_stop(bm_sim *s);

/* ---- clients (clients.c) ------------------------------------------------- */

typedef struct bm_clients {
    int n;
    pthread_t *threads;
    struct bm_client_arg *args;
    atomic_int failed;
    char why[512];
} bm_clients;

/* Start n threads submitting sessions [0, total) between them. */
int bm_clients_start(bm_clients *c, int n, int total, const char *endpoint,
                     const char *ak, const char *sk, const char *slots,
                     bm_times *times, char *why, size_t wl);
void bm_clients_join(bm_clients *c);

/* ---- the manager process (procfs.c) -------------------------------------- */

typedef struct bm_proc {
    double cpu_s;           /* utime + stime */
    double hwm_mb;          /* VmHWM: peak resident set */
    double rss_mb;          /* VmRSS now */
    double runq_wait_s;     /* runnable, waiting for a CPU (all threads) */
} bm_proc;

int bm_proc_read(pid_t pid, bm_proc *out);
/* The 1-minute load average when called (the machine is shared). */
double bm_loadavg(void);

#endif
