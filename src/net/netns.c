/* A netlink socket inside another network namespace. A netlink socket
 * stays bound to the namespace it was created in, so a helper thread
 * enters the target namespace (setns affects only that thread), opens the
 * socket and ends; the caller's thread never leaves its namespace.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

#include "net_internal.h"

typedef struct opener {
    int ns_fd;
    skv__nl *nl;
    int rc;
    skv_error err;
} opener;

static void *open_in_ns(void *arg)
{
    opener *o = arg;
    if (setns(o->ns_fd, CLONE_NEWNET) < 0)
        o->rc = skv__err_sys(&o->err, errno, "entering the network "
                             "namespace");
    else
        o->rc = skv__nl_open(o->nl, &o->err);
    return NULL;
}

int skv__net_ns_open(int64_t pid, const char *ns_path, int *fd,
                     skv_error *err)
{
    char rel[64], path[PATH_MAX];
    const char *shown = ns_path;
    if (pid > 0) {
        snprintf(rel, sizeof(rel), "/proc/%" PRId64 "/ns/net", pid);
        int rc = skv__sys_path(path, sizeof(path), rel, err);
        if (rc < 0)
            return rc;
        shown = rel;
    } else {
        snprintf(path, sizeof(path), "%s", ns_path);
    }
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    if (*fd < 0)
        return errno == ENOENT
                   ? skv__err(err, SKV_ENOENT, "network namespace '%s' does "
                              "not exist", shown)
                   : skv__err_sys(err, errno, "opening network namespace "
                                  "'%s'", shown);
    return 0;
}

int skv__nl_open_netns(skv__nl *nl, int ns_fd, skv_error *err)
{
    opener o = {.ns_fd = ns_fd, .nl = nl, .rc = 0, .err = SKV_ERROR_INIT};
    pthread_t t;
    int e = pthread_create(&t, NULL, open_in_ns, &o);
    if (e != 0)
        return skv__err_sys(err, e, "starting the namespace helper thread");
    pthread_join(t, NULL);
    if (o.rc < 0 && err)
        *err = o.err;
    return o.rc;
}
