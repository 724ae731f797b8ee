/* Connection ids to connections: the library names connections by id in
 * its send callback, so every send looks one up. Chained hash table on
 * the id, doubled when it gets full.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "skvd.h"

static size_t slot(size_t nbuckets, uint64_t id)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)(id & (nbuckets - 1));
}

static int rehash(skvd_net *n, size_t nb)
{
    skvd_conn **b = calloc(nb, sizeof(*b));
    if (!b)
        return -1;
    for (size_t i = 0; i < n->nbuckets; i++) {
        skvd_conn *c = n->buckets[i], *next;
        for (; c; c = next) {
            next = c->hnext;
            size_t s = slot(nb, c->id);
            c->hnext = b[s];
            b[s] = c;
        }
    }
    free(n->buckets);
    n->buckets = b;
    n->nbuckets = nb;
    return 0;
}

int skvd_table_add(skvd_net *n, skvd_conn *c)
{
    if (n->count + 1 > n->nbuckets &&
        rehash(n, n->nbuckets ? n->nbuckets * 2 : 64))
        return -1;
    size_t s = slot(n->nbuckets, c->id);
    c->hnext = n->buckets[s];
    n->buckets[s] = c;
    n->count++;
    return 0;
}

void skvd_table_remove(skvd_net *n, skvd_conn *c)
{
    if (!n->nbuckets)
        return;
    for (skvd_conn **p = &n->buckets[slot(n->nbuckets, c->id)]; *p;
         p = &(*p)->hnext) {
        if (*p == c) {
            *p = c->hnext;
            c->hnext = NULL;
            n->count--;
            return;
        }
    }
}

skvd_conn *skvd_table_find(const skvd_net *n, uint64_t id)
{
    if (!n->nbuckets)
        return NULL;
    for (skvd_conn *c = n->buckets[slot(n->nbuckets, id)]; c; c = c->hnext)
        if (c->id == id)
            return c;
    return NULL;
}
