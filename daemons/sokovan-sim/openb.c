/* sokovan-sim openb: the FGD paper's experiment (docs/simulator.md).
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define MAX_PCT 200
#define MAX_WL 32
#define MAX_POL 16

/* Published FGD-paper figures (the artifact's analysis_allo_discrete.csv,
 * mean of seeds 42..51): every policy at arrived 100 %, in the order
 * random, dotprod, gpuclustering, gpupacking, bestfit, fgd, and FGD's
 * curve at arrived 90, 95, 100, 110 %. The visible workloads and the
 * paper's variants of default (cpuNNN: NNN/10 % CPU-only pods; gpushareNN:
 * sharing pods NN % of GPU demand; multigpuNN: multi-GPU pods NN % of GPU
 * demand; gpuspecNN: NN % of GPU pods model-constrained). */
static const struct {
    const char *workload;
    double pct[6];
    double fgd_curve[4];
} published[] = {
    {"default", {86.30, 90.62, 91.65, 91.78, 92.86, 95.23}, {89.98, 94.91, 95.23, 95.30}},
    {"cpu050", {89.02, 93.03, 93.52, 93.46, 93.56, 95.00}, {90.01, 94.81, 95.00, 95.08}},
    {"cpu100", {87.44, 91.73, 92.42, 92.50, 93.26, 95.21}, {90.00, 94.91, 95.21, 95.27}},
    {"cpu200", {83.03, 87.45, 89.67, 89.98, 92.15, 94.82}, {89.99, 94.69, 94.82, 94.91}},
    {"cpu250", {80.00, 83.57, 87.75, 88.05, 91.21, 93.20}, {89.98, 93.14, 93.20, 93.28}},
    {"gpushare100", {78.90, 81.98, 82.22, 82.13, 84.62, 86.64}, {86.53, 86.59, 86.64, 86.72}},
    {"gpushare40", {84.86, 89.30, 89.76, 89.77, 91.44, 93.96}, {89.99, 93.92, 93.96, 94.03}},
    {"gpushare60", {82.81, 86.82, 86.90, 87.15, 89.06, 91.25}, {90.00, 91.21, 91.25, 91.31}},
    {"gpushare80", {80.62, 84.14, 84.50, 84.65, 86.66, 89.08}, {88.97, 89.03, 89.08, 89.16}},
    {"gpuspec10", {86.26, 90.17, 91.96, 92.24, 93.10, 94.66}, {85.83, 90.38, 94.66, 94.84}},
    {"gpuspec20", {85.90, 88.29, 89.11, 89.28, 88.46, 94.66}, {86.20, 90.83, 94.66, 94.73}},
    {"gpuspec25", {85.42, 85.44, 86.41, 86.77, 85.67, 93.91}, {85.20, 89.76, 93.91, 94.62}},
    {"gpuspec33", {83.87, 79.82, 81.09, 82.22, 80.39, 87.84}, {80.62, 84.25, 87.84, 94.43}},
    {"multigpu20", {86.92, 91.85, 93.34, 93.50, 93.73, 95.53}, {90.01, 94.94, 95.53, 95.58}},
    {"multigpu30", {86.63, 93.11, 94.55, 94.70, 94.57, 96.36}, {90.01, 95.00, 96.36, 96.39}},
    {"multigpu40", {85.38, 94.04, 95.35, 95.59, 95.10, 96.91}, {89.96, 94.95, 96.91, 96.93}},
    {"multigpu50", {81.28, 94.73, 95.69, 96.06, 95.62, 97.09}, {89.93, 94.82, 97.09, 97.12}},
};
static const int curve_pct[4] = {90, 95, 100, 110};
static const char *const paper_policies[6] = {
    "random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd"};

typedef struct cell {           /* one (workload, policy, seed) run */
    int wl, pol;
    uint64_t seed;
    double col[MAX_PCT + 1];
    bool has[MAX_PCT + 1];
    size_t events, dropped;
    double seconds;
    int rc;
    char msg[SKV_ERROR_MESSAGE_MAX];
} cell;

typedef struct job {
    skv_sim_openb *wl[MAX_WL];
    const char *wl_name[MAX_WL];
    const char *policy[MAX_POL];
    const char *config;
    const char *vary[MAX_WL];    /* [NAME:]SPEC variants of the first list */
    int nvary;
    uint64_t vary_seed;
    cell *cells;
    size_t ncells, next;
    pthread_mutex_t mu;
} job;

/* The published workload a pod list (or a --vary NAME) is: its base
 * name without "openb_pod_list_" and ".csv". */
static const char *workload_name(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *u = strstr(b, "openb_pod_list_");
    static char names[MAX_WL][128];
    static int used;
    if (!u || used == MAX_WL)
        return b;
    char *n = names[used++];
    snprintf(n, sizeof(names[0]), "%s", u + strlen("openb_pod_list_"));
    char *dot = strstr(n, ".csv");
    if (dot)
        *dot = '\0';
    return n;
}

static int published_index(const char *wl)
{
    if (strncmp(wl, "gen-", 4) == 0)   /* a variant by the same recipe */
        wl += 4;
    for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++)
        if (strcmp(published[i].workload, wl) == 0)
            return (int)i;
    return -1;
}

static double published_pct(const char *wl, const char *pol)
{
    int i = published_index(wl);
    for (int p = 0; i >= 0 && p < 6; p++)
        if (strcmp(paper_policies[p], pol) == 0)
            return published[i].pct[p];
    return NAN;
}

static void run_cell(job *j, cell *c)
{
    skv_sim_openb_options o = SKV_SIM_OPENB_OPTIONS_INIT;
    o.policy = j->policy[c->pol];
    o.policy_config = j->config;
    o.seed = c->seed;
    skv_sim_openb_result *r = NULL;
    skv_error e = SKV_ERROR_INIT;
    double t0 = sim_now();
    c->rc = skv_sim_openb_run(&r, j->wl[c->wl], &o, &e);
    c->seconds = sim_now() - t0;
    if (c->rc < 0) {
        snprintf(c->msg, sizeof(c->msg), "%s", e.message);
        return;
    }
    for (int k = 0; k <= MAX_PCT; k++)
        c->has[k] = skv_sim_openb_column(&c->col[k], r, k) == 0;
    c->events = r->n_events;
    c->dropped = r->n_dropped;
    skv_sim_openb_result_free(r);
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        size_t i = j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->ncells)
            return NULL;
        run_cell(j, &j->cells[i]);
    }
}

typedef struct stats {
    double mean, sd, col_mean[MAX_PCT + 1], seconds;
    bool has[MAX_PCT + 1];
    double dropped, events;
    int n;
} stats;

static void summarize(stats *s, const job *j, int wl, int pol)
{
    memset(s, 0, sizeof(*s));
    double sum2 = 0;
    int cnt[MAX_PCT + 1] = {0};
    for (size_t i = 0; i < j->ncells; i++) {
        const cell *c = &j->cells[i];
        if (c->wl != wl || c->pol != pol || c->rc < 0)
            continue;
        s->n++;
        s->seconds += c->seconds;
        s->dropped += (double)c->dropped;
        s->events += (double)c->events;
        for (int k = 0; k <= MAX_PCT; k++)
            if (c->has[k]) {
                s->col_mean[k] += c->col[k];
                cnt[k]++;
            }
        if (c->has[100])
            sum2 += c->col[100] * c->col[100];
    }
    for (int k = 0; k <= MAX_PCT; k++)
        if ((s->has[k] = cnt[k] > 0))
            s->col_mean[k] /= cnt[k];
    s->mean = s->has[100] ? s->col_mean[100] : NAN;
    s->sd = cnt[100] > 1 ? sqrt(fmax(0, sum2 / cnt[100] - s->mean * s->mean)) : 0;
    if (s->n) {
        s->seconds /= s->n;
        s->dropped /= s->n;
        s->events /= s->n;
    }
}

static void print_table(const job *j, int nwl, int npol, const uint64_t *seeds,
                        size_t nseeds)
{
    for (int w = 0; w < nwl; w++) {
        printf("workload %s: %zu nodes, %.0f GPUs, %zu pods; seeds %llu..%llu "
               "(%zu); allocated GPU %% at arrived demand k%%\n",
               j->wl_name[w], skv_sim_openb_node_count(j->wl[w]),
               (double)skv_sim_openb_capacity(j->wl[w]) / 1000.0,
               skv_sim_openb_pod_count(j->wl[w]), (unsigned long long)seeds[0],
               (unsigned long long)seeds[nseeds - 1], nseeds);
        printf("  %-14s %8s %6s %9s %7s %7s %7s %7s %7s %8s %7s\n", "policy",
               "@100", "sd", "published", "diff", "@90", "@95", "@110", "@120",
               "dropped", "s/run");
        for (int p = 0; p < npol; p++) {
            stats s;
            summarize(&s, j, w, p);
            double pub = published_pct(j->wl_name[w], j->policy[p]);
            printf("  %-14s %8.2f %6.2f ", j->policy[p], s.mean, s.sd);
            if (isnan(pub))
                printf("%9s %7s", "-", "-");
            else
                printf("%9.2f %+7.2f", pub, s.mean - pub);
            printf(" %7.2f %7.2f %7.2f %7.2f %8.0f %7.2f\n",
                   s.has[90] ? s.col_mean[90] : NAN, s.has[95] ? s.col_mean[95] : NAN,
                   s.has[110] ? s.col_mean[110] : NAN,
                   s.has[120] ? s.col_mean[120] : NAN, s.dropped, s.seconds);
        }
        int pi = published_index(j->wl_name[w]);
        if (pi >= 0)
            printf("  %-14s %8.2f %6s %9s %7s %7.2f %7.2f %7.2f %7s\n",
                   "(published fgd)", published[pi].fgd_curve[2], "", "", "",
                   published[pi].fgd_curve[0], published[pi].fgd_curve[1],
                   published[pi].fgd_curve[3], "");
    }
}

static void print_json(const job *j, int nwl, int npol, const uint64_t *seeds,
                       size_t nseeds)
{
    printf("{\"experiment\":\"openb\",\"seeds\":[");
    for (size_t i = 0; i < nseeds; i++)
        printf("%s%llu", i ? "," : "", (unsigned long long)seeds[i]);
    printf("],\"workloads\":[");
    for (int w = 0; w < nwl; w++) {
        printf("%s{\"workload\":", w ? "," : "");
        sim_json_str(j->wl_name[w]);
        printf(",\"nodes\":%zu,\"gpu_milli\":%lld,\"pods\":%zu,\"policies\":{",
               skv_sim_openb_node_count(j->wl[w]),
               (long long)skv_sim_openb_capacity(j->wl[w]),
               skv_sim_openb_pod_count(j->wl[w]));
        for (int p = 0; p < npol; p++) {
            stats s;
            summarize(&s, j, w, p);
            double pub = published_pct(j->wl_name[w], j->policy[p]);
            printf("%s", p ? "," : "");
            sim_json_str(j->policy[p]);
            if (isnan(s.mean))
                printf(":{\"alloc_pct_at_100\":null,\"sd_at_100\":null,");
            else
                printf(":{\"alloc_pct_at_100\":%.4f,\"sd_at_100\":%.4f,", s.mean, s.sd);
            if (isnan(pub))
                printf("\"published_at_100\":null,");
            else
                printf("\"published_at_100\":%.2f,", pub);
            int pi = published_index(j->wl_name[w]);
            if (pi >= 0 && strcmp(j->policy[p], "fgd") == 0) {
                printf("\"published_curve\":[");
                for (int k = 0; k < 4; k++)
                    printf("%s[%d,%.2f]", k ? "," : "", curve_pct[k],
                           published[pi].fgd_curve[k]);
                printf("],");
            }
            printf("\"runs\":%d,\"mean_dropped\":%.1f,\"seconds_per_run\":%.3f,"
                   "\"curve\":[", s.n, s.dropped, s.seconds);
            for (int k = 0, first = 1; k <= MAX_PCT; k++)
                if (s.has[k]) {
                    printf("%s[%d,%.4f]", first ? "" : ",", k, s.col_mean[k]);
                    first = 0;
                }
            printf("]}");
        }
        printf("}}");
    }
    printf("]}\n");
}

static int parse_args(job *j, int argc, char **argv, int *nwl, int *npol,
                      const char **seeds, int *threads, bool *json,
                      const char **nodes, const char **pods)
{
    int np = 0;
    const char *pol = "all";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--json") == 0) {
            *json = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "sokovan-sim openb: '%s' needs a value (or is unknown)\n", a);
            return -1;
        }
        i++;
        if (strcmp(a, "--nodes") == 0)
            *nodes = v;
        else if (strcmp(a, "--pods") == 0 && np < MAX_WL)
            pods[np++] = v;
        else if (strcmp(a, "--policy") == 0)
            pol = v;
        else if (strcmp(a, "--seeds") == 0 || strcmp(a, "--seed") == 0)
            *seeds = v;
        else if (strcmp(a, "--jobs") == 0 || strcmp(a, "-j") == 0)
            *threads = atoi(v);
        else if (strcmp(a, "--config") == 0)
            j->config = v;
        else if (strcmp(a, "--vary") == 0 && j->nvary < MAX_WL)
            j->vary[j->nvary++] = v;
        else if (strcmp(a, "--vary-seed") == 0) {
            char *e = NULL;
            j->vary_seed = strtoull(v, &e, 10);
            if (*v < '0' || *v > '9' || *e) {
                fprintf(stderr, "sokovan-sim openb: bad --vary-seed '%s'\n", v);
                return -1;
            }
        }
        else {
            fprintf(stderr, "sokovan-sim openb: unknown or repeated option '%s'\n", a);
            return -1;
        }
    }
    if (!*nodes || np == 0) {
        fprintf(stderr, "sokovan-sim openb: --nodes and --pods are required\n");
        return -1;
    }
    *nwl = np;
    if (np + j->nvary > MAX_WL) {
        fprintf(stderr, "sokovan-sim openb: at most %d workloads with --vary\n",
                MAX_WL);
        return -1;
    }
    if (strcmp(pol, "all") == 0) {
        for (size_t i = 0; i < skv_sim_policy_count() && i < MAX_POL; i++)
            j->policy[(*npol)++] = skv_sim_policy_name(i);
    } else {   /* NAME or NAME,NAME,... */
        static char list[256];
        snprintf(list, sizeof(list), "%s", pol);
        char *save = NULL;
        for (char *t = strtok_r(list, ",", &save); t && *npol < MAX_POL;
             t = strtok_r(NULL, ",", &save))
            j->policy[(*npol)++] = t;
        if (*npol == 0) {
            fprintf(stderr, "sokovan-sim openb: empty --policy\n");
            return -1;
        }
    }
    if (*threads < 1 || *threads > 64) {
        fprintf(stderr, "sokovan-sim openb: --jobs must be 1..64\n");
        return -1;
    }
    return 0;
}

static int load_all(job *j, const char *nodes, const char *const *pods, int nwl)
{
    for (int w = 0; w < nwl; w++) {
        skv_error e = SKV_ERROR_INIT;
        if (skv_sim_openb_load(&j->wl[w], nodes, pods[w], &e) < 0) {
            fprintf(stderr, "sokovan-sim openb: %s\n", e.message);
            return -1;
        }
        j->wl_name[w] = workload_name(pods[w]);
    }
    return 0;
}

/* --vary [NAME:]SPEC: a variant of the first pod list (skv_sim_openb_vary),
 * named NAME or "<first>+SPEC". */
static int load_variant(job *j, int w, const char *arg)
{
    static char names[MAX_WL][160];
    const char *colon = strchr(arg, ':'), *spec = colon ? colon + 1 : arg;
    skv_sim_openb_vary_options o = SKV_SIM_OPENB_VARY_OPTIONS_INIT;
    o.seed = j->vary_seed;
    if (sim_vary_parse(&o, spec) < 0) {
        fprintf(stderr, "sokovan-sim openb: bad --vary '%s' ([NAME:]cpu=X,"
                "share=X,multi=X,spec=X; X in 0..1)\n", arg);
        return -1;
    }
    skv_error e = SKV_ERROR_INIT;
    if (skv_sim_openb_vary(&j->wl[w], j->wl[0], &o, &e) < 0) {
        fprintf(stderr, "sokovan-sim openb: --vary '%s': %s\n", arg, e.message);
        return -1;
    }
    if (colon)
        snprintf(names[w], sizeof(names[w]), "%.*s", (int)(colon - arg), arg);
    else
        snprintf(names[w], sizeof(names[w]), "%s+%s", j->wl_name[0], spec);
    j->wl_name[w] = names[w];
    return 0;
}

static int run_all(job *j, int threads)
{
    pthread_t tid[64];
    int started = 0;
    pthread_mutex_init(&j->mu, NULL);
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, worker, j) == 0)
            started++;
    worker(j);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j->mu);
    for (size_t i = 0; i < j->ncells; i++)
        if (j->cells[i].rc < 0) {
            fprintf(stderr, "sokovan-sim openb: %s seed %llu: %s\n",
                    j->policy[j->cells[i].pol],
                    (unsigned long long)j->cells[i].seed, j->cells[i].msg);
            return -1;
        }
    return 0;
}

int sim_openb_main(int argc, char **argv)
{
    static job j;
    j.vary_seed = 42;
    const char *pods[MAX_WL], *nodes = NULL, *seed_text = "42-51";
    int nwl = 0, npol = 0, threads = 1, rc = 1;
    bool json = false;
    uint64_t *seeds = NULL;
    size_t nseeds = 0;
    if (parse_args(&j, argc, argv, &nwl, &npol, &seed_text, &threads, &json,
                   &nodes, pods) < 0)
        return 2;
    if (sim_parse_seeds(&seeds, &nseeds, seed_text) < 0 || nseeds == 0) {
        fprintf(stderr, "sokovan-sim openb: bad --seeds '%s' (42, 42-51 or 1,2,3)\n",
                seed_text);
        return 2;
    }
    for (int p = 0; p < npol; p++)
        if (!skv_sim_policy(j.policy[p]) && strcmp(j.policy[p], "concentrated") &&
            strcmp(j.policy[p], "dispersed") && strcmp(j.policy[p], "roundrobin")) {
            fprintf(stderr, "sokovan-sim openb: unknown policy '%s' (see "
                    "'sokovan-sim policies')\n", j.policy[p]);
            free(seeds);
            return 2;
        }
    int nbase = nwl;
    nwl += j.nvary;
    j.ncells = (size_t)nwl * (size_t)npol * nseeds;
    j.cells = calloc(j.ncells, sizeof(*j.cells));
    int lrc = j.cells ? load_all(&j, nodes, pods, nbase) : -1;
    for (int v = 0; lrc == 0 && v < j.nvary; v++)
        lrc = load_variant(&j, nbase + v, j.vary[v]);
    if (lrc == 0) {
        size_t i = 0;
        for (int w = 0; w < nwl; w++)
            for (int p = 0; p < npol; p++)
                for (size_t s = 0; s < nseeds; s++)
                    j.cells[i++] = (cell){.wl = w, .pol = p, .seed = seeds[s]};
        if (run_all(&j, threads) == 0) {
            if (json)
                print_json(&j, nwl, npol, seeds, nseeds);
            else
                print_table(&j, nwl, npol, seeds, nseeds);
            rc = 0;
        }
    }
    for (int w = 0; w < nwl; w++)
        skv_sim_openb_free(j.wl[w]);
    free(j.cells);
    free(seeds);
    return rc;
}
