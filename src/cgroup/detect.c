/* Finding the host's cgroup layout from /proc/self/mountinfo (through the
 * sysroot, so tests can fake it) and the caller's own cgroup paths from
 * /proc/self/cgroup.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skv_cgroup_impl.h"
#include "skv_internal.h"

/* The v1 controllers a container cgroup uses; others are not touched. */
static const char *const v1_wanted[] = {
    "cpuset", "cpu", "cpuacct", "memory", "pids", "freezer", "devices",
};

const char *skv__cgroup_mode_name(skv_cgroup_mode mode)
{
    switch (mode) {
    case SKV_CGROUP_MODE_AUTO: return "auto";
    case SKV_CGROUP_MODE_V1: return "v1";
    case SKV_CGROUP_MODE_V2: return "v2";
    case SKV_CGROUP_MODE_HYBRID: return "hybrid";
    }
    return "?";
}

bool skv__cg_list_has(const char *list, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (len == wl && strncmp(p, word, wl) == 0)
            return true;
        p = c ? c + 1 : NULL;
    }
    return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
            r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* The wanted controllers among a v1 mount's super options ("rw,cpu,cpuacct"). */
static void wanted_ctrls(char *out, size_t n, const char *opts)
{
    out[0] = '\0';
    for (size_t i = 0; i < SKV__ARRAY_LEN(v1_wanted); i++) {
        if (!skv__cg_list_has(opts, v1_wanted[i]))
            continue;
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", len ? "," : "", v1_wanted[i]);
    }
}

static bool covered(const skv__cg_layout *l, const char *ctrls)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->m[i].v2 && strcmp(l->m[i].ctrls, ctrls) == 0)
            return true;
    return false;
}

/* One mountinfo line: "id parent maj:min root mountpoint opts ... - fstype
 * source superopts". Records cgroup mounts at or below /sys/fs/cgroup. */
static void parse_line(skv__cg_layout *l, char *line, bool *v2_root,
                       bool *v2_unified)
{
    char *sep = strstr(line, " - ");
    if (!sep)
        return;
    *sep = '\0';
    char mnt[256], fstype[32], super[512];
    if (sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
        sscanf(sep + 3, "%31s %*s %511s", fstype, super) != 2)
        return;
    unescape(mnt);
    if (strcmp(fstype, "cgroup2") == 0) {
        if (strcmp(mnt, SKV__CG_ROOT) == 0)
            *v2_root = true;
        else if (strcmp(mnt, SKV__CG_UNIFIED) == 0)
            *v2_unified = true;
        return;
    }
    if (strcmp(fstype, "cgroup") != 0 ||
        strncmp(mnt, SKV__CG_ROOT "/", sizeof(SKV__CG_ROOT)) != 0 ||
        l->n >= SKV__CG_MAX_HIER)
        return;
    skv__cg_mount m = {.v2 = false};
    wanted_ctrls(m.ctrls, sizeof(m.ctrls), super);
    if (!m.ctrls[0] || covered(l, m.ctrls))
        return; /* not ours, or the same hierarchy bind-mounted twice */
    snprintf(m.path, sizeof(m.path), "%s", mnt);
    l->m[l->n++] = m;
}

static void add_v2(skv__cg_layout *l, const char *path)
{
    skv__cg_mount m = {.v2 = true};
    snprintf(m.ctrls, sizeof(m.ctrls), "unified");
    snprintf(m.path, sizeof(m.path), "%s", path);
    l->m[l->n++] = m;
}

/* Without mountinfo entries for a forced mode: the conventional layout. */
static void default_v1(skv__cg_layout *l)
{
    for (size_t i = 0; i < SKV__ARRAY_LEN(v1_wanted); i++) {
        char p[256];
        snprintf(p, sizeof(p), SKV__CG_ROOT "/%s", v1_wanted[i]);
        if (!skv__sys_exists(p) || l->n >= SKV__CG_MAX_HIER)
            continue;
        skv__cg_mount m = {.v2 = false};
        snprintf(m.ctrls, sizeof(m.ctrls), "%s", v1_wanted[i]);
        snprintf(m.path, sizeof(m.path), "%s", p);
        l->m[l->n++] = m;
    }
}

static int finish(skv__cg_layout *l, skv_cgroup_mode force, bool v2_root,
                  bool v2_unified, skv_error *err)
{
    skv_cgroup_mode mode = force;
    if (mode == SKV_CGROUP_MODE_AUTO) {
        if (v2_root)
            mode = SKV_CGROUP_MODE_V2;
        else if (l->n > 0)
            mode = v2_unified ? SKV_CGROUP_MODE_HYBRID : SKV_CGROUP_MODE_V1;
        else
            return skv__err(err, SKV_ENOTSUP,
                            "no cgroup filesystem is mounted at "
                            SKV__CG_ROOT " (see /proc/self/mountinfo)");
    }
    if (mode == SKV_CGROUP_MODE_V2) {
        l->n = 0;
        add_v2(l, SKV__CG_ROOT);
    } else {
        if (l->n == 0)
            default_v1(l);
        if (l->n == 0)
            return skv__err(err, SKV_ENOTSUP,
                            "cgroup mode %s: no v1 hierarchy under "
                            SKV__CG_ROOT, skv__cgroup_mode_name(mode));
        if (mode == SKV_CGROUP_MODE_HYBRID && l->n < SKV__CG_MAX_HIER)
            add_v2(l, SKV__CG_UNIFIED);
    }
    l->mode = mode;
    return 0;
}

int skv__cg_layout_load(skv__cg_layout *out, skv_cgroup_mode force,
                        skv_error *err)
{
    if (force < SKV_CGROUP_MODE_AUTO || force > SKV_CGROUP_MODE_HYBRID)
        return skv__err(err, SKV_EINVAL, "unknown cgroup mode %d", (int)force);
    memset(out, 0, sizeof(*out));
    char *text = NULL;
    int rc = skv__sys_read_alloc("/proc/self/mountinfo", &text, NULL, err);
    if (rc < 0 && force == SKV_CGROUP_MODE_AUTO)
        return rc;
    bool v2_root = false, v2_unified = false;
    char *save = NULL;
    for (char *line = text ? strtok_r(text, "\n", &save) : NULL; line;
         line = strtok_r(NULL, "\n", &save))
        parse_line(out, line, &v2_root, &v2_unified);
    skv__free(text);
    return finish(out, force, v2_root, v2_unified, err);
}

/* The layout of the last load, per sysroot and forced mode: mounts do not
 * change under a running agent, and reading mountinfo for every container
 * costs more than the rest of creating its cgroup. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool valid;
    char root[PATH_MAX];
    skv_cgroup_mode force;
    skv__cg_layout layout;
} cache;

static void cache_store(const skv__cg_layout *l, skv_cgroup_mode force)
{
    pthread_mutex_lock(&cache_lock);
    cache.valid = true;
    snprintf(cache.root, sizeof(cache.root), "%s", skv_sysroot_get());
    cache.force = force;
    cache.layout = *l;
    pthread_mutex_unlock(&cache_lock);
}

int skv__cg_layout_get(skv__cg_layout *out, skv_cgroup_mode force,
                       skv_error *err)
{
    pthread_mutex_lock(&cache_lock);
    bool hit = cache.valid && cache.force == force &&
               strcmp(cache.root, skv_sysroot_get()) == 0;
    if (hit)
        *out = cache.layout;
    pthread_mutex_unlock(&cache_lock);
    if (hit)
        return 0;
    int rc = skv__cg_layout_load(out, force, err);
    if (rc == 0)
        cache_store(out, force);
    return rc;
}

int skv__cgroup_detect(skv_cgroup_mode *out, skv_error *err)
{
    if (!out)
        return skv__err(err, SKV_EINVAL, "cgroup detect: NULL out");
    skv__cg_layout l;
    int rc = skv__cg_layout_load(&l, SKV_CGROUP_MODE_AUTO, err);
    if (rc == 0) {
        cache_store(&l, SKV_CGROUP_MODE_AUTO);
        *out = l.mode;
    }
    return rc;
}

/* /proc/self/cgroup lines: "hierarchy-id:controllers:path"; cgroup2 is
 * "0::path"; v1 lines name their controllers ("4:memory:/x"). */
static bool line_matches(const char *ctrls_field, const skv__cg_mount *m)
{
    if (m->v2)
        return ctrls_field[0] == '\0';
    const char *first = m->ctrls;
    char word[SKV__CG_CTRL_MAX];
    size_t len = strcspn(first, ",");
    snprintf(word, sizeof(word), "%.*s", (int)len, first);
    return skv__cg_list_has(ctrls_field, word);
}

int skv__cg_self_path(char *buf, size_t bufsz, const skv__cg_mount *m,
                      skv_error *err)
{
    char *text = NULL;
    int rc = skv__sys_read_alloc("/proc/self/cgroup", &text, NULL, err);
    if (rc < 0)
        return rc;
    rc = 1; /* not found yet */
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        if (!line_matches(c1 + 1, m))
            continue;
        const char *path = strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1;
        int n = snprintf(buf, bufsz, "%s", path);
        rc = (n < 0 || (size_t)n >= bufsz)
                 ? skv__err(err, SKV_ERANGE, "own cgroup path too long")
                 : 0;
        break;
    }
    skv__free(text);
    if (rc == 1)
        rc = skv__err(err, SKV_ENOENT, "/proc/self/cgroup has no line for %s",
                      m->ctrls);
    return rc;
}
