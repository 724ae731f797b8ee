/* sokovan-topo: a small streaming JSON writer (strings escaped per RFC 8259).
 * SPDX-License-Identifier: Apache-2.0 */
#include "topo_tool.h"

static void escaped(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* Comma and key before a value. */
static void lead(json *j, const char *key)
{
    if (!j->first[j->depth])
        fputc(',', j->f);
    j->first[j->depth] = false;
    if (key) {
        escaped(j->f, key);
        fputc(':', j->f);
    }
}

void json_begin(json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->first[0] = true;
}

void json_open(json *j, const char *key, char bracket)
{
    lead(j, key);
    fputc(bracket, j->f);
    if (j->depth + 1 < (int)(sizeof(j->first) / sizeof(j->first[0])))
        j->depth++;
    j->first[j->depth] = true;
}

void json_close(json *j, char bracket)
{
    fputc(bracket, j->f);
    if (j->depth > 0)
        j->depth--;
}

void json_str(json *j, const char *key, const char *value)
{
    lead(j, key);
    escaped(j->f, value ? value : "");
}

void json_int(json *j, const char *key, long long value)
{
    lead(j, key);
    fprintf(j->f, "%lld", value);
}

void json_end(json *j)
{
    fputc('\n', j->f);
}
