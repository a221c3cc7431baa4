-- Row fetches by index and bitmap scans: only the columns the plan reads are decoded
-- (the others never reach anyone), and every other reader of a fetched row (whole-row
-- references, triggers, UPDATE, row locks, cursors, EvalPlanQual) still sees all of it.
-- Results are compared with a heap copy; pgcolumnar.fetch_decoded_vectors() counts the
-- column vectors fetches opened, so a test shows how many columns were read.
CREATE EXTENSION pgcolumnar;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE fc (id int, k int, a int, b bigint, n numeric(12,2), t text, d date, f float8,
                 j jsonb, w text) USING columnar;
INSERT INTO fc SELECT g, (hashint4(g) & 255) + 1, g % 7, g * 3, (g % 1000) / 4.0,
    CASE WHEN g % 9 = 0 THEN NULL ELSE 'text ' || (g % 50) END, date '2024-01-01' + g % 300,
    CASE WHEN g % 11 = 0 THEN NULL ELSE g / 8.0 END,
    jsonb_build_object('g', g, 'pad', repeat('x', g % 40)), md5(g::text)
  FROM generate_series(1, 40000) g;
CREATE INDEX fc_k ON fc (k);
CREATE UNIQUE INDEX fc_id ON fc (id);
CREATE TABLE fh AS SELECT * FROM fc;
CREATE INDEX fh_k ON fh (k);
CREATE UNIQUE INDEX fh_id ON fh (id);
CREATE TABLE keys (k int);
INSERT INTO keys SELECT g FROM generate_series(1, 256, 5) g;
ANALYZE fc, fh, keys;

-- How many column vectors the statements since the last call opened.
CREATE FUNCTION opened() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint := pgcolumnar.fetch_decoded_vectors();
BEGIN
  RETURN n - coalesce(current_setting('test.opened', true), '0')::bigint;
END $$;
CREATE FUNCTION reset_opened() RETURNS void LANGUAGE sql AS
  $$ SELECT set_config('test.opened', pgcolumnar.fetch_decoded_vectors()::text, false) $$;

-- One row by its key, one column of ten read: only that column's vector is opened (a
-- btree never asks for its condition to be rechecked on the row, so the key column is
-- not read; a hash index's is, see columnar_index).
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
SELECT reset_opened();
EXPLAIN (COSTS OFF) SELECT w FROM fc WHERE id = 30001;
SELECT w FROM fc WHERE id = 30001;
SELECT opened();

-- A correlated max() through an index: b of the 20 vectors is opened, not k.
SELECT reset_opened();
SELECT sum((SELECT max(b) FROM fc WHERE fc.k = keys.k)) FROM keys;
SELECT sum((SELECT max(b) FROM fh WHERE fh.k = keys.k)) FROM keys;
SELECT opened();
-- Grouping over an index scan: the aggregate reads its grouping column by position.
EXPLAIN (COSTS OFF) SELECT d, count(*), sum(b) FROM fc WHERE k < 3 GROUP BY d ORDER BY d LIMIT 3;
SELECT d, count(*), sum(b) FROM fc WHERE k < 3 GROUP BY d ORDER BY d LIMIT 3;
SELECT d, count(*), sum(b) FROM fh WHERE k < 3 GROUP BY d ORDER BY d LIMIT 3;
SELECT a, t, count(*), max(w) FROM fc WHERE k < 3 GROUP BY GROUPING SETS ((a), (t)) ORDER BY 1, 2 LIMIT 4;
SELECT a, t, count(*), max(w) FROM fh WHERE k < 3 GROUP BY GROUPING SETS ((a), (t)) ORDER BY 1, 2 LIMIT 4;
-- Behind row-level security, as a role that is not the owner: the policy's column is
-- read (and the rows it hides stay hidden).
CREATE ROLE fetch_reader;
GRANT SELECT ON fc, fh, keys TO fetch_reader;
ALTER TABLE fc ENABLE ROW LEVEL SECURITY;
ALTER TABLE fh ENABLE ROW LEVEL SECURITY;
CREATE POLICY few ON fc FOR SELECT USING (a < 2 AND t LIKE 'text 1%');
CREATE POLICY few ON fh FOR SELECT USING (a < 2 AND t LIKE 'text 1%');
SET ROLE fetch_reader;
SET enable_nestloop = off;
EXPLAIN (COSTS OFF) SELECT count(*), max(f.w) FROM keys JOIN fc f ON f.k = keys.k;
SELECT count(*), max(f.w) FROM keys JOIN fc f ON f.k = keys.k;
SELECT count(*), max(f.w) FROM keys JOIN fh f ON f.k = keys.k;
RESET enable_nestloop;
RESET ROLE;
ALTER TABLE fc DISABLE ROW LEVEL SECURITY;
ALTER TABLE fh DISABLE ROW LEVEL SECURITY;

-- A nested loop whose inner index scan passes its slot up unprojected: what the join
-- reads (f.a, f.n, the key) is decoded, the rest is not.
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = off;
SELECT reset_opened();
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f.a), sum(f.n) FROM keys JOIN fc f ON f.k = keys.k WHERE f.a < 5;
SELECT count(*), sum(f.a), sum(f.n) FROM keys JOIN fc f ON f.k = keys.k WHERE f.a < 5;
-- n of the 20 vectors (k and a are kept from the statements before; a fetch into the
-- whole row would open id and b too).
SELECT opened();
SELECT count(*), sum(f.a), sum(f.n) FROM keys JOIN fh f ON f.k = keys.k WHERE f.a < 5;
-- Every column of the joined rows, and a whole-row reference.
SELECT md5(string_agg(r::text, ',' ORDER BY r.id)) = (SELECT md5(string_agg(h::text, ',' ORDER BY h.id))
         FROM keys JOIN fh h ON h.k = keys.k) AS whole_rows_match
  FROM keys JOIN fc r ON r.k = keys.k;
SELECT md5(string_agg(concat_ws('|', f.id, f.t, f.d, f.f, f.j, f.w), ',' ORDER BY f.id))
     = (SELECT md5(string_agg(concat_ws('|', h.id, h.t, h.d, h.f, h.j, h.w), ',' ORDER BY h.id))
          FROM keys JOIN fh h ON h.k = keys.k) AS columns_match
  FROM keys JOIN fc f ON f.k = keys.k;
-- The outer side of a hash join is the index scan (a full scan in key order).
SET enable_nestloop = off; SET enable_hashjoin = on;
EXPLAIN (COSTS OFF)
SELECT sum(f.b), max(f.t) FROM fc f JOIN keys ON keys.k = f.k AND f.id % 3 = 0;
SELECT sum(f.b), max(f.t) FROM fc f JOIN keys ON keys.k = f.k AND f.id % 3 = 0;
SELECT sum(f.b), max(f.t) FROM fh f JOIN keys ON keys.k = f.k AND f.id % 3 = 0;
RESET enable_nestloop; SET enable_hashjoin = off;
-- A join qual and a subplan reading columns the target list does not.
SELECT count(*), sum(f.id) FROM keys JOIN fc f ON f.k = keys.k AND f.d > date '2024-05-01'
  WHERE f.t IS NOT NULL AND EXISTS (SELECT 1 FROM keys k2 WHERE k2.k = f.a + 1);
SELECT count(*), sum(f.id) FROM keys JOIN fh f ON f.k = keys.k AND f.d > date '2024-05-01'
  WHERE f.t IS NOT NULL AND EXISTS (SELECT 1 FROM keys k2 WHERE k2.k = f.a + 1);
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_memoize;

-- A merge join of two index scans, each passing its slot up.
SET enable_hashjoin = off; SET enable_nestloop = off;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(x.n), max(y.w) FROM fc x JOIN fc y ON x.id = y.id WHERE x.a = 3;
SELECT count(*), sum(x.n), max(y.w) FROM fc x JOIN fc y ON x.id = y.id WHERE x.a = 3;
SELECT count(*), sum(x.n), max(y.w) FROM fh x JOIN fh y ON x.id = y.id WHERE x.a = 3;
RESET enable_hashjoin; RESET enable_nestloop;

-- Bitmap heap scans: recheck quals and projections.
SET enable_indexscan = off; SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT sum(f), max(t) FROM fc WHERE k IN (3, 9, 27) AND n > 100;
SELECT sum(f), max(t) FROM fc WHERE k IN (3, 9, 27) AND n > 100;
SELECT sum(f), max(t) FROM fh WHERE k IN (3, 9, 27) AND n > 100;
SELECT * FROM fc WHERE k = 7 ORDER BY id LIMIT 2;
SELECT * FROM fh WHERE k = 7 ORDER BY id LIMIT 2;
RESET enable_indexscan;

-- Row changes through an index scan: the old row is read whole by UPDATE, RETURNING,
-- triggers and row locks.
CREATE FUNCTION keep_old() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'old: % % % %', OLD.id, OLD.t, OLD.w, OLD.j->>'g';
  RETURN NEW;
END $$;
CREATE TRIGGER fc_old BEFORE UPDATE ON fc FOR EACH ROW EXECUTE FUNCTION keep_old();
UPDATE fc SET a = a + 100 WHERE id = 12345 RETURNING *;
BEGIN;
SELECT id, w FROM fc WHERE id = 12346 FOR UPDATE;
DELETE FROM fc WHERE id = 12346 RETURNING id, n, t, w;
ROLLBACK;
-- A cursor over an index scan, changed through WHERE CURRENT OF.
BEGIN;
DECLARE cur CURSOR FOR SELECT id, w FROM fc WHERE id BETWEEN 500 AND 503 ORDER BY id FOR UPDATE;
FETCH 2 FROM cur;
UPDATE fc SET t = 'changed' WHERE CURRENT OF cur RETURNING id, k, t, w;
COMMIT;
SELECT id, t, w FROM fc WHERE id BETWEEN 500 AND 503 ORDER BY id;
DROP TRIGGER fc_old ON fc;


-- Partitions and an inheritance child, read through their indexes under a nested
-- loop, by a role that is not the owner: each child's scan reads its own columns.
CREATE TABLE pf (id int, k int, pad text, v numeric) PARTITION BY RANGE (id);
CREATE TABLE pf1 PARTITION OF pf FOR VALUES FROM (0) TO (20000) USING columnar;
CREATE TABLE pf2 PARTITION OF pf FOR VALUES FROM (20000) TO (40001) USING columnar;
CREATE TABLE ip (id int, k int, pad text, v numeric) USING columnar;
CREATE TABLE ic (extra int) INHERITS (ip) USING columnar;
INSERT INTO pf SELECT id, k, repeat('p', 20), n FROM fh;
INSERT INTO ic SELECT id, k, repeat('p', 20), n, 1 FROM fh WHERE id % 2 = 0;
CREATE INDEX ON pf (k);
CREATE INDEX ON ic (k);
ANALYZE pf, ic;
GRANT SELECT ON pf, ip, ic TO fetch_reader;
SET ROLE fetch_reader;
SET enable_hashjoin = off; SET enable_mergejoin = off; SET enable_memoize = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(p.v) FROM keys JOIN pf p ON p.k = keys.k;
SELECT reset_opened();
SELECT count(*), sum(p.v) FROM keys JOIN pf p ON p.k = keys.k;
-- k and v of each partition's vectors, not pad.
SELECT opened();
SELECT count(*), sum(f.n) FROM keys JOIN fh f ON f.k = keys.k;
SELECT count(*), sum(c.v) FROM keys JOIN ip c ON c.k = keys.k;
SELECT count(*), sum(f.n) FROM keys JOIN fh f ON f.k = keys.k AND f.id % 2 = 0;
RESET enable_hashjoin; RESET enable_mergejoin; RESET enable_memoize;
RESET ROLE;
DROP TABLE pf, ic, ip;

-- Without the shared cache of decoded vectors (below), the first fetches from a stripe
-- read their values where they lie in shared buffers, a value at a time (plain,
-- bit-packed and ALP_rd values that are not compressed), instead of copying and decoding
-- whole vectors; a stripe fetched from again and again is then opened whole. Either way
-- the rows are heap's. k = 7 finds 250 rows, about 5 in each of 49 stripes.
SET pgcolumnar.enable_shared_fetch_cache = off;
CREATE TABLE pr (id int, k int, x float8, y int) USING columnar;
INSERT INTO pr SELECT g, g % 400,
    CASE WHEN g % 97 = 0 THEN NULL ELSE sin(g) * 1000 + g / 7.0 END, hashint4(g) & 65535
  FROM generate_series(1, 100000) g;
CREATE INDEX pr_k ON pr (k);
CREATE TABLE prh AS SELECT * FROM pr;
CREATE INDEX prh_k ON prh (k);
ANALYZE pr, prh;
SELECT attname, encodings FROM pgcolumnar.stats('pr') WHERE attname IN ('x', 'y') ORDER BY 1;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT id, x, y FROM pr WHERE k = 7;
SELECT pgcolumnar.fetch_vectors_read_in_place() AS p0, pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), count(x), (SELECT count(*) FROM prh WHERE k = 7) AS heap_rows FROM pr WHERE k = 7;
SELECT pgcolumnar.fetch_vectors_read_in_place() - :p0 AS read_in_place,
       pgcolumnar.fetch_decoded_vectors() - :d0 AS opened;
SELECT count(*) AS differing FROM
  ((SELECT id, x, y FROM pr WHERE k = 7 EXCEPT ALL SELECT id, x, y FROM prh WHERE k = 7)
   UNION ALL (SELECT id, x, y FROM prh WHERE k = 7 EXCEPT ALL SELECT id, x, y FROM pr WHERE k = 7)) d;
-- Again (each statement's fetcher starts knowing nothing of the relation's size): each
-- stripe passes its eighth fetch and is opened whole, which is not counted again.
SELECT count(*), sum(y), count(x) FROM pr WHERE k = 7;
SELECT count(*), sum(y), count(x) FROM pr WHERE k = 7;
SELECT pgcolumnar.fetch_vectors_read_in_place() - :p0 AS read_in_place,
       pgcolumnar.fetch_decoded_vectors() - :d0 AS opened;
SELECT count(*) AS differing FROM
  ((SELECT id, x, y FROM pr WHERE k = 7 EXCEPT ALL SELECT id, x, y FROM prh WHERE k = 7)
   UNION ALL (SELECT id, x, y FROM prh WHERE k = 7 EXCEPT ALL SELECT id, x, y FROM pr WHERE k = 7)) d;
-- After the table grew, stripes read in place by one statement and read by the next.
INSERT INTO pr SELECT g, 9, g, g FROM generate_series(100001, 140000) g;
SELECT count(*), count(x) FROM pr WHERE k = 8;
SELECT count(*), count(x) FROM pr WHERE k = 8;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
RESET pgcolumnar.enable_shared_fetch_cache;
DROP TABLE pr, prh;

-- Text with a new value in every row (hashes, ids, comments) is compressed in zstd
-- frames of about 4 KB where that costs few bytes more than one frame per vector: a
-- fetch then reads its row in place, decompressing the frame it lies in, not the 74 KB
-- of its vector. h fits short images; note (with values over 126 bytes) is plain. rep,
-- a few words repeated around a row number, compresses better in one frame (frames
-- would cost more than 8% more) and keeps it (zstd).
SET pgcolumnar.enable_shared_fetch_cache = off;
CREATE TABLE ft (id int, k int, h text, note text, rep text) USING columnar;
INSERT INTO ft SELECT g, g % 500, md5(g::text),
    CASE WHEN g % 50 = 0 THEN NULL WHEN g % 7 = 0 THEN '' ELSE md5((g * 7)::text) || md5((g * 11)::text) || md5((g * 13)::text) || md5((g * 17)::text) END,
    'a note on ' || (ARRAY['alpha', 'beta', 'gamma'])[g % 3 + 1] || ' and ' || (ARRAY['red', 'green', 'blue', 'black', 'white'])[g % 5 + 1] || ', number ' || g
  FROM generate_series(1, 30000) g;
CREATE INDEX ft_k ON ft (k);
CREATE TABLE fth AS SELECT * FROM ft;
CREATE INDEX fth_k ON fth (k);
ANALYZE ft, fth;
SELECT attname, encodings FROM pgcolumnar.stats('ft') WHERE attname IN ('h', 'note', 'rep') ORDER BY 1;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT id, h, note FROM ft WHERE k = 7;
SELECT pgcolumnar.fetch_vectors_read_in_place() AS p0, pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), count(note), sum(length(h) + coalesce(length(note), 0)) FROM ft WHERE k = 7;
-- h and note in each of the 15 stripes: read in place.
SELECT pgcolumnar.fetch_vectors_read_in_place() - :p0 AS read_in_place,
       pgcolumnar.fetch_decoded_vectors() - :d0 AS opened;
SELECT count(*) AS differing FROM
  ((SELECT id, h, note, rep FROM ft WHERE k IN (7, 499) EXCEPT ALL SELECT id, h, note, rep FROM fth WHERE k IN (7, 499))
   UNION ALL (SELECT id, h, note, rep FROM fth WHERE k IN (7, 499) EXCEPT ALL SELECT id, h, note, rep FROM ft WHERE k IN (7, 499))) d;
-- Fetched again and again, the stripes are opened whole; the values stay heap's.
SELECT count(*), sum(length(h) + coalesce(length(note), 0)) FROM ft WHERE k = 7;
SELECT count(*), sum(length(h) + coalesce(length(note), 0)) FROM ft WHERE k = 7;
SELECT count(*) AS differing FROM
  ((SELECT id, h, note FROM ft WHERE k = 7 EXCEPT ALL SELECT id, h, note FROM fth WHERE k = 7)
   UNION ALL (SELECT id, h, note FROM fth WHERE k = 7 EXCEPT ALL SELECT id, h, note FROM ft WHERE k = 7)) d;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
-- Scans decompress every frame: the same rows.
SELECT count(*) AS differing FROM
  ((SELECT * FROM ft EXCEPT ALL SELECT * FROM fth) UNION ALL (SELECT * FROM fth EXCEPT ALL SELECT * FROM ft)) d;
RESET pgcolumnar.enable_shared_fetch_cache;
DROP TABLE ft, fth;

-- The planner prices a fetch from a framed vector as one frame (and its checksum), from
-- a vector compressed whole as the whole vector: 33 rows scattered over 293 stripes are
-- fetched through the index where the text is framed, and scanned for where it is not
-- (the same data compressed for size).
CREATE TABLE ftp (id int, k int, h text, note text) USING columnar;
INSERT INTO ftp SELECT g, hashint4(g) & 32767, md5(g::text), md5((g * 7)::text) || md5((g * 11)::text)
  FROM generate_series(1, 600000) g;
CREATE INDEX ON ftp (k);
CREATE TABLE ftq (LIKE ftp) USING columnar WITH (compress_for = 'size');
INSERT INTO ftq SELECT * FROM ftp;
CREATE INDEX ON ftq (k);
ANALYZE ftp, ftq;
SELECT 'ftp' AS rel, encodings FROM pgcolumnar.stats('ftp') WHERE attname = 'note'
  UNION ALL SELECT 'ftq', encodings FROM pgcolumnar.stats('ftq') WHERE attname = 'note';
EXPLAIN (COSTS OFF) SELECT count(*), md5(string_agg(f::text, ',' ORDER BY id)) FROM ftp f WHERE k IN (7, 8);
EXPLAIN (COSTS OFF) SELECT count(*), md5(string_agg(f::text, ',' ORDER BY id)) FROM ftq f WHERE k IN (7, 8);
SELECT (SELECT count(*) FROM ftp WHERE k IN (7, 8)) AS rows,
       (SELECT md5(string_agg(f::text, ',' ORDER BY id)) FROM ftp f WHERE k IN (7, 8))
     = (SELECT md5(string_agg(f::text, ',' ORDER BY id)) FROM ftq f WHERE k IN (7, 8)) AS same;
DROP TABLE ftp, ftq;

-- A statement's first fetches look up their row group and deletes alone (before the
-- fetcher loads every row group's): rows in a group found already need no lookup, and
-- the deletes of a row group are read once for all its rows if it has up to 16 marks;
-- of a group with more, its first four rows look up their own marks (two lookups, the
-- marks on their bucket and on them alone: a single-row UPDATE's fetch must not read
-- hundreds), then the group's are read (up to 256 marks; of a group with more, those of
-- a mark bucket, up to 32 marks; a bucket with more is looked up row by row). The
-- counts of index scans on
-- pgcolumnar.row_mark show it; the rows are heap's, with deletes of this transaction,
-- of earlier ones, and a cursor that started before some.
CREATE TABLE pd (id int, v int) USING columnar;
INSERT INTO pd SELECT g, g * 2 FROM generate_series(1, 20000) g;
CREATE INDEX pd_id ON pd (id);
CREATE TABLE pdh AS SELECT * FROM pd;
CREATE INDEX pdh_id ON pdh (id);
-- Ten marks in the first bucket of 8192 rows, forty in the second, deleted through the
-- index (which finds the row group crowded: below).
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
DO $$ BEGIN
  FOR i IN 1..10 LOOP DELETE FROM pd WHERE id = i * 100; DELETE FROM pdh WHERE id = i * 100; END LOOP;
  FOR i IN 1..40 LOOP
    DELETE FROM pd WHERE id = 10000 + i * 2; DELETE FROM pdh WHERE id = 10000 + i * 2;
  END LOOP;
END $$;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM pd WHERE id BETWEEN 1 AND 60;
CREATE FUNCTION mark_lookups() RETURNS bigint LANGUAGE sql AS
  $$ SELECT idx_scan FROM pg_stat_xact_all_tables WHERE relid = 'pgcolumnar.row_mark'::regclass $$;
-- The rows of ids lo .. hi, and the lookups of marks reading them made.
CREATE FUNCTION fetched(lo int, hi int, OUT rows bigint, OUT total bigint, OUT lookups bigint)
LANGUAGE plpgsql AS $$
DECLARE l0 bigint := mark_lookups();
BEGIN
  SELECT count(*), sum(v) INTO rows, total FROM pd WHERE id BETWEEN lo AND hi;
  lookups := mark_lookups() - l0;
END $$;
BEGIN;
-- 60 rows, none deleted, of a row group with 50 marks: the DELETEs above found it
-- crowded (a try at 16 of them read 17), so this session's next 64 statements skip
-- that try: row 1 (its bucket's first) and rows 2 .. 4 alone, then its marks read once.
SELECT * FROM fetched(1, 60);
-- 61 rows of the bucket with 40 marks, the same (none is its bucket's first row).
SELECT * FROM fetched(10200, 10260);
-- 300 more marks in a third bucket: after the same first lookups, one try at the
-- group's, then its buckets'. The bucket with 10 marks: one read of the bucket. The
-- bucket with 40 marks: one try at the bucket, then two lookups a row (the marks
-- on its bucket, and on it alone); the bucket with 300, the same, and two more for each
-- deleted row (whether it is dead to every snapshot, for the index to forget it).
SAVEPOINT many;
DO $$ BEGIN FOR i IN 1..300 LOOP DELETE FROM pd WHERE id = 17000 + i; END LOOP; END $$;
SELECT * FROM fetched(1, 60);
SELECT * FROM fetched(10200, 10260);
SELECT * FROM fetched(16990, 17310);
-- One row of that group, as a single-row UPDATE fetches it: no try at 16 of its 350
-- marks (known crowded), the row's own (two lookups; two more for a deleted row, see
-- above).
SELECT * FROM fetched(5000, 5000);
SELECT * FROM fetched(17001, 17001);
-- Single-row UPDATEs of a live row and of a deleted one (which finds nothing).
UPDATE pd SET v = v + 1 WHERE id = 5000; UPDATE pdh SET v = v + 1 WHERE id = 5000;
WITH u AS (UPDATE pd SET v = v + 1 WHERE id = 17002 RETURNING id) SELECT count(*) FROM u;
SELECT * FROM fetched(4999, 5001);
SELECT count(*), sum(v) FROM pdh WHERE id BETWEEN 4999 AND 5001;
ROLLBACK TO many;
-- Ranges with deleted rows.
SELECT count(*), sum(v) FROM pd WHERE id BETWEEN 1 AND 1000;
SELECT count(*), sum(v) FROM pdh WHERE id BETWEEN 1 AND 1000;
SELECT count(*), sum(v) FROM pd WHERE id BETWEEN 10001 AND 10050;
SELECT count(*), sum(v) FROM pdh WHERE id BETWEEN 10001 AND 10050;
-- This transaction's delete, seen by its next statement.
DELETE FROM pd WHERE id = 33; DELETE FROM pdh WHERE id = 33;
SELECT count(*), sum(v) FROM pd WHERE id BETWEEN 1 AND 60;
SELECT count(*), sum(v) FROM pdh WHERE id BETWEEN 1 AND 60;
-- A cursor keeps seeing the rows deleted after it started.
DECLARE c CURSOR FOR SELECT id, v FROM pd WHERE id BETWEEN 36 AND 44 ORDER BY id;
FETCH 2 FROM c;
DELETE FROM pd WHERE id IN (41, 42);
FETCH ALL FROM c;
SELECT id, v FROM pd WHERE id BETWEEN 36 AND 44 ORDER BY id;
ROLLBACK;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP FUNCTION fetched(int, int), mark_lookups();
DROP TABLE pd, pdh;

-- A fetch remembers the row group it found a row in, and a later statement checks only
-- that it still sees that version of the group's metadata row. VACUUM folding a delete
-- into the group's mask writes a new version (and drops the mark): the next statements
-- see the row deleted, through the new version.
CREATE TABLE fg (id int, v int) USING columnar;
INSERT INTO fg SELECT g, g * 2 FROM generate_series(1, 20000) g;
CREATE INDEX fg_id ON fg (id);
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(v) FROM fg WHERE id BETWEEN 99 AND 102;
SELECT count(*), sum(v) FROM fg WHERE id BETWEEN 99 AND 102;
DELETE FROM fg WHERE id = 101;
SELECT count(*), sum(v) FROM fg WHERE id BETWEEN 99 AND 102;
VACUUM fg;
-- fg is the newest table: its storage id is the largest.
SELECT (SELECT count(*) FROM pgcolumnar.row_mark m WHERE m.storage_id = s.id) AS marks_left,
       (SELECT count(*) FROM pgcolumnar.row_group g WHERE g.storage_id = s.id AND g.deleted_rows IS NOT NULL) AS masks
  FROM (SELECT max(storage_id) AS id FROM pgcolumnar.row_group) s;
SELECT count(*), sum(v) FROM fg WHERE id BETWEEN 99 AND 102;
SELECT v FROM fg WHERE id = 101;
UPDATE fg SET v = -1 WHERE id = 102;
SELECT id, v FROM fg WHERE id BETWEEN 99 AND 102 ORDER BY id;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP TABLE fg;

-- An index scan keeps the pages its rows read pinned from row to row, as heap's keeps
-- its current page: a page is looked up in shared buffers once while rows keep reading
-- it, not once for every value. k = 7's 187 rows lie in all 20 stripes, 5 values a row
-- read: fewer than one lookup per two values (a lookup per value would be 935 and more;
-- pinned, about 150).
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
CREATE FUNCTION buffer_hits(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO plan;
  RETURN (plan -> 0 -> 'Plan' ->> 'Shared Hit Blocks')::bigint + (plan -> 0 -> 'Plan' ->> 'Shared Read Blocks')::bigint;
END $$;
CREATE FUNCTION drain(c refcursor) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r record; n int := 0; sb numeric := 0; sf float8 := 0; mw text;
BEGIN
  LOOP
    FETCH c INTO r;
    EXIT WHEN NOT FOUND;
    n := n + 1; sb := sb + r.b; sf := sf + coalesce(r.f, 0); mw := greatest(mw, r.w);
  END LOOP;
  RETURN format('%s rows, sum(b) %s, sum(f) %s, max(w) %s', n, sb, sf, mw);
END $$;
EXPLAIN (COSTS OFF) SELECT a, b, f, d, w FROM fc WHERE k = 7;
SELECT count(*) FROM fc WHERE k = 7;
SELECT buffer_hits('SELECT a, b, f, d, w FROM fc WHERE k = 7') < 187 * 5 / 2 AS pages_kept_pinned;
-- Pins are the scan's, under its resource owner: a cursor's survive errors caught
-- around and between its fetches (also a failed fetch in a savepoint), a cursor
-- declared in a savepoint rolled back takes its pins with it, and every fetch returns
-- heap's rows. A pin left behind would show as a WARNING at commit.
BEGIN;
DECLARE pc CURSOR FOR SELECT id, b, f, w FROM fc WHERE k = 7;
DECLARE ph CURSOR FOR SELECT id, b, f, w FROM fh WHERE k = 7;
FETCH 3 FROM pc;
FETCH 3 FROM ph;
DO $$ BEGIN PERFORM 1 / 0; EXCEPTION WHEN division_by_zero THEN NULL; END $$;
FETCH 3 FROM pc;
FETCH 3 FROM ph;
SAVEPOINT s;
FETCH 2 FROM pc;
FETCH 2 FROM ph;
SELECT 1 / 0;
ROLLBACK TO s;
SELECT drain('pc');
SELECT drain('ph');
SAVEPOINT s2;
DECLARE pc2 CURSOR FOR SELECT id, w FROM fc WHERE k = 9;
FETCH 2 FROM pc2;
ROLLBACK TO s2;
SELECT count(*), sum(b) FROM fc WHERE k = 9;
SELECT count(*), sum(b) FROM fh WHERE k = 9;
COMMIT;
-- An ERROR in the middle of an index scan, caught: the abort released its pins, and
-- the scans after it pin and release their own.
DO $$
DECLARE n int;
BEGIN
  BEGIN
    PERFORM b / (a - 3) FROM fc WHERE k = 7;
  EXCEPTION WHEN division_by_zero THEN RAISE NOTICE 'caught in the scan';
  END;
  SELECT count(*) INTO n FROM fc WHERE k = 7 AND a <> 3;
  RAISE NOTICE '% rows after it', n;
END $$;
-- A cursor WITH HOLD: its scan ends at commit (its rows kept), its pins let go then.
BEGIN;
DECLARE hc CURSOR WITH HOLD FOR SELECT id, b, f, w FROM fc WHERE k = 11;
DECLARE hh CURSOR WITH HOLD FOR SELECT id, b, f, w FROM fh WHERE k = 11;
FETCH 2 FROM hc;
FETCH 2 FROM hh;
COMMIT;
SELECT drain('hc');
SELECT drain('hh');
CLOSE hc;
CLOSE hh;
-- A temporary table's pages are local buffers, kept pinned the same way.
CREATE TEMP TABLE ftemp (k int, v text) USING columnar;
INSERT INTO ftemp SELECT g % 50, repeat('t', g % 30) || g FROM generate_series(1, 20000) g;
CREATE INDEX ON ftemp (k);
ANALYZE ftemp;
EXPLAIN (COSTS OFF) SELECT count(*), max(v) FROM ftemp WHERE k = 7;
SELECT count(*), max(v) FROM ftemp WHERE k = 7;
SELECT count(*), max(v) FROM generate_series(1, 20000) g, LATERAL (SELECT repeat('t', g % 30) || g AS v) x
WHERE g % 50 = 7;
DROP TABLE ftemp;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP FUNCTION buffer_hits(text), drain(refcursor);
-- The cache's bound: a tiny one still gives the right rows.
SET pgcolumnar.fetch_cache_size = '64kB';
SELECT count(*), sum(f.n), max(f.w) FROM keys JOIN fc f ON f.k = keys.k;
SELECT count(*), sum(f.n), max(f.w) FROM keys JOIN fh f ON f.k = keys.k;
SET pgcolumnar.fetch_cache_size = 10;
RESET pgcolumnar.fetch_cache_size;
DROP OWNED BY fetch_reader;
DROP ROLE fetch_reader;
DROP TABLE fc, fh, keys;
DROP FUNCTION opened(), reset_opened(), keep_old();
-- An index scan parses the vector directories of the columns it reads, not every
-- column's: on a new connection, the scan of b below parses b's (the plan parsed id's),
-- and a statement that reads more columns then parses theirs.
CREATE TABLE wide_fetch (id int, a int, b int, c int, d int, e int, f int, g int) USING columnar;
INSERT INTO wide_fetch SELECT i, i, i * 2, i, i, i, i, i FROM generate_series(1, 20000) i;
CREATE INDEX wide_fetch_id ON wide_fetch (id);
\c
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT sum(b) FROM wide_fetch WHERE id BETWEEN 100 AND 200;
SELECT pgcolumnar.chunk_directories_parsed() AS p0 \gset
SELECT sum(b) FROM wide_fetch WHERE id BETWEEN 100 AND 200;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
SELECT sum(b), sum(c) FROM wide_fetch WHERE id BETWEEN 300 AND 400;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
SELECT sum(b + c + g) FROM wide_fetch WHERE id BETWEEN 500 AND 600;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
SELECT * FROM wide_fetch WHERE id = 7;
SELECT pgcolumnar.chunk_directories_parsed() - :p0 AS parsed;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP TABLE wide_fetch;

-- A row group stored in sort_by order keeps where each row lies in its order column. A
-- backend's first fetches from the group find their row by reading that column until a
-- vector holds it; its ninth makes the column's inverse, which the fetches after it
-- read. Either way the rows are heap's: 5 lookups on a new connection, then 202.
CREATE TABLE sorted_fetch (id int, g int, v text) USING columnar WITH (sort_by = 'g, id');
INSERT INTO sorted_fetch SELECT i, (i * 7919) % 50, 'v' || i FROM generate_series(1, 30000) i;
CREATE INDEX sorted_fetch_id ON sorted_fetch (id);
CREATE TABLE sorted_fetch_heap AS SELECT * FROM sorted_fetch;
SELECT row_groups, rows FROM pgcolumnar.table_stats WHERE relation = 'sorted_fetch'::regclass;
\c
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM sorted_fetch WHERE id IN (1, 2, 15000, 29999, 30000);
SELECT * FROM sorted_fetch WHERE id IN (1, 2, 15000, 29999, 30000) ORDER BY id;
SELECT count(*) AS differing FROM
  ((SELECT * FROM sorted_fetch WHERE id IN (1, 2, 15000, 29999, 30000)
    EXCEPT ALL SELECT * FROM sorted_fetch_heap WHERE id IN (1, 2, 15000, 29999, 30000))
   UNION ALL (SELECT * FROM sorted_fetch_heap WHERE id IN (1, 2, 15000, 29999, 30000)
    EXCEPT ALL SELECT * FROM sorted_fetch WHERE id IN (1, 2, 15000, 29999, 30000))) d;
SELECT count(*), count(DISTINCT g), sum(id) FROM sorted_fetch
WHERE id = ANY (ARRAY(SELECT generate_series(7, 30000, 149)));
SELECT count(*) AS differing FROM
  ((SELECT * FROM sorted_fetch WHERE id = ANY (ARRAY(SELECT generate_series(7, 30000, 149)))
    EXCEPT ALL SELECT * FROM sorted_fetch_heap WHERE id % 149 = 7)
   UNION ALL (SELECT * FROM sorted_fetch_heap WHERE id % 149 = 7
    EXCEPT ALL SELECT * FROM sorted_fetch WHERE id = ANY (ARRAY(SELECT generate_series(7, 30000, 149))))) d;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP TABLE sorted_fetch, sorted_fetch_heap;

-- The shared cache of decoded vectors (pgcolumnar.shared_fetch_cache_size, a sixteenth
-- of shared_buffers by default): the first fetches from a stripe put the fixed-width,
-- numeric and dictionary-coded text vectors they read there (each value in 2, 4 or 8
-- bytes, as its vector's range needs), and a new connection finds them, reading
-- nothing from storage (pgcolumnar.fetch_decoded_vectors() counts what a backend read).
-- 49 stripes of k = 7 again; every type comes back as stored, NULLs included (a vector
-- with NULLs whose values span all of bigint's range, e1, is not kept), and a
-- connection that does not use the cache reads them where they lie.
SHOW pgcolumnar.enable_shared_fetch_cache;
SELECT current_setting('pgcolumnar.shared_fetch_cache_size') NOT IN ('0', '-1') AS sized;
CREATE TABLE ps (id int, k int, i2 int2, i8 int8, f4 real, f8 float8, n numeric(12, 2),
                 d date, ts timestamptz, t text, c text, cc char(6), cn text, e1 int8, e2 int8)
  USING columnar;
INSERT INTO ps SELECT g, g % 400, (g % 30000)::int2, g::int8 * 1000003,
    CASE WHEN g % 89 = 0 THEN NULL ELSE (sin(g) * 100)::real END, cos(g) * 1e6 + g,
    CASE WHEN g % 53 = 0 THEN NULL ELSE (g % 100000) / 100.0 END,
    date '2024-01-01' + g % 1000, timestamptz '2024-01-01 00:00:00+00' + g * interval '7 seconds',
    'text ' || g, (ARRAY['', 'red', 'green', 'blue', 'ünïcode ✓'])[g / 400 % 5 + 1], 'c' || g / 400 % 7,
    CASE WHEN g % 97 = 0 THEN NULL ELSE 'x' || g % 3 END,
    CASE g % 3 WHEN 0 THEN -9223372036854775808 WHEN 1 THEN 9223372036854775807 END,
    CASE g % 2 WHEN 0 THEN -9223372036854775808 ELSE 9223372036854775807 END
  FROM generate_series(1, 100000) g;
CREATE INDEX ps_k ON ps (k);
CREATE TABLE psh AS SELECT * FROM ps;
ANALYZE ps;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ps WHERE k = 7;
SELECT pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), count(f4), count(n), sum(i8), sum(n) FROM ps WHERE k = 7;
SELECT pgcolumnar.fetch_decoded_vectors() - :d0 AS first_connection_read \gset
SELECT :first_connection_read AS first_connection_read;
\c
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
SELECT pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), count(f4), count(n), sum(i8), sum(n) FROM ps WHERE k = 7;
-- Vectors another backend's fetches evicted in between would be read again.
SELECT pgcolumnar.fetch_decoded_vectors() - :d0 < :first_connection_read AS found_in_shared_cache;
-- The same for text kept as a dictionary (c, cc): read once, then found.
SELECT pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), min(c), max(c), count(DISTINCT c), max(cc) FROM ps WHERE k = 8;
SELECT pgcolumnar.fetch_decoded_vectors() - :d0 AS text_read \gset
SELECT :text_read > 0 AS text_read;
\c
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
SELECT pgcolumnar.fetch_decoded_vectors() AS d0 \gset
SELECT count(*), min(c), max(c), count(DISTINCT c), max(cc) FROM ps WHERE k = 8;
SELECT pgcolumnar.fetch_decoded_vectors() - :d0 < :text_read AS text_found_in_shared_cache;
SELECT count(*) AS differing FROM
  ((SELECT * FROM ps WHERE k = 7 EXCEPT ALL SELECT * FROM psh WHERE k = 7)
   UNION ALL (SELECT * FROM psh WHERE k = 7 EXCEPT ALL SELECT * FROM ps WHERE k = 7)) d;
\c
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
SET pgcolumnar.enable_shared_fetch_cache = off;
SELECT pgcolumnar.fetch_vectors_read_in_place() AS p0 \gset
SELECT count(*), count(f4), count(n), sum(i8), sum(n) FROM ps WHERE k = 7;
SELECT pgcolumnar.fetch_vectors_read_in_place() - :p0 > 0 AS read_in_place;
RESET pgcolumnar.enable_shared_fetch_cache;
-- A table emptied in the transaction that created it (TRUNCATE in place, under the same
-- storage id) numbers its new rows after the old ones: vectors the shared cache keeps
-- for the old rows are never taken for the new.
BEGIN;
CREATE TABLE pt (id int, k int, v float8) USING columnar;
CREATE INDEX pt_k ON pt (k);
INSERT INTO pt SELECT g, g % 10, g FROM generate_series(1, 5000) g;
SELECT count(*), sum(v) FROM pt WHERE k = 3;
TRUNCATE pt;
INSERT INTO pt SELECT g, g % 10, -g FROM generate_series(1, 5000) g;
SELECT count(*), sum(v) FROM pt WHERE k = 3;
SELECT min(ctid) > '(0,1)' AS numbered_after FROM pt;
COMMIT;
\c
SET max_parallel_workers_per_gather = 0;
SET enable_seqscan = off; SET enable_bitmapscan = off; SET pgcolumnar.enable_columnar_scan = off;
SELECT count(*), sum(v) FROM pt WHERE k = 3;
RESET enable_seqscan; RESET enable_bitmapscan; RESET pgcolumnar.enable_columnar_scan;
DROP TABLE ps, psh, pt;

DROP EXTENSION pgcolumnar;
