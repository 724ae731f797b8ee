/* Session network: the bridge with the gateway address and, with an
 * isolation CIDR, the policy rules that confine the session's traffic.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "net_internal.h"

int skv_net_bridge_name(const char *prefix, const char *session_id,
                        char *buf, size_t n, skv_error *err)
{
    int rc = skv__net_prefix_check(prefix, &prefix, err);
    if (rc < 0)
        return rc;
    size_t len = session_id ? strlen(session_id) : 0;
    if (len == 0 || len > 128)
        return skv__err(err, SKV_EINVAL, "session id must have 1..128 "
                        "characters");
    for (size_t i = 0; i < len; i++)
        if (session_id[i] <= ' ' || session_id[i] > '~')
            return skv__err(err, SKV_EINVAL, "session id '%s': character %zu "
                            "is not printable ASCII", session_id, i + 1);
    if (!buf || n < strlen(prefix) + 9)
        return skv__err(err, SKV_ERANGE, "bridge name buffer is too small");
    /* FNV-1a: a stable short name; a collision shows up as SKV_EEXIST. */
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)session_id[i]) * 16777619u;
    snprintf(buf, n, "%s%08" PRIx32, prefix, h);
    return 0;
}

void skv__net_veth_name(const skv_net_session *s, unsigned idx, char *buf)
{
    snprintf(buf, SKV_NET_IFNAME_MAX, "%sv%x", s->bridge, idx);
}

static int check_opts(const skv_net_session_options *o, skv_net_session *s,
                      skv_error *err)
{
    /* Older callers pass a shorter struct: outbound_nat is read only from
     * version 2 on, host_guard and host_allow from 3 on (see
     * skv_net_session_create). */
    if (o->version < 1 || o->version > SKV_NET_SESSION_OPTIONS_VERSION)
        return skv__err(err, SKV_EVERSION, "net session options version %u, "
                        "expected 1..%u", o->version,
                        SKV_NET_SESSION_OPTIONS_VERSION);
    int rc = skv_net_bridge_name(o->prefix, o->session_id, s->bridge,
                                 sizeof(s->bridge), err);
    if (rc == 0)
        snprintf(s->prefix, sizeof(s->prefix), "%s",
                 o->prefix ? o->prefix : SKV_NET_DEFAULT_PREFIX);
    if (rc == 0)
        rc = skv__subnet_cidr_parse(o->subnet, 16, 29, &s->subnet,
                                 "session subnet", err);
    if (rc == 0 && o->isolate_cidr) {
        rc = skv__subnet_cidr_parse(o->isolate_cidr, 8, 30, &s->isolate_cidr,
                                 "isolation CIDR", err);
        s->isolate = rc == 0;
    }
    if (rc < 0)
        return rc;
    snprintf(s->subnet_text, sizeof(s->subnet_text), "%s", o->subnet);
    skv__subnet_ip_format(s->subnet.addr + 1, s->gateway_text,
                       sizeof(s->gateway_text));
    return (s->session_id = skv__strdup(o->session_id)) ? 0
               : skv__err(err, SKV_ENOMEM, "session id");
}

/* Allow the own subnet, refuse the rest of the isolation CIDR. On failure
 * only what this call added is removed. */
static int add_rules(skv__nl *nl, skv_net_session *s, bool adopt,
                     skv_error *err)
{
    int e = skv__nl_rule(nl, true, s->bridge, &s->subnet, false,
                         SKV__NET_PRIO_ALLOW);
    bool added = e == 0;
    if (e == 0 || (adopt && e == EEXIST))
        e = skv__nl_rule(nl, true, s->bridge, &s->isolate_cidr, true,
                         SKV__NET_PRIO_DENY);
    if (e == 0 || (adopt && e == EEXIST))
        return 0;
    if (added)
        skv__nl_rule(nl, false, s->bridge, &s->subnet, false,
                     SKV__NET_PRIO_ALLOW);
    return skv__err_sys(err, e, "adding the isolation rules of bridge '%s'",
                        s->bridge);
}

static int bridge_setup(skv__nl *nl, skv_net_session *s, bool adopt,
                        bool *created, skv_error *err)
{
    int e = skv__nl_link_index(nl, s->bridge, &s->bridge_idx);
    if (e == 0 && !adopt)
        return skv__err(err, SKV_EEXIST, "link '%s' of session '%s' already "
                        "exists", s->bridge, s->session_id);
    if (e != 0 && e != ENOENT)
        return skv__err_sys(err, e, "looking up link '%s'", s->bridge);
    if (e == ENOENT) {
        if ((e = skv__nl_bridge_add(nl, s->bridge)) != 0)
            return e == EEXIST
                       ? skv__err(err, SKV_EEXIST, "link '%s' exists",
                                  s->bridge)
                       : skv__err_sys(err, e, "creating bridge '%s'",
                                      s->bridge);
        *created = true;
    }
    if ((e = skv__nl_link_index(nl, s->bridge, &s->bridge_idx)) != 0)
        return skv__err_sys(err, e, "looking up bridge '%s'", s->bridge);
    e = skv__nl_addr_add(nl, s->bridge_idx, s->subnet.addr + 1,
                         s->subnet.plen);
    if (e != 0 && !(adopt && e == EEXIST))
        return skv__err_sys(err, e, "adding %s/%u to bridge '%s'",
                            s->gateway_text, s->subnet.plen, s->bridge);
    if ((e = skv__nl_link_up(nl, s->bridge_idx)) != 0)
        return skv__err_sys(err, e, "bringing bridge '%s' up", s->bridge);
    return s->isolate ? add_rules(nl, s, adopt, err) : 0;
}

/* Remove what a failed create made of a bridge it created (its address
 * goes with it). An adopted bridge stays as it was found. */
static void roll_back(skv__nl *nl, skv_net_session *s, bool setup_done)
{
    /* A failing bridge_setup removed its own rules (and only those: a rule
     * in the way is not ours); after it, the failure was outbound NAT. */
    if (setup_done) {
        size_t dropped = 0;
        if (s->isolate) {
            skv__nl_rule(nl, false, s->bridge, &s->subnet, false,
                         SKV__NET_PRIO_ALLOW);
            skv__nl_rule(nl, false, s->bridge, &s->isolate_cidr, true,
                         SKV__NET_PRIO_DENY);
        }
        skv__net_nft_forget(s->prefix, s->bridge, &dropped, NULL);
    }
    int idx = 0;
    if (skv__nl_link_index(nl, s->bridge, &idx) == 0)
        skv__nl_link_del(nl, idx);
}

int skv_net_session_create(skv_net_session **out,
                           const skv_net_session_options *opts,
                           skv_error *err)
{
    if (!out || !opts)
        return skv__err(err, SKV_EINVAL, "net session: out or opts is NULL");
    skv_net_session *s = skv__calloc(1, sizeof(*s));
    if (!s)
        return skv__err(err, SKV_ENOMEM, "net session");
    skv__nl nl = {0};
    bool created = false;
    int rc = check_opts(opts, s, err);
    if (rc == 0 && opts->version >= 3 && opts->host_guard)
        rc = skv_net_host_allow_check(opts->host_allow, err);
    if (rc == 0)
        rc = skv__nl_open(&nl, err);
    if (rc == 0)
        rc = bridge_setup(&nl, s, opts->adopt, &created, err);
    bool setup_done = rc == 0;
    if (rc == 0 && opts->version >= 2 && opts->outbound_nat)
        rc = skv__net_masq_add(s, err);
    if (rc == 0 && opts->version >= 3 && opts->host_guard)
        rc = skv__net_host_guard(s, opts->host_allow, err);
    if (rc < 0 && created)
        roll_back(&nl, s, setup_done);
    skv__nl_close(&nl);
    if (rc < 0) {
        skv_net_session_free(s);
        return rc;
    }
    skv__log(SKV_LOG_INFO, "net", "session '%s': bridge %s, subnet %s",
             s->session_id, s->bridge, s->subnet_text);
    *out = s;
    return 0;
}

void skv_net_session_free(skv_net_session *s)
{
    if (!s)
        return;
    skv__free(s->session_id);
    skv__free(s);
}

const char *skv_net_session_bridge(const skv_net_session *s)
{
    return s ? s->bridge : NULL;
}

const char *skv_net_session_subnet(const skv_net_session *s)
{
    return s ? s->subnet_text : NULL;
}

const char *skv_net_session_gateway(const skv_net_session *s)
{
    return s ? s->gateway_text : NULL;
}

int skv_net_session_address(const skv_net_session *s, unsigned idx,
                            char *buf, size_t n, skv_error *err)
{
    if (!s || !buf || n < 16)
        return skv__err(err, SKV_EINVAL, "session address: NULL argument or "
                        "buffer below 16 bytes");
    uint32_t last = ~skv__subnet_mask(s->subnet.plen) - 1;
    if (idx < 2 || idx > last)
        return skv__err(err, SKV_ERANGE, "host index %u is outside 2..%u of "
                        "subnet %s", idx, last, s->subnet_text);
    skv__subnet_ip_format(s->subnet.addr + idx, buf, n);
    return 0;
}

int skv_net_session_allow(skv_net_session *s, const char *peer_subnet,
                          skv_error *err)
{
    if (!s)
        return skv__err(err, SKV_EINVAL, "session is NULL");
    skv__cidr peer;
    int rc = skv__subnet_cidr_parse(peer_subnet, 8, 32, &peer, "peer subnet",
                                 err);
    if (rc < 0 || !s->isolate)
        return rc;
    skv__nl nl;
    if ((rc = skv__nl_open(&nl, err)) < 0)
        return rc;
    int e = skv__nl_rule(&nl, true, s->bridge, &peer, false,
                         SKV__NET_PRIO_ALLOW);
    skv__nl_close(&nl);
    if (e == EEXIST)
        return skv__err(err, SKV_EEXIST, "session '%s' already reaches %s",
                        s->session_id, peer_subnet);
    return e ? skv__err_sys(err, e, "allowing %s from bridge '%s'",
                            peer_subnet, s->bridge)
             : 0;
}
