//! The `Reader` a columnar node reads its relation through (ColumnarScan, ColumnarAgg):
//! this transaction's buffered rows written out first, so the scan sees them; only the
//! columns the plan reads decoded, their chunk metadata read as row groups are reached
//! (`Reader::new_lazy`); the zone-map predicates of the plan set, so row groups and
//! vectors they refute are skipped.

use crate::storage::format::zonemap::ZonePredicate;
use crate::storage::read::reader::Reader;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;

/// A serial reader of `rel` under `snapshot` that decodes the attributes `attnums`
/// (1-based) and checks `zone_predicates` (which it takes); its output columns are the
/// caller's to set.
///
/// # Safety
/// Backend thread, inside the node's begin: `rel` is open and locked by the executor and
/// `snapshot` registered, both for as long as the reader lives.
pub unsafe fn open(
    rel: pg_sys::Relation,
    snapshot: pg_sys::Snapshot,
    attnums: &[i32],
    zone_predicates: &mut Vec<(usize, ZonePredicate)>,
) -> Reader {
    // SAFETY: `rel` is an open relation (this fn's contract), so its tuple descriptor is
    // valid to read.
    let natts = unsafe { (*(*rel).rd_att).natts } as usize;
    let mut wanted = vec![false; natts];
    for &a in attnums {
        wanted[a as usize - 1] = true;
    }
    // SAFETY: `rel` is open and locked and `snapshot` registered for the reader's life
    // (this fn's contract), which is what flushing and the reader need.
    unsafe {
        write_buffer::flush_before_reading(rel);
        let mut reader = Reader::new_lazy(rel, snapshot, wanted);
        reader.set_predicates(std::mem::take(zone_predicates));
        reader
    }
}
