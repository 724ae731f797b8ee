/*
 * Internal helpers shared by all modules (not installed).
 * Names are skv__*: visible across the library's objects, hidden from users.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SKV_INTERNAL_H
#define SKV_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan/common.h"

#define SKV__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define SKV__UNUSED(x) ((void)(x))

/* ---- errors: fill *err (may be NULL) and return code ------------------ */
int skv__err(skv_error *err, int code, const char *fmt, ...) SKV_PRINTF(3, 4);
int skv__verr(skv_error *err, int code, const char *fmt, va_list ap);
/* SKV_ESYS with errno captured and strerror appended to the message. */
int skv__err_sys(skv_error *err, int errnum, const char *fmt, ...)
    SKV_PRINTF(3, 4);
/* Prefix an existing message with context ("parsing 'cpu': ..."). */
void skv__err_prefix(skv_error *err, const char *fmt, ...) SKV_PRINTF(2, 3);

/* ---- memory: always through the installed allocator ------------------- */
void *skv__malloc(size_t size);
void *skv__calloc(size_t count, size_t size); /* overflow-checked, zeroed */
void *skv__realloc(void *ptr, size_t size);
/* realloc of an array with overflow check; NULL on overflow/ENOMEM. */
void *skv__reallocarray(void *ptr, size_t count, size_t size);
void skv__free(void *ptr);
char *skv__strdup(const char *s);
char *skv__strndup(const char *s, size_t n);
/* snprintf(dst, cap, "%s", src) without the formatter: copies what fits,
 * always terminates (cap > 0), returns strlen(src). src must not be NULL. */
size_t skv__strlcpy(char *dst, const char *src, size_t cap);
char *skv__asprintf(const char *fmt, ...) SKV_PRINTF(1, 2);

/* ---- logging ----------------------------------------------------------- */
bool skv__log_enabled(skv_log_level level);
void skv__log(skv_log_level level, const char *module, const char *fmt, ...)
    SKV_PRINTF(3, 4);

/* ---- system root: every /sys, /proc, /dev, cgroupfs access ------------- */
/* Write "<sysroot><abs_path>" into buf. SKV_ERANGE when it does not fit. */
int skv__sys_path(char *buf, size_t bufsz, const char *abs_path, skv_error *err);
/* Read a whole small file (up to bufsz-1 bytes), NUL-terminated, trailing
 * newline kept. *len_out may be NULL. */
int skv__sys_read(const char *abs_path, char *buf, size_t bufsz,
                  size_t *len_out, skv_error *err);
/* Read a whole file of any size into a new buffer (free with skv__free). */
int skv__sys_read_alloc(const char *abs_path, char **out, size_t *len_out,
                        skv_error *err);
/* Write a string to an existing file (cgroup/sysfs style: one write). */
int skv__sys_write(const char *abs_path, const char *value, skv_error *err);
/* Whether the path exists under the system root. */
bool skv__sys_exists(const char *abs_path);

/* ---- checked integer arithmetic --------------------------------------- */
static inline bool skv__add_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_add_overflow(a, b, r);
}
static inline bool skv__mul_overflow_i64(int64_t a, int64_t b, int64_t *r)
{
    return __builtin_mul_overflow(a, b, r);
}

#endif /* SKV_INTERNAL_H */
