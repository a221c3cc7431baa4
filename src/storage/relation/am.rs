//! Which relations are columnar: those whose table AM routine is ours. `tableam`
//! registers the routine at load; everything else asks here, below `tableam`.

use pgrx::pg_sys;
use std::sync::atomic::{AtomicPtr, Ordering};

static ROUTINE: AtomicPtr<pg_sys::TableAmRoutine> = AtomicPtr::new(std::ptr::null_mut());

/// Called once from `_PG_init` with the routine `columnar_handler` returns.
pub fn register(routine: *const pg_sys::TableAmRoutine) {
    ROUTINE.store(routine as *mut _, Ordering::Relaxed);
}

/// Whether `rel` is a columnar table.
/// Whether `rel` is a plain table of PostgreSQL's heap access method.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller.
pub unsafe fn is_heap_table(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller.
    unsafe {
        (*(*rel).rd_rel).relkind as u8 == pg_sys::RELKIND_RELATION
            && (*(*rel).rd_rel).relam == pg_sys::HEAP_TABLE_AM_OID
    }
}

/// # Safety
/// `rel` must be an open relation, locked by the caller.
pub unsafe fn is_columnar(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller.
    unsafe {
        let ours = ROUTINE.load(Ordering::Relaxed);
        !ours.is_null() && std::ptr::eq((*rel).rd_tableam, ours)
    }
}
