/* Field tables of every message body (see docs/protocol.md). Bounds:
 * identifiers and names 256 bytes, free text 4 KiB, command-line
 * arguments and environment values 128 KiB (Linux's MAX_ARG_STRLEN), log
 * chunks 8 MiB; every list has its own maximum.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stddef.h>

#include "schema.h"

#define ID 256u
#define TEXT 4096u
#define ARG 131072u
#define LOGDATA (8u * 1024 * 1024)
#define MANY 10000u

#define F_(st, k, t, req, m, cnt, mx, mx2, sub) \
    {k, t, req, offsetof(st, m), cnt, mx, mx2, sub}
#define STR(st, k, m, mx) F_(st, k, SKV__F_STR, false, m, 0, mx, 0, NULL)
#define STRQ(st, k, m, mx) F_(st, k, SKV__F_STR, true, m, 0, mx, 0, NULL)
#define NUM(st, k, m, t) F_(st, k, t, false, m, 0, 0, 0, NULL)
#define I64(st, k, m) NUM(st, k, m, SKV__F_I64)
#define I32(st, k, m) NUM(st, k, m, SKV__F_I32)
#define U64(st, k, m) NUM(st, k, m, SKV__F_U64)
#define U32(st, k, m) NUM(st, k, m, SKV__F_U32)
#define BOOL(st, k, m) NUM(st, k, m, SKV__F_BOOL)
#define SLOTS(st, k, m) NUM(st, k, m, SKV__F_SLOTS)
#define ARR(st, k, t, m, n, mx, mx2, sub) \
    F_(st, k, t, false, m, offsetof(st, n), mx, mx2, sub)
#define STRS(st, k, m, mx, mx2) ARR(st, k, SKV__F_STRLIST, m, n_##m, mx, mx2, NULL)
#define U32S(st, k, m, mx) ARR(st, k, SKV__F_U32LIST, m, n_##m, mx, 0, NULL)
#define KVS(st, k, m, mx, mx2) ARR(st, k, SKV__F_KVLIST, m, n_##m, mx, mx2, NULL)
#define LIST(st, k, m, mx, sub) ARR(st, k, SKV__F_LIST, m, n_##m, mx, 0, &sub)
#define BIN(st, k, m, n, mx) ARR(st, k, SKV__F_BIN, m, n, mx, 0, NULL)
#define STRUCT(st, k, m, sub) F_(st, k, SKV__F_STRUCT, false, m, 0, 0, 0, &sub)
#define DESC(var, nm, st, flds) \
    static const skv__pdesc var = {nm, sizeof(st), flds, SKV__ARRAY_LEN(flds), NULL}

/* ---- shared pieces -------------------------------------------------------- */

static const skv__pfield device_f[] = {
    STRQ(skv_proto_device, "id", id, ID),
    STR(skv_proto_device, "kind", kind, ID),
    I32(skv_proto_device, "numa_node", numa_node),
    SLOTS(skv_proto_device, "slots", slots),
    STR(skv_proto_device, "model", model, ID),
    STR(skv_proto_device, "bus_id", bus_id, ID),
};
DESC(device_d, "device", skv_proto_device, device_f);

static const skv__pfield alloc_f[] = {
    STRQ(skv_proto_device_alloc, "device_id", device_id, ID),
    SLOTS(skv_proto_device_alloc, "slots", slots),
};
DESC(alloc_d, "device allocation", skv_proto_device_alloc, alloc_f);

static const skv__pfield kreport_f[] = {
    STR(skv_proto_kernel_report, "session_id", session_id, ID),
    STRQ(skv_proto_kernel_report, "kernel_id", kernel_id, ID),
    STR(skv_proto_kernel_report, "status", status, ID),
    LIST(skv_proto_kernel_report, "alloc", alloc, 1024, alloc_d),
};
DESC(kreport_d, "kernel report", skv_proto_kernel_report, kreport_f);

/* ---- generic replies ---------------------------------------------------------- */

static const skv__pfield error_f[] = {
    I32(skv_proto_error, "code", code),
    STR(skv_proto_error, "message", message, TEXT),
    STR(skv_proto_error, "request_type", request_type, ID),
};
DESC(error_d, "error", skv_proto_error, error_f);

static const skv__pfield ack_f[] = {
    STR(skv_proto_ack, "message", message, TEXT),
};
DESC(ack_d, "ack", skv_proto_ack, ack_f);

/* ---- agent -> manager ------------------------------------------------------------ */

static const skv__pfield idetail_f[] = {
    STRQ(skv_proto_image_detail, "name", name, TEXT),
    STR(skv_proto_image_detail, "digest", digest, ID),
    U64(skv_proto_image_detail, "size_bytes", size_bytes),
    STRS(skv_proto_image_detail, "services", services, 64, ID),
    STRS(skv_proto_image_detail, "command", command, 4096, ARG),
};
DESC(idetail_d, "image detail", skv_proto_image_detail, idetail_f);

static const skv__pfield numa_f[] = {
    I32(skv_proto_numa_node, "id", id),
    STR(skv_proto_numa_node, "cpus", cpus, TEXT),
    U32(skv_proto_numa_node, "cores", cores),
    U64(skv_proto_numa_node, "memory_bytes", memory_bytes),
};
DESC(numa_d, "numa node", skv_proto_numa_node, numa_f);

static const skv__pfield link_f[] = {
    STRQ(skv_proto_device_link, "a", a, ID),
    STRQ(skv_proto_device_link, "b", b, ID),
    STRQ(skv_proto_device_link, "link", link, ID),
    U64(skv_proto_device_link, "nvlink_mbps", nvlink_mbps),
};
DESC(link_d, "device link", skv_proto_device_link, link_f);

#define S skv_proto_agent_register
static const skv__pfield areg_f[] = {
    STRQ(S, "agent_id", agent_id, ID),
    STR(S, "resource_group", resource_group, ID),
    STR(S, "architecture", architecture, ID),
    STR(S, "address", address, TEXT),
    STR(S, "version", version, ID),
    KVS(S, "labels", labels, 256, TEXT),
    LIST(S, "devices", devices, 1024, device_d),
    STRS(S, "images", images, 4096, TEXT),
    LIST(S, "kernels", kernels, 4096, kreport_d),
    LIST(S, "image_details", image_details, 4096, idetail_d),
    BOOL(S, "route_deltas", route_deltas),
    LIST(S, "numa_nodes", numa_nodes, 1024, numa_d),
    LIST(S, "links", links, 8192, link_d),
};
DESC(areg_d, "agent.register", S, areg_f);
#undef S

static const skv__pfield route_f[] = {
    STRQ(skv_proto_route, "subnet", subnet, ID),
    STRQ(skv_proto_route, "via", via, ID),
    STR(skv_proto_route, "agent_id", agent_id, ID),
};
DESC(route_d, "route", skv_proto_route, route_f);

static const skv__pfield aregr_f[] = {
    U32(skv_proto_agent_register_reply, "heartbeat_interval_ms", heartbeat_interval_ms),
    U32(skv_proto_agent_register_reply, "heartbeat_timeout_ms", heartbeat_timeout_ms),
    I64(skv_proto_agent_register_reply, "server_time_ms", server_time_ms),
    STR(skv_proto_agent_register_reply, "subnet", subnet, ID),
    STR(skv_proto_agent_register_reply, "cluster_cidr", cluster_cidr, ID),
    LIST(skv_proto_agent_register_reply, "routes", routes, 4096, route_d),
};
DESC(aregr_d, "agent.register.reply", skv_proto_agent_register_reply, aregr_f);

static const skv__pfield aroutes_f[] = {
    LIST(skv_proto_agent_routes, "routes", routes, 4096, route_d),
};
DESC(aroutes_d, "agent.routes", skv_proto_agent_routes, aroutes_f);

/* Changes since the last agent.routes / agent.routes.delta / register
 * reply; bounded like the full table (a flush holds at most one entry per
 * agent each way). */
static const skv__pfield adelta_f[] = {
    LIST(skv_proto_agent_routes_delta, "removed", removed, 4096, route_d),
    LIST(skv_proto_agent_routes_delta, "added", added, 4096, route_d),
};
DESC(adelta_d, "agent.routes.delta", skv_proto_agent_routes_delta, adelta_f);

static const skv__pfield hb_f[] = {
    STRQ(skv_proto_agent_heartbeat, "agent_id", agent_id, ID),
    U64(skv_proto_agent_heartbeat, "seq", seq),
    SLOTS(skv_proto_agent_heartbeat, "occupied", occupied),
    LIST(skv_proto_agent_heartbeat, "kernels", kernels, 4096, kreport_d),
};
DESC(hb_d, "agent.heartbeat", skv_proto_agent_heartbeat, hb_f);

#define S skv_proto_kernel_status
static const skv__pfield kstat_f[] = {
    STR(S, "agent_id", agent_id, ID),
    STR(S, "session_id", session_id, ID),
    STRQ(S, "kernel_id", kernel_id, ID),
    STRQ(S, "status", status, ID),
    STR(S, "reason", reason, TEXT),
    STR(S, "container_id", container_id, ID),
};
DESC(kstat_d, "kernel.status", S, kstat_f);
#undef S

#define S skv_proto_kernel_exit
static const skv__pfield kexit_f[] = {
    STR(S, "agent_id", agent_id, ID),
    STR(S, "session_id", session_id, ID),
    STRQ(S, "kernel_id", kernel_id, ID),
    I32(S, "exit_code", exit_code),
    I32(S, "signal", signal),
    BOOL(S, "oom", oom),
    I64(S, "finished_ms", finished_ms),
    STR(S, "reason", reason, TEXT),
};
DESC(kexit_d, "kernel.exit", S, kexit_f);
#undef S

#define S skv_proto_kernel_stats
static const skv__pfield kstats_f[] = {
    STR(S, "session_id", session_id, ID),
    STRQ(S, "kernel_id", kernel_id, ID),
    U64(S, "cpu_usec", cpu_usec),
    U64(S, "mem_bytes", mem_bytes),
    U64(S, "mem_peak_bytes", mem_peak_bytes),
    U64(S, "io_read_bytes", io_read_bytes),
    U64(S, "io_write_bytes", io_write_bytes),
    U32(S, "pids", pids),
};
DESC(kstats_d, "kernel stats", S, kstats_f);
#undef S

static const skv__pfield astats_f[] = {
    STRQ(skv_proto_agent_stats, "agent_id", agent_id, ID),
    LIST(skv_proto_agent_stats, "kernels", kernels, 4096, kstats_d),
};
DESC(astats_d, "agent.stats", skv_proto_agent_stats, astats_f);

/* ---- manager -> agent ------------------------------------------------------------- */

static const skv__pfield host_f[] = {
    STRQ(skv_proto_cluster_host, "hostname", hostname, ID),
    STR(skv_proto_cluster_host, "role", role, ID),
    U32(skv_proto_cluster_host, "idx", idx),
    STR(skv_proto_cluster_host, "address", address, TEXT),
};
DESC(host_d, "cluster host", skv_proto_cluster_host, host_f);

static const skv__pfield mount_f[] = {
    STRQ(skv_proto_mount, "folder", folder, ID),
    STR(skv_proto_mount, "target", target, TEXT),
    BOOL(skv_proto_mount, "readonly", readonly),
    STR(skv_proto_mount, "source", source, TEXT),
    STR(skv_proto_mount, "folder_id", folder_id, ID),
};
DESC(mount_d, "mount", skv_proto_mount, mount_f);

#define S skv_proto_kernel_create
static const skv__pfield kcreate_f[] = {
    STRQ(S, "session_id", session_id, ID),
    STRQ(S, "kernel_id", kernel_id, ID),
    STR(S, "owner", owner, ID),
    STR(S, "session_type", session_type, ID),
    STRQ(S, "image", image, TEXT),
    STRS(S, "argv", argv, 4096, ARG),
    KVS(S, "env", env, 4096, ARG),
    STR(S, "workdir", workdir, TEXT),
    SLOTS(S, "slots", slots),
    LIST(S, "alloc", alloc, 1024, alloc_d),
    U32S(S, "cpuset", cpuset, 65536),
    U32S(S, "mems", mems, 1024),
    STR(S, "cluster_mode", cluster_mode, ID),
    STR(S, "cluster_role", cluster_role, ID),
    U32(S, "cluster_idx", cluster_idx),
    U32(S, "cluster_size", cluster_size),
    LIST(S, "cluster_hosts", cluster_hosts, 1024, host_d),
    STR(S, "network", network, ID),
    STR(S, "subnet", subnet, ID),
    BIN(S, "ssh_seed", ssh_seed, ssh_seed_len, 32),
    U32S(S, "ports", ports, 64),
    LIST(S, "mounts", mounts, 64, mount_d),
    BOOL(S, "allow_unenforced_shares", allow_unenforced_shares),
    STR(S, "numa_policy", numa_policy, ID),
};
DESC(kcreate_d, "kernel.create", S, kcreate_f);
#undef S

static const skv__pfield kcreater_f[] = {
    STR(skv_proto_kernel_create_reply, "kernel_id", kernel_id, ID),
    STR(skv_proto_kernel_create_reply, "container_id", container_id, ID),
    STR(skv_proto_kernel_create_reply, "address", address, ID),
    STRS(skv_proto_kernel_create_reply, "published", published, 64, ID),
};
DESC(kcreater_d, "kernel.create.reply", skv_proto_kernel_create_reply, kcreater_f);

static const skv__pfield kdestroy_f[] = {
    STR(skv_proto_kernel_destroy, "session_id", session_id, ID),
    STRQ(skv_proto_kernel_destroy, "kernel_id", kernel_id, ID),
    STR(skv_proto_kernel_destroy, "reason", reason, TEXT),
    U32(skv_proto_kernel_destroy, "grace_ms", grace_ms),
};
DESC(kdestroy_d, "kernel.destroy", skv_proto_kernel_destroy, kdestroy_f);

static const skv__pfield logsreq_f[] = {
    STRQ(skv_proto_logs_request, "session_id", session_id, ID),
    STR(skv_proto_logs_request, "kernel_id", kernel_id, ID),
    U64(skv_proto_logs_request, "offset", offset),
    U32(skv_proto_logs_request, "max_bytes", max_bytes),
    STR(skv_proto_logs_request, "stream", stream, ID),
};
DESC(logsreq_d, "logs request", skv_proto_logs_request, logsreq_f);

static const skv__pfield logsrep_f[] = {
    STR(skv_proto_logs_reply, "session_id", session_id, ID),
    STR(skv_proto_logs_reply, "kernel_id", kernel_id, ID),
    BIN(skv_proto_logs_reply, "data", data, data_len, LOGDATA),
    U64(skv_proto_logs_reply, "next_offset", next_offset),
    BOOL(skv_proto_logs_reply, "eof", eof),
};
DESC(logsrep_d, "logs.reply", skv_proto_logs_reply, logsrep_f);

/* ---- user -> manager ------------------------------------------------------------------ */

static const skv__pfield kspec_f[] = {
    STR(skv_proto_kernel_spec, "role", role, ID),
    STR(skv_proto_kernel_spec, "image", image, TEXT),
    SLOTS(skv_proto_kernel_spec, "slots", slots),
};
DESC(kspec_d, "kernel spec", skv_proto_kernel_spec, kspec_f);

#define S skv_proto_session_submit
static const skv__pfield submit_f[] = {
    STR(S, "name", name, ID),
    STR(S, "owner", owner, ID),
    STR(S, "project", project, ID),
    STR(S, "resource_group", resource_group, ID),
    STR(S, "session_type", session_type, ID),
    I32(S, "priority", priority),
    STR(S, "cluster_mode", cluster_mode, ID),
    U32(S, "cluster_size", cluster_size),
    STRQ(S, "image", image, TEXT),
    STRS(S, "command", command, 4096, ARG),
    KVS(S, "env", env, 4096, ARG),
    LIST(S, "kernels", kernels, 1024, kspec_d),
    KVS(S, "constraints", constraints, 256, TEXT),
    STRS(S, "dependencies", dependencies, 1024, ID),
    U64(S, "estimated_duration_ms", estimated_duration_ms),
    BOOL(S, "preemptible", preemptible),
    STR(S, "client_token", client_token, ID),
    U32S(S, "ports", ports, 64),
    I64(S, "not_before_ms", not_before_ms),
    U64(S, "max_lifetime_ms", max_lifetime_ms),
    LIST(S, "mounts", mounts, 64, mount_d),
    STRS(S, "services", services, 64, ID),
    STR(S, "numa_policy", numa_policy, ID),
};
DESC(submit_d, "session.submit", S, submit_f);
#undef S

static const skv__pfield sref_f[] = {
    STRQ(skv_proto_session_ref, "session_id", session_id, ID),
    STR(skv_proto_session_ref, "status", status, ID),
};
DESC(sref_d, "session reference", skv_proto_session_ref, sref_f);

static const skv__pfield slist_f[] = {
    STR(skv_proto_session_list, "owner", owner, ID),
    STR(skv_proto_session_list, "resource_group", resource_group, ID),
    STRS(skv_proto_session_list, "statuses", statuses, 32, ID),
    U32(skv_proto_session_list, "limit", limit),
    U32(skv_proto_session_list, "offset", offset),
};
DESC(slist_d, "session.list", skv_proto_session_list, slist_f);

static const skv__pfield schange_f[] = {
    STRQ(skv_proto_status_change, "status", status, ID),
    I64(skv_proto_status_change, "timestamp_ms", timestamp_ms),
    STR(skv_proto_status_change, "reason", reason, TEXT),
};
DESC(schange_d, "status change", skv_proto_status_change, schange_f);

static const skv__pfield pending_f[] = {
    STR(skv_proto_pending_reason, "resource_group", resource_group, ID),
    STR(skv_proto_pending_reason, "predicate", predicate, ID),
    STR(skv_proto_pending_reason, "slot", slot, ID),
    I64(skv_proto_pending_reason, "shortfall", shortfall),
    STR(skv_proto_pending_reason, "message", message, TEXT),
    I64(skv_proto_pending_reason, "estimated_start_ms", estimated_start_ms),
};
DESC(pending_d, "pending reason", skv_proto_pending_reason, pending_f);

#define S skv_proto_kernel_info
static const skv__pfield kinfo_f[] = {
    STRQ(S, "kernel_id", kernel_id, ID),
    STR(S, "role", role, ID),
    U32(S, "idx", idx),
    STR(S, "agent_id", agent_id, ID),
    STR(S, "container_id", container_id, ID),
    STR(S, "status", status, ID),
    I32(S, "exit_code", exit_code),
    SLOTS(S, "slots", slots),
    STR(S, "address", address, ID),
    STRS(S, "published", published, 64, ID),
};
DESC(kinfo_d, "kernel info", S, kinfo_f);
#undef S

#define S skv_proto_session_info
static const skv__pfield sinfo_f[] = {
    STRQ(S, "session_id", session_id, ID),
    STR(S, "name", name, ID),
    STR(S, "owner", owner, ID),
    STR(S, "project", project, ID),
    STR(S, "resource_group", resource_group, ID),
    STR(S, "session_type", session_type, ID),
    STR(S, "status", status, ID),
    STR(S, "status_reason", status_reason, TEXT),
    I32(S, "priority", priority),
    STR(S, "cluster_mode", cluster_mode, ID),
    U32(S, "cluster_size", cluster_size),
    STR(S, "image", image, TEXT),
    I64(S, "created_ms", created_ms),
    I64(S, "started_ms", started_ms),
    I64(S, "finished_ms", finished_ms),
    I32(S, "exit_code", exit_code),
    SLOTS(S, "slots", slots),
    LIST(S, "history", history, 4096, schange_d),
    LIST(S, "pending", pending, 1024, pending_d),
    LIST(S, "kernels", kernels, 1024, kinfo_d),
    STRS(S, "services", services, 64, ID),
};
DESC(sinfo_d, "session", S, sinfo_f);
#undef S

static const skv__pfield slistr_f[] = {
    LIST(skv_proto_session_list_reply, "sessions", sessions, MANY, sinfo_d),
    U64(skv_proto_session_list_reply, "total", total),
};
DESC(slistr_d, "session.list.reply", skv_proto_session_list_reply, slistr_f);

static const skv__pfield sid_f[] = {
    STRQ(skv_proto_session_id, "session_id", session_id, ID),
};
DESC(sid_d, "session.show", skv_proto_session_id, sid_f);

static const skv__pfield sshowr_f[] = {
    STRUCT(skv_proto_session_show_reply, "session", session, sinfo_d),
};
DESC(sshowr_d, "session.show.reply", skv_proto_session_show_reply, sshowr_f);

static const skv__pfield sterm_f[] = {
    STRQ(skv_proto_session_terminate, "session_id", session_id, ID),
    STR(skv_proto_session_terminate, "reason", reason, TEXT),
    BOOL(skv_proto_session_terminate, "force", force),
};
DESC(sterm_d, "session.terminate", skv_proto_session_terminate, sterm_f);

static const skv__pfield alist_f[] = {
    STR(skv_proto_agent_list, "resource_group", resource_group, ID),
    BOOL(skv_proto_agent_list, "include_lost", include_lost),
};
DESC(alist_d, "agent.list", skv_proto_agent_list, alist_f);

static const skv__pfield dfault_f[] = {
    STRQ(skv_proto_device_fault, "device_id", device_id, ID),
    STR(skv_proto_device_fault, "reason", reason, TEXT),
};
DESC(dfault_d, "device fault", skv_proto_device_fault, dfault_f);

static const skv__pfield dhealth_f[] = {
    STRQ(skv_proto_agent_device_health, "agent_id", agent_id, ID),
    LIST(skv_proto_agent_device_health, "unhealthy", unhealthy, 1024,
         dfault_d),
};
DESC(dhealth_d, "agent.device_health", skv_proto_agent_device_health,
     dhealth_f);

static const skv__pfield aagent_f[] = {
    STRQ(skv_proto_admin_agent, "agent_id", agent_id, ID),
    STRQ(skv_proto_admin_agent, "action", action, ID),
};
DESC(aagent_d, "admin.agent", skv_proto_admin_agent, aagent_f);

#define S skv_proto_agent_info
static const skv__pfield ainfo_f[] = {
    STRQ(S, "agent_id", agent_id, ID),
    STR(S, "resource_group", resource_group, ID),
    STR(S, "architecture", architecture, ID),
    STR(S, "address", address, TEXT),
    STR(S, "status", status, ID),
    KVS(S, "labels", labels, 256, TEXT),
    LIST(S, "devices", devices, 1024, device_d),
    SLOTS(S, "capacity", capacity),
    SLOTS(S, "occupied", occupied),
    I64(S, "last_heartbeat_ms", last_heartbeat_ms),
    U32(S, "n_running", n_running),
    STR(S, "admin_state", admin_state, ID),
    I64(S, "drain_deadline_ms", drain_deadline_ms),
    LIST(S, "unhealthy", unhealthy, 1024, dfault_d),
};
DESC(ainfo_d, "agent", S, ainfo_f);
#undef S

static const skv__pfield alistr_f[] = {
    LIST(skv_proto_agent_list_reply, "agents", agents, MANY, ainfo_d),
};
DESC(alistr_d, "agent.list.reply", skv_proto_agent_list_reply, alistr_f);

static const skv__pfield ilist_f[] = {
    STR(skv_proto_image_list, "architecture", architecture, ID),
};
DESC(ilist_d, "image.list", skv_proto_image_list, ilist_f);

static const skv__pfield iinfo_f[] = {
    STRQ(skv_proto_image_info, "name", name, TEXT),
    STR(skv_proto_image_info, "architecture", architecture, ID),
    STR(skv_proto_image_info, "digest", digest, ID),
    U64(skv_proto_image_info, "size_bytes", size_bytes),
    STRS(skv_proto_image_info, "agents", agents, MANY, ID),
};
DESC(iinfo_d, "image", skv_proto_image_info, iinfo_f);

static const skv__pfield ilistr_f[] = {
    LIST(skv_proto_image_list_reply, "images", images, MANY, iinfo_d),
};
DESC(ilistr_d, "image.list.reply", skv_proto_image_list_reply, ilistr_f);

/* ---- admin ---------------------------------------------------------------------------- */

#define S skv_proto_user
static const skv__pfield user_f[] = {
    STRQ(S, "name", name, ID),
    STR(S, "email", email, ID),
    STR(S, "role", role, ID),
    STR(S, "domain", domain, ID),
    STRS(S, "projects", projects, 1024, ID),
    STR(S, "resource_policy", resource_policy, ID),
    STR(S, "description", description, TEXT),
    BOOL(S, "active", active),
};
DESC(user_d, "user", S, user_f);
#undef S

#define S skv_proto_keypair
static const skv__pfield keypair_f[] = {
    STR(S, "access_key", access_key, ID),
    STR(S, "secret_key", secret_key, ID),
    STR(S, "user", user, ID),
    STR(S, "resource_policy", resource_policy, ID),
    BOOL(S, "active", active),
    I64(S, "created_ms", created_ms),
};
DESC(keypair_d, "keypair", S, keypair_f);
#undef S

#define S skv_proto_project
static const skv__pfield project_f[] = {
    STRQ(S, "name", name, ID),
    STR(S, "domain", domain, ID),
    STR(S, "description", description, TEXT),
    STR(S, "resource_policy", resource_policy, ID),
    BOOL(S, "active", active),
};
DESC(project_d, "project", S, project_f);
#undef S

#define S skv_proto_domain
static const skv__pfield domain_f[] = {
    STRQ(S, "name", name, ID),
    STR(S, "description", description, TEXT),
    STRS(S, "resource_groups", resource_groups, 1024, ID),
    BOOL(S, "active", active),
};
DESC(domain_d, "domain", S, domain_f);
#undef S

#define S skv_proto_resource_policy
static const skv__pfield policy_f[] = {
    STRQ(S, "name", name, ID),
    SLOTS(S, "max_slots", max_slots),
    U32(S, "max_concurrent_sessions", max_concurrent_sessions),
    U32(S, "max_pending_sessions", max_pending_sessions),
    U32(S, "max_cluster_size", max_cluster_size),
    U64(S, "max_session_lifetime_ms", max_session_lifetime_ms),
    U64(S, "idle_timeout_ms", idle_timeout_ms),
};
DESC(policy_d, "resource policy", S, policy_f);
#undef S

#define S skv_proto_resource_group
static const skv__pfield group_f[] = {
    STRQ(S, "name", name, ID),
    STR(S, "description", description, TEXT),
    STR(S, "scheduler", scheduler, ID),
    STR(S, "lost_batch_policy", lost_batch_policy, ID),
    U64(S, "pending_timeout_ms", pending_timeout_ms),
    STRS(S, "session_types", session_types, 64, ID),
    BOOL(S, "active", active),
    STR(S, "selector", selector, ID),
    STR(S, "preemption", preemption, ID),
    I64(S, "preempt_min_runtime_ms", preempt_min_runtime_ms),
    STR(S, "preempt_mode", preempt_mode, ID),
    STR(S, "drain_action", drain_action, ID),
    I64(S, "drain_grace_ms", drain_grace_ms),
    STR(S, "fault_action", fault_action, ID),
    STR(S, "allow_unenforced_fractions", allow_unenforced_fractions, ID),
    I64(S, "idle_timeout_ms", idle_timeout_ms),
    I64(S, "max_lifetime_ms", max_lifetime_ms),
    STR(S, "preempt_order", preempt_order, ID),
};
DESC(group_d, "resource group", S, group_f);
#undef S

/* The op must name an operation; objects are optional for LIST. */
static int check_admin_op(const void *base, int code, skv_error *err)
{
    uint32_t op = *(const uint32_t *)base; /* op is the first member */
    if (op < SKV_PROTO_ADMIN_CREATE || op > SKV_PROTO_ADMIN_LIST)
        return skv__err(err, code, "admin: op %u is not one of "
                        "create(1), update(2), delete(3), list(4)", op);
    return 0;
}

#define ADMIN(var, nm, st, obj, sub)                                          \
    static const skv__pfield var##_f[] = {                                     \
        F_(st, "op", SKV__F_U32, true, op, 0, 0, 0, NULL),                     \
        STRUCT(st, "object", obj, sub),                                        \
    };                                                                         \
    static const skv__pdesc var = {nm, sizeof(st), var##_f,                    \
                                   SKV__ARRAY_LEN(var##_f), check_admin_op}
#define ADMIN_REPLY(var, nm, st, arr, sub)                                    \
    static const skv__pfield var##_f[] = {                                     \
        LIST(st, "objects", arr, MANY, sub),                                   \
    };                                                                         \
    DESC(var, nm, st, var##_f)

ADMIN(auser_d, "admin.user", skv_proto_admin_user, user, user_d);
ADMIN_REPLY(auserr_d, "admin.user.reply", skv_proto_admin_user_reply, users, user_d);
ADMIN(akey_d, "admin.keypair", skv_proto_admin_keypair, keypair, keypair_d);
ADMIN_REPLY(akeyr_d, "admin.keypair.reply", skv_proto_admin_keypair_reply,
            keypairs, keypair_d);
ADMIN(aproj_d, "admin.project", skv_proto_admin_project, project, project_d);
ADMIN_REPLY(aprojr_d, "admin.project.reply", skv_proto_admin_project_reply,
            projects, project_d);
ADMIN(adom_d, "admin.domain", skv_proto_admin_domain, domain, domain_d);
ADMIN_REPLY(adomr_d, "admin.domain.reply", skv_proto_admin_domain_reply,
            domains, domain_d);
ADMIN(apol_d, "admin.resource_policy", skv_proto_admin_resource_policy, policy,
      policy_d);
ADMIN_REPLY(apolr_d, "admin.resource_policy.reply",
            skv_proto_admin_resource_policy_reply, policies, policy_d);
ADMIN(agrp_d, "admin.resource_group", skv_proto_admin_resource_group, group,
      group_d);
ADMIN_REPLY(agrpr_d, "admin.resource_group.reply",
            skv_proto_admin_resource_group_reply, groups, group_d);

static const skv__pfield abak_f[] = {
    STRQ(skv_proto_admin_backup, "name", name, ID),
};
DESC(abak_d, "admin.backup", skv_proto_admin_backup, abak_f);
static const skv__pfield abakr_f[] = {
    STRQ(skv_proto_admin_backup_reply, "path", path, TEXT),
    U64(skv_proto_admin_backup_reply, "bytes", bytes),
};
DESC(abakr_d, "admin.backup.reply", skv_proto_admin_backup_reply, abakr_f);

/* ---- exec ------------------------------------------------------------------------------ */

#define EXECDATA (1024u * 1024)

#define S skv_proto_exec_start
static const skv__pfield xstart_f[] = {
    STRQ(S, "session_id", session_id, ID),
    STR(S, "kernel_id", kernel_id, ID),
    STRQ(S, "exec_id", exec_id, ID),
    STRS(S, "argv", argv, 4096, ARG),
    KVS(S, "env", env, 4096, ARG),
    STR(S, "workdir", workdir, TEXT),
    BOOL(S, "tty", tty),
    U32(S, "rows", rows),
    U32(S, "cols", cols),
    U32(S, "window", window),
};
DESC(xstart_d, "exec.start", S, xstart_f);
#undef S

static const skv__pfield xstartr_f[] = {
    STRQ(skv_proto_exec_start_reply, "exec_id", exec_id, ID),
    I64(skv_proto_exec_start_reply, "pid", pid),
    U32(skv_proto_exec_start_reply, "window", window),
};
DESC(xstartr_d, "exec.start.reply", skv_proto_exec_start_reply, xstartr_f);

static const skv__pfield xdata_f[] = {
    STRQ(skv_proto_exec_data, "exec_id", exec_id, ID),
    STR(skv_proto_exec_data, "stream", stream, ID),
    BIN(skv_proto_exec_data, "data", data, data_len, EXECDATA),
    BOOL(skv_proto_exec_data, "eof", eof),
};
DESC(xdata_d, "exec data", skv_proto_exec_data, xdata_f);

static const skv__pfield xack_f[] = {
    STRQ(skv_proto_exec_ack, "exec_id", exec_id, ID),
    U32(skv_proto_exec_ack, "bytes", bytes),
};
DESC(xack_d, "exec ack", skv_proto_exec_ack, xack_f);

static const skv__pfield xresize_f[] = {
    STRQ(skv_proto_exec_resize, "exec_id", exec_id, ID),
    U32(skv_proto_exec_resize, "rows", rows),
    U32(skv_proto_exec_resize, "cols", cols),
};
DESC(xresize_d, "exec.resize", skv_proto_exec_resize, xresize_f);

static const skv__pfield xsignal_f[] = {
    STRQ(skv_proto_exec_signal, "exec_id", exec_id, ID),
    I32(skv_proto_exec_signal, "signal", signal),
};
DESC(xsignal_d, "exec.signal", skv_proto_exec_signal, xsignal_f);

static const skv__pfield xexit_f[] = {
    STRQ(skv_proto_exec_exit, "exec_id", exec_id, ID),
    I32(skv_proto_exec_exit, "exit_code", exit_code),
    I32(skv_proto_exec_exit, "signal", signal),
    STR(skv_proto_exec_exit, "reason", reason, TEXT),
};
DESC(xexit_d, "exec.exit", skv_proto_exec_exit, xexit_f);

/* ---- virtual folders ------------------------------------------------------------------ */

#define VFDATA (4u * 1024 * 1024)

static const skv__pfield vshare_f[] = {
    STRQ(skv_proto_vfolder_share, "user", user, ID),
    STR(skv_proto_vfolder_share, "perm", perm, ID),
    BOOL(skv_proto_vfolder_share, "accepted", accepted),
};
DESC(vshare_d, "vfolder share", skv_proto_vfolder_share, vshare_f);

#define S skv_proto_vfolder_info
static const skv__pfield vinfo_f[] = {
    STRQ(S, "id", id, ID),
    STR(S, "name", name, ID),
    STR(S, "host", host, ID),
    STR(S, "owner", owner, ID),
    STR(S, "project", project, ID),
    STR(S, "status", status, ID),
    STR(S, "perm", perm, ID),
    STR(S, "trash_name", trash_name, ID),
    U64(S, "quota_bytes", quota_bytes),
    U64(S, "usage_bytes", usage_bytes),
    I64(S, "created_ms", created_ms),
    LIST(S, "shares", shares, 4096, vshare_d),
};
DESC(vinfo_d, "vfolder info", S, vinfo_f);
#undef S

#define S skv_proto_vfolder
static const skv__pfield vfolder_f[] = {
    STRQ(S, "op", op, ID),
    STR(S, "name", name, ID),
    STR(S, "new_name", new_name, ID),
    STR(S, "host", host, ID),
    STR(S, "project", project, ID),
    U64(S, "quota_bytes", quota_bytes),
    STR(S, "user", user, ID),
    STR(S, "perm", perm, ID),
    BOOL(S, "trash", trash),
};
DESC(vfolder_d, "vfolder", S, vfolder_f);
#undef S

static const skv__pfield vfolderr_f[] = {
    LIST(skv_proto_vfolder_reply, "folders", folders, MANY, vinfo_d),
    STR(skv_proto_vfolder_reply, "message", message, TEXT),
};
DESC(vfolderr_d, "vfolder.reply", skv_proto_vfolder_reply, vfolderr_f);

#define S skv_proto_vfolder_entry
static const skv__pfield ventry_f[] = {
    STRQ(S, "name", name, TEXT),
    STR(S, "type", type, ID),
    U64(S, "size", size),
    U32(S, "mode", mode),
    I64(S, "mtime_s", mtime_s),
};
DESC(ventry_d, "vfolder entry", S, ventry_f);
#undef S

#define S skv_proto_vfolder_file
static const skv__pfield vfile_f[] = {
    STRQ(S, "op", op, ID),
    STRQ(S, "folder", folder, ID),
    STR(S, "path", path, TEXT),
    STR(S, "to", to, TEXT),
    BOOL(S, "recursive", recursive),
};
DESC(vfile_d, "vfolder.file", S, vfile_f);
#undef S

static const skv__pfield vfiler_f[] = {
    LIST(skv_proto_vfolder_file_reply, "entries", entries, 100000, ventry_d),
    BIN(skv_proto_vfolder_file_reply, "sha256", sha256, sha256_len, 32),
};
DESC(vfiler_d, "vfolder.file.reply", skv_proto_vfolder_file_reply, vfiler_f);

#define S skv_proto_vfolder_upload
static const skv__pfield vup_f[] = {
    STRQ(S, "op", op, ID),
    STRQ(S, "folder", folder, ID),
    STRQ(S, "path", path, TEXT),
    STRQ(S, "upload_id", upload_id, ID),
    U64(S, "offset", offset),
    BIN(S, "data", data, data_len, VFDATA),
    BIN(S, "sha256", sha256, sha256_len, 32),
    BOOL(S, "resume", resume),
    U32(S, "mode", mode),
    BOOL(S, "verify", verify),
};
DESC(vup_d, "vfolder.upload", S, vup_f);
#undef S

static const skv__pfield vupr_f[] = {
    U64(skv_proto_vfolder_upload_reply, "offset", offset),
    BIN(skv_proto_vfolder_upload_reply, "sha256", sha256, sha256_len, 32),
};
DESC(vupr_d, "vfolder.upload.reply", skv_proto_vfolder_upload_reply, vupr_f);

#define S skv_proto_vfolder_download
static const skv__pfield vdown_f[] = {
    STRQ(S, "folder", folder, ID),
    STRQ(S, "path", path, TEXT),
    U64(S, "offset", offset),
    U32(S, "max_bytes", max_bytes),
};
DESC(vdown_d, "vfolder.download", S, vdown_f);
#undef S

#define S skv_proto_vfolder_download_reply
static const skv__pfield vdownr_f[] = {
    BIN(S, "data", data, data_len, VFDATA),
    U64(S, "offset", offset),
    U64(S, "file_size", file_size),
    BOOL(S, "eof", eof),
};
DESC(vdownr_d, "vfolder.download.reply", S, vdownr_f);
#undef S
static const skv__pfield apptok_f[] = {
    STRQ(skv_proto_app_token, "session_id", session_id, ID),
    STRQ(skv_proto_app_token, "service", service, ID),
    U32(skv_proto_app_token, "ttl_s", ttl_s),
    BOOL(skv_proto_app_token, "ssh_key", ssh_key),
};
DESC(apptok_d, "app.token", skv_proto_app_token, apptok_f);

static const skv__pfield apptokr_f[] = {
    STRQ(skv_proto_app_token_reply, "token", token, TEXT),
    STR(skv_proto_app_token_reply, "path", path, TEXT),
    I64(skv_proto_app_token_reply, "expires_ms", expires_ms),
    STR(skv_proto_app_token_reply, "ssh_private_key", ssh_private_key, TEXT),
    STR(skv_proto_app_token_reply, "ssh_public_key", ssh_public_key, TEXT),
};
DESC(apptokr_d, "app.token.reply", skv_proto_app_token_reply, apptokr_f);

static const skv__pfield appres_f[] = {
    STRQ(skv_proto_app_resolve, "session_id", session_id, ID),
    STRQ(skv_proto_app_resolve, "service", service, ID),
    STRQ(skv_proto_app_resolve, "token", token, TEXT),
};
DESC(appres_d, "app.resolve", skv_proto_app_resolve, appres_f);

static const skv__pfield appresr_f[] = {
    STR(skv_proto_app_resolve_reply, "user", user, ID),
    STR(skv_proto_app_resolve_reply, "host", host, ID),
    U32(skv_proto_app_resolve_reply, "port", port),
    STR(skv_proto_app_resolve_reply, "protocol", protocol, ID),
    I64(skv_proto_app_resolve_reply, "expires_ms", expires_ms),
};
DESC(appresr_d, "app.resolve.reply", skv_proto_app_resolve_reply, appresr_f);

/* ---- quotas per resource group ------------------------------------------------------- */

#define S skv_proto_quota
static const skv__pfield quota_f[] = {
    STR(S, "scope", scope, ID),
    STR(S, "owner", owner, ID),
    STR(S, "resource_group", resource_group, ID),
    SLOTS(S, "guaranteed", guaranteed),
    SLOTS(S, "limit", limit),
    SLOTS(S, "borrow_limit", borrow_limit),
};
DESC(quota_d, "quota", S, quota_f);
#undef S
ADMIN(aquota_d, "admin.quota", skv_proto_admin_quota, quota, quota_d);
ADMIN_REPLY(aquotar_d, "admin.quota.reply", skv_proto_admin_quota_reply,
            quotas, quota_d);

static const skv__pfield qtree_f[] = {
    STR(skv_proto_admin_quota_tree, "resource_group", resource_group, ID),
};
DESC(qtree_d, "admin.quota_tree", skv_proto_admin_quota_tree, qtree_f);
#define S skv_proto_quota_node
static const skv__pfield qnode_f[] = {
    STRQ(S, "resource_group", resource_group, ID),
    STRQ(S, "scope", scope, ID),
    STRQ(S, "name", name, ID),
    STR(S, "parent", parent, ID),
    SLOTS(S, "guaranteed", guaranteed),
    SLOTS(S, "limit", limit),
    SLOTS(S, "borrow_limit", borrow_limit),
    SLOTS(S, "used", used),
    SLOTS(S, "borrowed", borrowed),
    SLOTS(S, "lent", lent),
};
DESC(qnode_d, "quota node", S, qnode_f);
#undef S
static const skv__pfield qtreer_f[] = {
    LIST(skv_proto_admin_quota_tree_reply, "nodes", nodes, MANY, qnode_d),
};
DESC(qtreer_d, "admin.quota_tree.reply", skv_proto_admin_quota_tree_reply,
     qtreer_f);
static const skv__pfield appact_f[] = {
    STRS(skv_proto_app_activity, "session_ids", session_ids,
         SKV_PROTO_APP_ACTIVITY_MAX, ID),
};
DESC(appact_d, "app.activity", skv_proto_app_activity, appact_f);

/* ---- the type table ------------------------------------------------------------------ */

#define REQ SKV_PROTO_REQUEST
#define RSP SKV_PROTO_RESPONSE
#define EVT SKV_PROTO_EVENT
#define T(type, name, kind, reply, op, desc) [type] = {name, kind, reply, op, &desc}

const skv__ptype skv__proto_types[SKV_PROTO_TYPE_COUNT] = {
    [SKV_PROTO_UNKNOWN] = {"?", REQ, SKV_PROTO_UNKNOWN, 0, NULL},
    T(SKV_PROTO_ERROR, "error", RSP, 0, 0, error_d),
    T(SKV_PROTO_ACK, "ack", RSP, 0, 0, ack_d),
    T(SKV_PROTO_AGENT_REGISTER, "agent.register", REQ,
      SKV_PROTO_AGENT_REGISTER_REPLY, SKV_AUTH_OP_AGENT_REPORT, areg_d),
    T(SKV_PROTO_AGENT_REGISTER_REPLY, "agent.register.reply", RSP, 0, 0, aregr_d),
    T(SKV_PROTO_AGENT_HEARTBEAT, "agent.heartbeat", EVT, 0,
      SKV_AUTH_OP_AGENT_REPORT, hb_d),
    T(SKV_PROTO_KERNEL_STATUS, "kernel.status", EVT, 0, SKV_AUTH_OP_AGENT_REPORT,
      kstat_d),
    T(SKV_PROTO_KERNEL_EXIT, "kernel.exit", EVT, 0, SKV_AUTH_OP_AGENT_REPORT,
      kexit_d),
    T(SKV_PROTO_AGENT_STATS, "agent.stats", EVT, 0, SKV_AUTH_OP_AGENT_REPORT,
      astats_d),
    T(SKV_PROTO_KERNEL_CREATE, "kernel.create", REQ,
      SKV_PROTO_KERNEL_CREATE_REPLY, SKV_AUTH_OP_ADMIN, kcreate_d),
    T(SKV_PROTO_KERNEL_CREATE_REPLY, "kernel.create.reply", RSP, 0, 0,
      kcreater_d),
    T(SKV_PROTO_KERNEL_DESTROY, "kernel.destroy", REQ, SKV_PROTO_ACK,
      SKV_AUTH_OP_ADMIN, kdestroy_d),
    T(SKV_PROTO_KERNEL_LOGS, "kernel.logs", REQ, SKV_PROTO_LOGS_REPLY,
      SKV_AUTH_OP_ADMIN, logsreq_d),
    T(SKV_PROTO_LOGS_REPLY, "logs.reply", RSP, 0, 0, logsrep_d),
    T(SKV_PROTO_SESSION_SUBMIT, "session.submit", REQ,
      SKV_PROTO_SESSION_SUBMIT_REPLY, SKV_AUTH_OP_SESSION_SUBMIT, submit_d),
    T(SKV_PROTO_SESSION_SUBMIT_REPLY, "session.submit.reply", RSP, 0, 0, sref_d),
    T(SKV_PROTO_SESSION_LIST, "session.list", REQ, SKV_PROTO_SESSION_LIST_REPLY,
      SKV_AUTH_OP_SESSION_READ, slist_d),
    T(SKV_PROTO_SESSION_LIST_REPLY, "session.list.reply", RSP, 0, 0, slistr_d),
    T(SKV_PROTO_SESSION_SHOW, "session.show", REQ, SKV_PROTO_SESSION_SHOW_REPLY,
      SKV_AUTH_OP_SESSION_READ, sid_d),
    T(SKV_PROTO_SESSION_SHOW_REPLY, "session.show.reply", RSP, 0, 0, sshowr_d),
    T(SKV_PROTO_SESSION_TERMINATE, "session.terminate", REQ,
      SKV_PROTO_SESSION_TERMINATE_REPLY, SKV_AUTH_OP_SESSION_CONTROL, sterm_d),
    T(SKV_PROTO_SESSION_TERMINATE_REPLY, "session.terminate.reply", RSP, 0, 0,
      sref_d),
    T(SKV_PROTO_SESSION_LOGS, "session.logs", REQ, SKV_PROTO_LOGS_REPLY,
      SKV_AUTH_OP_SESSION_READ, logsreq_d),
    T(SKV_PROTO_AGENT_LIST, "agent.list", REQ, SKV_PROTO_AGENT_LIST_REPLY,
      SKV_AUTH_OP_CLUSTER_READ, alist_d),
    T(SKV_PROTO_AGENT_LIST_REPLY, "agent.list.reply", RSP, 0, 0, alistr_d),
    T(SKV_PROTO_IMAGE_LIST, "image.list", REQ, SKV_PROTO_IMAGE_LIST_REPLY,
      SKV_AUTH_OP_CLUSTER_READ, ilist_d),
    T(SKV_PROTO_IMAGE_LIST_REPLY, "image.list.reply", RSP, 0, 0, ilistr_d),
    T(SKV_PROTO_ADMIN_USER, "admin.user", REQ, SKV_PROTO_ADMIN_USER_REPLY,
      SKV_AUTH_OP_ADMIN, auser_d),
    T(SKV_PROTO_ADMIN_USER_REPLY, "admin.user.reply", RSP, 0, 0, auserr_d),
    T(SKV_PROTO_ADMIN_KEYPAIR, "admin.keypair", REQ, SKV_PROTO_ADMIN_KEYPAIR_REPLY,
      SKV_AUTH_OP_ADMIN, akey_d),
    T(SKV_PROTO_ADMIN_KEYPAIR_REPLY, "admin.keypair.reply", RSP, 0, 0, akeyr_d),
    T(SKV_PROTO_ADMIN_PROJECT, "admin.project", REQ, SKV_PROTO_ADMIN_PROJECT_REPLY,
      SKV_AUTH_OP_ADMIN, aproj_d),
    T(SKV_PROTO_ADMIN_PROJECT_REPLY, "admin.project.reply", RSP, 0, 0, aprojr_d),
    T(SKV_PROTO_ADMIN_DOMAIN, "admin.domain", REQ, SKV_PROTO_ADMIN_DOMAIN_REPLY,
      SKV_AUTH_OP_ADMIN, adom_d),
    T(SKV_PROTO_ADMIN_DOMAIN_REPLY, "admin.domain.reply", RSP, 0, 0, adomr_d),
    T(SKV_PROTO_ADMIN_RESOURCE_POLICY, "admin.resource_policy", REQ,
      SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, SKV_AUTH_OP_ADMIN, apol_d),
    T(SKV_PROTO_ADMIN_RESOURCE_POLICY_REPLY, "admin.resource_policy.reply", RSP,
      0, 0, apolr_d),
    T(SKV_PROTO_ADMIN_RESOURCE_GROUP, "admin.resource_group", REQ,
      SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, SKV_AUTH_OP_ADMIN, agrp_d),
    T(SKV_PROTO_ADMIN_RESOURCE_GROUP_REPLY, "admin.resource_group.reply", RSP,
      0, 0, agrpr_d),
    T(SKV_PROTO_AGENT_ROUTES, "agent.routes", EVT, 0, SKV_AUTH_OP_ADMIN,
      aroutes_d),
    T(SKV_PROTO_ADMIN_BACKUP, "admin.backup", REQ, SKV_PROTO_ADMIN_BACKUP_REPLY,
      SKV_AUTH_OP_ADMIN, abak_d),
    T(SKV_PROTO_ADMIN_BACKUP_REPLY, "admin.backup.reply", RSP, 0, 0, abakr_d),
    /* The client's side needs control of the session; what the agent
     * sends (output, stdin credit, exit) is an agent report. */
    T(SKV_PROTO_EXEC_START, "exec.start", REQ, SKV_PROTO_EXEC_START_REPLY,
      SKV_AUTH_OP_SESSION_CONTROL, xstart_d),
    T(SKV_PROTO_EXEC_START_REPLY, "exec.start.reply", RSP, 0, 0, xstartr_d),
    T(SKV_PROTO_EXEC_STDIN, "exec.stdin", EVT, 0, SKV_AUTH_OP_SESSION_CONTROL,
      xdata_d),
    T(SKV_PROTO_EXEC_OUTPUT, "exec.output", EVT, 0, SKV_AUTH_OP_AGENT_REPORT,
      xdata_d),
    T(SKV_PROTO_EXEC_OUTPUT_ACK, "exec.output.ack", EVT, 0,
      SKV_AUTH_OP_SESSION_CONTROL, xack_d),
    T(SKV_PROTO_EXEC_STDIN_ACK, "exec.stdin.ack", EVT, 0,
      SKV_AUTH_OP_AGENT_REPORT, xack_d),
    T(SKV_PROTO_EXEC_RESIZE, "exec.resize", EVT, 0, SKV_AUTH_OP_SESSION_CONTROL,
      xresize_d),
    T(SKV_PROTO_EXEC_SIGNAL, "exec.signal", EVT, 0, SKV_AUTH_OP_SESSION_CONTROL,
      xsignal_d),
    T(SKV_PROTO_EXEC_EXIT, "exec.exit", EVT, 0, SKV_AUTH_OP_AGENT_REPORT,
      xexit_d),
    T(SKV_PROTO_AGENT_ROUTES_DELTA, "agent.routes.delta", EVT, 0,
      SKV_AUTH_OP_ADMIN, adelta_d),
    /* Any active user; the manager checks each folder's owner, project
     * and shares itself (mgr_vfolder*.c). */
    T(SKV_PROTO_VFOLDER, "vfolder", REQ, SKV_PROTO_VFOLDER_REPLY,
      SKV_AUTH_OP_SESSION_SUBMIT, vfolder_d),
    T(SKV_PROTO_VFOLDER_REPLY, "vfolder.reply", RSP, 0, 0, vfolderr_d),
    T(SKV_PROTO_VFOLDER_FILE, "vfolder.file", REQ, SKV_PROTO_VFOLDER_FILE_REPLY,
      SKV_AUTH_OP_SESSION_SUBMIT, vfile_d),
    T(SKV_PROTO_VFOLDER_FILE_REPLY, "vfolder.file.reply", RSP, 0, 0, vfiler_d),
    T(SKV_PROTO_VFOLDER_UPLOAD, "vfolder.upload", REQ,
      SKV_PROTO_VFOLDER_UPLOAD_REPLY, SKV_AUTH_OP_SESSION_SUBMIT, vup_d),
    T(SKV_PROTO_VFOLDER_UPLOAD_REPLY, "vfolder.upload.reply", RSP, 0, 0,
      vupr_d),
    T(SKV_PROTO_VFOLDER_DOWNLOAD, "vfolder.download", REQ,
      SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, SKV_AUTH_OP_SESSION_SUBMIT, vdown_d),
    T(SKV_PROTO_VFOLDER_DOWNLOAD_REPLY, "vfolder.download.reply", RSP, 0, 0,
      vdownr_d),
    /* A token is the session owner's (checked by the handler); resolving
     * one is the app proxy's, which holds an admin key. */
    T(SKV_PROTO_APP_TOKEN, "app.token", REQ, SKV_PROTO_APP_TOKEN_REPLY,
      SKV_AUTH_OP_SESSION_READ, apptok_d),
    T(SKV_PROTO_APP_TOKEN_REPLY, "app.token.reply", RSP, 0, 0, apptokr_d),
    T(SKV_PROTO_APP_RESOLVE, "app.resolve", REQ, SKV_PROTO_APP_RESOLVE_REPLY,
      SKV_AUTH_OP_ADMIN, appres_d),
    T(SKV_PROTO_APP_RESOLVE_REPLY, "app.resolve.reply", RSP, 0, 0, appresr_d),
    T(SKV_PROTO_ADMIN_QUOTA, "admin.quota", REQ, SKV_PROTO_ADMIN_QUOTA_REPLY,
      SKV_AUTH_OP_ADMIN, aquota_d),
    T(SKV_PROTO_ADMIN_QUOTA_REPLY, "admin.quota.reply", RSP, 0, 0, aquotar_d),
    T(SKV_PROTO_ADMIN_QUOTA_TREE, "admin.quota_tree", REQ,
      SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, SKV_AUTH_OP_ADMIN, qtree_d),
    T(SKV_PROTO_ADMIN_QUOTA_TREE_REPLY, "admin.quota_tree.reply", RSP, 0, 0,
      qtreer_d),
    T(SKV_PROTO_ADMIN_AGENT, "admin.agent", REQ, SKV_PROTO_AGENT_LIST_REPLY,
      SKV_AUTH_OP_ADMIN, aagent_d),
    T(SKV_PROTO_AGENT_DEVICE_HEALTH, "agent.device_health", EVT, 0,
      SKV_AUTH_OP_AGENT_REPORT, dhealth_d),
    /* The proxy's report of sessions it served (idle limits). */
    T(SKV_PROTO_APP_ACTIVITY, "app.activity", REQ, SKV_PROTO_ACK,
      SKV_AUTH_OP_ADMIN, appact_d),
};
