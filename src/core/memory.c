/* The allocator hook: every allocation in the library goes through here.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"

static void *default_malloc(size_t size, void *payload)
{
    SKV__UNUSED(payload);
    return malloc(size);
}

static void *default_realloc(void *ptr, size_t size, void *payload)
{
    SKV__UNUSED(payload);
    return realloc(ptr, size);
}

static void default_free(void *ptr, void *payload)
{
    SKV__UNUSED(payload);
    free(ptr);
}

static skv_allocator current = {
    SKV_ALLOCATOR_VERSION, default_malloc, default_realloc, default_free, NULL,
};

int skv_set_allocator(const skv_allocator *alloc, skv_error *err)
{
    if (!alloc) {
        current.malloc_fn = default_malloc;
        current.realloc_fn = default_realloc;
        current.free_fn = default_free;
        current.payload = NULL;
        return 0;
    }
    if (alloc->version != SKV_ALLOCATOR_VERSION)
        return skv__err(err, SKV_EVERSION,
                        "allocator version %u, library expects %u",
                        alloc->version, SKV_ALLOCATOR_VERSION);
    if (!alloc->malloc_fn || !alloc->realloc_fn || !alloc->free_fn)
        return skv__err(err, SKV_EINVAL,
                        "allocator needs malloc_fn, realloc_fn and free_fn");
    current = *alloc;
    return 0;
}

void *skv__malloc(size_t size)
{
    return current.malloc_fn(size ? size : 1, current.payload);
}

void *skv__calloc(size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total))
        return NULL;
    void *p = skv__malloc(total);
    if (p)
        memset(p, 0, total ? total : 1);
    return p;
}

void *skv__realloc(void *ptr, size_t size)
{
    return current.realloc_fn(ptr, size ? size : 1, current.payload);
}

void *skv__reallocarray(void *ptr, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total))
        return NULL;
    return skv__realloc(ptr, total);
}

void skv__free(void *ptr)
{
    if (ptr)
        current.free_fn(ptr, current.payload);
}

void skv_free(void *ptr)
{
    skv__free(ptr);
}

char *skv__strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = skv__malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *skv__strdup(const char *s)
{
    return skv__strndup(s, strlen(s));
}

/* For the per-session copies of ids and states into fixed buffers: an
 * snprintf per copy added up to ~1 % of the manager's CPU. */
size_t skv__strlcpy(char *dst, const char *src, size_t cap)
{
    size_t len = strlen(src);
    if (cap) {
        size_t n = len < cap ? len : cap - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

char *skv__asprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = NULL;
    if (n >= 0 && (p = skv__malloc((size_t)n + 1)) != NULL)
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return p;
}
