/* Minimal CSV reading for the trace formats (see sim_int.h).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_int.h"

double skv__sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double skv__sim_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int skv__csv_read_file(char **out, const char *path, skv_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return skv__err_sys(err, errno, "open '%s'", path);
    size_t cap = 1 << 16, len = 0;
    char *buf = skv__malloc(cap);
    int rc = buf ? 0 : skv__err(err, SKV_ENOMEM, "reading '%s': out of memory", path);
    while (rc == 0) {
        if (len + 1 >= cap) {
            char *nb = skv__realloc(buf, cap * 2);
            if (!nb) {
                rc = skv__err(err, SKV_ENOMEM, "reading '%s': out of memory", path);
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - 1 - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f))
                rc = skv__err(err, SKV_EIO, "reading '%s' failed", path);
            break;
        }
    }
    fclose(f);
    if (rc < 0) {
        skv__free(buf);
        return rc;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        skv__free(buf);
        return skv__err(err, SKV_EINVAL, "'%s': not a text file (NUL byte)", path);
    }
    *out = buf;
    return 0;
}

static void split(skv__csv *c, char *line)
{
    c->nf = 0;
    char *p = line;
    for (;;) {
        char *e = strchr(p, ',');
        if (e)
            *e = '\0';
        size_t n = strlen(p);
        while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
            p[--n] = '\0';
        while (*p == ' ')
            p++, n--;
        if (n >= 2 && p[0] == '"' && p[n - 1] == '"') {
            p[n - 1] = '\0';
            p++;
        }
        if (c->nf < SKV__CSV_MAX_FIELDS)
            c->f[c->nf] = p;
        c->nf++;
        if (!e)
            break;
        p = e + 1;
    }
}

int skv__csv_next(skv__csv *c, skv_error *err)
{
    while (c->pos && *c->pos) {
        char *line = c->pos;
        char *nl = strchr(line, '\n');
        if (nl) {
            *nl = '\0';
            c->pos = nl + 1;
        } else {
            c->pos = NULL;
        }
        c->line++;
        if (line[strspn(line, " \r\t")] == '\0')
            continue;
        split(c, line);
        if (c->nf > SKV__CSV_MAX_FIELDS)
            return skv__err(err, SKV_EINVAL, "%s:%zu: more than %d fields",
                            c->source, c->line, SKV__CSV_MAX_FIELDS);
        return 1;
    }
    return 0;
}

int skv__csv_open(skv__csv *c, const char *text, const char *source,
                  skv_error *err)
{
    memset(c, 0, sizeof(*c));
    c->source = source;
    c->buf = skv__strdup(text ? text : "");
    if (!c->buf)
        return skv__err(err, SKV_ENOMEM, "%s: out of memory", source);
    c->pos = c->buf;
    int rc = skv__csv_next(c, err);
    if (rc == 0)
        rc = skv__err(err, SKV_EINVAL, "%s: empty (no header row)", source);
    if (rc < 0) {
        skv__csv_close(c);
        return rc;
    }
    c->nheader = c->nf;
    memcpy(c->header, c->f, c->nf * sizeof(*c->f));
    return 0;
}

void skv__csv_close(skv__csv *c)
{
    skv__free(c->buf);
    c->buf = c->pos = NULL;
}

int skv__csv_col(const skv__csv *c, const char *const *names)
{
    for (; *names; names++)
        for (size_t i = 0; i < c->nheader; i++)
            if (strcmp(c->header[i], *names) == 0)
                return (int)i;
    return -1;
}

const char *skv__csv_str(const skv__csv *c, int col)
{
    return col >= 0 && (size_t)col < c->nf ? c->f[col] : NULL;
}

static int field(const char **out, const skv__csv *c, int col, skv_error *err)
{
    *out = skv__csv_str(c, col);
    if (!*out || !**out)
        return skv__err(err, SKV_EINVAL, "%s:%zu: column '%s' is missing",
                        c->source, c->line,
                        col >= 0 && (size_t)col < c->nheader ? c->header[col] : "?");
    return 0;
}

int skv__csv_i64(int64_t *out, const skv__csv *c, int col, int64_t min,
                 int64_t max, skv_error *err)
{
    const char *s;
    int rc = field(&s, c, col, err);
    if (rc < 0)
        return rc;
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (e == s || *e || errno || v < min || v > max)
        return skv__err(err, SKV_EINVAL, "%s:%zu: column '%s': '%s' is not "
                        "an integer in [%lld, %lld]", c->source, c->line,
                        c->header[col], s, (long long)min, (long long)max);
    *out = v;
    return 0;
}

/* A non-negative decimal with up to 3 fractional digits, in milli-units
 * (parsed exactly, no floating point). */
int skv__csv_milli(int64_t *out, const skv__csv *c, int col, skv_error *err)
{
    const char *s;
    int rc = field(&s, c, col, err);
    if (rc < 0)
        return rc;
    int64_t v = 0;
    int frac = -1;
    const char *p = s;
    for (; *p; p++) {
        if (*p == '.' && frac < 0) {
            frac = 0;
            continue;
        }
        if (*p < '0' || *p > '9' || frac >= 3 || v > INT64_MAX / 20)
            break;
        v = v * 10 + (*p - '0');
        if (frac >= 0)
            frac++;
    }
    if (p == s || *p)
        return skv__err(err, SKV_EINVAL, "%s:%zu: column '%s': '%s' is not a "
                        "non-negative number with at most 3 decimals",
                        c->source, c->line, c->header[col], s);
    for (int i = frac < 0 ? 0 : frac; i < 3; i++)
        v *= 10;
    *out = v;
    return 0;
}
