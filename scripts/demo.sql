-- The `make run` demo. For now it shows that the extension is loaded and which version.
\pset footer off
SELECT extname, extversion, pgcolumnar.version() AS library_version,
       pgcolumnar.preloaded() AS preloaded
  FROM pg_extension WHERE extname = 'pgcolumnar';
