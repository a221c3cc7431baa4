-- Vector expressions as ColumnarAgg's group keys (`GROUP BY i / 1000`, `i % 7`,
-- `n * 2`, a searched CASE), `%` / mod() of integers and numerics, and casts between the engine's types
-- (int8 -> int4, float or numeric -> int, float8 -> float4, numeric -> float8) in
-- group keys, aggregate arguments and pushed filters. Each query runs on a columnar
-- table and its heap twin (`differs` counts the rows one has and the other has not: 0
-- is equal results); the plans say the fold or the pushed filter ran. A failing expression
-- raises core's error (same SQLSTATE and message), at the row where core fails.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET pgcolumnar.quals_push_down = on;
CREATE TABLE ek_col (i int, s smallint, b bigint, f float8, r real, n numeric(12, 2),
                     m numeric, z int) USING columnar;
INSERT INTO ek_col SELECT CASE WHEN g % 101 = 0 THEN NULL ELSE g END,
    (g % 300 - 150)::smallint, g * 1000003::bigint - 5000000000,
    CASE g % 97 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
                WHEN 4 THEN '-0' ELSE (g % 1000) / 7.0 - 50 END,
    CASE WHEN g % 89 = 0 THEN NULL ELSE (g % 500) / 3.0 END,
    CASE WHEN g % 31 = 0 THEN NULL ELSE (g % 5000) / 4.0 - 300 END,
    CASE g % 53 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
                WHEN 4 THEN 12345678901234567890123.000001
                ELSE (ARRAY[1, 1.5, 2.25, -3.125, 1.50, 0.1, 7])[g % 7 + 1] END,
    CASE WHEN g % 17 = 0 THEN NULL ELSE g % 7 END
FROM generate_series(1, 30000) g;
CREATE TABLE ek_heap AS SELECT * FROM ek_col;
ANALYZE ek_col, ek_heap;
CREATE FUNCTION differs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'ek_col'), format(q, 'ek_heap'), format(q, 'ek_heap'), format(q, 'ek_col'))
    INTO n;
  RETURN n;
END $$;
CREATE FUNCTION error_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- Group keys computed by the fold: integer arithmetic (NULL in, NULL key), several
-- keys, int8, a cast, mod(); numerics grouped by value (3.0 = 3.00).
EXPLAIN (COSTS OFF) SELECT i / 1000, count(*), sum(n) FROM ek_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT i % 7, s % 5, count(*) FROM ek_col GROUP BY 1, 2;
EXPLAIN (COSTS OFF) SELECT n * 2, count(*) FROM ek_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT (f / 10)::int, count(*) FROM ek_col WHERE f BETWEEN -40 AND 40 GROUP BY 1;
SELECT q, differs(q)
FROM (VALUES ('SELECT i / 1000 AS k, count(*), sum(n), avg(f) FROM %s GROUP BY 1'),
             ('SELECT i %% 7, s %% 5, count(*), min(m), max(b) FROM %s GROUP BY 1, 2'),
             ('SELECT b %% 1000, count(*) FROM %s GROUP BY 1'),
             ('SELECT (i + s) / 100, sum(i) FROM %s GROUP BY 1'),
             ('SELECT mod(i, 13), mod(b, 9), count(*) FROM %s GROUP BY 1, 2'),
             ('SELECT -s, count(*) FROM %s GROUP BY 1'),
             ('SELECT s::int8 * 1000000000000, count(*) FROM %s GROUP BY 1'),
             ('SELECT (f / 10)::int, count(*) FROM %s WHERE f BETWEEN -40 AND 40 GROUP BY 1'),
             ('SELECT n * 2, count(*), sum(i) FROM %s GROUP BY 1'),
             ('SELECT n %% 7, count(*) FROM %s GROUP BY 1'),
             ('SELECT i %% 10, n - 100, count(*) FROM %s GROUP BY 1, 2'),
             ('SELECT i / z, count(*) FROM %s WHERE z <> 0 GROUP BY 1'),
             ('SELECT i / 1000, count(*) FROM %s GROUP BY 1 HAVING count(*) > 990')) v(q)
ORDER BY q;
-- Numeric keys: NaN and the infinities are groups of their own; a group shows the first
-- display scale its rows had (as core's hash aggregate, the heap's plan here).
SET enable_sort = off;
SELECT (m * 2)::text AS k, count(*) FROM ek_col GROUP BY m * 2 ORDER BY 1;
SELECT (m * 2)::text AS k, count(*) FROM ek_heap GROUP BY m * 2 ORDER BY 1;
SELECT (m % 1)::text AS k, count(*) FROM ek_col GROUP BY m % 1 ORDER BY 1;
SELECT (m % 1)::text AS k, count(*) FROM ek_heap GROUP BY m % 1 ORDER BY 1;
RESET enable_sort;

-- % and casts in aggregate arguments and pushed filters.
EXPLAIN (COSTS OFF) SELECT sum(i % 7), sum(m % 0.7), sum(f::int), avg(n::float8), max(r::float4)
FROM ek_col WHERE b % 3 = 1;
EXPLAIN (COSTS OFF) SELECT n::int4 % 10, sum(n::int2) FROM ek_col WHERE n::int = 100 GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ek_col WHERE f BETWEEN -1e4 AND 1e4 AND f::int4 = 5 AND mod(i, 5) = 2;
SELECT q, differs(q)
FROM (VALUES ('SELECT sum(i %% 7), sum(s %% 4), sum(b %% 1000000), sum(mod(i, -3)) FROM %s'),
             ('SELECT sum(n %% 7), sum(n %% 0.3), sum(m %% 0.7), sum(mod(m, 2)) FROM %s WHERE z > 0'),
             ('SELECT sum(f::int), sum(f::int8), sum(f::int2), sum(r::int) FROM %s WHERE f BETWEEN -1e4 AND 1e4'),
             ('SELECT avg(n::float8), sum(m::float8), max(m::float8), min(m::float8) FROM %s'),
             ('SELECT sum(b::int4 %% 10) FROM %s WHERE b BETWEEN -2000000000 AND 2000000000'),
             ('SELECT max(f::float4), sum(f::float4), sum(i::int2 %% 100) FROM %s WHERE i < 30000'),
             ('SELECT count(*), sum(i) FROM %s WHERE i %% 7 = 3'),
             ('SELECT count(*), sum(i) FROM %s WHERE f BETWEEN -1e4 AND 1e4 AND f::int4 = 5 AND mod(i, 5) = 2'),
             ('SELECT count(*) FROM %s WHERE n %% 2.5 = 0 OR m %% 1 <> 0'),
             ('SELECT count(*) FROM %s WHERE m::float8 > 1.2'),
             ('SELECT z, sum(f::int4 %% 3) FROM %s WHERE f BETWEEN -40 AND 40 GROUP BY z'),
             ('SELECT sum(n::int), sum((n * 3)::int8), sum(n::int2) FROM %s'),
             ('SELECT (n / 2)::int, count(*) FROM %s WHERE n < 0 GROUP BY 1'),
             ('SELECT n::int4 %% 10, count(*) FROM %s GROUP BY 1'),
             ('SELECT count(*) FROM %s WHERE n::int = 100')) v(q)
ORDER BY q;
SELECT sum(f::int), avg(n::float8), sum(m::float8), sum(n % 0.3), sum(m % 0.7)
FROM ek_col WHERE f BETWEEN -1e4 AND 1e4;
SELECT sum(f::int), avg(n::float8), sum(m::float8), sum(n % 0.3), sum(m % 0.7)
FROM ek_heap WHERE f BETWEEN -1e4 AND 1e4;

-- Errors, as core's: division by zero in a key, a remainder by zero (int and numeric),
-- casts out of range (int2, int4, NaN and Infinity to int, a numeric NaN or infinity
-- to an integer, float4 overflow); an
-- aggregate argument that fails on an earlier row than the key raises its error first
-- (core computes a row's key, then its arguments, row after row), and a key failing
-- first raises the key's. None where no row reaches the expression.
SELECT q, error_of(format(q, 'ek_col')) AS col, error_of(format(q, 'ek_heap')) AS heap
FROM (VALUES ('SELECT i / z, count(*) FROM %s GROUP BY 1'),
             ('SELECT i / z, count(*) FROM %s WHERE z <> 0 GROUP BY 1'),
             ('SELECT i %% z, count(*) FROM %s GROUP BY 1'),
             ('SELECT sum(n %% (z - z)) FROM %s'),
             ('SELECT sum(n %% (z - z)) FROM %s WHERE z IS NULL'),
             ('SELECT s * 1000::smallint, count(*) FROM %s GROUP BY 1'),
             ('SELECT b::int4, count(*) FROM %s GROUP BY 1'),
             ('SELECT sum(f::int4) FROM %s'),
             ('SELECT sum(f::int4) FROM %s WHERE f < 1e9'),
             ('SELECT sum(f::int4) FROM %s WHERE f BETWEEN -1e9 AND 1e9'),
             ('SELECT sum((f * 1e300)::float4) FROM %s WHERE f > 1'),
             ('SELECT count(*) FROM %s WHERE f::int2 > 0'),
             ('SELECT count(*) FROM %s WHERE i > 100 AND b::int4 > 0'),
             ('SELECT sum(m::int) FROM %s'),
             ('SELECT sum(m::int8) FROM %s WHERE i > 2'),
             ('SELECT sum(m::int2) FROM %s WHERE m > 0 AND m < 1e10'),
             ('SELECT sum(m::int2) FROM %s WHERE m > 0'),
             ('SELECT m::int, count(*) FROM %s WHERE m < 0 GROUP BY 1'),
             ('SELECT i / (z - 3), sum(s * 300::smallint) FROM %s GROUP BY 1'),
             ('SELECT i / (z - 3), sum(s * 300::smallint) FROM %s WHERE i > 200 GROUP BY 1'),
             ('SELECT i / (z - 3), sum(i / (z - 1)) FROM %s WHERE z <> 0 GROUP BY 1')) v(q)
ORDER BY q;

-- A searched CASE of integers or numerics as a key: its conditions are pushed-filter
-- tests (a NULL condition takes the next branch), each branch computed for its rows
-- alone (a division by zero in a branch no row takes raises nothing); with a
-- parameter in a condition (a generic plan).
EXPLAIN (COSTS OFF) SELECT CASE WHEN i < 1000 THEN 0 WHEN i < 10000 THEN 1 ELSE 2 END, count(*), sum(n)
FROM ek_col GROUP BY 1;
SELECT q, differs(q)
FROM (VALUES ('SELECT CASE WHEN i < 1000 THEN 0 WHEN i < 10000 THEN 1 ELSE 2 END, count(*), sum(n) FROM %s GROUP BY 1'),
             ('SELECT CASE WHEN z IS NULL THEN -1 WHEN z > 3 THEN i / z END, count(*) FROM %s GROUP BY 1'),
             ('SELECT s %% 3, CASE WHEN f > 0 THEN n * 2 ELSE n END, count(*) FROM %s GROUP BY 1, 2'),
             ('SELECT CASE WHEN m > 1 THEN 1 END, count(*) FROM %s GROUP BY 1')) v(q)
ORDER BY q;
SELECT error_of('SELECT CASE WHEN z = 0 THEN i / z ELSE 0 END, count(*) FROM ek_col GROUP BY 1') AS col,
       error_of('SELECT CASE WHEN z = 0 THEN i / z ELSE 0 END, count(*) FROM ek_heap GROUP BY 1') AS heap;
SET plan_cache_mode = force_generic_plan;
PREPARE kc(int) AS SELECT CASE WHEN i < $1 THEN 0 ELSE 1 END AS k, count(*) FROM ek_col GROUP BY 1 ORDER BY 1;
PREPARE kh(int) AS SELECT CASE WHEN i < $1 THEN 0 ELSE 1 END AS k, count(*) FROM ek_heap GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF) EXECUTE kc(5000);
EXECUTE kc(5000);
EXECUTE kh(5000);
EXECUTE kc(NULL);
EXECUTE kh(NULL);
DEALLOCATE kc;
DEALLOCATE kh;
RESET plan_cache_mode;

-- Not computed: a float key (float8eq groups -0 with 0), a text CASE, numeric division.
EXPLAIN (COSTS OFF) SELECT f * 2, count(*) FROM ek_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT CASE WHEN i > 5 THEN 'big' ELSE 'small' END, count(*) FROM ek_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT n / 3, count(*) FROM ek_col GROUP BY 1;
DROP TABLE ek_col, ek_heap;
DROP FUNCTION differs(text), error_of(text);
DROP EXTENSION pgcolumnar;
