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
