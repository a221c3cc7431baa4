-- A small row group's chunk metadata lives in its row_group row (row_group.chunks, from
-- 0.4.0; src/storage/catalog/inline_chunks.rs); larger ones keep one chunk row per column.
CREATE EXTENSION pgcolumnar;
CREATE TABLE ic_small (id int, host text, v float8) USING columnar;
CREATE INDEX ON ic_small (host);
INSERT INTO ic_small VALUES (1, 'a', 1.5);
INSERT INTO ic_small VALUES (2, NULL, 2.5);
INSERT INTO ic_small SELECT g, 'h' || g % 3, g / 4.0 FROM generate_series(3, 100) g;
SELECT max(storage_id) AS small FROM pgcolumnar.row_group \gset
-- Three row groups, each with its metadata inline and no chunk row.
SELECT count(*) AS groups, count(*) FILTER (WHERE chunks IS NOT NULL) AS inline
  FROM pgcolumnar.row_group WHERE storage_id = :small;
SELECT count(*) AS chunk_rows FROM pgcolumnar.chunk WHERE storage_id = :small;
-- Read back through every path: scan, filter, index, aggregate, a new backend.
SELECT count(*), sum(id), count(host), sum(v) FROM ic_small;
SELECT * FROM ic_small WHERE id <= 2 ORDER BY id;
SET enable_seqscan = off;
SELECT id FROM ic_small WHERE host = 'a';
RESET enable_seqscan;
SELECT host, count(*) FROM ic_small GROUP BY host ORDER BY host;
\c
SELECT count(*), sum(id), count(host), sum(v) FROM ic_small;
UPDATE ic_small SET v = -1 WHERE id = 1;
DELETE FROM ic_small WHERE id = 2;
SELECT * FROM ic_small WHERE id <= 2 ORDER BY id;
-- VACUUM merges them (into a group with inline metadata again: it is small).
VACUUM ic_small;
SELECT count(*) AS groups FROM pgcolumnar.row_group WHERE storage_id = :small;
SELECT count(*), sum(id), sum(v) FROM ic_small;
SELECT row_groups, rows, (column_bytes->>'v')::bigint > 0 AS sized FROM pgcolumnar.table_stats
 WHERE relation = 'ic_small'::regclass;
-- A wide table's metadata does not fit: chunk rows, one per column.
SELECT format('CREATE TABLE ic_wide (%s) USING columnar',
              string_agg(format('c%s text', g), ', ')) FROM generate_series(1, 60) g \gexec
INSERT INTO ic_wide (c1, c60) VALUES ('first', 'last');
SELECT max(storage_id) AS wide FROM pgcolumnar.row_group \gset
SELECT chunks IS NULL AS in_chunk_rows FROM pgcolumnar.row_group WHERE storage_id = :wide;
SELECT count(*) AS chunk_rows FROM pgcolumnar.chunk WHERE storage_id = :wide;
SELECT c1, c2, c60 FROM ic_wide;
DROP TABLE ic_small, ic_wide;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
