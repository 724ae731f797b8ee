/* sokovan-topo: shared declarations of the tool's files.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TOPO_TOOL_H
#define SKV_TOPO_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include "sokovan/alloc.h"
#include "sokovan/node.h"
#include "sokovan/plugin.h"
#include "sokovan/slots.h"
#include "sokovan/topo.h"

#define TOOL_PLUGINS_MAX 6

typedef struct tool {
    skv_topo *topo;
    skv_plugin *plugins[TOOL_PLUGINS_MAX];
    size_t nplugins;
    skv_node *node;
    const char *request;            /* --alloc text or NULL */
    skv_node_policy policy;
    skv_node_placement *placement;  /* when --alloc succeeded */
} tool;

/* ---- json.c: a minimal streaming JSON writer ---- */
typedef struct json {
    FILE *f;
    int depth;
    bool first[32];     /* no comma before the next value at this depth */
} json;

void json_begin(json *j, FILE *f);
void json_open(json *j, const char *key, char bracket);  /* '{' or '[' */
void json_close(json *j, char bracket);
void json_str(json *j, const char *key, const char *value);
void json_int(json *j, const char *key, long long value);
void json_end(json *j);

/* ---- output.c ---- */
void print_json(const tool *t, FILE *f);
void print_table(const tool *t, FILE *f);

#endif
