//! Logical change records of columnar rows (`format::logical_record`), written when
//! `wal_level = logical` beside the page images that make the change durable: the new
//! rows of an INSERT, UPDATE or COPY, and the replica identity's old key (or whole old
//! row) of an UPDATE or DELETE, decided as heap decides it. Logical decoding reads them
//! through pgcolumnar's WAL resource manager (`glue::wal_resource_manager`); VACUUM's
//! merges and rewrites write none, as heap's rewrites send none.

use crate::storage::change::row_change;
use crate::storage::format::logical_record::{self, FileNode, RecordBuilder, TupleImage};
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::shared::error::not_configured;
use pgrx::pg_sys;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `_PG_init` when the resource manager was registered (the library is in
/// `shared_preload_libraries`): records of an unregistered resource manager would stop
/// recovery and decoding.
static REGISTERED: AtomicBool = AtomicBool::new(false);

pub fn set_registered() {
    REGISTERED.store(true, Ordering::Relaxed);
}

/// Whether changes of `rel` need logical change records: `wal_level = logical` and a
/// permanent relation, as heap's `RelationIsLogicallyLogged` decides (a columnar table
/// is never a catalog).
///
/// # Safety
/// `rel` must be an open relation; on the backend thread.
pub unsafe fn wanted(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees `rel` is an open relation; `wal_level` is a plain
    // global of this backend.
    let wanted = unsafe {
        pg_sys::wal_level >= pg_sys::WalLevel::WAL_LEVEL_LOGICAL as i32
            && (*(*rel).rd_rel).relpersistence == pg_sys::RELPERSISTENCE_PERMANENT as i8
    };
    if wanted && !REGISTERED.load(Ordering::Relaxed) {
        not_configured(
            "columnar tables cannot be written under wal_level = logical unless pgcolumnar is in \
             shared_preload_libraries",
            "Logical decoding reads columnar changes through pgcolumnar's WAL resource manager, \
             which is registered only when the library is preloaded: add pgcolumnar to \
             shared_preload_libraries and restart.",
        );
    }
    wanted
}

/// Logs the rows in `slots` as inserted into `rel`, in records of about
/// `RECORD_BYTES_TARGET` bytes.
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`; every slot must be valid and hold a
/// row of `rel`; on the backend thread inside a transaction.
pub unsafe fn log_inserts(rel: pg_sys::Relation, slots: &[*mut pg_sys::TupleTableSlot]) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is open, the slots are valid
    // and hold rows of `rel`, so their values may be read and formed into tuples, and the
    // WAL may be written on the backend thread inside a transaction.
    unsafe {
        let mut record = RecordBuilder::new(file_node(rel));
        for &slot in slots {
            let tuple = slot_tuple(rel, slot, None);
            record.push_new(&image(tuple));
            pg_sys::heap_freetuple(tuple);
            if record.len() >= logical_record::RECORD_BYTES_TARGET {
                insert_record(logical_record::INSERT, &record);
                record = RecordBuilder::new(file_node(rel));
            }
        }
        if record.new_tuples() > 0 {
            insert_record(logical_record::INSERT, &record);
        }
    }
}

/// Logs the UPDATE of the row at `otid` (still readable, now deleted) to the row in
/// `new_slot`: the new row, and the old key if the replica identity needs it (its
/// columns changed) or the whole old row under REPLICA IDENTITY FULL.
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`, locked by the caller; `otid` a
/// valid item pointer; `new_slot` a valid slot holding a row of `rel`; on the backend
/// thread inside a transaction.
pub unsafe fn log_update(
    rel: pg_sys::Relation,
    otid: &pg_sys::ItemPointerData,
    new_slot: *mut pg_sys::TupleTableSlot,
) {
    // SAFETY: the caller guarantees this fn's contract (see `log_inserts`); the old row is
    // read through a slot made and dropped here.
    unsafe {
        let mut record = RecordBuilder::new(file_node(rel));
        let identity = Identity::of(rel);
        add_old(&mut record, rel, otid, &identity, |old| match &identity {
            Identity::Nothing => false,
            Identity::Full => true,
            Identity::Key(attrs) => {
                pg_sys::slot_getallattrs(new_slot);
                attrs.iter().any(|&i| !same_value(rel, i, old, new_slot))
            }
        });
        let tuple = slot_tuple(rel, new_slot, None);
        record.push_new(&image(tuple));
        pg_sys::heap_freetuple(tuple);
        insert_record(logical_record::UPDATE, &record);
    }
}

/// Logs the DELETE of the row at `tid` (still readable, now deleted), with its replica
/// identity's key or whole row (nothing under REPLICA IDENTITY NOTHING, or DEFAULT with
/// no primary key: then decoding shows the delete without data, as for heap).
///
/// # Safety
/// `rel` must be an open relation with `wanted(rel)`, locked by the caller; `tid` a valid
/// item pointer; on the backend thread inside a transaction.
pub unsafe fn log_delete(rel: pg_sys::Relation, tid: &pg_sys::ItemPointerData) {
    // SAFETY: the caller guarantees this fn's contract (see `log_update`).
    unsafe {
        let mut record = RecordBuilder::new(file_node(rel));
        add_old(&mut record, rel, tid, &Identity::of(rel), |_| true);
        insert_record(logical_record::DELETE, &record);
    }
}

/// What the replica identity asks an UPDATE or DELETE to log of the old row.
enum Identity {
    Nothing,
    Full,
    /// The attribute indexes (0-based) of the identity's key; DEFAULT without a primary
    /// key logs nothing, like NOTHING.
    Key(Vec<usize>),
}

impl Identity {
    unsafe fn of(rel: pg_sys::Relation) -> Identity {
        // SAFETY: `rel` is an open relation (every caller's contract); the bitmap is a copy
        // we free.
        unsafe {
            match (*(*rel).rd_rel).relreplident as u8 {
                pg_sys::REPLICA_IDENTITY_NOTHING => Identity::Nothing,
                pg_sys::REPLICA_IDENTITY_FULL => Identity::Full,
                _ => {
                    let set = pg_sys::RelationGetIndexAttrBitmap(
                        rel,
                        pg_sys::IndexAttrBitmapKind::INDEX_ATTR_BITMAP_IDENTITY_KEY,
                    );
                    let natts = (*(*rel).rd_att).natts as usize;
                    let attrs: Vec<usize> = (0..natts)
                        .filter(|&i| {
                            pg_sys::bms_is_member(
                                i as i32 + 1 - pg_sys::FirstLowInvalidHeapAttributeNumber,
                                set,
                            )
                        })
                        .collect();
                    pg_sys::bms_free(set);
                    if attrs.is_empty() {
                        Identity::Nothing
                    } else {
                        Identity::Key(attrs)
                    }
                }
            }
        }
    }

    /// The old tuple to log: the whole row, or its key columns with NULL elsewhere.
    unsafe fn old_tuple(
        &self,
        rel: pg_sys::Relation,
        old: *mut pg_sys::TupleTableSlot,
    ) -> Option<pg_sys::HeapTuple> {
        // SAFETY: `rel` is open and `old` holds a row of it (callers' contracts).
        unsafe {
            match self {
                Identity::Nothing => None,
                Identity::Full => Some(slot_tuple(rel, old, None)),
                Identity::Key(attrs) => Some(slot_tuple(rel, old, Some(attrs))),
            }
        }
    }
}

/// Adds to `record` what `identity` logs of the row version at `tid` (deleted or not),
/// if `required` says that row needs it. The row is read only when the identity logs
/// something; nothing is added if the row is gone, which a row this statement just
/// changed never is.
unsafe fn add_old(
    record: &mut RecordBuilder,
    rel: pg_sys::Relation,
    tid: &pg_sys::ItemPointerData,
    identity: &Identity,
    required: impl FnOnce(*mut pg_sys::TupleTableSlot) -> bool,
) {
    // SAFETY: `rel` is open and locked, `tid` valid (callers' contracts); the slot is made
    // for the relation's own slot type and dropped here.
    unsafe {
        if matches!(identity, Identity::Nothing) {
            return;
        }
        let slot = pg_sys::MakeSingleTupleTableSlot((*rel).rd_att, crate::storage::relation::slot::ops());
        if row_change::fetch_any(rel, tid, slot) {
            pg_sys::slot_getallattrs(slot);
            if required(slot) {
                if let Some(tuple) = identity.old_tuple(rel, slot) {
                    record.set_old(&image(tuple));
                    pg_sys::heap_freetuple(tuple);
                }
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
    }
}

/// Whether attribute `i` has the same bytes in both slots (both fully deformed), as heap
/// compares identity columns to decide whether an UPDATE logs the old key; varlena
/// values are compared detoasted.
unsafe fn same_value(
    rel: pg_sys::Relation,
    i: usize,
    a: *mut pg_sys::TupleTableSlot,
    b: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: both slots are deformed rows of `rel` (callers' contracts): `i` indexes their
    // value arrays, and by-reference values point at valid data of the attribute's type.
    unsafe {
        let (null_a, null_b) = (*(*a).tts_isnull.add(i), *(*b).tts_isnull.add(i));
        if null_a || null_b {
            return null_a == null_b;
        }
        let (va, vb) = (*(*a).tts_values.add(i), *(*b).tts_values.add(i));
        match datum::relation_kinds(rel)[i] {
            kind @ (ColumnKind::Fixed { .. } | ColumnKind::CString | ColumnKind::Varlena) => {
                datum::with_stored_bytes(kind, va, |x| datum::with_stored_bytes(kind, vb, |y| x == y))
            }
            _ => va == vb,
        }
    }
}

/// The slot's row as a heap tuple of `rel`'s descriptor, values stored outside the row
/// (TOAST pointers, expanded objects) brought inline, as heap flattens the tuples it
/// logs for decoding; with `only`, the other columns are NULL (an identity key).
unsafe fn slot_tuple(
    rel: pg_sys::Relation,
    slot: *mut pg_sys::TupleTableSlot,
    only: Option<&[usize]>,
) -> pg_sys::HeapTuple {
    // SAFETY: `slot` holds a row of `rel` (callers' contracts); after `slot_getallattrs` its
    // arrays hold `natts` deformed values; inlined copies are freed once formed.
    unsafe {
        pg_sys::slot_getallattrs(slot);
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let mut values = std::slice::from_raw_parts((*slot).tts_values, natts).to_vec();
        let mut nulls = std::slice::from_raw_parts((*slot).tts_isnull, natts).to_vec();
        let mut inlined = Vec::new();
        for i in 0..natts {
            if only.is_some_and(|keep| !keep.contains(&i)) {
                nulls[i] = true;
                continue;
            }
            let att = &*(*desc).attrs.as_ptr().add(i);
            if nulls[i] || att.attlen != -1 {
                continue;
            }
            let p = values[i].cast_mut_ptr::<pg_sys::varlena>();
            if pgrx::varlena::varatt_is_1b_e(p) {
                let inline = pg_sys::detoast_external_attr(p);
                values[i] = pg_sys::Datum::from(inline);
                inlined.push(inline);
            }
        }
        let tuple = pg_sys::heap_form_tuple(desc, values.as_mut_ptr(), nulls.as_mut_ptr());
        for p in inlined {
            pg_sys::pfree(p.cast());
        }
        tuple
    }
}

/// Heap's WAL image of `tuple`: its header fields and the bytes after the fixed header.
unsafe fn image<'a>(tuple: pg_sys::HeapTuple) -> TupleImage<'a> {
    // SAFETY: `tuple` is a formed tuple (callers): `t_data` holds `t_len` bytes, which
    // outlive the image (the caller frees the tuple after copying the image).
    unsafe {
        let header = (*tuple).t_data;
        let fixed = std::mem::offset_of!(pg_sys::HeapTupleHeaderData, t_bits);
        let bytes = std::slice::from_raw_parts(header as *const u8, (*tuple).t_len as usize);
        TupleImage {
            infomask2: (*header).t_infomask2,
            infomask: (*header).t_infomask,
            hoff: (*header).t_hoff,
            data: &bytes[fixed..],
        }
    }
}

unsafe fn file_node(rel: pg_sys::Relation) -> FileNode {
    // SAFETY: `rel` is an open relation (callers' contracts).
    let node = unsafe { (*rel).rd_node };
    FileNode { tablespace: node.spcNode.into(), database: node.dbNode.into(), relation: node.relNode.into() }
}

/// Writes `record` under this transaction's xid (assigned first: the record must carry
/// it, and assigning one may itself write WAL) and its replication origin, as heap's
/// records carry them.
unsafe fn insert_record(info: u8, record: &RecordBuilder) {
    // SAFETY: on the backend thread inside a transaction (callers' contracts); the bytes
    // stay valid until XLogInsert has copied them.
    unsafe {
        pg_sys::GetCurrentTransactionId();
        pg_sys::XLogBeginInsert();
        pg_sys::XLogSetRecordFlags(pg_sys::XLOG_INCLUDE_ORIGIN as u8);
        pg_sys::XLogRegisterData(record.bytes().as_ptr() as *mut std::ffi::c_char, record.len() as _);
        pg_sys::XLogInsert(logical_record::RESOURCE_MANAGER_ID, info);
    }
}
