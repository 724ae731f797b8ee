/* sokovan - the user command line of a libsokovan cluster.
 * Shared declarations of the CLI's files (all names cli_*: the program is
 * linked with daemons/common, whose names are skvd_*).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_CLI_H
#define SOKOVAN_CLI_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "sokovan.h"

/* Exit codes. */
#define CLI_OK 0
#define CLI_FAIL 1      /* the request failed (or the session did) */
#define CLI_USAGE 2     /* bad command line */

#define CLI_DEFAULT_ENDPOINT "unix:/run/sokovan/manager.sock"
#define CLI_ADMIN_KEY "/var/lib/sokovan/manager/admin.key"
/* The certificate a local manager generated (tls = on, no tls_cert). */
#define CLI_MANAGER_CERT "/var/lib/sokovan/manager/tls/cert.pem"

typedef struct cli {
    const char *endpoint;       /* --endpoint, SOKOVAN_ENDPOINT, default */
    const char *endpoint_from;  /* which of those, for error messages */
    const char *key_file;       /* --key-file */
    int json;                   /* --json */
    int timeout_ms;             /* --timeout */
    const char *tls_ca;         /* --tls-ca, SOKOVAN_TLS_CA */
    const char *tls_pin;        /* --tls-pin, SOKOVAN_TLS_PIN */
    const char *cmd;            /* "run", "admin user", ... for messages */
    const char *where;          /* "job.yaml:12" while a job file applies */
    skv_client *client;
    int have_creds;             /* resolved once, kept for reconnects */
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    char secret_key[SKV_AUTH_SECRET_KEY_MAX];   /* wiped by main */
} cli;

/* How long an idempotent request keeps retrying over a broken connection
 * (a manager restarting) before it fails. */
#define CLI_RETRY_MS 30000
/* --timeout when not given (the client library's default too). */
#define CLI_DEFAULT_TIMEOUT_MS 30000

/* ---- messages (main.c) ---- */
int cli_usage(const cli *c, const char *fmt, ...) SKV_PRINTF(2, 3);
int cli_fail(const char *fmt, ...) SKV_PRINTF(1, 2);
/* "sokovan: <what>: <message> (SKV_E...)"; returns CLI_FAIL. */
int cli_fail_err(const char *what, int rc, const skv_error *e);

/* ---- option parsing (opt.c) ---- */
typedef struct cli_opt {
    const char *name;           /* "cpu" for --cpu */
    int has_arg;
    int id;                     /* > 0 */
    char short_name;            /* 'f' for -f (taking the next word), or 0 */
} cli_opt;

#define CLI_OPT_END 0           /* no more arguments */
#define CLI_OPT_POS (-1)        /* a positional argument in *val */
#define CLI_OPT_ERR (-2)        /* usage error already printed */
#define CLI_OPT_HELP (-3)       /* --help / -h */

typedef struct cli_parser {
    cli *c;
    int argc;
    char **argv;
    int i;
    int rest;                   /* after "--": everything positional */
    int saw_dashdash;
} cli_parser;

void cli_parser_init(cli_parser *p, cli *c, int argc, char **argv);
/* The next option (its id, *val its argument) or a CLI_OPT_* value.
 * Global options (--endpoint, --key-file, --json, --timeout) are applied
 * to the cli context and skipped. */
int cli_next(cli_parser *p, const cli_opt *opts, const char **val);

/* Value parsers: 0 or CLI_USAGE after printing a message naming opt. */
int cli_parse_u32(const cli *c, const char *opt, const char *text,
                  uint32_t min, uint32_t max, uint32_t *out);
int cli_parse_i32(const cli *c, const char *opt, const char *text,
                  int32_t *out);
/* Quantity of a slot kind, > 0 and finite. */
int cli_parse_qty(const cli *c, const char *opt, const char *text,
                  skv_slot_kind kind, skv_qty *out);
/* Milliseconds: "1500", "1500ms", "30s", "5m", "2h", "1d". */
int cli_parse_duration(const cli *c, const char *opt, const char *text,
                       uint64_t *out);
/* Unix ms of "+30m", "@SECONDS", "2026-11-26T18:00[:SS][Z]" (opt_time.c). */
int cli_parse_time(const cli *c, const char *opt, const char *text,
                   int64_t *out);
/* One of a NULL-terminated list of words. */
int cli_parse_word(const cli *c, const char *opt, const char *text,
                   const char *const *words);

/* Growable string list (pointers into argv or static strings). */
typedef struct cli_strv {
    char **v;
    size_t n;
} cli_strv;
int cli_strv_push(cli_strv *s, const char *str);
void cli_strv_free(cli_strv *s);

/* ---- connecting (conn.c) ---- */
/* --tls-ca / --tls-pin defaults: $SOKOVAN_TLS_CA, $SOKOVAN_TLS_PIN. */
void cli_tls_from_env(cli *c);
/* Resolve credentials and connect c->client. Returns CLI_OK or an exit
 * code after printing why. */
int cli_connect(cli *c);
/* The same, but while the manager cannot be reached (not running yet, a
 * restart) keep trying for up to wait_ms, backing off to 1 s. */
int cli_connect_within(cli *c, int wait_ms);
/* A failure to connect that a manager coming up would cure (reach.c). */
int cli_reach_transient(int rc, const skv_error *e);
/* "cannot reach the manager at E (from S): why", then what to check;
 * waited_ms > 0 says how long it kept trying. Returns CLI_FAIL. */
int cli_fail_reach(const cli *c, int rc, const skv_error *e,
                   int64_t waited_ms);
/* A call that prints the failure: CLI_OK or CLI_FAIL. */
int cli_call(cli *c, skv_proto_type type, const void *body, void *reply);
/* For idempotent requests (reads, submit with a client token): when the
 * connection breaks after it was once established, reconnect and send
 * again for up to CLI_RETRY_MS. Returns the library code (0 or SKV_E*),
 * the message in e; prints nothing. */
int cli_call_retry(cli *c, skv_proto_type type, const void *body,
                   void *reply, skv_error *e);

/* ---- output (json.c, table.c, fmt.c) ---- */
typedef struct cli_json {
    FILE *f;
    int depth;
    int first[64];
    int after_key;
} cli_json;

void cli_json_init(cli_json *j, FILE *f);
void cli_json_obj(cli_json *j);
void cli_json_obj_end(cli_json *j);
void cli_json_arr(cli_json *j);
void cli_json_arr_end(cli_json *j);
void cli_json_key(cli_json *j, const char *key);
void cli_json_str(cli_json *j, const char *s);       /* NULL -> null */
void cli_json_strn(cli_json *j, const char *s, size_t n);
void cli_json_int(cli_json *j, int64_t v);
void cli_json_uint(cli_json *j, uint64_t v);
void cli_json_bool(cli_json *j, int v);
void cli_json_qty(cli_json *j, const char *slot, skv_qty q);
void cli_json_slots(cli_json *j, const skv_slots *s); /* NULL -> null */
void cli_json_strs(cli_json *j, char *const *v, size_t n);
void cli_json_kv(cli_json *j, const skv_proto_kv *kv, size_t n);
/* Finish the document with a newline. */
void cli_json_end(cli_json *j);

typedef struct cli_table {
    size_t ncols;
    size_t nrows;               /* including the header */
    char **cells;               /* nrows * ncols, owned */
} cli_table;

void cli_table_init(cli_table *t, size_t ncols, const char *const *header);
/* Append a row of ncols strings (NULL prints as "-"); copied. */
void cli_table_row(cli_table *t, const char *const *cells);
void cli_table_print(const cli_table *t, FILE *f);
void cli_table_free(cli_table *t);

/* The one sanitizer of text output (clean.c): control characters, C1
 * controls and invalid UTF-8 of a user's or the manager's string as
 * "\xNN". cli_clean truncates into buf; cli_clean_dup allocates (exits on
 * out of memory). NULL reads as "". */
const char *cli_clean(char *buf, size_t n, const char *s);
char *cli_clean_dup(const char *s);
void cli_put_clean(FILE *f, const char *s);
/* vfprintf, the whole result sanitized (messages echoing names). */
void cli_vprint_clean(FILE *f, const char *fmt, va_list ap);
/* One line: the formatted text sanitized, then a newline. */
void cli_line(FILE *f, const char *fmt, ...) SKV_PRINTF(2, 3);
/* Length of the valid UTF-8 sequence at p, 0 when invalid (json.c). */
size_t cli_utf8_len(const unsigned char *p, size_t left);

/* The kind a slot name has by default (BYTES for mem and *.mem). */
skv_slot_kind cli_slot_kind(const char *slot);
/* "cpu=1,mem=1g" (or "-"); buf of at least 512 bytes. */
const char *cli_fmt_slots(char *buf, size_t n, const skv_slots *s);
const char *cli_fmt_qty(char *buf, size_t n, const char *slot, skv_qty q);
/* "2026-11-22T08:10:44.123Z" or "-" for 0. */
const char *cli_fmt_time(char *buf, size_t n, int64_t ms);
/* "5s", "3m", "2h", "4d" since ms ("-" for 0). */
const char *cli_fmt_age(char *buf, size_t n, int64_t ms);
/* A duration the same way ("90s", "3m", ...); negative counts as 0. */
const char *cli_fmt_span(char *buf, size_t n, int64_t span_ms);
const char *cli_fmt_bytes(char *buf, size_t n, uint64_t bytes);
int64_t cli_now_ms(void);
void cli_sleep_ms(int ms);

/* JSON of protocol structures (json_objs.c). */
void cli_json_session(cli_json *j, const skv_proto_session_info *s);

/* The single positional id of show/logs/terminate (usage error when a
 * second one comes). */
int cli_take_id(cli *c, const char **id_out, const char *val);

/* ---- commands ---- */
int cli_cmd_run(cli *c, int argc, char **argv);
int cli_cmd_ps(cli *c, int argc, char **argv);
int cli_cmd_show(cli *c, int argc, char **argv);
int cli_cmd_logs(cli *c, int argc, char **argv);
int cli_cmd_terminate(cli *c, int argc, char **argv);
int cli_cmd_agents(cli *c, int argc, char **argv);
/* The agents table (or JSON) of an agent.list.reply (cmd_cluster.c). */
void cli_agents_out(const cli *c, const skv_proto_agent_list_reply *r);
int cli_cmd_images(cli *c, int argc, char **argv);
int cli_cmd_admin(cli *c, int argc, char **argv);
int cli_cmd_vfolder(cli *c, int argc, char **argv);
/* Service apps (cmd_app.c, app_tunnel.c). */
int cli_cmd_app_token(cli *c, int argc, char **argv);
int cli_cmd_app(cli *c, int argc, char **argv);
int cli_cmd_ssh(cli *c, int argc, char **argv);     /* cmd_ssh.c */
/* The listener of `sokovan app` on bind ("ADDR:PORT", port 0: any; the
 * port taken in *port), each connection tunnelled through the app proxy
 * to sid's service svc with token; served by uv_default_loop() once it
 * runs. One per process; cli_tunnel_done frees what it keeps. */
int cli_tunnel_listen(const char *sid, const char *svc, const char *token,
                      const char *bind, unsigned *port);
void cli_tunnel_done(void);
/* $SOKOVAN_PROXY_URL, else http://127.0.0.1:8090. */
const char *cli_proxy_url(void);
void cli_show_services(const skv_proto_session_info *s);
int cli_app_token(cli *c, const char *sid, const char *svc, uint32_t ttl_s,
                  skv_proto_app_token_reply *r);
int cli_cmd_exec(cli *c, int argc, char **argv);   /* cmd_exec.c */
int cli_cmd_shell(cli *c, int argc, char **argv);

/* Follow a session to its end, streaming the main kernel's output;
 * returns the exit code `run --wait` exits with. */
int cli_wait_session(cli *c, const char *session_id);
/* Copy a kernel's stream from *offset; follow: until eof. */
int cli_stream_logs(cli *c, const char *sid, const char *kernel,
                    const char *stream, int follow, FILE *out);

#endif
