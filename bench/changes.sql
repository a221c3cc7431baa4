-- Row changes on a 10M-row table, heap against columnar (make bench-changes).
-- Each change runs in a transaction that is rolled back, so every run starts alike;
-- psql's \timing prints the times. Issue 4's targets: DELETE/UPDATE of 100k rows at
-- most 2x heap's time; a primary-key point lookup within 3x of heap's latency.
\set rows 10000000
DROP TABLE IF EXISTS chg_heap, chg_col;
CREATE TABLE chg_heap (id bigint PRIMARY KEY, host text, ts timestamptz, usage float8, load float8);
CREATE TABLE chg_col (LIKE chg_heap INCLUDING ALL) USING columnar;
INSERT INTO chg_heap SELECT g, 'host_' || (g % 400), '2026-01-01'::timestamptz + g * interval '1 second',
       (g * 7919 % 10007) / 100.0, (g * 104729 % 1000003) / 1000.0
  FROM generate_series(1::bigint, :rows) g;
INSERT INTO chg_col SELECT * FROM chg_heap;
VACUUM ANALYZE chg_heap;
VACUUM ANALYZE chg_col;
\timing on
-- 100k rows by a range of the key (index or zone-map pruned scan)
BEGIN; DELETE FROM chg_heap WHERE id BETWEEN 5000001 AND 5100000; ROLLBACK;
BEGIN; DELETE FROM chg_col  WHERE id BETWEEN 5000001 AND 5100000; ROLLBACK;
BEGIN; UPDATE chg_heap SET usage = usage + 1 WHERE id BETWEEN 5000001 AND 5100000; ROLLBACK;
BEGIN; UPDATE chg_col  SET usage = usage + 1 WHERE id BETWEEN 5000001 AND 5100000; ROLLBACK;
-- 100k rows spread over the whole table (a full scan)
BEGIN; DELETE FROM chg_heap WHERE id % 100 = 7; ROLLBACK;
BEGIN; DELETE FROM chg_col  WHERE id % 100 = 7; ROLLBACK;
BEGIN; UPDATE chg_heap SET load = 0 WHERE id % 100 = 7; ROLLBACK;
BEGIN; UPDATE chg_col  SET load = 0 WHERE id % 100 = 7; ROLLBACK;
\timing off
