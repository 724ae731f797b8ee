/* Writes the seed corpus for fuzz_proto: one framed message per type
 * (every field filled), half of them signed, each prefixed with the
 * chunk-size byte the target reads first. Built and run by run.sh --gen.
 * SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>

#include "../proto_fill.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
        return 2;
    }
    skv_proto_credentials cred = {"AKFUZZ", "fuzz-secret-key-0123"};
    for (int t = SKV_PROTO_UNKNOWN + 1; t < SKV_PROTO_TYPE_COUNT; t++) {
        _Alignas(max_align_t) unsigned char body[1024];
        skv_test_fill((skv_proto_type)t, body, t);
        void *frame;
        size_t len;
        skv_error e = SKV_ERROR_INIT;
        if (skv_proto_message_encode(&frame, &len, skv_proto_type_kind(t), (uint64_t)t,
                                     (skv_proto_type)t, body, 1700000000000LL,
                                     t % 2 ? &cred : NULL, &e)) {
            fprintf(stderr, "%s: %s\n", skv_proto_type_name(t), e.message);
            return 1;
        }
        skv_proto_body_free((skv_proto_type)t, body);
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", argv[1], skv_proto_type_name(t));
        FILE *f = fopen(path, "wb");
        unsigned char chunk = (unsigned char)(t * 7);
        if (!f || fwrite(&chunk, 1, 1, f) != 1 || fwrite(frame, 1, len, f) != len ||
            fclose(f) != 0) {
            perror(path);
            return 1;
        }
        skv_free(frame);
    }
    return 0;
}
