-- DELETE, UPDATE, MERGE, ON CONFLICT, row locks, triggers and foreign keys on columnar
-- tables, checked against the same statements on a heap copy.
CREATE EXTENSION pgcolumnar;
CREATE TABLE c (id int PRIMARY KEY, grp int, v text, f float8) USING columnar;
CREATE TABLE h (id int PRIMARY KEY, grp int, v text, f float8);
INSERT INTO c SELECT i, i % 7, 'v' || i, i / 3.0 FROM generate_series(1, 250000) i;
INSERT INTO h SELECT * FROM c;
CREATE INDEX c_grp ON c (grp);
CREATE INDEX h_grp ON h (grp);
-- Both tables must hold the same rows; run after every change.
CREATE FUNCTION same() RETURNS text LANGUAGE sql AS $$
  SELECT CASE WHEN (SELECT count(*) FROM (SELECT * FROM c EXCEPT ALL SELECT * FROM h) x) = 0
               AND (SELECT count(*) FROM (SELECT * FROM h EXCEPT ALL SELECT * FROM c) y) = 0
         THEN 'same' ELSE 'DIFFERENT' END || ' (' || (SELECT count(*) FROM c) || ' rows)' $$;

-- DELETE with RETURNING, over several row groups, and a whole row group.
WITH d AS (DELETE FROM c WHERE id % 10 = 3 RETURNING id) SELECT count(*), sum(id) FROM d;
DELETE FROM h WHERE id % 10 = 3;
DELETE FROM c WHERE id BETWEEN 102401 AND 204800;
DELETE FROM h WHERE id BETWEEN 102401 AND 204800;
SELECT same();
DELETE FROM c WHERE id = 6 RETURNING *;
DELETE FROM h WHERE id = 6;

-- UPDATE with RETURNING, UPDATE ... FROM a join, and twice in one transaction.
UPDATE c SET v = 'upd', f = f * 2 WHERE id BETWEEN 10 AND 14 RETURNING id, v, f;
UPDATE h SET v = 'upd', f = f * 2 WHERE id BETWEEN 10 AND 14;
CREATE TABLE bonus (id int, amount float8);
INSERT INTO bonus SELECT i, 1000 FROM generate_series(1, 250000, 1000) i;
UPDATE c SET f = c.f + b.amount FROM bonus b WHERE b.id = c.id;
UPDATE h SET f = h.f + b.amount FROM bonus b WHERE b.id = h.id;
BEGIN;
UPDATE c SET grp = grp + 100 WHERE id <= 50;
UPDATE c SET grp = grp + 100 WHERE id <= 50;
UPDATE c SET id = id + 1000000 WHERE id = 1;
SELECT id, grp FROM c WHERE id IN (2, 1000001) ORDER BY id;
COMMIT;
UPDATE h SET grp = grp + 200 WHERE id <= 50;
UPDATE h SET id = id + 1000000 WHERE id = 1;
SELECT same();

-- A row changed twice by one statement is an error, as on heap.
CREATE TABLE src (id int, v text);
INSERT INTO src VALUES (5, 'a'), (5, 'b');
UPDATE c SET v = src.v FROM src WHERE src.id = c.id;
MERGE INTO c USING src ON c.id = src.id WHEN MATCHED THEN UPDATE SET v = src.v;

-- MERGE: update, delete and insert in one statement.
CREATE TABLE changes (id int, op text, v text);
INSERT INTO changes VALUES (4, 'update', 'merged'), (5, 'delete', NULL), (7, 'update', 'merged7'),
  (900001, 'insert', 'new'), (900002, 'insert', 'new2');
MERGE INTO c USING changes s ON c.id = s.id
  WHEN MATCHED AND s.op = 'delete' THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, 0, s.v, 0);
MERGE INTO h USING changes s ON h.id = s.id
  WHEN MATCHED AND s.op = 'delete' THEN DELETE
  WHEN MATCHED THEN UPDATE SET v = s.v
  WHEN NOT MATCHED THEN INSERT VALUES (s.id, 0, s.v, 0);
SELECT same();

-- Every read path leaves deleted rows out: index scans, bitmap scans, index-only
-- scans, aggregates, zone-map pruned scans, ANALYZE.
SET pgcolumnar.enable_columnar_scan = off;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM c WHERE id = 13;
SELECT * FROM c WHERE id IN (12, 13, 14, 102401, 204801) ORDER BY id;
SELECT count(*) FROM c WHERE grp = 3;
SELECT count(*) FROM h WHERE grp = 3;
RESET enable_bitmapscan;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM c WHERE grp = 3 OR id < 100;
SELECT count(*), sum(id) FROM c WHERE grp = 3 OR id < 100;
SELECT count(*), sum(id) FROM h WHERE grp = 3 OR id < 100;
SET work_mem = '64kB';  -- lossy bitmap pages: every row of a page, re-checked
SELECT count(*), sum(id) FROM c WHERE grp = 3 OR id < 100;
RESET work_mem;
-- (PostgreSQL 15 prices an index-only scan as disabled when enable_indexscan is off.)
RESET enable_indexscan;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM c WHERE grp = 3;
SELECT count(*) FROM c WHERE grp = 3;
RESET enable_bitmapscan;
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
EXPLAIN (COSTS OFF) SELECT count(*), sum(f) FROM c WHERE id BETWEEN 100000 AND 110000;
SELECT count(*), sum(f) FROM c WHERE id BETWEEN 100000 AND 110000;
SELECT count(*), sum(f) FROM h WHERE id BETWEEN 100000 AND 110000;
ANALYZE c;
SELECT reltuples = (SELECT count(*) FROM c) AS exact_reltuples FROM pg_class WHERE relname = 'c';

-- Savepoints: a rolled-back delete or update is undone, a released one kept.
BEGIN;
SAVEPOINT a;
DELETE FROM c WHERE id = 20;
UPDATE c SET v = 'gone' WHERE id = 21;
ROLLBACK TO a;
SAVEPOINT b;
DELETE FROM c WHERE id = 22;
RELEASE b;
SELECT id, v FROM c WHERE id BETWEEN 20 AND 22 ORDER BY id;
ROLLBACK;
SELECT count(*) FROM c WHERE id BETWEEN 20 AND 22;

-- A cursor keeps seeing the rows its snapshot saw.
BEGIN;
DECLARE cur CURSOR FOR SELECT id FROM c WHERE id BETWEEN 30 AND 33 ORDER BY id;
DELETE FROM c WHERE id BETWEEN 30 AND 33;
FETCH ALL FROM cur;
SELECT count(*) FROM c WHERE id BETWEEN 30 AND 33;
ROLLBACK;

-- INSERT ... ON CONFLICT.
INSERT INTO c VALUES (2, 0, 'dup', 0) ON CONFLICT DO NOTHING;
INSERT INTO c VALUES (2, 0, 'dup', 0) ON CONFLICT (id) DO UPDATE SET v = 'upserted ' || excluded.v RETURNING id, v;
INSERT INTO c VALUES (3, 0, 'three', 0), (3, 0, 'three again', 0) ON CONFLICT (id) DO UPDATE SET v = excluded.v;
INSERT INTO c VALUES (3, 0, 'three', 0) ON CONFLICT (id) DO UPDATE SET v = excluded.v RETURNING id, v;
INSERT INTO c SELECT i, 0, 'bulk', 0 FROM generate_series(249990, 250010) i ON CONFLICT DO NOTHING;
SELECT count(*) FROM c WHERE id BETWEEN 249990 AND 250010;
SELECT id, v FROM c WHERE id IN (2, 3) ORDER BY id;

-- SELECT ... FOR UPDATE/SHARE return the rows and lock them.
SELECT id, v FROM c WHERE id IN (8, 9) ORDER BY id FOR UPDATE;
SELECT id FROM c WHERE id = 8 FOR NO KEY UPDATE;
SELECT id FROM c WHERE id = 8 FOR SHARE;
SELECT id FROM c WHERE id = 8 FOR KEY SHARE;

-- Triggers: BEFORE/AFTER, row and statement level, see the right rows.
CREATE TABLE audit (what text, old_id int, new_id int, new_v text);
CREATE FUNCTION log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit VALUES (TG_WHEN || ' ' || TG_OP || ' ' || TG_LEVEL,
    CASE WHEN TG_OP <> 'INSERT' AND TG_LEVEL = 'ROW' THEN OLD.id END,
    CASE WHEN TG_OP <> 'DELETE' AND TG_LEVEL = 'ROW' THEN NEW.id END,
    CASE WHEN TG_OP <> 'DELETE' AND TG_LEVEL = 'ROW' THEN NEW.v END);
  IF TG_LEVEL = 'ROW' AND TG_WHEN = 'BEFORE' AND TG_OP = 'UPDATE' THEN
    NEW.v := NEW.v || ' (trigger)';
  END IF;
  RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END $$;
CREATE TRIGGER b_row BEFORE UPDATE OR DELETE ON c FOR EACH ROW EXECUTE FUNCTION log_row();
CREATE TRIGGER a_row AFTER UPDATE OR DELETE ON c FOR EACH ROW EXECUTE FUNCTION log_row();
CREATE TRIGGER b_stmt BEFORE UPDATE OR DELETE ON c FOR EACH STATEMENT EXECUTE FUNCTION log_row();
CREATE TRIGGER a_stmt AFTER UPDATE OR DELETE ON c FOR EACH STATEMENT EXECUTE FUNCTION log_row();
UPDATE c SET v = 'triggered' WHERE id = 11;
DELETE FROM c WHERE id = 12;
SELECT * FROM audit;
SELECT id, v FROM c WHERE id IN (11, 12);
-- A BEFORE trigger that skips the row.
CREATE FUNCTION keep_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER keep BEFORE DELETE ON c FOR EACH ROW EXECUTE FUNCTION keep_row();
DELETE FROM c WHERE id = 13;
SELECT count(*) FROM c WHERE id = 13;
DROP TRIGGER keep ON c;
DROP TRIGGER b_row ON c;
DROP TRIGGER a_row ON c;
DROP TRIGGER b_stmt ON c;
DROP TRIGGER a_stmt ON c;

-- A statement's deletes are collected in memory and written out when it ends; what
-- runs in the middle of it (triggers, functions, their subtransactions) sees them by
-- command id like heap's: a BEFORE trigger's query sees the rows the statement already
-- deleted. With an EXCEPTION block, the query runs in a subtransaction (which cannot
-- write the parent's collected deletes) and must see them all the same.
CREATE TABLE seen (tab text, id int, remaining bigint, in_subxact bigint);
CREATE FUNCTION count_rest() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n bigint; m bigint;
BEGIN
  -- The subtransaction's query first: the parent's query would write them out.
  BEGIN
    EXECUTE format('SELECT count(*) FROM %I WHERE id BETWEEN 902000 AND 902999', TG_TABLE_NAME) INTO m;
  EXCEPTION WHEN others THEN m := -1;
  END;
  EXECUTE format('SELECT count(*) FROM %I WHERE id BETWEEN 902000 AND 902999', TG_TABLE_NAME) INTO n;
  INSERT INTO seen VALUES (TG_TABLE_NAME, OLD.id, n, m);
  RETURN OLD;
END $$;
INSERT INTO c SELECT g, g % 7, 'n' || g, g / 3.0 FROM generate_series(902000, 902999) g;
INSERT INTO h SELECT g, g % 7, 'n' || g, g / 3.0 FROM generate_series(902000, 902999) g;
CREATE TRIGGER rest BEFORE DELETE ON c FOR EACH ROW EXECUTE FUNCTION count_rest();
CREATE TRIGGER rest BEFORE DELETE ON h FOR EACH ROW EXECUTE FUNCTION count_rest();
DELETE FROM c WHERE id BETWEEN 902000 AND 902009;
DELETE FROM h WHERE id BETWEEN 902000 AND 902009;
SELECT id, remaining, in_subxact FROM seen WHERE tab = 'c'
EXCEPT SELECT id, remaining, in_subxact FROM seen WHERE tab = 'h';
SELECT count(*), min(remaining), max(remaining), min(in_subxact) FROM seen WHERE tab = 'c';
DROP TRIGGER rest ON c;
DROP TRIGGER rest ON h;

-- A subtransaction in the middle of a DELETE (a function with an EXCEPTION block)
-- changes rows of its own: they roll back with it, the DELETE's own deletes stay.
CREATE FUNCTION delete_twin(tab text, i int, fail bool) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    EXECUTE format('DELETE FROM %I WHERE id = $1', tab) USING i + 500;
    EXECUTE format('UPDATE %I SET v = $2 WHERE id = $1', tab) USING i + 1, 'touched';
    IF fail THEN RAISE EXCEPTION 'undo'; END IF;
  EXCEPTION WHEN others THEN NULL;
  END;
  RETURN true;
END $$;
DELETE FROM c WHERE id BETWEEN 902100 AND 902119 AND id % 2 = 0 AND delete_twin('c', id, id % 4 = 0);
DELETE FROM h WHERE id BETWEEN 902100 AND 902119 AND id % 2 = 0 AND delete_twin('h', id, id % 4 = 0);
SELECT (SELECT count(*) FROM (SELECT * FROM c WHERE id >= 902000 EXCEPT ALL SELECT * FROM h WHERE id >= 902000) x)
     + (SELECT count(*) FROM (SELECT * FROM h WHERE id >= 902000 EXCEPT ALL SELECT * FROM c WHERE id >= 902000) y)
       AS differences;
SELECT count(*) FROM c WHERE id BETWEEN 902000 AND 902999;
SELECT id, v FROM c WHERE id BETWEEN 902100 AND 902103 OR id BETWEEN 902600 AND 902603 ORDER BY id;
-- The same in one transaction, rolled back to a savepoint in the middle.
BEGIN;
DELETE FROM c WHERE id BETWEEN 902200 AND 902299;
SAVEPOINT s;
DELETE FROM c WHERE id BETWEEN 902300 AND 902399;
UPDATE c SET v = 'gone' WHERE id BETWEEN 902250 AND 902350;
ROLLBACK TO SAVEPOINT s;
UPDATE c SET v = 'kept' WHERE id BETWEEN 902295 AND 902305;
COMMIT;
BEGIN;
DELETE FROM h WHERE id BETWEEN 902200 AND 902299;
UPDATE h SET v = 'kept' WHERE id BETWEEN 902295 AND 902305;
COMMIT;
SELECT (SELECT count(*) FROM (SELECT * FROM c WHERE id >= 902000 EXCEPT ALL SELECT * FROM h WHERE id >= 902000) x)
     + (SELECT count(*) FROM (SELECT * FROM h WHERE id >= 902000 EXCEPT ALL SELECT * FROM c WHERE id >= 902000) y)
       AS differences;

-- Foreign keys from and to columnar tables.
CREATE TABLE parent (id int PRIMARY KEY, name text) USING columnar;
CREATE TABLE child (id int, parent_id int REFERENCES parent ON DELETE CASCADE ON UPDATE CASCADE) USING columnar;
CREATE TABLE heap_child (id int, parent_id int REFERENCES parent ON UPDATE CASCADE);
INSERT INTO parent VALUES (1, 'one'), (2, 'two');
INSERT INTO child VALUES (10, 1), (11, 1), (20, 2);
INSERT INTO heap_child VALUES (100, 2);
\set VERBOSITY sqlstate
INSERT INTO child VALUES (30, 3);
\set VERBOSITY default
DELETE FROM parent WHERE id = 1;
SELECT * FROM child ORDER BY id;
UPDATE parent SET id = 22 WHERE id = 2;
SELECT * FROM heap_child;
SELECT * FROM child ORDER BY id;

-- Row locks wait for a running changer; statements that do not wait fail with 55P03.
-- (Concurrency is covered by the isolation specs; here: one's own locks never block.)
BEGIN;
SELECT id FROM c WHERE id = 15 FOR UPDATE;
UPDATE c SET v = 'locked then updated' WHERE id = 15;
SELECT id FROM c WHERE id = 15 FOR UPDATE NOWAIT;
COMMIT;
SELECT id, v FROM c WHERE id = 15;

DROP TABLE c, h, bonus, src, changes, audit, child, heap_child, parent, seen;
DROP FUNCTION same(), log_row(), keep_row(), count_rest(), delete_twin(text, int, bool);
DROP EXTENSION pgcolumnar;
