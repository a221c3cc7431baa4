-- CASE in ColumnarAgg's aggregate arguments: a searched CASE whose conditions are
-- filters the scan could push (comparisons, IN, IS NULL, LIKE, dates against
-- timestamps, char(n)) and whose values are vector expressions. Each query runs on a
-- columnar table and its heap twin; the plan says whether the fold ran. A row whose
-- condition is NULL takes the next branch; a branch is computed only for the rows that
-- take it, so an overflow in a branch no row takes raises nothing, as in core.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE cs_col (g int, i int, b int8, f float8, n numeric(12, 2), m numeric,
    d date, t text, c char(4)) USING columnar;
INSERT INTO cs_col SELECT i % 4,
    CASE WHEN i % 11 = 0 THEN NULL ELSE i % 100 END,
    CASE WHEN i % 5000 = 7 THEN 9223372036854775000 ELSE i END,
    CASE WHEN i % 13 = 0 THEN NULL ELSE i / 7.0 END,
    CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 1000) / 4.0 END,
    (ARRAY[1, 1.5, 2.25, 'NaN', NULL, -3.125])[i % 6 + 1],
    date '2024-01-01' + i % 60,
    (ARRAY['MAIL', 'SHIP', 'AIR', NULL, 'PROMO x', 'mail'])[i % 6 + 1],
    (ARRAY['R', 'A ', 'N', NULL])[i % 4 + 1]
FROM generate_series(1, 30000) i;
CREATE TABLE cs_heap AS SELECT * FROM cs_col;
ANALYZE cs_col, cs_heap;
-- Conditional sums with ELSE 0 (a group no row of which takes the THEN sums the ELSE's
-- 0, shown at its own scale), counts as sums of 1/0, no ELSE (NULL), several WHENs.
EXPLAIN (COSTS OFF)
SELECT g, sum(CASE WHEN c = 'R' THEN n * (1 - n) ELSE 0 END),
    sum(CASE WHEN t IN ('MAIL', 'SHIP') THEN 1 ELSE 0 END),
    avg(CASE WHEN i > 40 THEN f END),
    max(CASE WHEN i < 10 THEN n WHEN i < 20 THEN -n END)
FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN c = 'R' THEN n * (1 - n) ELSE 0 END),
    sum(CASE WHEN t IN ('MAIL', 'SHIP') THEN 1 ELSE 0 END),
    avg(CASE WHEN i > 40 THEN f END),
    max(CASE WHEN i < 10 THEN n WHEN i < 20 THEN -n END)
FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN c = 'R' THEN n * (1 - n) ELSE 0 END),
    sum(CASE WHEN t IN ('MAIL', 'SHIP') THEN 1 ELSE 0 END),
    avg(CASE WHEN i > 40 THEN f END),
    max(CASE WHEN i < 10 THEN n WHEN i < 20 THEN -n END)
FROM cs_heap GROUP BY g ORDER BY g;
-- Conditions of every pushed kind: IS NULL (a NULL condition falls through), LIKE,
-- AND/OR, a date against a timestamp, two columns; a CASE inside arithmetic, a nested
-- CASE, numerics with NaN and mixed scales, a pushed WHERE.
EXPLAIN (COSTS OFF)
SELECT sum(CASE WHEN i IS NULL THEN 1000 WHEN i >= 50 THEN i ELSE -i END),
    sum(CASE WHEN t LIKE 'PROMO%' THEN b ELSE 0 END),
    sum(f * CASE WHEN (g = 1 OR t = 'AIR') AND d < timestamp '2024-02-01 12:00' THEN 2 ELSE 1 END),
    sum(CASE WHEN b > i THEN m END), min(CASE WHEN i > 90 THEN m ELSE n END),
    sum(CASE WHEN g = 0 THEN CASE WHEN c = 'A' THEN 1 ELSE 2 END END)
FROM cs_col WHERE d <> date '2024-01-05';
SELECT sum(CASE WHEN i IS NULL THEN 1000 WHEN i >= 50 THEN i ELSE -i END),
    sum(CASE WHEN t LIKE 'PROMO%' THEN b ELSE 0 END),
    sum(f * CASE WHEN (g = 1 OR t = 'AIR') AND d < timestamp '2024-02-01 12:00' THEN 2 ELSE 1 END),
    sum(CASE WHEN b > i THEN m END), min(CASE WHEN i > 90 THEN m ELSE n END),
    sum(CASE WHEN g = 0 THEN CASE WHEN c = 'A' THEN 1 ELSE 2 END END)
FROM cs_col WHERE d <> date '2024-01-05';
SELECT sum(CASE WHEN i IS NULL THEN 1000 WHEN i >= 50 THEN i ELSE -i END),
    sum(CASE WHEN t LIKE 'PROMO%' THEN b ELSE 0 END),
    sum(f * CASE WHEN (g = 1 OR t = 'AIR') AND d < timestamp '2024-02-01 12:00' THEN 2 ELSE 1 END),
    sum(CASE WHEN b > i THEN m END), min(CASE WHEN i > 90 THEN m ELSE n END),
    sum(CASE WHEN g = 0 THEN CASE WHEN c = 'A' THEN 1 ELSE 2 END END)
FROM cs_heap WHERE d <> date '2024-01-05';
-- count of a CASE (the rows it gives a value) and of an expression.
EXPLAIN (COSTS OFF)
SELECT g, count(CASE WHEN t LIKE '%AI%' THEN 1 END), count(i * 2), count(CASE WHEN f > 100 THEN n END)
FROM cs_col GROUP BY g ORDER BY g;
SELECT g, count(CASE WHEN t LIKE '%AI%' THEN 1 END), count(i * 2), count(CASE WHEN f > 100 THEN n END)
FROM cs_col GROUP BY g ORDER BY g;
SELECT g, count(CASE WHEN t LIKE '%AI%' THEN 1 END), count(i * 2), count(CASE WHEN f > 100 THEN n END)
FROM cs_heap GROUP BY g ORDER BY g;
-- Every per-group result equal to heap's (no row printed).
(SELECT g, sum(CASE WHEN t = 'mail' THEN n ELSE m END), avg(CASE WHEN d > '2024-02-10' THEN i * 2 END)
 FROM cs_col GROUP BY g
 EXCEPT
 SELECT g, sum(CASE WHEN t = 'mail' THEN n ELSE m END), avg(CASE WHEN d > '2024-02-10' THEN i * 2 END)
 FROM cs_heap GROUP BY g);
-- An overflow in a branch no row takes raises nothing; in one a row takes, core's error.
SELECT sum(CASE WHEN b > 9000000000000000000 THEN b * 2 ELSE b END) FILTER (WHERE b < 100) FROM cs_col;
SELECT sum(CASE WHEN b < 100 THEN b ELSE b * 2 END) FROM cs_col WHERE b < 100;
SELECT sum(CASE WHEN b > 9000000000000000000 THEN b * 2 ELSE b END) FROM cs_col;
SELECT sum(CASE WHEN b > 9000000000000000000 THEN b * 2 ELSE b END) FROM cs_heap;
-- Parameters in a condition (a prepared statement), and a parallel fold.
PREPARE by_mode(text) AS SELECT sum(CASE WHEN t = $1 THEN i ELSE 0 END) FROM cs_col;
EXPLAIN (COSTS OFF) EXECUTE by_mode('SHIP');
EXECUTE by_mode('SHIP');
SELECT sum(CASE WHEN t = 'SHIP' THEN i ELSE 0 END) FROM cs_heap;
DEALLOCATE by_mode;
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
EXPLAIN (COSTS OFF)
SELECT g, sum(CASE WHEN c = 'N' THEN n ELSE 0 END), count(*) FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN c = 'N' THEN n ELSE 0 END), count(*) FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN c = 'N' THEN n ELSE 0 END), count(*) FROM cs_heap GROUP BY g ORDER BY g;
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;
-- Division of integers (truncating, as int4div) and floats, with core's errors for the
-- rows that reach it: division by zero (22012) and out of range.
EXPLAIN (COSTS OFF)
SELECT g, sum(i / 7), sum(b / (g + 1)), avg(f / 3) FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(i / 7), sum(b / (g + 1)), avg(f / 3) FROM cs_col GROUP BY g ORDER BY g;
SELECT g, sum(i / 7), sum(b / (g + 1)), avg(f / 3) FROM cs_heap GROUP BY g ORDER BY g;
SELECT sum(CASE WHEN i > 0 THEN 100 / i END), sum(f / 0.5) FROM cs_col;
SELECT sum(CASE WHEN i > 0 THEN 100 / i END), sum(f / 0.5) FROM cs_heap;
EXPLAIN (COSTS OFF) SELECT sum(100 / i) FROM cs_col;
\set VERBOSITY sqlstate
SELECT sum(100 / i) FROM cs_col;
SELECT sum(f / (g - g)) FROM cs_col WHERE f IS NOT NULL;
SELECT sum(i / (i - i)) FROM cs_col WHERE i IS NULL;
\set VERBOSITY default
-- What stays on core's Agg: a simple CASE (CASE x WHEN ...), a condition the scan
-- cannot push (a division), a value it cannot compute (a numeric division).
EXPLAIN (COSTS OFF) SELECT sum(CASE g WHEN 1 THEN i ELSE 0 END) FROM cs_col;
SELECT sum(CASE g WHEN 1 THEN i ELSE 0 END) FROM cs_col;
EXPLAIN (COSTS OFF) SELECT sum(CASE WHEN i / 2 > 10 THEN i ELSE 0 END) FROM cs_col;
EXPLAIN (COSTS OFF) SELECT sum(CASE WHEN i > 10 THEN n / 2 ELSE 0 END) FROM cs_col;
SELECT sum(CASE WHEN i > 10 THEN n / 2 ELSE 0 END) FROM cs_col;
SELECT sum(CASE WHEN i > 10 THEN n / 2 ELSE 0 END) FROM cs_heap;
-- A role that is no superuser, and a partition queried directly: the same fold.
CREATE ROLE cs_reader;
CREATE TABLE cs_parts (g int, i int, t text) PARTITION BY RANGE (g);
CREATE TABLE cs_part0 PARTITION OF cs_parts FOR VALUES FROM (0) TO (2) USING columnar;
CREATE TABLE cs_part1 PARTITION OF cs_parts FOR VALUES FROM (2) TO (10) USING columnar;
INSERT INTO cs_parts SELECT g, i, t FROM cs_col;
ANALYZE cs_parts;
GRANT SELECT ON cs_heap, cs_parts, cs_part0 TO cs_reader;
SET ROLE cs_reader;
EXPLAIN (COSTS OFF) SELECT g, sum(CASE WHEN t = 'AIR' THEN i END) FROM cs_part0 GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN t = 'AIR' THEN i END) FROM cs_part0 GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN t = 'AIR' THEN i END) FROM cs_parts GROUP BY g ORDER BY g;
SELECT g, sum(CASE WHEN t = 'AIR' THEN i END) FROM cs_heap GROUP BY g ORDER BY g;
RESET ROLE;
DROP TABLE cs_parts, cs_col, cs_heap;
DROP ROLE cs_reader;
DROP EXTENSION pgcolumnar;
