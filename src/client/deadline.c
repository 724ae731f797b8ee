/* Deadlines on the monotonic clock: a request's time limit covers the
 * whole exchange (connect, write, every read), not each system call.
 * SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <time.h>

#include "client_internal.h"

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

skv__client_deadline skv__client_deadline_in(int timeout_ms)
{
    skv__client_deadline d = {-1};
    if (timeout_ms >= 0)
        d.at_ms = mono_ms() + timeout_ms;
    return d;
}

int skv__client_deadline_left(skv__client_deadline d)
{
    if (d.at_ms < 0)
        return -1;
    int64_t left = d.at_ms - mono_ms();
    if (left <= 0)
        return 0;
    return left > INT_MAX ? INT_MAX : (int)left;
}
