#!/bin/bash
# bench/manager/with-pg.sh CMD [ARG...]: run CMD with a temporary PostgreSQL
# (Debian's server: initdb into a fresh directory under /tmp, listening
# only on a Unix socket there, database "skv" of user "skv", stock
# durability settings: fsync and synchronous_commit on), every argument
# "@PG@" replaced by its URI; the server is stopped and the directory
# removed afterwards, whatever CMD did. Exits with CMD's status; 1 with the
# reason when the server cannot be set up. As root, the server runs as
# the postgres user (PostgreSQL refuses root). E.g.
#   bench/manager/with-pg.sh build/bench/manager --store @PG@ --agents 10
# SPDX-License-Identifier: Apache-2.0
set -u
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "with-pg: no PostgreSQL server (apt-get install postgresql)" >&2
    exit 1
fi
[ $# -gt 0 ] || { echo "usage: with-pg.sh CMD [ARG...]" >&2; exit 2; }
dir=$(mktemp -d /tmp/skv-bm-pg-XXXXXX) || exit 1
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
stop() {
    as_pg "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
    rm -rf "$dir"
}
trap stop EXIT
trap 'exit 130' INT TERM
if ! as_pg "$bindir/initdb" -D "$dir/data" -A trust -U skv -E UTF8 \
        --locale=C >"$dir/initdb.log" 2>&1; then
    echo "with-pg: initdb failed:" >&2; cat "$dir/initdb.log" >&2; exit 1
fi
if ! as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o \
        "-c listen_addresses= -c unix_socket_directories=$dir -c max_connections=100" \
        start >/dev/null; then
    echo "with-pg: postgres did not start:" >&2; cat "$dir/server.log" >&2
    exit 1
fi
if ! as_pg "$bindir/createdb" -h "$dir" -U skv skv; then
    echo "with-pg: createdb failed" >&2; exit 1
fi
uri="postgresql://skv@/skv?host=$dir"
args=()
for a in "$@"; do args+=("${a//@PG@/$uri}"); done
"${args[@]}"
