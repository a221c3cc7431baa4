-- pgcolumnar 0.2.0 -> 0.3.0: what 0.3.0 added (the metadata tables are unchanged):
-- table_stats and table_summary, parallel_copy_rows.
-- The definitions are those of a new 0.3.0 install (src/storage/glue/table_stats.rs, stats.rs);
-- tests/extension_update.sh checks that an updated install equals a new one.
\echo Use "ALTER EXTENSION pgcolumnar UPDATE TO '0.3.0'" to load this file. \quit

-- Per table: row groups, rows, deleted fraction, bytes and compression, bytes per column.
CREATE FUNCTION pgcolumnar.table_summary(
	"relid" oid
) RETURNS TABLE (
	"row_groups" bigint,
	"small_row_groups" bigint,
	"rows" bigint,
	"deleted_rows" bigint,
	"deleted_fraction" double precision,
	"stored_bytes" bigint,
	"raw_bytes" bigint,
	"compression_ratio" double precision,
	"column_bytes" jsonb
)
STRICT STABLE
LANGUAGE c
AS 'MODULE_PATHNAME', 'table_summary_wrapper';

-- Tables of other sessions' temporary schemas are left out (their pages are not ours
-- to read); so are tables the role may not SELECT from (table_summary returns no row).
CREATE VIEW pgcolumnar.table_stats AS
SELECT c.oid::regclass AS relation, t.row_groups, t.small_row_groups, t.rows, t.deleted_rows,
       t.deleted_fraction, t.stored_bytes, t.raw_bytes, t.compression_ratio, t.column_bytes,
       greatest(s.last_vacuum, s.last_autovacuum) AS last_vacuum
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_am a ON a.oid = c.relam AND a.amhandler = 'pgcolumnar.columnar_handler'::regproc
  CROSS JOIN LATERAL pgcolumnar.table_summary(c.oid) t
  LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
 WHERE c.relkind IN ('r', 'm') AND (c.relpersistence <> 't' OR c.relnamespace = pg_catalog.pg_my_temp_schema());
GRANT SELECT ON pgcolumnar.table_stats TO PUBLIC;

-- Rows COPY FROM loaded through the parallel parse, in this backend.
CREATE FUNCTION pgcolumnar.parallel_copy_rows() RETURNS bigint
STRICT VOLATILE PARALLEL SAFE
LANGUAGE c
AS 'MODULE_PATHNAME', 'parallel_copy_rows_wrapper';
