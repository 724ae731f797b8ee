/*
 * sokovan.h - umbrella header: every public libsokovan module.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef SOKOVAN_H
#define SOKOVAN_H

#include "sokovan/common.h"
#include "sokovan/slots.h"

#endif /* SOKOVAN_H */
