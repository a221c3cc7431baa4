//! The `columnar` table access method and everything it keeps on disk; the layers and
//! the life of a write are described in `docs/architecture.md`.
//!
//! - `format`: the on-disk format, pure Rust (no PostgreSQL calls; `make lint` checks).
//! - Shared pieces every other module may import: `error` (errors with SQLSTATEs), `am`
//!   (is this relation columnar), `tid` (row number <-> TID), `cache` (the bounded
//!   per-backend cache), `internal_sql` (our own SPI, which the executor hooks leave
//!   alone), `privilege` (metadata access with the extension's rights).
//! - The relation and its metadata: `pages` (the main fork: metapage and byte stream),
//!   `catalog` (the metadata tables), `datum` and `decode` (values in and out, checked),
//!   `options` (table options), `plan_sizes` (cached sizes for planning),
//!   `invalidation` (the relcache callback of every cache).
//! - Writing: `write_buffer` (rows buffered and flushed as row groups), `free_space`
//!   (reuse of the space VACUUM frees).
//! - Reading: `reader` (sequential, both directions), `fetch` (by TID), `slot` (the
//!   columnar slot), `bitmap_scan`, `sample_scan` (TABLESAMPLE).
//! - Changing: `mark_batch` (a statement's deletes collected per bucket), `row_change`
//!   (DELETE, UPDATE, row locks), `index_delete` (which index entries can go),
//!   `index_build`, `rewrite` (VACUUM FULL, CLUSTER, ALTER TABLE), `vacuum`.
//! - What PostgreSQL calls: `tableam` (the routine), `utility` (the ProcessUtility hook),
//!   `drop_hook`, `stats` (`pgcolumnar.stats()`).

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
pub mod vector_filter;
pub mod write_buffer;
