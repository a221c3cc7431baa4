-- What made TPC-H queries plan worse on columnar than on heap, each checked against a
-- heap twin: ANALYZE's sample of rows that share a value and lie together (q8), and a
-- join filter in front of a pushed filter (q19).
CREATE EXTENSION pgcolumnar;

-- Four consecutive rows per key, as an order's line items: 400,000 rows, 100,000 keys
-- (n_distinct -0.25), more rows than ANALYZE samples (30,000). A strided sample never
-- took two rows of one key and stored -1 (unique), so a join on the key was estimated
-- at one row per probe.
CREATE TABLE tp_line (orderkey int, partkey int, mode char(10), qty numeric(15,2), price numeric(15,2))
  USING columnar;
INSERT INTO tp_line
  SELECT g / 4, (g::bigint * 7919) % 20000 + 1,
         (ARRAY['AIR', 'AIR REG', 'MAIL', 'SHIP', 'TRUCK', 'RAIL', 'FOB'])[g % 7 + 1],
         (g % 43) + 1, ((g * 31) % 100000) / 100.0
  FROM generate_series(0, 399999) g;
CREATE TABLE tp_line_h AS SELECT * FROM tp_line;
CREATE TABLE tp_part (partkey int PRIMARY KEY, brand text, size int);
INSERT INTO tp_part SELECT g, 'Brand#' || (g % 25), g % 50 FROM generate_series(1, 20000) g;
CREATE TABLE tp_part_c USING columnar AS SELECT * FROM tp_part;
ANALYZE tp_line, tp_line_h, tp_part, tp_part_c;

-- The same data gets the same statistics (the sample's randomness comes from the
-- rows' places), close to the truth, and the key column still reads as in row order.
SELECT n_distinct BETWEEN -0.35 AND -0.18 AS near_truth, correlation > 0.99 AS ordered
  FROM pg_stats WHERE tablename = 'tp_line' AND attname = 'orderkey';
CREATE TEMP TABLE tp_first AS
  SELECT attname, n_distinct, correlation FROM pg_stats WHERE tablename = 'tp_line';
ANALYZE tp_line;
SELECT count(*) AS changed FROM pg_stats s JOIN tp_first f USING (attname)
  WHERE s.tablename = 'tp_line'
    AND (s.n_distinct IS DISTINCT FROM f.n_distinct OR s.correlation IS DISTINCT FROM f.correlation);
-- Per key probe, the estimate is four rows on both engines' statistics, not one.
EXPLAIN (COSTS ON) SELECT * FROM tp_line WHERE orderkey = 1234;
-- Columns of few distinct values are seen whole, as on heap.
SELECT c.attname, c.n_distinct AS columnar, h.n_distinct AS heap
  FROM pg_stats c JOIN pg_stats h USING (attname)
  WHERE c.tablename = 'tp_line' AND h.tablename = 'tp_line_h' AND c.attname IN ('mode', 'qty')
  ORDER BY 1;

-- q19's shape: few dimension keys (2% of the fact rows) and a pushed filter on the
-- fact table. The keys are tested first and the pushed filter only on the rows they
-- leave, so the join filter is chosen although every vector keeps a row of the keys.
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF)
SELECT sum(l.price) FROM tp_line l JOIN tp_part_c p ON l.partkey = p.partkey
  WHERE p.brand = 'Brand#3' AND p.size < 10
    AND l.mode IN ('AIR', 'AIR REG') AND l.qty BETWEEN 10 AND 30;
SELECT sum(l.price), count(*) FROM tp_line l JOIN tp_part_c p ON l.partkey = p.partkey
  WHERE p.brand = 'Brand#3' AND p.size < 10
    AND l.mode IN ('AIR', 'AIR REG') AND l.qty BETWEEN 10 AND 30;
SELECT sum(l.price), count(*) FROM tp_line_h l JOIN tp_part p ON l.partkey = p.partkey
  WHERE p.brand = 'Brand#3' AND p.size < 10
    AND l.mode IN ('AIR', 'AIR REG') AND l.qty BETWEEN 10 AND 30;
-- The rows each step removed.
DO $$
DECLARE line text;
BEGIN
  FOR line IN EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
    SELECT sum(l.price) FROM tp_line l JOIN tp_part_c p ON l.partkey = p.partkey
      WHERE p.brand = 'Brand#3' AND p.size < 10
        AND l.mode IN ('AIR', 'AIR REG') AND l.qty BETWEEN 10 AND 30 LOOP
    IF line ~ 'Rows Removed by (Join|Pushed) Filter|Join Filter Keys' THEN
      RAISE NOTICE '%', line;
    END IF;
  END LOOP;
END $$;

-- A test that follows one leaving a few rows of a vector decodes a dictionary's codes
-- for those rows alone; an OR's later branch, or the scan's output, that reads other
-- rows of the column decodes it again. Both against heap, with the filter pushed.
CREATE TABLE tp_codes (x int, a text, b text, y int) USING columnar;
INSERT INTO tp_codes
  SELECT g % 1000, (ARRAY['p', 'q', 'r', 's'])[(g * 7) % 4 + 1], (ARRAY['u', 'v', 'w'])[(g * 13) % 3 + 1],
         (g * 7919) % 5003
  FROM generate_series(1, 20000) g;
CREATE TABLE tp_codes_h AS SELECT * FROM tp_codes;
EXPLAIN (COSTS OFF)
SELECT a, b, count(*) FROM tp_codes WHERE (x < 40 AND a = 'p') OR (x > 960 AND a <> 'p') GROUP BY 1, 2;
SELECT a, b, count(*) FROM tp_codes WHERE (x < 40 AND a = 'p') OR (x > 960 AND a <> 'p')
  GROUP BY 1, 2 ORDER BY 1, 2;
SELECT a, b, count(*) FROM tp_codes_h WHERE (x < 40 AND a = 'p') OR (x > 960 AND a <> 'p')
  GROUP BY 1, 2 ORDER BY 1, 2;
-- Every row's value, where the filter read only a few, and the output (y, a) decodes
-- the few rows left.
SELECT count(*) FROM (SELECT x, a, b, y FROM tp_codes WHERE x < 100 AND b = 'u'
  EXCEPT ALL SELECT x, a, b, y FROM tp_codes_h WHERE x < 100 AND b = 'u') d;
SELECT count(*) FROM (SELECT x, a, b, y FROM tp_codes_h WHERE x < 100 AND b = 'u'
  EXCEPT ALL SELECT x, a, b, y FROM tp_codes WHERE x < 100 AND b = 'u') d;
SELECT sum(y), string_agg(a, '' ORDER BY y, a) = (SELECT string_agg(a, '' ORDER BY y, a)
  FROM tp_codes_h WHERE x < 30 AND b = 'w') AS same_a FROM tp_codes WHERE x < 30 AND b = 'w';
SELECT sum(y) FROM tp_codes_h WHERE x < 30 AND b = 'w';
SELECT count(*) FROM tp_codes WHERE x < 100 AND b = 'u';
RESET max_parallel_workers_per_gather;
DROP TABLE tp_line, tp_line_h, tp_part, tp_part_c, tp_codes, tp_codes_h;
DROP EXTENSION pgcolumnar;
