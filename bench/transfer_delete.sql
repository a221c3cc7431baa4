\set a random(1, 50)
\set b random(1, 50)
\set amt random(1, 10)
BEGIN;
UPDATE acct_:tbl SET balance = balance - :amt WHERE id = :a;
INSERT INTO pending_:tbl (dst, amount) VALUES (:b, :amt);
WITH settled AS (DELETE FROM pending_:tbl WHERE id = (SELECT min(id) FROM pending_:tbl) RETURNING dst, amount)
UPDATE acct_:tbl SET balance = balance + settled.amount FROM settled WHERE acct_:tbl.id = settled.dst;
END;
