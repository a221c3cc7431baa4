-- VACUUM, VACUUM FULL, CLUSTER and the sort_by option on columnar tables.
CREATE EXTENSION pgcolumnar;
-- Autovacuum stays out of the way: these tests count what each VACUUM does.
CREATE TABLE m (id int PRIMARY KEY, host text, v float8) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO m SELECT g, 'h' || (g % 50), (g::bigint * 7919 % 10007) / 7.0 FROM generate_series(1, 300000) g;
CREATE INDEX m_v ON m (v);
DELETE FROM m WHERE id <= 102400;      -- the whole first row group
DELETE FROM m WHERE id % 2 = 0;
-- One mark per statement and bucket of 8192 row numbers: 13 for the first DELETE,
-- 25 for the second (its first 12 buckets' rows are gone already).
SELECT count(*) AS marks FROM pgcolumnar.row_mark;
-- Changes are counted like heap's, which is what autovacuum and autoanalyze go by.
SELECT pg_stat_force_next_flush();
SELECT n_tup_ins, n_tup_del, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'm';

-- VACUUM folds the deletes into the row groups' masks, frees the empty row group and
-- removes the deleted rows' index entries.
VACUUM (VERBOSE) m;
SELECT count(*) AS marks FROM pgcolumnar.row_mark;
SELECT row_count, deleted_rows IS NOT NULL AS has_mask FROM pgcolumnar.row_group ORDER BY first_row;
SELECT count(*), sum(id) FROM m;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pgcolumnar.enable_columnar_scan = off;
-- Heap Fetches equal to the rows returned: no entry of a deleted row was left to visit.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM m WHERE id BETWEEN 100001 AND 110000;
SELECT count(*) FROM m WHERE id BETWEEN 100001 AND 110000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET pgcolumnar.enable_columnar_scan;
SELECT reltuples FROM pg_class WHERE relname = 'm';
SELECT pg_stat_force_next_flush();
SELECT n_live_tup, n_dead_tup, vacuum_count FROM pg_stat_user_tables WHERE relname = 'm';
-- A second VACUUM has nothing left to do.
VACUUM (VERBOSE) m;

-- Index entries of rows whose insert rolled back go too.
BEGIN;
INSERT INTO m SELECT g, 'rolled back', 0 FROM generate_series(400001, 401000) g;
ROLLBACK;
VACUUM m;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM m WHERE id > 400000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET pgcolumnar.enable_columnar_scan;

-- Deletes after VACUUM still apply on top of the masks; row locks leave no marks behind.
DELETE FROM m WHERE id BETWEEN 200001 AND 200011;
SELECT id FROM m WHERE id BETWEEN 200013 AND 200016 FOR UPDATE;
VACUUM (VERBOSE) m;
SELECT count(*) FROM m;

-- VACUUM FULL rewrites without the deleted rows: half the rows deleted, half the size.
CREATE TABLE half (id int, payload float8) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO half SELECT g, (g * 2654435761 % 1000003) / 3.0 FROM generate_series(1, 400000) g;
SELECT pg_relation_size('half') AS size_before \gset
DELETE FROM half WHERE id % 2 = 0;
VACUUM FULL half;
SELECT pg_relation_size('half') <= 0.55 * :size_before AS at_most_half_the_size;
SELECT count(*), sum(id) FROM half;

-- sort_by: VACUUM FULL writes the rows in key order, and zone maps on the key prune.
ALTER TABLE m SET (sort_by = 'host, id');
SELECT sort_by FROM pgcolumnar.table_option WHERE relid = 'm'::regclass;
\set VERBOSITY sqlstate
ALTER TABLE m SET (sort_by = 'no_such_column');
ALTER TABLE half SET (sort_by = 'id'), ALTER COLUMN id SET NOT NULL;
\set VERBOSITY default
SELECT attnotnull FROM pg_attribute WHERE attrelid = 'half'::regclass AND attname = 'id';
CREATE TABLE heap_table (a int);
ALTER TABLE heap_table SET (sort_by = 'a');
VACUUM FULL m;
SELECT bool_and((host, id) >= (prev_host, prev_id)) AS in_key_order
  FROM (SELECT host, id, lag(host) OVER () AS prev_host, lag(id) OVER () AS prev_id FROM m) s;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM m WHERE host = 'h7';
SELECT count(*) FROM m WHERE host = 'h7';
ALTER TABLE m RESET (sort_by);
SELECT count(*) FROM pgcolumnar.table_option WHERE relid = 'm'::regclass;

-- CLUSTER sorts by the index.
CLUSTER m USING m_v;
SELECT bool_and(v >= prev) AS in_index_order FROM (SELECT v, lag(v) OVER () AS prev FROM m) s;
SELECT count(*), sum(id) FROM m;
SELECT id, host FROM m WHERE id = 200013;

DROP TABLE m, half, heap_table;
SELECT count(*) FROM pgcolumnar.table_option;
DROP EXTENSION pgcolumnar;
