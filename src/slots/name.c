/* Slot kinds and slot-name syntax.
 * SPDX-License-Identifier: Apache-2.0 */
#include "slots_internal.h"

const char *skv_slot_kind_name(skv_slot_kind kind)
{
    switch (kind) {
    case SKV_SLOT_COUNT:
        return "count";
    case SKV_SLOT_BYTES:
        return "bytes";
    case SKV_SLOT_UNIQUE:
        return "unique";
    }
    return "?";
}

void skv__slots_name_display(char out[SKV__SLOT_DISPLAY_MAX], const char *s,
                             size_t len)
{
    /* Untrusted bytes (wire data) must not reach logs raw; long names are
     * cut with "..." so the message still names the culprit's start. */
    size_t max = SKV__SLOT_DISPLAY_MAX - 1, n = len < max ? len : max;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[i] = (c >= 0x20 && c < 0x7f && c != '\'') ? (char)c : '?';
    }
    if (len > max)
        memcpy(out + max - 3, "...", 3);
    out[n] = '\0';
}

static bool name_first(char c)
{
    return c >= 'a' && c <= 'z';
}

static bool name_rest(char c)
{
    return name_first(c) || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

int skv__slots_name_check_n(const char *name, size_t len, int code,
                            skv_error *err)
{
    char shown[SKV__SLOT_DISPLAY_MAX];
    if (len == 0)
        return skv__err(err, code, "empty slot name");
    skv__slots_name_display(shown, name, len);
    if (len >= SKV_SLOT_NAME_MAX)
        return skv__err(err, code, "slot name '%s' is longer than %d characters",
                        shown, SKV_SLOT_NAME_MAX - 1);
    bool dotted = false, part_start = true;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c == '.' && !dotted && !part_start) {
            dotted = part_start = true;
            continue;
        }
        if (part_start ? !name_first(c) : !name_rest(c))
            return skv__err(err, code,
                            "slot name '%s': invalid character '%c' at "
                            "position %zu (expected [a-z][a-z0-9_-]* with at "
                            "most one '.')",
                            shown, shown[i], i);
        part_start = false;
    }
    if (part_start)
        return skv__err(err, code, "slot name '%s' ends with '.'", shown);
    return 0;
}

int skv_slot_name_check(const char *name, skv_error *err)
{
    if (!name)
        return skv__err(err, SKV_EINVAL, "slot name is NULL");
    return skv__slots_name_check_n(name, strlen(name), SKV_EINVAL, err);
}

skv_slot_kind skv__slots_default_kind(const char *name, size_t len)
{
    if (len == 3 && memcmp(name, "mem", 3) == 0)
        return SKV_SLOT_BYTES;
    if (len > 4 && memcmp(name + len - 4, ".mem", 4) == 0)
        return SKV_SLOT_BYTES;
    return SKV_SLOT_COUNT;
}
