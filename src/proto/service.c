/* Service declarations "NAME=PORT[/http|/prefix|/tcp]" of session.submit:
 * one parser for the CLI, the manager's admission and the app proxy.
 * http: the proxy takes /s/SESSION/NAME off the path; prefix: HTTP with
 * the whole path passed on, for apps served under that prefix themselves
 * (Jupyter with its base_url), which then write correct absolute links.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "skv_internal.h"
#include "sokovan/proto.h"

/* The name is a path segment of the proxy's URLs: no escaping needed. */
static int name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= SKV_PROTO_SERVICE_NAME_MAX || s[0] < 'a' || s[0] > 'z')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_-", s[i]))
            return 0;
    return 1;
}

static int port_of(const char *s, size_t n, uint32_t *port)
{
    if (n == 0 || n > 5)
        return 0;
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    *port = v;
    return v >= 1 && v <= 65535;
}

int skv_proto_service_parse(const char *text, char *name, uint32_t *port,
                            char *proto, skv_error *err)
{
    if (!text || !name || !port || !proto)
        return skv__err(err, SKV_EINVAL, "service: NULL argument");
    const char *eq = strchr(text, '=');
    if (!eq || !name_ok(text, (size_t)(eq - text)))
        return skv__err(err, SKV_EINVAL, "service '%.64s': want NAME=PORT"
                        "[/http|/prefix|/tcp] with NAME of 1..31 of [a-z0-9_-] "
                        "starting with a letter", text);
    const char *slash = strchr(eq + 1, '/');
    size_t pl = slash ? (size_t)(slash - eq - 1) : strlen(eq + 1);
    if (!port_of(eq + 1, pl, port))
        return skv__err(err, SKV_EINVAL, "service '%.64s': PORT must be "
                        "1..65535", text);
    const char *p = slash ? slash + 1 : "http";
    if (strcmp(p, "http") && strcmp(p, "tcp") && strcmp(p, "prefix"))
        return skv__err(err, SKV_EINVAL, "service '%.64s': protocol must be "
                        "http or tcp, or prefix (HTTP served under its "
                        "proxy path /s/SESSION/NAME/)", text);
    memcpy(name, text, (size_t)(eq - text));
    name[eq - text] = '\0';
    strcpy(proto, p);
    return 0;
}
