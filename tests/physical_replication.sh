#!/usr/bin/env bash
# Physical replication: a streaming standby of a primary that writes columnar tables
# replays their pages (pgcolumnar's PAGE_WRITE records, and generic WAL) to the same
# bytes, under wal_consistency_checking, which makes every record carry an image of each
# page it touches and has the standby compare its replayed page with it: any difference
# stops the standby (FATAL "inconsistent page found").
#
# A workload of every write path (COPY, single-row and 100-row INSERTs, UPDATE, DELETE,
# VACUUM merging small row groups, ADD COLUMN, CREATE INDEX, VACUUM FULL, TRUNCATE, an
# unlogged table) runs on the primary; the standby must then hold the same rows (read
# by seq scan and by index), after a kill -9 of the standby too (crash recovery replays
# the records again from its restart point), and accept writes once promoted.
# Runs its own two clusters; called by scripts/test.sh (make physical-test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
PRIMARY_PORT=${PHYSICAL_TEST_PORT:-54340}
STANDBY_PORT=$((PRIMARY_PORT + 1))
PRIMARY_DIR=$($CLUSTER dir physical-primary)
STANDBY_DIR=$($CLUSTER dir physical-standby)

primary() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PRIMARY_DIR/socket" -p "$PRIMARY_PORT" -U postgres -d postgres "$@"; }
standby() { "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$STANDBY_DIR/socket" -p "$STANDBY_PORT" -U postgres -d postgres "$@"; }

cleanup() { $CLUSTER destroy physical-primary; $CLUSTER destroy physical-standby; }
[ -n "${PHYSICAL_KEEP:-}" ] || trap cleanup EXIT
cleanup
$CLUSTER start physical-primary "$PRIMARY_PORT" test || exit 1
primary -c "ALTER SYSTEM SET wal_consistency_checking = 'pgcolumnar, generic, heap, heap2, btree'" || exit 1
$CLUSTER start physical-primary "$PRIMARY_PORT" test || exit 1
check consistency_checking_on "pgcolumnar, generic, heap, heap2, btree" "$(primary -c "SHOW wal_consistency_checking")"

# The standby: a base backup (-R: standby.signal and primary_conninfo), then its own
# port and socket (cluster.sh rewrites pgcolumnar.conf at start).
as_postgres() { runuser -u postgres -- "$@"; }
as_postgres mkdir -p "$STANDBY_DIR/socket"
as_postgres "$PG_BIN/pg_basebackup" -h "$PRIMARY_DIR/socket" -p "$PRIMARY_PORT" -U postgres \
    -D "$STANDBY_DIR/data" -R -X stream -c fast || exit 1
$CLUSTER start physical-standby "$STANDBY_PORT" test || exit 1
check standby_in_recovery "t" "$(standby -c "SELECT pg_is_in_recovery()")"

# Waits until the standby has replayed everything the primary wrote so far.
caught_up() {
    local lsn
    lsn=$(primary -c "SELECT pg_current_wal_insert_lsn()")
    for _ in $(seq 1 600); do
        [ "$(standby -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'" 2>/dev/null)" = "t" ] && return 0
        sleep 0.1
    done
    return 1
}

# Every table's rows, as one digest per table (ids, values, and a column added later).
DIGEST="
SELECT 'c', count(*), md5(string_agg(concat_ws(':', id, v, f, extra), ',' ORDER BY id)) FROM c
UNION ALL SELECT 'small', count(*), md5(string_agg(concat_ws(':', id, host, v), ',' ORDER BY id)) FROM small
UNION ALL SELECT 'rewritten', count(*), md5(string_agg(concat_ws(':', id, v), ',' ORDER BY id)) FROM rewritten
UNION ALL SELECT 'emptied', count(*), md5(string_agg(concat_ws(':', id, v), ',' ORDER BY id)) FROM emptied
ORDER BY 1"
# The same through the indexes (index and bitmap scans only).
BY_INDEX="SET enable_seqscan = off; SET pgcolumnar.enable_columnar_scan = off;
SELECT count(*), sum(id), md5(string_agg(v, ',' ORDER BY id)) FROM c WHERE id BETWEEN 1000 AND 250000;
SELECT count(*), md5(string_agg(v::text, ',' ORDER BY id)) FROM small WHERE host = 'host_7';"

primary -c "CREATE EXTENSION pgcolumnar" -c "CREATE EXTENSION pg_walinspect" \
    -c "CREATE TABLE c (id int PRIMARY KEY, v text, f float8) USING columnar" \
    -c "CREATE TABLE small (id bigserial PRIMARY KEY, host text, v float8) USING columnar" \
    -c "CREATE INDEX ON small (host)" \
    -c "CREATE TABLE rewritten (id int, v text) USING columnar" \
    -c "CREATE TABLE emptied (id int, v text) USING columnar" \
    -c "CREATE UNLOGGED TABLE u (id int PRIMARY KEY, v text) USING columnar" || exit 1
# COPY: full row groups, several pages each.
primary -c "COPY c FROM PROGRAM 'seq 1 300000 | awk ''{print \$1 \"\\tv\" \$1 \"\\t\" \$1/7}''' " || exit 1
# Trickle writes: a row group (and its pages' bytes) per transaction.
START_LSN=$(primary -c "SELECT pg_current_wal_insert_lsn()")
for i in $(seq 1 60); do
    echo "INSERT INTO small (host, v) VALUES ('host_$((i % 10))', $i.5);"
done | primary || exit 1
for i in $(seq 1 20); do
    echo "INSERT INTO small (host, v) SELECT 'host_' || (g % 10), g * 0.25 FROM generate_series(1, 100) g;"
done | primary || exit 1
# Each trickle transaction's bytes are one PAGE_WRITE record (two where they cross a
# page), not a generic record.
check trickle_logged_as_page_writes "t|t" "$(primary -c "SELECT count(*) FILTER (WHERE record_type = 'PAGE_WRITE') >= 80, count(*) FILTER (WHERE resource_manager = 'Generic') = 0 FROM pg_get_wal_records_info('$START_LSN', pg_current_wal_flush_lsn()) WHERE resource_manager IN ('pgcolumnar', 'Generic')" 2>&1)"
primary -c "UPDATE c SET v = v || '-updated' WHERE id % 1000 = 0" \
    -c "DELETE FROM c WHERE id % 997 = 0" \
    -c "DELETE FROM small WHERE id % 13 = 0" \
    -c "INSERT INTO rewritten SELECT g, 'r' || g FROM generate_series(1, 50000) g" \
    -c "INSERT INTO emptied SELECT g, 'e' || g FROM generate_series(1, 20000) g" \
    -c "INSERT INTO u SELECT g, 'u' || g FROM generate_series(1, 1000) g" || exit 1
# VACUUM merges the trickle's row groups (rows move, index entries are added).
primary -c "VACUUM small" || exit 1
check trickle_merged "t" "$(primary -c "SELECT row_groups < 10 FROM pgcolumnar.table_stats WHERE relation = 'small'::regclass")"
primary -c "ALTER TABLE c ADD COLUMN extra int DEFAULT 7" \
    -c "UPDATE c SET extra = id % 5 WHERE id % 3 = 0" \
    -c "CREATE INDEX ON c (f)" \
    -c "VACUUM FULL rewritten" \
    -c "UPDATE rewritten SET v = v || '!' WHERE id % 100 = 0" \
    -c "TRUNCATE emptied" \
    -c "INSERT INTO emptied VALUES (1, 'after truncate')" || exit 1
caught_up
check standby_caught_up "0" "$?"
check standby_consistent "t" "$(standby -c "SELECT pg_is_in_recovery()" 2>&1)"
PRIMARY_ROWS=$(primary -c "$DIGEST")
check standby_rows "$PRIMARY_ROWS" "$(standby -c "$DIGEST" 2>&1)"
PRIMARY_BY_INDEX=$(primary -c "$BY_INDEX")
check standby_rows_by_index "$PRIMARY_BY_INDEX" "$(standby -c "$BY_INDEX" 2>&1)"
check standby_unlogged_not_readable "ERROR" \
    "$(standby -c "SELECT count(*) FROM u" 2>&1 | grep -o '^ERROR' | head -1)"

# Hot standby and freed space: a standby query holding a snapshot that still sees a row
# group keeps reading it while the primary deletes its rows, VACUUM frees its space and
# a new row group is written there. The primary waits only for its own snapshots; the
# reuse is WAL-logged (SPACE_REUSE) so that the standby resolves the conflict as for
# heap's removals: the query reads the old rows, or is cancelled (40001), never reads
# the new bytes as the old row group.
primary -c "CREATE TABLE reused (id int, v text) USING columnar" \
    -c "INSERT INTO reused SELECT g, md5(g::text) FROM generate_series(1, 50000) g" || exit 1
caught_up
REUSE_DIGEST="SELECT count(*), md5(string_agg(v, ',' ORDER BY id)) FROM reused"
OLD_ROWS=$(primary -c "$REUSE_DIGEST")
coproc HOLDER { "$PG_BIN/psql" -X -q -A -t -h "$STANDBY_DIR/socket" -p "$STANDBY_PORT" -U postgres -d postgres 2>&1; }
echo "BEGIN ISOLATION LEVEL REPEATABLE READ; $REUSE_DIGEST;" >&"${HOLDER[1]}"
read -r -t 30 first <&"${HOLDER[0]}"
check standby_snapshot_before_reuse "$OLD_ROWS" "$first"
REUSE_LSN=$(primary -c "SELECT pg_current_wal_insert_lsn()")
primary -c "DELETE FROM reused" -c "VACUUM reused" -c "VACUUM reused" \
    -c "INSERT INTO reused SELECT g, md5((g + 7)::text) FROM generate_series(1, 20000) g" || exit 1
check space_reuse_logged "t" "$(primary -c "SELECT count(*) >= 1 FROM pg_get_wal_records_info('$REUSE_LSN', pg_current_wal_flush_lsn()) WHERE resource_manager = 'pgcolumnar' AND record_type = 'SPACE_REUSE'")"
sleep 2
echo "$REUSE_DIGEST;" >&"${HOLDER[1]}"
read -r -t 60 second <&"${HOLDER[0]}"
case $second in
    *"conflict with recovery"*) second=$OLD_ROWS ;;
esac
check standby_snapshot_after_reuse "$OLD_ROWS" "$second"
echo "COMMIT;" >&"${HOLDER[1]}"
echo "\\q" >&"${HOLDER[1]}"
wait "$HOLDER_PID" 2>/dev/null
caught_up
check standby_rows_after_reuse "$(primary -c "$REUSE_DIGEST")" "$(standby -c "$REUSE_DIGEST" 2>&1)"

# kill -9 of the standby: crash recovery replays from its last restart point, over pages
# that already hold the records' bytes.
primary -c "CHECKPOINT" || exit 1
for i in $(seq 1 30); do
    echo "INSERT INTO small (host, v) VALUES ('host_$((i % 10))', $i.75);"
done | primary || exit 1
caught_up
sigkill_cluster "$STANDBY_DIR"
primary -c "INSERT INTO c SELECT g, 'late' || g, g, 1 FROM generate_series(300001, 301000) g" || exit 1
$CLUSTER start physical-standby "$STANDBY_PORT" test || exit 1
caught_up
check standby_after_crash "$(primary -c "$DIGEST")" "$(standby -c "$DIGEST" 2>&1)"
check standby_consistency_failures "0" "$(grep -c 'inconsistent page' "$STANDBY_DIR/server.log")"

# Promoted, the standby writes the tables as its own (the metapage's counters came over).
standby -c "SELECT pg_promote()" >/dev/null || exit 1
for _ in $(seq 1 100); do
    [ "$(standby -c "SELECT pg_is_in_recovery()")" = "f" ] && break
    sleep 0.1
done
check promoted_writes "301000|2" "$(standby -c "INSERT INTO c VALUES (400000, 'promoted', 0, 0)" \
    -c "INSERT INTO small (host, v) VALUES ('host_1', 0.5)" \
    -c "SELECT max(id), (SELECT count(*) FROM c WHERE id >= 300001 AND id <= 301000 AND v LIKE 'late%') / 500 FROM c WHERE id < 400000")"
check promoted_reads_new_row "promoted" "$(standby -c "SET enable_seqscan = off; SELECT v FROM c WHERE id = 400000")"

echo "physical replication: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
