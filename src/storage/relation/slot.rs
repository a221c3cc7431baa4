//! The slot type of columnar tables: a virtual slot that also knows which transaction
//! and command wrote its row (the row group's writer), so that `xmin` and `cmin` can be
//! read like on heap (foreign-key triggers and ON CONFLICT ask for `xmin`), and that can
//! hold a fetched row whose columns are decoded only when first asked for
//! (`getsomeattrs`, like heap's lazy deforming). Whatever needs every column
//! (materializing, copying into a tuple) decodes the rest first.

use crate::storage::format::image_arena::ImageArena;
use pgrx::pg_guard;
use pgrx::pg_sys;
use std::ptr::addr_of_mut;

#[repr(C)]
struct ColumnarSlot {
    base: pg_sys::VirtualTupleTableSlot,
    xmin: pg_sys::TransactionId,
    cmin: pg_sys::CommandId,
    /// Where a fetched row not decoded beyond `tts_nvalid` yet is kept; null until the
    /// slot first holds one.
    cell: *mut LazyCell,
    /// The attributes anyone reads of the rows fetched into this slot, as a bitset of
    /// attribute indexes (`needed_words` words in the slot's memory context); null when
    /// not known (every attribute is decoded). Set by the executor's plan analysis
    /// (`exec::fetch_columns`) on the scan slots of index and bitmap scans: the other
    /// attributes are stored as NULL without being decoded, as nothing reads them.
    needed: *mut u64,
    needed_words: usize,
}

/// A lazily decoded row's home, allocated in the slot's memory context beside the
/// callback that drops the row when that context goes: an ERROR frees slots without
/// their release callback, and a slot can be freed before its context (so the
/// callback must not point at the slot).
#[repr(C)]
struct LazyCell {
    row: Option<Box<dyn LazyColumns>>,
    /// The arena the last row's by-reference values lived in, for the next row.
    spare: Option<ImageArena>,
    callback: pg_sys::MemoryContextCallback,
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
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call. `isnull` is the caller's out-flag, valid for a write.
    unsafe {
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
}

/// A fetched row whose columns are decoded when first asked for (`fetch::LazyRow`): an
/// index scan that reads the first two columns of twenty decodes two vectors, not twenty.
pub trait LazyColumns {
    /// Stores attributes `from .. to` (indexes) of the row in `values` and `nulls`; an
    /// attribute outside `needed` (when given: a bitset of attribute indexes) is stored
    /// as NULL, undecoded.
    ///
    /// # Safety
    /// `values` and `nulls` must be valid for writes at indexes `from .. to` (the slot's
    /// `tts_values`/`tts_isnull` of at least `to` attributes); call on the backend thread
    /// inside a transaction, while the row's relation is open.
    unsafe fn fill(
        &mut self,
        from: usize,
        to: usize,
        values: *mut pg_sys::Datum,
        nulls: *mut bool,
        needed: Option<&[u64]>,
    );
    /// Lets go of the row and keeps the arena its values lived in, for the next row.
    fn take_arena(self: Box<Self>) -> ImageArena;
    /// Gives the row an arena to keep its values in (one a previous row left).
    fn use_arena(&mut self, images: ImageArena);
}

unsafe fn lazy_row<'a>(slot: *mut pg_sys::TupleTableSlot) -> Option<&'a mut (dyn LazyColumns + 'static)> {
    // SAFETY: the caller passes a columnar slot (one made with `ops()`, so a `ColumnarSlot`);
    // its `cell` is NULL or the LazyCell `set_lazy` allocated in the slot's context, which
    // lives as long as the slot.
    unsafe {
        let cell = (*(slot as *mut ColumnarSlot)).cell;
        if cell.is_null() {
            return None;
        }
        (*cell).row.as_deref_mut()
    }
}

/// Decodes attributes up to `natts` of a lazily fetched row.
#[pg_guard]
unsafe extern "C-unwind" fn getsomeattrs(slot: *mut pg_sys::TupleTableSlot, natts: i32) {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        let Some(lazy) = lazy_row(slot) else { pgrx::error!("columnar slot has no row to decode") };
        let from = (*slot).tts_nvalid as usize;
        lazy.fill(from, natts as usize, (*slot).tts_values, (*slot).tts_isnull, needed_bits(slot));
        (*slot).tts_nvalid = natts as i16;
    }
}

unsafe fn decode_all(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: the caller passes a valid columnar slot (made with `ops()`, so a
    // `ColumnarSlot`), on the backend thread; its `cell` is NULL or the LazyCell `set_lazy`
    // allocated in the slot's memory context.
    unsafe {
        let natts = (*(*slot).tts_tupleDescriptor).natts;
        if ((*slot).tts_nvalid as i32) < natts && lazy_row(slot).is_some() {
            getsomeattrs(slot, natts);
        }
    }
}

unsafe fn drop_lazy(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: the caller passes a valid columnar slot (made with `ops()`, so a
    // `ColumnarSlot`), on the backend thread; its `cell` is NULL or the LazyCell `set_lazy`
    // allocated in the slot's memory context.
    unsafe {
        let cell = (*(slot as *mut ColumnarSlot)).cell;
        if !cell.is_null() {
            if let Some(row) = (*cell).row.take() {
                (*cell).spare = Some(row.take_arena());
            }
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn clear(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        drop_lazy(slot);
        (pg_sys::TTSOpsVirtual.clear.unwrap())(slot);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn release(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        drop_lazy(slot);
        (pg_sys::TTSOpsVirtual.release.unwrap())(slot);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn materialize(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        decode_all(slot);
        (pg_sys::TTSOpsVirtual.materialize.unwrap())(slot);
        // The values are the slot's own now.
        drop_lazy(slot);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn copy_heap_tuple(slot: *mut pg_sys::TupleTableSlot) -> pg_sys::HeapTuple {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        decode_all(slot);
        (pg_sys::TTSOpsVirtual.copy_heap_tuple.unwrap())(slot)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn copy_minimal_tuple(slot: *mut pg_sys::TupleTableSlot) -> pg_sys::MinimalTuple {
    // SAFETY: PostgreSQL calls a slot's ops only on slots made with them, and ours (`ops()`)
    // make `ColumnarSlot`s (their `base_slot_size`), so `slot` may be cast to one; it is
    // valid for this call.
    unsafe {
        decode_all(slot);
        (pg_sys::TTSOpsVirtual.copy_minimal_tuple.unwrap())(slot)
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn copyslot(dst: *mut pg_sys::TupleTableSlot, src: *mut pg_sys::TupleTableSlot) {
    // SAFETY: PostgreSQL calls `copyslot` through `dst`'s ops, so `dst` is a `ColumnarSlot`
    // (see `ops()`); `src` is any valid slot, read only through its own ops and fields.
    unsafe {
        // The virtual copy clears `dst` without going through its callbacks.
        drop_lazy(dst);
        (pg_sys::TTSOpsVirtual.copyslot.unwrap())(dst, src);
        // The copy is the same row: keep where it is and who wrote it, as heap's copies
        // do (their tuple carries t_self). Logical replication's apply finds a row with a
        // scan, copies the slot, then locks and changes the row at the copy's TID.
        (*dst).tts_tid = (*src).tts_tid;
        (*dst).tts_tableOid = (*src).tts_tableOid;
        if (*src).tts_ops == ops() {
            let (d, s) = (dst as *mut ColumnarSlot, src as *mut ColumnarSlot);
            (*d).xmin = (*s).xmin;
            (*d).cmin = (*s).cmin;
        }
    }
}

/// Sets up the slot type (from `_PG_init`): the virtual slot's callbacks, our size,
/// our system attributes, lazily decoded rows.
///
/// # Safety
/// Call once, from `_PG_init`, before any slot uses `ops()`: it writes the static ops table.
pub unsafe fn init() {
    // SAFETY: called once from `_PG_init` on the backend thread, before any slot of ours
    // exists, so nothing reads OPS while it is written; TTSOpsVirtual is PostgreSQL's static
    // ops table.
    unsafe {
        let ops = &mut *addr_of_mut!(OPS);
        *ops = pg_sys::TTSOpsVirtual;
        ops.base_slot_size = std::mem::size_of::<ColumnarSlot>();
        ops.getsysattr = Some(getsysattr);
        ops.getsomeattrs = Some(getsomeattrs);
        ops.clear = Some(clear);
        ops.release = Some(release);
        ops.materialize = Some(materialize);
        ops.copy_heap_tuple = Some(copy_heap_tuple);
        ops.copy_minimal_tuple = Some(copy_minimal_tuple);
        ops.copyslot = Some(copyslot);
    }
}

pub fn ops() -> *const pg_sys::TupleTableSlotOps {
    &raw const OPS
}

/// # Safety
/// `slot` must be a valid tuple slot.
pub unsafe fn is_columnar(slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot.
    unsafe { std::ptr::eq((*slot).tts_ops, ops()) }
}

#[pg_guard]
unsafe extern "C-unwind" fn drop_with_context(arg: *mut std::ffi::c_void) {
    // SAFETY: `arg` is the LazyCell this callback was registered with (`set_lazy`), allocated
    // in the memory context being reset or deleted, so it is still valid while the callback
    // runs.
    unsafe {
        (*(arg as *mut LazyCell)).row = None;
        (*(arg as *mut LazyCell)).spare = None;
    }
}

/// Gives a stored (virtual, empty of values) columnar slot its row to decode lazily.
///
/// # Safety
/// `slot` must be a valid columnar slot (made with `ops()`); call on the backend thread
/// inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn set_lazy(slot: *mut pg_sys::TupleTableSlot, row: impl LazyColumns + 'static) {
    // SAFETY: the caller passes a valid columnar slot (this fn's contract), so it is a
    // `ColumnarSlot` whose `cell` is NULL or ours; the cell is allocated in the slot's memory
    // context and zeroed, and its fields are written before being read; we are on the backend
    // thread, where MemoryContext calls are allowed.
    unsafe {
        let s = slot as *mut ColumnarSlot;
        if (*s).cell.is_null() {
            let cell = pg_sys::MemoryContextAllocZero((*slot).tts_mcxt, std::mem::size_of::<LazyCell>())
                as *mut LazyCell;
            // Zeroed memory is not a valid `None` for every Option: write the fields.
            std::ptr::addr_of_mut!((*cell).row).write(None);
            std::ptr::addr_of_mut!((*cell).spare).write(None);
            (*cell).callback.func = Some(drop_with_context);
            (*cell).callback.arg = cell as *mut std::ffi::c_void;
            pg_sys::MemoryContextRegisterResetCallback((*slot).tts_mcxt, &mut (*cell).callback);
            (*s).cell = cell;
        }
        let mut row = row;
        if let Some(arena) = (*(*s).cell).spare.take() {
            row.use_arena(arena);
        }
        (*(*s).cell).row = Some(Box::new(row));
        (*slot).tts_nvalid = 0;
    }
}

/// Empties a virtual or columnar slot as its `clear` does, inline, when that takes no
/// call into PostgreSQL: the slot holds no lazily fetched row and no values of its own
/// (a materialized row's copies, which `clear` frees). False, with the slot untouched,
/// otherwise or for a slot of any other type. A scan's per-row path then needs no
/// guarded call (`store_values` after filling `tts_values`/`tts_isnull`).
///
/// # Safety
/// `slot` must be a valid tuple slot.
pub unsafe fn clear_in_place(slot: *mut pg_sys::TupleTableSlot) -> bool {
    // SAFETY: `slot` is a valid tuple slot (this fn's contract), and one made with `ops()`
    // is a `ColumnarSlot`, whose `cell` is NULL or the LazyCell `set_lazy` allocated in the
    // slot's memory context; TTSOpsVirtual is PostgreSQL's static ops table, only compared.
    unsafe {
        if (*slot).tts_flags & pg_sys::TTS_FLAG_SHOULDFREE as u16 != 0 {
            return false;
        }
        if is_columnar(slot) {
            let cell = (*(slot as *mut ColumnarSlot)).cell;
            if !cell.is_null() && (*cell).row.is_some() {
                return false;
            }
        } else if !std::ptr::eq((*slot).tts_ops, &raw const pg_sys::TTSOpsVirtual) {
            return false;
        }
        // What tts_virtual_clear does to a slot without values of its own.
        (*slot).tts_nvalid = 0;
        (*slot).tts_flags |= pg_sys::TTS_FLAG_EMPTY as u16;
        true
    }
}

/// Marks an emptied slot as holding the row its `tts_values`/`tts_isnull` now hold, as
/// ExecStoreVirtualTuple does (inline: no call into PostgreSQL).
///
/// # Safety
/// `slot` must be a valid, empty virtual-like slot (a columnar one `clear_in_place`
/// emptied) whose arrays hold a value for every attribute of its descriptor.
pub unsafe fn store_values(slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: `slot` is a valid slot and its descriptor live (this fn's contract).
    unsafe {
        (*slot).tts_flags &= !(pg_sys::TTS_FLAG_EMPTY as u16);
        (*slot).tts_nvalid = (*(*slot).tts_tupleDescriptor).natts as i16;
    }
}

/// Tells a columnar slot which attributes (indexes) are read of the rows fetched into
/// it; the others are stored as NULL undecoded. The caller vouches that nothing reads
/// them, nor copies of the slot's rows.
///
/// # Safety
/// `slot` must be a valid tuple slot; call on the backend thread inside a transaction (it
/// calls PostgreSQL, which may raise an error).
pub unsafe fn set_needed(slot: *mut pg_sys::TupleTableSlot, needed: &[bool]) {
    // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot, and we
    // are on the backend thread inside a transaction, so the PostgreSQL calls below are
    // allowed.
    unsafe {
        if !is_columnar(slot) {
            return;
        }
        let s = slot as *mut ColumnarSlot;
        let words = needed.len().div_ceil(64);
        let bits = pg_sys::MemoryContextAllocZero((*slot).tts_mcxt, words.max(1) * 8) as *mut u64;
        for (i, _) in needed.iter().enumerate().filter(|(_, &n)| n) {
            *bits.add(i / 64) |= 1 << (i % 64);
        }
        (*s).needed = bits;
        (*s).needed_words = words;
    }
}

/// Which attributes anyone reads of rows fetched into `slot`, as a bitset of attribute
/// indexes; None when that is not known (every attribute is decoded). The bitset's
/// address names it: `set_needed` allocates a new one each time.
///
/// # Safety
/// `slot` must be a valid tuple slot; the slice lives as long as the slot's memory
/// context and its `needed`.
pub unsafe fn needed_bits<'a>(slot: *mut pg_sys::TupleTableSlot) -> Option<&'a [u64]> {
    // SAFETY: `slot` is a valid tuple slot (this fn's contract); a columnar slot's `needed`
    // is null or `needed_words` words in its memory context.
    unsafe {
        if !is_columnar(slot) {
            return None;
        }
        let s = slot as *mut ColumnarSlot;
        (!(*s).needed.is_null()).then(|| std::slice::from_raw_parts((*s).needed, (*s).needed_words))
    }
}

/// The attribute numbers (ascending) of the first `natts` attributes in `needed`.
pub fn needed_attnums(needed: &[u64], natts: usize) -> Vec<i16> {
    (0..natts).filter(|&i| is_needed(Some(needed), i)).map(|i| i as i16 + 1).collect()
}

/// Whether attribute index `i` is in a `needed` bitset (attributes past its end are).
pub fn is_needed(needed: Option<&[u64]>, i: usize) -> bool {
    needed.is_none_or(|bits| bits.get(i / 64).is_none_or(|w| w & (1 << (i % 64)) != 0))
}

/// Records who wrote the row now in `slot`, if it is a columnar slot.
///
/// # Safety
/// `slot` must be a valid tuple slot; call on the backend thread inside a transaction (it
/// calls PostgreSQL, which may raise an error).
pub unsafe fn set_writer(slot: *mut pg_sys::TupleTableSlot, xmin: pg_sys::TransactionId, cmin: u32) {
    // SAFETY: the caller guarantees this fn's contract: `slot` is a valid tuple slot, and we
    // are on the backend thread inside a transaction, so the PostgreSQL calls below are
    // allowed.
    unsafe {
        if is_columnar(slot) {
            let s = slot as *mut ColumnarSlot;
            (*s).xmin = xmin;
            (*s).cmin = cmin;
        }
    }
}

/// The transaction that wrote the row in `slot` (InvalidTransactionId if the slot is not
/// a columnar slot or does not know).
///
/// # Safety
/// `slot` must be a valid tuple slot.
pub unsafe fn writer_xid(slot: *mut pg_sys::TupleTableSlot) -> pg_sys::TransactionId {
    // SAFETY: the caller guarantees `slot` is valid; a columnar slot is a `ColumnarSlot`.
    unsafe {
        if is_columnar(slot) {
            (*(slot as *mut ColumnarSlot)).xmin
        } else {
            pg_sys::InvalidTransactionId
        }
    }
}
