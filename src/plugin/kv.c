/* The "key=value,key=value" configuration strings of the built-in plugins.
 * List values use ':' ("numa=0:0:1:1") so ',' stays the entry separator.
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

void skv__kv_free(skv__kvlist *l)
{
    for (size_t i = 0; l && i < l->n; i++) {
        skv__free(l->items[i].key);
        skv__free(l->items[i].value);
    }
    if (l) {
        skv__free(l->items);
        l->items = NULL;
        l->n = 0;
    }
}

static char *trim_dup(const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    return skv__strndup(s, len);
}

static int kv_add(skv__kvlist *l, const char *tok, size_t len,
                  const char *const *allowed, const char *plugin,
                  skv_error *err)
{
    const char *eq = memchr(tok, '=', len);
    if (!eq)
        return skv__err(err, SKV_EINVAL, "plugin '%s' config: '%.*s' is not "
                        "key=value", plugin, (int)len, tok);
    char *k = trim_dup(tok, (size_t)(eq - tok));
    char *v = trim_dup(eq + 1, len - (size_t)(eq - tok) - 1);
    skv__kv *ni = (k && v) ? skv__reallocarray(l->items, l->n + 1, sizeof(*ni))
                           : NULL;
    int rc = ni ? 0 : skv__err(err, SKV_ENOMEM, "plugin config: out of memory");
    if (ni)
        l->items = ni;
    bool known = false;
    for (size_t i = 0; !rc && allowed[i]; i++)
        known = known || strcmp(allowed[i], k) == 0;
    if (!rc && !known)
        rc = skv__err(err, SKV_EINVAL, "plugin '%s' config: unknown key '%s'",
                      plugin, k);
    if (!rc && skv__kv_get(l, k))
        rc = skv__err(err, SKV_EINVAL, "plugin '%s' config: key '%s' given "
                      "twice", plugin, k);
    if (rc) {
        skv__free(k);
        skv__free(v);
        return rc;
    }
    l->items[l->n].key = k;
    l->items[l->n].value = v;
    l->n++;
    return 0;
}

int skv__kv_parse(skv__kvlist *out, const char *text,
                  const char *const *allowed, const char *plugin,
                  skv_error *err)
{
    out->items = NULL;
    out->n = 0;
    const char *p = text ? text : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *q = p;
        while (q < p + len && isspace((unsigned char)*q))
            q++;
        /* An empty entry is an error, except after a final ',' or when
         * only spaces remain. */
        if (q < p + len || end) {
            int rc = kv_add(out, p, len, allowed, plugin, err);
            if (rc) {
                skv__kv_free(out);
                return rc;
            }
        }
        p = end ? end + 1 : p + len;
    }
    return 0;
}

const char *skv__kv_get(const skv__kvlist *l, const char *key)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return l->items[i].value;
    return NULL;
}

int skv__kv_list_item(char *buf, size_t bufsz, const char *value, size_t i)
{
    const char *p = value;
    for (size_t k = 0; k < i; k++) {
        const char *c = strchr(p, ':');
        if (!c)
            break; /* the last element repeats */
        p = c + 1;
    }
    const char *c = strchr(p, ':');
    size_t len = c ? (size_t)(c - p) : strlen(p);
    if (len >= bufsz)
        return SKV_ERANGE;
    memcpy(buf, p, len);
    buf[len] = '\0';
    return 0;
}

int skv__kv_uint(uint64_t *out, const char *value, const char *key,
                 const char *plugin, skv_error *err)
{
    char *end;
    if (!value || !isdigit((unsigned char)value[0]))
        return skv__err(err, SKV_EINVAL, "plugin '%s' config: %s='%s' is not "
                        "a non-negative integer", plugin, key,
                        value ? value : "");
    unsigned long long v = strtoull(value, &end, 10);
    if (*end || v > INT32_MAX)
        return skv__err(err, SKV_EINVAL, "plugin '%s' config: %s='%s' is not "
                        "an integer up to %d", plugin, key, value, INT32_MAX);
    *out = v;
    return 0;
}

int skv__kv_bool(bool *out, const char *value, const char *key,
                 const char *plugin, skv_error *err)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < SKV__ARRAY_LEN(yes); i++) {
        if (strcmp(value, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcmp(value, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return skv__err(err, SKV_EINVAL, "plugin '%s' config: %s='%s' is not a "
                    "boolean (1/0, true/false, yes/no, on/off)", plugin, key,
                    value);
}
