/* The admin object kinds: their flags and how a request is completed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin.h"

enum { F_DESC = 1, F_INACTIVE, F_ACTIVE, F_EMAIL, F_ROLE, F_DOMAIN, F_PROJECT,
       F_POLICY, F_USER, F_OUT, F_RG, F_MAX_SLOTS, F_MAX_CONC, F_MAX_PEND,
       F_MAX_CLUSTER, F_MAX_LIFE, F_SCHED, F_SELECTOR, F_LOST, F_PEND_TIMEOUT,
       F_SESSION_TYPE, F_PREEMPT, F_MIN_RUNTIME, F_PREEMPT_MODE,
       F_DRAIN_ACTION, F_DRAIN_GRACE, F_FAULT_ACTION, F_UNENFORCED, F_IDLE,
       F_PREEMPT_ORDER };

#define COMMON_FLAGS {"description", 1, F_DESC}, {"inactive", 0, F_INACTIVE}, \
                     {"active", 0, F_ACTIVE}

static int nonempty(cli *c, const char *val)
{
    return val[0] ? 0 : cli_usage(c, "empty value for an option");
}

static int take_common(cli *c, admin_req *r, int id, const char *val,
                       char **desc)
{
    if (id == F_INACTIVE || id == F_ACTIVE) {
        r->inactive = id == F_INACTIVE;
        return 0;
    }
    if (id == F_DESC && desc) {
        *desc = (char *)val;
        return 0;
    }
    return cli_usage(c, "option not valid here");
}

static uint8_t active_of(const admin_req *r)
{
    /* list filters by set fields: leave "active" out of it */
    return r->op == SKV_PROTO_ADMIN_LIST ? 0 : (uint8_t)!r->inactive;
}

/* ---- user ---- */
static const cli_opt user_opts[] = {COMMON_FLAGS, {"email", 1, F_EMAIL},
    {"role", 1, F_ROLE}, {"domain", 1, F_DOMAIN}, {"project", 1, F_PROJECT},
    {"policy", 1, F_POLICY}, QUOTA_FLAGS, {NULL, 0, 0}};

static int user_take(cli *c, admin_req *r, int id, const char *val)
{
    static const char *const roles[] = {"user", "admin", NULL};
    skv_proto_user *u = &r->u.user.user;
    if (id == F_ROLE) {
        u->role = (char *)val;
        return cli_parse_word(c, "--role", val, roles);
    }
    if (id != F_INACTIVE && id != F_ACTIVE && nonempty(c, val))
        return CLI_USAGE;
    switch (id) {
    case F_EMAIL: u->email = (char *)val; return 0;
    case F_DOMAIN: u->domain = (char *)val; return 0;
    case F_PROJECT: return cli_strv_push(&r->list, val);
    case F_POLICY: u->resource_policy = (char *)val; return 0;
    default: return take_common(c, r, id, val, &u->description);
    }
}

static void user_finish(admin_req *r, const char *name)
{
    r->u.user.op = r->op;
    r->u.user.user.name = (char *)name;
    r->u.user.user.projects = r->list.v;
    r->u.user.user.n_projects = r->list.n;
    r->u.user.user.active = active_of(r);
}

/* ---- keypair ---- */
static const cli_opt keypair_opts[] = {{"inactive", 0, F_INACTIVE},
    {"active", 0, F_ACTIVE}, {"user", 1, F_USER}, {"policy", 1, F_POLICY},
    {"out", 1, F_OUT}, {NULL, 0, 0}};

static int keypair_take(cli *c, admin_req *r, int id, const char *val)
{
    skv_proto_keypair *k = &r->u.keypair.keypair;
    if (id != F_INACTIVE && id != F_ACTIVE && nonempty(c, val))
        return CLI_USAGE;
    switch (id) {
    case F_USER: k->user = (char *)val; return 0;
    case F_POLICY: k->resource_policy = (char *)val; return 0;
    case F_OUT: r->out_file = val; return 0;
    default: return take_common(c, r, id, val, NULL);
    }
}

static void keypair_finish(admin_req *r, const char *name)
{
    r->u.keypair.op = r->op;
    /* create: the manager generates the key; a NAME given is the user */
    if (r->op == SKV_PROTO_ADMIN_CREATE && name && !r->u.keypair.keypair.user)
        r->u.keypair.keypair.user = (char *)name;
    else
        r->u.keypair.keypair.access_key = (char *)name;
    r->u.keypair.keypair.active = active_of(r);
}

/* ---- project ---- */
static const cli_opt project_opts[] = {COMMON_FLAGS, {"domain", 1, F_DOMAIN},
    {"policy", 1, F_POLICY}, QUOTA_FLAGS, {NULL, 0, 0}};

static int project_take(cli *c, admin_req *r, int id, const char *val)
{
    skv_proto_project *p = &r->u.project.project;
    if (id != F_INACTIVE && id != F_ACTIVE && nonempty(c, val))
        return CLI_USAGE;
    if (id == F_DOMAIN)
        p->domain = (char *)val;
    else if (id == F_POLICY)
        p->resource_policy = (char *)val;
    else
        return take_common(c, r, id, val, &p->description);
    return 0;
}

static void project_finish(admin_req *r, const char *name)
{
    r->u.project.op = r->op;
    r->u.project.project.name = (char *)name;
    r->u.project.project.active = active_of(r);
}

/* ---- domain ---- */
static const cli_opt domain_opts[] = {COMMON_FLAGS, {"rg", 1, F_RG},
                                      QUOTA_FLAGS, {NULL, 0, 0}};

static int domain_take(cli *c, admin_req *r, int id, const char *val)
{
    if (id != F_INACTIVE && id != F_ACTIVE && nonempty(c, val))
        return CLI_USAGE;
    if (id == F_RG)
        return cli_strv_push(&r->list, val);
    return take_common(c, r, id, val, &r->u.domain.domain.description);
}

static void domain_finish(admin_req *r, const char *name)
{
    r->u.domain.op = r->op;
    r->u.domain.domain.name = (char *)name;
    r->u.domain.domain.resource_groups = r->list.v;
    r->u.domain.domain.n_resource_groups = r->list.n;
    r->u.domain.domain.active = active_of(r);
}

/* ---- resource policy ---- */
static const cli_opt policy_opts[] = {{"max-slots", 1, F_MAX_SLOTS},
    {"max-concurrent", 1, F_MAX_CONC}, {"max-pending", 1, F_MAX_PEND},
    {"max-cluster-size", 1, F_MAX_CLUSTER}, {"max-lifetime", 1, F_MAX_LIFE},
    {"idle-timeout", 1, F_IDLE}, {NULL, 0, 0}};

static int policy_take(cli *c, admin_req *r, int id, const char *val)
{
    skv_proto_resource_policy *p = &r->u.policy.policy;
    skv_error e = SKV_ERROR_INIT;
    switch (id) {
    case F_MAX_SLOTS:
        skv_slots_free(r->slots);
        r->slots = NULL;
        if (skv_slots_parse(&r->slots, val, NULL, &e))
            return cli_usage(c, "--max-slots: %s", e.message);
        p->max_slots = r->slots;
        return 0;
    case F_MAX_CONC:
        return cli_parse_u32(c, "--max-concurrent", val, 0, UINT32_MAX,
                             &p->max_concurrent_sessions);
    case F_MAX_PEND:
        return cli_parse_u32(c, "--max-pending", val, 0, UINT32_MAX,
                             &p->max_pending_sessions);
    case F_MAX_CLUSTER:
        return cli_parse_u32(c, "--max-cluster-size", val, 0, 1024,
                             &p->max_cluster_size);
    case F_IDLE:
        return cli_parse_duration(c, "--idle-timeout", val,
                                  &p->idle_timeout_ms);
    default:
        return cli_parse_duration(c, "--max-lifetime", val,
                                  &p->max_session_lifetime_ms);
    }
}

static void policy_finish(admin_req *r, const char *name)
{
    r->u.policy.op = r->op;
    r->u.policy.policy.name = (char *)name;
}

/* ---- resource group ---- */
static const cli_opt group_opts[] = {COMMON_FLAGS, {"scheduler", 1, F_SCHED},
    {"selector", 1, F_SELECTOR},
    {"lost-batch-policy", 1, F_LOST}, {"pending-timeout", 1, F_PEND_TIMEOUT},
    {"session-type", 1, F_SESSION_TYPE}, {"preemption", 1, F_PREEMPT},
    {"min-runtime", 1, F_MIN_RUNTIME}, {"preempt-mode", 1, F_PREEMPT_MODE},
    {"preempt-order", 1, F_PREEMPT_ORDER},
    {"drain-action", 1, F_DRAIN_ACTION}, {"drain-grace", 1, F_DRAIN_GRACE},
    {"fault-action", 1, F_FAULT_ACTION},
    {"allow-unenforced-fractions", 1, F_UNENFORCED},
    {"idle-timeout", 1, F_IDLE}, {"max-lifetime", 1, F_MAX_LIFE},
    {NULL, 0, 0}};


/* --drain-action, --drain-grace, --fault-action,
 * --allow-unenforced-fractions; 1: not one of them. */
static int group_take_ops(cli *c, skv_proto_resource_group *g, int id,
                          const char *val)
{
    static const char *const onoff[] = {"on", "off", NULL};
    static const char *const drain[] = {"requeue", "terminate", NULL};
    static const char *const fault[] = {"requeue", "terminate", "degrade",
                                        NULL};
    uint64_t ms;
    switch (id) {
    case F_DRAIN_ACTION:
        g->drain_action = (char *)val;
        return cli_parse_word(c, "--drain-action", val, drain);
    case F_FAULT_ACTION:
        g->fault_action = (char *)val;
        return cli_parse_word(c, "--fault-action", val, fault);
    case F_UNENFORCED:
        g->allow_unenforced_fractions = (char *)val;
        return cli_parse_word(c, "--allow-unenforced-fractions", val, onoff);
    case F_DRAIN_GRACE:
        if (cli_parse_duration(c, "--drain-grace", val, &ms))
            return CLI_USAGE;
        if (ms > (uint64_t)INT64_MAX)
            return cli_usage(c, "--drain-grace: '%s' is too long", val);
        /* 0 on the wire means "unchanged"; negative sets it to 0. */
        g->drain_grace_ms = ms ? (int64_t)ms : -1;
        return 0;
    default:
        return 1;
    }
}

/* A duration flag of a group as the wire wants it: 0 means "unchanged",
 * so "0" (none) is sent as -1. */
static int group_ms(cli *c, const char *flag, const char *val, int64_t *out)
{
    uint64_t ms;
    if (cli_parse_duration(c, flag, val, &ms))
        return CLI_USAGE;
    if (ms > (uint64_t)INT64_MAX)
        return cli_usage(c, "%s: '%s' is too long", flag, val);
    *out = ms ? (int64_t)ms : -1;
    return 0;
}

/* --preemption, --min-runtime, --preempt-mode, --preempt-order; 1: not
 * one of them. */
static int group_take_preempt(cli *c, skv_proto_resource_group *g, int id,
                              const char *val)
{
    static const char *const onoff[] = {"on", "off", NULL};
    static const char *const modes[] = {"requeue", "terminate", NULL};
    static const char *const orders[] = {"lowest-priority", "newest", NULL};
    uint64_t ms;
    switch (id) {
    case F_PREEMPT:
        g->preemption = (char *)val;
        return cli_parse_word(c, "--preemption", val, onoff);
    case F_PREEMPT_MODE:
        g->preempt_mode = (char *)val;
        return cli_parse_word(c, "--preempt-mode", val, modes);
    case F_PREEMPT_ORDER:
        g->preempt_order = (char *)val;
        return cli_parse_word(c, "--preempt-order", val, orders);
    case F_MIN_RUNTIME:
        if (cli_parse_duration(c, "--min-runtime", val, &ms))
            return CLI_USAGE;
        if (ms > (uint64_t)INT64_MAX)
            return cli_usage(c, "--min-runtime: '%s' is too long", val);
        /* 0 on the wire means "unchanged"; negative sets it to 0. */
        g->preempt_min_runtime_ms = ms ? (int64_t)ms : -1;
        return 0;
    case F_IDLE:
        return group_ms(c, "--idle-timeout", val, &g->idle_timeout_ms);
    case F_MAX_LIFE:
        return group_ms(c, "--max-lifetime", val, &g->max_lifetime_ms);
    default:
        return 1;
    }
}

static int group_take(cli *c, admin_req *r, int id, const char *val)
{
    static const char *const lost[] = {"requeue", "fail", NULL};
    static const char *const types[] = {"batch", "interactive", "inference",
                                        NULL};
    skv_proto_resource_group *g = &r->u.group.group;
    switch (id) {
    case F_SCHED:
        g->scheduler = (char *)val;
        return nonempty(c, val);
    case F_SELECTOR:
        g->selector = (char *)val;
        return nonempty(c, val);
    case F_LOST:
        g->lost_batch_policy = (char *)val;
        return cli_parse_word(c, "--lost-batch-policy", val, lost);
    case F_PEND_TIMEOUT:
        return cli_parse_duration(c, "--pending-timeout", val,
                                  &g->pending_timeout_ms);
    case F_SESSION_TYPE:
        if (cli_parse_word(c, "--session-type", val, types))
            return CLI_USAGE;
        return cli_strv_push(&r->list, val);
    default: {
        int rc = group_take_preempt(c, g, id, val);
        if (rc == 1)
            rc = group_take_ops(c, g, id, val);
        return rc == 1 ? take_common(c, r, id, val, &g->description) : rc;
    }
    }
}

static void group_finish(admin_req *r, const char *name)
{
    r->u.group.op = r->op;
    r->u.group.group.name = (char *)name;
    r->u.group.group.session_types = r->list.v;
    r->u.group.group.n_session_types = r->list.n;
    r->u.group.group.active = active_of(r);
}

#define ACTIVE_HELP "  --inactive / --active   disable / enable (default: " \
                    "enabled)\n"

const admin_kind cli_admin_kinds[] = {
    {"user", "users", SKV_PROTO_ADMIN_USER, user_opts,
     "usage: sokovan admin user create|update|delete|list [NAME] [options]\n"
     "  --email E  --role user|admin  --domain D  --project P (repeatable)\n"
     "  --policy P  --description D\n" ACTIVE_HELP QUOTA_HELP,
     user_take, user_finish, cli_admin_print_user, "user"},
    {"keypair", "keypairs", SKV_PROTO_ADMIN_KEYPAIR, keypair_opts,
     "usage: sokovan admin keypair create --user U [--policy P] [--out FILE]\n"
     "       sokovan admin keypair update|delete ACCESS_KEY [options]\n"
     "       sokovan admin keypair list [--user U]\n"
     "  create prints the secret key once; --out FILE also writes a key\n"
     "  file (mode 0600) for --key-file.\n" ACTIVE_HELP,
     keypair_take, keypair_finish, cli_admin_print_keypair},
    {"project", "projects", SKV_PROTO_ADMIN_PROJECT, project_opts,
     "usage: sokovan admin project create|update|delete|list [NAME] "
     "[options]\n  --domain D  --policy P  --description D\n" ACTIVE_HELP
     QUOTA_HELP,
     project_take, project_finish, cli_admin_print_project, "project"},
    {"domain", "domains", SKV_PROTO_ADMIN_DOMAIN, domain_opts,
     "usage: sokovan admin domain create|update|delete|list [NAME] "
     "[options]\n  --rg GROUP (repeatable: groups its users may use)  "
     "--description D\n" ACTIVE_HELP QUOTA_HELP,
     domain_take, domain_finish, cli_admin_print_domain, "domain"},
    {"policy", "policies", SKV_PROTO_ADMIN_RESOURCE_POLICY, policy_opts,
     "usage: sokovan admin policy create|update|delete|list [NAME] "
     "[options]\n  --max-slots cpu=8,mem=32g  --max-concurrent N  "
     "--max-pending N\n  --max-cluster-size N  --max-lifetime DURATION "
     "(e.g. 3600000, 1h; 0: unlimited)\n  --idle-timeout DURATION  "
     "(terminate sessions idle this long; 0: never)\n"
     "  update sets every limit: those not given become 0 (unlimited)\n",
     policy_take, policy_finish, cli_admin_print_policy},
    {"group", "groups", SKV_PROTO_ADMIN_RESOURCE_GROUP, group_opts,
     "usage: sokovan admin group create|update|delete|list [NAME] "
     "[options]\n  --scheduler S  --selector auto|concentrated|dispersed|"
     "roundrobin|frag\n  --lost-batch-policy requeue|fail  "
     "--pending-timeout DURATION\n  --session-type T (repeatable)  "
     "--description D\n"
     "  --preemption on|off  (higher-priority sessions evict preemptible "
     "ones)\n  --min-runtime DURATION  (victims must have run this long)\n"
     "  --preempt-mode requeue|terminate  (what happens to a victim)\n"
     "  --preempt-order lowest-priority|newest  (which victims first; "
     "either way\n      the fewest whole sessions that make room)\n"
     "  --drain-action requeue|terminate  (batch sessions of a drained "
     "agent)\n  --drain-grace DURATION  (how long a drain waits first)\n"
     "  --fault-action requeue|terminate|degrade  (batch sessions on an "
     "unhealthy device;\n      interactive ones are marked degraded)\n"
     "  --allow-unenforced-fractions on|off  (fractional GPUs where shares "
     "cannot be enforced)\n"
     "  --idle-timeout DURATION  (terminate running sessions idle this "
     "long: no\n    app proxy traffic, no exec, CPU below "
     "idle_cpu_percent; 0: never)\n"
     "  --max-lifetime DURATION  (terminate sessions running this long; "
     "0: none)\n"
     ACTIVE_HELP,
     group_take, group_finish, cli_admin_print_group},
};

const size_t cli_admin_n_kinds =
    sizeof cli_admin_kinds / sizeof cli_admin_kinds[0];
