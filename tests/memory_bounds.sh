#!/usr/bin/env bash
# Memory of writes: the peak private memory (RssAnon, sampled every 20 ms from /proc)
# of a backend that writes, against the bounds docs/columnar.md states ("Memory"):
#   - 10M rows inserted in one transaction (row groups are written out as they fill);
#   - 1,000 int columns, 110,000 rows by COPY (the write buffer is written out early,
#     at 256 MB of values, before a row group's 102,400 rows);
#   - one row with a 100 MB text value, inserted and read back: at most 150 MB (insert)
#     and 200 MB (read) more than the same statements on a heap table (the value is
#     held more than once: the buffer's copy, the encoded chunk, the decoded vector).
# Also the answers: what was written reads back. And memory the system refuses (the
# cluster restarted under `ulimit -v`): an ERROR 53200, the server not restarted. Runs
# its own cluster; called by scripts/test.sh (make test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
own_cluster memory "${MEMORY_TEST_PORT:-54321}"

trap '$CLUSTER destroy memory' EXIT
$CLUSTER destroy memory
$CLUSTER start memory "$PORT" test
psql_ -c "CREATE EXTENSION pgcolumnar"

# peak_mb NAME SQL...: runs the statements in a session of its own (application_name
# NAME) and prints its backend's peak RssAnon in MB, or "failed".
peak_mb() {
    local name=$1
    shift
    local args=(-c "SELECT pg_sleep(0.3)")
    for sql in "$@"; do args+=(-c "$sql"); done
    PGAPPNAME=$name psql_ "${args[@]}" >/dev/null &
    local client=$! pid="" peak=0 kb
    for _ in $(seq 1 100); do
        pid=$(psql_ -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$name'")
        [ -n "$pid" ] && break
        sleep 0.01
    done
    while kill -0 "$client" 2>/dev/null; do
        kb=$(awk '/^RssAnon/ {print $2}' "/proc/$pid/status" 2>/dev/null)
        if [ -n "$kb" ] && [ "$kb" -gt "$peak" ]; then peak=$kb; fi
        sleep 0.02
    done
    if wait "$client"; then echo $((peak / 1024)); else echo failed; fi
}

# within NAME BOUND_MB MEASURED: a check that MEASURED (MB) is at most BOUND_MB.
within() {
    local verdict="over $2 MB: $3 MB"
    [ "$3" != failed ] && [ "$3" -le "$2" ] && verdict="within $2 MB"
    check "$1" "within $2 MB" "$verdict"
    echo "  $1: peak $3 MB"
}

# 10M rows in one transaction.
psql_ -c "CREATE TABLE many (id bigint, name text, v float8) USING columnar"
mb=$(peak_mb many_rows "BEGIN" \
    "INSERT INTO many SELECT g, 'name ' || (g % 1000), g / 3.0 FROM generate_series(1, 10000000) g" "COMMIT")
within ten_million_rows_one_transaction 200 "$mb"
check ten_million_rows_read_back "10000000|50000005000000" "$(psql_ -c "SELECT count(*), sum(id) FROM many")"
psql_ -c "DROP TABLE many"

# 1,000 int columns, a little over one row group's rows.
cols=$(seq -s, -f "c%g int" 1 1000)
vals=$(seq -s, -f "g + %g" 1 1000)
psql_ -c "CREATE TABLE wide ($cols) USING columnar"
psql_ -c "CREATE TABLE wide_src ($cols)"
psql_ -c "INSERT INTO wide_src SELECT $vals FROM generate_series(1, 110000) g"
psql_ -c "COPY wide_src TO '$DIR/wide.copy'"
mb=$(peak_mb wide_copy "COPY wide FROM '$DIR/wide.copy'")
within thousand_columns_copy 450 "$mb"
sums="SELECT count(*), sum(c1::bigint), sum(c500::bigint), sum(c1000::bigint) FROM"
check thousand_columns_read_back "$(psql_ -c "$sums wide_src")" "$(psql_ -c "$sums wide")"
psql_ -c "DROP TABLE wide, wide_src"

# One 100 MB text value, written and read back, in a heap table and a columnar one: the
# statement's own memory (string_agg builds the value) is the heap's figure.
value="SELECT 1, string_agg(md5(g::text), '') FROM generate_series(1, 3276800) g"
declare -A insert_mb read_mb
for am in heap columnar; do
    psql_ -c "CREATE TABLE big_$am (id int, t text) USING $am"
    insert_mb[$am]=$(peak_mb "big_insert_$am" "INSERT INTO big_$am $value")
    read_mb[$am]=$(peak_mb "big_read_$am" "SELECT length(t), md5(t) FROM big_$am")
done
echo "  heap: insert peak ${insert_mb[heap]} MB, read peak ${read_mb[heap]} MB"
within hundred_mb_value_insert $((insert_mb[heap] + 150)) "${insert_mb[columnar]}"
within hundred_mb_value_read $((read_mb[heap] + 200)) "${read_mb[columnar]}"
check hundred_mb_value_read_back "$(psql_ -c "SELECT length(t), md5(t) FROM big_heap")" \
    "$(psql_ -c "SELECT length(t), md5(t) FROM big_columnar")"

# Memory the operating system refuses: an ERROR (SQLSTATE 53200), never an abort of the
# backend (which makes PostgreSQL end every session and recover). The cluster is started
# again with its address space limited (ulimit -v) to its postmaster's size plus some
# headroom: statements that need more fail, the server keeps running, the session goes
# on, and what was written before reads back once the limit is gone.
big="SELECT string_agg(md5(g::text), '') FROM generate_series(1, 6000000) g"  # 192 MB
psql_ -c "CREATE TABLE refused (id int, t text) USING columnar"
psql_ -c "INSERT INTO refused SELECT 1, ($big)"
psql_ -c "CREATE TABLE refused_wide ($cols) USING columnar"
expected_value=$(psql_ -c "SELECT length(t), md5(t) FROM refused")
postmaster_kb=$(awk '/^VmSize/ {print $2}' "/proc/$(head -n 1 "$DIR/data/postmaster.pid")/status")
# sqlstate SQL...: the SQLSTATE the statements end with (none: they succeeded).
sqlstate() {
    psql_ -v VERBOSITY=verbose "$@" 2>&1 | grep -oE "ERROR:  [0-9A-Z]{5}" | head -n 1 | cut -c 9-
}
# under_limit MB: the cluster restarted with its postmaster's size plus MB of room.
under_limit() {
    (ulimit -v $((postmaster_kb + $1 * 1024)) && $CLUSTER start memory "$PORT" test)
    started=$(psql_ -c "SELECT pg_postmaster_start_time()")
}
under_limit 860
# Three 192 MB values in one statement: the write buffer's, then the encoder's room.
check refused_big_values_insert 53200 \
    "$(sqlstate -c "INSERT INTO refused SELECT g, ($big) FROM generate_series(2, 4) g")"
check refused_big_values_no_restart "$started" "$(psql_ -c "SELECT pg_postmaster_start_time()")"
under_limit 280
# Reading the 192 MB value back: its decoded vector and its Datum's room.
check refused_big_value_read 53200 "$(sqlstate -c "SELECT md5(t) FROM refused")"
# 110,000 rows of 1,000 columns: a write buffer of many columns, parsed and encoded on
# rayon's threads, where some refusals are small allocations met through the reserve.
check refused_wide_copy 53200 "$(sqlstate -c "COPY refused_wide FROM '$DIR/wide.copy'")"
check refused_wide_insert 53200 \
    "$(sqlstate -c "SET jit = off" -c "BEGIN" -c "INSERT INTO refused_wide SELECT $vals FROM generate_series(1, 110000) g" -c "COMMIT")"
check refused_no_restart "$started" "$(psql_ -c "SELECT pg_postmaster_start_time()")"
check refused_wide_rolled_back 0 "$(psql_ -c "SELECT count(*) FROM refused_wide")"
$CLUSTER start memory "$PORT" test
check refused_written_reads_back "$expected_value|1" \
    "$(psql_ -c "SELECT length(t), md5(t) FROM refused" -c "SELECT count(*) FROM refused" | tr '\n' '|' | sed 's/|$//')"
rm -f "$DIR/wide.copy"

echo "memory bounds: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
