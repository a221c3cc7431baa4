//! Execution: the custom scan nodes (`customscan` generates their PostgreSQL method
//! tables; `columnar_scan` is the ColumnarScan node). Imports `storage`, never
//! `planner`: what a node needs of the planner's decisions comes in its plan.

pub mod agg;
pub mod columnar_agg;
pub mod columnar_scan;
pub mod customscan;
pub mod fetch_columns;
pub mod filter;
pub mod last_point;
pub mod pushed_seq_scan;
pub mod row_group_claims;

/// A PostgreSQL method table (custom path methods) kept in a `static`.
/// They hold C-string pointers, so Rust does not consider them `Sync`; PostgreSQL only
/// reads them, from its one backend thread.
#[repr(transparent)]
pub struct MethodTable<T>(pub T);

// SAFETY: immutable after initialization and only read by PostgreSQL's backend thread.
unsafe impl<T> Sync for MethodTable<T> {}
