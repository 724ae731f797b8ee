/* sokovan agents / images.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "cli.h"

static void kstr(cli_json *j, const char *k, const char *v)
{
    cli_json_key(j, k);
    cli_json_str(j, v);
}

static void device_json(cli_json *j, const skv_proto_device *d)
{
    cli_json_obj(j);
    kstr(j, "id", d->id);
    kstr(j, "kind", d->kind);
    cli_json_key(j, "numa_node");
    cli_json_int(j, d->numa_node);
    cli_json_key(j, "slots");
    cli_json_slots(j, d->slots);
    kstr(j, "model", d->model);
    kstr(j, "bus_id", d->bus_id);
    cli_json_obj_end(j);
}

static void agent_json(cli_json *j, const skv_proto_agent_info *a)
{
    cli_json_obj(j);
    kstr(j, "agent_id", a->agent_id);
    kstr(j, "resource_group", a->resource_group);
    kstr(j, "architecture", a->architecture);
    kstr(j, "address", a->address);
    kstr(j, "status", a->status);
    cli_json_key(j, "labels");
    cli_json_kv(j, a->labels, a->n_labels);
    cli_json_key(j, "devices");
    cli_json_arr(j);
    for (size_t i = 0; i < a->n_devices; i++)
        device_json(j, &a->devices[i]);
    cli_json_arr_end(j);
    cli_json_key(j, "capacity");
    cli_json_slots(j, a->capacity);
    cli_json_key(j, "occupied");
    cli_json_slots(j, a->occupied);
    cli_json_key(j, "last_heartbeat_ms");
    cli_json_int(j, a->last_heartbeat_ms);
    cli_json_key(j, "n_running");
    cli_json_uint(j, a->n_running);
    kstr(j, "admin_state", a->admin_state ? a->admin_state : "schedulable");
    cli_json_key(j, "drain_deadline_ms");
    cli_json_int(j, a->drain_deadline_ms);
    cli_json_key(j, "unhealthy");
    cli_json_arr(j);
    for (size_t i = 0; i < a->n_unhealthy; i++) {
        cli_json_obj(j);
        kstr(j, "device_id", a->unhealthy[i].device_id);
        kstr(j, "reason", a->unhealthy[i].reason);
        cli_json_obj_end(j);
    }
    cli_json_arr_end(j);
    cli_json_obj_end(j);
}

/* "cuda1 (xid 79), cuda3 (...)" or "-". */
static const char *unhealthy_text(char *buf, size_t n,
                                  const skv_proto_agent_info *a)
{
    snprintf(buf, n, "%s", a->n_unhealthy ? "" : "-");
    for (size_t i = 0; i < a->n_unhealthy; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s (%s)", i ? ", " : "",
                 a->unhealthy[i].device_id, a->unhealthy[i].reason
                 ? a->unhealthy[i].reason : "");
    }
    return buf;
}

void cli_agents_out(const cli *c, const skv_proto_agent_list_reply *r)
{
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "agents");
        cli_json_arr(&j);
        for (size_t i = 0; i < r->n_agents; i++)
            agent_json(&j, &r->agents[i]);
        cli_json_arr_end(&j);
        cli_json_obj_end(&j);
        cli_json_end(&j);
        return;
    }
    static const char *const hdr[] = {"AGENT", "GROUP", "STATUS", "ARCH",
        "CAPACITY", "OCCUPIED", "RUNNING", "HEARTBEAT", "STATE", "UNHEALTHY"};
    cli_table t;
    cli_table_init(&t, 10, hdr);
    for (size_t i = 0; i < r->n_agents; i++) {
        const skv_proto_agent_info *a = &r->agents[i];
        char cap[512], occ[512], run[16], hb[32], bad[512];
        snprintf(run, sizeof run, "%u", a->n_running);
        const char *row[] = {a->agent_id, a->resource_group, a->status,
            a->architecture, cli_fmt_slots(cap, sizeof cap, a->capacity),
            cli_fmt_slots(occ, sizeof occ, a->occupied), run,
            cli_fmt_age(hb, sizeof hb, a->last_heartbeat_ms),
            a->admin_state ? a->admin_state : "schedulable",
            unhealthy_text(bad, sizeof bad, a)};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

enum { A_RG = 1, A_ALL };

int cli_cmd_agents(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"rg", 1, A_RG}, {"all", 0, A_ALL},
                                   {NULL, 0, 0}};
    skv_proto_agent_list req;
    memset(&req, 0, sizeof req);
    const char *val;
    int rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan agents [--rg G] [--all] [--json]\nList "
                 "agents (--all includes lost ones).");
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = cli_usage(c, "unexpected argument '%s'", val);
        else if (id == A_RG)
            req.resource_group = (char *)val;
        else
            req.include_lost = 1;
    }
    skv_proto_agent_list_reply r;
    if (!rc)
        rc = cli_call(c, SKV_PROTO_AGENT_LIST, &req, &r);
    if (rc)
        return rc;
    cli_agents_out(c, &r);
    skv_proto_body_free(SKV_PROTO_AGENT_LIST_REPLY, &r);
    return CLI_OK;
}

static void images_out(const cli *c, const skv_proto_image_list_reply *r)
{
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "images");
        cli_json_arr(&j);
        for (size_t i = 0; i < r->n_images; i++) {
            const skv_proto_image_info *m = &r->images[i];
            cli_json_obj(&j);
            kstr(&j, "name", m->name);
            kstr(&j, "architecture", m->architecture);
            kstr(&j, "digest", m->digest);
            cli_json_key(&j, "size_bytes");
            cli_json_uint(&j, m->size_bytes);
            cli_json_key(&j, "agents");
            cli_json_strs(&j, m->agents, m->n_agents);
            cli_json_obj_end(&j);
        }
        cli_json_arr_end(&j);
        cli_json_obj_end(&j);
        cli_json_end(&j);
        return;
    }
    static const char *const hdr[] = {"IMAGE", "ARCH", "SIZE", "DIGEST",
                                      "AGENTS"};
    cli_table t;
    cli_table_init(&t, 5, hdr);
    for (size_t i = 0; i < r->n_images; i++) {
        const skv_proto_image_info *m = &r->images[i];
        char size[32], digest[24] = "", agents[512] = "";
        if (m->digest)
            snprintf(digest, sizeof digest, "%.19s", m->digest);
        for (size_t k = 0; k < m->n_agents; k++) {
            size_t len = strlen(agents);
            snprintf(agents + len, sizeof agents - len, "%s%s", k ? "," : "",
                     m->agents[k]);
        }
        /* Size 0: the agents did not report one. */
        const char *row[] = {m->name, m->architecture,
                             m->size_bytes ? cli_fmt_bytes(size, sizeof size,
                                                           m->size_bytes)
                                           : "",
                             digest, agents};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

int cli_cmd_images(cli *c, int argc, char **argv)
{
    static const cli_opt opts[] = {{"arch", 1, 1}, {NULL, 0, 0}};
    skv_proto_image_list req = {NULL};
    const char *val;
    int rc = 0, id;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while (!rc && (id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan images [--arch A] [--json]\nList the images "
                 "the agents have.");
            return CLI_OK;
        }
        if (id == CLI_OPT_ERR)
            rc = CLI_USAGE;
        else if (id == CLI_OPT_POS)
            rc = cli_usage(c, "unexpected argument '%s'", val);
        else
            req.architecture = (char *)val;
    }
    skv_proto_image_list_reply r;
    if (!rc)
        rc = cli_call(c, SKV_PROTO_IMAGE_LIST, &req, &r);
    if (rc)
        return rc;
    images_out(c, &r);
    skv_proto_body_free(SKV_PROTO_IMAGE_LIST_REPLY, &r);
    return CLI_OK;
}
