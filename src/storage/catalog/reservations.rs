//! Row-number reservations (`pgcolumnar.row_reservation`): which transaction handed
//! out a row number, for uniqueness checks that meet a row still in its writer's memory.

use super::tables::{datum, insert_row, int8, last_starting_at_or_before, relid, scan_storage};
use crate::storage::shared::reservation_slots;
use pgrx::pg_sys;

/// The lock that makes taking a new reservation window (its numbers on the metapage,
/// then its `row_reservation` row) one step for VACUUM, which measures the numbers handed
/// out and then reads the reservations: between the two steps of a writer, its numbers
/// would look claimed by no one, and the index entries it inserts next be removed.
/// Writers take it in share mode for the two steps, VACUUM in exclusive mode for its
/// reads: neither holds it for longer than a few catalog operations. A user lock (unused
/// by PostgreSQL itself) on (database, relation).
fn reservations_lock_tag(relid: pg_sys::Oid) -> pg_sys::LOCKTAG {
    pg_sys::LOCKTAG {
        // SAFETY: MyDatabaseId is this backend's database, set at connection.
        locktag_field1: unsafe { pg_sys::MyDatabaseId }.into(),
        locktag_field2: relid.into(),
        locktag_field3: 0,
        locktag_field4: RESERVATIONS_LOCK_FIELD4,
        locktag_type: pg_sys::LockTagType::LOCKTAG_USERLOCK as u8,
        locktag_lockmethodid: pg_sys::DEFAULT_LOCKMETHOD as u8,
    }
}

/// Tells this lock apart from any other user lock ("PC").
const RESERVATIONS_LOCK_FIELD4: u16 = 0x5043;

/// Runs `f` holding `relid`'s reservations lock in `mode` (ShareLock for a writer taking
/// a window, ExclusiveLock for VACUUM); an ERROR in `f` lets go of it with the
/// transaction.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn with_reservations_lock<T>(relid: pg_sys::Oid, mode: u32, f: impl FnOnce() -> T) -> T {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // heavyweight locks may be taken (a transaction lock: released at its end at the latest).
    unsafe {
        let tag = reservations_lock_tag(relid);
        pg_sys::LockAcquire(&tag, mode as i32, false, false);
        let result = f();
        pg_sys::LockRelease(&tag, mode as i32, false);
        result
    }
}

/// Records that this transaction reserved row numbers `first_row .. first_row + count`:
/// in a shared-memory slot, or as a `row_reservation` row when it has none left.
///
/// # Safety
/// Call on the backend thread inside a transaction, holding the table's reservations lock
/// in share mode (it calls PostgreSQL, which may raise an error).
pub unsafe fn insert_reservation(storage_id: u64, first_row: u64, count: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        if reservation_slots::publish(storage_id, first_row, first_row + count) {
            return;
        }
        let rel = pg_sys::table_open(relid(c"row_reservation"), pg_sys::RowExclusiveLock as i32);
        let mut values = [datum(storage_id as i64), datum(first_row as i64), datum(count as i64)];
        let mut nulls = [false; 3];
        insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}

/// Whether the transaction that took row number `row` is still running, seen through the
/// dirty snapshot `dirty`, which then names it in its `xmin` (so that a uniqueness check
/// waits for it). A row's reservation is the last one starting at or before it: windows
/// overlap, but no one else takes numbers inside a running writer's own rows. Windows are
/// in shared-memory slots and in `row_reservation`: the later start of the two wins.
///
/// # Safety
/// `dirty` must be a valid dirty snapshot; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn reserver_running(storage_id: u64, row: u64, dirty: pg_sys::Snapshot) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `dirty` is a valid snapshot, and we
    // are on the backend thread inside a transaction, so the metadata relations may be
    // scanned.
    unsafe {
        let slot = reservation_slots::window_of(storage_id, row);
        let row_of_catalog = last_starting_at_or_before::<3, _>(
            c"row_reservation",
            c"row_reservation_pkey",
            storage_id,
            row,
            dirty,
            |_, v, _| {
                (int8(v[1]), row < int8(v[1]) + int8(v[2]) && (*dirty).xmin != pg_sys::InvalidTransactionId)
            },
        );
        match (slot, row_of_catalog) {
            (Some(s), found) if found.is_none_or(|(first, _)| s.first_row > first) => {
                let xid = pg_sys::TransactionId::from(s.xid);
                // Our own rows are no one's to wait for (a dirty snapshot names no xmin
                // for them either).
                let running = row < s.end_row
                    && !pg_sys::TransactionIdIsCurrentTransactionId(xid)
                    && pg_sys::TransactionIdIsInProgress(xid);
                if running {
                    (*dirty).xmin = xid;
                    (*dirty).xmax = pg_sys::InvalidTransactionId;
                }
                running
            }
            (_, found) => found.is_some_and(|(_, running)| running),
        }
    }
}

/// Deletes the reservations of transactions that have ended: only a running writer's
/// reservation is ever asked about (its rows may still be in its
/// memory); a committed writer's rows are in its row groups. Without this, the table kept
/// one row per writing transaction for good.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn delete_finished_reservations(storage_id: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written; the snapshot is registered
    // for the scan and tuples are deleted through the relation the scan passes.
    unsafe {
        let snapshot = pg_sys::RegisterSnapshot(pg_sys::GetLatestSnapshot());
        scan_storage::<3>(
            c"row_reservation",
            c"row_reservation_pkey",
            storage_id,
            snapshot,
            pg_sys::RowExclusiveLock,
            |rel, tup, _, _| {
                // Seen by a fresh snapshot: committed, so ended unless it is ours.
                if !pg_sys::TransactionIdIsCurrentTransactionId(pg_sys::HeapTupleHeaderGetXmin((*tup).t_data))
                {
                    pg_sys::simple_heap_delete(rel, &mut (*tup).t_self);
                }
            },
        );
        pg_sys::UnregisterSnapshot(snapshot);
    }
}
