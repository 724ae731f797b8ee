/* Internal: slot vectors inside larger msgpack documents (wire protocol,
 * snapshots). The public skv_slots_encode/decode wrap these.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_SLOTS_MSGPACK_H
#define SKV_SLOTS_MSGPACK_H

#include <msgpack.h>

#include "sokovan/slots.h"

/* Append the map { name: [kind, qty], ... } to pk. */
int skv__slots_pack(msgpack_packer *pk, const skv_slots *slots, skv_error *err);
/* Build a new vector from an already-unpacked object; same validation as
 * skv_slots_decode (SKV_EPROTO on anything malformed). */
int skv__slots_unpack(skv_slots **out, const msgpack_object *obj,
                      const skv_slot_registry *reg, skv_error *err);

/* Deepest container nesting skv__slots_msgpack_skim accepts (msgpack-c's
 * own parser stack holds 32). */
#define SKV__MSGPACK_DEPTH_MAX 24

/* Bounded pre-check of untrusted bytes before msgpack_unpack_next():
 * walks the headers of ONE msgpack object at buf[0..len) without allocating
 * and fails (SKV_EPROTO) on truncation, invalid type bytes, nesting deeper
 * than SKV__MSGPACK_DEPTH_MAX, or a container that declares more elements
 * than bytes remain. After it succeeds,
 * msgpack-c allocates O(len) at most (it otherwise allocates
 * count * sizeof(msgpack_object) straight from a hostile header).
 * *end_out receives the object's length; end_out < len means trailing bytes
 * (or further objects). Use it on every untrusted buffer. */
int skv__slots_msgpack_skim(size_t *end_out, const void *buf, size_t len,
                            skv_error *err);

#endif
