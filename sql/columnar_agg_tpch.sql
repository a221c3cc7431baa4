-- ColumnarAgg over TPC-H's shapes: numeric money columns (numeric(15,2)), char(1)
-- flags, dates, aggregates of arithmetic expressions (q1, q6, q15, q18). Every query
-- runs on a columnar table and on its heap twin, and the plan says whether the fold
-- ran; results are compared as text (the fold, core's Agg on the same table, heap).
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
-- Core's hash aggregate (like the fold) outputs a group's first value seen: 1.0 and
-- 1.00 are one numeric group, shown as whichever came first.
SET enable_sort = off;
CREATE TABLE li_col (
    l_orderkey int8, l_suppkey int, l_quantity numeric(15,2), l_extendedprice numeric(15,2),
    l_discount numeric(15,2), l_tax numeric(15,2), l_returnflag char(1), l_linestatus char(1),
    l_shipdate date, x numeric, xk numeric, c char(3), v bpchar,
    i2 int2, i4 int4, i8 int8, f4 float4, f8 float8) USING columnar;
INSERT INTO li_col SELECT i / 4 + 1, i % 97,
    CASE WHEN i % 101 = 0 THEN NULL ELSE (i * 7 % 100) + 1 END,
    CASE WHEN i % 103 = 0 THEN NULL ELSE (i * 7919 % 100000) / 100.0 + 900 END,
    (i % 11) / 100.0, (i % 9) / 100.0,
    (ARRAY['A', 'N', 'R'])[i % 3 + 1], CASE WHEN i % 2 = 0 THEN 'O' ELSE 'F' END,
    date '1992-01-01' + (i * 13) % 2500,
    -- Unconstrained: scales 0 to 3, NULLs; NaN and infinities come below.
    CASE WHEN i % 13 = 0 THEN NULL ELSE round(i / 7.0 - 1000, i % 4) END,
    (ARRAY[1.0, 1.00, 1, 2.50, 2.5, -0.0, 0])[i % 7 + 1],
    (ARRAY['a', 'ab', 'b  ', NULL])[i % 4 + 1],
    (ARRAY['a', 'a ', 'a  ', 'b', ' b'])[i % 5 + 1]::bpchar,
    (i % 3000 - 1500), i * 37 % 100000 - 50000,
    CASE WHEN i % 19 = 0 THEN NULL ELSE i::int8 * 1000003 END,
    (i % 1000) / 7.0, sin(i) * 1000
  FROM generate_series(1, 40000) i;
CREATE TABLE li_heap AS SELECT * FROM li_col;
ANALYZE li_col, li_heap;

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
-- How the query runs, and whether the fold, core's Agg and heap agree (as text).
CREATE FUNCTION agg_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE folded text; core text; heap text; plan text := agg_plan(q);
BEGIN
  folded := agg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'off', false);
  core := agg_rows(q);
  PERFORM set_config('pgcolumnar.enable_vector_agg', 'on', false);
  heap := agg_rows(replace(q, 'li_col', 'li_heap'));
  IF folded IS DISTINCT FROM core OR folded IS DISTINCT FROM heap THEN
    RETURN plan || ': DIFFERENT' || E'\n fold: ' || folded || E'\n core: ' || core || E'\n heap: ' || heap;
  END IF;
  RETURN plan || ': same';
END $$;
-- How the query runs, and whether its rows and heap's are the same set (EXCEPT both
-- ways, by value: for parallel plans, where a group's first value seen may differ).
CREATE FUNCTION agg_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE plan text := agg_plan(q); n bigint; rows bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) a', q, replace(q, 'li_col', 'li_heap')) INTO n;
  EXECUTE format('SELECT $1 + count(*) FROM ((%s) EXCEPT ALL (%s)) a', replace(q, 'li_col', 'li_heap'), q)
    INTO n USING n;
  EXECUTE format('SELECT count(*) FROM (%s) a', q) INTO rows;
  RETURN plan || CASE WHEN n = 0 THEN ': same ' ELSE ': DIFFERENT ' END || rows || ' rows';
END $$;

-- q1, as TPC-H has it (its date filter pushed down as a date constant).
EXPLAIN (COSTS OFF)
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM li_col WHERE l_shipdate <= date '1998-09-02'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;
SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty, sum(l_extendedprice) AS sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
       count(*) AS count_order
FROM li_col WHERE l_shipdate <= date '1996-09-02'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus;
SELECT agg_check($q$SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
       sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
       avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
FROM li_col WHERE l_shipdate <= date '1998-09-02' GROUP BY l_returnflag, l_linestatus$q$);
-- q6's shape (its numeric range filters stay with core today: not here).
SELECT agg_check($q$SELECT sum(l_extendedprice * l_discount) FROM li_col
  WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'$q$);
-- q15's revenue per supplier, and q18's large orders (HAVING on the fold's output).
SELECT agg_check($q$SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount)) FROM li_col
  WHERE l_shipdate >= date '1996-01-01' AND l_shipdate < date '1996-04-01' GROUP BY l_suppkey$q$);
EXPLAIN (COSTS OFF)
SELECT l_orderkey FROM li_col GROUP BY l_orderkey HAVING sum(l_quantity) > 300;
SELECT agg_check('SELECT l_orderkey FROM li_col GROUP BY l_orderkey HAVING sum(l_quantity) > 300');
SELECT agg_check('SELECT l_orderkey, sum(l_quantity) FROM li_col GROUP BY l_orderkey HAVING sum(l_quantity) > 250');

-- Group keys: char(n) and bpchar (trailing spaces do not count), numeric (scale does
-- not count: the group shows its first value), date.
SELECT agg_check('SELECT c, count(*), sum(l_tax) FROM li_col GROUP BY c');
SELECT agg_check('SELECT v, count(*), length(v), octet_length(v) FROM li_col GROUP BY v');
SELECT agg_check('SELECT xk, count(*), sum(xk) FROM li_col GROUP BY xk');
SELECT agg_check('SELECT l_shipdate, count(*), sum(l_quantity) FROM li_col WHERE l_shipdate < date ''1992-03-01'' GROUP BY l_shipdate');
SELECT agg_check('SELECT l_returnflag, c, xk, count(*) FROM li_col GROUP BY 1, 2, 3');
-- A per-key max of an integer (LastPoint's shape) keyed by numeric or bpchar: folded,
-- never LastPoint (its winners compare keys byte for byte).
SELECT agg_check('SELECT xk, max(i8), min(i4) FROM li_col GROUP BY xk');
SELECT agg_check('SELECT v, max(i8) FROM li_col GROUP BY v');

-- min and max of numeric (the value with its own scale), char(n), bpchar, date.
SELECT agg_check('SELECT min(l_quantity), max(l_extendedprice), min(xk), max(xk), min(x), max(x) FROM li_col');
SELECT agg_check('SELECT l_returnflag, min(c), max(c), min(v), max(v), min(l_shipdate), max(l_shipdate) FROM li_col GROUP BY 1');
SELECT agg_check('SELECT c, min(l_extendedprice * (1 - l_discount)), max(x * 2) FROM li_col GROUP BY c');

-- Variances and standard deviations of floats (float8_accum's state, as avg's), of
-- integers and numerics (exact sums, finished by core's own final functions).
SELECT agg_check('SELECT l_linestatus, stddev(f8), stddev_samp(f4), stddev_pop(f8), variance(f4), var_samp(f8), var_pop(f8 * 2) FROM li_col GROUP BY 1');
SELECT agg_check('SELECT stddev(f8), var_pop(f4), stddev_pop(f4) FROM li_col WHERE l_shipdate < date ''1992-01-20''');
SELECT agg_check('SELECT stddev(i4), variance(l_quantity) FROM li_col');

-- Expressions over every numeric type, with the casts core inserts.
SELECT agg_check('SELECT sum(i4 * 2), sum(i2 + i2), sum(i8 - i4), sum(-i4), avg(i2::int4 * i2), max(i4 * -3), min(i8 + 1) FROM li_col');
SELECT agg_check('SELECT sum(f8 * f4), avg(f8 - 1.5::float8), max(f4 * 2::float4), min(-f8), sum(i4 * 0.5::float8) FROM li_col');
SELECT agg_check('SELECT sum(i4 * 1.5), avg(i2 + l_tax), sum(x * 2), avg(x - l_discount), sum(-x), avg(x * x) FROM li_col');
SELECT agg_check('SELECT l_linestatus, sum(l_quantity * l_quantity * l_quantity), avg(l_extendedprice * l_discount) FROM li_col GROUP BY 1');
SELECT agg_check('SELECT sum(l_extendedprice * (1 - l_discount)) FILTER (WHERE i4 > 0), avg(x * 3) FILTER (WHERE l_shipdate > date ''1995-01-01'') FROM li_col');

-- NaN, infinities and values beyond 128 bits in an unconstrained numeric column.
-- (li_col_sp's heap twin is li_heap_sp, as agg_check names it.)
CREATE TABLE li_col_sp (g int, x numeric, y numeric) USING columnar;
INSERT INTO li_col_sp VALUES (1, 1.5, 2), (1, 'NaN', 1), (2, 'Infinity', 0), (2, 2.25, 1),
    (3, '-Infinity', -1), (3, 'Infinity', 1), (4, 1e30, 1e20), (4, -1e30, 3.5),
    (5, 99999999999999999999999999999999999, 99999999999999999999), (5, 0.000000001, 2),
    (6, 'Infinity', 'Infinity'), (6, NULL, 1), (7, 1e-40, 1e-40), (7, 12.5, -4),
    (8, 1e200, 1e200), (8, 1, 1);
CREATE TABLE li_heap_sp AS SELECT * FROM li_col_sp;
SELECT agg_check('SELECT g, sum(x * y), avg(x + y), sum(x - y), sum(-x), avg(x * 2 - y), sum(x * y * y) FROM li_col_sp GROUP BY g');
SELECT agg_check('SELECT sum(x * y), avg(x + y), sum(x) FROM li_col_sp WHERE g IN (4, 5, 7)');
SELECT g, sum(x * y), avg(x + y), min(x * y), max(x - y) FROM li_col_sp WHERE g < 7 GROUP BY g ORDER BY g;
SELECT agg_check('SELECT g, min(x), max(x), min(x * y), max(-y), min(x + 1) FROM li_col_sp GROUP BY g');

-- Overflow raises core's error, with its SQLSTATE.
\set VERBOSITY terse
SELECT sum(i4 * 100000) FROM li_col;
SELECT sum(i4 * 100000) FROM li_heap;
SELECT sum(i2 * 100::int2) FROM li_col;
SELECT sum(i2 * 100::int2) FROM li_heap;
SELECT sum(i8 * 10000000000000) FROM li_col;
SELECT sum(i8 * 10000000000000) FROM li_heap;
SELECT sum(f8 * 1e308::float8) FROM li_col WHERE f8 > 10;
SELECT sum(f8 * 1e308::float8) FROM li_heap WHERE f8 > 10;
SELECT sum(f8 * 1e-300::float8 * 1e-300::float8) FROM li_col WHERE f8 > 10;
SELECT sum(f8 * 1e-300::float8 * 1e-300::float8) FROM li_heap WHERE f8 > 10;
SELECT sum(f4 * 1e30::float4 * 1e30::float4) FROM li_col WHERE f4 > 10;
SELECT sum(f4 * 1e30::float4 * 1e30::float4) FROM li_heap WHERE f4 > 10;
SELECT agg_plan('SELECT sum(i4 * 100000) FROM li_col');
-- The SQLSTATEs: 22003 (numeric_value_out_of_range) on both.
\set VERBOSITY sqlstate
SELECT sum(i4 * 100000) FROM li_col;
SELECT sum(i4 * 100000) FROM li_heap;
SELECT sum(f8 * 1e308::float8) FROM li_col WHERE f8 > 10;
SELECT sum(f8 * 1e308::float8) FROM li_heap WHERE f8 > 10;
\set VERBOSITY default

-- numeric -> float8 is computed (the correctly rounded double, as float8in reads it).
SELECT agg_check('SELECT sum(f8 * l_quantity::float8) FROM li_col');
-- What stays on core's path: numeric division, functions, other casts.
SELECT agg_check('SELECT sum(l_extendedprice / 2) FROM li_col');
SELECT agg_check('SELECT sum(abs(i4)) FROM li_col');
SELECT agg_check('SELECT sum(i4::numeric(10,1) * 2) FROM li_col');

-- Parallel: partial folds under Gather, core's Finalize Aggregate (each core priced at
-- full speed, so that they are chosen on any machine).
SET pgcolumnar.parallel_core_scaling = 1;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT l_returnflag, l_linestatus, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), avg(l_quantity), count(*)
FROM li_col WHERE l_shipdate <= date '1998-09-02' GROUP BY l_returnflag, l_linestatus;
SELECT agg_same($q$SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
       sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
       avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
FROM li_col WHERE l_shipdate <= date '1998-09-02' GROUP BY l_returnflag, l_linestatus$q$);
SELECT agg_same($q$SELECT sum(l_extendedprice * l_discount) FROM li_col
  WHERE l_shipdate >= date '1994-01-01' AND l_shipdate < date '1995-01-01'$q$);
SELECT agg_same($q$SELECT l_suppkey, sum(l_extendedprice * (1 - l_discount)) FROM li_col
  WHERE l_shipdate >= date '1996-01-01' AND l_shipdate < date '1996-04-01' GROUP BY l_suppkey$q$);
-- A HAVING on partial folds: per supplier (97 groups, so that the partial states are
-- few and the parallel plan is the cheaper one).
EXPLAIN (COSTS OFF)
SELECT l_suppkey FROM li_col GROUP BY l_suppkey HAVING sum(l_quantity) > 20600;
SELECT agg_same('SELECT l_suppkey FROM li_col GROUP BY l_suppkey HAVING sum(l_quantity) > 20600');
SELECT agg_same('SELECT xk, c, v, count(*), sum(x * 2), avg(x) FROM li_col GROUP BY xk, c, v');
SELECT agg_same('SELECT sum(i4 * 2), sum(i8 - i4), avg(x - l_discount) FROM li_col');

RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET pgcolumnar.parallel_core_scaling;
DROP TABLE li_col, li_heap, li_col_sp, li_heap_sp;
DROP FUNCTION agg_check(text), agg_rows(text), agg_plan(text), agg_same(text);
DROP EXTENSION pgcolumnar;
