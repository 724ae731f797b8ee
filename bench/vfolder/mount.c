/* bench/vfolder, mount part: what virtual folder mounts add to a kernel's
 * start. Per run, timed: the manager's step (skv_storage_mount_plan of
 * each folder: access to the folder, the path resolved, the target
 * checked), the agent's step (kernel.create's mounts checked again and
 * put into the container spec: skv__agent_vf_mounts, the code the agent
 * runs) and the runtime's create + start of /bin/true from a busybox
 * image, where the bind mounts happen. Runs with 0 and with N folders
 * go in pairs; the median of the pairs' differences over N is the cost
 * per folder. Needs root and /bin/busybox.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/agent/agent_internal.h"
#include "bench_vfolder.h"

typedef struct mctx {
    char root[PATH_MAX];      /* scratch: image store, runtime state */
    skv_runtime *rt;
    skv_storage_host *h;
    skv_proto_mount *m;
    int n;
} mctx;

static int make_image(mctx *c, char *images, size_t cap)
{
    char cmd[PATH_MAX * 2], tar[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "set -e; cd %s; mkdir -p rfs/bin rfs/proc "
             "rfs/sys rfs/dev rfs/tmp; chmod 1777 rfs/tmp; cp /bin/busybox "
             "rfs/bin/; ln -s busybox rfs/bin/true; tar -C rfs -cf bb.tar .",
             c->root);
    if (system(cmd) != 0)
        return -1;
    snprintf(images, cap, "%s/images", c->root);
    snprintf(tar, sizeof(tar), "%s/bb.tar", c->root);
    skv_image_store *st = NULL;
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_image_store_open(&st, images, &e);
    if (rc == 0)
        rc = skv_image_import_tar(st, "busybox", tar, &e);
    skv_image_store_free(st);
    return rc;
}

static int setup(mctx *c, const char *dir, const char *quota, int folders)
{
    char images[PATH_MAX + 16], state[PATH_MAX + 16], host[PATH_MAX + 16];
    skv_error e = SKV_ERROR_INIT;
    snprintf(c->root, sizeof(c->root), "%s/skv-bench-vfmount-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    if (!mkdtemp(c->root) || make_image(c, images, sizeof(images)))
        return -1;
    snprintf(state, sizeof(state), "%s/state", c->root);
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = state;
    o.image_dir = images;
    o.backend = "native";
    skv_storage_host_options ho;
    skv_storage_host_options_init(&ho);
    snprintf(host, sizeof(host), "%s/mounthost", dir);
    mkdir(host, 0755);
    ho.root = host;
    if (skv_storage_quota_parse(quota, &ho.quota, &e) ||
        skv_runtime_open(&c->rt, &o, &e) ||
        skv_storage_host_open(&c->h, &ho, &e))
        bv_die("mount bench setup", &e);
    c->n = folders;
    c->m = calloc((size_t)folders, sizeof(*c->m));
    for (int i = 0; i < folders; i++) {
        char name[32];
        snprintf(name, sizeof(name), "m%d", i);
        if (skv_storage_folder_create(c->h, name, 0, 0, 0, &e))
            bv_die("folder", &e);
        c->m[i].folder = strdup(name);
        c->m[i].target = malloc(64);
        snprintf(c->m[i].target, 64, "/home/work/m%d", i);
        c->m[i].source = malloc(SKV_STORAGE_PATH_MAX);
    }
    return 0;
}

/* The manager's step: plan each mount (fills source). */
static void plan(mctx *c, int n)
{
    skv_error e = SKV_ERROR_INIT;
    for (int i = 0; i < n; i++) {
        skv_storage_mount p;
        if (skv_storage_mount_plan(c->h, c->m[i].folder, c->m[i].target,
                                   false, &p, &e))
            bv_die("mount plan", &e);
        snprintf(c->m[i].source, SKV_STORAGE_PATH_MAX, "%s", p.source);
    }
}

/* One kernel start with n folders: ms from the plan to start's return. */
static double one(mctx *c, int n)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    skv_proto_kernel_create req = {0};
    const char *argv[] = {"/bin/true"};
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    double t0 = bv_now_s();
    plan(c, n);
    req.mounts = c->m;
    req.n_mounts = (size_t)n;
    if (skv_container_spec_new(&s, "vfm", &e) ||
        skv_container_spec_set_image(s, "busybox", &e) ||
        skv_container_spec_set_argv(s, 1, argv, &e) ||
        skv__agent_vf_mounts(s, &req, &e) || skv_runtime_create(c->rt, s, &e)
        || skv_runtime_start(c->rt, "vfm", &e))
        bv_die("kernel start", &e);
    double t1 = bv_now_s();
    if (skv_runtime_wait(c->rt, "vfm", 10000, &st, &e) ||
        skv_runtime_destroy(c->rt, "vfm", 0, &e) || st.exit_code != 0)
        bv_die("kernel end", &e);
    skv_container_spec_free(s);
    return (t1 - t0) * 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void teardown(mctx *c)
{
    skv_error e = SKV_ERROR_INIT;
    char cmd[PATH_MAX + 32];
    for (int i = 0; i < c->n; i++) {
        skv_storage_folder_delete(c->h, c->m[i].folder, NULL, 0, &e);
        free(c->m[i].folder);
        free(c->m[i].target);
        free(c->m[i].source);
    }
    free(c->m);
    skv_storage_trash_purge(c->h, NULL, &e);
    skv_storage_host_close(c->h);
    skv_runtime_free(c->rt);
    snprintf(cmd, sizeof(cmd), "rm -rf --one-file-system %s", c->root);
    if (system(cmd) != 0)
        fprintf(stderr, "vfolder: could not remove %s\n", c->root);
}

int bv_mount_run(const char *dir, const char *quota, int folders, int runs,
                 bv_mount *out, char *why, size_t cap)
{
    if (geteuid() != 0 || access("/bin/busybox", X_OK) != 0) {
        snprintf(why, cap, "the mount figure needs root and /bin/busybox");
        return -1;
    }
    mctx c = {0};
    if (setup(&c, dir, quota, folders) != 0) {
        snprintf(why, cap, "could not build the busybox image");
        return -1;
    }
    double *t0 = calloc((size_t)runs * 3, sizeof(double));
    double *tn = t0 + runs, *d = tn + runs;
    one(&c, folders); /* warm: image unpacked, caches filled */
    /* Pairs run back to back, the order alternating, so drift (other
     * load on the machine) hits both sides of a pair alike: the median
     * of the pairs' differences, not the difference of two medians. */
    for (int i = 0; i < runs; i++) {
        if (i % 2) {
            tn[i] = one(&c, folders);
            t0[i] = one(&c, 0);
        } else {
            t0[i] = one(&c, 0);
            tn[i] = one(&c, folders);
        }
        d[i] = tn[i] - t0[i];
    }
    qsort(t0, (size_t)runs, sizeof(double), cmp_d);
    qsort(tn, (size_t)runs, sizeof(double), cmp_d);
    qsort(d, (size_t)runs, sizeof(double), cmp_d);
    out->folders = folders;
    out->runs = runs;
    out->base_ms = t0[runs / 2];
    out->with_ms = tn[runs / 2];
    out->per_folder_ms = d[runs / 2] / folders;
    free(t0);
    teardown(&c);
    return 0;
}
