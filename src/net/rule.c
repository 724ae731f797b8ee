/* IPv4 policy-routing rules that keep sessions apart when forwarding is on:
 * "iif <bridge> to <subnet> lookup main" for what a session may reach and
 * "iif <bridge> to <cluster cidr> prohibit" for the rest.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net_internal.h"

static struct nlmsghdr *rule_msg(skv__nl *nl, char *buf, bool add,
                                 const char *iif, uint32_t dst, unsigned plen,
                                 uint8_t action, uint32_t prio)
{
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, add ? RTM_NEWRULE
                                                    : RTM_DELRULE,
                                       add ? NLM_F_CREATE | NLM_F_EXCL : 0);
    struct fib_rule_hdr *fr = mnl_nlmsg_put_extra_header(nlh, sizeof(*fr));
    fr->family = AF_INET;
    fr->dst_len = (uint8_t)plen;
    fr->action = action;
    fr->table = action == FR_ACT_TO_TBL ? RT_TABLE_MAIN : RT_TABLE_UNSPEC;
    mnl_attr_put_strz(nlh, FRA_IIFNAME, iif);
    if (plen > 0)
        mnl_attr_put_u32(nlh, FRA_DST, htonl(dst));
    mnl_attr_put_u32(nlh, FRA_PRIORITY, prio);
    return nlh;
}

int skv__nl_rule(skv__nl *nl, bool add, const char *iif,
                 const skv__cidr *dst, bool prohibit, uint32_t prio)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = rule_msg(nl, buf, add, iif, dst->addr, dst->plen,
                                    prohibit ? FR_ACT_PROHIBIT
                                             : FR_ACT_TO_TBL, prio);
    return skv__nl_talk(nl, nlh);
}

/* One rule of the dump, kept for deletion after the dump ended. */
typedef struct found_rule {
    char iif[SKV_NET_IFNAME_MAX];
    uint32_t dst;
    unsigned plen;
    uint8_t action;
    uint32_t prio;
} found_rule;

typedef struct rule_scan {
    const char *prefix;
    skv__net_name_pred doomed;
    void *data;
    found_rule *v;
    size_t n;
    int failed;
} rule_scan;

static int rule_attr_cb(const struct nlattr *a, void *data)
{
    found_rule *r = data;
    uint16_t t = mnl_attr_get_type(a);
    if (t == FRA_IIFNAME && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
        snprintf(r->iif, sizeof(r->iif), "%s", mnl_attr_get_str(a));
    else if (t == FRA_DST && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
        r->dst = ntohl(mnl_attr_get_u32(a));
    else if (t == FRA_PRIORITY && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
        r->prio = mnl_attr_get_u32(a);
    return MNL_CB_OK;
}

static int rule_cb(const struct nlmsghdr *nlh, void *data)
{
    rule_scan *s = data;
    const struct fib_rule_hdr *fr = mnl_nlmsg_get_payload(nlh);
    found_rule r;
    memset(&r, 0, sizeof(r));
    r.plen = fr->dst_len;
    r.action = fr->action;
    mnl_attr_parse(nlh, sizeof(*fr), rule_attr_cb, &r);
    if (!r.iif[0] || strncmp(r.iif, s->prefix, strlen(s->prefix)) != 0 ||
        !s->doomed(r.iif, s->data) || s->failed)
        return MNL_CB_OK;
    found_rule *v = skv__reallocarray(s->v, s->n + 1, sizeof(*v));
    if (!v) {
        s->failed = ENOMEM;
        return MNL_CB_OK;
    }
    s->v = v;
    s->v[s->n++] = r;
    return MNL_CB_OK;
}

int skv__nl_rule_flush(skv__nl *nl, const char *prefix,
                       skv__net_name_pred doomed, void *data,
                       size_t *removed)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_GETRULE, 0);
    struct fib_rule_hdr *fr = mnl_nlmsg_put_extra_header(nlh, sizeof(*fr));
    fr->family = AF_INET;
    rule_scan s = {.prefix = prefix, .doomed = doomed, .data = data};
    int rc = skv__nl_dump(nl, nlh, rule_cb, &s);
    for (int t = 1; rc == EINTR && t < SKV__NL_DUMP_TRIES; t++) {
        skv__free(s.v);
        s = (rule_scan){.prefix = prefix, .doomed = doomed, .data = data};
        rc = skv__nl_dump(nl, nlh, rule_cb, &s);
    }
    if (rc == 0)
        rc = s.failed;
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        found_rule *r = &s.v[i];
        nlh = rule_msg(nl, buf, false, r->iif, r->dst, r->plen, r->action,
                       r->prio);
        rc = skv__nl_talk(nl, nlh);
        if (rc == ENOENT) /* removed meanwhile */
            rc = 0;
        else if (rc == 0)
            (*removed)++;
    }
    skv__free(s.v);
    return rc;
}
