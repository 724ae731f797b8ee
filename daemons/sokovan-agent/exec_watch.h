/* The agent's exec descriptors on the daemon's libuv loop: one uv_poll_t
 * per descriptor the agent asks to watch (skv_agent_set_watch).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKVD_EXEC_WATCH_H
#define SKVD_EXEC_WATCH_H

#include <uv.h>

#include "sokovan/agent.h"

typedef struct exec_watch {
    uv_loop_t *loop;
    skv_agent *a;
    void (*poke)(void *ctx);     /* frames may have been sent: tick soon */
    void *ctx;
    struct exec_poll **p;        /* watched descriptors */
    size_t n, cap;
} exec_watch;

/* Hook w into the agent (its handles are unreferenced: execs do not keep
 * a stopping daemon's loop running). */
void exec_watch_init(exec_watch *w, uv_loop_t *loop, skv_agent *a,
                     void (*poke)(void *ctx), void *ctx);
/* At shutdown, with the loop still able to run close callbacks: the
 * agent's execs end (their handles close) and the hook goes. */
void exec_watch_close(exec_watch *w);

#endif
