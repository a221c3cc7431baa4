#!/usr/bin/env bash
# pg_upgrade of a cluster with columnar tables (15 -> 15, as a major-version upgrade runs
# it), in copy and in link mode: indexes, a primary key referenced by a foreign key,
# CHECK and unique constraints, a partitioned table with columnar and heap partitions,
# table options and deleted rows (folded into masks by VACUUM, and marks not yet folded)
# come through; every table reads the same rows, its indexes are valid, match the table
# (amcheck's heapallindexed) and are used, and it takes writes.
# Runs its own clusters; called by scripts/test.sh (make test).
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/check.sh
source "$TOP/tests/check.sh"
OLD_PORT=${UPGRADE_TEST_PORT:-54318}
NEW_PORT=$((OLD_PORT + 1))
OLD=$($CLUSTER dir upgrade_old)
NEW=$($CLUSTER dir upgrade_new)
old() { DIR=$OLD PORT=$OLD_PORT psql_ "$@"; }
new() { DIR=$NEW PORT=$NEW_PORT psql_ "$@"; }

# What must come through: rows (with their deletions), options, indexes.
FINGERPRINT="
SELECT count(*), sum(id), md5(string_agg(id || host || v || n, ',' ORDER BY id)) FROM t;
SELECT count(*), md5(string_agg(ts || '/' || k || '/' || v, ',' ORDER BY ts, k, v)) FROM p;
SELECT count(*), sum(r.t_id) FROM r;
SELECT relid, sort_by, quals_push_down, compress_for FROM pgcolumnar.table_option ORDER BY relid::text;
SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY indexrelid::regclass::text) FROM pg_index
 WHERE indrelid IN ('t'::regclass, 'p1'::regclass, 'p2'::regclass, 'r'::regclass);"

populate() {
    old -c "CREATE EXTENSION pgcolumnar" -c "CREATE EXTENSION amcheck" \
        -c "CREATE TABLE t (id int PRIMARY KEY, host text NOT NULL, v float8 CHECK (v >= 0),
                            n numeric(12,2), UNIQUE (host, id)) USING columnar" \
        -c "ALTER TABLE t SET (sort_by = 'host', quals_push_down = on, compress_for = 'size')" \
        -c "INSERT INTO t SELECT g, 'h' || (g % 17), g / 3.0, g * 1.25 FROM generate_series(1, 250000) g" \
        -c "CREATE INDEX t_v ON t (v)" \
        -c "DELETE FROM t WHERE id % 10 = 0" -c "VACUUM t" \
        -c "DELETE FROM t WHERE id % 10 = 1" \
        -c "UPDATE t SET n = -n WHERE id % 1000 = 7" \
        -c "CREATE TABLE r (t_id int REFERENCES t (id))" \
        -c "INSERT INTO r SELECT id FROM t WHERE id % 100 = 3" \
        -c "CREATE TABLE p (ts date, k int, v int) PARTITION BY RANGE (ts)" \
        -c "CREATE TABLE p1 PARTITION OF p FOR VALUES FROM ('2024-01-01') TO ('2024-02-01') USING columnar" \
        -c "CREATE TABLE p2 PARTITION OF p FOR VALUES FROM ('2024-02-01') TO ('2024-03-01')" \
        -c "CREATE INDEX p_k ON p (k)" \
        -c "INSERT INTO p SELECT date '2024-01-01' + (g % 59), g % 101, g FROM generate_series(1, 60000) g" \
        -c "DELETE FROM p WHERE v % 7 = 0"
}

upgrade() {  # upgrade MODE: pg_upgrade from a populated old cluster into a new one
    local mode=$1
    $CLUSTER destroy upgrade_old
    $CLUSTER destroy upgrade_new
    $CLUSTER start upgrade_old "$OLD_PORT" test
    populate
    before=$(old -c "$FINGERPRINT")
    $CLUSTER stop upgrade_old
    # An initialized, stopped cluster with the same settings (the library preloaded).
    $CLUSTER start upgrade_new "$NEW_PORT" test
    $CLUSTER stop upgrade_new
    local work flag=""
    # Copying is pg_upgrade's default (PostgreSQL 15 has no --copy).
    [ "$mode" = link ] && flag=--link
    work=$(mktemp -d)
    chown postgres "$work"
    if ! (cd "$work" && runuser -u postgres -- "$PG_BIN/pg_upgrade" -b "$PG_BIN" -B "$PG_BIN" \
            -d "$OLD/data" -D "$NEW/data" -p "$OLD_PORT" -P "$NEW_PORT" -s "$work" $flag \
            >"$work/pg_upgrade.out" 2>&1); then
        echo "test pg_upgrade_$mode ... FAILED: pg_upgrade failed"
        tail -n 20 "$work/pg_upgrade.out"
        find "$NEW/data" -name '*.log' -path '*pg_upgrade_output.d*' -exec tail -n 20 {} \; 2>/dev/null
        failures=$((failures + 1))
        rm -rf "$work"
        return
    fi
    rm -rf "$work"
    check "pg_upgrade_$mode" ok ok
    $CLUSTER start upgrade_new "$NEW_PORT" test
    check "rows_options_indexes_$mode" "$before" "$(new -c "$FINGERPRINT")"
    check "indexes_valid_$mode" "0" \
        "$(new -c "SELECT count(*) FROM pg_index WHERE NOT (indisvalid AND indisready AND indislive)")"
    # Every index of a columnar table holds exactly its live rows.
    check "indexes_match_tables_$mode" "p1_k_idx t_host_id_key t_pkey t_v" \
        "$(new -c "SELECT string_agg(i::text, ' ' ORDER BY c.relname, i::text)
                   FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid, LATERAL (SELECT x.indexrelid::regclass AS i) l,
                   LATERAL (SELECT bt_index_check(x.indexrelid, true)) b
                   WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'columnar')")"
    # The indexes are used and give the table's answers.
    local forced="SET enable_seqscan = off; SET enable_bitmapscan = off;
                  SET pgcolumnar.enable_columnar_scan = off; SET pgcolumnar.enable_vector_agg = off;"
    check "index_scans_$mode" "2" \
        "$(new -c "$forced EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM t WHERE id BETWEEN 1000 AND 3499" \
               -c "$forced EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM p WHERE k = 5" \
           | grep -cE "Index Scan using (t_pkey|p1_k_idx) ")"
    check "index_answers_$mode" "$(new -c "SELECT count(*), sum(v) FROM t WHERE id BETWEEN 1000 AND 3499" \
                                       -c "SELECT count(*), sum(v) FROM p WHERE k = 5")" \
        "$(new -c "$forced SELECT count(*), sum(v) FROM t WHERE id BETWEEN 1000 AND 3499" \
               -c "$forced SELECT count(*), sum(v) FROM p WHERE k = 5")"
    # It takes writes: new rows, updates, deletes; the constraints hold.
    check "writes_$mode" "250001|200000|16" \
        "$(new -c "INSERT INTO t VALUES (250001, 'new', 1, 1)" \
               -c "UPDATE t SET v = v + 1 WHERE id BETWEEN 2 AND 19" \
               -c "DELETE FROM t WHERE id = 249999" \
               -c "INSERT INTO p VALUES ('2024-01-05', 5, 7)" \
               -c "SELECT max(id) || '|' || count(*) || '|' || count(*) FILTER (WHERE id BETWEEN 2 AND 19 AND v * 3 - id BETWEEN 2.99 AND 3.01) FROM t")"
    check "constraints_$mode" "23505 23514 23503" \
        "$(for sql in "INSERT INTO t VALUES (2, 'dup', 1, 1)" "INSERT INTO t VALUES (250002, 'neg', -1, 1)" \
                      "DELETE FROM t WHERE id = 3"; do
               new -v VERBOSITY=sqlstate -c "$sql" 2>&1 | grep -oE "[0-9]{5}"
           done | paste -sd' ')"
    check "vacuum_after_$mode" "200000" "$(new -c "VACUUM t" -c "SELECT count(*) FROM t")"
    $CLUSTER destroy upgrade_new
    $CLUSTER destroy upgrade_old
}

trap '$CLUSTER destroy upgrade_old; $CLUSTER destroy upgrade_new' EXIT
upgrade copy
upgrade link

echo "pg_upgrade: $passed passed, $failures failed"
[ "$failures" -eq 0 ]
