/* Tests: an OCI image layout directory built from a root file system
 * directory (one uncompressed layer) and an image config document, with
 * sha256sum and tar: layout/{oci-layout,index.json,blobs/sha256/...}.
 * Header-only (static inline) for the unit and end-to-end suites.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SKV_TEST_OCI_LAYOUT_H
#define SKV_TEST_OCI_LAYOUT_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* An image config whose config.Labels has key=value (key NULL: none). */
static inline int oci_config_doc(char *out, size_t cap, const char *key,
                                 const char *value)
{
    int n = key ? snprintf(out, cap, "{\"architecture\": \"amd64\", \"os\": "
                           "\"linux\", \"config\": {\"Env\": [\"A=1\"], "
                           "\"Labels\": {\"org.example.other\": \"x\", "
                           "\"%s\": \"%s\"}}, \"rootfs\": {\"type\": "
                           "\"layers\"}}", key, value)
                : snprintf(out, cap, "{\"config\": {\"Labels\": null}}");
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* layout (created) from rootfs with config text cfg: 0 or -1. */
static inline int oci_layout_build(const char *layout, const char *rootfs,
                                   const char *cfg)
{
    char p[PATH_MAX + 16], cmd[PATH_MAX * 4];
    snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s/blobs/sha256",
             layout, layout);
    if (system(cmd) != 0)
        return -1;
    snprintf(p, sizeof p, "%s/cfg", layout);
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs(cfg, f);
    if (fclose(f) != 0)
        return -1;
    snprintf(cmd, sizeof cmd, "set -e; L=%s; cd $L; "
             "blob() { h=$(sha256sum \"$1\" | cut -d' ' -f1); "
             "mv \"$1\" blobs/sha256/$h; echo $h; }; "
             "tar -C %s -cf layer.tar .; lh=$(blob layer.tar); ch=$(blob cfg); "
             "printf '{\"schemaVersion\": 2, \"config\": {\"digest\": "
             "\"sha256:%%s\"}, \"layers\": [{\"digest\": \"sha256:%%s\"}]}' "
             "$ch $lh > man; mh=$(blob man); "
             "printf '{\"schemaVersion\": 2, \"manifests\": [{\"digest\": "
             "\"sha256:%%s\"}]}' $mh > index.json; "
             "echo '{\"imageLayoutVersion\": \"1.0.0\"}' > oci-layout",
             layout, rootfs);
    return system(cmd) == 0 ? 0 : -1;
}

#endif
