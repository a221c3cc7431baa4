//! A storage id's life in the metadata: a fresh one for each new relfilenode, and its
//! rows in every metadata table deleted when the relfilenode goes.

use super::free_extents::has_free_extents;
use super::row_groups::CHUNK_NATTS;
use super::tables::{relid, scan_storage};
use pgrx::{pg_sys, IntoDatum};

/// A fresh storage id for a new relfilenode. `nextval` checks USAGE on the sequence,
/// which only the extension has: whoever may create or truncate the table may take one.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn next_storage_id() -> u64 {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let seq = relid(c"storage_id_seq");
        let _rights = crate::storage::shared::privilege::ExtensionRights::of(seq);
        pgrx::direct_function_call::<i64>(pg_sys::nextval_oid, &[seq.into_datum()])
            .expect("nextval returned NULL") as u64
    }
}

/// Like `delete_storage`, but a no-op when the metadata tables are gone already
/// (DROP EXTENSION ... CASCADE drops them along with the tables).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn delete_storage_if_installed(storage_id: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let nsp = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        if nsp == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_group".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"chunk".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_reservation".as_ptr(), nsp) == pg_sys::InvalidOid
        || pg_sys::get_relname_relid(c"row_mark".as_ptr(), nsp) == pg_sys::InvalidOid
        // An install older than the per-bucket marks: DROP EXTENSION ... CASCADE must work.
        || pg_sys::get_relname_relid(c"row_mark_bucket".as_ptr(), nsp) == pg_sys::InvalidOid
        {
            return;
        }
        delete_storage(storage_id);
    }
}

/// Deletes the metadata of a storage (transactionally: a rollback brings it back). For
/// the id of a reset unlogged relation, that is the stale metadata of its id from
/// before the crash (nothing is kept under the reset id itself).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn delete_storage(storage_id: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let storage_id = storage_id & !crate::storage::format::layout::RESET_STORAGE_BIT;
        for (table, pkey) in [
            (c"row_group", c"row_group_pkey"),
            (c"chunk", c"chunk_pkey"),
            (c"row_reservation", c"row_reservation_pkey"),
            (c"row_mark", c"row_mark_bucket"),
            (c"free_extent", c"free_extent_pkey"),
        ] {
            if table == c"free_extent" && !has_free_extents() {
                continue;
            }
            // The arity only sizes the deform buffers; both tables have at most 8 columns.
            scan_storage::<CHUNK_NATTS>(
                table,
                pkey,
                storage_id,
                std::ptr::null_mut(),
                pg_sys::RowExclusiveLock,
                |rel, tup, _, _| pg_sys::simple_heap_delete(rel, &mut (*tup).t_self),
            );
        }
    }
}
