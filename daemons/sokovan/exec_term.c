/* The local side of `sokovan exec -t`: raw mode on the user's terminal
 * (keys go to the remote terminal as typed: Ctrl-C is the byte 0x03 and
 * the remote terminal makes it SIGINT), restored on every way out, and
 * signals turned into bytes on a pipe the stream loop polls.
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "exec.h"

static int sig_pipe[2] = {-1, -1};
static struct termios saved;
static int raw_on;

static void on_signal(int sig)
{
    int saved_errno = errno;
    unsigned char b = (unsigned char)sig;
    if (sig_pipe[1] >= 0 && write(sig_pipe[1], &b, 1) < 0) {
        /* a full pipe: the loop has plenty to read already */
    }
    errno = saved_errno;
}

static const int forwarded[] = {SIGWINCH, SIGINT, SIGTERM, SIGHUP};

int cli_term_signals(void)
{
    if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaction(forwarded[i], &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    return sig_pipe[0];
}

void cli_term_signals_close(void)
{
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        signal(forwarded[i], SIG_DFL);
    for (int i = 0; i < 2; i++)
        if (sig_pipe[i] >= 0) {
            close(sig_pipe[i]);
            sig_pipe[i] = -1;
        }
}

void cli_term_restore(void)
{
    if (!raw_on)
        return;
    tcsetattr(STDIN_FILENO, TCSANOW, &saved);
    raw_on = 0;
}

int cli_term_raw(void)
{
    static int registered;
    if (raw_on || !isatty(STDIN_FILENO))
        return 0;
    if (tcgetattr(STDIN_FILENO, &saved) < 0)
        return -1;
    if (!registered && atexit(cli_term_restore) == 0)
        registered = 1;
    struct termios raw = saved;
    cfmakeraw(&raw);
    /* keep output post-processing off too: the remote terminal already
     * turned "\n" into "\r\n" */
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) < 0)
        return -1;
    raw_on = 1;
    return 0;
}

int cli_term_size(uint32_t *rows, uint32_t *cols)
{
    struct winsize w;
    memset(&w, 0, sizeof w);
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &w) < 0 &&
        ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) < 0)
        return 0;
    if (!w.ws_row || !w.ws_col)
        return 0;
    *rows = w.ws_row;
    *cols = w.ws_col;
    return 1;
}
