-- Every name pgcolumnar registers in a server or a database is its own: settings are
-- prefixed `pgcolumnar.`, SQL objects live in schema pgcolumnar, and the only members
-- outside it are the access method's names (`columnar` only where free, see
-- access_method_names). Custom scan node names (PgColumnar*) are checked by the unit and
-- pg tests and, beside Citus's own `ColumnarScan`, by the citus level. A new name that
-- is not ours shows up here as a changed line.
CREATE EXTENSION pgcolumnar;
-- Every setting that mentions columnar (none of core's do) is ours and prefixed.
SELECT count(*) > 0 AS some, bool_and(name ~ '^pgcolumnar\.[a-z_]+$') AS all_prefixed
  FROM pg_settings WHERE name ILIKE '%columnar%';
-- The members outside schema pgcolumnar, by name.
SELECT pg_describe_object(classid, objid, objsubid) AS outside_schema
  FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pgcolumnar')
   AND (pg_identify_object(classid, objid, objsubid)).schema IS DISTINCT FROM 'pgcolumnar'
 ORDER BY 1;
DROP EXTENSION pgcolumnar;
