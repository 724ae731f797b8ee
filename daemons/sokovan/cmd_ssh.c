/* sokovan ssh SESSION [--user U] [-- CMD...]: the system's OpenSSH client
 * into the session's "ssh" service through the app proxy. The manager
 * gives the owner a tunnel token and the session's SSH key pair in one
 * app.token call; `sokovan app`'s listener (app_tunnel.c) takes a free
 * port on 127.0.0.1 and ssh connects there, with the session's private key
 * and the session's public key pinned as the host key (the interactive
 * image's sshd uses the session key as its host key), so no prompt and no
 * trust on first use. ssh's exit code is sokovan's.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#include "cli.h"

#define SSH_SERVICE "ssh"
#define SSH_DEFAULT_USER "work"

static const char usage[] =
    "usage: sokovan ssh SESSION [--user U] [--] [CMD [ARG...]]\n"
    "Open an SSH connection to SESSION's \"ssh\" service (an image that\n"
    "declares one, or run --service ssh=PORT/tcp) through the app proxy\n"
    "($SOKOVAN_PROXY_URL), with the session's SSH key pair: a login shell,\n"
    "or CMD (its words are quoted for the remote shell). --user: the\n"
    "account (default work, the session user of the interactive image).\n"
    "Runs the OpenSSH client (ssh, Debian openssh-client); exits with its\n"
    "exit code (255: ssh's own failure).";

typedef struct ssh_run {
    char dir[64];             /* private temporary directory */
    char key[96], known[96];
    char alias[128];          /* the host key's name in known */
    int64_t status;
    int signal;
} ssh_run;

static int write_file(const char *path, const char *text, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return cli_fail("ssh: cannot create %s: %s", path, strerror(errno));
    ssize_t w = write(fd, text, n);
    int bad = w != (ssize_t)n || close(fd) != 0;
    return bad ? cli_fail("ssh: cannot write %s", path) : 0;
}

/* The key and a known_hosts line "ALIAS ssh-ed25519 BASE64" in a 0700
 * directory of our own. */
static int key_files(ssh_run *r, const char *sid,
                     const skv_proto_app_token_reply *t)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(r->dir, sizeof r->dir, "%s/sokovan-ssh-XXXXXX",
             tmp && tmp[0] && strlen(tmp) < 32 ? tmp : "/tmp");
    if (!mkdtemp(r->dir))
        return cli_fail("ssh: cannot create a directory under %s: %s",
                        tmp ? tmp : "/tmp", strerror(errno));
    snprintf(r->key, sizeof r->key, "%s/id", r->dir);
    snprintf(r->known, sizeof r->known, "%s/known_hosts", r->dir);
    snprintf(r->alias, sizeof r->alias, "sokovan-%s", sid);
    const char *pub = t->ssh_public_key;
    const char *sp = pub ? strchr(pub, ' ') : NULL;
    const char *end = sp ? strpbrk(sp + 1, " \n") : NULL;
    if (!t->ssh_private_key || !sp)
        return cli_fail("ssh: the manager sent no SSH key for %s", sid);
    char line[1024];
    int n = snprintf(line, sizeof line, "%s %.*s\n", r->alias,
                     (int)((end ? end : sp + strlen(sp)) - pub), pub);
    if (n < 0 || (size_t)n >= sizeof line)
        return cli_fail("ssh: the session's public key is too long");
    int rc = write_file(r->key, t->ssh_private_key,
                        strlen(t->ssh_private_key));
    return rc ? rc : write_file(r->known, line, (size_t)n);
}

static void cleanup(ssh_run *r)
{
    if (!r->dir[0] || strstr(r->dir, "XXXXXX"))
        return;
    unlink(r->key);
    unlink(r->known);
    rmdir(r->dir);
}

/* 'word' 'word' with each ' as '\'' : ssh hands the remote shell one
 * string, which must split back into exactly these words. */
static char *quoted(char *const *words, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(words[i]) * 4 + 3;
    char *s = malloc(len), *p = s;
    for (size_t i = 0; s && i < n; i++) {
        if (i)
            *p++ = ' ';
        *p++ = '\'';
        for (const char *c = words[i]; *c; c++)
            if (*c == '\'')
                p = stpcpy(p, "'\\''");
            else
                *p++ = *c;
        *p++ = '\'';
    }
    if (s)
        *p = '\0';
    return s;
}

static void on_exit_(uv_process_t *p, int64_t status, int sig)
{
    ssh_run *r = p->data;
    r->status = status;
    r->signal = sig;
    uv_close((uv_handle_t *)p, NULL);
    uv_stop(p->loop);
}

static int spawn_ssh(ssh_run *r, unsigned port, const char *user,
                     char *remote)
{
    char p[8], id[128], kh[128], alias[160];
    snprintf(p, sizeof p, "%u", port);
    snprintf(id, sizeof id, "%s", r->key);
    snprintf(kh, sizeof kh, "UserKnownHostsFile=%s", r->known);
    snprintf(alias, sizeof alias, "HostKeyAlias=%s", r->alias);
    char *argv[] = {"ssh", "-F", "none", "-p", p, "-i", id, "-l",
                    (char *)user, "-o", "IdentitiesOnly=yes", "-o",
                    "IdentityAgent=none", "-o", kh, "-o",
                    "GlobalKnownHostsFile=/dev/null", "-o", alias, "-o",
                    "StrictHostKeyChecking=yes", "-o",
                    "HostKeyAlgorithms=ssh-ed25519", "-o",
                    "PasswordAuthentication=no", "-o",
                    "KbdInteractiveAuthentication=no", "-o", "LogLevel=ERROR",
                    "127.0.0.1", remote, NULL};
    uv_stdio_container_t io[3];
    for (int i = 0; i < 3; i++) {
        io[i].flags = UV_INHERIT_FD;
        io[i].data.fd = i;
    }
    static uv_process_t proc;
    uv_process_options_t o = {0};
    o.file = "ssh";
    o.args = argv;
    o.exit_cb = on_exit_;
    o.stdio = io;
    o.stdio_count = 3;
    proc.data = r;
    int rc = uv_spawn(uv_default_loop(), &proc, &o);
    if (rc == UV_ENOENT)
        return cli_fail("ssh: the OpenSSH client 'ssh' is not installed (on "
                        "Debian: apt-get install openssh-client)");
    return rc ? cli_fail("ssh: cannot run ssh: %s", uv_strerror(rc)) : 0;
}

static int connect_ssh(ssh_run *r, const char *sid, const char *user,
                       const skv_proto_app_token_reply *t, char *remote)
{
    unsigned port = 0;
    int rc = key_files(r, sid, t);
    if (!rc)
        rc = cli_tunnel_listen(sid, SSH_SERVICE, t->token, "127.0.0.1:0",
                               &port);
    if (!rc)
        rc = spawn_ssh(r, port, user, remote);
    if (rc)
        return rc;
    /* ssh owns the terminal: ^C and ^\ are for it (and what runs remotely),
     * and the tunnel must outlive them until ssh exits. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    uv_run(uv_default_loop(), UV_RUN_DEFAULT);
    return r->signal ? 128 + r->signal : (int)r->status;
}

/* "no service 'ssh'" said in the user's terms. */
static int token_or_explain(cli *c, const char *sid,
                            skv_proto_app_token_reply *t)
{
    skv_proto_app_token q = {(char *)sid, SSH_SERVICE, 0, true};
    skv_error e = SKV_ERROR_INIT;
    int rc = cli_connect(c);
    if (rc)
        return rc;
    rc = skv_client_call(c->client, SKV_PROTO_APP_TOKEN, &q, t, &e);
    if (rc == SKV_ENOENT && strstr(e.message, "declares no service"))
        return cli_fail("ssh: session %s has no ssh service: start it from "
                        "an image that declares one (sokovan show lists a "
                        "session's services) or with --service "
                        "ssh=PORT/tcp and an sshd on PORT", sid);
    return rc ? cli_fail_err("ssh", rc, &e) : 0;
}

static int parse(cli *c, int argc, char **argv, const char **sid,
                 const char **user, cli_strv *cmd)
{
    enum { S_USER = 1 };
    static const cli_opt opts[] = {{"user", 1, S_USER, 0}, {NULL, 0, 0, 0}};
    cli_parser p;
    cli_parser_init(&p, c, argc, argv);
    const char *val;
    int id;
    while ((id = cli_next(&p, opts, &val)) != CLI_OPT_END) {
        if (id == CLI_OPT_HELP) {
            puts(usage);
            return -1;
        }
        if (id == CLI_OPT_ERR)
            return CLI_USAGE;
        if (id == S_USER && (!val[0] || strchr(val, '@') || val[0] == '-'))
            return cli_usage(c, "--user: an account name");
        if (id == S_USER) {
            *user = val;
        } else if (!*sid) {
            *sid = val;
        } else {
            p.rest = 1;    /* the rest is the command's, options included */
            if (cli_strv_push(cmd, val))
                return CLI_FAIL;
        }
    }
    return *sid && (*sid)[0] ? 0 : cli_usage(c, "want SESSION");
}

int cli_cmd_ssh(cli *c, int argc, char **argv)
{
    const char *sid = NULL, *user = SSH_DEFAULT_USER;
    cli_strv cmd = {0};
    int rc = parse(c, argc, argv, &sid, &user, &cmd);
    if (rc) {
        cli_strv_free(&cmd);
        return rc < 0 ? CLI_OK : rc;
    }
    char *remote = cmd.n ? quoted(cmd.v, cmd.n) : NULL;
    skv_proto_app_token_reply t = {0};
    ssh_run r = {0};
    if (cmd.n && !remote)
        rc = cli_fail("out of memory");
    if (!rc)
        rc = token_or_explain(c, sid, &t);
    if (!rc)
        rc = connect_ssh(&r, sid, user, &t, remote);
    cleanup(&r);
    cli_tunnel_done();
    skv_proto_body_free(SKV_PROTO_APP_TOKEN_REPLY, &t);
    free(remote);
    cli_strv_free(&cmd);
    return rc;
}
