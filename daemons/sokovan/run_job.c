/* sokovan run -f FILE: a job file's keys become run's options, checked by
 * the same handlers as the flags; an error names FILE:LINE and the key.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* A key as written ("cluster_size", "slots") to its flag's name
 * ("cluster-size", "slot"); plural map/list names are accepted. */
static void flag_name(char *out, size_t cap, const char *key)
{
    static const struct { const char *from, *to; } plural[] = {
        {"slots", "slot"}, {"constraints", "constraint"}, {"ports", "port"},
        {"services", "service"},
        {"resource-group", "rg"}, {"dependencies", "depends-on"},
        {"mounts", "mount"}};
    snprintf(out, cap, "%s", key);
    for (char *p = out; *p; p++)
        if (*p == '_')
            *p = '-';
    for (size_t i = 0; i < sizeof plural / sizeof plural[0]; i++)
        if (strcmp(out, plural[i].from) == 0)
            snprintf(out, cap, "%s", plural[i].to);
}

static const cli_opt *find_key(const char *name)
{
    for (const cli_opt *o = cli_run_opts; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

/* YAML's booleans for a flag that takes no value: true sets it. */
static int truth(cli *c, const cli_job_item *it, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", NULL};
    static const char *const no[] = {"false", "no", "off", NULL};
    for (size_t i = 0; yes[i]; i++) {
        if (strcmp(it->value, yes[i]) == 0)
            return *out = 1, 0;
        if (strcmp(it->value, no[i]) == 0)
            return *out = 0, 0;
    }
    return cli_usage(c, "'%s' is not true or false", it->value);
}

static int take_bool(cli *c, run_args *a, const cli_opt *o,
                     const cli_job_item *it)
{
    int on = 0;
    if (truth(c, it, &on))
        return CLI_USAGE;
    if (o->id == O_PREEMPT || o->id == O_NOPREEMPT)
        return cli_run_take(c, a, (on == (o->id == O_PREEMPT)) ? O_PREEMPT
                                                                : O_NOPREEMPT,
                            NULL);
    return on ? cli_run_take(c, a, o->id, NULL) : 0;
}

static int take_top(cli *c, run_args *a, const cli_job_item *it)
{
    char name[64];
    flag_name(name, sizeof name, it->key);
    if (strcmp(name, "image") == 0) {
        if (a->sub.image)
            return cli_usage(c, "image: given twice");
        a->sub.image = it->value;
        return 0;
    }
    if (strcmp(name, "command") == 0)
        return cli_strv_push(&a->command, it->value) ? CLI_FAIL : 0;
    const cli_opt *o = find_key(name);
    if (!o || o->id == O_FILE)
        return cli_usage(c, "unknown key '%s' (run --help lists them)",
                         it->key);
    if (!o->has_arg)
        return take_bool(c, a, o, it);
    return cli_run_take(c, a, o->id, it->value);
}

/* A kernel group's own keys: role, count, image and its resources. */
static int take_group_key(cli *c, run_kernel *k, const cli_job_item *it)
{
    static const char *const roles[] = {"main", "sub", NULL};
    char name[64];
    flag_name(name, sizeof name, it->key);
    if (strcmp(name, "role") == 0) {
        k->role = it->value;
        return cli_parse_word(c, "role", it->value, roles);
    }
    if (strcmp(name, "count") == 0)
        return cli_parse_u32(c, "count", it->value, 1, 1024, &k->count);
    if (strcmp(name, "image") == 0) {
        k->image = it->value;
        return 0;
    }
    const cli_opt *o = find_key(name);
    if (!o || o->id < O_CPU || o->id > O_SLOT)
        return cli_usage(c, "kernels: unknown key '%s' (role, count, image, "
                         "cpu, mem, gpu, gpus, slot)", it->key);
    return cli_run_take_slot(c, k, o->id, it->value);
}

/* Run `c`'s messages with "FILE:LINE: " in front while an item applies. */
static int at_line(cli *c, const cli_job *job, size_t line)
{
    static char where[512];
    snprintf(where, sizeof where, "%s:%zu", job->path, line);
    c->where = where;
    return 0;
}

static int check_group(cli *c, run_kernel *k)
{
    if (!k->role)
        return cli_usage(c, "kernels: each group needs role: main or sub");
    if (!k->count)
        k->count = 1;
    if (strcmp(k->role, "main") == 0 && k->count != 1)
        return cli_usage(c, "kernels: the main group has one kernel");
    if (k->has_gpu && k->has_gpus)
        return cli_usage(c, "kernels: gpu and gpus are exclusive");
    return 0;
}

static int take_group(cli *c, run_args *a, const cli_job_items *g)
{
    run_kernel *k = &a->groups[a->n_groups];
    memset(k, 0, sizeof *k);
    skv_error e = SKV_ERROR_INIT;
    if (skv_slots_new(&k->slots, &e))
        return cli_fail_err("slots", SKV_ENOMEM, &e);
    a->n_groups++;
    for (size_t i = 0; i < g->n; i++) {
        at_line(c, &a->job, g->v[i].line);
        if (take_group_key(c, k, &g->v[i]))
            return CLI_USAGE;
    }
    at_line(c, &a->job, g->line);
    return check_group(c, k);
}

/* The main group first on the wire, whatever the file's order. */
static int order_groups(cli *c, run_args *a)
{
    size_t mains = 0, at = 0;
    for (size_t g = 0; g < a->n_groups; g++)
        if (strcmp(a->groups[g].role, "main") == 0)
            mains++, at = g;
    if (mains != 1)
        return cli_usage(c, "kernels: exactly one group with role: main "
                         "(found %zu)", mains);
    run_kernel main_group = a->groups[at];
    memmove(&a->groups[1], &a->groups[0], at * sizeof *a->groups);
    a->groups[0] = main_group;
    return 0;
}

static int apply_groups(cli *c, run_args *a)
{
    if (!a->job.n_kernels)
        return 0;
    if (a->n_groups)
        return cli_usage(c, "kernels: given by two job files");
    a->groups = calloc(a->job.n_kernels, sizeof *a->groups);
    if (!a->groups)
        return cli_fail("out of memory");
    for (size_t g = 0; g < a->job.n_kernels; g++)
        if (take_group(c, a, &a->job.kernels[g]))
            return CLI_USAGE;
    return order_groups(c, a);
}

int cli_run_apply_job(cli *c, run_args *a, const char *path)
{
    if (a->job.path)
        return cli_usage(c, "-f: one job file per run");
    int rc = cli_job_load(c, path, &a->job);
    for (size_t i = 0; !rc && i < a->job.top.n; i++) {
        at_line(c, &a->job, a->job.top.v[i].line);
        rc = take_top(c, a, &a->job.top.v[i]);
    }
    if (!rc)
        rc = apply_groups(c, a);
    c->where = NULL;
    return rc;
}
