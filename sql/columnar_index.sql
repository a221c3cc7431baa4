-- Indexes on columnar tables: build, scans, uniqueness, triggers that fetch by TID.
CREATE EXTENSION pgcolumnar;
CREATE TABLE ix (id int, k text, v float8) USING columnar;
INSERT INTO ix SELECT i, 'key' || (i % 1000), i / 4.0 FROM generate_series(1, 200000) i;
CREATE INDEX ix_id ON ix (id);
CREATE INDEX ix_k ON ix USING hash (k);
CREATE INDEX ix_expr ON ix ((id % 97)) WHERE v > 100;
ANALYZE ix;
SET pgcolumnar.enable_columnar_scan = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;

EXPLAIN (COSTS OFF) SELECT * FROM ix WHERE id = 123456;
SELECT * FROM ix WHERE id = 123456;
SELECT * FROM ix WHERE id IN (1, 102400, 102401, 200000) ORDER BY id;
EXPLAIN (COSTS OFF) SELECT count(*), min(id) FROM ix WHERE k = 'key7';
SELECT count(*), min(id) FROM ix WHERE k = 'key7';
EXPLAIN (COSTS OFF) SELECT id FROM ix WHERE id BETWEEN 10 AND 15 ORDER BY id;
SELECT id FROM ix WHERE id BETWEEN 10 AND 15 ORDER BY id;
EXPLAIN (COSTS OFF) SELECT count(*) FROM ix WHERE id % 97 = 3 AND v > 100;
SELECT count(*) FROM ix WHERE id % 97 = 3 AND v > 100;
RESET enable_seqscan;
SELECT count(*) FROM ix WHERE id % 97 = 3 AND v > 100;
SET enable_seqscan = off;

-- A fetch decodes the vector holding its row, and only when the query first reads a
-- column, up to that column (as heap deforms a tuple): 6 rows of one vector, reading
-- id and k decodes two vectors; reading every column then decodes only v's. A new
-- session starts with no decoded vector kept (and here does not look in the shared
-- cache, where the scans above left id's vectors: columnar_fetch tests that).
\c -
SET pgcolumnar.enable_shared_fetch_cache = off;
SET pgcolumnar.enable_columnar_scan = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT pgcolumnar.fetch_decoded_vectors() AS before \gset
SELECT k FROM ix WHERE id BETWEEN 150010 AND 150015 ORDER BY id;
SELECT pgcolumnar.fetch_decoded_vectors() - :before AS decoded;
SELECT pgcolumnar.fetch_decoded_vectors() AS before \gset
SELECT * FROM ix WHERE id BETWEEN 150010 AND 150015 ORDER BY id;
SELECT pgcolumnar.fetch_decoded_vectors() - :before AS decoded;
RESET pgcolumnar.enable_shared_fetch_cache;

-- Rows inserted later, also in the same transaction, are found through the index.
INSERT INTO ix VALUES (300001, 'late', 1);
BEGIN;
INSERT INTO ix VALUES (300002, 'in transaction', 2);
SELECT id, k FROM ix WHERE id > 300000 ORDER BY id;
ROLLBACK;
SELECT id, k FROM ix WHERE id > 300000 ORDER BY id;
REINDEX TABLE ix;
SELECT id, k FROM ix WHERE id = 300001;

-- Unique indexes and primary keys are enforced, also within one statement.
CREATE TABLE pk (id int PRIMARY KEY, note text) USING columnar;
INSERT INTO pk SELECT i, 'n' || i FROM generate_series(1, 5000) i;
\set VERBOSITY sqlstate
INSERT INTO pk VALUES (42, 'duplicate');
INSERT INTO pk VALUES (6000, 'a'), (6000, 'b');
CREATE UNIQUE INDEX ix_k_unique ON ix (k);
\set VERBOSITY default
INSERT INTO pk VALUES (6000, 'a');
SELECT count(*), count(DISTINCT id), max(id) FROM pk;
SELECT * FROM pk WHERE id = 6000;

-- Fetching by ctid (TID scan) returns whole, intact rows.
RESET enable_seqscan;
SELECT ctid, * FROM pk WHERE ctid = '(0,1)';
SELECT ctid, * FROM pk WHERE ctid IN ('(0,2)', '(1,1)') ORDER BY ctid;
SET enable_seqscan = off;

-- Row-level AFTER triggers see the inserted rows.
CREATE TABLE audit (id int, note text);
CREATE FUNCTION audit_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit VALUES (NEW.id, NEW.note);
  RETURN NULL;
END $$;
CREATE TRIGGER pk_audit AFTER INSERT ON pk FOR EACH ROW EXECUTE FUNCTION audit_insert();
INSERT INTO pk VALUES (7000, 'audited'), (7001, 'audited too');
SELECT * FROM audit ORDER BY id;

-- Bitmap heap scans do not prefetch TID blocks (they are not pages of the file): rows
-- numbered past 38 million have TID blocks beyond the first 1 GB segment of a file
-- far smaller, which PostgreSQL's prefetch failed to open.
CREATE TABLE far (id int) USING columnar;
BEGIN;
INSERT INTO far SELECT 0 FROM generate_series(1, 38200000);
ROLLBACK;
INSERT INTO far SELECT g FROM generate_series(1, 20000) g;
CREATE INDEX far_id ON far (id);
SELECT pg_relation_size('far') < 1024 * 1024 * 1024 AS file_below_one_segment,
       min(ctid) > '(131072,0)' AS tid_blocks_beyond_it FROM far;
SET effective_io_concurrency = 16;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM far WHERE id BETWEEN 100 AND 15000;
SELECT count(*), sum(id) FROM far WHERE id BETWEEN 100 AND 15000;
RESET enable_indexscan;
RESET effective_io_concurrency;

-- GIN, GiST and SP-GiST indexes answer like scans without them.
CREATE TABLE gx (id int, tags int[], p point, r int4range, doc tsvector) USING columnar;
INSERT INTO gx SELECT g, ARRAY[g % 7, g % 11], point(g % 100, g / 100), int4range(g, g + 10),
    to_tsvector('simple', 'w' || (g % 50) || ' x' || (g % 3))
  FROM generate_series(1, 20000) g;
CREATE INDEX gx_tags ON gx USING gin (tags);
CREATE INDEX gx_doc ON gx USING gin (doc);
CREATE INDEX gx_p ON gx USING gist (p);
CREATE INDEX gx_r ON gx USING spgist (r);
RESET enable_bitmapscan;
SET enable_seqscan = off;
CREATE TEMP VIEW gx_answers AS
  SELECT 'tags' AS q, count(*) AS n FROM gx WHERE tags @> ARRAY[3, 5]
  UNION ALL SELECT 'doc', count(*) FROM gx WHERE doc @@ to_tsquery('simple', 'w7 & x1')
  UNION ALL SELECT 'box', count(*) FROM gx WHERE p <@ box(point(10, 10), point(20, 20))
  UNION ALL SELECT 'range', count(*) FROM gx WHERE r @> 15000
  UNION ALL SELECT 'nearest', sum(id) FROM (SELECT id FROM gx ORDER BY p <-> point(50.2, 150.1) LIMIT 3) s;
EXPLAIN (COSTS OFF) SELECT * FROM gx_answers;
CREATE TEMP TABLE by_index AS SELECT * FROM gx_answers;
RESET enable_seqscan;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
CREATE TEMP TABLE by_scan AS SELECT * FROM gx_answers;
RESET enable_indexscan;
SET enable_bitmapscan = off;
SELECT i.q, i.n, i.n = s.n AS same_as_scan FROM by_index i JOIN by_scan s USING (q) ORDER BY i.q;

-- BRIN summarizes ranges of physical blocks, which TIDs here are not: refused.
CREATE INDEX gx_brin ON gx USING brin (id);

-- A unique index build skips the versions an UPDATE or DELETE left behind, as heap's
-- does (they are indexed for older snapshots, not checked); a real duplicate still fails.
CREATE TABLE uq (k int, v text) USING columnar;
INSERT INTO uq VALUES (1, 'a'), (2, 'b');
UPDATE uq SET v = 'a' WHERE k = 1;
CREATE UNIQUE INDEX uq_k ON uq (k);
DROP INDEX uq_k;
ALTER TABLE uq ADD PRIMARY KEY (k);
ALTER TABLE uq DROP CONSTRAINT uq_pkey;
ALTER TABLE uq ADD UNIQUE (k);
ALTER TABLE uq DROP CONSTRAINT uq_k_key;
DELETE FROM uq WHERE k = 2;
INSERT INTO uq VALUES (2, 'c');
ALTER TABLE uq ADD PRIMARY KEY (k);
ALTER TABLE uq DROP CONSTRAINT uq_pkey;
ALTER TABLE uq ADD UNIQUE (k);
ALTER TABLE uq DROP CONSTRAINT uq_k_key;
-- Changed by the building transaction itself; the index finds the new version.
BEGIN;
UPDATE uq SET v = 'd' WHERE k = 2;
CREATE UNIQUE INDEX uq_k ON uq (k);
SET LOCAL enable_seqscan = off;
SET LOCAL pgcolumnar.enable_columnar_scan = off;
SELECT k, v FROM uq WHERE k = 2;
ROLLBACK;
-- Once VACUUM has folded the deletes, the old versions are not indexed at all.
VACUUM uq;
CREATE UNIQUE INDEX uq_k ON uq (k);
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
SELECT k, v FROM uq WHERE k IN (1, 2) ORDER BY k;
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
INSERT INTO uq VALUES (1, 'dup');
DROP INDEX uq_k;
INSERT INTO uq VALUES (1, 'dup');
CREATE UNIQUE INDEX uq_k ON uq (k);
ALTER TABLE uq ADD PRIMARY KEY (k);
ALTER TABLE uq ADD UNIQUE (k);
DELETE FROM uq WHERE v = 'dup';
ALTER TABLE uq ADD PRIMARY KEY (k);
SELECT k, v FROM uq ORDER BY k;
DROP TABLE uq;

DROP VIEW gx_answers;
DROP TABLE ix, pk, audit, far, gx;
-- Versions of hot keys leave the index once no snapshot can see them: every UPDATE
-- adds an entry, equal keys share a posting list that scans cannot mark dead while one
-- of its rows is live, and bottom-up deletion asks the table which entries can go.
-- 4,000 committed UPDATEs of 20 keys (24 kB of entries) stay on one leaf page.
CREATE TABLE churn (k int PRIMARY KEY, v int) USING columnar;
INSERT INTO churn SELECT g, 0 FROM generate_series(1, 20) g;
DO $$
BEGIN
  FOR g IN 1..4000 LOOP
    UPDATE churn SET v = v + 1 WHERE k = 1 + g % 20;
    COMMIT;
  END LOOP;
END $$;
SELECT pg_relation_size('churn_pkey') / 8192 <= 2 AS one_leaf_page, sum(v), count(*) FROM churn;
SET enable_seqscan = off;
SELECT k, v FROM churn WHERE k IN (1, 20) ORDER BY k;
RESET enable_seqscan;
DROP TABLE churn;
-- The same with UPDATEs of all 20 keys at once, whose marks cover 20 rows each (kept
-- under their bucket's first row, not under a row's own key).
CREATE TABLE churn_all (k int PRIMARY KEY, v int) USING columnar;
INSERT INTO churn_all SELECT g, 0 FROM generate_series(1, 20) g;
DO $$
BEGIN
  FOR g IN 1..200 LOOP
    UPDATE churn_all SET v = v + 1;
    COMMIT;
  END LOOP;
END $$;
SELECT pg_relation_size('churn_all_pkey') / 8192 <= 2 AS one_leaf_page, sum(v), count(*) FROM churn_all;
DROP TABLE churn_all;
DROP FUNCTION audit_insert();

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY (with writers: the isolation spec
-- columnar_create_index_concurrently). Expression and partial indexes, a row group in
-- sort_by order, deleted and updated rows; the results come through the indexes.
CREATE TABLE conc (id int, t text) USING columnar;
ALTER TABLE conc SET (sort_by = 't');
INSERT INTO conc SELECT g, md5(g::text) FROM generate_series(1, 3000) g;
DELETE FROM conc WHERE id % 10 = 0;
UPDATE conc SET t = 'updated' WHERE id BETWEEN 1 AND 5;
CREATE INDEX CONCURRENTLY conc_id ON conc (id);
CREATE INDEX CONCURRENTLY conc_upper ON conc (upper(t)) WHERE id < 100;
CREATE UNIQUE INDEX CONCURRENTLY conc_id_unique ON conc (id);
REINDEX INDEX CONCURRENTLY conc_id;
REINDEX TABLE CONCURRENTLY conc;
SELECT indexrelid::regclass, indisvalid, indisready FROM pg_index
  WHERE indrelid = 'conc'::regclass ORDER BY indexrelid::regclass::text;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM conc WHERE id > 0;
SELECT count(*), sum(id) FROM conc WHERE id > 0;
EXPLAIN (COSTS OFF) SELECT id FROM conc WHERE upper(t) = 'UPDATED' AND id < 100;
SELECT id FROM conc WHERE upper(t) = 'UPDATED' AND id < 100 ORDER BY id;
SELECT id, t FROM conc WHERE id IN (10, 11) ORDER BY id;
RESET pgcolumnar.enable_columnar_scan;
RESET enable_bitmapscan;
RESET enable_seqscan;
-- A duplicate fails the unique build with 23505 and leaves the index invalid, as on heap.
DROP INDEX conc_id_unique;
INSERT INTO conc VALUES (11, 'duplicate');
\set VERBOSITY sqlstate
CREATE UNIQUE INDEX CONCURRENTLY conc_dup ON conc (id);
\set VERBOSITY default
SELECT indisvalid FROM pg_index WHERE indexrelid = 'conc_dup'::regclass;
DROP TABLE conc;

-- A key lookup that zone maps rule out in every row group: a ColumnarScan still reads
-- the table's metadata first, and the index finds the same nothing in fewer steps (it
-- fetches no row), so the index is chosen; a key that lies in the data is not ruled out.
CREATE TABLE ix_point (k int, v text) USING columnar;
INSERT INTO ix_point SELECT g, 'v' || g FROM generate_series(1, 200000) g;
CREATE INDEX ix_point_k ON ix_point (k);
ANALYZE ix_point;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT * FROM ix_point WHERE k = 500000;
SELECT * FROM ix_point WHERE k = 500000;
-- With a clause the index does not check, the rows it fetches may lie in row groups
-- that clause rules out: they are priced as core estimates them.
EXPLAIN (COSTS OFF) SELECT * FROM ix_point WHERE k = 500000 AND v = 'x';
RESET max_parallel_workers_per_gather;
DROP TABLE ix_point;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
