-- COPY FROM into columnar tables: parsed a batch at a time, columns in parallel
-- (pgcolumnar.parallel_copy_rows() counts the rows loaded so), giving PostgreSQL's
-- errors (and context: pgrx drops CONTEXT lines of errors in utility statements, so they
-- do not show here); what that path does not do exactly like
-- PostgreSQL's COPY goes to PostgreSQL's COPY. tests/parity/copy.sql compares the rows.
CREATE EXTENSION pgcolumnar;
CREATE EXTENSION IF NOT EXISTS amcheck;
\set SHOW_CONTEXT always
CREATE FUNCTION copied() RETURNS bigint LANGUAGE sql AS $$
  SELECT pgcolumnar.parallel_copy_rows() - coalesce(current_setting('test.copied', true), '0')::bigint $$;
CREATE FUNCTION copied_reset() RETURNS void LANGUAGE sql AS $$
  SELECT set_config('test.copied', pgcolumnar.parallel_copy_rows()::text, false) $$;
CREATE TABLE c (id int NOT NULL, v float8, at timestamptz, s varchar(3)) USING columnar;
CREATE TABLE h (id int NOT NULL, v float8, at timestamptz, s varchar(3)) USING heap;
SELECT copied_reset();
COPY c FROM STDIN;
1	1.5	2024-01-01 00:00:00+00	a
2	NaN	2024-01-01 10:00 Europe/Paris	bb
\.
COPY c FROM STDIN WITH (FORMAT csv, HEADER match);
id,v,at,s
3,-2.5,2024-01-02 00:00:00-05,ccc
\.
SELECT copied();
SELECT * FROM c ORDER BY id;

-- Errors: the same message and context as for a heap table (each COPY twice).
COPY h FROM STDIN;
1	1	2024-01-01 00:00:00+00	a
2	oops	2024-01-01 00:00:00+00	b
\.
COPY c FROM STDIN;
1	1	2024-01-01 00:00:00+00	a
2	oops	2024-01-01 00:00:00+00	b
\.
COPY h FROM STDIN WITH (FORMAT csv);
1,1,2024-01-01 00:00:00+00,"x
y"
2,2,not a time,b
\.
COPY c FROM STDIN WITH (FORMAT csv);
1,1,2024-01-01 00:00:00+00,"x
y"
2,2,not a time,b
\.
COPY h FROM STDIN;
1	1	2024-01-01 00:00:00+00	abcd
\.
COPY c FROM STDIN;
1	1	2024-01-01 00:00:00+00	abcd
\.
COPY h FROM STDIN;
1	1	2024-01-01 00:00:00+00	a	extra
\.
COPY c FROM STDIN;
1	1	2024-01-01 00:00:00+00	a	extra
\.
COPY h FROM STDIN;
1	bad
\.
COPY c FROM STDIN;
1	bad
\.
COPY h FROM STDIN;
1	1	2024-01-01 00:00:00+00	a
\N	2	2024-01-01 00:00:00+00	b
\.
COPY c FROM STDIN;
1	1	2024-01-01 00:00:00+00	a
\N	2	2024-01-01 00:00:00+00	b
\.
CREATE DOMAIN present AS text NOT NULL;
CREATE TABLE dh (id int, p present);
CREATE TABLE dc (id int, p present) USING columnar;
COPY dh FROM STDIN;
1	\N
\.
COPY dc FROM STDIN;
1	\N
\.
SELECT count(*) FROM c;

-- Indexes: their entries made row by row, uniqueness checked within the COPY and
-- against the table, as for heap; the index answers as the table does.
SELECT copied_reset();
CREATE TABLE c_idx (id int PRIMARY KEY, v float8, tag text, u uuid) USING columnar;
CREATE INDEX c_idx_tag ON c_idx (tag) WHERE v > 0;
CREATE INDEX c_idx_lower ON c_idx (lower(tag));
CREATE UNIQUE INDEX c_idx_u ON c_idx (u);
COPY c_idx (id, v, tag) FROM PROGRAM 'seq 1 70000 | awk ''{ print $1 "\t" ($1 % 5) - 2 "\tTag" $1 % 100 }''';
COPY c_idx FROM STDIN;
70001	1	x	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
70002	1	y	00000000-0000-0000-0000-000000000000
\.
SELECT copied();
COPY c_idx (id) FROM STDIN;
70003
70003
\.
COPY c_idx (id) FROM STDIN;
5
\.
CREATE TABLE h_idx (id int PRIMARY KEY, u uuid UNIQUE);
COPY h_idx FROM STDIN;
1	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
2	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
\.
COPY c_idx (id, u) FROM STDIN;
70004	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11
\.
SET enable_seqscan = off;
SET pgcolumnar.enable_columnar_scan = off;
EXPLAIN (COSTS OFF) SELECT count(*), sum(id) FROM c_idx WHERE tag = 'Tag8' AND v > 0;
SELECT count(*), sum(id) FROM c_idx WHERE tag = 'Tag8' AND v > 0;
SELECT count(*), sum(id) FROM c_idx WHERE lower(tag) = 'tag7';
SELECT id, tag FROM c_idx WHERE id IN (1, 65536, 65537, 70000, 70002) ORDER BY id;
SELECT id FROM c_idx WHERE u = '00000000-0000-0000-0000-000000000000';
RESET enable_seqscan;
RESET pgcolumnar.enable_columnar_scan;
SELECT count(*), sum(id), count(*) FILTER (WHERE v > 0 AND tag = 'Tag8') FROM c_idx;
-- amcheck: each index holds exactly the table's rows (heapallindexed).
SELECT count(*) AS indexes_checked FROM pg_index, LATERAL bt_index_check(indexrelid, true) WHERE indrelid = 'c_idx'::regclass;

-- What goes to PostgreSQL's COPY instead: nothing counted, the same rows.
SELECT copied_reset();
CREATE TABLE c_check (id int CHECK (id > 0), v float8) USING columnar;
COPY c_check FROM STDIN;
1	1
\.
CREATE TABLE c_default (id int, v float8 DEFAULT 42) USING columnar;
COPY c_default (id) FROM STDIN;
1
\.
CREATE TABLE c_trig (id int, v float8) USING columnar;
CREATE FUNCTION double_v() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v := NEW.v * 2; RETURN NEW; END $$;
CREATE TRIGGER c_trig_double BEFORE INSERT ON c_trig FOR EACH ROW EXECUTE FUNCTION double_v();
COPY c_trig FROM STDIN;
1	1.5
\.
CREATE TABLE c_plain (id int, v float8) USING columnar;
COPY c_plain FROM STDIN WITH (FORMAT csv, FORCE_NULL (v));
1,""
\.
COPY c_plain FROM STDIN WHERE id > 1;
1	1
2	2
\.
CREATE TABLE c_parted (id int) PARTITION BY RANGE (id);
CREATE TABLE c_part1 PARTITION OF c_parted FOR VALUES FROM (0) TO (10) USING columnar;
COPY c_part1 FROM STDIN;
5
\.
COPY c_part1 FROM STDIN;
50
\.
COPY c_parted FROM STDIN;
6
\.
SET pgcolumnar.enable_parallel_copy = off;
COPY c_plain FROM STDIN;
3	3
\.
RESET pgcolumnar.enable_parallel_copy;
SELECT copied();
SELECT * FROM c_check; SELECT * FROM c_default; SELECT * FROM c_trig;
SELECT * FROM c_plain ORDER BY id;
SELECT * FROM c_parted ORDER BY id;
-- Refusals stay PostgreSQL's: row-level security, read-only transactions.
ALTER TABLE c_plain ENABLE ROW LEVEL SECURITY;
CREATE ROLE regress_copy_user;
GRANT INSERT ON c_plain TO regress_copy_user;
SET ROLE regress_copy_user;
COPY c_plain FROM STDIN;
4	4
\.
RESET ROLE;
ALTER TABLE c_plain DISABLE ROW LEVEL SECURITY;
BEGIN READ ONLY;
COPY c_plain FROM STDIN;
4	4
\.
ROLLBACK;

-- An ordinary role: with INSERT on the table, the parallel path; with INSERT on some
-- columns only, PostgreSQL's COPY (which checks them); without, PostgreSQL's error.
SELECT copied_reset();
CREATE TABLE c_roles (id int, v float8, secret text) USING columnar;
GRANT INSERT ON c_roles TO regress_copy_user;
CREATE ROLE regress_copy_cols;
GRANT INSERT (id, v) ON c_roles TO regress_copy_cols;
SET ROLE regress_copy_user;
COPY c_roles FROM STDIN;
1	1.5	s
\.
RESET ROLE;
SELECT copied();
SET ROLE regress_copy_cols;
COPY c_roles (id, v) FROM STDIN;
2	2.5
\.
COPY c_roles FROM STDIN;
3	3.5	s
\.
RESET ROLE;
SELECT copied();
SELECT * FROM c_roles ORDER BY id;

-- An inheritance child takes the parallel path; its parent (heap) sees the rows.
SELECT copied_reset();
CREATE TABLE c_parent (id int, v float8);
CREATE TABLE c_child (note text) INHERITS (c_parent) USING columnar;
COPY c_child FROM STDIN;
1	1.5	a
2	2.5	b
\.
SELECT copied();
SELECT tableoid::regclass, * FROM c_parent ORDER BY id;

-- Savepoints and reading one's own rows.
SELECT copied_reset();
BEGIN;
COPY c_plain (id) FROM PROGRAM 'seq 10 20009';
SAVEPOINT s;
COPY c_plain (id) FROM PROGRAM 'seq 20010 30009';
SELECT count(*) FROM c_plain;
ROLLBACK TO s;
SELECT count(*), min(id), max(id) FROM c_plain;
COMMIT;
SELECT copied();

DROP TABLE c, h, dh, dc, c_idx, h_idx, c_check, c_default, c_trig, c_plain, c_roles, c_parted, c_child, c_parent;
DROP DOMAIN present;
DROP FUNCTION copied(), copied_reset(), double_v();
DROP ROLE regress_copy_user, regress_copy_cols;
DROP EXTENSION pgcolumnar;
DROP EXTENSION amcheck;
DROP SCHEMA pgcolumnar;
