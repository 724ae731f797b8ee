/* Parsing the fragmentation selectors' configuration string:
 *   "key=value;key=value;..."  with keys
 *   seed=N            seed of the random tie-breaker
 *   weight=count|demand   type popularity by task count (FGD) or by
 *                     count x GPU demand^exp (frag)
 *   exp=X             exponent for weight=demand
 *   mu=X              penalty for GPU capacity left without CPU/memory
 *   ties=pack|random|index
 *   scan=classes|nodes  how the pass finds the best agent: by free-state
 *                     class with cached scores (default) or by scoring
 *                     every node (the reference; same decisions)
 *   supply=MODEL:MILLI_GPU   GPU capacity of a model (repeatable)
 *   scarcity=X        weight of the model-scarcity cost
 *   pack=X            bonus per GpuPacking tier (milli-GPU units)
 *   levels=N          score floor(N * sigmoid(-delta/1000)) (FGD's
 *                     published integer score; 0 = the exact delta)
 *   rarity=X          weigh a type by (all GPUs / GPUs of the nodes that
 *                     can hold it)^X: rare hosts are kept for their types
 *   host=COUNT:CPU_MILLI:MEM_BYTES:NGPU:MODEL   a node shape of the cluster
 *                     (repeatable; MODEL may be empty)
 *   typical=PCT       keep only the most popular types covering PCT % of
 *                     the weight (FGD's "typical pods"; 0 or 100 = all)
 *   type=COUNT:CPU_MILLI:MEM_BYTES:NGPU:GPU_MILLI:MODELS   (repeatable)
 *                     MODELS is '*' or names joined by '|'
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"
#include "selector_frag_int.h"

static int model_bit(skv__frag_cfg *c, const char *name, size_t len,
                     skv_error *err)
{
    for (int i = 0; i < c->nmodels; i++)
        if (strlen(c->models[i]) == len && memcmp(c->models[i], name, len) == 0)
            return i;
    if (c->nmodels == 64)
        return skv__err(err, SKV_ERANGE, "frag selector: more than 64 GPU "
                        "models");
    c->models[c->nmodels] = skv__strndup(name, len);
    if (!c->models[c->nmodels])
        return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
    return c->nmodels++;
}

static int parse_models(skv__frag_cfg *c, skv__frag_shape *s, const char *t,
                        skv_error *err)
{
    if (strcmp(t, "*") == 0 || *t == '\0') {
        s->any_model = true;
        return 0;
    }
    s->any_model = false;
    while (*t) {
        size_t len = strcspn(t, "|");
        if (len == 0)
            return skv__err(err, SKV_EINVAL, "frag selector: empty model "
                            "name in '%s'", t);
        int bit = model_bit(c, t, len, err);
        if (bit < 0)
            return bit;
        s->models |= 1ull << bit;
        t += len + (t[len] == '|');
    }
    return 0;
}

static int parse_i64(int64_t *out, const char **p, char end, const char *what,
                     skv_error *err)
{
    char *e;
    errno = 0;
    long long v = strtoll(*p, &e, 10);
    if (e == *p || errno || v < 0 || *e != end)
        return skv__err(err, SKV_EINVAL, "frag selector: bad %s in type "
                        "'%s'", what, *p);
    *out = v;
    *p = e + (end != '\0');
    return 0;
}

static int grow_types(skv__frag_cfg *c, skv_error *err)
{
    if (c->ntypes < c->cap)
        return 0;
    size_t ncap = c->cap ? c->cap * 2 : 64;
    skv__frag_shape *ns = skv__reallocarray(c->shapes, ncap, sizeof(*ns));
    if (!ns)
        return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
    c->shapes = ns;
    double *nw = skv__reallocarray(c->weights, ncap, sizeof(*nw));
    if (!nw)
        return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
    c->weights = nw;
    c->cap = ncap;
    return 0;
}

static int parse_type(skv__frag_cfg *c, const char *v, skv_error *err)
{
    int rc = grow_types(c, err);
    if (rc < 0)
        return rc;
    char *e;
    errno = 0;
    double count = strtod(v, &e);
    if (e == v || *e != ':' || errno || !(count >= 0))
        return skv__err(err, SKV_EINVAL, "frag selector: bad count in type "
                        "'%s'", v);
    const char *p = e + 1;
    skv__frag_shape s;
    memset(&s, 0, sizeof(s));
    int64_t ngpu = 0;
    if ((rc = parse_i64(&s.cpu, &p, ':', "cpu", err)) < 0 ||
        (rc = parse_i64(&s.mem, &p, ':', "mem", err)) < 0 ||
        (rc = parse_i64(&ngpu, &p, ':', "ngpu", err)) < 0 ||
        (rc = parse_i64(&s.gpu, &p, ':', "gpu", err)) < 0)
        return rc;
    if (ngpu > SKV__FRAG_MAX_GPU || s.gpu > SKV__FRAG_GPU_UNIT)
        return skv__err(err, SKV_EINVAL, "frag selector: GPU demand out of "
                        "range in type '%s'", v);
    s.ngpu = (int)ngpu;
    if (s.ngpu == 0)
        s.gpu = 0;
    if ((rc = parse_models(c, &s, p, err)) < 0)
        return rc;
    c->shapes[c->ntypes] = s;
    c->weights[c->ntypes++] = count;
    return 0;
}

/* host=COUNT:CPU_MILLI:MEM_BYTES:NGPU:MODEL, one node shape. */
static int parse_host(skv__frag_cfg *c, const char *v, skv_error *err)
{
    if (c->nhosts == c->host_cap) {
        size_t nc = c->host_cap ? c->host_cap * 2 : 16;
        skv__frag_shape *nh = skv__reallocarray(c->hosts, nc, sizeof(*nh));
        if (!nh)
            return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
        c->hosts = nh;
        double *nn = skv__reallocarray(c->host_count, nc, sizeof(*nn));
        if (!nn)
            return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
        c->host_count = nn;
        c->host_cap = nc;
    }
    skv__frag_shape h;
    memset(&h, 0, sizeof(h));
    int64_t count = 0, ngpu = 0;
    const char *p = v;
    int rc;
    if ((rc = parse_i64(&count, &p, ':', "count", err)) < 0 ||
        (rc = parse_i64(&h.cpu, &p, ':', "cpu", err)) < 0 ||
        (rc = parse_i64(&h.mem, &p, ':', "mem", err)) < 0 ||
        (rc = parse_i64(&ngpu, &p, ':', "ngpu", err)) < 0)
        return rc;
    if (ngpu > SKV__FRAG_MAX_GPU)
        return skv__err(err, SKV_EINVAL, "frag selector: host '%s' has more "
                        "than %d GPUs", v, SKV__FRAG_MAX_GPU);
    h.ngpu = (int)ngpu;
    h.any_model = *p == '\0';
    if (!h.any_model) {
        int bit = model_bit(c, p, strlen(p), err);
        if (bit < 0)
            return bit;
        h.models = 1ull << bit;
    }
    c->hosts[c->nhosts] = h;
    c->host_count[c->nhosts++] = (double)count;
    return 0;
}

static int parse_param(skv__frag_cfg *c, const char *k, const char *v,
                       skv_error *err)
{
    char *e = NULL;
    errno = 0;
    if (strcmp(k, "seed") == 0) {
        c->params.seed = strtoull(v, &e, 10);
    } else if (strcmp(k, "exp") == 0) {
        c->params.exp = strtod(v, &e);
    } else if (strcmp(k, "supply") == 0) {
        const char *colon = strrchr(v, ':');
        if (!colon || colon == v)
            return skv__err(err, SKV_EINVAL, "frag selector: supply '%s' is "
                            "not MODEL:MILLI_GPU", v);
        int bit = model_bit(c, v, (size_t)(colon - v), err);
        if (bit < 0)
            return bit;
        long long q = strtoll(colon + 1, &e, 10);
        if (q < 0)
            e = (char *)v;
        c->supply[bit] = q;
        v = colon + 1;
    } else if (strcmp(k, "scarcity") == 0) {
        c->params.scarcity = strtod(v, &e);
        if (!(c->params.scarcity >= 0))
            e = (char *)v;
    } else if (strcmp(k, "pack") == 0) {
        c->params.pack = strtod(v, &e);
        if (!(c->params.pack >= 0))
            e = (char *)v;
    } else if (strcmp(k, "levels") == 0) {
        long long q = strtoll(v, &e, 10);
        if (q < 0 || q > 1000000)
            e = (char *)v;
        c->params.levels = (int)q;
    } else if (strcmp(k, "typical") == 0) {
        c->params.typical = strtod(v, &e);
        if (!(c->params.typical >= 0 && c->params.typical <= 100))
            e = (char *)v;
    } else if (strcmp(k, "rarity") == 0) {
        c->params.rarity = strtod(v, &e);
        if (!(c->params.rarity >= 0 && c->params.rarity <= 8))
            e = (char *)v;
    } else if (strcmp(k, "host") == 0) {
        return parse_host(c, v, err);
    } else if (strcmp(k, "mu") == 0) {
        c->params.mu = strtod(v, &e);
        if (!(c->params.mu >= 0))
            e = (char *)v;
    } else if (strcmp(k, "weight") == 0) {
        if (strcmp(v, "count") && strcmp(v, "demand"))
            return skv__err(err, SKV_EINVAL, "frag selector: weight '%s' "
                            "(expected count or demand)", v);
        c->params.weight_by_demand = strcmp(v, "demand") == 0;
        return 0;
    } else if (strcmp(k, "scan") == 0) {
        if (strcmp(v, "classes") && strcmp(v, "nodes"))
            return skv__err(err, SKV_EINVAL, "frag selector: scan '%s' "
                            "(expected classes or nodes)", v);
        c->params.scan_nodes = strcmp(v, "nodes") == 0;
        return 0;
    } else if (strcmp(k, "ties") == 0) {
        if (strcmp(v, "pack") == 0)
            c->params.ties = SKV__FRAG_TIES_PACK;
        else if (strcmp(v, "random") == 0)
            c->params.ties = SKV__FRAG_TIES_RANDOM;
        else if (strcmp(v, "index") == 0)
            c->params.ties = SKV__FRAG_TIES_INDEX;
        else
            return skv__err(err, SKV_EINVAL, "frag selector: ties '%s' "
                            "(expected pack, random or index)", v);
        return 0;
    } else if (strcmp(k, "type") == 0) {
        return parse_type(c, v, err);
    } else {
        return skv__err(err, SKV_EINVAL, "frag selector: unknown key '%s'", k);
    }
    if (e == v || *e != '\0' || errno)
        return skv__err(err, SKV_EINVAL, "frag selector: bad value '%s' for "
                        "'%s'", v, k);
    return 0;
}

int skv__frag_cfg_parse(skv__frag_cfg *c, const char *config, skv_error *err)
{
    if (!config)
        return 0;
    char *copy = skv__strdup(config);
    if (!copy)
        return skv__err(err, SKV_ENOMEM, "frag selector: out of memory");
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ";", &save); tok && rc == 0;
         tok = strtok_r(NULL, ";", &save)) {
        while (*tok == ' ' || *tok == '\n')
            tok++;
        if (*tok == '\0')
            continue;
        char *eq = strchr(tok, '=');
        if (!eq) {
            rc = skv__err(err, SKV_EINVAL, "frag selector: '%s' is not "
                          "key=value", tok);
            break;
        }
        *eq = '\0';
        rc = parse_param(c, tok, eq + 1, err);
    }
    skv__free(copy);
    return rc;
}

void skv__frag_cfg_fini(skv__frag_cfg *c)
{
    for (int i = 0; i < c->nmodels; i++)
        skv__free(c->models[i]);
    skv__free(c->shapes);
    skv__free(c->weights);
    skv__free(c->hosts);
    skv__free(c->host_count);
    memset(c, 0, sizeof(*c));
}
