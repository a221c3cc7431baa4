# Sourced by the tests that carry columnar tables through an upgrade (pg_upgrade.sh,
# extension_update.sh), after tests/check.sh: a set of tables with what must come
# through, and the checks that it did.
#
#   sample_tables_create PSQL    creates them through PSQL (a function running psql_ on
#                                the cluster and database at hand): a columnar table with
#                                a primary key referenced by a foreign key, CHECK and
#                                unique constraints, another index, options, deleted rows
#                                (folded into masks by VACUUM, and marks not yet folded)
#                                and updated rows; a partitioned table with columnar and
#                                heap partitions
#   SAMPLE_FINGERPRINT           the query whose output must be the same after
#   sample_tables_check SUFFIX PSQL  every table reads, its indexes are valid, match it
#                                (amcheck's heapallindexed) and are used; it takes writes;
#                                the constraints hold; VACUUM works. Checks named *_SUFFIX.

# What must come through: rows (with their deletions), options, indexes.
SAMPLE_FINGERPRINT="
SELECT count(*), sum(id), md5(string_agg(id || host || v || n, ',' ORDER BY id)) FROM t;
SELECT count(*), md5(string_agg(ts || '/' || k || '/' || v, ',' ORDER BY ts, k, v)) FROM p;
SELECT count(*), sum(r.t_id) FROM r;
SELECT relid, sort_by, quals_push_down, compress_for FROM pgcolumnar.table_option ORDER BY relid::text;
SELECT string_agg(indexrelid::regclass::text, ',' ORDER BY indexrelid::regclass::text) FROM pg_index
 WHERE indrelid IN ('t'::regclass, 'p1'::regclass, 'p2'::regclass, 'r'::regclass);"

sample_tables_create() {  # sample_tables_create PSQL
    "$1" -c "CREATE EXTENSION IF NOT EXISTS amcheck" \
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

sample_tables_check() {  # sample_tables_check SUFFIX PSQL
    local suffix=$1 run=$2
    check "indexes_valid_$suffix" "0" \
        "$($run -c "SELECT count(*) FROM pg_index WHERE NOT (indisvalid AND indisready AND indislive)")"
    # Every index of a columnar table (of these) holds exactly its live rows.
    check "indexes_match_tables_$suffix" "p1_k_idx t_host_id_key t_pkey t_v" \
        "$($run -c "SELECT string_agg(i::text, ' ' ORDER BY c.relname, i::text)
                   FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid, LATERAL (SELECT x.indexrelid::regclass AS i) l,
                   LATERAL (SELECT bt_index_check(x.indexrelid, true)) b
                   WHERE c.relam = (SELECT oid FROM pg_am WHERE amname = 'columnar')
                     AND c.relnamespace = 'public'::regnamespace")"
    # The indexes are used and give the table's answers.
    local forced="SET enable_seqscan = off; SET enable_bitmapscan = off;
                  SET pgcolumnar.enable_columnar_scan = off; SET pgcolumnar.enable_vector_agg = off;"
    check "index_scans_$suffix" "2" \
        "$($run -c "$forced EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM t WHERE id BETWEEN 1000 AND 3499" \
               -c "$forced EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM p WHERE k = 5" \
           | grep -cE "Index Scan using (t_pkey|p1_k_idx) ")"
    # (t.v is float8: summed as numeric, so that the plans' orders of summing agree.)
    check "index_answers_$suffix" "$($run -c "SELECT count(*), sum(v::numeric) FROM t WHERE id BETWEEN 1000 AND 3499" \
                                       -c "SELECT count(*), sum(v) FROM p WHERE k = 5")" \
        "$($run -c "$forced SELECT count(*), sum(v::numeric) FROM t WHERE id BETWEEN 1000 AND 3499" \
               -c "$forced SELECT count(*), sum(v) FROM p WHERE k = 5")"
    # It takes writes: new rows, updates, deletes; the constraints hold.
    check "writes_$suffix" "250001|200000|16" \
        "$($run -c "INSERT INTO t VALUES (250001, 'new', 1, 1)" \
               -c "UPDATE t SET v = v + 1 WHERE id BETWEEN 2 AND 19" \
               -c "DELETE FROM t WHERE id = 249999" \
               -c "INSERT INTO p VALUES ('2024-01-05', 5, 7)" \
               -c "SELECT max(id) || '|' || count(*) || '|' || count(*) FILTER (WHERE id BETWEEN 2 AND 19 AND v * 3 - id BETWEEN 2.99 AND 3.01) FROM t")"
    check "constraints_$suffix" "23505 23514 23503" \
        "$(for sql in "INSERT INTO t VALUES (2, 'dup', 1, 1)" "INSERT INTO t VALUES (250002, 'neg', -1, 1)" \
                      "DELETE FROM t WHERE id = 3"; do
               $run -v VERBOSITY=sqlstate -c "$sql" 2>&1 | grep -oE "[0-9]{5}"
           done | paste -sd' ')"
    check "vacuum_after_$suffix" "200000" "$($run -c "VACUUM t" -c "SELECT count(*) FROM t")"
}
