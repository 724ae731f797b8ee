/* sokovan admin agent cordon|drain|uncordon ID: take an agent out of
 * scheduling (cordon), also end or requeue its sessions after its group's
 * drain grace period (drain), or put it back (uncordon). Prints the agent
 * as `sokovan agents` does.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin.h"

static const char agent_help[] =
    "usage: sokovan admin agent cordon|drain|uncordon AGENT_ID\n"
    "  cordon    no new sessions are placed on the agent; running ones stay\n"
    "  drain     cordon, and after the group's --drain-grace its sessions\n"
    "            are requeued (batch, --drain-action requeue) or terminated\n"
    "  uncordon  the agent takes new sessions again\n"
    "The state is kept by the manager across restarts.\n";

int cli_cmd_admin_agent(cli *c, int argc, char **argv)
{
    static const char *const actions[] = {"cordon", "drain", "uncordon",
                                          NULL};
    c->cmd = "admin agent";
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(agent_help, stdout);
        return CLI_OK;
    }
    if (argc != 3)
        return cli_usage(c, "expected: admin agent cordon|drain|uncordon "
                         "AGENT_ID");
    if (cli_parse_word(c, "action", argv[1], actions))
        return CLI_USAGE;
    if (!argv[2][0])
        return cli_usage(c, "empty agent id");
    skv_proto_admin_agent req = {argv[2], argv[1]};
    skv_proto_agent_list_reply r;
    int rc = cli_call(c, SKV_PROTO_ADMIN_AGENT, &req, &r);
    if (rc)
        return rc;
    cli_agents_out(c, &r);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &r);
    return CLI_OK;
}
