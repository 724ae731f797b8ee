/*
 * sokovan/subnet.h - the subnet pool: equal subnets carved from a cluster
 * CIDR, handed out lowest first (deterministic for a given history) and
 * rebuilt from persisted state. Pure computation, no I/O: the manager
 * hands each agent (and each session on an agent) a subnet with it
 * without linking the netlink code of sokovan/net.h.
 *
 * Thread-safety: a skv_net_pool needs exclusive access while modified;
 * distinct pools are independent.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_SUBNET_H
#define SOKOVAN_SUBNET_H

#include <stddef.h>

#include "sokovan/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for "255.255.255.255/32" plus the NUL. */
#define SKV_NET_ADDR_MAX 19

typedef struct skv_net_pool skv_net_pool;

/* A pool of subnets of length subnet_prefix carved from cidr (e.g.
 * "10.128.0.0/9" and 24: 32768 subnets). At most 2^20 subnets. The manager
 * hands one to each agent (or each session on an agent). */
SKV_EXTERN int skv_net_pool_new(skv_net_pool **out, const char *cidr,
                                unsigned subnet_prefix, skv_error *err);
SKV_EXTERN void skv_net_pool_free(skv_net_pool *pool);
/* The lowest free subnet, marked used, as text ("10.128.3.0/24") into buf
 * (SKV_NET_ADDR_MAX bytes suffice). SKV_ENOSPC when the pool is exhausted. */
SKV_EXTERN int skv_net_pool_alloc(skv_net_pool *pool, char *buf, size_t n,
                                  skv_error *err);
/* Mark a given subnet used (rebuilding the pool from persisted state).
 * SKV_EEXIST when already used, SKV_EINVAL when not a subnet of the pool. */
SKV_EXTERN int skv_net_pool_reserve(skv_net_pool *pool, const char *subnet,
                                    skv_error *err);
/* Return a subnet. SKV_ENOENT when it was not in use. */
SKV_EXTERN int skv_net_pool_release(skv_net_pool *pool, const char *subnet,
                                    skv_error *err);
/* How many subnets are free. */
SKV_EXTERN size_t skv_net_pool_available(const skv_net_pool *pool);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_SUBNET_H */
