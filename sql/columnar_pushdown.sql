-- Quals pushed into the ColumnarScan (quals_push_down): every pushed shape, on and
-- off, against a heap copy; the options that control it; EXPLAIN shows what ran.
CREATE EXTENSION pgcolumnar;
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE TABLE pc (i int, b bigint, s smallint, f float8, r real, t text, tc text COLLATE "C",
                 tu text COLLATE "und-x-icu", v varchar(20), y bytea, ok bool, d date,
                 ts timestamptz, p posint, n numeric) USING columnar;
INSERT INTO pc SELECT g, g * 1000000000::bigint, (g % 30000)::smallint,
    CASE g % 97 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN 'Infinity' WHEN 3 THEN '-Infinity'
                WHEN 4 THEN '-0' ELSE (g % 1000) / 7.0 END,
    CASE WHEN g % 89 = 0 THEN NULL WHEN g % 89 = 1 THEN 'NaN' ELSE (g % 500) / 3.0 END,
    CASE WHEN g % 13 = 0 THEN NULL ELSE 'host_' || (g % 40) END,
    'k' || (g % 300), CASE WHEN g % 5 = 0 THEN 'Alpha' ELSE 'beta' || (g % 9) END,
    'v' || (g % 77), decode(lpad(to_hex(g % 256), 2, '0'), 'hex'),
    CASE WHEN g % 11 = 0 THEN NULL ELSE g % 3 = 0 END,
    date '2024-01-01' + (g % 400), timestamptz '2024-01-01 00:00+00' + g * interval '1 minute',
    1 + g % 50, (g % 100) / 4.0
  FROM generate_series(1, 60000) g;
DELETE FROM pc WHERE i % 17 = 5;
CREATE TABLE ph AS SELECT * FROM pc;

-- same(q): the rows of query q (with %s for the table) on columnar and heap agree,
-- with push-down on and off.
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  diff_on bigint; diff_off bigint; n bigint;
BEGIN
  SET LOCAL pgcolumnar.quals_push_down = on;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'pc'), format(q, 'ph'), format(q, 'ph'), format(q, 'pc')) INTO diff_on;
  SET LOCAL pgcolumnar.quals_push_down = off;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'pc'), format(q, 'ph'), format(q, 'ph'), format(q, 'pc')) INTO diff_off;
  EXECUTE format('SELECT count(*) FROM (%s) x', format(q, 'ph')) INTO n;
  RETURN CASE WHEN diff_on = 0 AND diff_off = 0 THEN 'same' ELSE 'DIFFERENT' END || ' (' || n || ' rows)';
END $$;

SELECT q, same(q) FROM (VALUES
  ('SELECT i FROM %s WHERE i > 59000'),
  ('SELECT i FROM %s WHERE i <= 10 OR i >= 59990'),
  ('SELECT i FROM %s WHERE b BETWEEN 3000000000000 AND 3100000000000'),
  ('SELECT i FROM %s WHERE b = 42 OR b >= 59999000000000'),
  ('SELECT i FROM %s WHERE s < 100::int8'),
  ('SELECT i FROM %s WHERE s = 5 AND i > 100::int2'),
  ('SELECT i FROM %s WHERE i <> 7 AND i < 20'),
  ('SELECT i FROM %s WHERE NOT (i >= 30)'),
  ('SELECT i FROM %s WHERE NOT (i < 30 OR i > 40)'),
  ('SELECT i FROM %s WHERE f > 140'),
  ('SELECT i FROM %s WHERE f = ''NaN'''),
  ('SELECT i FROM %s WHERE f > ''Infinity'''),
  ('SELECT i FROM %s WHERE f < ''-1e308'''),
  ('SELECT i FROM %s WHERE f = 0'),
  ('SELECT i FROM %s WHERE f = ''-0'''),
  ('SELECT i FROM %s WHERE f <> 0 AND i < 500'),
  ('SELECT i FROM %s WHERE f IN (0, ''NaN'', 1)'),
  ('SELECT i FROM %s WHERE NOT (f >= 1) AND i < 3000'),
  ('SELECT i FROM %s WHERE r > 166.3'),
  ('SELECT i FROM %s WHERE r = 0.1::float8 OR r = ''NaN'''),
  ('SELECT i FROM %s WHERE r >= 100::real AND r < 100.5::float8'),
  ('SELECT i FROM %s WHERE t = ''host_7'''),
  ('SELECT i FROM %s WHERE t <> ''host_7'' AND i < 100'),
  ('SELECT i FROM %s WHERE t IN (''host_1'', ''host_2'', NULL)'),
  ('SELECT i FROM %s WHERE t NOT IN (''host_1'', ''host_2'')'),
  ('SELECT i FROM %s WHERE t NOT IN (''host_1'', NULL)'),
  ('SELECT i FROM %s WHERE t = ANY (ARRAY[''host_3'', ''host_39''])'),
  ('SELECT i FROM %s WHERE t <> ALL (''{}''::text[])'),
  ('SELECT i FROM %s WHERE t = ANY (''{}''::text[])'),
  ('SELECT i FROM %s WHERE t LIKE ''host%%'' AND i < 50'),
  ('SELECT i FROM %s WHERE tc LIKE ''k29%%'''),
  ('SELECT i FROM %s WHERE tc LIKE ''k2_9%%'''),
  ('SELECT i FROM %s WHERE tc > ''k298'''),
  ('SELECT i FROM %s WHERE tc BETWEEN ''k1'' AND ''k11'''),
  ('SELECT i FROM %s WHERE tu = ''Alpha'' AND i < 1000'),
  ('SELECT i FROM %s WHERE tu > ''alpha'' AND i < 1000'),
  ('SELECT i FROM %s WHERE v = ''v7'' AND i < 5000'),
  ('SELECT i FROM %s WHERE v IN (''v1'', ''v2'') AND i < 5000'),
  ('SELECT i FROM %s WHERE y = ''\x07''::bytea'),
  ('SELECT i FROM %s WHERE y < ''\x03''::bytea'),
  ('SELECT i FROM %s WHERE ok'),
  ('SELECT i FROM %s WHERE NOT ok'),
  ('SELECT i FROM %s WHERE ok IS NULL'),
  ('SELECT i FROM %s WHERE ok IS NOT NULL AND i < 100'),
  ('SELECT i FROM %s WHERE t IS NULL'),
  ('SELECT i FROM %s WHERE NOT (t IS NULL) AND i < 100'),
  ('SELECT i FROM %s WHERE d = ''2024-02-01'''),
  ('SELECT i FROM %s WHERE d < ''2024-01-03''::timestamp'),
  ('SELECT i FROM %s WHERE ts >= ''2024-01-10'' AND ts < ''2024-01-10 01:00'''),
  ('SELECT i FROM %s WHERE ts > now() - interval ''100 years'' AND i < 10'),
  ('SELECT i FROM %s WHERE p = 7 AND i < 1000'),
  ('SELECT i FROM %s WHERE p > 48'),
  ('SELECT i FROM %s WHERE n = 1.5'),
  ('SELECT i FROM %s WHERE (i < 100 AND t = ''host_1'') OR (f IS NULL AND NOT ok)'),
  ('SELECT i FROM %s WHERE i < 10 AND i > 20'),
  ('SELECT i FROM %s WHERE i = NULL::int'),
  ('SELECT count(*) FROM %s WHERE i > 0'),
  ('SELECT * FROM %s WHERE i BETWEEN 1000 AND 1010')
) q(q);

-- What is pushed, and what stays with the executor.
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > 59000 AND t = 'host_7';
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > 59000 AND n = 1.5;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE tu > 'alpha' AND tc > 'k3';
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE tc LIKE 'k29%' AND tc LIKE 'k2_9%';
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i % 7 > 5 OR i < 3;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE (i < 100 AND t = 'host_1') OR (f IS NULL AND NOT ok);
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > random() * 100;
-- The pushed filter did the work: the executor has no Filter left.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM pc WHERE i > 59000 AND t = 'host_7';
SELECT count(*) FROM pc WHERE i > 59000 AND t = 'host_7';

-- Parameters: generic plans of prepared statements, and nested-loop parameters.
PREPARE q(int, text) AS SELECT count(*) FROM pc WHERE i < $1 AND t = $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE q(1000, 'host_3');
EXECUTE q(1000, 'host_3');
EXECUTE q(5000, 'host_4');
EXECUTE q(NULL, 'host_4');
PREPARE qa(int[]) AS SELECT count(*) FROM pc WHERE i = ANY ($1);
EXECUTE qa('{1, 2, 3, NULL}');
EXECUTE qa(NULL);
RESET plan_cache_mode;
CREATE TABLE keys (k int);
INSERT INTO keys VALUES (10), (20), (30), (NULL);
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_material = off;
EXPLAIN (COSTS OFF) SELECT k, (SELECT count(*) FROM pc WHERE pc.i < keys.k) FROM keys;
SELECT k, (SELECT count(*) FROM pc WHERE pc.i < keys.k) FROM keys ORDER BY k;
SELECT t, (SELECT count(*) FROM pc WHERE pc.t = x.t AND pc.i < 1000) FROM (VALUES ('host_1'), ('host_2'), (NULL)) x(t);
SELECT k, c FROM keys, LATERAL (SELECT count(*) c FROM pc WHERE pc.s = keys.k) l ORDER BY k;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_material;

-- RLS and security barriers: a qual that is not leakproof is never pushed below them.
CREATE FUNCTION leaky(int) RETURNS bool LANGUAGE plpgsql COST 0.0001 AS
  $$ BEGIN RAISE NOTICE 'saw %', $1; RETURN true; END $$;
CREATE VIEW pc_small WITH (security_barrier) AS SELECT * FROM pc WHERE i < 3;
EXPLAIN (COSTS OFF) SELECT i FROM pc_small WHERE leaky(i);
SELECT i FROM pc_small WHERE leaky(i) ORDER BY i;
EXPLAIN (COSTS OFF) SELECT i FROM pc_small WHERE i > 1;
SELECT i FROM pc_small WHERE i > 1;
CREATE ROLE pushdown_reader;
GRANT SELECT ON pc TO pushdown_reader;
ALTER TABLE pc ENABLE ROW LEVEL SECURITY;
CREATE POLICY few ON pc TO pushdown_reader USING (i <= 3);
SET ROLE pushdown_reader;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE leaky(i) AND i >= 2;
SELECT i FROM pc WHERE leaky(i) AND i >= 2 ORDER BY i;
RESET ROLE;
ALTER TABLE pc DISABLE ROW LEVEL SECURITY;

-- The option: per table, with the setting as the default.
ALTER TABLE pc SET (quals_push_down = off);
SELECT * FROM pgcolumnar.options WHERE relid = 'pc'::regclass;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > 59000;
SET pgcolumnar.quals_push_down = on;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > 59000;
ALTER TABLE pc RESET (quals_push_down);
SELECT * FROM pgcolumnar.options WHERE relid = 'pc'::regclass;
SET pgcolumnar.quals_push_down = off;
EXPLAIN (COSTS OFF) SELECT i FROM pc WHERE i > 59000;
RESET pgcolumnar.quals_push_down;
ALTER TABLE pc SET (quals_push_down = on, sort_by = 'i');
SELECT * FROM pgcolumnar.options WHERE relid = 'pc'::regclass ORDER BY option;
ALTER TABLE pc RESET (sort_by);
SELECT * FROM pgcolumnar.options WHERE relid = 'pc'::regclass ORDER BY option;
CREATE TABLE pc2 (a int) USING columnar WITH (quals_push_down = false);
CREATE TABLE IF NOT EXISTS pc2 (a int) USING columnar WITH (quals_push_down = true);
SELECT * FROM pgcolumnar.options WHERE relid = 'pc2'::regclass;
EXPLAIN (COSTS OFF) SELECT * FROM pc2 WHERE a = 1;
-- Errors name the option.
\set VERBOSITY sqlstate
ALTER TABLE pc SET (quals_push_down = sometimes);
\set VERBOSITY default
ALTER TABLE pc SET (quals_push_down = sometimes);
-- Heap tables take it too (sql/heap_pushdown.sql); views do not.
CREATE VIEW ph_v AS SELECT * FROM ph;
ALTER TABLE ph_v SET (quals_push_down = on);
DROP VIEW ph_v;
SET ROLE pushdown_reader;
ALTER TABLE pc SET (quals_push_down = off);
RESET ROLE;

-- Parallel ColumnarScan: workers share the row groups.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i) FROM pc WHERE f > 10;
SELECT count(*), sum(i) FROM pc WHERE f > 10;
SELECT count(*), sum(i) FROM ph WHERE f > 10;
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- Cursors: backward over a pushed filter.
BEGIN;
DECLARE cur SCROLL CURSOR FOR SELECT i FROM pc WHERE t = 'host_7' AND i < 2000;
FETCH 3 FROM cur;
FETCH BACKWARD 2 FROM cur;
FETCH LAST FROM cur;
FETCH PRIOR FROM cur;
COMMIT;

-- DML through a pushed filter.
UPDATE pc SET n = -1 WHERE t = 'host_9' AND i < 3000;
UPDATE ph SET n = -1 WHERE t = 'host_9' AND i < 3000;
DELETE FROM pc WHERE tc = 'k5' AND f > 10;
DELETE FROM ph WHERE tc = 'k5' AND f > 10;
SELECT same('SELECT * FROM %s WHERE n = -1 OR i < 1000');
SELECT same('SELECT * FROM %s');

-- Index fetches of dictionary-encoded text (kept as codes in the fetch cache; the
-- fetched row's value is built from its entry).
SELECT attname, encodings LIKE '%dictionary%' AS dictionary FROM pgcolumnar.stats('pc')
 WHERE attname IN ('t', 'tu') ORDER BY 1;
CREATE INDEX pc_i ON pc (i);
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT i, t, tu FROM pc WHERE i IN (7, 77, 777, 7777, 17) ORDER BY i;
SELECT i, t, tu FROM pc WHERE i IN (7, 77, 777, 7777, 17) ORDER BY i;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
SELECT i, t, tu FROM ph WHERE i IN (7, 77, 777, 7777, 17) ORDER BY i;
DROP INDEX pc_i;

-- Columns added after rows were written (their default, or NULL, is not stored in the
-- old row groups) and a dropped column: pushed tests read the missing values.
CREATE TABLE ac (a int, b text) USING columnar;
INSERT INTO ac SELECT g, 'x' || g FROM generate_series(1, 5000) g;
ALTER TABLE ac ADD COLUMN c int DEFAULT 7;
ALTER TABLE ac ADD COLUMN d text DEFAULT 'dflt';
ALTER TABLE ac ADD COLUMN e int;
INSERT INTO ac SELECT g, 'y' || g, g % 10, 'v' || (g % 3), g FROM generate_series(5001, 8000) g;
ALTER TABLE ac DROP COLUMN b;
CREATE TABLE ah AS SELECT * FROM ac;
EXPLAIN (COSTS OFF) SELECT a FROM ac WHERE c = 7 AND d = 'dflt';
SELECT count(*) FROM ac WHERE c = 7 AND d = 'dflt';
SELECT count(*) FROM ah WHERE c = 7 AND d = 'dflt';
SELECT count(*) FROM ((SELECT a FROM ac WHERE d = 'dflt' OR d LIKE 'v1%') EXCEPT ALL
                      (SELECT a FROM ah WHERE d = 'dflt' OR d LIKE 'v1%')) x;
SELECT (SELECT count(*) FROM ac WHERE e IS NULL), (SELECT count(*) FROM ah WHERE e IS NULL);
SELECT (SELECT sum(a) FROM ac WHERE e > 7000 AND c <> 3), (SELECT sum(a) FROM ah WHERE e > 7000 AND c <> 3);
SELECT (SELECT sum(a) FROM ac WHERE d IN ('dflt', 'v2')), (SELECT sum(a) FROM ah WHERE d IN ('dflt', 'v2'));
DROP TABLE ac, ah;

DROP TABLE pc, ph, pc2, keys CASCADE;
DROP FUNCTION leaky(int);
DROP ROLE pushdown_reader;
DROP FUNCTION same(text);
DROP DOMAIN posint;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
