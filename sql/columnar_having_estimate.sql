-- How many groups a ColumnarAgg's HAVING keeps, estimated from the column's statistics
-- (core prices every `aggregate > constant` at 1/3 of the groups). A selective HAVING in
-- an IN subquery (TPC-H q18's shape) must come out small, so that the subquery drives
-- the join instead of being joined last. Results are checked against a heap twin.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
-- 5000 orders of 4 lines, quantities 1..50; orders 7, 8 and 9 have huge quantities.
CREATE TABLE lines_col (o int, q numeric(15,2), n int) USING columnar;
INSERT INTO lines_col SELECT i / 4, CASE WHEN i / 4 IN (7, 8, 9) THEN 200 ELSE i * 37 % 50 + 1 END, i % 5
FROM generate_series(0, 19999) i;
CREATE TABLE lines_heap AS SELECT * FROM lines_col;
CREATE TABLE orders_heap (o int PRIMARY KEY, note text);
INSERT INTO orders_heap SELECT i, 'order ' || i FROM generate_series(0, 4999) i;
ANALYZE lines_col, lines_heap, orders_heap;
-- The estimated rows of a query's top plan node.
CREATE FUNCTION estimated_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
    RETURN (plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;
-- A sum no group of 4 ordinary lines reaches: a handful of groups, not 1/3 of 5000.
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING sum(q) > 500') < 50 AS selective;
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING 500 < sum(q)') < 50 AS commuted;
-- Its complement keeps nearly all groups; a threshold at the mean about half.
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING sum(q) <= 500') > 4500 AS complement;
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING avg(q) > 25.5') BETWEEN 1000 AND 4000 AS middle;
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING max(q) > 50') < 50 AS max_beyond;
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING count(*) > 10') < 50 AS count_beyond;
-- Tests the model does not know keep core's estimate (1/3; 1/200 for equality).
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING sum(q) = 800') = 25 AS equality_as_core;
SELECT estimated_rows('SELECT o FROM lines_col GROUP BY o HAVING sum(q + 1) > 500') = 1667 AS expression_as_core;
EXPLAIN (COSTS OFF)
SELECT o.o, o.note FROM orders_heap o
WHERE o.o IN (SELECT o FROM lines_col GROUP BY o HAVING sum(q) > 500) ORDER BY 1;
SELECT o.o, o.note FROM orders_heap o
WHERE o.o IN (SELECT o FROM lines_col GROUP BY o HAVING sum(q) > 500) ORDER BY 1;
SELECT o.o, o.note FROM orders_heap o
WHERE o.o IN (SELECT o FROM lines_heap GROUP BY o HAVING sum(q) > 500) ORDER BY 1;
-- Several tests multiply; results as heap's.
SELECT o, sum(q), count(*) FROM lines_col GROUP BY o HAVING sum(q) > 500 AND count(*) >= 4 AND min(q) > 100 ORDER BY 1;
SELECT o, sum(q), count(*) FROM lines_heap GROUP BY o HAVING sum(q) > 500 AND count(*) >= 4 AND min(q) > 100 ORDER BY 1;
-- The fold checks `aggregate op constant` itself and makes no row for a group that
-- clearly fails (core's HAVING checks the rows made): the counter says how many it
-- removed; the answers equal heap's, at the boundary too (orders 7, 8 and 9 sum to
-- exactly 800.00: kept by >= 800 and = 800, not by > 800).
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT o FROM lines_col GROUP BY o HAVING sum(q) > 500;
SELECT o, sum(q) FROM lines_col GROUP BY o HAVING sum(q) >= 800 ORDER BY 1;
SELECT o, sum(q) FROM lines_col GROUP BY o HAVING sum(q) > 800 ORDER BY 1;
SELECT o, sum(q) FROM lines_col GROUP BY o HAVING 800.00 = sum(q) ORDER BY 1;
SELECT o, sum(q) FROM lines_heap GROUP BY o HAVING 800.00 = sum(q) ORDER BY 1;
SELECT count(*) FROM (SELECT o FROM lines_col GROUP BY o HAVING avg(q) < 20 AND count(n) = 4 AND max(n) <= 4) x;
SELECT count(*) FROM (SELECT o FROM lines_heap GROUP BY o HAVING avg(q) < 20 AND count(n) = 4 AND max(n) <= 4) x;
SELECT count(*) FROM (SELECT o FROM lines_col GROUP BY o HAVING sum(n) FILTER (WHERE q > 25) > 6) x;
SELECT count(*) FROM (SELECT o FROM lines_heap GROUP BY o HAVING sum(n) FILTER (WHERE q > 25) > 6) x;
-- Without statistics the test falls back to core's 1/3.
-- (A temporary table: autovacuum never analyzes one behind the test's back.)
CREATE TEMP TABLE fresh_col (o int, q int) USING columnar;
INSERT INTO fresh_col SELECT i / 4, i % 50 FROM generate_series(0, 19999) i;
SELECT estimated_rows('SELECT o FROM fresh_col GROUP BY o HAVING sum(q) > 500') > 50 AS no_stats_as_core;
DROP FUNCTION estimated_rows(text);
DROP TABLE lines_col, lines_heap, orders_heap, fresh_col;
DROP EXTENSION pgcolumnar;
