/* One cluster of the benchmark: a scratch directory, the real
 * sokovan-manager started from the build directory with its own data dir
 * (any --store and extra arguments passed through), and its teardown. Process handling is tests/e2e_cluster.h's
 * (pid files under the scratch directory, so nothing outlives the run).
 * SPDX-License-Identifier: Apache-2.0 */
#include "../../tests/e2e_cluster.h"
#include "cluster.h"

static int wait_files(bm_cluster *c)
{
    e2e_cluster *g = c->g;
    for (int64_t end = e2e_now_ms() + 120000; e2e_now_ms() < end;) {
        if (!e2e_alive(g->mgr)) {
            char tail[600];
            e2e_log_tail(g, "manager", tail, sizeof(tail));
            g->mgr = -1;
            return e2e_fail(g, "sokovan-manager exited at start: %s%s", tail,
                            "");
        }
        char ak[PATH_MAX + 16];
        snprintf(ak, sizeof(ak), "%s/admin.key", g->data);
        if (e2e_file_exists(g->sock) && e2e_file_exists(ak))
            return 0;
        e2e_sleep_ms(20);
    }
    return e2e_fail(g, "sokovan-manager did not create its socket and "
                    "admin.key within 120 s%s%s", "", "");
}

static int start_manager(bm_cluster *c, const bm_opts *o)
{
    e2e_cluster *g = c->g;
    char exe[PATH_MAX + 32], key[PATH_MAX + 16];
    char *argv[48];
    int k = 0;
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", g->bin);
    argv[k++] = exe;
    argv[k++] = "--data-dir";
    argv[k++] = g->data;
    argv[k++] = "--listen";
    argv[k++] = g->sock;
    argv[k++] = "--tcp";
    argv[k++] = "none";
    if (o->store) {
        argv[k++] = "--store";
        argv[k++] = (char *)o->store;
    }
    for (int i = 0; i < o->n_mgr_args; i++)
        argv[k++] = (char *)o->mgr_args[i];
    argv[k] = NULL;
    g->mgr = e2e_spawn(g, "manager", argv);
    if (g->mgr < 0)
        return e2e_fail(g, "fork: %s%s", strerror(errno), "");
    int rc = wait_files(c);
    skv_error e = SKV_ERROR_INIT;
    snprintf(key, sizeof(key), "%s/admin.key", g->data);
    if (rc == 0 && skv_client_read_keyfile(g->admin_ak, g->admin_sk, key, &e))
        rc = e2e_fail(g, "admin key: %s%s", e.message, "");
    return rc;
}

int bm_cluster_start(bm_cluster *c, const char *bin, const bm_opts *o)
{
    e2e_cluster *g = calloc(1, sizeof(*g));
    memset(c, 0, sizeof(*c));
    if (!g) {
        snprintf(c->why, sizeof(c->why), "out of memory");
        return -1;
    }
    c->g = g;
    g->mgr = -1;
    snprintf(g->bin, sizeof(g->bin), "%s", bin);
    snprintf(g->root, sizeof(g->root), "/tmp/skv-bm-%ld-XXXXXX",
             (long)getpid());
    int rc = mkdtemp(g->root) ? 0 : e2e_fail(g, "mkdtemp %s: %s", g->root,
                                             strerror(errno));
    snprintf(g->data, sizeof(g->data), "%s/mgr", g->root);
    snprintf(g->sock, sizeof(g->sock), "%s/m.sock", g->root);
    snprintf(g->endpoint, sizeof(g->endpoint), "unix:%s", g->sock);
    if (rc == 0 && e2e_sh("mkdir -p %s/pids %s/logs", g->root, g->root))
        rc = e2e_fail(g, "mkdir in %s%s", g->root, "");
    if (rc == 0)
        rc = start_manager(c, o);
    if (rc == 0) {
        c->pid = g->mgr;
        c->sock = g->sock;
        c->data = g->data;
        c->endpoint = g->endpoint;
        c->ak = g->admin_ak;
        c->sk = g->admin_sk;
    }
    snprintf(c->why, sizeof(c->why), "%s", g->why);
    return rc;
}

bool bm_cluster_alive(bm_cluster *c)
{
    return c->g && e2e_alive(c->g->mgr);
}

void bm_cluster_log_tail(bm_cluster *c, char *out, size_t cap)
{
    e2e_log_tail(c->g, "manager", out, cap);
}

void bm_cluster_stop(bm_cluster *c)
{
    if (!c->g)
        return;
    e2e_stop(c->g);
    free(c->g);
    c->g = NULL;
}

int bm_find_bin(char *out, size_t cap, const char *build)
{
    return e2e_find_bin(out, cap, build);
}
