/* session.submit: authorize, validate, resolve defaults into the body,
 * insert the session and its kernels, queue it in the scheduler and answer
 * only after COMMIT. A repeated client_token returns the existing session.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "mgr_int.h"
#include "sokovan/node.h"
#include "mgr_vfolder.h"
#include "mgr_app.h"

static int set_str(char **field, const char *value, skv_error *err)
{
    if (*field == value)
        return 0;
    char *d = skv__strdup(value);
    if (!d)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    skv__free(*field);
    *field = d;
    return 0;
}

/* Fill the defaults in so the stored body says exactly what was accepted. */
static int resolve(skv_manager *m, skv_proto_session_submit *s,
                   const skv_auth_principal *who, skv_error *err)
{
    int rc = set_str(&s->owner, s->owner ? s->owner : who->user, err);
    if (!rc)
        rc = set_str(&s->project, s->project ? s->project : "default", err);
    if (!rc)
        rc = set_str(&s->resource_group,
                     s->resource_group ? s->resource_group : m->default_group,
                     err);
    if (!rc)
        rc = set_str(&s->session_type,
                     s->session_type ? s->session_type : "batch", err);
    if (!rc)
        rc = set_str(&s->cluster_mode,
                     s->cluster_mode ? s->cluster_mode : "single-node", err);
    if (!rc && s->cluster_size == 0)
        s->cluster_size = s->n_kernels > 1 ? (uint32_t)s->n_kernels : 1;
    return rc;
}

/* A session that names no NUMA policy gets its group's (admin schema
 * step 6; "prefer-single-node" unless set), once admission has found the
 * group, so the stored body says which policy the agent applies. */
static int numa_default(skv_manager *m, skv_proto_session_submit *s,
                        skv_error *err)
{
    if (s->numa_policy)
        return 0;
    char pol[24];
    int rc = skv__mgr_admin_group_numa(&m->admin, pol, sizeof pol,
                                       s->resource_group, err);
    return rc ? rc : set_str(&s->numa_policy, pol, err);
}

static int basic_checks(const skv_proto_session_submit *s, skv_error *err)
{
    if (!s->image || !s->image[0])
        return skv__err(err, SKV_EINVAL, "image is required");
    if (s->n_command == 0 || !s->command[0] || !s->command[0][0])
        return skv__err(err, SKV_EINVAL, "command is required");
    skv_node_policy np;
    if (s->numa_policy && skv_node_policy_parse(&np, s->numa_policy, NULL))
        return skv__err(err, SKV_EINVAL, "numa_policy '%s': expected "
                        "prefer-single-node or interleaved", s->numa_policy);
    return skv__mgr_app_check_submit(s, err);
}

static int admission(skv_manager *m, const skv_proto_session_submit *s,
                     skv__mgr_user_info *ui, skv_error *err)
{
    int rc = skv__mgr_admin_user(&m->admin, ui, s->owner, err);
    if (!rc && !ui->active)
        rc = skv__err(err, SKV_EPERM, "user '%s' is not active", s->owner);
    if (!rc)
        rc = skv__mgr_admin_user_in_project(&m->admin, s->owner, s->project,
                                            err);
    if (!rc)
        rc = skv__mgr_admin_group_allows(&m->admin, s->owner,
                                         s->resource_group, s->session_type,
                                         err);
    skv__mgr_user_limits lim = {0};
    if (!rc)
        rc = skv__mgr_admin_user_limits(&m->admin, &lim, s->owner, err);
    if (!rc && lim.max_cluster_size && s->cluster_size > lim.max_cluster_size)
        rc = skv__err(err, SKV_ENOSPC, "cluster_size %u is above the limit "
                      "%u of the resource policy of '%s'", s->cluster_size,
                      lim.max_cluster_size, s->owner);
    return rc;
}

/* An earlier submission with the same client token, or "". */
static int by_token(skv_manager *m, const skv_proto_session_submit *s,
                    char *sid, char *status, skv_error *err)
{
    sid[0] = status[0] = 0;
    if (!s->client_token)
        return 0;
    return skv__mgr_store_session_by_token(m->store, s->owner,
                                           s->client_token, sid,
                                           SKV__MGR_ID_MAX, status, 32, err);
}

/* The session's rows with one slot request per kernel, in index order. */
static int insert(skv_manager *m, const skv_proto_session_submit *s,
                  const char *sid, const char *domain, const skv__mgr_spec *x,
                  int64_t now, skv_error *err)
{
    size_t n = x->spec.n_kernels;
    const skv_slots **req = skv__calloc(n ? n : 1, sizeof *req);
    if (!req)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        req[i] = x->kernels[i].request;
    int rc = skv__mgr_store_session_insert(m->store, s, sid, domain, req, n,
                                           now, err);
    if (!rc)
        rc = skv__mgr_vf_mounts_record(m, s, sid, err);
    skv__free(req);
    return rc;
}

static int reply_ref(skv_manager *m, const skv__mgr_call *c, const char *sid,
                     const char *status)
{
    skv_proto_session_ref ref = {(char *)sid, (char *)status};
    return skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_SESSION_SUBMIT_REPLY,
                          &ref);
}

static int admit(skv_manager *m, const skv__mgr_call *c,
                 skv_proto_session_submit *s, const char *domain,
                 skv_error *err)
{
    char sid[SKV__MGR_SID_MAX];
    skv__mgr_spec x;
    int rc = skv__mgr_session_id_new(m, c->now_ms, sid, err);
    if (!rc)
        rc = skv__mgr_spec_build(&x, s, sid, domain, s->project, s->owner,
                                 err);
    if (rc)
        return rc;
    rc = skv__mgr_spec_deps(m, &x, true, err);
    if (rc) {
        skv__mgr_spec_free(&x);
        return rc;
    }
    /* One unit of the tick's batch (mgr_batch.c): the reply waits for
     * the batch's commit in the outbox. */
    rc = skv__mgr_batch_unit(m, c->now_ms, err);
    if (rc) {
        skv__mgr_spec_free(&x);
        return rc;
    }
    bool queued = false;
    rc = insert(m, s, sid, domain, &x, c->now_ms, err);
    if (!rc)
        queued = !(rc = skv_sched_submit(m->sched, &x.spec, c->now_ms, err));
    if (queued)
        skv__mgr_deps_note(m, &x);
    skv__mgr_spec_free(&x);
    rc = skv__mgr_batch_unit_end(m, sid, rc, err);
    if (rc && queued) {
        skv_sched_cancel(m->sched, sid, c->now_ms, NULL);
        skv_sched_session_remove(m->sched, sid, NULL);
    }
    if (rc)
        return rc;
    m->dirty = true;
    skv__log(SKV_LOG_INFO, "manager", "session %s submitted by %s for %s",
             sid, c->who->user, s->owner);
    return reply_ref(m, c, sid, "PENDING");
}

int skv__mgr_on_submit(skv_manager *m, const skv__mgr_call *c, skv_error *err)
{
    skv_proto_session_submit *s = c->body;
    int rc = resolve(m, s, c->who, err);
    if (!rc)
        rc = skv_auth_may(c->who, SKV_AUTH_OP_SESSION_SUBMIT, s->owner, err);
    char sid[SKV__MGR_ID_MAX], status[32];
    if (!rc)
        rc = by_token(m, s, sid, status, err);
    if (!rc && sid[0])
        return reply_ref(m, c, sid, status);
    if (!rc)
        rc = skv__mgr_image_defaults(m, s, err);
    if (!rc)
        rc = basic_checks(s, err);
    skv__mgr_user_info ui;
    if (!rc)
        rc = admission(m, s, &ui, err);
    if (!rc)
        rc = numa_default(m, s, err);
    if (!rc)
        rc = skv__mgr_vf_mounts_resolve(m, s, err);
    if (!rc)
        rc = admit(m, c, s, ui.domain, err);
    return rc;
}
