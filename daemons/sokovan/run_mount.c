/* sokovan run --mount NAME[:/PATH][:ro|:rw] (and a job file's `mounts`
 * list): virtual folders for session.submit. The manager checks access
 * and the path; here only the shape is checked.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "run.h"

static int split(cli *c, const char *val, skv_proto_mount *m)
{
    char *copy = strdup(val);
    if (!copy)
        return cli_fail("out of memory");
    char *parts[3] = {NULL, NULL, NULL};
    int n = 0;
    for (char *tok = copy, *next; tok && n < 3; tok = next, n++) {
        next = strchr(tok, ':');
        if (next)
            *next++ = 0;
        parts[n] = tok;
        if (n == 2 && next)
            n = 4;   /* too many parts */
    }
    int rc = 0;
    if (n > 3 || !parts[0][0])
        rc = cli_usage(c, "--mount: expected NAME[:/PATH][:ro|:rw], got "
                       "'%s'", val);
    for (int i = 1; !rc && i < n; i++) {
        if (parts[i][0] == '/' && i == 1)
            m->target = strdup(parts[i]);
        else if (!strcmp(parts[i], "ro") || !strcmp(parts[i], "rw"))
            m->readonly = parts[i][1] == 'o';
        else
            rc = cli_usage(c, "--mount '%s': '%s' is neither an absolute "
                           "path nor ro/rw", val, parts[i]);
    }
    if (!rc && !(m->folder = strdup(parts[0])))
        rc = cli_fail("out of memory");
    free(copy);
    return rc;
}

int cli_run_take_mount(cli *c, skv_proto_session_submit *s, const char *val)
{
    if (s->n_mounts == 64)
        return cli_usage(c, "--mount: at most 64 folders");
    skv_proto_mount m;
    memset(&m, 0, sizeof m);
    int rc = split(c, val, &m);
    skv_proto_mount *v = rc ? NULL
                            : realloc(s->mounts, (s->n_mounts + 1) * sizeof *v);
    if (!rc && !v)
        rc = cli_fail("out of memory");
    if (rc) {
        free(m.folder);
        free(m.target);
        return rc;
    }
    s->mounts = v;
    v[s->n_mounts++] = m;
    return 0;
}

void cli_run_mounts_free(skv_proto_session_submit *s)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        free(s->mounts[i].folder);
        free(s->mounts[i].target);
    }
    free(s->mounts);
    s->mounts = NULL;
    s->n_mounts = 0;
}
