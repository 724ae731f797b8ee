/* sokovan exec / shell: the command (cmd_exec.c), the stream loop
 * (exec_loop.c) and the local terminal (exec_term.c).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_CLI_EXEC_H
#define SOKOVAN_CLI_EXEC_H

#include "cli.h"

/* Output credit the CLI grants (it acknowledges what it has written). */
#define CLI_EXEC_WINDOW (1024u * 1024)
/* Bytes of stdin per exec.stdin frame. */
#define CLI_EXEC_CHUNK (64u * 1024)

typedef struct cli_exec {
    const char *session_id;
    const char *kernel_id;      /* NULL: the main kernel */
    char **argv;
    size_t argc;
    int interactive;            /* -i: forward stdin */
    int tty;                    /* -t: a pseudo-terminal */
} cli_exec;

/* Run it and stream until it ends; the exit status sokovan exits with:
 * the command's code, 128 + its signal, or CLI_FAIL after printing why. */
int cli_exec_run(cli *c, const cli_exec *x);

/* ---- the local terminal (exec_term.c) ---- */
/* Signals the loop reacts to arrive on this descriptor, one byte each
 * (the signal number): SIGWINCH, SIGINT, SIGTERM, SIGHUP. SIGPIPE is
 * ignored (a closed stdout is an error of write). -1 on failure. */
int cli_term_signals(void);
void cli_term_signals_close(void);
/* Put stdin's terminal in raw mode (when it is one); restored by
 * cli_term_restore, which every exit path calls (also at exit()). */
int cli_term_raw(void);
void cli_term_restore(void);
/* The window size of stdin's (else stdout's) terminal; 0 when none. */
int cli_term_size(uint32_t *rows, uint32_t *cols);

#endif
