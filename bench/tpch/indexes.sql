-- Primary keys, the schema's foreign keys and the usual foreign-key indexes, built after
-- the COPY (PostgreSQL only; DuckDB gets none). l_orderkey and ps_partkey are the leading
-- columns of their tables' primary keys. The foreign keys are TPC-H's own (spec 1.4.2);
-- PostgreSQL's planner reads them to estimate joins on several columns, such as q9's
-- lineitem-partsupp join on (partkey, suppkey), whose rows it would otherwise take as
-- 1/1500 of what they are.
ALTER TABLE region   ADD PRIMARY KEY (r_regionkey);
ALTER TABLE nation   ADD PRIMARY KEY (n_nationkey);
ALTER TABLE part     ADD PRIMARY KEY (p_partkey);
ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey);
ALTER TABLE partsupp ADD PRIMARY KEY (ps_partkey, ps_suppkey);
ALTER TABLE customer ADD PRIMARY KEY (c_custkey);
ALTER TABLE orders   ADD PRIMARY KEY (o_orderkey);
ALTER TABLE lineitem ADD PRIMARY KEY (l_orderkey, l_linenumber);
CREATE INDEX nation_n_regionkey ON nation (n_regionkey);
CREATE INDEX supplier_s_nationkey ON supplier (s_nationkey);
CREATE INDEX partsupp_ps_suppkey ON partsupp (ps_suppkey);
CREATE INDEX customer_c_nationkey ON customer (c_nationkey);
CREATE INDEX orders_o_custkey ON orders (o_custkey);
CREATE INDEX lineitem_l_partkey_l_suppkey ON lineitem (l_partkey, l_suppkey);
ALTER TABLE nation   ADD FOREIGN KEY (n_regionkey) REFERENCES region;
ALTER TABLE supplier ADD FOREIGN KEY (s_nationkey) REFERENCES nation;
ALTER TABLE customer ADD FOREIGN KEY (c_nationkey) REFERENCES nation;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_partkey) REFERENCES part;
ALTER TABLE partsupp ADD FOREIGN KEY (ps_suppkey) REFERENCES supplier;
ALTER TABLE orders   ADD FOREIGN KEY (o_custkey) REFERENCES customer;
ALTER TABLE lineitem ADD FOREIGN KEY (l_orderkey) REFERENCES orders;
ALTER TABLE lineitem ADD FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp;
