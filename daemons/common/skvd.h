/* daemons/common: what sokovan-manager and sokovan-agent share.
 *
 * The daemons are thin: the cluster logic lives in the library (manager.h,
 * agent.h), which never does I/O. This layer wires it to libuv: listeners,
 * connections with a frame reader and a write queue, an outbound connector
 * with reconnect, signals, a logger, the configuration (INI file + flags)
 * and a pidfile. Everything runs on the one event-loop thread.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKVD_H
#define SKVD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <uv.h>

#include "sokovan/common.h"

/* Exit codes of both daemons. */
#define SKVD_VERSION SKV_VERSION_STRING

#define SKVD_EXIT_OK 0
#define SKVD_EXIT_FAIL 1     /* runtime failure (open, bind, ...) */
#define SKVD_EXIT_USAGE 2    /* bad flag, config key or value */

/* ---- log.c --------------------------------------------------------------- */

/* Install the library logger and remember the program name. Lines go to
 * stderr as "2026-01-02T03:04:05.678Z LEVEL module: message". */
void skvd_log_init(const char *prog, skv_log_level level);
void skvd_log(skv_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "trace", "debug", "info", "warn"/"warning", "error": 0, or -1. */
int skvd_log_level_parse(skv_log_level *out, const char *text);
/* Unix ms, CLOCK_REALTIME: the now_ms the library expects. */
int64_t skvd_now_ms(void);

/* ---- config.c / config_file.c / args.c ----------------------------------- */

typedef enum skvd_role {
    SKVD_ROLE_MANAGER = 1,
    SKVD_ROLE_AGENT = 2,
    SKVD_ROLE_PROXY = 4
} skvd_role;

/* One storage_host value, parsed (storage_conf.c). */
typedef struct skvd_storage_host {
    char name[64];
    char root[4096];
    char quota[16];
    bool shared;
} skvd_storage_host;
/* 0, or -1 with the reason in why. */
int skvd_storage_host_parse(skvd_storage_host *h, const char *v, char *why,
                            size_t wl);

typedef struct skvd_manager_conf {
    char *data_dir;          /* absolute */
    char *listen;            /* unix socket path; NULL: disabled */
    char *tcp;               /* "host:port"; NULL: disabled */
    char *metrics_listen;    /* HTTP /metrics "host:port"; NULL: off */
    char *pidfile;           /* NULL: none */
    char *default_resource_group, *default_scheduler, *default_selector;
    char *bootstrap_agents;  /* NULL: none */
    uint64_t tls;            /* bool: the TCP listener speaks TLS */
    uint64_t allow_plaintext_secrets; /* bool: secrets over plain TCP */
    char *tls_cert, *tls_key; /* NULL: <data_dir>/tls/, generated */
    char *cluster_cidr;      /* kernel addresses; NULL: the library's */
    uint64_t heartbeat_interval_ms, heartbeat_timeout_ms, max_clock_skew_ms;
    uint64_t max_sessions_per_pass, max_frame, max_queue;
    uint64_t log_level;      /* skv_log_level */
    /* before authentication, and what the daemon may hold (limits.c) */
    uint64_t preauth_frame_max, max_buffered_bytes, max_connections;
    uint64_t frame_timeout_ms, auth_timeout_ms;
    uint64_t socket_mode;    /* of the Unix socket, e.g. 0660 */
    char *socket_group;      /* its group; NULL: the daemon's own */
    uint64_t idle_cpu_percent; /* a kernel this busy is not idle */
    char *backup_dir;        /* admin.backup target; NULL: the library's */
    char *store;             /* "sqlite" or a postgresql:// URI */
    uint64_t ha_poll_ms, ha_lease_ms; /* standby managers (PostgreSQL) */
    uint64_t init, check;    /* command-line switches --init, --check */
    char **storage_hosts;    /* "NAME=PATH[,quota=..][,shared=..]" */
    size_t n_storage_hosts;
    char *sched_plugins;     /* "FILE[:FILE...]"; NULL: none */
} skvd_manager_conf;

typedef struct skvd_agent_conf {
    char *agent_id;
    char *manager;           /* "unix:/path" or "host:port" */
    char *tls_ca;            /* PEM file verifying the manager; or */
    char *tls_pin;           /* its SHA-256 fingerprint; either: TLS */
    char *key_file;          /* NULL until skvd_config_finish() */
    char *state_dir;         /* NULL until skvd_config_finish() */
    char *run_dir;           /* NULL until skvd_config_finish() */
    char *image_dir, *resource_group, *address, *backend, *oci_runtime;
    char *topology_xml, *plugins, *cpus, *labels, *pidfile;
    char *metrics_listen;    /* HTTP /metrics "host:port"; NULL: off */
    char **images;           /* "NAME=TARBALL", imported before connecting */
    size_t n_images;
    uint64_t memory;         /* bytes; 0: all */
    uint64_t stats_interval_ms, poll_interval_ms, key_wait_ms;
    uint64_t create_threads;  /* 0: the library's default */
    char *host_allow;        /* session networks' host allow-list; NULL */
    uint64_t sessions_pids_max, sessions_memory_reserve;  /* 0: auto */
    uint64_t sessions_cpu_reserve;  /* milli-CPUs; 0: no quota */
    uint64_t reconnect_min_ms, reconnect_max_ms, max_frame, max_queue;
    uint64_t log_level;
    uint64_t log_max_bytes;  /* each log of a kernel */
} skvd_agent_conf;

/* sokovan-proxy: the app proxy (daemons/sokovan-proxy). */
typedef struct skvd_proxy_conf {
    char *listen;            /* "host:port" served over HTTP(S) */
    char *manager;           /* "unix:/path" or "host:port" */
    char *key_file;          /* admin keypair; NULL: <data_dir>/admin.key */
    char *tls_cert, *tls_key; /* both: HTTPS; neither: HTTP */
    char *public_url;        /* base of the URLs shown; NULL: from listen */
    char *pidfile;
    uint64_t cache_ms;       /* how long a resolved token is reused */
    uint64_t max_request_body; /* bytes of one request's body */
    uint64_t io_timeout_ms;  /* idle upstream/tunnel I/O */
    uint64_t activity_report_ms; /* app.activity period (idle limits) */
    uint64_t log_level;
} skvd_proxy_conf;

typedef struct skvd_config {
    skvd_manager_conf manager;
    skvd_agent_conf agent;
    skvd_proxy_conf proxy;
} skvd_config;

/* One configuration key (config.c holds the table). */
typedef struct skvd_key skvd_key;

/* Defaults for every key. Returns 0 or -1 (out of memory). */
int skvd_config_init(skvd_config *c);
void skvd_config_free(skvd_config *c);
/* Find section.key; NULL when unknown. */
const skvd_key *skvd_config_find(const char *section, const char *key);
/* A command-line switch without value (--init), not a config file key. */
bool skvd_config_is_switch(const skvd_key *k);
/* The key a flag ("--data-dir") sets for a program; NULL when none. */
const skvd_key *skvd_config_find_flag(const char *flag, skvd_role role);
/* Validate and store a value. On failure returns -1 with the reason
 * (without the key name) in why. */
int skvd_config_set(skvd_config *c, const skvd_key *k, const char *value,
                    char *why, size_t whylen);
/* Print "--flag VALUE  help (default: ...)" for a role's flags. */
void skvd_config_print_flags(FILE *f, skvd_role role);
/* Checks across keys, then derived defaults (agent state dir, key file);
 * call after file + flags. 0, or -1 with the reason in why. */
int skvd_config_finish(skvd_config *c, char *why, size_t wl);

/* A group name or decimal gid -> gid. 0, or -1 with why. */
int skvd_group_gid(long *gid, const char *name, char *why, size_t wl);

/* Parse an INI file into c. Prints "file:line: key: reason" (or
 * "file: reason") to stderr and returns -1 on the first problem found;
 * every problem in the file is printed. */
int skvd_config_load(skvd_config *c, const char *path);

/* The command line: --config FILE first, then flags override the file.
 * Returns -1 to continue, or an exit code (0 after --help/--version,
 * SKVD_EXIT_USAGE after printing what is wrong). */
int skvd_args_parse(skvd_config *c, skvd_role role, const char *prog,
                    const char *summary, int argc, char **argv);

/* ---- addr.c ------------------------------------------------------------- */

/* "host:port" / "[v6]:port" -> host (without brackets) and port. 0 or -1
 * with the reason in why. */
int skvd_hostport_split(char *host, size_t hostlen, int *port,
                        const char *text, char *why, size_t whylen);
/* Resolve host:port (blocking getaddrinfo, numeric first). */
int skvd_hostport_resolve(struct sockaddr_storage *out, const char *text,
                          char *why, size_t whylen);
/* Unix socket path usable for bind/connect. */
int skvd_unix_path_check(const char *path, char *why, size_t whylen);
/* mkdir -p (created directories get mode 0755). */
int skvd_mkdirs(const char *dir, char *why, size_t wl);
/* The parent directory of path, created like skvd_mkdirs. */
int skvd_mkdirs_parent(const char *path, char *why, size_t wl);
/* Before binding: create the directory (0755) and remove a stale socket
 * nobody listens on. Fails when another process listens there. */
int skvd_unix_path_prepare(const char *path, char *why, size_t whylen);

/* ---- net: conn.c, conn_table.c, listen.c, connect.c ---------------------- */

typedef struct skvd_net skvd_net;
typedef struct skvd_conn skvd_conn;
typedef struct skvd_tls_ctx skvd_tls_ctx;

typedef struct skvd_net_cbs {
    /* A connection is up (accepted or connected). Return -1 to refuse it. */
    int (*on_open)(skvd_conn *c, void *ctx);
    /* One frame payload. Negative: close the connection after flushing. */
    int (*on_frame)(skvd_conn *c, const void *payload, size_t len,
                    void *ctx);
    /* After one read's frames were handled (the place to tick). */
    void (*on_batch)(void *ctx);
    /* The connection is gone (called once per opened connection). */
    void (*on_close)(skvd_conn *c, void *ctx);
} skvd_net_cbs;

struct skvd_conn {
    uint64_t id;                /* unique, never 0 */
    char peer[64];              /* "unix", "127.0.0.1:4711" */
    skvd_net *net;
    union {
        uv_handle_t handle;
        uv_stream_t stream;
        uv_tcp_t tcp;
        uv_pipe_t pipe;
    } h;
    struct skv_proto_reader *reader;
    struct skvd_tls *tls;       /* NULL: plaintext (tls_conn.c) */
    uv_write_t wreq;            /* the one write in flight */
    uv_connect_t creq;          /* outbound: the connect request */
    char *out, *pend;           /* buffer being written / queued next */
    size_t out_len, out_cap, pend_len, pend_cap;
    bool writing, closing, close_after_flush, opened, outbound;
    bool authed;                /* limits.c: the host said it authenticated */
    bool counted, queued;       /* limits.c: in the cap; in the unauth FIFO */
    skvd_conn *uprev, *unext;   /* limits.c: unauthenticated, oldest first */
    size_t held;                /* limits.c: bytes of incomplete frames */
    uint64_t accepted_ms;       /* limits.c: uv_now() at accept */
    uint64_t partial_ms;        /* limits.c: incomplete frame since; 0 none */
    skvd_conn *hnext;           /* conn_table chain */
    skvd_conn *prev, *next;     /* net's list of connections */
};

struct skvd_net {
    uv_loop_t *loop;
    skvd_net_cbs cbs;
    void *ctx;
    size_t max_frame;           /* reader limit (payload bytes) */
    size_t max_queue;           /* close a connection queuing more */
    uint64_t next_id;
    skvd_tls_ctx *tls_listen;   /* set: TCP listeners accept TLS only */
    skvd_tls_ctx *tls_connect;  /* set: the connector to host:port: TLS */
    skvd_conn *conns;           /* list of live connections */
    skvd_conn **buckets;        /* conn_table: id -> conn */
    size_t nbuckets, count;
    struct skvd_listener *listeners;
    struct skvd_connector *connector;
    struct skvd_limits *limits; /* limits.c; NULL: inbound unlimited */
    unsigned unix_mode;         /* listen.c: Unix socket mode (0660) */
    long unix_gid;              /* and group; -1: the process's own */
    bool stopping;
};

void skvd_net_init(skvd_net *n, uv_loop_t *loop, const skvd_net_cbs *cbs,
                   void *ctx, size_t max_frame, size_t max_queue);
/* Close listeners (removing their socket files), the connector and every
 * connection (without waiting to flush). Run the loop afterwards to let
 * the handles close; then skvd_net_release(). */
void skvd_net_stop(skvd_net *n);
void skvd_net_release(skvd_net *n);

/* conn.c: adopt a freshly accepted/connected stream: allocates the
 * reader, registers the id, calls on_open, starts reading. */
int skvd_conn_start(skvd_conn *c);
skvd_conn *skvd_conn_alloc(skvd_net *n, bool outbound);
/* Queue a copy of buf. -1 when the connection is closing or its queue
 * would exceed max_queue (it is then closed). */
int skvd_conn_send(skvd_conn *c, const void *buf, size_t len);
/* Close; with flush, only once everything queued was written. */
void skvd_conn_close(skvd_conn *c, bool flush);
/* Queue bytes for the socket as they are (TLS records, or plaintext on a
 * connection without TLS); skvd_conn_send encrypts first when TLS is on. */
int skvd_conn_send_raw(skvd_conn *c, const void *buf, size_t len);
/* The read callback of plaintext connections; TLS ones pass what they
 * decrypted (skvd_tls_read_cb). */
void skvd_conn_read_plain(uv_stream_t *s, ssize_t nread,
                          const uv_buf_t *buf);

/* conn_table.c */
int skvd_table_add(skvd_net *n, skvd_conn *c);
void skvd_table_remove(skvd_net *n, skvd_conn *c);
skvd_conn *skvd_table_find(const skvd_net *n, uint64_t id);

/* listen.c: listen on a Unix socket path (mode n->unix_mode, group
 * n->unix_gid, set between bind and listen) or on "host:port". 0, or -1
 * with why. */
int skvd_listen_unix(skvd_net *n, const char *path, char *why, size_t wl);
int skvd_listen_tcp(skvd_net *n, const char *hostport, char *why,
                    size_t wl);

/* Close every listener, removing Unix socket files. */
void skvd_listeners_close(skvd_net *n);

/* connect.c: keep one outbound connection to "unix:/path" or "host:port"
 * up, reconnecting with exponential backoff (min_ms doubling to max_ms,
 * reset after a successful connect). */
int skvd_connect_start(skvd_net *n, const char *addr, uint64_t min_ms,
                       uint64_t max_ms, char *why, size_t wl);
/* The live outbound connection, or NULL. */
skvd_conn *skvd_connect_conn(const skvd_net *n);
/* conn.c tells the connector its connection (or attempt) closed. */
void skvd_connect_lost(skvd_net *n, skvd_conn *c);
/* Stop reconnecting; closes the timer. */
void skvd_connect_stop(skvd_net *n);

/* ---- limits.c: what an inbound connection may hold before and after
 * it authenticated (the manager's defence against hostile clients) ------- */

typedef struct skvd_limits_conf {
    size_t preauth_frame_max;   /* frame limit until authenticated */
    size_t max_buffered;        /* incomplete-frame bytes, all connections */
    uint64_t frame_timeout_ms;  /* an incomplete frame older: close */
    uint64_t auth_timeout_ms;   /* not authenticated after this: close */
    uint64_t max_connections;   /* inbound; 0: RLIMIT_NOFILE less reserve */
} skvd_limits_conf;

/* Descriptors kept for everything but inbound connections (database,
 * listeners, metrics, the loop's own, a refused connection's accept). */
#define SKVD_FD_RESERVE 64

/* Apply cf to n's inbound connections: the connection cap follows from
 * RLIMIT_NOFILE (logged), a timer enforces the timeouts. 0, or -1 with
 * why. Stopped by skvd_net_stop(). */
int skvd_limits_start(skvd_net *n, const skvd_limits_conf *cf, char *why,
                      size_t wl);
void skvd_limits_stop(skvd_net *n);
/* The frame limit a new connection's reader starts with. */
size_t skvd_limits_frame_max(const skvd_conn *c);
/* A connection was accepted: make room under the cap by closing the
 * oldest unauthenticated connection. false: no room (close c). */
bool skvd_limits_admit(skvd_conn *c);
/* Before feeding nread bytes: room under max_buffered, made by closing
 * unauthenticated connections holding incomplete frames, oldest first.
 * false: c itself was closed. */
bool skvd_limits_read(skvd_conn *c, size_t nread);
/* After a read's frames were taken out (took: at least one was). */
void skvd_limits_held(skvd_conn *c, bool took);
/* c (unauthenticated, inbound) sent an unusable frame: counted for the
 * periodic summary; true when so, and the caller logs it at debug level
 * (a flood of them must not flood the log). */
bool skvd_limits_counted(skvd_conn *c);
/* c's incomplete bytes no longer count (closing; idempotent). */
void skvd_limits_release(skvd_conn *c);
/* The host verified a request on c: the full frame limit, no timeout
 * for authenticating, not a candidate for eviction. */
void skvd_conn_authenticated(skvd_conn *c);

/* ---- loop.c -------------------------------------------------------------- */

/* SIGINT/SIGTERM call stop(ctx) once; SIGPIPE is ignored. */
int skvd_signals_start(uv_loop_t *loop, void (*stop)(void *ctx), void *ctx);
void skvd_signals_close(void);
/* Re-arm a timer for delay_ms clamped to [0, max_ms]. */
void skvd_timer_arm(uv_timer_t *t, uv_timer_cb cb, int64_t delay_ms,
                    int64_t max_ms);
/* Run the loop until every handle closed (after a stop). */
void skvd_loop_drain(uv_loop_t *loop);

/* ---- pidfile.c ----------------------------------------------------------- */

/* Write our pid to path (created 0644, parent directory must exist).
 * Fails when it names a live process other than us. */
int skvd_pidfile_write(const char *path, char *why, size_t wl);
void skvd_pidfile_remove(const char *path);

/* ---- tls: tls_cert.c, tls_ctx.c, tls_conn.c (OpenSSL) ------------------- */

struct x509_st;
struct ssl_st;

/* "AB:CD:..." (SHA-256 of the certificate, 32 bytes) and its NUL. */
#define SKVD_TLS_FP_LEN 96
void skvd_tls_fingerprint(char out[SKVD_TLS_FP_LEN], const struct x509_st *x);
/* The last OpenSSL error as text (clears the queue). */
const char *skvd_tls_errstr(void);
/* "sha256:AB:CD:..." / 64 hex digits, ':' allowed -> 32 bytes. 0 or -1. */
int skvd_tls_pin_parse(unsigned char pin[32], const char *text);
/* Generate a self-signed EC P-256 certificate and key (0600) when neither
 * file exists; both existing is fine, one alone is an error. */
int skvd_tls_cert_ensure(const char *cert, const char *key,
                         const char *listen_host, char *why, size_t wl);
/* The manager's side: load the certificate and key, log the fingerprint. */
int skvd_tls_server_ctx(skvd_tls_ctx **out, const char *cert,
                        const char *key, char *why, size_t wl);
/* The agent's side: verify by CA file (host checked) or by pin. */
int skvd_tls_client_ctx(skvd_tls_ctx **out, const char *ca_file,
                        const char *pin, char *why, size_t wl);
void skvd_tls_ctx_free(skvd_tls_ctx *t);
struct ssl_st *skvd_tls_ssl_new(skvd_tls_ctx *t, const char *host);
/* Per connection: attach before skvd_conn_start (which calls
 * skvd_tls_start to begin the handshake). 0 or -1 (out of memory). */
int skvd_tls_attach(skvd_conn *c, skvd_tls_ctx *ctx, const char *host);
int skvd_tls_start(skvd_conn *c);
void skvd_tls_free(struct skvd_tls *t);
/* The read callback of TLS connections: ciphertext in, plaintext to
 * skvd_conn_read_plain. */
void skvd_tls_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf);
/* Plaintext out (queued until the handshake is done). */
int skvd_tls_send(skvd_conn *c, const void *buf, size_t len);
/* Before a flushed close: queue close_notify. */
void skvd_tls_shutdown(skvd_conn *c);

#endif /* SKVD_H */
