-- quals_push_down on heap tables: WHERE clauses heapam can test are passed to it as
-- scan keys (PushedSeqScan), the others stay executor quals. Every query is compared
-- with the same query on a plain sequential scan (the option off).
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET timezone = 'UTC';
CREATE TABLE hp (i int, s int2, b int8, f float8, n numeric, t text, d date, ts timestamptz, ok bool)
    WITH (quals_push_down = on);
INSERT INTO hp SELECT g, (g % 300)::int2, g::int8 * 1000003, g / 7.0, g / 3.0,
    CASE WHEN g % 11 = 0 THEN NULL ELSE 'v' || (g % 97) END,
    date '2024-01-01' + g % 500, timestamptz '2024-01-01' + g * interval '1 minute',
    CASE WHEN g % 13 = 0 THEN NULL ELSE g % 2 = 0 END
  FROM generate_series(1, 20000) g;
INSERT INTO hp VALUES (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL), (0, 0, 0, 'NaN', 'NaN', '', NULL, NULL, false);
ANALYZE hp;
SELECT relid, option, value FROM pgcolumnar.options WHERE relid = 'hp'::regclass;

-- 'pushed' if a PushedSeqScan runs the query, else 'core'.
CREATE FUNCTION hp_plan(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE line text; plan text := '';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    plan := plan || line || E'\n';
  END LOOP;
  RETURN CASE WHEN plan LIKE '%PushedSeqScan%' THEN 'pushed' ELSE 'core' END;
END $$;
CREATE FUNCTION hp_rows(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text;
BEGIN
  EXECUTE format('SELECT count(*) || '': '' || coalesce(md5(string_agg(x::text, %L ORDER BY x::text)), ''-'') FROM (%s) x', '|', q) INTO r;
  RETURN r;
END $$;
-- How the query runs, and whether it agrees with a plain sequential scan.
CREATE FUNCTION hp_check(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE pushed text; plain text; plan text := hp_plan(q);
BEGIN
  pushed := hp_rows(q);
  ALTER TABLE hp RESET (quals_push_down);
  plain := hp_rows(q);
  ALTER TABLE hp SET (quals_push_down = on);
  RETURN plan || CASE WHEN pushed = plain THEN ': same (' || split_part(plain, ':', 1) || ' rows)'
                      ELSE ': DIFFERENT ' || pushed || ' / ' || plain END;
END $$;

EXPLAIN (COSTS OFF) SELECT i, t FROM hp WHERE i > 100 AND t LIKE 'v1%';
-- Every comparison, every type, both sides, NULLs in the column.
SELECT hp_check('SELECT * FROM hp WHERE i = 5000');
SELECT hp_check('SELECT * FROM hp WHERE i < 100');
SELECT hp_check('SELECT * FROM hp WHERE i <= 100 AND i >= 90');
-- <> is no btree operator: an executor qual.
SELECT hp_check('SELECT * FROM hp WHERE i <> 7');
SELECT hp_check('SELECT * FROM hp WHERE 100 > i');
SELECT hp_check('SELECT * FROM hp WHERE s = 12');
SELECT hp_check('SELECT * FROM hp WHERE s > 250::int8');
SELECT hp_check('SELECT * FROM hp WHERE b >= 19000000000');
SELECT hp_check('SELECT * FROM hp WHERE b = 1000003::int4');
SELECT hp_check('SELECT * FROM hp WHERE f > 2800.5');
SELECT hp_check('SELECT * FROM hp WHERE f = ''NaN''');
-- numeric's comparisons are not leakproof: executor quals.
SELECT hp_check('SELECT * FROM hp WHERE n < 10');
SELECT hp_check('SELECT * FROM hp WHERE t = ''v42''');
SELECT hp_check('SELECT * FROM hp WHERE t > ''v9''');
SELECT hp_check('SELECT * FROM hp WHERE t < ''v2'' COLLATE "C"');
SELECT hp_check('SELECT * FROM hp WHERE t >= ''''');
SELECT hp_check('SELECT * FROM hp WHERE d = ''2024-03-01''');
SELECT hp_check('SELECT * FROM hp WHERE ts < ''2024-01-02''');
-- The planner makes this `ok` (no operator): an executor qual.
SELECT hp_check('SELECT * FROM hp WHERE ok = true');
-- A NULL constant: the planner folds the clause away.
SELECT hp_check('SELECT * FROM hp WHERE i = NULL::int');
-- Clauses heapam cannot test stay executor quals: IS NULL, LIKE, functions, OR.
SELECT hp_check('SELECT * FROM hp WHERE t IS NULL');
SELECT hp_check('SELECT * FROM hp WHERE t LIKE ''v1%''');
SELECT hp_check('SELECT * FROM hp WHERE i % 1000 = 0');
SELECT hp_check('SELECT * FROM hp WHERE i = 1 OR i = 2');
SELECT hp_check('SELECT * FROM hp WHERE i > 19990 AND t LIKE ''v%''');
EXPLAIN (COSTS OFF) SELECT * FROM hp WHERE i > 19990 AND (t LIKE 'v%' OR i IS NULL);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT count(*) FROM hp WHERE i > 19000 AND s < 100;

-- A function that is not leakproof is never a scan key (it could see rows a policy or
-- a security barrier hides).
CREATE FUNCTION hp_leaky_lt(int, int) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN $1 < $2; END';
CREATE OPERATOR <<< (LEFTARG = int, RIGHTARG = int, FUNCTION = hp_leaky_lt);
SELECT hp_check('SELECT * FROM hp WHERE i <<< 10');

-- Through a security-barrier view: its own clause and the query's leakproof one are
-- pushed, the leaky one runs above the barrier.
CREATE VIEW hp_sb WITH (security_barrier) AS SELECT * FROM hp WHERE i < 100;
EXPLAIN (COSTS OFF) SELECT i FROM hp_sb WHERE i > 50 AND hp_leaky_lt(i, 70);
SELECT count(*), sum(i) FROM hp_sb WHERE i > 50 AND hp_leaky_lt(i, 70);
DROP VIEW hp_sb;

-- Parameters: a generic plan's keys take each execution's values; a correlated
-- subquery's scan is restarted with each outer row's.
SET plan_cache_mode = force_generic_plan;
PREPARE hp_q(int, text) AS SELECT count(*), sum(i) FROM hp WHERE i < $1 AND t = $2;
EXPLAIN (COSTS OFF) EXECUTE hp_q(100, 'v5');
EXECUTE hp_q(1000, 'v5');
EXECUTE hp_q(20000, 'v5');
EXECUTE hp_q(20000, NULL);
RESET plan_cache_mode;
DEALLOCATE hp_q;
SELECT x, (SELECT count(*) FROM hp WHERE i < x) FROM (VALUES (10), (100), (NULL), (15000)) v(x);
EXPLAIN (COSTS OFF) SELECT x, (SELECT count(*) FROM hp WHERE i < x) FROM (VALUES (10), (100)) v(x);

-- The planner still takes an index where it wins.
RESET enable_indexscan;
CREATE INDEX hp_i ON hp (i);
EXPLAIN (COSTS OFF) SELECT * FROM hp WHERE i = 5000;
DROP INDEX hp_i;
SET enable_indexscan = off;

-- Another role, row-level security: the policy's and the query's clauses.
CREATE ROLE hp_reader;
GRANT SELECT ON hp TO hp_reader;
ALTER TABLE hp ENABLE ROW LEVEL SECURITY;
CREATE POLICY hp_few ON hp FOR SELECT TO hp_reader USING (i < 500);
SET ROLE hp_reader;
SELECT count(*), sum(i) FROM hp WHERE i > 400 AND s < 450;
SELECT hp_plan('SELECT * FROM hp WHERE i > 400'), count(*) FROM hp WHERE i <<< 1000;
-- Only the owner sets the option.
ALTER TABLE hp SET (quals_push_down = off);
RESET ROLE;
ALTER TABLE hp DISABLE ROW LEVEL SECURITY;
DROP POLICY hp_few ON hp;

-- In parallel: heapam's shared scan state hands out the blocks, each process tests the
-- keys.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(i) FROM hp WHERE i > 100 AND t LIKE 'v1%';
SELECT hp_check('SELECT count(*), sum(i), min(t) FROM hp WHERE i > 100 AND t LIKE ''v1%''');
SELECT hp_check('SELECT count(*), sum(b) FROM hp WHERE b >= 5000000000 AND ts < ''2024-01-10''');
RESET parallel_setup_cost; RESET parallel_tuple_cost; RESET min_parallel_table_scan_size;
SET max_parallel_workers_per_gather = 0;

-- Changing rows through it.
BEGIN;
UPDATE hp SET n = -n WHERE i BETWEEN 10 AND 19;
DELETE FROM hp WHERE i > 19995;
SELECT count(*), sum(n) FROM hp WHERE i BETWEEN 10 AND 19 OR i > 19990;
ROLLBACK;

-- Partitions and inheritance children: each table with the option on is scanned with
-- its keys, also through its parent; the others as core scans them.
CREATE TABLE hp_p (i int, t text) PARTITION BY RANGE (i);
CREATE TABLE hp_p1 PARTITION OF hp_p FOR VALUES FROM (0) TO (10000) WITH (quals_push_down = on);
CREATE TABLE hp_p2 PARTITION OF hp_p FOR VALUES FROM (10000) TO (30000);
INSERT INTO hp_p SELECT i, t FROM hp WHERE i IS NOT NULL;
CREATE TABLE hp_c () INHERITS (hp) WITH (quals_push_down = on);
INSERT INTO hp_c SELECT * FROM hp WHERE i < 50;
ANALYZE hp_p1, hp_p2, hp_c;
EXPLAIN (COSTS OFF) SELECT count(*) FROM hp_p WHERE i > 9990 AND i < 10010;
SELECT count(*), sum(i) FROM hp_p WHERE i > 9990 AND i < 10010;
EXPLAIN (COSTS OFF) SELECT count(*) FROM hp WHERE i < 20;
SELECT count(*), sum(i) FROM hp WHERE i < 20;
SET ROLE hp_reader;
SELECT count(*) FROM hp_c WHERE i < 20;
RESET ROLE;
GRANT SELECT ON hp_c TO hp_reader;
SET ROLE hp_reader;
SELECT count(*), sum(i) FROM hp_c WHERE i < 20;
RESET ROLE;
DROP TABLE hp_p, hp_c;

-- The option: only for heap and columnar tables, off unless set, RESET removes it.
ALTER TABLE hp RESET (quals_push_down);
SELECT hp_plan('SELECT * FROM hp WHERE i = 5');
SET pgcolumnar.quals_push_down = on;   -- the setting is the columnar tables' default only
SELECT hp_plan('SELECT * FROM hp WHERE i = 5');
RESET pgcolumnar.quals_push_down;
ALTER TABLE hp SET (quals_push_down);
SELECT relid, option, value FROM pgcolumnar.options WHERE relid = 'hp'::regclass;
CREATE TABLE hp_parts (i int) PARTITION BY RANGE (i);
ALTER TABLE hp_parts SET (quals_push_down = on);
ALTER TABLE hp SET (sort_by = 'i');

DROP TABLE hp, hp_parts;
DROP OPERATOR <<< (int, int);
DROP FUNCTION hp_leaky_lt(int, int), hp_check(text), hp_rows(text), hp_plan(text);
DROP ROLE hp_reader;
DROP EXTENSION pgcolumnar;
