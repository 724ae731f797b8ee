/* bench_cgroup: cost of a container's cgroup on this host, per phase:
 * create (every hierarchy) + apply limits, add a process, kill + destroy.
 * A forked child waits inside the cgroup so the kill path does real work.
 *
 *   bench_cgroup [RUNS]     (default 200; needs root and a cgroupfs)
 *
 * Prints median and p99 per phase in microseconds, then one JSON line.
 * SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "skv_cgroup.h"
#include "skv_internal.h"

enum { PH_CREATE, PH_ADD, PH_DESTROY, PH_TOTAL, PH_N };
static const char *const ph_name[PH_N] = {"create+apply", "add_pid",
                                           "kill+destroy", "total"};

static long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static int one_run(long t[PH_N], int i)
{
    skv_error e = SKV_ERROR_INIT;
    skv_cgroup_config cfg = {SKV_CGROUP_MODE_AUTO, "skv-bench", false};
    skv_cgroup_limits lim = {.cpus = "0", .mems = "0", .cpu = 1000,
                             .memory_bytes = 64 << 20, .pids_max = 64};
    char name[32];
    snprintf(name, sizeof(name), "b%d-%d", (int)getpid(), i);
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    skv_cgroup *cg = NULL;
    long t0 = now_ns();
    int rc = skv__cgroup_create(&cg, &cfg, name, &e);
    if (rc == 0)
        rc = skv__cgroup_apply(cg, &lim, &e);
    long t1 = now_ns();
    if (rc == 0)
        rc = skv__cgroup_add_pid(cg, child, &e);
    long t2 = now_ns();
    if (cg && skv__cgroup_destroy(cg, rc ? NULL : &e) < 0 && rc == 0)
        rc = -1;
    long t3 = now_ns();
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    skv__cgroup_free(cg);
    if (rc != 0) {
        fprintf(stderr, "bench_cgroup: %s\n", e.message);
        return 1;
    }
    t[PH_CREATE] = t1 - t0;
    t[PH_ADD] = t2 - t1;
    t[PH_DESTROY] = t3 - t2;
    t[PH_TOTAL] = t3 - t0;
    return 0;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    skv_cgroup_mode mode;
    skv_error e = SKV_ERROR_INIT;
    if (runs < 1 || geteuid() != 0 || skv__cgroup_detect(&mode, &e) < 0) {
        printf("bench_cgroup: skipped (needs root, a cgroupfs and RUNS >= 1) %s\n",
               e.message);
        printf("{\"bench\":\"cgroup\",\"skipped\":true}\n");
        return 0;
    }
    long *t = calloc((size_t)runs * PH_N, sizeof(long));
    if (!t)
        return 1;
    for (int i = 0; i < runs; i++)
        if (one_run(t + (size_t)i * PH_N, i))
            return 1;
    double med[PH_N], p99[PH_N];
    long *col = calloc((size_t)runs, sizeof(long));
    for (int p = 0; p < PH_N && col; p++) {
        for (int i = 0; i < runs; i++)
            col[i] = t[(size_t)i * PH_N + p];
        qsort(col, (size_t)runs, sizeof(long), cmp_long);
        med[p] = col[runs / 2] / 1000.0;
        p99[p] = col[(runs * 99) / 100 < runs ? (runs * 99) / 100 : runs - 1] / 1000.0;
        printf("%-14s median %9.1f us   p99 %9.1f us\n", ph_name[p], med[p], p99[p]);
    }
    printf("{\"bench\":\"cgroup\",\"mode\":\"%s\",\"runs\":%d,"
           "\"create_apply_median_us\":%.1f,\"add_pid_median_us\":%.1f,"
           "\"kill_destroy_median_us\":%.1f,\"total_median_us\":%.1f,"
           "\"total_p99_us\":%.1f}\n",
           skv__cgroup_mode_name(mode), runs, med[PH_CREATE], med[PH_ADD],
           med[PH_DESTROY], med[PH_TOTAL], p99[PH_TOTAL]);
    free(col);
    free(t);
    /* The shared parent is left by destroy (other containers use it). */
    return 0;
}
