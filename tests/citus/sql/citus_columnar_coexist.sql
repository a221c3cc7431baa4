-- Citus's own columnar (extension citus_columnar, which a cluster upgraded from Citus
-- before 13.2 has) beside pgcolumnar, in one database of a server that preloads both
-- 'citus,pgcolumnar'. citus_columnar owns the access method name `columnar`, so
-- pgcolumnar creates only `pgcolumnar` and says so; each extension's nodes run on its
-- own tables, serial and parallel (parallel workers look custom scan nodes up by name).
SELECT current_database() AS citus_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS regress_coexist;
CREATE DATABASE regress_coexist;
RESET client_min_messages;
\c regress_coexist
CREATE EXTENSION citus_columnar;
CREATE EXTENSION pgcolumnar;
SELECT amname, amhandler FROM pg_am WHERE amtype = 't' ORDER BY amname;
CREATE TABLE theirs (a int, b int) USING columnar;
CREATE TABLE ours (a int, b int) USING pgcolumnar;
CREATE TABLE plain (a int, b int);
INSERT INTO theirs SELECT g, g % 7 FROM generate_series(1, 300000) g;
INSERT INTO ours SELECT * FROM theirs;
INSERT INTO plain SELECT * FROM theirs;
ANALYZE theirs, ours, plain;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT sum(b) FROM theirs WHERE a > 5000;
EXPLAIN (COSTS OFF) SELECT sum(b) FROM ours WHERE a > 5000;
SELECT (SELECT sum(b) FROM theirs WHERE a > 5000) AS theirs, (SELECT sum(b) FROM ours WHERE a > 5000) AS ours,
       (SELECT sum(b) FROM plain WHERE a > 5000) AS heap;
-- In parallel: both plans reach their workers and run there.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b) FROM ours WHERE a > 1000;
EXPLAIN (COSTS OFF) SELECT count(*), sum(b) FROM theirs WHERE a > 1000;
-- Parallel workers ran our node (they look it up by name, beside Citus's ColumnarScan).
CREATE FUNCTION launched(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l ~ 'Workers Launched|Custom Scan' THEN
      RETURN NEXT regexp_replace(regexp_replace(trim(l), ' \(actual.*', ''), 'Launched: [1-9]', 'Launched: some');
    END IF;
  END LOOP;
END $$;
SELECT launched('SELECT count(*), sum(b) FROM ours WHERE a > 1000');
SELECT count(*), sum(b) FROM ours WHERE a > 1000;
SELECT count(*), sum(b) FROM theirs WHERE a > 1000;
SELECT count(*), sum(b) FROM plain WHERE a > 1000;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- Dropping pgcolumnar leaves citus_columnar's access method and tables alone.
SET client_min_messages = warning;
DROP EXTENSION pgcolumnar CASCADE;
RESET client_min_messages;
SELECT amname FROM pg_am WHERE amtype = 't' ORDER BY amname;
SELECT count(*) FROM theirs;
\c :citus_db
DROP DATABASE regress_coexist;
