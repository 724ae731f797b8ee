/* sokovan-agent: the node agent daemon. The logic is the library's
 * skv_agent; this program reads the agent's key file, imports the images
 * asked for, keeps a connection to the manager up (reconnecting with
 * backoff) and wires frames, the send callback and ticks to it. With
 * metrics_listen it serves /metrics over HTTP, updated once a second
 * (daemons/common/metrics_loop.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "exec_watch.h"
#include "sokovan/agent.h"
#include "sokovan/auth.h"
#include "sokovan/client.h"

#define PROG "sokovan-agent"
#define TICK_MAX_MS 1000

typedef struct agent_daemon {
    skvd_config cfg;
    uv_loop_t loop;
    skvd_driver drv;
    /* Wake-up from the agent's creator threads (wake_cb). Unreferenced, so
     * it never keeps the loop running; wake_open (under wake_mu) says
     * whether it may still be signalled. */
    uv_async_t wake;
    uv_mutex_t wake_mu;
    bool wake_open;
    skv_agent *a;
    exec_watch execs;           /* exec descriptors on the loop */
    char access_key[SKV_AUTH_ACCESS_KEY_MAX];
    char secret_key[SKV_AUTH_SECRET_KEY_MAX];
} agent_daemon;

static int send_cb(const void *frame, size_t len, void *payload)
{
    agent_daemon *d = payload;
    skvd_conn *c = skvd_connect_conn(&d->drv.net);
    return c ? skvd_conn_send(c, frame, len) : -1;
}

static int on_open(skvd_conn *c, void *ctx)
{
    agent_daemon *d = ctx;
    skv_error e = SKV_ERROR_INIT;
    (void)c;
    if (skv_agent_connected(d->a, skvd_now_ms(), &e)) {
        skvd_log(SKV_LOG_WARN, "registration not sent: %s", e.message);
        skv_agent_disconnected(d->a, skvd_now_ms());
        return -1;
    }
    skvd_driver_poke(&d->drv);
    return 0;
}

static int on_frame(skvd_conn *c, const void *p, size_t len, void *ctx)
{
    agent_daemon *d = ctx;
    skv_error e = SKV_ERROR_INIT;
    (void)c;
    int rc = skv_agent_handle_frame(d->a, p, len, skvd_now_ms(), &e);
    if (rc < 0)
        skvd_log(SKV_LOG_WARN, "from the manager: %s: reconnecting",
                 e.message);
    return rc;
}

static void on_batch(void *ctx)
{
    skvd_driver_poke(&((agent_daemon *)ctx)->drv);
}

/* Exec output went out: the connection writes it after this iteration. */
static void exec_poke(void *ctx)
{
    skvd_driver_poke(&((agent_daemon *)ctx)->drv);
}

static void on_close(skvd_conn *c, void *ctx)
{
    agent_daemon *d = ctx;
    (void)c;
    skv_agent_disconnected(d->a, skvd_now_ms());
}

static int tick(void *obj, int64_t now_ms, skv_error *err)
{
    return skv_agent_tick(obj, now_ms, err);
}

static int64_t next_tick(const void *obj, int64_t now_ms)
{
    return skv_agent_next_tick_ms(obj, now_ms);
}

/* On a creator thread: a container was created; tick soon. */
static void wake_cb(void *payload)
{
    agent_daemon *d = payload;
    uv_mutex_lock(&d->wake_mu);
    if (d->wake_open)
        uv_async_send(&d->wake);
    uv_mutex_unlock(&d->wake_mu);
}

static void on_wake(uv_async_t *h)
{
    skvd_driver_poke(&((agent_daemon *)h->data)->drv);
}

static int wake_init(agent_daemon *d)
{
    if (uv_mutex_init(&d->wake_mu))
        return -1;
    if (uv_async_init(&d->loop, &d->wake, on_wake)) {
        uv_mutex_destroy(&d->wake_mu);
        return -1;
    }
    d->wake.data = d;
    uv_unref((uv_handle_t *)&d->wake);
    d->wake_open = true;
    return 0;
}

/* Before the loop's last run; the creator threads may still call
 * wake_cb (skv_agent_free waits for them), which then does nothing. */
static void wake_close(agent_daemon *d)
{
    uv_mutex_lock(&d->wake_mu);
    d->wake_open = false;
    uv_mutex_unlock(&d->wake_mu);
    uv_close((uv_handle_t *)&d->wake, NULL);
}

static int collect(void *obj, skv_metrics *reg, int64_t now_ms,
                   skv_error *err)
{
    return skv_agent_metrics_collect(obj, reg, now_ms, err);
}

/* The manager writes the key file on its first start: a cluster started
 * all at once may run the agent first, so wait a little for it. */
static int read_keys(agent_daemon *d)
{
    const skvd_agent_conf *c = &d->cfg.agent;
    skv_error e = SKV_ERROR_INIT;
    int64_t deadline = skvd_now_ms() + (int64_t)c->key_wait_ms;
    bool told = false;
    for (;;) {
        if (access(c->key_file, F_OK) == 0 || errno != ENOENT ||
            skvd_now_ms() >= deadline)
            break;
        if (!told)
            skvd_log(SKV_LOG_INFO, "waiting for key file %s", c->key_file);
        told = true;
        usleep(100 * 1000);
    }
    if (skv_client_read_keyfile(d->access_key, d->secret_key, c->key_file,
                                &e)) {
        skvd_log(SKV_LOG_ERROR, "key file %s: %s (the manager writes "
                 "<data_dir>/agents/<id>.key for its bootstrap_agents)",
                 c->key_file, e.message);
        return -1;
    }
    return 0;
}

static int import_images(agent_daemon *d)
{
    const skvd_agent_conf *c = &d->cfg.agent;
    for (size_t i = 0; i < c->n_images; i++) {
        skv_error e = SKV_ERROR_INIT;
        char name[256];
        const char *eq = strchr(c->images[i], '=');
        snprintf(name, sizeof(name), "%.*s", (int)(eq - c->images[i]),
                 c->images[i]);
        int rc = skv_agent_import_image(d->a, name, eq + 1, &e);
        if (rc == SKV_EEXIST) {
            /* A restarted agent finds its images still in the store. */
            skvd_log(SKV_LOG_INFO, "image %s already in the store: kept "
                     "(remove it from the image dir to import again)", name);
            continue;
        }
        if (rc) {
            skvd_log(SKV_LOG_ERROR, "import of image %s from %s: %s", name,
                     eq + 1, e.message);
            return -1;
        }
        skvd_log(SKV_LOG_INFO, "imported image %s from %s", name, eq + 1);
    }
    return 0;
}

static int open_agent(agent_daemon *d)
{
    const skvd_agent_conf *c = &d->cfg.agent;
    skv_agent_options o = SKV_AGENT_OPTIONS_INIT;
    skv_error e = SKV_ERROR_INIT;
    char why[320];
    if (read_keys(d))
        return -1;
    o.agent_id = c->agent_id;
    o.access_key = d->access_key;
    o.secret_key = d->secret_key;
    o.state_dir = c->state_dir;
    o.run_dir = c->run_dir;
    o.image_dir = c->image_dir;
    o.resource_group = c->resource_group;
    o.address = c->address;
    o.backend = c->backend;
    o.oci_runtime = c->oci_runtime;
    o.topology_xml = c->topology_xml;
    o.plugins = c->plugins;
    o.cpus = c->cpus;
    o.memory_bytes = c->memory;
    o.labels = c->labels;
    o.stats_interval_ms = (uint32_t)c->stats_interval_ms;
    o.poll_interval_ms = (uint32_t)c->poll_interval_ms;
    o.create_threads = (int)c->create_threads;
    o.log_max_bytes = c->log_max_bytes;
    o.host_allow = c->host_allow;
    o.sessions_pids_max = (int64_t)c->sessions_pids_max;
    o.sessions_memory_reserve = c->sessions_memory_reserve;
    o.sessions_cpu_reserve = (uint32_t)c->sessions_cpu_reserve;
    o.wake = wake_cb;
    o.wake_payload = d;
    if (skvd_mkdirs_parent(c->state_dir, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "state_dir: %s", why);
        return -1;
    }
    if (skvd_mkdirs_parent(c->run_dir, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "run_dir: %s", why);
        return -1;
    }
    if (skv_agent_open(&d->a, &o, send_cb, d, skvd_now_ms(), &e)) {
        skvd_log(SKV_LOG_ERROR, "cannot open agent %s in %s: %s",
                 c->agent_id, c->state_dir, e.message);
        return -1;
    }
    if (import_images(d))
        return -1;
    exec_watch_init(&d->execs, &d->loop, d->a, exec_poke, d);
    return 0;
}

static int start_io(agent_daemon *d)
{
    const skvd_agent_conf *c = &d->cfg.agent;
    char why[320];
    skvd_net_cbs cbs = {on_open, on_frame, on_batch, on_close};
    if (skvd_driver_init(&d->drv, &d->loop, &cbs, d, c->max_frame,
                         c->max_queue, TICK_MAX_MS))
        return -1;
    if (c->pidfile && (skvd_mkdirs_parent(c->pidfile, why, sizeof(why)) ||
                       skvd_pidfile_write(c->pidfile, why, sizeof(why)))) {
        skvd_log(SKV_LOG_ERROR, "%s", why);
        return -1;
    }
    if (skvd_metrics_start(&d->drv.metrics, c->metrics_listen, collect, d->a))
        return -1;
    if ((c->tls_ca || c->tls_pin) &&
        skvd_tls_client_ctx(&d->drv.net.tls_connect, c->tls_ca, c->tls_pin,
                            why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "manager %s: %s", c->manager, why);
        return -1;
    }
    if (skvd_connect_start(&d->drv.net, c->manager, c->reconnect_min_ms,
                           c->reconnect_max_ms, why, sizeof(why))) {
        skvd_log(SKV_LOG_ERROR, "manager %s: %s", c->manager, why);
        return -1;
    }
    skvd_driver_bind(&d->drv, tick, next_tick, d->a);
    return 0;
}

static int run(agent_daemon *d)
{
    int rc = SKVD_EXIT_OK;
    if (uv_loop_init(&d->loop)) {
        skvd_log(SKV_LOG_ERROR, "cannot create the event loop");
        return SKVD_EXIT_FAIL;
    }
    if (wake_init(d)) {
        skvd_log(SKV_LOG_ERROR, "cannot create the wake-up handle");
        uv_loop_close(&d->loop);
        return SKVD_EXIT_FAIL;
    }
    if (open_agent(d)) {
        wake_close(d);
        exec_watch_close(&d->execs);
        skvd_loop_drain(&d->loop);
        skv_agent_free(d->a);
        uv_mutex_destroy(&d->wake_mu);
        return SKVD_EXIT_FAIL;
    }
    if (start_io(d)) {
        rc = SKVD_EXIT_FAIL;
        skvd_driver_stop(&d->drv);
    } else {
        skvd_log(SKV_LOG_INFO, "agent %s ready (state dir %s, run dir %s, "
                 "manager %s)", d->cfg.agent.agent_id, d->cfg.agent.state_dir,
                 d->cfg.agent.run_dir, d->cfg.agent.manager);
        uv_run(&d->loop, UV_RUN_DEFAULT);
    }
    wake_close(d);
    exec_watch_close(&d->execs);
    skvd_loop_drain(&d->loop);
    skvd_net_release(&d->drv.net);
    skvd_metrics_release(&d->drv.metrics);
    /* Containers keep running under their supervisors: a restarted agent
     * re-attaches to them. */
    skv_agent_free(d->a);
    uv_mutex_destroy(&d->wake_mu);
    skvd_pidfile_remove(d->cfg.agent.pidfile);
    skvd_log(SKV_LOG_INFO, "stopped");
    return rc;
}

int main(int argc, char **argv)
{
    static agent_daemon d;
    if (skvd_config_init(&d.cfg))
        return SKVD_EXIT_FAIL;
    int rc = skvd_args_parse(&d.cfg, SKVD_ROLE_AGENT, PROG,
                             "The sokovan node agent: registers this node "
                             "with the manager and runs its kernels.",
                             argc, argv);
    if (rc < 0) {
        skvd_log_init(PROG, (skv_log_level)d.cfg.agent.log_level);
        rc = run(&d);
    }
    /* The secret stays in memory no longer than needed. */
    explicit_bzero(d.secret_key, sizeof(d.secret_key));
    skvd_config_free(&d.cfg);
    return rc;
}
