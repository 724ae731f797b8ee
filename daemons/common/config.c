/* The daemons' configuration keys: one table gives each key's section,
 * type, default, flag and help, so the INI file, the command line, --help
 * and docs/config.md all say the same.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>

#include "sokovan/net.h"
#include "sokovan/slots.h"
#include "sokovan/topo.h"
#include "skvd.h"

typedef enum kind {
    K_PATH,     /* absolute path, required */
    K_OPTPATH,  /* absolute path or "" (unset) */
    K_STR,      /* free text or "" (unset) */
    K_ID,       /* 1..63 of [A-Za-z0-9_.-] */
    K_IDLIST,   /* comma-separated ids or "" */
    K_UNIX,     /* unix socket path, or "" / "none" (disabled) */
    K_TCP,      /* host:port, or "" / "none" (disabled) */
    K_MANAGER,  /* "unix:/path" or "host:port" */
    K_UINT,     /* decimal integer in [min, max] */
    K_BYTES,    /* byte amount ("64m") in [min, max] */
    K_LEVEL,    /* log level */
    K_BOOL,     /* on/off, true/false, yes/no, 1/0 */
    K_PIN,      /* SHA-256 fingerprint (64 hex digits, ':' allowed) or "" */
    K_CPUS,     /* CPU list or "" */
    K_BACKEND,  /* runtime backend name */
    K_IMAGE,    /* NAME=TARBALL, repeatable: each one appends */
    K_HTTP,     /* host:port with port 0..65535, or "" / "none" (off) */
    K_MODE,     /* octal file mode 0..0777 */
    K_GROUP,    /* group name or gid, or "" (unset) */
    K_ALLOW,    /* host allow-list (skv_net_host_allow_check) or "" */
    K_SWITCH,   /* command line only, no value: "--init" sets 1 */
    K_STORAGE,  /* NAME=PATH[,quota=KIND][,shared=yes|no], repeatable */
    K_PATHS     /* absolute paths separated by ':', or "" (none) */
} kind;

struct skvd_key {
    const char *section, *name;
    kind kind;
    size_t off;
    unsigned roles;     /* programs taking it as a flag */
    const char *def;    /* NULL: unset */
    uint64_t min, max;
    const char *meta, *help;
};

#define M SKVD_ROLE_MANAGER
#define A SKVD_ROLE_AGENT
#define P SKVD_ROLE_PROXY
#define PO(f) offsetof(skvd_config, proxy.f)
#define MO(f) offsetof(skvd_config, manager.f)
#define AO(f) offsetof(skvd_config, agent.f)
#define GiB (1024ull * 1024 * 1024)

static const skvd_key g_keys[] = {
    {"manager", "data_dir", K_PATH, MO(data_dir), M | A | P,
     "/var/lib/sokovan/manager", 0, 0, "DIR",
     "manager state: manager.db, admin.key, agents/<id>.key (agent: "
     "where to find its key file)"},
    {"manager", "listen", K_UNIX, MO(listen), M, "/run/sokovan/manager.sock",
     0, 0, "PATH", "Unix socket to listen on; \"none\" disables"},
    {"manager", "tcp", K_TCP, MO(tcp), M, "127.0.0.1:5020", 0, 0,
     "HOST:PORT", "TCP address to listen on; \"none\" disables"},
    {"manager", "bootstrap_agents", K_IDLIST, MO(bootstrap_agents), M, NULL,
     0, 0, "ID,...", "agent ids whose keys are created on first start"},
    {"manager", "heartbeat_interval_ms", K_UINT, MO(heartbeat_interval_ms),
     M, "1000", 50, 3600000, "MS", "agents' heartbeat period"},
    {"manager", "heartbeat_timeout_ms", K_UINT, MO(heartbeat_timeout_ms), M,
     "10000", 100, 86400000, "MS", "an agent silent this long is lost"},
    {"manager", "max_clock_skew_ms", K_UINT, MO(max_clock_skew_ms), M,
     "300000", 1000, 86400000, "MS", "signed requests older/newer are refused"},
    {"manager", "max_sessions_per_pass", K_UINT, MO(max_sessions_per_pass),
     M, "0", 0, 100000000, "N", "sessions placed per scheduling pass; 0: all"},
    {"manager", "cluster_cidr", K_STR, MO(cluster_cidr), M, "10.128.0.0/9",
     0, 0, "CIDR", "kernel addresses of cluster networks: a /20 per agent"},
    {"manager", "default_resource_group", K_ID, MO(default_resource_group),
     M, "default", 0, 0, "NAME", "resource group created when missing"},
    {"manager", "default_scheduler", K_ID, MO(default_scheduler), M, "fifo",
     0, 0, "NAME", "sequencer of created resource groups"},
    {"manager", "default_selector", K_ID, MO(default_selector), M,
     "auto", 0, 0, "NAME", "agent selector of created groups (auto: frag "
     "with accelerators, else concentrated)"},
    {"manager", "max_frame", K_BYTES, MO(max_frame), M, "16m", 1024, GiB,
     "BYTES", "largest frame payload accepted"},
    {"manager", "max_queue", K_BYTES, MO(max_queue), M, "64m", 65536,
     64 * GiB, "BYTES", "a connection with more unsent bytes is closed"},
    {"manager", "preauth_frame_max", K_BYTES, MO(preauth_frame_max), M,
     "256k", 65536, GiB, "BYTES", "largest frame before a connection's "
     "first request was authenticated"},
    {"manager", "max_buffered_bytes", K_BYTES, MO(max_buffered_bytes), M,
     "64m", 1024 * 1024, 64 * GiB, "BYTES", "incomplete frames held for "
     "all connections together; unauthenticated ones are dropped first"},
    {"manager", "max_connections", K_UINT, MO(max_connections), M, "0", 0,
     10000000, "N", "inbound connections; at the limit the oldest "
     "unauthenticated one is dropped; 0: RLIMIT_NOFILE less 64"},
    {"manager", "auth_timeout_ms", K_UINT, MO(auth_timeout_ms), M, "10000",
     100, 3600000, "MS", "a connection without an authenticated request "
     "this long after accept is closed"},
    {"manager", "frame_timeout_ms", K_UINT, MO(frame_timeout_ms), M,
     "60000", 100, 3600000, "MS", "a frame not complete this long after "
     "its first byte closes the connection"},
    {"manager", "socket_mode", K_MODE, MO(socket_mode), M, "0660", 0, 0777,
     "MODE", "permissions of the Unix socket (octal)"},
    {"manager", "socket_group", K_GROUP, MO(socket_group), M, NULL, 0, 0,
     "GROUP", "group of the Unix socket (name or gid); default the "
     "manager's own"},
    {"manager", "pidfile", K_OPTPATH, MO(pidfile), M, NULL, 0, 0, "FILE",
     "write the process id there"},
    {"manager", "idle_cpu_percent", K_UINT, MO(idle_cpu_percent), M, "5",
     1, 100000, "PERCENT", "idle limits: a kernel using this much CPU "
     "(percent of one CPU over an agent stats interval) keeps its session "
     "active"},
    {"manager", "metrics_listen", K_HTTP, MO(metrics_listen), M, NULL, 0, 0,
     "HOST:PORT", "serve Prometheus metrics on http://HOST:PORT/metrics "
     "(port 0: any free port, logged); off unless set"},
    {"manager", "log_level", K_LEVEL, MO(log_level), M, "info", 0, 0,
     "LEVEL", "trace, debug, info, warn or error"},
    {"manager", "tls", K_BOOL, MO(tls), M, "off", 0, 0, "on|off",
     "the TCP listener speaks TLS only (the Unix socket stays local)"},
    {"manager", "tls_cert", K_OPTPATH, MO(tls_cert), M, NULL, 0, 0, "FILE",
     "PEM certificate (chain) of the TCP listener; default "
     "<data_dir>/tls/cert.pem, generated with tls_key on first start"},
    {"manager", "tls_key", K_OPTPATH, MO(tls_key), M, NULL, 0, 0, "FILE",
     "PEM private key of tls_cert; default <data_dir>/tls/key.pem"},
    {"manager", "allow_plaintext_secrets", K_BOOL,
     MO(allow_plaintext_secrets), M, "off", 0, 0, "on|off",
     "answer admin.keypair create (which returns a secret key) on plaintext "
     "TCP; off: only over the Unix socket or TLS"},
    {"manager", "store", K_STR, MO(store), M, "sqlite", 0, 0, "URI",
     "where the state lives: sqlite (manager.db in data_dir) or "
     "postgresql://USER@HOST/DB (several managers on one server: one "
     "leads, the others stand by)"},
    {"manager", "sched_plugins", K_PATHS, MO(sched_plugins), M, NULL, 0, 0,
     "FILE[:FILE...]",
     "scheduler plugins (shared objects exporting skv_sched_selector_plugin "
     "and/or skv_sched_sequencer_plugin) loaded before any resource group, "
     "so default_scheduler, default_selector and 'admin group --scheduler/"
     "--selector' may name what they register; one that cannot be loaded "
     "stops the manager"},
    {"manager", "storage_host", K_STORAGE, MO(storage_hosts), M, NULL, 0, 0,
     "NAME=PATH[,quota=KIND][,shared=yes|no]",
     "a storage host of virtual folders (repeatable; the first is the "
     "default). KIND: auto, none, btrfs, xfs, ext4; a filesystem without "
     "that quota support stops the manager unless quota=none. shared=yes "
     "(default): PATH is mounted at the same place on every agent. None "
     "given: host \"local\" at DATA_DIR/storage, quota=none, shared=no"},
    {"manager", "ha_poll_ms", K_UINT, MO(ha_poll_ms), M, "500", 50, 60000,
     "MS", "PostgreSQL store: how often a standby tries to take the lease "
     "and the leader renews it"},
    {"manager", "ha_lease_ms", K_UINT, MO(ha_lease_ms), M, "5000", 200,
     3600000, "MS", "PostgreSQL store: a leader that has not renewed for "
     "this long loses the lease (PostgreSQL ends its session) and a "
     "standby takes over; at least twice ha_poll_ms"},
    {"manager", "backup_dir", K_OPTPATH, MO(backup_dir), M, NULL, 0, 0,
     "DIR", "where 'sokovan admin backup NAME' writes; default "
     "<data_dir>/backups"},
    {"manager", "init", K_SWITCH, MO(init), M, NULL, 0, 0, "",
     "create a new cluster (new admin.key); refused where manager.db "
     "exists. Without it only a data_dir with no database and no "
     "admin.key gets a new cluster"},
    {"manager", "check", K_SWITCH, MO(check), M, NULL, 0, 0, "",
     "run SQLite's full integrity_check on the stopped manager's "
     "manager.db, print the problems and exit (0: sound, 1: damaged)"},

    {"agent", "agent_id", K_ID, AO(agent_id), A, "agent1", 0, 0, "ID",
     "this agent's id (and its key's user name)"},
    {"agent", "manager", K_MANAGER, AO(manager), A,
     "unix:/run/sokovan/manager.sock", 0, 0, "ADDR[,ADDR...]",
     "manager address: unix:/path or host:port; a comma-separated list "
     "names a leader and its standbys, tried in turn"},
    {"agent", "key_file", K_OPTPATH, AO(key_file), A, NULL, 0, 0, "FILE",
     "keypair file; default <manager data_dir>/agents/<agent_id>.key"},
    {"agent", "key_wait_ms", K_UINT, AO(key_wait_ms), A, "10000", 0,
     3600000, "MS", "wait this long for the key file to appear"},
    {"agent", "state_dir", K_OPTPATH, AO(state_dir), A, NULL, 0, 0, "DIR",
     "agent state (kernel records, session keys, images); default "
     "/var/lib/sokovan/agent-<agent_id>"},
    {"agent", "run_dir", K_OPTPATH, AO(run_dir), A, NULL, 0, 0, "DIR",
     "container directories (state, exit status, logs, writable layers); "
     "default /run/sokovan/agent-<agent_id>"},
    {"agent", "image_dir", K_OPTPATH, AO(image_dir), A, NULL, 0, 0, "DIR",
     "image store; default <state_dir>/images"},
    {"agent", "import_image", K_IMAGE, AO(images), A, NULL, 0, 0,
     "NAME=TARBALL", "import an image before connecting (repeatable)"},
    {"agent", "resource_group", K_ID, AO(resource_group), A, "default", 0, 0,
     "NAME", "resource group the agent joins"},
    {"agent", "address", K_STR, AO(address), A, NULL, 0, 0, "TEXT",
     "address reported to the manager"},
    {"agent", "backend", K_BACKEND, AO(backend), A, "native", 0, 0, "NAME",
     "runtime backend: native or oci"},
    {"agent", "oci_runtime", K_STR, AO(oci_runtime), A, NULL, 0, 0, "PATH",
     "OCI runtime for backend oci; default runc"},
    {"agent", "topology_xml", K_OPTPATH, AO(topology_xml), A, NULL, 0, 0,
     "FILE", "hwloc XML topology instead of this host's (its GPUs become "
     "mock devices with the default plugins)"},
    {"agent", "plugins", K_STR, AO(plugins), A, NULL, 0, 0, "LIST",
     "compute plugins \"name[:config];...\"; default cpu;mem (+cuda)"},
    {"agent", "cpus", K_CPUS, AO(cpus), A, NULL, 0, 0, "LIST",
     "CPU slice of the host (\"0-3\"); default all"},
    {"agent", "memory", K_BYTES, AO(memory), A, "0", 0, UINT64_MAX / 2,
     "BYTES", "memory slice (\"8g\"); 0: all"},
    {"agent", "labels", K_STR, AO(labels), A, NULL, 0, 0, "K=V,...",
     "labels reported to the manager"},
    {"agent", "stats_interval_ms", K_UINT, AO(stats_interval_ms), A, "5000",
     100, 3600000, "MS", "period of agent.stats events"},
    {"agent", "poll_interval_ms", K_UINT, AO(poll_interval_ms), A, "20", 1,
     60000, "MS", "container exit polling period"},
    {"agent", "create_threads", K_UINT, AO(create_threads), A, "0", 0, 64,
     "N", "containers created side by side by N background threads; 0: "
     "online CPUs + 1, at most 8"},
    {"agent", "host_allow", K_ALLOW, AO(host_allow), A, NULL, 0, 0, "LIST",
     "host ports kernels on a cluster network may reach (\"tcp:22,"
     "udp:8000-8010,dns\"); every other address and port of the host "
     "refuses them (replies pass); default none"},
    {"agent", "sessions_pids_max", K_UINT, AO(sessions_pids_max), A, "0",
     0, 4194304, "N", "tasks of all session containers of the host "
     "together; 0: pid_max minus max(1024, pid_max / 8)"},
    {"agent", "sessions_memory_reserve", K_BYTES,
     AO(sessions_memory_reserve), A, "0", 0, UINT64_MAX / 2, "BYTES",
     "memory kept from all session containers together for the host and "
     "its daemons; 0: max(512m, 1/16 of the host's), at most half"},
    {"agent", "sessions_cpu_reserve", K_UINT, AO(sessions_cpu_reserve), A,
     "0", 0, 1000000, "MILLI", "milli-CPUs kept from all session "
     "containers together (a CPU quota of the rest); 0: no quota"},
    {"agent", "reconnect_min_ms", K_UINT, AO(reconnect_min_ms), A, "100", 10,
     600000, "MS", "first reconnect delay (doubles on each failure)"},
    {"agent", "reconnect_max_ms", K_UINT, AO(reconnect_max_ms), A, "5000",
     10, 3600000, "MS", "largest reconnect delay"},
    {"agent", "max_frame", K_BYTES, AO(max_frame), A, "16m", 1024, GiB,
     "BYTES", "largest frame payload accepted"},
    {"agent", "max_queue", K_BYTES, AO(max_queue), A, "64m", 65536,
     64 * GiB, "BYTES", "unsent bytes beyond which the connection is reset"},
    {"agent", "log_max_bytes", K_BYTES, AO(log_max_bytes), A, "16m", 4096,
     64 * GiB, "BYTES", "cap of each of a kernel's stdout and stderr logs: "
     "the head is kept, then a line noting the truncation"},
    {"agent", "pidfile", K_OPTPATH, AO(pidfile), A, NULL, 0, 0, "FILE",
     "write the process id there"},
    {"agent", "metrics_listen", K_HTTP, AO(metrics_listen), A, NULL, 0, 0,
     "HOST:PORT", "serve Prometheus metrics on http://HOST:PORT/metrics "
     "(port 0: any free port, logged); off unless set"},
    {"agent", "log_level", K_LEVEL, AO(log_level), A, "info", 0, 0, "LEVEL",
     "trace, debug, info, warn or error"},
    {"agent", "tls_ca", K_OPTPATH, AO(tls_ca), A, NULL, 0, 0, "FILE",
     "connect to a host:port manager over TLS, verifying its certificate "
     "and host name against this PEM file (a CA, or the manager's "
     "tls/cert.pem)"},
    {"agent", "tls_pin", K_PIN, AO(tls_pin), A, NULL, 0, 0, "SHA256",
     "connect over TLS, accepting only the manager certificate with this "
     "SHA-256 fingerprint (the manager logs it)"},
    /* sokovan-proxy (docs/config.md, "The app proxy") */
    {"proxy", "listen", K_TCP, PO(listen), P, "127.0.0.1:8090", 0, 0,
     "HOST:PORT", "serve http(s)://HOST:PORT/s/SESSION/SERVICE/ there"},
    {"proxy", "manager", K_MANAGER, PO(manager), P,
     "unix:/run/sokovan/manager.sock", 0, 0, "ADDR[,ADDR...]",
     "the manager that resolves app tokens: unix:/path or host:port"},
    {"proxy", "key_file", K_OPTPATH, PO(key_file), P, NULL, 0, 0, "FILE",
     "admin keypair the proxy signs app.resolve with; default "
     "<manager data_dir>/admin.key"},
    {"proxy", "tls_cert", K_OPTPATH, PO(tls_cert), P, NULL, 0, 0, "FILE",
     "PEM certificate (chain): serve HTTPS (with tls_key)"},
    {"proxy", "tls_key", K_OPTPATH, PO(tls_key), P, NULL, 0, 0, "FILE",
     "PEM private key of tls_cert"},
    {"proxy", "public_url", K_STR, PO(public_url), P, NULL, 0, 0, "URL",
     "how users reach the proxy (e.g. https://apps.example.org), "
     "logged when ready; default from listen"},
    {"proxy", "cache_ms", K_UINT, PO(cache_ms), P, "2000", 0, 600000,
     "MS", "reuse a token's resolved target this long (0: ask the "
     "manager on every request); short, as an ended session's host port "
     "may be published again for another session"},
    {"proxy", "max_request_body", K_BYTES, PO(max_request_body), P, "1g",
     0, 64 * GiB, "BYTES", "largest request body forwarded"},
    {"proxy", "io_timeout_ms", K_UINT, PO(io_timeout_ms), P, "300000", 1000,
     86400000, "MS", "close an upstream or tunnel connection idle this long"},
    {"proxy", "activity_report_ms", K_UINT, PO(activity_report_ms), P,
     "5000", 100, 600000, "MS", "tell the manager which sessions were "
     "served this often (app.activity, for idle limits): one message per "
     "period, not per request"},
    {"proxy", "pidfile", K_OPTPATH, PO(pidfile), P, NULL, 0, 0, "FILE",
     "write the process id there"},
    {"proxy", "log_level", K_LEVEL, PO(log_level), P, "info", 0, 0, "LEVEL",
     "trace, debug, info, warn or error"},
};
#define NKEYS (sizeof(g_keys) / sizeof(g_keys[0]))

bool skvd_config_is_switch(const skvd_key *k)
{
    return k && k->kind == K_SWITCH;
}

const skvd_key *skvd_config_find(const char *section, const char *key)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(g_keys[i].section, section) == 0 &&
            strcmp(g_keys[i].name, key) == 0)
            return &g_keys[i];
    return NULL;
}

/* "--data-dir" matches key "data_dir". */
static bool flag_matches(const char *flag, const char *name)
{
    if (strncmp(flag, "--", 2) != 0)
        return false;
    flag += 2;
    for (; *flag && *name; flag++, name++)
        if (*flag != (*name == '_' ? '-' : *name))
            return false;
    return *flag == 0 && *name == 0;
}

const skvd_key *skvd_config_find_flag(const char *flag, skvd_role role)
{
    for (size_t i = 0; i < NKEYS; i++)
        if ((g_keys[i].roles & role) && flag_matches(flag, g_keys[i].name))
            return &g_keys[i];
    return NULL;
}

void skvd_config_print_flags(FILE *f, skvd_role role)
{
    for (size_t i = 0; i < NKEYS; i++) {
        const skvd_key *k = &g_keys[i];
        char flag[64];
        if (!(k->roles & role))
            continue;
        snprintf(flag, sizeof(flag), "--%s%s%s", k->name,
                 k->meta[0] ? " " : "", k->meta);
        for (char *p = flag + 2; *p && *p != ' '; p++)
            if (*p == '_')
                *p = '-';
        fprintf(f, "  %-34s %s", flag, k->help);
        if (k->def && *k->def)
            fprintf(f, " (default %s)", k->def);
        fputc('\n', f);
    }
}

int skvd_config_init(skvd_config *c)
{
    char why[256];
    memset(c, 0, sizeof(*c));
    for (size_t i = 0; i < NKEYS; i++) {
        if (g_keys[i].def &&
            skvd_config_set(c, &g_keys[i], g_keys[i].def, why, sizeof(why))) {
            fprintf(stderr, "default of %s.%s: %s\n", g_keys[i].section,
                    g_keys[i].name, why);
            skvd_config_free(c);
            return -1;
        }
    }
    return 0;
}

void skvd_config_free(skvd_config *c)
{
    for (size_t i = 0; i < NKEYS; i++) {
        const skvd_key *k = &g_keys[i];
        if (k->kind == K_BOOL)      /* a number, not a string */
            continue;
        char **s = (char **)((char *)c + k->off);
        if (k->kind == K_UINT || k->kind == K_BYTES || k->kind == K_LEVEL ||
            k->kind == K_MODE || k->kind == K_SWITCH)
            continue;
        if (k->kind == K_IMAGE) {
            for (size_t j = 0; j < c->agent.n_images; j++)
                free(c->agent.images[j]);
        }
        if (k->kind == K_STORAGE) {
            for (size_t j = 0; j < c->manager.n_storage_hosts; j++)
                free(c->manager.storage_hosts[j]);
        }
        free(*s);
        *s = NULL;
    }
    c->agent.n_images = 0;
    c->manager.n_storage_hosts = 0;
}

/* ---- value checks ---------------------------------------------------------- */

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

static int check_id(const char *v, char *why, size_t wl)
{
    size_t n = strlen(v);
    if (n == 0 || n > 63)
        return WHY("'%s' must have 1 to 63 characters", v);
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && !strchr("_.-", v[i]))
            return WHY("'%s': only letters, digits, '_', '.' and '-' are "
                       "allowed", v);
    return 0;
}

static int check_idlist(const char *v, char *why, size_t wl)
{
    char buf[1024];
    char *save = NULL;
    if (strlen(v) >= sizeof(buf))
        return WHY("list too long");
    strcpy(buf, v);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (check_id(t, why, wl))
            return -1;
    return 0;
}

static int check_abs(const char *v, char *why, size_t wl)
{
    if (v[0] != '/')
        return WHY("'%s' is not an absolute path", v);
    if (strlen(v) >= 4096)
        return WHY("path too long");
    return 0;
}

/* "A:B:C": each an absolute path (empty parts are refused, not skipped:
 * "/a::/b" is a typo, not two plugins). */
static int check_paths(const char *v, char *why, size_t wl)
{
    for (const char *p = v;;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == 0)
            return WHY("'%s': an empty path in the list", v);
        if (*p != '/')
            return WHY("'%.*s' is not an absolute path", (int)n, p);
        if (n >= 4096)
            return WHY("path too long");
        if (!end)
            return 0;
        p = end + 1;
    }
}

static int parse_uint(uint64_t *out, const skvd_key *k, const char *v,
                      char *why, size_t wl)
{
    char *end;
    if (!isdigit((unsigned char)v[0]))
        return WHY("'%s' is not a non-negative integer", v);
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end || errno)
        return WHY("'%s' is not a non-negative integer", v);
    if (x < k->min || x > k->max)
        return WHY("%llu is outside %llu..%llu", x,
                   (unsigned long long)k->min, (unsigned long long)k->max);
    *out = x;
    return 0;
}

static int parse_bool(uint64_t *out, const char *v, char *why, size_t wl)
{
    static const char *const on[] = {"on", "true", "yes", "1"};
    static const char *const off[] = {"off", "false", "no", "0"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(v, on[i]) == 0 || strcasecmp(v, off[i]) == 0) {
            *out = strcasecmp(v, on[i]) == 0;
            return 0;
        }
    }
    return WHY("'%s' is not on or off (true/false, yes/no, 1/0)", v);
}

static int parse_bytes(uint64_t *out, const skvd_key *k, const char *v,
                       char *why, size_t wl)
{
    skv_qty q;
    skv_error e = SKV_ERROR_INIT;
    if (skv_qty_parse(&q, v, SKV_SLOT_BYTES, &e) || q == SKV_QTY_UNLIMITED)
        return WHY("'%s' is not a byte amount (e.g. 512m, 8g): %s", v,
                   e.message[0] ? e.message : "unlimited not allowed");
    if ((uint64_t)q < k->min || (uint64_t)q > k->max)
        return WHY("'%s' is outside %llu..%llu bytes", v,
                   (unsigned long long)k->min, (unsigned long long)k->max);
    *out = (uint64_t)q;
    return 0;
}

/* "0660", "660", "0o660" is not accepted: octal digits only. */
static int parse_mode(uint64_t *out, const skvd_key *k, const char *v,
                      char *why, size_t wl)
{
    char *end;
    if (!v[0] || strspn(v, "01234567") != strlen(v) || strlen(v) > 4)
        return WHY("'%s' is not an octal mode (e.g. 0660)", v);
    unsigned long x = strtoul(v, &end, 8);
    if (x > k->max)
        return WHY("'%s' has bits outside 0777", v);
    if ((x & 0600) != 0600)
        return WHY("'%s' does not let the owner read and write the socket",
                   v);
    *out = x;
    return 0;
}

int skvd_group_gid(long *gid, const char *name, char *why, size_t wl)
{
    char buf[4096], *end;
    struct group gr, *res = NULL;
    if (isdigit((unsigned char)name[0])) {
        errno = 0;
        unsigned long x = strtoul(name, &end, 10);
        if (*end || errno || x > 0x7fffffff)
            return WHY("'%s' is not a group name or gid", name);
        *gid = (long)x;
        return 0;
    }
    int rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
    if (rc || !res)
        return WHY("no group named '%s'%s%s", name, rc ? ": " : "",
                   rc ? strerror(rc) : "");
    *gid = (long)res->gr_gid;
    return 0;
}

static int check_group(const char *v, char *why, size_t wl)
{
    long gid;
    return skvd_group_gid(&gid, v, why, wl);
}

static int check_cpus(const char *v, char *why, size_t wl)
{
    int *ids = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv_topo_cpulist_parse(&ids, &n, v, &e))
        return WHY("'%s' is not a CPU list (e.g. 0-3,8): %s", v, e.message);
    skv_free(ids);
    if (n == 0)
        return WHY("'%s' names no CPU", v);
    return 0;
}

static int check_one_manager(const char *v, char *why, size_t wl)
{
    char host[256];
    int port;
    if (strncmp(v, "unix:", 5) == 0)
        return skvd_unix_path_check(v + 5, why, wl);
    if (skvd_hostport_split(host, sizeof(host), &port, v, why, wl))
        return WHY("'%s' is neither unix:/PATH nor HOST:PORT", v);
    return 0;
}

/* One address, or a comma-separated list of managers (a leader and its
 * standbys) tried in turn: every entry must be valid. */
static int check_manager(const char *v, char *why, size_t wl)
{
    char one[300];
    for (const char *p = v;;) {
        size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof(one))
            return WHY("'%s': %s entry in the manager list", v,
                       n ? "too long an" : "an empty");
        snprintf(one, sizeof(one), "%.*s", (int)n, p);
        if (check_one_manager(one, why, wl))
            return -1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* Like a TCP listen address, but port 0 is allowed: it asks for any free
 * port, which the daemon logs. */
static int check_http(const char *v, char *why, size_t wl)
{
    char host[256], copy[320];
    int port;
    size_t n = strlen(v);
    const char *t = v;
    if (n >= 2 && n < sizeof(copy) && strcmp(v + n - 2, ":0") == 0) {
        snprintf(copy, sizeof(copy), "%.*s:1", (int)(n - 2), v);
        t = copy;
    }
    if (skvd_hostport_split(host, sizeof(host), &port, t, why, wl))
        return WHY("'%s' is not HOST:PORT or [ADDR]:PORT (port 0..65535)",
                   v);
    return 0;
}

static int check_image(const char *v, char *why, size_t wl)
{
    const char *eq = strchr(v, '=');
    if (!eq || eq == v || !eq[1])
        return WHY("'%s' is not NAME=TARBALL", v);
    return 0;
}

static int check_backend(const char *v, char *why, size_t wl)
{
    /* "process" (no isolation) is for the library's tests only. */
    if (strcmp(v, "native") && strcmp(v, "oci"))
        return WHY("'%s' is not one of native, oci", v);
    return 0;
}

/* Checks a string-valued kind; *unset set when the value means "none". */
static int check_string(const skvd_key *k, const char *v, bool *unset,
                        char *why, size_t wl)
{
    char host[256];
    int port;
    skv_error e = SKV_ERROR_INIT;
    *unset = false;
    bool empty = v[0] == 0;
    switch (k->kind) {
    case K_PATH:
        return empty ? WHY("must not be empty") : check_abs(v, why, wl);
    case K_OPTPATH:
        return (*unset = empty) ? 0 : check_abs(v, why, wl);
    case K_PATHS:
        return (*unset = empty) ? 0 : check_paths(v, why, wl);
    case K_STR:
        *unset = empty;
        return 0;
    case K_ALLOW:
        if ((*unset = empty))
            return 0;
        if (skv_net_host_allow_check(v, &e) < 0)
            return WHY("%s", e.message);
        return 0;
    case K_ID:
        return check_id(v, why, wl);
    case K_PIN: {
        unsigned char pin[32];
        if ((*unset = empty))
            return 0;
        return skvd_tls_pin_parse(pin, v)
            ? WHY("'%s' is not a SHA-256 fingerprint (64 hex digits, ':' "
                  "allowed)", v) : 0;
    }
    case K_IDLIST:
        return (*unset = empty) ? 0 : check_idlist(v, why, wl);
    case K_UNIX:
        if ((*unset = empty || strcmp(v, "none") == 0))
            return 0;
        return skvd_unix_path_check(v, why, wl);
    case K_TCP:
        if ((*unset = empty || strcmp(v, "none") == 0))
            return 0;
        return skvd_hostport_split(host, sizeof(host), &port, v, why, wl);
    case K_HTTP:
        if ((*unset = empty || strcmp(v, "none") == 0))
            return 0;
        return check_http(v, why, wl);
    case K_MANAGER:
        return empty ? WHY("must not be empty") : check_manager(v, why, wl);
    case K_CPUS:
        return (*unset = empty) ? 0 : check_cpus(v, why, wl);
    case K_BACKEND:
        return check_backend(v, why, wl);
    case K_IMAGE:
        return check_image(v, why, wl);
    case K_STORAGE: {
        skvd_storage_host h;
        return skvd_storage_host_parse(&h, v, why, wl);
    }
    case K_GROUP:
        return (*unset = empty) ? 0 : check_group(v, why, wl);
    default:
        return WHY("internal: not a string key");
    }
}

static int append_storage(skvd_config *c, const char *v, char *why,
                          size_t wl)
{
    skvd_manager_conf *m = &c->manager;
    char **n = realloc(m->storage_hosts, (m->n_storage_hosts + 1) * sizeof(*n));
    if (!n)
        return WHY("out of memory");
    m->storage_hosts = n;
    if (!(n[m->n_storage_hosts] = strdup(v)))
        return WHY("out of memory");
    m->n_storage_hosts++;
    return 0;
}

static int append_image(skvd_config *c, const char *v, char *why, size_t wl)
{
    char **n = realloc(c->agent.images,
                       (c->agent.n_images + 1) * sizeof(*n));
    if (!n)
        return WHY("out of memory");
    c->agent.images = n;
    if (!(n[c->agent.n_images] = strdup(v)))
        return WHY("out of memory");
    c->agent.n_images++;
    return 0;
}

int skvd_config_set(skvd_config *c, const skvd_key *k, const char *value,
                    char *why, size_t wl)
{
    void *field = (char *)c + k->off;
    if (k->kind == K_BOOL)
        return parse_bool(field, value, why, wl);
    if (k->kind == K_UINT)
        return parse_uint(field, k, value, why, wl);
    if (k->kind == K_BYTES)
        return parse_bytes(field, k, value, why, wl);
    if (k->kind == K_MODE)
        return parse_mode(field, k, value, why, wl);
    if (k->kind == K_SWITCH) {
        if (strcmp(value, "1"))
            return WHY("takes no value");
        *(uint64_t *)field = 1;
        return 0;
    }
    if (k->kind == K_LEVEL) {
        skv_log_level l;
        if (skvd_log_level_parse(&l, value))
            return WHY("'%s' is not one of trace, debug, info, warn, error",
                       value);
        *(uint64_t *)field = (uint64_t)l;
        return 0;
    }
    bool unset;
    if (check_string(k, value, &unset, why, wl))
        return -1;
    if (k->kind == K_IMAGE)
        return append_image(c, value, why, wl);
    if (k->kind == K_STORAGE)
        return append_storage(c, value, why, wl);
    char *copy = NULL;
    if (!unset && !(copy = strdup(value)))
        return WHY("out of memory");
    free(*(char **)field);
    *(char **)field = copy;
    return 0;
}

static char *join3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%s", a, b, c);
    return s;
}

/* TLS keys across each other. */
static int tls_finish(skvd_config *c, char *why, size_t wl)
{
    skvd_manager_conf *m = &c->manager;
    skvd_agent_conf *a = &c->agent;
    if (m->tls && !m->tcp)
        return WHY("tls = on needs a tcp listener (tcp is none)");
    if (!m->tls_cert != !m->tls_key)
        return WHY("set both tls_cert and tls_key, or neither (a pair is "
                   "then generated in <data_dir>/tls)");
    if (a->tls_ca && a->tls_pin)
        return WHY("set tls_ca or tls_pin, not both");
    if ((a->tls_ca || a->tls_pin) && strncmp(a->manager, "unix:", 5) == 0)
        return WHY("tls_ca/tls_pin are for a host:port manager; %s is a "
                   "local Unix socket", a->manager);
    return 0;
}

/* sokovan-proxy: HTTPS needs both halves; the admin key by default. */
static int proxy_finish(skvd_proxy_conf *p, const char *data_dir, char *why,
                        size_t wl)
{
    if (!p->tls_cert != !p->tls_key)
        return WHY("proxy: set both tls_cert and tls_key (HTTPS), or "
                   "neither (HTTP)");
    if (!p->key_file && !(p->key_file = join3(data_dir, "/admin.key", "")))
        return WHY("out of memory");
    return 0;
}

int skvd_config_finish(skvd_config *c, char *why, size_t wl)
{
    skvd_agent_conf *a = &c->agent;
    skvd_manager_conf *m = &c->manager;
    if (m->heartbeat_timeout_ms <= m->heartbeat_interval_ms)
        return WHY("heartbeat_timeout_ms (%llu) must exceed "
                   "heartbeat_interval_ms (%llu)",
                   (unsigned long long)m->heartbeat_timeout_ms,
                   (unsigned long long)m->heartbeat_interval_ms);
    if (m->max_buffered_bytes < m->max_frame)
        return WHY("max_buffered_bytes (%llu) must be at least max_frame "
                   "(%llu): a whole frame must fit",
                   (unsigned long long)m->max_buffered_bytes,
                   (unsigned long long)m->max_frame);
    if (a->reconnect_min_ms > a->reconnect_max_ms)
        return WHY("reconnect_min_ms (%llu) exceeds reconnect_max_ms (%llu)",
                   (unsigned long long)a->reconnect_min_ms,
                   (unsigned long long)a->reconnect_max_ms);
    if (m->ha_lease_ms < 2 * m->ha_poll_ms)
        return WHY("ha_lease_ms (%llu) must be at least twice ha_poll_ms "
                   "(%llu): the leader renews every ha_poll_ms",
                   (unsigned long long)m->ha_lease_ms,
                   (unsigned long long)m->ha_poll_ms);
    if (tls_finish(c, why, wl) ||
        proxy_finish(&c->proxy, c->manager.data_dir, why, wl))
        return -1;
    if (!a->state_dir &&
        !(a->state_dir = join3("/var/lib/sokovan/agent-", a->agent_id, "")))
        return WHY("out of memory");
    if (!a->run_dir &&
        !(a->run_dir = join3("/run/sokovan/agent-", a->agent_id, "")))
        return WHY("out of memory");
    if (!a->key_file) {
        char *dir = join3(c->manager.data_dir, "/agents/", a->agent_id);
        a->key_file = dir ? join3(dir, ".key", "") : NULL;
        free(dir);
        if (!a->key_file)
            return WHY("out of memory");
    }
    return 0;
}
