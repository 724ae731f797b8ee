/* Fixture of the storage suite: a loopback btrfs image made for the test
 * (truncate + mkfs.btrfs + mount -o loop + quota enable), built by an
 * unchecked fixture in the runner process, so its teardown (umount, which
 * also frees the auto-clearing loop device, and rm) runs even when a test
 * failed. Header-only so other suites' builds do not link it.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_STORAGE_FIXTURE_H
#define SKV_STORAGE_FIXTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char stfx_dir[PATH_MAX], stfx_img[PATH_MAX], stfx_mnt[PATH_MAX];
static const char *stfx_skip;

#define STFX_REQUIRE()                                                         \
    do {                                                                       \
        if (stfx_skip) {                                                       \
            fprintf(stderr, "SKIP %s: %s\n", __func__, stfx_skip);             \
            return;                                                            \
        }                                                                      \
    } while (0)

static int stfx_sh(const char *fmt, const char *a)
{
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof(cmd), fmt, a);
    return system(cmd);
}

/* An image of `size` (e.g. "3G", sparse) with btrfs quotas on. */
static inline void stfx_setup_size(const char *size)
{
    stfx_skip = NULL;
    stfx_dir[0] = '\0';
    if (geteuid() != 0) {
        stfx_skip = "needs root (loop devices, mounts, quotas)";
        return;
    }
    if (system("command -v mkfs.btrfs >/dev/null && command -v btrfs "
               ">/dev/null") != 0) {
        stfx_skip = "needs mkfs.btrfs and btrfs (Debian package btrfs-progs)";
        return;
    }
    snprintf(stfx_dir, sizeof(stfx_dir), "/tmp/skv-st-%ld-XXXXXX",
             (long)getpid());
    if (!mkdtemp(stfx_dir)) {
        stfx_skip = "mkdtemp failed";
        return;
    }
    snprintf(stfx_img, sizeof(stfx_img), "%s/btrfs.img", stfx_dir);
    snprintf(stfx_mnt, sizeof(stfx_mnt), "%s/mnt", stfx_dir);
    mkdir(stfx_mnt, 0755);
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof(cmd),
             "truncate -s %s %s && mkfs.btrfs -q -f %s >/dev/null && "
             "mount -o loop %s %s && btrfs quota enable %s",
             size, stfx_img, stfx_img, stfx_img, stfx_mnt, stfx_mnt);
    if (system(cmd) != 0)
        stfx_skip = "could not make, mount or quota-enable a loopback btrfs "
                    "(kernel without btrfs or loop devices?)";
}

static inline void stfx_setup(void)
{
    stfx_setup_size("3G");
}

static inline void stfx_teardown(void)
{
    if (!stfx_dir[0])
        return;
    /* Busy only if a test left something open: retry lazily. */
    if (stfx_sh("mountpoint -q %s", stfx_mnt) == 0 &&
        stfx_sh("umount %s", stfx_mnt) != 0)
        stfx_sh("umount -l %s", stfx_mnt);
    /* The kernel frees an auto-clearing loop device asynchronously after
     * the umount: wait for it (up to 5 s). */
    for (int i = 0; i < 50 && stfx_sh("losetup -j %s | grep -q .", stfx_img)
                                      == 0; i++)
        usleep(100000);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", stfx_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "storage fixture: could not remove %s\n", stfx_dir);
    stfx_dir[0] = '\0';
}

#endif
