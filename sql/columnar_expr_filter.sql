-- Comparisons of arithmetic expressions pushed into the scan: `a + b < 10`,
-- `x * (1 - y) > c`, `a / b = 7`, `-x > 5`, BETWEEN, on int2/int4/int8/float4/float8/
-- numeric columns and constants. Each query is compared with its heap twin both ways
-- (a count of 0 means the same rows); the plans say the qual was pushed. An
-- expression can fail (overflow, division by zero): it is evaluated on the rows the
-- quals core orders before it leave, so it fails where core fails, with core's error.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET pgcolumnar.quals_push_down = on;
CREATE TABLE ef_col (i int, s smallint, b bigint, f float8, r real, n numeric(12,2),
                     m numeric, z int) USING columnar;
INSERT INTO ef_col SELECT g, (g % 300 - 150)::smallint, g * 1000003::bigint - 5000000000,
    CASE g % 97 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
                WHEN 4 THEN '-0' ELSE (g % 1000) / 7.0 END,
    CASE WHEN g % 89 = 0 THEN NULL WHEN g % 89 = 1 THEN 'NaN' ELSE (g % 500) / 3.0 END,
    CASE WHEN g % 31 = 0 THEN NULL ELSE (g % 5000) / 4.0 - 300 END,
    CASE g % 53 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
                WHEN 4 THEN 12345678901234567890123.000001
                ELSE round((g % 777) / 3.0, g % 4) END,
    CASE WHEN g % 17 = 0 THEN NULL ELSE g % 7 END
FROM generate_series(1, 30000) g;
CREATE TABLE ef_heap AS SELECT * FROM ef_col;
-- Deleted rows: the expression never sees them (these would overflow).
UPDATE ef_col SET s = 32767, z = 0 WHERE i % 1000 = 999;
UPDATE ef_heap SET s = 32767, z = 0 WHERE i % 1000 = 999;
DELETE FROM ef_col WHERE i % 1000 = 999;
DELETE FROM ef_heap WHERE i % 1000 = 999;
ANALYZE ef_col, ef_heap;
CREATE FUNCTION differs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'ef_col'), format(q, 'ef_heap'), format(q, 'ef_heap'), format(q, 'ef_col'))
    INTO n;
  RETURN n;
END $$;

-- Pushed: into the scan and into the fold.
EXPLAIN (COSTS OFF) SELECT i FROM ef_col WHERE i + s < 100;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE n * (1 - m) > 50;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE i / 3 = 7 AND f * 2 >= r;
EXPLAIN (COSTS OFF) SELECT i FROM ef_col WHERE (i + s) BETWEEN 1 AND 90 AND b > 0;
EXPLAIN (COSTS OFF) SELECT i FROM ef_col WHERE NOT (-s > 5);

-- Each shape against heap, on every row.
CREATE FUNCTION rows_of(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE 'SELECT count(*) FROM ef_col WHERE ' || q INTO n;
  RETURN n;
END $$;
SELECT q, differs('SELECT i FROM %s WHERE ' || q) AS differing, rows_of(q) AS rows_col
FROM (VALUES ('i + s < 100'), ('i - s >= 29000'), ('s * 2 <> s + 1'), ('s * s > 20000'),
             ('i / 3 = 7'), ('z <> 0 AND i / z > 1000'), ('-s > 5'), ('NOT (-s > 5)'),
             ('(i + s) BETWEEN 1 AND 90'), ('b * 2 < i'), ('b + i > s'),
             ('f * 2 >= r'), ('f - f = 0'), ('f + 1 > 1e300'), ('f / 3 < 1'), ('r * 2 <= 100'),
             ('r + f > 100'), ('f * i > 10000'), ('-f < -100'),
             ('n * (1 - m) > 50'), ('n - m < 0'), ('n + 0.005 = 100.255'), ('n * 3 >= m'),
             ('m * m > 10000'), ('-m <= -200'), ('n * i > 1000000'), ('m + i < 250'),
             ('(n + 1) * (m - 1) <> 0'), ('i * 1.5 > 44999.9'),
             ('i + s < 100 AND b > 0'), ('i + s < 100 OR f > 100'), ('s * 300 > i')) v(q)
ORDER BY q;
SELECT count(*), sum(i) FROM ef_col WHERE n * (1 - m) > 50;
SELECT count(*), sum(i) FROM ef_heap WHERE n * (1 - m) > 50;
SELECT count(*) FROM ef_col WHERE f * 2 >= r AND i / 3 < 5000;
SELECT count(*) FROM ef_heap WHERE f * 2 >= r AND i / 3 < 5000;
SELECT i, m FROM ef_col WHERE m * 2 > 1e20 ORDER BY i LIMIT 3;
SELECT i, m FROM ef_heap WHERE m * 2 > 1e20 ORDER BY i LIMIT 3;

-- Parameters (a generic plan): the value is the comparison's other side, either way
-- round; a NULL one passes no row.
SET plan_cache_mode = force_generic_plan;
PREPARE pc(int, numeric, float8) AS SELECT count(*), sum(i) FROM ef_col
  WHERE $1 > i + s AND n * 2 > $2 AND f * 2 <> $3;
PREPARE ph(int, numeric, float8) AS SELECT count(*), sum(i) FROM ef_heap
  WHERE $1 > i + s AND n * 2 > $2 AND f * 2 <> $3;
EXPLAIN (COSTS OFF) EXECUTE pc(20000, 50, 10);
EXECUTE pc(20000, 50, 10);
EXECUTE ph(20000, 50, 10);
EXECUTE pc(20000, 50.005, 'NaN');
EXECUTE ph(20000, 50.005, 'NaN');
EXECUTE pc(NULL, 50, 10);
PREPARE pbig(bigint) AS SELECT count(*) FROM ef_col WHERE i * 2 < $1;
EXPLAIN (COSTS OFF) EXECUTE pbig(10000000000);
EXECUTE pbig(10000000000);
EXECUTE pbig(101);
DEALLOCATE pc;
DEALLOCATE ph;
DEALLOCATE pbig;
RESET plan_cache_mode;

-- Errors: as core's, same SQLSTATE. Overflow of int2, int4, int8 and float8, and
-- division by zero (z is 0 on rows i % 7 = 0); none from deleted rows (s = 32767
-- there). Under an OR, the expression runs on the rows the children before it did not
-- take; inside an AND (here from NOT ... OR) only as its first test.
CREATE FUNCTION sqlstate_of(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN others THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT q, sqlstate_of(format(q, 'ef_col')) AS col, sqlstate_of(format(q, 'ef_heap')) AS heap
FROM (VALUES ('SELECT count(*) FROM %s WHERE s * 1000 > 0'),
             ('SELECT count(*) FROM %s WHERE i * 100000 > 0'),
             ('SELECT count(*) FROM %s WHERE b * 10000000000 > 0'),
             ('SELECT count(*) FROM %s WHERE f * 1e308 > 0'),
             ('SELECT count(*) FROM %s WHERE i / z > 1'),
             ('SELECT count(*) FROM %s WHERE f / (i - i) > 1'),
             ('SELECT count(*) FROM %s WHERE i / z > 1 AND z > 0'),
             ('SELECT count(*) FROM %s WHERE z > 0 AND i / z > 1'),
             ('SELECT count(*) FROM %s WHERE s * 300::smallint > 0'),
             ('SELECT count(*) FROM %s WHERE s + 1::smallint > 0'),
             ('SELECT count(*) FROM %s WHERE s BETWEEN -100 AND 100 AND s * 300::smallint <> 0'),
             ('SELECT count(*) FROM %s WHERE z = 0 OR i / z > 1'),
             ('SELECT count(*) FROM %s WHERE i / z > 1 OR z = 0'),
             ('SELECT count(*) FROM %s WHERE NOT (z = 0 OR i / z <= 1)'),
             ('SELECT count(*) FROM %s WHERE (z IS NULL AND i / z > 1) OR i < 5'),
             ('SELECT count(*) FROM %s WHERE (i > 5 AND i / z > 1) OR i < 5'),
             ('SELECT count(*) FROM %s WHERE i %% 1000 = 998 AND i / (i %% 1000 - 998) > 0'),
             ('SELECT count(*) FROM %s WHERE s * 200 > 0 AND i / z > 1'),
             ('SELECT count(*) FROM %s WHERE i / z > 1 AND s * 200 > 0')) v(q)
ORDER BY q;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE z > 0 AND i / z > 1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE z = 0 OR i / z > 1;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE NOT (z = 0 OR i / z <= 1);
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE (i > 5 AND i / z > 1) OR i < 5;
\set VERBOSITY sqlstate
SELECT count(*) FROM ef_col WHERE i / z > 1;
SELECT count(*) FROM ef_col WHERE s * 300::smallint > 0;
\set VERBOSITY default

-- A qual core orders before the expression that the scan cannot evaluate keeps the
-- expression on core's path too (it must not see the rows that qual drops).
-- Core orders these by cost: the cast to text costs more than the division, so the
-- division runs first, pushed; then the text test, core's.
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE i::text LIKE '1%' AND i / z > 1;
SELECT sqlstate_of('SELECT count(*) FROM ef_col WHERE z::text <> ''0'' AND i / z > 1');
SELECT sqlstate_of('SELECT count(*) FROM ef_heap WHERE z::text <> ''0'' AND i / z > 1');
-- An unpushable qual that core orders first (cheaper: a user's function of cost 1
-- over one column) keeps the expression above the scan with it.
CREATE FUNCTION nonzero(int) RETURNS bool LANGUAGE plpgsql IMMUTABLE COST 1 AS
  'BEGIN RETURN $1 <> 0; END';
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE i / z > 1 AND nonzero(z);
SELECT count(*) FROM ef_col WHERE i / z > 1 AND nonzero(z);
SELECT count(*) FROM ef_heap WHERE i / z > 1 AND nonzero(z);

-- RLS: arithmetic is not leakproof, so it is not pushed below a policy the scan
-- does not evaluate, nor run before it.
CREATE ROLE expr_filter_reader;
GRANT SELECT ON ef_col TO expr_filter_reader;
ALTER TABLE ef_col ENABLE ROW LEVEL SECURITY;
CREATE POLICY nonzero ON ef_col TO expr_filter_reader USING (z::text <> '0');
SET ROLE expr_filter_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE i / z > 1;
SELECT count(*) FROM ef_col WHERE i / z > 1;
RESET ROLE;
ALTER TABLE ef_col DISABLE ROW LEVEL SECURITY;
SELECT count(*) FROM (SELECT * FROM ef_heap WHERE z::text <> '0' OFFSET 0) h WHERE i / z > 1;

-- Nodes that would evaluate the filter on fewer rows than core's scan step aside for
-- a filter that may fail: no join filter on the fact scan (it is there without the
-- expression), no zone-map LastPoint (which skips vectors that cannot win).
CREATE TABLE ef_fact (k int, v int, z int) USING columnar;
INSERT INTO ef_fact SELECT (g * 7919) % 20000 + 1, g % 1000, g % 7 FROM generate_series(1, 200000) g;
CREATE TABLE ef_dim (id int PRIMARY KEY, grp int);
INSERT INTO ef_dim SELECT g, g % 50 FROM generate_series(1, 20000) g;
ANALYZE ef_fact, ef_dim;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_fact f JOIN ef_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v > 2;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_fact f JOIN ef_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v * 2 > 2;
SELECT count(*) FROM ef_fact f JOIN ef_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v * 2 > 2;
SELECT count(*) FROM ef_fact f JOIN ef_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v > 1;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (z) z, v FROM ef_fact WHERE v > 2 ORDER BY z, v DESC;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (z) z, v FROM ef_fact WHERE v * 2 > 2 ORDER BY z, v DESC;
SELECT DISTINCT ON (z) z, v FROM ef_fact WHERE v * 2 > 2 ORDER BY z, v DESC;
SELECT sqlstate_of('SELECT DISTINCT ON (z) z, v FROM ef_fact WHERE v / (z - 3) > 2 ORDER BY z, v DESC');
DROP TABLE ef_fact, ef_dim;

-- Not pushed: numeric division (its result scale is core's), a user's operator.
-- Pushed: modulo (columnar_expr_keys has more).
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE n / 3 > 10;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ef_col WHERE i % 7 + s = 3;
DROP OWNED BY expr_filter_reader;
DROP ROLE expr_filter_reader;
DROP TABLE ef_col, ef_heap;
DROP FUNCTION differs(text), rows_of(text), sqlstate_of(text), nonzero(int);
DROP EXTENSION pgcolumnar;
