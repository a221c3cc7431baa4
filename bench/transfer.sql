\set a random(1, 50)
\set b random(1, 50)
\set amt random(1, 10)
BEGIN;
UPDATE acct_:tbl SET balance = balance - :amt WHERE id = :a;
UPDATE acct_:tbl SET balance = balance + :amt WHERE id = :b;
INSERT INTO ledger_:tbl (src, dst, amount) VALUES (:a, :b, :amt);
END;
