-- extract(field FROM date|timestamp) and date_part(field, timestamp) as ColumnarAgg
-- group keys: the whole-number fields (year, quarter, month, day, dow, isodow, doy,
-- week, isoyear, decade, century, millennium; hour and minute of timestamps), over
-- dates and timestamps from 4713 BC to 5874897 AD, ±infinity (growing fields are
-- ±Infinity, the others NULL, as core gives them) and NULL. Each query is compared
-- with its heap twin both ways (no row printed means equal); the plans say the fold ran.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE ex_col (i int, d date, ts timestamp) USING columnar;
INSERT INTO ex_col SELECT i,
    CASE i % 1000 WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
                  WHEN 3 THEN '4713-01-01 BC' WHEN 4 THEN '0001-06-30' WHEN 5 THEN '0001-01-01 BC'
                  WHEN 6 THEN '5874897-12-31' WHEN 7 THEN '10000-01-03' WHEN 8 THEN '0002-01-01'
                  ELSE date '1990-01-01' + (i * 37) % 20000 END,
    CASE i % 997 WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
                 WHEN 3 THEN '4713-01-01 00:00 BC' WHEN 4 THEN '294276-12-31 23:59:59'
                 WHEN 5 THEN '9999-12-31 23:59:59.999999'
                 ELSE timestamp '1999-12-25 00:00' + (i * 7919 % 500000) * interval '97 minutes' END
FROM generate_series(1, 40000) i;
CREATE TABLE ex_heap AS SELECT * FROM ex_col;
ANALYZE ex_col, ex_heap;
EXPLAIN (COSTS OFF)
SELECT extract(year FROM d), extract(week FROM ts), count(*) FROM ex_col GROUP BY 1, 2;
CREATE FUNCTION differs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'ex_col'), format(q, 'ex_heap'), format(q, 'ex_heap'), format(q, 'ex_col'))
    INTO n;
  RETURN n;
END $$;
SELECT f, differs(format('SELECT extract(%s FROM d) k, count(*), min(i), max(i) FROM %%s GROUP BY 1', f)) AS date_rows,
       differs(format('SELECT extract(%s FROM ts) k, count(*), sum(i) FROM %%s GROUP BY 1', f)) AS timestamp_rows,
       differs(format('SELECT date_part(%L, ts) k, count(*) FROM %%s GROUP BY 1', f)) AS date_part_rows
FROM unnest(ARRAY['year', 'quarter', 'month', 'day', 'dow', 'isodow', 'doy', 'week', 'isoyear',
                  'decade', 'century', 'millennium']) f;
SELECT f, differs(format('SELECT extract(%s FROM ts) k, count(*) FROM %%s GROUP BY 1', f)) AS timestamp_rows,
       differs(format('SELECT date_part(%L, ts) k, count(*) FROM %%s GROUP BY 1', f)) AS date_part_rows
FROM unnest(ARRAY['hour', 'minute']) f;
-- Keys together, with a pushed WHERE, and the values themselves (numeric keys print as
-- core prints them: Infinity, -Infinity, NULL).
EXPLAIN (COSTS OFF)
SELECT extract(year FROM d) y, extract(quarter FROM d) q, count(*) FROM ex_col
WHERE d < '1000-01-01' OR d > '3000-01-01' OR d IS NULL GROUP BY 1, 2 ORDER BY 1, 2;
SELECT extract(year FROM d) y, extract(quarter FROM d) q, count(*) FROM ex_col
WHERE d < '1000-01-01' OR d > '3000-01-01' OR d IS NULL GROUP BY 1, 2 ORDER BY 1, 2;
SELECT extract(year FROM d) y, extract(quarter FROM d) q, count(*) FROM ex_heap
WHERE d < '1000-01-01' OR d > '3000-01-01' OR d IS NULL GROUP BY 1, 2 ORDER BY 1, 2;
SELECT differs('SELECT extract(isoyear FROM d), extract(isodow FROM ts), date_part(''hour'', ts), count(*)
  FROM %s WHERE i > 100 GROUP BY 1, 2, 3') AS three_keys;
SELECT date_part('century', ts) c, count(*) FROM ex_col GROUP BY 1 ORDER BY 1;
SELECT date_part('century', ts) c, count(*) FROM ex_heap GROUP BY 1 ORDER BY 1;
-- What stays on core: another spelling of a field, a field with fractions, a date's
-- hour (core's error), date_part of a date (an SQL function over a cast), timestamptz
-- (the session's time zone).
EXPLAIN (COSTS OFF) SELECT extract(years FROM d), count(*) FROM ex_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT extract(second FROM ts), count(*) FROM ex_col GROUP BY 1;
SELECT extract(hour FROM d), count(*) FROM ex_col GROUP BY 1;
EXPLAIN (COSTS OFF) SELECT date_part('year', d), count(*) FROM ex_col GROUP BY 1;
CREATE TABLE ex_tz (tz timestamptz) USING columnar;
EXPLAIN (COSTS OFF) SELECT extract(year FROM tz), count(*) FROM ex_tz GROUP BY 1;
-- extract / date_part of a field that grows with time compared with a constant in
-- WHERE: pushed as a range of the column (its ends found with core's function when the
-- scan starts), over BC dates, the years around 0, ±infinity and NULL; zone maps prune.
EXPLAIN (COSTS OFF) SELECT count(*) FROM ex_col WHERE extract(year FROM d) = 1995;
SELECT q, differs(q) FROM (VALUES
  ('SELECT i FROM %s WHERE extract(year FROM d) = 1995'),
  ('SELECT i FROM %s WHERE extract(year FROM d) < 1995.5'),
  ('SELECT i FROM %s WHERE extract(year FROM d) >= -4000'),
  ('SELECT i FROM %s WHERE extract(year FROM d) <> 2000'),
  ('SELECT i FROM %s WHERE extract(year FROM d) BETWEEN -1 AND 1'),
  ('SELECT i FROM %s WHERE extract(isoyear FROM d) > 2010'),
  ('SELECT i FROM %s WHERE extract(decade FROM d) <= -1'),
  ('SELECT i FROM %s WHERE extract(century FROM d) = -1'),
  ('SELECT i FROM %s WHERE extract(millennium FROM d) > 2'),
  ('SELECT i FROM %s WHERE extract(year FROM d) < ''Infinity'''),
  ('SELECT i FROM %s WHERE extract(year FROM d) = ''-Infinity'''),
  ('SELECT i FROM %s WHERE extract(year FROM d) > ''NaN'''),
  ('SELECT i FROM %s WHERE NOT (extract(year FROM d) > 2020)'),
  ('SELECT i FROM %s WHERE 2001 <= extract(year FROM ts)'),
  ('SELECT i FROM %s WHERE extract(century FROM ts) < 21 AND mod(i, 3) = 0'),
  ('SELECT i FROM %s WHERE extract(isoyear FROM ts) = 2000'),
  ('SELECT i FROM %s WHERE date_part(''year'', ts) > 1999.5'),
  ('SELECT i FROM %s WHERE date_part(''millennium'', ts) = 3'),
  ('SELECT i FROM %s WHERE date_part(''decade'', ts) <> 200'),
  ('SELECT i FROM %s WHERE extract(year FROM d) = 1995 OR extract(year FROM ts) = 2001')
) v(q);
SELECT count(*) FROM ex_col WHERE extract(year FROM d) = 1995;
SELECT count(*) FROM ex_heap WHERE extract(year FROM d) = 1995;
PREPARE ey(numeric) AS SELECT count(*) FROM ex_col WHERE extract(year FROM d) = $1;
EXECUTE ey(1995);
EXECUTE ey(-4713);
SELECT count(*) FROM ex_heap WHERE extract(year FROM d) = -4713;
DEALLOCATE ey;
CREATE TABLE ex_days USING columnar AS
  SELECT d::date FROM generate_series(date '1990-01-01', date '2009-12-31', interval '1 day') d;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM ex_days WHERE extract(year FROM d) = 1995;
SELECT count(*), min(d), max(d) FROM ex_days WHERE extract(year FROM d) = 1995;
-- Not pushed: a field that does not grow with time, a timestamptz, another operand type.
EXPLAIN (COSTS OFF) SELECT count(*) FROM ex_col WHERE extract(month FROM d) = 3;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ex_tz WHERE extract(year FROM tz) = 2000;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ex_col WHERE extract(year FROM d)::int = 1995;
DROP TABLE ex_days;
-- A role that is no superuser, an inheritance child and a partition: the same fold,
-- the same answers as heap; uuid filters and the HAVING check on them too.
CREATE ROLE ex_reader;
CREATE TABLE ex_parent (i int, d date, u uuid);
CREATE TABLE ex_child () INHERITS (ex_parent) USING columnar;
CREATE TABLE ex_parts (i int, d date, u uuid) PARTITION BY RANGE (i);
CREATE TABLE ex_part0 PARTITION OF ex_parts FOR VALUES FROM (0) TO (20000) USING columnar;
CREATE TABLE ex_part1 PARTITION OF ex_parts FOR VALUES FROM (20000) TO (50000) USING columnar;
INSERT INTO ex_child SELECT i, d, md5(i::text)::uuid FROM ex_heap;
INSERT INTO ex_parts SELECT i, d, md5(i::text)::uuid FROM ex_heap;
CREATE TABLE ex_uuid_heap AS SELECT i, d, md5(i::text)::uuid AS u FROM ex_heap;
GRANT SELECT ON ex_parent, ex_child, ex_parts, ex_part0, ex_uuid_heap TO ex_reader;
SET ROLE ex_reader;
EXPLAIN (COSTS OFF)
SELECT extract(month FROM d), count(*) FROM ex_child WHERE u < '80000000-0000-0000-0000-000000000000'
GROUP BY 1 HAVING count(*) > 1500;
SELECT extract(month FROM d), count(*) FROM ex_child WHERE u < '80000000-0000-0000-0000-000000000000'
GROUP BY 1 HAVING count(*) > 1500 ORDER BY 1;
SELECT extract(month FROM d), count(*) FROM ex_uuid_heap WHERE u < '80000000-0000-0000-0000-000000000000'
GROUP BY 1 HAVING count(*) > 1500 ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT extract(isodow FROM d), count(*) FROM ex_part0 GROUP BY 1;
SELECT extract(isodow FROM d), count(*) FROM ex_part0 GROUP BY 1 ORDER BY 1;
SELECT extract(isodow FROM d), count(*) FROM ex_uuid_heap WHERE i < 20000 GROUP BY 1 ORDER BY 1;
SELECT extract(isodow FROM d), count(*) FROM ex_parts GROUP BY 1 ORDER BY 1;
SELECT extract(isodow FROM d), count(*) FROM ex_uuid_heap GROUP BY 1 ORDER BY 1;
RESET ROLE;
DROP TABLE ex_parent, ex_child, ex_parts, ex_uuid_heap;
DROP ROLE ex_reader;
DROP TABLE ex_col, ex_heap, ex_tz;
DROP FUNCTION differs(text);
DROP EXTENSION pgcolumnar;
