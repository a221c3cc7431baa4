//! The slot type of columnar tables: a virtual slot that also knows which transaction
//! and command wrote its row (the row group's writer), so that `xmin` and `cmin` can be
//! read like on heap (foreign-key triggers and ON CONFLICT ask for `xmin`).

use pgrx::pg_guard;
use pgrx::pg_sys;
use std::ptr::addr_of_mut;

#[repr(C)]
struct ColumnarSlot {
    base: pg_sys::VirtualTupleTableSlot,
    xmin: pg_sys::TransactionId,
    cmin: pg_sys::CommandId,
}

static mut OPS: pg_sys::TupleTableSlotOps = pg_sys::TupleTableSlotOps {
    base_slot_size: 0,
    init: None,
    release: None,
    clear: None,
    getsomeattrs: None,
    getsysattr: None,
    materialize: None,
    copyslot: None,
    get_heap_tuple: None,
    get_minimal_tuple: None,
    copy_heap_tuple: None,
    copy_minimal_tuple: None,
};

#[pg_guard]
unsafe extern "C-unwind" fn getsysattr(
    slot: *mut pg_sys::TupleTableSlot,
    attnum: i32,
    isnull: *mut bool,
) -> pg_sys::Datum {
    let s = slot as *mut ColumnarSlot;
    *isnull = false;
    match attnum {
        pg_sys::MinTransactionIdAttributeNumber => pg_sys::Datum::from((*s).xmin.into_inner()),
        pg_sys::MinCommandIdAttributeNumber => pg_sys::Datum::from((*s).cmin),
        // Rows are never changed in place: no deleter or updater is recorded here.
        pg_sys::MaxTransactionIdAttributeNumber | pg_sys::MaxCommandIdAttributeNumber => {
            pg_sys::Datum::from(0u32)
        }
        _ => pgrx::error!("system column {attnum} is not available for columnar tables"),
    }
}

/// Sets up the slot type (from `_PG_init`): the virtual slot's callbacks, our size,
/// our system attributes.
pub unsafe fn init() {
    let ops = &mut *addr_of_mut!(OPS);
    *ops = pg_sys::TTSOpsVirtual;
    ops.base_slot_size = std::mem::size_of::<ColumnarSlot>();
    ops.getsysattr = Some(getsysattr);
}

pub fn ops() -> *const pg_sys::TupleTableSlotOps {
    &raw const OPS
}

/// Records who wrote the row now in `slot`, if it is a columnar slot.
pub unsafe fn set_writer(slot: *mut pg_sys::TupleTableSlot, xmin: pg_sys::TransactionId, cmin: u32) {
    if std::ptr::eq((*slot).tts_ops, ops()) {
        let s = slot as *mut ColumnarSlot;
        (*s).xmin = xmin;
        (*s).cmin = cmin;
    }
}
