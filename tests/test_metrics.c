/* Prometheus metrics registry and text exposition: the rendered text is
 * parsed back by a small strict parser written here (every line a HELP or
 * TYPE comment or `name{labels} value`), so the tests check the format and
 * the numbers, not the library's own idea of them.
 * SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "skv_test.h"
#include "sokovan/metrics.h"

/* ---- a strict parser of the text format -------------------------------- */

#define MAXS 256   /* samples */
#define MAXL 8     /* labels per sample */
#define MAXF 32    /* families */
#define STR 256

typedef struct sample {
    char name[STR];
    size_t n;
    char lname[MAXL][STR], lvalue[MAXL][STR];
    double value;
} sample;

typedef struct family {
    char name[STR], type[16], help[STR];
    bool has_help, has_samples;
} family;

typedef struct parsed {
    sample s[MAXS];
    size_t ns;
    family f[MAXF];
    size_t nf;
} parsed;

static const char *ident(const char *p, bool colon, char *out)
{
    size_t i = 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
           (colon && *p == ':') || (i > 0 && *p >= '0' && *p <= '9')) {
        ck_assert_uint_lt(i, STR - 1);
        out[i++] = *p++;
    }
    out[i] = 0;
    ck_assert_msg(i > 0, "expected a name at '%.20s'", p);
    return p;
}

/* A quoted label value; only \\ \" \n escapes exist. */
static const char *quoted(const char *p, char *out)
{
    size_t i = 0;
    ck_assert_msg(*p == '"', "expected '\"' at '%.20s'", p);
    for (p++; *p != '"'; p++) {
        ck_assert_msg(*p && *p != '\n', "unterminated label value");
        char c = *p;
        if (c == '\\') {
            p++;
            ck_assert_msg(*p == '\\' || *p == '"' || *p == 'n', "bad escape \\%c", *p);
            c = *p == 'n' ? '\n' : *p;
        }
        ck_assert_uint_lt(i, STR - 1);
        out[i++] = c;
    }
    out[i] = 0;
    return p + 1;
}

static family *fam_get(parsed *ps, const char *name, bool create)
{
    for (size_t i = 0; i < ps->nf; i++)
        if (strcmp(ps->f[i].name, name) == 0)
            return &ps->f[i];
    if (!create)
        return NULL;
    ck_assert_uint_lt(ps->nf, MAXF);
    family *f = &ps->f[ps->nf++];
    memset(f, 0, sizeof *f);
    strcpy(f->name, name);
    return f;
}

static void parse_comment(parsed *ps, const char *line)
{
    char name[STR];
    bool help = strncmp(line, "# HELP ", 7) == 0;
    ck_assert_msg(help || strncmp(line, "# TYPE ", 7) == 0, "bad comment: %s", line);
    const char *p = ident(line + 7, true, name);
    ck_assert_msg(*p == ' ', "no text after the name: %s", line);
    family *f = fam_get(ps, name, true);
    ck_assert_msg(!f->has_samples, "%s for '%s' after its samples", help ? "HELP" : "TYPE", name);
    if (help) {
        ck_assert_msg(!f->has_help, "HELP twice for %s", name);
        f->has_help = true;
        snprintf(f->help, sizeof f->help, "%s", p + 1);
        return;
    }
    ck_assert_msg(!f->type[0], "TYPE twice for %s", name);
    p++;
    ck_assert(!strcmp(p, "counter") || !strcmp(p, "gauge") || !strcmp(p, "histogram") ||
              !strcmp(p, "summary") || !strcmp(p, "untyped"));
    strcpy(f->type, p);
}

/* The family a sample belongs to: histograms own name_bucket/_sum/_count. */
static family *owner(parsed *ps, const char *name)
{
    static const char *suf[] = {"_bucket", "_sum", "_count"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(name), k = strlen(suf[i]);
        if (n > k && !strcmp(name + n - k, suf[i])) {
            char base[STR];
            snprintf(base, sizeof base, "%.*s", (int)(n - k), name);
            family *f = fam_get(ps, base, false);
            if (f && !strcmp(f->type, "histogram"))
                return f;
        }
    }
    return fam_get(ps, name, true);
}

static void parse_sample(parsed *ps, const char *line, family **current)
{
    ck_assert_uint_lt(ps->ns, MAXS);
    sample *s = &ps->s[ps->ns++];
    memset(s, 0, sizeof *s);
    const char *p = ident(line, true, s->name);
    if (*p == '{') {
        for (p++; *p != '}';) {
            ck_assert_uint_lt(s->n, MAXL);
            p = ident(p, false, s->lname[s->n]);
            ck_assert_msg(*p == '=', "expected '=' in %s", line);
            p = quoted(p + 1, s->lvalue[s->n]);
            for (size_t j = 0; j < s->n; j++)
                ck_assert_str_ne(s->lname[j], s->lname[s->n]);
            s->n++;
            ck_assert_msg(*p == ',' || *p == '}', "expected ',' or '}' in %s", line);
            if (*p == ',')
                p++;
        }
        p++;
    }
    ck_assert_msg(*p == ' ' && p[1] && p[1] != ' ', "expected ' value' in %s", line);
    char *end;
    s->value = strtod(p + 1, &end);
    ck_assert_msg(*end == 0 && end != p + 1, "bad value in %s", line);
    family *f = owner(ps, s->name);
    ck_assert_msg(!f->has_samples || f == *current, "samples of %s not together", f->name);
    f->has_samples = true;
    *current = f;
}

static void parse(parsed *ps, const char *text)
{
    memset(ps, 0, sizeof *ps);
    family *current = NULL;
    size_t len = strlen(text);
    ck_assert_msg(len == 0 || text[len - 1] == '\n', "text must end with a newline");
    for (const char *l = text; *l;) {
        const char *nl = strchr(l, '\n');
        char line[2048];
        ck_assert_uint_lt((size_t)(nl - l), sizeof line);
        memcpy(line, l, (size_t)(nl - l));
        line[nl - l] = 0;
        ck_assert_msg(line[0], "empty line");
        if (line[0] == '#')
            parse_comment(ps, line);
        else
            parse_sample(ps, line, &current);
        l = nl + 1;
    }
}

/* The sample with this name and exactly these labels ("a=x,b=y"; "" none). */
static const sample *find(const parsed *ps, const char *name, const char *labels)
{
    for (size_t i = 0; i < ps->ns; i++) {
        const sample *s = &ps->s[i];
        if (strcmp(s->name, name))
            continue;
        char buf[1024] = "";
        for (size_t j = 0; j < s->n; j++)
            snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s=%s",
                     j ? "," : "", s->lname[j], s->lvalue[j]);
        if (!strcmp(buf, labels))
            return s;
    }
    return NULL;
}

static double value_of(const parsed *ps, const char *name, const char *labels)
{
    const sample *s = find(ps, name, labels);
    ck_assert_msg(s != NULL, "no sample %s{%s}", name, labels);
    return s->value;
}

static char *render(const skv_metrics *reg, parsed *ps)
{
    skv_error e = SKV_ERROR_INIT;
    char *text = NULL;
    size_t len = 0;
    SKV_CK_OK(skv_metrics_render(&text, &len, reg, &e), &e);
    ck_assert_uint_eq(len, strlen(text));
    parse(ps, text);
    return text;
}

static skv_metric *reg_metric(skv_metrics *reg, skv_metric_type type,
                              const char *name, const char *help,
                              const char *const *labels, size_t n)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    o.type = type;
    o.name = name;
    o.help = help;
    o.labels = labels;
    o.n_labels = n;
    skv_metric *m = NULL;
    SKV_CK_OK(skv_metrics_register(&m, reg, &o, &e), &e);
    return m;
}

/* Every bucket series of histogram `name` whose other labels are `labels`
 * ("" or "a=x,"): le strictly increasing and ending in +Inf, counts
 * non-decreasing, +Inf equal to _count. Returns the number of buckets. */
static size_t check_histogram(const parsed *ps, const char *name, const char *labels)
{
    char bucket[STR], cnt[STR], lab[1024];
    snprintf(bucket, sizeof bucket, "%s_bucket", name);
    snprintf(cnt, sizeof cnt, "%s_count", name);
    double prev_le = -INFINITY, prev = 0;
    size_t n = 0;
    for (size_t i = 0; i < ps->ns; i++) {
        const sample *s = &ps->s[i];
        if (strcmp(s->name, bucket))
            continue;
        ck_assert_uint_ge(s->n, 1);
        ck_assert_str_eq(s->lname[s->n - 1], "le"); /* le comes last */
        lab[0] = 0;
        for (size_t j = 0; j + 1 < s->n; j++)
            snprintf(lab + strlen(lab), sizeof lab - strlen(lab), "%s=%s,",
                     s->lname[j], s->lvalue[j]);
        if (strcmp(lab, labels))
            continue;
        double le = strtod(s->lvalue[s->n - 1], NULL);
        ck_assert_msg(le > prev_le, "le not increasing at %s", s->lvalue[s->n - 1]);
        ck_assert_msg(s->value >= prev, "bucket counts decrease at le=%s",
                      s->lvalue[s->n - 1]);
        prev_le = le;
        prev = s->value;
        n++;
    }
    ck_assert_uint_gt(n, 0);
    ck_assert(isinf(prev_le) && prev_le > 0);
    size_t ll = strlen(labels);
    snprintf(lab, sizeof lab, "%.*s", (int)(ll ? ll - 1 : 0), labels);
    ck_assert(value_of(ps, cnt, lab) == prev);
    return n;
}

START_TEST(test_render_parse)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *sl[] = {"state"}, *rl[] = {"group", "slot"};
    skv_metric *sess = reg_metric(reg, SKV_METRIC_GAUGE, "sokovan_sessions",
                                  "Sessions by state.", sl, 1);
    skv_metric *plc = reg_metric(reg, SKV_METRIC_COUNTER, "sokovan_placements_total",
                                 "Placements made.", NULL, 0);
    skv_metric *cap = reg_metric(reg, SKV_METRIC_GAUGE, "sokovan_capacity",
                                 NULL, rl, 2);
    SKV_CK_OK(skv_metrics_set(sess, (const char *[]){"pending"}, 1, 3, &e), &e);
    SKV_CK_OK(skv_metrics_set(sess, (const char *[]){"running"}, 1, 7, &e), &e);
    SKV_CK_OK(skv_metrics_add(sess, (const char *[]){"running"}, 1, -2, &e), &e);
    SKV_CK_OK(skv_metrics_add(plc, NULL, 0, 1, &e), &e);
    SKV_CK_OK(skv_metrics_add(plc, NULL, 0, 41, &e), &e);
    SKV_CK_OK(skv_metrics_set(cap, (const char *[]){"default", "cpu"}, 2, 64, &e), &e);
    SKV_CK_OK(skv_metrics_set(cap, (const char *[]){"default", "mem"}, 2, 2.5e11, &e), &e);
    SKV_CK_OK(skv_metrics_set(cap, (const char *[]){"gpu", "cuda.shares"}, 2, 0.1, &e), &e);
    parsed *ps = malloc(sizeof *ps);
    char *text = render(reg, ps);
    ck_assert_uint_eq(ps->ns, 6);
    ck_assert(value_of(ps, "sokovan_sessions", "state=pending") == 3);
    ck_assert(value_of(ps, "sokovan_sessions", "state=running") == 5);
    ck_assert(value_of(ps, "sokovan_placements_total", "") == 42);
    ck_assert(value_of(ps, "sokovan_capacity", "group=default,slot=mem") == 2.5e11);
    ck_assert(value_of(ps, "sokovan_capacity", "group=gpu,slot=cuda.shares") == 0.1);
    ck_assert(strstr(text, "slot=\"cuda.shares\"} 0.1\n") != NULL); /* shortest form */
    ck_assert(strstr(text, "# HELP sokovan_sessions Sessions by state.\n") != NULL);
    ck_assert(strstr(text, "# TYPE sokovan_placements_total counter\n") != NULL);
    ck_assert(strstr(text, "# HELP sokovan_capacity") == NULL); /* no help given */
    /* Families in name order, series in label order. */
    ck_assert(strstr(text, "sokovan_capacity") < strstr(text, "sokovan_placements_total"));
    ck_assert(strstr(text, "state=\"pending\"") < strstr(text, "state=\"running\""));
    double v;
    SKV_CK_OK(skv_metrics_get(&v, sess, (const char *[]){"running"}, 1, &e), &e);
    ck_assert(v == 5);
    ck_assert_uint_eq(skv_metrics_family_count(reg), 3);
    ck_assert_ptr_eq(skv_metrics_find(reg, "sokovan_capacity"), cap);
    ck_assert_ptr_null(skv_metrics_find(reg, "nope"));
    skv_free(text);
    free(ps);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_escaping)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *l[] = {"path"};
    skv_metric *m = reg_metric(reg, SKV_METRIC_COUNTER, "odd_total",
                               "Back\\slash and\nnewline \"quoted\".", l, 1);
    const char *weird = "C:\\dir \"x\"\nline2 caf\xc3\xa9 {a=b,}";
    SKV_CK_OK(skv_metrics_add(m, &weird, 1, 2, &e), &e);
    parsed *ps = malloc(sizeof *ps);
    char *text = render(reg, ps);
    ck_assert(strstr(text, "path=\"C:\\\\dir \\\"x\\\"\\nline2 caf\xc3\xa9 {a=b,}\"} 2\n"));
    ck_assert(strstr(text, "# HELP odd_total Back\\\\slash and\\nnewline \"quoted\".\n"));
    ck_assert_uint_eq(ps->ns, 1);
    ck_assert_str_eq(ps->s[0].lvalue[0], weird);
    ck_assert(ps->s[0].value == 2);
    /* Invalid UTF-8 is refused and creates no series. */
    const char *bad[] = {"\xc3(", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < 4; i++) {
        ck_assert_int_eq(skv_metrics_add(m, &bad[i], 1, 1, &e), SKV_EINVAL);
        ck_assert(strstr(e.message, "UTF-8") != NULL);
    }
    ck_assert_uint_eq(skv_metrics_series_count(m), 1);
    skv_free(text);
    free(ps);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_histogram)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    const double b[] = {0.1, 1, 10, INFINITY};
    const char *l[] = {"agent"};
    o.type = SKV_METRIC_HISTOGRAM;
    o.name = "start_seconds";
    o.help = "Container start latency.";
    o.labels = l;
    o.n_labels = 1;
    o.buckets = b;
    o.n_buckets = 4;
    skv_metric *h;
    SKV_CK_OK(skv_metrics_register(&h, reg, &o, &e), &e);
    const double obs[] = {0.05, 0.1, 0.5, 3, 10, 11, 1e9, -1};
    for (size_t i = 0; i < sizeof obs / sizeof obs[0]; i++)
        SKV_CK_OK(skv_metrics_observe(h, (const char *[]){"a1"}, 1, obs[i], &e), &e);
    SKV_CK_OK(skv_metrics_observe(h, (const char *[]){"a2"}, 1, 2, &e), &e);
    ck_assert_int_eq(skv_metrics_observe(h, (const char *[]){"a2"}, 1, NAN, &e), SKV_EINVAL);
    skv_metric *dflt = reg_metric(reg, SKV_METRIC_HISTOGRAM, "pass_seconds", "x", NULL, 0);
    SKV_CK_OK(skv_metrics_observe(dflt, NULL, 0, 0.003, &e), &e);
    parsed *ps = malloc(sizeof *ps);
    char *text = render(reg, ps);
    ck_assert_uint_eq(check_histogram(ps, "start_seconds", "agent=a1,"), 4);
    ck_assert_uint_eq(check_histogram(ps, "start_seconds", "agent=a2,"), 4);
    ck_assert_uint_eq(check_histogram(ps, "pass_seconds", ""), 12); /* 11 + Inf */
    /* <=0.1: 0.05 0.1 -1; <=1: +0.5; <=10: +3 10; +Inf: +11 1e9 */
    ck_assert(value_of(ps, "start_seconds_bucket", "agent=a1,le=0.1") == 3);
    ck_assert(value_of(ps, "start_seconds_bucket", "agent=a1,le=1") == 4);
    ck_assert(value_of(ps, "start_seconds_bucket", "agent=a1,le=10") == 6);
    ck_assert(value_of(ps, "start_seconds_bucket", "agent=a1,le=+Inf") == 8);
    ck_assert(value_of(ps, "start_seconds_count", "agent=a1") == 8);
    ck_assert(value_of(ps, "start_seconds_sum", "agent=a1") == 0.05 + 0.1 + 0.5 + 3 + 10 + 11 + 1e9 - 1);
    ck_assert(value_of(ps, "start_seconds_bucket", "agent=a2,le=1") == 0);
    ck_assert(value_of(ps, "pass_seconds_bucket", "le=0.005") == 1);
    uint64_t count;
    double sum;
    SKV_CK_OK(skv_metrics_get_histogram(&count, &sum, h, (const char *[]){"a2"}, 1, &e), &e);
    ck_assert_uint_eq(count, 1);
    ck_assert(sum == 2);
    skv_free(text);
    free(ps);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_bad_names)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    skv_metric *m = NULL;
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    static const char *bad_names[] = {"", "1abc", "a-b", "a b", "sp\xc3\xa9", "a.b", "a{"};
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; i++) {
        o.name = bad_names[i];
        ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
        ck_assert_int_eq(skv_metrics_name_check(bad_names[i], NULL), SKV_EINVAL);
    }
    o.name = NULL;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    char longname[SKV_METRICS_NAME_MAX + 2];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    ck_assert_int_eq(skv_metrics_name_check(longname, &e), SKV_EINVAL);
    longname[SKV_METRICS_NAME_MAX] = 0;
    SKV_CK_OK(skv_metrics_name_check(longname, &e), &e);
    SKV_CK_OK(skv_metrics_name_check("ns:sub_system:x9", &e), &e);
    SKV_CK_OK(skv_metrics_name_check("_x", &e), &e);
    static const char *bad_labels[] = {"__x", "a:b", "1a", "", "a-b"};
    o.name = "good";
    o.n_labels = 1;
    for (size_t i = 0; i < sizeof bad_labels / sizeof *bad_labels; i++) {
        o.labels = &bad_labels[i];
        ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
        ck_assert_int_eq(skv_metrics_label_name_check(bad_labels[i], NULL), SKV_EINVAL);
    }
    const char *dup[] = {"a", "a"};
    o.labels = dup;
    o.n_labels = 2;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    ck_assert(strstr(e.message, "twice") != NULL);
    ck_assert_uint_eq(skv_metrics_family_count(reg), 0);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_bad_options)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    skv_metric *m = (skv_metric *)&e, *keep = m;
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    o.name = "good";
    const char *le[] = {"le"};
    o.labels = le;
    o.n_labels = 1;
    o.type = SKV_METRIC_HISTOGRAM;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    o.labels = NULL;
    o.n_labels = 0;
    o.type = (skv_metric_type)9;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    o.type = SKV_METRIC_GAUGE;
    o.help = "bad \xff help";
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    o.help = NULL;
    o.version = 99;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EVERSION);
    o.version = SKV_METRIC_OPTIONS_VERSION;
    const double b = 1;
    o.buckets = &b;
    o.n_buckets = 1;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL); /* gauge */
    o.type = SKV_METRIC_HISTOGRAM;
    const double bad_b[][3] = {{1, 1, 2}, {2, 1, 3}, {1, NAN, 3}, {1, INFINITY, 3},
                               {-INFINITY, 1, 2}};
    for (size_t i = 0; i < 5; i++) {
        o.buckets = bad_b[i];
        o.n_buckets = 3;
        ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    }
    double many[SKV_METRICS_BUCKETS_MAX + 1];
    for (size_t i = 0; i < SKV_METRICS_BUCKETS_MAX + 1; i++)
        many[i] = (double)i;
    o.buckets = many;
    o.n_buckets = SKV_METRICS_BUCKETS_MAX + 1;
    ck_assert_int_eq(skv_metrics_register(&m, reg, &o, &e), SKV_EINVAL);
    o.n_buckets = SKV_METRICS_BUCKETS_MAX;
    SKV_CK_OK(skv_metrics_register(&m, reg, &o, &e), &e); /* the maximum is fine */
    ck_assert_ptr_ne(m, keep);
    ck_assert_int_eq(skv_metrics_register(NULL, reg, &o, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_register(&m, NULL, &o, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_register(&m, reg, NULL, &e), SKV_EINVAL);
    ck_assert_uint_eq(skv_metrics_family_count(reg), 1); /* only the good one */
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_duplicates)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *l1[] = {"a"}, *l2[] = {"b"}, *l3[] = {"a", "b"};
    skv_metric *m = reg_metric(reg, SKV_METRIC_COUNTER, "x_total", "h", l1, 1);
    skv_metric *again = reg_metric(reg, SKV_METRIC_COUNTER, "x_total", "h", l1, 1);
    ck_assert_ptr_eq(m, again);
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    skv_metric *out = NULL;
    o.name = "x_total";
    o.help = "h";
    o.labels = l1;
    o.n_labels = 1;
    o.type = SKV_METRIC_GAUGE;
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    ck_assert(strstr(e.message, "type") != NULL);
    o.type = SKV_METRIC_COUNTER;
    o.labels = l2;
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    ck_assert(strstr(e.message, "label") != NULL);
    o.labels = l3;
    o.n_labels = 2;
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    o.labels = l1;
    o.n_labels = 1;
    o.help = "other";
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    ck_assert(strstr(e.message, "HELP") != NULL);
    ck_assert_ptr_null(out);
    /* Histogram series names are taken, in both directions. */
    reg_metric(reg, SKV_METRIC_HISTOGRAM, "lat", "h", NULL, 0);
    o.help = NULL;
    o.labels = NULL;
    o.n_labels = 0;
    static const char *taken[] = {"lat_bucket", "lat_sum", "lat_count"};
    for (size_t i = 0; i < 3; i++) {
        o.name = taken[i];
        ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    }
    reg_metric(reg, SKV_METRIC_GAUGE, "q_count", NULL, NULL, 0);
    o.type = SKV_METRIC_HISTOGRAM;
    o.name = "q";
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    o.name = "lat";
    const double b[] = {1, 2};
    o.buckets = b;
    o.n_buckets = 2;
    o.help = "h";
    ck_assert_int_eq(skv_metrics_register(&out, reg, &o, &e), SKV_EEXIST);
    ck_assert(strstr(e.message, "buckets") != NULL);
    ck_assert_uint_eq(skv_metrics_family_count(reg), 3);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_update_rules)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *l[] = {"kernel"};
    skv_metric *c = reg_metric(reg, SKV_METRIC_COUNTER, "cpu_seconds_total", "x", l, 1);
    skv_metric *g = reg_metric(reg, SKV_METRIC_GAUGE, "temp", "x", NULL, 0);
    skv_metric *h = reg_metric(reg, SKV_METRIC_HISTOGRAM, "h", "x", NULL, 0);
    const char *k1 = "k1";
    ck_assert_int_eq(skv_metrics_add(c, &k1, 1, -1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_add(c, &k1, 1, INFINITY, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_set(c, &k1, 1, -0.5, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_set(c, &k1, 1, NAN, &e), SKV_EINVAL);
    ck_assert_uint_eq(skv_metrics_series_count(c), 0); /* failures create none */
    SKV_CK_OK(skv_metrics_set(c, &k1, 1, 12.5, &e), &e);
    ck_assert_int_eq(skv_metrics_add(c, NULL, 0, 1, &e), SKV_EINVAL); /* count */
    ck_assert_int_eq(skv_metrics_add(c, (const char *[]){"a", "b"}, 2, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_add(c, NULL, 1, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_add(c, (const char *[]){NULL}, 1, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_observe(c, &k1, 1, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_observe(g, NULL, 0, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_set(h, NULL, 0, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_add(NULL, NULL, 0, 1, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_add(g, NULL, 0, NAN, &e), SKV_EINVAL);
    SKV_CK_OK(skv_metrics_add(g, NULL, 0, -3, &e), &e); /* gauges go down */
    double v;
    const char *k2 = "k2";
    ck_assert_int_eq(skv_metrics_get(&v, c, &k2, 1, &e), SKV_ENOENT);
    ck_assert_int_eq(skv_metrics_get(&v, h, NULL, 0, &e), SKV_EINVAL);
    SKV_CK_OK(skv_metrics_get(&v, g, NULL, 0, &e), &e);
    ck_assert(v == -3);
    /* Label-free families exist from the start; NaN and infinities render. */
    parsed *ps = malloc(sizeof *ps);
    SKV_CK_OK(skv_metrics_set(g, NULL, 0, NAN, &e), &e);
    char *text = render(reg, ps);
    ck_assert(strstr(text, "\ntemp NaN\n") != NULL);
    ck_assert(value_of(ps, "h_count", "") == 0);
    skv_free(text);
    SKV_CK_OK(skv_metrics_set(g, NULL, 0, -INFINITY, &e), &e);
    text = render(reg, ps);
    ck_assert(strstr(text, "\ntemp -Inf\n") != NULL);
    skv_free(text);
    free(ps);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_remove_reset)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    const char *l[] = {"kernel"};
    skv_metric *c = reg_metric(reg, SKV_METRIC_COUNTER, "cpu_seconds_total", "x", l, 1);
    skv_metric *g = reg_metric(reg, SKV_METRIC_GAUGE, "temp", "x", NULL, 0);
    skv_metric *h = reg_metric(reg, SKV_METRIC_HISTOGRAM, "h", "x", NULL, 0);
    const char *k1 = "k1", *k2 = "k2";
    double v;
    parsed *ps = malloc(sizeof *ps);
    char *text;
    SKV_CK_OK(skv_metrics_add(c, &k1, 1, 1, &e), &e);
    SKV_CK_OK(skv_metrics_set(g, NULL, 0, 5, &e), &e);
    SKV_CK_OK(skv_metrics_add(c, &k2, 1, 1, &e), &e);
    ck_assert_uint_eq(skv_metrics_series_count(c), 2);
    SKV_CK_OK(skv_metrics_remove(c, &k1, 1, &e), &e);
    ck_assert_int_eq(skv_metrics_remove(c, &k1, 1, &e), SKV_ENOENT);
    ck_assert_uint_eq(skv_metrics_series_count(c), 1);
    skv_metrics_reset(c);
    ck_assert_uint_eq(skv_metrics_series_count(c), 0);
    SKV_CK_OK(skv_metrics_remove(g, NULL, 0, &e), &e); /* label-free: back to 0 */
    SKV_CK_OK(skv_metrics_get(&v, g, NULL, 0, &e), &e);
    ck_assert(v == 0);
    SKV_CK_OK(skv_metrics_observe(h, NULL, 0, 1, &e), &e);
    skv_metrics_reset(h);
    skv_metrics_reset(NULL);
    uint64_t n;
    SKV_CK_OK(skv_metrics_get_histogram(&n, &v, h, NULL, 0, &e), &e);
    ck_assert_uint_eq(n, 0);
    text = render(reg, ps);
    ck_assert(strstr(text, "cpu_seconds_total{") == NULL);
    ck_assert(find(ps, "temp", "") != NULL);
    skv_free(text);
    free(ps);
    skv_metrics_free(reg);
}
END_TEST

START_TEST(test_empty_and_order)
{
    skv_error e = SKV_ERROR_INIT;
    skv_metrics *reg;
    char *text;
    size_t len = 99;
    SKV_CK_OK(skv_metrics_new(&reg, &e), &e);
    SKV_CK_OK(skv_metrics_render(&text, &len, reg, &e), &e);
    ck_assert_str_eq(text, "");
    ck_assert_uint_eq(len, 0);
    skv_free(text);
    ck_assert_int_eq(skv_metrics_render(NULL, &len, reg, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_render(&text, &len, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_metrics_new(NULL, &e), SKV_EINVAL);
    /* Registration order does not matter: the same text either way. */
    skv_metrics *other;
    SKV_CK_OK(skv_metrics_new(&other, &e), &e);
    const char *names[] = {"zeta", "alpha", "mid"}, *l[] = {"k"};
    for (size_t i = 0; i < 3; i++) {
        skv_metric *a = reg_metric(reg, SKV_METRIC_GAUGE, names[i], "h", l, 1);
        skv_metric *b = reg_metric(other, SKV_METRIC_GAUGE, names[2 - i], "h", l, 1);
        const char *v1 = "y", *v2 = "x";
        SKV_CK_OK(skv_metrics_set(a, &v1, 1, 1, &e), &e);
        SKV_CK_OK(skv_metrics_set(a, &v2, 1, 2, &e), &e);
        SKV_CK_OK(skv_metrics_set(b, &v2, 1, 2, &e), &e);
        SKV_CK_OK(skv_metrics_set(b, &v1, 1, 1, &e), &e);
    }
    char *t1, *t2;
    SKV_CK_OK(skv_metrics_render(&t1, NULL, reg, &e), &e);
    SKV_CK_OK(skv_metrics_render(&t2, NULL, other, &e), &e);
    ck_assert_str_eq(t1, t2);
    ck_assert(strncmp(t1, "# HELP alpha h\n# TYPE alpha gauge\nalpha{k=\"x\"} 2\n", 48) == 0);
    skv_free(t1);
    skv_free(t2);
    skv_metrics_free(reg);
    skv_metrics_free(other);
    skv_metrics_free(NULL);
}
END_TEST

/* ---- allocation failures: every step fails cleanly, nothing leaks ------- */

static long live_allocs;
static long fail_after;

static void *count_malloc(size_t n, void *p)
{
    (void)p;
    if (fail_after-- == 0)
        return NULL;
    void *r = malloc(n);
    if (r)
        live_allocs++;
    return r;
}

static void *count_realloc(void *ptr, size_t n, void *p)
{
    (void)p;
    if (fail_after-- == 0)
        return NULL;
    void *r = realloc(ptr, n);
    if (r && !ptr)
        live_allocs++;
    return r;
}

static void count_free(void *ptr, void *p)
{
    (void)p;
    if (ptr)
        live_allocs--;
    free(ptr);
}

/* One workload; returns the first failing code (0 when all succeeded). */
static int workload(void)
{
    skv_metrics *reg = NULL;
    skv_metric *m = NULL, *h = NULL;
    char *text = NULL;
    const char *l[] = {"a", "b"}, *v[] = {"x", "y"}, *w[] = {"z", "q"};
    skv_metric_options o = SKV_METRIC_OPTIONS_INIT;
    o.name = "m";
    o.help = "help";
    o.labels = l;
    o.n_labels = 2;
    int rc = skv_metrics_new(&reg, NULL);
    if (!rc)
        rc = skv_metrics_register(&m, reg, &o, NULL);
    o.type = SKV_METRIC_HISTOGRAM;
    o.name = "h";
    o.n_labels = 0;
    if (!rc)
        rc = skv_metrics_register(&h, reg, &o, NULL);
    for (int i = 0; !rc && i < 6; i++)
        rc = skv_metrics_set(m, i % 2 ? v : w, 2, i, NULL);
    if (!rc)
        rc = skv_metrics_observe(h, NULL, 0, 0.2, NULL);
    if (!rc)
        rc = skv_metrics_render(&text, NULL, reg, NULL);
    skv_free(text);
    skv_metrics_free(reg);
    return rc;
}

START_TEST(test_alloc_failures)
{
    skv_allocator a = {SKV_ALLOCATOR_VERSION, count_malloc, count_realloc,
                       count_free, NULL};
    SKV_CK_OK(skv_set_allocator(&a, NULL), NULL);
    int rc = SKV_ENOMEM;
    long step;
    for (step = 0; rc == SKV_ENOMEM && step < 1000; step++) {
        fail_after = step;
        live_allocs = 0;
        rc = workload();
        ck_assert_msg(rc == 0 || rc == SKV_ENOMEM, "step %ld: %d", step, rc);
        ck_assert_msg(live_allocs == 0, "step %ld: %ld allocations leaked", step,
                      live_allocs);
    }
    ck_assert_int_eq(rc, 0); /* eventually enough memory */
    ck_assert_int_gt(step, 10);
    SKV_CK_OK(skv_set_allocator(NULL, NULL), NULL);
}
END_TEST

Suite *skv_test_suite_metrics(void);
Suite *skv_test_suite_metrics(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_render_parse);
    tcase_add_test(tc, test_escaping);
    tcase_add_test(tc, test_histogram);
    tcase_add_test(tc, test_bad_names);
    tcase_add_test(tc, test_bad_options);
    tcase_add_test(tc, test_duplicates);
    tcase_add_test(tc, test_update_rules);
    tcase_add_test(tc, test_remove_reset);
    tcase_add_test(tc, test_empty_and_order);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(s, tc);
    return s;
}
