/* Slot vectors as text: "cpu=4,mem=16g,cuda.shares=0.5".
 * SPDX-License-Identifier: Apache-2.0 */
#include "slots_internal.h"

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void trim(const char **s, size_t *len)
{
    while (*len && is_space(**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && is_space((*s)[*len - 1]))
        (*len)--;
}

static int entry_kind(skv_slot_kind *kind, const char *name,
                      const skv_slot_registry *reg, skv_error *err)
{
    if (!reg) {
        *kind = skv__slots_default_kind(name, strlen(name));
        return 0;
    }
    if (skv_slot_registry_lookup(reg, name, kind, NULL) != 0)
        return skv__err(err, SKV_EINVAL, "unknown slot '%s' (not in the "
                        "registry)", name);
    return 0;
}

/* One "name=qty" token; idx is its 1-based position for messages. */
static int parse_entry(skv_slots *s, const char *tok, size_t len, size_t idx,
                       const skv_slot_registry *reg, skv_error *err)
{
    char shown[SKV__SLOT_DISPLAY_MAX], name[SKV_SLOT_NAME_MAX];
    trim(&tok, &len);
    if (len == 0)
        return skv__err(err, SKV_EINVAL, "entry %zu is empty", idx);
    skv__slots_name_display(shown, tok, len);
    const char *eq = memchr(tok, '=', len);
    if (!eq)
        return skv__err(err, SKV_EINVAL, "entry '%s' has no '='", shown);
    const char *key = tok, *val = eq + 1;
    size_t klen = (size_t)(eq - tok), vlen = len - klen - 1;
    trim(&key, &klen);
    trim(&val, &vlen);
    int rc = skv__slots_name_check_n(key, klen, SKV_EINVAL, err);
    if (rc) {
        skv__err_prefix(err, "entry '%s'", shown);
        return rc;
    }
    memcpy(name, key, klen);
    name[klen] = '\0';
    skv_slot_kind kind;
    skv_qty qty = 0;
    if ((rc = entry_kind(&kind, name, reg, err)) != 0)
        return rc;
    if ((rc = skv__qty_parse_n(&qty, val, vlen, kind, err)) != 0) {
        skv__err_prefix(err, "slot '%s'", name);
        return rc;
    }
    ptrdiff_t at = skv__slots_find(s, name);
    if (at >= 0)
        return skv__err(err, SKV_EINVAL, "duplicate slot '%s'", name);
    if ((rc = skv__slots_reserve(s, s->len + 1, err)) != 0)
        return rc;
    skv__slots_insert_at(s, (size_t)(-at - 1), name, kind, qty);
    return 0;
}

static int parse_all(skv_slots *s, const char *text,
                     const skv_slot_registry *reg, skv_error *err)
{
    const char *p = text;
    size_t len = strlen(text);
    trim(&p, &len);
    if (len == 0)
        return 0; /* "" and all-blank text are the empty vector */
    const char *end = p + len;
    for (size_t idx = 1;; idx++) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *stop = comma ? comma : end;
        int rc = parse_entry(s, p, (size_t)(stop - p), idx, reg, err);
        if (rc)
            return rc;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int skv_slots_parse(skv_slots **out, const char *text,
                    const skv_slot_registry *reg, skv_error *err)
{
    if (!out || !text)
        return skv__err(err, SKV_EINVAL, "skv_slots_parse: %s is NULL",
                        out ? "text" : "out");
    skv_slots *s = NULL;
    int rc = skv_slots_new(&s, err);
    if (rc)
        return rc;
    if ((rc = parse_all(s, text, reg, err)) != 0) {
        skv_slots_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int skv_slots_format(char **out, const skv_slots *slots, skv_error *err)
{
    if (!out || !slots)
        return skv__err(err, SKV_EINVAL, "skv_slots_format: %s is NULL",
                        out ? "slots" : "out");
    /* Upper bound: name, '=', quantity, ',' per entry. */
    size_t per = SKV_SLOT_NAME_MAX + SKV_QTY_FORMAT_MAX + 2;
    char *buf = skv__calloc(slots->len + 1, per);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "formatting slots: out of memory");
    size_t pos = 0;
    for (size_t i = 0; i < slots->len; i++) {
        const skv__slot_entry *e = &slots->e[i];
        if (i)
            buf[pos++] = ',';
        size_t nl = strlen(e->name);
        memcpy(buf + pos, e->name, nl);
        pos += nl;
        buf[pos++] = '=';
        int n = skv_qty_format(buf + pos, SKV_QTY_FORMAT_MAX, e->qty, e->kind);
        if (n < 0) { /* only a corrupted vector gets here */
            skv__free(buf);
            return skv__err(err, n, "slot '%s': cannot format quantity %lld",
                            e->name, (long long)e->qty);
        }
        pos += (size_t)n;
    }
    buf[pos] = '\0';
    *out = buf;
    return 0;
}
