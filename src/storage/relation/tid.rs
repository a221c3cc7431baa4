//! Row numbers and TIDs: row `r` is TID (r / 291, r % 291 + 1) (see `format::layout`).

use crate::storage::format::layout;
use pgrx::pg_sys;

/// The TID of row number `row`.
pub fn row_tid(row: u64) -> pg_sys::ItemPointerData {
    let mut tid = pg_sys::ItemPointerData::default();
    let (block, offset) = layout::row_to_tid(row);
    set_tid(&mut tid, block, offset);
    tid
}

pub fn set_tid(tid: &mut pg_sys::ItemPointerData, block: u32, offset: u16) {
    tid.ip_blkid.bi_hi = (block >> 16) as u16;
    tid.ip_blkid.bi_lo = (block & 0xffff) as u16;
    tid.ip_posid = offset;
}

/// The row number of a TID; None for a TID no row can have.
pub fn tid_row(tid: &pg_sys::ItemPointerData) -> Option<u64> {
    let (block, offset) = pgrx::itemptr::item_pointer_get_both(*tid);
    layout::tid_to_row(block, offset)
}
