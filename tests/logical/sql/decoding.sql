-- Logical decoding of columnar tables (wal_level = logical, logical_decoding_work_mem
-- = 64kB, so that large transactions spill to disk and can be streamed).
-- The same workload runs on heap tables (schema h) and on columnar tables (schema c):
-- test_decoding must show the same change stream for both, apart from the schema name,
-- and no change of pgcolumnar's metadata tables.
CREATE EXTENSION pgcolumnar;
CREATE SCHEMA h;
CREATE SCHEMA c;

-- A row trigger that writes a heap table, and a function that inserts into another
-- table inside a subtransaction (an exception block) kept or rolled back: the workload
-- calls both from the rows of one INSERT.
CREATE FUNCTION audit_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('INSERT INTO %I.audit (what) VALUES ($1)', TG_TABLE_SCHEMA) USING 'before ' || NEW.a;
    RETURN NEW;
END $$;
-- A row trigger that changes the key of the row an UPDATE writes: the old key is
-- logged although the statement did not set it.
CREATE FUNCTION rekey_row() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.v = 'rekey' THEN
        NEW.k := NEW.k + 1000;
    END IF;
    RETURN NEW;
END $$;
CREATE FUNCTION checked(s text, g int) RETURNS int
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE format('INSERT INTO %I.nested VALUES ($1)', s) USING g;
        IF g % 3 = 0 THEN
            RAISE EXCEPTION 'undo %', g;
        END IF;
    EXCEPTION WHEN raise_exception THEN
        RETURN -g;
    END;
    RETURN g;
END $$;

-- The tables, made the same way in both schemas; only the access method differs.
CREATE PROCEDURE make_tables(s text, am text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SET LOCAL default_table_access_method = %I', am);
    EXECUTE format('SET LOCAL search_path = %I', s);
    CREATE TABLE t (id int PRIMARY KEY, v text, n numeric, ts timestamptz, b bool,
                    f float8, raw bytea, doc jsonb, tags text[], big text);
    CREATE TABLE no_key (a int, b text);
    CREATE TABLE full_id (a int, b text, c date);
    ALTER TABLE full_id REPLICA IDENTITY FULL;
    CREATE TABLE by_index (a int NOT NULL, b text, c int);
    CREATE UNIQUE INDEX by_index_a ON by_index (a);
    ALTER TABLE by_index REPLICA IDENTITY USING INDEX by_index_a;
    -- An identity key in the last column: an UPDATE or DELETE reads the row's other
    -- columns only if it logs the whole row.
    CREATE TABLE key_last (a int, b text, k int NOT NULL);
    CREATE UNIQUE INDEX key_last_k ON key_last (k);
    ALTER TABLE key_last REPLICA IDENTITY USING INDEX key_last_k;
    CREATE TABLE rekeyed (k int PRIMARY KEY, v text);
    CREATE TRIGGER rekey BEFORE UPDATE ON rekeyed FOR EACH ROW EXECUTE FUNCTION public.rekey_row();
    CREATE TABLE nothing_id (a int PRIMARY KEY, b text);
    ALTER TABLE nothing_id REPLICA IDENTITY NOTHING;
    CREATE TABLE dropped (a int PRIMARY KEY, gone text, b text);
    ALTER TABLE dropped DROP COLUMN gone;
    CREATE TABLE parted (k int PRIMARY KEY, v text) PARTITION BY RANGE (k);
    EXECUTE format('CREATE TABLE parted_low PARTITION OF parted FOR VALUES FROM (0) TO (100) USING %I', am);
    EXECUTE format('CREATE TABLE parted_high PARTITION OF parted FOR VALUES FROM (100) TO (200) USING %I', am);
    CREATE TABLE inh_parent (a int PRIMARY KEY, b text);
    CREATE TABLE inh_child (c int) INHERITS (inh_parent);
    ALTER TABLE inh_child ADD PRIMARY KEY (a);
    CREATE TABLE ddl (a int PRIMARY KEY, b text);
    CREATE TABLE copied (a int, b text, c float8, d date);
    CREATE TABLE trig (a int PRIMARY KEY, b int);
    CREATE TRIGGER trig_audit BEFORE INSERT ON trig FOR EACH ROW EXECUTE FUNCTION public.audit_row();
    CREATE TABLE audit (n int GENERATED ALWAYS AS IDENTITY, what text) USING heap;
    CREATE TABLE nested (a int PRIMARY KEY);
    -- Every way heap lays a value out: 1- and 2-byte values, fixed-width values by
    -- reference (uuid, macaddr, interval, point, name), short and long varlenas, a text
    -- column stored PLAIN (never given a 1-byte header), NULLs between them.
    CREATE TABLE widths (id int PRIMARY KEY, c "char", s int2, u uuid, mac macaddr,
                         i interval, p point, nm name, pl text, tz timetz, v varchar(300));
    ALTER TABLE widths ALTER pl SET STORAGE PLAIN;
    ALTER TABLE widths REPLICA IDENTITY FULL;
    -- Stored in key order on columnar: each row group's rows lie sorted.
    CREATE TABLE sorted (k int PRIMARY KEY, v text, n numeric);
    IF am = 'columnar' THEN
        ALTER TABLE sorted SET (sort_by = 'k');
    END IF;
END $$;
CALL make_tables('h', 'heap');
CALL make_tables('c', 'columnar');
SELECT n.nspname, c.relname, a.amname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_am a ON a.oid = c.relam
WHERE n.nspname IN ('h', 'c') AND c.relkind = 'r' ORDER BY 1, 2;

-- Every kind of change: transactions, subtransactions rolled back or kept, aborts,
-- upserts, MERGE, COPY, updates of keys and of other columns under each replica
-- identity, deletes, TRUNCATE, a transaction larger than logical_decoding_work_mem.
CREATE PROCEDURE workload(s text)
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('SET search_path = %I', s);
    INSERT INTO t VALUES
        (1, 'one', 1.50, '2024-01-02 03:04:05+00', true, 0.5, '\x00ff', '{"a": [1, 2]}', '{x,y}', NULL),
        (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        (3, 'three', -3, 'infinity', false, 'NaN', '', '[]', '{}', repeat('long value ', 300));
    COMMIT;
    INSERT INTO t (id, v, n) SELECT g, 'row ' || g, g / 7.0 FROM generate_series(10, 29) g;
    INSERT INTO widths VALUES
        (1, 'a', 7, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '08:00:2b:01:02:03', '1 day 2 hours',
         '(1.5,-2)', 'a name', 'plain', '04:05:06+02', repeat('v', 200)),
        (2, NULL, -1, NULL, '08:00:2b:01:02:04', NULL, NULL, 'other', NULL, NULL, 'short'),
        (3, 'z', NULL, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12', NULL, '-3 months', '(0,0)', NULL,
         repeat('p', 150), '23:59:59-11', NULL);
    COPY widths FROM PROGRAM 'printf "4\tq\t2\t\\\\N\t01:02:03:04:05:06\t1 second\t(3,4)\tcopied\tp\t00:00:00+00\tw\n"';
    UPDATE widths SET s = 8, pl = 'changed' WHERE id = 1;
    DELETE FROM widths WHERE id = 3;
    COMMIT;
    UPDATE t SET v = 'changed', f = 2.5 WHERE id = 1;
    UPDATE t SET id = 100 WHERE id = 2;
    DELETE FROM t WHERE id IN (3, 10);
    COMMIT;
    -- Subtransactions: the first is rolled back, the second kept.
    INSERT INTO t (id, v) VALUES (200, 'before savepoint');
    BEGIN
        INSERT INTO t (id, v) VALUES (201, 'rolled back');
        UPDATE t SET v = 'rolled back too' WHERE id = 1;
        -- A COPY big enough for its change records to be laid out on another thread,
        -- under the subtransaction's xid: rolled back with it.
        COPY copied (a) FROM PROGRAM 'seq 9001 14000';
        RAISE EXCEPTION 'undo';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    BEGIN
        INSERT INTO t (id, v) VALUES (202, 'kept subtransaction');
        DELETE FROM t WHERE id = 11;
        COPY copied (a) FROM PROGRAM 'seq 20001 25000';
    END;
    COMMIT;
    INSERT INTO t (id, v) VALUES (300, 'aborted');
    DELETE FROM t WHERE id = 12;
    ROLLBACK;
    -- Upserts and MERGE.
    INSERT INTO t (id, v) VALUES (13, 'conflict') ON CONFLICT (id) DO UPDATE SET v = 'upserted ' || excluded.v;
    INSERT INTO t (id, v) VALUES (14, 'ignored') ON CONFLICT DO NOTHING;
    INSERT INTO t (id, v) VALUES (400, 'inserted, no conflict') ON CONFLICT DO NOTHING;
    MERGE INTO t USING (VALUES (15, 'merge update'), (16, NULL), (401, 'merge insert')) AS m(id, v)
        ON t.id = m.id
        WHEN MATCHED AND m.v IS NULL THEN DELETE
        WHEN MATCHED THEN UPDATE SET v = m.v
        WHEN NOT MATCHED THEN INSERT (id, v) VALUES (m.id, m.v);
    COMMIT;
    COPY t (id, v) FROM PROGRAM 'printf "500\tcopied a\n501\t\\\\N\n502\tcopied c\n"';
    COMMIT;
    -- COPY into a table without indexes, text and CSV; 5,000 rows are enough for
    -- pgcolumnar's parallel parse to lay the rows' change records out on another thread.
    COPY copied FROM PROGRAM 'awk ''BEGIN { for (i = 1; i <= 5000; i++) printf "%d\t%s\t%.2f\t2024-01-%02d\n", i, (i % 10 ? "v" i : "\\N"), i / 3, i % 28 + 1 }''';
    COPY copied FROM PROGRAM 'printf "301,\"a, quoted\",1e300,2024-02-29\n302,,,\n"' (FORMAT csv);
    COMMIT;
    -- The rows of one INSERT, decoded in order with the changes its row trigger and the
    -- functions it calls make (in subtransactions, kept or rolled back), before a
    -- message the transaction emits next, and before a TRUNCATE.
    INSERT INTO trig SELECT g, public.checked(s, g) FROM generate_series(1, 7) g;
    PERFORM pg_logical_emit_message(true, 'test', 'after the insert');
    -- The same with the functions' subtransactions writing to the table the statement
    -- inserts into: each outer row follows a kept or rolled-back row of a
    -- subtransaction, with another xid.
    INSERT INTO nested SELECT 1000 + public.checked(s, g) FROM generate_series(11, 14) g;
    INSERT INTO nested VALUES (100), (101);
    TRUNCATE nested;
    INSERT INTO nested VALUES (102);
    COMMIT;
    -- Replica identities.
    INSERT INTO no_key VALUES (1, 'a'), (2, 'b');
    INSERT INTO full_id VALUES (1, 'a', '2020-01-01'), (2, NULL, NULL);
    INSERT INTO by_index VALUES (1, 'a', 10), (2, 'b', 20);
    INSERT INTO nothing_id VALUES (1, 'a'), (2, 'b');
    INSERT INTO key_last VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30);
    INSERT INTO rekeyed VALUES (1, 'x'), (2, 'y');
    INSERT INTO dropped VALUES (1, 'a'), (2, 'b');
    -- COPY of whole rows: past a dropped column, and of types parsed in Rust and by
    -- input functions (numeric, jsonb, an array).
    COPY dropped FROM PROGRAM 'printf "3\tcopied\n4\t\\\\N\n"';
    COPY t FROM PROGRAM 'printf "600\tall\t-12.50\t2024-03-04 05:06:07+00\tt\t1.25\t\\\\N\t{\"k\": [1, 2]}\t{a,\"b c\"}\tbig\n"';
    COMMIT;
    -- Through index scans where there is an index: a DELETE logs the identity of the
    -- row its scan holds, an UPDATE that of the old row it fetched (read where they are,
    -- on columnar).
    SET LOCAL enable_seqscan = off;
    SET LOCAL enable_bitmapscan = off;
    SET LOCAL pgcolumnar.enable_columnar_scan = off;
    UPDATE no_key SET b = 'bb' WHERE a = 2;
    DELETE FROM no_key WHERE a = 1;
    UPDATE full_id SET b = 'changed' WHERE a = 1;
    DELETE FROM full_id WHERE a = 2;
    UPDATE by_index SET b = 'not the key' WHERE a = 1;
    UPDATE by_index SET a = 3 WHERE a = 2;
    DELETE FROM by_index WHERE a = 1;
    UPDATE nothing_id SET b = 'bb' WHERE a = 2;
    DELETE FROM nothing_id WHERE a = 1;
    UPDATE key_last SET b = 'not the key' WHERE k = 10;
    UPDATE key_last SET k = 21, b = 'key changed' WHERE k = 20;
    DELETE FROM key_last WHERE k = 30;
    DELETE FROM key_last WHERE k = 10;
    UPDATE rekeyed SET v = 'rekey' WHERE k = 1;
    UPDATE rekeyed SET v = 'same key' WHERE k = 2;
    UPDATE dropped SET b = 'bb' WHERE a = 2;
    DELETE FROM dropped WHERE a = 1;
    COMMIT;
    -- Inserted rows wait in a columnar write buffer and reach the WAL with their row
    -- group, unless something else is logged first: the first statement's rows go out
    -- when the second, which reads the table, starts; the second's before the next
    -- change (of another table), before a transactional message, and at the commit.
    -- On a sort_by table they are decoded as inserted, not in the order stored.
    INSERT INTO sorted SELECT g, 'sorted ' || g, g / 3.0 FROM generate_series(20, 1, -1) g;
    INSERT INTO sorted VALUES (25, NULL, 1.5), (21, 'x', NULL);
    INSERT INTO nested VALUES (500);
    INSERT INTO sorted VALUES (24, 'after another table', 2);
    PERFORM pg_logical_emit_message(true, 'marker', 'between');
    INSERT INTO sorted VALUES (23, 'after a message', 3), (22, NULL, NULL);
    COMMIT;
    -- Partitions, and a row moving between them.
    INSERT INTO parted VALUES (1, 'low'), (150, 'high');
    UPDATE parted SET k = 120 WHERE k = 1;
    COMMIT;
    -- Inheritance: rows of the parent and of the child, changed through the parent.
    INSERT INTO inh_parent VALUES (1, 'parent');
    INSERT INTO inh_child VALUES (2, 'child', 20);
    UPDATE inh_parent SET b = b || ' updated';
    DELETE FROM inh_parent WHERE a = 1;
    COMMIT;
    -- DDL between changes, in one transaction and across: added columns (with a
    -- default, without), a type change that rewrites the table, a dropped column.
    INSERT INTO ddl VALUES (1, 'before');
    ALTER TABLE ddl ADD COLUMN c int DEFAULT 7;
    INSERT INTO ddl VALUES (2, 'after add', 8);
    UPDATE ddl SET b = 'updated after add' WHERE a = 1;
    COMMIT;
    ALTER TABLE ddl ALTER COLUMN c TYPE bigint;
    UPDATE ddl SET c = c * 1000000000 WHERE a = 2;
    ALTER TABLE ddl ADD COLUMN d text;
    ALTER TABLE ddl DROP COLUMN b;
    INSERT INTO ddl VALUES (3, 3, 'three');
    DELETE FROM ddl WHERE a = 1;
    COMMIT;
    -- A column's storage changed between two transactions' rows (the columnar row
    -- groups' records describe the columns as they are when each is written).
    INSERT INTO ddl VALUES (4, 4, 'four');
    COMMIT;
    ALTER TABLE ddl ALTER d SET STORAGE PLAIN;
    INSERT INTO ddl VALUES (5, 5, 'five');
    COMMIT;
    -- Larger than logical_decoding_work_mem: spilled to disk by the decoder.
    INSERT INTO t (id, v, doc) SELECT g, md5(g::text), jsonb_build_object('g', g)
    FROM generate_series(1000, 2999) g;
    UPDATE t SET n = id WHERE id BETWEEN 1000 AND 1999;
    DELETE FROM t WHERE id BETWEEN 2000 AND 2499;
    COMMIT;
    -- Streamed while in progress, then aborted: nothing of it is applied.
    INSERT INTO t (id, v) SELECT g, 'aborted big' FROM generate_series(5000, 6999) g;
    ROLLBACK;
    TRUNCATE no_key, full_id;
    COMMIT;
    RESET search_path;
END $$;

-- Each schema's workload is read by three slots: test_decoding, test_decoding streaming
-- in-progress transactions, and pgoutput (publication of the schema's tables, protocol
-- 1, binary messages with relation OIDs, schema names, LSNs, times and xids taken out).
-- (Tables without a replica identity are left out: published, they could not be
-- updated, on columnar as on heap.)
CREATE PUBLICATION pub_h FOR TABLE h.t, h.copied, h.trig, h.audit, h.nested, h.full_id, h.by_index, h.key_last, h.rekeyed, h.dropped, h.parted, h.inh_parent, h.inh_child, h.ddl, h.sorted;
CREATE PUBLICATION pub_c FOR TABLE c.t, c.copied, c.trig, c.audit, c.nested, c.full_id, c.by_index, c.key_last, c.rekeyed, c.dropped, c.parted, c.inh_parent, c.inh_child, c.ddl, c.sorted;
CREATE TABLE stream (schema text, plugin text, n bigint, data text);
CREATE PROCEDURE collect(s text)
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO stream
    SELECT s, 'test_decoding', row_number() OVER (), replace(data, ' ' || s || '.', ' ?.')
    FROM pg_logical_slot_get_changes('td_' || s, NULL, NULL, 'include-xids', '0', 'skip-empty-xacts', '1');
    INSERT INTO stream
    SELECT s, 'streaming', row_number() OVER (), replace(data, ' ' || s || '.', ' ?.')
    FROM pg_logical_slot_get_changes('st_' || s, NULL, NULL, 'include-xids', '0', 'skip-empty-xacts', '1',
                                     'stream-changes', '1');
    INSERT INTO stream
    SELECT s, 'pgoutput', row_number() OVER (),
        CASE chr(get_byte(data, 0))
            WHEN 'B' THEN 'B'
            WHEN 'C' THEN 'C'
            WHEN 'R' THEN 'R ' || encode(substr(data, 7), 'hex')
            WHEN 'T' THEN 'T ' || encode(substr(data, 2, 5), 'hex')
            ELSE chr(get_byte(data, 0)) || ' ' || encode(substr(data, 6), 'hex')
        END
    FROM pg_logical_slot_get_binary_changes('po_' || s, NULL, NULL, 'proto_version', '1',
                                            'publication_names', 'pub_' || s);
END $$;
CREATE PROCEDURE make_slots(s text)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_create_logical_replication_slot('td_' || s, 'test_decoding');
    PERFORM pg_create_logical_replication_slot('st_' || s, 'test_decoding');
    PERFORM pg_create_logical_replication_slot('po_' || s, 'pgoutput');
END $$;

CALL make_slots('h');
CALL workload('h');
CALL collect('h');
CALL make_slots('c');
CALL workload('c');
-- Both COPYs of the columnar workload took pgcolumnar's parallel parse, which logs the
-- rows for decoding as PostgreSQL's COPY does.
SELECT pgcolumnar.parallel_copy_rows();
-- VACUUM merges and rewrites change columnar storage, never the rows: nothing to decode.
VACUUM c.t;
VACUUM FULL c.t;
CALL collect('c');

-- The columnar stream (long lines cut), then its differences from heap's: none, with
-- every plugin.
SELECT n, left(data, 200) AS data FROM stream
WHERE schema = 'c' AND plugin = 'test_decoding' AND (n < 80 OR data !~ '^table \?\.(t|copied): ')
ORDER BY n;
SELECT plugin, count(*) AS changes FROM stream WHERE schema = 'c' AND plugin <> 'streaming' GROUP BY 1 ORDER BY 1;
SELECT plugin, left(data, 1) AS message, count(*) FROM stream
WHERE schema = 'c' AND plugin = 'pgoutput' GROUP BY 1, 2 ORDER BY 1, 2;
SELECT coalesce(h.plugin, c.plugin) AS plugin, coalesce(h.n, c.n) AS n, h.data AS heap, c.data AS columnar
FROM (SELECT * FROM stream WHERE schema = 'h') h
FULL JOIN (SELECT * FROM stream WHERE schema = 'c') c USING (plugin, n)
WHERE h.data IS DISTINCT FROM c.data ORDER BY 1, 2;
SELECT count(*) AS metadata_changes FROM stream WHERE data LIKE '%pgcolumnar.%';
SELECT count(pg_drop_replication_slot(slot_name)) AS slots_dropped FROM pg_replication_slots
WHERE slot_name ~ '^(td|st|po)_[hc]$';

-- A non-superuser's changes are decoded the same way.
CREATE ROLE regress_logical_writer;
GRANT USAGE ON SCHEMA c TO regress_logical_writer;
GRANT INSERT, UPDATE, DELETE, SELECT ON c.t TO regress_logical_writer;
SELECT 'created' FROM pg_create_logical_replication_slot('by_role', 'test_decoding');
SET ROLE regress_logical_writer;
INSERT INTO c.t (id, v) VALUES (7000, 'by a role');
UPDATE c.t SET v = 'updated by a role' WHERE id = 7000;
DELETE FROM c.t WHERE id = 7000;
-- Its COPY takes the parallel parse too, and is decoded row by row.
SELECT pgcolumnar.parallel_copy_rows() AS copied_before \gset
COPY c.t (id, v) FROM STDIN;
7001	copied by a role
7002	\N
\.
SELECT pgcolumnar.parallel_copy_rows() - :copied_before AS copied_in_parallel;
RESET ROLE;
SELECT data FROM pg_logical_slot_get_changes('by_role', NULL, NULL, 'include-xids', '0');
SELECT 'dropped' FROM pg_drop_replication_slot('by_role');

-- The rows one statement inserts are logged together, not one per row
-- (pg_walinspect): a 100-row INSERT's go into the WAL once, encoded, with their row
-- group (a ROW_GROUP_WRITE record, written when the COPY after it starts), a 300-row
-- COPY's in one INSERT record laid out off the backend thread (its row group's
-- ROW_GROUP_WRITE logs no rows); an UPDATE comes in its own record (the row group of
-- its new row version logs none either). Other page writes (the metapage) are
-- PAGE_WRITE records, which decoding skips, as it skips row groups without rows: the
-- slots above saw none of them.
-- After a checkpoint, a page's first change is logged as a full-page image, which
-- pg_walinspect describes as such.
CREATE EXTENSION pg_walinspect;
CHECKPOINT;
SELECT pg_current_wal_insert_lsn() AS before \gset
BEGIN;
INSERT INTO c.t (id, v) SELECT g, 'one of a hundred' FROM generate_series(8000, 8099) g;
COPY c.copied (a) FROM PROGRAM 'seq 1000 1299';
UPDATE c.t SET v = 'updated' WHERE id = 8000;
COMMIT;
-- A COPY's records laid out on another thread are compressed there once they are big.
COPY c.copied (a) FROM PROGRAM 'seq 30001 40000';
SELECT record_type, regexp_replace(description, '^rel [0-9/]+; ', '') AS description
FROM pg_get_wal_records_info(:'before', pg_current_wal_flush_lsn())
WHERE resource_manager = 'pgcolumnar' AND record_type <> 'PAGE_WRITE' ORDER BY start_lsn;
SELECT count(*) > 0 AS pages_logged,
       count(*) FILTER (WHERE description = 'full-page image') > 0 AS images_described,
       count(*) FILTER (WHERE description LIKE 'malformed%') AS malformed
FROM pg_get_wal_records_info(:'before', pg_current_wal_flush_lsn())
WHERE resource_manager = 'pgcolumnar' AND record_type = 'PAGE_WRITE';
DROP EXTENSION pg_walinspect;

-- The one difference from heap, by design: an UPDATE that leaves a value heap stores
-- out of line (TOAST) unchanged sends heap's "unchanged-toast-datum" but columnar's
-- whole value (columnar tables have no TOAST table); a subscriber applies both alike.
CREATE TABLE h.toasted (id int PRIMARY KEY, doc text, n int);
CREATE TABLE c.toasted (id int PRIMARY KEY, doc text, n int) USING columnar;
SELECT 'created' FROM pg_create_logical_replication_slot('toast', 'test_decoding');
INSERT INTO h.toasted SELECT 1, string_agg(md5(g::text), ''), 0 FROM generate_series(1, 1000) g;
INSERT INTO c.toasted SELECT * FROM h.toasted;
UPDATE h.toasted SET n = 1;
UPDATE c.toasted SET n = 1;
SELECT regexp_replace(data, '[0-9a-f]{200,}', '<long value>')
FROM pg_logical_slot_get_changes('toast', NULL, NULL, 'include-xids', '0');
SELECT 'dropped' FROM pg_drop_replication_slot('toast');
DROP OWNED BY regress_logical_writer;
DROP ROLE regress_logical_writer;
