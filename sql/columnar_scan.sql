-- ColumnarScan: projection, zone maps, planner estimates and statistics.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE s (id int, ts timestamptz, f float8, t text, d date) USING columnar;
INSERT INTO s SELECT i, '2024-01-01'::timestamptz + i * interval '1 s', i / 10.0,
                     'x' || (i % 100), '2024-01-01'::date + i / 10000
  FROM generate_series(1, 500000) i;
CREATE TABLE s_heap AS SELECT * FROM s;
ANALYZE s;
ANALYZE s_heap;

-- The planner's row estimate is the table's row count.
EXPLAIN SELECT * FROM s;
SELECT reltuples FROM pg_class WHERE relname = 's';

-- Statistics comparable to heap's.
-- (heap samples at random, so compare within a tolerance)
SELECT c.attname, abs(c.n_distinct - h.n_distinct) <= greatest(1, abs(h.n_distinct) / 20) AS close_n_distinct,
       round(c.correlation::numeric, 1) AS correlation, round(h.correlation::numeric, 1) AS heap_correlation,
       c.null_frac = h.null_frac AS same_null_frac
  FROM pg_stats c JOIN pg_stats h USING (attname)
 WHERE c.tablename = 's' AND h.tablename = 's_heap' ORDER BY 1;

-- Only the columns used are read.
EXPLAIN (COSTS OFF) SELECT avg(f) FROM s;
EXPLAIN (COSTS OFF) SELECT count(*) FROM s;
EXPLAIN (COSTS OFF) SELECT s FROM s WHERE id = 1;

-- Zone maps skip row groups and vectors; the rows are still filtered exactly.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM s WHERE id BETWEEN 200000 AND 201000;
SELECT count(*) FROM s WHERE id BETWEEN 200000 AND 201000;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM s WHERE ts >= '2024-01-06 00:00:00+00' AND d = '2024-02-13';
-- Integer constants of another width prune too (smallint and bigint against int,
-- as in `WHERE bigint_col BETWEEN 5000001 AND 5100000`); heap agrees on the counts.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM s WHERE id >= 200000::bigint AND id <= 20100::smallint * 10;
SELECT (SELECT count(*) FROM s WHERE id >= 200000::bigint AND id < 3000000000::bigint AND id <= 20100::smallint * 10),
       (SELECT count(*) FROM s_heap WHERE id >= 200000::bigint AND id < 3000000000::bigint AND id <= 20100::smallint * 10);
SELECT count(*) FROM s WHERE ts >= '2024-01-06 00:00:00+00' AND d = '2024-02-13';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM s WHERE f > 49999.5;
SELECT count(*), min(f) FROM s WHERE f > 49999.5;
-- Text keeps byte-wise zone maps: equality prunes (deterministic collation), ranges
-- only under "C" (under the database's collation a range is pushed, tested in that
-- collation's order, and prunes nothing).
CREATE TABLE hosts (h text, b bytea, i int) USING columnar;
INSERT INTO hosts SELECT 'host_' || lpad((i / 5000)::text, 3, '0'), int4send(i / 5000), i
  FROM generate_series(0, 299999) i;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM hosts WHERE h = 'host_007';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM hosts WHERE h >= 'host_050' COLLATE "C";
EXPLAIN (COSTS OFF) SELECT count(*) FROM hosts WHERE h >= 'host_050';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM hosts WHERE b = int4send(7);
SELECT count(*) FROM hosts WHERE h = 'host_007';
SELECT count(*) FROM hosts WHERE h >= 'host_050' COLLATE "C";
SELECT count(*) FROM hosts WHERE b = int4send(7);
DROP TABLE hosts;

-- Conditions zone maps cannot check are only filters.
EXPLAIN (COSTS OFF) SELECT count(*) FROM s WHERE t = 'x1' OR id < 5;
-- With the scan disabled, a sequential scan gives the same answers.
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM s WHERE id BETWEEN 200000 AND 201000;
SELECT count(*) FROM s WHERE id BETWEEN 200000 AND 201000;
-- A parallel sequential scan splits the row groups between the workers.
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id), count(DISTINCT t) FROM s;
SELECT count(*), sum(id), count(DISTINCT t) FROM s;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;
SET max_parallel_workers_per_gather = 0;
RESET pgcolumnar.enable_columnar_scan;

-- Sizes are real: the data file holds everything (no TOAST table).
SELECT pg_relation_size('s') > 0 AS has_size,
       pg_total_relation_size('s') = pg_relation_size('s') + pg_relation_size('s', 'fsm')
         + pg_relation_size('s', 'vm') AS no_toast,
       pg_relation_size('s') < pg_relation_size('s_heap') / 2 AS smaller_than_half_of_heap;

-- Scrollable cursors read backward without a Material node: FETCH PRIOR, LAST,
-- ABSOLUTE and BACKWARD over several row groups (two full ones and small ones), deleted
-- rows (one vector entirely), vectors skipped by a zone map, and row groups stored in
-- sort_by order. walk() reads the cursor forward, backward, forward again, then jumps.
CREATE TABLE scroll (id int, v text) USING columnar;
INSERT INTO scroll SELECT g, 'v' || g FROM generate_series(1, 210000) g;
INSERT INTO scroll VALUES (210001, 'single');
INSERT INTO scroll SELECT g, 'w' || g FROM generate_series(210002, 215000) g;
DELETE FROM scroll WHERE id % 7 = 0 OR id BETWEEN 2049 AND 4096 OR id = 210001;
CREATE TABLE scroll_sorted (id int, v text) USING columnar;
ALTER TABLE scroll_sorted SET (sort_by = 'v');
INSERT INTO scroll_sorted SELECT g, md5(g::text) FROM generate_series(1, 5000) g;
CREATE FUNCTION walk(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  fwd int[] := '{}';
  bwd int[] := '{}';
  again int[] := '{}';
  r record;
  n int;
  at int;
  misses int := 0;
BEGIN
  OPEN c SCROLL FOR EXECUTE q;
  LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; fwd := fwd || r.id; END LOOP;
  LOOP FETCH PRIOR FROM c INTO r; EXIT WHEN NOT FOUND; bwd := bwd || r.id; END LOOP;
  LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; again := again || r.id; END LOOP;
  n := cardinality(fwd);
  FOR i IN 1..least(n, 400) LOOP
    at := (i * 7919) % n + 1;
    FETCH ABSOLUTE at FROM c INTO r;
    misses := misses + (r.id IS DISTINCT FROM fwd[at])::int;
    FETCH PRIOR FROM c INTO r;
    misses := misses + (at > 1 AND r.id IS DISTINCT FROM fwd[at - 1])::int;
  END LOOP;
  FETCH LAST FROM c INTO r;
  misses := misses + (r.id IS DISTINCT FROM fwd[n])::int;
  CLOSE c;
  RETURN format('%s rows; backward = reversed forward: %s; forward again = forward: %s; jumps missed: %s',
    n, bwd = (SELECT array_agg(x ORDER BY o DESC) FROM unnest(fwd) WITH ORDINALITY u(x, o)),
    again = fwd, misses);
END $$;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id FROM scroll WHERE id > 200000;
SELECT walk('SELECT id FROM scroll');
SELECT walk('SELECT id FROM scroll WHERE id > 200000');
SELECT walk('SELECT id FROM scroll_sorted');
SELECT walk('SELECT id FROM scroll WHERE id < 0');
-- The table access method's own scan (a Seq Scan) goes backward too.
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT id FROM scroll;
SELECT walk('SELECT id FROM scroll WHERE id > 200000');
RESET pgcolumnar.enable_columnar_scan;
BEGIN;
DECLARE s SCROLL CURSOR FOR SELECT id, v FROM scroll_sorted;
FETCH LAST FROM s;
FETCH BACKWARD 2 FROM s;
FETCH FIRST FROM s;
FETCH PRIOR FROM s;
FETCH NEXT FROM s;
COMMIT;
DROP FUNCTION walk(text);
DROP TABLE scroll, scroll_sorted;

-- TABLESAMPLE: blocks are numbered over the row groups (up to 291 rows each); SYSTEM
-- keeps whole blocks, BERNOULLI single rows; deleted rows are never sampled, REPEATABLE
-- repeats a sample, and methods that pick blocks in their own order work.
CREATE TABLE smp (id int, v text) USING columnar;
INSERT INTO smp SELECT g, 'v' || g FROM generate_series(1, 200000) g;
INSERT INTO smp VALUES (200001, 'one');
DELETE FROM smp WHERE id % 2 = 0;
EXPLAIN (COSTS OFF) SELECT * FROM smp TABLESAMPLE SYSTEM (1);
SELECT count(*) FROM smp TABLESAMPLE BERNOULLI (0);
SELECT count(*) FROM smp TABLESAMPLE SYSTEM (0);
SELECT count(*), sum(id) FROM smp TABLESAMPLE BERNOULLI (100);
SELECT count(*), sum(id) FROM smp TABLESAMPLE SYSTEM (100);
SELECT count(*) BETWEEN 9000 AND 11000 AS about_a_tenth, bool_and(id % 2 = 1) AS only_live
  FROM smp TABLESAMPLE BERNOULLI (10);
SELECT count(*) BETWEEN 5000 AND 15000 AS about_a_tenth, bool_and(id % 2 = 1) AS only_live
  FROM smp TABLESAMPLE SYSTEM (10);
-- SYSTEM takes runs of neighbouring rows (whole blocks), BERNOULLI scattered ones.
SELECT count(*) FILTER (WHERE id = prev + 2) > count(*) * 0.9 AS system_takes_runs
  FROM (SELECT id, lag(id) OVER (ORDER BY id) AS prev FROM smp TABLESAMPLE SYSTEM (10)) s;
SELECT count(*) FILTER (WHERE id = prev + 2) < count(*) * 0.3 AS bernoulli_scatters
  FROM (SELECT id, lag(id) OVER (ORDER BY id) AS prev FROM smp TABLESAMPLE BERNOULLI (10)) s;
SELECT (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE SYSTEM (5) REPEATABLE (42))
     = (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE SYSTEM (5) REPEATABLE (42)) AS system_repeats,
       (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE BERNOULLI (5) REPEATABLE (42))
     = (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE BERNOULLI (5) REPEATABLE (42)) AS bernoulli_repeats,
       (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE BERNOULLI (5) REPEATABLE (42))
     = (SELECT array_agg(id ORDER BY id) FROM smp TABLESAMPLE BERNOULLI (5) REPEATABLE (7)) AS other_seed_same;
-- Rescans with a new seed each time (the sample is taken again per outer row).
SELECT s, n > 0 AS sampled FROM generate_series(1, 3) s,
  LATERAL (SELECT count(*) AS n FROM smp TABLESAMPLE BERNOULLI (1) REPEATABLE (s)) x ORDER BY s;
CREATE EXTENSION tsm_system_rows;
SELECT count(*), count(DISTINCT id), bool_and(id % 2 = 1) AS only_live FROM smp TABLESAMPLE system_rows (500);
DROP EXTENSION tsm_system_rows;
DROP TABLE smp;

-- A new connection's first plan reads the chunk metadata of a table's row groups in one
-- scan (more than 8 of them missing from the backend's cache); an aborted write's
-- metadata stays out, and a later plan that needs more columns adds theirs.
CREATE TABLE many_groups (a int, b int, c text) USING columnar;
SELECT format('INSERT INTO many_groups SELECT g, g * 10, ''v'' || g FROM generate_series(%s, %s) g',
              i * 1000 + 1, i * 1000 + 1000)
  FROM generate_series(0, 11) i \gexec
BEGIN;
INSERT INTO many_groups SELECT g, g * 10, 'aborted' FROM generate_series(5001, 5400) g;
SELECT count(*) FROM many_groups WHERE a BETWEEN 5001 AND 5500;
ROLLBACK;
\c
EXPLAIN (COSTS OFF) SELECT a, b FROM many_groups WHERE a BETWEEN 5001 AND 5500;
SELECT count(*), min(b), max(c) FROM many_groups WHERE a BETWEEN 5001 AND 5500;
EXPLAIN (COSTS OFF) SELECT b, c FROM many_groups WHERE b > 115000 AND c <> 'z';
SELECT count(*), min(a), max(a) FROM many_groups WHERE b > 115000 AND c <> 'z';
-- These row groups are small, so their chunk metadata sits in their row_group rows
-- (inline_chunks.rs) and is parsed whole when first needed: on a new connection, the
-- plan parses all 36 directories (12 groups, 3 columns), the scan none more. (Row
-- groups with chunk rows, larger ones, parse only the columns a plan or scan reads.)
\c
SELECT pgcolumnar.chunk_directories_parsed() AS p0 \gset
SELECT count(*), min(b), max(c) FROM many_groups WHERE a BETWEEN 3001 AND 3500;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
-- Past 8 row groups the rest come in one scan: each of the 36 once, the results whole.
\c
SELECT pgcolumnar.chunk_directories_parsed() AS p0 \gset
SELECT count(*), min(b), max(c), sum(length(c)) FROM many_groups WHERE a > 500;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
SELECT count(*), min(b), max(c), sum(length(c)) FROM many_groups WHERE a > 500;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed_again;
DROP TABLE many_groups;

-- Row groups with chunk rows keep each column's zone map in their row_group row too:
-- plan-time pruning rules row groups out on those, and reads the vector directories of
-- the ones a filter keeps only, as does the scan. On a new connection, planning a range
-- inside one of 6 row groups parses that group's directory of the filtered column, the
-- scan that group's of the column it sums; a range over all of them every group's.
CREATE TABLE wide_groups (id int, a int, b int, c int, d int, e int, f int, g int) USING columnar;
SELECT format('INSERT INTO wide_groups SELECT i, i, i, i, i, i, i, i FROM generate_series(%s, %s) i',
              k * 20000 + 1, (k + 1) * 20000)
  FROM generate_series(0, 5) k \gexec
SELECT count(*) FILTER (WHERE zones IS NOT NULL) AS with_zones, count(*) FILTER (WHERE chunks IS NULL) AS with_chunk_rows
  FROM pgcolumnar.row_group WHERE storage_id = (SELECT max(storage_id) FROM pgcolumnar.row_group);
\c
SELECT pgcolumnar.chunk_directories_parsed() AS p0 \gset
EXPLAIN (COSTS OFF) SELECT sum(b) FROM wide_groups WHERE id BETWEEN 41001 AND 42000;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed_by_plan;
SELECT sum(b) FROM wide_groups WHERE id BETWEEN 41001 AND 42000;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed_by_plan_and_scan;
EXPLAIN (COSTS OFF) SELECT sum(b) FROM wide_groups WHERE id > 0;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed_by_plans;
SELECT sum(b) FROM wide_groups WHERE id > 0;
-- A scan reads the table's row_group rows as its snapshot sees them, once per
-- snapshot: a second scan under the same snapshot (here a REPEATABLE READ one) reuses
-- the list. Once the transaction has written (a DELETE: an xid), its scans read them
-- again, and see its own changes (a row inserted is read from the write buffer). The
-- counts are of scans of row_group's index by executions of a plan made once.
SET plan_cache_mode = force_generic_plan;
PREPARE wide_range AS SELECT sum(b) FROM wide_groups WHERE id BETWEEN 41001 AND 42000;
BEGIN ISOLATION LEVEL REPEATABLE READ;
EXECUTE wide_range;
SELECT pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) AS s0 \gset
EXECUTE wide_range;
SELECT pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) - :s0 AS row_group_scans;
INSERT INTO wide_groups VALUES (41500, 0, 1000000);
DELETE FROM wide_groups WHERE id = 41001;
SELECT txid_current_if_assigned() IS NOT NULL AS has_xid,
       pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) AS s0 \gset
EXECUTE wide_range;
SELECT :'has_xid' AS has_xid,
       pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) - :s0 > 0 AS read_again;
ROLLBACK;
DEALLOCATE wide_range;
RESET plan_cache_mode;
DROP TABLE wide_groups;

-- Past 16 row groups that a filter keeps, plan-time pruning reads the vectors' zone
-- maps of an evenly spaced 16 of them and scales what those keep, which EXPLAIN says:
-- here 10 vectors a row group, the first of each kept, the directories of 16 of the
-- 20 row groups parsed (row groups this wide keep their chunks' metadata in chunk
-- rows; a narrower one's comes whole with its row_group row). The scan still checks
-- every vector.
CREATE TABLE sampled_groups (i int, m int, a int, b int, c int, d int) USING columnar;
SELECT format('INSERT INTO sampled_groups SELECT i, (i - 1) %% 20000, i, i, i, i FROM generate_series(%s, %s) i',
              k * 20000 + 1, (k + 1) * 20000)
  FROM generate_series(0, 19) k \gexec
\c
SELECT pgcolumnar.chunk_directories_parsed() AS p0 \gset
EXPLAIN (COSTS OFF) SELECT i FROM sampled_groups WHERE m < 2000;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed_by_plan;
SELECT count(*), min(i), max(i) FROM sampled_groups WHERE m < 2000;
-- A filter that keeps few row groups reads all their directories: nothing estimated.
EXPLAIN (COSTS OFF) SELECT m FROM sampled_groups WHERE i BETWEEN 100001 AND 160000 AND m > 19000;
DROP TABLE sampled_groups;

-- Past 256 row groups (a trickle of small transactions leaves thousands until they are
-- merged), plan-time pruning checks an evenly spaced sample of them and scales what it
-- finds, so that planning a statement does not grow with them.
CREATE TABLE trickle (a int, b int) USING columnar WITH (autovacuum_enabled = off);
CREATE PROCEDURE trickle_in(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..n LOOP
        INSERT INTO trickle VALUES (i, i * 10);
        COMMIT;
    END LOOP;
END $$;
CALL trickle_in(600);
SELECT row_groups, rows FROM pgcolumnar.table_stats WHERE relation = 'trickle'::regclass;
EXPLAIN (COSTS OFF) SELECT b FROM trickle WHERE a BETWEEN 100 AND 159;
EXPLAIN (COSTS OFF) SELECT b FROM trickle WHERE a <= 300;
SELECT count(*), sum(b) FROM trickle WHERE a <= 300;
DROP TABLE trickle;
DROP PROCEDURE trickle_in;

-- Past 1,000 row groups the planner's sums (rows, column sizes, zone maps, framed
-- shares) share one reading of the row_group rows: a plan on a new connection reads
-- them once, and the scan's start once more (each of the four read them itself before,
-- five in all, and again each time other transactions' writes made one stale).
CREATE TABLE many_groups (a int, b text) USING columnar WITH (autovacuum_enabled = off);
CREATE PROCEDURE many_in(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..n LOOP
        INSERT INTO many_groups VALUES (i, 'v' || i);
        COMMIT;
    END LOOP;
END $$;
CALL many_in(4200);
\c
BEGIN;
SELECT pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) AS s0 \gset
EXPLAIN (COSTS OFF) SELECT b FROM many_groups WHERE a = 77;
SELECT pg_stat_get_xact_numscans('pgcolumnar.row_group_pkey'::regclass) - :s0 AS row_group_reads;
SELECT b FROM many_groups WHERE a = 77;
COMMIT;
DROP TABLE many_groups;
DROP PROCEDURE many_in;

DROP TABLE s, s_heap;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
