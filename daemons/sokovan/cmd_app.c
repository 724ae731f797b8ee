/* Service apps from the CLI: `sokovan show`'s services with their proxy
 * URLs, `sokovan app-token` (a token of the session's owner, as a URL a
 * browser opens once), and `sokovan app` (a local TCP listener tunnelled
 * through the app proxy, app_tunnel.c).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CLI_PROXY_DEFAULT "http://127.0.0.1:8090"

const char *cli_proxy_url(void)
{
    const char *u = getenv("SOKOVAN_PROXY_URL");
    return u && u[0] ? u : CLI_PROXY_DEFAULT;
}

/* base without a trailing '/' (so base + "/s/..." has one slash). */
static int base_len(const char *base)
{
    size_t n = strlen(base);
    while (n && base[n - 1] == '/')
        n--;
    return (int)n;
}

void cli_show_services(const skv_proto_session_info *s)
{
    if (!s->n_services)
        return;
    static const char *const hdr[] = {"SERVICE", "PORT", "PROTOCOL", "URL"};
    const char *base = cli_proxy_url();
    cli_table t;
    cli_table_init(&t, 4, hdr);
    for (size_t i = 0; i < s->n_services; i++) {
        char name[SKV_PROTO_SERVICE_NAME_MAX], proto[8], port[8], url[1024];
        uint32_t p;
        if (skv_proto_service_parse(s->services[i], name, &p, proto, NULL))
            continue;
        snprintf(port, sizeof port, "%u", p);
        if (strcmp(proto, "tcp"))
            snprintf(url, sizeof url, "%.*s/s/%s/%s/", base_len(base), base,
                     s->session_id, name);
        else
            snprintf(url, sizeof url, "sokovan app %s %s", s->session_id,
                     name);
        const char *row[] = {name, port, proto, url};
        cli_table_row(&t, row);
    }
    printf("\nServices (app token: sokovan app-token %s SERVICE):\n",
           s->session_id);
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

int cli_app_token(cli *c, const char *sid, const char *svc, uint32_t ttl_s,
                  skv_proto_app_token_reply *r)
{
    skv_proto_app_token q = {(char *)sid, (char *)svc, ttl_s};
    return cli_call(c, SKV_PROTO_APP_TOKEN, &q, r);
}

enum { T_TTL = 1, T_TOKEN };

static int token_args(cli *c, int argc, char **argv, const char **sid,
                      const char **svc, uint32_t *ttl, int *only)
{
    static const cli_opt opts[] = {{"ttl", 1, T_TTL, 0},
                                   {"token-only", 0, T_TOKEN, 0},
                                   {NULL, 0, 0, 0}};
    const char *val;
    int id;
    uint64_t ms;
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    while ((id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts("usage: sokovan app-token SESSION SERVICE [--ttl D] "
                 "[--token-only]\nA token for your session's service, as the "
                 "URL to open once in a browser\n(the proxy trades it for a "
                 "cookie); --ttl 1h (default 12h, at most 7d).\nThe proxy's "
                 "address is $SOKOVAN_PROXY_URL (default " CLI_PROXY_DEFAULT
                 ").");
            return -1;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (id == T_TOKEN) {
            *only = 1;
        } else if (id == T_TTL) {
            if (cli_parse_duration(c, "--ttl", val, &ms))
                return CLI_USAGE;
            if (ms < 1000 || ms > 7ull * 24 * 3600 * 1000)
                return cli_usage(c, "--ttl: between 1s and 7d");
            *ttl = (uint32_t)(ms / 1000);
        } else if (!*sid) {
            *sid = val;
        } else if (!*svc) {
            *svc = val;
        } else {
            return cli_usage(c, "unexpected argument '%s'", val);
        }
    }
    return *sid && *svc ? 0 : cli_usage(c, "want SESSION SERVICE");
}

int cli_cmd_app_token(cli *c, int argc, char **argv)
{
    const char *sid = NULL, *svc = NULL;
    uint32_t ttl = 0;
    int only = 0;
    int rc = token_args(c, argc, argv, &sid, &svc, &ttl, &only);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    skv_proto_app_token_reply r;
    if ((rc = cli_app_token(c, sid, svc, ttl, &r)))
        return rc;
    const char *base = cli_proxy_url();
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_obj(&j);
        cli_json_key(&j, "token");
        cli_json_str(&j, r.token);
        cli_json_key(&j, "path");
        cli_json_str(&j, r.path);
        cli_json_key(&j, "expires_ms");
        cli_json_int(&j, r.expires_ms);
        cli_json_obj_end(&j);
        cli_json_end(&j);
    } else if (only) {
        printf("%s\n", r.token);
    } else {
        printf("%.*s%s?sokovan_token=%s\n", base_len(base), base, r.path,
               r.token);
    }
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &r);
    return CLI_OK;
}
