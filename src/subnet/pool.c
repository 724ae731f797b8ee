/* Subnet pool: equal subnets carved from a cluster CIDR, tracked in a
 * bitmap; allocation takes the lowest free one, so the result is
 * deterministic for a given history.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "skv_cidr.h"
#include "sokovan/subnet.h"

#define POOL_MAX_BITS 20u

struct skv_net_pool {
    skv__cidr cidr;
    unsigned sub_plen;
    size_t count;       /* subnets in the pool */
    size_t used;
    uint64_t *bits;
};

int skv_net_pool_new(skv_net_pool **out, const char *cidr,
                     unsigned subnet_prefix, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "pool: out is NULL");
    skv__cidr c;
    int rc = skv__subnet_cidr_parse(cidr, 1, 30, &c, "pool CIDR", err);
    if (rc < 0)
        return rc;
    if (subnet_prefix < c.plen || subnet_prefix > 30 ||
        subnet_prefix - c.plen > POOL_MAX_BITS)
        return skv__err(err, SKV_ERANGE, "pool %s: subnet prefix /%u must be "
                        "within /%u../30 and give at most 2^%u subnets", cidr,
                        subnet_prefix, c.plen, POOL_MAX_BITS);
    skv_net_pool *p = skv__calloc(1, sizeof(*p));
    size_t count = (size_t)1 << (subnet_prefix - c.plen);
    uint64_t *bits = skv__calloc((count + 63) / 64, sizeof(uint64_t));
    if (!p || !bits) {
        skv__free(p);
        skv__free(bits);
        return skv__err(err, SKV_ENOMEM, "pool %s", cidr);
    }
    p->cidr = c;
    p->sub_plen = subnet_prefix;
    p->count = count;
    p->bits = bits;
    *out = p;
    return 0;
}

void skv_net_pool_free(skv_net_pool *p)
{
    if (!p)
        return;
    skv__free(p->bits);
    skv__free(p);
}

size_t skv_net_pool_available(const skv_net_pool *p)
{
    return p ? p->count - p->used : 0;
}

static bool bit(const skv_net_pool *p, size_t i)
{
    return (p->bits[i / 64] >> (i % 64)) & 1;
}

static void set_bit(skv_net_pool *p, size_t i, bool on)
{
    if (on) {
        p->bits[i / 64] |= (uint64_t)1 << (i % 64);
        p->used++;
    } else {
        p->bits[i / 64] &= ~((uint64_t)1 << (i % 64));
        p->used--;
    }
}

static int format(const skv_net_pool *p, size_t i, char *buf, size_t n,
                  skv_error *err)
{
    char ip[16];
    uint32_t a = p->cidr.addr + (uint32_t)(i << (32 - p->sub_plen));
    skv__subnet_ip_format(a, ip, sizeof(ip));
    int w = snprintf(buf, n, "%s/%u", ip, p->sub_plen);
    return w < 0 || (size_t)w >= n
               ? skv__err(err, SKV_ERANGE, "pool: buffer of %zu bytes is too "
                          "small", n)
               : 0;
}

int skv_net_pool_alloc(skv_net_pool *p, char *buf, size_t n, skv_error *err)
{
    if (!p || !buf)
        return skv__err(err, SKV_EINVAL, "pool alloc: NULL argument");
    for (size_t w = 0; w < (p->count + 63) / 64; w++) {
        if (p->bits[w] == UINT64_MAX)
            continue;
        size_t i = w * 64 + (size_t)__builtin_ctzll(~p->bits[w]);
        if (i >= p->count)
            break;
        int rc = format(p, i, buf, n, err);
        if (rc == 0)
            set_bit(p, i, true);
        return rc;
    }
    return skv__err(err, SKV_ENOSPC, "pool: all %zu subnets are in use",
                    p->count);
}

/* Index of a subnet of the pool. */
static int locate(const skv_net_pool *p, const char *subnet, size_t *i,
                  skv_error *err)
{
    skv__cidr c;
    int rc = skv__subnet_cidr_parse(subnet, p->sub_plen, p->sub_plen, &c,
                                 "pool subnet", err);
    if (rc < 0)
        return rc;
    if ((c.addr & skv__subnet_mask(p->cidr.plen)) != p->cidr.addr)
        return skv__err(err, SKV_EINVAL, "subnet %s is not inside the pool",
                        subnet);
    *i = (c.addr - p->cidr.addr) >> (32 - p->sub_plen);
    return 0;
}

int skv_net_pool_reserve(skv_net_pool *p, const char *subnet, skv_error *err)
{
    if (!p)
        return skv__err(err, SKV_EINVAL, "pool is NULL");
    size_t i;
    int rc = locate(p, subnet, &i, err);
    if (rc < 0)
        return rc;
    if (bit(p, i))
        return skv__err(err, SKV_EEXIST, "subnet %s is already in use",
                        subnet);
    set_bit(p, i, true);
    return 0;
}

int skv_net_pool_release(skv_net_pool *p, const char *subnet, skv_error *err)
{
    if (!p)
        return skv__err(err, SKV_EINVAL, "pool is NULL");
    size_t i;
    int rc = locate(p, subnet, &i, err);
    if (rc < 0)
        return rc;
    if (!bit(p, i))
        return skv__err(err, SKV_ENOENT, "subnet %s is not in use", subnet);
    set_bit(p, i, false);
    return 0;
}
