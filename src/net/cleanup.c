/* Removing a session's network, and everything of sessions an agent no
 * longer knows after a restart. Pieces are recognised by their names:
 * "<prefix><8 hex>" (bridge) and "<prefix><8 hex>v<hex>" (veth), by
 * isolation rules whose input interface is such a bridge, and by nftables
 * rules whose comment starts with such a bridge.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "net_internal.h"

static bool all_hex(const char *s, size_t n)
{
    return n > 0 && strspn(s, "0123456789abcdef") >= n;
}

bool skv__net_name_parse(const char *name, const char *prefix, char *bridge)
{
    size_t pl = strlen(prefix), n = strlen(name);
    if (n < pl + 8 || n >= SKV_NET_IFNAME_MAX ||
        strncmp(name, prefix, pl) != 0 || !all_hex(name + pl, 8))
        return false;
    const char *rest = name + pl + 8;
    if (*rest && (rest[0] != 'v' || !all_hex(rest + 1, strlen(rest + 1)) ||
                  strlen(rest + 1) > 3))
        return false;
    memcpy(bridge, name, pl + 8);
    bridge[pl + 8] = '\0';
    return true;
}

/* Which bridges to keep, and which prefix their names carry. */
typedef struct keep_set {
    const char *prefix;
    char (*bridges)[SKV_NET_IFNAME_MAX];
    size_t n;
} keep_set;

static bool doomed(const char *name, void *data)
{
    const keep_set *k = data;
    char bridge[SKV_NET_IFNAME_MAX];
    if (!skv__net_name_parse(name, k->prefix, bridge))
        return false;
    for (size_t i = 0; i < k->n; i++)
        if (strcmp(k->bridges[i], bridge) == 0)
            return false;
    return true;
}

/* Delete the doomed links (veths before their bridge: they sort after it,
 * so walk backwards). Links that vanished meanwhile are fine. */
static int remove_links(skv__nl *nl, const keep_set *k, size_t *removed,
                        skv_error *err)
{
    char **names = NULL;
    size_t n = 0;
    int e = skv__nl_link_list(nl, k->prefix, &names, &n);
    if (e != 0)
        return skv__err_sys(err, e, "listing links '%s*'", k->prefix);
    int rc = 0;
    for (size_t i = n; rc == 0 && i-- > 0;) {
        if (!doomed(names[i], (void *)k))
            continue;
        int idx = 0;
        e = skv__nl_link_index(nl, names[i], &idx);
        if (e == 0)
            e = skv__nl_link_del(nl, idx);
        if (e == 0)
            (*removed)++;
        else if (e != ENOENT && e != ENODEV)
            rc = skv__err_sys(err, e, "removing link '%s'", names[i]);
    }
    skv_net_links_free(names, n);
    return rc;
}

/* nftables rules whose comment names a doomed bridge. */
static bool comment_doomed(const char *comment, void *data)
{
    char bridge[SKV_NET_IFNAME_MAX];
    return skv__nft_comment_bridge(comment, bridge) && doomed(bridge, data);
}

/* The nftables part of a clean-up. A host where nftables cannot even be
 * listed (no nf_tables in the kernel) has no rules of ours to remove. */
static int remove_nft(const char *prefix, skv__nft_pred pred, void *data,
                      size_t *removed, skv_error *err)
{
    skv__nft n;
    int rc = skv__nft_open(&n, prefix, err);
    if (rc < 0)
        return rc;
    bool exists = false;
    skv_error probe = SKV_ERROR_INIT;
    if (skv__nft_table_exists(&n, &exists, &probe) < 0)
        skv__log(SKV_LOG_WARN, "net", "nftables not usable, no NAT rules to "
                 "remove: %s", probe.message);
    else if (exists)
        rc = skv__nft_delete(&n, pred, data, removed, err);
    skv__nft_close(&n);
    return rc;
}

static int cleanup(const keep_set *k, size_t *removed, skv_error *err)
{
    skv__nl nl;
    int rc = skv__nl_open(&nl, err);
    if (rc < 0)
        return rc;
    rc = remove_links(&nl, k, removed, err);
    if (rc == 0) {
        int e = skv__nl_rule_flush(&nl, k->prefix, doomed, (void *)k, removed);
        if (e != 0)
            rc = skv__err_sys(err, e, "removing the isolation rules of "
                              "'%s*'", k->prefix);
    }
    skv__nl_close(&nl);
    if (rc == 0)
        rc = remove_nft(k->prefix, comment_doomed, (void *)k, removed, err);
    return rc;
}

int skv_net_cleanup_stale(const char *prefix, const char *const *keep_ids,
                          size_t n_keep, size_t *removed, skv_error *err)
{
    size_t count = 0;
    if (removed)
        *removed = 0;
    keep_set k = {0};
    int rc = skv__net_prefix_check(prefix, &k.prefix, err);
    if (rc < 0)
        return rc;
    if (n_keep && !keep_ids)
        return skv__err(err, SKV_EINVAL, "cleanup: keep_ids is NULL");
    if (n_keep && !(k.bridges = skv__calloc(n_keep, sizeof(*k.bridges))))
        return skv__err(err, SKV_ENOMEM, "cleanup: keep list");
    for (size_t i = 0; rc == 0 && i < n_keep; i++)
        rc = skv_net_bridge_name(k.prefix, keep_ids[i], k.bridges[i],
                                 SKV_NET_IFNAME_MAX, err);
    k.n = n_keep;
    if (rc == 0)
        rc = cleanup(&k, &count, err);
    skv__free(k.bridges);
    if (removed)
        *removed = count;
    return rc;
}

/* Only this session's bridge is doomed: its prefix is the bridge name. */
static bool is_bridge(const char *name, void *data)
{
    char bridge[SKV_NET_IFNAME_MAX];
    const char *b = data;
    size_t pl = strlen(b) - 8;
    char prefix[8];
    memcpy(prefix, b, pl);
    prefix[pl] = '\0';
    return skv__net_name_parse(name, prefix, bridge) && strcmp(bridge, b) == 0;
}

static bool comment_of(const char *comment, void *data)
{
    char bridge[SKV_NET_IFNAME_MAX];
    return skv__nft_comment_bridge(comment, bridge) &&
           strcmp(bridge, (const char *)data) == 0;
}

int skv__net_nft_forget(const char *prefix, const char *bridge,
                        size_t *removed, skv_error *err)
{
    return remove_nft(prefix, comment_of, (void *)bridge, removed, err);
}

int skv_net_session_destroy(skv_net_session *s, skv_error *err)
{
    if (!s)
        return 0;
    skv__nl nl;
    size_t removed = 0;
    int rc = skv__nl_open(&nl, err);
    if (rc == 0) {
        /* With the bridge name as prefix, list only this session's links;
         * is_bridge() filters names that merely share it. */
        char **names = NULL;
        size_t n = 0;
        int e = skv__nl_link_list(&nl, s->bridge, &names, &n);
        for (size_t i = n; e == 0 && i-- > 0;) {
            int idx = 0;
            if (!is_bridge(names[i], s->bridge))
                continue;
            e = skv__nl_link_index(&nl, names[i], &idx);
            if (e == 0)
                e = skv__nl_link_del(&nl, idx);
            if (e == ENOENT || e == ENODEV)
                e = 0;
        }
        skv_net_links_free(names, n);
        if (e == 0)
            e = skv__nl_rule_flush(&nl, s->bridge, is_bridge, s->bridge,
                                   &removed);
        if (e != 0)
            rc = skv__err_sys(err, e, "removing the network of session '%s' "
                              "(bridge '%s')", s->session_id, s->bridge);
        skv__nl_close(&nl);
    }
    /* The NAT rules go even when a link could not be removed. */
    skv_error nft_err = SKV_ERROR_INIT;
    if (skv__net_nft_forget(s->prefix, s->bridge, &removed, &nft_err) < 0 &&
        rc == 0)
        rc = skv__err(err, nft_err.code, "removing the NAT rules of session "
                      "'%s': %s", s->session_id, nft_err.message);
    skv_net_session_free(s);
    return rc;
}
