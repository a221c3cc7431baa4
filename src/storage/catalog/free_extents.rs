//! Free byte ranges of the stream (`pgcolumnar.free_extent`), recorded by VACUUM and
//! taken by writers (see `free_space`).

use super::tables::{datum, insert_row, int8, relid, relid_if_installed, scan_storage};
use pgrx::pg_sys;

/// Whether the extension's install records free extents (one created before that
/// keeps working, without reusing space).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn has_free_extents() -> bool {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe { relid_if_installed(c"free_extent") != pg_sys::InvalidOid }
}

/// Records that stream bytes `offset .. offset + length` of a storage are free.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert_free_extent(storage_id: u64, offset: u64, length: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let rel = pg_sys::table_open(relid(c"free_extent"), pg_sys::RowExclusiveLock as i32);
        let mut values = [datum(storage_id as i64), datum(offset as i64), datum(length as i64)];
        let mut nulls = [false; 3];
        insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}

/// Takes (deletes, in this transaction) the first free extent of a storage, by offset,
/// that holds at least `length` bytes and was freed by a transaction that committed
/// before `horizon` (so no snapshot can still read what was there); returns its offset,
/// its length and the transaction that freed it. An extent another transaction is
/// taking is passed over, never waited for.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn take_free_extent(
    storage_id: u64,
    length: u64,
    horizon: pg_sys::TransactionId,
) -> Option<(u64, u64, pg_sys::TransactionId)> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let mut dirty = pg_sys::SnapshotData {
            snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY,
            ..Default::default()
        };
        let mut taken = None;
        scan_storage::<3>(
            c"free_extent",
            c"free_extent_pkey",
            storage_id,
            &mut dirty,
            pg_sys::RowExclusiveLock,
            |rel, tup, v, _| {
                let (offset, extent) = (int8(v[1]), int8(v[2]));
                let xmin = pg_sys::HeapTupleHeaderGetXmin((*tup).t_data);
                let settled =
                    pg_sys::TransactionIdDidCommit(xmin) && pg_sys::TransactionIdPrecedes(xmin, horizon);
                if taken.is_some() || extent < length || !settled {
                    return;
                }
                let mut tmfd = pg_sys::TM_FailureData::default();
                let result = pg_sys::heap_delete(
                    rel,
                    &mut (*tup).t_self,
                    pg_sys::GetCurrentCommandId(true),
                    std::ptr::null_mut(),
                    false,
                    &mut tmfd,
                    false,
                );
                if result == pg_sys::TM_Result::TM_Ok {
                    taken = Some((offset, extent, xmin));
                }
            },
        );
        taken
    }
}
