/* Slot vectors as msgpack: { name: [kind, qty], ... } in name order.
 * Decoding treats the bytes as hostile: everything is checked, nothing is
 * trusted, and memory use is bounded by the input length.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "skv_slots_msgpack.h"
#include "slots_internal.h"

/* The largest valid encoding, even from a non-minimal encoder: a map32
 * header, then per entry a str32 name of up to 63 bytes, an array32 header,
 * and kind and quantity as 9-byte integers. Longer input is refused before
 * msgpack-c allocates anything. */
#define ENCODED_ENTRY_MAX (5 + (SKV_SLOT_NAME_MAX - 1) + 5 + 9 + 9)
#define ENCODED_MAX (5 + (size_t)SKV_SLOTS_DECODE_MAX * ENCODED_ENTRY_MAX)

int skv__slots_pack(msgpack_packer *pk, const skv_slots *slots, skv_error *err)
{
    if (!pk || !slots)
        return skv__err(err, SKV_EINVAL, "skv__slots_pack: %s is NULL",
                        pk ? "slots" : "pk");
    int bad = msgpack_pack_map(pk, slots->len);
    for (size_t i = 0; !bad && i < slots->len; i++) {
        const skv__slot_entry *e = &slots->e[i];
        size_t nl = strlen(e->name);
        bad = msgpack_pack_str(pk, nl) || msgpack_pack_str_body(pk, e->name, nl) ||
              msgpack_pack_array(pk, 2) || msgpack_pack_int(pk, (int)e->kind) ||
              msgpack_pack_int64(pk, e->qty);
    }
    if (bad)
        return skv__err(err, SKV_ENOMEM, "encoding slots: msgpack writer "
                        "failed (out of memory)");
    return 0;
}

static const char *mp_type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL: return "nil";
    case MSGPACK_OBJECT_BOOLEAN: return "boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return "integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return "negative integer";
    case MSGPACK_OBJECT_FLOAT32: case MSGPACK_OBJECT_FLOAT64: return "float";
    case MSGPACK_OBJECT_STR: return "string";
    case MSGPACK_OBJECT_ARRAY: return "array";
    case MSGPACK_OBJECT_MAP: return "map";
    case MSGPACK_OBJECT_BIN: return "binary";
    case MSGPACK_OBJECT_EXT: return "extension";
    }
    return "unknown";
}

/* Kind and quantity from the [kind, qty] pair of slot `name`. */
static int unpack_value(skv__slot_entry *e, const msgpack_object *v,
                        skv_error *err)
{
    if (v->type != MSGPACK_OBJECT_ARRAY)
        return skv__err(err, SKV_EPROTO, "slot '%s': expected a [kind, qty] "
                        "array, got %s", e->name, mp_type_name(v->type));
    if (v->via.array.size != 2)
        return skv__err(err, SKV_EPROTO, "slot '%s': [kind, qty] array has "
                        "%u elements", e->name, (unsigned)v->via.array.size);
    const msgpack_object *k = &v->via.array.ptr[0], *q = &v->via.array.ptr[1];
    if (k->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        !skv__slot_kind_valid(k->via.u64 > 16 ? 0 : (int)k->via.u64))
        return skv__err(err, SKV_EPROTO, "slot '%s': invalid kind", e->name);
    e->kind = (skv_slot_kind)k->via.u64;
    if (q->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
        return skv__err(err, SKV_EPROTO, "slot '%s': negative quantity %lld",
                        e->name, (long long)q->via.i64);
    if (q->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return skv__err(err, SKV_EPROTO, "slot '%s': quantity has type %s, "
                        "expected integer", e->name, mp_type_name(q->type));
    if (q->via.u64 > (uint64_t)INT64_MAX)
        return skv__err(err, SKV_EPROTO, "slot '%s': quantity %llu is out of "
                        "range", e->name, (unsigned long long)q->via.u64);
    e->qty = (skv_qty)q->via.u64;
    return skv__qty_check(e->qty, e->kind, e->name, SKV_EPROTO, err);
}

static int unpack_entry(skv__slot_entry *e, const msgpack_object_kv *kv,
                        size_t idx, const skv_slot_registry *reg,
                        skv_error *err)
{
    if (kv->key.type != MSGPACK_OBJECT_STR)
        return skv__err(err, SKV_EPROTO, "entry %zu: key has type %s, "
                        "expected string", idx, mp_type_name(kv->key.type));
    const char *name = kv->key.via.str.ptr;
    size_t nl = kv->key.via.str.size;
    int rc = skv__slots_name_check_n(name, nl, SKV_EPROTO, err);
    if (rc)
        return rc;
    memset(e->name, 0, sizeof(e->name));
    memcpy(e->name, name, nl);
    if ((rc = unpack_value(e, &kv->val, err)) != 0 || !reg)
        return rc;
    skv_slot_kind want;
    if (skv_slot_registry_lookup(reg, e->name, &want, NULL) != 0)
        return skv__err(err, SKV_EPROTO, "unknown slot '%s' (not in the "
                        "registry)", e->name);
    if (want != e->kind)
        return skv__err(err, SKV_EPROTO, "slot '%s' is a %s slot in the "
                        "registry, encoded as %s", e->name,
                        skv_slot_kind_name(want), skv_slot_kind_name(e->kind));
    return 0;
}

static int entry_cmp(const void *a, const void *b)
{
    return strcmp(((const skv__slot_entry *)a)->name,
                  ((const skv__slot_entry *)b)->name);
}

/* Entries arrive in any order; sort them (unless already sorted, the
 * encoder's order) and refuse duplicates. */
static int sort_unique(skv_slots *s, skv_error *err)
{
    bool sorted = true;
    for (size_t i = 1; i < s->len && sorted; i++)
        sorted = strcmp(s->e[i - 1].name, s->e[i].name) < 0;
    if (!sorted)
        qsort(s->e, s->len, sizeof(*s->e), entry_cmp);
    for (size_t i = 1; i < s->len; i++)
        if (strcmp(s->e[i - 1].name, s->e[i].name) == 0)
            return skv__err(err, SKV_EPROTO, "duplicate slot '%s'",
                            s->e[i].name);
    return 0;
}

int skv__slots_unpack(skv_slots **out, const msgpack_object *obj,
                      const skv_slot_registry *reg, skv_error *err)
{
    if (!out || !obj)
        return skv__err(err, SKV_EINVAL, "skv__slots_unpack: %s is NULL",
                        out ? "obj" : "out");
    if (obj->type != MSGPACK_OBJECT_MAP)
        return skv__err(err, SKV_EPROTO, "slot vector: expected a map, got "
                        "%s", mp_type_name(obj->type));
    size_t n = obj->via.map.size;
    if (n > SKV_SLOTS_DECODE_MAX)
        return skv__err(err, SKV_EPROTO, "slot vector: %zu entries, more "
                        "than the limit of %d", n, SKV_SLOTS_DECODE_MAX);
    skv_slots *s = NULL;
    int rc = skv_slots_new(&s, err);
    if (rc == 0)
        rc = skv__slots_reserve(s, n, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = unpack_entry(&s->e[i], &obj->via.map.ptr[i], i + 1, reg, err);
        if (rc == 0)
            s->len++;
    }
    if (rc == 0)
        rc = sort_unique(s, err);
    if (rc) {
        skv_slots_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- whole buffers --------------------------------------------------- */

struct wbuf {
    char *data;
    size_t len, cap;
};

/* msgpack writer callback appending through the library allocator. */
static int wbuf_write(void *payload, const char *buf, size_t len)
{
    struct wbuf *w = payload;
    if (len > w->cap - w->len) {
        size_t cap = w->cap * 2 > w->len + len ? w->cap * 2 : w->len + len;
        char *d = skv__realloc(w->data, cap);
        if (!d)
            return -1;
        w->data = d;
        w->cap = cap;
    }
    memcpy(w->data + w->len, buf, len);
    w->len += len;
    return 0;
}

int skv_slots_encode(void **out_buf, size_t *out_len, const skv_slots *slots,
                     skv_error *err)
{
    if (!out_buf || !out_len || !slots)
        return skv__err(err, SKV_EINVAL, "skv_slots_encode: %s is NULL",
                        !out_buf ? "out_buf" : !out_len ? "out_len" : "slots");
    struct wbuf w = {NULL, 0, 0};
    w.cap = 8 + slots->len * 24; /* typical entry size, grown if needed */
    if (!(w.data = skv__malloc(w.cap)))
        return skv__err(err, SKV_ENOMEM, "encoding slots: out of memory");
    msgpack_packer pk;
    msgpack_packer_init(&pk, &w, wbuf_write);
    int rc = skv__slots_pack(&pk, slots, err);
    if (rc) {
        skv__free(w.data);
        return rc;
    }
    *out_buf = w.data;
    *out_len = w.len;
    return 0;
}

int skv_slots_decode(skv_slots **out, const void *buf, size_t len,
                     const skv_slot_registry *reg, skv_error *err)
{
    if (!out || (!buf && len))
        return skv__err(err, SKV_EINVAL, "skv_slots_decode: %s is NULL",
                        out ? "buf" : "out");
    if (len > ENCODED_MAX)
        return skv__err(err, SKV_EPROTO, "slot vector: %zu bytes, longer than "
                        "any valid encoding (%zu)", len, ENCODED_MAX);
    size_t end = 0;
    int rc = skv__slots_msgpack_skim(&end, buf, len, err);
    if (rc)
        return rc;
    if (end != len)
        return skv__err(err, SKV_EPROTO, "slot vector: %zu trailing bytes",
                        len - end);
    msgpack_unpacked u;
    msgpack_unpacked_init(&u);
    size_t off = 0;
    msgpack_unpack_return ur = msgpack_unpack_next(&u, buf, len, &off);
    if (ur == MSGPACK_UNPACK_SUCCESS && off == len)
        rc = skv__slots_unpack(out, &u.data, reg, err);
    else if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
        rc = skv__err(err, SKV_ENOMEM, "decoding slots: out of memory");
    else
        rc = skv__err(err, SKV_EPROTO, "slot vector: malformed msgpack "
                      "(unpack status %d)", (int)ur);
    msgpack_unpacked_destroy(&u);
    return rc;
}
