/* Message type names, kinds, reply types and authorization operations.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "schema.h"

static int known(skv_proto_type t)
{
    return (int)t > SKV_PROTO_UNKNOWN && (int)t < SKV_PROTO_TYPE_COUNT;
}

const char *skv_proto_type_name(skv_proto_type type)
{
    return known(type) ? skv__proto_types[type].name : "?";
}

int skv_proto_type_from_name(skv_proto_type *out, const char *name,
                             skv_error *err)
{
    if (!out || !name)
        return skv__err(err, SKV_EINVAL, "type_from_name: NULL argument");
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        if (strcmp(skv__proto_types[t].name, name) == 0) {
            *out = (skv_proto_type)t;
            return 0;
        }
    }
    *out = SKV_PROTO_UNKNOWN;
    return skv__err(err, SKV_ENOENT, "unknown message type '%.64s'", name);
}

skv_proto_kind skv_proto_type_kind(skv_proto_type type)
{
    return known(type) ? skv__proto_types[type].kind : SKV_PROTO_REQUEST;
}

skv_proto_type skv_proto_type_reply(skv_proto_type type)
{
    if (!known(type) || skv__proto_types[type].kind != SKV_PROTO_REQUEST)
        return SKV_PROTO_UNKNOWN;
    return skv__proto_types[type].reply;
}

size_t skv_proto_type_size(skv_proto_type type)
{
    return known(type) ? skv__proto_types[type].desc->size : 0;
}

int skv_proto_type_op(skv_proto_type type)
{
    return known(type) ? skv__proto_types[type].op : 0;
}
