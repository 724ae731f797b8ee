/* What the README's demo (examples/local-cluster.sh, `make demo`) leaves on
 * the host, for e2e_cli's cli_demo: the processes whose command line names
 * its state directory, the processes and cgroups of one session's kernels,
 * mounts, network namespaces. Plain scans of /proc and /sys/fs/cgroup, so
 * they see what a user would, whatever the daemons think they did.
 * Included by test_e2e_cli.c after e2e_cli_fixture.h.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TESTS_E2E_DEMO_H
#define SKV_TESTS_E2E_DEMO_H

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

/* Up to cap - 1 bytes of a file, NUL bytes turned into spaces (cmdline). */
static inline size_t demo_read(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    return n;
}

/* Live processes whose /proc/PID/<file> contains text; the first pid's
 * command line goes to first (when not NULL) for failure messages. A zombie
 * has an empty cmdline and no cgroup, so it does not count: it holds
 * nothing. */
static inline int demo_procs(const char *file, const char *text, char *first,
                             size_t cap)
{
    char p[64], buf[4096];
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)de->d_name[0]) ||
            atol(de->d_name) == (long)getpid())
            continue;
        snprintf(p, sizeof(p), "/proc/%s/%s", de->d_name, file);
        if (demo_read(p, buf, sizeof(buf)) == 0 || !strstr(buf, text))
            continue;
        if (n++ == 0 && first) {
            snprintf(p, sizeof(p), "/proc/%s/cmdline", de->d_name);
            demo_read(p, buf, sizeof(buf));
            snprintf(first, cap, "pid %s: %s", de->d_name, buf);
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* Entries of dir whose name starts with prefix. */
static inline int demo_count_prefix(const char *dir, const char *prefix)
{
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL)
        n += strncmp(de->d_name, prefix, strlen(prefix)) == 0;
    if (d)
        closedir(d);
    return n;
}

/* Cgroups named "<prefix>..." under sokovan/ in every hierarchy: each v1
 * controller and the unified one of a hybrid host (/sys/fs/cgroup/X/
 * sokovan), or the root of a v2 host (/sys/fs/cgroup/sokovan). */
static inline int demo_cgroups(const char *prefix)
{
    char p[PATH_MAX];
    int n = demo_count_prefix("/sys/fs/cgroup/sokovan", prefix);
    DIR *d = opendir("/sys/fs/cgroup");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "/sys/fs/cgroup/%s/sokovan", de->d_name);
        n += demo_count_prefix(p, prefix);
    }
    if (d)
        closedir(d);
    return n;
}

/* Lines of /proc/self/mountinfo that mention text. */
static inline int demo_mounts(const char *text)
{
    char line[4096];
    int n = 0;
    FILE *f = fopen("/proc/self/mountinfo", "r");
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return n;
}

/* The names under /run/netns, space-separated, sorted by the shell. */
static inline void demo_netns(char *out, size_t cap)
{
    skv_test_sh_output("ls /run/netns 2>/dev/null | sort | tr '\\n' ' '", out,
                       cap);
}

#endif
