/* Session networks. Tests needing root first move their (forked) test
 * process into a new network namespace, which plays the agent's host; the
 * "containers" are children in namespaces of their own. Nothing touches the
 * real host's network, and everything vanishes with the processes.
 * SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skv_test.h"
#include "sokovan/net.h"

#define PORT 7411

/* ---- helpers ---------------------------------------------------------- */

static bool need_root_netns(const char *fn)
{
    if (geteuid() != 0) {
        fprintf(stderr, "%s: skipped: needs root (network namespaces)\n", fn);
        return false;
    }
    ck_assert_msg(unshare(CLONE_NEWNET) == 0, "unshare(CLONE_NEWNET): %s",
                  strerror(errno));
    return true;
}
#define NEED_ROOT()                                                            \
    do {                                                                       \
        if (!need_root_netns(__func__))                                        \
            return;                                                            \
    } while (0)

/* A child in its own network namespace that runs fn once released. */
typedef struct nsproc {
    pid_t pid;
    int go;
} nsproc;

typedef int (*ns_fn)(void *arg);

static nsproc ns_spawn(ns_fn fn, void *arg)
{
    int ready[2], go[2];
    ck_assert(pipe(ready) == 0 && pipe(go) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        close(go[1]);
        if (unshare(CLONE_NEWNET) < 0)
            _exit(90);
        if (write(ready[1], "r", 1) != 1)
            _exit(91);
        char b;
        if (read(go[0], &b, 1) != 1) /* the test died: just leave */
            _exit(92);
        _exit(fn(arg));
    }
    close(ready[1]);
    close(go[0]);
    char b;
    ck_assert_int_eq(read(ready[0], &b, 1), 1);
    close(ready[0]);
    return (nsproc){pid, go[1]};
}

static void ns_go(nsproc *p)
{
    ck_assert_int_eq(write(p->go, "g", 1), 1);
    close(p->go);
    p->go = -1;
}

static int ns_wait(nsproc *p)
{
    int st = 0;
    ck_assert_int_eq(waitpid(p->pid, &st, 0), p->pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Server: listen, tell the test through note_fd, serve `count` exchanges
 * (0 means 1); with expect_peer, every client must come from that address
 * (14 otherwise). */
typedef struct server_arg {
    int note_fd;
    unsigned count;
    const char *expect_peer;
} server_arg;

static int serve_one(int s, const char *expect_peer)
{
    struct pollfd pfd = {.fd = s, .events = POLLIN};
    if (poll(&pfd, 1, 30000) != 1)
        return 12;
    struct sockaddr_in peer;
    socklen_t plen = sizeof(peer);
    int c = accept(s, (struct sockaddr *)&peer, &plen);
    char buf[8] = "", ip[INET_ADDRSTRLEN] = "";
    struct timeval tv = {.tv_sec = 10};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    /* As many ping-pong rounds as the client makes, at least one. */
    unsigned rounds = 0;
    while (c >= 0 && read(c, buf, 4) == 4 && memcmp(buf, "ping", 4) == 0 &&
           write(c, "pong", 4) == 4)
        rounds++;
    if (c < 0 || rounds == 0)
        return 13;
    close(c);
    inet_ntop(AF_INET, &peer.sin_addr, ip, sizeof(ip));
    if (expect_peer && strcmp(ip, expect_peer) != 0) {
        fprintf(stderr, "server: peer %s, expected %s\n", ip, expect_peer);
        return 14;
    }
    return 0;
}

static int serve(void *arg)
{
    server_arg *a = arg;
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(PORT)};
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(s, 4) < 0)
        return 10;
    if (write(a->note_fd, "l", 1) != 1)
        return 11;
    int rc = 0;
    for (unsigned i = 0; rc == 0 && i < (a->count ? a->count : 1); i++)
        rc = serve_one(s, a->expect_peer);
    close(s);
    return rc;
}

/* Client: 0 exchanged, 2 refused (reached a host), 3 unreachable. */
typedef struct client_arg {
    const char *ip;
} client_arg;

/* Connect, then `rounds` ping-pong exchanges delay_ms apart. */
static int connect_rounds(const char *ip, unsigned port, unsigned rounds,
                          unsigned delay_ms)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, ip, &sa.sin_addr);
    if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 &&
        errno != EINPROGRESS) {
        int e = errno;
        close(s);
        return e == ECONNREFUSED ? 2 : 3;
    }
    struct pollfd pfd = {.fd = s, .events = POLLOUT};
    int e = 0;
    socklen_t len = sizeof(e);
    if (poll(&pfd, 1, 5000) != 1 ||
        getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0) {
        close(s);
        return e == ECONNREFUSED ? 2 : 3;
    }
    int fl = fcntl(s, F_GETFL);
    fcntl(s, F_SETFL, fl & ~O_NONBLOCK);
    struct timeval tv = {.tv_sec = 5};
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    int rc = 0;
    for (unsigned i = 0; rc == 0 && i < rounds; i++) {
        char buf[8] = "";
        if (i > 0)
            usleep(delay_ms * 1000u);
        if (write(s, "ping", 4) != 4 || read(s, buf, 4) != 4 ||
            memcmp(buf, "pong", 4) != 0)
            rc = 4;
    }
    close(s);
    return rc;
}

static int connect_port(const char *ip, unsigned port)
{
    return connect_rounds(ip, port, 1, 0);
}

static int connect_once(const char *ip)
{
    return connect_port(ip, PORT);
}

static int client(void *arg)
{
    return connect_once(((client_arg *)arg)->ip);
}

static skv_net_session *session(const char *id, const char *subnet,
                                const char *isolate)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = id;
    o.subnet = subnet;
    o.isolate_cidr = isolate;
    skv_net_session *s = NULL;
    SKV_CK_OK(skv_net_session_create(&s, &o, &e), &e);
    return s;
}

static void attach(skv_net_session *s, pid_t pid, unsigned idx)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_attach_options a = SKV_NET_ATTACH_OPTIONS_INIT;
    a.pid = pid;
    a.host_index = idx;
    SKV_CK_OK(skv_net_attach(s, &a, &e), &e);
}

static size_t count_links(const char *prefix)
{
    char **names = NULL;
    size_t n = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_net_links(prefix, &names, &n, &e), &e);
    skv_net_links_free(names, n);
    return n;
}

/* How many rules `ip rule` (used by the test only) shows naming iif. */
static size_t rule_count(const char *iif)
{
    FILE *f = popen("ip -4 rule show", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    size_t n = 0;
    while (fgets(line, sizeof(line), f))
        if (strstr(line, iif))
            n++;
    pclose(f);
    return n;
}

/* The link's MAC address as `ip` (test only) shows it. */
static void link_mac(const char *name, char *mac, size_t n)
{
    char cmd[128], line[512];
    snprintf(cmd, sizeof(cmd), "ip -o link show dev %s", name);
    FILE *f = popen(cmd, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
    pclose(f);
    const char *p = strstr(line, "link/ether ");
    ck_assert_ptr_nonnull(p);
    snprintf(mac, n, "%.17s", p + 11);
}

static bool rule_exists(const char *iif)
{
    return rule_count(iif) > 0;
}

/* A server attached to srv_net and a client attached to cli_net: the
 * client's result (0 when the exchange worked). */
static int exchange(skv_net_session *srv_net, unsigned srv_idx,
                    skv_net_session *cli_net, unsigned cli_idx)
{
    int note[2];
    ck_assert(pipe(note) == 0);
    server_arg sa = {note[1], 1, NULL};
    nsproc srv = ns_spawn(serve, &sa);
    attach(srv_net, srv.pid, srv_idx);
    ns_go(&srv);
    char b;
    ck_assert_int_eq(read(note[0], &b, 1), 1); /* listening */
    char ip[32];
    SKV_CK_OK(skv_net_session_address(srv_net, srv_idx, ip, sizeof(ip), NULL),
              NULL);
    client_arg ca = {ip};
    nsproc cli = ns_spawn(client, &ca);
    attach(cli_net, cli.pid, cli_idx);
    ns_go(&cli);
    int rc = ns_wait(&cli);
    if (rc != 0)
        kill(srv.pid, SIGKILL);
    int src = ns_wait(&srv);
    close(note[0]);
    close(note[1]);
    return rc == 0 ? src : rc;
}

/* ---- tests without privileges ---------------------------------------- */

START_TEST(test_names_and_bad_options)
{
    skv_error e = SKV_ERROR_INIT;
    char n1[SKV_NET_IFNAME_MAX], n2[SKV_NET_IFNAME_MAX];
    SKV_CK_OK(skv_net_bridge_name(NULL, "sess-1", n1, sizeof(n1), &e), &e);
    SKV_CK_OK(skv_net_bridge_name("skv", "sess-1", n2, sizeof(n2), &e), &e);
    ck_assert_str_eq(n1, n2);
    ck_assert_uint_eq(strlen(n1), 11);
    ck_assert(strncmp(n1, "skv", 3) == 0);
    SKV_CK_OK(skv_net_bridge_name("skv", "sess-2", n2, sizeof(n2), &e), &e);
    ck_assert_str_ne(n1, n2);
    ck_assert_int_eq(skv_net_bridge_name("SKV", "s", n2, sizeof(n2), &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_bridge_name("abcde", "s", n2, sizeof(n2), &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_bridge_name(NULL, "a b", n2, sizeof(n2), &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_bridge_name(NULL, "", n2, sizeof(n2), &e),
                     SKV_EINVAL);

    /* Bad options fail before anything is created. */
    skv_net_session *s = NULL;
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = "x";
    const char *bad[] = {"10.1.2.0", "10.1.2.0/33", "10.1.2.1/24",
                         "10.1.2.0/8", "10.01.2.0/24", "10.1.2.0/24 ",
                         "256.1.2.0/24", "10.1.2.0/30", NULL};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        o.subnet = bad[i];
        int rc = skv_net_session_create(&s, &o, &e);
        ck_assert_msg(rc == SKV_EINVAL || rc == SKV_ERANGE, "subnet '%s': %d",
                      bad[i] ? bad[i] : "(null)", rc);
        ck_assert_ptr_null(s);
    }
    ck_assert(strstr(e.message, "subnet") != NULL);
    o.subnet = "10.1.2.0/24";
    o.isolate_cidr = "10.0.0.0/33";
    ck_assert_int_eq(skv_net_session_create(&s, &o, &e), SKV_EINVAL);
    o.isolate_cidr = NULL;
    o.version = 99;
    ck_assert_int_eq(skv_net_session_create(&s, &o, &e), SKV_EVERSION);
    ck_assert_int_eq(skv_net_route_add("10.2.0.0/24", "10.2.0.5", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_route_add("10.2.0.0/24", "x", &e), SKV_EINVAL);
    ck_assert_int_eq(skv_net_cleanup_stale("SKV", NULL, 0, NULL, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_session_destroy(NULL, &e), 0);
}
END_TEST

/* Cluster hostnames for /etc/hosts. */
START_TEST(test_spec_add_host)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *spec = NULL;
    SKV_CK_OK(skv_container_spec_new(&spec, "k1", &e), &e);
    SKV_CK_OK(skv_container_spec_add_host(spec, "sub1", "10.1.2.3", &e), &e);
    SKV_CK_OK(skv_container_spec_add_host(spec, "v6.host", "fd00::1", &e), &e);
    ck_assert_int_eq(skv_container_spec_add_host(spec, "-x", "10.1.2.3", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_host(spec, "a b", "10.1.2.3", &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_container_spec_add_host(spec, "sub2", "10.1.2", &e),
                     SKV_EINVAL);
    ck_assert(strstr(e.message, "sub2") != NULL);
    ck_assert_int_eq(skv_container_spec_add_host(spec, "sub2", NULL, &e),
                     SKV_EINVAL);
    skv_container_spec_free(spec);
}
END_TEST

/* ---- tests in a throwaway network namespace ----------------------------- */

static int idle(void *arg)
{
    (void)arg;
    pause();
    return 0;
}

START_TEST(test_bridge_veth_listed_and_destroyed)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-list", "10.123.1.0/24", NULL);
    char br[SKV_NET_IFNAME_MAX], v2[32], v3[32];
    snprintf(br, sizeof(br), "%s", skv_net_session_bridge(s));
    snprintf(v2, sizeof(v2), "%sv2", br);
    snprintf(v3, sizeof(v3), "%sv3", br);
    ck_assert_str_eq(skv_net_session_gateway(s), "10.123.1.1");
    ck_assert_str_eq(skv_net_session_subnet(s), "10.123.1.0/24");
    char mac0[32], mac1[32];
    link_mac(br, mac0, sizeof(mac0));
    nsproc c = ns_spawn(idle, NULL);
    attach(s, c.pid, 2);
    /* A second interface in the same namespace, through its ns file. */
    char nspath[64];
    snprintf(nspath, sizeof(nspath), "/proc/%ld/ns/net", (long)c.pid);
    skv_net_attach_options a = SKV_NET_ATTACH_OPTIONS_INIT;
    a.netns_path = nspath;
    a.ifname = "eth1";
    a.host_index = 3;
    SKV_CK_OK(skv_net_attach(s, &a, &e), &e);
    /* The gateway keeps its MAC as ports join (kernels' ARP caches). */
    link_mac(br, mac1, sizeof(mac1));
    ck_assert_str_eq(mac0, mac1);
    char **names = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_net_links("skv", &names, &n, &e), &e);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(names[0], br);
    ck_assert_str_eq(names[1], v2);
    ck_assert_str_eq(names[2], v3);
    skv_net_links_free(names, n);
    /* The same index again is refused and changes nothing. */
    a.ifname = "eth2";
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EEXIST);
    ck_assert_uint_eq(count_links("skv"), 3);
    SKV_CK_OK(skv_net_detach(s, 3, &e), &e);
    ck_assert_int_eq(skv_net_detach(s, 3, &e), SKV_ENOENT);
    ck_assert_uint_eq(count_links("skv"), 2);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
    kill(c.pid, SIGKILL);
    ns_wait(&c);
}
END_TEST

START_TEST(test_tcp_within_session)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-tcp", "10.123.7.0/24", NULL);
    ck_assert_int_eq(exchange(s, 2, s, 3), 0);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
}
END_TEST

START_TEST(test_sessions_isolated)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    /* Forwarding on, as on a multi-node agent: only the rules separate. */
    SKV_CK_OK(skv_net_forwarding_enable(&e), &e);
    skv_net_session *a = session("sess-a", "10.123.1.0/24", "10.123.0.0/16");
    skv_net_session *b = session("sess-b", "10.123.2.0/24", "10.123.0.0/16");
    ck_assert(rule_exists(skv_net_session_bridge(a)));
    ck_assert_int_eq(exchange(b, 2, a, 2), 3);
    ck_assert_int_eq(exchange(a, 3, b, 3), 3);
    /* Allowing each other's subnet (what a multi-node session does for its
     * own subnets) makes the same traffic pass: the rules decide. */
    SKV_CK_OK(skv_net_session_allow(a, "10.123.2.0/24", &e), &e);
    SKV_CK_OK(skv_net_session_allow(b, "10.123.1.0/24", &e), &e);
    ck_assert_int_eq(skv_net_session_allow(b, "10.123.1.0/24", &e),
                     SKV_EEXIST);
    ck_assert_int_eq(exchange(b, 4, a, 4), 0);
    char bra[SKV_NET_IFNAME_MAX], brb[SKV_NET_IFNAME_MAX];
    snprintf(bra, sizeof(bra), "%s", skv_net_session_bridge(a));
    snprintf(brb, sizeof(brb), "%s", skv_net_session_bridge(b));
    SKV_CK_OK(skv_net_session_destroy(a, &e), &e);
    SKV_CK_OK(skv_net_session_destroy(b, &e), &e);
    ck_assert(!rule_exists(bra));
    ck_assert(!rule_exists(brb));
    ck_assert_uint_eq(count_links("skv"), 0);
}
END_TEST

START_TEST(test_stale_cleanup)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s1 = session("old-1", "10.123.1.0/24", NULL);
    skv_net_session *s2 = session("kept-2", "10.123.2.0/24", NULL);
    skv_net_session *s3 = session("old-3", "10.123.3.0/24", "10.123.0.0/16");
    char b2[SKV_NET_IFNAME_MAX], b3[SKV_NET_IFNAME_MAX];
    snprintf(b2, sizeof(b2), "%s", skv_net_session_bridge(s2));
    snprintf(b3, sizeof(b3), "%s", skv_net_session_bridge(s3));
    nsproc c = ns_spawn(idle, NULL);
    attach(s1, c.pid, 2);
    /* The agent "crashes": handles gone, network left behind. */
    skv_net_session_free(s1);
    skv_net_session_free(s2);
    skv_net_session_free(s3);
    /* A link that only shares the prefix is not ours (test-only `ip`). */
    ck_assert_int_eq(system("ip link add skvzz type bridge"), 0);
    ck_assert_uint_eq(count_links("skv"), 5);
    const char *keep[] = {"kept-2"};
    size_t removed = 0;
    SKV_CK_OK(skv_net_cleanup_stale(NULL, keep, 1, &removed, &e), &e);
    ck_assert_uint_eq(removed, 5); /* 2 bridges, 1 veth, 2 rules */
    ck_assert(!rule_exists(b3));
    char **names = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_net_links("skv", &names, &n, &e), &e);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(names[0], b2);
    ck_assert_str_eq(names[1], "skvzz");
    skv_net_links_free(names, n);
    SKV_CK_OK(skv_net_cleanup_stale("skv", NULL, 0, &removed, &e), &e);
    ck_assert_uint_eq(removed, 1);
    ck_assert_uint_eq(count_links("skv"), 1);
    kill(c.pid, SIGKILL);
    ns_wait(&c);
}
END_TEST

START_TEST(test_bad_input_leaves_nothing)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-bad", "10.123.1.0/24", NULL);
    nsproc c = ns_spawn(idle, NULL);
    skv_net_attach_options a = SKV_NET_ATTACH_OPTIONS_INIT;
    a.pid = 999999999;
    a.host_index = 2;
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_ENOENT);
    a.pid = c.pid;
    a.host_index = 1;
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_ERANGE);
    a.host_index = 255;
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_ERANGE);
    a.host_index = 2;
    a.ifname = "bad name";
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EINVAL);
    a.ifname = "lo"; /* exists in the namespace: the pair is not kept */
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EEXIST);
    a.ifname = NULL;
    a.netns_path = "/proc/1/ns/net";
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EINVAL);
    a.pid = 0;
    a.netns_path = "proc/1/ns/net";
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EINVAL);
    a.version = 7;
    ck_assert_int_eq(skv_net_attach(s, &a, &e), SKV_EVERSION);
    ck_assert_uint_eq(count_links("skv"), 1);
    attach(s, c.pid, 2);
    ck_assert_uint_eq(count_links("skv"), 2);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
    kill(c.pid, SIGKILL);
    ns_wait(&c);
}
END_TEST

START_TEST(test_create_conflicts_roll_back)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-bad", "10.123.1.0/24", NULL);
    /* Same session id again: refused, the existing bridge untouched;
     * adopt takes it over. */
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = "sess-bad";
    o.subnet = "10.123.1.0/24";
    skv_net_session *s2 = NULL;
    ck_assert_int_eq(skv_net_session_create(&s2, &o, &e), SKV_EEXIST);
    ck_assert_ptr_null(s2);
    o.adopt = true;
    SKV_CK_OK(skv_net_session_create(&s2, &o, &e), &e);
    skv_net_session_free(s2);
    /* A failure part-way (an isolation rule that is in the way) removes
     * the new bridge and its own rule, and nothing else. */
    char br[SKV_NET_IFNAME_MAX], cmd[160];
    SKV_CK_OK(skv_net_bridge_name(NULL, "sess-r", br, sizeof(br), &e), &e);
    snprintf(cmd, sizeof(cmd), "ip rule add iif %s to 10.123.0.0/16 "
             "prohibit pref 9001", br);
    ck_assert_int_eq(system(cmd), 0);
    o.adopt = false;
    o.session_id = "sess-r";
    o.subnet = "10.123.4.0/24";
    o.isolate_cidr = "10.123.0.0/16";
    ck_assert_int_eq(skv_net_session_create(&s2, &o, &e), SKV_ESYS);
    ck_assert(strstr(e.message, br) != NULL);
    ck_assert_uint_eq(count_links("skv"), 1);
    ck_assert_uint_eq(rule_count(br), 1);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
}
END_TEST

START_TEST(test_routes)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-route", "10.123.1.0/24", NULL);
    nsproc c = ns_spawn(idle, NULL);
    attach(s, c.pid, 2); /* carrier on the bridge */
    /* Routes to another agent's subnet via its host address. */
    SKV_CK_OK(skv_net_route_add("10.124.0.0/24", "10.123.1.2", &e), &e);
    ck_assert_int_eq(skv_net_route_add("10.124.0.0/24", "10.123.1.2", &e),
                     SKV_EEXIST);
    SKV_CK_OK(skv_net_route_del("10.124.0.0/24", "10.123.1.2", &e), &e);
    ck_assert_int_eq(skv_net_route_del("10.124.0.0/24", "10.123.1.2", &e),
                     SKV_ENOENT);
    ck_assert_int_eq(skv_net_route_add("10.124.0.0/24", "10.99.0.1", &e),
                     SKV_EINVAL);
    /* After a restart: every route of ours goes, the bridge's own stays. */
    SKV_CK_OK(skv_net_route_add("10.124.0.0/24", "10.123.1.2", &e), &e);
    SKV_CK_OK(skv_net_route_add("10.125.0.0/16", "10.123.1.3", &e), &e);
    size_t removed = 0;
    SKV_CK_OK(skv_net_route_flush(&removed, &e), &e);
    ck_assert_uint_eq(removed, 2);
    ck_assert_int_eq(skv_net_route_del("10.125.0.0/16", "10.123.1.3", &e),
                     SKV_ENOENT);
    SKV_CK_OK(skv_net_route_flush(&removed, &e), &e);
    ck_assert_uint_eq(removed, 0);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
    kill(c.pid, SIGKILL);
    ns_wait(&c);
}
END_TEST

/* ---- two agents: host-gateway routes between their subnets --------------- */

/* In agent B (a forked child, no Check calls): a kernel namespace attached
 * to `net` at index 2 that connects to ip; its client() result. */
static int b_kernel(skv_net_session *net, const char *ip)
{
    int ready[2], go[2];
    if (pipe(ready) < 0 || pipe(go) < 0)
        return 50;
    pid_t pid = fork();
    if (pid == 0) {
        char b;
        if (unshare(CLONE_NEWNET) < 0 || write(ready[1], "r", 1) != 1 ||
            read(go[0], &b, 1) != 1)
            _exit(51);
        _exit(connect_once(ip));
    }
    char b;
    if (pid < 0 || read(ready[0], &b, 1) != 1)
        return 52;
    skv_net_attach_options a = SKV_NET_ATTACH_OPTIONS_INIT;
    a.pid = pid;
    a.host_index = 2;
    int st = 0, rc = skv_net_attach(net, &a, NULL) == 0 ? 0 : 53;
    if (write(go[1], "g", 1) != 1)
        rc = 54;
    waitpid(pid, &st, 0);
    close(ready[0]);
    close(ready[1]);
    close(go[0]);
    close(go[1]);
    return rc ? rc : WIFEXITED(st) ? WEXITSTATUS(st) : 55;
}

static skv_net_session *b_session(const char *id, const char *subnet)
{
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = id;
    o.subnet = subnet;
    o.isolate_cidr = "10.130.0.0/16";
    /* Outbound NAT on: traffic inside the cluster CIDR must still keep
     * the kernel's address (the server on A checks). */
    o.outbound_nat = true;
    skv_net_session *s = NULL;
    return skv_net_session_create(&s, &o, NULL) == 0 ? s : NULL;
}

/* Agent B: uplink address, forwarding, its part of session "multi" plus a
 * foreign session, the route to A's subnet; then the foreign kernel must be
 * refused and the session's kernel must get through. */
static int agent_b(void *arg)
{
    (void)arg;
    if (system("ip addr add 192.168.77.2/24 dev uplb && "
               "ip link set uplb up && ip link set lo up") != 0 ||
        skv_net_forwarding_enable(NULL) != 0)
        return 60;
    skv_net_session *m = b_session("multi", "10.130.2.0/24");
    skv_net_session *x = b_session("foreign", "10.130.3.0/24");
    if (!m || !x || skv_net_session_allow(m, "10.130.1.0/24", NULL) != 0 ||
        skv_net_route_add("10.130.1.0/24", "192.168.77.1", NULL) != 0)
        return 61;
    int foreign = b_kernel(x, "10.130.1.2");
    int member = b_kernel(m, "10.130.1.2");
    int rc = foreign != 3 ? 70 + foreign : member != 0 ? 80 + member : 0;
    if (skv_net_session_destroy(m, NULL) != 0 ||
        skv_net_session_destroy(x, NULL) != 0 ||
        skv_net_route_del("10.130.1.0/24", "192.168.77.1", NULL) != 0)
        return 62;
    char **names = NULL;
    size_t n = 1;
    if (skv_net_links(NULL, &names, &n, NULL) != 0 || n != 0)
        rc = 63;
    skv_net_links_free(names, n);
    /* No nftables rule (outbound NAT) of the sessions is left either. */
    struct nft_ctx *c = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!c || nft_ctx_buffer_output(c) != 0 ||
        nft_run_cmd_from_buffer(c, "list ruleset") != 0 ||
        strstr(nft_ctx_get_output_buffer(c), "sokovan") != NULL)
        rc = 64;
    if (c)
        nft_ctx_free(c);
    return rc;
}

START_TEST(test_two_agents_route)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    nsproc b = ns_spawn(agent_b, NULL);
    /* The "physical" link between the two agents (test-only `ip`). */
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ip link add upla type veth peer name uplb "
             "netns %ld && ip addr add 192.168.77.1/24 dev upla && "
             "ip link set upla up && ip link set lo up", (long)b.pid);
    ck_assert_int_eq(system(cmd), 0);
    /* Hold B's network namespace: when B exits, the kernel tears it down
     * asynchronously, deleting the veth pair and with it our routes via
     * 192.168.77.2 — a race with the route_del checks below. */
    char nspath[64];
    snprintf(nspath, sizeof(nspath), "/proc/%ld/ns/net", (long)b.pid);
    int bns = open(nspath, O_RDONLY | O_CLOEXEC);
    ck_assert_int_ge(bns, 0);
    SKV_CK_OK(skv_net_forwarding_enable(&e), &e);
    skv_net_session *m = session("multi", "10.130.1.0/24", "10.130.0.0/16");
    SKV_CK_OK(skv_net_session_allow(m, "10.130.2.0/24", &e), &e);
    SKV_CK_OK(skv_net_route_add("10.130.2.0/24", "192.168.77.2", &e), &e);
    SKV_CK_OK(skv_net_route_add("10.130.3.0/24", "192.168.77.2", &e), &e);
    int note[2];
    ck_assert(pipe(note) == 0);
    server_arg sa = {note[1], 1, "10.130.2.2"};
    nsproc srv = ns_spawn(serve, &sa);
    attach(m, srv.pid, 2);
    ns_go(&srv);
    char c;
    ck_assert_int_eq(read(note[0], &c, 1), 1);
    ns_go(&b);
    int brc = ns_wait(&b);
    if (brc != 0)
        kill(srv.pid, SIGKILL);
    ck_assert_int_eq(ns_wait(&srv), 0);
    ck_assert_msg(brc == 0, "agent B reported %d", brc);
    usleep(700000);
    SKV_CK_OK(skv_net_route_del("10.130.2.0/24", "192.168.77.2", &e), &e);
    SKV_CK_OK(skv_net_route_del("10.130.3.0/24", "192.168.77.2", &e), &e);
    close(bns);
    SKV_CK_OK(skv_net_session_destroy(m, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
}
END_TEST

/* ---- published ports and outbound NAT (nftables) ------------------------ */

#define TABLE "table ip sokovan_skv"

/* Occurrences of needle in the namespace's whole ruleset, looked at
 * independently of the library (libnftables directly). */
static size_t nft_count(const char *needle)
{
    struct nft_ctx *c = nft_ctx_new(NFT_CTX_DEFAULT);
    ck_assert_ptr_nonnull(c);
    nft_ctx_buffer_output(c);
    nft_ctx_buffer_error(c);
    ck_assert_int_eq(nft_run_cmd_from_buffer(c, "list ruleset"), 0);
    size_t n = 0;
    for (const char *p = nft_ctx_get_output_buffer(c);
         (p = strstr(p, needle)) != NULL; p++)
        n++;
    nft_ctx_free(c);
    return n;
}

/* How many rules of the ruleset carry a comment of this session. */
static size_t nft_rules_of(const skv_net_session *s)
{
    char needle[64];
    snprintf(needle, sizeof(needle), "comment \"%s ",
             skv_net_session_bridge(s));
    return nft_count(needle);
}

static uint16_t publish(skv_net_session *s, uint16_t host_port,
                        unsigned idx, uint16_t lo, uint16_t hi)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_publish_options o = SKV_NET_PUBLISH_OPTIONS_INIT;
    o.host_port = host_port;
    o.host_index = idx;
    o.container_port = PORT;
    o.port_min = lo;
    o.port_max = hi;
    uint16_t bound = 0;
    SKV_CK_OK(skv_net_publish(s, &o, &bound, &e), &e);
    return bound;
}

static int publish_rc(skv_net_session *s, skv_net_proto proto,
                      uint16_t host_port, uint16_t lo, uint16_t hi,
                      skv_error *e)
{
    skv_net_publish_options o = SKV_NET_PUBLISH_OPTIONS_INIT;
    o.proto = proto;
    o.host_port = host_port;
    o.host_index = 2;
    o.container_port = PORT;
    o.port_min = lo;
    o.port_max = hi;
    return skv_net_publish(s, &o, NULL, e);
}

/* A "client" host routed to the agent (192.168.88.1) over uplc; forked
 * before the port is published, so the port is known in advance (the
 * lowest of the range the test gives). */
#define FAR_PORT 40000
static int far_client(void *arg)
{
    (void)arg;
    if (system("ip addr add 192.168.88.2/24 dev uplc && ip link set uplc up"
               " && ip link set lo up && "
               "ip route add default via 192.168.88.1") != 0)
        return 40;
    return connect_port("192.168.88.1", FAR_PORT);
}

/* A kernel of the session reaching its own session's port through the
 * host's address (hairpin). */
static int hairpin_client(void *arg)
{
    (void)arg;
    /* Several rounds apart: the connection stays usable, not only its
     * first exchange. */
    return connect_rounds("192.168.88.1", FAR_PORT, 4, 300);
}

static void host_uplink(pid_t peer)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ip link add uplh type veth peer name uplc "
             "netns %ld && ip addr add 192.168.88.1/24 dev uplh && "
             "ip link set uplh up && ip link set lo up", (long)peer);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_publish_reachable)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_net_forwarding_enable(&e), &e);
    nsproc far = ns_spawn(far_client, NULL);
    host_uplink(far.pid);
    skv_net_session *s = session("sess-pub", "10.123.5.0/24", NULL);
    int note[2];
    ck_assert(pipe(note) == 0);
    server_arg sa = {note[1], 4, NULL};
    nsproc srv = ns_spawn(serve, &sa);
    attach(s, srv.pid, 2);
    ns_go(&srv);
    char b;
    ck_assert_int_eq(read(note[0], &b, 1), 1);
    unsigned port = publish(s, 0, 2, FAR_PORT, FAR_PORT + 1);
    ck_assert_uint_eq(port, FAR_PORT);
    skv_net_port *ports = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_net_ports(s, &ports, &n, &e), &e);
    ck_assert_uint_eq(n, 1);
    ck_assert_int_eq(ports[0].proto, SKV_NET_TCP);
    ck_assert_uint_eq(ports[0].host_port, 40000);
    ck_assert_uint_eq(ports[0].host_index, 2);
    ck_assert_uint_eq(ports[0].container_port, PORT);
    ck_assert_str_eq(ports[0].container_addr, "10.123.5.2");
    skv_free(ports);
    /* From the host itself, by its own address and by 127.0.0.1, from
     * another host routed to it, and from a kernel of the session. */
    ck_assert_int_eq(connect_port("192.168.88.1", port), 0);
    ck_assert_int_eq(connect_port("127.0.0.1", port), 0);
    nsproc pin = ns_spawn(hairpin_client, NULL);
    attach(s, pin.pid, 3);
    ns_go(&pin);
    ck_assert_int_eq(ns_wait(&pin), 0);
    /* Last: 192.168.88.1 vanishes once the client's namespace is gone. */
    ns_go(&far);
    ck_assert_int_eq(ns_wait(&far), 0);
    ck_assert_int_eq(ns_wait(&srv), 0);
    /* Unpublished: nothing answers on the host port any more. */
    SKV_CK_OK(skv_net_unpublish(s, SKV_NET_TCP, port, &e), &e);
    ck_assert_int_eq(skv_net_unpublish(s, SKV_NET_TCP, port, &e), SKV_ENOENT);
    ck_assert_int_eq(connect_port("127.0.0.1", port), 2);
    ck_assert_uint_eq(nft_count("sess"), 0);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    /* Published again, then the session goes: every rule goes with it. */
    publish(s, 40001, 2, 0, 0);
    ck_assert_uint_eq(nft_rules_of(s), 3);
    char br[SKV_NET_IFNAME_MAX];
    snprintf(br, sizeof(br), "%s", skv_net_session_bridge(s));
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(nft_count(br), 0);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    ck_assert_uint_eq(count_links("skv"), 0);
    close(note[0]);
    close(note[1]);
}
END_TEST

START_TEST(test_publish_conflicts)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *a = session("sess-pa", "10.123.1.0/24", NULL);
    skv_net_session *b = session("sess-pb", "10.123.2.0/24", NULL);
    ck_assert_uint_eq(publish(a, 40000, 2, 0, 0), 40000);
    /* Taken by the same or another session: refused, nothing added. */
    ck_assert_int_eq(publish_rc(a, SKV_NET_TCP, 40000, 0, 0, &e), SKV_EBUSY);
    ck_assert(strstr(e.message, "40000") != NULL);
    ck_assert_int_eq(publish_rc(b, SKV_NET_TCP, 40000, 0, 0, &e), SKV_EBUSY);
    ck_assert_int_eq(publish_rc(b, SKV_NET_TCP, 0, 40000, 40000, &e),
                     SKV_ENOSPC);
    ck_assert_uint_eq(nft_rules_of(a), 3);
    ck_assert_uint_eq(nft_rules_of(b), 0);
    /* The other protocol is another port. */
    SKV_CK_OK(publish_rc(b, SKV_NET_UDP, 40000, 0, 0, &e), &e);
    /* A port a socket of the host holds is busy; the range skips it. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_port = htons(40001)};
    ck_assert(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
              listen(fd, 1) == 0);
    ck_assert_int_eq(publish_rc(b, SKV_NET_TCP, 40001, 0, 0, &e), SKV_EBUSY);
    ck_assert(strstr(e.message, "in use") != NULL);
    ck_assert_uint_eq(publish(b, 0, 3, 40000, 40010), 40002);
    close(fd);
    skv_net_port *ports = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_net_ports(b, &ports, &n, &e), &e);
    ck_assert_uint_eq(n, 2); /* sorted: TCP before UDP */
    ck_assert(ports[0].proto == SKV_NET_TCP && ports[0].host_port == 40002 &&
              ports[0].host_index == 3);
    ck_assert(ports[1].proto == SKV_NET_UDP && ports[1].host_port == 40000);
    skv_free(ports);
    SKV_CK_OK(skv_net_unpublish(b, SKV_NET_UDP, 40000, &e), &e);
    SKV_CK_OK(skv_net_session_destroy(a, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 1); /* b still publishes */
    SKV_CK_OK(skv_net_session_destroy(b, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 0);
}
END_TEST

START_TEST(test_publish_bad_input_leaves_nothing)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *s = session("sess-pbad", "10.123.1.0/24", NULL);
    skv_net_publish_options o = SKV_NET_PUBLISH_OPTIONS_INIT;
    o.host_index = 2;
    o.container_port = 22;
    ck_assert_int_eq(skv_net_publish(NULL, &o, NULL, &e), SKV_EINVAL);
    ck_assert_int_eq(skv_net_publish(s, NULL, NULL, &e), SKV_EINVAL);
    o.version = 9;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_EVERSION);
    o.version = SKV_NET_PUBLISH_OPTIONS_VERSION;
    o.proto = (skv_net_proto)5;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_EINVAL);
    o.proto = SKV_NET_TCP;
    o.container_port = 0;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_ERANGE);
    o.container_port = 22;
    o.host_index = 1;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_ERANGE);
    o.host_index = 255;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_ERANGE);
    o.host_index = 2;
    o.port_min = 50;
    o.port_max = 40;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_ERANGE);
    o.port_min = 0;
    ck_assert_int_eq(skv_net_publish(s, &o, NULL, &e), SKV_ERANGE);
    o.port_max = 0;
    ck_assert_int_eq(skv_net_unpublish(s, (skv_net_proto)1, 22, &e),
                     SKV_EINVAL);
    ck_assert_int_eq(skv_net_unpublish(s, SKV_NET_TCP, 22, &e), SKV_ENOENT);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    /* A failure after the rules were added (route_localnet cannot be set
     * under a fake system root) takes them away again. */
    SKV_CK_OK(skv_sysroot_set("/nonexistent-skv-root", &e), &e);
    ck_assert_int_lt(skv_net_publish(s, &o, NULL, &e), 0);
    SKV_CK_OK(skv_sysroot_set(NULL, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    skv_net_port *ports = (skv_net_port *)&o;
    size_t n = 7;
    SKV_CK_OK(skv_net_ports(s, &ports, &n, &e), &e);
    ck_assert(n == 0 && ports == NULL);
    /* Version 1 options have no outbound_nat field: never read. */
    skv_net_session_options so = SKV_NET_SESSION_OPTIONS_INIT;
    so.version = 1;
    so.session_id = "sess-v1";
    so.subnet = "10.123.3.0/24";
    so.outbound_nat = true;
    skv_net_session *v1 = NULL;
    SKV_CK_OK(skv_net_session_create(&v1, &so, &e), &e);
    bool nat = true;
    SKV_CK_OK(skv_net_outbound_nat(v1, &nat, &e), &e);
    ck_assert(!nat);
    ck_assert_int_eq(skv_net_outbound_nat(NULL, &nat, &e), SKV_EINVAL);
    SKV_CK_OK(skv_net_session_destroy(v1, &e), &e);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
    ck_assert_uint_eq(nft_count(TABLE), 0);
}
END_TEST

/* The "internet": a host at 203.0.113.2 with no route back to the session
 * subnets, serving one exchange that must come from the agent's address. */
static int internet(void *arg)
{
    if (system("ip addr add 203.0.113.2/24 dev wani && ip link set wani up "
               "&& ip link set lo up") != 0)
        return 30;
    return serve(arg);
}

START_TEST(test_outbound_nat)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_net_forwarding_enable(&e), &e);
    int note[2];
    ck_assert(pipe(note) == 0);
    server_arg sa = {note[1], 1, "203.0.113.1"};
    nsproc net = ns_spawn(internet, &sa);
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "ip link add wanh type veth peer name wani "
             "netns %ld && ip addr add 203.0.113.1/24 dev wanh && "
             "ip link set wanh up", (long)net.pid);
    ck_assert_int_eq(system(cmd), 0);
    ns_go(&net);
    char b;
    ck_assert_int_eq(read(note[0], &b, 1), 1);
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = "sess-nat";
    o.subnet = "10.123.6.0/24";
    o.isolate_cidr = "10.123.0.0/16";
    o.outbound_nat = true;
    skv_net_session *s = NULL;
    SKV_CK_OK(skv_net_session_create(&s, &o, &e), &e);
    bool nat = false;
    SKV_CK_OK(skv_net_outbound_nat(s, &nat, &e), &e);
    ck_assert(nat);
    ck_assert_uint_eq(nft_count("ip daddr != 10.123.0.0/16 masquerade"), 1);
    client_arg ca = {"203.0.113.2"};
    nsproc k = ns_spawn(client, &ca);
    attach(s, k.pid, 2);
    ns_go(&k);
    ck_assert_int_eq(ns_wait(&k), 0);
    ck_assert_int_eq(ns_wait(&net), 0); /* saw the agent's address */
    /* Without outbound NAT the answer cannot find its way back. */
    skv_net_session *plain = session("sess-plain", "10.123.7.0/24", NULL);
    SKV_CK_OK(skv_net_outbound_nat(plain, &nat, &e), &e);
    ck_assert(!nat);
    k = ns_spawn(client, &ca);
    attach(plain, k.pid, 2);
    ns_go(&k);
    ck_assert_int_eq(ns_wait(&k), 3);
    SKV_CK_OK(skv_net_session_destroy(plain, &e), &e);
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    ck_assert_uint_eq(count_links("skv"), 0);
    close(note[0]);
    close(note[1]);
}
END_TEST

static skv_net_session *nat_session(const char *id, const char *subnet,
                                    bool adopt)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = id;
    o.subnet = subnet;
    o.outbound_nat = true;
    o.adopt = adopt;
    skv_net_session *s = NULL;
    SKV_CK_OK(skv_net_session_create(&s, &o, &e), &e);
    return s;
}

START_TEST(test_nft_stale_cleanup)
{
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    skv_net_session *old = nat_session("old-n", "10.123.1.0/24", false);
    skv_net_session *kept = nat_session("kept-n", "10.123.2.0/24", false);
    publish(old, 40000, 2, 0, 0);
    publish(kept, 40001, 2, 0, 0);
    char bo[SKV_NET_IFNAME_MAX], bk[SKV_NET_IFNAME_MAX];
    snprintf(bo, sizeof(bo), "%s", skv_net_session_bridge(old));
    snprintf(bk, sizeof(bk), "%s", skv_net_session_bridge(kept));
    ck_assert_uint_eq(nft_rules_of(old), 4);
    ck_assert_uint_eq(nft_rules_of(kept), 4);
    /* The agent "crashes"; after the restart only kept-n is known. */
    skv_net_session_free(old);
    skv_net_session_free(kept);
    const char *keep[] = {"kept-n"};
    size_t removed = 0;
    SKV_CK_OK(skv_net_cleanup_stale(NULL, keep, 1, &removed, &e), &e);
    ck_assert_uint_eq(removed, 5); /* the bridge, 3 port rules, 1 NAT */
    ck_assert_uint_eq(nft_count(bo), 0);
    ck_assert_uint_eq(nft_count(bk), 5); /* 4 comments, 1 oifname */
    /* Adopted again: no duplicate rule, the port is still listed. */
    kept = nat_session("kept-n", "10.123.2.0/24", true);
    ck_assert_uint_eq(nft_rules_of(kept), 4);
    skv_net_port *ports = NULL;
    size_t n = 0;
    SKV_CK_OK(skv_net_ports(kept, &ports, &n, &e), &e);
    ck_assert(n == 1 && ports[0].host_port == 40001);
    skv_free(ports);
    skv_net_session_free(kept);
    SKV_CK_OK(skv_net_cleanup_stale(NULL, NULL, 0, &removed, &e), &e);
    ck_assert_uint_eq(removed, 5);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    ck_assert_uint_eq(count_links("skv"), 0);
}
END_TEST

/* ---- runtime integration: busybox containers on a session network ------ */

static char rt_root[PATH_MAX];
static const char *rt_skip;

/* A busybox root filesystem with the applets the test runs. */
static void rt_setup(void)
{
    rt_skip = NULL;
    if (geteuid() != 0 || access("/bin/busybox", X_OK) != 0) {
        rt_skip = "needs root and /bin/busybox (busybox-static)";
        return;
    }
    snprintf(rt_root, sizeof(rt_root), "/tmp/skv-net-%ld-XXXXXX",
             (long)getpid());
    char cmd[PATH_MAX * 2];
    if (!mkdtemp(rt_root)) {
        rt_skip = "mkdtemp failed";
        return;
    }
    snprintf(cmd, sizeof(cmd),
             "set -e; cd %s; mkdir -p rootfs/bin rootfs/etc state; "
             "cp /bin/busybox rootfs/bin/; for a in sh nc echo cat sleep "
             "hostname; do ln -s busybox rootfs/bin/$a; done", rt_root);
    if (system(cmd) != 0)
        rt_skip = "could not build the busybox rootfs";
}

static void rt_teardown(void)
{
    if (!rt_root[0])
        return;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/state", rt_root);
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = path;
    skv_runtime *rt = NULL;
    char **ids = NULL;
    size_t n = 0;
    if (skv_runtime_open(&rt, &o, NULL) == 0 &&
        skv_runtime_list(rt, &ids, &n, NULL) == 0) {
        for (size_t i = 0; i < n; i++)
            skv_runtime_destroy(rt, ids[i], 0, NULL);
        skv_runtime_list_free(ids, n);
    }
    skv_runtime_free(rt);
    snprintf(path, sizeof(path), "rm -rf %s", rt_root);
    if (system(path) != 0)
        fprintf(stderr, "net: could not remove %s\n", rt_root);
    rt_root[0] = '\0';
}

/* Create a container on the session network (index idx), then start it. */
static void rt_join(skv_runtime *rt, skv_net_session *net, const char *id,
                    unsigned idx, const char *script)
{
    skv_error e = SKV_ERROR_INIT;
    skv_container_spec *s = NULL;
    char rootfs[PATH_MAX + 8];
    snprintf(rootfs, sizeof(rootfs), "%s/rootfs", rt_root);
    SKV_CK_OK(skv_container_spec_new(&s, id, &e), &e);
    SKV_CK_OK(skv_container_spec_set_rootfs(s, rootfs, &e), &e);
    const char *argv[] = {"sh", "-c", script};
    SKV_CK_OK(skv_container_spec_set_argv(s, 3, argv, &e), &e);
    SKV_CK_OK(skv_container_spec_set_hostname(s, id, &e), &e);
    const char *hosts[] = {"main1", "sub1"};
    for (unsigned i = 0; i < 2; i++) {
        char ip[32];
        SKV_CK_OK(skv_net_session_address(net, 2 + i, ip, sizeof(ip), &e), &e);
        SKV_CK_OK(skv_container_spec_add_host(s, hosts[i], ip, &e), &e);
    }
    SKV_CK_OK(skv_runtime_create(rt, s, &e), &e);
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_status(rt, id, &st, &e), &e);
    attach(net, (pid_t)st.pid, idx);
    SKV_CK_OK(skv_runtime_start(rt, id, &e), &e);
    skv_container_spec_free(s);
}

static void rt_log(skv_runtime *rt, const char *id, char *buf, size_t n)
{
    char *path = NULL;
    SKV_CK_OK(skv_runtime_log_path(rt, id, "stdout", &path, NULL), NULL);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t len = fread(buf, 1, n - 1, f);
    buf[len] = '\0';
    fclose(f);
    skv_free(path);
}

START_TEST(test_runtime_containers_talk)
{
    if (rt_skip) {
        fprintf(stderr, "%s: skipped: %s\n", __func__, rt_skip);
        return;
    }
    NEED_ROOT();
    skv_error e = SKV_ERROR_INIT;
    char state[PATH_MAX + 8];
    snprintf(state, sizeof(state), "%s/state", rt_root);
    skv_runtime_options o = SKV_RUNTIME_OPTIONS_INIT;
    o.state_dir = state;
    skv_runtime *rt = NULL;
    SKV_CK_OK(skv_runtime_open(&rt, &o, &e), &e);
    skv_net_session *net = session("sess-rt", "10.123.9.0/24", NULL);
    rt_join(rt, net, "main1", 2,
            "echo hello-from-$(hostname) | nc -l -p 7411");
    /* main1 may not listen yet: retry; the name comes from /etc/hosts. */
    rt_join(rt, net, "sub1", 3,
            "for i in 1 2 3 4 5 6 7 8 9 10; do nc main1 7411 && exit 0; "
            "sleep 1; done; exit 1");
    skv_container_status st = SKV_CONTAINER_STATUS_INIT;
    SKV_CK_OK(skv_runtime_wait(rt, "sub1", 30000, &st, &e), &e);
    char out[4096];
    rt_log(rt, "sub1", out, sizeof(out));
    ck_assert_msg(st.exit_code == 0 && strstr(out, "hello-from-main1\n"),
                  "sub1 exit %d, output '%s'", st.exit_code, out);
    SKV_CK_OK(skv_runtime_wait(rt, "main1", 30000, &st, &e), &e);
    ck_assert_int_eq(st.exit_code, 0);
    SKV_CK_OK(skv_runtime_destroy(rt, "main1", 0, &e), &e);
    SKV_CK_OK(skv_runtime_destroy(rt, "sub1", 0, &e), &e);
    SKV_CK_OK(skv_net_session_destroy(net, &e), &e);
    ck_assert_uint_eq(count_links("skv"), 0);
    skv_runtime_free(rt);
}
END_TEST

/* ---- host guard (issue 13) ---------------------------------------------- */

/* A session whose kernels may not reach the host but for allow. */
static skv_net_session *guarded(const char *id, const char *subnet,
                                const char *allow, bool adopt)
{
    skv_error e = SKV_ERROR_INIT;
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = id;
    o.subnet = subnet;
    o.isolate_cidr = "10.91.0.0/16";
    o.adopt = adopt;
    o.host_guard = true;
    o.host_allow = allow;
    skv_net_session *s = NULL;
    SKV_CK_OK(skv_net_session_create(&s, &o, &e), &e);
    return s;
}

/* A kernel at idx connecting to ip:PORT: connect_once's result. */
static int kernel_connects(skv_net_session *s, const char *ip, unsigned idx)
{
    client_arg ca = {ip};
    nsproc k = ns_spawn(client, &ca);
    attach(s, k.pid, idx);
    ns_go(&k);
    return ns_wait(&k);
}

/* The host's server: listening on 0.0.0.0:PORT in the test's namespace
 * (the agent's host) for one exchange. */
static pid_t host_server(int note[2])
{
    ck_assert(pipe(note) == 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        server_arg sa = {note[1], 1, NULL};
        _exit(serve(&sa));
    }
    char b;
    ck_assert_int_eq(read(note[0], &b, 1), 1);
    return pid;
}

/* Whether the link has an IPv6 address (a link-local one comes with up). */
static bool has_ipv6(const char *ifname)
{
    struct ifaddrs *ifa = NULL;
    ck_assert_int_eq(getifaddrs(&ifa), 0);
    bool found = false;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
        found |= i->ifa_addr && i->ifa_addr->sa_family == AF_INET6 &&
                 strcmp(i->ifa_name, ifname) == 0;
    freeifaddrs(ifa);
    return found;
}

START_TEST(test_host_guard)
{
    NEED_ROOT();
    /* The host has a second address besides the session's gateway. */
    ck_assert_int_eq(system("ip link set lo up && ip link add hga type veth"
                            " peer name hgb && ip addr add 192.168.77.1/24 "
                            "dev hga && ip link set hga up && "
                            "ip link set hgb up"), 0);
    int note[2];
    pid_t srv = host_server(note);
    skv_net_session *s = guarded("sess-guard", "10.91.1.0/24", NULL, false);
    ck_assert_uint_eq(nft_rules_of(s), 2); /* replies, then drop */
    /* Neither the gateway nor the host's other address answers. */
    ck_assert_int_eq(kernel_connects(s, "10.91.1.1", 2), 3);
    ck_assert_int_eq(kernel_connects(s, "192.168.77.1", 3), 3);
    /* Kernels of the session still reach each other. */
    ck_assert_int_eq(exchange(s, 4, s, 5), 0);
    /* Adopted with an allow-list: the port is reachable now. */
    skv_net_session_free(s);
    s = guarded("sess-guard", "10.91.1.0/24", "dns,tcp:7411", true);
    ck_assert_uint_eq(nft_rules_of(s), 5);
    ck_assert_int_eq(kernel_connects(s, "10.91.1.1", 2), 0);
    int st = 0;
    ck_assert_int_eq(waitpid(srv, &st, 0), srv);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* A port published to the host: the host connects, the kernel's
     * answers come back through the guard (established). */
    server_arg sa = {note[1], 1, NULL};
    nsproc k = ns_spawn(serve, &sa);
    attach(s, k.pid, 6);
    ns_go(&k);
    char b;
    ck_assert_int_eq(read(note[0], &b, 1), 1);
    ck_assert_uint_eq(publish(s, 40100, 6, 0, 0), 40100);
    ck_assert_int_eq(connect_port("192.168.77.1", 40100), 0);
    ck_assert_int_eq(ns_wait(&k), 0);
    /* The bridge had ports up for a while: still no IPv6 link-local
     * address on it to reach the host by. */
    if (access("/proc/sys/net/ipv6", F_OK) == 0)
        ck_assert(!has_ipv6(skv_net_session_bridge(s)));
    /* Nothing of the guard outlives the session. */
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_net_session_destroy(s, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 0);
    ck_assert_uint_eq(count_links("skv"), 0);
    close(note[0]);
    close(note[1]);
}
END_TEST

/* A guard left by a dead agent goes with the stale clean-up. */
START_TEST(test_host_guard_stale_cleanup)
{
    NEED_ROOT();
    skv_net_session *s = guarded("sess-g1", "10.91.2.0/24", "tcp:22", false);
    skv_net_session *k = guarded("sess-g2", "10.91.3.0/24", NULL, false);
    ck_assert_uint_eq(nft_rules_of(s), 3);
    skv_net_session_free(s);
    const char *keep[] = {"sess-g2"};
    size_t removed = 0;
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_net_cleanup_stale(NULL, keep, 1, &removed, &e), &e);
    ck_assert_uint_eq(nft_count("sess-g1"), 0);
    ck_assert_uint_eq(nft_rules_of(k), 2);
    ck_assert_uint_eq(count_links("skv"), 1); /* sess-g2's bridge */
    SKV_CK_OK(skv_net_session_destroy(k, &e), &e);
    ck_assert_uint_eq(nft_count(TABLE), 0);
}
END_TEST

START_TEST(test_host_allow_bad_input)
{
    static const char *const bad[] = {
        "tcp", "tcp:", "tcp:0", "tcp:65536", "tcp:022", "sctp:5", "tcp:5-4",
        "tcp:22,", ",tcp:22", "tcp:22,,udp:1", "tcp:1-", "udp:-3", "DNS",
        "tcp: 22", "tcp:22 ", "tcp:1,tcp:2,tcp:3,tcp:4,tcp:5,tcp:6,tcp:7,"
        "tcp:8,tcp:9,tcp:10,tcp:11,tcp:12,tcp:13,tcp:14,tcp:15,tcp:16,"
        "tcp:17,tcp:18,tcp:19,tcp:20,tcp:21,tcp:22,tcp:23,tcp:24,tcp:25,"
        "tcp:26,tcp:27,tcp:28,tcp:29,tcp:30,tcp:31,tcp:32,tcp:33"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        skv_error e = SKV_ERROR_INIT;
        ck_assert_msg(skv_net_host_allow_check(bad[i], &e) == SKV_EINVAL,
                      "'%s' accepted", bad[i]);
        ck_assert_msg(strstr(e.message, "host_allow"), "%s", e.message);
    }
    static const char *const good[] = {NULL, "", "dns", "tcp:22",
                                       "udp:1-65535,tcp:8000-8010,dns"};
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
        SKV_CK_OK(skv_net_host_allow_check(good[i], NULL), NULL);
    if (!need_root_netns(__func__))
        return;
    /* A session with a bad list is refused before anything is made. */
    skv_net_session_options o = SKV_NET_SESSION_OPTIONS_INIT;
    o.session_id = "sess-bad";
    o.subnet = "10.91.4.0/24";
    o.host_guard = true;
    o.host_allow = "tcp:99999";
    skv_net_session *s = NULL;
    skv_error e = SKV_ERROR_INIT;
    ck_assert_int_eq(skv_net_session_create(&s, &o, &e), SKV_EINVAL);
    ck_assert_ptr_null(s);
    ck_assert_uint_eq(count_links("skv"), 0);
    ck_assert_uint_eq(nft_count(TABLE), 0);
}
END_TEST

Suite *skv_test_suite_net(void);
Suite *skv_test_suite_net(void)
{
    Suite *s = suite_create("net");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, test_names_and_bad_options);
    tcase_add_test(tc, test_spec_add_host);
    suite_add_tcase(s, tc);
    tc = tcase_create("netns");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bridge_veth_listed_and_destroyed);
    tcase_add_test(tc, test_tcp_within_session);
    tcase_add_test(tc, test_sessions_isolated);
    tcase_add_test(tc, test_stale_cleanup);
    tcase_add_test(tc, test_bad_input_leaves_nothing);
    tcase_add_test(tc, test_create_conflicts_roll_back);
    tcase_add_test(tc, test_routes);
    tcase_add_test(tc, test_two_agents_route);
    tcase_add_test(tc, test_publish_reachable);
    tcase_add_test(tc, test_publish_conflicts);
    tcase_add_test(tc, test_publish_bad_input_leaves_nothing);
    tcase_add_test(tc, test_outbound_nat);
    tcase_add_test(tc, test_nft_stale_cleanup);
    tcase_add_test(tc, test_host_guard);
    tcase_add_test(tc, test_host_guard_stale_cleanup);
    tcase_add_test(tc, test_host_allow_bad_input);
    suite_add_tcase(s, tc);
    tc = tcase_create("runtime");
    tcase_set_timeout(tc, 90);
    tcase_add_unchecked_fixture(tc, rt_setup, rt_teardown);
    tcase_add_test(tc, test_runtime_containers_talk);
    suite_add_tcase(s, tc);
    return s;
}
