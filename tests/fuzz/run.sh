#!/bin/sh
# Build the libFuzzer target for the wire protocol against the library
# sources (clang, -fsanitize=fuzzer,address,undefined) and run it.
#   tests/fuzz/run.sh [SECONDS]     fuzz for SECONDS (default 60)
#   tests/fuzz/run.sh --gen         regenerate the seed corpus
# Environment: FUZZ_BUILD (build dir, default build-fuzz).
# Exits non-zero when the fuzzer finds a crash, leak or huge allocation;
# the reproducer is left in $FUZZ_BUILD.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${FUZZ_BUILD:-$root/build-fuzz}
mkdir -p "$out"
cd "$root"

PKGS="msgpack libsodium libcrypto"
SRCS=$(ls src/core/*.c src/slots/*.c src/proto/*.c src/auth/*.c)
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Werror \
 -Iinclude -Isrc/include $(pkg-config --cflags $PKGS)"
LIBS="$(pkg-config --libs $PKGS)"

if [ "${1:-}" = "--gen" ]; then
    clang $CFLAGS -fsanitize=address,undefined -o "$out/gen_corpus" $SRCS \
        tests/fuzz/gen_corpus.c $LIBS
    rm -rf tests/fuzz/corpus && mkdir -p tests/fuzz/corpus
    "$out/gen_corpus" tests/fuzz/corpus
    echo "corpus: $(ls tests/fuzz/corpus | wc -l) seeds in tests/fuzz/corpus"
    exit 0
fi

secs=${1:-60}
clang $CFLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
    -o "$out/fuzz_proto" $SRCS tests/fuzz/fuzz_proto.c $LIBS
mkdir -p "$out/corpus"
cd "$out"
# -malloc_limit_mb: a single allocation above 64 MiB from inputs of at most
# 64 KiB would be an over-allocation bug, so it counts as a crash.
exec ./fuzz_proto -max_total_time="$secs" -max_len=65536 -malloc_limit_mb=64 \
    -rss_limit_mb=1024 -timeout=10 \
    -print_final_stats=1 corpus "$root/tests/fuzz/corpus"
