/* Fixture shared by the runtime and image suites (header-only, so other
 * modules' test builds do not link it): a busybox rootfs tarball and an
 * image store in a scratch directory, built by an unchecked fixture. That
 * runs in the runner process, so its teardown also runs when a test failed,
 * and destroys whatever containers the tests left behind.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_FIXTURE_H
#define SKV_RT_FIXTURE_H

#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sokovan/image.h"
#include "sokovan/runtime.h"

#define SKV_RTFX_REQUIRE()                                                     \
    do {                                                                       \
        if (skv_rtfx_skip) {                                                   \
            fprintf(stderr, "%s: skipped: %s\n", __func__, skv_rtfx_skip);     \
            return;                                                            \
        }                                                                      \
    } while (0)

static char skv_rtfx_root[PATH_MAX];
static char skv_rtfx_tarball[PATH_MAX];
static char skv_rtfx_images[PATH_MAX];
static const char *skv_rtfx_skip;

static const char *const applets[] = {
    "sh", "echo", "cat", "sleep", "id", "hostname", "ls", "env", "head",
    "tr", "grep", "mount", "mkdir", "wc", "true", "false", "stat", "touch",
    "kill", "unshare", "cut", "test", "printf", "dd", "tty", "stty",
    "sha256sum", "readlink"};

static int build_tarball(void)
{
    char dir[PATH_MAX], path[PATH_MAX], cmd[PATH_MAX * 2];
    snprintf(dir, sizeof(dir), "%s/bbroot", skv_rtfx_root);
    snprintf(path, sizeof(path), "%s/bin", dir);
    if (mkdir(dir, 0755) < 0 || mkdir(path, 0755) < 0)
        return -1;
    snprintf(cmd, sizeof(cmd), "cp /bin/busybox %s/bin/busybox", dir);
    if (system(cmd) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(applets) / sizeof(applets[0]); i++) {
        snprintf(path, sizeof(path), "%s/bin/%s", dir, applets[i]);
        if (symlink("busybox", path) < 0)
            return -1;
    }
    snprintf(path, sizeof(path), "%s/etc", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/root", dir);
    mkdir(path, 0700);
    snprintf(skv_rtfx_tarball, sizeof(skv_rtfx_tarball), "%s/busybox.tar",
             skv_rtfx_root);
    snprintf(cmd, sizeof(cmd), "tar -C %s -cf %s .", dir, skv_rtfx_tarball);
    return system(cmd) == 0 ? 0 : -1;
}

static inline void skv_rtfx_setup(bool import)
{
    skv_rtfx_skip = NULL;
    if (geteuid() != 0) {
        skv_rtfx_skip = "needs root (namespaces, mounts, cgroups)";
        return;
    }
    if (access("/bin/busybox", X_OK) != 0) {
        skv_rtfx_skip = "needs /bin/busybox (Debian package busybox-static)";
        return;
    }
    snprintf(skv_rtfx_root, sizeof(skv_rtfx_root), "/tmp/skv-rt-%ld-XXXXXX",
             (long)getpid());
    if (!mkdtemp(skv_rtfx_root) || build_tarball() < 0) {
        skv_rtfx_skip = "could not build the busybox rootfs tarball";
        return;
    }
    snprintf(skv_rtfx_images, sizeof(skv_rtfx_images), "%s/images",
             skv_rtfx_root);
    if (!import)
        return;
    skv_image_store *st = NULL;
    if (skv_image_store_open(&st, skv_rtfx_images, NULL) != 0 ||
        skv_image_import_tar(st, "busybox", skv_rtfx_tarball, NULL) != 0)
        skv_rtfx_skip = "could not import the busybox image";
    skv_image_store_free(st);
}

static inline const char *skv_rtfx_state(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/state-%s", skv_rtfx_root, name);
    return buf;
}

/* Destroys every container a test left in one state directory. */
static void destroy_all(const char *state_dir)
{
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = state_dir;
    o.allow_process_backend = true;
    skv_runtime *rt = NULL;
    if (skv_runtime_open(&rt, &o, NULL) != 0)
        return;
    char **ids = NULL;
    size_t n = 0;
    if (skv_runtime_list(rt, &ids, &n, NULL) == 0) {
        for (size_t i = 0; i < n; i++)
            skv_runtime_destroy(rt, ids[i], 0, NULL);
        skv_runtime_list_free(ids, n);
    }
    skv_runtime_free(rt);
}

static inline void skv_rtfx_teardown(void)
{
    if (!skv_rtfx_root[0])
        return;
    DIR *d = opendir(skv_rtfx_root);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, "state-", 6) != 0)
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/%s", skv_rtfx_root, de->d_name);
        destroy_all(path);
    }
    if (d)
        closedir(d);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", skv_rtfx_root);
    if (system(cmd) != 0)
        fprintf(stderr, "rt fixture: could not remove %s\n", skv_rtfx_root);
    skv_rtfx_root[0] = '\0';
}

static inline void skv_rtfx_setup_import(void)
{
    skv_rtfx_setup(true);
}

#endif
