//! Metadata of columnar relations, kept in ordinary heap tables of schema `pgcolumnar`
//! and read through their primary keys. A row group is visible exactly when its
//! metadata row is visible to the reading snapshot: that is how columnar gets MVCC.
//!
//! The tables are created in `schema`; `tables` reads and writes their rows (with the
//! extension's rights) for the records: `row_groups` (`row_group`, `chunk`),
//! `reservations` (`row_reservation`), `row_marks` (`row_mark`) and `free_extents`
//! (`free_extent`). `storage_ids` hands out a storage id and deletes its rows, `caches`
//! forgets what is cached of a relation. Their public items are re-exported here.

mod caches;
pub mod extension_version;
mod free_extents;
mod inline_chunks;
mod reservations;
mod row_groups;
mod row_marks;
mod schema;
mod storage_ids;
mod tables;

pub use caches::*;
pub use free_extents::*;
pub use reservations::*;
pub use row_groups::*;
pub use row_marks::*;
pub use storage_ids::*;
