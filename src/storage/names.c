/* Quota backend names (config text) and folder names.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "storage_internal.h"

static const char *const kind_names[] = {"auto", "none", "btrfs", "xfs",
                                         "ext4"};

int skv_storage_quota_parse(const char *text, skv_storage_quota_kind *out,
                            skv_error *err)
{
    for (size_t i = 0; text && out && i < SKV__ARRAY_LEN(kind_names); i++) {
        if (strcmp(text, kind_names[i]) == 0) {
            *out = (skv_storage_quota_kind)i;
            return 0;
        }
    }
    return skv__err(err, SKV_EINVAL,
                    "quota '%s' is not one of auto, none, btrfs, xfs, ext4",
                    text ? text : "(null)");
}

const char *skv_storage_quota_name(skv_storage_quota_kind kind)
{
    if ((unsigned)kind >= SKV__ARRAY_LEN(kind_names))
        return "?";
    return kind_names[kind];
}

/* Names become directory names under folders/ and trash/: a leading dot
 * would hide them and clash with our own temp names; '/' would nest. */
int skv__st_check_name(const char *name, skv_error *err)
{
    if (!name || !*name)
        return skv__err(err, SKV_EINVAL, "folder name is missing");
    size_t n = strnlen(name, SKV_STORAGE_NAME_MAX + 1);
    if (n > SKV_STORAGE_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "folder name is longer than %d",
                        SKV_STORAGE_NAME_MAX);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
            return skv__err(err, SKV_EINVAL,
                            "folder name '%s': use [A-Za-z0-9][A-Za-z0-9._-]*",
                            name);
    }
    return 0;
}
