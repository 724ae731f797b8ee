/* IPv4 addresses and CIDR blocks as text: strict parsing (every input is
 * validated before anything is created) and formatting. I/O-free: shared
 * by the subnet pool (the manager's) and the netlink code (the agent's).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "skv_cidr.h"

uint32_t skv__subnet_mask(unsigned plen)
{
    return plen == 0 ? 0 : (plen >= 32 ? 0xffffffffu
                                       : ~((1u << (32 - plen)) - 1));
}

/* One decimal part 0..limit without leading zeros; advances *p. */
static bool part(const char **p, unsigned limit, unsigned *out)
{
    const char *s = *p;
    unsigned v = 0;
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < 4)
        v = v * 10 + (unsigned)(s[n++] - '0');
    if (n == 0 || n > 3 || (n > 1 && s[0] == '0') || v > limit)
        return false;
    *p = s + n;
    *out = v;
    return true;
}

static bool ip_scan(const char **p, uint32_t *out)
{
    uint32_t a = 0;
    for (int i = 0; i < 4; i++) {
        unsigned v;
        if (!part(p, 255, &v))
            return false;
        a = (a << 8) | v;
        if (i < 3 && *(*p)++ != '.')
            return false;
    }
    *out = a;
    return true;
}

int skv__subnet_ip_parse(const char *s, uint32_t *out, const char *what,
                      skv_error *err)
{
    const char *p = s;
    if (!s || !ip_scan(&p, out) || *p)
        return skv__err(err, SKV_EINVAL, "%s '%s' is not an IPv4 address "
                        "like 10.1.2.3", what, s ? s : "(null)");
    return 0;
}

int skv__subnet_cidr_parse(const char *s, unsigned min, unsigned max,
                        skv__cidr *out, const char *what, skv_error *err)
{
    const char *p = s;
    uint32_t a;
    unsigned plen;
    if (!s || !ip_scan(&p, &a) || *p++ != '/' || !part(&p, 32, &plen) || *p)
        return skv__err(err, SKV_EINVAL, "%s '%s' is not an IPv4 CIDR like "
                        "10.1.2.0/24", what, s ? s : "(null)");
    if (plen < min || plen > max)
        return skv__err(err, SKV_ERANGE, "%s '%s': prefix length %u is "
                        "outside %u..%u", what, s, plen, min, max);
    if (a & ~skv__subnet_mask(plen))
        return skv__err(err, SKV_EINVAL, "%s '%s' has host bits set", what,
                        s);
    out->addr = a;
    out->plen = plen;
    return 0;
}

void skv__subnet_ip_format(uint32_t a, char *buf, size_t n)
{
    snprintf(buf, n, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255,
             a & 255);
}

