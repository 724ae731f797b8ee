/* Authorization: which principal may do what to whose objects.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "skv_internal.h"
#include "sokovan/auth.h"

const char *skv_auth_op_name(skv_auth_op op)
{
    switch (op) {
    case SKV_AUTH_OP_SESSION_SUBMIT: return "session.submit";
    case SKV_AUTH_OP_SESSION_READ: return "session.read";
    case SKV_AUTH_OP_SESSION_CONTROL: return "session.control";
    case SKV_AUTH_OP_CLUSTER_READ: return "cluster.read";
    case SKV_AUTH_OP_ADMIN: return "admin";
    case SKV_AUTH_OP_AGENT_REPORT: return "agent.report";
    }
    return "?";
}

static int owns(const skv_auth_principal *p, const char *owner)
{
    return owner && strcmp(p->user, owner) == 0;
}

static int deny(const skv_auth_principal *p, skv_auth_op op, const char *owner,
                skv_error *err)
{
    if (owner)
        return skv__err(err, SKV_EPERM, "%s '%s' may not %s on '%.128s'",
                        skv_auth_role_name(p->role), p->user,
                        skv_auth_op_name(op), owner);
    return skv__err(err, SKV_EPERM, "%s '%s' may not %s",
                    skv_auth_role_name(p->role), p->user, skv_auth_op_name(op));
}

static int needs_owner(skv_auth_op op)
{
    return op == SKV_AUTH_OP_SESSION_SUBMIT || op == SKV_AUTH_OP_SESSION_READ ||
           op == SKV_AUTH_OP_SESSION_CONTROL || op == SKV_AUTH_OP_AGENT_REPORT;
}

int skv_auth_may(const skv_auth_principal *p, skv_auth_op op, const char *owner,
                 skv_error *err)
{
    if (!p || memchr(p->user, 0, sizeof p->user) == NULL || !p->user[0])
        return skv__err(err, SKV_EINVAL, "auth_may: missing or bad principal");
    if (strcmp(skv_auth_op_name(op), "?") == 0)
        return skv__err(err, SKV_EINVAL, "auth_may: unknown operation %d", (int)op);
    if (needs_owner(op) && !owner)
        return skv__err(err, SKV_EINVAL, "auth_may: %s needs the owner",
                        skv_auth_op_name(op));
    switch (p->role) {
    case SKV_AUTH_ROLE_ADMIN:
        return op == SKV_AUTH_OP_AGENT_REPORT ? deny(p, op, owner, err) : 0;
    case SKV_AUTH_ROLE_USER:
        if (op == SKV_AUTH_OP_CLUSTER_READ)
            return 0;
        if (op == SKV_AUTH_OP_ADMIN || op == SKV_AUTH_OP_AGENT_REPORT)
            return deny(p, op, owner, err);
        return owns(p, owner) ? 0 : deny(p, op, owner, err);
    case SKV_AUTH_ROLE_AGENT:
        return (op == SKV_AUTH_OP_AGENT_REPORT && owns(p, owner))
                   ? 0 : deny(p, op, owner, err);
    }
    return skv__err(err, SKV_EINVAL, "auth_may: unknown role %d", (int)p->role);
}
