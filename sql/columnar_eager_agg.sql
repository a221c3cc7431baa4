-- Eager aggregation below a join: GROUP BY the unique key of one table joined to a
-- columnar table on that key (TPC-H q13's shape). A ColumnarAgg folds the columnar
-- table by its join key and each row of the other table finds its group. Every result
-- is compared with the same query on heap twins, and with the path off; every shape it
-- must not take is shown to stay on core's plan.
CREATE EXTENSION pgcolumnar;
CREATE TABLE ea_cust (id int PRIMARY KEY, name text NOT NULL, seg char(3), k8 bigint NOT NULL UNIQUE);
INSERT INTO ea_cust
  SELECT g, 'c' || g, CASE WHEN g % 3 = 0 THEN 'AUT' ELSE 'BLD' END, g::bigint * 10
  FROM generate_series(1, 3000) g;
CREATE TABLE ea_cust_c USING columnar AS SELECT * FROM ea_cust;
ALTER TABLE ea_cust_c ADD PRIMARY KEY (id), ALTER name SET NOT NULL, ALTER k8 SET NOT NULL;
CREATE UNIQUE INDEX ON ea_cust_c (k8);
-- Orders: a third of the customers have none; some orders have no customer or NULL.
CREATE TABLE ea_ord (oid bigint, cust int, cust8 bigint, total numeric(12,2), qty int,
                     note text, d date) USING columnar;
INSERT INTO ea_ord
  SELECT g, CASE WHEN g % 101 = 0 THEN NULL WHEN g % 89 = 0 THEN 99999
                 ELSE ((g * 7919) % 3000) + 1 END,
         (((g * 7919) % 3000) + 1)::bigint * 10,
         (g % 1000) * 1.25, CASE WHEN g % 13 = 0 THEN NULL ELSE g % 50 END,
         CASE WHEN g % 7 = 0 THEN 'special requests' ELSE 'plain' END,
         date '2020-01-01' + (g % 700)
  FROM generate_series(1, 40000) g
  WHERE ((g * 7919) % 3000) % 3 <> 1;
CREATE TABLE ea_ord_h AS SELECT * FROM ea_ord;
ANALYZE ea_cust, ea_cust_c, ea_ord, ea_ord_h;

-- ea_same(q): query q (%1$s the customer table, %2$s the order table) with columnar
-- orders, eager aggregation on and off, against heap orders: rows that differ either
-- way, and the rows of the heap result.
CREATE FUNCTION ea_same(q text, cust text DEFAULT 'ea_cust') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  diff_on bigint; diff_off bigint; n bigint; c text; h text;
BEGIN
  c := format(q, cust, 'ea_ord');
  h := format(q, 'ea_cust', 'ea_ord_h');
  SET LOCAL pgcolumnar.enable_eager_agg = on;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x', c, h, h, c)
    INTO diff_on;
  SET LOCAL pgcolumnar.enable_eager_agg = off;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x', c, h, h, c)
    INTO diff_off;
  RESET pgcolumnar.enable_eager_agg;
  EXECUTE format('SELECT count(*) FROM (%s) x', h) INTO n;
  RETURN format('differ on=%s off=%s rows=%s', diff_on, diff_off, n);
END $$;

-- ea_plan(q): the plan's eager join line, or "core" when the query is not eager.
CREATE FUNCTION ea_plan(q text, cust text DEFAULT 'ea_cust') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  line text; found text := 'core';
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || format(q, cust, 'ea_ord') LOOP
    IF line ~ 'Eager Join:' THEN
      found := btrim(line);
    END IF;
  END LOOP;
  RETURN found;
END $$;

-- q13 itself, small.
EXPLAIN (COSTS OFF)
SELECT c_count, count(*) AS custdist
FROM (SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust AND note NOT LIKE '%special%'
      GROUP BY id) AS c_orders (c_custkey, c_count)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC LIMIT 3;
SELECT c_count, count(*) AS custdist
FROM (SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust AND note NOT LIKE '%special%'
      GROUP BY id) AS c_orders (c_custkey, c_count)
GROUP BY c_count ORDER BY custdist DESC, c_count DESC LIMIT 3;

-- What EXPLAIN ANALYZE counts: every customer probes, a third find no group.
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust GROUP BY id;

-- EXPLAIN VERBOSE's cost components add up to the node's total cost.
DO $$
DECLARE line text; parts text; node_total numeric; sum numeric := 0; total numeric; kv text[];
BEGIN
  FOR line IN EXPLAIN VERBOSE SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust GROUP BY id LOOP
    IF line ~ 'PgColumnarAgg' THEN
      node_total := substring(line from '\.\.([0-9.]+) ')::numeric;
    ELSIF line ~ 'Cost Components:' AND parts IS NULL THEN
      parts := substring(line from 'Cost Components: (.*)$');
    END IF;
  END LOOP;
  FOREACH line IN ARRAY string_to_array(parts, ' ') LOOP
    kv := string_to_array(line, '=');
    IF kv[1] = 'total' THEN total := kv[2]::numeric; ELSE sum := sum + kv[2]::numeric; END IF;
  END LOOP;
  RAISE NOTICE 'components: %', regexp_replace(parts, '=[0-9.]+', '', 'g');
  RAISE NOTICE 'they add up: %, the node''s total: %', abs(sum - total) < 0.05, abs(node_total - total) < 0.05;
END $$;

-- Results, LEFT JOIN: every aggregate the fold has, over a customer without orders too.
SELECT ea_plan(q), ea_same(q) FROM (VALUES
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, count(qty), sum(qty), avg(qty), min(d), max(total), sum(total) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, count(DISTINCT qty), min(note), stddev(total), var_pop(qty) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, sum(qty * 2 + 1), count(oid) FILTER (WHERE qty > 10) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, name, seg, count(oid) FROM %1$s LEFT JOIN %2$s ON cust = id AND d >= date ''2020-06-01'' GROUP BY id, name, seg'),
  ('SELECT seg, id, count(oid) + 1 AS c1 FROM %1$s c LEFT JOIN %2$s o ON c.id = o.cust WHERE c.seg = ''AUT'' GROUP BY seg, id'),
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id HAVING count(oid) = 0 OR sum(qty) > 400'),
  ('SELECT k8, count(oid), max(qty) FROM %1$s LEFT JOIN %2$s ON k8 = cust8 GROUP BY k8'),
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust8 GROUP BY id')
) v(q);
-- Inner joins, either way round; count(*) counts the matches.
SELECT ea_plan(q), ea_same(q) FROM (VALUES
  ('SELECT id, count(*), sum(total) FROM %1$s JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, count(*) FROM %2$s, %1$s WHERE cust = id AND qty < 20 GROUP BY id'),
  ('SELECT name, count(*) FROM %1$s JOIN %2$s ON id = cust GROUP BY id, name HAVING count(*) > 20')
) v(q);
-- A columnar customer table probes as well as a heap one.
SELECT ea_plan(q, 'ea_cust_c'), ea_same(q, 'ea_cust_c') FROM (VALUES
  ('SELECT id, count(oid), sum(qty) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, count(*) FROM %1$s JOIN %2$s ON id = cust WHERE name LIKE ''c1%%'' GROUP BY id')
) v(q);

-- Shapes it must leave to core, with the results still right.
CREATE TABLE ea_loose (id int, name text);  -- no unique key
INSERT INTO ea_loose SELECT g % 500, 'l' || g FROM generate_series(1, 1000) g;
CREATE TABLE ea_nullable (id int UNIQUE);  -- unique, but NULL allowed
INSERT INTO ea_nullable SELECT CASE WHEN g % 100 = 0 THEN NULL ELSE g END FROM generate_series(1, 1000) g;
ANALYZE ea_loose, ea_nullable;
SELECT ea_plan(q), ea_same(q) FROM (VALUES
  -- count(*) of a LEFT JOIN counts the NULL-extended row: 1, not 0.
  ('SELECT id, count(*) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  -- An argument that is not NULL on the NULL-extended row.
  ('SELECT id, count(coalesce(qty, 0)) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, sum(1) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  -- Not grouped by the key; an aggregate of the customer's columns.
  ('SELECT seg, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY seg'),
  ('SELECT id, count(oid), max(name) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT id, sum(qty + id) FROM %1$s JOIN %2$s ON id = cust GROUP BY id'),
  -- A second join clause, a WHERE over both sides, a join on an expression.
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust AND qty < id GROUP BY id'),
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust AND seg = ''AUT'' GROUP BY id'),
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust WHERE qty IS NULL GROUP BY id'),
  ('SELECT id, count(oid) FROM %1$s JOIN %2$s ON id = cust WHERE qty < id GROUP BY id'),
  ('SELECT id, count(oid) FROM %1$s JOIN %2$s ON id = cust + 1 GROUP BY id'),
  -- The other joins.
  ('SELECT id, count(oid) FROM %1$s FULL JOIN %2$s ON id = cust GROUP BY id'),
  ('SELECT cust, count(oid) FROM %2$s LEFT JOIN %1$s ON id = cust GROUP BY cust'),
  -- Grouped by the columnar side''s key, or by the key of a third table.
  ('SELECT cust, count(oid) FROM %1$s JOIN %2$s ON id = cust GROUP BY cust'),
  ('SELECT c.id, count(oid) FROM %1$s c JOIN %2$s ON c.id = cust JOIN ea_cust c2 ON c2.id = c.id GROUP BY c.id'),
  -- The columnar side''s WHERE clause that the scan cannot evaluate.
  ('SELECT id, count(oid) FROM %1$s JOIN %2$s ON id = cust WHERE random() < 2 GROUP BY id'),
  -- No unique key; a unique key that may be NULL (fine for an inner join).
  ('SELECT l.id, count(oid) FROM ea_loose l LEFT JOIN %2$s ON l.id = cust GROUP BY l.id'),
  ('SELECT n.id, count(oid) FROM ea_nullable n LEFT JOIN %2$s ON n.id = cust GROUP BY n.id'),
  ('SELECT n.id, count(oid) FROM ea_nullable n JOIN %2$s ON n.id = cust GROUP BY n.id'),
  -- Grouping sets.
  ('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY ROLLUP (id)')
) v(q);

-- Parameters: a prepared statement's, and a correlated subquery that rescans the node
-- (each rescan folds again and rescans the customer side).
PREPARE ea_p(int) AS SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust AND qty > $1
  WHERE id <= 5 GROUP BY id ORDER BY id;
EXECUTE ea_p(30);
EXECUTE ea_p(45);
SELECT v.x, s.* FROM (VALUES (2), (4)) v(x),
  LATERAL (SELECT id, count(oid) AS n, sum(qty) AS q FROM ea_cust LEFT JOIN ea_ord ON id = cust
           WHERE id <= v.x GROUP BY id) s ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT v.x, s.* FROM (VALUES (2), (4)) v(x),
  LATERAL (SELECT id, count(oid) AS n, sum(qty) AS q FROM ea_cust LEFT JOIN ea_ord ON id = cust
           WHERE id <= v.x GROUP BY id) s;

-- A cursor moves both ways over the groups.
BEGIN;
DECLARE ea_cur SCROLL CURSOR FOR
  SELECT id, count(oid) FROM ea_cust LEFT JOIN ea_ord ON id = cust GROUP BY id ORDER BY id;
FETCH 3 FROM ea_cur;
FETCH BACKWARD 2 FROM ea_cur;
COMMIT;

-- A role that may read the tables but own nothing; and row level security, which
-- core applies as a WHERE clause the fold must respect.
CREATE ROLE ea_reader;
GRANT SELECT ON ea_cust, ea_ord TO ea_reader;
SET ROLE ea_reader;
SELECT count(*), sum(n) FROM (SELECT id, count(oid) AS n FROM ea_cust LEFT JOIN ea_ord ON id = cust
  GROUP BY id) s;
RESET ROLE;
ALTER TABLE ea_ord ENABLE ROW LEVEL SECURITY;
CREATE POLICY ea_small ON ea_ord FOR SELECT TO ea_reader USING (qty < 10);
SET ROLE ea_reader;
SELECT ea_plan('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id');
SELECT count(*), sum(n) FROM (SELECT id, count(oid) AS n FROM ea_cust LEFT JOIN ea_ord ON id = cust
  GROUP BY id) s;
RESET ROLE;
SELECT count(*), sum(n) FROM (SELECT id, count(oid) AS n FROM ea_cust LEFT JOIN ea_ord_h ON id = cust
  AND qty < 10 GROUP BY id) s;
ALTER TABLE ea_ord DISABLE ROW LEVEL SECURITY;

-- Off: core's plan.
SET pgcolumnar.enable_eager_agg = off;
SELECT ea_plan('SELECT id, count(oid) FROM %1$s LEFT JOIN %2$s ON id = cust GROUP BY id');
RESET pgcolumnar.enable_eager_agg;
DROP OWNED BY ea_reader;
DROP ROLE ea_reader;
DEALLOCATE ea_p;
DROP TABLE ea_cust, ea_cust_c, ea_ord, ea_ord_h, ea_loose, ea_nullable;
DROP FUNCTION ea_same(text, text), ea_plan(text, text);
DROP EXTENSION pgcolumnar;
