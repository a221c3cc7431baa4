-- Row output value for value against heap, for the values whose Datums the scan builds
-- itself: numerics stored as scaled mantissas (small ones, ones past 32 and 43 bits,
-- display scales past the short header's 63, zero, negatives) and numerics the codec
-- leaves as bytes (NaN, infinities, mixed scales, mantissas past 64 bits); text of every
-- length around the scan's 16-byte moves, empty text (a column of nothing else too),
-- char(n) with its padding, NULLs everywhere; columns added later with defaults. Read
-- whole, through a pushed filter (some rows of a vector), and backward.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TABLE ro_col (
    id int, n2 numeric(15,2), n0 numeric, n43 numeric(30,2), n70 numeric(80,70),
    nmix numeric, nwide numeric(40,2), t text, tl text, c char(10), e text) USING columnar;
-- 5000 rows (3 vectors).
INSERT INTO ro_col SELECT g,
    CASE WHEN g % 97 = 0 THEN NULL WHEN g % 50 = 0 THEN 0
         ELSE ((g * 7919) % 100003) * 1.01 - 2500 END,
    CASE WHEN g % 89 = 0 THEN NULL ELSE g * 1000003::numeric - 2000000000 END,
    CASE WHEN g % 83 = 0 THEN NULL ELSE (g * 7919 % 1000) * 1000000000000.01 - 300000000000000 END,
    CASE WHEN g % 79 = 0 THEN NULL ELSE round(g * 0.000000000000000000000000000000000000000000000000000000001 - 0.0000000000000000000000000000000000000000000000000000002, 70) END,
    CASE WHEN g % 7 = 0 THEN 'NaN'::numeric WHEN g % 7 = 1 THEN 'Infinity'
         WHEN g % 7 = 2 THEN '-Infinity' WHEN g % 7 = 3 THEN NULL
         ELSE round(g / 7.0 - 300, g % 4) END,
    CASE WHEN g <= 2048 THEN g * 92233720368547758.07 ELSE -g * 0.01 END,
    CASE WHEN g % 11 = 0 THEN NULL WHEN g % 5 = 0 THEN ''
         ELSE (ARRAY['AIR', 'MAIL', 'REG AIR', 'é'])[g % 4 + 1] END,
    CASE WHEN g % 13 = 0 THEN NULL ELSE repeat(chr(65 + g % 26), g % 130) END,
    CASE WHEN g % 17 = 0 THEN NULL WHEN g % 3 = 0 THEN '' WHEN g % 3 = 1 THEN 'ab '
         ELSE 'abcdefghij' END,
    ''
  FROM generate_series(1, 5000) g;
ALTER TABLE ro_col ADD COLUMN dn numeric(6,2) DEFAULT 1.50, ADD COLUMN dt text DEFAULT '',
    ADD COLUMN dc char(4) DEFAULT 'x';
INSERT INTO ro_col (id, n2, t, c, e) SELECT g, g / 100.0, 'later', 'z', '' FROM generate_series(5001, 5100) g;
CREATE TABLE ro_heap AS SELECT * FROM ro_col;
ANALYZE ro_col, ro_heap;
-- Which columns the ScaledNumeric codec took (the others are read as bytes).
SELECT attname, encodings FROM pgcolumnar.stats('ro_col') WHERE attname LIKE 'n%' ORDER BY attname;
-- The ColumnarScan (Seq Scan, the table access method's own scan, below).
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT r::text FROM ro_col r;
-- Every row as text (numerics with their display scales, char(n) with its padding),
-- in both directions: no row of one is missing from the other.
SELECT count(*) AS rows_differing FROM (
  (SELECT r::text FROM ro_col r EXCEPT ALL SELECT r::text FROM ro_heap r)
  UNION ALL
  (SELECT r::text FROM ro_heap r EXCEPT ALL SELECT r::text FROM ro_col r)) x;
-- The same for the values as their binary forms, which tell a value's digits, weight
-- and display scale, and char(n)'s stored padding.
SELECT count(*) AS values_differing FROM (
  (SELECT id, numeric_send(n2), numeric_send(n0), numeric_send(n43), numeric_send(n70),
          numeric_send(nmix), numeric_send(nwide), textsend(t), textsend(tl),
          bpcharsend(c), textsend(e), numeric_send(dn), textsend(dt), bpcharsend(dc),
          octet_length(c), length(e)
     FROM ro_col
   EXCEPT ALL
   SELECT id, numeric_send(n2), numeric_send(n0), numeric_send(n43), numeric_send(n70),
          numeric_send(nmix), numeric_send(nwide), textsend(t), textsend(tl),
          bpcharsend(c), textsend(e), numeric_send(dn), textsend(dt), bpcharsend(dc),
          octet_length(c), length(e)
     FROM ro_heap)) x;
-- A few rows as they print.
SELECT id, n2, n0, n43, nmix, nwide, t, length(tl), c || '|', e = '' AS e_empty, dn, dt, dc || '|'
  FROM ro_col WHERE id IN (1, 2, 3, 50, 97, 100, 2048, 2049, 5000, 5001) ORDER BY id;
-- Some rows of each vector only (a pushed filter), and the functions reading the
-- values (hashing and arithmetic on the numerics, lengths and case of the text).
ALTER TABLE ro_col SET (quals_push_down = on);
EXPLAIN (COSTS OFF) SELECT * FROM ro_col WHERE id IN (3, 77, 2500, 4999, 5050);
SELECT count(*) AS rows_differing FROM (
  (SELECT r::text FROM ro_col r WHERE id IN (3, 77, 2500, 4999, 5050)
   EXCEPT ALL SELECT r::text FROM ro_heap r WHERE id IN (3, 77, 2500, 4999, 5050))
  UNION ALL
  (SELECT r::text FROM ro_heap r WHERE id IN (3, 77, 2500, 4999, 5050)
   EXCEPT ALL SELECT r::text FROM ro_col r WHERE id IN (3, 77, 2500, 4999, 5050))) x;
SELECT count(*) AS values_differing FROM (
  (SELECT hash_numeric(n2), n2 * 3, hash_numeric(n43), n70 + 1, hash_numeric(nmix), upper(t),
          length(tl), hashbpchar(c), length(c), e || 'x'
     FROM ro_col WHERE id < 4000
   EXCEPT ALL
   SELECT hash_numeric(n2), n2 * 3, hash_numeric(n43), n70 + 1, hash_numeric(nmix), upper(t),
          length(tl), hashbpchar(c), length(c), e || 'x'
     FROM ro_heap WHERE id < 4000)) x;
-- The table access method's own scan builds its rows the same way.
RESET enable_seqscan;
EXPLAIN (COSTS OFF) SELECT r::text FROM ro_col r;
SELECT count(*) AS rows_differing FROM (
  (SELECT r::text FROM ro_col r EXCEPT ALL SELECT r::text FROM ro_heap r)
  UNION ALL
  (SELECT r::text FROM ro_heap r EXCEPT ALL SELECT r::text FROM ro_col r)) x;
SET enable_seqscan = off;
-- Backward through a scroll cursor: the last rows, as heap gives them.
BEGIN;
EXPLAIN (COSTS OFF) SELECT id, n2, n43, nmix, t, c, dn FROM ro_col;
DECLARE cur SCROLL CURSOR FOR SELECT id, n2, n43, nmix, t, c, dn FROM ro_col;
MOVE LAST IN cur;
FETCH BACKWARD 3 FROM cur;
FETCH ABSOLUTE 2049 FROM cur;
COMMIT;
SELECT id, n2, n43, nmix, t, c, dn FROM ro_heap WHERE id IN (5098, 5099, 5100, 2049) ORDER BY id DESC;
DROP TABLE ro_col, ro_heap;
-- Numeric edge values at display scales 0, 2 and 4, as heap gives them (their binary
-- forms tell digits, weight and display scale): zero, the smallest steps either side of
-- it, either side of a base-10000 digit (9999.99, 10000), 1e15 - 0.01, trailing zero
-- digits; a column of small values only (images made a vector at a time), columns with
-- mantissas past 2^43 (each row's image written as it is stored) or past 64 bits (kept as
-- short varlena images), and NaN and the infinities in the second vector of a column. The
-- edge rows as they print.
CREATE TABLE ne_col (id int, small numeric(9,2), s2 numeric(17,2), s0 numeric(15,0),
    s4 numeric(19,4), sx numeric) USING columnar;
-- Every third row an edge value, the others varied (so that the vectors are stored as
-- scaled numerics, not a dictionary).
INSERT INTO ne_col SELECT g,
    CASE WHEN g % 19 = 0 THEN NULL WHEN g % 3 > 0 THEN (g * 7919 % 100003) * 0.01 - 500
         ELSE (ARRAY[0, -0.01, 0.01, 9999.99, 10000, -10000, 1234567.89, -0.10, 100, -9999.99])[g % 10 + 1] END,
    CASE WHEN g % 3 > 0 THEN (g * 7919 % 100003) * 1.01 - 50000
         ELSE (ARRAY[0, -0.01, 0.01, 9999.99, 10000, -10000, 999999999999999.99, -999999999999999.99,
                     100000000, 0.10, 1.00, -1234.5])[g / 3 % 12 + 1] END,
    CASE WHEN g % 3 > 0 THEN g * 7919 % 100003 - 50000
         ELSE (ARRAY[0, -1, 1, 9999, 10000, -10000, 99999999, -99999999, 100000000, 10,
                     12345678])[g % 11 + 1] END,
    CASE WHEN g % 3 > 0 THEN (g * 7919 % 100003) * 0.0101
         ELSE (ARRAY[0, -0.0001, 0.0001, 9999.9999, 10000, -10000.5, 999999999999999.9999, 0.1, -1.0001,
                     12345678.9])[g % 10 + 1] END,
    CASE WHEN g > 2048 AND g % 13 = 0 THEN 'NaN'::numeric WHEN g > 2048 AND g % 13 = 1 THEN 'Infinity'
         WHEN g > 2048 AND g % 13 = 2 THEN '-Infinity' ELSE g * 0.01 - 20 END
  FROM generate_series(1, 4096) g;
CREATE TABLE ne_heap AS SELECT * FROM ne_col;
SELECT attname, encodings FROM pgcolumnar.stats('ne_col') ORDER BY attname;
EXPLAIN (COSTS OFF) SELECT * FROM ne_col;
SELECT count(*) AS values_differing FROM (
  (SELECT id, numeric_send(small), numeric_send(s2), numeric_send(s0), numeric_send(s4),
          numeric_send(sx) FROM ne_col
   EXCEPT ALL
   SELECT id, numeric_send(small), numeric_send(s2), numeric_send(s0), numeric_send(s4),
          numeric_send(sx) FROM ne_heap)
  UNION ALL
  (SELECT id, numeric_send(small), numeric_send(s2), numeric_send(s0), numeric_send(s4),
          numeric_send(sx) FROM ne_heap
   EXCEPT ALL
   SELECT id, numeric_send(small), numeric_send(s2), numeric_send(s0), numeric_send(s4),
          numeric_send(sx) FROM ne_col)) x;
SELECT * FROM ne_col WHERE id % 3 = 0 AND (id <= 36 OR id BETWEEN 2049 AND 2088) ORDER BY id;
DROP TABLE ne_col, ne_heap;
DROP EXTENSION pgcolumnar;
