/* nftables through libnftables: the per-prefix table "ip sokovan_<prefix>"
 * with its nat base chains, listing its rules (handle and comment) and
 * deleting rules by comment. Every command is run on its own: one command
 * per nft_run_cmd_from_buffer() call keeps failures attributable (and a
 * multi-command buffer mixing deletes misbehaved in a quick test).
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <nftables/libnftables.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

/* One process-wide lock: libnftables keeps some global state, and a
 * check-then-add (port conflicts, dropping an empty table) must not
 * interleave with another thread's changes. */
static pthread_mutex_t nft_lock = PTHREAD_MUTEX_INITIALIZER;

int skv__nft_open(skv__nft *n, const char *prefix, skv_error *err)
{
    memset(n, 0, sizeof(*n));
    snprintf(n->table, sizeof(n->table), "sokovan_%s", prefix);
    pthread_mutex_lock(&nft_lock);
    n->ctx = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!n->ctx || nft_ctx_buffer_output(n->ctx) != 0 ||
        nft_ctx_buffer_error(n->ctx) != 0) {
        if (n->ctx)
            nft_ctx_free(n->ctx);
        n->ctx = NULL;
        pthread_mutex_unlock(&nft_lock);
        return skv__err(err, SKV_ENOMEM, "creating an nftables context");
    }
    nft_ctx_output_set_flags(n->ctx, NFT_CTX_OUTPUT_HANDLE);
    return 0;
}

void skv__nft_close(skv__nft *n)
{
    if (!n->ctx)
        return;
    nft_ctx_free(n->ctx);
    n->ctx = NULL;
    pthread_mutex_unlock(&nft_lock);
}

const char *skv__nft_output(skv__nft *n)
{
    const char *o = nft_ctx_get_output_buffer(n->ctx);
    return o ? o : "";
}

int skv__nft_run(skv__nft *n, skv_error *err, const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (len < 0 || (size_t)len >= sizeof(cmd))
        return skv__err(err, SKV_ERANGE, "nftables command too long");
    if (nft_run_cmd_from_buffer(n->ctx, cmd) == 0)
        return 0;
    /* nft's message: "Error: <why>\n<command>\n<caret line>"; keep the
     * first line only. */
    const char *msg = nft_ctx_get_error_buffer(n->ctx);
    msg = msg ? msg : "";
    if (strncmp(msg, "Error: ", 7) == 0)
        msg += 7;
    size_t ml = strcspn(msg, "\n");
    /* A kernel without nf_tables (or its nat part) says so in words. */
    const char *ns = strstr(msg, "not supported");
    int code = ns && ns < msg + ml ? SKV_ENOTSUP : SKV_ESYS;
    return skv__err(err, code, "nftables '%.120s': %.*s", cmd, (int)ml, msg);
}

int skv__nft_table_exists(skv__nft *n, bool *exists, skv_error *err)
{
    *exists = false;
    int rc = skv__nft_run(n, err, "list tables ip");
    if (rc < 0)
        return rc;
    const char *o = skv__nft_output(n);
    size_t tl = strlen(n->table);
    for (const char *p = o; (p = strstr(p, "table ip ")) != NULL; p++) {
        const char *name = p + 9;
        if (strncmp(name, n->table, tl) == 0 &&
            (name[tl] == '\n' || name[tl] == ' ' || name[tl] == '\0'))
            *exists = true;
    }
    return 0;
}

int skv__nft_setup(skv__nft *n, skv_error *err)
{
    /* "add" leaves an existing table or chain as it is. */
    int rc = skv__nft_run(n, err, "add table ip %s", n->table);
    if (rc == 0)
        rc = skv__nft_run(n, err, "add chain ip %s prerouting { type nat "
                          "hook prerouting priority dstnat; policy accept; }",
                          n->table);
    if (rc == 0)
        rc = skv__nft_run(n, err, "add chain ip %s output { type nat hook "
                          "output priority -100; policy accept; }", n->table);
    if (rc == 0)
        rc = skv__nft_run(n, err, "add chain ip %s postrouting { type nat "
                          "hook postrouting priority srcnat; policy accept; "
                          "}", n->table);
    return rc;
}

/* One rule line of `list table` with handles:
 *   <expr> comment "<comment>" # handle <n> */
static bool parse_rule(const char *line, size_t len, skv__nft_rule *r)
{
    char buf[1024];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, line, len);
    buf[len] = '\0';
    char *c = strstr(buf, " comment \"");
    char *h = strstr(buf, " # handle ");
    if (!c || !h || h < c)
        return false;
    c += 10;
    char *q = strchr(c, '"');
    if (!q || (size_t)(q - c) >= sizeof(r->comment))
        return false;
    memcpy(r->comment, c, (size_t)(q - c));
    r->comment[q - c] = '\0';
    char *end = NULL;
    errno = 0;
    unsigned long long hv = strtoull(h + 10, &end, 10);
    if (errno || end == h + 10 || hv == 0)
        return false;
    r->handle = (uint64_t)hv;
    return true;
}

/* The chain name from "chain NAME { # handle N". */
static void parse_chain(const char *line, char *chain, size_t n)
{
    const char *p = line + 6;
    size_t l = strcspn(p, " {\n");
    snprintf(chain, n, "%.*s", (int)l, p);
}

static int rules_parse(const char *o, skv__nft_rule **out, size_t *count)
{
    char chain[SKV__NFT_NAME_MAX] = "";
    skv__nft_rule *v = NULL;
    size_t nv = 0;
    for (const char *p = o; *p;) {
        size_t len = strcspn(p, "\n");
        const char *line = p + strspn(p, "\t ");
        if (strncmp(line, "chain ", 6) == 0)
            parse_chain(line, chain, sizeof(chain));
        skv__nft_rule r = {0};
        if (chain[0] && parse_rule(line, len - (size_t)(line - p), &r)) {
            skv__nft_rule *nvp = skv__reallocarray(v, nv + 1, sizeof(*v));
            if (!nvp) {
                skv__free(v);
                return SKV_ENOMEM;
            }
            v = nvp;
            snprintf(r.chain, sizeof(r.chain), "%s", chain);
            v[nv++] = r;
        }
        p += len + (p[len] == '\n');
    }
    *out = v;
    *count = nv;
    return 0;
}

int skv__nft_rules(skv__nft *n, skv__nft_rule **rules, size_t *count,
                   skv_error *err)
{
    *rules = NULL;
    *count = 0;
    bool exists = false;
    int rc = skv__nft_table_exists(n, &exists, err);
    if (rc < 0 || !exists)
        return rc;
    if ((rc = skv__nft_run(n, err, "list table ip %s", n->table)) < 0)
        return rc;
    if (rules_parse(skv__nft_output(n), rules, count) < 0)
        return skv__err(err, SKV_ENOMEM, "listing table '%s'", n->table);
    return 0;
}

/* Drop the table once nothing but its base chains is left in it: a host
 * without sessions carries no trace of the library. Every object of the
 * listing (table, chain, rule, set) carries a handle, so the table is empty
 * when the only handles are its own and its chains'. */
static int drop_if_empty(skv__nft *n, skv_error *err)
{
    bool exists = false;
    int rc = skv__nft_table_exists(n, &exists, err);
    if (rc == 0 && exists)
        rc = skv__nft_run(n, err, "list table ip %s", n->table);
    if (rc < 0 || !exists)
        return rc;
    size_t handles = 0, chains = 0;
    for (const char *p = skv__nft_output(n); *p;) {
        size_t len = strcspn(p, "\n");
        const char *line = p + strspn(p, "\t ");
        if (strncmp(line, "chain ", 6) == 0)
            chains++;
        const char *h = strstr(line, "# handle ");
        if (h && h < p + len)
            handles++;
        p += len + (p[len] == '\n');
    }
    if (handles == chains + 1)
        rc = skv__nft_run(n, err, "delete table ip %s", n->table);
    return rc;
}

int skv__nft_delete(skv__nft *n, skv__nft_pred pred, void *data,
                    size_t *removed, skv_error *err)
{
    skv__nft_rule *rules = NULL;
    size_t count = 0;
    int rc = skv__nft_rules(n, &rules, &count, err);
    for (size_t i = 0; rc == 0 && i < count; i++) {
        if (!pred || !pred(rules[i].comment, data))
            continue;
        rc = skv__nft_run(n, err, "delete rule ip %s %s handle %" PRIu64,
                          n->table, rules[i].chain, rules[i].handle);
        if (rc == 0 && removed)
            (*removed)++;
    }
    skv__free(rules);
    return rc < 0 ? rc : drop_if_empty(n, err);
}

bool skv__nft_comment_bridge(const char *comment, char *bridge)
{
    size_t l = strcspn(comment, " ");
    if (l == 0 || l >= SKV_NET_IFNAME_MAX)
        return false;
    memcpy(bridge, comment, l);
    bridge[l] = '\0';
    return true;
}
