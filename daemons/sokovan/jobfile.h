/* A job file (sokovan run -f) as (key, value, line) items; see jobfile.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_JOBFILE_H
#define SOKOVAN_JOBFILE_H

#include <stddef.h>

#include "cli.h"

typedef struct cli_job_item {
    char *key;          /* as written: "cpu", "cluster_size", "env" ... */
    char *value;        /* scalar text; "K=V" for a map entry */
    size_t line;        /* 1-based */
} cli_job_item;

typedef struct cli_job_items {
    cli_job_item *v;
    size_t n;
    size_t line;        /* where a kernel group starts */
} cli_job_items;

typedef struct cli_job {
    const char *path;
    cli_job_items top;          /* everything but kernels */
    cli_job_items *kernels;     /* one per `kernels:` entry */
    size_t n_kernels;
} cli_job;

/* Read PATH ("-" for stdin); a usage error names FILE:LINE. */
int cli_job_load(cli *c, const char *path, cli_job *job);
void cli_job_free(cli_job *job);

#endif
