/* Credentials and the connection. Precedence: --key-file, then
 * $SOKOVAN_ACCESS_KEY + $SOKOVAN_SECRET_KEY, then $SOKOVAN_KEY_FILE, then
 * ~/.config/sokovan/key, then the manager's admin key when readable (the
 * zero-config local cluster run as root).
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

typedef struct creds {
    char ak[SKV_AUTH_ACCESS_KEY_MAX];
    char sk[SKV_AUTH_SECRET_KEY_MAX];
} creds;

static int from_file(creds *k, const char *path)
{
    skv_error e = SKV_ERROR_INIT;
    int rc = skv_client_read_keyfile(k->ak, k->sk, path, &e);
    if (rc)
        return cli_fail_err("reading credentials", rc, &e);
    return CLI_OK;
}

static int from_env(creds *k, const char *ak, const char *sk)
{
    skv_error e = SKV_ERROR_INIT;
    if (!ak || !sk)
        return cli_fail("set both SOKOVAN_ACCESS_KEY and SOKOVAN_SECRET_KEY "
                        "(only one is set)");
    int rc = skv_auth_access_key_check(ak, &e);
    if (!rc)
        rc = skv_auth_secret_key_check(sk, &e);
    if (rc)
        return cli_fail_err("SOKOVAN_ACCESS_KEY/SOKOVAN_SECRET_KEY", rc, &e);
    strcpy(k->ak, ak);
    strcpy(k->sk, sk);
    return CLI_OK;
}

static int resolve(const cli *c, creds *k)
{
    if (c->key_file)
        return from_file(k, c->key_file);
    const char *ak = getenv("SOKOVAN_ACCESS_KEY");
    const char *sk = getenv("SOKOVAN_SECRET_KEY");
    if ((ak && ak[0]) || (sk && sk[0]))
        return from_env(k, ak && ak[0] ? ak : NULL, sk && sk[0] ? sk : NULL);
    const char *f = getenv("SOKOVAN_KEY_FILE");
    if (f && f[0])
        return from_file(k, f);
    const char *home = getenv("HOME");
    char path[4096];
    if (home && home[0]) {
        snprintf(path, sizeof path, "%s/.config/sokovan/key", home);
        if (access(path, F_OK) == 0)
            return from_file(k, path);
    }
    if (access(CLI_ADMIN_KEY, R_OK) == 0)
        return from_file(k, CLI_ADMIN_KEY);
    return cli_fail("no credentials: pass --key-file, set SOKOVAN_KEY_FILE "
                    "or SOKOVAN_ACCESS_KEY/SOKOVAN_SECRET_KEY, or create "
                    "~/.config/sokovan/key");
}

void cli_tls_from_env(cli *c)
{
    const char *ca = getenv("SOKOVAN_TLS_CA");
    const char *pin = getenv("SOKOVAN_TLS_PIN");
    c->tls_ca = ca && ca[0] ? ca : NULL;
    c->tls_pin = pin && pin[0] ? pin : NULL;
}

/* Open c->client with the stored credentials. */
static int dial(cli *c, skv_error *e)
{
    skv_client_options o = SKV_CLIENT_OPTIONS_INIT;
    o.endpoint = c->endpoint;
    o.access_key = c->access_key;
    o.secret_key = c->secret_key;
    o.timeout_ms = c->timeout_ms;
    o.tls_ca_file = c->tls_ca;
    o.tls_pin = c->tls_pin;
    /* A list names a leader and its standbys: the library moves on from a
     * standby's answer or a lost leader (resending only what is safe). */
    if (strchr(c->endpoint, ','))
        o.failover_ms = c->timeout_ms > 0 ? c->timeout_ms : 30000;
    /* "tls:host:port" on the manager's host, as root: its own certificate
     * (like admin.key for credentials). */
    if (!o.tls_ca_file && !o.tls_pin && strncmp(c->endpoint, "tls:", 4) == 0
        && access(CLI_MANAGER_CERT, R_OK) == 0)
        o.tls_ca_file = CLI_MANAGER_CERT;
    return skv_client_connect(&c->client, &o, e);
}

/* Resolve the credentials once; later reconnects reuse them. */
static int load_creds(cli *c)
{
    if (c->have_creds)
        return CLI_OK;
    creds k;
    memset(&k, 0, sizeof k);
    int rc = resolve(c, &k);
    if (rc == CLI_OK) {
        strcpy(c->access_key, k.ak);
        strcpy(c->secret_key, k.sk);
        c->have_creds = 1;
    }
    skv_auth_wipe(k.sk, sizeof k.sk);
    return rc;
}

int cli_connect(cli *c)
{
    return cli_connect_within(c, 0);
}

int cli_connect_within(cli *c, int wait_ms)
{
    if (c->client)
        return CLI_OK;
    int rc = load_creds(c);
    if (rc)
        return rc;
    int64_t start = cli_now_ms();
    int backoff = 100;
    for (;;) {
        skv_error e = SKV_ERROR_INIT;
        int crc = dial(c, &e);
        if (crc == 0)
            return CLI_OK;
        int64_t left = start + wait_ms - cli_now_ms();
        if (!cli_reach_transient(crc, &e) || left <= 0)
            return cli_fail_reach(c, crc, &e, wait_ms > 0 ?
                                  cli_now_ms() - start : 0);
        cli_sleep_ms(backoff < left ? backoff : (int)left);
        backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
    }
}

int cli_call(cli *c, skv_proto_type type, const void *body, void *reply)
{
    int rc = cli_connect(c);
    if (rc)
        return rc;
    skv_error e = SKV_ERROR_INIT;
    rc = skv_client_call(c->client, type, body, reply, &e);
    if (rc)
        return cli_fail_err(skv_proto_type_name(type), rc, &e);
    return CLI_OK;
}

/* Failures of the connection rather than answers of the manager: an
 * answer (SKV_ESTATE "the kernel's agent is away", say) leaves the
 * connection usable and is final; no answer in time is worth a resend. */
static int transient(const cli *c, int rc)
{
    if (rc == SKV_ETIMEDOUT)
        return 1;
    return (rc == SKV_EIO || rc == SKV_ESTATE || rc == SKV_ESYS) &&
           !skv_client_usable(c->client);
}

int cli_call_retry(cli *c, skv_proto_type type, const void *body,
                   void *reply, skv_error *e)
{
    if (!c->client || !c->have_creds) {
        skv_error_clear(e);
        e->code = SKV_ESTATE;
        snprintf(e->message, sizeof e->message, "not connected");
        return SKV_ESTATE;
    }
    int64_t give_up = cli_now_ms() + CLI_RETRY_MS;
    int backoff = 100;
    for (;;) {
        int rc = c->client ? 0 : dial(c, e);
        int again = rc ? cli_reach_transient(rc, e) : 0;
        if (rc == 0) {
            rc = skv_client_call(c->client, type, body, reply, e);
            again = rc && transient(c, rc);
        }
        if (!again || cli_now_ms() >= give_up)
            return rc;
        skv_client_free(c->client);
        c->client = NULL;
        cli_sleep_ms(backoff);
        backoff = backoff * 2 > 1000 ? 1000 : backoff * 2;
    }
}
