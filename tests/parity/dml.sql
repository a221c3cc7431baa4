-- Row changes: RETURNING, CTEs (data-modifying too), MERGE, INSERT ... ON CONFLICT.
CREATE TABLE acct (id int PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0, tags text[]);
INSERT INTO acct VALUES (1, 'ann', 100, '{a}'), (2, 'bob', 50.5, NULL), (3, 'cy', 0, '{}') RETURNING *;
INSERT INTO acct (id, owner) SELECT g, 'u' || g FROM generate_series(4, 40) g RETURNING id, balance;
UPDATE acct SET balance = balance + 10 WHERE id = 2 RETURNING id, balance, balance * 2 AS doubled;
UPDATE acct SET balance = balance - 1 WHERE id > 38 RETURNING id, balance;
WITH u AS (UPDATE acct SET tags = array_append(tags, 'x') WHERE id <= 3 RETURNING id, tags) SELECT * FROM u ORDER BY id;
DELETE FROM acct WHERE id = 40 RETURNING *;
DELETE FROM acct WHERE id = 999 RETURNING *;
UPDATE acct a SET balance = a.balance + s.delta FROM (VALUES (1, 5.0), (3, 7.25)) s(id, delta) WHERE a.id = s.id RETURNING a.id, a.balance;
DELETE FROM acct a USING (VALUES (38), (39)) d(id) WHERE a.id = d.id RETURNING a.id;
SELECT * FROM acct WHERE id <= 5 OR id >= 36 ORDER BY id;
-- the same row changed twice in a statement is not allowed in UPDATE FROM; last one wins silently
UPDATE acct a SET balance = s.v FROM (VALUES (1, 1.0), (1, 2.0)) s(id, v) WHERE a.id = s.id AND s.v = 2.0 RETURNING a.id, a.balance;
-- ON CONFLICT
INSERT INTO acct VALUES (1, 'ann2', 1) ON CONFLICT DO NOTHING;
INSERT INTO acct VALUES (1, 'ann2', 1) ON CONFLICT (id) DO NOTHING RETURNING *;
INSERT INTO acct VALUES (1, 'ann2', 1), (41, 'new', 41) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, balance = acct.balance + excluded.balance RETURNING *;
INSERT INTO acct VALUES (2, 'bob2', 1) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner WHERE acct.balance > 1000 RETURNING *;
INSERT INTO acct VALUES (2, 'x', 1), (2, 'y', 2) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner;
INSERT INTO acct AS t VALUES (3, 'cy', 3) ON CONFLICT ON CONSTRAINT acct_pkey DO UPDATE SET balance = t.balance * 10 RETURNING t.*;
INSERT INTO acct SELECT g, 'bulk' || g, g FROM generate_series(30, 45) g ON CONFLICT (id) DO UPDATE SET balance = excluded.balance + 0.5;
SELECT id, owner, balance FROM acct WHERE id BETWEEN 28 AND 45 ORDER BY id;
CREATE TABLE kv (k text, n int, v text);
CREATE UNIQUE INDEX kv_k ON kv (k);
CREATE UNIQUE INDEX kv_lower_n ON kv (lower(k), n) WHERE n > 0;
INSERT INTO kv VALUES ('a', 1, 'first'), ('b', 0, 'zero');
INSERT INTO kv VALUES ('a', 2, 'again') ON CONFLICT (k) DO UPDATE SET n = kv.n + excluded.n, v = kv.v || '/' || excluded.v;
INSERT INTO kv VALUES ('c', 1, 'c') ON CONFLICT (lower(k), n) WHERE n > 0 DO NOTHING;
INSERT INTO kv VALUES ('C', 1, 'C') ON CONFLICT (lower(k), n) WHERE n > 0 DO UPDATE SET v = 'conflict-C';
INSERT INTO kv VALUES ('A', 3, 'A') ON CONFLICT DO NOTHING;
INSERT INTO kv VALUES ('b', 0, 'zero2') ON CONFLICT (k) DO UPDATE SET v = excluded.v RETURNING *;
SELECT * FROM kv ORDER BY k;
-- CTEs
WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n) FROM r;
WITH big AS (SELECT * FROM acct WHERE balance > 20) SELECT count(*), sum(balance) FROM big;
WITH big AS MATERIALIZED (SELECT * FROM acct WHERE balance > 20) SELECT b1.id FROM big b1 JOIN big b2 USING (id) ORDER BY 1;
WITH moved AS (DELETE FROM acct WHERE id BETWEEN 10 AND 14 RETURNING *)
  INSERT INTO kv SELECT owner, id, 'moved' FROM moved RETURNING k, n;
WITH upd AS (UPDATE acct SET balance = balance * 2 WHERE id < 5 RETURNING id, balance)
  SELECT id, balance FROM upd ORDER BY id;
WITH ins AS (INSERT INTO acct (id, owner) VALUES (100, 'cte') RETURNING id),
     upd AS (UPDATE kv SET v = 'touched' WHERE n = 12 RETURNING k)
  SELECT (SELECT count(*) FROM ins) AS ins, (SELECT count(*) FROM upd) AS upd;
WITH d AS (DELETE FROM kv WHERE v = 'moved' RETURNING k) SELECT count(*) FROM d;
SELECT k, n, v FROM kv ORDER BY k;
SELECT count(*), sum(balance) FROM acct;
-- MERGE
CREATE TABLE stock (item text PRIMARY KEY, qty int NOT NULL);
CREATE TABLE delivery (item text, qty int);
INSERT INTO stock VALUES ('apple', 10), ('pear', 5), ('plum', 0);
INSERT INTO delivery VALUES ('apple', 5), ('kiwi', 7), ('plum', -0), ('pear', -5);
MERGE INTO stock s USING delivery d ON s.item = d.item
  WHEN MATCHED AND s.qty + d.qty <= 0 THEN DELETE
  WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty
  WHEN NOT MATCHED THEN INSERT VALUES (d.item, d.qty);
SELECT * FROM stock ORDER BY item;
MERGE INTO stock s USING (SELECT 'apple' AS item, 1 AS qty UNION ALL SELECT 'fig', 2) d ON s.item = d.item
  WHEN NOT MATCHED THEN INSERT VALUES (d.item, d.qty)
  WHEN MATCHED THEN DO NOTHING;
SELECT * FROM stock ORDER BY item;
MERGE INTO stock s USING (VALUES ('apple', 1), ('apple', 2)) d(item, qty) ON s.item = d.item
  WHEN MATCHED THEN UPDATE SET qty = s.qty + d.qty;
MERGE INTO stock s USING delivery d ON s.item = d.item AND d.qty > 0
  WHEN MATCHED THEN UPDATE SET qty = s.qty * 100;
SELECT * FROM stock ORDER BY item;
BEGIN;
MERGE INTO stock s USING delivery d ON s.item = d.item WHEN MATCHED THEN DELETE;
SELECT * FROM stock ORDER BY item;
ROLLBACK;
SELECT * FROM stock ORDER BY item;
-- INSERT ... SELECT from itself, UPDATE of every row, DELETE of all
CREATE TABLE selfc (a int, b text);
INSERT INTO selfc SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
INSERT INTO selfc SELECT a + 1000, b FROM selfc;
SELECT count(*), count(DISTINCT b), sum(a) FROM selfc;
UPDATE selfc SET a = -a;
UPDATE selfc SET a = -a WHERE a < -1500;
SELECT count(*) FILTER (WHERE a < 0), count(*) FILTER (WHERE a > 0), min(a), max(a) FROM selfc;
DELETE FROM selfc WHERE a % 3 = 0;
SELECT count(*), sum(a) FROM selfc;
UPDATE selfc SET b = NULL WHERE a % 2 = 0;
SELECT count(b), count(*) FROM selfc;
DELETE FROM selfc;
SELECT count(*) FROM selfc;
INSERT INTO selfc VALUES (1, 'again');
SELECT * FROM selfc;
-- COPY
COPY stock TO STDOUT;
COPY (SELECT * FROM stock ORDER BY item) TO STDOUT WITH (FORMAT csv, HEADER);
CREATE TABLE copyt (a int, b text, c date);
COPY copyt FROM STDIN;
1	one	2024-01-01
2	\N	2024-02-29
3	three	\N
\.
COPY copyt (a, b) FROM STDIN WITH (FORMAT csv);
4,"four, with comma"
5,
\.
SELECT * FROM copyt ORDER BY a;
DROP TABLE acct, kv, stock, delivery, selfc, copyt;
