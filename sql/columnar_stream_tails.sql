-- Small row groups (up to 4 KB) go into stream space their session keeps across
-- transactions, its tail: taken up to a page end, so that concurrent sessions' trickle
-- writes do not all go into the stream's last page. A larger row group is placed at the
-- stream's end, after the tail.
CREATE EXTENSION pgcolumnar;
CREATE TABLE tails (id int, t text) USING columnar;
INSERT INTO tails VALUES (1, 'one');
INSERT INTO tails VALUES (2, 'two');
INSERT INTO tails VALUES (3, 'three');
INSERT INTO tails SELECT g, md5(g::text) FROM generate_series(4, 10000) g;
SELECT storage_id AS tails_storage FROM pgcolumnar.row_group
 WHERE data_offset = 0 AND first_row = 0 ORDER BY storage_id DESC LIMIT 1 \gset
-- The first small group is placed exactly; the next two share a tail that runs to the
-- first page's end (8,168 stream bytes a page), where the large group starts.
SELECT row_count, data_offset, data_offset + data_length <= 8168 AS in_first_page
  FROM pgcolumnar.row_group WHERE storage_id = :tails_storage ORDER BY first_row;
SELECT count(*), sum(id), sum(length(t)) FROM tails;

-- Storage ids start over when the extension is dropped and created again: this
-- session's tail of the dropped table must not be taken for a new table that gets the
-- same storage id (its next large group would overwrite what was written there).
DROP TABLE tails;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
CREATE EXTENSION pgcolumnar;
CREATE TABLE again (id int, t text) USING columnar;
SELECT count(*) = 0 AS no_groups_yet FROM pgcolumnar.row_group;
INSERT INTO again VALUES (1, 'one');
INSERT INTO again VALUES (2, 'two');
INSERT INTO again SELECT g, md5(g::text) FROM generate_series(3, 10000) g;
SELECT storage_id = :tails_storage AS same_storage_id, row_count, data_offset
  FROM pgcolumnar.row_group ORDER BY first_row;
SELECT count(*), sum(id), sum(length(t)) FROM again;
SELECT id, t FROM again WHERE id <= 2 ORDER BY id;
DROP TABLE again;
DROP EXTENSION pgcolumnar;
DROP SCHEMA pgcolumnar;
