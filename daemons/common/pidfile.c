/* The pidfile: written at start, removed at a clean stop. A file naming a
 * live process means another instance runs with the same configuration.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "skvd.h"

#define WHY(...) (snprintf(why, wl, __VA_ARGS__), -1)

static long read_pid(const char *path)
{
    char buf[32] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    return n > 0 ? strtol(buf, NULL, 10) : 0;
}

int skvd_pidfile_write(const char *path, char *why, size_t wl)
{
    char buf[32];
    long old = read_pid(path);
    if (old > 0 && old != (long)getpid() &&
        (kill((pid_t)old, 0) == 0 || errno == EPERM))
        return WHY("pidfile %s: process %ld is running", path, old);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return WHY("pidfile %s: %s", path, strerror(errno));
    int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
    if (write(fd, buf, (size_t)n) != n) {
        int e = errno;
        close(fd);
        unlink(path);
        return WHY("pidfile %s: %s", path, strerror(e));
    }
    close(fd);
    return 0;
}

void skvd_pidfile_remove(const char *path)
{
    if (path && read_pid(path) == (long)getpid())
        unlink(path);
}
