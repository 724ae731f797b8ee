/* Syntax checks for names and free text sent to the admin plane.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "admin_int.h"

int skv__mgr_admin_name_check(const char *what, const char *name,
                              skv_error *err)
{
    if (!name || !name[0])
        return skv__err(err, SKV_EINVAL, "%s is missing", what);
    size_t n = strlen(name);
    if (n >= SKV__ADM_NAME_MAX)
        return skv__err(err, SKV_EINVAL, "%s '%.32s...' is %zu bytes long "
                        "(at most %d)", what, name, n, SKV__ADM_NAME_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        /* Printable ASCII without spaces: names appear in file names, CLI
         * tables and log lines unquoted. */
        if (c <= 0x20 || c >= 0x7f)
            return skv__err(err, SKV_EINVAL, "%s '%.64s': character %zu is "
                            "not printable ASCII or is a space", what, name,
                            i + 1);
    }
    return 0;
}

int skv__mgr_admin_opt_name_check(const char *what, const char *name,
                                  skv_error *err)
{
    return name && name[0] ? skv__mgr_admin_name_check(what, name, err) : 0;
}

int skv__mgr_admin_email_check(const char *email, skv_error *err)
{
    if (!email || !email[0])
        return 0;
    int rc = skv__mgr_admin_name_check("email", email, err);
    if (!rc && !strchr(email, '@'))
        rc = skv__err(err, SKV_EINVAL, "email '%s' has no '@'", email);
    return rc;
}

int skv__mgr_admin_text_check(const char *what, const char *text,
                              skv_error *err)
{
    if (!text)
        return 0;
    size_t n = strlen(text);
    if (n > 4096)
        return skv__err(err, SKV_EINVAL, "%s is %zu bytes long (at most "
                        "4096)", what, n);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)text[i] < 0x20 && text[i] != '\t')
            return skv__err(err, SKV_EINVAL, "%s: control character at "
                            "byte %zu", what, i + 1);
    return 0;
}

char *skv__mgr_admin_join(char *const *v, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *s = skv__malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (i)
            strcat(s, ",");
        strcat(s, v[i]);
    }
    return s;
}
