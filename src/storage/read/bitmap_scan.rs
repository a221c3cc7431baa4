//! Bitmap heap scans over a columnar table: the bitmap names virtual blocks of TIDs
//! (row numbers, `layout::ROWS_PER_TID_BLOCK` per block); each row is fetched by TID through
//! a `Fetcher`, which keeps the decoded vector for its neighbours.

use super::fetch::Fetcher;
use crate::storage::format::layout;
use crate::storage::relation::tid::set_tid;
use pgrx::pg_sys;

pub struct BitmapScan {
    fetcher: Fetcher,
    block: pg_sys::BlockNumber,
    offsets: Vec<u16>,
    next: usize,
}

impl BitmapScan {
    /// # Safety
    /// `rel` must be an open relation, locked by the caller; call on the backend thread
    /// inside a transaction (it calls PostgreSQL, which may raise an error).
    pub unsafe fn new(rel: pg_sys::Relation) -> BitmapScan {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller, and we are on the backend thread inside a transaction, so the
        // metadata reads and transaction-status checks are allowed.
        unsafe { BitmapScan { fetcher: Fetcher::new(rel), block: 0, offsets: Vec::new(), next: 0 } }
    }

    /// Takes the next page of the bitmap; false if it holds no possible row.
    ///
    /// # Safety
    /// `tbmres` must be valid for the reads and writes made through it here (NULL only
    /// where the API allows it); call on the backend thread inside a transaction (it calls
    /// PostgreSQL, which may raise an error).
    pub unsafe fn next_block(&mut self, tbmres: *mut pg_sys::TBMIterateResult) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `tbmres` is valid for the reads
        // and writes made through it here (NULL only where the API allows it), and we are on
        // the backend thread inside a transaction, so the metadata reads and
        // transaction-status checks are allowed.
        unsafe {
            self.block = (*tbmres).blockno;
            self.next = 0;
            self.offsets.clear();
            if (*tbmres).ntuples >= 0 {
                let exact = (*tbmres).offsets.as_slice((*tbmres).ntuples as usize);
                self.offsets
                    .extend(exact.iter().copied().filter(|&o| o as u64 <= layout::ROWS_PER_TID_BLOCK));
            } else {
                // A lossy page: every row of the block, re-checked by the executor.
                self.offsets.extend(1..=layout::ROWS_PER_TID_BLOCK as u16);
            }
            !self.offsets.is_empty()
        }
    }

    /// Stores the next visible row of the current block in `slot`; false when done.
    ///
    /// # Safety
    /// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); `slot`
    /// must be a valid tuple slot; call on the backend thread inside a transaction (it calls
    /// PostgreSQL, which may raise an error).
    pub unsafe fn next_tuple(
        &mut self,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot
        // (or NULL where this fn's docs allow it); `slot` is a valid tuple slot, and we are
        // on the backend thread inside a transaction, so the metadata reads and
        // transaction-status checks are allowed.
        unsafe {
            while self.next < self.offsets.len() {
                let mut tid = pg_sys::ItemPointerData::default();
                set_tid(&mut tid, self.block, self.offsets[self.next]);
                self.next += 1;
                if self.fetcher.fetch(&tid, snapshot, slot) {
                    return true;
                }
            }
            false
        }
    }
}

/// Turns off PostgreSQL's prefetching in the bitmap heap scans of columnar tables in a
/// started plan. BitmapHeapScan prefetches the bitmap's block numbers from the
/// relation's file, but here they are virtual TID blocks, not pages: the prefetches
/// are useless system calls (a tenth of a small bitmap scan's time), and past the end
/// of the first 1 GB segment they fail ("could not open file ... previous segment is
/// only N blocks") on any table with more than 38 million rows and a smaller file.
///
/// # Safety
/// `planstate` must be NULL or the root of a live executor PlanState tree (the query being
/// started); call on the backend thread.
pub unsafe fn disable_prefetch(planstate: *mut pg_sys::PlanState) {
    // SAFETY: `planstate` is NULL (checked) or the root of a live PlanState tree (this fn's
    // contract), which the walker only reads and adjusts in place.
    unsafe {
        if !planstate.is_null() {
            disable_prefetch_walker(planstate, std::ptr::null_mut());
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn disable_prefetch_walker(
    planstate: *mut pg_sys::PlanState,
    context: *mut std::ffi::c_void,
) -> bool {
    // SAFETY: called by `disable_prefetch` and then by planstate_tree_walker, each time with
    // a non-NULL node of the executor's live PlanState tree; the node tag is checked before
    // the cast to BitmapHeapScanState, and `context` is passed along unread.
    unsafe {
        if (*planstate).type_ == pg_sys::NodeTag::T_BitmapHeapScanState {
            let scan = planstate as *mut pg_sys::BitmapHeapScanState;
            let rel = (*scan).ss.ss_currentRelation;
            if !rel.is_null() && crate::storage::relation::am::is_columnar(rel) {
                (*scan).prefetch_maximum = 0;
            }
        }
        pg_sys::planstate_tree_walker(planstate, Some(disable_prefetch_walker), context)
    }
}
