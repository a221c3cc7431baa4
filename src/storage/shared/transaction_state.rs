//! Reads of this backend's transaction state that cannot raise an error, called without
//! pgrx's guard (a sigsetjmp and the error stack's save and restore, ~100 instructions a
//! call): the write path asks for them for every row group it writes, and an INSERT at
//! `wal_level = logical` once more. Each only reads `CurrentTransactionState`, so no
//! ERROR can longjmp past the Rust frames that call them.

use crate::storage::format::logical_record::Xids;
use pgrx::pg_sys;

extern "C-unwind" {
    #[link_name = "GetCurrentSubTransactionId"]
    fn get_current_sub_transaction_id() -> pg_sys::SubTransactionId;
    #[link_name = "GetCurrentTransactionIdIfAny"]
    fn get_current_transaction_id_if_any() -> pg_sys::TransactionId;
    #[link_name = "GetTopTransactionIdIfAny"]
    fn get_top_transaction_id_if_any() -> pg_sys::TransactionId;
}

/// TopSubTransactionId (access/xact.h), which pgrx does not bind: the subtransaction id of
/// a transaction outside any subtransaction.
pub const TOP_SUBTRANSACTION: pg_sys::SubTransactionId = 1;

/// The running subtransaction's id (`GetCurrentSubTransactionId`).
pub fn current_subxact() -> pg_sys::SubTransactionId {
    // SAFETY: reads the backend's transaction state; no error, no lock.
    unsafe { get_current_sub_transaction_id() }
}

/// Assigns the running subtransaction an xid if it has none yet (through pgrx's guarded
/// call: assigning may raise an error).
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn assign_xid() {
    // SAFETY: this fn's contract; the unguarded call only reads the transaction state.
    unsafe {
        if get_current_transaction_id_if_any() == pg_sys::InvalidTransactionId {
            pg_sys::GetCurrentTransactionId();
        }
    }
}

/// The running subtransaction's xid and its top-level transaction's,
/// assigning them if the subtransaction has none yet (through pgrx's guarded calls:
/// assigning may raise an error).
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn current_xids() -> Xids {
    // SAFETY: this fn's contract; the two unguarded calls only read the transaction state.
    unsafe {
        let own = match get_current_transaction_id_if_any() {
            x if x != pg_sys::InvalidTransactionId => x,
            _ => pg_sys::GetCurrentTransactionId(),
        };
        // An assigned xid implies its parents' (AssignTransactionId assigns them first).
        let top = match current_subxact() {
            TOP_SUBTRANSACTION => own,
            _ => get_top_transaction_id_if_any(),
        };
        Xids { own: own.into(), top: top.into() }
    }
}
