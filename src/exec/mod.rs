//! Execution: the custom scan nodes (`customscan` generates their PostgreSQL method
//! tables; `columnar_scan` is the ColumnarScan node). Imports `storage`, never
//! `planner`: what a node needs of the planner's decisions comes in its plan.

pub mod agg;
pub mod columnar_agg;
pub mod columnar_scan;
pub mod customscan;
pub mod eager_join;
pub mod expr;
pub mod fetch_columns;
pub mod filter;
pub mod join_filter;
pub mod last_point;
pub mod pushed_seq_scan;
pub mod row_group_claims;
pub mod scan_reader;

use std::ffi::CStr;

/// Every name pgcolumnar registers with PostgreSQL for its nodes. Custom scan names are
/// one namespace per server (a second registration of a name fails the server's start,
/// or, if the other extension checks first, takes the name from it), so each carries a
/// prefix that is ours alone. pgcolumnar registers no extensible nodes, LWLock
/// tranches, named shared memory or DSM keys of its own (its parallel nodes' shared
/// state is keyed by plan node id, by PostgreSQL).
pub const REGISTERED_NAMES: [&CStr; 4] =
    [columnar_scan::NAME, columnar_agg::NAME, last_point::NAME, pushed_seq_scan::NAME];

/// The prefix of every registered name.
pub const NAME_PREFIX: &str = "PgColumnar";

/// Registers the custom scan nodes by name, so that plans holding them can be copied to
/// parallel workers; once per backend, from `_PG_init`.
///
/// # Safety
/// Call only from `_PG_init`, in the backend's one thread.
pub unsafe fn register_nodes() {
    // SAFETY: called from `_PG_init` on the backend's one thread (this fn's contract),
    // which is what `register`/`register_parallel` require.
    unsafe {
        customscan::Methods::<columnar_scan::ColumnarScan>::register_parallel();
        customscan::Methods::<columnar_agg::ColumnarAgg>::register_parallel();
        customscan::Methods::<last_point::LastPoint>::register();
        customscan::Methods::<pushed_seq_scan::PushedSeqScan>::register_parallel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names other extensions register (Citus 13.2, TimescaleDB 2.x): none may be ours.
    const TAKEN: &[&str] = &[
        "ColumnarScan",
        "AdaptiveExecutorScan",
        "NonPushableInsertSelectScan",
        "NonPushableMergeCommandScan",
        "Citus Delayed Error",
        "CitusCustomScanPath",
        "ChunkAppend",
        "ConstraintAwareAppend",
        "ChunkDispatch",
        "HypertableModify",
        "ModifyHypertable",
        "DecompressChunk",
        "VectorAgg",
        "SkipScan",
        "GapFill",
    ];

    #[test]
    fn registered_names_are_ours_alone() {
        let names: Vec<&str> = REGISTERED_NAMES.iter().map(|n| n.to_str().unwrap()).collect();
        assert_eq!(
            names,
            ["PgColumnarScan", "PgColumnarAgg", "PgColumnarLastPoint", "PgColumnarPushedSeqScan"]
        );
        for name in &names {
            assert!(name.starts_with(NAME_PREFIX), "{name} lacks the prefix");
            assert!(!TAKEN.contains(name), "{name} is another extension's");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
