/* bench/runtime: create + start + wait + destroy of /bin/true from a busybox
 * image, for the native backend and, in the same run, runc through the oci
 * backend (same spec, same image), and `docker run --rm` of the same root
 * file system when a Docker daemon is running (docker.c). Prints median
 * and p99 per backend and ends with one JSON line. Needs root and
 * /bin/busybox (busybox-static).
 *   usage: runtime [--native-only] [runs]     (default 200 runs)
 * --native-only skips runc and Docker (for quick iterations; the JSON then
 * has -1 for runc and null for docker). Each backend also prints the median of every phase.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_runtime.h"
#include "sokovan/image.h"
#include "sokovan/runtime.h"

static char root[PATH_MAX];

static int make_image(char *images, size_t n)
{
    char cmd[PATH_MAX * 2];
    snprintf(cmd, sizeof(cmd),
             "set -e; cd %s; mkdir -p rfs/bin rfs/proc rfs/sys rfs/dev rfs/tmp; "
             "chmod 1777 rfs/tmp; cp /bin/busybox rfs/bin/; "
             "for a in sh true; do ln -s busybox rfs/bin/$a; done; "
             "tar -C rfs -cf bb.tar .", root);
    if (system(cmd) != 0)
        return -1;
    snprintf(images, n, "%s/images", root);
    skv_image_store *st = NULL;
    char tar[PATH_MAX];
    snprintf(tar, sizeof(tar), "%s/bb.tar", root);
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_image_store_open(&st, images, &e);
    if (rc == 0)
        rc = skv_image_import_tar(st, "busybox", tar, &e);
    if (rc)
        fprintf(stderr, "image: %s\n", e.message);
    skv_image_store_free(st);
    return rc;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { PH_CREATE, PH_START, PH_WAIT, PH_DESTROY, PH_N };
static const char *const ph_name[PH_N] = {"create", "start", "wait",
                                          "destroy"};

/* One cycle; returns its duration in ms, or a negative value on error.
 * ph[] receives the duration of each phase. */
static double cycle(skv_runtime *rt, skv_container_spec *s, double ph[PH_N])
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    double t[PH_N + 1];
    t[0] = now_ms();
    int rc = skv_runtime_create(rt, s, &e);
    t[1] = now_ms();
    if (rc == 0)
        rc = skv_runtime_start(rt, "b", &e);
    t[2] = now_ms();
    if (rc == 0)
        rc = skv_runtime_wait(rt, "b", 10000, &st, &e);
    t[3] = now_ms();
    if (rc == 0)
        rc = skv_runtime_destroy(rt, "b", 0, &e);
    t[4] = now_ms();
    if (rc) {
        fprintf(stderr, "cycle: %s\n", e.message);
        return -1;
    }
    for (int i = 0; i < PH_N; i++)
        ph[i] = t[i + 1] - t[i];
    return st.exit_code == 0 ? t[PH_N] - t[0] : -1;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_d);
    return v[n / 2];
}

static int run(const char *backend, const char *images, int runs,
               double *median, double *p99)
{
    char state[PATH_MAX];
    snprintf(state, sizeof(state), "%s/state-%s", root, backend);
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = state;
    o.image_dir = images;
    o.backend = backend;
    skv_runtime *rt = NULL;
    skv_container_spec *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    const char *argv[] = {"/bin/true"};
    if (skv_runtime_open(&rt, &o, &e) || skv_container_spec_new(&s, "b", &e) ||
        skv_container_spec_set_image(s, "busybox", &e) ||
        skv_container_spec_set_argv(s, 1, argv, &e)) {
        fprintf(stderr, "%s: %s\n", backend, e.message);
        return -1;
    }
    double *t = calloc((size_t)runs * (PH_N + 1), sizeof(double));
    double *ph = t ? t + runs : NULL;
    int rc = t ? 0 : -1;
    for (int i = 0; rc == 0 && i < runs; i++) {
        double one[PH_N];
        if ((t[i] = cycle(rt, s, one)) < 0)
            rc = -1;
        for (int k = 0; rc == 0 && k < PH_N; k++)
            ph[k * runs + i] = one[k];
    }
    if (rc == 0) {
        printf("%-7s phases (median ms):", backend);
        for (int k = 0; k < PH_N; k++)
            printf(" %s=%.2f", ph_name[k], median_of(ph + k * runs, runs));
        printf("\n");
        qsort(t, (size_t)runs, sizeof(double), cmp_d);
        *median = t[runs / 2];
        *p99 = t[(runs * 99) / 100 < runs ? (runs * 99) / 100 : runs - 1];
        printf("%-7s runs=%d median=%.2f ms p99=%.2f ms\n", backend, runs,
               *median, *p99);
    }
    free(t);
    skv_container_spec_free(s);
    skv_runtime_free(rt);
    return rc;
}

int main(int argc, char **argv)
{
    bool native_only = false;
    int runs = 200;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--native-only] [runs]  (default 200)\n"
                   "create+start+wait+destroy of /bin/true from a busybox "
                   "image;\nnative, runc (oci backend) and docker (when its daemon "
                   "runs) in the same run. "
                   "Needs root and /bin/busybox.\n", argv[0]);
            return 0;
        }
        if (strcmp(argv[i], "--native-only") == 0)
            native_only = true;
        else
            runs = atoi(argv[i]);
    }
    if (runs < 1 || geteuid() != 0 || access("/bin/busybox", X_OK) != 0) {
        fprintf(stderr, "runtime bench: needs root, /bin/busybox, runs >= 1\n");
        return 2;
    }
    /* tmpfs: the state and scratch files are small and short-lived; on a
     * disk file system with online discard, unlinking dominates. */
    snprintf(root, sizeof(root), "%s/skv-bench-rt-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(root))
        return 1;
    char images[PATH_MAX], cmd[PATH_MAX + 16];
    double nm = 0, np = 0, rm = -1, rp = -1;
    int rc = make_image(images, sizeof(images));
    if (rc == 0)
        rc = run("native", images, runs, &nm, &np);
    if (rc == 0 && !native_only && access("/usr/sbin/runc", X_OK) == 0)
        rc = run("oci", images, runs, &rm, &rp);
    char docker[96] = "null", tar[PATH_MAX + 8];
    double dm = 0, dp = 0;
    snprintf(tar, sizeof(tar), "%s/bb.tar", root);
    if (rc == 0 && !native_only && skvb_docker_available()) {
        rc = skvb_docker_run(tar, runs, &dm, &dp);
        snprintf(docker, sizeof(docker), "{\"median_ms\":%.3f,"
                 "\"p99_ms\":%.3f}", dm, dp);
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);
    if (rc)
        return 1;
    printf("{\"bench\":\"runtime\",\"runs\":%d,\"native_median_ms\":%.3f,"
           "\"native_p99_ms\":%.3f,\"runc_median_ms\":%.3f,"
           "\"runc_p99_ms\":%.3f,\"docker\":%s}\n", runs, nm, np, rm, rp,
           docker);
    return 0;
}
