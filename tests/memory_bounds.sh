#!/usr/bin/env bash
# Memory of writes: the peak private memory (RssAnon, sampled every 20 ms from /proc)
# of a backend that writes, against the bounds docs/columnar.md states ("Memory"):
#   - 10M rows inserted in one transaction (row groups are written out as they fill);
#   - 1,000 int columns, 110,000 rows by COPY (the write buffer is written out early,
#     at 256 MB of values, before a row group's 102,400 rows);
#   - one row with a 100 MB text value, inserted and read back: at most 150 MB (insert)
#     and 200 MB (read) more than the same statements on a heap table (the value is
#     held more than once: the buffer's copy, the encoded chunk, the decoded vector).
# Also the answers: what was written reads back. Runs its own cluster; called by
# scripts/test.sh (make test).
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
rm -f "$DIR/wide.copy"

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

echo "memory bounds: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
