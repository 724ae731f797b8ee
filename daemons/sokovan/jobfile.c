/* sokovan run -f FILE: a YAML job file read with libyaml into the same
 * (option, value) pairs the command line gives, so every key is checked by
 * the flag's own parser and a mistake names the file and line.
 *
 * Shapes: a scalar key is one pair; a list (command, port, service,
 * depends_on) is
 * one pair per element; a map (env, constraint, slot) is one "K=V" pair per
 * entry; `kernels` is a list of maps, one per group of kernels.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli.h"
#include "jobfile.h"

typedef struct reader {
    cli *c;
    const char *path;
    yaml_document_t doc;
} reader;

/* "FILE:LINE: msg" as a usage error (the line is 1-based). */
static int bad(reader *r, const yaml_node_t *n, const char *fmt,
               const char *what)
{
    char where[512];
    snprintf(where, sizeof where, "%s:%zu", r->path,
             n ? n->start_mark.line + 1 : 0);
    return cli_usage(r->c, "%s: %s%s", where, fmt, what ? what : "");
}

static int push(cli_job_items *v, const char *key, const char *value,
                size_t line)
{
    cli_job_item *it = realloc(v->v, (v->n + 1) * sizeof *it);
    if (!it)
        return cli_fail("out of memory");
    v->v = it;
    it[v->n].key = strdup(key);
    it[v->n].value = strdup(value);
    it[v->n].line = line + 1;
    if (!it[v->n].key || !it[v->n].value)
        return cli_fail("out of memory");
    v->n++;
    return 0;
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value
                                            : NULL;
}

static int take_list(reader *r, cli_job_items *v, const char *key,
                     yaml_node_t *n)
{
    for (yaml_node_item_t *i = n->data.sequence.items.start;
         i < n->data.sequence.items.top; i++) {
        yaml_node_t *e = yaml_document_get_node(&r->doc, *i);
        if (!scalar(e))
            return bad(r, e, "a list element of ", key);
        if (push(v, key, scalar(e), e->start_mark.line))
            return CLI_FAIL;
    }
    return 0;
}

static int take_map(reader *r, cli_job_items *v, const char *key,
                    yaml_node_t *n)
{
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start;
         p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *val = yaml_document_get_node(&r->doc, p->value);
        if (!scalar(k) || !scalar(val))
            return bad(r, k, "expected KEY: VALUE under ", key);
        char *kv = malloc(strlen(scalar(k)) + strlen(scalar(val)) + 2);
        if (!kv)
            return cli_fail("out of memory");
        sprintf(kv, "%s=%s", scalar(k), scalar(val));
        int rc = push(v, key, kv, k->start_mark.line);
        free(kv);
        if (rc)
            return rc;
    }
    return 0;
}

/* One key of a mapping, whatever its value's shape. */
static int take_value(reader *r, cli_job_items *v, const char *key,
                      yaml_node_t *n)
{
    if (n->type == YAML_SCALAR_NODE)
        return push(v, key, scalar(n), n->start_mark.line);
    if (n->type == YAML_SEQUENCE_NODE)
        return take_list(r, v, key, n);
    return take_map(r, v, key, n);
}

static int take_kernels(reader *r, cli_job *job, yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return bad(r, n, "kernels: a list of kernel groups", NULL);
    for (yaml_node_item_t *i = n->data.sequence.items.start;
         i < n->data.sequence.items.top; i++) {
        yaml_node_t *e = yaml_document_get_node(&r->doc, *i);
        if (e->type != YAML_MAPPING_NODE)
            return bad(r, e, "kernels: each entry is a map (role, count, "
                       "cpu, mem, gpus, ...)", NULL);
        cli_job_items *g = realloc(job->kernels, (job->n_kernels + 1) *
                                                     sizeof *g);
        if (!g)
            return cli_fail("out of memory");
        job->kernels = g;
        memset(&g[job->n_kernels], 0, sizeof *g);
        g[job->n_kernels].line = e->start_mark.line + 1;
        cli_job_items *mine = &g[job->n_kernels++];
        for (yaml_node_pair_t *p = e->data.mapping.pairs.start;
             p < e->data.mapping.pairs.top; p++) {
            yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
            if (!scalar(k))
                return bad(r, k, "kernels: keys are words", NULL);
            if (take_value(r, mine, scalar(k),
                           yaml_document_get_node(&r->doc, p->value)))
                return CLI_USAGE;
        }
    }
    return 0;
}

static int take_root(reader *r, cli_job *job)
{
    yaml_node_t *root = yaml_document_get_root_node(&r->doc);
    if (!root)
        return bad(r, NULL, "empty job file", NULL);
    if (root->type != YAML_MAPPING_NODE)
        return bad(r, root, "a job file is a map of run's options", NULL);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(&r->doc, p->key);
        yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);
        int rc;
        if (!scalar(k))
            return bad(r, k, "keys are option names", NULL);
        if (strcmp(scalar(k), "kernels") == 0)
            rc = take_kernels(r, job, v);
        else
            rc = take_value(r, &job->top, scalar(k), v);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_file(reader *r, FILE *f)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return cli_fail("out of memory");
    yaml_parser_set_input_file(&p, f);
    int ok = yaml_parser_load(&p, &r->doc);
    if (!ok) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s:%zu: %s", r->path,
                 p.problem_mark.line + 1,
                 p.problem ? p.problem : "not YAML");
        yaml_parser_delete(&p);
        return cli_usage(r->c, "%s", msg);
    }
    yaml_parser_delete(&p);
    return 0;
}

int cli_job_load(cli *c, const char *path, cli_job *job)
{
    memset(job, 0, sizeof *job);
    job->path = path;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f)
        return cli_fail("%s: cannot open: %s", path, strerror(errno));
    reader r;
    memset(&r, 0, sizeof r);
    r.c = c;
    r.path = path;
    int rc = parse_file(&r, f);
    if (f != stdin)
        fclose(f);
    if (rc)
        return rc;
    rc = take_root(&r, job);
    yaml_document_delete(&r.doc);
    return rc;
}

static void items_free(cli_job_items *v)
{
    for (size_t i = 0; i < v->n; i++) {
        free(v->v[i].key);
        free(v->v[i].value);
    }
    free(v->v);
}

void cli_job_free(cli_job *job)
{
    items_free(&job->top);
    for (size_t i = 0; i < job->n_kernels; i++)
        items_free(&job->kernels[i]);
    free(job->kernels);
    memset(job, 0, sizeof *job);
}
