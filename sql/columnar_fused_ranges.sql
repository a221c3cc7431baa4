-- A pushed AND of tests runs as one step per column: a column's comparisons (>= and <,
-- BETWEEN, a date against a date and a timestamp, a numeric against constants of
-- other scales) fused into one range test on its integers or mantissas; the later
-- columns decoded only for the rows left; sum(x * y) of two numeric columns folded
-- from the selected rows' products. Every query runs on a columnar table and on its
-- heap twin: with NULLs, deleted rows, infinite dates, int8 bounds at the extremes,
-- and ranges that keep every row or none.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE fr_col (id int, k int8, day date, qty numeric(15,2), price numeric(15,2),
    disc numeric(15,2)) USING columnar;
-- 12288 rows (6 vectors); every 97th day infinite, every 89th NULL; k spans int8;
-- every 101st price and 103rd disc NULL.
INSERT INTO fr_col SELECT i,
    CASE i % 7 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807
               ELSE (i * 7919 % 20000) - 10000 END,
    CASE WHEN i % 97 = 0 THEN (CASE WHEN i % 2 = 0 THEN 'infinity' ELSE '-infinity' END)::date
         WHEN i % 89 = 0 THEN NULL
         ELSE date '1992-01-01' + (i * 31 % 2500) END,
    (i * 7 % 50) + 1,
    CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 7919 % 10000000) / 100.0 + 900 END,
    CASE WHEN i % 103 = 0 THEN NULL ELSE (i % 11) / 100.0 END
  FROM generate_series(1, 12288) i;
-- Deleted rows: a stretch and single rows, in the first three vectors (the last three
-- keep every row, which the filter reads in order).
DELETE FROM fr_col WHERE (id % 13 = 0 AND id <= 6000) OR id BETWEEN 4000 AND 4100;
CREATE TABLE fr_heap AS SELECT * FROM fr_col;
ANALYZE fr_col, fr_heap;

-- 'fold' if a ColumnarAgg runs the query, 'scan' for a ColumnarScan, else 'core'.
CREATE FUNCTION fr_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
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
CREATE FUNCTION fr_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', ' | ', q) INTO r;
  RETURN coalesce(r, '(no rows)');
END $$;
-- How the query runs, and whether columnar and heap give the same rows (as text).
CREATE FUNCTION fr_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE col text := fr_rows(q); heap text := fr_rows(replace(q, 'fr_col', 'fr_heap'));
BEGIN
  IF col IS DISTINCT FROM heap THEN
    RETURN fr_plan(q) || ': DIFFERENT' || E'\n columnar: ' || col || E'\n heap: ' || heap;
  END IF;
  RETURN fr_plan(q) || ': same';
END $$;

-- q6's shape: every test pushed, one fold.
EXPLAIN (COSTS OFF)
SELECT sum(price * disc) FROM fr_col
WHERE day >= date '1994-01-01' AND day < date '1994-01-01' + interval '1' year
  AND disc BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND qty < 24;
SELECT sum(price * disc) FROM fr_col
WHERE day >= date '1994-01-01' AND day < date '1994-01-01' + interval '1' year
  AND disc BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND qty < 24;
SELECT fr_check($q$SELECT sum(price * disc), avg(price * disc), count(*) FROM fr_col
  WHERE day >= date '1994-01-01' AND day < date '1994-01-01' + interval '1' year
  AND disc BETWEEN 0.05 AND 0.07 AND qty < 24$q$);
-- The product fold over every row (NULLs on either side), over none, and grouped.
SELECT fr_check('SELECT sum(price * disc), avg(disc * price), count(*) FROM fr_col');
SELECT fr_check('SELECT sum(price * disc), avg(price * disc) FROM fr_col WHERE qty > 100');
SELECT fr_check('SELECT qty > 25 AS big, sum(price * disc) FROM fr_col WHERE disc > 0.02 GROUP BY 1');

-- Date ranges: against dates, timestamps and timestamptz, with the infinities.
SELECT count(*), min(id), max(id) FROM fr_col WHERE day >= '1993-03-01' AND day < '1993-04-01';
SELECT count(*) FROM fr_col WHERE day >= '-infinity' AND day < 'infinity';
SELECT fr_check($q$SELECT count(*), min(id), max(id) FROM fr_col WHERE day >= '1993-03-01' AND day < '1993-04-01'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE day BETWEEN '1992-01-01' AND '1998-12-31'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col
  WHERE day > timestamp '1993-06-30 23:59:59' AND day <= timestamp '1994-06-30 00:00:01'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col
  WHERE day >= timestamptz '1993-06-30 12:00:00+00' AND day < timestamptz '1995-01-01 00:00:00+00'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE day >= '-infinity' AND day < 'infinity'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE day > '1992-01-01' AND day <= 'infinity'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE day >= timestamp '-infinity' AND day < '1993-01-01'$q$);
SELECT fr_check($q$SELECT count(*) FROM fr_col WHERE day > 'infinity' AND day < 'infinity'$q$);
SELECT fr_check($q$SELECT count(*) FROM fr_col WHERE day >= '1995-01-01' AND day < '1994-01-01'$q$);
SELECT fr_check($q$SELECT count(*) FROM fr_col WHERE day = '1993-05-05' AND day >= '1993-05-05'$q$);

-- int8 ranges at the extremes, keeping every row, none, or the ends.
SELECT count(*) FROM fr_col WHERE k > 9223372036854775806 AND k >= 0;
SELECT count(*) FROM fr_col WHERE k > -9223372036854775808 AND k < 9223372036854775807;
SELECT fr_check('SELECT count(*), sum(qty) FROM fr_col WHERE k >= -9223372036854775808 AND k <= 9223372036854775807');
SELECT fr_check('SELECT count(*), sum(qty) FROM fr_col WHERE k > -9223372036854775808 AND k < 9223372036854775807');
SELECT fr_check('SELECT count(*), sum(qty) FROM fr_col WHERE k BETWEEN -10 AND 9223372036854775807');
SELECT fr_check('SELECT count(*) FROM fr_col WHERE k > 9223372036854775806 AND k >= 0');
SELECT fr_check('SELECT count(*) FROM fr_col WHERE k < -9223372036854775807 AND k > -9223372036854775808');
SELECT fr_check('SELECT count(*), sum(qty) FROM fr_col WHERE k > 100 AND k <= 5000 AND k IS NOT NULL');

-- Numeric ranges against constants of other scales, NaN and infinities.
SELECT count(*), sum(price) FROM fr_col WHERE disc > 0.055 AND disc <= 0.0800;
SELECT fr_check('SELECT count(*), sum(price) FROM fr_col WHERE disc > 0.055 AND disc <= 0.0800');
SELECT fr_check('SELECT count(*), sum(price) FROM fr_col WHERE disc BETWEEN 0.049999 AND 0.070001');
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE price > '-Infinity' AND price < 'NaN'$q$);
SELECT fr_check($q$SELECT count(*), sum(qty) FROM fr_col WHERE price >= 'Infinity' AND price <= 'NaN'$q$);
SELECT fr_check('SELECT count(*), sum(qty) FROM fr_col WHERE price > 99999999999999999999.5 OR qty = 3');
SELECT fr_check('SELECT count(*), sum(disc) FROM fr_col WHERE qty >= 10 AND qty < 20.5 AND disc IS NOT NULL');

-- The rows themselves (a scan with the same filter), and a test between two columns.
SELECT fr_check($q$SELECT id, day, qty, price, disc FROM fr_col
  WHERE day >= '1994-01-01' AND day < '1994-02-01' AND disc BETWEEN 0.05 AND 0.07$q$);
SELECT fr_check('SELECT count(*) FROM fr_col WHERE qty >= 5 AND disc * 100 < qty AND qty < 40');
-- A filtered numeric column the scan also returns: the filter reads its mantissas, the
-- rows' values are written from them (an OR of ranges, NULLs, NaN constants, a row
-- filtered on one column and returned with two).
SELECT fr_check($q$SELECT id, qty, price FROM fr_col
  WHERE (qty >= 1 AND qty <= 11) OR (qty >= 30 AND qty <= 31.5) OR price < 950$q$);
SELECT fr_check($q$SELECT id, price, disc FROM fr_col WHERE price > 'NaN' OR disc = 0.03 OR disc IS NULL$q$);
SELECT fr_check($q$SELECT id, disc FROM fr_col WHERE (disc BETWEEN 0.02 AND 0.04 OR disc > 0.095) AND id % 3 = 0$q$);
-- Few rows left of each vector (2%): only their digits are made.
SELECT fr_check($q$SELECT id, qty, price, disc FROM fr_col WHERE qty = 7$q$);
SELECT fr_check($q$SELECT price, disc FROM fr_col WHERE qty = 7 OR (qty = 9 AND disc > 0.05)$q$);

RESET max_parallel_workers_per_gather;
RESET enable_indexscan;
RESET enable_bitmapscan;
DROP TABLE fr_col, fr_heap;
DROP FUNCTION fr_check(text), fr_rows(text), fr_plan(text);
DROP EXTENSION pgcolumnar;
