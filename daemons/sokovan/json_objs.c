/* JSON documents of sessions (ps, show, run --json). Field names follow
 * the wire protocol's keys (docs/protocol.md).
 * SPDX-License-Identifier: Apache-2.0 */
#include "cli.h"

static void kstr(cli_json *j, const char *k, const char *v)
{
    cli_json_key(j, k);
    cli_json_str(j, v);
}

static void kint(cli_json *j, const char *k, int64_t v)
{
    cli_json_key(j, k);
    cli_json_int(j, v);
}

static void history(cli_json *j, const skv_proto_session_info *s)
{
    cli_json_key(j, "history");
    cli_json_arr(j);
    for (size_t i = 0; i < s->n_history; i++) {
        const skv_proto_status_change *h = &s->history[i];
        cli_json_obj(j);
        kstr(j, "status", h->status);
        kint(j, "timestamp_ms", h->timestamp_ms);
        kstr(j, "reason", h->reason);
        cli_json_obj_end(j);
    }
    cli_json_arr_end(j);
}

static void pending(cli_json *j, const skv_proto_session_info *s)
{
    cli_json_key(j, "pending");
    cli_json_arr(j);
    for (size_t i = 0; i < s->n_pending; i++) {
        const skv_proto_pending_reason *p = &s->pending[i];
        cli_json_obj(j);
        kstr(j, "resource_group", p->resource_group);
        kstr(j, "predicate", p->predicate);
        kstr(j, "slot", p->slot);
        cli_json_key(j, "shortfall");
        if (p->slot)
            cli_json_qty(j, p->slot, p->shortfall);
        else
            cli_json_int(j, p->shortfall);
        kstr(j, "message", p->message);
        cli_json_key(j, "estimated_start_ms");
        cli_json_int(j, p->estimated_start_ms);
        cli_json_obj_end(j);
    }
    cli_json_arr_end(j);
}

static void kernels(cli_json *j, const skv_proto_session_info *s)
{
    cli_json_key(j, "kernels");
    cli_json_arr(j);
    for (size_t i = 0; i < s->n_kernels; i++) {
        const skv_proto_kernel_info *k = &s->kernels[i];
        cli_json_obj(j);
        kstr(j, "kernel_id", k->kernel_id);
        kstr(j, "role", k->role);
        kint(j, "idx", k->idx);
        kstr(j, "agent_id", k->agent_id);
        kstr(j, "container_id", k->container_id);
        kstr(j, "status", k->status);
        kint(j, "exit_code", k->exit_code);
        cli_json_key(j, "slots");
        cli_json_slots(j, k->slots);
        cli_json_obj_end(j);
    }
    cli_json_arr_end(j);
}

void cli_json_session(cli_json *j, const skv_proto_session_info *s)
{
    cli_json_obj(j);
    kstr(j, "session_id", s->session_id);
    kstr(j, "name", s->name);
    kstr(j, "owner", s->owner);
    kstr(j, "project", s->project);
    kstr(j, "resource_group", s->resource_group);
    kstr(j, "session_type", s->session_type);
    kstr(j, "status", s->status);
    kstr(j, "status_reason", s->status_reason);
    kint(j, "priority", s->priority);
    kstr(j, "cluster_mode", s->cluster_mode);
    kint(j, "cluster_size", s->cluster_size);
    kstr(j, "image", s->image);
    kint(j, "created_ms", s->created_ms);
    kint(j, "started_ms", s->started_ms);
    kint(j, "finished_ms", s->finished_ms);
    kint(j, "exit_code", s->exit_code);
    cli_json_key(j, "slots");
    cli_json_slots(j, s->slots);
    history(j, s);
    pending(j, s);
    kernels(j, s);
    if (s->n_services) {
        cli_json_key(j, "services");
        cli_json_strs(j, s->services, s->n_services);
    }
    cli_json_obj_end(j);
}
