/* sokovan vfolder: shared pieces of cmd_vfolder.c (folders),
 * vfolder_files.c (ls, rm, mkdir, mv) and vfolder_xfer.c (upload,
 * download).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_VFOLDER_H
#define SOKOVAN_VFOLDER_H

#include "cli.h"

/* Chunk of one upload write or download request: the CLI holds one at a
 * time (stop-and-wait: the next goes after the last one's reply). */
#define CLI_VF_CHUNK (1024u * 1024)

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

int cli_vf_files(cli *c, const char *sub, const cli_vf_args *a);
int cli_vf_upload(cli *c, const cli_vf_args *a);
int cli_vf_download(cli *c, const cli_vf_args *a);

#endif
