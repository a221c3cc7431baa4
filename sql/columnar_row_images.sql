-- Row output where each row's images are written as the row is stored (byte strings
-- not kept as a dictionary: text, char(n), uuid, name; scaled numerics), against a heap
-- twin, through nodes that keep a row while asking the scan for the next one (window
-- functions, Unique, merge and nested-loop joins, ordered aggregates) and a cursor
-- going back and forth. Then low-cardinality text recurring in a fixed cycle, which the
-- encoder keeps a dictionary (plain + zstd would store it smaller, but decode slower).
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE ri_col (id int, t text, c char(12), u uuid, nm name, n numeric(15,2), big numeric)
  USING columnar;
-- 5000 rows (3 vectors): unique long text, NULLs, values past 64 bytes, 3 numeric scales.
INSERT INTO ri_col SELECT g,
    CASE WHEN g % 23 = 0 THEN NULL WHEN g % 9 = 0 THEN repeat('long ', g % 40) || g
         ELSE 'Customer#' || lpad((g * 17)::text, 12, '0') || ' clerk ' || g % 7 END,
    CASE WHEN g % 29 = 0 THEN NULL ELSE 'c' || g END,
    CASE WHEN g % 31 = 0 THEN NULL ELSE md5(g::text)::uuid END,
    'name ' || (g % 300),
    CASE WHEN g % 37 = 0 THEN NULL ELSE ((g * 7919) % 100003) * 1.01 - 2500 END,
    CASE WHEN g % 41 = 0 THEN NULL ELSE g * 92233720368547.758 END
  FROM generate_series(1, 5000) g;
CREATE TABLE ri_heap AS SELECT * FROM ri_col;
ANALYZE ri_col, ri_heap;
-- Which columns are byte strings stored plain (images written per row) or as short
-- varlena images (Datums pointing at them), which a dictionary (a Datum per entry),
-- which scaled numerics.
SELECT attname, encodings FROM pgcolumnar.stats('ri_col') ORDER BY attname;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id, t, lag(t) OVER w, lag(n) OVER w FROM ri_col WINDOW w AS (ORDER BY id);
-- Each row beside the one before it (a window over the scan's order).
SELECT count(*) AS rows_differing FROM (
  (SELECT id, t, lag(t) OVER w, lead(c) OVER w, lag(u) OVER w, lag(nm) OVER w, lag(n) OVER w,
          lag(big) OVER w FROM ri_col WINDOW w AS (ORDER BY id)
   EXCEPT ALL
   SELECT id, t, lag(t) OVER w, lead(c) OVER w, lag(u) OVER w, lag(nm) OVER w, lag(n) OVER w,
          lag(big) OVER w FROM ri_heap WINDOW w AS (ORDER BY id))) x;
-- The columnar table joined to itself by merge join and by nested loop.
SET enable_hashjoin = off;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT a.t, b.n FROM ri_col a JOIN ri_col b ON a.t = b.t;
SELECT count(*), count(DISTINCT a.t), sum(b.n), sum(b.big) FROM ri_col a JOIN ri_col b ON a.t = b.t;
SELECT count(*), count(DISTINCT a.t), sum(b.n), sum(b.big) FROM ri_heap a JOIN ri_heap b ON a.t = b.t;
RESET enable_nestloop;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT a.id, b.id FROM ri_col a JOIN ri_col b ON a.c = b.c AND a.id < 40;
SELECT length(x), md5(x) FROM (SELECT string_agg(a.t || '/' || b.c || '/' || b.n, ',' ORDER BY a.id)
  FROM ri_col a JOIN ri_col b ON a.c = b.c AND a.id < 40) s(x);
SELECT length(x), md5(x) FROM (SELECT string_agg(a.t || '/' || b.c || '/' || b.n, ',' ORDER BY a.id)
  FROM ri_heap a JOIN ri_heap b ON a.c = b.c AND a.id < 40) s(x);
RESET enable_hashjoin;
RESET enable_mergejoin;
-- Distinct values, and aggregates keeping the values they see, as heap gives them.
SELECT count(*) AS values_differing FROM (
  (SELECT DISTINCT nm, n FROM ri_col EXCEPT ALL SELECT DISTINCT nm, n FROM ri_heap)
  UNION ALL
  (SELECT DISTINCT nm, n FROM ri_heap EXCEPT ALL SELECT DISTINCT nm, n FROM ri_col)) x;
SELECT md5(array_agg(u ORDER BY id)::text), length(max(t)), min(c), sum(big) FROM ri_col;
SELECT md5(array_agg(u ORDER BY id)::text), length(max(t)), min(c), sum(big) FROM ri_heap;
-- A cursor stepping back and forth across vectors: each fetch shows its own row.
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT id, t, c, u, nm, n, big FROM ri_col;
FETCH ABSOLUTE 2048 FROM cur;
FETCH NEXT FROM cur;
FETCH PRIOR FROM cur;
FETCH ABSOLUTE 4609 FROM cur;
COMMIT;
SELECT id, t, c, u, nm, n, big FROM ri_heap WHERE id IN (2048, 2049, 4609) ORDER BY id;
-- Low-cardinality text in a fixed cycle (codes repeat every 50 and 7 rows): kept a
-- dictionary, and read as heap reads it.
CREATE TABLE cy_col (id int, c char(10), m text) USING columnar;
INSERT INTO cy_col SELECT g, ('C' || (g % 50))::char(10),
    (ARRAY['AIR', 'MAIL', 'SHIP', 'TRUCK', 'RAIL', 'FOB', 'REG AIR'])[g % 7 + 1]
  FROM generate_series(1, 4096) g;
CREATE TABLE cy_heap AS SELECT * FROM cy_col;
SELECT attname, encodings FROM pgcolumnar.stats('cy_col') ORDER BY attname;
EXPLAIN (COSTS OFF) SELECT c, m FROM cy_col;
SELECT count(*) AS rows_differing FROM (
  (SELECT id, bpcharsend(c), m FROM cy_col EXCEPT ALL SELECT id, bpcharsend(c), m FROM cy_heap)
  UNION ALL
  (SELECT id, bpcharsend(c), m FROM cy_heap EXCEPT ALL SELECT id, bpcharsend(c), m FROM cy_col)) x;
DROP TABLE ri_col, ri_heap, cy_col, cy_heap;
DROP EXTENSION pgcolumnar;
