-- Concurrent small-table OLTP (make bench-changes): 50 accounts with a primary key, a
-- ledger with a bigserial key, on heap and on columnar. Each transfer script moves an
-- amount between two random accounts: bench/transfer.sql with UPDATEs (and records it
-- in the ledger), transfer_upsert.sql with INSERT ... ON CONFLICT DO UPDATE,
-- transfer_delete.sql through a table of pending credits that transactions DELETE to
-- settle. The total of balances and pending credits must stay 50,000.
DROP TABLE IF EXISTS acct_heap, ledger_heap, acct_col, ledger_col, pending_heap, pending_col;
CREATE TABLE acct_heap (id int PRIMARY KEY, balance bigint NOT NULL);
CREATE TABLE ledger_heap (id bigserial PRIMARY KEY, src int, dst int, amount int, at timestamptz DEFAULT now());
CREATE TABLE acct_col (LIKE acct_heap INCLUDING ALL) USING columnar;
CREATE TABLE ledger_col (id bigserial PRIMARY KEY, src int, dst int, amount int, at timestamptz DEFAULT now()) USING columnar;
INSERT INTO acct_heap SELECT g, 1000 FROM generate_series(1, 50) g;
INSERT INTO acct_col SELECT g, 1000 FROM generate_series(1, 50) g;
CREATE TABLE pending_heap (id bigserial PRIMARY KEY, dst int NOT NULL, amount int NOT NULL);
CREATE TABLE pending_col (id bigserial PRIMARY KEY, dst int NOT NULL, amount int NOT NULL) USING columnar;
