//! Building an index over a columnar table: every visible row, with the index's
//! expressions and predicate evaluated like heap does.

use super::error::not_supported;
use super::reader::{GroupClaim, Reader};
use pgrx::pg_sys;

/// Feeds every row of `table_rel` to `callback`; returns the number of rows.
pub unsafe fn build(
    table_rel: pg_sys::Relation,
    index_rel: pg_sys::Relation,
    index_info: *mut pg_sys::IndexInfo,
    callback: pg_sys::IndexBuildCallback,
    callback_state: *mut std::ffi::c_void,
    scan: pg_sys::TableScanDesc,
) -> f64 {
    if (*index_info).ii_Concurrent {
        not_supported("CREATE INDEX CONCURRENTLY", "Use CREATE INDEX.");
    }
    let callback = callback.expect("index build callback");
    // A parallel build hands each participant its scan; otherwise read everything with
    // a fresh snapshot: the table is locked against writers, and every committed row and
    // this transaction's own rows must be indexed.
    let (mut own_reader, snapshot) = if scan.is_null() {
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        (Some(Reader::new(table_rel, snapshot, None, GroupClaim::Serial { next: 0 })), snapshot)
    } else {
        (None, std::ptr::null_mut())
    };
    let reader: &mut Reader = match own_reader.as_mut() {
        Some(r) => r,
        None => super::tableam::scan_reader(scan),
    };
    reader.include_deleted();

    let estate = pg_sys::CreateExecutorState();
    let econtext = pg_sys::MakePerTupleExprContext(estate);
    let slot = pg_sys::table_slot_create(table_rel, std::ptr::null_mut());
    (*econtext).ecxt_scantuple = slot;
    let predicate = pg_sys::ExecPrepareQual((*index_info).ii_Predicate, estate);
    let mut values = [pg_sys::Datum::from(0usize); pg_sys::INDEX_MAX_KEYS as usize];
    let mut isnull = [false; pg_sys::INDEX_MAX_KEYS as usize];
    let mut rows = 0f64;
    while reader.next(slot) {
        pgrx::check_for_interrupts!();
        rows += 1.0;
        pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
        if !predicate.is_null() && !pg_sys::ExecQual(predicate, econtext) {
            continue;
        }
        pg_sys::FormIndexDatum(index_info, slot, estate, values.as_mut_ptr(), isnull.as_mut_ptr());
        callback(
            index_rel,
            &mut (*slot).tts_tid,
            values.as_mut_ptr(),
            isnull.as_mut_ptr(),
            true,
            callback_state,
        );
    }
    pg_sys::ExecDropSingleTupleTableSlot(slot);
    pg_sys::FreeExecutorState(estate);
    // The expression states lived in the executor state just freed.
    (*index_info).ii_ExpressionsState = std::ptr::null_mut();
    (*index_info).ii_PredicateState = std::ptr::null_mut();
    if let Some(mut r) = own_reader.take() {
        r.release();
        pg_sys::UnregisterSnapshot(snapshot);
    }
    rows
}
