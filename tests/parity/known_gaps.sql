-- Statements where columnar answers differently from heap on purpose (features columnar
-- tables refuse with SQLSTATE 0A000) or through a known bug. The recorded difference is
-- tests/parity/known_gaps.diff; run.sh fails this file when the difference changes.
CREATE TABLE gap (id int, v text);
INSERT INTO gap SELECT g, 'v' || g FROM generate_series(1, 10) g;
-- BRIN indexes (refused: columnar keeps zone maps instead).
CREATE INDEX gap_brin ON gap USING brin (id);
DROP INDEX IF EXISTS gap_brin;
DROP TABLE gap;
