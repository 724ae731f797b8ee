/* sokovan-manager's leader election on a PostgreSQL store (ha.c): stand
 * by until the lease is won, then open the manager; while leading, renew
 * the lease every ha_poll_ms and exit loudly the moment it is lost. With
 * SQLite there is no election (one manager per data_dir).
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_MANAGER_DAEMON_HA_H
#define SKV_MANAGER_DAEMON_HA_H

#include <stdbool.h>

#include "skvd.h"
#include "sokovan/manager_lease.h"

typedef struct mgr_ha {
    skv_manager_lease *lease;   /* NULL: SQLite, no election */
    uv_timer_t timer;
    bool timer_on;
    uint64_t poll_ms;
    int64_t standby_since_ms;
    char holder[128];           /* this manager, as the lease names it */
    char leader[160];           /* who leads, for standby answers */
    /* elected: open the manager and serve; 0, or -1 to exit */
    int (*elected)(void *ctx);
    /* the lease is lost or unusable: stop serving and exit with failure */
    void (*fatal)(void *ctx);
    void *ctx;
} mgr_ha;

/* PostgreSQL store: open the lease and try once. 1: elected at once,
 * 0: standing by, -1: cannot (logged). SQLite: 1 without a lease. */
int mgr_ha_start(mgr_ha *h, uv_loop_t *loop, const skvd_manager_conf *c);
/* Keep trying (standby) or renewing (leader) every poll_ms. */
void mgr_ha_arm(mgr_ha *h);
bool mgr_ha_standby(const mgr_ha *h);
/* The standby's answer to one frame: an SKV_ESTATE "standby: ..." error
 * for a request (0), nothing for anything else (0); -1: not a frame of
 * the protocol (close the connection). */
int mgr_ha_answer(mgr_ha *h, skvd_conn *c, const void *p, size_t len);
/* Close the timer (the loop then drains it). */
void mgr_ha_stop(mgr_ha *h);
/* Release the lease (a clean stop hands over at once) and free it. */
void mgr_ha_free(mgr_ha *h);

#endif
