//! pgcolumnar's WAL resource manager (PostgreSQL 15's custom resource managers): the
//! logical change records `change::logical_log` writes, and the rows a row group's
//! `ROW_GROUP_WRITE` record carries encoded (`format::row_group_record`), are decoded here
//! into the changes heap's records become, so publications, `test_decoding`, `pgoutput`
//! and every other output plugin see a columnar table's rows like a heap table's. Redo
//! has nothing to do for change records (the pages those changes wrote are WAL-logged by
//! their own records); it replays the page writes (`relation::pages`: `PAGE_WRITE` and
//! `ROW_GROUP_WRITE`), which decoding skips unless a row group carries rows.
//!
//! It also keeps pgcolumnar's metadata out of decoded streams: the metadata tables are
//! ordinary tables, so their rows would be decoded as user changes. Inserts into them
//! are logged without logical data (`HEAP_INSERT_NO_LOGICAL`, as core logs TOAST rewrites),
//! and every change decoding still finds for them is dropped before it reaches the output
//! plugin, as core drops changes of its catalogs.

use crate::storage::change::logical_log;
use crate::storage::format::logical_record::{self, FileNode, Record, TupleImage, Xids};
use crate::storage::format::row_group_record::GroupRows;
use crate::storage::format::{page_write, space_reuse};
use crate::storage::relation::pages;
use crate::storage::shared::error::data_corrupted;
use pgrx::pg_sys;
use pgrx::prelude::*;

/// `XLogRecordBuffer` (replication/decode.h, which pgrx does not bind).
#[repr(C)]
struct RecordBuffer {
    origptr: pg_sys::XLogRecPtr,
    endptr: pg_sys::XLogRecPtr,
    record: *mut pg_sys::XLogReaderState,
}

// Called through pg_guard_ffi_boundary (it allocates, so it may raise an error).
unsafe extern "C-unwind" {
    /// replication/snapbuild.h: whether a change of `xid` at `lsn` is to be decoded (the
    /// snapshot builder is far enough), giving its transaction a base snapshot.
    fn SnapBuildProcessChange(
        builder: *mut pg_sys::SnapBuild,
        xid: pg_sys::TransactionId,
        lsn: pg_sys::XLogRecPtr,
    ) -> bool;
}

type DecodeFn =
    unsafe extern "C-unwind" fn(*mut pg_sys::LogicalDecodingContext, *mut pg_sys::XLogRecordBuffer);

static mut HEAP_DECODE: Option<DecodeFn> = None;
static mut APPLY_CHANGE: pg_sys::ReorderBufferApplyChangeCB = None;
static mut STREAM_CHANGE: pg_sys::ReorderBufferStreamChangeCB = None;

/// Registers the resource manager and the metadata filter; only while the postmaster
/// loads `shared_preload_libraries` (PostgreSQL allows it then only). Without it,
/// `logical_log::wanted` refuses writes of columnar tables under `wal_level = logical`.
///
/// # Safety
/// Call once, from `_PG_init`, on the postmaster's (or a backend's) only thread.
pub unsafe fn register() {
    // SAFETY: the caller guarantees we run in `_PG_init`, single-threaded, before any WAL is
    // read or decoded; RegisterCustomRmgr copies the struct, whose name is a static string;
    // the heap entry of RmgrTable is a valid element (RM_HEAP_ID is a built-in id).
    unsafe {
        if !pg_sys::process_shared_preload_libraries_in_progress {
            return;
        }
        let mut rmgr = pg_sys::RmgrData {
            rm_name: logical_record::RESOURCE_MANAGER_NAME.as_ptr(),
            rm_redo: Some(redo),
            rm_desc: Some(describe),
            rm_identify: Some(identify),
            rm_startup: None,
            rm_cleanup: None,
            rm_mask: Some(mask),
            rm_decode: Some(decode),
        };
        pg_sys::RegisterCustomRmgr(logical_record::RESOURCE_MANAGER_ID, &mut rmgr);
        let heap =
            (&raw mut pg_sys::RmgrTable as *mut pg_sys::RmgrData).add(pg_sys::RmgrIds::RM_HEAP_ID as usize);
        HEAP_DECODE = (*heap).rm_decode;
        (*heap).rm_decode = Some(heap_decode);
        logical_log::set_registered();
        pages::log_page_writes_as_records();
    }
}

// From access/bufmask.h, which pgrx does not bind.
unsafe extern "C-unwind" {
    fn mask_page_lsn_and_checksum(page: pg_sys::Page);
    fn mask_unused_space(page: pg_sys::Page);
}

/// What `wal_consistency_checking` leaves out when it compares a page redo wrote with
/// the image the record carries: the LSN and checksum, and the hole between `pd_lower`
/// and `pd_upper` (an image with REGBUF_STANDARD leaves it out). Our pages have no hint
/// bits: everything else must match byte for byte.
#[pg_guard]
unsafe extern "C-unwind" fn mask(page: *mut std::ffi::c_char, _block: pg_sys::BlockNumber) {
    // SAFETY: recovery passes a copy of a page of the record's relation, ours to change.
    unsafe {
        mask_page_lsn_and_checksum(page as pg_sys::Page);
        mask_unused_space(page as pg_sys::Page);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn redo(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: recovery calls this with a decoded record of ours.
    unsafe {
        let info = (*(*record).record).header.xl_info;
        match info & logical_record::OPERATION_MASK {
            logical_record::PAGE_WRITE => pages::redo_page_write(record),
            logical_record::ROW_GROUP_WRITE => pages::redo_row_group_write(record),
            logical_record::SPACE_REUSE => redo_space_reuse(record),
            // Logical change records: their pages are logged by page writes.
            logical_record::INSERT | logical_record::UPDATE | logical_record::DELETE => {}
            // Skipping a record would leave pages behind the primary's without a word.
            _ => pgrx::ereport!(
                PgLogLevel::ERROR,
                PgSqlErrorCode::ERRCODE_FEATURE_NOT_SUPPORTED,
                format!("pgcolumnar WAL record at {:X} has unknown info {info:#x}", (*record).ReadRecPtr),
                "It was written by a newer pgcolumnar library: install that library here."
            ),
        }
    }
}

/// Replays a `SPACE_REUSE` record (`pages::log_space_reuse`): on a hot standby, the
/// queries whose snapshots may still see what the freeing transaction removed are
/// cancelled (after `max_standby_streaming_delay`), as for heap's and btree's removals.
///
/// # Safety
/// `record` must be a decoded `SPACE_REUSE` record, during recovery.
unsafe fn redo_space_reuse(record: *mut pg_sys::XLogReaderState) {
    // SAFETY: this fn's contract: the record is decoded; its main data is ours.
    unsafe {
        let (node, freed_by) = space_reuse::parse(main_data(record)).unwrap_or_else(|e| {
            data_corrupted(&format!("pgcolumnar WAL record at {:X}: {}", (*record).ReadRecPtr, e.0))
        });
        if pg_sys::standbyState >= pg_sys::HotStandbyState::STANDBY_SNAPSHOT_PENDING {
            pg_sys::ResolveRecoveryConflictWithSnapshot(freed_by.into(), file_node(node));
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn identify(info: u8) -> *const std::ffi::c_char {
    match logical_record::operation_name(info) {
        Some("INSERT") => c"INSERT".as_ptr(),
        Some("UPDATE") => c"UPDATE".as_ptr(),
        Some("DELETE") => c"DELETE".as_ptr(),
        Some("PAGE_WRITE") => c"PAGE_WRITE".as_ptr(),
        Some("SPACE_REUSE") => c"SPACE_REUSE".as_ptr(),
        Some("ROW_GROUP_WRITE") => c"ROW_GROUP_WRITE".as_ptr(),
        _ => std::ptr::null(),
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn describe(buf: pg_sys::StringInfo, record: *mut pg_sys::XLogReaderState) {
    // SAFETY: PostgreSQL calls this with a valid StringInfo and a decoded record.
    unsafe {
        let info = (*(*record).record).header.xl_info;
        let text = match info & logical_record::OPERATION_MASK {
            logical_record::SPACE_REUSE => match space_reuse::parse(main_data(record)) {
                Ok((node, freed_by)) => format!(
                    "rel {}/{}/{}; space freed by {freed_by}",
                    node.tablespace, node.database, node.relation
                ),
                Err(e) => format!("malformed: {}", e.0),
            },
            logical_record::ROW_GROUP_WRITE if main_data(record).is_empty() => {
                format!("{} page(s), no rows logged", (*(*record).record).max_block_id + 1)
            }
            logical_record::ROW_GROUP_WRITE => match GroupRows::parse(main_data(record)) {
                Ok(rows) => format!(
                    "rel {}/{}/{}; {} of {} rows logged, {} page(s)",
                    rows.node.tablespace,
                    rows.node.database,
                    rows.node.relation,
                    rows.logged_rows(),
                    rows.rows,
                    (*(*record).record).max_block_id + 1
                ),
                Err(e) => format!("malformed: {}", e.0),
            },
            // A full-page image replaces the block's data (not registered to be kept).
            logical_record::PAGE_WRITE if has_image_only(record) => "full-page image".to_string(),
            logical_record::PAGE_WRITE => match page_write::parse(pages::block_data(record, 0)) {
                Ok((in_page, bytes)) => format!(
                    "{} bytes at {in_page}{}",
                    bytes.len(),
                    if info & logical_record::PAGE_INIT != 0 { ", page initialized" } else { "" }
                ),
                Err(e) => format!("malformed: {}", e.0),
            },
            _ => {
                match logical_record::expand(main_data(record)).and_then(|plain| {
                    Record::parse(&plain).map(|r| {
                        format!(
                            "rel {}/{}/{}; {} new tuple(s){}{}",
                            r.node.tablespace,
                            r.node.database,
                            r.node.relation,
                            r.new.len(),
                            if r.old.is_some() { ", old tuple" } else { "" },
                            if matches!(plain, std::borrow::Cow::Owned(_)) { ", compressed" } else { "" }
                        )
                    })
                }) {
                    Ok(text) => text,
                    Err(e) => format!("malformed: {}", e.0),
                }
            }
        };
        let text = std::ffi::CString::new(text).unwrap_or_default();
        pg_sys::appendStringInfoString(buf, text.as_ptr());
    }
}

/// Whether the record's block 0 comes as a full-page image without data: the first
/// change of the page after a checkpoint (`full_page_writes`), which redo restores whole.
unsafe fn has_image_only(record: *mut pg_sys::XLogReaderState) -> bool {
    // SAFETY: `record` has a decoded record (callers); `blocks` holds `max_block_id + 1`
    // entries.
    unsafe {
        let decoded = (*record).record;
        (*decoded).max_block_id >= 0 && {
            let block = &*(*decoded).blocks.as_ptr();
            block.has_image && !block.has_data
        }
    }
}

unsafe fn main_data<'a>(record: *mut pg_sys::XLogReaderState) -> &'a [u8] {
    // SAFETY: `record` has a decoded record (callers): its main data is `main_data_len`
    // bytes, valid while the record is.
    unsafe {
        let decoded = (*record).record;
        if (*decoded).main_data_len == 0 {
            return &[];
        }
        std::slice::from_raw_parts((*decoded).main_data as *const u8, (*decoded).main_data_len as usize)
    }
}

/// Decodes one of our records as heap_decode decodes heap's: the transaction is made
/// known, and once the snapshot builder can decode it, each row becomes an INSERT,
/// UPDATE or DELETE change of the transaction (which the reorder buffer orders, spills
/// to disk or streams, and drops with an abort).
#[pg_guard]
unsafe extern "C-unwind" fn decode(
    ctx: *mut pg_sys::LogicalDecodingContext,
    buf: *mut pg_sys::XLogRecordBuffer,
) {
    // SAFETY: logical decoding calls this for our records with its context and the record's
    // buffer (whose layout `RecordBuffer` mirrors); the changes and tuple buffers come from
    // the reorder buffer, which takes them over in ReorderBufferQueueChange.
    unsafe {
        let buf = buf as *mut RecordBuffer;
        let decoded = (*(*buf).record).record;
        let lsn = (*buf).origptr;
        // A page write, a space reuse or a row group written without rows to decode has
        // no logical content: only its transaction is made known, as decoding does for
        // the records of resource managers that decode nothing.
        let op = (*decoded).header.xl_info & logical_record::OPERATION_MASK;
        let no_rows = op == logical_record::ROW_GROUP_WRITE && (*decoded).main_data_len == 0;
        if no_rows || matches!(op, logical_record::PAGE_WRITE | logical_record::SPACE_REUSE) {
            pg_sys::ReorderBufferProcessXid((*ctx).reorder, (*decoded).header.xl_xid, lsn);
            return;
        }
        let corrupt = |e: &str| -> ! { data_corrupted(&format!("pgcolumnar WAL record at {lsn:X}: {e}")) };
        if op == logical_record::ROW_GROUP_WRITE {
            let rows = GroupRows::parse(main_data((*buf).record)).unwrap_or_else(|e| corrupt(e.0));
            let Some(xid) = to_decode(ctx, decoded, Some(rows.xids), rows.node, lsn) else { return };
            // Only now that the rows are wanted: read back out of the row group's bytes.
            let bytes = pages::row_group_bytes((*buf).record).unwrap_or_else(|e| corrupt(e.0));
            for record in rows.records(&bytes).unwrap_or_else(|e| corrupt(e.0)) {
                let bytes = record.into_bytes();
                let record = Record::parse(&bytes).unwrap_or_else(|e| corrupt(e.0));
                queue_changes(ctx, decoded, lsn, logical_record::INSERT, &record, xid);
            }
            return;
        }
        let plain = logical_record::expand(main_data((*buf).record));
        let record = match plain.as_deref().map_err(|e| e.0).and_then(|p| Record::parse(p).map_err(|e| e.0)) {
            Ok(r) => r,
            Err(e) => corrupt(e),
        };
        if let Some(xid) = to_decode(ctx, decoded, record.xids, record.node, lsn) {
            queue_changes(ctx, decoded, lsn, op, &record, xid);
        }
    }
}

/// The transaction whose changes a record of ours holds, made known to the reorder
/// buffer, if its changes are to be decoded: the record's own, or the one it names
/// (inserts gathered over a statement, written maybe from inside a subtransaction it
/// started), made known as the top-level transaction's child as a record's top-level
/// xid is. None when the snapshot builder cannot decode it yet, the context only
/// fast-forwards, the relation is of another database, or the output plugin filters
/// the record's origin out.
///
/// # Safety
/// `ctx` and `decoded` are logical decoding's context and the record it decodes.
unsafe fn to_decode(
    ctx: *mut pg_sys::LogicalDecodingContext,
    decoded: *mut pg_sys::DecodedXLogRecord,
    xids: Option<Xids>,
    node: FileNode,
    lsn: pg_sys::XLogRecPtr,
) -> Option<pg_sys::TransactionId> {
    // SAFETY: this fn's contract.
    unsafe {
        let rb = (*ctx).reorder;
        let xid = match xids {
            None => (*decoded).header.xl_xid,
            Some(xids) => {
                if xids.own != xids.top {
                    pg_sys::ReorderBufferAssignChild(rb, xids.top.into(), xids.own.into(), lsn);
                }
                xids.own.into()
            }
        };
        pg_sys::ReorderBufferProcessXid(rb, xid, lsn);
        let builder = (*ctx).snapshot_builder;
        if (*ctx).fast_forward
            || !pg_sys::ffi::pg_guard_ffi_boundary(|| SnapBuildProcessChange(builder, xid, lsn))
        {
            return None;
        }
        if node.database != u32::from((*(*ctx).slot).data.database) {
            return None;
        }
        let origin = (*decoded).record_origin;
        if (*ctx).callbacks.filter_by_origin_cb.is_some() && pg_sys::filter_by_origin_cb_wrapper(ctx, origin)
        {
            return None;
        }
        Some(xid)
    }
}

/// Queues the changes of `record`, an `op` record, as transaction `xid`'s (`to_decode`'s).
///
/// # Safety
/// As `to_decode`; `lsn` is the record's.
unsafe fn queue_changes(
    ctx: *mut pg_sys::LogicalDecodingContext,
    decoded: *mut pg_sys::DecodedXLogRecord,
    lsn: pg_sys::XLogRecPtr,
    op: u8,
    record: &Record<'_>,
    xid: pg_sys::TransactionId,
) {
    // SAFETY: this fn's contract; the changes and tuple buffers come from the reorder
    // buffer, which takes them over in ReorderBufferQueueChange.
    unsafe {
        let rb = (*ctx).reorder;
        let origin = (*decoded).record_origin;
        use pg_sys::ReorderBufferChangeType::*;
        let queue = |action, old: Option<&TupleImage<'_>>, new: Option<&TupleImage<'_>>| {
            let change = pg_sys::ReorderBufferGetChange(rb);
            (*change).action = action;
            (*change).origin_id = origin;
            let tp = &mut (*change).data.tp;
            tp.relnode = file_node(record.node);
            tp.oldtuple = old.map_or(std::ptr::null_mut(), |t| tuple_buffer(rb, t));
            tp.newtuple = new.map_or(std::ptr::null_mut(), |t| tuple_buffer(rb, t));
            tp.clear_toast_afterwards = true;
            pg_sys::ReorderBufferQueueChange(rb, xid, lsn, change, false);
        };
        match op {
            logical_record::INSERT => {
                for t in &record.new {
                    queue(REORDER_BUFFER_CHANGE_INSERT, None, Some(t));
                }
            }
            logical_record::UPDATE => {
                queue(REORDER_BUFFER_CHANGE_UPDATE, record.old.as_ref(), record.new.first())
            }
            logical_record::DELETE => queue(REORDER_BUFFER_CHANGE_DELETE, record.old.as_ref(), None),
            other => data_corrupted(&format!("pgcolumnar WAL record at {lsn:X} has unknown info {other:#x}")),
        }
    }
}

fn file_node(node: FileNode) -> pg_sys::RelFileNode {
    pg_sys::RelFileNode {
        spcNode: node.tablespace.into(),
        dbNode: node.database.into(),
        relNode: node.relation.into(),
    }
}

/// A reorder-buffer tuple holding `t`, as decode.c's DecodeXLogTuple fills one.
unsafe fn tuple_buffer(
    rb: *mut pg_sys::ReorderBuffer,
    t: &TupleImage<'_>,
) -> *mut pg_sys::ReorderBufferTupleBuf {
    // SAFETY: ReorderBufferGetTupleBuf allocates room for the fixed header and `len` more
    // bytes at `t_data`; we write exactly that much.
    unsafe {
        let fixed = std::mem::offset_of!(pg_sys::HeapTupleHeaderData, t_bits);
        let buffer = pg_sys::ReorderBufferGetTupleBuf(rb, t.data.len());
        let tuple = &mut (*buffer).tuple;
        tuple.t_len = (fixed + t.data.len()) as u32;
        tuple.t_self = pg_sys::ItemPointerData {
            ip_blkid: pg_sys::BlockIdData { bi_hi: 0xffff, bi_lo: 0xffff },
            ip_posid: 0,
        };
        tuple.t_tableOid = pg_sys::InvalidOid;
        let header = tuple.t_data;
        std::ptr::write_bytes(header as *mut u8, 0, fixed);
        std::ptr::copy_nonoverlapping(t.data.as_ptr(), (header as *mut u8).add(fixed), t.data.len());
        (*header).t_infomask2 = t.infomask2;
        (*header).t_infomask = t.infomask;
        (*header).t_hoff = t.hoff;
        buffer
    }
}

/// Heap's decoding, after making sure this decoding context drops metadata changes:
/// every heap record passes here before any change of it can reach an output plugin.
#[pg_guard]
unsafe extern "C-unwind" fn heap_decode(
    ctx: *mut pg_sys::LogicalDecodingContext,
    buf: *mut pg_sys::XLogRecordBuffer,
) {
    // SAFETY: logical decoding calls this with its context and a heap record; the reorder
    // buffer's callbacks are plain fields we may replace (with wrappers that call them);
    // HEAP_DECODE was set in `register` before any decoding.
    unsafe {
        let rb = (*ctx).reorder;
        let ours = |f: Option<unsafe extern "C-unwind" fn(_, _, _, _)>, mine: *const ()| {
            f.map(|f| f as *const ()) == Some(mine)
        };
        if !ours((*rb).apply_change, apply_change as *const ()) {
            APPLY_CHANGE = (*rb).apply_change;
            (*rb).apply_change = Some(apply_change);
        }
        if (*rb).stream_change.is_some() && !ours((*rb).stream_change, stream_change as *const ()) {
            STREAM_CHANGE = (*rb).stream_change;
            (*rb).stream_change = Some(stream_change);
        }
        let next = HEAP_DECODE.expect("heap's rm_decode");
        pg_sys::ffi::pg_guard_ffi_boundary(|| next(ctx, buf));
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn apply_change(
    rb: *mut pg_sys::ReorderBuffer,
    txn: *mut pg_sys::ReorderBufferTXN,
    relation: pg_sys::Relation,
    change: *mut pg_sys::ReorderBufferChange,
) {
    // SAFETY: the reorder buffer calls this as it would call logical decoding's own
    // callback, which APPLY_CHANGE is.
    unsafe { unless_metadata(APPLY_CHANGE, rb, txn, relation, change) }
}

#[pg_guard]
unsafe extern "C-unwind" fn stream_change(
    rb: *mut pg_sys::ReorderBuffer,
    txn: *mut pg_sys::ReorderBufferTXN,
    relation: pg_sys::Relation,
    change: *mut pg_sys::ReorderBufferChange,
) {
    // SAFETY: as `apply_change`, for changes of a transaction streamed in progress.
    unsafe { unless_metadata(STREAM_CHANGE, rb, txn, relation, change) }
}

/// Passes a change on to logical decoding's callback `next`, unless it is a change of
/// pgcolumnar's metadata.
unsafe fn unless_metadata(
    next: pg_sys::ReorderBufferApplyChangeCB,
    rb: *mut pg_sys::ReorderBuffer,
    txn: *mut pg_sys::ReorderBufferTXN,
    relation: pg_sys::Relation,
    change: *mut pg_sys::ReorderBufferChange,
) {
    // SAFETY: the callers' arguments are the reorder buffer's; `relation` is open under the
    // historic snapshot decoding installed; `next` was saved from the same reorder buffer.
    unsafe {
        if is_metadata(relation) {
            return;
        }
        let next = next.expect("logical decoding's change callback");
        pg_sys::ffi::pg_guard_ffi_boundary(|| next(rb, txn, relation, change));
    }
}

/// Whether `relation` is one of pgcolumnar's metadata tables (everything in its schema).
unsafe fn is_metadata(relation: pg_sys::Relation) -> bool {
    // SAFETY: `relation` is open (callers); the namespace lookup reads the syscache under
    // the historic snapshot decoding installed.
    unsafe {
        let schema = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        schema != pg_sys::InvalidOid && (*(*relation).rd_rel).relnamespace == schema
    }
}
