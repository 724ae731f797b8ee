/* sokovan run: build a session.submit from flags and submit it; with
 * --wait follow it to its end.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "run.h"

static const char run_help[] =
    "usage: sokovan run [options] IMAGE [--] [CMD...]\n"
    "\n"
    "Submit a session running CMD in IMAGE and print its id.\n"
    "  --cpu N             CPU cores per kernel (e.g. 2, 0.5; default 1)\n"
    "  --mem Q             memory per kernel (e.g. 4g, 512m)\n"
    "  --gpu F             fractional GPU per kernel (cuda.shares, e.g. 0.5)\n"
    "  --gpus N            whole GPUs per kernel (cuda.device)\n"
    "  --slot NAME=Q       any other slot (repeatable)\n"
    "  --cluster-size N    kernels in the session (default 1)\n"
    "  --cluster-mode M    single-node (default) or multi-node\n"
    "  --rg GROUP          resource group\n"
    "  --project P         project\n"
    "  --priority P        integer priority (default 0)\n"
    "  --type T            batch (default), interactive or inference\n"
    "  --name N            session name\n"
    "  --env K=V           environment variable (repeatable)\n"
    "  --constraint K=V    where it may run (repeatable): architecture=A,\n"
    "                      agent=ID, gpu_model=M, label.KEY=VALUE\n"
    "  --mount NAME[:/PATH][:ro]\n"
    "                      mount virtual folder NAME at PATH (default\n"
    "                      /home/work/NAME), read-only with :ro (repeatable)\n"
    "  --port N            publish main1's TCP port N on its agent's\n"
    "                      addresses (repeatable; see `sokovan show`)\n"
    "  --service NAME=PORT[/http|/tcp]\n"
    "                      a named service on main1's PORT (published as\n"
    "                      --port does), served by the app proxy at\n"
    "                      /s/SESSION/NAME/ (repeatable; default http)\n"
    "  --depends-on ID     start only after session ID ended successfully\n"
    "                      (repeatable)\n"
    "  --estimated-duration D  how long it will run (e.g. 90s, 30m, 2h):\n"
    "                      lets the scheduler backfill it around reservations\n"
    "  --not-before TIME   start no earlier than TIME: +30m (from now),\n"
    "                      2026-11-26T18:00[:SS] (local time; Z for UTC)\n"
    "                      or @UNIX_SECONDS\n"
    "  --max-lifetime D    terminate it D after it started (e.g. 8h); the\n"
    "                      owner's resource policy limit applies as well\n"
    "  --preemptible, --no-preemptible\n"
    "                      whether a higher-priority session may evict it\n"
    "                      (default: not preemptible)\n"
    "  --numa-policy P     prefer-single-node (default: cores and memory\n"
    "                      on the GPUs' NUMA nodes, memory bound there) or\n"
    "                      interleaved (memory interleaved over the\n"
    "                      session's nodes, for bandwidth-bound work)\n"
    "  --client-token T    idempotency key (default: random)\n"
    "  -f, --file FILE     a YAML job file: every option above as a key\n"
    "                      (cluster_size or cluster-size), image, command,\n"
    "                      and kernels: [{role: main|sub, count, image, cpu,\n"
    "                      mem, gpu, gpus, slot}] for per-role resources;\n"
    "                      options after it override its scalar keys\n"
    "  --wait              stream the main kernel's output and exit with the\n"
    "                      session's exit code\n"
    "--gpu and --gpus are exclusive. Options may follow IMAGE up to '--'\n"
    "or the first word of CMD.\n";

const cli_opt cli_run_opts[] = {
    {"cpu", 1, O_CPU, 0}, {"mem", 1, O_MEM, 0}, {"gpu", 1, O_GPU, 0},
    {"gpus", 1, O_GPUS, 0}, {"slot", 1, O_SLOT, 0},
    {"cluster-size", 1, O_CSIZE, 0}, {"cluster-mode", 1, O_CMODE, 0},
    {"rg", 1, O_RG, 0}, {"project", 1, O_PROJECT, 0},
    {"priority", 1, O_PRIO, 0}, {"type", 1, O_TYPE, 0},
    {"name", 1, O_NAME, 0}, {"env", 1, O_ENV, 0},
    {"constraint", 1, O_CONSTRAINT, 0}, {"client-token", 1, O_TOKEN, 0},
    {"wait", 0, O_WAIT, 0}, {"port", 1, O_PORT, 0},
    {"depends-on", 1, O_DEPENDS, 0},
    {"estimated-duration", 1, O_ESTDUR, 0},
    {"preemptible", 0, O_PREEMPT, 0}, {"no-preemptible", 0, O_NOPREEMPT, 0},
    {"file", 1, O_FILE, 'f'}, {"not-before", 1, O_NOTBEFORE, 0},
    {"max-lifetime", 1, O_MAXLIFE, 0}, {"mount", 1, O_MOUNT, 0},
    {"service", 1, O_SERVICE, 0}, {"numa-policy", 1, O_NUMA, 0},
    {NULL, 0, 0, 0}};

static int set_slot(cli *c, run_kernel *a, const char *opt, const char *name,
                    const char *text, skv_slot_kind kind)
{
    skv_qty q;
    if (cli_parse_qty(c, opt, text, kind, &q))
        return CLI_USAGE;
    if (skv_slots_lookup(a->slots, name, NULL, NULL) == 0)
        return cli_usage(c, "%s: slot '%s' given twice", opt, name);
    skv_error e = SKV_ERROR_INIT;
    if (skv_slots_set(a->slots, name, kind, q, &e))
        return cli_usage(c, "%s: %s", opt, e.message);
    return 0;
}

static int take_gpus(cli *c, run_kernel *a, const char *val)
{
    skv_qty q;
    if (cli_parse_qty(c, "--gpus", val, SKV_SLOT_COUNT, &q))
        return CLI_USAGE;
    if (q % SKV_QTY_SCALE)
        return cli_usage(c, "--gpus: '%s' is not a whole number of GPUs "
                         "(use --gpu for a fraction)", val);
    a->has_gpus = 1;
    return set_slot(c, a, "--gpus", "cuda.device", val, SKV_SLOT_COUNT);
}

static int take_generic_slot(cli *c, run_kernel *a, const char *val)
{
    const char *eq = strchr(val, '=');
    char name[SKV_SLOT_NAME_MAX];
    if (!eq || (size_t)(eq - val) >= sizeof name)
        return cli_usage(c, "--slot: expected NAME=QUANTITY, got '%s'", val);
    memcpy(name, val, (size_t)(eq - val));
    name[eq - val] = 0;
    skv_error e = SKV_ERROR_INIT;
    if (skv_slot_name_check(name, &e))
        return cli_usage(c, "--slot: %s", e.message);
    if (strcmp(name, "cpu") == 0)
        a->has_cpu = 1;
    return set_slot(c, a, "--slot", name, eq + 1, cli_slot_kind(name));
}

/* KEY=VALUE of `flag` into (*v, *n); with unique, a key given twice is
 * refused. */
static int take_kv(cli *c, const char *flag, bool unique, skv_proto_kv **v,
                   size_t *n, const char *val)
{
    const char *eq = strchr(val, '=');
    if (!eq || eq == val)
        return cli_usage(c, "%s: expected KEY=VALUE, got '%s'", flag, val);
    for (size_t i = 0; unique && i < *n; i++)
        if (strncmp((*v)[i].key, val, (size_t)(eq - val)) == 0 &&
            (*v)[i].key[eq - val] == 0)
            return cli_usage(c, "%s: '%.*s' given twice", flag,
                             (int)(eq - val), val);
    skv_proto_kv *kv = realloc(*v, (*n + 1) * sizeof *kv);
    if (!kv)
        return cli_fail("out of memory");
    *v = kv;
    kv[*n].key = strndup(val, (size_t)(eq - val));
    kv[*n].value = (char *)eq + 1;
    if (!kv[*n].key)
        return cli_fail("out of memory");
    (*n)++;
    return 0;
}

static int take_port(cli *c, run_args *a, const char *val);

/* A service also publishes its port (once, whichever flag came first). */
static int take_service(cli *c, run_args *a, const char *val)
{
    char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8], num[8];
    uint32_t port;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_service_parse(val, name, &port, proto, &e))
        return cli_usage(c, "--service: %s", e.message);
    size_t nl = strlen(name);
    for (size_t i = 0; i < a->services.n; i++)
        if (!strncmp(a->services.v[i], name, nl) &&
            a->services.v[i][nl] == '=')
            return cli_usage(c, "--service: '%s' given twice", name);
    bool published = false;
    for (size_t i = 0; i < a->sub.n_ports; i++)
        published |= a->sub.ports[i] == port;
    snprintf(num, sizeof num, "%u", port);
    if (!published && take_port(c, a, num))
        return CLI_USAGE;
    return cli_strv_push(&a->services, val) ? CLI_FAIL : 0;
}

static int take_port(cli *c, run_args *a, const char *val)
{
    skv_proto_session_submit *s = &a->sub;
    uint32_t port;
    if (cli_parse_u32(c, "--port", val, 1, 65535, &port))
        return CLI_USAGE;
    for (size_t i = 0; i < s->n_ports; i++)
        if (s->ports[i] == port)
            return cli_usage(c, "--port: %u given twice", port);
    if (s->n_ports == 64)
        return cli_usage(c, "--port: at most 64 ports");
    uint32_t *p = realloc(s->ports, (s->n_ports + 1) * sizeof *p);
    if (!p)
        return cli_fail("out of memory");
    s->ports = p;
    p[s->n_ports++] = port;
    return 0;
}

int cli_run_take_slot(cli *c, run_kernel *k, int id, const char *val)
{
    switch (id) {
    case O_CPU:
        k->has_cpu = 1;
        return set_slot(c, k, "--cpu", "cpu", val, SKV_SLOT_COUNT);
    case O_MEM:
        return set_slot(c, k, "--mem", "mem", val, SKV_SLOT_BYTES);
    case O_GPU:
        k->has_gpu = 1;
        return set_slot(c, k, "--gpu", "cuda.shares", val, SKV_SLOT_COUNT);
    case O_GPUS:
        return take_gpus(c, k, val);
    default:
        return take_generic_slot(c, k, val);
    }
}

static int take_estimate(cli *c, run_args *a, const char *val)
{
    uint64_t ms;
    if (cli_parse_duration(c, "--estimated-duration", val, &ms))
        return CLI_USAGE;
    if (!ms)
        return cli_usage(c, "--estimated-duration: must be positive");
    a->sub.estimated_duration_ms = ms;
    return 0;
}

static int take_lifetime(cli *c, run_args *a, const char *val)
{
    uint64_t ms;
    if (cli_parse_duration(c, "--max-lifetime", val, &ms))
        return CLI_USAGE;
    if (!ms)
        return cli_usage(c, "--max-lifetime: must be positive");
    a->sub.max_lifetime_ms = ms;
    return 0;
}

static int take_dep(cli *c, run_args *a, const char *val)
{
    if (!val[0])
        return cli_usage(c, "--depends-on: empty session id");
    for (size_t i = 0; i < a->deps.n; i++)
        if (strcmp(a->deps.v[i], val) == 0)
            return cli_usage(c, "--depends-on: '%s' given twice", val);
    return cli_strv_push(&a->deps, val) ? CLI_FAIL : 0;
}

/* Options that hold a value of their own kind (not a plain string). */
static int take_typed(cli *c, run_args *a, int id, const char *val)
{
    static const char *const modes[] = {"single-node", "multi-node", NULL};
    static const char *const types[] = {"batch", "interactive", "inference",
                                        NULL};
    static const char *const numa_policies[] = {"prefer-single-node",
                                                "interleaved", NULL};
    skv_proto_session_submit *s = &a->sub;
    switch (id) {
    case O_CSIZE:
        a->csize_given = 1;
        return cli_parse_u32(c, "--cluster-size", val, 1, 1024,
                             &s->cluster_size);
    case O_CMODE:
        s->cluster_mode = (char *)val;
        return cli_parse_word(c, "--cluster-mode", val, modes);
    case O_PRIO:
        return cli_parse_i32(c, "--priority", val, &s->priority);
    case O_TYPE:
        s->session_type = (char *)val;
        return cli_parse_word(c, "--type", val, types);
    case O_ENV:
        return take_kv(c, "--env", true, &a->env, &a->n_env, val);
    case O_CONSTRAINT:   /* a map on the wire: one value per key */
        return take_kv(c, "--constraint", true, &a->cons, &a->n_cons, val);
    case O_PORT:
        return take_port(c, a, val);
    case O_MOUNT:
        return cli_run_take_mount(c, &a->sub, val);
    case O_SERVICE:
        return take_service(c, a, val);
    case O_DEPENDS:
        return take_dep(c, a, val);
    case O_ESTDUR:
        return take_estimate(c, a, val);
    case O_NOTBEFORE:
        return cli_parse_time(c, "--not-before", val, &s->not_before_ms);
    case O_MAXLIFE:
        return take_lifetime(c, a, val);
    case O_NUMA:
        s->numa_policy = (char *)val;
        return cli_parse_word(c, "--numa-policy", val, numa_policies);
    default:
        return 1;       /* not one of these */
    }
}

static int take_flag(run_args *a, int id)
{
    if (id == O_WAIT)
        a->wait = 1;
    else if (id == O_PREEMPT || id == O_NOPREEMPT)
        a->sub.preemptible = id == O_PREEMPT;
    else
        return 1;
    return 0;
}

int cli_run_take(cli *c, run_args *a, int id, const char *val)
{
    if (id >= O_CPU && id <= O_SLOT)
        return cli_run_take_slot(c, &a->top, id, val);
    if (id == O_FILE)
        return cli_run_apply_job(c, a, val);
    int rc = take_flag(a, id);
    if (rc != 1)
        return rc;
    if ((rc = take_typed(c, a, id, val)) != 1)
        return rc;
    skv_proto_session_submit *s = &a->sub;
    if (!val[0])
        return cli_usage(c, "empty value for an option");
    if (id == O_RG)
        s->resource_group = (char *)val;
    else if (id == O_PROJECT)
        s->project = (char *)val;
    else if (id == O_NAME)
        s->name = (char *)val;
    else
        s->client_token = (char *)val;
    return 0;
}

/* Options, IMAGE, then CMD (after "--" or from the first word after IMAGE). */
static int parse_run(cli *c, run_args *a, int argc, char **argv)
{
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val;
    int id;
    while ((id = cli_next(&p, cli_run_opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            fputs(run_help, stdout);
            return -1;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (id == CLI_OPT_POS && !a->sub.image && !p.saw_dashdash) {
            a->sub.image = (char *)val;
            continue;
        }
        if (id == CLI_OPT_POS) {
            if (cli_strv_push(&a->command, val))
                return CLI_FAIL;
            p.rest = 1;     /* the rest belongs to the command */
            continue;
        }
        int rc = cli_run_take(c, a, id, val);
        if (rc)
            return rc;
    }
    if (!a->sub.image || !a->sub.image[0])
        return cli_usage(c, "missing IMAGE");
    if (a->top.has_gpu && a->top.has_gpus)
        return cli_usage(c, "--gpu (a fraction of a GPU) and --gpus (whole "
                         "GPUs) are exclusive");
    return 0;
}

static int make_token(run_args *a)
{
    uint8_t raw[SKV_AUTH_NONCE_BYTES];
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_auth_nonce_generate(raw, &e);
    if (rc)
        return cli_fail_err("client token", rc, &e);
    strcpy(a->token, "cli-");
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(a->token + 4 + 2 * i, 3, "%02x", raw[i]);
    a->sub.client_token = a->token;
    return 0;
}

static int default_cpu(run_kernel *k)
{
    skv_error e = SKV_ERROR_INIT;
    if (!k->has_cpu &&
        skv_slots_set(k->slots, "cpu", SKV_SLOT_COUNT, SKV_QTY_SCALE, &e))
        return cli_fail_err("default cpu", SKV_EINVAL, &e);
    return 0;
}

/* Without a job file's groups: cluster_size copies of the flags' slots. */
static int kernels_from_flags(run_args *a)
{
    skv_proto_session_submit *s = &a->sub;
    if (!s->cluster_size)
        s->cluster_size = 1;
    if (default_cpu(&a->top))
        return CLI_FAIL;
    s->kernels = calloc(s->cluster_size, sizeof *s->kernels);
    if (!s->kernels)
        return cli_fail("out of memory");
    s->n_kernels = s->cluster_size;
    for (uint32_t i = 0; i < s->cluster_size; i++) {
        s->kernels[i].role = i == 0 ? "main" : "sub";
        s->kernels[i].slots = a->top.slots;
    }
    return 0;
}

/* A job file's groups: the main group (one kernel) first, then each sub
 * group's count of copies; cluster_size, when given, must agree. */
static int kernels_from_groups(cli *c, run_args *a)
{
    skv_proto_session_submit *s = &a->sub;
    uint32_t total = 0;
    if (skv_slots_count(a->top.slots))
        return cli_usage(c, "resources are set per kernel group when the "
                         "job file lists kernels (not at the top level or "
                         "as flags)");
    for (size_t g = 0; g < a->n_groups; g++) {
        total += a->groups[g].count;
        if (default_cpu(&a->groups[g]))
            return CLI_FAIL;
    }
    if (a->csize_given && s->cluster_size != total)
        return cli_usage(c, "cluster_size %u but the kernels list %u",
                         s->cluster_size, total);
    if (total > 1024)
        return cli_usage(c, "kernels: %u kernels (at most 1024)", total);
    s->cluster_size = total;
    if (!(s->kernels = calloc(total, sizeof *s->kernels)))
        return cli_fail("out of memory");
    for (size_t g = 0; g < a->n_groups; g++)
        for (uint32_t i = 0; i < a->groups[g].count; i++) {
            skv_proto_kernel_spec *k = &s->kernels[s->n_kernels++];
            k->role = (char *)a->groups[g].role;
            k->image = (char *)a->groups[g].image;
            k->slots = a->groups[g].slots;
        }
    return 0;
}

/* Fill in defaults and the kernels. */
static int finish_submit(cli *c, run_args *a)
{
    skv_proto_session_submit *s = &a->sub;
    if (!s->cluster_mode)
        s->cluster_mode = "single-node";
    if (!s->session_type)
        s->session_type = "batch";
    if (!s->client_token && make_token(a))
        return CLI_FAIL;
    s->command = a->command.v;
    s->n_command = a->command.n;
    s->env = a->env;
    s->n_env = a->n_env;
    s->constraints = a->cons;
    s->n_constraints = a->n_cons;
    s->dependencies = a->deps.v;
    s->n_dependencies = a->deps.n;
    s->services = a->services.v;
    s->n_services = a->services.n;
    return a->n_groups ? kernels_from_groups(c, a) : kernels_from_flags(a);
}

static void run_args_free(run_args *a)
{
    for (size_t i = 0; i < a->n_env; i++)
        free(a->env[i].key);
    free(a->env);
    for (size_t i = 0; i < a->n_cons; i++)
        free(a->cons[i].key);
    free(a->cons);
    free(a->sub.kernels);
    free(a->sub.ports);
    cli_run_mounts_free(&a->sub);
    cli_strv_free(&a->command);
    cli_strv_free(&a->deps);
    cli_strv_free(&a->services);
    skv_slots_free(a->top.slots);
    for (size_t g = 0; g < a->n_groups; g++)
        skv_slots_free(a->groups[g].slots);
    free(a->groups);
    cli_job_free(&a->job);
}

static int submit(cli *c, run_args *a)
{
    skv_proto_session_ref ref;
    skv_error e = SKV_ERROR_INIT;
    /* A manager not up yet (or restarting) is waited for within
     * --timeout: nothing was sent, so this is always safe. */
    int rc = cli_connect_within(c, c->timeout_ms ? c->timeout_ms
                                                 : CLI_DEFAULT_TIMEOUT_MS);
    if (rc)
        return rc;
    /* The client token makes a resend after a broken connection safe. */
    rc = cli_call_retry(c, SKV_PROTO_SESSION_SUBMIT, &a->sub, &ref, &e);
    if (rc && !c->client)       /* the last reconnect failed */
        return cli_fail_reach(c, rc, &e, 0);
    if (rc)
        return cli_fail_err("session.submit", rc, &e);
    if (c->json && !a->wait) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "session_id");
        cli_json_str(&j, ref.session_id);
        cli_json_key(&j, "status");
        cli_json_str(&j, ref.status);
        cli_json_obj_end(&j);
        cli_json_end(&j);
    } else if (!a->wait) {
        cli_line(stdout, "%s", ref.session_id);
    } else {
        cli_line(stderr, "sokovan: session %s submitted", ref.session_id);
    }
    fflush(stdout);
    if (a->wait)
        rc = cli_wait_session(c, ref.session_id);
    skv_proto_body_free(SKV_PROTO_SESSION_SUBMIT_REPLY, &ref);
    return rc;
}

int cli_cmd_run(cli *c, int argc, char **argv)
{
    run_args a;
    memset(&a, 0, sizeof a);
    skv_error e = SKV_ERROR_INIT;
    if (skv_slots_new(&a.top.slots, &e))
        return cli_fail_err("slots", SKV_ENOMEM, &e);
    int rc = parse_run(c, &a, argc, argv);
    if (rc == 0)
        rc = finish_submit(c, &a);
    if (rc == 0)
        rc = submit(c, &a);
    run_args_free(&a);
    return rc == -1 ? CLI_OK : rc;   /* -1: --help was printed */
}
