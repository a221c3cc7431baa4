-- Numerics stored as scaled integers (the ScaledNumeric codec): vectors whose values
-- all share one display scale are stored as that scale and integer mantissas, and
-- ColumnarAgg's folds, expressions and pushed filters read the mantissas. Every query
-- runs on a columnar table and on its heap twin: on data the codec takes
-- (numeric(15,2)), on data it cannot take (mixed scales, NaN, infinities, mantissas
-- beyond 64 bits, non-numeric bytes), and on tables where vectors of both kinds mix.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE ns_col (
    id int, flag char(1), q numeric(15,2), p numeric(15,2), d numeric(15,2),
    m numeric, big numeric(30,2), t text) USING columnar;
-- Rows 1..20480 (10 vectors): q, p, d one scale each; m mixes scales and, from row
-- 10241 on, NaN and infinities; big fits 64-bit mantissas until row 12288, then not;
-- t holds text that is numbers' text, never a numeric's bytes.
INSERT INTO ns_col SELECT i, (ARRAY['A', 'N', 'R'])[i % 3 + 1],
    CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 7 % 50) + 1 END,
    CASE WHEN i % 103 = 0 THEN NULL ELSE (i * 7919 % 10000000) / 100.0 + 900 END,
    (i % 11) / 100.0,
    CASE WHEN i > 10240 AND i % 97 = 0 THEN 'NaN'::numeric
         WHEN i > 10240 AND i % 89 = 0 THEN 'Infinity'::numeric
         WHEN i > 10240 AND i % 83 = 0 THEN '-Infinity'::numeric
         ELSE round(i / 7.0 - 1000, i % 3) END,
    CASE WHEN i <= 12288 THEN i * 1000000.01 ELSE i * 10000000000000000000000.01 END,
    (i % 17)::text
  FROM generate_series(1, 20480) i;
CREATE TABLE ns_heap AS SELECT * FROM ns_col;
ANALYZE ns_col, ns_heap;

-- What the codec took: every vector of q, p and d; none of m's (mixed scales) or
-- t's; big's first six vectors (2048 rows each), not the rest.
SELECT attname, encodings FROM pgcolumnar.stats('ns_col');

-- 'fold' if a ColumnarAgg runs the query, else 'core'.
CREATE FUNCTION ns_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%Custom Scan (PgColumnarAgg)%' THEN 'fold'
              WHEN plan LIKE '%Custom Scan (PgColumnarScan)%' THEN 'scan'
              ELSE 'core' END
         || CASE WHEN plan LIKE '%Pushed Filter%' THEN ', pushed filter' ELSE '' END
         || CASE WHEN plan ~ '\n *Filter:' THEN ', core filter' ELSE '' END;
END $$;
-- The query's rows as text, sorted.
CREATE FUNCTION ns_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', ' | ', q) INTO r;
  RETURN coalesce(r, '(no rows)');
END $$;
-- How the query runs, and whether columnar and heap give the same rows (as text).
CREATE FUNCTION ns_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE col text := ns_rows(q); heap text := ns_rows(replace(q, 'ns_col', 'ns_heap'));
BEGIN
  IF col IS DISTINCT FROM heap THEN
    RETURN ns_plan(q) || ': DIFFERENT' || E'\n columnar: ' || col || E'\n heap: ' || heap;
  END IF;
  RETURN ns_plan(q) || ': same';
END $$;

-- q1's and q6's shapes on the codec's data: one fold, every filter pushed.
EXPLAIN (COSTS OFF)
SELECT flag, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + d)), avg(q), avg(p), avg(d), count(*)
FROM ns_col WHERE id <= 20000 GROUP BY flag ORDER BY flag;
SELECT flag, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + d)), avg(q), avg(p), avg(d), count(*)
FROM ns_col WHERE id <= 20000 GROUP BY flag ORDER BY flag;
SELECT ns_check($q$SELECT flag, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + d)), avg(q), avg(p),
  avg(d), count(*) FROM ns_col WHERE id <= 20000 GROUP BY flag$q$);
SELECT ns_check($q$SELECT flag, sum(q), sum(p), sum(p * (1 - d)), sum(p * (1 - d) * (1 + d)),
  avg(q), avg(p), avg(d), min(p), max(p), min(d), max(q * d), count(*), count(q) FROM ns_col GROUP BY flag$q$);
EXPLAIN (COSTS OFF)
SELECT sum(p * d) FROM ns_col WHERE d BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND q < 24;
SELECT sum(p * d) FROM ns_col WHERE d BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND q < 24;
SELECT ns_check('SELECT sum(p * d), count(*) FROM ns_col WHERE d BETWEEN 0.05 AND 0.07 AND q < 24');

-- Pushed numeric filters against constants of other scales, NaN and infinities.
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE d = 0.050');
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE d = 0.055');
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE d <> 0.055');
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE d > 0.055 AND d <= 0.0800');
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE d >= 0.055 AND d < 0.1');
SELECT ns_check('SELECT count(*), sum(p) FROM ns_col WHERE q < 24.5 AND q > 3');
SELECT ns_check($q$SELECT count(*), sum(q) FROM ns_col WHERE p < 'NaN' AND p > '-Infinity'$q$);
SELECT ns_check($q$SELECT count(*) FROM ns_col WHERE p >= 'Infinity' OR d = 'NaN'$q$);
SELECT ns_check('SELECT count(*), sum(q) FROM ns_col WHERE d IN (0.05, 0.060, 0.065, 1)');
SELECT ns_check('SELECT count(*), sum(q) FROM ns_col WHERE d NOT IN (0.05, 0.060, 0.065)');
SELECT ns_check('SELECT count(*), sum(q) FROM ns_col WHERE q IS NULL OR d IS NULL');
SELECT ns_check('SELECT count(*), sum(q) FROM ns_col WHERE d < q * 0.001 + 0');
SELECT ns_check('SELECT count(*) FROM ns_col WHERE d < q');
SELECT ns_check('SELECT flag, sum(p) FILTER (WHERE d > 0.05), avg(q) FILTER (WHERE q >= 25) FROM ns_col GROUP BY flag');

-- Data the codec cannot take, and columns whose vectors mix both kinds.
SELECT ns_check('SELECT flag, sum(m), avg(m), min(m), max(m), sum(m * d), count(m) FROM ns_col GROUP BY flag');
SELECT ns_check($q$SELECT count(*), sum(d) FROM ns_col WHERE m > 100.5 AND m < 'Infinity'$q$);
SELECT ns_check('SELECT flag, sum(big), avg(big), min(big), max(big), sum(big * d), sum(big * big) FROM ns_col GROUP BY flag');
SELECT ns_check('SELECT count(*), sum(big) FROM ns_col WHERE big > 12000000000.00 AND big < 100000000000000000000000000.5');
-- Group keys on a numeric column that the codec stored.
SELECT ns_check('SELECT d, count(*), sum(p), avg(q) FROM ns_col GROUP BY d');
SELECT ns_check('SELECT q, d, count(*) FROM ns_col WHERE id < 3000 GROUP BY q, d');

-- Rows read back (the scan, not the fold): the same values and display scales.
SELECT ns_check('SELECT id, q, p, d, m, big, t FROM ns_col WHERE id % 997 = 0');
SELECT ns_check('SELECT id, p, d FROM ns_col WHERE d = 0.05 AND id < 300');
SELECT ns_check('SELECT md5(string_agg(p::text || d::text || coalesce(q::text, ''-''), '','' ORDER BY id)) FROM ns_col');

-- Sums that leave 64 bits per row (products of large mantissas) and 128 bits per
-- group: the same results as core.
CREATE TABLE ns_col_wide (g int, a numeric(30,2), b numeric(30,2)) USING columnar;
INSERT INTO ns_col_wide SELECT i % 3, 9000000000000000.00 + i, 90000000000000000.00 - i
  FROM generate_series(1, 5000) i;
CREATE TABLE ns_heap_wide AS SELECT * FROM ns_col_wide;
SELECT attname, encodings FROM pgcolumnar.stats('ns_col_wide');
SELECT ns_check('SELECT g, sum(a * b), sum(a * b * b), avg(a * b), max(a * b) FROM ns_col_wide GROUP BY g');
SELECT ns_check('SELECT sum(a * b * b * b * b) FROM ns_col_wide');

RESET max_parallel_workers_per_gather;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE ns_col, ns_heap, ns_col_wide, ns_heap_wide;
DROP FUNCTION ns_check(text), ns_rows(text), ns_plan(text);
DROP EXTENSION pgcolumnar;
