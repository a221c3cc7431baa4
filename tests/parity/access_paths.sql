-- Access paths and storage-level commands: bitmap and index scans, GiST/SP-GiST/GIN
-- indexes, exclusion constraints, TABLESAMPLE at 100 percent, SET ACCESS METHOD, row locks
-- in joins, EvalPlanQual-free re-reads, large multi-batch writes.
CREATE TABLE ap (id int, k int, t text, r int4range, p point, a int[]);
INSERT INTO ap SELECT g, g % 100, 't' || g, int4range(g, g + 10), point(g % 50, g / 50), ARRAY[g % 7, g % 11]
  FROM generate_series(1, 30000) g;
CREATE INDEX ap_id ON ap (id);
CREATE INDEX ap_k ON ap (k);
CREATE INDEX ap_gist ON ap USING gist (r);
CREATE INDEX ap_spgist ON ap USING spgist (p);
CREATE INDEX ap_gin ON ap USING gin (a);
ANALYZE ap;
SET enable_seqscan = off;
SET enable_indexscan = off;
SELECT count(*), sum(id) FROM ap WHERE k = 42;
SELECT count(*), sum(id) FROM ap WHERE k IN (1, 2) OR id < 100;
SELECT count(*) FROM ap WHERE k = 3 AND id > 15000;
SELECT count(*), min(id), max(id) FROM ap WHERE id BETWEEN 1000 AND 1999;
SELECT count(*) FROM ap WHERE r @> 500;
SELECT count(*) FROM ap WHERE p <@ box '((0,0),(3,3))';
SELECT count(*) FROM ap WHERE a @> '{3,5}';
RESET enable_indexscan;
SET enable_bitmapscan = off;
SELECT id, k FROM ap WHERE id IN (5, 500, 29999) ORDER BY id;
SELECT id FROM ap WHERE id > 29995 ORDER BY id DESC;
SELECT k FROM ap WHERE k = 99 LIMIT 3;
SELECT id FROM ap WHERE r && int4range(100, 102) ORDER BY id;
SELECT id FROM ap ORDER BY p <-> point(10, 10), id LIMIT 5;
VACUUM ap;
SELECT count(*) FROM ap WHERE id < 1000;
SELECT min(id), max(id) FROM ap;
RESET enable_bitmapscan;
RESET enable_seqscan;
UPDATE ap SET k = -k WHERE id % 1000 = 0;
DELETE FROM ap WHERE id % 1000 = 1;
SET enable_seqscan = off;
SELECT count(*) FROM ap WHERE k < 0;
SELECT count(*) FROM ap WHERE id BETWEEN 990 AND 1010;
SET enable_indexscan = off;
SELECT count(*) FROM ap WHERE k < 0;
SELECT count(*) FROM ap WHERE id BETWEEN 990 AND 1010;
RESET enable_indexscan;
RESET enable_seqscan;
-- TABLESAMPLE at 100 percent returns every row
SELECT count(*) FROM ap TABLESAMPLE SYSTEM (100);
SELECT count(*) FROM ap TABLESAMPLE BERNOULLI (100) REPEATABLE (1);
-- exclusion constraint
CREATE TABLE booking (room int, during tsrange, EXCLUDE USING gist (during WITH &&));
INSERT INTO booking VALUES (1, '[2024-01-01 10:00, 2024-01-01 11:00)');
INSERT INTO booking VALUES (2, '[2024-01-01 10:30, 2024-01-01 12:00)');
INSERT INTO booking VALUES (3, '[2024-01-01 11:00, 2024-01-01 12:00)');
INSERT INTO booking VALUES (4, '[2024-01-01 10:30, 2024-01-01 10:45)') ON CONFLICT DO NOTHING;
UPDATE booking SET during = '[2024-01-01 09:00, 2024-01-01 11:30)' WHERE room = 1;
SELECT * FROM booking ORDER BY room;
-- ALTER TABLE SET ACCESS METHOD both ways
CREATE TABLE sam (id int PRIMARY KEY, v text);
INSERT INTO sam SELECT g, 'v' || g FROM generate_series(1, 100) g;
ALTER TABLE sam SET ACCESS METHOD heap;
SELECT count(*), sum(id) FROM sam;
UPDATE sam SET v = 'heap' WHERE id <= 10;
ALTER TABLE sam SET ACCESS METHOD columnar;
SELECT count(*), sum(id), count(*) FILTER (WHERE v = 'heap') FROM sam;
UPDATE sam SET v = 'col' WHERE id BETWEEN 5 AND 15;
DELETE FROM sam WHERE id > 90;
SELECT v, count(*) FROM sam GROUP BY v HAVING count(*) > 1 ORDER BY v;
INSERT INTO sam VALUES (1, 'dup');
SELECT * FROM sam WHERE id IN (1, 5, 11, 16, 91) ORDER BY id;
-- row locks through joins and subqueries
CREATE TABLE lk (id int PRIMARY KEY, v int);
INSERT INTO lk SELECT g, g FROM generate_series(1, 10) g;
BEGIN;
SELECT l.id, s.id FROM lk l JOIN sam s ON s.id = l.id WHERE l.id < 4 ORDER BY l.id FOR UPDATE OF l;
SELECT id FROM (SELECT id FROM lk WHERE v > 8) x ORDER BY id FOR UPDATE;
UPDATE lk SET v = v + 1 WHERE id IN (SELECT id FROM lk WHERE v > 8) RETURNING id, v;
COMMIT;
SELECT * FROM lk ORDER BY id;
-- large statements: many rows per statement, many statements per transaction
CREATE TABLE many (id bigint, payload text);
INSERT INTO many SELECT g, repeat('p', g % 300) FROM generate_series(1, 200000) g;
SELECT count(*), sum(id), sum(length(payload)) FROM many;
UPDATE many SET payload = 'u' WHERE id % 7 = 0;
DELETE FROM many WHERE id % 5 = 0;
SELECT count(*), sum(id), sum(length(payload)) FROM many;
BEGIN;
INSERT INTO many VALUES (-1, 'a');
INSERT INTO many VALUES (-2, 'b');
UPDATE many SET payload = 'c' WHERE id = -1;
DELETE FROM many WHERE id = -2;
INSERT INTO many SELECT -g, 'x' FROM generate_series(3, 1000) g;
COMMIT;
SELECT count(*) FILTER (WHERE id < 0), min(id), string_agg(payload, '' ORDER BY id) FILTER (WHERE id > -3 AND id < 0) FROM many;
SELECT id, payload FROM many ORDER BY id DESC LIMIT 3;
SELECT id, length(payload) FROM many WHERE id BETWEEN 99995 AND 100003 ORDER BY id;
DROP TABLE ap, booking, sam, lk, many;
