-- Join filters: a hash join's inner keys tested inside the outer (fact) ColumnarScan,
-- for inner and semi joins; never where an outer join keeps unmatched fact rows.
-- Every result is compared with the same query on heap twins, and with the filter off.
CREATE EXTENSION pgcolumnar;
CREATE TABLE jf_fact (k int, k8 bigint, k2 smallint, d date, ts timestamp, v int, note text)
  USING columnar;
INSERT INTO jf_fact
  SELECT CASE WHEN g % 997 = 0 THEN NULL ELSE (g * 7919) % 20000 + 1 END,
         (g * 7919) % 20000 + 1, (g % 300)::smallint,
         date '2020-01-01' + (g % 1000), timestamp '2020-01-01' + (g % 500) * interval '1 hour',
         g % 1000, 'n' || (g % 10)
  FROM generate_series(1, 200000) g;
CREATE TABLE jf_fact_h AS SELECT * FROM jf_fact;
-- Dimensions: heap with a key, a columnar twin, one with NULL and duplicate keys.
CREATE TABLE jf_dim (id int PRIMARY KEY, grp int, name text);
INSERT INTO jf_dim SELECT g, g % 50, CASE WHEN g % 50 = 3 THEN 'green ' ELSE 'red ' END || g
  FROM generate_series(1, 20000) g;
CREATE TABLE jf_dim_c USING columnar AS SELECT * FROM jf_dim;
CREATE TABLE jf_keys (id int);
INSERT INTO jf_keys VALUES (5), (5), (NULL), (17), (NULL), (123456), (-3);
CREATE TABLE jf_days (day date, ts timestamp);
INSERT INTO jf_days SELECT date '2020-03-01' + g, timestamp '2020-01-03' + g * interval '1 hour'
  FROM generate_series(0, 9) g;
ANALYZE jf_fact, jf_fact_h, jf_dim, jf_dim_c, jf_keys, jf_days;

-- jf_same(q): query q (%s is the fact table) on columnar, with join filters on and off,
-- against heap: rows that differ either way, and the rows of the heap result.
CREATE FUNCTION jf_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  diff_on bigint; diff_off bigint; n bigint;
BEGIN
  SET LOCAL pgcolumnar.enable_join_filter = on;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'jf_fact'), format(q, 'jf_fact_h'), format(q, 'jf_fact_h'),
                 format(q, 'jf_fact')) INTO diff_on;
  SET LOCAL pgcolumnar.enable_join_filter = off;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'jf_fact'), format(q, 'jf_fact_h'), format(q, 'jf_fact_h'),
                 format(q, 'jf_fact')) INTO diff_off;
  RESET pgcolumnar.enable_join_filter;
  EXECUTE format('SELECT count(*) FROM (%s) x', format(q, 'jf_fact_h')) INTO n;
  RETURN format('differ: %s / %s (filter on / off), rows: %s', diff_on, diff_off, n);
END $$;

-- jf_analyze(q): EXPLAIN ANALYZE of q without the lines that depend on memory or bytes.
CREATE FUNCTION jf_analyze(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
  FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF l !~ 'Memory Usage|Bytes Read|Buckets:' THEN
      RETURN NEXT l;
    END IF;
  END LOOP;
END $$;

-- An inner join with a selective dimension: the fact scan gets the dimension's keys.
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
SELECT * FROM jf_analyze($$
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3$$);
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
SELECT count(*), sum(f.v) FROM jf_fact_h f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
SELECT jf_same($$SELECT f.k, f.v, f.note, d.name FROM %s f JOIN jf_dim d ON f.k = d.id
                 WHERE d.grp = 3$$);
-- With a pushed filter of its own, which runs on the rows the keys leave.
SELECT * FROM jf_analyze($$
SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v < 900$$);
SELECT jf_same($$SELECT f.k, f.v FROM %s f JOIN jf_dim d ON f.k = d.id
                 WHERE d.grp = 3 AND f.v < 900$$);
-- A LIKE on the dimension (TPC-H q9's shape), and a columnar dimension.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim_c d ON f.k = d.id WHERE d.name LIKE '%green%';
SELECT jf_same($$SELECT f.k, f.d FROM %s f JOIN jf_dim_c d ON f.k = d.id
                 WHERE d.name LIKE '%%green%%'$$);
-- Keys of other integer widths: bigint = int, smallint = int.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k8 = d.id WHERE d.grp = 7;
SELECT jf_same($$SELECT f.k8, f.v FROM %s f JOIN jf_dim d ON f.k8 = d.id WHERE d.grp = 7$$);
SELECT jf_same($$SELECT f.k2, f.v FROM %s f JOIN jf_dim d ON f.k2 = d.id WHERE d.grp = 7$$);
-- Date and timestamp keys.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_days x ON f.d = x.day;
SELECT * FROM jf_analyze($$SELECT count(*) FROM jf_fact f JOIN jf_days x ON f.d = x.day$$);
SELECT jf_same($$SELECT f.d, f.v FROM %s f JOIN jf_days x ON f.d = x.day$$);
SELECT jf_same($$SELECT f.ts, f.v FROM %s f JOIN jf_days x ON f.ts = x.ts$$);

-- Semi joins (IN, EXISTS), with NULL and duplicate keys on the inner side: NULL
-- matches nothing, on either side.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f WHERE f.k IN (SELECT id FROM jf_dim WHERE grp = 3);
SELECT jf_same($$SELECT f.k, f.v FROM %s f WHERE f.k IN (SELECT id FROM jf_dim WHERE grp = 3)$$);
SELECT * FROM jf_analyze($$
SELECT count(*) FROM jf_fact f WHERE EXISTS (SELECT FROM jf_keys j WHERE j.id = f.k)$$);
SELECT jf_same($$SELECT f.k, f.v FROM %s f WHERE EXISTS (SELECT FROM jf_keys j WHERE j.id = f.k)$$);
SELECT jf_same($$SELECT f.k, f.v FROM %s f JOIN jf_keys j ON j.id = f.k$$);
SELECT count(*) FROM jf_fact f WHERE f.k IS NULL;

-- Outer and anti joins keep unmatched fact rows: no join filter.
EXPLAIN (COSTS OFF)
SELECT count(*), count(d.id) FROM jf_fact f LEFT JOIN jf_dim d ON f.k = d.id AND d.grp = 3;
SELECT jf_same($$SELECT f.k, d.id FROM %s f LEFT JOIN jf_dim d ON f.k = d.id AND d.grp = 3$$);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f WHERE NOT EXISTS (SELECT FROM jf_keys j WHERE j.id = f.k);
SELECT jf_same($$SELECT f.k FROM %s f WHERE NOT EXISTS (SELECT FROM jf_keys j WHERE j.id = f.k)$$);
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f FULL JOIN jf_keys j ON j.id = f.k;
SELECT jf_same($$SELECT f.k, j.id FROM %s f FULL JOIN jf_keys j ON j.id = f.k$$);
-- The fact on the nullable side of a LEFT JOIN: an inner join below it may be filtered.
SELECT jf_same($$SELECT j.id, f.v FROM jf_keys j LEFT JOIN %s f ON j.id = f.k$$);

-- An empty build side: the hash join never reads the fact table.
SELECT * FROM jf_analyze($$
SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 999$$);
SELECT jf_same($$SELECT f.k FROM %s f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 999$$);

-- Rescans: a correlated subquery whose parameter changes the build side (the hash
-- table is rebuilt each time), and one whose parameter is the fact scan's (the table
-- is kept, the keys taken again).
EXPLAIN (COSTS OFF)
SELECT g, (SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = g)
FROM generate_series(1, 3) g;
SELECT g, (SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = g)
FROM generate_series(1, 3) g;
SELECT g, (SELECT count(*) FROM jf_fact_h f JOIN jf_dim d ON f.k = d.id WHERE d.grp = g)
FROM generate_series(1, 3) g;
EXPLAIN (COSTS OFF)
SELECT g, (SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v < g * 100)
FROM generate_series(1, 3) g;
SELECT g, (SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v < g * 100)
FROM generate_series(1, 3) g;
SELECT g, (SELECT count(*) FROM jf_fact_h f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3 AND f.v < g * 100)
FROM generate_series(1, 3) g;
SELECT jf_same($$SELECT g, s.c FROM generate_series(1, 4) g,
  LATERAL (SELECT count(*) c, sum(f.v) s FROM %s f JOIN jf_dim d ON f.k = d.id WHERE d.grp = g) s$$);

-- A cursor, read in parts, against the same cursor on the heap twin (same row order);
-- and one read row by row from PL/pgSQL.
BEGIN;
DECLARE jf_cur CURSOR FOR
  SELECT f.k, f.v FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
DECLARE jf_cur_h CURSOR FOR
  SELECT f.k, f.v FROM jf_fact_h f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
FETCH 3 FROM jf_cur;
FETCH 3 FROM jf_cur_h;
MOVE FORWARD 1000 IN jf_cur;
MOVE FORWARD 1000 IN jf_cur_h;
FETCH 2 FROM jf_cur;
FETCH 2 FROM jf_cur_h;
COMMIT;
CREATE FUNCTION jf_cursor_rows(t text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE c refcursor; r record; n bigint := 0;
BEGIN
  OPEN c FOR EXECUTE format('SELECT f.k FROM %s f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3', t);
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    n := n + 1;
  END LOOP;
  CLOSE c;
  RETURN n;
END $$;
SELECT jf_cursor_rows('jf_fact'), jf_cursor_rows('jf_fact_h');

-- Parallel: each worker builds its own hash table and takes its keys (each core priced at
-- full speed, and the leader only gathering, so that the parallel fact scan is chosen on
-- any machine).
SET pgcolumnar.parallel_core_scaling = 1;
SET parallel_leader_participation = off;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET enable_parallel_hash = off;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
SELECT jf_same($$SELECT f.k, f.v FROM %s f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3$$);
RESET enable_parallel_hash;
RESET parallel_leader_participation;
RESET pgcolumnar.parallel_core_scaling;
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET parallel_tuple_cost;
RESET parallel_setup_cost;

-- A hash table that outgrows memory (the build side's rows underestimated) goes to
-- batches: its keys are not used, and every row goes through the join.
CREATE FUNCTION jf_opaque(int) RETURNS bool LANGUAGE plpgsql IMMUTABLE AS 'BEGIN RETURN $1 > 0; END';
SET work_mem = '128kB';
SELECT * FROM jf_analyze($$
SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE jf_opaque(d.id) AND d.grp < 25$$);
SELECT jf_same($$SELECT f.k, f.v FROM %s f JOIN jf_dim d ON f.k = d.id
                 WHERE jf_opaque(d.id) AND d.grp < 25$$);
RESET work_mem;

-- A build side too large to help is not filtered; the GUC turns join filters off.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM jf_fact f JOIN jf_dim d ON f.k = d.id;
SET pgcolumnar.enable_join_filter = off;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.v) FROM jf_fact f JOIN jf_dim d ON f.k = d.id WHERE d.grp = 3;
RESET pgcolumnar.enable_join_filter;

-- A star join that keeps 2% of a dimension's keys, with an index on the fact table's
-- key: reading the fact table once, its key column probed against the hash table's keys
-- and its other columns decoded only for the rows left, costs less than 200 nested
-- index lookups of 30 scattered rows each (integers and scaled numerics decode for a
-- fraction of what a float or a long text does: decoding is priced by how a column is
-- stored).
CREATE TABLE jf_star (id bigint, pk int, qty int, price numeric(15,2), disc numeric(15,2), d1 date)
  USING columnar;
INSERT INTO jf_star SELECT i, (hashint4(i::int) & 8191) + 1, (i % 50)::int + 1,
    ((i * 7919) % 100000 + 90000)::numeric / 100, (i % 11)::numeric / 100,
    date '1992-01-01' + ((i * 17) % 2557)::int
  FROM generate_series(1::bigint, 300000) i;
CREATE INDEX ON jf_star (pk);
CREATE TABLE jf_star_part (pk int PRIMARY KEY, region int) USING columnar;
INSERT INTO jf_star_part SELECT g, g % 50 FROM generate_series(1, 8192) g;
ANALYZE jf_star, jf_star_part;
EXPLAIN (COSTS OFF)
SELECT sum(f.price * (1 - f.disc)) FROM jf_star_part p JOIN jf_star f ON f.pk = p.pk
WHERE p.region = 7 AND f.qty < 40 AND f.d1 > date '1993-01-01';
SELECT count(*), sum(f.price * (1 - f.disc)) FROM jf_star_part p JOIN jf_star f ON f.pk = p.pk
WHERE p.region = 7 AND f.qty < 40 AND f.d1 > date '1993-01-01';
-- The nested loop of index lookups returns the same.
SET enable_hashjoin = off; SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
SELECT sum(f.price * (1 - f.disc)) FROM jf_star_part p JOIN jf_star f ON f.pk = p.pk
WHERE p.region = 7 AND f.qty < 40 AND f.d1 > date '1993-01-01';
SELECT count(*), sum(f.price * (1 - f.disc)) FROM jf_star_part p JOIN jf_star f ON f.pk = p.pk
WHERE p.region = 7 AND f.qty < 40 AND f.d1 > date '1993-01-01';
RESET enable_hashjoin; RESET enable_mergejoin;
DROP TABLE jf_star, jf_star_part;

DROP FUNCTION jf_same(text), jf_analyze(text), jf_cursor_rows(text), jf_opaque(int);
DROP TABLE jf_fact, jf_fact_h, jf_dim, jf_dim_c, jf_keys, jf_days;
DROP EXTENSION pgcolumnar;
