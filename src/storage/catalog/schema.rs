//! The metadata tables of schema `pgcolumnar`, created when the extension is installed;
//! their records are read and written in `row_groups`, `row_marks`, `reservations` and
//! `free_extents`.

pgrx::extension_sql!(
    r#"
-- Everyone may use the schema's functions (pgcolumnar.stats checks SELECT on the table
-- it is given). The metadata below is granted to nobody: pgcolumnar reads and writes it
-- with the extension's rights whoever changes a columnar table (src/storage/shared/privilege.rs).
GRANT USAGE ON SCHEMA pgcolumnar TO PUBLIC;

CREATE SEQUENCE pgcolumnar.storage_id_seq NO CYCLE;

-- One row per row group. Row numbers first_row .. first_row + row_count - 1 map to TIDs.
CREATE TABLE pgcolumnar.row_group (
    storage_id   bigint NOT NULL,
    first_row    bigint NOT NULL,
    row_count    bigint NOT NULL,
    data_offset  bigint NOT NULL,  -- start of the row group's bytes in the stream
    data_length  bigint NOT NULL,
    deleted_rows bytea,            -- delete mask (VACUUM folds old deletes into it)
    chunks       bytea,            -- a small row group's chunk metadata (0.4.0); NULL: in chunk
    zones        bytea,            -- per column zone maps of a group with chunk rows (0.4.0)
    PRIMARY KEY (storage_id, first_row)
);

-- One row per bucket of 8192 row numbers and change: the rows of the bucket one
-- statement deleted (also the old versions of its UPDATEs, with their new versions),
-- offsets from the bucket's first row, or one row lock (SELECT ... FOR UPDATE, foreign-key checks). A change takes effect
-- exactly when its row here is visible; a lock matters only while its transaction runs.
CREATE TABLE pgcolumnar.row_mark (
    storage_id bigint   NOT NULL,
    first_row  bigint   NOT NULL,  -- the bucket's first row; the row itself for a one-row mark
    kind       smallint NOT NULL,  -- 0 key share, 1 share, 2 no key update, 3 update, 4 delete
    rows       bytea    NOT NULL,  -- which rows of the bucket (offsets or a bitmap)
    successors bytea               -- an UPDATE's new versions (runs of row numbers)
);
CREATE INDEX row_mark_bucket ON pgcolumnar.row_mark (storage_id, first_row);

-- One row per range of row numbers handed to a writer, inserted by the writing
-- transaction: while it is in progress, uniqueness checks of other sessions that meet
-- one of its rows (still in its memory) find it here and wait for it.
CREATE TABLE pgcolumnar.row_reservation (
    storage_id bigint NOT NULL,
    first_row  bigint NOT NULL,
    row_count  bigint NOT NULL,
    PRIMARY KEY (storage_id, first_row)
);

-- One row per column chunk of a row group whose chunk metadata is not in its row_group
-- row (src/storage/catalog/inline_chunks.rs).
CREATE TABLE pgcolumnar.chunk (
    storage_id  bigint   NOT NULL,
    first_row   bigint   NOT NULL,
    attnum      smallint NOT NULL,  -- 0: the order column of a row group stored in sort_by order
    data_offset bigint   NOT NULL,  -- absolute stream offset of the chunk
    data_length bigint   NOT NULL,
    null_count  bigint   NOT NULL,
    raw_bytes   bigint   NOT NULL,  -- size of the values before encoding
    directory   bytea    NOT NULL,  -- per vector: rows, offset, length, NULLs, zone map
    PRIMARY KEY (storage_id, first_row, attnum)
);

-- Byte ranges of the stream that VACUUM freed (row groups with no live row left, or
-- merged into others): writers reuse them once no snapshot can read the old row groups
-- (src/storage/write/free_space.rs).
CREATE TABLE pgcolumnar.free_extent (
    storage_id  bigint NOT NULL,
    data_offset bigint NOT NULL,
    data_length bigint NOT NULL,
    PRIMARY KEY (storage_id, data_offset)
);
"#,
    name = "catalog_tables",
    bootstrap
);
