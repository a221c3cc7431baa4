-- pgcolumnar 0.1.0 -> 0.2.0. Every build before the first release called itself 0.1.0,
-- and their metadata tables changed from build to build: this update takes the builds
-- whose metadata tables, indexes, sequence and views are those of 0.2.0 (the builds
-- from commit da535f4 on, and some before), and refuses the others, whose tables are to
-- be dumped and restored instead (docs/install.md, "Upgrading"). Their stored data is
-- read by the same code. Functions hold no data: they become 0.2.0's (dropped when
-- 0.2.0 has no such function, made again from 0.2.0's definitions otherwise), and what
-- 0.3.0 added (builds from 51446d1 on) goes too, for the 0.3.0 update to add again.
\echo Use "ALTER EXTENSION pgcolumnar UPDATE" to load this file. \quit

DO $pgcolumnar$
DECLARE
    -- The extension's tables' columns and indexes and its other relations: in 0.2.0,
    -- and in this install.
    want text[] := ARRAY[
        'column chunk.attnum smallint not null',
        'column chunk.data_length bigint not null',
        'column chunk.data_offset bigint not null',
        'column chunk.directory bytea not null',
        'column chunk.first_row bigint not null',
        'column chunk.null_count bigint not null',
        'column chunk.raw_bytes bigint not null',
        'column chunk.storage_id bigint not null',
        'column free_extent.data_length bigint not null',
        'column free_extent.data_offset bigint not null',
        'column free_extent.storage_id bigint not null',
        'column row_group.data_length bigint not null',
        'column row_group.data_offset bigint not null',
        'column row_group.deleted_rows bytea',
        'column row_group.first_row bigint not null',
        'column row_group.row_count bigint not null',
        'column row_group.storage_id bigint not null',
        'column row_mark.first_row bigint not null',
        'column row_mark.kind smallint not null',
        'column row_mark.rows bytea not null',
        'column row_mark.storage_id bigint not null',
        'column row_mark.successors bytea',
        'column row_reservation.first_row bigint not null',
        'column row_reservation.row_count bigint not null',
        'column row_reservation.storage_id bigint not null',
        'column table_option.compress_for text',
        'column table_option.quals_push_down boolean',
        'column table_option.relid regclass not null',
        'column table_option.sort_attnums smallint[]',
        'column table_option.sort_by text',
        'index chunk_pkey unique (storage_id, first_row, attnum)',
        'index free_extent_pkey unique (storage_id, data_offset)',
        'index row_group_pkey unique (storage_id, first_row)',
        'index row_mark_bucket (storage_id, first_row)',
        'index row_reservation_pkey unique (storage_id, first_row)',
        'index table_option_pkey unique (relid)',
        'sequence storage_id_seq',
        'view options'
    ];
    have text[];
    missing text;
    unexpected text;
    f record;
BEGIN
    WITH member AS (
        SELECT d.classid, d.objid FROM pg_catalog.pg_depend d
         WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
           AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'pgcolumnar'))
    SELECT pg_catalog.array_agg(item) INTO have FROM (
        SELECT pg_catalog.format('column %s.%s %s%s', c.relname, a.attname,
                                 pg_catalog.format_type(a.atttypid, a.atttypmod),
                                 CASE WHEN a.attnotnull THEN ' not null' ELSE '' END) AS item
          FROM member m
          JOIN pg_catalog.pg_class c ON m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = m.objid
          JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE c.relkind = 'r'
        UNION ALL
        SELECT pg_catalog.format('%s %s', CASE c.relkind WHEN 'v' THEN 'view' WHEN 'S' THEN 'sequence' ELSE 'relation' END, c.relname)
          FROM member m
          JOIN pg_catalog.pg_class c ON m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = m.objid
         WHERE c.relkind <> 'r'
        UNION ALL
        SELECT pg_catalog.format('index %s%s (%s)', ic.relname, CASE WHEN i.indisunique THEN ' unique' ELSE '' END,
                                 (SELECT pg_catalog.string_agg(a.attname::text, ', ' ORDER BY k.n)
                                    FROM pg_catalog.unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                                    JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum))
          FROM member m
          JOIN pg_catalog.pg_index i ON m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND i.indrelid = m.objid
          JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid
    ) s;
    have := coalesce(have, '{}');
    SELECT pg_catalog.string_agg(w, '; ' ORDER BY w) INTO missing
      FROM pg_catalog.unnest(want) w WHERE w <> ALL (have);
    -- What 0.3.0 added may be there; nothing else may.
    SELECT pg_catalog.string_agg(h, '; ' ORDER BY h) INTO unexpected
      FROM pg_catalog.unnest(have) h WHERE h <> ALL (want) AND h <> 'view table_stats';
    IF missing IS NOT NULL OR unexpected IS NOT NULL THEN
        RAISE EXCEPTION 'this pgcolumnar 0.1.0 install comes from a build before the first release whose metadata differs from release 0.2.0''s'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = pg_catalog.concat_ws(' ', 'Missing: ' || missing || '.', 'Not in 0.2.0: ' || unexpected || '.'),
                  HINT = 'Dump the columnar tables with pgcolumnar.enable_version_checks = off, then DROP EXTENSION pgcolumnar CASCADE, CREATE EXTENSION pgcolumnar, and restore them.';
    END IF;
    DROP VIEW IF EXISTS pgcolumnar.table_stats;
    -- Functions of the extension that 0.2.0 does not have.
    FOR f IN
        SELECT p.oid::pg_catalog.regprocedure AS signature
          FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_proc p ON p.oid = d.objid
         WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.deptype = 'e'
           AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
           AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'pgcolumnar')
           AND p.proname NOT IN ('chunk_directories_parsed', 'columnar_handler', 'fetch_decoded_vectors',
                                 'fetch_stripes_made_rows', 'fetch_vectors_read_in_place', 'preloaded',
                                 'stats', 'table_option_resolve', 'version')
    LOOP
        EXECUTE pg_catalog.format('DROP FUNCTION %s', f.signature);
    END LOOP;
END
$pgcolumnar$;

-- 0.2.0's functions, as sql/pgcolumnar--0.2.0.sql defines them. The access method's
-- handler and the trigger's function are replaced in place (their dependents stay).
CREATE OR REPLACE FUNCTION pgcolumnar.columnar_handler(internal) RETURNS table_am_handler
    LANGUAGE C STRICT AS 'MODULE_PATHNAME', 'columnar_handler';
CREATE OR REPLACE FUNCTION pgcolumnar.table_option_resolve() RETURNS trigger
    LANGUAGE C AS 'MODULE_PATHNAME', 'table_option_resolve';

DROP FUNCTION IF EXISTS pgcolumnar.chunk_directories_parsed();
CREATE FUNCTION pgcolumnar."chunk_directories_parsed"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'chunk_directories_parsed_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.fetch_decoded_vectors();
CREATE FUNCTION pgcolumnar."fetch_decoded_vectors"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'fetch_decoded_vectors_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.fetch_stripes_made_rows();
CREATE FUNCTION pgcolumnar."fetch_stripes_made_rows"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'fetch_stripes_made_rows_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.fetch_vectors_read_in_place();
CREATE FUNCTION pgcolumnar."fetch_vectors_read_in_place"() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'fetch_vectors_read_in_place_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.preloaded();
CREATE FUNCTION pgcolumnar."preloaded"() RETURNS bool
STRICT STABLE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'preloaded_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.stats(regclass);
CREATE FUNCTION pgcolumnar."stats"(
	"rel" regclass
) RETURNS TABLE (
"attname" TEXT,
"row_groups" bigint,
"rows" bigint,
"null_count" bigint,
"stored_bytes" bigint,
"raw_bytes" bigint,
"compression_ratio" double precision,
"encodings" TEXT
)
STRICT STABLE
LANGUAGE c
AS 'MODULE_PATHNAME', 'stats_wrapper';

DROP FUNCTION IF EXISTS pgcolumnar.version();
CREATE FUNCTION pgcolumnar."version"() RETURNS TEXT
IMMUTABLE STRICT PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'version_wrapper';
