/* Deleting a folder moves it to the trash (a rename: instant, and undoable
 * by an administrator); purging destroys trash entries for good.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "storage_internal.h"

/* <name>.<UTC stamp>.<random>: unique even for one name deleted twice in a
 * second, and sortable by deletion time per name. */
static void trash_name(const char *name, char *out, size_t cap)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    uint32_t r = 0;
    if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
        r = (uint32_t)now ^ (uint32_t)clock();
    snprintf(out, cap, "%s.%04d%02d%02dT%02d%02d%02d.%08x", name,
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, r);
}

int skv_storage_folder_delete(skv_storage_host *h, const char *name,
                              char *out, size_t cap, skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    int rc = skv__st_check_name(name, err);
    if (rc < 0)
        return rc;
    if (out && cap < SKV_STORAGE_NAME_MAX + 32)
        return skv__err(err, SKV_ERANGE, "trash name buffer is too small");
    char tn[SKV_STORAGE_NAME_MAX + 32];
    trash_name(name, tn, sizeof(tn));
    rc = skv__st_lock(h, err);
    if (rc < 0)
        return rc;
    rc = skv__st_move_name(h->folders_fd, name, h->trash_fd, tn, err);
    skv__st_unlock(h);
    if (rc == 0 && out)
        snprintf(out, cap, "%s", tn);
    return rc;
}

static int check_trash_name(const char *tn, skv_error *err)
{
    if (!tn || !*tn || tn[0] == '.' || strlen(tn) >= SKV_STORAGE_NAME_MAX + 32 ||
        strchr(tn, '/'))
        return skv__err(err, SKV_EINVAL, "trash entry '%s' is not valid",
                        tn ? tn : "(null)");
    return 0;
}

static int purge_one(const char *tn, void *ud)
{
    void **a = ud;
    skv_storage_host *h = a[0];
    return h->be->destroy(h, h->trash_fd, tn, a[1]);
}

int skv_storage_trash_purge(skv_storage_host *h, const char *tn,
                            skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    int rc = tn ? check_trash_name(tn, err) : 0;
    if (rc == 0)
        rc = skv__st_lock(h, err);
    if (rc < 0)
        return rc;
    void *a[2] = {h, err};
    rc = tn ? purge_one(tn, a)
            : skv__st_list_names(h->trash_fd, purge_one, a, err);
    skv__st_unlock(h);
    return rc;
}

int skv_storage_trash_list(skv_storage_host *h, skv_storage_name_fn fn,
                           void *ud, skv_error *err)
{
    if (!h)
        return skv__err(err, SKV_EINVAL, "storage host is NULL");
    return skv__st_list_names(h->trash_fd, fn, ud, err);
}
