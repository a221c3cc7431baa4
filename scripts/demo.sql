-- First part of the `make run` demo (scripts/demo.sh): the extension is loaded, and which
-- version. The heap-vs-columnar part follows from bench/run.py --demo.
\pset footer off
SELECT extname, extversion, pgcolumnar.version() AS library_version,
       pgcolumnar.preloaded() AS preloaded
  FROM pg_extension WHERE extname = 'pgcolumnar';
