/* The manager's storage_host values: "NAME=PATH[,quota=KIND][,shared=B]"
 * (repeatable; the first is the default host of new folders). KIND is
 * auto, none, btrfs, xfs or ext4 (auto: from the filesystem; a filesystem
 * without usable quotas stops the manager unless quota=none); shared
 * (default yes) says the path is mounted at the same place on the agents
 * (a network filesystem), which multi-node sessions' mounts need.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "sokovan/storage.h"
#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

static int opt(skvd_storage_host *h, const char *kv, char *why, size_t wl)
{
    if (strncmp(kv, "quota=", 6) == 0) {
        skv_storage_quota_kind k;
        skv_error e = SKV_ERROR_INIT;
        if (skv_storage_quota_parse(kv + 6, &k, &e))
            return WHY("%s", e.message);
        snprintf(h->quota, sizeof h->quota, "%s", kv + 6);
        return 0;
    }
    if (!strcmp(kv, "shared=yes") || !strcmp(kv, "shared=no")) {
        h->shared = kv[7] == 'y';
        return 0;
    }
    return WHY("'%s': options are quota=auto|none|btrfs|xfs|ext4 and "
               "shared=yes|no", kv);
}

int skvd_storage_host_parse(skvd_storage_host *h, const char *v, char *why,
                            size_t wl)
{
    memset(h, 0, sizeof *h);
    snprintf(h->quota, sizeof h->quota, "auto");
    h->shared = true;
    const char *eq = strchr(v, '=');
    size_t nl = eq ? (size_t)(eq - v) : 0;
    if (!eq || nl == 0 || nl >= sizeof h->name)
        return WHY("'%s': want NAME=PATH[,quota=KIND][,shared=yes|no]", v);
    memcpy(h->name, v, nl);
    const char *p = eq + 1, *comma = strchr(p, ',');
    size_t pl = comma ? (size_t)(comma - p) : strlen(p);
    if (pl == 0 || pl >= sizeof h->root || p[0] != '/')
        return WHY("'%s': the path must be absolute", v);
    memcpy(h->root, p, pl);
    while (comma) {
        char kv[64];
        const char *s = comma + 1;
        comma = strchr(s, ',');
        size_t l = comma ? (size_t)(comma - s) : strlen(s);
        if (l >= sizeof kv)
            return WHY("'%s': option too long", v);
        memcpy(kv, s, l);
        kv[l] = 0;
        if (opt(h, kv, why, wl))
            return -1;
    }
    return 0;
}
