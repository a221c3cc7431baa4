-- Rows fetched by a nested loop's index scans come back as heap's, values of every
-- kind: a stripe (a row group's rows of one vector) fetched from 128 times keeps its
-- fixed-width vectors as rows (`StripeRows`), the other columns stay vectors, and a
-- later statement reading other columns mixes both. NULLs, -0, NaN and infinities,
-- numerics of several scales and beyond 64 bits, a dropped and an added column,
-- deleted and updated rows; every result is compared with a heap copy.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE rc (id int, k int, i2 int2, i8 bigint, b bool, d date, ts timestamp,
                 tz timestamptz, f4 float4, f8 float8, n0 numeric(10,0), n2 numeric(12,2),
                 n5 numeric, big numeric, t text, gone int) USING columnar;
INSERT INTO rc SELECT g, g % 97,
    CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 30000 - 15000)::int2 END,
    CASE WHEN g % 17 = 0 THEN NULL WHEN g % 5 = 0 THEN -9223372036854775807 + g ELSE g::bigint * 1000003 END,
    CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 = 0 END,
    date '2000-01-01' + g % 4000,
    timestamp '2020-01-01' + g * interval '37 seconds',
    CASE WHEN g % 19 = 0 THEN NULL ELSE timestamptz '2021-06-01 00:00+00' + g * interval '1 minute' END,
    (ARRAY['NaN', '-0', 'Infinity', '-Infinity', '1.5', NULL]::float4[])[g % 40 + 1],
    CASE WHEN g % 11 = 0 THEN NULL WHEN g % 101 = 0 THEN '-0'::float8 WHEN g % 103 = 0 THEN 'NaN'
         ELSE g / 7.0 END,
    g % 100000, CASE WHEN g % 23 = 0 THEN NULL ELSE (g % 77777) / 100.0 - 300 END,
    round(g / 3.0, 5), CASE WHEN g % 2 = 0 THEN 1e30 + g ELSE g END,
    CASE WHEN g % 9 = 0 THEN NULL ELSE 'text ' || (g % 50) END, g
  FROM generate_series(1, 12000) g;
ALTER TABLE rc DROP COLUMN gone;
ALTER TABLE rc ADD COLUMN added int DEFAULT 42;
INSERT INTO rc (id, k, i2, n2, t, added) SELECT g, g % 97, 1, 2.5, 'late', NULL FROM generate_series(12001, 12100) g;
DELETE FROM rc WHERE id % 31 = 0;
UPDATE rc SET n2 = n2 + 1, i8 = -i8 WHERE id % 37 = 0;
CREATE INDEX rc_k ON rc (k);
CREATE TABLE rh AS SELECT * FROM rc;
CREATE INDEX rh_k ON rh (k);
CREATE TABLE keys AS SELECT g AS k FROM generate_series(0, 96) g;
ANALYZE rc, rh, keys;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashjoin = off;
SET enable_mergejoin = off; SET enable_material = off; SET enable_memoize = off;
SET pgcolumnar.enable_columnar_scan = off;

-- Every fixed-width column: the fetches read them as rows once each stripe was
-- fetched from 128 times (each of the 6 stripes is fetched from about 2,000 times).
EXPLAIN (COSTS OFF)
SELECT md5(string_agg(concat_ws('|', r.id, r.i2, r.i8, r.b, r.d, r.ts, r.tz, r.f4, r.f8, r.n0, r.n2, r.n5, r.added),
                      ',' ORDER BY r.id))
  FROM keys JOIN rc r ON r.k = keys.k;
-- On a new connection (an empty fetch cache): every stripe the join fetches from is
-- made rows, the first row group's 6, the late rows' and the updated rows' 1 each.
\c -
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_hashjoin = off;
SET enable_mergejoin = off; SET enable_material = off; SET enable_memoize = off;
SET pgcolumnar.enable_columnar_scan = off;
SELECT pgcolumnar.fetch_stripes_made_rows() AS before \gset
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.i2, r.i8, r.b, r.d, r.ts, r.tz, r.f4, r.f8, r.n0, r.n2, r.n5, r.added),
                      ',' ORDER BY r.id))
  FROM keys JOIN rc r ON r.k = keys.k;
SELECT pgcolumnar.fetch_stripes_made_rows() - :before AS made_rows;
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.i2, r.i8, r.b, r.d, r.ts, r.tz, r.f4, r.f8, r.n0, r.n2, r.n5, r.added),
                      ',' ORDER BY r.id))
  FROM keys JOIN rh r ON r.k = keys.k;
-- Again (the fetch cache keeps the rows across statements), with the byte strings
-- and the numerics beyond 64 bits, which stay vectors, read beside them.
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.t, r.big, r.n2, r.f8), ',' ORDER BY r.id))
  FROM keys JOIN rc r ON r.k = keys.k;
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.t, r.big, r.n2, r.f8), ',' ORDER BY r.id))
  FROM keys JOIN rh r ON r.k = keys.k;
-- Sums and a few rows, to see values and not only their digest.
SELECT sum(r.i8), sum(r.n2), sum(r.n5), sum(r.big), count(r.f4), sum(r.i2), count(r.added), sum(r.added)
  FROM keys JOIN rc r ON r.k = keys.k;
SELECT sum(r.i8), sum(r.n2), sum(r.n5), sum(r.big), count(r.f4), sum(r.i2), count(r.added), sum(r.added)
  FROM keys JOIN rh r ON r.k = keys.k;
SELECT r.id, r.i2, r.i8, r.b, r.f4, r.f8, r.n2, r.n5, r.big, r.t, r.added
  FROM keys JOIN rc r ON r.k = keys.k WHERE keys.k = 5 AND (r.id < 400 OR r.id > 11900) ORDER BY r.id;
SELECT r.id, r.i2, r.i8, r.b, r.f4, r.f8, r.n2, r.n5, r.big, r.t, r.added
  FROM keys JOIN rh r ON r.k = keys.k WHERE keys.k = 5 AND (r.id < 400 OR r.id > 11900) ORDER BY r.id;
-- Whole rows (every column, the fetch not told which are read).
SELECT md5(string_agg(r::text, ',' ORDER BY r.id)) FROM keys JOIN rc r ON r.k = keys.k;
SELECT md5(string_agg(r::text, ',' ORDER BY r.id)) FROM keys JOIN rh r ON r.k = keys.k;
-- Rows changed after the stripes were made rows: the deleted ones are gone, the new
-- versions are fetched from their own row group.
DELETE FROM rc WHERE id % 41 = 0;
DELETE FROM rh WHERE id % 41 = 0;
UPDATE rc SET f8 = -f8, n5 = n5 * 2 WHERE id % 43 = 0;
UPDATE rh SET f8 = -f8, n5 = n5 * 2 WHERE id % 43 = 0;
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.i8, r.f8, r.n2, r.n5), ',' ORDER BY r.id))
  FROM keys JOIN rc r ON r.k = keys.k;
SELECT count(*), md5(string_agg(concat_ws('|', r.id, r.i8, r.f8, r.n2, r.n5), ',' ORDER BY r.id))
  FROM keys JOIN rh r ON r.k = keys.k;
-- Inside a transaction that changes rows it then fetches.
BEGIN;
UPDATE rc SET i2 = -1 WHERE k = 3;
UPDATE rh SET i2 = -1 WHERE k = 3;
SELECT count(*), sum(r.i2), md5(string_agg(concat_ws('|', r.id, r.i2, r.n2), ',' ORDER BY r.id))
  FROM keys JOIN rc r ON r.k = keys.k WHERE keys.k < 10;
SELECT count(*), sum(r.i2), md5(string_agg(concat_ws('|', r.id, r.i2, r.n2), ',' ORDER BY r.id))
  FROM keys JOIN rh r ON r.k = keys.k WHERE keys.k < 10;
ROLLBACK;
SELECT count(*), sum(r.i2) FROM keys JOIN rc r ON r.k = keys.k WHERE keys.k < 10;
SELECT count(*), sum(r.i2) FROM keys JOIN rh r ON r.k = keys.k WHERE keys.k < 10;
DROP TABLE rc, rh, keys;
DROP EXTENSION pgcolumnar;
