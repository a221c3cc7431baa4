-- pgcolumnar.table_stats: one row per columnar table the role may read.
CREATE EXTENSION pgcolumnar;
CREATE ROLE regress_ts_owner;
CREATE ROLE regress_ts_reader;
CREATE ROLE regress_ts_nobody;
GRANT CREATE ON SCHEMA public TO regress_ts_owner;
SET ROLE regress_ts_owner;
CREATE TABLE ts_one (id int, name text, v float8) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO ts_one SELECT g, 'name ' || (g % 10), g / 4.0 FROM generate_series(1, 150000) g;
INSERT INTO ts_one VALUES (0, 'trickle', 0);
INSERT INTO ts_one VALUES (-1, 'trickle', 0);
DELETE FROM ts_one WHERE id % 10 = 0;
CREATE TABLE ts_empty (id int) USING columnar;
CREATE TABLE ts_heap (id int);
GRANT SELECT ON ts_one TO regress_ts_reader;
-- 150,000 rows: a full row group and one of 47,600; two one-row groups; 15,001
-- deleted rows (VACUUM has not folded them: marks).
SELECT relation, row_groups, small_row_groups, rows, deleted_rows, round(deleted_fraction::numeric, 4) AS deleted_fraction,
       stored_bytes > 0 AS stored, compression_ratio > 1 AS compressed,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(column_bytes) k) AS columns,
       (SELECT sum(v::bigint) FROM jsonb_each_text(column_bytes) AS e(k, v)) <= stored_bytes AS columns_within_stored,
       last_vacuum IS NULL AS never_vacuumed
  FROM pgcolumnar.table_stats ORDER BY relation::text;
-- VACUUM folds the deletes and frees the group whose one row is deleted; the small
-- group of 42,840 live rows stays beside the one-row group (it is larger: merge_policy).
VACUUM ts_one;
SELECT relation, row_groups, small_row_groups, rows - deleted_rows AS live, last_vacuum IS NOT NULL AS vacuumed
  FROM pgcolumnar.table_stats WHERE relation = 'ts_one'::regclass;
-- Dropped columns are left out.
ALTER TABLE ts_one DROP COLUMN v;
SELECT relation, (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(column_bytes) k) AS columns
  FROM pgcolumnar.table_stats WHERE relation = 'ts_one'::regclass;
RESET ROLE;
-- A role sees the tables it may SELECT from; one that may read none sees no row (and
-- no error), as does a direct call on a table it may not read or one not columnar.
SET ROLE regress_ts_reader;
SELECT relation, rows FROM pgcolumnar.table_stats;
SELECT count(*) FROM pgcolumnar.table_summary('ts_empty'::regclass);
RESET ROLE;
SET ROLE regress_ts_nobody;
SELECT count(*) FROM pgcolumnar.table_stats;
RESET ROLE;
SELECT count(*) FROM pgcolumnar.table_summary('ts_heap'::regclass);
-- This session's temporary tables are listed; partitions are listed one by one.
CREATE TEMP TABLE ts_temp (id int) USING columnar;
INSERT INTO ts_temp VALUES (1), (2);
CREATE TABLE ts_parted (id int) PARTITION BY RANGE (id);
CREATE TABLE ts_part1 PARTITION OF ts_parted FOR VALUES FROM (0) TO (100) USING columnar;
INSERT INTO ts_parted VALUES (5), (6), (7);
SELECT relation, rows FROM pgcolumnar.table_stats WHERE relation::text IN ('ts_temp', 'ts_part1', 'ts_parted') ORDER BY relation::text;
DROP TABLE ts_one, ts_empty, ts_heap, ts_temp, ts_parted;
REVOKE CREATE ON SCHEMA public FROM regress_ts_owner;
DROP ROLE regress_ts_owner, regress_ts_reader, regress_ts_nobody;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
