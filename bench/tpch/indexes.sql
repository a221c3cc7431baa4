-- Primary keys and the usual foreign-key indexes, built after the COPY (PostgreSQL only;
-- DuckDB gets none). l_orderkey and ps_partkey are the leading columns of their tables'
-- primary keys.
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
