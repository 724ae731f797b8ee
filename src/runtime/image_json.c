/* A small pull-style JSON reader, just enough for docker-save manifest.json
 * and OCI index.json / manifests: bounded nesting depth, bounded strings,
 * strict RFC 8259 grammar for what it reads and skips. It never allocates.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "image_int.h"

void skv__ij_init(skv__ij *c, const char *text, size_t len)
{
    c->p = text;
    c->end = text + len;
    c->depth = 0;
    c->bad = false;
}

static int fail(skv__ij *c)
{
    c->bad = true;
    return -1;
}

static void ws(skv__ij *c)
{
    while (c->p < c->end && strchr(" \t\r\n", *c->p) && *c->p)
        c->p++;
}

static int expect(skv__ij *c, char ch)
{
    ws(c);
    if (c->bad || c->p >= c->end || *c->p != ch)
        return fail(c);
    c->p++;
    return 0;
}

static int open_(skv__ij *c, char ch)
{
    if (expect(c, ch) < 0 || ++c->depth > SKV__IJ_MAX_DEPTH)
        return fail(c);
    return 0;
}

int skv__ij_obj_begin(skv__ij *c) { return open_(c, '{'); }
int skv__ij_arr_begin(skv__ij *c) { return open_(c, '['); }

/* After '{' or '[' the first element needs no comma; remember by looking
 * back at the previous non-blank character. */
static int next_(skv__ij *c, char close)
{
    ws(c);
    if (c->bad || c->p >= c->end)
        return fail(c);
    if (*c->p == close) {
        c->p++;
        c->depth--;
        return 0;
    }
    const char *q = c->p - 1;
    while (strchr(" \t\r\n", *q) && *q)
        q--;
    if (*q != '{' && *q != '[' && expect(c, ',') < 0)
        return -1;
    return 1;
}

int skv__ij_arr_next(skv__ij *c) { return next_(c, ']'); }

int skv__ij_obj_next(skv__ij *c, char *key, size_t cap)
{
    int r = next_(c, '}');
    if (r <= 0)
        return r;
    if (skv__ij_string(c, key, cap) < 0 || expect(c, ':') < 0)
        return -1;
    return 1;
}

static int hexval(char ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* One escape after the backslash; \u is decoded only for ASCII, which is
 * all that names and digests may contain (others are refused). */
static int unescape(skv__ij *c, char *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    if (c->p >= c->end)
        return -1;
    const char *f = strchr(from, *c->p);
    if (f && *c->p) {
        *out = to[f - from];
        c->p++;
        return 0;
    }
    if (*c->p != 'u' || c->end - c->p < 5)
        return -1;
    int v = 0;
    for (int i = 1; i <= 4; i++) {
        int h = hexval(c->p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    if (v == 0 || v > 0x7f)
        return -1;
    *out = (char)v;
    c->p += 5;
    return 0;
}

int skv__ij_string(skv__ij *c, char *buf, size_t cap)
{
    size_t n = 0;
    if (expect(c, '"') < 0)
        return -1;
    while (c->p < c->end && *c->p != '"') {
        char ch = *c->p++;
        if ((unsigned char)ch < 0x20)
            return fail(c);
        if (ch == '\\' && unescape(c, &ch) < 0)
            return fail(c);
        if (buf) {
            if (n + 1 >= cap)
                return fail(c);
            buf[n++] = ch;
        }
    }
    if (c->p >= c->end)
        return fail(c);
    c->p++;
    if (buf)
        buf[n] = '\0';
    return 0;
}

static int skip_scalar(skv__ij *c)
{
    static const char *const words[] = {"true", "false", "null"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i]);
        if ((size_t)(c->end - c->p) >= n && !memcmp(c->p, words[i], n)) {
            c->p += n;
            return 0;
        }
    }
    const char *s = c->p;
    if (c->p < c->end && *c->p == '-')
        c->p++;
    while (c->p < c->end && strchr("0123456789.eE+-", *c->p) && *c->p)
        c->p++;
    return c->p > s && hexval(c->p[-1]) >= 0 && c->p[-1] <= '9' ? 0 : fail(c);
}

int skv__ij_skip(skv__ij *c)
{
    ws(c);
    if (c->bad || c->p >= c->end)
        return fail(c);
    int r;
    switch (*c->p) {
    case '"':
        return skv__ij_string(c, NULL, 0);
    case '{':
        if (skv__ij_obj_begin(c) < 0)
            return -1;
        while ((r = skv__ij_obj_next(c, NULL, 0)) == 1)
            if (skv__ij_skip(c) < 0)
                return -1;
        return r;
    case '[':
        if (skv__ij_arr_begin(c) < 0)
            return -1;
        while ((r = skv__ij_arr_next(c)) == 1)
            if (skv__ij_skip(c) < 0)
                return -1;
        return r;
    default:
        return skip_scalar(c);
    }
}

int skv__ij_end(skv__ij *c)
{
    ws(c);
    return !c->bad && c->p == c->end ? 0 : fail(c);
}

int skv__ij_null(skv__ij *c)
{
    ws(c);
    if (c->bad || (size_t)(c->end - c->p) < 4 || memcmp(c->p, "null", 4) != 0)
        return 0;
    c->p += 4;
    return 1;
}
