-- Text operators that are not byte comparisons, pushed into the scan and answered by
-- core's own function: ILIKE, ~, ~*, their negators, LIKE with _ or an escape, SIMILAR
-- TO. The function runs once per dictionary entry (low-cardinality vectors) or once per
-- value. Each query is compared with its heap twin both ways (0 = equal); the plans say
-- the filter was pushed; errors are core's; under row-level security the operators
-- (not leakproof) stay a Filter.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE tm_col (i int, kind text, name varchar(40), note text, mode char(10)) USING columnar;
INSERT INTO tm_col SELECT i,
    CASE WHEN i % 101 = 0 THEN NULL
         ELSE (ARRAY['Brass', 'BRASS plate', 'polished brass', 'Steel', 'steel_wire', 'Tin%',
                     'ÉCLAIR', 'éclair', ''])[i % 9 + 1] END,
    CASE WHEN i % 97 = 0 THEN NULL ELSE 'Customer#' || lpad((i * 7919 % 100003)::text, 9, '0') END,
    CASE WHEN i % 89 = 0 THEN NULL
         ELSE (ARRAY['special requests', 'Special  Requests', 'regular', 'pending deposits'])[i % 4 + 1]
              || ' ' || (i % 1000)::text END,
    CASE WHEN i % 83 = 0 THEN NULL ELSE (ARRAY['AIR', 'REG AIR', 'rail', 'SHIP  ', ''])[i % 5 + 1] END
FROM generate_series(1, 30000) i;
CREATE TABLE tm_heap AS SELECT * FROM tm_col;
ANALYZE tm_col, tm_heap;
CREATE FUNCTION differs(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'tm_col'), format(q, 'tm_heap'), format(q, 'tm_heap'), format(q, 'tm_col'))
    INTO n;
  RETURN n;
END $$;
EXPLAIN (COSTS OFF) SELECT i FROM tm_col WHERE kind ILIKE '%brass%' AND name ~ '^Customer#0000[0-4]';
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE note !~* 'special\s+requests';
SELECT count(*) FROM tm_col WHERE kind ILIKE '%brass%';
SELECT count(*) FROM tm_heap WHERE kind ILIKE '%brass%';
SELECT q, differs(q) FROM (VALUES
    ('SELECT i FROM %s WHERE kind ILIKE ''%%brass%%'''),
    ('SELECT i FROM %s WHERE kind NOT ILIKE ''%%brass%%'''),
    ('SELECT i FROM %s WHERE NOT (kind ILIKE ''steel%%'')'),
    ('SELECT i FROM %s WHERE kind ILIKE ''éclair'''),
    ('SELECT i FROM %s WHERE kind ~ ''^[A-Z]'''),
    ('SELECT i FROM %s WHERE kind ~* ''^b'''),
    ('SELECT i FROM %s WHERE kind !~ ''a'''),
    ('SELECT i FROM %s WHERE kind LIKE ''Stee_'''),
    ('SELECT i FROM %s WHERE kind LIKE ''steel\_%%'''),
    ('SELECT i FROM %s WHERE kind LIKE ''Tin#%%'' ESCAPE ''#'''),
    ('SELECT i FROM %s WHERE kind SIMILAR TO ''(Brass|Steel)%%'''),
    ('SELECT i FROM %s WHERE kind ILIKE '''''),
    ('SELECT i FROM %s WHERE name ~ ''^Customer#0000[0-4]'''),
    ('SELECT i FROM %s WHERE name ILIKE ''%%#00001%%'''),
    ('SELECT i FROM %s WHERE note ~* ''special\s+requests'''),
    ('SELECT i FROM %s WHERE note !~* ''special\s+requests'' OR kind ~ ''^S'''),
    ('SELECT i FROM %s WHERE note NOT LIKE ''%%pending_deposits%%'''),
    ('SELECT i FROM %s WHERE mode ILIKE ''%%air%%'''),
    ('SELECT i FROM %s WHERE mode ILIKE ''air'''),
    ('SELECT i FROM %s WHERE mode ~ ''P +$'''),
    ('SELECT i FROM %s WHERE mode !~* ''^r'''),
    ('SELECT i FROM %s WHERE mode LIKE ''_AI%%'''),
    ('SELECT i FROM %s WHERE mode LIKE ''          ''')
) v(q);
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE mode ILIKE '%air%';
-- A value's leading characters (TPC-H q22's substring(c_phone FROM 1 FOR 2) IN (...)):
-- a prefix test for a value of that many characters, an equality for a shorter one, no
-- match for a longer one; a char(n) cast to text loses its trailing spaces first.
EXPLAIN (COSTS OFF)
SELECT count(*) FROM tm_col WHERE substring(name FROM 1 FOR 12) IN ('Customer#000', 'Customer#001');
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE left(mode, 2) = 'RE';
SELECT q, differs(q) FROM (VALUES
    ('SELECT i FROM %s WHERE substring(name FROM 1 FOR 12) IN (''Customer#000'', ''Customer#001'')'),
    ('SELECT i FROM %s WHERE substring(kind FROM 1 FOR 2) = ANY (''{Br,éc,É,Tin%%,"",NULL,Steel}'')'),
    ('SELECT i FROM %s WHERE substr(kind, 1, 5) = ''Brass'''),
    ('SELECT i FROM %s WHERE left(kind, 1) = ''é'''),
    ('SELECT i FROM %s WHERE left(kind, 3) IN (''BRA'', ''Ste'') AND i > 100'),
    ('SELECT i FROM %s WHERE left(mode, 2) = ''RE'''),
    ('SELECT i FROM %s WHERE left(mode, 4) = ''REG '''),
    ('SELECT i FROM %s WHERE substring(mode FROM 1 FOR 5) IN (''AIR'', ''SHIP'', ''SHIP '', '''')'),
    ('SELECT i FROM %s WHERE substring(note FROM 1 FOR 7) = ''special'' OR left(kind, 2) = ''Ti''')
) v(q);
-- Not pushed: another start, a negation.
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE substring(name FROM 2 FOR 3) = 'ust';
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE NOT (left(kind, 2) = 'Br');
-- In the fold, in WHERE and in a CASE condition.
EXPLAIN (COSTS OFF)
SELECT count(*), sum(CASE WHEN note ~ '^special' THEN 1 ELSE 0 END) FROM tm_col WHERE kind ILIKE '%steel%';
SELECT differs('SELECT count(*), sum(CASE WHEN note ~ ''^special'' THEN 1 ELSE 0 END) FROM %s WHERE kind ILIKE ''%%steel%%''');
-- A parameter, and the statement again with another pattern.
PREPARE tm(text) AS SELECT count(*) FROM tm_col WHERE kind ~* $1;
EXECUTE tm('^b');
SELECT count(*) FROM tm_heap WHERE kind ~* '^b';
EXECUTE tm('brass');
SELECT count(*) FROM tm_heap WHERE kind ~* 'brass';
DEALLOCATE tm;
-- Core's errors: an invalid regular expression, LIKE under a nondeterministic collation.
SELECT count(*) FROM tm_col WHERE kind ~ '(';
SELECT count(*) FROM tm_heap WHERE kind ~ '(';
CREATE COLLATION tm_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT count(*) FROM tm_col WHERE kind COLLATE tm_ci LIKE 'B_ass';
SELECT count(*) FROM tm_heap WHERE kind COLLATE tm_ci LIKE 'B_ass';
-- Row-level security: the operators are not leakproof, so a role the policy applies to
-- gets them as a Filter above the policy's.
CREATE ROLE tm_reader;
ALTER TABLE tm_col ENABLE ROW LEVEL SECURITY;
CREATE POLICY tm_even ON tm_col FOR SELECT USING (i % 2 = 0);
GRANT SELECT ON tm_col, tm_heap TO tm_reader;
SET ROLE tm_reader;
EXPLAIN (COSTS OFF) SELECT count(*) FROM tm_col WHERE kind ILIKE '%brass%';
SELECT (SELECT count(*) FROM tm_col WHERE kind ILIKE '%brass%')
     = (SELECT count(*) FROM tm_heap WHERE kind ILIKE '%brass%' AND i % 2 = 0) AS same;
RESET ROLE;
DROP TABLE tm_col, tm_heap;
DROP ROLE tm_reader;
DROP COLLATION tm_ci;
DROP FUNCTION differs(text);
DROP EXTENSION pgcolumnar;
