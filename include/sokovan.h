/*
 * sokovan.h - umbrella header: every public libsokovan module.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_H
#define SOKOVAN_H

#include "sokovan/common.h"
#include "sokovan/slots.h"
#include "sokovan/topo.h"
#include "sokovan/alloc.h"
#include "sokovan/plugin.h"
#include "sokovan/node.h"
#include "sokovan/sched.h"
#include "sokovan/sim.h"
#include "sokovan/runtime.h"
#include "sokovan/image.h"
#include "sokovan/proto_msg.h"
#include "sokovan/proto.h"
#include "sokovan/auth.h"
#include "sokovan/client.h"
#include "sokovan/manager.h"
#include "sokovan/manager_lease.h"
#include "sokovan/agent.h"
#include "sokovan/metrics.h"
#include "sokovan/sshkey.h"
#include "sokovan/subnet.h"
#include "sokovan/net.h"
#include "sokovan/storage.h"

#endif /* SOKOVAN_H */
