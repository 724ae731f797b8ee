/* Quotas per resource group from the CLI: the quota flags of `admin
 * domain|project|user update NAME` (sent as one admin.quota request), and
 * `admin quota list|tree`.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin.h"

static const char quota_help[] =
    "usage: sokovan admin quota tree [--rg GROUP]\n"
    "       sokovan admin quota list [--rg GROUP] [--scope domain|project|"
    "user] [--owner NAME]\n"
    "  tree: per resource group, domains -> projects -> users with a quota\n"
    "  or a use there: USED, GUARANTEED, LIMIT, BORROW_LIMIT, BORROWED\n"
    "  (used beyond the guarantee) and LENT (idle guarantee its siblings\n"
    "  use now). Set quotas with\n"
    "  sokovan admin domain|project|user update NAME [--quota-rg GROUP]\n"
    "      --guaranteed SLOTS --limit SLOTS --borrow-limit SLOTS | "
    "--no-quota\n";

/* ---- the flags on domain, project and user ---- */

static int vec(cli *c, const char *opt, const char *val, skv_slots **slot,
               skv_slots **out)
{
    skv_error e = SKV_ERROR_INIT;
    skv_slots_free(*slot);
    *slot = NULL;
    /* "none" clears the vector (an empty one on the wire) */
    int rc = strcmp(val, "none") == 0 ? skv_slots_new(slot, &e)
                                      : skv_slots_parse(slot, val, NULL, &e);
    if (rc)
        return cli_usage(c, "%s: %s", opt, e.message);
    if (strcmp(val, "none") != 0 && skv_slots_count(*slot) == 0)
        return cli_usage(c, "%s: no slots given (none clears it)", opt);
    *out = *slot;
    return 0;
}

int cli_admin_quota_take(cli *c, admin_quota_req *q, int id, const char *val)
{
    skv_proto_quota *o = &q->rq.quota;
    switch (id) {
    case F_QUOTA_RG:
        if (!val[0])
            return cli_usage(c, "--quota-rg: empty group name");
        q->group = val;
        return 0;
    case F_GUARANTEED:
        q->set = 1;
        return vec(c, "--guaranteed", val, &q->v[0], &o->guaranteed);
    case F_LIMIT:
        q->set = 1;
        return vec(c, "--limit", val, &q->v[1], &o->limit);
    case F_BORROW:
        q->set = 1;
        return vec(c, "--borrow-limit", val, &q->v[2], &o->borrow_limit);
    case F_NO_QUOTA:
        q->clear = 1;
        return 0;
    default:
        return 1;
    }
}

void cli_admin_quota_free(admin_quota_req *q)
{
    for (int i = 0; i < 3; i++)
        skv_slots_free(q->v[i]);
}

/* ---- output ---- */

static const char *fmt(char *buf, size_t n, const skv_slots *v)
{
    if (!v || skv_slots_count(v) == 0)
        return "-";
    return cli_fmt_slots(buf, n, v);
}

static void json_slots(cli_json *j, const char *k, const skv_slots *v)
{
    cli_json_key(j, k);
    cli_json_slots(j, v);
}

static void print_quotas(const cli *c, const skv_proto_admin_quota_reply *r)
{
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "quotas");
        cli_json_arr(&j);
        for (size_t i = 0; i < r->n_quotas; i++) {
            const skv_proto_quota *q = &r->quotas[i];
            cli_json_obj(&j);
            cli_json_key(&j, "resource_group");
            cli_json_str(&j, q->resource_group);
            cli_json_key(&j, "scope");
            cli_json_str(&j, q->scope);
            cli_json_key(&j, "owner");
            cli_json_str(&j, q->owner);
            json_slots(&j, "guaranteed", q->guaranteed);
            json_slots(&j, "limit", q->limit);
            json_slots(&j, "borrow_limit", q->borrow_limit);
            cli_json_obj_end(&j);
        }
        cli_json_arr_end(&j);
        cli_json_obj_end(&j);
        cli_json_end(&j);
        return;
    }
    static const char *const hdr[] = {"GROUP", "SCOPE", "OWNER", "GUARANTEED",
                                      "LIMIT", "BORROW_LIMIT"};
    cli_table t;
    cli_table_init(&t, 6, hdr);
    for (size_t i = 0; i < r->n_quotas; i++) {
        const skv_proto_quota *q = &r->quotas[i];
        char g[256], l[256], b[256];
        const char *row[] = {q->resource_group, q->scope, q->owner,
            fmt(g, sizeof g, q->guaranteed), fmt(l, sizeof l, q->limit),
            fmt(b, sizeof b, q->borrow_limit)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static void tree_json(const skv_proto_admin_quota_tree_reply *r)
{
    cli_json j;
    cli_json_init(&j, stdout);
    cli_json_obj(&j);
    cli_json_key(&j, "nodes");
    cli_json_arr(&j);
    for (size_t i = 0; i < r->n_nodes; i++) {
        const skv_proto_quota_node *n = &r->nodes[i];
        cli_json_obj(&j);
        cli_json_key(&j, "resource_group");
        cli_json_str(&j, n->resource_group);
        cli_json_key(&j, "scope");
        cli_json_str(&j, n->scope);
        cli_json_key(&j, "name");
        cli_json_str(&j, n->name);
        cli_json_key(&j, "parent");
        cli_json_str(&j, n->parent);
        json_slots(&j, "used", n->used);
        json_slots(&j, "guaranteed", n->guaranteed);
        json_slots(&j, "limit", n->limit);
        json_slots(&j, "borrow_limit", n->borrow_limit);
        json_slots(&j, "borrowed", n->borrowed);
        json_slots(&j, "lent", n->lent);
        cli_json_obj_end(&j);
    }
    cli_json_arr_end(&j);
    cli_json_obj_end(&j);
    cli_json_end(&j);
}

static void print_tree(const cli *c, const skv_proto_admin_quota_tree_reply *r)
{
    if (c->json) {
        tree_json(r);
        return;
    }
    static const char *const hdr[] = {"GROUP", "OWNER", "USED", "GUARANTEED",
        "LIMIT", "BORROW_LIMIT", "BORROWED", "LENT"};
    cli_table t;
    cli_table_init(&t, 8, hdr);
    for (size_t i = 0; i < r->n_nodes; i++) {
        const skv_proto_quota_node *n = &r->nodes[i];
        int depth = strcmp(n->scope, "domain") == 0    ? 0
                    : strcmp(n->scope, "project") == 0 ? 1 : 2;
        char who[300], u[256], g[256], l[256], b[256], bo[256], le[256];
        snprintf(who, sizeof who, "%*s%s %s", 2 * depth, "", n->scope,
                 n->name);
        const char *row[] = {n->resource_group, who, fmt(u, sizeof u, n->used),
            fmt(g, sizeof g, n->guaranteed), fmt(l, sizeof l, n->limit),
            fmt(b, sizeof b, n->borrow_limit), fmt(bo, sizeof bo, n->borrowed),
            fmt(le, sizeof le, n->lent)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

/* ---- sending ---- */

int cli_admin_quota_send(cli *c, const char *scope, const char *name,
                         admin_quota_req *q)
{
    if (q->set && q->clear)
        return cli_usage(c, "--no-quota and --guaranteed/--limit/"
                         "--borrow-limit exclude each other");
    skv_proto_admin_quota *rq = &q->rq;
    rq->op = q->clear ? SKV_PROTO_ADMIN_DELETE : SKV_PROTO_ADMIN_UPDATE;
    rq->quota.scope = (char *)scope;
    rq->quota.owner = (char *)name;
    rq->quota.resource_group = (char *)(q->group ? q->group : "default");
    skv_proto_admin_quota_reply rep;
    memset(&rep, 0, sizeof rep);
    int rc = cli_call(c, SKV_PROTO_ADMIN_QUOTA, rq, &rep);
    if (rc)
        return rc;
    if (q->clear && c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "deleted");
        cli_json_str(&j, "quota");
        cli_json_key(&j, "scope");
        cli_json_str(&j, scope);
        cli_json_key(&j, "owner");
        cli_json_str(&j, name);
        cli_json_key(&j, "resource_group");
        cli_json_str(&j, rq->quota.resource_group);
        cli_json_obj_end(&j);
        cli_json_end(&j);
    } else if (q->clear) {
        cli_line(stdout, "deleted the quota of %s %s in %s", scope, name,
                 rq->quota.resource_group);
    } else {
        print_quotas(c, &rep);
    }
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rep);
    return CLI_OK;
}

/* ---- sokovan admin quota list|tree ---- */

enum { Q_RG = 1, Q_SCOPE, Q_OWNER };

static int quota_list(cli *c, const char *rg, const char *scope,
                      const char *owner)
{
    skv_proto_admin_quota rq;
    memset(&rq, 0, sizeof rq);
    rq.op = SKV_PROTO_ADMIN_LIST;
    rq.quota.resource_group = (char *)rg;
    rq.quota.scope = (char *)scope;
    rq.quota.owner = (char *)owner;
    skv_proto_admin_quota_reply rep;
    memset(&rep, 0, sizeof rep);
    int rc = cli_call(c, SKV_PROTO_ADMIN_QUOTA, &rq, &rep);
    if (rc)
        return rc;
    print_quotas(c, &rep);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_REPLY, &rep);
    return CLI_OK;
}

static int quota_tree(cli *c, const char *rg)
{
    skv_proto_admin_quota_tree rq = {(char *)rg};
    skv_proto_admin_quota_tree_reply rep;
    memset(&rep, 0, sizeof rep);
    int rc = cli_call(c, SKV_PROTO_ADMIN_QUOTA_TREE, &rq, &rep);
    if (rc)
        return rc;
    print_tree(c, &rep);
    skv_proto_body_free(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, &rep);
    return CLI_OK;
}

int cli_cmd_admin_quota(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"rg", 1, Q_RG, 0}, {"scope", 1, Q_SCOPE, 0},
                                   {"owner", 1, Q_OWNER, 0}, {NULL, 0, 0, 0}};
    static const char *const scopes[] = {"domain", "project", "user", NULL};
    c->cmd = "admin quota";
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val, *verb = NULL, *rg = NULL, *scope = NULL, *owner = NULL;
    int id;
    while ((id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(quota_help, stdout);
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (id == CLI_OPT_POS && verb)
            return cli_usage(c, "unexpected argument '%s'", val);
        if (id != CLI_OPT_POS && !val[0])
            return cli_usage(c, "empty value for an option");
        if (id == CLI_OPT_POS)
            verb = val;
        else if (id == Q_RG)
            rg = val;
        else if (id == Q_OWNER)
            owner = val;
        else if (cli_parse_word(c, "--scope", val, scopes))
            return CLI_USAGE;
        else
            scope = val;
    }
    if (verb && strcmp(verb, "tree") == 0) {
        if (scope || owner)
            return cli_usage(c, "--scope and --owner apply to 'quota list'");
        return quota_tree(c, rg);
    }
    if (verb && strcmp(verb, "list") == 0)
        return quota_list(c, rg, scope, owner);
    return cli_usage(c, verb ? "unknown operation '%s' (tree, list)"
                             : "missing operation (tree, list)%s",
                     verb ? verb : "");
}
