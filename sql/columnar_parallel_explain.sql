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

DROP FUNCTION pe_same(text, bool), pe_counts(text), pe_explain(text);
DROP TABLE pe_col, pe_dim;
DROP EXTENSION pgcolumnar;
