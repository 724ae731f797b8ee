#!/bin/sh
# The store is the only SQL speaker: no sqlite3_*/PQ* call and no SQL
# statement text in src/ or daemons/ outside src/manager/store/.
# The admin plane (src/manager/admin/) keeps its rules and calls the
# store's admin_*.c for rows, like the rest of the manager.
# SPDX-License-Identifier: Apache-2.0
set -u
cd "$(dirname "$0")/.." || exit 2
EXCEPT='^src/manager/store/'
calls='\b(sqlite3_[a-z0-9_]+|PQ[a-z][A-Za-z]*)[[:space:]]*\('
stmts='"[^"]*\b(SELECT [^"]*FROM|SELECT [a-z0-9*(]|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM|CREATE (TABLE|INDEX|UNIQUE INDEX)|ALTER TABLE|DROP TABLE|PRAGMA [a-z_]+)'
tx='"(BEGIN( IMMEDIATE| TRANSACTION)?|COMMIT|ROLLBACK)"'
# A program (never the library) may set SQLite's process-wide options
# before anything opens a database: sqlite3_config is not SQL.
PROGRAM_CONFIG='^daemons/[^:]+:[0-9]+:[[:space:]]*sqlite3_config\('
bad=$(grep -rnE --include='*.c' --include='*.h' "$calls|$stmts|$tx" src daemons |
      grep -vE "$EXCEPT" | grep -vE "$PROGRAM_CONFIG")
if [ -n "$bad" ]; then
    echo "check-sql: SQL outside src/manager/store/ (move it behind store.h):"
    echo "$bad"
    exit 1
fi
echo "check-sql: no SQL outside src/manager/store/"
