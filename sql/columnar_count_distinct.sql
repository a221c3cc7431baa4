-- count(DISTINCT col) in ColumnarAgg: integers, dates, floats (-0 = 0, NaN = NaN), text,
-- bpchar (trailing spaces do not count), uuid; with GROUP BY, FILTER, HAVING and other
-- aggregates. Each query runs on a columnar table and its heap twin; the plan says
-- whether the fold ran. Types whose equality is not the stored bytes' (numeric, a
-- nondeterministic collation) stay on core's Agg.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cd_col (g int, i int, d date, f float8, r float4, t text, c char(4), u uuid, n numeric)
    USING columnar;
INSERT INTO cd_col SELECT i % 5,
    CASE WHEN i % 7 = 0 THEN NULL ELSE i % 13 END,
    date '2024-01-01' + i % 17,
    (ARRAY[0.0, -0.0, 'NaN', '-NaN', 1.5, NULL]::float8[])[i % 6 + 1],
    (i % 9)::float4 / 4,
    (ARRAY['a', 'a ', 'b', 'B', NULL, 'ab'])[i % 6 + 1],
    (ARRAY['a', 'a  ', 'b', ' b'])[i % 4 + 1],
    ('00000000-0000-0000-0000-00000000000' || (i % 3))::uuid,
    (ARRAY[1.0, 1.00, 2, 2.50, 2.5])[i % 5 + 1]
FROM generate_series(1, 20000) i;
CREATE TABLE cd_heap AS SELECT * FROM cd_col;
ANALYZE cd_col, cd_heap;
EXPLAIN (COSTS OFF)
SELECT g, count(DISTINCT i), count(DISTINCT d), count(DISTINCT f), count(DISTINCT r),
    count(DISTINCT t), count(DISTINCT c), count(DISTINCT u), count(*) FROM cd_col GROUP BY g ORDER BY g;
SELECT g, count(DISTINCT i), count(DISTINCT d), count(DISTINCT f), count(DISTINCT r),
    count(DISTINCT t), count(DISTINCT c), count(DISTINCT u), count(*) FROM cd_col GROUP BY g ORDER BY g;
SELECT g, count(DISTINCT i), count(DISTINCT d), count(DISTINCT f), count(DISTINCT r),
    count(DISTINCT t), count(DISTINCT c), count(DISTINCT u), count(*) FROM cd_heap GROUP BY g ORDER BY g;
-- No GROUP BY; FILTER; a pushed WHERE.
EXPLAIN (COSTS OFF)
SELECT count(DISTINCT i), count(DISTINCT i) FILTER (WHERE g = 1), sum(i) FROM cd_col WHERE d > '2024-01-03';
SELECT count(DISTINCT i), count(DISTINCT i) FILTER (WHERE g = 1), sum(i) FROM cd_col WHERE d > '2024-01-03';
SELECT count(DISTINCT i), count(DISTINCT i) FILTER (WHERE g = 1), sum(i) FROM cd_heap WHERE d > '2024-01-03';
-- HAVING on a distinct count; groups on a text key.
SELECT t, count(DISTINCT c) FROM cd_col GROUP BY t HAVING count(DISTINCT i) > 5 ORDER BY t;
SELECT t, count(DISTINCT c) FROM cd_heap GROUP BY t HAVING count(DISTINCT i) > 5 ORDER BY t;
-- An empty input: 0, as core.
SELECT count(DISTINCT t) FROM cd_col WHERE g > 10;
-- numeric: 1.0 and 1.00 are one value but differ in bytes: core's path.
EXPLAIN (COSTS OFF) SELECT count(DISTINCT n) FROM cd_col;
SELECT count(DISTINCT n) FROM cd_col;
SELECT count(DISTINCT n) FROM cd_heap;
-- A nondeterministic collation: core's path, and its answer.
CREATE COLLATION case_blind (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (COSTS OFF) SELECT count(DISTINCT t COLLATE case_blind) FROM cd_col;
SELECT count(DISTINCT t COLLATE case_blind) FROM cd_col;
SELECT count(DISTINCT t COLLATE case_blind) FROM cd_heap;
-- A set that would not fit in work_mem stays on core's path (it can spill).
SET work_mem = '64kB';
CREATE TABLE wide_col (k int8) USING columnar;
INSERT INTO wide_col SELECT i FROM generate_series(1, 100000) i;
ANALYZE wide_col;
EXPLAIN (COSTS OFF) SELECT count(DISTINCT k) FROM wide_col;
SELECT count(DISTINCT k) FROM wide_col;
RESET work_mem;
EXPLAIN (COSTS OFF) SELECT count(DISTINCT k) FROM wide_col;
SELECT count(DISTINCT k) FROM wide_col;
-- A role that is no superuser, and a partition queried directly: the same fold.
CREATE ROLE cd_reader;
CREATE TABLE cd_parts (g int, t text) PARTITION BY RANGE (g);
CREATE TABLE cd_part0 PARTITION OF cd_parts FOR VALUES FROM (0) TO (3) USING columnar;
CREATE TABLE cd_part1 PARTITION OF cd_parts FOR VALUES FROM (3) TO (10) USING columnar;
INSERT INTO cd_parts SELECT g, t FROM cd_col;
ANALYZE cd_parts;
GRANT SELECT ON cd_col, cd_heap, cd_parts, cd_part0 TO cd_reader;
SET ROLE cd_reader;
EXPLAIN (COSTS OFF) SELECT g, count(DISTINCT t) FROM cd_part0 GROUP BY g ORDER BY g;
SELECT g, count(DISTINCT t) FROM cd_part0 GROUP BY g ORDER BY g;
SELECT g, count(DISTINCT t) FROM cd_heap WHERE g < 3 GROUP BY g ORDER BY g;
SELECT count(DISTINCT t), count(DISTINCT g) FROM cd_parts;
SELECT count(DISTINCT t), count(DISTINCT g) FROM cd_heap;
RESET ROLE;
DROP TABLE cd_parts, cd_col, cd_heap, wide_col;
DROP ROLE cd_reader;
DROP COLLATION case_blind;
DROP EXTENSION pgcolumnar;
