/* bench/runtime, Docker part: `docker run --rm` of /bin/true from the same
 * busybox root file system, imported as an image, when a Docker daemon
 * answers `docker info`. Timed from fork of the CLI to its exit, which is
 * what a user of Docker waits for (the CLI returns after the container is
 * removed with --rm).
 * SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_runtime.h"

#define IMAGE "skv-bench-busybox:runtime"

static int quiet(const char *cmd)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s >/dev/null 2>&1", cmd);
    return system(buf) == 0 ? 0 : -1;
}

bool skvb_docker_available(void)
{
    return quiet("command -v docker && docker info") == 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One `docker run --rm`; its duration in ms, or -1. */
static double one_run(void)
{
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        int nul = open("/dev/null", O_RDWR);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
            dup2(nul, 2) < 0)
            _exit(127);
        execlp("docker", "docker", "run", "--rm", "--network", "none", IMAGE,
               "/bin/true", (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0)
        return -1;
    return now_ms() - t0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int skvb_docker_run(const char *tar, int runs, double *median, double *p99)
{
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "docker import %s " IMAGE, tar);
    if (quiet(cmd) < 0) {
        fprintf(stderr, "docker: cannot import %s\n", tar);
        return -1;
    }
    double *t = calloc((size_t)runs, sizeof(*t));
    int rc = t ? 0 : -1;
    for (int i = 0; rc == 0 && i < runs; i++)
        if ((t[i] = one_run()) < 0) {
            fprintf(stderr, "docker: run %d failed\n", i);
            rc = -1;
        }
    if (rc == 0) {
        qsort(t, (size_t)runs, sizeof(*t), cmp_d);
        *median = t[runs / 2];
        *p99 = t[(runs * 99) / 100 < runs ? (runs * 99) / 100 : runs - 1];
        printf("%-7s runs=%d median=%.2f ms p99=%.2f ms\n", "docker", runs,
               *median, *p99);
    }
    free(t);
    if (quiet("docker rmi " IMAGE) < 0)
        fprintf(stderr, "docker: could not remove image " IMAGE "\n");
    return rc;
}
