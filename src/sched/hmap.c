/* String-keyed open-addressing hash map (linear probing, backward-shift
 * deletion) mapping ids to table indexes. Keys are borrowed from the
 * entries they index, so the map never copies strings.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "sched_int.h"

uint32_t skv__sched_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a: cheap and good enough for ids */
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

uint32_t skv__hmap_get(const skv__hmap *m, const char *key)
{
    if (m->cap == 0)
        return SKV__NONE;
    uint32_t h = skv__sched_hash(key);
    size_t mask = m->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const skv__hent *e = &m->t[i];
        if (!e->key)
            return SKV__NONE;
        if (e->hash == h && strcmp(e->key, key) == 0)
            return e->val;
    }
}

static void hmap_insert_raw(skv__hent *t, size_t cap, skv__hent e)
{
    size_t mask = cap - 1;
    size_t i = e.hash & mask;
    while (t[i].key)
        i = (i + 1) & mask;
    t[i] = e;
}

static int hmap_grow(skv__hmap *m, skv_error *err)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    skv__hent *nt = skv__calloc(ncap, sizeof(*nt));
    if (!nt)
        return skv__err(err, SKV_ENOMEM, "sched: out of memory growing an index");
    for (size_t i = 0; i < m->cap; i++)
        if (m->t[i].key)
            hmap_insert_raw(nt, ncap, m->t[i]);
    skv__free(m->t);
    m->t = nt;
    m->cap = ncap;
    return 0;
}

int skv__hmap_put(skv__hmap *m, const char *key, uint32_t val, skv_error *err)
{
    /* keep the load under 1/2 so probes stay short */
    if ((m->len + 1) * 2 > m->cap) {
        int rc = hmap_grow(m, err);
        if (rc)
            return rc;
    }
    skv__hent e = {key, val, skv__sched_hash(key)};
    hmap_insert_raw(m->t, m->cap, e);
    m->len++;
    return 0;
}

void skv__hmap_del(skv__hmap *m, const char *key)
{
    if (m->cap == 0)
        return;
    uint32_t h = skv__sched_hash(key);
    size_t mask = m->cap - 1;
    size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
        if (!m->t[i].key)
            return;
        if (m->t[i].hash == h && strcmp(m->t[i].key, key) == 0)
            break;
    }
    /* backward shift: move later entries of the cluster into the hole when
     * their home slot does not lie cyclically in (hole, j] */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->t[j].key; j = (j + 1) & mask) {
        size_t home = m->t[j].hash & mask;
        bool stays = (hole <= j) ? (home > hole && home <= j)
                                 : (home > hole || home <= j);
        if (!stays) {
            m->t[hole] = m->t[j];
            hole = j;
        }
    }
    m->t[hole].key = NULL;
    m->len--;
}

void skv__hmap_fini(skv__hmap *m)
{
    skv__free(m->t);
    m->t = NULL;
    m->cap = m->len = 0;
}
