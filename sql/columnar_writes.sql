-- Writes: buffering, flushes, transactions and savepoints.
CREATE EXTENSION pgcolumnar;
CREATE TABLE w (id int, v text) USING columnar;

-- Single-row and multi-row INSERT, INSERT ... SELECT, COPY.
INSERT INTO w VALUES (1, 'one');
INSERT INTO w VALUES (2, 'two'), (3, NULL);
INSERT INTO w SELECT i, 'v' || i FROM generate_series(4, 250000) i;
COPY w FROM STDIN;
250001	copied
250002	\N
\.
SELECT count(*), count(v), sum(id), min(id), max(id) FROM w;
-- Full row groups of 102400 rows, then the remainders of each statement.
SELECT row_count FROM pgcolumnar.row_group ORDER BY storage_id, first_row;

-- Read your own writes: the buffer is flushed before a scan in the same transaction,
-- and rows of the running command are not seen by it.
BEGIN;
INSERT INTO w VALUES (-1, 'mine');
SELECT count(*) FROM w WHERE id < 0;
INSERT INTO w SELECT -id, 'neg' FROM w WHERE id BETWEEN 1 AND 5;
SELECT count(*) FROM w WHERE id < 0;
ROLLBACK;
SELECT count(*) FROM w WHERE id < 0;

-- ROLLBACK leaves nothing visible, also after a flush inside the transaction.
BEGIN;
INSERT INTO w SELECT -i, 'rolled back' FROM generate_series(1, 200000) i;
SELECT count(*) FROM w WHERE v = 'rolled back';
ROLLBACK;
SELECT count(*) FROM w WHERE v = 'rolled back';

-- Savepoints: ROLLBACK TO drops what was inserted after the savepoint only.
BEGIN;
INSERT INTO w VALUES (-10, 'before savepoint');
SAVEPOINT s1;
INSERT INTO w VALUES (-11, 'inside s1');
SELECT id, v FROM w WHERE id <= -10 ORDER BY id;
ROLLBACK TO SAVEPOINT s1;
INSERT INTO w VALUES (-12, 'after rollback to s1');
SAVEPOINT s2;
INSERT INTO w VALUES (-13, 'inside s2, released');
RELEASE SAVEPOINT s2;
SELECT id, v FROM w WHERE id <= -10 ORDER BY id;
COMMIT;
SELECT id, v FROM w WHERE id <= -10 ORDER BY id;

-- A cursor sees the rows of its snapshot, not rows inserted after it was opened.
BEGIN;
INSERT INTO w VALUES (-20, 'before cursor');
DECLARE c CURSOR FOR SELECT id FROM w WHERE id BETWEEN -29 AND -20 ORDER BY id;
INSERT INTO w VALUES (-21, 'after cursor');
FETCH ALL FROM c;
SELECT id FROM w WHERE id BETWEEN -29 AND -20 ORDER BY id;
COMMIT;

-- A function that inserts and reads in an exception block.
CREATE FUNCTION insert_and_count() RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    INSERT INTO w VALUES (-30, 'in block');
    RETURN (SELECT count(*) FROM w WHERE id = -30);
  EXCEPTION WHEN division_by_zero THEN
    RETURN -1;
  END;
END $$;
SELECT insert_and_count();

-- An exception block reads rows buffered outside it; when the block rolls back, those
-- rows stay (they belong to the enclosing transaction), its own rows go.
BEGIN;
INSERT INTO w VALUES (-40, 'outside the block');
DO $$
BEGIN
  BEGIN
    INSERT INTO w VALUES (-41, 'inside the block');
    RAISE NOTICE 'block sees % rows', (SELECT count(*) FROM w WHERE id IN (-40, -41));
    PERFORM 1 / 0;
  EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'block rolled back';
  END;
  RAISE NOTICE 'after the block: % rows', (SELECT count(*) FROM w WHERE id IN (-40, -41));
END $$;
DO $$
BEGIN
  BEGIN
    RAISE NOTICE 'second block sees % rows', (SELECT count(*) FROM w WHERE id IN (-40, -41));
  EXCEPTION WHEN division_by_zero THEN
    NULL;
  END;
END $$;
INSERT INTO w VALUES (-42, 'read by a block that completes');
DO $$
BEGIN
  BEGIN
    RAISE NOTICE 'third block sees % rows', (SELECT count(*) FROM w WHERE id = -42);
  EXCEPTION WHEN division_by_zero THEN
    NULL;
  END;
END $$;
COMMIT;
SELECT id, v FROM w WHERE id IN (-40, -41, -42) ORDER BY id;

-- Rows written by a failed statement are not visible.
INSERT INTO w SELECT i, (1 / (i - 1000005))::text FROM generate_series(1000001, 1000010) i;
SELECT count(*) FROM w WHERE id > 1000000;

DROP TABLE w;
DROP FUNCTION insert_and_count();

-- A query that reads other tables (a row trigger's here) leaves the inserting
-- statement's buffered rows alone: one row group, not one a row. A query that reads the
-- table itself still sees every row inserted before it, as with heap.
CREATE TABLE trig_log (id int);
CREATE TABLE trig_c (id int, seen bigint) USING columnar;
CREATE FUNCTION trig_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trig_log VALUES (NEW.id);
  RETURN NEW;
END $$;
CREATE TRIGGER note BEFORE INSERT ON trig_c FOR EACH ROW EXECUTE FUNCTION trig_note();
INSERT INTO trig_c SELECT g, 0 FROM generate_series(1, 1000) g;
SELECT row_groups, rows FROM pgcolumnar.stats('trig_c') WHERE attname = 'id';
SELECT count(*) FROM trig_log;
-- pgcolumnar.stats counts the rows this transaction still buffers, as a scan would.
BEGIN;
INSERT INTO trig_c VALUES (1001, 0);
SELECT row_groups, rows FROM pgcolumnar.stats('trig_c') WHERE attname = 'id';
ROLLBACK;
CREATE TABLE seen_c (id int, seen bigint) USING columnar;
CREATE TABLE seen_h (id int, seen bigint);
CREATE FUNCTION count_before() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', TG_TABLE_NAME) INTO NEW.seen;
  RETURN NEW;
END $$;
CREATE TRIGGER count_c BEFORE INSERT ON seen_c FOR EACH ROW EXECUTE FUNCTION count_before();
CREATE TRIGGER count_h BEFORE INSERT ON seen_h FOR EACH ROW EXECUTE FUNCTION count_before();
INSERT INTO seen_c SELECT g, -1 FROM generate_series(1, 300) g;
INSERT INTO seen_h SELECT g, -1 FROM generate_series(1, 300) g;
SELECT count(*) AS rows, sum(c.seen) AS seen_total,
       count(*) FILTER (WHERE (c.id, c.seen) IS DISTINCT FROM (h.id, h.seen)) AS differ_from_heap
  FROM seen_c c FULL JOIN seen_h h USING (id);
DROP TABLE trig_c, trig_log, seen_c, seen_h;
DROP FUNCTION trig_note();
DROP FUNCTION count_before();

-- A writing transaction takes as many row numbers (TIDs, 291 to a block) as it writes
-- rows, doubling the numbers it takes while no one takes any after them: a transaction
-- of one row takes one. (Taking 102,400 each used up the TID space after about 12
-- million transactions.) VACUUM deletes the reservations of ended transactions.
CREATE TABLE trickle (id int) USING columnar;
INSERT INTO trickle VALUES (1);
INSERT INTO trickle VALUES (2);
INSERT INTO trickle VALUES (3);
SELECT ctid, id FROM trickle ORDER BY ctid;
INSERT INTO trickle SELECT g FROM generate_series(4, 1000) g;
INSERT INTO trickle VALUES (1001);
SELECT count(*), max(ctid) < '(8,0)' AS numbers_within_twice_the_rows,
       (SELECT id FROM trickle ORDER BY ctid DESC LIMIT 1) AS last FROM trickle;
BEGIN;
INSERT INTO trickle VALUES (1002);
SAVEPOINT s;
INSERT INTO trickle VALUES (1003);
ROLLBACK TO s;
INSERT INTO trickle VALUES (1004);
COMMIT;
SELECT ctid > (SELECT ctid FROM trickle WHERE id = 1001) AS after, id FROM trickle WHERE id > 1001 ORDER BY ctid;
-- An INSERT takes the numbers its plan expects at once; those it did not use go back
-- when no one took any after them: this plan expects about 333 rows and inserts 10,
-- and the next row's number follows the tenth.
CREATE TABLE planned (id int) USING columnar;
INSERT INTO planned VALUES (0);
INSERT INTO planned SELECT g FROM generate_series(1, 1000) g WHERE g > 990;
INSERT INTO planned VALUES (2000);
SELECT ctid, id FROM planned WHERE id IN (0, 1000, 2000) ORDER BY ctid;
DROP TABLE planned;
-- A transaction records its windows in its backend's four shared-memory slots, and as
-- row_reservation rows once they are used up: the fifth table's here.
SELECT count(*) AS catalog_reservations FROM pgcolumnar.row_reservation;
CREATE TABLE w1 (id int) USING columnar;
CREATE TABLE w2 (id int) USING columnar;
CREATE TABLE w3 (id int) USING columnar;
CREATE TABLE w4 (id int) USING columnar;
BEGIN;
INSERT INTO w1 VALUES (1);
INSERT INTO w2 VALUES (1);
INSERT INTO w3 VALUES (1);
INSERT INTO w4 VALUES (1);
INSERT INTO trickle VALUES (1005);
SELECT count(*) AS catalog_reservations FROM pgcolumnar.row_reservation;
COMMIT;
-- The first VACUUM merges the small row groups, writing as this transaction; the
-- second deletes the ended transaction's reservation.
VACUUM;
VACUUM;
SELECT count(*) AS reservations_after_vacuum FROM pgcolumnar.row_reservation;
SELECT count(*), sum(id) FROM trickle;
DROP TABLE trickle, w1, w2, w3, w4;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
