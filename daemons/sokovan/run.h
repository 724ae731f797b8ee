/* sokovan run's state, shared by cmd_run.c (flags) and run_job.c (job
 * files): one set of option handlers for both.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_RUN_H
#define SOKOVAN_RUN_H

#include <stdbool.h>

#include "cli.h"
#include "jobfile.h"

enum { O_CPU = 1, O_MEM, O_GPU, O_GPUS, O_SLOT, O_CSIZE, O_CMODE, O_RG,
       O_PROJECT, O_PRIO, O_TYPE, O_NAME, O_ENV, O_TOKEN, O_WAIT, O_PORT,
       O_CONSTRAINT, O_DEPENDS, O_ESTDUR, O_PREEMPT, O_NOPREEMPT, O_FILE,
       O_NOTBEFORE, O_MAXLIFE, O_MOUNT, O_SERVICE, O_NUMA };

/* One kernel's (or a group of identical kernels') resources. */
typedef struct run_kernel {
    skv_slots *slots;
    int has_gpu, has_gpus, has_cpu;
    const char *role;           /* job files: "main" or "sub" */
    const char *image;          /* job files: this group's image */
    uint32_t count;
} run_kernel;

typedef struct run_args {
    skv_proto_session_submit sub;
    run_kernel top;             /* the flags' (every kernel's) resources */
    run_kernel *groups;         /* a job file's kernels: entries */
    size_t n_groups;
    cli_strv command;
    cli_strv deps;              /* --depends-on */
    skv_proto_kv *env;
    size_t n_env;
    skv_proto_kv *cons;         /* --constraint */
    size_t n_cons;
    int wait, csize_given;
    char token[64];
    cli_job job;                /* owns the job file's strings */
    cli_strv services;          /* --service NAME=PORT[/http|/tcp] */
} run_args;

extern const cli_opt cli_run_opts[];
/* One option's value into a (flags and job-file keys alike). */
int cli_run_take(cli *c, run_args *a, int id, const char *val);
/* A kernel group's resource option (cpu, mem, gpu, gpus, slot). */
int cli_run_take_slot(cli *c, run_kernel *k, int id, const char *val);
/* --mount NAME[:/path][:ro|:rw] (run_mount.c). */
int cli_run_take_mount(cli *c, skv_proto_session_submit *s, const char *val);
void cli_run_mounts_free(skv_proto_session_submit *s);
/* -f FILE: read it and apply its keys in file order. */
int cli_run_apply_job(cli *c, run_args *a, const char *path);

#endif
