-- Every kind of type round-trips exactly: the same rows in heap and columnar compare
-- equal column by column (EXCEPT in both directions is empty).
CREATE EXTENSION pgcolumnar;
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE DOMAIN money2 AS float8;
CREATE TYPE pair AS (a int, b text);

CREATE TABLE types_heap (
  i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, n numeric, n2 numeric(20, 6),
  b bool, c "char", t text, vc varchar(10), bp char(5), by bytea, nm name,
  d date, tm time, ttz timetz, ts timestamp, tstz timestamptz, iv interval,
  u uuid, j json, jb jsonb, a int[], ta text[], r int4range, ip inet, mc macaddr,
  pt point, bx box, x xml, m mood, p posint, mo money2, pr pair, bt bit(5), vb varbit,
  o oid, tid_ tid, ts_v tsvector, dropped int
);
ALTER TABLE types_heap DROP COLUMN dropped;
INSERT INTO types_heap
SELECT i::int2, i, i::int8 * 1000000007, i / 3.0, i / 7.0, i::numeric / 13, round(i::numeric / 11, 6),
       i % 2 = 0, chr(65 + i % 26), repeat('x', i % 50) || i, 'vc' || i, 'bp' || (i % 100),
       decode(md5(i::text), 'hex'), 'name' || i,
       '2024-01-01'::date + i, '00:00'::time + i * interval '1 s', '12:00+02'::timetz,
       '2024-01-01'::timestamp + i * interval '1 h', '2024-01-01'::timestamptz + i * interval '1 min',
       i * interval '1 day 1 s', md5(i::text)::uuid, ('{"k":' || i || '}')::json,
       ('{"k":' || i || ', "a": [1, 2]}')::jsonb, ARRAY[i, i + 1, NULL], ARRAY['a' || i, NULL, ''],
       int4range(i, i + 10), ('10.0.' || (i % 256) || '.1')::inet, '08:00:2b:01:02:03',
       point(i, -i), box(point(0, 0), point(i, i)), ('<x>' || i || '</x>')::xml,
       (ARRAY['sad', 'ok', 'happy']::mood[])[1 + i % 3], i + 1, i * 1.5, ROW(i, 'p' || i)::pair,
       (i % 32)::bit(5), (i % 7)::bit(3)::varbit, i::oid, ('(' || i || ',1)')::tid,
       to_tsvector('simple', 'word' || i || ' other')
FROM generate_series(1, 3000) i;
-- NULLs everywhere, special floats and numerics, empty and large values.
INSERT INTO types_heap (i4) VALUES (NULL);
INSERT INTO types_heap (i4, f4, f8, n, t) VALUES
  (-1, 'NaN', 'NaN', 'NaN', ''), (-2, '-0', '-0', '-0.000', repeat('big', 400000)),
  (-3, 'Infinity', '-Infinity', 12345678901234567890.123456789, repeat(md5('x'), 30000)),
  (-4, 1.17549435e-38, 4.9e-324, -1e-100, E'\n\t\\ unicode: \u00e9\u4e2d');

CREATE TABLE types_col (LIKE types_heap) USING columnar;
INSERT INTO types_col SELECT * FROM types_heap;
-- An all-NULL column too.
ALTER TABLE types_col ADD COLUMN all_null text;
ALTER TABLE types_heap ADD COLUMN all_null text;

SELECT count(*) FROM types_col;
SELECT count(*) AS only_in_heap FROM (
  SELECT i2, i4, i8, f4::text, f8::text, n::text, n2, b, c, t, vc, bp, by, nm, d, tm, ttz, ts, tstz,
         iv, u, j::text, jb, a, ta, r, ip, mc, pt::text, bx::text, x::text, m, p, mo::text, pr::text, bt,
         vb, o, tid_, ts_v, all_null FROM types_heap
  EXCEPT ALL
  SELECT i2, i4, i8, f4::text, f8::text, n::text, n2, b, c, t, vc, bp, by, nm, d, tm, ttz, ts, tstz,
         iv, u, j::text, jb, a, ta, r, ip, mc, pt::text, bx::text, x::text, m, p, mo::text, pr::text, bt,
         vb, o, tid_, ts_v, all_null FROM types_col) s;
SELECT count(*) AS only_in_columnar FROM (
  SELECT i2, i4, i8, f4::text, f8::text, n::text, n2, b, c, t, vc, bp, by, nm, d, tm, ttz, ts, tstz,
         iv, u, j::text, jb, a, ta, r, ip, mc, pt::text, bx::text, x::text, m, p, mo::text, pr::text, bt,
         vb, o, tid_, ts_v, all_null FROM types_col
  EXCEPT ALL
  SELECT i2, i4, i8, f4::text, f8::text, n::text, n2, b, c, t, vc, bp, by, nm, d, tm, ttz, ts, tstz,
         iv, u, j::text, jb, a, ta, r, ip, mc, pt::text, bx::text, x::text, m, p, mo::text, pr::text, bt,
         vb, o, tid_, ts_v, all_null FROM types_heap) s;
-- Bit-exact floats and large values.
SELECT i4, f4::text, f8::text, n::text, length(t), md5(t) FROM types_col WHERE i4 < 0 ORDER BY i4;
SELECT i4, float8send(f8) = (SELECT float8send(f8) FROM types_heap h WHERE h.i4 = c.i4) AS same_bits
  FROM types_col c WHERE i4 < 0 ORDER BY i4;
-- Values passed through TOAST on the way in are stored detoasted and come back whole.
CREATE TABLE toasted (id int, v text);
INSERT INTO toasted VALUES (1, repeat(md5('toast'), 100000));
CREATE TABLE toasted_col (id int, v text) USING columnar;
INSERT INTO toasted_col SELECT * FROM toasted;
SELECT length(v), md5(v) = (SELECT md5(v) FROM toasted) AS same FROM toasted_col;

DROP TABLE types_col, types_heap, toasted, toasted_col;
DROP TYPE pair;
DROP DOMAIN money2;
DROP DOMAIN posint;
DROP TYPE mood;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
