//! The storage layer's transaction and subtransaction callbacks, one of each, calling
//! the parts that keep per-transaction state in the order they must run. Before a
//! commit or prepare: the delete marks a statement collected are written and their
//! buckets unlocked (`pending_marks`), then the buffered rows are written out
//! (`write_buffer`), whose row groups may take free space it returns after the last of
//! them, and which log the rows logical decoding is owed (`write::owed_rows`); then the
//! inserted rows gathered for logical decoding from their slots are logged
//! (`logical_log`; none are while rows are owed). After the
//! end, each drops what it kept, and the memory reserve (`format::fallible`) that a
//! refused allocation spent is taken again (also when a savepoint is rolled back).

use crate::storage::change::logical_log;
use crate::storage::write::{pending_marks, write_buffer};
use pgrx::pg_sys;

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_xact(event: pg_sys::XactEvent::Type, _arg: *mut std::ffi::c_void) {
    // SAFETY: PostgreSQL calls this on the backend thread with the transaction's event,
    // which each part's handler expects.
    unsafe {
        pending_marks::on_xact(event);
        write_buffer::on_xact(event);
        logical_log::on_xact(event);
        if matches!(
            event,
            pg_sys::XactEvent::XACT_EVENT_COMMIT
                | pg_sys::XactEvent::XACT_EVENT_ABORT
                | pg_sys::XactEvent::XACT_EVENT_PREPARE
                | pg_sys::XactEvent::XACT_EVENT_PARALLEL_COMMIT
                | pg_sys::XactEvent::XACT_EVENT_PARALLEL_ABORT
        ) {
            // The memory reserve a refused allocation spent is taken again.
            crate::storage::format::fallible::rearm();
            crate::storage::relation::prefetch::close_all();
            crate::storage::read::plan_sizes::end_of_transaction();
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn on_subxact(
    event: pg_sys::SubXactEvent::Type,
    subxact: pg_sys::SubTransactionId,
    parent: pg_sys::SubTransactionId,
    _arg: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL calls this on the backend thread with the subtransaction's event
    // and ids, which each part's handler expects.
    unsafe {
        logical_log::on_subxact(event, subxact, parent);
        pending_marks::on_subxact(event, subxact);
        write_buffer::on_subxact(event, subxact, parent);
        if event == pg_sys::SubXactEvent::SUBXACT_EVENT_ABORT_SUB {
            // A savepoint rolled back past a refused allocation: its reserve is taken
            // again for what the transaction does next.
            crate::storage::format::fallible::rearm();
        }
    }
}

/// Registers the callbacks; called once from `_PG_init`.
///
/// # Safety
/// Call once, from `_PG_init`, on the backend thread.
pub unsafe fn register() {
    // SAFETY: at load on the backend thread (this fn's contract); the callbacks are `extern
    // "C-unwind"` fns with PostgreSQL's signatures, and their argument is unused (NULL).
    unsafe {
        pg_sys::RegisterXactCallback(Some(on_xact), std::ptr::null_mut());
        pg_sys::RegisterSubXactCallback(Some(on_subxact), std::ptr::null_mut());
    }
}
