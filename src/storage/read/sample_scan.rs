//! TABLESAMPLE over a columnar table. The sampling methods choose blocks and offsets
//! within blocks; a columnar table's blocks are numbered densely over its row groups
//! (each row group, in row order, contributes one block per `ROWS_PER_TID_BLOCK` rows,
//! so a block holds up to 291 rows, like a full heap page, and a 1-row group is a
//! nearly empty page). SYSTEM then keeps or drops whole blocks, BERNOULLI single rows,
//! and methods that visit blocks in any order (tsm_system_rows) work too: each chosen
//! row is fetched by its TID through a `Fetcher`, which checks visibility and keeps the
//! decoded vector for its neighbours. The same table state and seed (REPEATABLE) give
//! the same sample.

use super::fetch::Fetcher;
use crate::storage::catalog::{self, RowGroupMeta};
use crate::storage::format::layout::ROWS_PER_TID_BLOCK;
use crate::storage::relation::pages;
use crate::storage::relation::tid::row_tid;
use pgrx::pg_sys;

pub struct SampleScan {
    fetcher: Fetcher,
    /// Per row group: its first block number, first row and row count.
    groups: Vec<(u64, u64, u64)>,
    nblocks: u64,
    /// The current block: its first row and number of rows.
    block: Option<(pg_sys::BlockNumber, u64, u64)>,
}

impl SampleScan {
    /// A sample of the row groups `snapshot` sees; the caller writes this backend's
    /// buffered rows out first (`write_buffer::flush_before_reading`).
    ///
    /// # Safety
    /// `rel` must be an open relation, locked by the caller; `snapshot` must be a valid
    /// snapshot (or NULL where this fn's docs allow it); call on the backend thread inside a
    /// transaction (it calls PostgreSQL, which may raise an error).
    pub unsafe fn new(rel: pg_sys::Relation, snapshot: pg_sys::Snapshot) -> SampleScan {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller; `snapshot` is a valid snapshot (or NULL where this fn's docs allow
        // it), and we are on the backend thread inside a transaction, so the metadata reads
        // and transaction-status checks are allowed.
        unsafe {
            let storage_id = pages::storage_id(rel);
            let listed: Vec<RowGroupMeta> = catalog::load_row_groups(storage_id, snapshot, false);
            let mut groups = Vec::with_capacity(listed.len());
            let mut nblocks = 0;
            for g in &listed {
                groups.push((nblocks, g.first_row, g.row_count));
                nblocks += g.row_count.div_ceil(ROWS_PER_TID_BLOCK);
            }
            SampleScan { fetcher: Fetcher::new(rel), groups, nblocks, block: None }
        }
    }

    /// Starts over (rescan, e.g. with another REPEATABLE seed).
    pub fn restart(&mut self) {
        self.block = None;
    }

    /// Moves to the next block the sampling method wants; false when there is none.
    ///
    /// # Safety
    /// `state` must be the executor's SampleScanState of this scan (its sampling method's
    /// routine set); call on the backend thread inside a transaction (it calls PostgreSQL,
    /// which may raise an error).
    pub unsafe fn next_block(&mut self, state: *mut pg_sys::SampleScanState) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `state` is the executor's
        // SampleScanState of this scan (its sampling method's routine set), and we are on the
        // backend thread inside a transaction, so the metadata reads and transaction-status
        // checks are allowed.
        unsafe {
            // MaxBlockNumber (0xFFFFFFFE) blocks hold more rows than row numbers can reach.
            let nblocks = pg_sys::BlockNumber::try_from(self.nblocks).unwrap_or(0xFFFF_FFFE);
            let tsm = (*state).tsmroutine;
            let blockno = match (*tsm).NextSampleBlock {
                Some(next) => next(state, nblocks),
                None => match self.block {
                    None => 0,
                    Some((b, ..)) => b + 1,
                },
            };
            if blockno == pg_sys::InvalidBlockNumber || blockno as u64 >= self.nblocks {
                self.block = None;
                return false;
            }
            let b = blockno as u64;
            let i = self.groups.partition_point(|g| g.0 <= b) - 1;
            let (first_block, first_row, rows) = self.groups[i];
            let start = (b - first_block) * ROWS_PER_TID_BLOCK;
            self.block = Some((blockno, first_row + start, (rows - start).min(ROWS_PER_TID_BLOCK)));
            true
        }
    }

    /// Stores the next sampled row of the current block that `snapshot` sees in
    /// `slot`; false when the block has no more.
    ///
    /// # Safety
    /// `state` must be the executor's SampleScanState of this scan (its sampling method's
    /// routine set); `snapshot` must be a valid snapshot (or NULL where this fn's docs allow
    /// it); `slot` must be a valid tuple slot; call on the backend thread inside a
    /// transaction (it calls PostgreSQL, which may raise an error).
    pub unsafe fn next_tuple(
        &mut self,
        state: *mut pg_sys::SampleScanState,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        // SAFETY: the caller guarantees this fn's contract: `state` is the executor's
        // SampleScanState of this scan (its sampling method's routine set); `snapshot` is a
        // valid snapshot (or NULL where this fn's docs allow it); `slot` is a valid tuple
        // slot, and we are on the backend thread inside a transaction, so the metadata reads
        // and transaction-status checks are allowed.
        unsafe {
            let Some((blockno, first_row, rows)) = self.block else { return false };
            let next_tuple = (*(*state).tsmroutine).NextSampleTuple.expect("a sampling method picks tuples");
            loop {
                let offset = next_tuple(state, blockno, rows as pg_sys::OffsetNumber);
                if offset == pg_sys::InvalidOffsetNumber as pg_sys::OffsetNumber {
                    pg_sys::ExecClearTuple(slot);
                    return false;
                }
                if self.fetcher.fetch(&row_tid(first_row + offset as u64 - 1), snapshot, slot) {
                    return true;
                }
            }
        }
    }
}
