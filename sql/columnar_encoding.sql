-- compress_for: what a columnar table's encodings are chosen for. Unset (or 'scan'),
-- full-precision doubles are stored as ALP_rd in FastLanes blocks, several times faster
-- to decode than the smaller lag-delta that 'size' picks; decimals and integers keep
-- their smallest codec either way. Vectors written under either choice keep reading,
-- and VACUUM FULL rewrites them under the table's current one.
CREATE EXTENSION pgcolumnar;
SET client_min_messages = warning;

-- Time-major readings of 16 series: full-precision random walks, two-decimal prices,
-- integer counters, a text host.
CREATE TABLE enc_src AS
SELECT i, 'host_' || (i % 16) AS host,
       50 + 40 * sin(i * 0.001 + (i % 16)) + (i % 16) * 1e-9 * i AS walk,
       round((i % 1000) * 0.37, 2)::float8 AS price,
       (i % 16) * 100000 + i / 16 AS counter
  FROM generate_series(1, 20000) i;
CREATE TABLE enc (LIKE enc_src) USING columnar;
INSERT INTO enc SELECT * FROM enc_src;
SELECT attname, encodings FROM pgcolumnar.stats('enc') ORDER BY attname;
SELECT stored_bytes AS scan_bytes FROM pgcolumnar.stats('enc') WHERE attname = 'walk' \gset

-- The same rows chosen for size; the option shows in pgcolumnar.options.
CREATE TABLE enc_small (LIKE enc_src) USING columnar WITH (compress_for = 'size');
INSERT INTO enc_small SELECT * FROM enc_src;
SELECT option, value FROM pgcolumnar.options WHERE relid = 'enc_small'::regclass;
SELECT attname, encodings FROM pgcolumnar.stats('enc_small') ORDER BY attname;
SELECT stored_bytes < :scan_bytes AS size_is_smaller,
       stored_bytes * 1.2 > :scan_bytes AS by_less_than_a_fifth
  FROM pgcolumnar.stats('enc_small') WHERE attname = 'walk';

-- Every value reads back exactly, bit for bit, under both.
SELECT count(*) AS rows,
       bool_and(s.walk::text = a.walk::text AND s.walk::text = b.walk::text) AS walks_equal,
       bool_and(s.price = a.price AND s.price = b.price) AS prices_equal,
       bool_and(s.counter = a.counter AND s.counter = b.counter) AS counters_equal
  FROM enc_src s JOIN enc a USING (i) JOIN enc_small b USING (i);
SELECT round(sum(walk)::numeric, 6) = (SELECT round(sum(walk)::numeric, 6) FROM enc_src WHERE walk > 20) AS sums_equal,
       min(walk), max(price)
  FROM enc_small WHERE walk > 20;

-- Vectors written under one choice keep reading after the option changes; new writes
-- and VACUUM FULL follow the new one.
ALTER TABLE enc_small RESET (compress_for);
SELECT count(*) FROM pgcolumnar.options WHERE relid = 'enc_small'::regclass;
INSERT INTO enc_small SELECT i + 20000, host, walk, price, counter FROM enc_src WHERE i <= 5000;
SELECT attname, encodings FROM pgcolumnar.stats('enc_small') WHERE attname = 'walk';
SELECT count(*), count(DISTINCT b.i) AS ids, bool_and(s.walk::text = b.walk::text) AS walks_equal
  FROM enc_small b JOIN enc_src s ON s.i = CASE WHEN b.i > 20000 THEN b.i - 20000 ELSE b.i END;
VACUUM FULL enc_small;
SELECT attname, encodings FROM pgcolumnar.stats('enc_small') WHERE attname = 'walk';
SELECT bool_and(s.walk::text = b.walk::text) AS walks_equal_after_rewrite
  FROM enc_src s JOIN enc_small b USING (i);
ALTER TABLE enc SET (compress_for = SIZE);
VACUUM FULL enc;
SELECT attname, encodings FROM pgcolumnar.stats('enc') WHERE attname = 'walk';
ALTER TABLE enc SET (compress_for = 'scan');
SELECT option, value FROM pgcolumnar.options WHERE relid = 'enc'::regclass;

-- A text column of 400 hosts in every vector: each vector's dictionary entries are the
-- same bytes, compressed as a zstd frame of their own (+zstdprefix) that a scan
-- decompresses once for a run of vectors; under 'size', with the codes in one frame.
CREATE TABLE enc_hosts USING columnar AS
SELECT i, 'host_' || (i % 400) AS host FROM generate_series(1, 30000) i;
SELECT encodings FROM pgcolumnar.stats('enc_hosts') WHERE attname = 'host';
EXPLAIN (COSTS OFF) SELECT host, count(*), max(i) FROM enc_hosts GROUP BY host;
CREATE TEMP TABLE enc_hosts_expected AS
SELECT 'host_' || (i % 400) AS host, count(*) AS n, max(i) AS mx FROM generate_series(1, 30000) i GROUP BY 1;
SELECT count(*) AS groups, bool_and(e.n = h.n AND e.mx = h.mx) AS groups_equal
  FROM (SELECT host, count(*) AS n, max(i) AS mx FROM enc_hosts GROUP BY host) h JOIN enc_hosts_expected e USING (host);
SELECT count(*), min(host), max(host) FROM enc_hosts WHERE host LIKE 'host_39%';
SELECT host FROM enc_hosts WHERE i IN (1, 12345, 30000) ORDER BY i;
ALTER TABLE enc_hosts SET (compress_for = 'size');
VACUUM FULL enc_hosts;
SELECT encodings FROM pgcolumnar.stats('enc_hosts') WHERE attname = 'host';
SELECT count(*) AS groups, bool_and(e.n = h.n AND e.mx = h.mx) AS groups_equal
  FROM (SELECT host, count(*) AS n, max(i) AS mx FROM enc_hosts GROUP BY host) h JOIN enc_hosts_expected e USING (host);
DROP TABLE enc_hosts;

-- Errors: a value that is neither, a heap table, a role that does not own the table.
\set VERBOSITY sqlstate
ALTER TABLE enc SET (compress_for = 'fast');
ALTER TABLE enc SET (compress_for);
CREATE TABLE enc_bad (i int) USING columnar WITH (compress_for = 'small');
ALTER TABLE enc_src SET (compress_for = 'size');
\set VERBOSITY default
ALTER TABLE enc SET (compress_for = 'fast');
ALTER TABLE enc_src SET (compress_for = 'size');
CREATE ROLE enc_owner;
CREATE ROLE enc_other;
CREATE TABLE enc_owned (x float8) USING columnar;
ALTER TABLE enc_owned OWNER TO enc_owner;
GRANT SELECT, INSERT ON enc_owned TO enc_other;
SET ROLE enc_other;
ALTER TABLE enc_owned SET (compress_for = 'size');
INSERT INTO enc_owned SELECT walk FROM (VALUES (1.0 / 3), (2.0 / 3)) v(walk);
RESET ROLE;
SET ROLE enc_owner;
ALTER TABLE enc_owned SET (compress_for = 'size');
INSERT INTO enc_owned SELECT 50 + 40 * sin(i * 0.01) FROM generate_series(1, 3000) i;
SELECT count(*), round(sum(x)::numeric, 6) FROM enc_owned;
RESET ROLE;
SELECT option, value FROM pgcolumnar.options WHERE relid = 'enc_owned'::regclass;

-- Partitions take it per partition; the partitioned parent has no storage.
CREATE TABLE enc_parts (k int, v float8) PARTITION BY RANGE (k);
CREATE TABLE enc_p1 PARTITION OF enc_parts FOR VALUES FROM (0) TO (10000) USING columnar
  WITH (compress_for = 'size');
CREATE TABLE enc_p2 PARTITION OF enc_parts FOR VALUES FROM (10000) TO (20000) USING columnar;
INSERT INTO enc_parts SELECT i, walk FROM enc_src WHERE i < 20000;
SELECT relid, option, value FROM pgcolumnar.options WHERE relid::text LIKE 'enc_p%' ORDER BY 1::text;
SELECT (SELECT encodings FROM pgcolumnar.stats('enc_p1') WHERE attname = 'v') AS p1,
       (SELECT encodings FROM pgcolumnar.stats('enc_p2') WHERE attname = 'v') AS p2;
SELECT count(*), bool_and(s.walk::text = p.v::text) AS walks_equal
  FROM enc_parts p JOIN enc_src s ON s.i = p.k;

-- An inheritance child takes it as a table of its own; its heap parent refuses it.
CREATE TABLE enc_inh (k int, v float8);
CREATE TABLE enc_inh_child () INHERITS (enc_inh) USING columnar;
ALTER TABLE enc_inh_child SET (compress_for = 'size');
ALTER TABLE enc_inh SET (compress_for = 'size');
INSERT INTO enc_inh_child SELECT i, walk FROM enc_src WHERE i <= 4096;
SELECT encodings FROM pgcolumnar.stats('enc_inh_child') WHERE attname = 'v';
SELECT count(*), bool_and(s.walk::text = p.v::text) AS walks_equal
  FROM enc_inh p JOIN enc_src s ON s.i = p.k;

DROP TABLE enc, enc_small, enc_src, enc_owned, enc_parts, enc_inh CASCADE;
DROP ROLE enc_owner;
DROP ROLE enc_other;
DROP EXTENSION pgcolumnar;
