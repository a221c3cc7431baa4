-- EXPLAIN ANALYZE of parallel ColumnarScan and ColumnarAgg shows the counts of every
-- participant (leader and workers), as core's nodes show every participant's rows: the
-- totals equal the serial plan's, however many workers ran and whichever row groups
-- each took. The leader does not take part here, so that the workers' counts are all
-- there is.
CREATE EXTENSION pgcolumnar;
CREATE TABLE pe_col (id int, g int, v float8) USING columnar;
INSERT INTO pe_col SELECT i, i % 50, (i % 1000) / 10.0 FROM generate_series(1, 400000) i;
CREATE TABLE pe_dim (id int PRIMARY KEY, keep bool);
INSERT INTO pe_dim SELECT i, i % 4 = 0 FROM generate_series(0, 49) i;
ANALYZE pe_col, pe_dim;

-- The scan node's line (without its per-loop figures) and its counts (not Groups: a
-- partial fold's are the groups each participant sends, summed).
CREATE FUNCTION pe_counts(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ '(Custom Scan \(PgColumnar|Rows Folded|Row Groups (Read|Skipped)|Vectors (Read|Folded|Skipped)|Rows Removed by (Pushed|Join) Filter|Bytes Read)' THEN
      RETURN NEXT regexp_replace(regexp_replace(line, ' \(actual.*$', ''), '^\s*(->\s+)?(Parallel )?', '');
    END IF;
  END LOOP;
END $$;

CREATE FUNCTION pe_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;

-- Every count of `q`'s parallel plan against its serial plan's: 'same' or the lines
-- that differ. With `leader`, the leader takes part.
CREATE FUNCTION pe_same(q text, leader bool DEFAULT false) RETURNS text LANGUAGE plpgsql AS $$
DECLARE serial text[]; parallel text[]; plan text;
BEGIN
  SET LOCAL max_parallel_workers_per_gather = 0;
  serial := ARRAY(SELECT pe_counts(q));
  SET LOCAL max_parallel_workers_per_gather = 2;
  SET LOCAL parallel_setup_cost = 0;
  SET LOCAL parallel_tuple_cost = 0;
  SET LOCAL min_parallel_table_scan_size = 0;
  SET LOCAL pgcolumnar.parallel_core_scaling = 1;
  -- Else the workers read every row group (the leader would often claim them all first).
  PERFORM set_config('parallel_leader_participation', leader::text, true);
  SELECT string_agg(l, E'\n') INTO plan FROM pe_explain(q) l;
  IF plan NOT LIKE '%Parallel Custom Scan%' THEN
    RETURN 'not parallel: ' || plan;
  END IF;
  parallel := ARRAY(SELECT pe_counts(q));
  IF serial = parallel THEN
    RETURN 'same: ' || array_length(serial, 1) || ' lines';
  END IF;
  RETURN 'serial ' || array_to_string(serial, '; ') || E'\nparallel ' || array_to_string(parallel, '; ');
END $$;

-- The serial counts, for reference.
SET max_parallel_workers_per_gather = 0;
SELECT pe_counts('SELECT count(*), sum(v) FROM pe_col WHERE v > 90');
RESET max_parallel_workers_per_gather;

-- ColumnarAgg: a fold, a grouped fold, a fold every row group of which is read.
SELECT pe_same('SELECT count(*), sum(v) FROM pe_col WHERE v > 90');
SELECT pe_same('SELECT g, max(v), count(*) FROM pe_col WHERE id > 100000 GROUP BY g');
SELECT pe_same('SELECT avg(v) FROM pe_col');
-- With the leader taking part, a ColumnarAgg's workers leave it the last row groups
-- once they would read them in less time than they take to exit (group_claim.rs):
-- still every row group is read once, by someone.
SELECT pe_same('SELECT count(*), sum(v) FROM pe_col WHERE v > 90', leader => true);
SELECT pe_same('SELECT g, max(v), count(*) FROM pe_col WHERE id > 100000 GROUP BY g', leader => true);
-- ColumnarScan under core's Agg, with a pushed filter and with a join filter.
SET pgcolumnar.enable_vector_agg = off;
SELECT pe_same('SELECT count(*), sum(v) FROM pe_col WHERE v > 90');
SET enable_parallel_hash = off;
SET enable_nestloop = off;
SELECT pe_same('SELECT count(*) FROM pe_col c JOIN pe_dim d ON c.g = d.id WHERE d.keep');
RESET ALL;

-- Workers that read a columnar table end without the C library's exit handlers, once
-- PostgreSQL's exit callbacks ran (worker_exit.rs). The same counts with that off; and a
-- worker's ERROR still reaches the leader, which goes on to the next query.
SET pgcolumnar.parallel_worker_quick_exit = off;
SELECT pe_same('SELECT count(*), sum(v) FROM pe_col WHERE v > 90');
SELECT pe_same('SELECT g, max(v), count(*) FROM pe_col WHERE id > 100000 GROUP BY g', leader => true);
RESET pgcolumnar.parallel_worker_quick_exit;
BEGIN;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL pgcolumnar.parallel_core_scaling = 1;
SET LOCAL parallel_leader_participation = off;
SELECT pe_explain('SELECT count(*) FROM pe_col WHERE 1 / (id - 200000) > 0');
SELECT count(*) FROM pe_col WHERE 1 / (id - 200000) > 0;
ROLLBACK;
SELECT pe_same('SELECT avg(v) FROM pe_col');

-- A parallel scan's leader hands its workers the row groups its snapshot sees, their
-- zone maps, the chunk metadata of the scan's columns it has, and the rows deleted
-- (handed_groups.rs): one list is read, the leader's, and every worker is handed it.
-- With the leader's cache warm (the serial run before), no chunk metadata is read at
-- all. The rows equal the serial plan's: with deleted rows (marks, then masks after
-- VACUUM, then both), a sort_by table's order column, row groups whose metadata is kept
-- inline, and an update's new row versions.
-- With `cold`, the parallel plan runs first in the session.
CREATE FUNCTION pe_metadata(q text, cold bool DEFAULT false) RETURNS text LANGUAGE plpgsql AS $$
DECLARE serial text; parallel text; plan text; launched int; lists_read int[]; handed int[]; attached bigint;
BEGIN
  SET LOCAL parallel_setup_cost = 0;
  SET LOCAL parallel_tuple_cost = 0;
  SET LOCAL min_parallel_table_scan_size = 0;
  SET LOCAL pgcolumnar.parallel_core_scaling = 1;
  SET LOCAL parallel_leader_participation = off;
  SET LOCAL max_parallel_workers_per_gather = 2;
  IF cold THEN
    SELECT string_agg(l, E'\n') INTO plan FROM pe_explain_analyze(q) l;
  END IF;
  SET LOCAL max_parallel_workers_per_gather = 0;
  EXECUTE 'SELECT array_agg(r ORDER BY r)::text FROM (' || q || ') r' INTO serial;
  SET LOCAL max_parallel_workers_per_gather = 2;
  EXECUTE 'SELECT array_agg(r ORDER BY r)::text FROM (' || q || ') r' INTO parallel;
  IF NOT cold THEN
    SELECT string_agg(l, E'\n') INTO plan FROM pe_explain_analyze(q) l;
  END IF;
  launched := (regexp_match(plan, 'Workers Launched: (\d+)'))[1]::int;
  -- Per columnar scan of the plan (a Parallel Append has one per partition).
  lists_read := ARRAY(SELECT m[1]::int FROM regexp_matches(plan, 'Row Group Lists Read: (\d+)', 'g') m);
  handed := ARRAY(SELECT m[1]::int FROM regexp_matches(plan, 'Row Group Lists Handed to Workers: (\d+)', 'g') m);
  attached := (SELECT sum(m[1]::int) FROM regexp_matches(plan, 'Row Groups Whose Chunk Metadata Was Read: (\d+)', 'g') m);
  IF coalesce(launched, 0) = 0 OR cardinality(lists_read) = 0 THEN
    RETURN 'no parallel scan ran: ' || plan;
  END IF;
  RETURN format('rows %s; lists read by %s, handed to every worker %s; chunk metadata read %s%s',
                CASE WHEN serial IS NOT DISTINCT FROM parallel THEN 'same' ELSE serial || ' <> ' || parallel END,
                CASE WHEN 1 = ALL(lists_read) THEN 'the leader'
                     WHEN launched + 1 = ALL(lists_read) THEN 'every participant'
                     ELSE lists_read::text END,
                launched = ALL(handed), attached,
                CASE WHEN cardinality(lists_read) > 1 THEN format(' (%s scans)', cardinality(lists_read)) ELSE '' END);
END $$;
CREATE FUNCTION pe_explain_analyze(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q;
END $$;
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_col WHERE v > 90');
SELECT pe_metadata('SELECT g, max(v), count(*) FROM pe_col WHERE id > 100000 GROUP BY g');
SET pgcolumnar.enable_vector_agg = off;
SELECT pe_metadata('SELECT id, v FROM pe_col WHERE v > 99.5');
RESET pgcolumnar.enable_vector_agg;
DELETE FROM pe_col WHERE id % 7 = 0;
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_col WHERE v > 90');
VACUUM pe_col;
DELETE FROM pe_col WHERE id % 11 = 0;
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_col WHERE v > 90');
UPDATE pe_col SET v = v + 1000 WHERE id % 13 = 0;
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_col');
CREATE TABLE pe_sorted (id int, g int, v float8) USING columnar WITH (sort_by = 'g, id');
INSERT INTO pe_sorted SELECT i, i % 50, i / 10.0 FROM generate_series(1, 300000) i;
DELETE FROM pe_sorted WHERE id % 5 = 0;
SELECT pe_metadata('SELECT g, sum(id), count(*) FROM pe_sorted WHERE v > 20000 GROUP BY g');
SET pgcolumnar.enable_vector_agg = off;
SELECT pe_metadata('SELECT id, g FROM pe_sorted WHERE v BETWEEN 100 AND 100.5');
RESET pgcolumnar.enable_vector_agg;
-- Small row groups keep their chunk metadata inline in their row_group rows.
CREATE TABLE pe_small (id int, v float8) USING columnar;
DO $$ BEGIN FOR i IN 1..40 LOOP INSERT INTO pe_small SELECT i * 5000 + j, j FROM generate_series(1, 5000) j; END LOOP; END $$;
SELECT count(*) AS groups, count(*) FILTER (WHERE chunks IS NOT NULL) AS inline
  FROM pgcolumnar.row_group WHERE storage_id = (SELECT max(storage_id) FROM pgcolumnar.row_group);
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_small WHERE v > 50');
-- A column added with a default after some row groups were written (theirs read the
-- default), and one dropped.
CREATE TABLE pe_alt (id int, v float8, d text) USING columnar;
INSERT INTO pe_alt SELECT i, i % 1000, 'x' || i FROM generate_series(1, 300000) i;
ALTER TABLE pe_alt ADD COLUMN w int DEFAULT 7;
ALTER TABLE pe_alt DROP COLUMN d;
INSERT INTO pe_alt SELECT i, i % 1000, i % 3 FROM generate_series(300001, 500000) i;
ANALYZE pe_alt;
SELECT pe_metadata('SELECT w, count(*), sum(id) FROM pe_alt WHERE v > 100 GROUP BY w');
-- The first query of a new connection: what the leader has of the chunk metadata (what
-- planning read) is handed, the rest read as row groups are reached.
\c
SELECT regexp_replace(pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_col WHERE v > 90', cold => true),
                      'read \d+$', 'read N');
-- Under a Parallel Append, each partition's scan hands its own (a heap partition
-- beside them).
CREATE TABLE pe_part (id int, g int, v float8) PARTITION BY RANGE (id);
CREATE TABLE pe_part_1 PARTITION OF pe_part FOR VALUES FROM (0) TO (200000) USING columnar;
CREATE TABLE pe_part_2 PARTITION OF pe_part FOR VALUES FROM (200000) TO (400000) USING columnar;
CREATE TABLE pe_part_3 PARTITION OF pe_part FOR VALUES FROM (400000) TO (600000);
INSERT INTO pe_part SELECT i, i % 50, (i % 1000) / 10.0 FROM generate_series(0, 599999) i;
DELETE FROM pe_part WHERE id % 9 = 0;
ANALYZE pe_part;
SET pgcolumnar.enable_vector_agg = off;
SELECT pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_part WHERE v > 50');
RESET pgcolumnar.enable_vector_agg;
-- Past 4 MB (here 600,000 deleted rows), each worker reads the metadata itself.
CREATE TABLE pe_big (id int, v float8) USING columnar;
INSERT INTO pe_big SELECT i, i FROM generate_series(1, 600000) i;
DELETE FROM pe_big WHERE id > 10;
SELECT regexp_replace(pe_metadata('SELECT count(*), sum(id), max(v) FROM pe_big'), 'read \d+$', 'read N');
DROP TABLE pe_sorted, pe_small, pe_big, pe_part, pe_alt;
DROP FUNCTION pe_metadata(text, bool), pe_explain_analyze(text);

DROP FUNCTION pe_same(text, bool), pe_counts(text), pe_explain(text);
DROP TABLE pe_col, pe_dim;
DROP EXTENSION pgcolumnar;
