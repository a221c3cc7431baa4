#!/usr/bin/env bash
# Automatic merging after trickle inserts: single-row transactions leave a row group
# each; autovacuum merges them while another session keeps writing (it does not block
# inserts), leaves the row a session has locked (never waiting for it) and must not
# count as done then, so that autovacuum comes back once the lock is gone and merges the
# rest, with no manual VACUUM and no further inserts. Rows and index answers stay the
# same. Then VACUUM merges, again and again, a small table that 8 sessions update.
# Runs its own cluster (autovacuum_naptime = 1s); called by scripts/test.sh (make test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
own_cluster autovacuum "${AUTOVACUUM_TEST_PORT:-54320}"

trap '$CLUSTER destroy autovacuum' EXIT
$CLUSTER destroy autovacuum
$CLUSTER start autovacuum "$PORT" test
psql_ -c "ALTER SYSTEM SET autovacuum_naptime = '1s'" -c "SELECT pg_reload_conf()" >/dev/null
psql_ -c "CREATE EXTENSION pgcolumnar" \
      -c "CREATE TABLE trickle (time timestamptz, host text, v1 float8) USING columnar" \
      -c "CREATE INDEX ON trickle (host, time DESC)"

groups() { psql_ -c "SELECT row_groups FROM pgcolumnar.stats('trickle') WHERE attname = 'host'"; }
answers="SELECT count(*), count(DISTINCT host), sum(v1)::numeric(20,6) FROM trickle WHERE host = 'host_7'"
forced="SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
        SET pgcolumnar.enable_vector_agg = off;"

# 3,000 single-row transactions: a row group each (autovacuum off meanwhile, so that
# the scenario below is what decides).
psql_ -c "ALTER TABLE trickle SET (autovacuum_enabled = off)" \
      -c "DO \$\$ BEGIN FOR i IN 1..3000 LOOP
            INSERT INTO trickle VALUES (clock_timestamp(), 'host_' || (i % 50), i / 7.0); COMMIT;
          END LOOP; END \$\$"
check row_group_per_insert 3000 "$(groups)"
before=$(psql_ -c "$answers")
before_index=$(psql_ -c "$forced $answers")

# A writer stays in its transaction for 6 s (one more row), and a locker holds one row
# FOR UPDATE as long; autovacuum, turned on meanwhile, runs (every second) and merges
# all but the locked row's group, without waiting for either.
psql_ -c "BEGIN" -c "INSERT INTO trickle VALUES (clock_timestamp(), 'late', 0)" -c "SELECT pg_sleep(6)" \
      -c "COMMIT" >/dev/null &
writer=$!
psql_ -c "BEGIN" -c "SELECT host FROM trickle WHERE v1 = 1 FOR UPDATE" -c "SELECT pg_sleep(6)" \
      -c "COMMIT" >/dev/null &
locker=$!
sleep 1
psql_ -c "ALTER TABLE trickle SET (autovacuum_enabled = on)"
sleep 3
check merged_while_writing_but_locked_row 2 "$(groups)"
check writer_not_blocked t "$(psql_ -c "SELECT count(*) = 0 FROM pg_locks WHERE NOT granted")"
wait "$writer" "$locker"

# No manual VACUUM, and no more inserts: autovacuum comes back and merges the rest (the
# locked row's group and the writer's; the merged group of 2,999 rows stays, being
# larger than both together: merge_policy).
merged=""
for _ in $(seq 1 30); do
    g=$(groups)
    if [ "$g" -le 2 ]; then merged=$g; break; fi
    sleep 1
done
check merged_after_lock_ends "yes" "$([ -n "$merged" ] && echo yes || echo "no: $(groups) row groups")"
check rows_kept 3001 "$(psql_ -c "SELECT count(*) FROM trickle")"
check answers_kept "$before" "$(psql_ -c "$answers")"
check index_answers_kept "$before_index" "$(psql_ -c "$forced $answers")"
check reported_once_done t \
    "$(psql_ -c "SELECT autovacuum_count > 0 AND n_ins_since_vacuum = 0 FROM pg_stat_user_tables WHERE relname = 'trickle'")"

# Merges under contention: 8 sessions move amounts between the 50 rows of a table (two
# UPDATEs and a ledger INSERT a transaction, bench/transfer.sql) while VACUUM runs again
# and again, moving the rows they update. The total stays, every account stays once, and
# no transaction fails but for deadlocks (the transfers lock rows in random order, as on
# heap): READ COMMITTED updates follow moved rows.
psql_ -f "$TOP/bench/transfer_setup.sql" >/dev/null 2>&1
psql_ -c "ALTER TABLE acct_col SET (autovacuum_enabled = off)"
running=$(mktemp)
merges=$(mktemp)
echo on >"$running"
( while [ -s "$running" ]; do
      psql_ -c "VACUUM (VERBOSE) acct_col" -c "VACUUM ledger_col" 2>&1 | sed -nE 's/.* ([0-9]+) small row groups merged.*/\1/p'
      sleep 0.2
  done >"$merges" ) &
vacuums=$!
script=$(mktemp)
cp "$TOP/bench/transfer.sql" "$script"
chmod 644 "$script"
out=$("$PG_BIN/pgbench" -h "$DIR/socket" -p "$PORT" -U postgres -n -c 8 -j 2 -T 8 --failures-detailed \
      -f "$script" -D tbl=col postgres 2>&1)
rm -f "$script"
: >"$running"
wait "$vacuums"
check transfers_ran yes "$(grep -qE 'number of transactions actually processed: [1-9]' <<<"$out" && echo yes || echo "no: $out")"
check transfers_no_serialization_failures 0 "$(sed -nE 's/^number of serialization failures: ([0-9]+).*/\1/p' <<<"$out")"
check transfers_total_kept "50000|50|50" \
    "$(psql_ -c "SELECT sum(balance), count(*), count(DISTINCT id) FROM acct_col")"
check transfers_ledger_matches t "$(psql_ -c "SELECT (SELECT count(*) FROM ledger_col) = $(sed -nE 's/^number of transactions actually processed: ([0-9]+).*/\1/p' <<<"$out")")"
check transfers_merged_while_updating yes "$(awk '{n += $1} END {print (n > 0 ? "yes" : "no")}' "$merges")"
rm -f "$running" "$merges"

echo "autovacuum merge: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
