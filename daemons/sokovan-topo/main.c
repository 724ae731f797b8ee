/* sokovan-topo: print a machine's NUMA nodes, cores, accelerators and slot
 * capacities, and show where a request would be placed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "topo_tool.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: sokovan-topo [SOURCE] [GPUS] [--alloc REQUEST [--policy P]] "
        "[--json]\n"
        "  SOURCE (default: this machine):\n"
        "    --xml FILE            an hwloc XML topology\n"
        "    --synthetic DESC      an hwloc synthetic topology "
        "(\"pack:2 numa:1 core:4 pu:1\")\n"
        "  GPUS (default: NVIDIA GPUs through NVML, live machine only):\n"
        "    --topo-gpus           the topology's GPUs as mock devices: NVIDIA as\n"
        "                          'cuda', AMD as 'rocm' (mock topology=1,prefix=\n"
        "                          cuda / rocm); other vendors skipped with a note\n"
        "    --mock-gpus CONFIG    the mock accelerator plugin, e.g.\n"
        "                          \"count=4,numa=0:0:1:1,memory=16g\"\n"
        "    --no-cuda             do not probe NVML\n"
        "  --alloc REQUEST         e.g. \"cuda.device=2,cpu=8,mem=32g\"\n"
        "  --policy P              prefer-single-node (default) or interleaved\n"
        "  --json                  machine-readable output\n");
}

typedef struct args {
    const char *xml, *synthetic, *mock, *alloc, *policy;
    bool json, no_cuda, topo_gpus;
} args;

/* Returns 0, or 2 after printing what is wrong. */
static int parse_args(args *a, int argc, char **argv)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char **slot = strcmp(o, "--xml") == 0 ? &a->xml
                          : strcmp(o, "--synthetic") == 0 ? &a->synthetic
                          : strcmp(o, "--mock-gpus") == 0 ? &a->mock
                          : strcmp(o, "--alloc") == 0 ? &a->alloc
                          : strcmp(o, "--policy") == 0 ? &a->policy : NULL;
        if (slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, "sokovan-topo: %s needs a value\n", o);
                return 2;
            }
            *slot = argv[++i];
        } else if (strcmp(o, "--json") == 0) {
            a->json = true;
        } else if (strcmp(o, "--no-cuda") == 0) {
            a->no_cuda = true;
        } else if (strcmp(o, "--topo-gpus") == 0) {
            a->topo_gpus = true;
        } else if (strcmp(o, "--help") == 0 || strcmp(o, "-h") == 0 ||
                   (i == 1 && strcmp(o, "help") == 0)) {
            usage(stdout);
            exit(0);
        } else if (strcmp(o, "--version") == 0 ||
                   (i == 1 && strcmp(o, "version") == 0)) {
            printf("sokovan-topo %s (libsokovan %s)\n", SKV_VERSION_STRING,
                   skv_version_string());
            exit(0);
        } else {
            fprintf(stderr, "sokovan-topo: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
    }
    if (a->xml && a->synthetic) {
        fprintf(stderr, "sokovan-topo: --xml and --synthetic exclude each "
                "other\n");
        return 2;
    }
    if (a->topo_gpus && a->mock) {
        fprintf(stderr, "sokovan-topo: --topo-gpus and --mock-gpus exclude "
                "each other\n");
        return 2;
    }
    if (a->policy && !a->alloc) {
        fprintf(stderr, "sokovan-topo: --policy needs --alloc\n");
        return 2;
    }
    return 0;
}

static int fail(const char *what, const skv_error *e)
{
    fprintf(stderr, "sokovan-topo: %s: %s\n", what, e->message);
    return 1;
}

static int open_plugin(tool *t, const char *name, const char *config)
{
    skv_error e = SKV_ERROR_INIT;
    skv_plugin_context ctx = SKV_PLUGIN_CONTEXT_INIT;
    ctx.topo = t->topo;
    ctx.config = config;
    if (skv_plugin_open_builtin(&t->plugins[t->nplugins], name, &ctx, &e))
        return fail(name, &e);
    t->nplugins++;
    return 0;
}

/* --topo-gpus: one mock plugin per vendor prefix found (NVIDIA "cuda",
 * AMD "rocm"); a GPU of another vendor is not offered under either. */
static int topo_gpus(tool *t)
{
    bool has[2] = {false, false};
    static const char *const prefix[2] = {"cuda", "rocm"};
    for (size_t i = 0; i < skv_topo_accel_count(t->topo); i++) {
        const skv_topo_accel *x = skv_topo_accel_at(t->topo, i);
        const char *p = skv_topo_accel_prefix(x);
        if (!x->compute)
            continue;
        if (!p)
            fprintf(stderr, "sokovan-topo: note: %s (%s, PCI vendor 0x%04x %s) "
                    "is neither NVIDIA nor AMD: not offered as a GPU\n",
                    x->name, x->model, x->vendor_id, x->vendor);
        for (int k = 0; p && k < 2; k++)
            has[k] |= strcmp(p, prefix[k]) == 0;
    }
    int rc = 0;
    if (has[0])
        rc = open_plugin(t, "mock", "topology=1,prefix=cuda");
    if (!rc && has[1])
        rc = open_plugin(t, "mock", "topology=1,prefix=rocm");
    return rc;
}

static int load(tool *t, const args *a)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = a->xml ? skv_topo_load_xml(&t->topo, a->xml, &e)
           : a->synthetic ? skv_topo_load_synthetic(&t->topo, a->synthetic, &e)
                          : skv_topo_load_live(&t->topo, &e);
    if (rc)
        return fail("loading the topology", &e);
    if ((rc = open_plugin(t, "cpu", NULL)) || (rc = open_plugin(t, "mem", NULL)))
        return rc;
    /* NVML describes this machine only, not a file's. */
    if (!a->xml && !a->synthetic && !a->no_cuda &&
        (rc = open_plugin(t, "cuda", NULL)))
        return rc;
    if (a->mock && (rc = open_plugin(t, "mock", a->mock)))
        return rc;
    if (a->topo_gpus && (rc = topo_gpus(t)))
        return rc;
    if (skv_node_new(&t->node, t->topo, t->plugins, t->nplugins, &e))
        return fail("building the node", &e);
    return 0;
}

static int place(tool *t, const args *a)
{
    skv_error e = SKV_ERROR_INIT;
    t->policy = SKV_NODE_PREFER_SINGLE;
    if (a->policy && skv_node_policy_parse(&t->policy, a->policy, &e))
        return fail("--policy", &e);
    skv_slots *req = NULL;
    if (skv_slots_parse(&req, a->alloc, skv_node_registry(t->node), &e))
        return fail("--alloc", &e);
    skv_node_alloc_options o = SKV_NODE_ALLOC_OPTIONS_INIT;
    o.policy = t->policy;
    int rc = skv_node_alloc(&t->placement, t->node, req, &o, &e);
    skv_slots_free(req);
    if (rc)
        return fail("--alloc", &e);
    t->request = a->alloc;
    return 0;
}

static void cleanup(tool *t)
{
    if (t->placement)
        skv_node_release(t->node, t->placement, NULL);
    skv_node_placement_free(t->placement);
    skv_node_free(t->node);
    for (size_t i = 0; i < t->nplugins; i++)
        skv_plugin_free(t->plugins[i]);
    skv_topo_free(t->topo);
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(&a, argc, argv);
    if (rc)
        return rc;
    tool t;
    memset(&t, 0, sizeof(t));
    rc = load(&t, &a);
    if (rc == 0 && a.alloc)
        rc = place(&t, &a);
    if (rc == 0) {
        if (a.json)
            print_json(&t, stdout);
        else
            print_table(&t, stdout);
        if (fflush(stdout) != 0)
            rc = 1;
    }
    cleanup(&t);
    return rc;
}
