-- A vector whose every GROUP BY key holds one value (its zone map's min = max: a table
-- sorted by its keys with sort_by, TimescaleDB's segmentby) is one group: ColumnarAgg
-- folds it there without decoding or hashing the keys per row. EXPLAIN ANALYZE counts
-- such vectors as "Vectors of One Group". Results are checked against core's Agg and
-- against heap.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET client_min_messages = warning;

-- 12 hosts of 5000 readings each, then 40 rows of a NULL host; sorted by host, time.
CREATE TABLE sg_heap AS
SELECT CASE WHEN i < 60000 THEN 'host_' || lpad((i / 5000)::text, 2, '0') END AS host,
       CASE WHEN i < 60000 THEN (i / 5000) % 4 END AS rack,
       CASE WHEN i < 60000 THEN ('r' || (i / 5000) % 3)::char(4) END AS zone,
       timestamp '2026-01-01' + (i % 5000) * interval '10 s' AS t,
       (i % 5000) * 0.25 + (i / 5000) AS v,
       (i * 7) % 1000 AS n
  FROM generate_series(0, 60039) i;
CREATE TABLE sg (LIKE sg_heap) USING columnar WITH (sort_by = 'host, t');
INSERT INTO sg SELECT * FROM sg_heap ORDER BY random();
ANALYZE sg, sg_heap;

CREATE FUNCTION sg_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%Custom Scan (PgColumnarAgg)%' THEN 'fold' ELSE 'core' END;
END $$;
CREATE FUNCTION sg_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', ' | ', q) INTO r;
  RETURN coalesce(r, '(no rows)');
END $$;
CREATE FUNCTION sg_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE folded text; core text; heap text; plan text := sg_plan(q);
BEGIN
  folded := sg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'off', false);
  core := sg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'on', false);
  heap := sg_rows(replace(q, 'FROM sg', 'FROM sg_heap'));
  IF folded IS DISTINCT FROM core OR folded IS DISTINCT FROM heap THEN
    RETURN plan || ': DIFFERENT' || E'\n fold: ' || folded || E'\n core: ' || core || E'\n heap: ' || heap;
  END IF;
  RETURN plan || ': same';
END $$;
-- The EXPLAIN ANALYZE lines matching `pattern`.
CREATE FUNCTION sg_explain(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ pattern THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END $$;

-- A text key: 30 vectors, 18 of them one host's (the others hold two hosts, or the
-- NULL host's rows and a host's).
SELECT sg_check('SELECT host, count(*), sum(v), min(t), max(n), avg(n) FROM sg GROUP BY host');
SELECT sg_explain('SELECT host, count(*), sum(v), min(t), max(n) FROM sg GROUP BY host',
                  'PgColumnarAgg|Groups|Vectors');
-- An integer key, several keys, keys in another order than the sort. A bpchar key
-- has no byte-wise zone map (its equality ignores trailing spaces): its vectors go
-- row by row.
SELECT sg_check('SELECT rack, count(*), sum(n) FROM sg GROUP BY rack');
SELECT sg_check('SELECT host, zone, rack, count(*), max(v) FROM sg GROUP BY host, zone, rack');
SELECT sg_check('SELECT zone, host, count(n), sum(v) FROM sg GROUP BY zone, host');
SELECT sg_explain('SELECT rack, host, count(n) FROM sg GROUP BY rack, host', 'Vectors of One Group');
SELECT count(*) AS lines FROM sg_explain('SELECT zone, host, count(n) FROM sg GROUP BY zone, host', 'Vectors of One Group');
-- A key whose vectors hold many values keeps the per-row path.
SELECT sg_check('SELECT n % 7 AS m, count(*) FROM sg GROUP BY n % 7');
SELECT count(*) AS lines FROM sg_explain('SELECT n, count(*) FROM sg GROUP BY n', 'Vectors of One Group');
-- With a pushed filter (some vectors lose rows, stay one group), HAVING, FILTER,
-- count(DISTINCT), and a filter that leaves a vector no row.
SELECT sg_check('SELECT host, count(*), sum(v) FROM sg WHERE n < 300 GROUP BY host HAVING count(*) > 1400');
SELECT sg_check('SELECT host, count(*) FILTER (WHERE n > 500), count(DISTINCT n % 10) FROM sg GROUP BY host');
SELECT sg_check($$SELECT host, count(*) FROM sg WHERE t < '2026-01-01 00:00:30' GROUP BY host$$);
SELECT sg_explain($$SELECT host, count(*) FROM sg WHERE t < '2026-01-01 00:00:30' GROUP BY host$$,
                  'Vectors|Groups');
-- Deleted rows and rows added later in another row group (not sorted with the first).
DELETE FROM sg WHERE n = 3;
DELETE FROM sg_heap WHERE n = 3;
INSERT INTO sg SELECT 'host_05', 1, 'r2', t, v, n FROM sg_heap WHERE host = 'host_06' AND n < 100;
INSERT INTO sg_heap SELECT 'host_05', 1, 'r2', t, v, n FROM sg_heap WHERE host = 'host_06' AND n < 100;
SELECT sg_check('SELECT host, rack, count(*), sum(n), min(v) FROM sg GROUP BY host, rack');
-- A long key (over the zone map's 31 bytes: bounds differ, so per row).
CREATE TABLE sg_long (k text, i int) USING columnar WITH (sort_by = 'k');
INSERT INTO sg_long SELECT repeat('x', 40) || (i / 3000), i FROM generate_series(1, 9000) i;
SELECT k, count(*), sum(i) FROM sg_long GROUP BY k ORDER BY k;
SELECT count(*) AS lines FROM sg_explain('SELECT k, count(*) FROM sg_long GROUP BY k', 'Vectors of One Group');
-- 100 groups of two whole vectors each, each group's max(s) 2 kB long, under a small
-- work_mem.
CREATE TABLE sg_many (g int, i int, s text) USING columnar WITH (sort_by = 'g');
INSERT INTO sg_many
SELECT i / 4096, i, CASE WHEN i % 4096 = 7 THEN repeat('x', 2000) || i ELSE 'a' END
  FROM generate_series(0, 409599) i;
SET work_mem = '64kB';
SELECT count(*) AS groups, sum(c) AS rows, sum(s) = sum((4096 * g + 2047.5) * 4096)::numeric AS sums_right,
       bool_and(m = repeat('x', 2000) || (4096 * g + 7)) AS maxes_right
  FROM (SELECT g, count(*) AS c, sum(i) AS s, max(s) AS m FROM sg_many GROUP BY g) x;
SELECT line FROM sg_explain('SELECT g, count(*), sum(i), max(s) FROM sg_many GROUP BY g',
                            'PgColumnarAgg|Passes|Vectors of One') line;
RESET work_mem;

DROP TABLE sg, sg_heap, sg_long, sg_many;
DROP FUNCTION sg_plan, sg_rows, sg_check, sg_explain;
DROP EXTENSION pgcolumnar;
