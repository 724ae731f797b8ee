/* Private to src/proto: message bodies are described by field tables, and
 * one generic engine encodes, decodes, validates and frees them all. A new
 * message is a struct in proto_msg.h plus a table in schema.c.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_PROTO_SCHEMA_H
#define SKV_PROTO_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "mp.h"
#include "sokovan/proto.h"

typedef enum skv__ftype {
    SKV__F_STR = 1,   /* char *                       max: bytes */
    SKV__F_BIN,       /* uint8_t * + size_t count     max: bytes */
    SKV__F_I64,       /* int64_t */
    SKV__F_I32,       /* int32_t */
    SKV__F_U64,       /* uint64_t */
    SKV__F_U32,       /* uint32_t */
    SKV__F_BOOL,      /* uint8_t, 0 or 1 */
    SKV__F_SLOTS,     /* skv_slots * */
    SKV__F_STRLIST,   /* char ** + count              max: entries, max2: bytes */
    SKV__F_U32LIST,   /* uint32_t * + count           max: entries */
    SKV__F_KVLIST,    /* skv_proto_kv * + count       max: entries, max2: value bytes */
    SKV__F_LIST,      /* struct array + count         max: entries, sub */
    SKV__F_STRUCT     /* embedded struct (absent when all its fields are) */
} skv__ftype;

/* Keys of kv lists (label names, environment variable names). */
#define SKV__PROTO_KEY_MAX 1024

struct skv__pdesc;

typedef struct skv__pfield {
    const char *key;          /* msgpack map key */
    skv__ftype type;
    bool required;            /* must be present (strings: non-NULL) */
    size_t off;               /* offset of the member */
    size_t count_off;         /* offset of the size_t count member */
    uint32_t max;
    uint32_t max2;
    const struct skv__pdesc *sub;
} skv__pfield;

typedef struct skv__pdesc {
    const char *name;         /* for messages */
    size_t size;              /* sizeof the struct */
    const skv__pfield *fields;
    size_t nfields;           /* at most 64 */
    /* Optional whole-struct check after decoding / before encoding
     * (enumerations); returns 0 or code (SKV_EPROTO when decoding,
     * SKV_EINVAL when encoding). */
    int (*check)(const void *base, int code, skv_error *err);
} skv__pdesc;

typedef struct skv__ptype {
    const char *name;
    skv_proto_kind kind;
    skv_proto_type reply;
    int op;                   /* skv_auth_op or 0 */
    const skv__pdesc *desc;
} skv__ptype;

/* Indexed by skv_proto_type; entry 0 (UNKNOWN) has no desc. */
extern const skv__ptype skv__proto_types[SKV_PROTO_TYPE_COUNT];

/* Engine (codec.c). base points at a struct described by d. */
int skv__proto_pack(skv__mpw *w, const skv__pdesc *d, const void *base,
                    skv_error *err);
int skv__proto_unpack(skv__mpr *r, const skv__pdesc *d, void *base,
                      skv_error *err);
void skv__proto_release(const skv__pdesc *d, void *base);

/* Field value readers/writers (fields.c). */
int skv__proto_pack_field(skv__mpw *w, const skv__pfield *f, const void *base,
                          skv_error *err);
int skv__proto_unpack_field(skv__mpr *r, const skv__pfield *f, void *base,
                            skv_error *err);
void skv__proto_release_field(const skv__pfield *f, void *base);
/* Whether the field holds a value worth encoding. */
bool skv__proto_field_present(const skv__pfield *f, const void *base);

/* Whether s[0..len) is well-formed UTF-8 (utf8.c). */
bool skv__proto_utf8_valid(const char *s, size_t len);

/* Shared by the field files. */
int skv__proto_check_str(const char *s, uint32_t max, skv_error *err);
int skv__proto_read_str(skv__mpr *r, char **out, uint32_t max, skv_error *err);
int skv__proto_pack_strlist(skv__mpw *w, const skv__pfield *f,
                            const void *base, skv_error *err);
int skv__proto_unpack_strlist(skv__mpr *r, const skv__pfield *f, void *base,
                              skv_error *err);
int skv__proto_pack_u32list(skv__mpw *w, const skv__pfield *f,
                            const void *base, skv_error *err);
int skv__proto_unpack_u32list(skv__mpr *r, const skv__pfield *f, void *base,
                              skv_error *err);
int skv__proto_pack_list(skv__mpw *w, const skv__pfield *f, const void *base,
                         skv_error *err);
int skv__proto_unpack_list(skv__mpr *r, const skv__pfield *f, void *base,
                           skv_error *err);
int skv__proto_pack_kvlist(skv__mpw *w, const skv__pfield *f,
                           const void *base, skv_error *err);
int skv__proto_unpack_kvlist(skv__mpr *r, const skv__pfield *f, void *base,
                             skv_error *err);

#endif
