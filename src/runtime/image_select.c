/* Choosing one image from an archive that holds several (a `docker save`
 * of many tags, an OCI layout with several references, a multi-platform
 * index). Taking the first would silently import the wrong image, so the
 * choice is explicit: by the name the image is imported as, then by this
 * host's platform; anything else is refused with the candidates listed.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "image_int.h"

/* "registry:5000/library/busybox:1.36" -> "busybox:1.36" */
static const char *last_component(const char *s)
{
    const char *q = strrchr(s, '/');
    return q ? q + 1 : s;
}

static bool name_matches(const char *tag, const char *want)
{
    if (strcmp(tag, want) == 0)
        return true;
    const char *t = last_component(tag), *w = last_component(want);
    if (strcmp(t, w) == 0)
        return true;
    const char *tcolon = strrchr(t, ':'), *wcolon = strrchr(w, ':');
    size_t tl = tcolon ? (size_t)(tcolon - t) : strlen(t);
    /* "busybox" names "busybox:latest", and any one tag of busybox */
    if (!wcolon && tl == strlen(w) && strncmp(t, w, tl) == 0)
        return true;
    /* an OCI ref.name that is only a tag ("1.36") names "busybox:1.36" */
    return !tcolon && t == tag && wcolon && strcmp(wcolon + 1, tag) == 0;
}

static bool entry_named(const skv__img_entry *e, const char *want)
{
    for (size_t i = 0; i < e->nnames; i++)
        if (name_matches(e->names[i], want))
            return true;
    return false;
}

/* GOARCH spelling of this host's machine, as OCI platforms use. */
static void host_arch(char *out, size_t cap)
{
    static const char *const map[][2] = {
        {"x86_64", "amd64"}, {"aarch64", "arm64"}, {"i686", "386"},
        {"i386", "386"},     {"armv7l", "arm"},    {"armv6l", "arm"}};
    struct utsname u;
    const char *m = uname(&u) == 0 ? u.machine : "";
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(m, map[i][0]) == 0)
            m = map[i][1];
    snprintf(out, cap, "%s", m);
}

static bool platform_ok(const skv__img_entry *e, const char *arch)
{
    return (!e->os[0] || strcmp(e->os, "linux") == 0) &&
           strcmp(e->arch, arch) == 0;
}

/* "a:1, b (arm64/linux), <untagged>" bounded to cap. */
static void describe(char *out, size_t cap, const skv__img_entry *v, size_t n,
                     const bool *only)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n && len + 1 < cap; i++) {
        if (only && !only[i])
            continue;
        const skv__img_entry *e = &v[i];
        int w = snprintf(out + len, cap - len, "%s%s", len ? ", " : "",
                         e->nnames ? e->names[0] : "<untagged>");
        if (w > 0 && e->arch[0] && (size_t)w < cap - len)
            w += snprintf(out + len + (size_t)w, cap - len - (size_t)w,
                          " (%s/%s)", e->arch, e->os[0] ? e->os : "?");
        len = w < 0 ? len : len + (size_t)w;
    }
    if (len + 1 >= cap && cap > 4)
        memcpy(out + cap - 4, "...", 4);
}

static size_t narrow_platform(const skv__img_entry *v, size_t n, bool *cand)
{
    char arch[65];
    bool any = false;
    size_t nc = 0;
    host_arch(arch, sizeof(arch));
    for (size_t i = 0; i < n; i++)
        any |= cand[i] && v[i].arch[0];
    for (size_t i = 0; i < n; i++) {
        if (any && cand[i])
            cand[i] = platform_ok(&v[i], arch);
        nc += cand[i];
    }
    return nc;
}

int skv__img_select(size_t *out, const skv__img_entry *v, size_t n,
                    const char *want, const char *doc, skv_error *err)
{
    if (n == 0)
        return skv__err(err, SKV_EPROTO, "image: %s lists no images", doc);
    if (n == 1) {
        *out = 0;
        return 0;
    }
    bool cand[SKV__IMG_MAX_IMAGES], named = false;
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        named |= v[i].nnames > 0;
    for (size_t i = 0; i < n; i++) {
        cand[i] = !named || entry_named(&v[i], want);
        nc += cand[i];
    }
    if (nc > 1)
        nc = narrow_platform(v, n, cand);
    for (size_t i = 0; nc == 1 && i < n; i++)
        if (cand[i]) {
            *out = i;
            return 0;
        }
    char list[160];
    describe(list, sizeof(list), v, n, NULL);
    return skv__err(err, SKV_EINVAL, "image: %s holds %zu images (%s); %s "
                    "'%s': import it under one of their names", doc, n, list,
                    nc ? "several match" : "none matches", want);
}
