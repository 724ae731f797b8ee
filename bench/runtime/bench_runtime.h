/* bench/runtime: the parts in other files.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_BENCH_RUNTIME_H
#define SKV_BENCH_RUNTIME_H

#include <stdbool.h>

/* docker.c: whether `docker info` answers (a daemon is running). */
bool skvb_docker_available(void);
/* Import the rootfs tarball as an image, time `runs` x `docker run --rm
 * IMAGE /bin/true`, remove the image. 0 with the figures, or -1. */
int skvb_docker_run(const char *tar, int runs, double *median, double *p99);

#endif
