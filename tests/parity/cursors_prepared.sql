-- Cursors (forward, and SCROLL ones read backward) and prepared statements.
CREATE TABLE cur (id int, v text, n numeric);
INSERT INTO cur SELECT g, 'v' || g, g * 0.5 FROM generate_series(1, 200) g;
CREATE INDEX cur_id ON cur (id);
BEGIN;
DECLARE c1 CURSOR FOR SELECT id, v FROM cur WHERE id % 10 = 0 ORDER BY id;
FETCH 3 FROM c1;
FETCH NEXT FROM c1;
FETCH FORWARD 2 FROM c1;
MOVE FORWARD 5 IN c1;
FETCH ALL FROM c1;
FETCH NEXT FROM c1;
CLOSE c1;
DECLARE c2 NO SCROLL CURSOR FOR SELECT count(*), sum(n) FROM cur;
FETCH c2;
DECLARE c3 CURSOR FOR SELECT id FROM cur WHERE id > 195 ORDER BY id DESC;
FETCH 2 c3;
FETCH RELATIVE 1 FROM c3;
FETCH ABSOLUTE 5 FROM c3;
CLOSE c3;
DECLARE c4 CURSOR FOR SELECT id, v FROM cur WHERE id BETWEEN 50 AND 55 ORDER BY id;
FETCH 2 FROM c4;
UPDATE cur SET v = 'changed' WHERE id = 54;
FETCH ALL FROM c4;
COMMIT;
BEGIN;
DECLARE c5 CURSOR WITH HOLD FOR SELECT id FROM cur WHERE id < 6 ORDER BY id;
FETCH 2 FROM c5;
COMMIT;
FETCH ALL FROM c5;
CLOSE c5;
-- a cursor over the table without ORDER BY: only the aggregate of what it returns is compared
BEGIN;
DECLARE c6 CURSOR FOR SELECT id FROM cur;
MOVE FORWARD ALL IN c6;
FETCH NEXT FROM c6;
CLOSE c6;
COMMIT;
-- SCROLL cursors read backward: with ORDER BY (a Sort underneath), and without (the
-- scan itself runs backward; the rows were inserted in id order by one statement).
BEGIN;
DECLARE s1 SCROLL CURSOR FOR SELECT id FROM cur WHERE id < 30 ORDER BY id;
FETCH 3 FROM s1;
FETCH BACKWARD 1 FROM s1;
FETCH LAST FROM s1;
FETCH BACKWARD 3 FROM s1;
CLOSE s1;
-- A scroll cursor over the table's own scan, in its stored order (no index order).
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
DECLARE s2 SCROLL CURSOR FOR SELECT id, v FROM cur WHERE id < 120;
FETCH LAST FROM s2;
FETCH PRIOR FROM s2;
FETCH ABSOLUTE 50 FROM s2;
FETCH RELATIVE -3 FROM s2;
MOVE BACKWARD ALL IN s2;
FETCH NEXT FROM s2;
FETCH PRIOR FROM s2;
FETCH PRIOR FROM s2;
FETCH NEXT FROM s2;
FETCH BACKWARD ALL FROM s2;
CLOSE s2;
COMMIT;
-- WHERE CURRENT OF, with and without FOR UPDATE
BEGIN;
DECLARE c7 CURSOR FOR SELECT id, v FROM cur WHERE id = 4 FOR UPDATE;
FETCH NEXT FROM c7;
UPDATE cur SET v = 'current' WHERE CURRENT OF c7;
DECLARE c8 CURSOR FOR SELECT id, v FROM cur WHERE id BETWEEN 20 AND 22 ORDER BY id;
FETCH NEXT FROM c8;
DELETE FROM cur WHERE CURRENT OF c8;
FETCH NEXT FROM c8;
UPDATE cur SET v = 'current2' WHERE CURRENT OF c8 RETURNING id, v;
COMMIT;
SELECT id, v FROM cur WHERE id IN (4, 20, 21, 22) ORDER BY id;
-- a cursor in plpgsql
CREATE FUNCTION sum_cursor(lim int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    c CURSOR (x int) FOR SELECT id FROM cur WHERE id <= x;
    r record;
    s bigint := 0;
BEGIN
    FOR r IN c(lim) LOOP
        s := s + r.id;
    END LOOP;
    RETURN s;
END $$;
SELECT sum_cursor(100);
CREATE FUNCTION refc() RETURNS refcursor LANGUAGE plpgsql AS $$
DECLARE c refcursor := 'named_c';
BEGIN
    OPEN c FOR SELECT id, v FROM cur WHERE id IN (7, 8, 9) ORDER BY id;
    RETURN c;
END $$;
BEGIN;
SELECT refc();
FETCH ALL FROM named_c;
COMMIT;
-- prepared statements
PREPARE q1(int) AS SELECT id, v, n FROM cur WHERE id = $1;
EXECUTE q1(5);
EXECUTE q1(500);
PREPARE q2(int, int) AS SELECT count(*), sum(n) FROM cur WHERE id BETWEEN $1 AND $2;
EXECUTE q2(1, 10);
EXECUTE q2(100, 150);
PREPARE ins(int, text) AS INSERT INTO cur VALUES ($1, $2, $1 / 2.0) RETURNING *;
EXECUTE ins(1000, 'p1000');
EXECUTE ins(1001, NULL);
PREPARE upd(int) AS UPDATE cur SET n = n + 1 WHERE id = $1 RETURNING id, n;
EXECUTE upd(1000);
EXECUTE upd(1000);
PREPARE del(int) AS DELETE FROM cur WHERE id = $1 RETURNING id;
EXECUTE del(1001);
EXECUTE del(1001);
SET plan_cache_mode = force_generic_plan;
PREPARE g1(int) AS SELECT id, v FROM cur WHERE id = $1;
EXECUTE g1(1);
EXECUTE g1(2);
EXECUTE g1(3);
EXECUTE g1(1000);
PREPARE g2(text) AS SELECT count(*) FROM cur WHERE v LIKE $1;
EXECUTE g2('v1%');
EXECUTE g2('changed');
PREPARE g3(int[]) AS SELECT id FROM cur WHERE id = ANY ($1) ORDER BY id;
EXECUTE g3('{3,1,2,999}');
PREPARE g4(int) AS UPDATE cur SET v = v || '*' WHERE id = $1 RETURNING id, v;
EXECUTE g4(10);
EXECUTE g4(10);
EXECUTE g4(11);
SET plan_cache_mode = force_custom_plan;
EXECUTE g1(4);
EXECUTE q2(1, 200);
RESET plan_cache_mode;
-- the same prepared statement after the table changes shape
ALTER TABLE cur ADD COLUMN extra int DEFAULT 3;
EXECUTE q1(5);
PREPARE star AS SELECT * FROM cur WHERE id = 6;
EXECUTE star;
ALTER TABLE cur DROP COLUMN extra;
EXECUTE star;
DEALLOCATE star;
DEALLOCATE ALL;
EXECUTE q1(5);
-- a function running queries over and over (plpgsql plan caching)
CREATE FUNCTION get_v(i int) RETURNS text LANGUAGE plpgsql STABLE AS $$
BEGIN RETURN (SELECT v FROM cur WHERE id = i); END $$;
SELECT i, get_v(i) FROM generate_series(1, 12) i ORDER BY i;
SELECT count(*) FROM cur WHERE get_v(id) LIKE '%0';
DROP FUNCTION sum_cursor(int), refc(), get_v(int);
DROP TABLE cur;
