#!/usr/bin/env bash
# Crash safety: SIGKILL the postmaster after a committed COPY and during an uncommitted
# one, restart (WAL replay), and check that every committed row is there, none of the
# uncommitted ones, and that the table is still readable and writable. Last, the same
# at wal_level = minimal for tables created or truncated in the writing transaction.
# Runs its own cluster; called by scripts/test.sh (make test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
own_cluster crash "${CRASH_TEST_PORT:-54317}"

crash() { sigkill_cluster "$DIR"; }

trap '$CLUSTER destroy crash' EXIT
$CLUSTER destroy crash
$CLUSTER start crash "$PORT" test

psql_ -c "CREATE EXTENSION pgcolumnar" \
      -c "CREATE TABLE c (id int, v text, f float8) USING columnar" \
      -c "CHECKPOINT"
# Committed: a COPY of 300k rows (several row groups) and a small INSERT after it.
psql_ -c "COPY c FROM PROGRAM 'seq 1 300000 | awk ''{print \$1 \"\\tv\" \$1 \"\\t\" \$1/3}''' "
psql_ -c "INSERT INTO c VALUES (-1, 'committed single row', 0.5)"

# An unlogged table (several row groups, an index): emptied by the crash, like heap's.
psql_ -c "CREATE UNLOGGED TABLE u (id int PRIMARY KEY, v text) USING columnar" \
      -c "INSERT INTO u SELECT g, 'u' || g FROM generate_series(1, 150000) g" -c "CHECKPOINT" \
      -c "INSERT INTO u VALUES (0, 'after the checkpoint')"
check unlogged_before_crash "150001|2" \
    "$(psql_ -c "SELECT (SELECT count(*) FROM u), (SELECT count(DISTINCT storage_id) FROM pgcolumnar.row_group)")"

# Uncommitted: a COPY that has written full row groups when the crash hits.
"$PG_BIN/psql" -X -q -h "$DIR/socket" -p "$PORT" -U postgres -d postgres >/dev/null 2>&1 <<'SQL' &
BEGIN;
COPY c FROM PROGRAM 'seq 1000001 1250000 | awk ''{print $1 "\tu" $1 "\t1"}''';
SELECT pg_sleep(60);
COMMIT;
SQL
for _ in $(seq 1 300); do
    n=$(psql_ -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(60)%' AND state = 'active' AND pid <> pg_backend_pid()")
    [ "$n" = 1 ] && break
    sleep 0.1
done
check uncommitted_copy_was_running 1 "$n"

crash
$CLUSTER start crash "$PORT" test

check committed_rows_survive_crash "300001|45000149999" "$(psql_ -c "SELECT count(*), sum(id) FROM c")"
check uncommitted_rows_are_gone 0 "$(psql_ -c "SELECT count(*) FROM c WHERE id > 1000000 OR v LIKE 'u%'")"
check values_intact_after_replay "v150000|50000" "$(psql_ -c "SELECT v, f FROM c WHERE id = 150000")"
psql_ -c "INSERT INTO c SELECT i, 'after', 0 FROM generate_series(1, 10) i"
check writable_after_recovery 300011 "$(psql_ -c "SELECT count(*) FROM c")"
check unlogged_empty_after_crash "0|0" "$(psql_ -c "SELECT count(*), count(*) FILTER (WHERE id = 5) FROM u")"
# Written again: a fresh storage id, the metadata from before the crash gone.
psql_ -c "INSERT INTO u SELECT g, 'again' FROM generate_series(1, 10) g"
check unlogged_writable_after_crash "10|again|2" "$(psql_ -c "SET enable_seqscan = off" -c "SET pgcolumnar.enable_columnar_scan = off" \
    -c "SELECT (SELECT count(*) FROM u WHERE id > 0), (SELECT v FROM u WHERE id = 5), (SELECT count(DISTINCT storage_id) FROM pgcolumnar.row_group)")"

# A second crash right after a commit, with no checkpoint in between.
psql_ -c "INSERT INTO c SELECT i, 'second', 1 FROM generate_series(1, 120000) i"
crash
$CLUSTER start crash "$PORT" test
check rows_committed_just_before_crash 420011 "$(psql_ -c "SELECT count(*) FROM c")"
check unlogged_empty_after_second_crash 0 "$(psql_ -c "SELECT count(*) FROM u")"
psql_ -c "INSERT INTO u VALUES (7, 'kept')"

# Corrupt bytes on a data page: reading them fails with SQLSTATE XX001, never a crash.
file=$(psql_ -c "SELECT pg_relation_filepath('c')")
$CLUSTER stop crash
printf 'garbage!garbage!' | dd of="$DIR/data/$file" bs=1 seek=$((8192 + 3000)) conv=notrunc status=none
$CLUSTER start crash "$PORT" test
err=$("$PG_BIN/psql" -X -q -A -t -v VERBOSITY=sqlstate -h "$DIR/socket" -p "$PORT" -U postgres -d postgres \
    -c "SELECT * FROM c" 2>&1 >/dev/null)
check corrupt_page_is_xx001 "ERROR:  XX001" "$err"
check server_survives_corruption 1 "$(psql_ -c "SELECT 1")"
# A clean shutdown (the stop above) keeps an unlogged table's rows.
check unlogged_kept_by_clean_restart "1|kept" "$(psql_ -c "SELECT count(*), min(v) FROM u")"

# A table whose metapage names a newer storage format (written by a later library, then
# the library downgraded): XX001 with a message that says so, not "corrupt"; with its
# version back, it reads again.
psql_ -c "CREATE TABLE nf (a int) USING columnar" -c "INSERT INTO nf SELECT generate_series(1, 10)"
file=$(psql_ -c "SELECT pg_relation_filepath('nf')")
$CLUSTER stop crash
# The metapage: block 0, after the 24-byte page header, the magic, then the version (LE).
printf '\x02\x00\x00\x00' | dd of="$DIR/data/$file" bs=1 seek=$((24 + 4)) conv=notrunc status=none
$CLUSTER start crash "$PORT" test
err=$("$PG_BIN/psql" -X -q -A -t -h "$DIR/socket" -p "$PORT" -U postgres -d postgres \
    -c "\\set VERBOSITY verbose" -c "SELECT count(*) FROM nf" 2>&1 >/dev/null | head -n 2 | tr -s ' ' | paste -sd' ')
check newer_format_is_xx001 'ERROR: XX001: columnar table "nf" is stored in format version 2, newer than this pgcolumnar library reads (version 1) HINT: Install the pgcolumnar version that wrote it, or a later one.' "$err"
$CLUSTER stop crash
printf '\x01\x00\x00\x00' | dd of="$DIR/data/$file" bs=1 seek=$((24 + 4)) conv=notrunc status=none
$CLUSTER start crash "$PORT" test
check format_restored_reads 10 "$(psql_ -c "SELECT count(*) FROM nf")"

# wal_level = minimal: a table created (or truncated) in the transaction that writes it is
# not WAL-logged but synced at commit, as heap's is (RelationNeedsWAL): after a kill -9
# its rows, its index and a later write survive.
psql_ -c "ALTER SYSTEM SET wal_level = minimal" -c "ALTER SYSTEM SET max_wal_senders = 0"
$CLUSTER start crash "$PORT" test
check minimal_wal_level minimal "$(psql_ -c "SHOW wal_level")"
psql_ -c "CREATE TABLE pre (id int, v text) USING columnar" \
      -c "INSERT INTO pre SELECT g, 'p' || g FROM generate_series(1, 50000) g" -c "CHECKPOINT"
psql_ -c "BEGIN" -c "CREATE TABLE m (id int PRIMARY KEY, v text) USING columnar" \
      -c "COPY m FROM PROGRAM 'seq 1 200000 | awk ''{print \$1 \"\\tv\" \$1}''' " \
      -c "INSERT INTO m VALUES (-1, 'x')" -c "COMMIT"
psql_ -c "BEGIN" -c "TRUNCATE pre" -c "INSERT INTO pre SELECT g, 'q' || g FROM generate_series(1, 1000) g" \
      -c "COMMIT" -c "INSERT INTO pre VALUES (0, 'after')"
crash
$CLUSTER start crash "$PORT" test
check minimal_new_table_survives "200001|20000099999" "$(psql_ -c "SELECT count(*), sum(id) FROM m")"
check minimal_index_survives "v123456" "$(psql_ -c "SET enable_seqscan = off" -c "SELECT v FROM m WHERE id = 123456")"
check minimal_truncated_table_survives "1001|after|q999" "$(psql_ -c "SELECT count(*), min(v), max(v) FROM pre")"
check minimal_writes_after_recovery 200002 "$(psql_ -c "INSERT INTO m VALUES (300000, 'post')" -c "SELECT count(*) FROM m")"

echo "crash recovery: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
