//! Changing what is stored: `row_change` (DELETE, UPDATE, row locks), `index_build`,
//! `rewrite` (VACUUM FULL, CLUSTER, ALTER TABLE), `vacuum` (which
//! merges the small row groups `merge_policy` picks). They read rows to change them.
//! `logical_log` writes the logical change records decoding reads (`wal_level = logical`);
//! `batch_log` lays out those of a COPY batch's rows on rayon's threads.

pub mod batch_log;
pub mod index_build;
pub mod logical_log;
pub mod merge_policy;
pub mod rewrite;
pub mod row_change;
pub mod vacuum;
