/* A minimal streaming JSON writer: commas and nesting are tracked here so
 * the emitters only say what comes next. Strings are escaped per RFC 8259;
 * bytes that are not valid UTF-8 come out as U+FFFD.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <string.h>

#include "cli.h"

void cli_json_init(cli_json *j, FILE *f)
{
    memset(j, 0, sizeof *j);
    j->f = f;
}

/* Separator before a value (not after a key). */
static void pre_value(cli_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0 && !j->first[j->depth])
        fputc(',', j->f);
    if (j->depth > 0)
        j->first[j->depth] = 0;
}

static void open_(cli_json *j, char ch)
{
    pre_value(j);
    fputc(ch, j->f);
    if (j->depth + 1 < (int)(sizeof j->first / sizeof j->first[0]))
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(cli_json *j, char ch)
{
    fputc(ch, j->f);
    if (j->depth > 0)
        j->depth--;
}

void cli_json_obj(cli_json *j) { open_(j, '{'); }
void cli_json_obj_end(cli_json *j) { close_(j, '}'); }
void cli_json_arr(cli_json *j) { open_(j, '['); }
void cli_json_arr_end(cli_json *j) { close_(j, ']'); }

/* Length of the valid UTF-8 sequence at p (0 when invalid). */
size_t cli_utf8_len(const unsigned char *p, size_t left)
{
    size_t n = p[0] < 0x80 ? 1 : (p[0] & 0xe0) == 0xc0 ? 2
             : (p[0] & 0xf0) == 0xe0 ? 3 : (p[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (n == 0 || n > left || (n == 2 && p[0] < 0xc2))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
        (n == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
        (n == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
        (n == 4 && (p[0] > 0xf4 || (p[0] == 0xf4 && p[1] >= 0x90))))
        return 0;
    return n;
}

void cli_json_strn(cli_json *j, const char *s, size_t len)
{
    pre_value(j);
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', j->f);
    for (size_t i = 0; i < len;) {
        unsigned char ch = p[i];
        if (ch == '"' || ch == '\\') {
            fputc('\\', j->f);
            fputc(ch, j->f);
        } else if (ch == '\n') {
            fputs("\\n", j->f);
        } else if (ch == '\t') {
            fputs("\\t", j->f);
        } else if (ch == '\r') {
            fputs("\\r", j->f);
        } else if (ch < 0x20 || ch == 0x7f) {
            fprintf(j->f, "\\u%04x", ch);
        } else if (ch >= 0x80) {
            size_t n = cli_utf8_len(p + i, len - i);
            if (n == 0) {
                fputs("\\ufffd", j->f);
                i++;
                continue;
            }
            fwrite(p + i, 1, n, j->f);
            i += n;
            continue;
        } else {
            fputc(ch, j->f);
        }
        i++;
    }
    fputc('"', j->f);
}

void cli_json_str(cli_json *j, const char *s)
{
    if (!s) {
        pre_value(j);
        fputs("null", j->f);
        return;
    }
    cli_json_strn(j, s, strlen(s));
}

void cli_json_key(cli_json *j, const char *key)
{
    cli_json_str(j, key);
    fputc(':', j->f);
    j->after_key = 1;
}

void cli_json_int(cli_json *j, int64_t v)
{
    pre_value(j);
    fprintf(j->f, "%" PRId64, v);
}

void cli_json_uint(cli_json *j, uint64_t v)
{
    pre_value(j);
    fprintf(j->f, "%" PRIu64, v);
}

void cli_json_bool(cli_json *j, int v)
{
    pre_value(j);
    fputs(v ? "true" : "false", j->f);
}

/* Counts as decimal numbers (milli-units exact), bytes as integers;
 * "unlimited" as a string. */
void cli_json_qty(cli_json *j, const char *slot, skv_qty q)
{
    if (q == SKV_QTY_UNLIMITED) {
        cli_json_str(j, "unlimited");
        return;
    }
    if (cli_slot_kind(slot) == SKV_SLOT_BYTES) {
        cli_json_int(j, q);
        return;
    }
    char buf[SKV_QTY_FORMAT_MAX];
    pre_value(j);
    if (skv_qty_format(buf, sizeof buf, q, SKV_SLOT_COUNT) < 0)
        fprintf(j->f, "%" PRId64, q);
    else
        fputs(buf, j->f);
}

void cli_json_slots(cli_json *j, const skv_slots *s)
{
    if (!s) {
        cli_json_str(j, NULL);
        return;
    }
    cli_json_obj(j);
    for (size_t i = 0; i < skv_slots_count(s); i++) {
        const char *name;
        skv_qty q;
        if (skv_slots_at(s, i, &name, NULL, &q))
            break;
        cli_json_key(j, name);
        cli_json_qty(j, name, q);
    }
    cli_json_obj_end(j);
}

void cli_json_strs(cli_json *j, char *const *v, size_t n)
{
    cli_json_arr(j);
    for (size_t i = 0; i < n; i++)
        cli_json_str(j, v[i]);
    cli_json_arr_end(j);
}

void cli_json_kv(cli_json *j, const skv_proto_kv *kv, size_t n)
{
    cli_json_obj(j);
    for (size_t i = 0; i < n; i++) {
        cli_json_key(j, kv[i].key ? kv[i].key : "");
        cli_json_str(j, kv[i].value);
    }
    cli_json_obj_end(j);
}

void cli_json_end(cli_json *j)
{
    fputc('\n', j->f);
}
