/* Loading generic job traces (Philly-style job tables).
 * SPDX-License-Identifier: Apache-2.0 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sim_int.h"

static int owner_index(skv_sim_jobs *j, const char *name, skv_error *err)
{
    for (size_t i = 0; i < j->nowners; i++)
        if (strcmp(j->owners[i], name) == 0)
            return (int)i;
    char **no = skv__reallocarray(j->owners, j->nowners + 1, sizeof(*no));
    if (!no)
        return skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    j->owners = no;
    if (!(no[j->nowners] = skv__strdup(name)))
        return skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    return (int)j->nowners++;
}

/* "YYYY-MM-DD HH:MM:SS" (UTC) or plain seconds, to milliseconds. */
static int parse_time(int64_t *out, const skv__csv *c, int col, skv_error *err)
{
    const char *s = skv__csv_str(c, col);
    struct tm tm;
    char tail;
    if (s && strchr(s, '-')) {
        memset(&tm, 0, sizeof(tm));
        if (sscanf(s, "%d-%d-%d %d:%d:%d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                   &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &tail) != 6 ||
            tm.tm_year < 1970 || tm.tm_year > 9999 || tm.tm_mon < 1 ||
            tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
            tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60 ||
            tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0)
            return skv__err(err, SKV_EINVAL, "%s:%zu: column '%s': '%s' is not "
                            "YYYY-MM-DD HH:MM:SS", c->source, c->line,
                            c->header[col], s);
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        *out = (int64_t)timegm(&tm) * 1000;
        return 0;
    }
    return skv__csv_milli(out, c, col, err);
}

static int job_row(skv_sim_jobs *j, skv__csv *c, const int *col, skv_error *err)
{
    skv__job *x = &j->jobs[j->n];
    int64_t gpus, v;
    int rc;
    if ((rc = parse_time(&x->submit_ms, c, col[0], err)) < 0 ||
        (rc = skv__csv_milli(&x->duration_ms, c, col[1], err)) < 0 ||
        (rc = skv__csv_i64(&gpus, c, col[2], 0, 1 << 20, err)) < 0)
        return rc;
    x->gpus = (uint32_t)gpus;
    x->cpu = x->mem = -1;
    if (col[3] >= 0) {
        if ((rc = skv__csv_milli(&v, c, col[3], err)) < 0)
            return rc;
        x->cpu = v;
    }
    if (col[4] >= 0) {
        if ((rc = skv__csv_i64(&v, c, col[4], 0, (int64_t)1 << 40, err)) < 0)
            return rc;
        x->mem = v << 20;
    }
    const char *owner = col[5] >= 0 ? skv__csv_str(c, col[5]) : NULL;
    int o = owner_index(j, owner && *owner ? owner : "-", err);
    if (o < 0)
        return o;
    x->owner = (uint32_t)o;
    j->n++;
    return 0;
}

int skv_sim_jobs_parse(skv_sim_jobs **out, const char *text, skv_error *err)
{
    static const char *const names[6][4] = {
        {"timestamp", "submit_time", "submit", NULL}, {"duration", NULL},
        {"num_gpus", "gpus", NULL}, {"cpus", NULL}, {"memory_mib", NULL},
        {"cluster", "vc", "user", NULL}};
    if (!out || !text)
        return skv__err(err, SKV_EINVAL, "job trace: NULL argument");
    skv_sim_jobs *j = skv__calloc(1, sizeof(*j));
    skv__csv c;
    int rc = j ? skv__csv_open(&c, text, "job trace", err)
               : skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    if (rc < 0) {
        skv__free(j);
        return rc;
    }
    int col[6];
    for (int i = 0; i < 6 && rc == 0; i++)
        if ((col[i] = skv__csv_col(&c, names[i])) < 0 && i < 3)
            rc = skv__err(err, SKV_EINVAL, "job trace: no column '%s'",
                          names[i][0]);
    size_t lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    if (rc == 0 && !(j->jobs = skv__calloc(lines, sizeof(*j->jobs))))
        rc = skv__err(err, SKV_ENOMEM, "job trace: out of memory");
    while (rc == 0 && (rc = skv__csv_next(&c, err)) == 1)
        rc = job_row(j, &c, col, err);
    if (rc == 0 && j->n == 0)
        rc = skv__err(err, SKV_EINVAL, "job trace: no jobs");
    skv__csv_close(&c);
    if (rc < 0) {
        skv_sim_jobs_free(j);
        return rc;
    }
    *out = j;
    return 0;
}

int skv_sim_jobs_load(skv_sim_jobs **out, const char *path, skv_error *err)
{
    if (!out || !path)
        return skv__err(err, SKV_EINVAL, "job trace: NULL argument");
    char *text = NULL;
    int rc = skv__csv_read_file(&text, path, err);
    if (rc == 0 && (rc = skv_sim_jobs_parse(out, text, err)) < 0)
        skv__err_prefix(err, "%s", path);
    skv__free(text);
    return rc;
}

void skv_sim_jobs_free(skv_sim_jobs *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->nowners; i++)
        skv__free(j->owners[i]);
    skv__free(j->owners);
    skv__free(j->jobs);
    skv__free(j);
}

size_t skv_sim_jobs_count(const skv_sim_jobs *j)
{
    return j ? j->n : 0;
}
