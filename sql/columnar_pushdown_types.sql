-- Pushed filters (quals_push_down) on TPC-H's types: date, timestamp and timestamptz
-- compared across types (session TimeZone, infinities, dates past the timestamps),
-- numeric (NaN, +-Infinity, 1.0 = 1.00). Each form: EXPLAIN shows it pushed, and a
-- differential check against a heap twin.
CREATE EXTENSION pgcolumnar;
SET pgcolumnar.quals_push_down = on;
SET TimeZone = 'America/New_York';
CREATE TABLE tt (k int, d date, ts timestamp, tz timestamptz, n numeric(15,2), nn numeric,
                 c char(10), v varchar(20), d2 date, k2 bigint, f float8, r real, t text)
  USING columnar WITH (autovacuum_enabled = off);  -- a VACUUM would merge its two row groups
INSERT INTO tt SELECT g,
    CASE g % 997 WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
                 WHEN 3 THEN '294277-01-01' WHEN 4 THEN '5874897-12-31' WHEN 5 THEN '4714-11-24 BC'
                 ELSE date '1998-09-02' + (g % 9000 - 4500) END,
    CASE g % 991 WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
                 WHEN 3 THEN '294276-12-31 23:59:59.999999'
                 ELSE timestamp '1998-09-02 00:00' + (g % 3001 - 1500) * interval '6 hours 30 minutes' END,
    CASE g % 983 WHEN 0 THEN NULL WHEN 1 THEN 'infinity' WHEN 2 THEN '-infinity'
                 ELSE timestamptz '2010-03-14 07:00+00' + (g % 4001 - 2000) * interval '1 hour 30 minutes' END,
    CASE WHEN g % 101 = 0 THEN NULL ELSE (g % 1200) / 100.0 - 2 END,
    CASE g % 50 WHEN 0 THEN 'NaN' WHEN 1 THEN 'Infinity' WHEN 2 THEN '-Infinity' WHEN 3 THEN NULL
                WHEN 4 THEN '24.000' WHEN 5 THEN '-0.0' ELSE (g % 60) / 2.5 END,
    CASE WHEN g % 7 = 0 THEN NULL WHEN g % 11 = 0 THEN '' WHEN g % 13 = 0 THEN ' x'
         ELSE 'c' || (g % 30) END,
    'v' || (g % 40),
    CASE WHEN g % 19 = 0 THEN NULL ELSE date '1998-09-02' + (g % 9000 - 4500) + (g % 7 - 3) END,
    CASE WHEN g % 23 = 0 THEN NULL ELSE g + (g % 5 - 2) END,
    CASE g % 29 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '-0' ELSE (g % 300) / 4.0 END,
    CASE g % 31 WHEN 0 THEN NULL WHEN 1 THEN 'NaN' WHEN 2 THEN '0' ELSE (g % 200) / 2.0 END,
    CASE WHEN g % 17 = 0 THEN NULL
         ELSE (ARRAY['forest green', 'special requests', 'requests special', 'LARGE BRASS',
                     'MEDIUM POLISHED TIN', 'ébène', 'green%odd', 'x_y'])[g % 8 + 1]
              || CASE WHEN g % 3 = 0 THEN '' ELSE ' ' || (g % 100) END END
  FROM generate_series(1, 30000) g;
-- Every 15 minutes across DST changes (New York 2010-03-14 and 2010-11-07, Apia's
-- skipped 2011-12-30), as timestamptz, timestamp and date.
INSERT INTO tt (k, tz, ts, d)
  SELECT 100000 + g, s + g * interval '15 minutes', (s + g * interval '15 minutes')::timestamp,
         (s + g * interval '15 minutes')::date
  FROM unnest(ARRAY[timestamptz '2010-03-13 00:00+00', '2010-11-06 00:00+00', '2011-12-28 00:00+00']) s,
       generate_series(0, 4 * 96) g;
CREATE TABLE th AS SELECT * FROM tt;

-- same(q): the rows of query q (%s for the table) agree on columnar and heap, with
-- push-down on and off.
CREATE FUNCTION same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  diff_on bigint; diff_off bigint; n bigint;
BEGIN
  SET LOCAL pgcolumnar.quals_push_down = on;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'tt'), format(q, 'th'), format(q, 'th'), format(q, 'tt')) INTO diff_on;
  SET LOCAL pgcolumnar.quals_push_down = off;
  EXECUTE format('SELECT count(*) FROM ((%s EXCEPT ALL %s) UNION ALL (%s EXCEPT ALL %s)) x',
                 format(q, 'tt'), format(q, 'th'), format(q, 'th'), format(q, 'tt')) INTO diff_off;
  EXECUTE format('SELECT count(*) FROM (%s) x', format(q, 'th')) INTO n;
  RETURN CASE WHEN diff_on = 0 AND diff_off = 0 THEN 'same' ELSE 'DIFFERENT' END || ' (' || n || ' rows)';
END $$;

-- Dates against timestamps (TPC-H q1's l_shipdate <= date '1998-12-01' - interval '90' day).
CREATE TABLE date_vs_timestamp (q text);
INSERT INTO date_vs_timestamp VALUES
  ('SELECT k FROM %s WHERE d <= date ''1998-12-01'' - interval ''90'' day'),
  ('SELECT k FROM %s WHERE d < timestamp ''1998-09-02 00:00'''),
  ('SELECT k FROM %s WHERE d < timestamp ''1998-09-02 00:00:00.000001'''),
  ('SELECT k FROM %s WHERE d <= timestamp ''1998-09-02 12:00'''),
  ('SELECT k FROM %s WHERE d = timestamp ''1998-09-02 00:00'''),
  ('SELECT k FROM %s WHERE d = timestamp ''1998-09-02 00:00:01'''),
  ('SELECT k FROM %s WHERE d <> timestamp ''1998-09-02 00:00'''),
  ('SELECT k FROM %s WHERE d <> timestamp ''1998-09-02 00:00:01'''),
  ('SELECT k FROM %s WHERE d > timestamp ''1998-09-02 23:59:59.999999'''),
  ('SELECT k FROM %s WHERE d >= timestamp ''1998-09-02 23:59:59.999999'''),
  ('SELECT k FROM %s WHERE timestamp ''1998-09-05 10:00'' > d'),
  ('SELECT k FROM %s WHERE d BETWEEN timestamp ''1990-01-01 06:00'' AND timestamp ''1991-01-01'''),
  ('SELECT k FROM %s WHERE NOT (d < timestamp ''2000-01-01 00:00:01'')'),
  ('SELECT k FROM %s WHERE d >= timestamp ''infinity'''),
  ('SELECT k FROM %s WHERE d = timestamp ''infinity'''),
  ('SELECT k FROM %s WHERE d <= timestamp ''-infinity'''),
  ('SELECT k FROM %s WHERE d > timestamp ''-infinity'''),
  ('SELECT k FROM %s WHERE d > timestamp ''294276-12-31 23:59:59.999999'''),
  ('SELECT k FROM %s WHERE d = timestamp ''294276-12-31 23:59:59.999999'''),
  ('SELECT k FROM %s WHERE d < timestamp ''4714-11-24 00:00:01 BC'''),
  ('SELECT k FROM %s WHERE d < NULL::timestamp'),
  ('SELECT k FROM %s WHERE d < timestamp ''1998-09-02'' OR d IS NULL');
SELECT q, same(q) FROM date_vs_timestamp;

-- Across time zones: dates and timestamps against timestamptz, timestamptz against
-- dates and timestamps (local midnights, DST gaps and overlaps in both zones).
CREATE TABLE zoned (q text);
INSERT INTO zoned VALUES
  ('SELECT k FROM %s WHERE d < timestamptz ''2010-03-14 05:00+00'''),
  ('SELECT k FROM %s WHERE d <= timestamptz ''2010-03-14 05:00+00'''),
  ('SELECT k FROM %s WHERE d = timestamptz ''2010-03-14 05:00+00'''),
  ('SELECT k FROM %s WHERE d = timestamptz ''2010-03-15 04:00+00'''),
  ('SELECT k FROM %s WHERE d > timestamptz ''2010-11-07 04:00+00'''),
  ('SELECT k FROM %s WHERE d >= timestamptz ''2010-11-07 04:30+00'''),
  ('SELECT k FROM %s WHERE d <> timestamptz ''2011-12-30 10:00+00'''),
  ('SELECT k FROM %s WHERE d >= timestamptz ''2011-12-29 10:00+00'' AND d < timestamptz ''2012-01-02 00:00+00'''),
  ('SELECT k FROM %s WHERE d > timestamptz ''infinity'' OR d < timestamptz ''-infinity'''),
  ('SELECT k FROM %s WHERE d <= timestamptz ''294276-12-31 23:59:59.999999+00'''),
  ('SELECT k FROM %s WHERE d < timestamptz ''4714-11-24 12:00+00 BC'''),
  ('SELECT k FROM %s WHERE tz < date ''2010-03-14'''),
  ('SELECT k FROM %s WHERE tz >= date ''2010-03-14'' AND tz < date ''2010-03-15'''),
  ('SELECT k FROM %s WHERE tz = date ''2010-11-07'''),
  ('SELECT k FROM %s WHERE tz <> date ''2010-11-07'''),
  ('SELECT k FROM %s WHERE tz > date ''infinity'' OR tz <= date ''-infinity'''),
  ('SELECT k FROM %s WHERE tz < date ''300000-01-01'''),
  ('SELECT k FROM %s WHERE ts >= date ''1998-09-02'' AND ts <= date ''1998-09-10'''),
  ('SELECT k FROM %s WHERE ts = date ''1998-09-03'''),
  ('SELECT k FROM %s WHERE ts < date ''300000-01-01'''),
  ('SELECT k FROM %s WHERE ts >= date ''infinity'''),
  ('SELECT k FROM %s WHERE tz < timestamp ''2010-03-14 02:30'''),
  ('SELECT k FROM %s WHERE tz >= timestamp ''2010-03-14 03:00'''),
  ('SELECT k FROM %s WHERE tz <= timestamp ''2010-11-07 01:30'''),
  ('SELECT k FROM %s WHERE tz = timestamp ''2010-11-07 01:30'''),
  ('SELECT k FROM %s WHERE timestamp ''2010-11-07 01:00'' < tz');
SELECT q, same(q) FROM zoned;
SET TimeZone = 'Pacific/Apia';
SELECT q, same(q) FROM zoned;
SET TimeZone = 'Asia/Kolkata';
SELECT q, same(q) FROM zoned;
SET TimeZone = 'America/New_York';

-- numeric columns (TPC-H q6: l_discount BETWEEN 0.05 AND 0.07, l_quantity < 24).
CREATE TABLE numerics (q text);
INSERT INTO numerics VALUES
  ('SELECT k FROM %s WHERE n < 24'),
  ('SELECT k FROM %s WHERE n BETWEEN 0.05 AND 0.07'),
  ('SELECT k FROM %s WHERE n >= 0.05 AND n <= 0.07'),
  ('SELECT k FROM %s WHERE n = 1.5'),
  ('SELECT k FROM %s WHERE n = 1.50000'),
  ('SELECT k FROM %s WHERE n <> 0'),
  ('SELECT k FROM %s WHERE n > -1.995'),
  ('SELECT k FROM %s WHERE 3 > n'),
  ('SELECT k FROM %s WHERE NOT (n < 5)'),
  ('SELECT k FROM %s WHERE n IN (1, 2.50, 3.0, -1.99)'),
  ('SELECT k FROM %s WHERE n NOT IN (1, 2.5)'),
  ('SELECT k FROM %s WHERE n NOT IN (1, NULL)'),
  ('SELECT k FROM %s WHERE n = ANY (''{}''::numeric[])'),
  ('SELECT k FROM %s WHERE n <> ALL (''{}''::numeric[])'),
  ('SELECT k FROM %s WHERE n < ''Infinity'''),
  ('SELECT k FROM %s WHERE nn = ''NaN'''),
  ('SELECT k FROM %s WHERE nn <> ''NaN'''),
  ('SELECT k FROM %s WHERE nn < ''NaN'''),
  ('SELECT k FROM %s WHERE nn > ''Infinity'''),
  ('SELECT k FROM %s WHERE nn >= ''Infinity'''),
  ('SELECT k FROM %s WHERE nn <= ''-Infinity'''),
  ('SELECT k FROM %s WHERE nn > ''-Infinity'' AND nn < 1'),
  ('SELECT k FROM %s WHERE nn = 24'),
  ('SELECT k FROM %s WHERE nn = 0'),
  ('SELECT k FROM %s WHERE nn IN (''NaN'', 24, ''-Infinity'')'),
  ('SELECT k FROM %s WHERE nn NOT IN (''NaN'', 0)'),
  ('SELECT k FROM %s WHERE nn > 10::int8 / 3'),
  ('SELECT k FROM %s WHERE nn < NULL::numeric OR n IS NULL');
SELECT q, same(q) FROM numerics;

-- char(n): trailing spaces do not count; ranges only under "C".
CREATE TABLE chars (q text);
INSERT INTO chars VALUES
  ('SELECT k FROM %s WHERE c = ''c5'''),
  ('SELECT k FROM %s WHERE c = ''c5     '''),
  ('SELECT k FROM %s WHERE c = '''''),
  ('SELECT k FROM %s WHERE c = ''   '''),
  ('SELECT k FROM %s WHERE c = '' x'''),
  ('SELECT k FROM %s WHERE c <> ''c5'''),
  ('SELECT k FROM %s WHERE c IN (''c1'', ''c2  '', '''')'),
  ('SELECT k FROM %s WHERE c NOT IN (''c1'', ''c2'')'),
  ('SELECT k FROM %s WHERE c NOT IN (''c1'', NULL)'),
  ('SELECT k FROM %s WHERE c < ''c2'' COLLATE "C"'),
  ('SELECT k FROM %s WHERE c >= ''c25 '' COLLATE "C"'),
  ('SELECT k FROM %s WHERE c > '' '' COLLATE "C"'),
  ('SELECT k FROM %s WHERE c = ''C5'' COLLATE "und-x-icu"'),
  ('SELECT k FROM %s WHERE c > ''c5'' COLLATE "und-x-icu"');
SELECT q, same(q) FROM chars;

-- Two columns of a row (l_commitdate < l_receiptdate).
CREATE TABLE two_columns (q text);
INSERT INTO two_columns VALUES
  ('SELECT k FROM %s WHERE d < d2'),
  ('SELECT k FROM %s WHERE d <= d2'),
  ('SELECT k FROM %s WHERE d = d2'),
  ('SELECT k FROM %s WHERE d <> d2'),
  ('SELECT k FROM %s WHERE d2 > d AND d2 < d + 2'),
  ('SELECT k FROM %s WHERE NOT (d >= d2)'),
  ('SELECT k FROM %s WHERE k < k2'),
  ('SELECT k FROM %s WHERE k2 = k'),
  ('SELECT k FROM %s WHERE f < r'),
  ('SELECT k FROM %s WHERE f = r'),
  ('SELECT k FROM %s WHERE f <> r'),
  ('SELECT k FROM %s WHERE r >= f'),
  ('SELECT k FROM %s WHERE n < nn'),
  ('SELECT k FROM %s WHERE n = nn'),
  ('SELECT k FROM %s WHERE nn >= n'),
  ('SELECT k FROM %s WHERE NOT (nn <= n)'),
  ('SELECT k FROM %s WHERE nn = nn'),
  ('SELECT k FROM %s WHERE nn <> nn');
SELECT q, same(q) FROM two_columns;

-- LIKE with % as the only wildcard (q9 '%green%', q13 NOT LIKE '%special%requests%',
-- q2 '%BRASS', q16 NOT LIKE 'MEDIUM POLISHED%'); on a dictionary column too (v).
CREATE TABLE likes (q text);
INSERT INTO likes VALUES
  ('SELECT k FROM %s WHERE t LIKE ''%%green%%'''),
  ('SELECT k FROM %s WHERE t NOT LIKE ''%%special%%requests%%'''),
  ('SELECT k FROM %s WHERE NOT (t LIKE ''%%special%%requests%%'')'),
  ('SELECT k FROM %s WHERE t LIKE ''%%BRASS'''),
  ('SELECT k FROM %s WHERE t LIKE ''%%BRASS 1'''),
  ('SELECT k FROM %s WHERE t NOT LIKE ''MEDIUM POLISHED%%'''),
  ('SELECT k FROM %s WHERE t LIKE ''%%é%%'''),
  ('SELECT k FROM %s WHERE t LIKE ''forest%%8'''),
  ('SELECT k FROM %s WHERE t LIKE ''special requests 1'''),
  ('SELECT k FROM %s WHERE t LIKE ''%%\%%%%'''),
  ('SELECT k FROM %s WHERE t LIKE ''%%x_y%%'''),
  ('SELECT k FROM %s WHERE t LIKE ''%%'''),
  ('SELECT k FROM %s WHERE v LIKE ''%%1%%'''),
  ('SELECT k FROM %s WHERE v NOT LIKE ''%%3'''),
  ('SELECT k FROM %s WHERE v LIKE ''v1%%'' OR t LIKE ''%%red%%''');
SELECT q, same(q) FROM likes;

-- Each form is pushed: the ColumnarScan evaluates it, no executor Filter is left.
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE d <= date '1998-12-01' - interval '90' day;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE d <> timestamptz '2010-03-14 05:00+00';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE timestamp '1998-09-05 10:00' > d;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE tz >= date '2010-03-14' AND ts = date '1998-09-03';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE tz < timestamp '2010-03-14 02:30';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE n BETWEEN 0.05 AND 0.07 AND n < 24;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE nn IN ('NaN', 24) OR nn <> 0;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE n NOT IN (1, 2.5);
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE c = 'c5' OR c IN ('c1', 'c2');
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE c < 'c2' COLLATE "C";
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE d < d2 AND f <> r AND k < k2 AND n < nn;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE t LIKE '%green%' AND t NOT LIKE '%special%requests%';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE v NOT LIKE 'MEDIUM POLISHED%' OR t LIKE '%BRASS';
-- LIKE with _ is pushed as core's own function (columnar_text_match); columns of
-- different types are not. A char(n) range under a linguistic collation is pushed,
-- compared in that collation's order.
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE t LIKE '%x_y%';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE d < ts;
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE c > 'c5' COLLATE "und-x-icu";
-- A timestamp column against a timestamptz is not (local times in a DST gap convert
-- out of order); a numeric against a float is an expression test (the numeric cast to
-- float8, as core compares them).
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE ts < timestamptz '2010-03-14 07:00+00';
EXPLAIN (COSTS OFF) SELECT k FROM tt WHERE n < 24::float8;
-- Zone maps prune by the converted bound: on dates in order, most vectors are skipped.
CREATE TABLE sorted USING columnar AS
  SELECT g AS k, date '1990-01-01' + g / 20 AS d FROM generate_series(1, 100000) g;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  SELECT count(*) FROM sorted WHERE d < timestamp '1990-03-01 00:00:01';
SELECT count(*) FROM sorted WHERE d < timestamp '1990-03-01 00:00:01';
SELECT count(*) FROM (SELECT * FROM sorted) s WHERE d::timestamp < timestamp '1990-03-01 00:00:01';

-- Parameters (generic plans), evaluated when the scan starts, in its TimeZone.
PREPARE p(timestamptz, numeric) AS SELECT count(*), sum(k) FROM tt WHERE d <= $1 AND n < $2;
PREPARE ph(timestamptz, numeric) AS SELECT count(*), sum(k) FROM th WHERE d <= $1 AND n < $2;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE p('2010-03-14 02:00+00', 3);
EXECUTE p('2010-03-14 02:00+00', 3);
EXECUTE ph('2010-03-14 02:00+00', 3);
-- 2010-03-14 02:00+00 is the 13th in New York, the 14th in Kolkata.
SET TimeZone = 'Asia/Kolkata';
EXECUTE p('2010-03-14 02:00+00', 3);
EXECUTE ph('2010-03-14 02:00+00', 3);
EXECUTE p(NULL, 3);
EXECUTE p('infinity', 'NaN');
EXECUTE ph('infinity', 'NaN');
SET TimeZone = 'America/New_York';
RESET plan_cache_mode;

-- A cursor, read in steps.
BEGIN;
DECLARE cur CURSOR FOR
  SELECT k, d, n FROM tt WHERE d > timestamp '2005-01-01 12:00' AND n >= 9.5 ORDER BY k;
FETCH 3 FROM cur;
FETCH 2 FROM cur;
COMMIT;
SELECT k, d, n FROM th WHERE d > timestamp '2005-01-01 12:00' AND n >= 9.5 ORDER BY k LIMIT 5;

-- uuid: its order is memcmp's over the 16 stored bytes, so =, <>, ranges, IN and NOT
-- IN are pushed (a differential check against a heap twin: no row printed).
CREATE TABLE uuids (k int, u uuid) USING columnar WITH (autovacuum_enabled = off);
INSERT INTO uuids SELECT g, CASE WHEN g % 13 = 0 THEN NULL
    ELSE ('00000000-0000-0000-0000-' || lpad(to_hex(g), 12, '0'))::uuid END
  FROM generate_series(1, 20000) g;
CREATE TABLE uuids_heap AS SELECT * FROM uuids;
EXPLAIN (COSTS OFF) SELECT k FROM uuids WHERE u > '00000000-0000-0000-0000-000000004e00'
  OR u IN ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000d');
SELECT count(*) FROM uuids WHERE u > '00000000-0000-0000-0000-000000004e00'
  OR u IN ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000d');
(SELECT k FROM uuids WHERE u > '00000000-0000-0000-0000-000000004e00'
   OR u IN ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000d')
 EXCEPT ALL
 SELECT k FROM uuids_heap WHERE u > '00000000-0000-0000-0000-000000004e00'
   OR u IN ('00000000-0000-0000-0000-000000000001', '00000000-0000-0000-0000-00000000000d'));
EXPLAIN (COSTS OFF) SELECT k FROM uuids WHERE u <> '00000000-0000-0000-0000-000000000005'
  AND u NOT IN ('00000000-0000-0000-0000-000000000007') AND u <= '00000000-0000-0000-0000-000000000100';
SELECT count(*) FROM uuids WHERE u <> '00000000-0000-0000-0000-000000000005'
  AND u NOT IN ('00000000-0000-0000-0000-000000000007') AND u <= '00000000-0000-0000-0000-000000000100';
SELECT count(*) FROM uuids_heap WHERE u <> '00000000-0000-0000-0000-000000000005'
  AND u NOT IN ('00000000-0000-0000-0000-000000000007') AND u <= '00000000-0000-0000-0000-000000000100';
PREPARE pu(uuid) AS SELECT k FROM uuids WHERE u = $1;
EXPLAIN (COSTS OFF) EXECUTE pu('00000000-0000-0000-0000-000000000abc');
EXECUTE pu('00000000-0000-0000-0000-000000000abc');
DEALLOCATE pu;

DEALLOCATE p;
DEALLOCATE ph;
RESET TimeZone;
DROP TABLE tt, th, sorted, date_vs_timestamp, zoned, numerics, chars, two_columns, likes, uuids, uuids_heap;
DROP FUNCTION same(text);
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
