//! Building an index over a columnar table: every row some snapshot may still see, with
//! the index's expressions and predicate evaluated like heap does.
//!
//! Deleted rows are treated as heapam_index_build_range_scan treats deleted tuples:
//! rows no snapshot can see any more are left out; rows deleted by a transaction that
//! committed after the horizon, by this transaction or by one still in progress are
//! indexed (older snapshots, or this transaction's, may still read them through the
//! index) but passed as not alive, so a unique index does not count them as duplicates.
//!
//! CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY build from an MVCC snapshot while
//! writers go on (every row it sees is alive), then `validate` adds the rows a later
//! snapshot sees that the index lacks, as heapam_index_validate_scan does. The TIDs of
//! columnar rows never change while the build's lock keeps VACUUM out.

use crate::storage::catalog::{self, BuildDeletes};
use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::relation::pages;
use crate::storage::relation::tid::row_tid;
use crate::storage::relation::tid::tid_row;
use crate::storage::write::pending_marks;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;

/// Feeds every row of `table_rel` to `callback`; returns the number of live rows.
///
/// # Safety
/// `table_rel`, `index_rel` must be open relations, locked by the caller; `index_info` must
/// be the index's IndexInfo and `callback_state` what `callback` expects; `scan` must be NULL
/// or a scan this access method began (a `ScanDesc`, for a parallel build); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn build(
    table_rel: pg_sys::Relation,
    index_rel: pg_sys::Relation,
    index_info: *mut pg_sys::IndexInfo,
    callback: pg_sys::IndexBuildCallback,
    callback_state: *mut std::ffi::c_void,
    scan: pg_sys::TableScanDesc,
    scan_reader: Option<&mut Reader>,
) -> f64 {
    // SAFETY: the caller guarantees this fn's contract: `table_rel`, `index_rel` are open
    // relations, locked by the caller; `index_info` is the index's IndexInfo and
    // `callback_state` what `callback` expects; `scan` is NULL or a scan this access method
    // began (a `ScanDesc`), and we are on the backend thread inside a transaction, so the
    // executor-state, snapshot, tuplesort and index-insert calls are allowed.
    unsafe {
        let callback = callback.expect("index build callback");
        let concurrent = (*index_info).ii_Concurrent;
        // A scan given with an MVCC snapshot (amcheck, a parallel concurrent build) wants
        // the rows it sees, all alive, as heap gives it, and so does a concurrent build;
        // otherwise (SnapshotAny) sort the deleted rows out like heap. Before our own reader
        // reads the row groups: that may wait for a deleter.
        let given_mvcc = concurrent
            || !scan.is_null() && {
                let t = (*(*scan).rs_snapshot).snapshot_type;
                t == pg_sys::SnapshotType::SNAPSHOT_MVCC || t == pg_sys::SnapshotType::SNAPSHOT_HISTORIC_MVCC
            };
        let mut deletes =
            if given_mvcc { BuildDeletes::default() } else { deletes_for_build(table_rel, index_info) };
        // A parallel build hands each participant its scan; otherwise read everything with
        // a fresh snapshot: the table is locked against writers, and every committed row and
        // this transaction's own rows must be indexed. A concurrent build reads what the
        // transaction's snapshot sees, as heap's does; `validate` adds the rest.
        let (mut own_reader, snapshot) = if scan.is_null() {
            let snapshot = pg_sys::RegisterSnapshot(if concurrent {
                pg_sys::GetTransactionSnapshot()
            } else {
                pg_sys::GetLatestSnapshot()
            });
            write_buffer::flush_before_reading(table_rel);
            (Some(Reader::new(table_rel, snapshot, None, GroupClaim::Serial { next: 0 })), snapshot)
        } else {
            (None, std::ptr::null_mut())
        };
        let reader: &mut Reader = match own_reader.as_mut() {
            Some(r) => r,
            None => scan_reader.expect("a scan given to an index build has a reader"),
        };
        if !given_mvcc {
            reader.skip_only(std::mem::take(&mut deletes.dead));
        }

        let mut entries = EntryMaker::new(table_rel, index_info);
        let slot = entries.slot;
        let mut rows = 0f64;
        while reader.next(slot) {
            pgrx::check_for_interrupts!();
            let row = tid_row(&(*slot).tts_tid).expect("a row read has a row number");
            let deleting = deletes.deleting.binary_search(&row).is_ok();
            let alive = !deleting && deletes.not_alive.binary_search(&row).is_err();
            // Heap counts the rows another transaction is deleting as live, not the others.
            if alive || deleting {
                rows += 1.0;
            }
            if !entries.form() {
                continue;
            }
            callback(
                index_rel,
                &mut (*slot).tts_tid,
                entries.values.as_mut_ptr(),
                entries.isnull.as_mut_ptr(),
                alive,
                callback_state,
            );
        }
        entries.finish();
        if let Some(mut r) = own_reader.take() {
            r.release();
            pg_sys::UnregisterSnapshot(snapshot);
        }
        rows
    }
}

/// Turns the table row in `slot` into an index entry as heap's builds do: the index's
/// predicate and expressions evaluated per row, in an executor state of its own.
struct EntryMaker {
    index_info: *mut pg_sys::IndexInfo,
    estate: *mut pg_sys::EState,
    econtext: *mut pg_sys::ExprContext,
    predicate: *mut pg_sys::ExprState,
    /// The slot rows are read into.
    slot: *mut pg_sys::TupleTableSlot,
    /// The entry's key, after `form`.
    values: [pg_sys::Datum; pg_sys::INDEX_MAX_KEYS as usize],
    isnull: [bool; pg_sys::INDEX_MAX_KEYS as usize],
}

impl EntryMaker {
    unsafe fn new(table_rel: pg_sys::Relation, index_info: *mut pg_sys::IndexInfo) -> EntryMaker {
        // SAFETY: the caller guarantees this fn's contract: `table_rel` is an open relation,
        // locked by the caller; `index_info` is the index's IndexInfo, and we are on the
        // backend thread inside a transaction, so the executor-state, snapshot, tuplesort and
        // index-insert calls are allowed.
        unsafe {
            let estate = pg_sys::CreateExecutorState();
            let econtext = pg_sys::MakePerTupleExprContext(estate);
            let slot = pg_sys::table_slot_create(table_rel, std::ptr::null_mut());
            (*econtext).ecxt_scantuple = slot;
            EntryMaker {
                index_info,
                estate,
                econtext,
                predicate: pg_sys::ExecPrepareQual((*index_info).ii_Predicate, estate),
                slot,
                values: [pg_sys::Datum::from(0usize); pg_sys::INDEX_MAX_KEYS as usize],
                isnull: [false; pg_sys::INDEX_MAX_KEYS as usize],
            }
        }
    }

    /// Whether the row in the slot belongs in the index (its predicate holds); if so,
    /// its key is in `values` and `isnull`.
    unsafe fn form(&mut self) -> bool {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self` holds the executor state, slot and IndexInfo `new` made, alive until
        // `finish` consumes it.
        unsafe {
            pg_sys::MemoryContextReset((*self.econtext).ecxt_per_tuple_memory);
            if !self.predicate.is_null() && !pg_sys::ExecQual(self.predicate, self.econtext) {
                return false;
            }
            let (values, isnull) = (self.values.as_mut_ptr(), self.isnull.as_mut_ptr());
            pg_sys::FormIndexDatum(self.index_info, self.slot, self.estate, values, isnull);
            true
        }
    }

    unsafe fn finish(self) {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
        // `self` holds the executor state, slot and IndexInfo `new` made, alive until
        // `finish` consumes it.
        unsafe {
            pg_sys::ExecDropSingleTupleTableSlot(self.slot);
            pg_sys::FreeExecutorState(self.estate);
            // The expression states lived in the executor state just freed.
            (*self.index_info).ii_ExpressionsState = std::ptr::null_mut();
            (*self.index_info).ii_PredicateState = std::ptr::null_mut();
        }
    }
}

/// The delete marks of the table sorted for this build. A build that checks uniqueness
/// first waits for every other transaction still deleting rows (heap waits for the
/// deleter of each such tuple): whether its deletes count decides whether a duplicate
/// is real. The table's lock keeps writers out, so in practice there is none.
unsafe fn deletes_for_build(table_rel: pg_sys::Relation, index_info: *mut pg_sys::IndexInfo) -> BuildDeletes {
    // SAFETY: the caller guarantees this fn's contract: `table_rel` is an open relation,
    // locked by the caller; `index_info` is the index's IndexInfo, and we are on the backend
    // thread inside a transaction, so the executor-state, snapshot, tuplesort and
    // index-insert calls are allowed.
    unsafe {
        let storage_id = pages::storage_id(table_rel);
        let checking_uniqueness = (*index_info).ii_Unique || !(*index_info).ii_ExclusionOps.is_null();
        // The horizon VACUUM uses: a delete committed before it is seen by every snapshot.
        let oldest_xmin = pg_sys::GetOldestNonRemovableTransactionId(table_rel);
        loop {
            let mut deletes = catalog::deletes_for_build(storage_id, oldest_xmin);
            if let (true, Some((xid, row))) = (checking_uniqueness, deletes.in_progress) {
                // Publish our own collected deletes first: the deleter may be waiting for them.
                pending_marks::let_go();
                let mut tid = row_tid(row);
                pg_sys::XactLockTableWait(
                    xid,
                    table_rel,
                    &mut tid,
                    pg_sys::XLTW_Oper::XLTW_InsertIndexUnique,
                );
                pgrx::check_for_interrupts!();
                continue;
            }
            // Our own deletes not published yet (an index built in the middle of a statement).
            let pending = pending_marks::pending_rows(storage_id);
            if !pending.is_empty() {
                deletes.not_alive.extend(pending);
                deletes.not_alive.sort_unstable();
                deletes.not_alive.dedup();
            }
            return deletes;
        }
    }
}

/// The last phase of a concurrent build: inserts into `index_rel` the rows `snapshot`
/// sees whose TIDs are not among the index's (`state.tuplesort`, ascending). Row groups
/// cover disjoint row ranges and come in row order, so the index's TIDs are taken one
/// row group at a time; within one, a flush in sort_by order may have stored the rows
/// out of row order.
///
/// # Safety
/// `table_rel`, `index_rel` must be open relations, locked by the caller; `index_info` must
/// be the index's IndexInfo and `state` validate_index's state (its TID tuplesort performed);
/// `snapshot` must be a valid MVCC snapshot; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn validate(
    table_rel: pg_sys::Relation,
    index_rel: pg_sys::Relation,
    index_info: *mut pg_sys::IndexInfo,
    snapshot: pg_sys::Snapshot,
    state: *mut pg_sys::ValidateIndexState,
) {
    // SAFETY: the caller guarantees this fn's contract: `table_rel`, `index_rel` are open
    // relations, locked by the caller; `index_info` is the index's IndexInfo and `state`
    // validate_index's state; `snapshot` is a valid MVCC snapshot, and we are on the backend
    // thread inside a transaction, so the executor-state, snapshot, tuplesort and
    // index-insert calls are allowed.
    unsafe {
        write_buffer::flush_before_reading(table_rel);
        let mut reader = Reader::new(table_rel, snapshot, None, GroupClaim::Serial { next: 0 });
        let mut indexed = IndexedRows { sort: (*state).tuplesort, lookahead: None, done: false };
        // Rows of the current row group (its first row and end) that the index holds.
        let mut group = (0u64, 0u64);
        let mut in_group: Vec<u64> = Vec::new();

        let mut entries = EntryMaker::new(table_rel, index_info);
        let slot = entries.slot;
        let check = if (*index_info).ii_Unique {
            pg_sys::IndexUniqueCheck::UNIQUE_CHECK_YES
        } else {
            pg_sys::IndexUniqueCheck::UNIQUE_CHECK_NO
        };
        while reader.next(slot) {
            pgrx::check_for_interrupts!();
            (*state).htups += 1.0;
            let row = tid_row(&(*slot).tts_tid).expect("a row read has a row number");
            if row < group.0 || row >= group.1 {
                let groups = reader.groups();
                let g = &groups[groups.partition_point(|g| g.first_row <= row) - 1];
                group = (g.first_row, g.first_row + g.row_count);
                in_group = indexed.take_below(group.1);
                in_group.sort_unstable();
            }
            if in_group.binary_search(&row).is_ok() {
                continue;
            }
            if !entries.form() {
                continue;
            }
            pg_sys::index_insert(
                index_rel,
                entries.values.as_mut_ptr(),
                entries.isnull.as_mut_ptr(),
                &mut (*slot).tts_tid,
                table_rel,
                check,
                false,
                index_info,
            );
            (*state).tups_inserted += 1.0;
        }
        entries.finish();
        reader.release();
    }
}

/// The row numbers of the index's entries, in order, from the validate state's sort of
/// encoded TIDs (itemptr_encode: block << 16 | offset).
struct IndexedRows {
    sort: *mut pg_sys::Tuplesortstate,
    lookahead: Option<u64>,
    done: bool,
}

impl IndexedRows {
    /// The rows below `end` not taken yet (those below the current row group are rows
    /// the snapshot does not see: skipped with them).
    unsafe fn take_below(&mut self, end: u64) -> Vec<u64> {
        let mut rows = Vec::new();
        loop {
            let row = match self.lookahead.take() {
                Some(r) => r,
                None if self.done => break,
                None => {
                    let mut value = pg_sys::Datum::from(0usize);
                    let mut null = false;
                    // SAFETY: `self.sort` is the datum sort this struct began and performed, not
                    // yet ended; the out-pointers are locals.
                    let more = unsafe {
                        pg_sys::tuplesort_getdatum(
                            self.sort,
                            true,
                            &mut value,
                            &mut null,
                            std::ptr::null_mut(),
                        )
                    };
                    if !more {
                        self.done = true;
                        break;
                    }
                    let encoded = value.value() as u64;
                    let mut tid = pg_sys::ItemPointerData::default();
                    crate::storage::relation::tid::set_tid(
                        &mut tid,
                        (encoded >> 16) as u32,
                        (encoded & 0xffff) as u16,
                    );
                    match tid_row(&tid) {
                        Some(r) => r,
                        None => continue,
                    }
                }
            };
            if row >= end {
                self.lookahead = Some(row);
                break;
            }
            rows.push(row);
        }
        rows
    }
}
