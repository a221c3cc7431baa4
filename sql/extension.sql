-- The extension installs into its own schema, loads through shared_preload_libraries,
-- and reports one version at the SQL and the library level.
CREATE EXTENSION pgcolumnar;
SELECT extname, extversion, extnamespace::regnamespace AS schema, extrelocatable
  FROM pg_extension WHERE extname = 'pgcolumnar';
SELECT pgcolumnar.version() AS library_version;
SELECT pgcolumnar.version() = extversion AS versions_match
  FROM pg_extension WHERE extname = 'pgcolumnar';
SELECT pgcolumnar.preloaded();
-- Creating it twice is an error with the usual SQLSTATE.
\set VERBOSITY sqlstate
CREATE EXTENSION pgcolumnar;
\set VERBOSITY default
DROP EXTENSION pgcolumnar;
-- DROP EXTENSION removes every object it made; the schema it was created into stays
-- (as for any extension with a fixed schema) and is empty, so a plain DROP succeeds.
DROP SCHEMA pgcolumnar;
