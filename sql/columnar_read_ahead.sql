-- Read-ahead: a scan whose reads miss the buffers asks the operating system for each
-- column's next pages (EXPLAIN ANALYZE: Blocks Read Ahead). A temporary table larger
-- than this session's local buffers (temp_buffers, set before any temporary table is
-- touched) misses them, as a table larger than shared_buffers does.
SET temp_buffers = '800kB';
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;

-- 400,000 rows: four columns of doubles that do not compress (3 MB each), a small one.
CREATE TEMP TABLE ra (a float8, b float8, c int, d float8, e float8) USING columnar;
INSERT INTO ra SELECT sin(g), cos(g), g % 7, sin(g + 0.5), cos(g + 0.5) FROM generate_series(1, 400000) g;
CREATE TEMP TABLE ra_heap AS SELECT * FROM ra;
SELECT pg_relation_size('ra') > 4 * 1024 * 1024 AS larger_than_local_buffers;

-- The blocks EXPLAIN ANALYZE of `q` shows read ahead (0 when the line is not shown),
-- and which columnar node ran it.
CREATE FUNCTION blocks_ahead(q text, OUT node text, OUT blocks bigint) LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  blocks := 0;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'Custom Scan' THEN node := substring(line from 'Custom Scan \((\w+)\)'); END IF;
    IF line ~ 'Blocks Read Ahead' THEN blocks := substring(line from '(\d+)$')::bigint; END IF;
  END LOOP;
END $$;
CREATE FUNCTION read_ahead(q text) RETURNS text LANGUAGE sql AS $$
  SELECT node || CASE WHEN blocks > 0 THEN ': read ahead' ELSE ': none read ahead' END FROM blocks_ahead(q)
$$;

-- ColumnarAgg and ColumnarScan (with a pushed filter) read ahead; the results are heap's.
SELECT read_ahead('SELECT count(*), sum(a) FROM ra WHERE b > 0.5');
SELECT read_ahead('SELECT a, b FROM ra WHERE c = 3 AND b > 0.999');
SELECT (SELECT (count(*), round(sum(a)::numeric, 6)) FROM ra WHERE b > 0.5)
     = (SELECT (count(*), round(sum(a)::numeric, 6)) FROM ra_heap WHERE b > 0.5) AS agg_same;
SELECT (SELECT array_agg((a, b) ORDER BY a) FROM ra WHERE c = 3 AND b > 0.999)
     = (SELECT array_agg((a, b) ORDER BY a) FROM ra_heap WHERE c = 3 AND b > 0.999) AS scan_same;

-- Only the columns read are asked for: the small column alone is a few of the table's
-- blocks, the two doubles most of them.
SELECT blocks BETWEEN 1 AND pg_relation_size('ra') / 8192 / 20 AS few
  FROM blocks_ahead('SELECT count(*) FROM ra WHERE c = 3');
SELECT blocks > pg_relation_size('ra') / 8192 / 3 AS two_of_four
  FROM blocks_ahead('SELECT sum(a) FROM ra WHERE b > 0');

-- A scan of most of the table's bytes reads its file nearly in order, which the
-- kernel's own read-ahead serves: it asks for nothing.
SELECT read_ahead('SELECT sum(a), sum(b), sum(d), sum(e) FROM ra WHERE c = 3');

-- Index fetches of scattered rows from outside the buffers ask for each row's vectors
-- (one per column read) before reading any; EXPLAIN does not show it (the Index Scan is
-- PostgreSQL's node), so this checks only that the rows are heap's.
CREATE INDEX ON ra (c);
CREATE INDEX ON ra_heap (c);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT a, b FROM ra WHERE c = 5;
SELECT (SELECT array_agg((a, b) ORDER BY a, b) FROM ra WHERE c = 5)
     = (SELECT array_agg((a, b) ORDER BY a, b) FROM ra_heap WHERE c = 5) AS fetched_same;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET pgcolumnar.enable_columnar_scan;

-- effective_io_concurrency = 0 turns it off, as it does PostgreSQL's prefetching.
SET effective_io_concurrency = 0;
SELECT read_ahead('SELECT count(*), sum(a) FROM ra WHERE b > 0.5');
RESET effective_io_concurrency;

-- A table that fits in the buffers is read from them: nothing is asked for.
CREATE TEMP TABLE ra_small (a float8) USING columnar;
INSERT INTO ra_small SELECT sin(g) FROM generate_series(1, 20000) g;
SELECT sum(a) > -1e9 AS warm FROM ra_small;
SELECT read_ahead('SELECT sum(a) FROM ra_small');

-- Read-ahead in a transaction that fails (its files are closed as it aborts), and in a
-- table rewritten in the transaction (a new file).
BEGIN;
SELECT read_ahead('SELECT count(*), sum(a) FROM ra WHERE b > 0.5');
TRUNCATE ra;
INSERT INTO ra SELECT * FROM ra_heap;
SELECT read_ahead('SELECT count(*), sum(a) FROM ra WHERE b > 0.5');
SELECT 1 / 0;
ROLLBACK;
SELECT count(*) = 400000 AS all_rows FROM ra;
BEGIN;
SELECT read_ahead('SELECT count(*), sum(b) FROM ra WHERE a > 0.5');
COMMIT;
SELECT read_ahead('SELECT count(*), sum(b) FROM ra WHERE a > 0.5');

DROP FUNCTION read_ahead(text), blocks_ahead(text);
DROP TABLE ra, ra_heap, ra_small;
DROP EXTENSION pgcolumnar;
