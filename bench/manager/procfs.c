/* The manager's process figures from /proc/<pid>: CPU time (utime + stime
 * of /proc/<pid>/stat, all its threads) and resident memory (VmHWM, the
 * peak, and VmRSS of /proc/<pid>/status), the time its threads spent
 * runnable but waiting for a CPU (/proc/<pid>/task/<tid>/schedstat: on a
 * shared machine that is time other work took); and the load average,
 * recorded with each run because the benchmark machine may be shared.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_manager.h"

int64_t bm_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cpu_seconds(pid_t pid, double *out)
{
    char p[64], buf[2048];
    snprintf(p, sizeof(p), "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: fields count from
     * the last ')'. utime and stime are fields 14 and 15. */
    const char *s = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
                     "%llu %llu", &ut, &st) != 2)
        return -1;
    *out = (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

static int status_mb(pid_t pid, const char *key, double *out)
{
    char p[64], line[256];
    size_t kl = strlen(key);
    snprintf(p, sizeof(p), "/proc/%ld/status", (long)pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return -1;
    int rc = -1;
    unsigned long long kb;
    while (rc && fgets(line, sizeof(line), f))
        if (!strncmp(line, key, kl) && line[kl] == ':' &&
            sscanf(line + kl + 1, "%llu", &kb) == 1) {
            *out = (double)kb / 1024.0;
            rc = 0;
        }
    fclose(f);
    return rc;
}

/* Sum of the second field (ns waiting on a run queue) over the threads. */
static double runq_wait_s(pid_t pid)
{
    char dir[64], p[320];
    unsigned long long run, wait, sum = 0;
    snprintf(dir, sizeof(dir), "/proc/%ld/task", (long)pid);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(p, sizeof(p), "%s/%s/schedstat", dir, de->d_name);
        FILE *f = fopen(p, "r");
        if (f && fscanf(f, "%llu %llu", &run, &wait) == 2)
            sum += wait;
        if (f)
            fclose(f);
    }
    if (d)
        closedir(d);
    return (double)sum / 1e9;
}

int bm_proc_read(pid_t pid, bm_proc *out)
{
    memset(out, 0, sizeof(*out));
    if (cpu_seconds(pid, &out->cpu_s) || status_mb(pid, "VmHWM", &out->hwm_mb)
        || status_mb(pid, "VmRSS", &out->rss_mb))
        return -1;
    out->runq_wait_s = runq_wait_s(pid);
    return 0;
}

double bm_loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}
