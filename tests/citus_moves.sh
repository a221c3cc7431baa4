#!/usr/bin/env bash
# Part of the `citus` test level (scripts/citus-test.sh runs it on the level's cluster):
# Citus's non-blocking shard moves of a columnar table, which copy shards by
# logical replication, keep every row under concurrent writes.
#
# A distributed columnar table and a co-located heap twin get the same change in the same
# transaction (upserts and deletes of a non-superuser, 4 clients). While they run, a
# shard group is moved with force_logical and moved back with auto. Co-located shards move together, through the
# same publications: any change lost or repeated in the columnar shards' stream leaves the
# columnar table different from its heap twin.
#
#   citus_moves.sh PORT DB   (coordinator port; workers on PORT+1, PORT+2)
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
PORT=${1:?coordinator port}
DB=${2:?database}
SOCK=$($CLUSTER dir citus-coord)/socket
OUT=$TOP/target/citus-moves
WRITE_SECONDS=${CITUS_MOVES_SECONDS:-40}

coord() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$SOCK" -p "$PORT" -U postgres -d "$DB" "$@"; }

rm -rf "$OUT"
mkdir -p "$OUT"
coord -c "CREATE ROLE regress_moves_writer LOGIN" \
    -c "CREATE TABLE moves_col (k int NOT NULL, id int NOT NULL, v bigint, note text, PRIMARY KEY (k, id)) USING columnar" \
    -c "CREATE TABLE moves_heap (k int NOT NULL, id int NOT NULL, v bigint, note text, PRIMARY KEY (k, id))" \
    -c "SELECT create_distributed_table('moves_col', 'k', shard_count => 4, colocate_with => 'none')" \
    -c "SELECT create_distributed_table('moves_heap', 'k', colocate_with => 'moves_col')" \
    -c "INSERT INTO moves_col SELECT g % 64, g, 0, md5(g::text) FROM generate_series(1, 20000) g" \
    -c "INSERT INTO moves_heap SELECT * FROM moves_col" \
    -c "GRANT SELECT, INSERT, UPDATE, DELETE ON moves_col, moves_heap TO regress_moves_writer" >/dev/null || exit 1

# Each client has keys of its own (id = client_id mod 4): the two tables' statements run
# on separate snapshots (READ COMMITTED), so two transactions on one key could
# interleave between them and leave the twins rightly different.
cat >"$OUT/upsert.sql" <<'SQL'
\set k random(0, 63)
\set id 4 * random(0, 9999) + :client_id
BEGIN;
INSERT INTO moves_col VALUES (:k, :id, 1, 'w') ON CONFLICT (k, id) DO UPDATE SET v = moves_col.v + 1, note = moves_col.note || 'u';
INSERT INTO moves_heap VALUES (:k, :id, 1, 'w') ON CONFLICT (k, id) DO UPDATE SET v = moves_heap.v + 1, note = moves_heap.note || 'u';
COMMIT;
SQL
cat >"$OUT/delete.sql" <<'SQL'
\set k random(0, 63)
\set id 4 * random(0, 9999) + :client_id
BEGIN;
DELETE FROM moves_col WHERE k = :k AND id = :id;
DELETE FROM moves_heap WHERE k = :k AND id = :id;
COMMIT;
SQL
chmod -R a+rX "$OUT"
"$PG_BIN/pgbench" -n -h "$SOCK" -p "$PORT" -U regress_moves_writer -c 4 -j 2 -T "$WRITE_SECONDS" \
    -f "$OUT/upsert.sql@3" -f "$OUT/delete.sql@1" "$DB" >"$OUT/pgbench.log" 2>&1 &
writers=$!

# The shard group of the table's first shard on the first worker.
SHARD=$(coord -c "SELECT min(shardid) FROM pg_dist_shard JOIN pg_dist_placement USING (shardid)
                  WHERE logicalrelid = 'moves_col'::regclass AND groupid = 1")
W1=$((PORT + 1))
W2=$((PORT + 2))
# A move leaves its source placements to a deferred drop (pg_dist_cleanup), and the next
# move first drops what is pending with a 1 s lock_timeout: a writer still holding a lock
# on an old placement then makes that move print a WARNING, and fail if the placement is
# its own shard's ("orphaned shard ... could not be cleaned up"). An operator waits for
# the cleanup between moves; so does this test, up to a minute.
drain_cleanup() {
    local left
    for _ in $(seq 1 60); do
        coord -c "CALL citus_cleanup_orphaned_resources()" >/dev/null 2>&1
        left=$(coord -c "SELECT count(*) FROM pg_dist_cleanup")
        [ "$left" = 0 ] && break
        sleep 1
    done
    echo "$left"
}
check "resources left by earlier tests are cleaned up" "0" "$(drain_cleanup)"
sleep 3
check "move with force_logical under writes" "" \
    "$(coord -c "SET statement_timeout = '5min'" -c "SELECT citus_move_shard_placement($SHARD, '127.0.0.1', $W1, '127.0.0.1', $W2,
                                                   shard_transfer_mode => 'force_logical')" 2>&1)"
check "the shard group (columnar and heap shard) moved" "2 on group 2" \
    "$(coord -c "SELECT count(*) || ' on group ' || string_agg(DISTINCT p.groupid::text, ',')
                   FROM pg_dist_placement p JOIN pg_dist_shard s USING (shardid)
                  WHERE s.logicalrelid IN ('moves_col'::regclass, 'moves_heap'::regclass)
                    AND s.shardminvalue = (SELECT shardminvalue FROM pg_dist_shard WHERE shardid = $SHARD)")"
# (A split with force_logical under writes is left out: in one run of three the split's
# apply stopped on a DELETE of the heap twin, "publisher did not send replica identity
# column", and the split waited forever; splits are checked without writes in
# citus_shards.sql.)
check "the moved placements are dropped before moving back" "0" "$(drain_cleanup)"
check "move back with auto under writes" "" \
    "$(coord -c "SET statement_timeout = '5min'" -c "SELECT citus_move_shard_placement($SHARD, '127.0.0.1', $W2, '127.0.0.1', $W1,
                                                   shard_transfer_mode => 'auto')" 2>&1)"
wait "$writers"
check "writers committed transactions" "yes" \
    "$(awk '/number of transactions actually processed/ {print ($NF > 500 ? "yes" : "no: " $NF)}' "$OUT/pgbench.log")"
check "no writer failed" "" "$(grep -h 'error' "$OUT/pgbench.log")"
check "the columnar table has 4 shards" "4" \
    "$(coord -c "SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'moves_col'::regclass")"
DIGEST="SELECT count(*) || ' ' || sum(v) || ' ' || md5(string_agg(format('%s|%s|%s|%s', k, id, v, note), ',' ORDER BY k, id))"
check "the columnar table equals its heap twin" "$(coord -c "$DIGEST FROM moves_heap")" "$(coord -c "$DIGEST FROM moves_col")"
# The columnar shards are still columnar, on both workers.
check "every shard of the columnar table is columnar" "t" \
    "$(coord -c "SELECT bool_and(result = 'columnar') FROM run_command_on_shards('moves_col',
                   \$\$SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = '%s'::regclass\$\$)")"
coord -c "DROP TABLE moves_col, moves_heap" -c "DROP ROLE regress_moves_writer" >/dev/null

echo "citus moves: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
