/* UTF-8 validation for protocol strings: msgpack "str" promises UTF-8, and
 * what the manager stores ends up in SQLite and in the CLI's JSON output,
 * so malformed sequences are refused at the door (overlong forms,
 * surrogates and code points above U+10FFFF included).
 * SPDX-License-Identifier: Apache-2.0 */
#include "schema.h"

/* Length of the sequence starting with lead byte c, 0 when c cannot lead. */
static int seq_len(uint8_t c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    return 0;
}

bool skv__proto_utf8_valid(const char *s, size_t len)
{
    const uint8_t *p = (const uint8_t *)s, *end = p + len;
    while (p < end) {
        int n = seq_len(*p);
        if (n == 0 || end - p < n)
            return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80)
                return false;
        /* second-byte ranges that exclude overlongs, surrogates, > U+10FFFF */
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
            (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
            return false;
        p += n;
    }
    return true;
}
