/* CPU / node list strings ("0-3,8"), the format of cpuset.cpus and
 * /sys/devices/system/node/online.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/topo.h"

#define CPULIST_ID_MAX 1048575 /* far above any kernel's NR_CPUS */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int skv_topo_cpulist_format(char **out, const int *ids, size_t n,
                            skv_error *err)
{
    if (!out || (!ids && n))
        return skv__err(err, SKV_EINVAL, "cpulist_format: NULL argument");
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0)
            return skv__err(err, SKV_EINVAL, "cpulist_format: negative id %d",
                            ids[i]);
    int *s = skv__calloc(n ? n : 1, sizeof(*s));
    /* each id takes at most 8 characters ("1048575-" / ","). */
    char *buf = skv__calloc(n ? n : 1, 24);
    if (!s || !buf) {
        skv__free(s);
        skv__free(buf);
        return skv__err(err, SKV_ENOMEM, "cpulist_format: out of memory");
    }
    if (n)
        memcpy(s, ids, n * sizeof(*s));
    if (n > 1)
        qsort(s, n, sizeof(*s), cmp_int);
    size_t len = 0, i = 0;
    while (i < n) {
        size_t j = i;
        while (j + 1 < n && (s[j + 1] == s[j] || s[j + 1] == s[j] + 1))
            j++;
        len += (size_t)sprintf(buf + len, "%s%d", len ? "," : "", s[i]);
        if (s[j] != s[i])
            len += (size_t)sprintf(buf + len, "-%d", s[j]);
        i = j + 1;
    }
    skv__free(s);
    *out = buf;
    return 0;
}

/* Parse one decimal id at *p (after optional spaces). */
static int parse_id(const char **p, int *id, const char *text, skv_error *err)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    if (!isdigit((unsigned char)*s))
        return skv__err(err, SKV_EINVAL,
                        "cpu list '%s': expected a number at '%s'", text, s);
    long v = 0;
    while (isdigit((unsigned char)*s)) {
        v = v * 10 + (*s - '0');
        if (v > CPULIST_ID_MAX)
            return skv__err(err, SKV_ERANGE,
                            "cpu list '%s': id above %d", text, CPULIST_ID_MAX);
        s++;
    }
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    *id = (int)v;
    *p = s;
    return 0;
}

/* Append ids lo..hi to the growing array. */
static int push_range(int **arr, size_t *n, size_t *cap, int lo, int hi)
{
    for (int v = lo; v <= hi; v++) {
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            int *na = skv__reallocarray(*arr, nc, sizeof(int));
            if (!na)
                return SKV_ENOMEM;
            *arr = na;
            *cap = nc;
        }
        (*arr)[(*n)++] = v;
    }
    return 0;
}

static int parse_all(int **arr, size_t *n, const char *text, skv_error *err)
{
    size_t cap = 0;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (!*p)
        return 0;
    for (;;) {
        int lo, hi, rc = parse_id(&p, &lo, text, err);
        if (rc)
            return rc;
        hi = lo;
        if (*p == '-') {
            p++;
            if ((rc = parse_id(&p, &hi, text, err)))
                return rc;
            if (hi < lo)
                return skv__err(err, SKV_EINVAL,
                                "cpu list '%s': reversed range %d-%d", text,
                                lo, hi);
        }
        if (push_range(arr, n, &cap, lo, hi))
            return skv__err(err, SKV_ENOMEM, "cpu list: out of memory");
        if (*p == '\0')
            return 0;
        if (*p != ',')
            return skv__err(err, SKV_EINVAL,
                            "cpu list '%s': unexpected '%c'", text, *p);
        p++;
    }
}

int skv_topo_cpulist_parse(int **out, size_t *n_out, const char *text,
                           skv_error *err)
{
    if (!out || !n_out || !text)
        return skv__err(err, SKV_EINVAL, "cpulist_parse: NULL argument");
    int *arr = NULL;
    size_t n = 0;
    int rc = parse_all(&arr, &n, text, err);
    if (rc) {
        skv__free(arr);
        return rc;
    }
    if (n > 1)
        qsort(arr, n, sizeof(*arr), cmp_int);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || arr[m - 1] != arr[i])
            arr[m++] = arr[i];
    if (m == 0) {
        skv__free(arr);
        arr = NULL;
    }
    *out = arr;
    *n_out = m;
    return 0;
}
