\set a random(1, 50)
\set b random(1, 50)
\set amt random(1, 10)
BEGIN;
INSERT INTO acct_:tbl VALUES (:a, -:amt) ON CONFLICT (id) DO UPDATE SET balance = acct_:tbl.balance + excluded.balance;
INSERT INTO acct_:tbl VALUES (:b, :amt) ON CONFLICT (id) DO UPDATE SET balance = acct_:tbl.balance + excluded.balance;
INSERT INTO ledger_:tbl (src, dst, amount) VALUES (:a, :b, :amt);
END;
