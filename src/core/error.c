/* Error codes, names and the skv_error detail object.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "skv_internal.h"

struct err_desc {
    int code;
    const char *name;
    const char *text;
};

static const struct err_desc err_table[] = {
    {SKV_OK, "SKV_OK", "success"},
    {SKV_EINVAL, "SKV_EINVAL", "invalid argument"},
    {SKV_ENOMEM, "SKV_ENOMEM", "out of memory"},
    {SKV_ERANGE, "SKV_ERANGE", "value out of range"},
    {SKV_ENOENT, "SKV_ENOENT", "not found"},
    {SKV_EEXIST, "SKV_EEXIST", "already exists"},
    {SKV_ENOSPC, "SKV_ENOSPC", "insufficient resources"},
    {SKV_EIO, "SKV_EIO", "input/output error"},
    {SKV_EPROTO, "SKV_EPROTO", "malformed encoded data"},
    {SKV_EVERSION, "SKV_EVERSION", "version mismatch"},
    {SKV_ENOTSUP, "SKV_ENOTSUP", "not supported"},
    {SKV_EPERM, "SKV_EPERM", "operation not permitted"},
    {SKV_EBUSY, "SKV_EBUSY", "resource busy"},
    {SKV_ESTATE, "SKV_ESTATE", "invalid state for this operation"},
    {SKV_ETIMEDOUT, "SKV_ETIMEDOUT", "timed out"},
    {SKV_EAUTH, "SKV_EAUTH", "authentication failed"},
    {SKV_ESYS, "SKV_ESYS", "system call failed"},
    {SKV_ECANCELED, "SKV_ECANCELED", "operation cancelled"},
};

static const struct err_desc *err_find(int code)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(err_table); i++)
        if (err_table[i].code == code)
            return &err_table[i];
    return NULL;
}

const char *skv_strerror(int code)
{
    const struct err_desc *d = err_find(code);
    return d ? d->text : "unknown error";
}

const char *skv_err_name(int code)
{
    const struct err_desc *d = err_find(code);
    return d ? d->name : "SKV_E?";
}

void skv_error_clear(skv_error *err)
{
    if (!err)
        return;
    err->code = 0;
    err->sys_errno = 0;
    err->message[0] = '\0';
}

int skv__verr(skv_error *err, int code, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->sys_errno = 0;
    if (fmt)
        vsnprintf(err->message, sizeof(err->message), fmt, ap);
    else
        snprintf(err->message, sizeof(err->message), "%s", skv_strerror(code));
    return code;
}

int skv__err(skv_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    skv__verr(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int skv__err_sys(skv_error *err, int errnum, const char *fmt, ...)
{
    if (!err)
        return SKV_ESYS;
    va_list ap;
    va_start(ap, fmt);
    skv__verr(err, SKV_ESYS, fmt, ap);
    va_end(ap);
    err->sys_errno = errnum;
    size_t len = strlen(err->message);
    snprintf(err->message + len, sizeof(err->message) - len, ": %s",
             strerror(errnum));
    return SKV_ESYS;
}

void skv__err_prefix(skv_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char prefix[SKV_ERROR_MESSAGE_MAX];
    char old[SKV_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof(old));
    snprintf(err->message, sizeof(err->message), "%s: %s", prefix, old);
}
