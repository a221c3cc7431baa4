-- Columnar tables are published like heap tables (their changes are logically decoded:
-- tests/logical runs the decoding itself, under wal_level = logical). Only in a Citus
-- database is naming one refused (tests/citus), as non-blocking shard moves are not
-- supported yet.
CREATE EXTENSION pgcolumnar;
CREATE TABLE pub_col (id int PRIMARY KEY, v text) USING columnar;
CREATE TABLE pub_heap (id int, v text);
-- (wal_level's own warning depends on the server's settings.)
SET client_min_messages = error;
CREATE PUBLICATION pub_one FOR TABLE pub_col;
CREATE PUBLICATION pub_two FOR TABLE pub_heap, pub_col (id) WHERE (id > 0);
CREATE PUBLICATION pub_heap_only FOR TABLE pub_heap;
ALTER PUBLICATION pub_heap_only ADD TABLE pub_col;
ALTER PUBLICATION pub_heap_only SET TABLE pub_col;
ALTER PUBLICATION pub_heap_only DROP TABLE pub_col;
ALTER PUBLICATION pub_heap_only ADD TABLE pub_heap;
-- FOR ALL TABLES lists pgcolumnar's metadata tables too (PostgreSQL 15 leaves out only
-- system tables); they publish no change and no rows (docs/replication.md).
CREATE PUBLICATION pub_all FOR ALL TABLES;
RESET client_min_messages;
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 2, 3;
-- Published with an UPDATE/DELETE action, a table without replica identity refuses
-- updates, as heap does.
CREATE TABLE pub_nokey (a int) USING columnar;
SET client_min_messages = error;
CREATE PUBLICATION pub_nokey FOR TABLE pub_nokey;
RESET client_min_messages;
INSERT INTO pub_nokey VALUES (1);
UPDATE pub_nokey SET a = 2;
DELETE FROM pub_nokey;
DROP PUBLICATION pub_one, pub_two, pub_heap_only, pub_all, pub_nokey;
DROP TABLE pub_col, pub_heap, pub_nokey;
DROP EXTENSION pgcolumnar;
