/* bench/manager: one cluster (scratch directory + real sokovan-manager).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_BENCH_MANAGER_CLUSTER_H
#define SKV_BENCH_MANAGER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bench_manager.h"

typedef struct bm_cluster {
    struct e2e_cluster *g;
    pid_t pid;                       /* the manager */
    const char *sock, *data, *endpoint, *ak, *sk;
    char why[768];
} bm_cluster;

int bm_cluster_start(bm_cluster *c, const char *bin, const bm_opts *o);
bool bm_cluster_alive(bm_cluster *c);
void bm_cluster_log_tail(bm_cluster *c, char *out, size_t cap);
void bm_cluster_stop(bm_cluster *c);
/* The daemons' directory, as the end-to-end suite finds it. */
int bm_find_bin(char *out, size_t cap, const char *build);

#endif
