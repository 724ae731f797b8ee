/* The "none" backend: plain directories, no limit, usage by walking.
 * Only used when configured explicitly (see host.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <sys/stat.h>

#include "storage_internal.h"

static int no_check(skv_storage_host *h, skv_error *err)
{
    SKV__UNUSED(h);
    SKV__UNUSED(err);
    return 0;
}

static int no_make(skv_storage_host *h, const char *name, skv_error *err)
{
    if (mkdirat(h->folders_fd, name, 0700) < 0)
        return skv__st_errno(err, errno, "create folder", name);
    return 0;
}

static int no_set_limit(skv_storage_host *h, int dir_fd, uint64_t bytes,
                        skv_error *err)
{
    SKV__UNUSED(dir_fd);
    if (bytes)
        return skv__err(err, SKV_ENOTSUP,
                        "storage root %s has quota=none: folders cannot be "
                        "limited", h->root);
    return 0;
}

static int no_usage(skv_storage_host *h, int dir_fd, uint64_t *used,
                    uint64_t *limit, uint64_t *id, skv_error *err)
{
    SKV__UNUSED(h);
    *limit = 0;
    *id = 0;
    return skv__st_tree_usage(dir_fd, used, err);
}

static int no_destroy(skv_storage_host *h, int parent_fd, const char *name,
                      skv_error *err)
{
    SKV__UNUSED(h);
    return skv__st_tree_remove(parent_fd, name, err);
}

const skv__st_backend skv__st_none = {
    .kind = SKV_STORAGE_QUOTA_NONE,
    .check = no_check,
    .make = no_make,
    .set_limit = no_set_limit,
    .usage = no_usage,
    .clone = NULL,
    .destroy = no_destroy,
};
