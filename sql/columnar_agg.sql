-- ColumnarAgg, the batch fold: aggregates folded over vectors inside the scan. Each
-- query is checked three ways (the fold, core's Agg over the same table, and a heap
-- copy), compared exactly as text (floats included: same summation order), and its
-- plan is checked to run the fold, or not, as expected.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- Core's sorted grouping would sum each group's floats in another order.
SET enable_sort = off;
SET timezone = 'UTC';
CREATE TABLE agg_col (id int, g int, k text, ts timestamptz, t timestamp, d date,
                      i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, b bool, n numeric,
                      z int) USING columnar;
INSERT INTO agg_col SELECT i, i % 7,
    CASE WHEN i % 13 = 0 THEN NULL ELSE 'key ' || (i % 5) END,
    timestamptz '2024-03-09 20:00+00' + i * interval '97 seconds',
    timestamp '2023-12-30' + i * interval '11 minutes',
    date '2024-01-01' + i % 400,
    CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 3000 - 1500) END,
    i * 37 % 100000 - 50000,
    CASE WHEN i % 19 = 0 THEN NULL ELSE i::int8 * 1000003 END,
    (i % 1000) / 7.0,
    CASE WHEN i % 23 = 0 THEN NULL ELSE sin(i) * 1000 END,
    CASE WHEN i % 29 = 0 THEN NULL ELSE i % 3 <> 0 END,
    i / 3.0,
    CASE WHEN i % 7 = 3 THEN NULL ELSE i END
  FROM generate_series(1, 30000) i;
CREATE TABLE agg_heap AS SELECT * FROM agg_col;
ANALYZE agg_col, agg_heap;

-- 'fold' / 'parallel fold' if a ColumnarAgg runs the query, else 'core'.
CREATE FUNCTION agg_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%Parallel Custom Scan (PgColumnarAgg)%' THEN 'parallel fold'
              WHEN plan LIKE '%Custom Scan (PgColumnarAgg)%' THEN 'fold'
              ELSE 'core' END;
END $$;
-- The query's rows as text, sorted.
CREATE FUNCTION agg_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', ' | ', q) INTO r;
  RETURN coalesce(r, '(no rows)');
END $$;
-- How the query runs, and whether the fold, core's Agg and heap agree.
CREATE FUNCTION agg_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE folded text; core text; heap text; plan text := agg_plan(q);
BEGIN
  folded := agg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'off', false);
  core := agg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'on', false);
  heap := agg_rows(replace(q, 'agg_col', 'agg_heap'));
  IF folded IS DISTINCT FROM core OR folded IS DISTINCT FROM heap THEN
    RETURN plan || ': DIFFERENT' || E'\n fold: ' || folded || E'\n core: ' || core || E'\n heap: ' || heap;
  END IF;
  RETURN plan || ': same';
END $$;

-- The lines of the query's EXPLAIN ANALYZE that match `pattern`.
CREATE FUNCTION agg_explain(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ pattern THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END $$;

-- Without GROUP BY: every type and aggregate the fold takes.
SELECT agg_check('SELECT count(*) FROM agg_col');
SELECT agg_check('SELECT count(*), count(i4), count(f8), count(k), sum(i2), sum(i4), sum(i8), avg(i2), avg(i4), avg(i8) FROM agg_col');
SELECT agg_check('SELECT sum(f4), sum(f8), avg(f4), avg(f8), min(f4), max(f4), min(f8), max(f8) FROM agg_col');
SELECT agg_check('SELECT min(d), max(d), min(ts), max(ts), min(t), max(t), min(i8), max(i2), min(z), max(z) FROM agg_col');
SELECT agg_check('SELECT min(k), max(k), bool_and(b), bool_or(b), every(b) FROM agg_col');
SELECT agg_check('SELECT count(*), sum(f8), min(k) FROM agg_col WHERE i4 > 100 AND k IN (''key 1'', ''key 3'')');
SELECT agg_check('SELECT count(*), avg(f8) FROM agg_col WHERE f8 > 500 OR f8 IS NULL');
SELECT agg_check('SELECT sum(i4) / count(*), max(f8) + 1, min(k) || ''!'' FROM agg_col');
-- No row passes: one row of empty aggregates without GROUP BY, no rows with.
SELECT agg_check('SELECT count(*), sum(i4), avg(f8), min(k), bool_and(b) FROM agg_col WHERE i4 < -60000');
SELECT agg_check('SELECT g, count(*) FROM agg_col WHERE i4 < -60000 GROUP BY g');
-- Float min/max from zone maps, but for a zero extreme: -0 and 0 tie, and core keeps
-- the later one.
CREATE TABLE agg_col_zero (x float8, y float4) USING columnar;
INSERT INTO agg_col_zero VALUES (0, '-0'), ('-0', 0), (-5, -5), (-1, 'NaN'), (NULL, NULL);
CREATE TABLE agg_heap_zero AS SELECT * FROM agg_col_zero;
SELECT agg_check('SELECT max(x), min(y), min(x), max(y) FROM agg_col_zero WHERE x IS NOT NULL OR x IS NULL');
SELECT agg_check('SELECT max(x), min(y), min(x), max(y) FROM agg_col_zero');
SELECT agg_check('SELECT max(x) FROM agg_col_zero WHERE x <= 0');
DROP TABLE agg_col_zero, agg_heap_zero;
SELECT agg_explain('SELECT min(f8), max(f4), count(*) FROM agg_col', 'Strategy|Vectors');
-- numeric sums and averages are exact: every scale, both signs, NaN and infinities.
SELECT agg_check('SELECT sum(n), avg(n), count(n) FROM agg_col');
CREATE TABLE agg_col_num (g int, v numeric, w numeric(30,10)) USING columnar;
INSERT INTO agg_col_num SELECT i % 5,
    CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 123.4567) * (CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END) END,
    (i::numeric ^ 5) / 7
  FROM generate_series(1, 5000) i;
INSERT INTO agg_col_num VALUES (7, 'NaN', 1), (8, 'Infinity', 1), (8, '1e100', 2),
    (9, '-Infinity', 3), (9, 'Infinity', 4), (10, 1e-30, 0), (10, -1e-30, 0), (11, NULL, NULL);
CREATE TABLE agg_heap_num AS SELECT * FROM agg_col_num;
SELECT agg_check('SELECT sum(v), avg(v), sum(w), avg(w), count(v) FROM agg_col_num WHERE g < 5');
SELECT agg_check('SELECT g, sum(v), avg(v), sum(w), avg(w) FROM agg_col_num GROUP BY g');
SELECT agg_check('SELECT sum(v) FILTER (WHERE g = 1), avg(w) FILTER (WHERE g > 100) FROM agg_col_num');
SELECT agg_check('SELECT sum(v), avg(v) FROM agg_col_num');
DROP TABLE agg_col_num, agg_heap_num;
-- Text min/max compare in the column's collation.
SELECT agg_check('SELECT min(k COLLATE "C"), max(k COLLATE "C") FROM agg_col');

-- GROUP BY columns, time buckets, several keys, NULL keys.
SELECT agg_check('SELECT g, count(*), sum(f8), avg(i4), max(k), min(ts) FROM agg_col GROUP BY g');
SELECT agg_check('SELECT k, count(*), sum(i8), avg(f4), bool_or(b) FROM agg_col GROUP BY k');
SELECT agg_check('SELECT date_trunc(''day'', ts), k, count(*), avg(f8) FROM agg_col GROUP BY 1, 2');
SELECT agg_check('SELECT date_trunc(''hour'', ts) h, max(f8) FROM agg_col WHERE ts < ''2024-03-11'' GROUP BY h');
SELECT agg_check('SELECT date_trunc(''month'', t), date_trunc(''week'', t), sum(i4) FROM agg_col GROUP BY 1, 2');
SELECT agg_check('SELECT date_bin(''15 minutes'', ts, ''2024-01-01 00:07''), count(*), sum(f8) FROM agg_col GROUP BY 1');
SELECT agg_check('SELECT date_bin(''1 day 2 hours'', t, ''2000-01-01''), min(f8) FROM agg_col GROUP BY 1');
SELECT agg_check('SELECT b, d, count(*), max(i2) FROM agg_col GROUP BY b, d');
SELECT agg_check('SELECT g, k, b, i2 % 2 = 0, count(*) FROM agg_col GROUP BY g, k, b, i2 % 2 = 0');
SELECT agg_check('SELECT g, k, b, d, count(*), sum(f8) FROM agg_col GROUP BY g, k, b, d');
SELECT agg_check('SELECT g, id, count(*) FROM agg_col WHERE id < 50 GROUP BY g, id');
-- A column whose only values in a group are NULL.
SELECT agg_check('SELECT g, sum(z), avg(z), min(z), count(z) FROM agg_col WHERE g = 3 GROUP BY g');
-- HAVING, FILTER, ORDER BY and LIMIT above, expressions of aggregates.
SELECT agg_check('SELECT g, sum(i4) FROM agg_col GROUP BY g HAVING sum(i4) > 1000 AND count(*) > 2');
SELECT agg_check('SELECT g, count(*) FILTER (WHERE i4 > 10), sum(f8) FILTER (WHERE k = ''key 1''), avg(f8) FILTER (WHERE b) FROM agg_col GROUP BY g');
SELECT agg_check('SELECT count(*) FILTER (WHERE i2 IS NULL), max(k) FILTER (WHERE i4 BETWEEN 0 AND 10000) FROM agg_col WHERE g <> 2');
SELECT agg_check('SELECT * FROM (SELECT g, max(f8) m FROM agg_col GROUP BY g ORDER BY m DESC, g LIMIT 3) s');
SELECT agg_check('SELECT g, sum(i4) * 2 + count(*), max(f8) - min(f8) FROM agg_col GROUP BY g');

-- Through a view (there the table is not the query's first range table entry).
CREATE VIEW agg_col_v AS SELECT g, count(*) AS n, sum(i4) AS total, max(k) AS top FROM agg_col WHERE i2 > 0 GROUP BY g;
CREATE VIEW agg_heap_v AS SELECT g, count(*) AS n, sum(i4) AS total, max(k) AS top FROM agg_heap WHERE i2 > 0 GROUP BY g;
SELECT agg_check('SELECT * FROM agg_col_v');
EXPLAIN (COSTS OFF) SELECT * FROM agg_col_v WHERE g < 3;
DROP VIEW agg_col_v, agg_heap_v;

-- count(DISTINCT) of a column is folded (columnar_count_distinct has the rest).
SELECT agg_check('SELECT count(DISTINCT i4) FROM agg_col');
-- So are `%` in a filter and an arithmetic group key (columnar_expr_keys has the rest).
SELECT agg_check('SELECT count(*) FROM agg_col WHERE i4 % 7 > 5');
SELECT agg_check('SELECT i4 % 10, count(*) FROM agg_col GROUP BY 1');
-- Shapes the fold does not compute exactly go to core's Agg, decided at plan time.
SELECT agg_check('SELECT sum(DISTINCT i4) FROM agg_col');
SELECT agg_check('SELECT string_agg(k, '','' ORDER BY id) FROM agg_col WHERE id < 10');
SELECT agg_check('SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY i4) FROM agg_col');
SELECT agg_check('SELECT g, count(*) FROM agg_col GROUP BY ROLLUP (g)');
SELECT agg_check('SELECT count(*) FROM agg_col WHERE random() >= 0');
SELECT agg_check('SELECT f8, count(*) FROM agg_col WHERE id < 100 GROUP BY f8');
SELECT agg_check('SELECT max(f8 / 2) FROM agg_col');
SELECT agg_check('SELECT max(sqrt(abs(f8))) FROM agg_col');
SELECT agg_check('SELECT date_trunc(''month'', d), count(*) FROM agg_col GROUP BY 1');
CREATE AGGREGATE my_sum (int4) (sfunc = int4pl, stype = int4);
SELECT agg_check('SELECT my_sum(i4) FROM agg_col WHERE i4 BETWEEN 0 AND 100');
DROP AGGREGATE my_sum (int4);
-- A float overflow raises core's error.
CREATE TABLE agg_big (x float8) USING columnar;
INSERT INTO agg_big VALUES (1e308), (1e308);
SELECT agg_plan('SELECT sum(x) FROM agg_big');
SELECT sum(x) FROM agg_big;
SELECT avg(x) FROM agg_big;
DROP TABLE agg_big;

-- date_trunc on timestamptz in zones with changing offsets (the fold asks PostgreSQL
-- where arithmetic cannot answer) and with a fixed one.
SET timezone = 'America/New_York';
SELECT agg_check('SELECT date_trunc(''day'', ts), count(*), sum(f8) FROM agg_col GROUP BY 1');
SET timezone = 'Asia/Kolkata';
SELECT agg_check('SELECT date_trunc(''hour'', ts), count(*) FROM agg_col GROUP BY 1');
SET timezone = '+05:30';
SELECT agg_check('SELECT date_trunc(''hour'', ts), date_trunc(''month'', ts), count(*) FROM agg_col GROUP BY 1, 2');
SET timezone = 'UTC';

-- Past work_mem: a serial fold rescans the table in passes, each folding the groups of
-- one share of the key hashes (here the planner, without statistics, expected 200
-- groups); a partial fold flushes its groups early. Results stay exact.
CREATE TABLE agg_col_many (k int, t text, f float8) USING columnar;
INSERT INTO agg_col_many SELECT i, 'key ' || (i * 7 % 40000), sin(i) FROM generate_series(1, 60000) i;
CREATE TABLE agg_heap_many AS SELECT * FROM agg_col_many;
SET work_mem = '64kB';
SELECT agg_check('SELECT k, count(*), sum(f) FROM agg_col_many GROUP BY k');
SELECT agg_check('SELECT t, count(*), sum(f), max(k) FROM agg_col_many GROUP BY t');
SELECT agg_check('SELECT k, t, sum(f) FROM agg_col_many WHERE k > 1000 GROUP BY k, t');
SELECT agg_explain('SELECT t, count(*), sum(f) FROM agg_col_many GROUP BY t', 'ColumnarAgg|  Groups|Passes');
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT agg_check('SELECT t, count(*), round(sum(f)::numeric, 6), max(k) FROM agg_col_many GROUP BY t');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
-- With statistics, the planner prices the passes (EXPLAIN VERBOSE: Estimated Passes).
ANALYZE agg_col_many, agg_heap_many;
SELECT agg_check('SELECT t, count(*), sum(f) FROM agg_col_many GROUP BY t');
RESET work_mem;
DROP TABLE agg_col_many, agg_heap_many;

-- EXPLAIN shows what the fold did.
EXPLAIN (COSTS OFF) SELECT date_trunc('hour', ts), k, avg(f8) FROM agg_col WHERE i4 > 0 GROUP BY 1, 2;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*), min(i4), max(ts) FROM agg_col;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*), sum(f8) FROM agg_col WHERE id > 20000;
-- The settings turn it off.
SET pgcolumnar.enable_grouped_vector_agg = off;
SELECT agg_plan('SELECT g, count(*) FROM agg_col GROUP BY g'), agg_plan('SELECT count(*) FROM agg_col');
RESET pgcolumnar.enable_grouped_vector_agg;
SET pgcolumnar.enable_vector_agg = off;
SELECT agg_plan('SELECT count(*) FROM agg_col');
RESET pgcolumnar.enable_vector_agg;

-- After DELETE and UPDATE: deleted rows never count. (Heap keeps updated rows in
-- place where columnar appends them: float sums are compared rounded from here on.)
DELETE FROM agg_col WHERE id % 10 = 1;
DELETE FROM agg_heap WHERE id % 10 = 1;
UPDATE agg_col SET f8 = f8 + 1, k = 'updated' WHERE id % 100 = 5;
UPDATE agg_heap SET f8 = f8 + 1, k = 'updated' WHERE id % 100 = 5;
SELECT agg_check('SELECT count(*), min(i4), max(id), round(sum(f8)::numeric, 6) FROM agg_col');
SELECT agg_check('SELECT k, count(*), round(sum(f8)::numeric, 6) FROM agg_col GROUP BY k');

-- Rescans: inside a correlated subquery (new parameter each time), and a prepared
-- statement, with custom and generic plans.
SELECT agg_check('SELECT o.g, (SELECT count(*) FROM agg_col c WHERE c.g = o.g), (SELECT round(sum(f8)::numeric, 6) FROM agg_col c WHERE c.i4 > o.g * 1000) FROM generate_series(1, 3) o(g)');
PREPARE folded(int) AS SELECT count(*), round(sum(f8)::numeric, 6), max(k) FROM agg_col WHERE i4 > $1;
EXECUTE folded(10);
EXECUTE folded(20000);
EXECUTE folded(10);
EXECUTE folded(10);
EXECUTE folded(10);
EXPLAIN (COSTS OFF) EXECUTE folded(10);
EXECUTE folded(20000);
SELECT count(*), round(sum(f8)::numeric, 6), max(k) FROM agg_heap WHERE i4 > 20000;
DEALLOCATE folded;
-- A cursor over the groups.
BEGIN;
DECLARE groups CURSOR FOR SELECT g, count(*) FROM agg_col GROUP BY g ORDER BY g;
FETCH 2 FROM groups;
FETCH 2 FROM groups;
COMMIT;

-- A role that may read the table reads it through the fold; row-level security
-- policies apply (a leakproof policy qual is evaluated in the scan).
CREATE ROLE agg_reader;
GRANT SELECT ON agg_col, agg_heap TO agg_reader;
ALTER TABLE agg_col ENABLE ROW LEVEL SECURITY;
ALTER TABLE agg_heap ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_some ON agg_col FOR SELECT USING (g < 3);
CREATE POLICY only_some ON agg_heap FOR SELECT USING (g < 3);
SET ROLE agg_reader;
SELECT agg_check('SELECT g, count(*), round(sum(f8)::numeric, 6) FROM agg_col GROUP BY g');
SELECT agg_check('SELECT count(*), max(k) FROM agg_col');
RESET ROLE;
ALTER TABLE agg_col DISABLE ROW LEVEL SECURITY;
ALTER TABLE agg_heap DISABLE ROW LEVEL SECURITY;

-- In parallel: Finalize Aggregate over a Gather of partial ColumnarAggs, whose output
-- is each aggregate's transition state. Floats are summed in another order there, as
-- in core's parallel aggregate, so they are compared rounded.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF) SELECT g, count(*), avg(f8), sum(i4), avg(i2) FROM agg_col GROUP BY g;
SELECT agg_plan('SELECT count(*), sum(i4), avg(i4), min(k), max(ts), bool_and(b) FROM agg_col WHERE g > 1');
SELECT agg_check('SELECT count(*), sum(i4), avg(i4), min(k), max(ts), bool_and(b), round(avg(f8)::numeric, 6), round(sum(f4)::numeric, 3) FROM agg_col WHERE g > 1');
SELECT agg_check('SELECT g, k, count(*), sum(i2), avg(i2), round(avg(f8)::numeric, 6), max(f8) FROM agg_col GROUP BY g, k HAVING count(*) > 1');
-- sum/avg over int8 keep an internal state (a 128-bit sum and a count): the partial
-- ColumnarAgg emits it as int8_avg_serialize does, and core's deserialize and combine
-- functions read it.
SELECT agg_check('SELECT sum(i8), avg(i8), count(i8) FROM agg_col');
SELECT agg_check('SELECT g, sum(i8), avg(i8), min(i8) FROM agg_col GROUP BY g');
-- So do numeric sums and averages (numeric_avg_serialize's bytes); numeric addition
-- does not depend on the order, so these compare exactly.
SELECT agg_check('SELECT sum(n), avg(n), count(n) FROM agg_col WHERE g > 1');
SELECT agg_check('SELECT g, sum(n), avg(n) FROM agg_col GROUP BY g');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;


-- Partitions and inheritance: the parent's aggregate runs on core's Agg over an
-- Append; a partition queried alone folds.
CREATE TABLE agg_parts (g int, f float8) PARTITION BY RANGE (g);
CREATE TABLE agg_part1 PARTITION OF agg_parts FOR VALUES FROM (0) TO (4) USING columnar;
CREATE TABLE agg_part2 PARTITION OF agg_parts FOR VALUES FROM (4) TO (10) USING columnar;
INSERT INTO agg_parts SELECT g, f8 FROM agg_heap;
SELECT agg_plan('SELECT g, sum(f) FROM agg_parts GROUP BY g'), agg_plan('SELECT g, sum(f) FROM agg_part2 GROUP BY g');
SELECT (SELECT agg_rows('SELECT g, count(*), round(sum(f)::numeric, 6) FROM agg_parts GROUP BY g')) =
       (SELECT agg_rows('SELECT g, count(*), round(sum(f8)::numeric, 6) FROM agg_heap GROUP BY g')) AS partitions_agree;
-- EXPLAIN deparses the aggregates, keys and pushed filter at EXPLAIN time, from the
-- plan: right for a relation that is not the query's first range table entry (the
-- second arm of a UNION, a subquery, a view), with or without VERBOSE.
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT g, count(*) FROM agg_heap WHERE g > 5 GROUP BY g
UNION ALL
SELECT g, sum(i4 + 1) FILTER (WHERE i4 > 0) FROM agg_col WHERE k = 'key 1' AND f8 < 10 GROUP BY g;
CREATE VIEW agg_view (grp, val) AS SELECT g, f8 FROM agg_col WHERE i4 > -100;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT g, max(f8), count(*) FROM agg_heap WHERE g > 5 GROUP BY g
UNION ALL
SELECT grp, max(val), count(*) FROM agg_view WHERE val > 0 GROUP BY grp;
SELECT agg_check('SELECT g, count(*), max(f8) FROM agg_col WHERE i4 > -100 AND f8 > 0 GROUP BY g');
DROP VIEW agg_view;
RESET max_parallel_workers_per_gather;
CREATE TABLE agg_child () INHERITS (agg_col);
ALTER TABLE agg_child SET ACCESS METHOD columnar;
INSERT INTO agg_child SELECT * FROM agg_heap WHERE id < 100;
SELECT agg_plan('SELECT count(*), sum(i4) FROM agg_col'), agg_plan('SELECT count(*), sum(i4) FROM ONLY agg_col');
SELECT (SELECT count(*) FROM agg_col) = (SELECT count(*) FROM agg_heap) + (SELECT count(*) FROM agg_heap WHERE id < 100)
    AS inheritance_counts_children;
DROP TABLE agg_child;


DROP TABLE agg_parts;
DROP TABLE agg_col, agg_heap;
DROP ROLE agg_reader;
DROP FUNCTION agg_check(text), agg_rows(text), agg_plan(text), agg_explain(text, text);
DROP EXTENSION pgcolumnar;
