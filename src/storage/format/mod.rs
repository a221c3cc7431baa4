//! The on-disk format of a columnar relation, as pure Rust: no PostgreSQL calls, nothing
//! imported from pgrx or from the rest of the crate (`scripts/check_layers.py`, run by
//! `make lint`, enforces it), all of it unit-tested with plain `cargo test`.
//!
//! - `layout`: the relation's blocks (metapage, byte stream), row numbers and TIDs, and
//!   the format's sizes (`VECTOR_ROWS`, `ROW_GROUP_ROWS`).
//! - `encoding`: how one vector of values is encoded: the codec table (integer, float,
//!   byte and dictionary encodings), compression, the vector framing.
//! - `column_builder`: a column's values collected for a flush; `flush_order` orders a
//!   row group's rows by the table's sort key; `chunk_encoder` turns a column's rows
//!   into a chunk of encoded vectors with its `directory` (per-vector offsets, counts
//!   and `zonemap`s; zone maps also evaluate predicates); `group_zones`: a row group's
//!   zone map per column, for plan-time pruning before any directory is read.
//! - Row changes: `mark_kind` (a mark's kind: a row lock or a delete, and which conflict),
//!   `bucket_rows` (row numbers in buckets; which rows of its bucket a mark covers) and
//!   `delete_mask` (a row group's bitmap of deleted rows).
//! - `checksum`: the CRC-32C every stored vector carries.
//! - `image_arena`: reusable buffers for decoded values; `fallible`: room for the buffers
//!   the data sizes, taken so that a refusal is an ERROR rather than an abort.
//! - `logical_record`: the rows a change wrote, as logical decoding reads them from the
//!   WAL (`wal_level = logical`); `page_write`: the bytes a write put into a page, as
//!   redo replays them; `space_reuse`: freed space about to be written again, for a hot
//!   standby's queries that may still read it.
//! - `numeric`: `numeric` values in their stored bytes, parsed and compared as core does.
//! - `metadata_image`: parsed metadata as bytes for another process of the same build
//!   (a parallel scan's leader hands its row groups and directories to its workers).
//! - `copy`: copies of a few kilobytes that avoid the C library's `rep movsb` (slow on
//!   some CPUs for common buffer distances).

pub mod bucket_rows;
pub mod cache_lines;
pub mod checksum;
pub mod chunk_encoder;
pub mod column_builder;
pub mod column_kind;
pub mod copy;
pub mod delete_mask;
pub mod directory;
pub mod encoding;
pub mod fallible;
pub mod flush_order;
pub mod group_zones;
pub mod image_arena;
pub mod layout;
pub mod logical_record;
pub mod mark_kind;
pub mod metadata_image;
pub mod numeric;
pub mod page_write;
pub mod row_group_record;
pub mod row_images;
pub mod space_reuse;
pub mod text_input;
pub mod tuple_image;
pub mod zonemap;
