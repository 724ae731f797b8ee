/* sokovan-manager: the cluster manager daemon. The logic is the library's
 * skv_manager; this program only wires it to sockets (daemons/common):
 * frames in -> skv_manager_handle_frame, the send callback -> the
 * connection's write queue, skv_manager_tick from a timer and once per
 * loop iteration that handled frames; with metrics_listen, /metrics over
 * HTTP updated once a second (daemons/common/metrics_loop.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <malloc.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "ha.h"
#include "sokovan/manager.h"

#define PROG "sokovan-manager"
#define TICK_MAX_MS 1000

typedef struct mgr_daemon {
    skvd_config cfg;
    uv_loop_t loop;
    skvd_driver drv;
    skv_manager *m;       /* NULL while standing by (ha.c) */
    mgr_ha ha;
    int exit_rc;
} mgr_daemon;

static int send_cb(uint64_t conn_id, const void *frame, size_t len,
                   void *payload)
{
    mgr_daemon *d = payload;
    skvd_conn *c = skvd_table_find(&d->drv.net, conn_id);
    return c ? skvd_conn_send(c, frame, len) : -1;
}

/* Hand a connection to the manager (on accept, or at election for those
 * a standby accepted). */
static int adopt(mgr_daemon *d, skvd_conn *c)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv_manager_conn_open(d->m, c->id, c->peer, &e)) {
        skvd_log(SKV_LOG_WARN, "conn %llu (%s) refused: %s",
                 (unsigned long long)c->id, c->peer, e.message);
        return -1;
    }
    /* Plain TCP may cross a network: no secrets in clear on it. */
    if (c->h.handle.type == UV_TCP && !c->tls &&
        !d->cfg.manager.allow_plaintext_secrets)
        skv_manager_conn_mark_plaintext(d->m, c->id, NULL);
    return 0;
}

static int on_open(skvd_conn *c, void *ctx)
{
    mgr_daemon *d = ctx;
    return d->m ? adopt(d, c) : 0;   /* a standby answers without state */
}

static int on_frame(skvd_conn *c, const void *p, size_t len, void *ctx)
{
    mgr_daemon *d = ctx;
    skv_error e = SKV_ERROR_INIT;
    if (!d->m)
        return mgr_ha_answer(&d->ha, c, p, len);
    int rc = skv_manager_handle_frame(d->m, c->id, p, len, skvd_now_ms(), &e);
    if (rc < 0)
        skvd_log(SKV_LOG_INFO, "conn %llu (%s): %s: closing it",
                 (unsigned long long)c->id, c->peer, e.message);
    else if (!c->authed && skv_manager_conn_authenticated(d->m, c->id) == 1)
        skvd_conn_authenticated(c);  /* lifts the pre-auth limits */
    return rc;
}

static void on_batch(void *ctx)
{
    skvd_driver_poke(&((mgr_daemon *)ctx)->drv);
}

static void on_close(skvd_conn *c, void *ctx)
{
    mgr_daemon *d = ctx;
    skvd_driver_poke(&d->drv);
    skv_manager_conn_close(d->m, c->id, skvd_now_ms());
}

static int tick(void *obj, int64_t now_ms, skv_error *err)
{
    return skv_manager_tick(obj, now_ms, err);
}

static int64_t next_tick(const void *obj, int64_t now_ms)
{
    return skv_manager_next_tick_ms(obj, now_ms);
}

static int collect(void *obj, skv_metrics *reg, int64_t now_ms,
                   skv_error *err)
{
    return skv_manager_metrics_collect(obj, reg, now_ms, err);
}

/* tls = on: the configured certificate, or the one in <data_dir>/tls
 * (generated on first start); the TCP listener accepts TLS only from
 * then on (before the loop runs, so before any connection). */
static int tls_ctx(mgr_daemon *d, char *why, size_t wl)
{
    const skvd_manager_conf *c = &d->cfg.manager;
    char host[256], cert[4200], key[4200];
    int port;
    if (c->tls_cert)
        return skvd_tls_server_ctx(&d->drv.net.tls_listen, c->tls_cert,
                                   c->tls_key, why, wl);
    snprintf(cert, sizeof(cert), "%s/tls/cert.pem", c->data_dir);
    snprintf(key, sizeof(key), "%s/tls/key.pem", c->data_dir);
    if (skvd_hostport_split(host, sizeof(host), &port, c->tcp, why, wl) ||
        skvd_tls_cert_ensure(cert, key, host, why, wl))
        return -1;
    return skvd_tls_server_ctx(&d->drv.net.tls_listen, cert, key, why, wl);
}

static int start_tls(mgr_daemon *d)
{
    char why[512];
    if (!d->cfg.manager.tls)
        return 0;
    if (tls_ctx(d, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        return -1;
    }
    skvd_log(SKV_LOG_INFO, "TCP listener %s: TLS only", d->cfg.manager.tcp);
    return 0;
}

/* The library refuses a database it cannot trust with SKV_ESTATE and
 * leaves it as it is; what to do next is the operator's call. */
static void recovery_steps(const char *dir)
{
    skvd_log(SKV_LOG_ERROR, "the manager database was left untouched. "
             "Recovery (docs/architecture.md, \"Recovering the manager "
             "database\"): 1) sokovan-manager --check --data-dir %s lists "
             "the damage; 2) restore the last backup ('sokovan admin backup' "
             "writes them): copy it to %s/manager.db with the manager "
             "stopped, removing manager.db-wal and manager.db-shm; or 3) "
             "move manager.db* and admin.key away and start once with "
             "--init to create a new, empty cluster", dir, dir);
}

/* storage_host values (checked when read) as the library's options. */
static int storage_hosts(const skvd_manager_conf *c, skvd_storage_host *parsed,
                         skv_manager_storage_host *out)
{
    char why[320];
    for (size_t i = 0; i < c->n_storage_hosts; i++) {
        if (skvd_storage_host_parse(&parsed[i], c->storage_hosts[i], why,
                                    sizeof(why))) {
            skvd_log(SKV_LOG_ERROR, "storage_host: %s", why);
            return -1;
        }
        out[i] = (skv_manager_storage_host){parsed[i].name, parsed[i].root,
                                            parsed[i].quota,
                                            parsed[i].shared};
    }
    return 0;
}

/* sched_plugins "A:B" (checked when read) as a list in the copy `buf`;
 * the count, or -1 out of memory. */
static int sched_plugins(const char *v, char **buf, const char ***out)
{
    *buf = NULL;
    *out = NULL;
    if (!v || !*v)
        return 0;
    size_t n = 1;
    for (const char *p = v; *p; p++)
        n += *p == ':';
    *buf = strdup(v);
    *out = calloc(n, sizeof(**out));
    if (!*buf || !*out)
        return -1;
    char *save = NULL;
    size_t i = 0;
    for (char *t = strtok_r(*buf, ":", &save); t && i < n;
         t = strtok_r(NULL, ":", &save))
        (*out)[i++] = t;
    return (int)i;
}

static int open_manager_with(mgr_daemon *d, skv_manager_options *o)
{
    const skvd_manager_conf *c = &d->cfg.manager;
    skv_error e = SKV_ERROR_INIT;
    char why[320];
    o->data_dir = c->data_dir;
    o->heartbeat_interval_ms = (uint32_t)c->heartbeat_interval_ms;
    o->heartbeat_timeout_ms = (uint32_t)c->heartbeat_timeout_ms;
    o->max_frame = (uint32_t)c->max_frame;
    o->max_clock_skew_ms = (int64_t)c->max_clock_skew_ms;
    o->default_resource_group = c->default_resource_group;
    o->default_scheduler = c->default_scheduler;
    o->default_selector = c->default_selector;
    o->bootstrap_agents = c->bootstrap_agents;
    o->max_sessions_per_pass = (uint32_t)c->max_sessions_per_pass;
    o->idle_cpu_percent = (uint32_t)c->idle_cpu_percent;
    o->cluster_cidr = c->cluster_cidr;
    o->init = c->init ? 1 : 0;
    o->backup_dir = c->backup_dir;
    o->store = c->store;
    o->lease = d->ha.lease;
    if (skvd_mkdirs_parent(c->data_dir, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "data_dir: %s", why);
        return -1;
    }
    if (skv_manager_open(&d->m, o, send_cb, d, skvd_now_ms(), &e)) {
        skvd_log(SKV_LOG_ERROR, "cannot open the manager in %s: %s",
                 c->data_dir, e.message);
        if (e.code == SKV_ESTATE)
            recovery_steps(c->data_dir);
        return -1;
    }
    return 0;
}

static int open_manager(mgr_daemon *d)
{
    const skvd_manager_conf *c = &d->cfg.manager;
    skv_manager_options o = SKV_MANAGER_OPTIONS_INIT;
    size_t nh = c->n_storage_hosts;
    skvd_storage_host *parsed = calloc(nh ? nh : 1, sizeof(*parsed));
    skv_manager_storage_host *hosts = calloc(nh ? nh : 1, sizeof(*hosts));
    int rc = parsed && hosts ? storage_hosts(c, parsed, hosts) : -1;
    o.storage_hosts = hosts;
    o.n_storage_hosts = nh;
    char *pbuf;
    const char **plugins;
    int np = sched_plugins(c->sched_plugins, &pbuf, &plugins);
    if (np < 0)
        skvd_log(SKV_LOG_ERROR, "sched_plugins: out of memory");
    o.sched_plugins = plugins;
    o.n_sched_plugins = np > 0 ? (size_t)np : 0;
    if (!rc && np >= 0)
        rc = open_manager_with(d, &o);
    free(pbuf);
    free(plugins);
    free(parsed);
    free(hosts);
    return rc < 0 || np < 0 ? -1 : rc;
}

/* What a connection may cost before and after authenticating, and who
 * may open the Unix socket (daemons/common/limits.c, listen.c). */
static int net_limits(mgr_daemon *d, char *why, size_t wl)
{
    const skvd_manager_conf *c = &d->cfg.manager;
    skvd_net *n = &d->drv.net;
    skvd_limits_conf lc = {c->preauth_frame_max, c->max_buffered_bytes,
                           c->frame_timeout_ms, c->auth_timeout_ms,
                           c->max_connections};
    n->unix_mode = (unsigned)c->socket_mode;
    if (c->socket_group &&
        skvd_group_gid(&n->unix_gid, c->socket_group, why, wl))
        return -1;
    return skvd_limits_start(n, &lc, why, wl);
}

/* Sockets first: a second manager on the same socket fails before it
 * touches the database. On failure the caller undoes it with
 * skvd_driver_stop(). */
static int start_io(mgr_daemon *d)
{
    const skvd_manager_conf *c = &d->cfg.manager;
    char why[320];
    skvd_net_cbs cbs = {on_open, on_frame, on_batch, on_close};
    if (skvd_driver_init(&d->drv, &d->loop, &cbs, d, c->max_frame,
                         c->max_queue, TICK_MAX_MS))
        return -1;
    skvd_net *n = &d->drv.net;
    if (net_limits(d, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        return -1;
    }
    if ((c->listen && skvd_listen_unix(n, c->listen, why, sizeof(why)))
        || (c->tcp && skvd_listen_tcp(n, c->tcp, why, sizeof(why)))) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        return -1;
    }
    if (c->pidfile && (skvd_mkdirs_parent(c->pidfile, why, sizeof(why)) ||
                       skvd_pidfile_write(c->pidfile, why, sizeof(why)))) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        return -1;
    }
    return 0;
}

/* The manager opened and serving: at start, or when a standby wins the
 * lease (then the connections it answered as a standby are handed over). */
static int serve(mgr_daemon *d)
{
    if (open_manager(d) ||
        skvd_metrics_start(&d->drv.metrics, d->cfg.manager.metrics_listen,
                           collect, d->m))
        return -1;
    for (skvd_conn *c = d->drv.net.conns, *next; c; c = next) {
        next = c->next;
        if (c->opened && !c->closing && adopt(d, c))
            skvd_conn_close(c, false);
    }
    skvd_driver_bind(&d->drv, tick, next_tick, d->m);
    skvd_log(SKV_LOG_INFO, "ready (data dir %s)", d->cfg.manager.data_dir);
    return 0;
}

static int ha_elected(void *ctx)
{
    return serve(ctx);
}

/* The lease is lost or unusable: no more frames, no more writes. */
static void ha_fatal(void *ctx)
{
    mgr_daemon *d = ctx;
    d->exit_rc = SKVD_EXIT_FAIL;
    mgr_ha_stop(&d->ha);
    skvd_driver_stop(&d->drv);
    uv_stop(&d->loop);
}

static int start(mgr_daemon *d)
{
    d->ha = (mgr_ha){.elected = ha_elected, .fatal = ha_fatal, .ctx = d};
    if (start_io(d) || start_tls(d))
        return -1;
    int rc = mgr_ha_start(&d->ha, &d->loop, &d->cfg.manager);
    if (rc < 0 || (rc == 1 && serve(d)))
        return -1;
    mgr_ha_arm(&d->ha);
    return 0;
}

static int run(mgr_daemon *d)
{
    if (uv_loop_init(&d->loop)) {
        skvd_log(SKV_LOG_ERROR, "cannot create the event loop");
        return SKVD_EXIT_FAIL;
    }
    d->exit_rc = SKVD_EXIT_OK;
    if (start(d)) {
        d->exit_rc = SKVD_EXIT_FAIL;
        mgr_ha_stop(&d->ha);
        skvd_driver_stop(&d->drv);
    } else {
        uv_run(&d->loop, UV_RUN_DEFAULT);
        mgr_ha_stop(&d->ha);
    }
    int rc = d->exit_rc;
    skvd_loop_drain(&d->loop);
    skvd_net_release(&d->drv.net);
    skv_manager_metrics_detach(d->m);
    skvd_metrics_release(&d->drv.metrics);
    skv_manager_free(d->m);
    mgr_ha_free(&d->ha);   /* after the manager: it borrows the lease */
    skvd_pidfile_remove(d->cfg.manager.pidfile);
    skvd_log(SKV_LOG_INFO, "stopped");
    return rc;
}

/* --check: the full integrity check, then exit. */
static int check(const skvd_manager_conf *c)
{
    char *report = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_manager_check(c->data_dir, &report, &e);
    if (rc == 0)
        printf("%s/manager.db: integrity_check ok\n", c->data_dir);
    else
        fprintf(stderr, PROG ": %s\n%s", e.message, report ? report : "");
    skv_free(report);
    return rc == 0 ? SKVD_EXIT_OK : SKVD_EXIT_FAIL;
}

/* The program is linked with tcmalloc (Makefile, MGR_ALLOC_LIBS), which
 * keeps freed spans for reuse itself and ignores mallopt; these settings
 * are for glibc's malloc, which sanitizer builds run on. File transfer
 * chunks (1 to 4 MiB) and their encodings are allocated and freed per
 * request. By default glibc hands a freed top of the heap back to the
 * kernel each time, and the next request faults it in again page by page
 * (a fifth of the manager's CPU in a download): keep up to 64 MiB, and
 * serve blocks below 32 MiB (max_frame's default is 16 MiB) from the heap. */
static void malloc_tune(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

/* SQLite counts every allocation it makes (for its memory statistics,
 * sqlite3_memory_used and sqlite3_status), under a global mutex, unless
 * told not to; nothing in the manager reads those counters, and the
 * bookkeeping was ~2 % of its CPU at 1,000 agents (bench/RESULTS.md,
 * h/sqlcpu14). The switch is process-wide and must come before SQLite
 * initializes, so it is the program's to flip: the library never calls
 * sqlite3_config; tests/check-sql.sh allows this call. */
static void sqlite_tune(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int main(int argc, char **argv)
{
    static mgr_daemon d;
    malloc_tune();
    sqlite_tune();
    if (skvd_config_init(&d.cfg))
        return SKVD_EXIT_FAIL;
    int rc = skvd_args_parse(&d.cfg, SKVD_ROLE_MANAGER, PROG,
                             "The sokovan cluster manager: keeps the cluster "
                             "state in SQLite, schedules sessions, drives "
                             "agents.", argc, argv);
    if (rc < 0 && !d.cfg.manager.listen && !d.cfg.manager.tcp) {
        fprintf(stderr, PROG ": listen and tcp are both disabled: nobody "
                "could reach the manager\n");
        rc = SKVD_EXIT_USAGE;
    }
    if (rc < 0 && d.cfg.manager.init && d.cfg.manager.check) {
        fprintf(stderr, PROG ": --init and --check exclude each other\n");
        rc = SKVD_EXIT_USAGE;
    }
    if (rc < 0 && d.cfg.manager.check) {
        rc = check(&d.cfg.manager);
    } else if (rc < 0) {
        skvd_log_init(PROG, (skv_log_level)d.cfg.manager.log_level);
        rc = run(&d);
    }
    skvd_config_free(&d.cfg);
    return rc;
}
