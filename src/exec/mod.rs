//! Vectorized execution: column batches, filter and aggregate kernels, the custom scan
//! nodes and their EXPLAIN output.

pub mod columnar_scan;
pub mod zone_filter;

/// A PostgreSQL method table (custom path/scan/exec methods) kept in a `static`.
/// They hold C-string pointers, so Rust does not consider them `Sync`; PostgreSQL only
/// reads them, from its one backend thread.
#[repr(transparent)]
pub struct MethodTable<T>(pub T);

// SAFETY: immutable after initialization and only read by PostgreSQL's backend thread.
unsafe impl<T> Sync for MethodTable<T> {}
