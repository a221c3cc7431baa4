//! Whether anything another transaction wrote may have become visible since an earlier
//! look: the count of completed transactions. A per-backend memo of metadata read
//! under the catalog snapshot stays exact while the count stands and this transaction
//! has written nothing.

use pgrx::pg_sys;

/// Transactions with an xid that have committed or aborted since the server started,
/// or None when this transaction has written and must not use a memo as exact.
///
/// # Safety
/// Call on the backend thread inside a transaction.
pub unsafe fn completed_transactions() -> Option<u64> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the transaction-status checks are allowed and shared memory is attached.
    unsafe {
        if pg_sys::GetTopTransactionIdIfAny() != pg_sys::InvalidTransactionId {
            return None;
        }
        // Read without ProcArrayLock: an aligned 8-byte load, and a count read before the
        // catalog snapshot is taken can only make an entry look older than it is.
        // (PostgreSQL 17 renames ShmemVariableCache to TransamVariables.)
        Some((*pg_sys::ShmemVariableCache).xactCompletionCount)
    }
}
