/* sokovan vfolder ls / mkdir / rm / mv: one vfolder.file request each.
 * SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "vfolder.h"

static void ls_print(cli *c, const skv_proto_vfolder_file_reply *r)
{
    if (c->json) {
        cli_json j;
        cli_json_init(&j, stdout);
        cli_json_arr(&j);
        for (size_t i = 0; i < r->n_entries; i++) {
            const skv_proto_vfolder_entry *e = &r->entries[i];
            cli_json_obj(&j);
            cli_json_key(&j, "name");
            cli_json_str(&j, e->name);
            cli_json_key(&j, "type");
            cli_json_str(&j, e->type);
            cli_json_key(&j, "size");
            cli_json_uint(&j, e->size);
            cli_json_key(&j, "mode");
            cli_json_uint(&j, e->mode);
            cli_json_key(&j, "mtime_s");
            cli_json_int(&j, e->mtime_s);
            cli_json_obj_end(&j);
        }
        cli_json_arr_end(&j);
        cli_json_end(&j);
        return;
    }
    static const char *const hdr[] = {"NAME", "TYPE", "SIZE", "MODE",
                                      "MODIFIED"};
    cli_table t;
    cli_table_init(&t, 5, hdr);
    for (size_t i = 0; i < r->n_entries; i++) {
        const skv_proto_vfolder_entry *e = &r->entries[i];
        char size[32], mode[16], when[64];
        snprintf(size, sizeof size, "%llu", (unsigned long long)e->size);
        snprintf(mode, sizeof mode, "%04o", e->mode & 07777);
        cli_fmt_time(when, sizeof when, e->mtime_s * 1000);
        const char *row[] = {e->name, e->type, size, mode, when};
        cli_table_row(&t, row);
    }
    cli_table_print(&t, stdout);
    cli_table_free(&t);
}

int cli_vf_files(cli *c, const char *sub, const cli_vf_args *a)
{
    skv_proto_vfolder_file q;
    skv_proto_vfolder_file_reply r;
    memset(&q, 0, sizeof q);
    q.op = (char *)sub;
    q.folder = (char *)a->pos[0];
    q.path = (char *)(a->n > 1 ? a->pos[1] : "");
    q.to = (char *)(a->n > 2 ? a->pos[2] : NULL);
    q.recursive = (uint8_t)a->recursive;
    int rc = cli_call(c, SKV_PROTO_VFOLDER_FILE, &q, &r);
    if (rc)
        return rc;
    if (!strcmp(sub, "ls"))
        ls_print(c, &r);
    skv_proto_body_free(SKV_PROTO_VFOLDER_FILE_REPLY, &r);
    return CLI_OK;
}
