-- Columnar tables cannot be published for logical replication (their changes are not
-- decoded): naming one in a publication fails with 0A000 instead of replicating nothing.
-- Citus's non-blocking shard moves and splits publish shards this way (tests/citus).
CREATE EXTENSION pgcolumnar;
CREATE TABLE pub_col (id int, v text) USING columnar;
CREATE TABLE pub_heap (id int, v text);
-- (wal_level's own warning depends on the server's settings.)
SET client_min_messages = error;
CREATE PUBLICATION pub_one FOR TABLE pub_col;
CREATE PUBLICATION pub_two FOR TABLE pub_heap, pub_col;
CREATE PUBLICATION pub_heap_only FOR TABLE pub_heap;
ALTER PUBLICATION pub_heap_only ADD TABLE pub_col;
ALTER PUBLICATION pub_heap_only SET TABLE pub_col;
-- Dropping a table from a publication, and publications of heap tables, are untouched.
ALTER PUBLICATION pub_heap_only DROP TABLE pub_heap;
ALTER PUBLICATION pub_heap_only ADD TABLE pub_heap;
RESET client_min_messages;
SELECT pubname, schemaname, tablename FROM pg_publication_tables ORDER BY 1, 3;
DROP PUBLICATION pub_heap_only;
DROP TABLE pub_col, pub_heap;
DROP EXTENSION pgcolumnar;
