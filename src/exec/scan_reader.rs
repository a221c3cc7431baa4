//! The `Reader` a columnar node reads its relation through (ColumnarScan, ColumnarAgg):
//! this transaction's buffered rows written out first, so the scan sees them; only the
//! columns the plan reads decoded, their chunk metadata read as row groups are reached
//! (`Reader::new_lazy`); the zone-map predicates of the plan set, so row groups and
//! vectors they refute are skipped.

use crate::storage::format::zonemap::ZonePredicate;
use crate::storage::read::reader::Reader;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;

/// A serial reader of `node`'s relation under `snapshot` that decodes the attributes
/// `attnums` (1-based) and checks `zone_predicates` (which it takes); its output columns
/// are the caller's to set. In a parallel worker, a parallel-aware node's reader waits
/// for the row groups its leader hands it (`row_group_claims`) instead of reading them.
///
/// # Safety
/// Backend thread, inside the node's begin: the relation is open and locked by the
/// executor and `snapshot` registered, both for as long as the reader lives.
pub unsafe fn open(
    node: *mut pg_sys::CustomScanState,
    snapshot: pg_sys::Snapshot,
    attnums: &[i32],
    zone_predicates: &mut Vec<(usize, ZonePredicate)>,
) -> Reader {
    // SAFETY: `node` is a CustomScanState in its begin (this fn's contract): its plan is
    // set and its relation open, so the tuple descriptor is valid to read;
    // ParallelWorkerNumber is this process's.
    let (rel, natts, handed) = unsafe {
        let rel = (*node).ss.ss_currentRelation;
        let handed = pg_sys::ParallelWorkerNumber >= 0 && (*(*node).ss.ps.plan).parallel_aware;
        (rel, (*(*rel).rd_att).natts as usize, handed)
    };
    let mut wanted = vec![false; natts];
    for &a in attnums {
        wanted[a as usize - 1] = true;
    }
    // SAFETY: `rel` is open and locked and `snapshot` registered for the reader's life
    // (this fn's contract), which is what flushing and the reader need.
    unsafe {
        write_buffer::flush_before_reading(rel);
        let mut reader = match handed {
            true => Reader::new_lazy_deferred(rel, snapshot, wanted),
            false => Reader::new_lazy(rel, snapshot, wanted),
        };
        reader.set_predicates(std::mem::take(zone_predicates));
        reader
    }
}
