/* Capability masks and names (libcap) and reading the current sets.
 * Applying a plan lives in caps_apply.c (raw system calls only).
 * SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "skv_caps.h"
#include "skv_internal.h"

uint64_t skv__caps_default_mask(void)
{
    static const int docker[] = {
        CAP_CHOWN,    CAP_DAC_OVERRIDE, CAP_FSETID,         CAP_FOWNER,
        CAP_MKNOD,    CAP_NET_RAW,      CAP_SETGID,         CAP_SETUID,
        CAP_SETFCAP,  CAP_SETPCAP,      CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT,
        CAP_KILL,     CAP_AUDIT_WRITE,
    };
    uint64_t m = 0;
    for (size_t i = 0; i < SKV__ARRAY_LEN(docker); i++)
        m |= SKV__CAP_BIT(docker[i]);
    return m;
}

int skv__caps_parse(int *cap_out, const char *name, skv_error *err)
{
    if (!name || !*name)
        return skv__err(err, SKV_EINVAL, "empty capability name");
    char buf[64] = "cap_";
    const char *p = name;
    if (strncasecmp(p, "cap_", 4) == 0)
        p += 4;
    size_t n = strlen(p);
    if (n == 0 || n + 5 > sizeof(buf))
        return skv__err(err, SKV_EINVAL, "unknown capability '%s'", name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (!isalnum(c) && c != '_')
            return skv__err(err, SKV_EINVAL, "unknown capability '%s'", name);
        buf[4 + i] = (char)tolower(c);
    }
    buf[4 + n] = '\0';
    cap_value_t v;
    /* libcap also accepts numbers and stops at a known prefix
     * ("cap_sys_admin2"): insist that the name maps back to itself. */
    if (isdigit((unsigned char)buf[4]) || cap_from_name(buf, &v) != 0 ||
        v < 0 || v >= 64)
        return skv__err(err, SKV_EINVAL, "unknown capability '%s'", name);
    char *back = cap_to_name(v);
    bool same = back && strcmp(back, buf) == 0;
    cap_free(back);
    if (!same)
        return skv__err(err, SKV_EINVAL, "unknown capability '%s'", name);
    *cap_out = (int)v;
    return 0;
}

int skv__caps_name(char *buf, size_t bufsz, int cap, skv_error *err)
{
    if (cap < 0 || cap >= 64)
        return skv__err(err, SKV_EINVAL, "capability number %d out of range",
                        cap);
    char *s = cap_to_name((cap_value_t)cap);
    if (!s)
        return skv__err(err, SKV_ENOMEM, "naming capability %d", cap);
    size_t n = strlen(s);
    int rc = 0;
    if (n >= bufsz)
        rc = skv__err(err, SKV_ERANGE, "buffer too small for '%s'", s);
    else
        memcpy(buf, s, n + 1);
    cap_free(s);
    return rc;
}

static int mask_of(uint64_t *out, const char *name, skv_error *err)
{
    if (name && strcasecmp(name, "ALL") == 0) {
        *out = ~(uint64_t)0;
        return 0;
    }
    int c;
    int rc = skv__caps_parse(&c, name, err);
    if (rc == 0)
        *out = SKV__CAP_BIT(c);
    return rc;
}

int skv__caps_edit(uint64_t *mask, const char *const *add, size_t nadd,
                   const char *const *drop, size_t ndrop, skv_error *err)
{
    if (!mask || (nadd && !add) || (ndrop && !drop))
        return skv__err(err, SKV_EINVAL, "capability edit: NULL list");
    uint64_t m = *mask, bit = 0;
    for (size_t i = 0; i < ndrop; i++) {
        int rc = mask_of(&bit, drop[i], err);
        if (rc < 0) {
            skv__err_prefix(err, "cap_drop[%zu]", i);
            return rc;
        }
        m &= ~bit;
    }
    for (size_t i = 0; i < nadd; i++) {
        int rc = mask_of(&bit, add[i], err);
        if (rc < 0) {
            skv__err_prefix(err, "cap_add[%zu]", i);
            return rc;
        }
        m |= bit;
    }
    *mask = m;
    return 0;
}

void skv__caps_plan_init(skv_caps_plan *plan)
{
    memset(plan, 0, sizeof(*plan));
    plan->keep = skv__caps_default_mask();
    plan->no_new_privs = true;
}

static uint64_t flag_mask(cap_t caps, cap_flag_t which)
{
    uint64_t m = 0;
    for (int c = 0; c < 64; c++) {
        cap_flag_value_t v;
        if (cap_get_flag(caps, (cap_value_t)c, which, &v) != 0)
            break; /* past the last capability libcap knows */
        if (v == CAP_SET)
            m |= SKV__CAP_BIT(c);
    }
    return m;
}

int skv__caps_current(uint64_t *effective, uint64_t *permitted,
                      uint64_t *inheritable, uint64_t *bounding,
                      skv_error *err)
{
    cap_t caps = cap_get_proc();
    if (!caps)
        return skv__err_sys(err, errno, "cap_get_proc");
    if (effective)
        *effective = flag_mask(caps, CAP_EFFECTIVE);
    if (permitted)
        *permitted = flag_mask(caps, CAP_PERMITTED);
    if (inheritable)
        *inheritable = flag_mask(caps, CAP_INHERITABLE);
    cap_free(caps);
    if (bounding) {
        uint64_t m = 0;
        for (int c = 0; c < 64; c++) {
            int r = prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0);
            if (r < 0)
                break; /* EINVAL: beyond the kernel's last capability */
            if (r == 1)
                m |= SKV__CAP_BIT(c);
        }
        *bounding = m;
    }
    return 0;
}
