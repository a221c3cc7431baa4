//! VACUUM FULL and CLUSTER: copy the rows every new snapshot sees into the new
//! relfilenode, in the order of the clustering index (CLUSTER) or of the table's
//! `sort_by` option, else in stored order. Deleted rows are left behind, row groups are
//! rebuilt full, and on sorted data the zone maps of the sort key become tight.
//!
//! Like heap's rewrite under ALTER TABLE, this is not MVCC-safe: a transaction whose
//! snapshot predates the rewrite sees the table empty afterwards.

use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::relation::options;
use crate::storage::relation::pages;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use std::cell::Cell;

/// How the rows are ordered.
pub enum Order {
    Stored,
    /// A tuplesort fed with heap tuples (CLUSTER) or slots (sort_by).
    Cluster(*mut pg_sys::Tuplesortstate),
    Columns(*mut pg_sys::Tuplesortstate),
}

/// The order a rewrite of `rel` writes rows in: `index`'s (CLUSTER), else the table's
/// sort_by option, else as stored.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, and `index` NULL or an open index of
/// it; call on the backend thread inside a transaction (it calls PostgreSQL, which may raise
/// an error).
pub unsafe fn order_for(rel: pg_sys::Relation, index: pg_sys::Relation) -> Order {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and `index` NULL (checked) or its open clustering index, and we are on the
    // backend thread inside a transaction, so the tuplesort and slot calls are allowed.
    unsafe {
        let desc = (*rel).rd_att;
        if !index.is_null() {
            return Order::Cluster(pg_sys::tuplesort_begin_cluster(
                desc,
                index,
                pg_sys::maintenance_work_mem,
                std::ptr::null_mut(),
                pg_sys::TUPLESORT_NONE as i32,
            ));
        }
        match options::sort_key((*rel).rd_id) {
            Some(key) => Order::Columns(key.begin_sort(desc)),
            None => Order::Stored,
        }
    }
}

/// # Safety
/// `old` and `new` must be open relations, locked by the caller, `old_index` NULL or an open
/// index of `old`; `num_tuples` and `tups_vacuumed` must be valid for writes; call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn copy_for_cluster(
    old: pg_sys::Relation,
    new: pg_sys::Relation,
    old_index: pg_sys::Relation,
    num_tuples: *mut f64,
    tups_vacuumed: *mut f64,
) {
    // SAFETY: the caller guarantees this fn's contract: `old` and `new` are open relations,
    // locked by the caller, `old_index` NULL or an open index of `old`; `num_tuples` and
    // `tups_vacuumed` are valid for writes, and we are on the backend thread inside a
    // transaction, so the tuplesort and slot calls are allowed.
    unsafe {
        write_buffer::flush_relation((*old).rd_id);
        // Committed rows and this transaction's; the table is locked against everyone else.
        let mut reader =
            Reader::new(old, &raw mut pg_sys::SnapshotSelfData, None, GroupClaim::Serial { next: 0 });
        let stored: u64 = reader.groups().iter().map(|g| g.row_count).sum();
        let cid = pg_sys::GetCurrentCommandId(true);
        // The new relation is written with the table's own options (its OID has none).
        options::encode_as((*new).rd_id, (*old).rd_id);
        let order = order_for(old, old_index);
        let progress = ClusterProgress::start(pages::nblocks(old), !matches!(order, Order::Stored));
        let copied = copy_rows(&mut reader, (*old).rd_att, order, Some(&progress), |slot| {
            write_buffer::insert(new, slot, cid, stored as usize, false);
            progress.written();
        });
        write_buffer::flush_relation((*new).rd_id);
        options::forget_cached((*new).rd_id);
        *num_tuples = copied as f64;
        *tups_vacuumed = stored.saturating_sub(copied) as f64;
    }
}

/// What VACUUM FULL and CLUSTER report in `pg_stat_progress_cluster` while they copy
/// rows, as heap's rewrite does: the phase (scanning, then sorting and writing when the
/// rows are ordered), the table's blocks, and the rows scanned and written. (PostgreSQL
/// itself reports the phases after the copy: swapping files, rebuilding indexes.)
pub struct ClusterProgress {
    sorted: bool,
    scanned: Cell<u64>,
    written: Cell<u64>,
    total_blocks: u32,
}

impl ClusterProgress {
    /// # Safety
    /// Backend thread, inside the rewrite that PostgreSQL reports on.
    unsafe fn start(total_blocks: u32, sorted: bool) -> ClusterProgress {
        // SAFETY: this fn's contract: the backend's own progress slot is written.
        unsafe {
            let index =
                [pg_sys::PROGRESS_CLUSTER_PHASE as i32, pg_sys::PROGRESS_CLUSTER_TOTAL_HEAP_BLKS as i32];
            let values = [pg_sys::PROGRESS_CLUSTER_PHASE_SEQ_SCAN_HEAP as i64, total_blocks as i64];
            pg_sys::pgstat_progress_update_multi_param(2, index.as_ptr(), values.as_ptr());
        }
        ClusterProgress { sorted, scanned: Cell::new(0), written: Cell::new(0), total_blocks }
    }

    fn set(param: u32, value: u64) {
        // SAFETY: called on the backend thread during the rewrite (`start`'s contract).
        unsafe { pg_sys::pgstat_progress_update_param(param as i32, value as i64) };
    }

    fn scanned(&self) {
        self.scanned.set(self.scanned.get() + 1);
        Self::set(pg_sys::PROGRESS_CLUSTER_HEAP_TUPLES_SCANNED, self.scanned.get());
    }

    /// Every row is read: the blocks are scanned, and sorted rows are sorted next.
    fn scan_done(&self) {
        Self::set(pg_sys::PROGRESS_CLUSTER_HEAP_BLKS_SCANNED, self.total_blocks as u64);
        if self.sorted {
            Self::set(pg_sys::PROGRESS_CLUSTER_PHASE, pg_sys::PROGRESS_CLUSTER_PHASE_SORT_TUPLES as u64);
        }
    }

    fn written(&self) {
        if self.written.get() == 0 && self.sorted {
            Self::set(pg_sys::PROGRESS_CLUSTER_PHASE, pg_sys::PROGRESS_CLUSTER_PHASE_WRITE_NEW_HEAP as u64);
        }
        self.written.set(self.written.get() + 1);
        Self::set(pg_sys::PROGRESS_CLUSTER_HEAP_TUPLES_WRITTEN, self.written.get());
    }
}

/// Passes every row `reader` returns to `put`, in `order`, counting the rows read in
/// `progress` if given; returns how many.
///
/// # Safety
/// `desc` must be a valid tuple descriptor; `put` must be a valid tuple slot; call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn copy_rows(
    reader: &mut Reader,
    desc: pg_sys::TupleDesc,
    order: Order,
    progress: Option<&ClusterProgress>,
    mut put: impl FnMut(*mut pg_sys::TupleTableSlot),
) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `desc` is a valid tuple descriptor;
    // `put` is a valid tuple slot, and we are on the backend thread inside a transaction, so
    // the tuplesort and slot calls are allowed.
    unsafe {
        let slot = pg_sys::MakeSingleTupleTableSlot(desc, crate::storage::relation::slot::ops());
        // Sorted rows come back as minimal tuples, which a virtual slot cannot hold.
        let sorted = pg_sys::MakeSingleTupleTableSlot(desc, &pg_sys::TTSOpsMinimalTuple);
        let mut copied = 0u64;
        while reader.next(slot) {
            pgrx::check_for_interrupts!();
            match order {
                Order::Stored => put(slot),
                Order::Cluster(sort) => {
                    let mut should_free = false;
                    let tuple = pg_sys::ExecFetchSlotHeapTuple(slot, false, &mut should_free);
                    pg_sys::tuplesort_putheaptuple(sort, tuple);
                    if should_free {
                        pg_sys::heap_freetuple(tuple);
                    }
                }
                Order::Columns(sort) => pg_sys::tuplesort_puttupleslot(sort, slot),
            }
            copied += 1;
            if let Some(p) = progress {
                p.scanned();
            }
        }
        reader.release();
        if let Some(p) = progress {
            p.scan_done();
        }
        match order {
            Order::Stored => {}
            Order::Cluster(sort) => {
                pg_sys::tuplesort_performsort(sort);
                loop {
                    let tuple = pg_sys::tuplesort_getheaptuple(sort, true);
                    if tuple.is_null() {
                        break;
                    }
                    pg_sys::ExecForceStoreHeapTuple(tuple, sorted, false);
                    put(sorted);
                }
                pg_sys::tuplesort_end(sort);
            }
            Order::Columns(sort) => {
                pg_sys::tuplesort_performsort(sort);
                while pg_sys::tuplesort_gettupleslot(sort, true, false, sorted, std::ptr::null_mut()) {
                    put(sorted);
                }
                pg_sys::tuplesort_end(sort);
            }
        }
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::ExecDropSingleTupleTableSlot(sorted);
        copied
    }
}
