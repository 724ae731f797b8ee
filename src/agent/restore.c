/* A restarted agent: kernel records loaded back, their resources taken
 * again exactly as placed, and each matched with its container (which kept
 * running under its supervisor). Containers nobody recorded are destroyed;
 * records whose container is gone are dropped (the manager treats those
 * kernels as lost on the agent).
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent_internal.h"

#define RECORD_MAX (4u * 1024 * 1024)

static int read_file(const char *path, char **out, size_t *len,
                     skv_error *err)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return skv__err_sys(err, errno, "cannot open %s", path);
    char *buf = skv__malloc(RECORD_MAX);
    size_t n = buf ? fread(buf, 1, RECORD_MAX, f) : 0;
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (!buf)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (bad) {
        skv__free(buf);
        return skv__err(err, SKV_EIO, "%s: unreadable or too large", path);
    }
    *out = buf;
    *len = n;
    return 0;
}

/* The placement lines into fixed amounts pointing into text (modified). */
static int parse_placement(char *text, skv_device_amount **fx, size_t *nfx,
                           skv_error *err)
{
    size_t lines = 0;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    *fx = skv__calloc(lines + 1, sizeof(**fx));
    if (!*fx)
        return skv__err(err, SKV_ENOMEM, "agent: out of memory");
    *nfx = 0;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l;
         l = strtok_r(NULL, "\n", &save)) {
        if (*l == '#')
            continue;
        char *t1 = strchr(l, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
        if (!t2)
            return skv__err(err, SKV_EPROTO, "bad placement line '%s'", l);
        *t1 = *t2 = '\0';
        char *end;
        long long q = strtoll(t2 + 1, &end, 10);
        if (*end || q <= 0)
            return skv__err(err, SKV_EPROTO, "bad amount '%s'", t2 + 1);
        (*fx)[(*nfx)++] = (skv_device_amount){t1 + 1, l, q};
    }
    return 0;
}

/* Split the record into the create body (decoded into k) and the
 * placement text (NUL-terminated copy in *text). */
static int decode_record(skv__agent_kernel *k, char **text, const char *buf,
                         size_t len, skv_error *err)
{
    skv_proto_reader *r = NULL;
    const void *p1 = NULL, *p2 = NULL;
    size_t l1 = 0, l2 = 0;
    int rc = skv_proto_reader_new(&r, RECORD_MAX, err);
    if (rc == 0)
        rc = skv_proto_reader_feed(r, buf, len, err);
    if (rc == 0 && skv_proto_reader_next(r, &p1, &l1, err) != 1)
        rc = skv__err(err, SKV_EPROTO, "truncated record");
    if (rc == 0)
        rc = skv_proto_body_decode(&k->req, SKV_PROTO_KERNEL_CREATE, p1, l1,
                                   err);
    if (rc == 0 && skv_proto_reader_next(r, &p2, &l2, err) != 1)
        rc = skv__err(err, SKV_EPROTO, "truncated record");
    if (rc == 0 && !(*text = skv__strndup(p2, l2)))
        rc = skv__err(err, SKV_ENOMEM, "agent: out of memory");
    skv_proto_reader_free(r);
    return rc;
}

/* The kernel's session network, as the previous agent left it. A failure
 * leaves the kernel running without it (logged). */
static void adopt_network(skv_agent *a, skv__agent_kernel *k)
{
    skv_error e = SKV_ERROR_INIT;
    if (skv__agent_net_resolve(a, k, true, &e) != 0 ||
        skv__agent_net_prepare(a, k, true, &e) != 0)
        skv__log(SKV_LOG_WARN, "agent", "kernel %s: network not adopted: %s",
                 k->req.kernel_id, e.message);
}

static int load_one(skv_agent *a, const char *path, const char *id,
                    int64_t now_ms, skv_error *err)
{
    char *buf = NULL, *text = NULL;
    size_t len = 0, nfx = 0;
    skv_device_amount *fx = NULL;
    skv__agent_kernel *k = skv__calloc(1, sizeof(*k));
    int rc = k ? read_file(path, &buf, &len, err)
               : skv__err(err, SKV_ENOMEM, "agent: out of memory");
    if (rc == 0)
        rc = decode_record(k, &text, buf, len, err);
    if (rc == 0 && (!k->req.kernel_id || strcmp(k->req.kernel_id, id) != 0))
        rc = skv__err(err, SKV_EPROTO, "record of another kernel");
    if (rc == 0)
        rc = parse_placement(text, &fx, &nfx, err);
    if (rc == 0)
        rc = skv__agent_kernel_take(a, k, fx, nfx, err);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    if (rc == 0 && skv_runtime_status(a->rt, id, &st, NULL) != 0) {
        skv__log(SKV_LOG_WARN, "agent", "kernel %s: its container is gone; "
                 "dropping its record", id);
        skv__agent_kernel_release(a, k);
        skv__agent_record_remove(a, id);
        skv__agent_kernel_free(k);
        k = NULL;
    } else if (rc == 0) {
        k->exited = st.state == SKV_CONTAINER_EXITED ||
                    st.state == SKV_CONTAINER_LOST;
        k->st = st;
        k->finished_ms = k->exited ? now_ms : 0;
        rc = skv__agent_kernel_add(a, k, err);
        if (rc)
            skv__agent_kernel_release(a, k);
        else
            adopt_network(a, k);
        if (rc == 0)
            k = NULL;
    }
    skv__agent_kernel_free(k);
    skv__free(fx);
    skv__free(text);
    skv__free(buf);
    return rc;
}

static void set_aside(const char *path)
{
    char *bad = skv__asprintf("%s.bad", path);
    if (bad && rename(path, bad) < 0)
        skv__log(SKV_LOG_WARN, "agent", "cannot rename %s: %s", path,
                 strerror(errno));
    skv__free(bad);
}

/* Containers without a record (e.g. an agent killed between destroying a
 * container's record and the container): nobody will ask for them. */
static void destroy_strays(skv_agent *a)
{
    char **ids = NULL;
    size_t n = 0;
    if (skv_runtime_list(a->rt, &ids, &n, NULL) != 0)
        return;
    for (size_t i = 0; i < n; i++)
        if (!skv__agent_kernel_find(a, ids[i])) {
            skv__log(SKV_LOG_WARN, "agent", "container %s has no kernel "
                     "record: destroying it", ids[i]);
            skv_runtime_destroy(a->rt, ids[i], 0, NULL);
        }
    skv_runtime_list_free(ids, n);
}

int skv__agent_records_restore(skv_agent *a, int64_t now_ms, skv_error *err)
{
    char *dir = skv__agent_path(a, "kernels");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        int e = errno;
        skv__free(dir);
        return skv__err_sys(err, e, "agent: cannot read kernel records");
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l <= 4 || strcmp(de->d_name + l - 4, ".rec") != 0)
            continue;
        char id[256];
        snprintf(id, sizeof(id), "%.*s", (int)(l - 4), de->d_name);
        char *path = skv__asprintf("%s/%s", dir, de->d_name);
        skv_error e = SKV_ERROR_INIT;
        rc = path ? load_one(a, path, id, now_ms, &e) : SKV_ENOMEM;
        if (rc && rc != SKV_ENOMEM) {
            /* One unreadable record must not keep the agent down; it is
             * set aside (not read again) for inspection. */
            skv__log(SKV_LOG_ERROR, "agent", "kernel record %s: %s (kept "
                     "as .bad)", path, e.message);
            set_aside(path);
            rc = 0;
        } else if (rc) {
            skv__err(err, rc, "agent: out of memory");
        }
        skv__free(path);
    }
    closedir(d);
    skv__free(dir);
    if (rc == 0)
        destroy_strays(a);
    return rc;
}
