/* An in-process fake manager for the client and CLI suites: a thread that
 * accepts connections on a Unix socket in a temporary directory, verifies
 * every request's signature with a real skv_auth_verifier and hands it to
 * a test-supplied handler, which answers with fake_mgr_reply/_error.
 * Header-only (static inline) so suites that do not use it pay nothing.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_FAKE_MGR_H
#define SKV_TEST_FAKE_MGR_H

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "skv_test.h"

#define FAKE_AK "AKFAKETEST0001"
#define FAKE_SK "fake-secret-fake-secret-0001"

typedef struct fake_mgr fake_mgr;
/* Answer one verified request; return < 0 to drop the connection. */
typedef int (*fake_mgr_handler)(fake_mgr *m, int fd,
                                const skv_proto_envelope *env);

struct fake_mgr {
    char dir[96];
    char path[128];
    char endpoint[160];
    int lfd;
    pthread_t th;
    skv_auth_verifier *v;
    fake_mgr_handler handler;
    void *payload;            /* for the handler */
    int n_requests;           /* verified requests */
    int n_refused;            /* failed verification */
    int n_conns;
    char last_user[SKV_AUTH_USER_MAX];
    skv_proto_type last_type;
    uint8_t *last_body;       /* copy of the last request's encoded body */
    size_t last_body_len;
};

static inline int64_t fake_mgr_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int fake_mgr_write(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static inline int fake_mgr_send(int fd, skv_proto_kind kind, uint64_t id,
                                skv_proto_type type, const void *body)
{
    void *frame;
    size_t len;
    if (skv_proto_message_encode(&frame, &len, kind, id, type, body,
                                 fake_mgr_now(), NULL, NULL))
        return -1;
    int rc = fake_mgr_write(fd, frame, len);
    skv_free(frame);
    return rc;
}

static inline int fake_mgr_reply(int fd, uint64_t id, skv_proto_type type,
                                 const void *body)
{
    return fake_mgr_send(fd, SKV_PROTO_RESPONSE, id, type, body);
}

static inline int fake_mgr_error(int fd, uint64_t id, int code,
                                 const char *msg)
{
    void *frame;
    size_t len;
    if (skv_proto_error_encode(&frame, &len, id, code, msg, NULL,
                               fake_mgr_now(), NULL, NULL))
        return -1;
    int rc = fake_mgr_write(fd, frame, len);
    skv_free(frame);
    return rc;
}

/* Verify, record, dispatch. < 0: close the connection. */
static inline int fake_mgr_one(fake_mgr *m, int fd, const void *payload,
                               size_t len)
{
    skv_proto_envelope env;
    skv_error e = SKV_ERROR_INIT;
    if (skv_proto_envelope_decode(&env, payload, len, &e))
        return -1;
    skv_auth_principal who;
    int rc = skv_proto_envelope_verify(m->v, &who, &env, fake_mgr_now(), &e);
    if (rc) {
        m->n_refused++;
        fake_mgr_error(fd, env.request_id, rc, e.message);
        skv_proto_envelope_free(&env);
        return -1;
    }
    m->n_requests++;
    strcpy(m->last_user, who.user);
    m->last_type = env.type;
    free(m->last_body);
    m->last_body = malloc(env.body_len ? env.body_len : 1);
    memcpy(m->last_body, env.body, env.body_len);
    m->last_body_len = env.body_len;
    rc = m->handler(m, fd, &env);
    skv_proto_envelope_free(&env);
    return rc;
}

static inline void fake_mgr_serve(fake_mgr *m, int fd)
{
    skv_proto_reader *r;
    if (skv_proto_reader_new(&r, 0, NULL))
        return;
    char buf[65536];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || skv_proto_reader_feed(r, buf, (size_t)n, NULL))
            break;
        const void *p;
        size_t len;
        int got, stop = 0;
        while (!stop && (got = skv_proto_reader_next(r, &p, &len, NULL)) == 1)
            stop = fake_mgr_one(m, fd, p, len) < 0;
        if (stop || got < 0)
            break;
    }
    skv_proto_reader_free(r);
}

static inline void *fake_mgr_thread(void *arg)
{
    fake_mgr *m = arg;
    for (;;) {
        int fd = accept(m->lfd, NULL, NULL);
        if (fd < 0)
            break;   /* shut down by fake_mgr_stop */
        m->n_conns++;
        fake_mgr_serve(m, fd);
        close(fd);
    }
    return NULL;
}

/* Remove a directory tree of depth <= 2 (what these tests create). */
static inline void fake_mgr_rmtree(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[512];
    while (d && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (unlink(path) != 0 && depth > 0)
            fake_mgr_rmtree(path, depth - 1);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* Every fake manager's directory lives under one base directory made by
 * the runner process before the tests fork (an unchecked fixture): a
 * failed assertion ends a forked test with _exit(), and the runner's
 * teardown still removes what it left. */
static char fake_mgr_base[64];

static inline void fake_mgr_base_setup(void)
{
    strcpy(fake_mgr_base, "/tmp/skv-fake-XXXXXX");
    if (!mkdtemp(fake_mgr_base))
        strcpy(fake_mgr_base, "/tmp");
}

static inline void fake_mgr_base_teardown(void)
{
    if (strcmp(fake_mgr_base, "/tmp") != 0)
        fake_mgr_rmtree(fake_mgr_base, 2);
}

static inline void fake_mgr_start(fake_mgr *m, fake_mgr_handler h,
                                  void *payload)
{
    memset(m, 0, sizeof *m);
    m->handler = h;
    m->payload = payload;
    if (!fake_mgr_base[0])
        fake_mgr_base_setup();   /* suite without the fixture */
    snprintf(m->dir, sizeof m->dir, "%s/mXXXXXX", fake_mgr_base);
    ck_assert_ptr_nonnull(mkdtemp(m->dir));
    snprintf(m->path, sizeof m->path, "%s/mgr.sock", m->dir);
    snprintf(m->endpoint, sizeof m->endpoint, "unix:%s", m->path);
    m->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(m->lfd, 0);
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    strcpy(sun.sun_path, m->path);
    ck_assert_int_eq(bind(m->lfd, (struct sockaddr *)&sun, sizeof sun), 0);
    ck_assert_int_eq(listen(m->lfd, 16), 0);
    skv_error e = SKV_ERROR_INIT;
    SKV_CK_OK(skv_auth_verifier_new(&m->v, NULL, &e), &e);
    skv_auth_principal p = {"alice", SKV_AUTH_ROLE_USER};
    SKV_CK_OK(skv_auth_verifier_add_key(m->v, FAKE_AK, FAKE_SK, &p, &e), &e);
    ck_assert_int_eq(pthread_create(&m->th, NULL, fake_mgr_thread, m), 0);
}

/* Stop accepting, wait for the thread (its current connection must have
 * been closed by the client), remove the socket and directory. */
static inline void fake_mgr_stop(fake_mgr *m)
{
    shutdown(m->lfd, SHUT_RDWR);
    pthread_join(m->th, NULL);
    close(m->lfd);
    fake_mgr_rmtree(m->dir, 1);
    skv_auth_verifier_free(m->v);
    free(m->last_body);
    m->last_body = NULL;
}

#endif
