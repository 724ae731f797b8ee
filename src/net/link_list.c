/* Listing links by name prefix: one RTM_GETLINK dump, names collected and
 * sorted so callers and tests see a stable order.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "net_internal.h"

typedef struct collect {
    const char *prefix;
    char **names;
    size_t n;
    int failed;   /* ENOMEM once an allocation failed */
} collect;

static int name_attr_cb(const struct nlattr *a, void *data)
{
    if (mnl_attr_get_type(a) == IFLA_IFNAME &&
        mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
        *(const char **)data = mnl_attr_get_str(a);
    return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
    collect *c = data;
    const char *name = NULL;
    mnl_attr_parse(nlh, sizeof(struct ifinfomsg), name_attr_cb, &name);
    if (!name || strncmp(name, c->prefix, strlen(c->prefix)) != 0 ||
        c->failed)
        return MNL_CB_OK;
    char **v = skv__reallocarray(c->names, c->n + 1, sizeof(char *));
    char *copy = v ? skv__strdup(name) : NULL;
    if (v)
        c->names = v;
    if (!copy) {
        c->failed = ENOMEM;
        return MNL_CB_OK;
    }
    c->names[c->n++] = copy;
    return MNL_CB_OK;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int skv__nl_link_list(skv__nl *nl, const char *prefix, char ***names,
                      size_t *n)
{
    char buf[SKV__NL_BUF];
    struct nlmsghdr *nlh = skv__nl_msg(nl, buf, RTM_GETLINK, 0);
    struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
    ifi->ifi_family = AF_UNSPEC;
    collect c = {.prefix = prefix};
    int rc = skv__nl_dump(nl, nlh, link_cb, &c);
    for (int t = 1; rc == EINTR && t < SKV__NL_DUMP_TRIES; t++) {
        skv_net_links_free(c.names, c.n);
        c = (collect){.prefix = prefix};
        rc = skv__nl_dump(nl, nlh, link_cb, &c);
    }
    if (rc == 0)
        rc = c.failed;
    if (rc != 0) {
        skv_net_links_free(c.names, c.n);
        return rc;
    }
    if (c.n > 1)
        qsort(c.names, c.n, sizeof(char *), cmp_str);
    *names = c.names;
    *n = c.n;
    return 0;
}

void skv_net_links_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        skv__free(names[i]);
    skv__free(names);
}
