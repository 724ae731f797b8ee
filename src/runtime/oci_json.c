/* A tiny JSON writer for OCI config.json: a growable buffer, string
 * escaping per RFC 8259 (quotes, backslash, control characters as \u00XX;
 * bytes >= 0x80 pass through, so UTF-8 stays UTF-8), and comma handling.
 * SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "oci.h"

static void put(skv__json *j, const char *s, size_t n)
{
    if (j->failed)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 4096;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *nb = skv__realloc(j->buf, cap);
        if (!nb) {
            j->failed = true;
            return;
        }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void sep(skv__json *j)
{
    if (j->need_comma)
        put(j, ",", 1);
    j->need_comma = false;
}

static void put_string(skv__json *j, const char *s)
{
    put(j, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(j, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof(esc), "\\u%04x", *p);
            put(j, esc, 6);
        } else {
            put(j, (const char *)p, 1);
        }
    }
    put(j, "\"", 1);
}

void skv__json_key(skv__json *j, const char *key)
{
    sep(j);
    put_string(j, key);
    put(j, ":", 1);
}

void skv__json_open(skv__json *j, const char *key, char bracket)
{
    if (key)
        skv__json_key(j, key);
    else
        sep(j);
    put(j, &bracket, 1);
}

void skv__json_close(skv__json *j, char bracket)
{
    put(j, &bracket, 1);
    j->need_comma = true;
}

void skv__json_str(skv__json *j, const char *key, const char *value)
{
    if (key)
        skv__json_key(j, key);
    else
        sep(j);
    put_string(j, value);
    j->need_comma = true;
}

void skv__json_int(skv__json *j, const char *key, int64_t value)
{
    char num[32];
    int n = snprintf(num, sizeof(num), "%" PRId64, value);
    if (key)
        skv__json_key(j, key);
    else
        sep(j);
    put(j, num, (size_t)n);
    j->need_comma = true;
}

void skv__json_bool(skv__json *j, const char *key, bool value)
{
    if (key)
        skv__json_key(j, key);
    else
        sep(j);
    put(j, value ? "true" : "false", value ? 4 : 5);
    j->need_comma = true;
}

void skv__json_raw(skv__json *j, const char *key, const char *text,
                   size_t len)
{
    if (key)
        skv__json_key(j, key);
    else
        sep(j);
    put(j, text, len);
    j->need_comma = true;
}

void skv__json_free(skv__json *j)
{
    skv__free(j->buf);
    memset(j, 0, sizeof(*j));
}
