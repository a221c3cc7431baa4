-- LastPoint: each key's best row by one ordering column, for DISTINCT ON (g) ...
-- ORDER BY g, t [DESC] and per-key max(t) / min(t), by zone maps on columnar tables
-- and by a btree skip scan on (g, t) indexes. Each query is checked three ways (the
-- plan that runs, core's plan with LastPoint off, and a heap copy) and its plan is
-- checked to use LastPoint, or not, as expected.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET timezone = 'UTC';
CREATE TABLE lp_col (id int, g int, host text, t timestamptz, v float8, n int) USING columnar;
-- Four row groups (a statement each). Keys 40-49 and 'only in the oldest' appear only
-- in the first; the third has NULL keys and NULL times; the fourth holds older times
-- than the second and third (written late).
INSERT INTO lp_col SELECT i, i % 50, 'host ' || (i % 50), timestamptz '2024-01-01' + i * interval '1 minute', i, i % 7
  FROM generate_series(1, 5000) i;
INSERT INTO lp_col VALUES (0, 999, 'only in the oldest', timestamptz '2023-06-01', -1, 0);
INSERT INTO lp_col SELECT i, i % 40, 'host ' || (i % 40), timestamptz '2024-01-01' + i * interval '1 minute', i, i % 7
  FROM generate_series(5001, 10000) i;
INSERT INTO lp_col SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE i % 40 END,
    CASE WHEN i % 97 = 0 THEN NULL ELSE 'host ' || (i % 40) END,
    CASE WHEN i IN (10007, 10011, 10013) THEN NULL ELSE timestamptz '2024-01-01' + i * interval '1 minute' END,
    i, i % 7
  FROM generate_series(10001, 15000) i;
INSERT INTO lp_col SELECT i, i % 45, 'host ' || (i % 45),
    timestamptz '2024-01-01' + (i - 15000) * interval '1 minute' + interval '30 seconds', i, i % 7
  FROM generate_series(15001, 16000) i;
-- The newest rows of a few keys are deleted: their next best rows win.
DELETE FROM lp_col WHERE id IN (14999, 14998, 14997, 10011);
CREATE TABLE lp_heap AS SELECT * FROM lp_col;
ANALYZE lp_col, lp_heap;

-- 'zone maps' / 'skip scan' if a LastPoint runs the query, else 'core'.
CREATE FUNCTION lp_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%Custom Scan (PgColumnarLastPoint)%zone maps%' THEN 'zone maps'
              WHEN plan LIKE '%Custom Scan (PgColumnarLastPoint)%index skip scan%' THEN 'skip scan'
              ELSE 'core' END;
END $$;
-- The query's rows as text, sorted.
CREATE FUNCTION lp_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', ' | ', q) INTO r;
  RETURN coalesce(r, '(no rows)');
END $$;
-- How the query runs, and whether it agrees with core's plan and with the heap copy.
CREATE FUNCTION lp_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE mine text; core text; heap text; plan text := lp_plan(q);
BEGIN
  mine := lp_rows(q);
  PERFORM set_config('pgcolumnar.enable_last_point', 'off', true);
  core := lp_rows(q);
  heap := lp_rows(replace(q, 'lp_col', 'lp_heap'));
  PERFORM set_config('pgcolumnar.enable_last_point', 'on', true);
  IF mine IS DISTINCT FROM core OR mine IS DISTINCT FROM heap THEN
    RETURN plan || ': DIFFERENT' || E'\n mine: ' || mine || E'\n core: ' || core || E'\n heap: ' || heap;
  END IF;
  RETURN plan || ': same';
END $$;
-- The lines of the query's EXPLAIN ANALYZE that match `pattern`.
CREATE FUNCTION lp_explain(q text, pattern text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ pattern THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END $$;

-- The plan: LastPoint under a Sort (its rows come in no order).
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (g) g, t, v FROM lp_col ORDER BY g, t DESC;
-- Every direction and NULL placement, integer and text keys, keys only in the oldest
-- row group, NULL keys, NULL times, deleted winners.
SELECT lp_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_col ORDER BY g, t DESC');
SELECT lp_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_col ORDER BY g, t');
SELECT lp_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_col ORDER BY g, t DESC NULLS LAST');
SELECT lp_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_col ORDER BY g DESC, t NULLS FIRST');
SELECT lp_check('SELECT DISTINCT ON (host) host, t, id FROM lp_col ORDER BY host, t DESC');
SELECT lp_check('SELECT DISTINCT ON (n) n, v, id FROM lp_col ORDER BY n, v DESC');
SELECT lp_check('SELECT DISTINCT ON (g) g, t, v * 2 + id AS w FROM lp_col ORDER BY g, t DESC');
SELECT lp_check('SELECT DISTINCT ON (host) * FROM lp_col ORDER BY host, t DESC LIMIT 5');
-- WHERE clauses are pushed into the scan: the best row among the rows that pass.
SELECT lp_check('SELECT DISTINCT ON (g) g, t, id FROM lp_col WHERE v < 12000 AND n <> 3 ORDER BY g, t DESC');
SELECT lp_check('SELECT DISTINCT ON (g) g, t, id FROM lp_col WHERE t < ''2024-01-05'' ORDER BY g, t DESC');
SELECT lp_check('SELECT DISTINCT ON (host) host, t FROM lp_col WHERE host LIKE ''host 1%'' ORDER BY host, t DESC');
SELECT lp_check('SELECT DISTINCT ON (g) g, t FROM lp_col WHERE v > 15500 ORDER BY g, t DESC');
-- A clause the scan cannot evaluate leaves the query to core.
SELECT lp_check('SELECT DISTINCT ON (g) g, t, id FROM lp_col WHERE v::text LIKE ''%7'' ORDER BY g, t DESC');
-- Volatile output is computed after the distinct stage, on the winners, as core does.
SELECT lp_plan('SELECT DISTINCT ON (g) g, random() > 2 FROM lp_col ORDER BY g, t DESC');
-- Shapes it does not take: more sort keys (they break ties), an ordering column that
-- is not the second sort key, two keys.
SELECT lp_plan('SELECT DISTINCT ON (g) g, t, id FROM lp_col ORDER BY g, t DESC, id');
SELECT lp_plan('SELECT DISTINCT ON (g) g, t FROM lp_col ORDER BY g, v DESC, t');
SELECT lp_plan('SELECT DISTINCT ON (g, n) g, n, t FROM lp_col ORDER BY g, n, t DESC');

-- max / min per key.
SELECT lp_check('SELECT g, max(t) FROM lp_col GROUP BY g');
SELECT lp_check('SELECT host, min(t), max(t) IS NULL FROM lp_col GROUP BY host');
SELECT lp_check('SELECT g, max(id), max(id) + 1 FROM lp_col WHERE n > 2 GROUP BY g HAVING max(id) > 9000');
SELECT lp_check('SELECT max(t) FROM lp_col GROUP BY host');
-- Not both max and min; not floats (-0 and 0 tie, and core returns a given one).
SELECT lp_plan('SELECT g, max(t), min(t) FROM lp_col GROUP BY g');
SELECT lp_plan('SELECT g, max(v) FROM lp_col GROUP BY g');

-- What it read: the key and ordering columns of the newest vectors, then no more.
SELECT lp_explain('SELECT DISTINCT ON (g) g, t, v FROM lp_col ORDER BY g, t DESC', 'Strategy|Key|Best|Columns|Row Groups|Vectors|Rows');
SELECT lp_explain('SELECT g, min(t) FROM lp_col GROUP BY g', 'Row Groups|Vectors Read|Rows');

-- A btree on (g, t): a skip scan, on heap and on columnar tables.
CREATE INDEX lp_heap_g_t ON lp_heap (g, t);
CREATE INDEX lp_heap_host_t ON lp_heap (host, t DESC);
ANALYZE lp_heap;
CREATE FUNCTION lp_heap_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE mine text; core text; plan text := lp_plan(q);
BEGIN
  mine := lp_rows(q);
  PERFORM set_config('pgcolumnar.enable_last_point', 'off', true);
  core := lp_rows(q);
  PERFORM set_config('pgcolumnar.enable_last_point', 'on', true);
  RETURN plan || CASE WHEN mine IS DISTINCT FROM core THEN ': DIFFERENT' || E'\n mine: ' || mine || E'\n core: ' || core ELSE ': same' END;
END $$;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (g) g, t, v FROM lp_heap ORDER BY g, t DESC;
SELECT lp_heap_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_heap ORDER BY g, t DESC');
SELECT lp_heap_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_heap ORDER BY g, t');
SELECT lp_heap_check('SELECT DISTINCT ON (g) g, t, v, id FROM lp_heap ORDER BY g DESC, t NULLS FIRST');
SELECT lp_heap_check('SELECT DISTINCT ON (host) host, t, id FROM lp_heap ORDER BY host, t DESC');
SELECT lp_heap_check('SELECT DISTINCT ON (host) host, t, id FROM lp_heap ORDER BY host, t');
SELECT lp_heap_check('SELECT DISTINCT ON (g) g, t, id FROM lp_heap WHERE v < 12000 AND n <> 3 ORDER BY g, t DESC');
SELECT lp_heap_check('SELECT DISTINCT ON (g) g, t, id FROM lp_heap WHERE v::text LIKE ''%7'' ORDER BY g, t DESC');
SELECT lp_heap_check('SELECT g, min(t) FROM lp_heap GROUP BY g');
SELECT lp_heap_check('SELECT host, max(t) FROM lp_heap GROUP BY host');
-- max(t) over (g, t ASC): a NULL time would come first in the backward scan, so only a
-- NOT NULL column takes it.
SELECT lp_plan('SELECT g, max(t) FROM lp_heap GROUP BY g');
-- The index orders NULL times last: DESC NULLS FIRST cannot use it.
SELECT lp_plan('SELECT DISTINCT ON (g) g, t FROM lp_heap ORDER BY g, t DESC NULLS LAST');
SELECT lp_explain('SELECT DISTINCT ON (g) g, t, v FROM lp_heap ORDER BY g, t DESC', 'Strategy|Index|Descents|Examined');
-- A skip scan is an index scan: enable_indexscan = off rules it out.
SET enable_indexscan = off;
SELECT lp_plan('SELECT DISTINCT ON (g) g, t FROM lp_heap ORDER BY g, t DESC');
RESET enable_indexscan;
-- On the columnar table, with zone maps ruled out.
CREATE INDEX lp_col_host_t ON lp_col (host, t);
SET pgcolumnar.enable_columnar_scan = off;
SELECT lp_check('SELECT DISTINCT ON (host) host, t, id FROM lp_col ORDER BY host, t DESC');
SELECT lp_check('SELECT DISTINCT ON (host) host, t, id FROM lp_col WHERE n = 2 ORDER BY host, t');
RESET pgcolumnar.enable_columnar_scan;
DROP INDEX lp_col_host_t;

-- Prepared statements with parameters (a generic plan resolves them at each run): the
-- same digest from the columnar table and the heap copy, for each value.
SET plan_cache_mode = force_generic_plan;
PREPARE lp_q(float8) AS SELECT md5(string_agg(x::text, ' | ' ORDER BY x::text))
  FROM (SELECT DISTINCT ON (g) g, t, id FROM lp_col WHERE v < $1 ORDER BY g, t DESC) x;
PREPARE lp_h(float8) AS SELECT md5(string_agg(x::text, ' | ' ORDER BY x::text))
  FROM (SELECT DISTINCT ON (g) g, t, id FROM lp_heap WHERE v < $1 ORDER BY g, t DESC) x;
EXPLAIN (COSTS OFF) EXECUTE lp_q(8000);
EXECUTE lp_q(8000);
EXECUTE lp_h(8000);
EXECUTE lp_q(12345.5);
EXECUTE lp_h(12345.5);
RESET plan_cache_mode;
DEALLOCATE lp_q;
DEALLOCATE lp_h;

-- Scrollable cursors (LastPoint runs forward only: the Sort above, or a Material
-- node, holds its rows).
BEGIN;
DECLARE lp_cur SCROLL CURSOR FOR SELECT DISTINCT ON (g) g, id FROM lp_col ORDER BY g, t DESC;
FETCH 3 FROM lp_cur;
FETCH BACKWARD 2 FROM lp_cur;
FETCH LAST FROM lp_cur;
DECLARE lp_cur2 SCROLL CURSOR FOR SELECT g, max(id) FROM lp_col WHERE g < 3 GROUP BY g ORDER BY g;
FETCH ALL FROM lp_cur2;
FETCH BACKWARD ALL FROM lp_cur2;
COMMIT;

-- Another role, and row-level security: the best row among the rows the role sees.
CREATE ROLE lp_reader;
GRANT SELECT ON lp_col, lp_heap TO lp_reader;
ALTER TABLE lp_col ENABLE ROW LEVEL SECURITY;
CREATE POLICY lp_few ON lp_col FOR SELECT TO lp_reader USING (v < 9000 AND g < 10);
SET ROLE lp_reader;
SELECT lp_plan('SELECT DISTINCT ON (g) g, t, id FROM lp_col ORDER BY g, t DESC');
SELECT lp_rows('SELECT DISTINCT ON (g) g, t, id FROM lp_col ORDER BY g, t DESC') =
       lp_rows('SELECT DISTINCT ON (g) g, t, id FROM lp_heap WHERE v < 9000 AND g < 10 ORDER BY g, t DESC') AS rls_agrees;
RESET ROLE;
ALTER TABLE lp_col DISABLE ROW LEVEL SECURITY;
DROP POLICY lp_few ON lp_col;

-- Inheritance and partitions: the parent's query runs on core's plan; a table alone
-- takes LastPoint.
CREATE TABLE lp_child () INHERITS (lp_col);
INSERT INTO lp_child SELECT id, g, host, t + interval '10 years', v, n FROM lp_heap WHERE id < 100;
CREATE TABLE lp_heap_child () INHERITS (lp_heap);
INSERT INTO lp_heap_child SELECT * FROM lp_child;
SELECT lp_check('SELECT DISTINCT ON (g) g, id FROM lp_col ORDER BY g, t DESC'),
       lp_check('SELECT DISTINCT ON (g) g, id FROM ONLY lp_col ORDER BY g, t DESC');
DROP TABLE lp_child, lp_heap_child;
CREATE TABLE lp_parts (g int, t timestamptz, id int) PARTITION BY RANGE (g);
CREATE TABLE lp_part1 PARTITION OF lp_parts FOR VALUES FROM (0) TO (20) USING columnar;
CREATE TABLE lp_part2 PARTITION OF lp_parts FOR VALUES FROM (20) TO (1000) USING columnar;
INSERT INTO lp_parts SELECT g, t, id FROM lp_heap WHERE g IS NOT NULL;
SELECT lp_plan('SELECT DISTINCT ON (g) g, id FROM lp_parts ORDER BY g, t DESC'),
       lp_plan('SELECT DISTINCT ON (g) g, id FROM lp_part2 ORDER BY g, t DESC');
SELECT lp_rows('SELECT DISTINCT ON (g) g, id FROM lp_parts ORDER BY g, t DESC') =
       lp_rows('SELECT DISTINCT ON (g) g, id FROM lp_heap WHERE g IS NOT NULL ORDER BY g, t DESC') AS partitions_agree;
DROP TABLE lp_parts;

DROP TABLE lp_col, lp_heap;
DROP ROLE lp_reader;
DROP FUNCTION lp_check(text), lp_heap_check(text), lp_rows(text), lp_plan(text), lp_explain(text, text);
DROP EXTENSION pgcolumnar;
