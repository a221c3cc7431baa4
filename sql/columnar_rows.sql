-- Rows a ColumnarScan returns, value for value against heap: wide rows of many types
-- with many NULLs (whole vectors of them too), long unique text and dictionary-encoded
-- text, a column added with a default after the first row group (its rows read the
-- default), deleted rows; forward, backward and by jumps through a scroll cursor, with
-- and without a pushed filter, and through the table access method's own scan.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rows_heap (
  id int, i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric(15,2), d date,
  code text, name text, ch char(10), b bool, vc varchar(20), by bytea, j jsonb, a int[],
  ts timestamptz);
CREATE TABLE rows_col (LIKE rows_heap) USING columnar;
CREATE FUNCTION rows_fill(tbl text, lo int, hi int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$INSERT INTO %I SELECT g,
    CASE WHEN g %% 3 <> 0 THEN (g %% 30000 - 15000)::int2 END,
    CASE WHEN g %% 5 <> 1 THEN g * -7 END,
    CASE WHEN g NOT BETWEEN 3000 AND 6100 THEN g::int8 * 1000003 END,
    CASE WHEN g %% 4 <> 2 THEN (g %% 1000) * -0.25::float4 END,
    CASE WHEN g %% 7 <> 3 THEN g * 0.001 END,
    CASE WHEN g %% 6 <> 4 THEN (g %% 100003) * 1.01 - 500 END,
    CASE WHEN g %% 8 <> 5 THEN date '1992-01-01' + g %% 2526 END,
    CASE WHEN g NOT BETWEEN 4096 AND 6143 THEN (array['AIR','MAIL','SHIP','TRUCK'])[g %% 4 + 1] END,
    CASE WHEN g %% 9 <> 0 THEN 'Customer#' || lpad(g::text, 12, '0') || repeat(' long', g %% 40) END,
    CASE WHEN g %% 10 <> 1 THEN 'C' || g %% 50 END,
    CASE WHEN g %% 11 <> 2 THEN g %% 2 = 0 END,
    CASE WHEN g %% 12 <> 3 THEN 'v' || g END,
    CASE WHEN g %% 13 <> 4 THEN decode(md5(g::text), 'hex') END,
    CASE WHEN g %% 14 <> 5 THEN jsonb_build_object('g', g, 'k', g %% 3) END,
    CASE WHEN g %% 15 <> 6 THEN ARRAY[g, -g] END,
    CASE WHEN g %% 16 <> 7 THEN timestamptz '2020-01-01 00:00:00+00' + g * interval '1 minute' END
    FROM generate_series(%s, %s) g$q$, tbl, lo, hi);
END $$;
SELECT rows_fill('rows_heap', 1, 9000), rows_fill('rows_col', 1, 9000);
ALTER TABLE rows_heap ADD COLUMN extra text DEFAULT 'added later';
ALTER TABLE rows_col ADD COLUMN extra text DEFAULT 'added later';
SELECT rows_fill('rows_heap', 9001, 15000), rows_fill('rows_col', 9001, 15000);
INSERT INTO rows_heap (id, name, extra) SELECT g, 'n' || g, CASE WHEN g % 3 = 0 THEN 'x' || g END
  FROM generate_series(15001, 15500) g;
INSERT INTO rows_col (id, name, extra) SELECT g, 'n' || g, CASE WHEN g % 3 = 0 THEN 'x' || g END
  FROM generate_series(15001, 15500) g;
DELETE FROM rows_heap WHERE id % 101 = 0 OR id BETWEEN 7000 AND 7100;
DELETE FROM rows_col WHERE id % 101 = 0 OR id BETWEEN 7000 AND 7100;
-- Statistics now, so that autovacuum's ANALYZE cannot change the plans below.
ANALYZE rows_heap, rows_col;

-- Core's Seq Scan would be cheaper for a table this small: the ColumnarScan is the
-- subject here (the access method's own scan comes after).
SET enable_seqscan = off;
-- Every row and value, in one digest per table (rows in id order).
EXPLAIN (COSTS OFF) SELECT * FROM rows_col;
SELECT (SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM rows_col t)
     = (SELECT md5(string_agg(t::text, '|' ORDER BY id)) FROM rows_heap t) AS same_rows,
       (SELECT count(*) FROM rows_col) AS row_count;
-- Some columns only, and a pushed filter that keeps a few rows of each vector.
ALTER TABLE rows_col SET (quals_push_down = on);
EXPLAIN (COSTS OFF) SELECT id, name, n, code FROM rows_col WHERE i4 % 3 = 0 AND id > 100;
SELECT (SELECT md5(string_agg(format('%s %s %s %s', id, name, n, code), '|' ORDER BY id))
          FROM rows_col WHERE i4 > -30000 AND ch > 'C3')
     = (SELECT md5(string_agg(format('%s %s %s %s', id, name, n, code), '|' ORDER BY id))
          FROM rows_heap WHERE i4 > -30000 AND ch > 'C3') AS same_filtered;

-- A scroll cursor: forward to the end, backward to the start, forward again, and jumps,
-- each row's text against heap's row of the same position.
CREATE FUNCTION rows_walk(q text, reference text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  c refcursor;
  want text[];
  fwd text[] := '{}';
  bwd text[] := '{}';
  again text[] := '{}';
  r record;
  n int;
  at int;
  misses int := 0;
BEGIN
  EXECUTE format('SELECT array_agg(t::text ORDER BY id) FROM (%s) t', reference) INTO want;
  OPEN c SCROLL FOR EXECUTE q;
  LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; fwd := fwd || r::text; END LOOP;
  LOOP FETCH PRIOR FROM c INTO r; EXIT WHEN NOT FOUND; bwd := bwd || r::text; END LOOP;
  LOOP FETCH NEXT FROM c INTO r; EXIT WHEN NOT FOUND; again := again || r::text; END LOOP;
  n := cardinality(fwd);
  FOR i IN 1..least(n, 300) LOOP
    at := (i * 7919) % n + 1;
    FETCH ABSOLUTE at FROM c INTO r;
    misses := misses + (r::text IS DISTINCT FROM want[at])::int;
    FETCH PRIOR FROM c INTO r;
    misses := misses + (at > 1 AND r::text IS DISTINCT FROM want[at - 1])::int;
  END LOOP;
  CLOSE c;
  RETURN format('%s rows; forward = heap: %s; backward = reversed heap: %s; forward again = heap: %s; jumps missed: %s',
    n, fwd = want, bwd = (SELECT array_agg(x ORDER BY o DESC) FROM unnest(want) WITH ORDINALITY u(x, o)),
    again = want, misses);
END $$;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT * FROM rows_col;
SELECT rows_walk('SELECT * FROM rows_col', 'SELECT * FROM rows_heap');
SELECT rows_walk('SELECT id, extra, name, f4, a FROM rows_col WHERE id % 7 = 2',
                 'SELECT id, extra, name, f4, a FROM rows_heap WHERE id % 7 = 2');
SELECT rows_walk('SELECT id, code, ch, i8 FROM rows_col WHERE i4 < -20000',
                 'SELECT id, code, ch, i8 FROM rows_heap WHERE i4 < -20000');
-- The table access method's own scan.
SET pgcolumnar.enable_columnar_scan = off;
RESET enable_seqscan;
EXPLAIN (COSTS OFF) DECLARE c SCROLL CURSOR FOR SELECT * FROM rows_col;
SELECT rows_walk('SELECT * FROM rows_col', 'SELECT * FROM rows_heap');
RESET pgcolumnar.enable_columnar_scan;
SET enable_seqscan = off;

-- The scan's rows kept by a parent: a join's side, a sort.
EXPLAIN (COSTS OFF)
SELECT md5(string_agg(c.name || c.code || h.vc, ',' ORDER BY c.id)) FROM rows_col c JOIN rows_heap h USING (id);
SELECT (SELECT md5(string_agg(c.name || c.code || h.vc, ',' ORDER BY c.id))
          FROM rows_col c JOIN rows_heap h USING (id))
     = (SELECT md5(string_agg(c.name || c.code || h.vc, ',' ORDER BY c.id))
          FROM rows_heap c JOIN rows_heap h USING (id)) AS same_join;
SELECT (SELECT string_agg(x, ',') FROM (SELECT name || extra AS x FROM rows_col ORDER BY name DESC NULLS LAST, id LIMIT 5) s)
     = (SELECT string_agg(x, ',') FROM (SELECT name || extra AS x FROM rows_heap ORDER BY name DESC NULLS LAST, id LIMIT 5) s)
       AS same_sorted;
RESET enable_seqscan;
DROP FUNCTION rows_walk(text, text);
DROP FUNCTION rows_fill(text, int, int);
DROP TABLE rows_heap, rows_col;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
