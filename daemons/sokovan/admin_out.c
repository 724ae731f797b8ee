/* Output of admin replies: a table, or {"<kind plural>": [...]} in JSON.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <string.h>

#include "admin.h"

static void kstr(cli_json *j, const char *k, const char *v)
{
    cli_json_key(j, k);
    cli_json_str(j, v);
}

static void kuint(cli_json *j, const char *k, uint64_t v)
{
    cli_json_key(j, k);
    cli_json_uint(j, v);
}

static void kbool(cli_json *j, const char *k, int v)
{
    cli_json_key(j, k);
    cli_json_bool(j, v);
}

static void doc_begin(cli_json *j, const char *plural)
{
    cli_json_init(j, stdout);
    cli_json_obj(j);
    cli_json_key(j, plural);
    cli_json_arr(j);
}

static void doc_end(cli_json *j)
{
    cli_json_arr_end(j);
    cli_json_obj_end(j);
    cli_json_end(j);
}

static const char *join(char *buf, size_t n, char *const *v, size_t count)
{
    buf[0] = 0;
    for (size_t i = 0; i < count; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", i ? "," : "", v[i]);
    }
    return buf;
}

static const char *yes(int v) { return v ? "yes" : "no"; }

void cli_admin_print_user(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_user_reply *r = &rp->user;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "users");
        for (size_t i = 0; i < r->n_users; i++) {
            const skv_proto_user *u = &r->users[i];
            cli_json_obj(&j);
            kstr(&j, "name", u->name);
            kstr(&j, "email", u->email);
            kstr(&j, "role", u->role);
            kstr(&j, "domain", u->domain);
            cli_json_key(&j, "projects");
            cli_json_strs(&j, u->projects, u->n_projects);
            kstr(&j, "resource_policy", u->resource_policy);
            kstr(&j, "description", u->description);
            kbool(&j, "active", u->active);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "ROLE", "DOMAIN", "PROJECTS",
        "POLICY", "EMAIL", "ACTIVE"};
    cli_table t;
    cli_table_init(&t, 7, hdr);
    for (size_t i = 0; i < r->n_users; i++) {
        const skv_proto_user *u = &r->users[i];
        char p[512];
        const char *row[] = {u->name, u->role, u->domain,
            join(p, sizeof p, u->projects, u->n_projects), u->resource_policy,
            u->email, yes(u->active)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

void cli_admin_print_keypair(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_keypair_reply *r = &rp->keypair;
    int secrets = 0;
    for (size_t i = 0; i < r->n_keypairs; i++)
        secrets |= r->keypairs[i].secret_key != NULL;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "keypairs");
        for (size_t i = 0; i < r->n_keypairs; i++) {
            const skv_proto_keypair *k = &r->keypairs[i];
            cli_json_obj(&j);
            kstr(&j, "access_key", k->access_key);
            if (k->secret_key)
                kstr(&j, "secret_key", k->secret_key);
            kstr(&j, "user", k->user);
            kstr(&j, "resource_policy", k->resource_policy);
            kbool(&j, "active", k->active);
            cli_json_key(&j, "created_ms");
            cli_json_int(&j, k->created_ms);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"ACCESS_KEY", "USER", "POLICY",
        "ACTIVE", "CREATED", "SECRET_KEY"};
    cli_table t;
    cli_table_init(&t, secrets ? 6 : 5, hdr);
    for (size_t i = 0; i < r->n_keypairs; i++) {
        const skv_proto_keypair *k = &r->keypairs[i];
        char tm[64];
        const char *row[] = {k->access_key, k->user, k->resource_policy,
            yes(k->active), cli_fmt_time(tm, sizeof tm, k->created_ms),
            k->secret_key};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    if (secrets)
        fputs("The secret key is shown only once: store it now.\n", stderr);
}

void cli_admin_print_project(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_project_reply *r = &rp->project;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "projects");
        for (size_t i = 0; i < r->n_projects; i++) {
            const skv_proto_project *p = &r->projects[i];
            cli_json_obj(&j);
            kstr(&j, "name", p->name);
            kstr(&j, "domain", p->domain);
            kstr(&j, "description", p->description);
            kstr(&j, "resource_policy", p->resource_policy);
            kbool(&j, "active", p->active);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "DOMAIN", "POLICY", "ACTIVE",
                                      "DESCRIPTION"};
    cli_table t;
    cli_table_init(&t, 5, hdr);
    for (size_t i = 0; i < r->n_projects; i++) {
        const skv_proto_project *p = &r->projects[i];
        const char *row[] = {p->name, p->domain, p->resource_policy,
                             yes(p->active), p->description};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

void cli_admin_print_domain(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_domain_reply *r = &rp->domain;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "domains");
        for (size_t i = 0; i < r->n_domains; i++) {
            const skv_proto_domain *d = &r->domains[i];
            cli_json_obj(&j);
            kstr(&j, "name", d->name);
            kstr(&j, "description", d->description);
            cli_json_key(&j, "resource_groups");
            cli_json_strs(&j, d->resource_groups, d->n_resource_groups);
            kbool(&j, "active", d->active);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "GROUPS", "ACTIVE",
                                      "DESCRIPTION"};
    cli_table t;
    cli_table_init(&t, 4, hdr);
    for (size_t i = 0; i < r->n_domains; i++) {
        const skv_proto_domain *d = &r->domains[i];
        char g[512];
        const char *row[] = {d->name, join(g, sizeof g, d->resource_groups,
                             d->n_resource_groups), yes(d->active),
                             d->description};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static const char *num_or_any(char *buf, size_t n, uint64_t v)
{
    if (v == 0)
        snprintf(buf, n, "unlimited");
    else
        snprintf(buf, n, "%" PRIu64, v);
    return buf;
}

void cli_admin_print_policy(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_resource_policy_reply *r = &rp->policy;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "policies");
        for (size_t i = 0; i < r->n_policies; i++) {
            const skv_proto_resource_policy *p = &r->policies[i];
            cli_json_obj(&j);
            kstr(&j, "name", p->name);
            cli_json_key(&j, "max_slots");
            cli_json_slots(&j, p->max_slots);
            kuint(&j, "max_concurrent_sessions", p->max_concurrent_sessions);
            kuint(&j, "max_pending_sessions", p->max_pending_sessions);
            kuint(&j, "max_cluster_size", p->max_cluster_size);
            kuint(&j, "max_session_lifetime_ms", p->max_session_lifetime_ms);
            kuint(&j, "idle_timeout_ms", p->idle_timeout_ms);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "MAX_SLOTS", "CONCURRENT",
        "PENDING", "CLUSTER_SIZE", "LIFETIME_MS", "IDLE_TIMEOUT_MS"};
    cli_table t;
    cli_table_init(&t, 7, hdr);
    for (size_t i = 0; i < r->n_policies; i++) {
        const skv_proto_resource_policy *p = &r->policies[i];
        char s[512], a[24], b[24], d[24], e[24], f[24];
        const char *row[] = {p->name, cli_fmt_slots(s, sizeof s, p->max_slots),
            num_or_any(a, sizeof a, p->max_concurrent_sessions),
            num_or_any(b, sizeof b, p->max_pending_sessions),
            num_or_any(d, sizeof d, p->max_cluster_size),
            num_or_any(e, sizeof e, p->max_session_lifetime_ms),
            num_or_any(f, sizeof f, p->idle_timeout_ms)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

/* "requeue after 30s". */
static const char *drain_text(char *buf, size_t n,
                              const skv_proto_resource_group *g)
{
    snprintf(buf, n, "%s after %llds", g->drain_action ? g->drain_action
             : "requeue", (long long)(g->drain_grace_ms / 1000));
    return buf;
}

void cli_admin_print_group(const cli *c, const admin_reply *rp)
{
    const skv_proto_admin_resource_group_reply *r = &rp->group;
    if (c->json) {
        cli_json j;
        doc_begin(&j, "groups");
        for (size_t i = 0; i < r->n_groups; i++) {
            const skv_proto_resource_group *g = &r->groups[i];
            cli_json_obj(&j);
            kstr(&j, "name", g->name);
            kstr(&j, "description", g->description);
            kstr(&j, "scheduler", g->scheduler);
            kstr(&j, "selector", g->selector);
            kstr(&j, "lost_batch_policy", g->lost_batch_policy);
            kuint(&j, "pending_timeout_ms", g->pending_timeout_ms);
            cli_json_key(&j, "session_types");
            cli_json_strs(&j, g->session_types, g->n_session_types);
            kbool(&j, "active", g->active);
            kstr(&j, "preemption", g->preemption);
            cli_json_key(&j, "preempt_min_runtime_ms");
            cli_json_int(&j, g->preempt_min_runtime_ms);
            kstr(&j, "preempt_mode", g->preempt_mode);
            kstr(&j, "preempt_order", g->preempt_order);
            kstr(&j, "drain_action", g->drain_action);
            cli_json_key(&j, "drain_grace_ms");
            cli_json_int(&j, g->drain_grace_ms);
            kstr(&j, "fault_action", g->fault_action);
            kstr(&j, "allow_unenforced_fractions",
                 g->allow_unenforced_fractions);
            cli_json_key(&j, "idle_timeout_ms");
            cli_json_int(&j, g->idle_timeout_ms);
            cli_json_key(&j, "max_lifetime_ms");
            cli_json_int(&j, g->max_lifetime_ms);
            cli_json_obj_end(&j);
        }
        doc_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "SCHEDULER", "SELECTOR",
        "LOST_BATCH", "PENDING_TIMEOUT_MS", "TYPES", "PREEMPTION", "DRAIN",
        "FAULT", "UNENFORCED", "IDLE_TIMEOUT_MS", "LIFETIME_MS", "ACTIVE",
        "DESCRIPTION"};
    cli_table t;
    cli_table_init(&t, 14, hdr);
    for (size_t i = 0; i < r->n_groups; i++) {
        const skv_proto_resource_group *g = &r->groups[i];
        char pt[24], ty[256], pe[96], dr[64], it[24], lt[24];
        snprintf(pe, sizeof pe, "%s", g->preemption ? g->preemption : "off");
        if (g->preemption && !strcmp(g->preemption, "on"))
            snprintf(pe, sizeof pe, "on (%s, min %llds, %s first)",
                     g->preempt_mode ? g->preempt_mode : "requeue",
                     (long long)(g->preempt_min_runtime_ms / 1000),
                     g->preempt_order ? g->preempt_order : "lowest-priority");
        const char *row[] = {g->name, g->scheduler, g->selector,
            g->lost_batch_policy,
            num_or_any(pt, sizeof pt, g->pending_timeout_ms),
            join(ty, sizeof ty, g->session_types, g->n_session_types),
            pe, drain_text(dr, sizeof dr, g), g->fault_action,
            g->allow_unenforced_fractions,
            num_or_any(it, sizeof it, (uint64_t)g->idle_timeout_ms),
            num_or_any(lt, sizeof lt, (uint64_t)g->max_lifetime_ms),
            yes(g->active), g->description};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}
