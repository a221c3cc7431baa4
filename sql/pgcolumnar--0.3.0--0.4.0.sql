-- pgcolumnar 0.3.0 -> 0.4.0: a row group's chunk metadata may sit in its row_group row
-- (src/storage/catalog/inline_chunks.rs): a small row group then costs one metadata row
-- instead of one per column. Existing row groups keep their chunk rows; the library reads
-- both. The definitions are those of a new 0.4.0 install (src/storage/catalog/schema.rs);
-- tests/extension_update.sh checks that an updated install equals a new one.
\echo Use "ALTER EXTENSION pgcolumnar UPDATE TO '0.4.0'" to load this file. \quit

ALTER TABLE pgcolumnar.row_group ADD COLUMN chunks bytea;
-- A row group's zone map per column (src/storage/format/group_zones.rs), for plan-time
-- pruning before any vector directory is read; NULL for row groups written before.
ALTER TABLE pgcolumnar.row_group ADD COLUMN zones bytea;
