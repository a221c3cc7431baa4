-- The access method's names: `pgcolumnar` always, `columnar` only where that name is
-- free. Another columnar extension (citus_columnar, Hydra) may own `columnar`;
-- CREATE EXTENSION then succeeds beside it, says which name it created, and tables
-- created USING pgcolumnar get every fast path while the other AM's tables are left
-- to core. Each case runs in a database of its own.
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS regress_am_taken;
DROP DATABASE IF EXISTS regress_am_free;
RESET client_min_messages;

-- 1. `columnar` is taken: a stand-in for another extension's AM (heap's handler under
-- that name) exists before CREATE EXTENSION.
CREATE DATABASE regress_am_taken;
\c regress_am_taken
CREATE ACCESS METHOD columnar TYPE TABLE HANDLER heap_tableam_handler;
CREATE EXTENSION pgcolumnar;
SELECT amname, amhandler FROM pg_am WHERE amtype = 't' ORDER BY amname;
-- Only `pgcolumnar` is the extension's.
SELECT pg_describe_object(classid, objid, objsubid) AS member
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e' AND classid = 'pg_am'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgcolumnar');

CREATE TABLE names_ours (host int, ts int, v float8) USING pgcolumnar;
CREATE TABLE names_other (host int, ts int, v float8) USING columnar;
CREATE TABLE names_heap (host int, ts int, v float8);
INSERT INTO names_ours SELECT g % 10, g, g / 7.0 FROM generate_series(1, 20000) g;
INSERT INTO names_other SELECT * FROM names_ours;
INSERT INTO names_heap SELECT * FROM names_ours;
ANALYZE names_ours, names_other, names_heap;
SET max_parallel_workers_per_gather = 0;
-- The fast paths run on the table USING pgcolumnar...
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM names_ours WHERE ts > 15000;
EXPLAIN (COSTS OFF) SELECT host, ts FROM names_ours WHERE ts > 19990;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (host) host, ts FROM names_ours ORDER BY host, ts DESC;
-- ...and never on the other AM's table, which is not ours although it is named columnar.
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM names_other WHERE ts > 15000;
EXPLAIN (COSTS OFF) SELECT host, ts FROM names_other WHERE ts > 19990;
-- The same answers from all three.
SELECT 'ours' AS t, count(*), sum(v) FROM names_ours WHERE ts > 15000
UNION ALL SELECT 'other', count(*), sum(v) FROM names_other WHERE ts > 15000
UNION ALL SELECT 'heap', count(*), sum(v) FROM names_heap WHERE ts > 15000;
SELECT (SELECT array_agg(ts ORDER BY ts) FROM names_ours WHERE ts > 19990)
     = (SELECT array_agg(ts ORDER BY ts) FROM names_heap WHERE ts > 19990) AS scans_equal;
SELECT (SELECT array_agg(ts ORDER BY host) FROM (SELECT DISTINCT ON (host) host, ts FROM names_ours ORDER BY host, ts DESC) s)
     = (SELECT array_agg(ts ORDER BY host) FROM (SELECT DISTINCT ON (host) host, ts FROM names_heap ORDER BY host, ts DESC) s)
       AS last_points_equal;
-- Table options are for our tables; on the other AM's table they are refused as on heap
-- without the heap pushdown option.
\set VERBOSITY terse
ALTER TABLE names_ours SET (sort_by = 'host, ts');
ALTER TABLE names_other SET (sort_by = 'host');
\set VERBOSITY default
SELECT relid, option, value FROM pgcolumnar.options ORDER BY relid::text, option;
-- DROP EXTENSION removes its name and its tables, and leaves the other `columnar` alone.
SET client_min_messages = warning;
DROP EXTENSION pgcolumnar CASCADE;
RESET client_min_messages;
SELECT amname FROM pg_am WHERE amtype = 't' ORDER BY amname;
SELECT count(*) FROM names_other;

-- 2. `columnar` is free: both names are created, silently, with the same handler; a
-- table of either name is ours, and DROP EXTENSION removes both.
CREATE DATABASE regress_am_free;
\c regress_am_free
CREATE EXTENSION pgcolumnar;
SELECT amname, amhandler FROM pg_am WHERE amtype = 't' ORDER BY amname;
SELECT pg_describe_object(classid, objid, objsubid) AS member
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e' AND classid = 'pg_am'::regclass
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgcolumnar')
 ORDER BY 1;
CREATE TABLE by_short (id int, v int) USING columnar;
CREATE TABLE by_long (id int, v int) USING pgcolumnar;
INSERT INTO by_short SELECT g, g % 100 FROM generate_series(1, 10000) g;
INSERT INTO by_long SELECT * FROM by_short;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT sum(v) FROM by_short WHERE id > 5000;
EXPLAIN (COSTS OFF) SELECT sum(v) FROM by_long WHERE id > 5000;
SELECT (SELECT sum(v) FROM by_short WHERE id > 5000) AS short_sum,
       (SELECT sum(v) FROM by_long WHERE id > 5000) AS long_sum;
-- A join of the two: both sides are read by PgColumnarScan.
EXPLAIN (COSTS OFF) SELECT count(*) FROM by_short s JOIN by_long l USING (id) WHERE s.v = 3;
SELECT count(*) FROM by_short s JOIN by_long l USING (id) WHERE s.v = 3;
-- ALTER TABLE ... SET ACCESS METHOD between the two names keeps the rows (a rewrite).
ALTER TABLE by_short SET ACCESS METHOD pgcolumnar;
SELECT a.amname, count(*), sum(v) FROM by_short, pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname = 'by_short' GROUP BY a.amname;
SET client_min_messages = warning;
DROP EXTENSION pgcolumnar CASCADE;
RESET client_min_messages;
SELECT amname FROM pg_am WHERE amtype = 't' ORDER BY amname;

\c :regress_db
DROP DATABASE regress_am_taken;
DROP DATABASE regress_am_free;
