/* Private to exec into OCI containers: oci_exec.c (the caller's side),
 * oci_exec_proc.c (process.json), oci_exec_keeper.c (the forked side).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_RT_OCI_EXEC_H
#define SKV_RT_OCI_EXEC_H

#include "exec_int.h"
#include "oci.h"

/* Largest config.json read back for an exec; more is refused. */
#define SKV__OCI_CONFIG_MAX (16u << 20)

/* The exec's process object (`runc exec --process`) from <dir>/config.json:
 * every member of the container's process (user, capabilities,
 * noNewPrivileges, and whatever else create put there) copied as is, its
 * env with o->env merged in, its cwd unless o->cwd, and the exec's own
 * args, terminal and consoleSize. */
int skv__oci_exec_process(skv__json *j, const char *dir,
                          const skv_exec_options *o, skv_error *err);

/* The exec's files, relative to the keeper's working directory (a
 * temporary directory in the container's, removed once runc exec ended). */
#define SKV__OCI_EXEC_PROCESS "process.json"
#define SKV__OCI_EXEC_PID "pid"
#define SKV__OCI_EXEC_LOG "log.json"
#define SKV__OCI_EXEC_CONSOLE "console"

/* Everything the keeper needs, prepared before the fork (the caller may be
 * multi-threaded: the keeper only makes system calls). */
typedef struct skv__oci_keeper {
    const char *const *argv;    /* runc exec -d ...; argv[0] its path */
    const char *tmpdir;
    int report_fd;              /* SOCK_SEQPACKET to the caller */
    int stdio[3];               /* the command's pipe ends; -1 with a tty */
    int console_fd;             /* tty: an unbound stream socket, else -1 */
} skv__oci_keeper;

/* The keeper: a child subreaper that runs `runc exec -d`, so the command
 * is re-parented to it when runc exits. It reports 'T' (the terminal's
 * master, received on the console socket) and 'P' (the command's pid, with
 * a pidfd), or 'E'; closes the report socket; then waits for the command
 * and ends the way it ended (its exit code, or its signal), so the
 * caller's waitpid on the keeper gives the command's status. SIGTERM asks
 * it to kill the command's process group. Never returns. */
_Noreturn void skv__oci_keeper_main(const skv__oci_keeper *k);

#endif
