-- Columnar tables under roles that are not superusers: what a role may do with a table
-- is decided by the table's grants alone, as for heap. pgcolumnar reads and writes its
-- own metadata with the extension's rights; no role can change that metadata directly.
CREATE EXTENSION pgcolumnar;
CREATE ROLE regress_columnar_owner;
CREATE ROLE regress_columnar_writer;
CREATE ROLE regress_columnar_reader;
CREATE ROLE regress_columnar_nobody;
GRANT CREATE ON SCHEMA public TO regress_columnar_owner;
\set VERBOSITY terse

-- The owner creates, changes, indexes and vacuums its table and sets its options.
SET ROLE regress_columnar_owner;
CREATE TABLE roles_t (id int, v text) USING columnar;
INSERT INTO roles_t SELECT i, 'v' || i FROM generate_series(1, 1000) i;
UPDATE roles_t SET v = 'updated' WHERE id <= 10;
DELETE FROM roles_t WHERE id > 990;
SELECT count(*), count(*) FILTER (WHERE v = 'updated') AS updated FROM roles_t;
CREATE INDEX roles_t_id ON roles_t (id);
ALTER TABLE roles_t SET (sort_by = 'id');
ALTER TABLE roles_t SET (quals_push_down = off);
SELECT option, value FROM pgcolumnar.options WHERE relid = 'roles_t'::regclass ORDER BY 1;
-- The option's effect on the ColumnarScan (the index would serve these 4 rows too).
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM roles_t WHERE id < 5;
ALTER TABLE roles_t RESET (quals_push_down);
EXPLAIN (COSTS OFF) SELECT id FROM roles_t WHERE id < 5;
RESET enable_indexonlyscan;
RESET enable_bitmapscan;
SELECT id FROM roles_t WHERE id < 5 ORDER BY id;
VACUUM roles_t;
-- The metadata queries resolve nothing through the caller's search_path: an operator
-- of the caller's that would match is never run with the extension's rights.
CREATE FUNCTION roles_oideq(oid, oid) RETURNS bool LANGUAGE plpgsql
  AS $$ BEGIN RAISE EXCEPTION 'roles_oideq called as %', current_user; END $$;
CREATE OPERATOR public.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = roles_oideq);
SET search_path = public, pg_catalog;
VACUUM FULL roles_t;
INSERT INTO roles_t VALUES (991, 'sorted');
RESET search_path;
DROP OPERATOR public.= (oid, oid);
DROP FUNCTION roles_oideq(oid, oid);
SELECT count(*) FROM roles_t WHERE id BETWEEN 1 AND 20;
SELECT attname, rows FROM pgcolumnar.stats('roles_t') WHERE attname = 'id';
GRANT SELECT, INSERT, UPDATE, DELETE ON roles_t TO regress_columnar_writer;
GRANT SELECT ON roles_t TO regress_columnar_reader;
RESET ROLE;

-- A role granted SELECT, INSERT, UPDATE and DELETE may do all four, and call stats;
-- it may neither truncate the table nor set its options (owner's rights, as for heap).
SET ROLE regress_columnar_writer;
INSERT INTO roles_t SELECT i, 'writer' FROM generate_series(1001, 1010) i;
UPDATE roles_t SET v = 'writer' WHERE id <= 5;
DELETE FROM roles_t WHERE id BETWEEN 6 AND 10;
SELECT count(*), count(*) FILTER (WHERE v = 'writer') AS by_writer FROM roles_t;
SELECT count(*) AS columns FROM pgcolumnar.stats('roles_t');
TRUNCATE roles_t;
ALTER TABLE roles_t SET (sort_by = 'v');
ALTER TABLE roles_t SET (quals_push_down = off);
RESET ROLE;

-- A role granted SELECT only reads.
SET ROLE regress_columnar_reader;
SELECT count(*) FROM roles_t;
SELECT count(*) AS columns FROM pgcolumnar.stats('roles_t');
INSERT INTO roles_t VALUES (0, 'reader');
UPDATE roles_t SET v = 'reader';
DELETE FROM roles_t;
RESET ROLE;

-- A role granted nothing can do nothing with the table, stats included.
SET ROLE regress_columnar_nobody;
SELECT count(*) FROM roles_t;
INSERT INTO roles_t VALUES (0, 'nobody');
SELECT count(*) AS columns FROM pgcolumnar.stats('roles_t');
RESET ROLE;

-- Not even the owner of a columnar table may read or change the metadata directly.
SET ROLE regress_columnar_owner;
SELECT count(*) FROM pgcolumnar.row_group;
INSERT INTO pgcolumnar.row_group VALUES (0, 0, 1, 0, 0, NULL);
UPDATE pgcolumnar.chunk SET null_count = 0;
DELETE FROM pgcolumnar.row_mark;
DELETE FROM pgcolumnar.row_reservation;
INSERT INTO pgcolumnar.table_option VALUES (0, 'v', '{2}');
SELECT nextval('pgcolumnar.storage_id_seq');

-- Also free_extent: the role cannot touch it either.
DELETE FROM pgcolumnar.free_extent;

-- The owner, no superuser, uses what issue 10 added: an UNLOGGED table, CREATE INDEX
-- and REINDEX CONCURRENTLY, TABLESAMPLE, a scroll cursor read backward, VACUUM freeing
-- space that a reload reuses; also on a columnar partition of a partitioned table.
CREATE UNLOGGED TABLE roles_u (id int, v text) USING columnar;
INSERT INTO roles_u SELECT g, md5(g::text) FROM generate_series(1, 204800) g;
SELECT pg_relation_size('roles_u') AS u_size \gset
DELETE FROM roles_u WHERE id <= 102400;
VACUUM roles_u;
INSERT INTO roles_u SELECT g, md5(g::text) FROM generate_series(1, 102400) g;
SELECT pg_relation_size('roles_u') = :u_size AS space_reused, count(*) FROM roles_u;
CREATE INDEX CONCURRENTLY roles_u_id ON roles_u (id);
REINDEX INDEX CONCURRENTLY roles_u_id;
SELECT count(*) FROM roles_u TABLESAMPLE BERNOULLI (100) REPEATABLE (1);
BEGIN;
DECLARE roles_c SCROLL CURSOR FOR SELECT id FROM roles_u WHERE id > 204790;
FETCH LAST FROM roles_c;
FETCH BACKWARD 2 FROM roles_c;
COMMIT;
CREATE TABLE roles_p (id int, v text) PARTITION BY RANGE (id);
CREATE TABLE roles_p1 PARTITION OF roles_p FOR VALUES FROM (0) TO (1000) USING columnar;
CREATE TABLE roles_p2 PARTITION OF roles_p FOR VALUES FROM (1000) TO (2000);
INSERT INTO roles_p SELECT g, 'p' || g FROM generate_series(0, 1999) g;
CREATE INDEX CONCURRENTLY roles_p1_id ON roles_p1 (id);
SELECT count(*) FROM roles_p TABLESAMPLE SYSTEM (100);
BEGIN;
DECLARE roles_pc SCROLL CURSOR FOR SELECT id FROM roles_p WHERE id BETWEEN 995 AND 1004;
FETCH LAST FROM roles_pc;
FETCH BACKWARD 3 FROM roles_pc;
FETCH PRIOR FROM roles_pc;
-- Back from the heap partition into the columnar one.
FETCH BACKWARD 3 FROM roles_pc;
COMMIT;
DROP TABLE roles_u, roles_p;

-- The owner truncates (a new storage id) and drops its table.
TRUNCATE roles_t;
INSERT INTO roles_t VALUES (1, 'after truncate');
SELECT count(*) FROM roles_t;
DROP TABLE roles_t;
RESET ROLE;
-- DROP TABLE took the table's options with it.
SELECT count(*) FROM pgcolumnar.table_option;

\set VERBOSITY default
REVOKE CREATE ON SCHEMA public FROM regress_columnar_owner;
DROP ROLE regress_columnar_owner, regress_columnar_writer, regress_columnar_reader,
  regress_columnar_nobody;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
