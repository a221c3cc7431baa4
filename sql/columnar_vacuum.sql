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
SET max_parallel_workers_per_gather = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM m WHERE id > 400000;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET pgcolumnar.enable_columnar_scan;
RESET max_parallel_workers_per_gather;

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
-- The stored names follow renames and drops (pg_dump dumps them; a restore resolves
-- them again), the attribute numbers stay.
CREATE TABLE names (a int, b int, c int) USING columnar;
CREATE TABLE names_child () INHERITS (names) USING columnar;
ALTER TABLE names SET (sort_by = 'b, c');
ALTER TABLE names_child SET (sort_by = 'c, a');
ALTER TABLE names RENAME COLUMN c TO see;
SELECT relid, sort_by, sort_attnums FROM pgcolumnar.table_option
  WHERE relid IN ('names'::regclass, 'names_child'::regclass) ORDER BY relid::text;
ALTER TABLE names DROP COLUMN b;
SELECT relid, sort_by, sort_attnums FROM pgcolumnar.table_option
  WHERE relid IN ('names'::regclass, 'names_child'::regclass) ORDER BY relid::text;
DROP TABLE names CASCADE;
ALTER TABLE m RESET (sort_by);
SELECT count(*) FROM pgcolumnar.table_option WHERE relid = 'm'::regclass;

-- CLUSTER sorts by the index.
CLUSTER m USING m_v;
SELECT bool_and(v >= prev) AS in_index_order FROM (SELECT v, lag(v) OVER () AS prev FROM m) s;
SELECT count(*), sum(id) FROM m;
SELECT id, host FROM m WHERE id = 200013;

-- Flushes apply sort_by too: each row group's rows are stored in key order, so zone
-- maps prune without a VACUUM FULL. Rows keep the TIDs handed out at insert (index
-- entries and AFTER triggers already hold them); fetches by TID find them through the
-- group's order column. Every read path is checked against a heap copy.
CREATE TABLE fl (id int PRIMARY KEY, host text, v float8) USING columnar WITH (autovacuum_enabled = off);
ALTER TABLE fl SET (sort_by = 'host, id');
CREATE TABLE fl_seen (id int);
CREATE FUNCTION fl_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO fl_seen VALUES (NEW.id); RETURN NULL; END $$;
CREATE TRIGGER fl_after AFTER INSERT ON fl FOR EACH ROW EXECUTE FUNCTION fl_note();
-- 150,000 rows: the first row group is written in the middle of the INSERT, before its
-- AFTER triggers fetch their rows by TID.
INSERT INTO fl SELECT g, 'h' || (g % 50), g / 3.0 FROM generate_series(1, 150000) g;
DROP TRIGGER fl_after ON fl;
SELECT count(*), count(DISTINCT id), sum(id) FROM fl_seen;
SELECT count(*) AS groups_stored_in_key_order FROM pgcolumnar.chunk
 WHERE attnum = 0 AND storage_id = (SELECT storage_id FROM pgcolumnar.chunk c JOIN pgcolumnar.row_group USING (storage_id, first_row) GROUP BY 1 ORDER BY 1 DESC LIMIT 1);
CREATE TABLE fl_heap AS SELECT g AS id, 'h' || (g % 50) AS host, (g / 3.0)::float8 AS v FROM generate_series(1, 150000) g;
CREATE FUNCTION fl_same() RETURNS bigint LANGUAGE sql AS $$
  SELECT (SELECT count(*) FROM (SELECT * FROM fl EXCEPT ALL SELECT * FROM fl_heap) a)
       + (SELECT count(*) FROM (SELECT * FROM fl_heap EXCEPT ALL SELECT * FROM fl) b) $$;
SELECT fl_same() AS differences;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM fl WHERE host = 'h7';
SELECT count(*), sum(id) FROM fl WHERE host = 'h7';
-- Index, bitmap and TID fetches find each row where the flush put it.
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
SET enable_bitmapscan = off;
SELECT * FROM fl WHERE id IN (1, 777, 102400, 102401, 149999) ORDER BY id;
RESET enable_bitmapscan;
SET enable_indexscan = off;
SELECT count(*), sum(v) FROM fl WHERE id BETWEEN 50000 AND 120000;
RESET enable_indexscan;
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
SELECT count(*) AS rows_found_by_own_ctid FROM fl f WHERE f.host = 'h7'
   AND (SELECT t.id FROM fl t WHERE t.ctid = f.ctid) = f.id;
-- Deletes and updates of rows stored out of row-number order, then VACUUM.
DELETE FROM fl WHERE id % 3 = 0;
DELETE FROM fl_heap WHERE id % 3 = 0;
UPDATE fl SET v = -v WHERE host IN ('h1', 'h2') AND id < 120000;
UPDATE fl_heap SET v = -v WHERE host IN ('h1', 'h2') AND id < 120000;
SELECT fl_same() AS differences;
VACUUM fl;
SELECT fl_same() AS differences;
-- Leaving a third of the rows makes both row groups small: VACUUM merges them into one,
-- written in key order again.
DELETE FROM fl WHERE id % 3 = 1;
DELETE FROM fl_heap WHERE id % 3 = 1;
VACUUM (VERBOSE) fl;
SELECT fl_same() AS differences;
SELECT row_count FROM pgcolumnar.row_group
 WHERE storage_id = (SELECT max(storage_id) FROM pgcolumnar.row_group);
SELECT count(*), sum(id) FROM fl WHERE host = 'h7';
SELECT count(*), sum(id) FROM fl_heap WHERE host = 'h7';
SELECT * FROM fl WHERE id IN (2, 149999) ORDER BY id;
-- The key follows its columns: renaming one keeps it, dropping one leaves it out.
ALTER TABLE fl RENAME COLUMN host TO hostname;
INSERT INTO fl SELECT g, 'h' || (g % 50), g FROM generate_series(200001, 200100) g;
SELECT count(*) FROM fl WHERE hostname = 'h7' AND id > 200000;
ALTER TABLE fl DROP COLUMN hostname;
INSERT INTO fl SELECT g, g FROM generate_series(200101, 200200) g;
VACUUM FULL fl;
SELECT count(*), min(id), max(id) FROM fl WHERE id > 200000;
SELECT bool_and(id > prev) AS in_id_order FROM (SELECT id, lag(id) OVER () AS prev FROM fl) s;
DROP TABLE fl, fl_heap, fl_seen;
DROP FUNCTION fl_note(), fl_same();

-- VACUUM never evaluates index expressions, as heap's never does (PostgreSQL's
-- vacuum.sql): with an expression or partial index it leaves small row groups to
-- VACUUM FULL, which rebuilds the indexes and so fails here like heap's.
CREATE TABLE vaccluster (i INT PRIMARY KEY) USING columnar WITH (autovacuum_enabled = off);
ALTER TABLE vaccluster CLUSTER ON vaccluster_pkey;
CLUSTER vaccluster;
CREATE FUNCTION do_analyze() RETURNS VOID VOLATILE LANGUAGE SQL
	AS 'ANALYZE pg_am';
CREATE FUNCTION wrap_do_analyze(c INT) RETURNS INT IMMUTABLE LANGUAGE SQL
	AS 'SELECT $1 FROM public.do_analyze()';
CREATE INDEX ON vaccluster(wrap_do_analyze(i));
INSERT INTO vaccluster VALUES (1), (2);
INSERT INTO vaccluster VALUES (3);
SELECT row_groups > 1 AS several_row_groups FROM pgcolumnar.stats('vaccluster');
ANALYZE vaccluster;
VACUUM FULL vaccluster;
VACUUM (DISABLE_PAGE_SKIPPING) vaccluster;
VACUUM (VERBOSE) vaccluster;
VACUUM (INDEX_CLEANUP FALSE, FREEZE TRUE) vaccluster;
SELECT row_groups > 1 AS several_row_groups FROM pgcolumnar.stats('vaccluster');
-- Without it, VACUUM merges them.
DROP INDEX vaccluster_wrap_do_analyze_idx;
VACUUM vaccluster;
SELECT row_groups, rows FROM pgcolumnar.stats('vaccluster');
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
SELECT i FROM vaccluster WHERE i IN (1, 3) ORDER BY i;
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
DROP TABLE vaccluster;
DROP FUNCTION wrap_do_analyze(int), do_analyze();

-- Space VACUUM frees is reused by later writes, without VACUUM FULL: load, delete half
-- (two whole row groups), VACUUM, load the half again: the same size, and every value
-- reads back. A load that rolls back (or a subtransaction that does) gives the space
-- back; DROP TABLE removes the free-space records.
CREATE TABLE reuse (id int, t text) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO reuse SELECT g, md5(g::text) FROM generate_series(1, 409600) g;
SELECT pg_relation_size('reuse') AS first_size \gset
DELETE FROM reuse WHERE id <= 204800;
VACUUM reuse;
SELECT count(*) AS extents, sum(data_length) > 0 AS has_bytes FROM pgcolumnar.free_extent;
BEGIN;
INSERT INTO reuse SELECT g, md5(g::text) FROM generate_series(1, 204800) g;
ROLLBACK;
BEGIN;
SAVEPOINT s;
INSERT INTO reuse SELECT g, md5(g::text) FROM generate_series(1, 204800) g;
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT count(*) AS extents_after_rollbacks FROM pgcolumnar.free_extent;
SELECT pg_relation_size('reuse') = :first_size AS same_size_after_rollbacks;
INSERT INTO reuse SELECT g, md5(g::text) FROM generate_series(1, 204800) g;
SELECT pg_relation_size('reuse') <= 1.1 * :first_size AS within_a_tenth_of_first_size,
       (SELECT count(*) FROM pgcolumnar.free_extent) AS extents_left;
SELECT count(*), sum(id), count(*) FILTER (WHERE t = md5(id::text)) AS intact FROM reuse;
-- Merged row groups free their space too.
DELETE FROM reuse WHERE id % 10 <> 0;
VACUUM reuse;
SELECT count(*) > 0 AS merged_space_is_free FROM pgcolumnar.free_extent;
SELECT count(*), sum(id), count(*) FILTER (WHERE t = md5(id::text)) AS intact FROM reuse;
DROP TABLE reuse;
SELECT count(*) AS extents_after_drop FROM pgcolumnar.free_extent;

-- A database whose extension was installed before free_extent existed keeps working:
-- writes append and VACUUM records nothing.
ALTER EXTENSION pgcolumnar DROP TABLE pgcolumnar.free_extent;
DROP TABLE pgcolumnar.free_extent;
CREATE TABLE old_install (id int, t text) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO old_install SELECT g, md5(g::text) FROM generate_series(1, 204800) g;
DELETE FROM old_install WHERE id <= 102400;
VACUUM old_install;
INSERT INTO old_install SELECT g, md5(g::text) FROM generate_series(1, 102400) g;
SELECT count(*), count(*) FILTER (WHERE t = md5(id::text)) AS intact FROM old_install;
DROP TABLE old_install;

-- Merges by size tiers: a small row group with more live rows than all the smaller ones
-- together stays where it is (VACUUM does not move a table's 20,000 rows again for each
-- few new ones); the trickled rows merge among themselves.
CREATE TABLE tier (id int PRIMARY KEY, v int) USING columnar WITH (autovacuum_enabled = off);
CREATE FUNCTION tier_groups() RETURNS text LANGUAGE sql AS $$
  SELECT string_agg(row_count::text, ' ' ORDER BY first_row) FROM pgcolumnar.row_group
   WHERE storage_id = (SELECT max(storage_id) FROM pgcolumnar.row_group) $$;
INSERT INTO tier SELECT g, g FROM generate_series(1, 20000) g;
INSERT INTO tier VALUES (20001, 1);
INSERT INTO tier VALUES (20002, 1);
INSERT INTO tier VALUES (20003, 1);
VACUUM (VERBOSE) tier;
SELECT tier_groups();
-- 10,000 more rows: still fewer than the 20,000-row group's, and more than the 3-row
-- group's: nothing moves.
INSERT INTO tier SELECT g, 2 FROM generate_series(20004, 30003) g;
VACUUM (VERBOSE) tier;
SELECT tier_groups();
-- Another 10,000: together the smaller ones outnumber it, and all four merge.
INSERT INTO tier SELECT g, 3 FROM generate_series(30004, 40003) g;
VACUUM (VERBOSE) tier;
SELECT tier_groups();
-- A small row group most of whose rows are deleted is rewritten, even alone.
DELETE FROM tier WHERE id % 3 <> 0;
VACUUM (VERBOSE) tier;
SELECT tier_groups();
SELECT count(*), sum(id), sum(v) FROM tier;
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
SELECT * FROM tier WHERE id IN (3, 20001, 20004, 30003, 40002, 40003) ORDER BY id;
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
DROP TABLE tier;
DROP FUNCTION tier_groups();

DROP TABLE m, half, heap_table;
SELECT count(*) FROM pgcolumnar.table_option;
DROP EXTENSION pgcolumnar;
