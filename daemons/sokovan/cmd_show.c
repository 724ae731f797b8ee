/* sokovan show: one session in full, including why it is still pending.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "cli.h"

static void field(const char *name, const char *value)
{
    printf("%-12s ", name);
    cli_put_clean(stdout, value && value[0] ? value : "-");
    putchar('\n');
}

static void summary(const skv_proto_session_info *s)
{
    char buf[512], t[64];
    field("Session:", s->session_id);
    field("Name:", s->name);
    field("Owner:", s->owner);
    field("Project:", s->project);
    if (s->status_reason && s->status_reason[0])
        snprintf(buf, sizeof buf, "%s (%s)", s->status ? s->status : "-",
                 s->status_reason);
    else
        snprintf(buf, sizeof buf, "%s", s->status ? s->status : "-");
    field("Status:", buf);
    field("Type:", s->session_type);
    snprintf(buf, sizeof buf, "%d", (int)s->priority);
    field("Priority:", buf);
    field("Group:", s->resource_group);
    field("Image:", s->image);
    snprintf(buf, sizeof buf, "%s, %u kernel%s",
             s->cluster_mode ? s->cluster_mode : "-", s->cluster_size,
             s->cluster_size == 1 ? "" : "s");
    field("Cluster:", buf);
    field("Slots:", cli_fmt_slots(buf, sizeof buf, s->slots));
    field("Created:", cli_fmt_time(t, sizeof t, s->created_ms));
    field("Started:", cli_fmt_time(t, sizeof t, s->started_ms));
    field("Finished:", cli_fmt_time(t, sizeof t, s->finished_ms));
    if (s->status && strcmp(s->status, "TERMINATED") == 0) {
        snprintf(buf, sizeof buf, "%d", (int)s->exit_code);
        field("Exit code:", buf);
    }
}

static void kernels(const skv_proto_session_info *s)
{
    if (!s->n_kernels)
        return;
    static const char *const hdr[] = {"KERNEL", "ROLE", "AGENT", "STATUS",
                                      "EXIT", "SLOTS", "ADDRESS", "PORTS"};
    cli_table t;
    cli_table_init(&t, 8, hdr);
    for (size_t i = 0; i < s->n_kernels; i++) {
        const skv_proto_kernel_info *k = &s->kernels[i];
        char code[16] = "", slots[512], ports[512] = "";
        if (k->status && strcmp(k->status, "TERMINATED") == 0)
            snprintf(code, sizeof code, "%d", (int)k->exit_code);
        /* Published ports: "tcp:22=HOST:30001": container port 22 is
         * reached at HOST:30001 (the agent's address). */
        for (size_t p = 0; p < k->n_published; p++) {
            size_t l = strlen(ports);
            snprintf(ports + l, sizeof ports - l, "%s%s", p ? "," : "",
                     k->published[p] ? k->published[p] : "");
        }
        const char *row[] = {k->kernel_id, k->role, k->agent_id, k->status,
                             code, cli_fmt_slots(slots, sizeof slots,
                                                 k->slots),
                             k->address, ports};
        cli_table_row(&t, row);
    }
    printf("\nKernels:\n");
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

static void history(const skv_proto_session_info *s)
{
    if (!s->n_history)
        return;
    static const char *const hdr[] = {"TIME", "STATUS", "REASON"};
    cli_table t;
    cli_table_init(&t, 3, hdr);
    for (size_t i = 0; i < s->n_history; i++) {
        const skv_proto_status_change *h = &s->history[i];
        char tm[64];
        const char *row[] = {cli_fmt_time(tm, sizeof tm, h->timestamp_ms),
                             h->status, h->reason};
        cli_table_row(&t, row);
    }
    printf("\nStatus history:\n");
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

/* A session holding a reservation starts when the running sessions'
 * estimated durations say the reserved agents free up. */
static void estimated_start(const skv_proto_session_info *s)
{
    for (size_t i = 0; i < s->n_pending; i++) {
        int64_t at = s->pending[i].estimated_start_ms;
        if (at <= 0)
            continue;
        char t[64], in[32];
        printf("Estimated start: %s (in %s)\n", cli_fmt_time(t, sizeof t, at),
               cli_fmt_span(in, sizeof in, at - cli_now_ms()));
        return;
    }
}

static void pending(const skv_proto_session_info *s)
{
    if (!s->n_pending)
        return;
    static const char *const hdr[] = {"GROUP", "PREDICATE", "SLOT",
                                      "SHORTFALL", "MESSAGE"};
    cli_table t;
    cli_table_init(&t, 5, hdr);
    for (size_t i = 0; i < s->n_pending; i++) {
        const skv_proto_pending_reason *p = &s->pending[i];
        char q[SKV_QTY_FORMAT_MAX] = "";
        if (p->slot && p->slot[0])
            cli_fmt_qty(q, sizeof q, p->slot, p->shortfall);
        const char *row[] = {p->resource_group, p->predicate, p->slot, q,
                             p->message};
        cli_table_row(&t, row);
    }
    printf("\nWhy pending:\n");
    cli_table_print(&t, stdout);
    cli_table_free(&t);
    estimated_start(s);
}

int cli_cmd_show(cli *c, int argc, char **argv)
{
    static const cli_opt none[] = {{NULL, 0, 0}};
    const char *sid = NULL, *val;
    int rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, none, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan show ID [--json]\nA session's details, "
                 "kernels, status history and, while it is\npending, the "
                 "reasons per resource group.");
            return CLI_OK;
        }
        rc = id == CLI_OPT_ERR ? CLI_USAGE : cli_take_id(c, &sid, val);
    }
    if (!rc && !sid)
        rc = cli_usage(c, "missing session ID");
    if (rc)
        return rc;
    skv_proto_session_id req = {(char *)sid};
    skv_proto_session_show_reply r;
    rc = cli_call(c, SKV_PROTO_SESSION_SHOW, &req, &r);
    if (rc)
        return rc;
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "session");
        cli_json_session(&j, &r.session);
        cli_json_obj_end(&j);
        cli_json_end(&j);
    } else {
        summary(&r.session);
        kernels(&r.session);
        cli_show_services(&r.session);
        history(&r.session);
        pending(&r.session);
    }
    skv_proto_body_free(SKV_PROTO_SESSION_SHOW_REPLY, &r);
    return CLI_OK;
}
