/* Runtime handle: options, the state directory, and dispatch of each call
 * to the backend recorded in the container's state file (so one handle can
 * restore containers made by any built-in backend).
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_internal.h"

#define DEFAULT_GRACE_MS 10000u

static const skv_runtime_backend *builtin(const char *name)
{
    if (!name || strcmp(name, "native") == 0)
        return skv_runtime_backend_native();
    if (strcmp(name, "oci") == 0)
        return skv_runtime_backend_oci();
    if (strcmp(name, "process") == 0)
        return skv_runtime_backend_process();
    return NULL;
}

static int pick_backend(skv_runtime *rt, const skv_runtime_options *o,
                        skv_error *err)
{
    const skv_runtime_backend *b = o->custom_backend;
    if (!b && !(b = builtin(o->backend)))
        return skv__err(err, SKV_EINVAL, "runtime backend '%s' is unknown "
                        "(native, oci, process)", o->backend);
    if (b->abi_version != SKV_RUNTIME_BACKEND_ABI)
        return skv__err(err, SKV_EVERSION, "runtime backend '%s' has ABI %u, "
                        "the library %u", b->name ? b->name : "?",
                        b->abi_version, SKV_RUNTIME_BACKEND_ABI);
    if (!b->name || !b->create || !b->start || !b->signal || !b->wait ||
        !b->stats || !b->destroy || !b->restore)
        return skv__err(err, SKV_EINVAL, "runtime backend '%s' lacks a "
                        "function", b->name ? b->name : "?");
    if (b == skv_runtime_backend_process() && !o->allow_process_backend)
        return skv__err(err, SKV_EPERM, "the process backend has no "
                        "isolation; set allow_process_backend to use it");
    rt->backend = b;
    return 0;
}

static int copy_opts(skv_runtime *rt, const skv_runtime_options *o,
                     skv_error *err)
{
    rt->opts = *o;
    rt->state_dir = skv__strdup(o->state_dir);
    rt->oci_runtime = skv__strdup(o->oci_runtime ? o->oci_runtime
                                                 : "/usr/sbin/runc");
    rt->image_dir = o->image_dir ? skv__strdup(o->image_dir) : NULL;
    if (!rt->state_dir || !rt->oci_runtime || (o->image_dir && !rt->image_dir))
        return skv__err(err, SKV_ENOMEM, "runtime options");
    rt->opts.state_dir = rt->state_dir;
    rt->opts.image_dir = rt->image_dir;
    rt->opts.oci_runtime = rt->oci_runtime;
    rt->opts.backend = NULL;
    if (!rt->opts.stop_grace_ms)
        rt->opts.stop_grace_ms = DEFAULT_GRACE_MS;
    return 0;
}

int skv_runtime_open(skv_runtime **out, const skv_runtime_options *o,
                     skv_error *err)
{
    if (!out || !o)
        return skv__err(err, SKV_EINVAL, "out or options is NULL");
    if (o->version != SKV_RUNTIME_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "runtime options version %u, "
                        "expected %u", o->version, SKV_RUNTIME_OPTIONS_VERSION);
    int rc = skv__rt_check_abs_path(o->state_dir, "state_dir", err);
    if (rc == 0 && o->oci_runtime)
        rc = skv__rt_check_abs_path(o->oci_runtime, "oci_runtime", err);
    skv_runtime *rt = rc == 0 ? skv__calloc(1, sizeof(*rt)) : NULL;
    if (rc == 0 && !rt)
        rc = skv__err(err, SKV_ENOMEM, "runtime");
    if (rc == 0)
        rc = pick_backend(rt, o, err);
    if (rc == 0)
        rc = copy_opts(rt, o, err);
    if (rc == 0 && o->image_dir)
        rc = skv_image_store_open(&rt->images, o->image_dir, err);
    struct stat st;
    bool made = rc == 0 && stat(o->state_dir, &st) < 0;
    if (made)
        rc = skv__rt_mkdir_p(o->state_dir, 0700, err);
    if (rc < 0) {
        skv_runtime_free(rt);
        return rc;
    }
    *out = rt;
    return 0;
}

void skv_runtime_free(skv_runtime *rt)
{
    if (!rt)
        return;
    skv_image_store_free(rt->images);
    skv__seccomp_prog_free(rt->default_prog);
    skv__free(rt->state_dir);
    skv__free(rt->image_dir);
    skv__free(rt->oci_runtime);
    skv__free(rt);
}

const char *skv_runtime_state_dir(const skv_runtime *rt)
{
    return rt ? rt->state_dir : NULL;
}

const skv_runtime_options *skv_runtime_get_options(const skv_runtime *rt)
{
    return rt ? &rt->opts : NULL;
}

/* <state>/<id> into buf after checking the arguments. */
static int ctr_dir(const skv_runtime *rt, const char *id, char *buf, size_t n,
                   skv_error *err)
{
    if (!rt)
        return skv__err(err, SKV_EINVAL, "runtime is NULL");
    int rc = skv__rt_check_id(id, err);
    if (rc < 0)
        return rc;
    snprintf(buf, n, "%s/%s", rt->state_dir, id);
    return 0;
}

/* Directory and backend of an existing container. */
static int lookup(skv_runtime *rt, const char *id, char *dir, size_t n,
                  const skv_runtime_backend **b, skv_error *err)
{
    int rc = ctr_dir(rt, id, dir, n, err);
    if (rc < 0)
        return rc;
    char path[PATH_MAX], name[64], *text = NULL;
    snprintf(path, sizeof(path), "%s/state", dir);
    rc = skv__rt_read_file(path, &text, NULL);
    if (rc < 0)
        return skv__err(err, SKV_ENOENT, "container '%s' does not exist", id);
    bool ok = skv__rt_kv_get(text, "backend", name, sizeof(name));
    skv__free(text);
    if (!ok)
        return skv__err(err, SKV_EPROTO, "container '%s': state file has no "
                        "backend", id);
    *b = strcmp(name, rt->backend->name) == 0 ? rt->backend : builtin(name);
    if (!*b)
        return skv__err(err, SKV_ENOTSUP, "container '%s' belongs to backend "
                        "'%s', which this handle does not have", id, name);
    return 0;
}

int skv__rt_lookup(skv_runtime *rt, const char *id, char *dir, size_t n,
                   const skv_runtime_backend **b, skv_error *err)
{
    return lookup(rt, id, dir, n, b, err);
}

int skv_runtime_create(skv_runtime *rt, const skv_container_spec *spec,
                       skv_error *err)
{
    char dir[PATH_MAX];
    if (!spec)
        return skv__err(err, SKV_EINVAL, "spec is NULL");
    int rc = ctr_dir(rt, spec->id, dir, sizeof(dir), err);
    if (rc < 0)
        return rc;
    if (mkdir(dir, 0700) < 0)
        return errno == EEXIST
                   ? skv__err(err, SKV_EEXIST, "container '%s' already exists",
                              spec->id)
                   : skv__err_sys(err, errno, "mkdir %s", dir);
    rc = rt->backend->create(rt, spec, dir, err);
    if (rc < 0) {
        skv__err_prefix(err, "container '%s'", spec->id);
        skv__rt_rm_rf(dir, NULL);
    }
    return rc;
}

int skv_runtime_start(skv_runtime *rt, const char *id, skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b;
    int rc = lookup(rt, id, dir, sizeof(dir), &b, err);
    return rc < 0 ? rc : b->start(rt, dir, err);
}

int skv_runtime_signal(skv_runtime *rt, const char *id, int sig,
                       skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b;
    if (sig <= 0 || sig >= 65)
        return skv__err(err, SKV_EINVAL, "signal %d is invalid", sig);
    int rc = lookup(rt, id, dir, sizeof(dir), &b, err);
    return rc < 0 ? rc : b->signal(rt, dir, sig, err);
}

int skv_runtime_wait(skv_runtime *rt, const char *id, int timeout_ms,
                     skv_container_status *out, skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b;
    if (!out || out->version != SKV_CONTAINER_STATUS_VERSION)
        return skv__err(err, out ? SKV_EVERSION : SKV_EINVAL,
                        "status out-parameter is NULL or of another version");
    int rc = lookup(rt, id, dir, sizeof(dir), &b, err);
    return rc < 0 ? rc : b->wait(rt, dir, timeout_ms, out, err);
}

int skv_runtime_status(skv_runtime *rt, const char *id,
                       skv_container_status *out, skv_error *err)
{
    skv_error local = SKV_ERROR_INIT;
    int rc = skv_runtime_wait(rt, id, 0, out, &local);
    if (rc == SKV_ETIMEDOUT) /* still running: that is the answer */
        return 0;
    if (rc < 0 && err)
        *err = local;
    return rc;
}

int skv_runtime_stats(skv_runtime *rt, const char *id,
                      skv_container_stats *out, skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b;
    if (!out || out->version != SKV_CONTAINER_STATS_VERSION)
        return skv__err(err, out ? SKV_EVERSION : SKV_EINVAL,
                        "stats out-parameter is NULL or of another version");
    int rc = lookup(rt, id, dir, sizeof(dir), &b, err);
    return rc < 0 ? rc : b->stats(rt, dir, out, err);
}

int skv_runtime_destroy(skv_runtime *rt, const char *id, uint32_t grace_ms,
                        skv_error *err)
{
    char dir[PATH_MAX];
    const skv_runtime_backend *b;
    int rc = lookup(rt, id, dir, sizeof(dir), &b, err);
    if (rc < 0)
        return rc;
    rc = b->destroy(rt, dir, grace_ms == UINT32_MAX ? rt->opts.stop_grace_ms
                                                    : grace_ms, err);
    if (rc == 0)
        rc = skv__rt_rm_rf(dir, err);
    return rc;
}
