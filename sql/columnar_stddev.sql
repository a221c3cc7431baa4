-- stddev, stddev_samp, stddev_pop, variance, var_samp and var_pop in ColumnarAgg, over
-- int2, int4, int8, float4, float8, numeric and numeric(12,2) columns and expressions:
-- NULLs, groups of one row, of NULLs only, of equal values, NaN and infinities, values
-- past 64 and 128 bits, display scales mixed and past a stored numeric's. Every query
-- runs on a columnar table and its heap twin, and with the fold turned off; sd_check
-- prints how the query ran and every row that the runs do not share, compared as text
-- (so a numeric's display scale and a float's last bit count).
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE sd_col (g int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, m numeric(12,2))
    USING columnar;
INSERT INTO sd_col SELECT i % 5,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i % 3000 - 1500 END,
    i * 37 % 100000 - 50000,
    CASE WHEN i % 19 = 0 THEN NULL ELSE i::int8 * 1000003 - 15000000000 END,
    (i % 1000) / 7.0,
    CASE WHEN i % 23 = 0 THEN NULL ELSE sin(i) * 1000 END,
    -- Display scales 0 to 3.
    CASE WHEN i % 13 = 0 THEN NULL ELSE round(i / 7.0 - 1000, i % 4) END,
    (i * 7919 % 100000) / 100.0 - 300
FROM generate_series(1, 30000) i;
INSERT INTO sd_col VALUES
    -- One row: samples are NULL, populations 0.
    (100, 7, 7, 7, 7, 7, 7.5, 7.25),
    -- Only NULLs.
    (101, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
    -- Equal values (3.0 and 3 differ in display scale only).
    (102, 3, 3, 3, 3, 3, 3.0, 3.00), (102, 3, 3, 3, 3, 3, 3, 3),
    -- NaN.
    (103, 1, 1, 1, 'NaN', 'NaN', 'NaN', 1), (103, 2, 2, 2, 2, 2, 2.5, 2),
    -- Infinities.
    (104, 1, 1, 1, 'Infinity', 'Infinity', 'Infinity', 1), (104, 2, 2, 2, 1, 1, 1, 2),
    (105, 1, 1, 1, '-Infinity', 1, '-Infinity', 1), (105, 1, 1, 1, 1, '-Infinity', 'Infinity', 1),
    -- Extremes: int8 squares past 128 bits, numerics past 128 bits and with a display
    -- scale of 300, negative values.
    (106, -32768, -2147483648, -9223372036854775808, 3.4e38, 1e150, 1e30, 9999999999.99),
    (106, 32767, 2147483647, 9223372036854775807, -3.4e38, -1e150, -1e-20, -9999999999.99),
    (106, -32768, -2147483648, -9223372036854775808, 1, 1, round(1::numeric / 3, 300), 0.01),
    -- Display scale 9000: its square's, 18000, is past what a stored numeric can have.
    (107, 1, 1, 1, 1, 1, ('0.' || repeat('0', 8999) || '1')::numeric, 1),
    (107, 2, 2, 2, 2, 2, 3, 2),
    (107, 3, 3, 3, 3, 3, ('-0.' || repeat('3', 9000))::numeric, 3);
CREATE TABLE sd_heap AS SELECT * FROM sd_col;
ANALYZE sd_col, sd_heap;

-- 'fold' / 'parallel fold' if a ColumnarAgg runs the query, else 'core'.
CREATE FUNCTION sd_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%Parallel Custom Scan (PgColumnarAgg)%' THEN 'parallel fold'
              WHEN plan LIKE '%Custom Scan (PgColumnarAgg)%' THEN 'fold'
              ELSE 'core' END;
END $$;
-- The query's rows, as text.
CREATE FUNCTION sd_rows(q text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE r text[];
BEGIN
  EXECUTE format('SELECT coalesce(array_agg(x::text), ''{}'') FROM (%s) x', q) INTO r;
  RETURN r;
END $$;
-- How `q` runs and how many rows it gives, then every row that it and its heap twin,
-- or it and core's Agg on the same columnar table, do not share.
CREATE FUNCTION sd_check(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE fold text[] := sd_rows(q); heap text[] := sd_rows(replace(q, 'sd_col', 'sd_heap')); core text[];
BEGIN
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'off', true);
  core := sd_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'on', true);
  RETURN NEXT sd_plan(q) || ', ' || cardinality(fold) || ' rows';
  RETURN QUERY SELECT 'fold, not heap: ' || r FROM (SELECT unnest(fold) EXCEPT ALL SELECT unnest(heap)) a(r);
  RETURN QUERY SELECT 'heap, not fold: ' || r FROM (SELECT unnest(heap) EXCEPT ALL SELECT unnest(fold)) a(r);
  RETURN QUERY SELECT 'fold, not core: ' || r FROM (SELECT unnest(fold) EXCEPT ALL SELECT unnest(core)) a(r);
  RETURN QUERY SELECT 'core, not fold: ' || r FROM (SELECT unnest(core) EXCEPT ALL SELECT unnest(fold)) a(r);
END $$;

EXPLAIN (COSTS OFF)
SELECT g, stddev(i2), var_pop(i4), variance(i8), stddev_pop(n), var_samp(m), stddev_samp(f8)
FROM sd_col GROUP BY g;
-- The groups of their own, shown (the long numerics by their first digits and length).
SELECT g, left(var_samp(n)::text, 24) vs, length(var_samp(n)::text) vsl, left(stddev_pop(n)::text, 24) sp,
    length(stddev_pop(n)::text) spl, stddev(i8), var_pop(i4), stddev_samp(m), variance(f8), var_pop(f4)
FROM sd_col WHERE g >= 100 GROUP BY g ORDER BY g;
SELECT g, left(var_samp(n)::text, 24) vs, length(var_samp(n)::text) vsl, left(stddev_pop(n)::text, 24) sp,
    length(stddev_pop(n)::text) spl, stddev(i8), var_pop(i4), stddev_samp(m), variance(f8), var_pop(f4)
FROM sd_heap WHERE g >= 100 GROUP BY g ORDER BY g;
-- Every variant over every type, grouped.
SELECT sd_check('SELECT g, stddev(i2), stddev_samp(i2), stddev_pop(i2), variance(i2), var_samp(i2), var_pop(i2) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(i4), stddev_samp(i4), stddev_pop(i4), variance(i4), var_samp(i4), var_pop(i4) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(i8), stddev_samp(i8), stddev_pop(i8), variance(i8), var_samp(i8), var_pop(i8) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(f4), stddev_samp(f4), stddev_pop(f4), variance(f4), var_samp(f4), var_pop(f4) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(f8), stddev_samp(f8), stddev_pop(f8), variance(f8), var_samp(f8), var_pop(f8) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(n), stddev_samp(n), stddev_pop(n), variance(n), var_samp(n), var_pop(n) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, stddev(m), stddev_samp(m), stddev_pop(m), variance(m), var_samp(m), var_pop(m) FROM sd_col GROUP BY g');
-- Without GROUP BY; with a pushed filter; with one that keeps no row.
SELECT sd_check('SELECT stddev(i2), var_pop(i4), stddev_pop(i8), var_samp(f4), stddev(f8), variance(n), stddev_samp(m) FROM sd_col');
SELECT sd_check('SELECT stddev(i2), var_pop(i4), stddev_pop(i8), var_samp(f4), stddev(f8), variance(n), stddev_samp(m) FROM sd_col WHERE g < 100');
SELECT sd_check('SELECT g, stddev(i2), var_pop(i8), variance(n), stddev_pop(m) FROM sd_col WHERE i4 > 0 GROUP BY g');
SELECT sd_check('SELECT stddev(i2), var_pop(i4), stddev_pop(i8), variance(n), stddev_samp(m) FROM sd_col WHERE g > 1000');
SELECT sd_check('SELECT g, stddev(i2), variance(n) FROM sd_col WHERE g > 1000 GROUP BY g');
-- Expression arguments; FILTER; HAVING.
EXPLAIN (COSTS OFF)
SELECT g, stddev(i4 * 2), var_pop(m * 2 - n) FROM sd_col WHERE g < 100 GROUP BY g;
SELECT sd_check('SELECT g, stddev(i4 * 2), var_samp(i8 + i2), var_pop(m * 2 - n), stddev_pop(n * m), variance(m - 1) FROM sd_col WHERE g < 100 GROUP BY g');
SELECT sd_check('SELECT g, stddev(n) FILTER (WHERE i4 > 0), var_pop(i8) FILTER (WHERE m < 0) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT g, count(*) FROM sd_col GROUP BY g HAVING stddev(m) > 200');
-- float8_accum's overflow from finite inputs: core's error on both.
CREATE TABLE sd_over_col (f8 float8) USING columnar;
INSERT INTO sd_over_col VALUES (1e300), (-1e300);
CREATE TABLE sd_over_heap AS SELECT * FROM sd_over_col;
EXPLAIN (COSTS OFF) SELECT var_pop(f8) FROM sd_over_col;
SELECT var_pop(f8) FROM sd_over_col;
SELECT var_pop(f8) FROM sd_over_heap;

-- Parallel: partial folds under Gather (their states numeric_poly_serialize's,
-- numeric_serialize's and float8_accum's), core's Finalize Aggregate.
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT g, stddev(i2), var_pop(i4), variance(i8), stddev_pop(n), var_samp(m) FROM sd_col GROUP BY g;
SELECT sd_check('SELECT g, stddev(i2), var_pop(i4), variance(i8), stddev_pop(n), var_samp(m), stddev_samp(n * 2) FROM sd_col GROUP BY g');
SELECT sd_check('SELECT stddev(i2), var_pop(i4), variance(i8), stddev_pop(n), var_samp(m) FROM sd_col');
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;

DROP TABLE sd_col, sd_heap, sd_over_col, sd_over_heap;
DROP FUNCTION sd_check(text), sd_rows(text), sd_plan(text);
DROP EXTENSION pgcolumnar;
