-- Types, NULLs and TOASTed values, through insert, update, filters, indexes and sorts.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TYPE pair AS (x int, y text);
CREATE DOMAIN posint AS int CHECK (VALUE > 0);
CREATE DOMAIN shorttext AS varchar(5) NOT NULL DEFAULT 'dflt';
CREATE TABLE ty (
  id int, i2 int2, i4 int4, i8 int8, nu numeric(20,6), nb numeric, f4 float4, f8 float8,
  t text, vc varchar(10), ch char(4), b bool, d date, ts timestamp, tz timestamptz, iv interval,
  u uuid, by bytea, j jsonb, js json, ai int[], at text[], cp pair, m mood, p posint, s shorttext,
  inet_c inet, tm time, pt point, r int4range);
INSERT INTO ty VALUES
  (1, 1, 1, 1, 1.5, 1e30, 1.5, 1.5, 'one', 'v1', 'c1', true, '2024-01-01', '2024-01-01 10:00', '2024-01-01 10:00+02', '1 day',
   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0001ff', '{"a": 1, "b": [1, 2]}', '{"a":1}', '{1,2,3}', '{a,NULL,c}', ROW(1, 'p'), 'ok', 5, 'abc',
   '10.0.0.1/8', '12:34:56', '(1,2)', '[1,5)'),
  (2, -32768, -2147483648, -9223372036854775808, -999999.999999, 'NaN', '-Infinity', 'NaN', '', '', '', false, '-infinity', '1999-12-31 23:59:59.999999', 'infinity', '-1 year 2 mons -3 days 04:05:06',
   '00000000-0000-0000-0000-000000000000', '\x', '[]', '[]', '{}', '{}', ROW(NULL, NULL), 'sad', 1, 'x',
   '::1', '00:00', '(0,0)', 'empty'),
  (3, 32767, 2147483647, 9223372036854775807, 99999999999999.999999, 0.000000000000000000001, 'Infinity', 1e308, 'ünïcødé ☃', 'ten chars!', 'abcd', NULL, 'infinity', '2038-01-19 03:14:08', '1970-01-01 00:00:00+00', '00:00:00.000001',
   'ffffffff-ffff-ffff-ffff-ffffffffffff', '\xdeadbeef', '{"nested": {"deep": [null, true, 1.5e10]}}', '{"k": "v"}', '{{1,2},{3,4}}', '{"with space","quote\"d"}', ROW(-1, ''), 'happy', 2147483647, '12345',
   '192.168.1.0/24', '23:59:59.999999', '(-1.5,2.5)', '(,10]'),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, DEFAULT, NULL, NULL, NULL, NULL);
INSERT INTO ty (id, p) VALUES (5, 0);
INSERT INTO ty (id, s) VALUES (5, 'toolong');
INSERT INTO ty (id, s) VALUES (5, NULL);
INSERT INTO ty (id, i2) VALUES (5, 32768);
INSERT INTO ty (id, m) VALUES (5, 'angry');
INSERT INTO ty (id, vc) VALUES (5, 'eleven chars');
SELECT id, i2, i4, i8, nu, nb, f4, f8 FROM ty ORDER BY id;
SELECT id, t, vc, ch, length(ch), octet_length(t), b, d, ts, tz FROM ty ORDER BY id;
SELECT id, iv, u, by, j, js, ai, at, cp, m, p, s FROM ty ORDER BY id;
SELECT id, inet_c, tm, pt, r FROM ty ORDER BY id;
SELECT id, (cp).x, (cp).y, ai[1], at[2], j -> 'a', j #>> '{nested,deep,2}', array_length(ai, 1) FROM ty ORDER BY id;
SELECT id FROM ty WHERE m > 'sad' ORDER BY id;
SELECT m, count(*) FROM ty GROUP BY m ORDER BY m NULLS FIRST;
SELECT id FROM ty WHERE j @> '{"a": 1}' ORDER BY id;
SELECT id FROM ty WHERE ai && '{2,4}' ORDER BY id;
SELECT id FROM ty WHERE u > '00000000-0000-0000-0000-000000000000' ORDER BY id;
SELECT id FROM ty WHERE tz < '2000-01-01' ORDER BY id;
SELECT id FROM ty WHERE nb = 'NaN' OR f8 = 'NaN' ORDER BY id;
SELECT id FROM ty WHERE f4 > 1e30 ORDER BY id;
SELECT id FROM ty WHERE ch = 'c1' ORDER BY id;
SELECT id FROM ty WHERE by = '\xdeadbeef' ORDER BY id;
SELECT id FROM ty WHERE r @> 3 ORDER BY id;
SELECT id, b IS NULL, b IS TRUE, b IS NOT FALSE FROM ty ORDER BY id;
SELECT count(*), count(i2), count(t), count(j), count(cp), count(s) FROM ty;
SELECT id FROM ty ORDER BY t NULLS FIRST, id;
SELECT id FROM ty ORDER BY f8 DESC NULLS LAST, id;
SELECT id FROM ty ORDER BY cp, id;
SELECT id FROM ty ORDER BY nu DESC, id;
SET timezone = 'America/New_York';
SELECT id, tz, tz::date FROM ty ORDER BY id;
RESET timezone;
UPDATE ty SET i8 = i8 - 1 WHERE id = 3;
UPDATE ty SET i4 = i4 - 1, t = t || '-upd', j = j || '{"u": 1}', ai = CASE WHEN array_ndims(ai) = 1 THEN ai || 9 ELSE ai END, cp = ROW((cp).x + 1, (cp).y || '+') WHERE id <= 3 AND id <> 2;
UPDATE ty SET m = 'happy', tz = tz + iv WHERE id = 1;
SELECT id, i4, i8, t, j, ai, cp, m, tz FROM ty ORDER BY id;
CREATE INDEX ty_u ON ty (u);
CREATE INDEX ty_j ON ty USING gin (j);
CREATE INDEX ty_t ON ty (t COLLATE "C");
CREATE INDEX ty_m ON ty (m);
SET enable_seqscan = off;
SELECT id FROM ty WHERE u = 'ffffffff-ffff-ffff-ffff-ffffffffffff';
SELECT id FROM ty WHERE j @> '{"u": 1}' ORDER BY id;
SELECT id, t FROM ty WHERE t > 'a' COLLATE "C" ORDER BY t COLLATE "C";
SELECT id FROM ty WHERE m = 'happy' ORDER BY id;
RESET enable_seqscan;
-- TOAST: compressible and incompressible values, in and out of line
CREATE TABLE toast (id int, small text, big text, bin bytea, arr int[], doc jsonb);
INSERT INTO toast SELECT g, 's' || g, repeat(chr(65 + g % 26), 3000 * g),
  decode(string_agg(md5(g::text || i::text), ''), 'hex'), array_agg(i), jsonb_build_object('k', string_agg(md5(i::text), ''))
  FROM generate_series(1, 12) g, generate_series(1, 800) i GROUP BY g;
SELECT id, length(small), length(big), md5(big), length(bin), md5(bin), array_length(arr, 1), length(doc ->> 'k') FROM toast ORDER BY id;
UPDATE toast SET big = big || 'tail' WHERE id % 3 = 0;
UPDATE toast SET small = 'changed' WHERE id % 4 = 0;
SELECT id, small, length(big), right(big, 6), md5(bin) FROM toast ORDER BY id;
SELECT id FROM toast WHERE big LIKE '%tail' ORDER BY id;
DELETE FROM toast WHERE id > 10;
ALTER TABLE toast ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO toast VALUES (20, 'ext', repeat('z', 100000), NULL, NULL, NULL);
SELECT id, length(big), substr(big, 50000, 5) FROM toast WHERE id >= 10 ORDER BY id;
SELECT count(*), sum(length(big)) FROM toast;
ALTER TABLE toast ALTER COLUMN big TYPE varchar USING big;
SELECT count(*), sum(length(big)) FROM toast;
-- wide tables and many NULL patterns
CREATE TABLE wide AS SELECT g AS id,
  CASE WHEN g % 2 = 0 THEN g END AS c1, CASE WHEN g % 3 = 0 THEN g::text END AS c2,
  CASE WHEN g % 5 = 0 THEN g::numeric / 7 END AS c3, CASE WHEN g % 7 <> 0 THEN g % 2 = 0 END AS c4,
  CASE WHEN g % 11 = 0 THEN now()::date - g END AS c5
  FROM generate_series(1, 2000) g;
SELECT count(c1), count(c2), count(c3), count(c4), count(c5), sum(c1), sum(c3)::numeric(20,6) FROM wide;
SELECT id, c1, c2, c3::numeric(10,4), c4 FROM wide WHERE id BETWEEN 28 AND 36 ORDER BY id;
SELECT count(*) FROM wide WHERE c1 IS NULL AND c2 IS NULL AND c3 IS NULL;
UPDATE wide SET c1 = NULL WHERE c1 % 4 = 0;
UPDATE wide SET c2 = 'filled' WHERE c2 IS NULL AND id % 13 = 0;
SELECT count(c1), count(c2), count(*) FILTER (WHERE c2 = 'filled') FROM wide;
-- domains and enums after DDL
ALTER DOMAIN posint ADD CONSTRAINT small CHECK (VALUE < 100);
ALTER DOMAIN posint ADD CONSTRAINT small2 CHECK (VALUE < 100) NOT VALID;
ALTER TYPE mood ADD VALUE 'ecstatic';
INSERT INTO ty (id, m) VALUES (6, 'ecstatic');
SELECT id, m FROM ty WHERE m >= 'happy' ORDER BY m, id;
ALTER TABLE ty ALTER COLUMN m TYPE text;
SELECT m, count(*) FROM ty GROUP BY m ORDER BY m NULLS FIRST;
DROP TABLE ty, toast, wide;
DROP TYPE mood, pair;
DROP DOMAIN posint, shorttext;
