#!/bin/sh
# The store is the only SQL speaker: no sqlite3_*/PQ* call and no SQL
# statement text in src/ or daemons/ outside src/manager/store/.
# Known exception until the admin branch lands: the admin plane's files
# (src/manager/mgr_admin_*) still hold their SQL; h/admin moves them to
# src/manager/admin/ and their statements to src/manager/store/admin_*.c,
# after which this exception matches nothing and must be deleted.
# SPDX-License-Identifier: Apache-2.0
set -u
cd "$(dirname "$0")/.." || exit 2
EXCEPT='^src/manager/store/|^src/manager/mgr_admin_[a-z_]*\.[ch]:'
calls='\b(sqlite3_[a-z0-9_]+|PQ[a-z][A-Za-z]*)[[:space:]]*\('
stmts='"[^"]*\b(SELECT [^"]*FROM|SELECT [a-z0-9*(]|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM|CREATE (TABLE|INDEX|UNIQUE INDEX)|ALTER TABLE|DROP TABLE|PRAGMA [a-z_]+)'
tx='"(BEGIN( IMMEDIATE| TRANSACTION)?|COMMIT|ROLLBACK)"'
bad=$(grep -rnE --include='*.c' --include='*.h' "$calls|$stmts|$tx" src daemons |
      grep -vE "$EXCEPT")
if [ -n "$bad" ]; then
    echo "check-sql: SQL outside src/manager/store/ (move it behind store.h):"
    echo "$bad"
    exit 1
fi
echo "check-sql: no SQL outside src/manager/store/ (admin files excepted until h/admin lands)"
