-- Plan shapes where a columnar table must answer exactly as a heap table does:
-- inheritance, LATERAL references, and errors raised while a ColumnarScan runs.
CREATE EXTENSION pgcolumnar;
SET default_table_access_method = columnar;

-- Inheritance: a parent's scan is an Append over the parent's own rows and each child's.
CREATE TABLE inh_a (aa text);
CREATE TABLE inh_b (bb text) INHERITS (inh_a);
INSERT INTO inh_a VALUES ('aaaa');
INSERT INTO inh_b (aa, bb) VALUES ('bbbb', 'b');
SELECT * FROM inh_a ORDER BY aa;
SELECT count(*) FROM ONLY inh_a;
EXPLAIN (COSTS OFF) SELECT * FROM inh_a;
UPDATE inh_a SET aa = 'zzzz' WHERE aa = 'aaaa';
UPDATE inh_a SET aa = aa || '!' WHERE aa = 'bbbb' RETURNING *;
DELETE FROM inh_a WHERE aa = 'zzzz' RETURNING tableoid::regclass, aa;
SELECT tableoid::regclass, * FROM inh_a ORDER BY aa;
-- A child added after a column with a default.
ALTER TABLE inh_a ADD COLUMN n int DEFAULT 42;
CREATE TABLE inh_c (cc int) INHERITS (inh_a);
INSERT INTO inh_c (aa, cc) VALUES ('cccc', 1);
UPDATE inh_a SET n = n + 1 RETURNING *;
SELECT tableoid::regclass, * FROM inh_a ORDER BY aa;
DROP TABLE inh_a CASCADE;

-- LATERAL: the inner scan gets the outer row's values as parameters.
CREATE TABLE lat_o (x int4, y int4);
INSERT INTO lat_o VALUES (1, 100), (2, 200);
CREATE TABLE lat_i (k int4, v int4);
INSERT INTO lat_i VALUES (1, -1), (2, -2);
ANALYZE lat_o, lat_i;
SELECT o.x, l.* FROM lat_o o LEFT JOIN LATERAL (SELECT o.y AS outer_y FROM lat_i i WHERE i.k = o.x) l ON true ORDER BY o.x;
EXPLAIN (COSTS OFF, VERBOSE) SELECT o.x, l.* FROM lat_o o LEFT JOIN LATERAL (SELECT o.y AS outer_y FROM lat_i i WHERE i.k = o.x) l ON true;
CREATE TABLE int4_tbl (f1 int4);
INSERT INTO int4_tbl VALUES (0), (123456), (-123456);
CREATE TABLE int2_tbl (f1 int2);
INSERT INTO int2_tbl VALUES (0), (1234), (-1234);
ANALYZE int4_tbl, int2_tbl;
SELECT * FROM int4_tbl i LEFT JOIN LATERAL (SELECT coalesce(i) FROM int2_tbl j WHERE i.f1 = j.f1) k ON true ORDER BY 1;
CREATE TABLE t2 (id int4 PRIMARY KEY, c1 int2, c2 uuid, c3 int2, c4 date, c5 float4,
                 c6 text, c7_txt text, c8 int4[], c9 bool, c10_i2 int2);
INSERT INTO t2 (id, c7_txt, c10_i2) VALUES (12, NULL, 8), (3, 'lambda', 2);
CREATE TABLE t3 (id int4 PRIMARY KEY, c2_f8 float8);
INSERT INTO t3 VALUES (33, -283336.8871494469);
ANALYZE t2, t3;
SELECT a.c7_txt, l.* FROM t2 AS a LEFT JOIN LATERAL (SELECT b.c2_f8 AS l1, a.c10_i2 AS l2
  FROM t3 AS b WHERE b.id = a.c10_i2 AND (780806.6::float8 <= b.c2_f8 OR b.id BETWEEN 11 AND 2147483647)) AS l ON true
  ORDER BY 1;
DROP TABLE lat_o, lat_i, int4_tbl, int2_tbl, t2, t3;

-- An error raised inside a ColumnarScan looks like PostgreSQL's own: no Rust backtrace
-- in its DETAIL, although the test server runs with RUST_BACKTRACE=1.
CREATE TABLE err_t (a int, pad text);
INSERT INTO err_t SELECT g % 1000, repeat('x', 200) FROM generate_series(1, 2000) g;
ANALYZE err_t;
-- (Core's filter: pushed, the division raises the same error from the scan's kernels.)
SET pgcolumnar.quals_push_down = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM err_t WHERE 1 / a > 0;
\set VERBOSITY verbose
SELECT count(*) FROM err_t WHERE 1 / a > 0;
\set VERBOSITY default
RESET pgcolumnar.quals_push_down;
DROP TABLE err_t;
RESET default_table_access_method;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
