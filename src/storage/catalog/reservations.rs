//! Row-number reservations (`pgcolumnar.row_reservation`): which transaction handed
//! out a row number, for uniqueness checks that meet a row still in its writer's memory.

use super::tables::{datum, insert_row, int8, last_starting_at_or_before, relid};
use pgrx::pg_sys;

/// Records that this transaction reserved row numbers `first_row .. first_row + count`.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert_reservation(storage_id: u64, first_row: u64, count: u64) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let rel = pg_sys::table_open(relid(c"row_reservation"), pg_sys::RowExclusiveLock as i32);
        let mut values = [datum(storage_id as i64), datum(first_row as i64), datum(count as i64)];
        let mut nulls = [false; 3];
        insert_row(rel, &mut values, &mut nulls, pg_sys::GetCurrentCommandId(true));
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}

/// Who handed out a row number, as a dirty snapshot sees `row_reservation`.
#[derive(Debug, PartialEq, Eq)]
pub enum Reservation {
    /// Nobody, or a transaction that rolled back: no one can ever see the row.
    None,
    /// A transaction still running (its number is in the snapshot's `xmin`).
    Running,
    Committed,
}

/// The reservation holding `row`, seen through the dirty snapshot `dirty`, which names a
/// running reserver in its `xmin` (so that a uniqueness check waits for it).
///
/// # Safety
/// `dirty` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reservation_of(storage_id: u64, row: u64, dirty: pg_sys::Snapshot) -> Reservation {
    // SAFETY: the caller guarantees this fn's contract: `dirty` is a valid snapshot (or NULL
    // where this fn's docs allow it), and we are on the backend thread inside a transaction,
    // so the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        last_starting_at_or_before::<3, _>(
            c"row_reservation",
            c"row_reservation_pkey",
            storage_id,
            row,
            dirty,
            |_, v, _| match row < int8(v[1]) + int8(v[2]) {
                false => Reservation::None,
                true if (*dirty).xmin != pg_sys::InvalidTransactionId => Reservation::Running,
                true => Reservation::Committed,
            },
        )
        .unwrap_or(Reservation::None)
    }
}
