/* The storage hosts the manager serves: opened once at start (a host whose
 * filesystem cannot enforce its quota backend stops the start with the
 * reason), closed at free. The manager performs folder and file
 * operations itself (docs/architecture.md says why), so it must see every
 * host's root.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "mgr_vfolder.h"

static int host_name_check(const char *name, skv_error *err)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > 63)
        return skv__err(err, SKV_EINVAL, "storage host: a name of 1..63 "
                        "characters is required");
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
            return skv__err(err, SKV_EINVAL, "storage host name '%s': use "
                            "[A-Za-z0-9][A-Za-z0-9_.-]*", name);
    }
    return 0;
}

static int add(struct skv__mgr_vf *vf, const skv_manager_storage_host *d,
               skv_error *err)
{
    skv_storage_host_options o;
    skv_storage_host_options_init(&o);
    int rc = host_name_check(d->name, err);
    for (size_t i = 0; !rc && i < vf->n_hosts; i++)
        if (strcmp(vf->hosts[i].name, d->name) == 0)
            rc = skv__err(err, SKV_EEXIST, "storage host '%s' is configured "
                          "twice", d->name);
    if (!rc)
        rc = skv_storage_quota_parse(d->quota ? d->quota : "auto", &o.quota,
                                     err);
    if (rc)
        return rc;
    skv__mgr_vf_host *h = &vf->hosts[vf->n_hosts];
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", d->name);
    h->shared = d->shared != 0;
    o.root = d->root;
    rc = skv_storage_host_open(&h->h, &o, err);
    if (rc)
        return skv__err_prefix(err, "storage host '%s' (%s)", d->name,
                               d->root ? d->root : "no root"), rc;
    vf->n_hosts++;
    skv__log(SKV_LOG_INFO, "manager", "storage host %s at %s (quota %s%s)",
             h->name, d->root,
             skv_storage_quota_name(skv_storage_host_quota(h->h)),
             h->shared ? ", shared" : "");
    return 0;
}

/* No host configured: "local" under the data dir, without quotas (the
 * data dir's filesystem is whatever the machine has). */
static int add_local(skv_manager *m, skv_error *err)
{
    char *root = skv__asprintf("%s/storage", m->data_dir);
    if (!root)
        return skv__err(err, SKV_ENOMEM, "out of memory");
    int rc = 0;
    if (mkdir(root, 0711) < 0 && errno != EEXIST)
        rc = skv__err_sys(err, errno, "storage host 'local': mkdir %s", root);
    skv_manager_storage_host d = {"local", root, "none", 0};
    if (!rc)
        rc = add(m->vf, &d, err);
    skv__free(root);
    return rc;
}

int skv__mgr_vf_open(skv_manager *m, const skv_manager_options *o,
                     skv_error *err)
{
    size_t n = o->version >= 5 ? o->n_storage_hosts : 0;
    if (n && !o->storage_hosts)
        return skv__err(err, SKV_EINVAL, "manager: storage_hosts is NULL");
    if (!(m->vf = skv__calloc(1, sizeof *m->vf)) ||
        !(m->vf->hosts = skv__calloc(n ? n : 1, sizeof *m->vf->hosts)))
        return skv__err(err, SKV_ENOMEM, "out of memory");
    if (n == 0)
        return add_local(m, err);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
        rc = add(m->vf, &o->storage_hosts[i], err);
    return rc;
}

void skv__mgr_vf_close(skv_manager *m)
{
    struct skv__mgr_vf *vf = m ? m->vf : NULL;
    if (!vf)
        return;
    for (size_t i = 0; i < vf->n_ups; i++)
        skv_storage_upload_close(vf->ups[i].u);
    for (size_t i = 0; vf->hosts && i < vf->n_hosts; i++)
        skv_storage_host_close(vf->hosts[i].h);
    skv__free(vf->hosts);
    skv__free(vf);
    m->vf = NULL;
}

/* A client gone mid-upload: its temp file stays for a resumed begin. */
void skv__mgr_vf_conn_gone(skv_manager *m, uint64_t conn)
{
    struct skv__mgr_vf *vf = m->vf;
    for (size_t i = 0; vf && i < vf->n_ups;) {
        if (vf->ups[i].conn != conn) {
            i++;
            continue;
        }
        skv_storage_upload_close(vf->ups[i].u);
        vf->ups[i] = vf->ups[--vf->n_ups];
    }
}

skv__mgr_vf_host *skv__mgr_vf_host_find(skv_manager *m, const char *name)
{
    for (size_t i = 0; m->vf && name && i < m->vf->n_hosts; i++)
        if (strcmp(m->vf->hosts[i].name, name) == 0)
            return &m->vf->hosts[i];
    return NULL;
}
