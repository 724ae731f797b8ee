/* admin.backup: an online backup of manager.db (the copy itself is the
 * store's, store/backup.c). The file is written under a temporary name,
 * synced, and linked to its final name only when complete, so a failed
 * backup leaves nothing and an existing file is never replaced. Backups
 * go to the manager's backup_dir only: an admin request must not pick
 * arbitrary paths on the manager's host (the file holds secret keys).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mgr_int.h"

#define NAME_MAX_LEN 128

static int name_check(const char *name, skv_error *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > NAME_MAX_LEN)
        return skv__err(err, SKV_EINVAL, "the file name must "
                        "have 1 to %d characters", NAME_MAX_LEN);
    if (name[0] == '.')
        return skv__err(err, SKV_EINVAL, "'%s' must not start "
                        "with '.'", name);
    for (size_t i = 0; i < n; i++) {
        char ch = name[i];
        if (!(ch >= 'a' && ch <= 'z') && !(ch >= 'A' && ch <= 'Z') &&
            !(ch >= '0' && ch <= '9') && !strchr("_.-", ch))
            return skv__err(err, SKV_EINVAL, "'%s': a file "
                            "name of letters, digits, '_', '.' and '-' (it "
                            "is written in the manager's backup_dir)", name);
    }
    return 0;
}

static int ensure_dir(const char *dir, skv_error *err)
{
    struct stat st;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return skv__err_sys(err, errno, "cannot create '%s'",
                            dir);
    if (stat(dir, &st) < 0)
        return skv__err_sys(err, errno, "'%s'", dir);
    if (!S_ISDIR(st.st_mode))
        return skv__err(err, SKV_EINVAL, "backup_dir '%s' is "
                        "not a directory", dir);
    return 0;
}

static int sync_path(const char *path, int flags, skv_error *err)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0 || fsync(fd) < 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return skv__err_sys(err, e, "sync '%s'", path);
    }
    close(fd);
    return 0;
}

/* The snapshot into tmp, a file this call created (O_EXCL). */
static int copy_into(skv__db *db, const char *tmp, skv_error *err)
{
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0600);
    if (fd < 0)
        return skv__err_sys(err, errno, "cannot create '%s'",
                            tmp);
    close(fd);
    int rc = skv__mgr_store_backup(db, tmp, err);
    if (!rc)
        rc = sync_path(tmp, O_RDONLY, err);
    return rc;
}

/* link(2) never replaces: a file that appeared meanwhile stays. */
static int publish(const char *tmp, const char *path, const char *dir,
                   uint64_t *bytes, skv_error *err)
{
    struct stat st;
    if (link(tmp, path) < 0)
        return errno == EEXIST
                   ? skv__err(err, SKV_EEXIST, "'%s' exists "
                              "(never overwritten)", path)
                   : skv__err_sys(err, errno, "'%s'", path);
    int rc = sync_path(dir, O_RDONLY | O_DIRECTORY, err);
    if (!rc && stat(path, &st) < 0)
        rc = skv__err_sys(err, errno, "'%s'", path);
    if (rc)
        unlink(path);
    else
        *bytes = (uint64_t)st.st_size;
    return rc;
}

static int backup(skv_manager *m, const char *name, char **path_out,
                  uint64_t *bytes, skv_error *err)
{
    char *path = skv__asprintf("%s/%s", m->backup_dir, name);
    char *tmp = skv__asprintf("%s/.%s.tmp.%ld", m->backup_dir, name,
                              (long)getpid());
    int rc = !path || !tmp ? skv__err(err, SKV_ENOMEM, "out of memory") : 0;
    if (!rc)
        rc = ensure_dir(m->backup_dir, err);
    if (!rc && access(path, F_OK) == 0)
        rc = skv__err(err, SKV_EEXIST, "'%s' exists (never "
                      "overwritten)", path);
    if (!rc) {
        rc = copy_into(m->store, tmp, err);
        if (!rc)
            rc = publish(tmp, path, m->backup_dir, bytes, err);
        unlink(tmp);
    }
    skv__free(tmp);
    if (rc)
        skv__free(path);
    else
        *path_out = path;
    return rc;
}

int skv__mgr_on_backup(skv_manager *m, const skv__mgr_call *c,
                       skv_error *err)
{
    const skv_proto_admin_backup *rq = c->body;
    int rc = skv_auth_may(c->who, SKV_AUTH_OP_ADMIN, NULL, err);
    if (!rc)
        rc = name_check(rq->name, err);
    skv_proto_admin_backup_reply rep = {NULL, 0};
    if (!rc)
        rc = backup(m, rq->name, &rep.path, &rep.bytes, err);
    if (rc)
        return rc;
    skv__log(SKV_LOG_INFO, "manager", "backup %s (%llu bytes) written for "
             "%s", rep.path, (unsigned long long)rep.bytes, c->who->user);
    rc = skv__mgr_reply(m, c->conn, c->req, SKV_PROTO_ADMIN_BACKUP_REPLY,
                        &rep);
    skv__free(rep.path);
    return rc;
}
