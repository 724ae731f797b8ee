/* bench/vfolder, service part: the same bytes through a real
 * sokovan-manager (storage host "bench" on the filesystem under test) and
 * the `sokovan` CLI over its Unix socket: each chunk is signed (HMAC),
 * sent, checked, hashed (sha256) and written by the manager, with the
 * CLI hashing the file too; the upload is committed by fsync + rename.
 * Timed from the CLI's fork to its exit.
 * SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_vfolder.h"

struct bv_service {
    char bin[PATH_MAX], dir[PATH_MAX], sock[PATH_MAX + 16];
    char key[PATH_MAX + 32], log[PATH_MAX + 16];
    pid_t mgr;
    const char *sha;            /* "--sha256" or NULL */
};

/* fork + exec argv, output to s->log; the child's pid. */
static pid_t spawn(const bv_service *s, char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        int nul = open("/dev/null", O_RDWR);
        if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 ||
            dup2(fd, 2) < 0)
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Run the CLI with args (up to 6); exit status 0 or dies. */
static void cli(const bv_service *s, const char *a0, const char *a1,
                const char *a2, const char *a3, const char *a4,
                const char *a5)
{
    char exe[PATH_MAX + 16], ep[PATH_MAX + 32];
    snprintf(exe, sizeof(exe), "%s/sokovan", s->bin);
    snprintf(ep, sizeof(ep), "unix:%s", s->sock);
    char *const argv[] = {exe, "--endpoint", ep, "--key-file",
                          (char *)s->key, (char *)a0, (char *)a1, (char *)a2,
                          (char *)a3, (char *)a4, (char *)a5, NULL};
    int st = 0;
    pid_t pid = spawn(s, argv);
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0) {
        fprintf(stderr, "vfolder: `sokovan %s %s %s` failed: see %s\n", a0,
                a1, a2, s->log);
        exit(1);
    }
}

static int wait_ready(bv_service *s)
{
    for (int i = 0; i < 1500; i++) {
        int st;
        if (waitpid(s->mgr, &st, WNOHANG) == s->mgr) {
            s->mgr = -1;
            return -1;
        }
        if (access(s->sock, F_OK) == 0 && access(s->key, F_OK) == 0)
            return 0;
        usleep(10000);
    }
    return -1;
}

bv_service *bv_service_start(const char *bin, const char *dir,
                             const char *quota, int sha256, char *why,
                             size_t cap)
{
    bv_service *s = calloc(1, sizeof(*s));
    s->sha = sha256 ? "--sha256" : NULL;
    char exe[PATH_MAX + 32], data[PATH_MAX + 8], host[PATH_MAX * 2];
    snprintf(s->bin, sizeof(s->bin), "%s", bin);
    snprintf(s->dir, sizeof(s->dir), "%s", dir);
    snprintf(s->sock, sizeof(s->sock), "%s/m.sock", dir);
    snprintf(data, sizeof(data), "%s/mgr", dir);
    snprintf(s->key, sizeof(s->key), "%s/admin.key", data);
    snprintf(s->log, sizeof(s->log), "%s/svc.log", dir);
    snprintf(exe, sizeof(exe), "%s/sokovan-manager", bin);
    snprintf(host, sizeof(host), "bench=%s/svc,quota=%s", dir, quota);
    if (access(exe, X_OK) != 0) {
        snprintf(why, cap, "no %s (build the daemons, or set SKV_E2E_BIN)",
                 exe);
        free(s);
        return NULL;
    }
    snprintf(data, sizeof(data), "%s/svc", dir);
    mkdir(data, 0755);
    snprintf(data, sizeof(data), "%s/mgr", dir);
    char *const argv[] = {exe, "--data-dir", data, "--listen", s->sock,
                          "--tcp", "none", "--storage-host", host, NULL};
    s->mgr = spawn(s, argv);
    if (s->mgr < 0 || wait_ready(s) != 0) {
        fprintf(stderr, "vfolder: sokovan-manager did not start: see %s\n",
                s->log);
        exit(1);
    }
    cli(s, "vfolder", "create", "bench", "--host", "bench", NULL);
    return s;
}

double bv_service_upload(bv_service *s, const char *src)
{
    bv_drop_cache(src);
    double t0 = bv_now_s();
    cli(s, "vfolder", "upload", "bench", src, "file", s->sha);
    return bv_now_s() - t0;
}

/* <dir>/svc/folders/<the one folder>/file */
static void stored_path(const bv_service *s, char *out, size_t cap)
{
    char folders[PATH_MAX + 16];
    snprintf(folders, sizeof(folders), "%s/svc/folders", s->dir);
    DIR *d = opendir(folders);
    struct dirent *de;
    out[0] = '\0';
    while (d && (de = readdir(d)))
        if (de->d_name[0] != '.')
            snprintf(out, cap, "%s/%s/file", folders, de->d_name);
    if (d)
        closedir(d);
    if (!out[0] || access(out, F_OK) != 0)
        bv_die("the uploaded file is not under svc/folders", NULL);
}

double bv_service_download(bv_service *s, const char *dst, char *stored,
                           size_t cap)
{
    stored_path(s, stored, cap);
    bv_drop_cache(stored);
    unlink(dst);
    double t0 = bv_now_s();
    cli(s, "vfolder", "download", "bench", "file", dst, s->sha);
    return bv_now_s() - t0;
}

void bv_service_stop(bv_service *s)
{
    if (!s)
        return;
    if (s->mgr > 0) {
        kill(s->mgr, SIGTERM);
        waitpid(s->mgr, NULL, 0);
    }
    free(s);
}
