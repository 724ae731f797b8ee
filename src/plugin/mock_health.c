/* The mock plugin's injected device faults: a control file an operator or
 * a test writes, one faulty device per line ("1 xid 79"), read afresh at
 * every health report so that writing or emptying it is all it takes to
 * fault a device or clear it. A line naming no device of the plugin is an
 * error naming the file and line (a typo must not read as "healthy").
 * SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin_internal.h"

/* One line: 0 (blank or comment), 1 with *id and *reason set, or < 0. */
static int parse_line(char *line, size_t n, char **id, char **reason)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *p = line + strspn(line, " \t");
    if (!*p || *p == '#')
        return 0;
    char *end = p + strcspn(p, " \t");
    char *rest = *end ? end + 1 : end;
    *end = '\0';
    rest += strspn(rest, " \t");
    char *stop;
    errno = 0;
    unsigned long v = strtoul(p, &stop, 10);
    if (*stop || stop == p || errno || v >= n)
        return SKV_EINVAL;
    *id = p;
    *reason = *rest ? rest : "injected fault";
    return 1;
}

int skv__mock_faults_read(const char *path, size_t n,
                          skv_device_health_fn report, void *arg,
                          skv_error *err)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return errno == ENOENT ? 0
               : skv__err(err, SKV_EIO, "mock faults file %s: %s", path,
                          strerror(errno));
    char line[256];
    int rc = 0;
    for (unsigned no = 1; !rc && fgets(line, sizeof line, f); no++) {
        char *id, *reason;
        int r = parse_line(line, n, &id, &reason);
        if (r < 0)
            rc = skv__err(err, SKV_EINVAL, "mock faults file %s line %u: "
                          "'%s' is not a device index below %zu", path, no,
                          line, n);
        else if (r > 0)
            rc = report(arg, id, reason);
    }
    fclose(f);
    return rc;
}
