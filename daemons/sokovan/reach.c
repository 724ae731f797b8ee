/* When the manager cannot be reached: which failures are worth waiting out
 * (a manager not yet started or restarting), and an error that says where
 * the CLI tried, where that address came from and what to check.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cli.h"

int cli_reach_transient(int rc, const skv_error *e)
{
    if (rc == SKV_ETIMEDOUT)
        return 1;
    if (rc != SKV_ESYS || !e)
        return 0;
    /* no socket yet, nobody accepting yet, a full backlog, a reset while
     * the manager restarts; not a permission problem or a bad address */
    return e->sys_errno == ENOENT || e->sys_errno == ECONNREFUSED ||
           e->sys_errno == EAGAIN || e->sys_errno == ECONNRESET;
}

static int is_unix(const char *ep)
{
    return strncmp(ep, "unix:", 5) == 0 || ep[0] == '/';
}

/* What to check, from the kind of endpoint and the failure. */
static const char *hint(const char *ep, int rc, const skv_error *e)
{
    int no = rc == SKV_ESYS && e ? e->sys_errno : 0;
    if (no == EACCES || no == EPERM)
        return "permission denied: this user may not open the manager's "
               "socket; check its owner, group and mode (ls -l) or run as "
               "a user who may";
    if (no == ENOENT && is_unix(ep))
        return "no socket at that path: is sokovan-manager running, and is "
               "this the socket its `listen` setting names?";
    if (no == ECONNREFUSED && is_unix(ep))
        return "the socket exists but nothing accepts on it (a manager that "
               "stopped?): is sokovan-manager running?";
    if (no == ECONNREFUSED)
        return "nothing listens on that port: is sokovan-manager running, "
               "with its `tcp` setting on this address?";
    if (rc == SKV_ETIMEDOUT || no == EHOSTUNREACH || no == ENETUNREACH)
        return "no answer: check the host, the port and any firewall "
               "between here and the manager";
    if (rc == SKV_ENOENT)
        return "the host name does not resolve: check its spelling and DNS";
    return "is sokovan-manager running, and is this its address?";
}

int cli_fail_reach(const cli *c, int rc, const skv_error *e,
                   int64_t waited_ms)
{
    const char *ep = c->endpoint ? c->endpoint : "";
    char what[640], waited[64] = "";
    if (waited_ms > 0)
        snprintf(waited, sizeof waited, ", tried for %" PRId64 " ms",
                 waited_ms);
    snprintf(what, sizeof what, "cannot reach the manager at %s (from %s%s)",
             ep, c->endpoint_from ? c->endpoint_from : "the default", waited);
    cli_fail_err(what, rc, e);
    return cli_fail("check: %s (another address: --endpoint or "
                    "$SOKOVAN_ENDPOINT, unix:/path or tcp:host:port)",
                    hint(ep, rc, e));
}
