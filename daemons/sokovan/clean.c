/* The one sanitizer of text output. Every string that came from a user or
 * the manager (names, ids, reasons, error messages) goes through here before
 * it reaches a table or a line on a terminal: a control character in a
 * session name could otherwise move the cursor, clear the screen, recolour
 * the rest of the output or forge a whole line. C0 controls, DEL, the C1
 * controls (U+0080..U+009F, which some terminals obey) and bytes that are
 * not valid UTF-8 come out as "\xNN", one per byte; valid UTF-8 passes.
 * JSON output does not come here: the JSON writer escapes exactly.
 * Kernel output (`logs`, `run --wait`) is the program's own and stays raw.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Bytes of a clean character at p: 1 or the UTF-8 length; 0 when it must
 * be escaped (byte by byte). */
static size_t clean_len(const unsigned char *p, size_t left)
{
    if (p[0] < 0x80)
        return p[0] < 0x20 || p[0] == 0x7f ? 0 : 1;
    size_t n = cli_utf8_len(p, left);
    if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)
        return 0;                   /* U+0080..U+009F: C1 controls */
    return n;
}

/* Write the clean form of s[0..len) into out (cap bytes, NUL-terminated
 * when cap > 0); returns the length it needs, like snprintf. */
static size_t clean_into(char *out, size_t cap, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = clean_len(p + i, len - i);
        char esc[4] = {'\\', 'x', hex[p[i] >> 4], hex[p[i] & 15]};
        const char *src = n ? s + i : esc;
        size_t w = n ? n : sizeof esc;
        if (o + w < cap)
            memcpy(out + o, src, w);
        else if (o < cap)
            cap = o + 1;            /* cut here, never inside a character */
        o += w;
        i += n ? n : 1;
    }
    if (cap)
        out[o < cap ? o : cap - 1] = 0;
    return o;
}

const char *cli_clean(char *buf, size_t n, const char *s)
{
    clean_into(buf, n, s ? s : "", s ? strlen(s) : 0);
    return buf;
}

char *cli_clean_dup(const char *s)
{
    size_t len = s ? strlen(s) : 0;
    size_t need = clean_into(NULL, 0, s ? s : "", len) + 1;
    char *d = malloc(need);
    if (!d) {
        cli_fail("out of memory");
        exit(CLI_FAIL);
    }
    clean_into(d, need, s ? s : "", len);
    return d;
}

void cli_put_clean(FILE *f, const char *s)
{
    char *d = cli_clean_dup(s);
    fputs(d, f);
    free(d);
}

void cli_vprint_clean(FILE *f, const char *fmt, va_list ap)
{
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) {
        fputs("(out of memory)", f);
        return;
    }
    cli_put_clean(f, text);
    free(text);
}

void cli_line(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vprint_clean(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
}
