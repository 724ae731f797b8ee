/*
 * sokovan/common.h - conventions shared by every libsokovan module:
 * export macro, error codes and the skv_error detail object, the library
 * version, the allocator hook, the logger hook and the system root.
 *
 * Thread-safety: skv_set_allocator(), skv_set_logger() and skv_sysroot_set()
 * change process-wide state; call them once, before any other thread uses the
 * library (like sqlite3_config()). Everything else here is thread-safe.
 *
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_COMMON_H
#define SOKOVAN_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SKV_BUILDING_LIBRARY) && defined(__GNUC__)
#define SKV_EXTERN __attribute__((visibility("default")))
#else
#define SKV_EXTERN
#endif

#if defined(__GNUC__)
#define SKV_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define SKV_PRINTF(fmt, args)
#endif

/* ---- version ---------------------------------------------------------- */

#define SKV_VERSION_MAJOR 0
#define SKV_VERSION_MINOR 1
#define SKV_VERSION_PATCH 0
#define SKV_VERSION_STRING "0.1.0"
/* One integer, comparable: 0x00MMmmpp. */
#define SKV_VERSION_NUMBER \
    ((SKV_VERSION_MAJOR << 16) | (SKV_VERSION_MINOR << 8) | SKV_VERSION_PATCH)

/* The version of the library actually loaded (may differ from the header). */
SKV_EXTERN unsigned skv_version(void);
SKV_EXTERN const char *skv_version_string(void);

/* ---- errors ----------------------------------------------------------- */

/* Every fallible function returns 0 or one of these negative codes. */
#define SKV_OK 0
#define SKV_EINVAL (-1)    /* invalid argument or malformed input text */
#define SKV_ENOMEM (-2)    /* allocation failed */
#define SKV_ERANGE (-3)    /* value out of range, overflow or underflow */
#define SKV_ENOENT (-4)    /* named thing does not exist */
#define SKV_EEXIST (-5)    /* named thing already exists */
#define SKV_ENOSPC (-6)    /* not enough resources to satisfy a request */
#define SKV_EIO (-7)       /* file or device I/O failed */
#define SKV_EPROTO (-8)    /* malformed or untrusted encoded data */
#define SKV_EVERSION (-9)  /* ABI, option-struct or protocol version mismatch */
#define SKV_ENOTSUP (-10)  /* not supported on this host or build */
#define SKV_EPERM (-11)    /* not permitted (privileges, authorization) */
#define SKV_EBUSY (-12)    /* resource in use */
#define SKV_ESTATE (-13)   /* operation invalid in the object's current state */
#define SKV_ETIMEDOUT (-14) /* deadline passed */
#define SKV_EAUTH (-15)    /* authentication failed */
#define SKV_ESYS (-16)     /* a system call failed; skv_error.sys_errno says why */
#define SKV_ECANCELED (-17) /* operation cancelled */
#define SKV_ERR_MIN (-17)  /* lowest defined code; grows downwards */

#define SKV_ERROR_MESSAGE_MAX 256

/* Optional detail for a failed call. Pass NULL when you do not want it.
 * Filled only when the call fails; message is always NUL-terminated. */
typedef struct skv_error {
    int code;                               /* same as the return value */
    int sys_errno;                          /* errno for SKV_ESYS/EIO, else 0 */
    char message[SKV_ERROR_MESSAGE_MAX];    /* human-readable, names the culprit */
} skv_error;

#define SKV_ERROR_INIT {0, 0, {0}}

/* "invalid argument" etc.; never NULL, also for unknown codes. */
SKV_EXTERN const char *skv_strerror(int code);
/* "SKV_EINVAL" etc.; "SKV_E?" for unknown codes. */
SKV_EXTERN const char *skv_err_name(int code);
/* Reset an error object to the no-error state. Accepts NULL. */
SKV_EXTERN void skv_error_clear(skv_error *err);

/* ---- memory ----------------------------------------------------------- */

#define SKV_ALLOCATOR_VERSION 1

/* Every allocation the library makes goes through these functions. */
typedef struct skv_allocator {
    unsigned version; /* SKV_ALLOCATOR_VERSION */
    void *(*malloc_fn)(size_t size, void *payload);
    void *(*realloc_fn)(void *ptr, size_t size, void *payload);
    void (*free_fn)(void *ptr, void *payload);
    void *payload;
} skv_allocator;

/* Install an allocator (NULL restores malloc/realloc/free). The structure is
 * copied. Must not be changed while any library object is alive. */
SKV_EXTERN int skv_set_allocator(const skv_allocator *alloc, skv_error *err);
/* Free memory the library returned through a plain out-pointer (strings,
 * encoded buffers). Accepts NULL. */
SKV_EXTERN void skv_free(void *ptr);

/* ---- logging ---------------------------------------------------------- */

typedef enum skv_log_level {
    SKV_LOG_TRACE = 0,
    SKV_LOG_DEBUG = 1,
    SKV_LOG_INFO = 2,
    SKV_LOG_WARN = 3,
    SKV_LOG_ERROR = 4
} skv_log_level;

/* module: short name of the library module ("slots", "sched", ...).
 * msg: one formatted line without trailing newline; valid during the call. */
typedef void (*skv_log_fn)(skv_log_level level, const char *module,
                           const char *msg, void *payload);

/* The library never prints; it hands log lines to this callback, if any.
 * Messages below min_level are not even formatted. fn NULL disables logging. */
SKV_EXTERN void skv_set_logger(skv_log_fn fn, skv_log_level min_level,
                               void *payload);
SKV_EXTERN const char *skv_log_level_name(skv_log_level level);

/* ---- system root ------------------------------------------------------ */

/* Every access to /sys, /proc, /dev and the cgroup filesystems is resolved
 * under this directory, so tests can point the library at a fake tree.
 * NULL or "/" restores the real root. The path must be absolute. */
SKV_EXTERN int skv_sysroot_set(const char *root, skv_error *err);
/* The current root ("/" by default). */
SKV_EXTERN const char *skv_sysroot_get(void);

#ifdef __cplusplus
}
#endif

#endif /* SOKOVAN_COMMON_H */
