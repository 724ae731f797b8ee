/* skv_manager: open (database, admin plane, scheduler rebuild), free,
 * connections, and the counters.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "mgr_idle.h"
#include "store/store_uri.h"
#include "mgr_vfolder.h"
#include "mgr_metrics.h"

static int make_dir(const char *dir, skv_error *err)
{
    if (mkdir(dir, 0700) == 0 || errno == EEXIST)
        return 0;
    return skv__err_sys(err, errno, "manager: cannot create '%s'", dir);
}

static const char *o_store(const skv_manager_options *o)
{
    return o->version >= 4 ? o->store : NULL;
}

static int check_opts(const skv_manager_options *o, skv_manager_send_fn send,
                      skv_error *err)
{
    if (!o || !send)
        return skv__err(err, SKV_EINVAL, "manager_open: NULL options or send");
    if (o->version != 1 && (o->version < 3 ||
                             o->version > SKV_MANAGER_OPTIONS_VERSION))
        return skv__err(err, SKV_EVERSION, "manager options version %u, "
                        "expected 1..%u", o->version,
                        SKV_MANAGER_OPTIONS_VERSION);
    if (!o->data_dir || o->data_dir[0] != '/')
        return skv__err(err, SKV_EINVAL,
                        "manager: data_dir must be an absolute path");
    if (o->version >= 3 && o->backup_dir && o->backup_dir[0] != '/')
        return skv__err(err, SKV_EINVAL,
                        "manager: backup_dir must be an absolute path");
    if (o->version >= 3 && o->init > 1)
        return skv__err(err, SKV_EINVAL, "manager: init must be 0 or 1");
    if (o->max_frame > SKV_PROTO_MAX_FRAME_LIMIT)
        return skv__err(err, SKV_ERANGE, "manager: max_frame %u above %u",
                        o->max_frame, SKV_PROTO_MAX_FRAME_LIMIT);
    if (o->version >= 8 && o->idle_cpu_percent > 100000)
        return skv__err(err, SKV_ERANGE, "manager: idle_cpu_percent %u "
                        "above 100000", o->idle_cpu_percent);
    int rc = skv__mgr_store_uri_check(o_store(o), err);
    if (!rc && o->version >= 6 && o->lease &&
        !skv__mgr_store_uri_is_postgres(o_store(o)))
        rc = skv__err(err, SKV_EINVAL, "manager: a lease needs a PostgreSQL "
                      "store (SQLite serves one manager per data_dir)");
    return rc;
}

/* Before the admin plane creates or restores groups: a stored group's
 * selector may come from a plugin. */
static int load_sched_plugins(skv_manager *m, const skv_manager_options *o,
                              skv_error *err)
{
    if (o->version < 7 || !o->n_sched_plugins)
        return 0;
    if (!o->sched_plugins)
        return skv__err(err, SKV_EINVAL, "manager: n_sched_plugins %zu "
                        "with no sched_plugins", o->n_sched_plugins);
    for (size_t i = 0; i < o->n_sched_plugins; i++) {
        int rc = skv_sched_load_plugin(m->sched, o->sched_plugins[i], err);
        if (rc)
            return rc;
    }
    return 0;
}

static int make_parts(skv_manager *m, const skv_manager_options *o,
                      skv_error *err)
{
    skv_auth_verifier_options vo = SKV_AUTH_VERIFIER_OPTIONS_INIT;
    if (o->max_clock_skew_ms > 0)
        vo.max_skew_ms = o->max_clock_skew_ms;
    m->skew_ms = vo.max_skew_ms;
    const char *bd = o->version >= 3 ? o->backup_dir : NULL;
    m->backup_dir = bd ? skv__strdup(bd)
                       : skv__asprintf("%s/backups", m->data_dir);
    if (!m->backup_dir)
        return skv__err(err, SKV_ENOMEM, "manager_open: out of memory");
    int rc = skv_auth_verifier_new(&m->verifier, &vo, err);
    if (!rc)
        rc = skv_sched_new(&m->sched, NULL, err);
    if (!rc)
        rc = load_sched_plugins(m, o, err);
    if (rc)
        return rc;
    m->admin.sched = m->sched;
    m->admin.verifier = m->verifier;
    m->admin.data_dir = m->data_dir;
    skv__mgr_nonce_hook_admin(m);
    return make_dir(m->data_dir, err);
}

static int boot(skv_manager *m, const skv_manager_options *o, int64_t now,
                skv_error *err)
{
    skv__mgr_bootstrap b = {
        o->default_resource_group ? o->default_resource_group : "default",
        o->default_scheduler ? o->default_scheduler : "fifo",
        o->default_selector ? o->default_selector : SKV_SCHED_SELECTOR_AUTO,
        o->bootstrap_agents};
    int rc = skv__mgr_db_open(m, o->version >= 3 && o->init, err);
    if (!rc)
        rc = skv__mgr_net_open(m, o->version >= 2 ? o->cluster_cidr : NULL,
                               err);
    if (!rc)
        rc = skv__mgr_admin_bootstrap(&m->admin, &b, now, err);
    if (!rc)
        rc = skv__mgr_admin_load(&m->admin, err);
    if (!rc)
        rc = skv__mgr_nonce_restore(m, now, err);
    if (!rc)
        rc = skv__mgr_restore(m, now, err);
    return rc;
}

SKV_EXTERN int skv_manager_open(skv_manager **out,
                                const skv_manager_options *opts,
                                skv_manager_send_fn send, void *payload,
                                int64_t now_ms, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "manager_open: NULL out");
    int rc = check_opts(opts, send, err);
    if (rc)
        return rc;
    skv_manager *m = skv__calloc(1, sizeof *m);
    const char *grp = opts->default_resource_group
                          ? opts->default_resource_group : "default";
    bool pg = skv__mgr_store_uri_is_postgres(o_store(opts));
    if (!m || !(m->data_dir = skv__strdup(opts->data_dir)) ||
        !(m->default_group = skv__strdup(grp)) ||
        (pg && !(m->store_uri = skv__strdup(o_store(opts))))) {
        if (m) {
            skv__free(m->data_dir);
            skv__free(m->default_group);
        }
        skv__free(m);
        return skv__err(err, SKV_ENOMEM, "manager_open: out of memory");
    }
    m->send = send;
    m->payload = payload;

    m->hb_interval_ms = opts->heartbeat_interval_ms ? opts->heartbeat_interval_ms
                                                    : 1000;
    m->hb_timeout_ms = opts->heartbeat_timeout_ms ? opts->heartbeat_timeout_ms
                                                  : 10000;
    m->max_frame = opts->max_frame ? opts->max_frame
                                   : SKV_PROTO_DEFAULT_MAX_FRAME;
    m->max_per_pass = opts->max_sessions_per_pass;
    m->idle_cpu_percent = opts->version >= 8 && opts->idle_cpu_percent
                              ? opts->idle_cpu_percent : 5;
    m->st.version = SKV_MANAGER_STATS_VERSION;
    m->dirty = true;
    rc = opts->version >= 6 && opts->lease
             ? skv__mgr_lease_terms(opts->lease, &m->ha_epoch,
                                    &m->ha_lease_ms, err)
             : 0;
    if (!rc)
        rc = make_parts(m, opts, err);
    if (!rc)
        rc = boot(m, opts, now_ms, err);
    if (!rc)
        rc = skv__mgr_vf_open(m, opts, err);
    if (rc) {
        skv_manager_free(m);
        return rc;
    }
    skv__log(SKV_LOG_INFO, "manager", "opened %s", m->data_dir);
    *out = m;
    return 0;
}

SKV_EXTERN void skv_manager_free(skv_manager *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_agents; i++)
        skv__mgr_agent_clear(&m->agents[i]);
    skv__free(m->agents);
    skv__free(m->conns);
    skv__mgr_ix_free(m);
    skv__free(m->reqs);
    skv__mgr_drain_free(m);
    skv__mgr_execs_free(m);
    skv__mgr_idle_free(m);
    skv__mgr_batch_close(m);    /* commits what was accepted */
    skv__mgr_deps_free(m);
    skv__mgr_outbox_free(m);    /* sends nothing */
    skv__mgr_vf_close(m);       /* keeps resumable uploads' temp files */
    skv__mgr_db_close(m);
    skv__mgr_net_close(m);
    skv__mgr_metrics_free(m->metrics);
    skv_sched_free(m->sched);
    skv_auth_verifier_free(m->verifier);
    skv__free(m->nonces);
    skv__free(m->backup_dir);
    skv__free(m->data_dir);
    skv__free(m->store_uri);
    skv__free(m->default_group);
    skv__free(m);
}

SKV_EXTERN int skv_manager_conn_open(skv_manager *m, uint64_t conn_id,
                                     const char *peer, skv_error *err)
{
    if (!m || conn_id == 0)
        return skv__err(err, SKV_EINVAL, "conn_open: NULL manager or id 0");
    if (skv__mgr_conn_find(m, conn_id))
        return skv__err(err, SKV_EEXIST, "connection %llu is already open",
                        (unsigned long long)conn_id);
    skv__mgr_conn *n = skv__reallocarray(m->conns, m->n_conns + 1, sizeof *n);
    if (!n)
        return skv__err(err, SKV_ENOMEM, "conn_open: out of memory");
    m->conns = n;
    skv__mgr_conn *c = &m->conns[m->n_conns];
    memset(c, 0, sizeof *c);
    c->id = conn_id;
    if (skv__mgr_conn_ix_add(m, m->n_conns))
        return skv__err(err, SKV_ENOMEM, "conn_open: out of memory");
    m->n_conns++;
    snprintf(c->peer, sizeof c->peer, "%s", peer ? peer : "?");
    skv__log(SKV_LOG_DEBUG, "manager", "connection %llu from %s",
             (unsigned long long)conn_id, c->peer);
    return 0;
}

SKV_EXTERN int skv_manager_conn_mark_plaintext(skv_manager *m,
                                               uint64_t conn_id,
                                               skv_error *err)
{
    skv__mgr_conn *c = m ? skv__mgr_conn_find(m, conn_id) : NULL;
    if (!c)
        return skv__err(err, m ? SKV_ENOENT : SKV_EINVAL, "conn_mark_"
                        "plaintext: no open connection %llu",
                        (unsigned long long)conn_id);
    c->plaintext = true;
    return 0;
}

SKV_EXTERN void skv_manager_conn_close(skv_manager *m, uint64_t conn_id,
                                       int64_t now_ms)
{
    SKV__UNUSED(now_ms);
    skv__mgr_conn *c = m ? skv__mgr_conn_find(m, conn_id) : NULL;
    if (!c)
        return;
    if (c->agent_id[0]) {
        skv__mgr_agent *a = skv__mgr_agent_find(m, c->agent_id);
        if (a && a->conn == conn_id)
            a->conn = 0;
        skv__log(SKV_LOG_INFO, "manager", "agent %s disconnected",
                 c->agent_id);
    }
    skv__mgr_conn_ix_del(m, (size_t)(c - m->conns));
    *c = m->conns[--m->n_conns];
    skv__mgr_execs_conn_gone(m, conn_id);
    skv__mgr_reqs_conn_gone(m, conn_id);
    skv__mgr_vf_conn_gone(m, conn_id);
}

void skv__mgr_conn_authenticated(skv_manager *m, uint64_t conn_id)
{
    skv__mgr_conn *c = skv__mgr_conn_find(m, conn_id);
    if (c && !c->authenticated) {
        c->authenticated = true;
        skv__log(SKV_LOG_DEBUG, "manager", "connection %llu authenticated",
                 (unsigned long long)conn_id);
    }
}

SKV_EXTERN int skv_manager_conn_authenticated(const skv_manager *m,
                                              uint64_t conn_id)
{
    if (!m)
        return SKV_EINVAL;
    const skv__mgr_conn *c = skv__mgr_conn_find((skv_manager *)m, conn_id);
    return !c ? SKV_ENOENT : c->authenticated ? 1 : 0;
}

static void count_one(void *arg, const char *name, uint64_t n)
{
    skv_manager_stats *out = arg;
    skv_manager_session_state s;
    if (skv_manager_session_state_parse(&s, name, NULL) == 0)
        out->sessions_by_state[s] += n;    /* live and ended halves */
}

static void count_states(const skv_manager *m, skv_manager_stats *out)
{
    skv__mgr_store_count_states(m->store, count_one, out, NULL);
}

SKV_EXTERN int skv_manager_get_stats(const skv_manager *m,
                                     skv_manager_stats *out, skv_error *err)
{
    if (!m || !out)
        return skv__err(err, SKV_EINVAL, "get_stats: NULL argument");
    if (out->version < 1 || out->version > SKV_MANAGER_STATS_VERSION)
        return skv__err(err, SKV_EVERSION, "manager stats version %u, "
                        "expected 1..%u", out->version,
                        SKV_MANAGER_STATS_VERSION);
    /* A caller built for version 1 has a shorter structure. */
    size_t n = out->version >= 3   ? sizeof *out
               : out->version == 2 ? offsetof(skv_manager_stats,
                                              reclaimed_idle)
                                   : offsetof(skv_manager_stats, preemptions);
    unsigned v = out->version;
    skv_manager_stats st = m->st;
    memset(st.sessions_by_state, 0, sizeof st.sessions_by_state);
    st.agents_alive = st.agents_lost = 0;
    for (size_t i = 0; i < m->n_agents; i++) {
        st.agents_alive += m->agents[i].state == SKV__AGENT_ALIVE;
        st.agents_lost += m->agents[i].state == SKV__AGENT_LOST;
    }
    count_states(m, &st);
    memcpy(out, &st, n);
    out->version = v;
    return 0;
}
