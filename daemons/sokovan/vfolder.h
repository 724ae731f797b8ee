/* sokovan vfolder: shared pieces of cmd_vfolder.c (folders),
 * vfolder_files.c (ls, rm, mkdir, mv) and vfolder_xfer.c (upload,
 * download).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_VFOLDER_H
#define SOKOVAN_VFOLDER_H

#include <openssl/evp.h>

#include "cli.h"

/* Chunk of one upload write or download request, and how many requests
 * a transfer keeps in flight (vfolder_pipe.c): the CLI holds one chunk
 * of its own at a time (a sent request's frame is gone once written), the
 * manager at most CLI_VF_WINDOW of a connection's. */
#define CLI_VF_CHUNK (1u * 1024 * 1024)
#define CLI_VF_WINDOW 4

/* Positional arguments after the subcommand's options (at most max). */
typedef struct cli_vf_args {
    const char *pos[4];
    int n;
    int recursive, resume, sha256, trash;
    const char *host, *project, *user, *perm;
    uint64_t quota;
} cli_vf_args;

/* Options and positionals of `sokovan vfolder SUB ...` (argv[0] = SUB);
 * CLI_OK, CLI_USAGE, or -1 after printing help. */
int cli_vf_parse(cli *c, int argc, char **argv, int min, int max,
                 const char *help, cli_vf_args *a);

/* vfolder_xutil.c: progress on a terminal (not with --json). */
typedef struct cli_vf_progress {
    int on;
    uint64_t total;
    int64_t start_ms, last_ms;
} cli_vf_progress;
void cli_vf_progress_init(cli_vf_progress *p, const cli *c, uint64_t total);
void cli_vf_progress_show(cli_vf_progress *p, uint64_t done, int final);

/* SHA-256 (OpenSSL). new: NULL when out of memory; add with a NULL state
 * does nothing (no --sha256); add and final print why they fail. */
#define CLI_VF_SHA_BYTES 32
EVP_MD_CTX *cli_vf_sha_new(void);
int cli_vf_sha_add(EVP_MD_CTX *st, const void *p, size_t n);
int cli_vf_sha_final(EVP_MD_CTX *st, uint8_t d[CLI_VF_SHA_BYTES]);
void cli_vf_hex(char *out, const uint8_t *d, size_t n);
/* Feed the first n bytes of fd into st (what a resumed transfer already
 * moved); -1 when they cannot be read. */
int cli_vf_hash_prefix(int fd, uint64_t n, EVP_MD_CTX *st, uint8_t *buf);

/* Every request's frame (a chunk and more) is allocated and freed: keep
 * the freed heap instead of giving it back and faulting it in again for
 * the next one (glibc's default; a tenth of the CLI's CPU). */
void cli_vf_malloc_tune(void);

/* vfolder_pipe.c: requests of one type in flight, answered in order. */
typedef struct cli_vf_pipe {
    cli *c;
    skv_proto_type type;
    uint64_t ids[CLI_VF_WINDOW];
    int head, n;
} cli_vf_pipe;

void cli_vf_pipe_init(cli_vf_pipe *p, cli *c, skv_proto_type type);
/* Send one more (at most CLI_VF_WINDOW in flight): CLI_OK or CLI_FAIL
 * after printing why. */
int cli_vf_pipe_send(cli_vf_pipe *p, const void *body);
/* The oldest request's reply into *m (free with skv_client_message_free):
 * CLI_OK, or CLI_FAIL after printing the manager's error or why. */
int cli_vf_pipe_recv(cli_vf_pipe *p, skv_client_message *m);

int cli_vf_files(cli *c, const char *sub, const cli_vf_args *a);
int cli_vf_upload(cli *c, const cli_vf_args *a);
int cli_vf_download(cli *c, const cli_vf_args *a);

#endif
