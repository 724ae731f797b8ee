/* Helpers shared by the exec suites (native and OCI): reading an exec's
 * output with a deadline, and looking at a process through /proc.
 * Header-only, like rt_fixture.h.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_EXEC_FIXTURE_H
#define SKV_EXEC_FIXTURE_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Read fd (non-blocking) until EOF or 20 s; NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    time_t end = time(NULL) + 20;
    while (got + 1 < n && time(NULL) < end) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 200);
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r == 0 || (r < 0 && errno == EIO)) /* EIO: terminal hung up */
            break;
        if (r > 0)
            got += (size_t)r;
    }
    buf[got] = '\0';
    return got;
}

/* Read until `want` shows up in the output (terminal), 20 s at most. */
static bool read_until(int fd, char *buf, size_t n, const char *want)
{
    size_t got = 0;
    time_t end = time(NULL) + 20;
    buf[0] = '\0';
    while (!strstr(buf, want) && got + 1 < n && time(NULL) < end) {
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 200);
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0 || errno == EIO)
            break;
        buf[got] = '\0';
    }
    return strstr(buf, want) != NULL;
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

static void read_proc(int64_t pid, const char *file, char *buf, size_t n)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%lld/%s", (long long)pid, file);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
    size_t got = fread(buf, 1, n - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* The value after "Key:" in /proc/PID/status. */
static void status_field(int64_t pid, const char *key, char *out, size_t n)
{
    char buf[8192], pat[64];
    read_proc(pid, "status", buf, sizeof(buf));
    snprintf(pat, sizeof(pat), "\n%s:", key);
    char *p = strstr(buf, pat);
    ck_assert_ptr_nonnull(p);
    p += strlen(pat);
    p += strspn(p, " \t");
    size_t len = strcspn(p, "\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

static void same_link(int64_t a, int64_t b, const char *what)
{
    char pa[64], pb[64], la[128] = "", lb[128] = "";
    snprintf(pa, sizeof(pa), "/proc/%lld/%s", (long long)a, what);
    snprintf(pb, sizeof(pb), "/proc/%lld/%s", (long long)b, what);
    ck_assert_int_gt(readlink(pa, la, sizeof(la) - 1), 0);
    ck_assert_int_gt(readlink(pb, lb, sizeof(lb) - 1), 0);
    ck_assert_msg(strcmp(la, lb) == 0, "%s: %s vs %s", what, la, lb);
}

/* Processes in init's pid namespace, other than init, that are not
 * zombies (the container's first process here reaps no orphans). */
static int count_live_in_ns(int64_t init)
{
    char want[128] = "", path[64], link[128];
    snprintf(path, sizeof(path), "/proc/%lld/ns/pid", (long long)init);
    ck_assert_int_gt(readlink(path, want, sizeof(want) - 1), 0);
    int n = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        long pid = atol(de->d_name);
        if (pid <= 0 || pid == init)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
        ssize_t len = readlink(path, link, sizeof(link) - 1);
        if (len <= 0)
            continue;
        link[len] = '\0';
        char st[16] = "";
        if (strcmp(link, want) == 0) {
            status_field(pid, "State", st, sizeof(st));
            n += st[0] != 'Z';
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* The same count once the processes have had up to 10 s to die: a
 * SIGKILLed process whose group leader is already reaped may still be on
 * its way out (slower under ASan); "left behind" means it stays. */
static int live_in_ns(int64_t init)
{
    int n = count_live_in_ns(init);
    for (int i = 0; n > 0 && i < 1000; i++) {
        usleep(10 * 1000);
        n = count_live_in_ns(init);
    }
    return n;
}

#endif
