/* kernel.destroy: the manager has recorded the exit (or wants the kernel
 * gone). The logs are moved aside (kept for `sokovan logs` after the end),
 * the container destroyed, the resources released and the record removed;
 * an unknown kernel is acknowledged too (idempotent).
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_internal.h"

int skv__agent_ack(skv_agent *a, uint64_t id, const char *message,
                   int64_t now_ms, skv_error *err)
{
    skv_proto_ack m = {(char *)message};
    return skv__agent_emit(a, SKV_PROTO_RESPONSE, id, SKV_PROTO_ACK, &m,
                           now_ms, err);
}

/* A kernel still running at destroy (no grace, or out of it) is killed
 * here and its status read, so the manager records how it ended (killed
 * by a signal) instead of a bare "destroyed". SIGKILL ends a container
 * within milliseconds; the bound keeps a stuck one from holding the loop. */
static void end_now(skv_agent *a, skv__agent_kernel *k, int64_t now_ms)
{
    const char *id = k->req.kernel_id;
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    if (k->exited || skv_runtime_signal(a->rt, id, SIGKILL, NULL) != 0 ||
        skv_runtime_wait(a->rt, id, 2000, &st, NULL) != 0)
        return;
    k->exited = true;
    k->st = st;
    k->finished_ms = now_ms;
}

int skv__agent_destroy_finish(skv_agent *a, skv__agent_kernel *k,
                              int64_t now_ms, skv_error *err)
{
    uint64_t req = k->destroy_req;
    const char *id = k->req.kernel_id;
    skv_error e = SKV_ERROR_INIT;
    end_now(a, k, now_ms);
    /* An exit seen while destroying has not been reported yet: it goes
     * before the ack, which the manager reads as "ended". */
    if (k->exited && !k->exit_sent && a->registered)
        skv__agent_send_exit(a, k, now_ms, NULL);
    skv__agent_keep_logs(a, id);
    /* Already stopped or out of grace: kill what is left at once. */
    int rc = skv_runtime_destroy(a->rt, id, 0, &e);
    if (rc) {
        skv__log(SKV_LOG_ERROR, "agent", "kernel %s: destroy failed: %s", id,
                 e.message);
        k->destroying = false;
        return skv__agent_reply_error(a, req, rc, e.message, "kernel.destroy",
                                      now_ms);
    }
    skv__agent_kernel_release(a, k);
    skv__agent_net_release(a, k);
    skv__agent_record_remove(a, id);
    skv__agent_kernel_remove(a, k);
    /* Pruning lists the whole logs directory: the minute tick does it. */
    return skv__agent_ack(a, req, NULL, now_ms, err);
}

/* A running kernel with a grace period: SIGTERM now, the rest on a tick. */
static bool stop_gently(skv_agent *a, skv__agent_kernel *k, uint32_t grace_ms,
                        int64_t now_ms)
{
    if (k->exited || grace_ms == 0 ||
        skv_runtime_signal(a->rt, k->req.kernel_id, SIGTERM, NULL) != 0)
        return false;
    k->destroying = true;
    k->destroy_deadline = now_ms + grace_ms;
    return true;
}

int skv__agent_destroy_start(skv_agent *a, skv__agent_kernel *k,
                             uint64_t req, uint32_t grace, int64_t now_ms,
                             skv_error *err)
{
    if (k->destroying) {
        /* Asked again: the latest request gets the final answer, and a
         * shorter grace period (a forced terminate) brings the end
         * forward. */
        uint64_t old = k->destroy_req;
        k->destroy_req = req;
        int rc = skv__agent_ack(a, old, "superseded by a later "
                                "kernel.destroy", now_ms, err);
        if (now_ms + (int64_t)grace < k->destroy_deadline)
            k->destroy_deadline = now_ms + (int64_t)grace;
        if (rc == 0 && grace == 0)
            rc = skv__agent_destroy_finish(a, k, now_ms, err);
        return rc;
    }
    k->destroy_req = req;
    /* Its execs end now, saying why, rather than die with the container. */
    skv__agent_execs_end(a, k->req.kernel_id, "the kernel ended", true,
                         now_ms);
    if (stop_gently(a, k, grace, now_ms))
        return 0;
    return skv__agent_destroy_finish(a, k, now_ms, err);
}

/* The kernel's container is still being created in the background: the
 * destroy runs once it is (or is answered when creation failed). */
static int defer(skv_agent *a, skv__agent_job *j, uint64_t req,
                 uint32_t grace, int64_t now_ms, skv_error *err)
{
    int rc = 0;
    if (j->destroy_wanted) {
        rc = skv__agent_ack(a, j->destroy_req, "superseded by a later "
                            "kernel.destroy", now_ms, err);
        grace = grace < j->destroy_grace ? grace : j->destroy_grace;
    }
    j->destroy_wanted = true;
    j->destroy_req = req;
    j->destroy_grace = grace;
    return rc;
}

int skv__agent_on_destroy(skv_agent *a, const skv_proto_envelope *env,
                          int64_t now_ms, skv_error *err)
{
    skv_proto_kernel_destroy m;
    memset(&m, 0, sizeof(m));
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_proto_body_decode(&m, SKV_PROTO_KERNEL_DESTROY, env->body,
                                   env->body_len, &e);
    if (rc) {
        skv__agent_reply_error(a, env->request_id, rc, e.message,
                               env->type_name, now_ms);
        return skv__err(err, rc, "%s", e.message);
    }
    skv__agent_kernel *k = skv__agent_kernel_find(a, m.kernel_id);
    skv__agent_job *j = k ? NULL : skv__agent_job_find(a, m.kernel_id);
    uint32_t grace = m.grace_ms;
    skv_proto_body_free(SKV_PROTO_KERNEL_DESTROY, &m);
    if (j)
        return defer(a, j, env->request_id, grace, now_ms, err);
    if (!k)
        return skv__agent_ack(a, env->request_id, "unknown kernel", now_ms,
                              err);
    return skv__agent_destroy_start(a, k, env->request_id, grace, now_ms,
                                    err);
}

typedef struct kept {
    char *name;
    int64_t mtime_ms;
} kept;

static int by_age(const void *x, const void *y)
{
    const kept *p = x, *q = y;
    return p->mtime_ms < q->mtime_ms ? 1 : p->mtime_ms > q->mtime_ms ? -1 : 0;
}

void skv__agent_prune_logs(skv_agent *a, int64_t now_ms)
{
    char *dir = skv__agent_path(a, "logs");
    DIR *d = dir ? opendir(dir) : NULL;
    kept *files = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        struct stat st;
        char *p = de->d_name[0] == '.' ? NULL
                                       : skv__asprintf("%s/%s", dir,
                                                       de->d_name);
        if (!p || stat(p, &st) < 0) {
            skv__free(p);
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            kept *g = skv__reallocarray(files, cap, sizeof(*files));
            if (!g) {
                skv__free(p);
                break;
            }
            files = g;
        }
        files[n++] = (kept){p, (int64_t)st.st_mtime * 1000};
    }
    if (d)
        closedir(d);
    if (files)
        qsort(files, n, sizeof(*files), by_age);
    /* Newest first: keep two streams for each of the newest kernels. */
    for (size_t i = 0; i < n; i++) {
        if (i >= 2 * SKV__AGENT_LOG_KEEP ||
            now_ms - files[i].mtime_ms > SKV__AGENT_LOG_RETENTION_MS)
            unlink(files[i].name);
        skv__free(files[i].name);
    }
    skv__free(files);
    skv__free(dir);
    a->next_prune = now_ms + 60 * 1000;
}
