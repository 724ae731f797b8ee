/* A real PostgreSQL for one test: initdb into a fresh temporary directory,
 * a server that listens only on a Unix socket in that directory, stopped
 * and removed when the test is done with it. A failed assertion ends a
 * forked Check test with _exit (no atexit), so a keeper process owns the
 * server: it waits on a pipe only the test holds (close-on-exec), and when
 * that closes (skv_pg_stop, or the test dying in any way) it stops the
 * server and removes the directory.
 *
 * PostgreSQL refuses to run as root, so when the test is root the cluster
 * belongs to the `postgres` user the Debian package creates (or `nobody`)
 * and initdb/postgres run under that uid in a forked child.
 *
 *   skv_pg pg;
 *   const char *skip = skv_pg_start(&pg);   // NULL, or why it cannot run
 *   ... pg.conninfo / pg.uri ...
 *   skv_pg_stop(&pg);             // also happens when the test dies
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_PG_HARNESS_H
#define SKV_TEST_PG_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <libpq-fe.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct skv_pg {
    char bindir[PATH_MAX];   /* /usr/lib/postgresql/<v>/bin */
    char dir[128];           /* temp dir: data/, the socket, logs */
    char conninfo[256];      /* libpq keyword form */
    char uri[384];           /* postgresql:// form (for --store) */
    pid_t keeper;            /* owns the server; 0 when not running */
    int ctl;                 /* closing it stops everything */
    uid_t uid;
    gid_t gid;
    char why[512];
} skv_pg;

/* The newest installed server (Debian: /usr/lib/postgresql/<v>/bin). */
static inline int skv_pg_find_bindir(char *out, size_t n)
{
    glob_t g;
    if (glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) != 0)
        return -1;
    size_t best = 0;
    for (size_t i = 1; i < g.gl_pathc; i++)
        if (strverscmp(g.gl_pathv[i], g.gl_pathv[best]) > 0)
            best = i;
    snprintf(out, n, "%.*s", (int)(strlen(g.gl_pathv[best]) - 9),
             g.gl_pathv[best]);
    globfree(&g);
    return 0;
}

/* Who runs the server: ourselves, or a non-root user when we are root. */
static inline int skv__pg_pick_user(skv_pg *pg)
{
    pg->uid = geteuid();
    pg->gid = getegid();
    if (pg->uid != 0)
        return 0;
    struct passwd *pw = getpwnam("postgres");
    if (!pw)
        pw = getpwnam("nobody");
    if (!pw)
        return -1;
    pg->uid = pw->pw_uid;
    pg->gid = pw->pw_gid;
    return 0;
}

static inline int skv__pg_rm_one(const char *p, const struct stat *st,
                                 int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* In the keeper's child: drop to the cluster's owner, die with the
 * keeper, send output to a log in the cluster directory, exec. */
static inline void skv__pg_child(const skv_pg *pg, const char *log,
                                 char *const argv[])
{
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
        _exit(126);
    if (geteuid() == 0 &&
        (setgroups(0, NULL) || setgid(pg->gid) || setuid(pg->uid)))
        _exit(126);
    /* After setuid: a credential change clears PDEATHSIG. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (chdir(pg->dir) != 0)
        _exit(126);
    execv(argv[0], argv);
    _exit(127);
}

static inline pid_t skv__pg_spawn(const skv_pg *pg, const char *log,
                                  char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0)
        skv__pg_child(pg, log, argv);
    return pid;
}

/* why = what + the end of a log in the cluster directory. */
static inline void skv__pg_fail(skv_pg *pg, const char *what,
                                const char *log)
{
    char path[256], buf[300] = "";
    snprintf(path, sizeof(path), "%s/%s", pg->dir, log);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fseek(f, -(long)(sizeof(buf) - 1), SEEK_END) != 0)
            rewind(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
    }
    snprintf(pg->why, sizeof(pg->why), "%s: %s", what, buf);
}

static inline int skv__pg_initdb(skv_pg *pg)
{
    char prog[PATH_MAX + 16], data[160], log[160];
    snprintf(prog, sizeof(prog), "%s/initdb", pg->bindir);
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(log, sizeof(log), "%s/initdb.log", pg->dir);
    char *argv[] = {prog, "-D", data, "-A", "trust", "-U", "skv",
                    "--no-sync", "-E", "UTF8", "--locale=C", NULL};
    int st = 0;
    pid_t pid = skv__pg_spawn(pg, log, argv);
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0) {
        skv__pg_fail(pg, "initdb failed", "initdb.log");
        return -1;
    }
    return 0;
}

/* Start the postmaster and wait (up to 30 s) until it takes connections. */
static inline pid_t skv__pg_serve(skv_pg *pg)
{
    char prog[PATH_MAX + 16], data[160], sock[160], log[160];
    snprintf(prog, sizeof(prog), "%s/postgres", pg->bindir);
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(sock, sizeof(sock), "unix_socket_directories=%s", pg->dir);
    snprintf(log, sizeof(log), "%s/server.log", pg->dir);
    char *argv[] = {prog, "-D", data, "-c", "listen_addresses=", "-c", sock,
                    "-c", "fsync=off", "-c", "max_connections=60", NULL};
    pid_t pid = skv__pg_spawn(pg, log, argv);
    for (int i = 0; pid > 0 && i < 600; i++) {
        if (PQping(pg->conninfo) == PQPING_OK)
            return pid;
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            skv__pg_fail(pg, "postgres exited", "server.log");
            return -1;
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    snprintf(pg->why, sizeof(pg->why), "postgres did not start in 30 s");
    return -1;
}

/* Fast shutdown (SIGINT), SIGKILL if it lingers past 10 s. */
static inline void skv__pg_halt(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGINT);
    for (int i = 0; i < 200; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid)
            return;
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* The keeper: set up, report "" or why not on `report`, then wait for
 * the test to close `ctl` and clean up. */
static inline void skv__pg_keeper(skv_pg *pg, int ctl, int report)
{
    pid_t server = -1;
    if (skv__pg_initdb(pg) == 0)
        server = skv__pg_serve(pg);
    if (server < 0 && !pg->why[0])
        snprintf(pg->why, sizeof(pg->why), "postgres: fork failed");
    if (write(report, pg->why, strlen(pg->why) + 1) < 0)
        server = server > 0 ? server : -1;
    close(report);
    char c;
    while (server > 0 && read(ctl, &c, 1) != 0 && errno == EINTR)
        ;
    skv__pg_halt(server);
    nftw(pg->dir, skv__pg_rm_one, 16, FTW_DEPTH | FTW_PHYS);
    _exit(0);
}

/* Stop the server and remove its directory; safe to call twice. */
static inline void skv_pg_stop(skv_pg *pg)
{
    if (!pg || pg->keeper <= 0) {
        if (pg && pg->keeper < 0)
            close(pg->ctl);
        if (pg)
            pg->keeper = 0;
        return;
    }
    close(pg->ctl);
    waitpid(pg->keeper, NULL, 0);
    pg->keeper = 0;
}

static inline int skv__pg_fork_keeper(skv_pg *pg)
{
    int ctl[2], rep[2];
    if (pipe2(ctl, O_CLOEXEC) != 0)
        return -1;
    if (pipe2(rep, O_CLOEXEC) != 0) {
        close(ctl[0]);
        close(ctl[1]);
        return -1;
    }
    pg->keeper = fork();
    if (pg->keeper == 0) {
        /* Check kills a finished test's process group: leave it, so the
         * cleanup still runs after that. */
        setsid();
        close(ctl[1]);
        close(rep[0]);
        skv__pg_keeper(pg, ctl[0], rep[1]);
    }
    close(ctl[0]);
    close(rep[1]);
    pg->ctl = ctl[1];
    ssize_t n = pg->keeper > 0 ? read(rep[0], pg->why, sizeof(pg->why) - 1)
                               : -1;
    close(rep[0]);
    pg->why[n > 0 ? n : 0] = '\0';
    if (n <= 0 && !pg->why[0])
        snprintf(pg->why, sizeof(pg->why), "the postgres keeper died");
    return n == 1 && !pg->why[0] ? 0 : -1;
}

/* NULL when the server runs or failed to start (then pg->why says why
 * and skv_pg_running is false: the caller fails the test); a SKIP reason
 * only when PostgreSQL is not installed. */
static inline const char *skv_pg_start(skv_pg *pg)
{
    memset(pg, 0, sizeof(*pg));
    if (skv_pg_find_bindir(pg->bindir, sizeof(pg->bindir)) != 0)
        return "PostgreSQL is not installed (Debian package postgresql: "
               "no /usr/lib/postgresql/*/bin/postgres)";
    if (skv__pg_pick_user(pg) != 0) {
        snprintf(pg->why, sizeof(pg->why), "no non-root user to run "
                 "postgres as (postgres or nobody)");
        return NULL;
    }
    snprintf(pg->dir, sizeof(pg->dir), "/tmp/skv-pg-XXXXXX");
    if (!mkdtemp(pg->dir) || chown(pg->dir, pg->uid, pg->gid) != 0) {
        snprintf(pg->why, sizeof(pg->why), "temp dir: %s", strerror(errno));
        if (pg->dir[0] && pg->dir[strlen(pg->dir) - 1] != 'X')
            rmdir(pg->dir);
        return NULL;
    }
    snprintf(pg->conninfo, sizeof(pg->conninfo),
             "host=%s user=skv dbname=postgres", pg->dir);
    snprintf(pg->uri, sizeof(pg->uri),
             "postgresql://skv@%%2Ftmp%%2F%s/postgres", pg->dir + 5);
    if (skv__pg_fork_keeper(pg) != 0) {
        if (pg->keeper < 0) /* no keeper to clean up after us */
            nftw(pg->dir, skv__pg_rm_one, 16, FTW_DEPTH | FTW_PHYS);
        skv_pg_stop(pg);
    }
    return NULL;
}

/* Started, or the reason it could not (pg->why). */
static inline bool skv_pg_running(const skv_pg *pg)
{
    return pg->keeper > 0;
}

#endif
