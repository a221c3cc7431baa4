-- A table's row in pgcolumnar.table_option goes with the table, however the table goes:
-- DROP TABLE, DROP SCHEMA / DROP OWNED ... CASCADE, DROP EXTENSION of an extension that
-- owns it, a partitioned or inheritance parent dropped with its children; heap and
-- columnar alike, as the owner who is not a superuser too. A rolled-back DROP keeps it.
CREATE EXTENSION pgcolumnar;
-- Rows whose table no longer exists (they would show as a bare OID).
CREATE VIEW dangling AS
  SELECT relid::oid AS oid FROM pgcolumnar.table_option
   WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = relid::oid);
GRANT SELECT ON dangling TO PUBLIC;

-- DROP TABLE, heap and columnar; a rolled-back DROP keeps the row.
CREATE TABLE ol_heap (i int) WITH (quals_push_down = on);
CREATE TABLE ol_col (i int) USING columnar WITH (quals_push_down = off, sort_by = 'i');
SELECT relid, option, value FROM pgcolumnar.options ORDER BY 1::text, 2;
BEGIN;
DROP TABLE ol_heap;
ROLLBACK;
SELECT relid, option, value FROM pgcolumnar.options WHERE relid = 'ol_heap'::regclass;
SELECT 'ol_heap'::regclass::oid AS heap_oid, 'ol_col'::regclass::oid AS col_oid \gset
DROP TABLE ol_heap, ol_col;
SELECT count(*) AS left_behind FROM pgcolumnar.table_option
 WHERE relid::oid IN (:heap_oid, :col_oid);

-- Set and dropped in one statement: the dropped table's row is looked up (through the
-- index) before it is deleted, and found though this very statement inserted it.
DO $$ BEGIN
  CREATE TABLE ol_once_heap (i int);
  ALTER TABLE ol_once_heap SET (quals_push_down = on);
  CREATE TABLE ol_once_col (i int) USING columnar;
  ALTER TABLE ol_once_col SET (sort_by = 'i');
  DROP TABLE ol_once_heap, ol_once_col;
END $$;
SELECT count(*) AS dangling FROM dangling;

-- DROP SCHEMA ... CASCADE.
CREATE SCHEMA ol_s;
CREATE TABLE ol_s.h (i int);
ALTER TABLE ol_s.h SET (quals_push_down = on);
CREATE TABLE ol_s.c (i int) USING columnar;
ALTER TABLE ol_s.c SET (sort_by = 'i');
SELECT count(*) FROM pgcolumnar.options WHERE relid::text LIKE 'ol_s.%';
DROP SCHEMA ol_s CASCADE;
SELECT count(*) AS dangling FROM dangling;

-- Partitions (dropped with their parent, or alone) and inheritance children (dropped
-- by CASCADE).
CREATE TABLE ol_parts (k int, v int) PARTITION BY RANGE (k);
CREATE TABLE ol_p1 PARTITION OF ol_parts FOR VALUES FROM (0) TO (10);
CREATE TABLE ol_p2 PARTITION OF ol_parts FOR VALUES FROM (10) TO (20) USING columnar;
CREATE TABLE ol_p3 PARTITION OF ol_parts FOR VALUES FROM (20) TO (30);
ALTER TABLE ol_p1 SET (quals_push_down = on);
ALTER TABLE ol_p2 SET (quals_push_down = on);
ALTER TABLE ol_p3 SET (quals_push_down = on);
DROP TABLE ol_p3;
SELECT count(*) AS dangling FROM dangling;
DROP TABLE ol_parts;
SELECT count(*) AS dangling FROM dangling;
CREATE TABLE ol_parent (k int);
CREATE TABLE ol_child () INHERITS (ol_parent);
CREATE TABLE ol_child_col () INHERITS (ol_parent) USING columnar;
ALTER TABLE ol_child SET (quals_push_down = on);
ALTER TABLE ol_child_col SET (quals_push_down = on);
ALTER TABLE ol_parent SET (quals_push_down = on);
SELECT count(*) FROM pgcolumnar.options WHERE relid::text LIKE 'ol_%';
DROP TABLE ol_parent CASCADE;
SELECT count(*) AS dangling FROM dangling;

-- A table's owner who is not a superuser: DROP TABLE, then DROP OWNED ... CASCADE.
CREATE ROLE ol_owner;
GRANT CREATE ON SCHEMA public TO ol_owner;
SET ROLE ol_owner;
CREATE TABLE ol_mine (i int) WITH (quals_push_down = on);
CREATE TABLE ol_mine_col (i int) USING columnar WITH (quals_push_down = on);
CREATE TABLE ol_kept (i int) WITH (quals_push_down = on);
SELECT relid, option, value FROM pgcolumnar.options WHERE relid::text LIKE 'ol_%' ORDER BY 1::text;
DROP TABLE ol_mine;
SELECT count(*) AS dangling FROM dangling;
RESET ROLE;
DROP OWNED BY ol_owner CASCADE;
SELECT count(*) AS dangling FROM dangling;
SELECT count(*) AS options_left FROM pgcolumnar.table_option;
REVOKE CREATE ON SCHEMA public FROM ol_owner;
DROP ROLE ol_owner;

-- DROP EXTENSION of an extension that owns the table.
CREATE EXTENSION citext;
CREATE TABLE ol_ext (t citext) WITH (quals_push_down = on);
CREATE TABLE ol_ext_col (t citext) USING columnar WITH (quals_push_down = on);
ALTER EXTENSION citext ADD TABLE ol_ext;
ALTER EXTENSION citext ADD TABLE ol_ext_col;
SELECT count(*) FROM pgcolumnar.options WHERE relid::text LIKE 'ol_ext%';
DROP EXTENSION citext;
SELECT count(*) AS dangling FROM dangling;
SELECT count(*) AS options_left FROM pgcolumnar.table_option;

-- A table given a dropped table's OID does not inherit its option: none is left to
-- inherit (checked above); and a new table under the old name starts without one.
CREATE TABLE ol_heap (i int);
SELECT count(*) FROM pgcolumnar.options WHERE relid = 'ol_heap'::regclass;
DROP TABLE ol_heap;

DROP VIEW dangling;
DROP EXTENSION pgcolumnar;
