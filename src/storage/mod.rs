//! The `columnar` table access method and everything it keeps on disk; the layers and
//! the life of a write are described in `docs/architecture.md`.
//!
//! Its rooms, bottom up; a room imports only the rooms below it (`make lint` checks):
//!
//! - `format`: the on-disk format, pure Rust (no PostgreSQL calls).
//! - `shared`: what every room may use: errors with SQLSTATEs, the bounded per-backend
//!   cache, and the extension's own access to its metadata (its rights, its SPI).
//! - `catalog`: the metadata tables in schema `pgcolumnar`.
//! - `relation`: the relation itself: is it columnar, its TIDs, its main fork, its values
//!   in and out, its slot, its options.
//! - `write`: what this backend writes before others see it: rows buffered and flushed
//!   as row groups, a statement's marks collected per bucket, reuse of freed space.
//! - `read`: scans, fetches by TID, checked decoding, what the planner reads of sizes,
//!   and which index entries point at rows no snapshot sees.
//! - `change`: DELETE, UPDATE and row locks, index builds, rewrites, VACUUM.
//! - `glue`: what PostgreSQL calls: the table AM routine, hooks, the relcache callback,
//!   `pgcolumnar.stats()`.

pub mod catalog;
pub mod change;
pub mod format;
pub mod glue;
pub mod read;
pub mod relation;
pub mod shared;
pub mod write;
