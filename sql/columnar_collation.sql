-- Text ranges under a collation whose order is not byte order (here ICU's root
-- collation: 'a' < 'B' < 'é' < 'z', where bytes put 'B' first and 'é' last) are pushed
-- into the scan and tested with the collation's own comparison: once per dictionary
-- entry for low-cardinality vectors, per value otherwise; char(n) without its trailing
-- spaces. Each query is compared with its heap twin both ways (0 = equal); the plans
-- say the filter was pushed. A nondeterministic collation stays on core's Filter.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE co_col (
    i int,
    word text COLLATE "und-x-icu",            -- 12 values: dictionary vectors
    name varchar(20) COLLATE "und-x-icu",     -- mostly distinct: plain vectors
    code char(6) COLLATE "und-x-icu",
    plain text                                -- the database's default collation
) USING columnar;
INSERT INTO co_col SELECT i,
    CASE WHEN i % 97 = 0 THEN NULL
         ELSE (ARRAY['apple', 'Apple', 'banana', 'Banana', 'éclair', 'eclair', 'zebra', 'Zulu',
                     '', ' space', 'b', 'B'])[i % 12 + 1] END,
    CASE WHEN i % 89 = 0 THEN NULL
         ELSE (ARRAY['a', 'B', 'é', 'Z', 'ß', 'ss'])[i % 6 + 1] || (i * 7919 % 10007)::text END,
    CASE WHEN i % 83 = 0 THEN NULL ELSE (ARRAY['ab', 'AB ', 'Ab', 'b', 'é', ''])[i % 6 + 1] END,
    (ARRAY['a', 'B', 'é'])[i % 3 + 1]
FROM generate_series(1, 30000) i;
CREATE TABLE co_heap AS SELECT * FROM co_col;
ANALYZE co_col, co_heap;
CREATE FUNCTION differs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'co_col'), format(q, 'co_heap'), format(q, 'co_heap'), format(q, 'co_col'))
    INTO n;
  RETURN n;
END $$;
-- Pushed, with the collation's order.
EXPLAIN (COSTS OFF) SELECT i FROM co_col WHERE word < 'banana' AND name >= 'b';
EXPLAIN (COSTS OFF) SELECT count(*) FROM co_col WHERE code <= 'ab';
SELECT count(*) FROM co_col WHERE word < 'banana';
SELECT count(*) FROM co_heap WHERE word < 'banana';
-- (in byte order the answer differs: the test above could tell them apart)
SELECT count(*) FROM co_heap WHERE word < 'banana' COLLATE "C";
SELECT q, differs(q) FROM (VALUES
    ('SELECT i FROM %s WHERE word < ''banana'''),
    ('SELECT i FROM %s WHERE word <= ''Banana'''),
    ('SELECT i FROM %s WHERE word > ''b'' AND word < ''Zulu'''),
    ('SELECT i FROM %s WHERE word >= '''''),
    ('SELECT i FROM %s WHERE NOT (word < ''eclair'')'),
    ('SELECT i FROM %s WHERE ''é'' > word'),
    ('SELECT i FROM %s WHERE name < ''b'''),
    ('SELECT i FROM %s WHERE name BETWEEN ''é1'' AND ''z'''),
    ('SELECT i FROM %s WHERE name > ''ss5'' OR word < ''apple'''),
    ('SELECT i FROM %s WHERE code <= ''ab'''),
    ('SELECT i FROM %s WHERE code > ''AB'''),
    ('SELECT i FROM %s WHERE code < ''b    '''),
    ('SELECT i FROM %s WHERE plain < ''b'''),
    ('SELECT i FROM %s WHERE word < ''banana'' COLLATE "C"'),
    ('SELECT i FROM %s WHERE word COLLATE "en-x-icu" >= ''B''')
) v(q);
-- The fold: a collated range in WHERE and in a CASE condition.
EXPLAIN (COSTS OFF)
SELECT count(*), sum(CASE WHEN name < 'ß' THEN 1 ELSE 0 END) FROM co_col WHERE word >= 'b';
SELECT differs('SELECT count(*), sum(CASE WHEN name < ''ß'' THEN 1 ELSE 0 END) FROM %s WHERE word >= ''b''');
-- A parameter, and a rescan with another value.
PREPARE p(text) AS SELECT count(*) FROM co_col WHERE word < $1;
EXECUTE p('banana');
EXECUTE p('Zulu');
SELECT count(*) FROM co_heap WHERE word < 'Zulu';
DEALLOCATE p;
-- A nondeterministic collation: core's Filter, not pushed.
CREATE COLLATION co_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (COSTS OFF) SELECT i FROM co_col WHERE word COLLATE co_ci < 'banana';
SELECT differs('SELECT i FROM %s WHERE word COLLATE co_ci < ''banana''');
-- A role that is no superuser, and a partition.
CREATE ROLE co_reader;
CREATE TABLE co_parts (i int, word text COLLATE "und-x-icu") PARTITION BY RANGE (i);
CREATE TABLE co_part0 PARTITION OF co_parts FOR VALUES FROM (0) TO (15000) USING columnar;
CREATE TABLE co_part1 PARTITION OF co_parts FOR VALUES FROM (15000) TO (40000);
INSERT INTO co_parts SELECT i, word FROM co_heap;
GRANT SELECT ON co_parts, co_part0, co_part1, co_heap TO co_reader;
SET ROLE co_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM co_part0 WHERE word > 'B';
SELECT (SELECT count(*) FROM co_parts WHERE word > 'B') = (SELECT count(*) FROM co_heap WHERE word > 'B') AS same;
RESET ROLE;
DROP TABLE co_parts, co_col, co_heap;
DROP ROLE co_reader;
DROP COLLATION co_ci;
DROP FUNCTION differs(text);
DROP EXTENSION pgcolumnar;
