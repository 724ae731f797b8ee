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
# SKV_BENCH_PG_STATS (unset: none of this): the server loads
# pg_stat_statements (track=all, so statements inside functions and
# triggers count too, and also in their caller's time; track_io_timing
# on), db skv gets the extension, SKV_BENCH_PG_URI is exported to CMD (a
# --profile can reset the counts when the clock starts: psql
# "$SKV_BENCH_PG_URI" -c 'SELECT pg_stat_statements_reset(), pg_stat_reset()'),
# and after CMD the statements' sum and top 40 by total execution time
# (calls, total and mean ms, rows, text) and each table's row writes
# (inserted, updated, HOT-updated, deleted; its indexes) go to stderr when
# it is 1, else to the file it names.
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
opts="-c listen_addresses= -c unix_socket_directories=$dir -c max_connections=100"
stats=${SKV_BENCH_PG_STATS:-}
[ -n "$stats" ] && opts="$opts -c shared_preload_libraries=pg_stat_statements \
-c pg_stat_statements.track=all -c track_io_timing=on"
if ! as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -o "$opts" \
        start >/dev/null; then
    echo "with-pg: postgres did not start:" >&2; cat "$dir/server.log" >&2
    exit 1
fi
if ! as_pg "$bindir/createdb" -h "$dir" -U skv skv; then
    echo "with-pg: createdb failed" >&2; exit 1
fi
uri="postgresql://skv@/skv?host=$dir"
psql_skv() { "$bindir/psql" -X -q -v ON_ERROR_STOP=1 "$uri" "$@"; }
if [ -n "$stats" ]; then
    psql_skv -c 'CREATE EXTENSION pg_stat_statements' ||
        { echo "with-pg: no pg_stat_statements" >&2; exit 1; }
    export SKV_BENCH_PG_URI=$uri
fi
# Exactly once, after CMD, whatever its status.
dump_stats() {
    local q="SELECT calls, round(t::numeric, 1) AS total_ms,
        round((t / calls)::numeric, 3) AS mean_ms, rows, query FROM
        (SELECT calls, total_exec_time AS t, rows, query FROM pg_stat_statements
         UNION ALL SELECT sum(calls), sum(total_exec_time), sum(rows),
         '(all statements)' FROM pg_stat_statements) s
        ORDER BY t DESC LIMIT 41"
    # Row writes per table, HOT (no index entries) or not, and its indexes.
    local t="SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del,
        (SELECT count(*) FROM pg_index i WHERE i.indrelid = relid) AS indexes
        FROM pg_stat_user_tables ORDER BY n_tup_ins + n_tup_upd DESC"
    if [ "$stats" = 1 ]; then psql_skv -c "$q" -c "$t" >&2
    else psql_skv -c "$q" -c "$t" >"$stats"; fi
}
args=()
for a in "$@"; do args+=("${a//@PG@/$uri}"); done
"${args[@]}"
rc=$?
[ -n "$stats" ] && dump_stats
exit $rc
