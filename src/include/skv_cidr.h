/* IPv4 addresses and CIDR blocks (src/subnet/cidr.c): what the subnet
 * pool and the netlink code share, without either depending on the other.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_CIDR_H
#define SKV_CIDR_H

#include <stddef.h>
#include <stdint.h>

#include "skv_internal.h"

typedef struct skv__cidr {
    uint32_t addr;      /* host byte order */
    unsigned plen;      /* 0..32 */
} skv__cidr;

/* "a.b.c.d" strictly (no leading zeros, no shorthand). */
int skv__subnet_ip_parse(const char *s, uint32_t *out, const char *what,
                         skv_error *err);
/* "a.b.c.d/n" with n in min..max and no host bits set. */
int skv__subnet_cidr_parse(const char *s, unsigned min, unsigned max,
                           skv__cidr *out, const char *what, skv_error *err);
void skv__subnet_ip_format(uint32_t addr, char *buf, size_t n);
uint32_t skv__subnet_mask(unsigned plen);

#endif
