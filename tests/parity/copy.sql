-- COPY FROM: the types and forms COPY reads (text and CSV, NULLs, escapes, quoting,
-- column lists), the errors it raises with their context (line, column, value), and
-- loads large enough for several batches and row groups. Columnar tables parse many of
-- them apart from PostgreSQL's COPY (src/storage/glue/copy_from.rs): the answers must be
-- the same.
CREATE TABLE cp (i2 int2, i4 int4, i8 int8, f4 float4, f8 float8, b bool, d date, ts timestamp,
                 tz timestamptz, t text, vc varchar(5), n numeric(10,2), ch char(3), u uuid, j jsonb, a int[]);
COPY cp FROM STDIN;
1	2	3	1.5	2.25	t	2024-01-01	2024-01-01 10:00:00	2024-01-01 10:00:00+00	one	v1	1.50	abc	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11	{"a": 1}	{1,2}
-32768	-2147483648	-9223372036854775808	-3.4028235e38	-1.7976931348623157e308	f	0001-01-01	1999-12-31 23:59:59.999999	2000-01-01 00:00:00.5-08	tab\there	new\nl	-99.99	x	00000000-0000-0000-0000-000000000000	[]	{}
32767	2147483647	9223372036854775807	1e-45	4.9e-324	true	9999-12-31	2000-02-29T12:00:00	2024-06-30 23:59:59+05:30	back\\slash	ünï	0	  	ffffffff-ffff-ffff-ffff-ffffffffffff	null	{NULL}
\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N	\N
 42 	+7	-0	NaN	-Infinity	yes	01/02/2024	2024-01-01 10:00	2024-01-01 10:00:00 America/New_York		abcd 	1e2	ab	A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11	{"k": [1, "x"]}	{{1},{2}}
0	0	0	-0	0x1p3	F	2024-02-29	2024-01-01 10:00:00+05	2024-01-01T10:00:00Z	☃	☃☃☃☃☃	0.005	é	a0eebc999c0b4ef8bb6d6bb9bd380a11	1	{3}
1	1	1	0e-400	1.000000000000000000001	1	1999-01-08	1999-01-08 04:05:06.123456789	2024-01-01 10:00:00.1234567+00	\N	\\N	1	a	a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11	"s"	{-1}
\.
SELECT * FROM cp ORDER BY i4 NULLS LAST, f4;
SELECT i4, f4::text, f8::text, tz AT TIME ZONE 'UTC' AS utc, length(vc), octet_length(t) FROM cp ORDER BY i4 NULLS LAST, f4;

-- CSV: a header, quotes, delimiters and newlines inside fields, empty strings and NULLs.
CREATE TABLE cv (id int NOT NULL, name text, score float8, at timestamptz);
COPY cv FROM STDIN WITH (FORMAT csv, HEADER);
id,name,score,at
1,"Smith, J.",1.5,2024-01-01 00:00:00+00
2,"two
lines",2.5,2024-01-02 00:00:00+00
3,"",,
4,,3e2,"2024-01-03 00:00:00+00"
5,"say ""hi""",-0.5,2024-01-04 12:30:00-02
\.
COPY cv FROM STDIN WITH (FORMAT csv, DELIMITER ';', NULL 'NA', QUOTE '''');
6;'semi;colon';NA;NA
7;NA;7;2024-01-05 00:00:00+00
\.
SELECT id, name, name IS NULL AS null_name, score, at FROM cv ORDER BY id;

-- Column lists: the others NULL, or their defaults (PostgreSQL's COPY fills those in).
CREATE TABLE cl (a int, b text, c float8, d int DEFAULT 7);
COPY cl (c, a) FROM STDIN;
1.5	1
2.5	2
\.
COPY cl (a) FROM STDIN WITH (FORMAT csv);
3
\.
SELECT * FROM cl ORDER BY a;

-- Errors, each with the line, column and value PostgreSQL names.
CREATE TABLE ce (id int NOT NULL, v float8, d date, s varchar(3));
COPY ce FROM STDIN;
1	1.5	2024-01-01	a
2	abc	2024-01-01	b
\.
COPY ce FROM STDIN;
1	1.5	2024-01-01	a
2	1e400	2024-01-01	b
\.
COPY ce FROM STDIN;
1	1e-400	2024-01-01	a
\.
COPY ce FROM STDIN;
1	1	2023-02-29	a
\.
COPY ce FROM STDIN;
1	1	2024-01-01	abcd
\.
COPY ce FROM STDIN;
99999999999	1	2024-01-01	a
\.
COPY ce FROM STDIN;
1	1	2024-01-01	a	extra
\.
COPY ce FROM STDIN;
1	1	2024-01-01	a
2	2
\.
COPY ce FROM STDIN;
1	x	2024-01-01
\.
COPY ce FROM STDIN;
1	1	2024-01-01	a
\N	2	2024-01-02	b
\.
COPY ce (v, d) FROM STDIN;
1	2024-01-01
\.
COPY ce FROM STDIN WITH (FORMAT csv);
1,1,2024-01-01,a
2,"not
a number",2024-01-01,b
\.
COPY ce FROM STDIN WITH (FORMAT csv);
1,1,2024-01-01,"a
b"
2,2,2024-13-01,b
\.
SELECT count(*) FROM ce;
CREATE DOMAIN nonnull_text AS text NOT NULL;
CREATE TABLE cdom (id int, v nonnull_text);
COPY cdom FROM STDIN;
1	a
2	\N
\.
SELECT count(*) FROM cdom;

-- A load of several batches and row groups, from a program, and in transactions.
CREATE TABLE big (id int, x float8, at timestamptz, host text, flag bool);
COPY big FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 150000; i++) printf "%d,%.6f,2024-01-%02d %02d:%02d:00+00,host_%d,%s\n", i, i / 7, i % 28 + 1, i % 24, i % 60, i % 13, (i % 3 ? "t" : "f") }''' WITH (FORMAT csv);
SELECT count(*), sum(id), sum(x)::numeric(20,4), min(at), max(at), count(DISTINCT host), count(*) FILTER (WHERE flag) FROM big;
SELECT * FROM big WHERE id IN (1, 65536, 65537, 102400, 102401, 150000) ORDER BY id;
BEGIN;
COPY big (id) FROM PROGRAM 'seq 150001 150100';
SAVEPOINT s;
COPY big (id) FROM PROGRAM 'printf "1\nnot a number\n"';
ROLLBACK TO s;
COPY big (id, host) FROM STDIN;
150101	after
\.
SELECT count(*), max(id), count(host) FROM big;
COMMIT;
SELECT count(*), max(id), count(*) FILTER (WHERE host = 'after') FROM big;

-- Indexes: entries for every row, uniqueness within the COPY and against the table.
CREATE TABLE cpk (id int PRIMARY KEY, name text UNIQUE, v float8, at date);
CREATE INDEX cpk_v ON cpk (v) WHERE v > 0;
COPY cpk FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 80000; i++) printf "%d\tn%d\t%.3f\t2024-%02d-%02d\n", i, i, (i % 11) - 5.5, i % 12 + 1, i % 28 + 1 }''';
COPY cpk FROM STDIN;
80001	dup	1	2024-01-01
80002	dup	2	2024-01-01
\.
COPY cpk FROM STDIN;
80003	fresh	1	2024-01-01
17	n17b	1	2024-01-01
\.
COPY cpk FROM STDIN WITH (FORMAT csv);
80004,"quoted, name",0.5,2024-02-02
\.
SET enable_seqscan = off;
SELECT * FROM cpk WHERE id IN (1, 17, 65536, 65537, 80000, 80004) ORDER BY id;
SELECT id, v FROM cpk WHERE name IN ('n5', 'n70000', 'quoted, name') ORDER BY id;
SELECT count(*), sum(id) FROM cpk WHERE v > 4;
RESET enable_seqscan;
SELECT count(*), sum(id), count(DISTINCT name) FROM cpk;

-- char(n): padded, trailing spaces cut, too long refused, multibyte characters.
CREATE TABLE cch (id int, c char(3), cu char, cv varchar(2));
COPY cch FROM STDIN;
1	a	x	ab
2	abc  	y	a
3	ab 	z	
4	é	é	éé
5		 	\N
\.
COPY cch FROM STDIN;
6	abcd	x	a
\.
COPY cch FROM STDIN;
7	a	x	abc
\.
SELECT id, c, length(c), octet_length(c), c = 'a' AS is_a, cu, octet_length(cu), cv FROM cch ORDER BY id;
