/* OCI backend internals: JSON writer and config.json generation.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_OCI_H
#define SKV_RT_OCI_H

#include "native.h"

typedef struct skv__json {
    char *buf;
    size_t len, cap;
    bool need_comma;
    bool failed;        /* an allocation failed; buf is incomplete */
} skv__json;

void skv__json_key(skv__json *j, const char *key);
/* key NULL inside arrays. bracket '{' or '['. */
void skv__json_open(skv__json *j, const char *key, char bracket);
void skv__json_close(skv__json *j, char bracket);
void skv__json_str(skv__json *j, const char *key, const char *value);
void skv__json_int(skv__json *j, const char *key, int64_t value);
void skv__json_bool(skv__json *j, const char *key, bool value);
/* A value already in JSON (a span checked by a reader), copied as is. */
void skv__json_raw(skv__json *j, const char *key, const char *text,
                   size_t len);
void skv__json_free(skv__json *j);

/* config.json for spec: root at rootfs_dir, cgroup at cgroups_path. */
int skv__rt_oci_config(skv__json *j, const skv_container_spec *spec,
                       const native_plan *p, const char *rootfs_dir,
                       const char *cgroups_path, skv_error *err);

#endif /* SKV_RT_OCI_H */
