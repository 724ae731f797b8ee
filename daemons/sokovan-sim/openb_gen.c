/* sokovan-sim openb-gen: workload variants of an openb pod list by the FGD
 * paper's recipe (skv_sim_openb_vary), written as a pod list; the same
 * spec syntax serves `openb --vary`.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static int set_share(skv_sim_openb_vary_options *o, const char *k, double x)
{
    if (strcmp(k, "cpu") == 0)
        o->cpu_share = x;
    else if (strcmp(k, "share") == 0)
        o->share_demand = x;
    else if (strcmp(k, "multi") == 0)
        o->multi_demand = x;
    else if (strcmp(k, "spec") == 0)
        o->spec_share = x;
    else
        return -1;
    return 0;
}

int sim_vary_parse(skv_sim_openb_vary_options *o, const char *spec)
{
    char buf[256];
    if (!spec || !*spec || strlen(spec) >= sizeof(buf))
        return -1;
    snprintf(buf, sizeof(buf), "%s", spec);
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '='), *end;
        if (!eq)
            return -1;
        *eq = '\0';
        errno = 0;
        double x = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || errno || !(x >= 0 && x <= 1) ||
            set_share(o, t, x) < 0)
            return -1;
    }
    return 0;
}

static void gen_usage(void)
{
    fprintf(stderr, "usage: sokovan-sim openb-gen --nodes NODES.csv --pods PODS.csv "
            "--vary SPEC [--seed N] --out FILE\n"
            "  SPEC: comma-separated cpu=X (CPU-only pods / all pods), share=X\n"
            "  (sharing pods' share of GPU demand), multi=X (multi-GPU pods'\n"
            "  share of GPU demand), spec=X (GPU pods with a model constraint)\n");
}

static int gen_args(int argc, char **argv, const char **nodes, const char **pods,
                    const char **spec, const char **seed, const char **out)
{
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const char **dst = strcmp(a, "--nodes") == 0 ? nodes
                           : strcmp(a, "--pods") == 0 ? pods
                           : strcmp(a, "--vary") == 0 ? spec
                           : strcmp(a, "--seed") == 0 ? seed
                           : strcmp(a, "--out") == 0 ? out : NULL;
        if (!dst || !v || *dst) {
            fprintf(stderr, "sokovan-sim openb-gen: %s '%s'\n",
                    !dst ? "unknown option" : !v ? "missing value for"
                                                 : "repeated option", a);
            return -1;
        }
        *dst = v;
    }
    if (!*nodes || !*pods || !*spec || !*out) {
        gen_usage();
        return -1;
    }
    return 0;
}

int sim_openb_gen_main(int argc, char **argv)
{
    const char *nodes = NULL, *pods = NULL, *spec = NULL, *seed = NULL, *out = NULL;
    if (gen_args(argc, argv, &nodes, &pods, &spec, &seed, &out) < 0)
        return 2;
    skv_sim_openb_vary_options o = SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    char *end = NULL;
    errno = 0;
    o.seed = seed ? strtoull(seed, &end, 10) : 42;
    if (sim_vary_parse(&o, spec) < 0 || (seed && (!*seed || *end || errno))) {
        fprintf(stderr, "sokovan-sim openb-gen: bad %s '%s'\n",
                seed && (!*seed || *end || errno) ? "--seed" : "--vary",
                seed && (!*seed || *end || errno) ? seed : spec);
        gen_usage();
        return 2;
    }
    skv_sim_openb *w = NULL, *v = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_sim_openb_load(&w, nodes, pods, &e);
    if (rc == 0)
        rc = skv_sim_openb_vary(&v, w, &o, &e);
    if (rc == 0)
        rc = skv_sim_openb_write_pods(v, out, &e);
    if (rc < 0)
        fprintf(stderr, "sokovan-sim openb-gen: %s\n", e.message);
    else
        fprintf(stderr, "sokovan-sim openb-gen: %zu pods -> %s\n",
                skv_sim_openb_pod_count(v), out);
    skv_sim_openb_free(v);
    skv_sim_openb_free(w);
    return rc < 0 ? 1 : 0;
}
