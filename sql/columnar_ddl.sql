-- DDL on columnar tables.
CREATE EXTENSION pgcolumnar;
CREATE TABLE ddl (id int, name text) USING columnar;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'ddl';
INSERT INTO ddl SELECT i, 'n' || i FROM generate_series(1, 1000) i;

-- CREATE TABLE AS and SELECT INTO with columnar as the default access method.
SET default_table_access_method = columnar;
CREATE TABLE ddl_ctas AS SELECT * FROM ddl WHERE id <= 10;
SELECT * INTO ddl_into FROM ddl WHERE id > 990;
RESET default_table_access_method;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('ddl_ctas', 'ddl_into') ORDER BY 1;
SELECT count(*), sum(id) FROM ddl_ctas;
SELECT count(*), sum(id) FROM ddl_into;

-- ALTER TABLE ... SET ACCESS METHOD, both ways, keeps every row.
CREATE TABLE ddl_heap AS SELECT * FROM ddl;
ALTER TABLE ddl_heap SET ACCESS METHOD columnar;
SELECT a.amname, count(*), sum(id), max(name) FROM ddl_heap, pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname = 'ddl_heap' GROUP BY 1;
ALTER TABLE ddl_heap SET ACCESS METHOD heap;
SELECT a.amname, count(*), sum(id), max(name) FROM ddl_heap, pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname = 'ddl_heap' GROUP BY 1;

-- ADD COLUMN without and with a default: old rows read the default, no rewrite.
SELECT pg_relation_filenode('ddl') AS before_add \gset
ALTER TABLE ddl ADD COLUMN plain int;
ALTER TABLE ddl ADD COLUMN defaulted text DEFAULT 'dflt';
SELECT pg_relation_filenode('ddl') = :before_add AS no_rewrite;
INSERT INTO ddl VALUES (1001, 'new', 7, 'given');
SELECT id, name, plain, defaulted FROM ddl WHERE id IN (1, 1000, 1001) ORDER BY id;

-- DROP COLUMN: the column disappears, the others stay.
ALTER TABLE ddl DROP COLUMN plain;
INSERT INTO ddl VALUES (1002, 'after drop', 'x');
SELECT * FROM ddl WHERE id > 999 ORDER BY id;

-- ALTER COLUMN TYPE rewrites the table.
ALTER TABLE ddl ALTER COLUMN id TYPE bigint;
SELECT pg_typeof(id), count(*), sum(id) FROM ddl GROUP BY 1;

-- TRUNCATE, also rolled back.
BEGIN;
TRUNCATE ddl;
SELECT count(*) FROM ddl;
ROLLBACK;
SELECT count(*) FROM ddl;
TRUNCATE ddl;
SELECT count(*) FROM ddl;
INSERT INTO ddl VALUES (1, 'again', 'y');
SELECT * FROM ddl;

-- A table created and truncated in one transaction (non-transactional truncate), with
-- an index, which the truncation rebuilds in the same command: it finds no old row.
BEGIN;
CREATE TABLE ddl_tx (v int) USING columnar;
CREATE INDEX ddl_tx_v ON ddl_tx (v);
INSERT INTO ddl_tx SELECT generate_series(1, 100);
TRUNCATE ddl_tx;
INSERT INTO ddl_tx VALUES (42);
COMMIT;
SELECT * FROM ddl_tx;
SET enable_seqscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT v FROM ddl_tx WHERE v > 0;
SELECT v FROM ddl_tx WHERE v > 0;
RESET enable_seqscan; RESET pgcolumnar.enable_columnar_scan;

-- Temporary tables work, and unlogged ones: they get an init fork (what a crash
-- resets them to; tests/crash_recovery.sh crashes the server), and ALTER TABLE SET
-- LOGGED / UNLOGGED, TRUNCATE and indexes work on them.
CREATE TEMP TABLE ddl_temp (v int) USING columnar;
INSERT INTO ddl_temp VALUES (1), (2);
SELECT sum(v) FROM ddl_temp;
CREATE UNLOGGED TABLE ddl_unlogged (v int PRIMARY KEY, t text) USING columnar;
INSERT INTO ddl_unlogged SELECT g, 't' || g FROM generate_series(1, 1000) g;
SELECT relpersistence, pg_relation_size('ddl_unlogged', 'init') > 0 AS has_init_fork
  FROM pg_class WHERE relname = 'ddl_unlogged';
SELECT count(*), sum(v) FROM ddl_unlogged;
ALTER TABLE ddl_unlogged SET LOGGED;
SELECT relpersistence, pg_relation_size('ddl_unlogged', 'init') AS init_fork
  FROM pg_class WHERE relname = 'ddl_unlogged';
SELECT count(*), sum(v) FROM ddl_unlogged;
ALTER TABLE ddl_unlogged SET UNLOGGED;
SELECT relpersistence, pg_relation_size('ddl_unlogged', 'init') > 0 AS has_init_fork
  FROM pg_class WHERE relname = 'ddl_unlogged';
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
SELECT t FROM ddl_unlogged WHERE v = 500;
RESET pgcolumnar.enable_columnar_scan;
RESET enable_seqscan;
TRUNCATE ddl_unlogged;
INSERT INTO ddl_unlogged VALUES (1, 'after truncate');
SELECT * FROM ddl_unlogged;
SELECT pg_relation_size('ddl_unlogged', 'init') > 0 AS has_init_fork;
DROP TABLE ddl_unlogged;

-- pgcolumnar.stats shows what is stored per column.
SELECT attname, row_groups, rows, null_count, stored_bytes > 0 AS has_bytes, encodings
  FROM pgcolumnar.stats('ddl_ctas');

-- DROP TABLE removes the table's metadata; a rolled-back DROP keeps it.
SELECT count(*) AS groups_before FROM pgcolumnar.row_group \gset
BEGIN;
DROP TABLE ddl_ctas;
ROLLBACK;
SELECT count(*) = :groups_before AS kept_after_rollback FROM pgcolumnar.row_group;
DROP TABLE ddl_ctas;
SELECT :groups_before - count(*) AS groups_removed FROM pgcolumnar.row_group;
\set VERBOSITY sqlstate
SELECT * FROM pgcolumnar.stats('ddl_heap');
\set VERBOSITY default

-- A rewriting ALTER TABLE reads the stored rows as they were written: with the fast
-- defaults of columns added before it, and a retyped column as its old type.
CREATE TABLE ddl_fast (col text) USING columnar;
INSERT INTO ddl_fast VALUES ('something'), (NULL);
ALTER TABLE ddl_fast ADD COLUMN a text, ADD COLUMN b int DEFAULT 42;
SELECT * FROM ddl_fast ORDER BY col;
ALTER TABLE ddl_fast ADD COLUMN c text, ADD COLUMN d int DEFAULT 42, ADD COLUMN e serial;
SELECT * FROM ddl_fast ORDER BY e;
DROP TABLE ddl_fast;
CREATE TABLE ddl_retype (aa text, flag bool) USING columnar;
INSERT INTO ddl_retype VALUES ('test', true), ('columnar', false), (NULL, NULL);
ALTER TABLE ddl_retype ALTER COLUMN aa TYPE integer USING bit_length(aa);
SELECT * FROM ddl_retype ORDER BY aa;
ALTER TABLE ddl_retype ALTER COLUMN flag TYPE text
  USING CASE WHEN flag THEN 'yes' WHEN NOT flag THEN 'no' END;
SELECT * FROM ddl_retype ORDER BY aa;
ALTER TABLE ddl_retype ADD COLUMN n int DEFAULT 7;
INSERT INTO ddl_retype VALUES (1, 'new', 1);
ALTER TABLE ddl_retype ALTER COLUMN n TYPE text USING (n * 2)::text;
SELECT * FROM ddl_retype ORDER BY aa;
DROP TABLE ddl_retype;

-- DROP EXTENSION only with CASCADE while columnar tables exist.
\set VERBOSITY sqlstate
DROP EXTENSION pgcolumnar;
\set VERBOSITY default
DROP EXTENSION pgcolumnar CASCADE;
SELECT count(*) FROM pg_class WHERE relname LIKE 'ddl%' AND relam <> 0
   AND relam NOT IN (SELECT oid FROM pg_am WHERE amname = 'heap');
DROP TABLE ddl_heap;
DROP SCHEMA pgcolumnar;
