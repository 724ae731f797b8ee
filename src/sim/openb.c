/* Loading the openb node and pod lists (Alibaba cluster-trace-gpu-v2023).
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sim_int.h"

#define MIB ((int64_t)1 << 20)
#define MAX_MIB ((int64_t)1 << 40)   /* 1 EiB: beyond any node */

static int model_index(skv_sim_openb *w, const char *name, bool add,
                       skv_error *err)
{
    for (int i = 0; i < w->nmodels; i++)
        if (strcmp(w->models[i], name) == 0)
            return i;
    if (!add)
        return -1;
    if (w->nmodels == 64)
        return skv__err(err, SKV_ERANGE, "node list: more than 64 GPU models");
    if (!(w->models[w->nmodels] = skv__strdup(name)))
        return skv__err(err, SKV_ENOMEM, "node list: out of memory");
    return w->nmodels++;
}

static int node_row(skv_sim_openb *w, skv__csv *c, const int *col,
                    skv_error *err)
{
    int64_t cpu, mib, gpus;
    int rc;
    if ((rc = skv__csv_i64(&cpu, c, col[1], 0, INT64_MAX / 2, err)) < 0 ||
        (rc = skv__csv_i64(&mib, c, col[2], 0, MAX_MIB, err)) < 0 ||
        (rc = skv__csv_i64(&gpus, c, col[3], 0, SKV_SCHED_DEVICES_MAX, err)) < 0)
        return rc;
    const char *model = skv__csv_str(c, col[4]);
    model = model ? model : "";
    if (gpus > 0 && !*model)
        return skv__err(err, SKV_EINVAL, "%s:%zu: column 'model' is missing",
                        c->source, c->line);
    int m = gpus > 0 ? model_index(w, model, true, err) : -1;
    if (gpus > 0 && m < 0)
        return m;
    skv__ob_node *n = &w->nodes[w->nnodes];
    const char *name = skv__csv_str(c, col[0]);
    if (!(n->name = skv__strdup(name && *name ? name : "node")))
        return skv__err(err, SKV_ENOMEM, "node list: out of memory");
    n->cpu = cpu;
    n->mem = mib * MIB;
    n->gpus = (uint32_t)gpus;
    n->model = m;
    w->nnodes++;
    w->capacity += gpus * 1000;
    return 0;
}

static size_t count_lines(const char *t)
{
    size_t n = 1;
    for (; *t; t++)
        n += *t == '\n';
    return n;
}

static int parse_nodes(skv_sim_openb *w, const char *text, skv_error *err)
{
    static const char *const names[5][2] = {
        {"sn", NULL}, {"cpu_milli", NULL}, {"memory_mib", NULL},
        {"gpu", NULL}, {"model", NULL}};
    skv__csv c;
    int rc = skv__csv_open(&c, text, "node list", err);
    if (rc < 0)
        return rc;
    int col[5];
    for (int i = 0; i < 5 && rc == 0; i++)
        if ((col[i] = skv__csv_col(&c, names[i])) < 0 && i > 0)
            rc = skv__err(err, SKV_EINVAL, "node list: no column '%s'",
                          names[i][0]);
    if (rc == 0 && !(w->nodes = skv__calloc(count_lines(text), sizeof(*w->nodes))))
        rc = skv__err(err, SKV_ENOMEM, "node list: out of memory");
    while (rc == 0 && (rc = skv__csv_next(&c, err)) == 1)
        rc = node_row(w, &c, col, err);
    if (rc == 0 && w->nnodes == 0)
        rc = skv__err(err, SKV_EINVAL, "node list: no nodes");
    skv__csv_close(&c);
    return rc;
}

static void parse_spec(skv_sim_openb *w, skv__ob_pod *p, const char *spec)
{
    p->any_model = !spec || !*spec;
    if (p->any_model)
        return;
    while (*spec) {
        size_t len = strcspn(spec, "|");
        char name[128];
        if (len < sizeof(name)) {
            memcpy(name, spec, len);
            name[len] = '\0';
            int m = model_index(w, name, false, NULL);
            if (m >= 0)
                p->models |= 1ull << m;
        }
        spec += len + (spec[len] == '|');
    }
    p->unknown_model = p->models == 0;
}

static int pod_row(skv_sim_openb *w, skv__csv *c, const int *col,
                   skv_error *err)
{
    int64_t cpu, mib, ngpu, gpu;
    int rc;
    if ((rc = skv__csv_i64(&cpu, c, col[1], 0, INT64_MAX / 2, err)) < 0 ||
        (rc = skv__csv_i64(&mib, c, col[2], 0, MAX_MIB, err)) < 0 ||
        (rc = skv__csv_i64(&ngpu, c, col[3], 0, SKV_SCHED_DEVICES_MAX, err)) < 0 ||
        (rc = skv__csv_i64(&gpu, c, col[4], 0, INT32_MAX, err)) < 0)
        return rc;
    if (ngpu > 1 && gpu < 1000)
        return skv__err(err, SKV_EINVAL, "%s:%zu: a fraction of a GPU "
                        "(gpu_milli %lld) needs num_gpu 1, not %lld",
                        c->source, c->line, (long long)gpu, (long long)ngpu);
    skv__ob_pod *p = &w->pods[w->npods++];
    p->cpu = cpu;
    p->mem = mib * MIB;
    p->ngpu = (uint32_t)ngpu;
    p->gpu = ngpu == 0 ? 0 : gpu > 1000 ? 1000 : gpu;
    if (p->ngpu > 0 && p->gpu == 0)  /* a GPU task asking for nothing */
        p->ngpu = 0;
    parse_spec(w, p, col[5] >= 0 ? skv__csv_str(c, col[5]) : NULL);
    return 0;
}

static int parse_pods(skv_sim_openb *w, const char *text, skv_error *err)
{
    static const char *const names[6][2] = {
        {"name", NULL}, {"cpu_milli", NULL}, {"memory_mib", NULL},
        {"num_gpu", NULL}, {"gpu_milli", NULL}, {"gpu_spec", NULL}};
    skv__csv c;
    int rc = skv__csv_open(&c, text, "pod list", err);
    if (rc < 0)
        return rc;
    int col[6];
    for (int i = 0; i < 6 && rc == 0; i++)
        if ((col[i] = skv__csv_col(&c, names[i])) < 0 && i > 0 && i < 5)
            rc = skv__err(err, SKV_EINVAL, "pod list: no column '%s'",
                          names[i][0]);
    if (rc == 0 && !(w->pods = skv__calloc(count_lines(text), sizeof(*w->pods))))
        rc = skv__err(err, SKV_ENOMEM, "pod list: out of memory");
    while (rc == 0 && (rc = skv__csv_next(&c, err)) == 1)
        rc = pod_row(w, &c, col, err);
    if (rc == 0 && w->npods == 0)
        rc = skv__err(err, SKV_EINVAL, "pod list: no pods");
    skv__csv_close(&c);
    return rc;
}

int skv_sim_openb_parse(skv_sim_openb **out, const char *nodes_text,
                        const char *pods_text, skv_error *err)
{
    if (!out || !nodes_text)
        return skv__err(err, SKV_EINVAL, "openb: NULL argument");
    skv_sim_openb *w = skv__calloc(1, sizeof(*w));
    if (!w)
        return skv__err(err, SKV_ENOMEM, "openb: out of memory");
    int rc = parse_nodes(w, nodes_text, err);
    if (rc == 0 && pods_text)
        rc = parse_pods(w, pods_text, err);
    if (rc == 0 && w->capacity == 0)
        rc = skv__err(err, SKV_EINVAL, "node list: no GPUs");
    if (rc < 0) {
        skv_sim_openb_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int skv_sim_openb_load(skv_sim_openb **out, const char *nodes_csv,
                       const char *pods_csv, skv_error *err)
{
    if (!out || !nodes_csv)
        return skv__err(err, SKV_EINVAL, "openb: NULL argument");
    char *nt = NULL, *pt = NULL;
    int rc = skv__csv_read_file(&nt, nodes_csv, err);
    if (rc == 0 && pods_csv)
        rc = skv__csv_read_file(&pt, pods_csv, err);
    if (rc == 0)
        rc = skv_sim_openb_parse(out, nt, pt, err);
    if (rc < 0 && err && !strstr(err->message, nodes_csv) &&
        strncmp(err->message, "node", 4) == 0)
        skv__err_prefix(err, "%s", nodes_csv);
    else if (rc < 0 && err && pods_csv && strncmp(err->message, "pod", 3) == 0)
        skv__err_prefix(err, "%s", pods_csv);
    skv__free(nt);
    skv__free(pt);
    return rc;
}

void skv_sim_openb_free(skv_sim_openb *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nnodes; i++)
        skv__free(w->nodes[i].name);
    for (int i = 0; i < w->nmodels; i++)
        skv__free(w->models[i]);
    skv__free(w->nodes);
    skv__free(w->pods);
    skv__free(w);
}

size_t skv_sim_openb_node_count(const skv_sim_openb *w)
{
    return w ? w->nnodes : 0;
}

size_t skv_sim_openb_pod_count(const skv_sim_openb *w)
{
    return w ? w->npods : 0;
}

skv_qty skv_sim_openb_capacity(const skv_sim_openb *w)
{
    return w ? w->capacity : 0;
}
