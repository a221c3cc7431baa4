//! The `columnar` table access method and everything it keeps on disk.
//!
//! Pure modules (no PostgreSQL calls, covered by plain `cargo test`): `encoding`,
//! `layout`, `directory`, `zonemap`, `column_builder`, `chunk_encoder`, `row_marks`,
//! `mark_rows`, `flush_order`, `image_arena`.
//! PostgreSQL-facing: `tableam` (the callbacks), `reader`, `write_buffer`, `pages`,
//! `catalog`, `privilege` (metadata access with the extension's rights), `index_delete`
//! (which index entries can go), `internal_sql` (our own SPI, which the executor hooks
//! leave alone), `plan_sizes` (cached sizes for planning), `datum`, `error`, `row_change`
//! (DELETE, UPDATE, row locks), `mark_batch` (a statement's deletes collected per
//! bucket), `bitmap_scan` and `sample_scan` (bitmap heap scans and TABLESAMPLE, by TID),
//! `free_space` (reuse of the stream space VACUUM frees).

pub mod am;
pub mod bitmap_scan;
pub mod cache;
pub mod catalog;
pub mod datum;
pub mod decode;
pub mod drop_hook;
pub mod error;
pub mod fetch;
pub mod format;
pub mod free_space;
pub mod index_build;
pub mod index_delete;
pub mod internal_sql;
pub mod invalidation;
pub mod mark_batch;
pub mod options;
pub mod pages;
pub mod plan_sizes;
pub mod privilege;
pub mod reader;
pub mod rewrite;
pub mod row_change;
pub mod sample_scan;
pub mod slot;
pub mod stats;
pub mod tableam;
pub mod tid;
pub mod utility;
pub mod vacuum;
pub mod write_buffer;
