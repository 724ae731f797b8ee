/* The agent object: options, opening (node, runtime, image store, restore
 * of the kernels a previous agent left) and the manager connection's
 * frames.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"

static int check_options(const skv_agent_options *o, skv_error *err)
{
    /* Version 1 ends before `accelerators`, version 2 before `run_dir`,
     * version 3 before `log_max_bytes`. */
    if (o->version < 1 || o->version > SKV_AGENT_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "agent options: version %u, this "
                        "library knows 1..%u", o->version,
                        SKV_AGENT_OPTIONS_VERSION);
    size_t n = o->agent_id ? strlen(o->agent_id) : 0;
    if (n == 0 || n > 63)
        return skv__err(err, SKV_EINVAL, "agent id must have 1..63 "
                        "characters");
    for (size_t i = 0; i < n; i++) {
        char c = o->agent_id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-'))
            return skv__err(err, SKV_EINVAL, "agent id '%s': only "
                            "[A-Za-z0-9_.-] allowed", o->agent_id);
    }
    if (!o->access_key || !*o->access_key || !o->secret_key ||
        !*o->secret_key)
        return skv__err(err, SKV_EINVAL, "agent '%s': access_key and "
                        "secret_key are required", o->agent_id);
    if (!o->state_dir || o->state_dir[0] != '/')
        return skv__err(err, SKV_EINVAL, "agent state_dir must be an "
                        "absolute path (got '%s')",
                        o->state_dir ? o->state_dir : "(none)");
    const char *run = o->version >= 3 ? o->run_dir : NULL;
    if (run && run[0] != '/')
        return skv__err(err, SKV_EINVAL, "agent run_dir must be an absolute "
                        "path (got '%s')", run);
    if (o->version >= 3 && (o->create_threads < -1 ||
                            o->create_threads > 64))
        return skv__err(err, SKV_EINVAL, "agent create_threads: %d is not "
                        "-1 (none), 0 (default) or 1..64", o->create_threads);
    if (o->version >= 4 && o->log_max_bytes &&
        o->log_max_bytes < SKV_AGENT_LOG_MAX_BYTES_MIN)
        return skv__err(err, SKV_EINVAL, "agent log_max_bytes: %llu is below "
                        "%u (0: the default)",
                        (unsigned long long)o->log_max_bytes,
                        SKV_AGENT_LOG_MAX_BYTES_MIN);
    if (o->version >= 5 && o->sessions_pids_max < -1)
        return skv__err(err, SKV_EINVAL, "agent sessions_pids_max: %lld is "
                        "not -1 (leave alone), 0 (default) or a count",
                        (long long)o->sessions_pids_max);
    if (o->version >= 5)
        return skv_net_host_allow_check(o->host_allow, err);
    return 0;
}

static int copy_strings(skv_agent *a, const skv_agent_options *o)
{
    a->agent_id = skv__strdup(o->agent_id);
    a->access_key = skv__strdup(o->access_key);
    a->secret_key = skv__strdup(o->secret_key);
    a->state_dir = skv__strdup(o->state_dir);
    a->resource_group = skv__strdup(o->resource_group ? o->resource_group
                                                      : "default");
    a->address = skv__strdup(o->address ? o->address : "");
    a->labels = o->labels ? skv__strdup(o->labels) : NULL;
    const char *allow = o->version >= 5 ? o->host_allow : NULL;
    a->host_guard = o->version >= 5;
    a->host_allow = allow && *allow ? skv__strdup(allow) : NULL;
    return a->agent_id && a->access_key && a->secret_key && a->state_dir &&
                   a->resource_group && a->address &&
                   (a->labels || !o->labels) &&
                   (a->host_allow || !allow || !*allow)
               ? 0 : SKV_ENOMEM;
}

static int make_dir(const skv_agent *a, const char *rel, skv_error *err)
{
    char *p = rel ? skv__agent_path(a, rel) : skv__strdup(a->state_dir);
    if (!p)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    int rc = 0;
    if (mkdir(p, 0700) < 0 && errno != EEXIST)
        rc = skv__err_sys(err, errno, "agent: cannot create %s", p);
    skv__free(p);
    return rc;
}

/* One creator per CPU keeps them all busy while one more prepares; beyond
 * a few, each extra thread only adds pages the shim forks make
 * copy-on-write (bench/e2e: 3 threads best on 2 CPUs, 8 slower). */
static unsigned auto_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    n = n < 1 ? 1 : n + 1;
    return (unsigned)(n > SKV_AGENT_CREATE_THREADS_MAX_AUTO
                          ? SKV_AGENT_CREATE_THREADS_MAX_AUTO : n);
}

static int open_runtime(skv_agent *a, const skv_agent_options *o,
                        skv_error *err)
{
    const char *run = o->version >= 3 ? o->run_dir : NULL;
    char *cdir = run ? skv__strdup(run) : skv__agent_path(a, "containers");
    char *idir = o->image_dir ? skv__strdup(o->image_dir)
                              : skv__agent_path(a, "images");
    int rc = cdir && idir ? 0 : skv__err(err, SKV_ENOMEM, "out of memory");
    skv_runtime_options ro = SKV_RUNTIME_OPTIONS_INIT;
    ro.state_dir = cdir;
    ro.image_dir = idir;
    ro.backend = o->backend;
    ro.oci_runtime = o->oci_runtime;
    if (rc == 0)
        rc = skv_image_store_open(&a->images, idir, err);
    if (rc == 0)
        rc = skv_runtime_open(&a->rt, &ro, err);
    if (rc == 0)
        rc = skv_runtime_restore(a->rt, NULL, err);
    int nt = o->version >= 3 ? o->create_threads : 0;
    if (rc == 0 && nt >= 0)
        rc = skv__agent_creator_open(a, &ro, nt ? (unsigned)nt
                                                : auto_threads(), err);
    skv__free(cdir);
    skv__free(idir);
    return rc;
}

int skv_agent_open(skv_agent **out, const skv_agent_options *opts,
                   skv_agent_send_fn send, void *payload, int64_t now_ms,
                   skv_error *err)
{
    if (!out || !opts || !send)
        return skv__err(err, SKV_EINVAL, "skv_agent_open: %s is NULL",
                        !out ? "out" : !opts ? "opts" : "send");
    int rc = check_options(opts, err);
    /* The sessions' budget is checked before anything is made. */
    skv_cgroup_limits budget;
    bool limit = false;
    if (rc == 0)
        rc = skv__agent_host_budget(opts, &budget, &limit, err);
    if (rc)
        return rc;
    skv_agent *a = skv__calloc(1, sizeof(*a));
    if (!a || copy_strings(a, opts)) {
        skv_agent_free(a);
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    }
    a->send = send;
    a->payload = payload;
    if (opts->version >= 3) {
        a->wake = opts->wake;
        a->wake_payload = opts->wake_payload;
    }
    if (opts->version >= 4)
        a->log_max_bytes = opts->log_max_bytes;
    a->poll_ms = opts->poll_interval_ms ? opts->poll_interval_ms : 20;
    a->stats_ms = opts->stats_interval_ms ? opts->stats_interval_ms : 5000;
    a->hb_ms = SKV__AGENT_DEFAULT_HEARTBEAT_MS;
    a->next_poll = a->next_prune = now_ms;
    static const char *const dirs[] = {NULL, "kernels", "logs", "ssh"};
    skv__agent_net_prefix(a);
    for (size_t i = 0; rc == 0 && i < SKV__ARRAY_LEN(dirs); i++)
        rc = make_dir(a, dirs[i], err);
    if (rc == 0)
        rc = skv__agent_setup_node(a, opts, err);
    if (rc == 0 && limit)
        rc = skv__agent_host_limits(a, &budget, err);
    if (rc == 0)
        rc = open_runtime(a, opts, err);
    if (rc == 0)
        rc = skv__agent_net_load(a, err);
    if (rc == 0)
        rc = skv__agent_records_restore(a, now_ms, err);
    /* Networks of sessions that ended while the agent was away. */
    if (rc == 0)
        skv__agent_net_cleanup(a);
    if (rc) {
        skv_agent_free(a);
        return rc;
    }
    skv__log(SKV_LOG_INFO, "agent", "agent %s: %lld milli-cores, %lld bytes, "
             "%zu accelerators, %zu kernels restored", a->agent_id,
             (long long)a->cpu_cap, (long long)a->mem_cap, a->ndevs, a->nk);
    *out = a;
    return 0;
}

void skv_agent_free(skv_agent *a)
{
    if (!a)
        return;
    /* Execs first: their commands die with them (no process, descriptor
     * or terminal outlives the agent object). */
    skv__agent_execs_end(a, NULL, "the agent shut down", false, 0);
    skv__free(a->ex);
    skv__agent_creator_close(a);
    for (size_t i = 0; i < a->nk; i++)
        skv__agent_kernel_free(a->k[i]);
    skv__free(a->k);
    skv__agent_net_free(a);
    skv_runtime_free(a->rt);
    skv_image_store_free(a->images);
    skv__agent_free_node(a);
    if (a->secret_key)
        skv_auth_wipe(a->secret_key, strlen(a->secret_key));
    skv__free(a->agent_id);
    skv__free(a->access_key);
    skv__free(a->secret_key);
    skv__free(a->state_dir);
    skv__free(a->resource_group);
    skv__free(a->address);
    skv__free(a->labels);
    skv__free(a->health_sent);
    skv__free(a->host_allow);
    skv__free(a);
}

int skv_agent_connected(skv_agent *a, int64_t now_ms, skv_error *err)
{
    if (!a)
        return skv__err(err, SKV_EINVAL, "skv_agent_connected: agent is "
                        "NULL");
    /* Creates in flight end first (their answers, meant for the previous
     * connection, are dropped), so the registration lists their kernels. */
    a->connected = false;
    skv__agent_jobs_finish(a, true, now_ms);
    skv__agent_execs_end(a, NULL, "the connection to the manager was lost",
                         false, now_ms);
    a->connected = true;
    a->registered = false;
    return skv__agent_send_register(a, now_ms, err);
}

void skv_agent_disconnected(skv_agent *a, int64_t now_ms)
{
    if (!a)
        return;
    a->connected = false;
    a->registered = false;
    /* An exec streams to one client through this connection: with it gone
     * nobody reads its output or sends its input, so it ends. */
    skv__agent_execs_end(a, NULL, "the connection to the manager was lost",
                         false, now_ms);
}

size_t skv_agent_kernel_count(const skv_agent *a)
{
    return a ? a->nk + a->njobs : 0;
}

int skv_agent_import_image(skv_agent *a, const char *name, const char *source,
                           skv_error *err)
{
    if (!a || !name || !source)
        return skv__err(err, SKV_EINVAL, "skv_agent_import_image: %s is NULL",
                        !a ? "agent" : !name ? "name" : "source");
    return skv_image_import(a->images, name, source, SKV_IMAGE_FORMAT_AUTO,
                            err);
}
