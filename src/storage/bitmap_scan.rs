//! Bitmap heap scans over a columnar table: the bitmap names virtual blocks of TIDs
//! (row numbers, `layout::ROWS_PER_TID_BLOCK` per block); each row is fetched by TID through
//! a `Fetcher`, which keeps the decoded vector for its neighbours.

use super::fetch::Fetcher;
use super::layout;
use super::reader::set_tid;
use pgrx::pg_sys;

pub struct BitmapScan {
    fetcher: Fetcher,
    block: pg_sys::BlockNumber,
    offsets: Vec<u16>,
    next: usize,
}

impl BitmapScan {
    pub unsafe fn new(rel: pg_sys::Relation) -> BitmapScan {
        BitmapScan { fetcher: Fetcher::new(rel), block: 0, offsets: Vec::new(), next: 0 }
    }

    /// Takes the next page of the bitmap; false if it holds no possible row.
    pub unsafe fn next_block(&mut self, tbmres: *mut pg_sys::TBMIterateResult) -> bool {
        self.block = (*tbmres).blockno;
        self.next = 0;
        self.offsets.clear();
        if (*tbmres).ntuples >= 0 {
            let exact = (*tbmres).offsets.as_slice((*tbmres).ntuples as usize);
            self.offsets.extend(exact.iter().copied().filter(|&o| o as u64 <= layout::ROWS_PER_TID_BLOCK));
        } else {
            // A lossy page: every row of the block, re-checked by the executor.
            self.offsets.extend(1..=layout::ROWS_PER_TID_BLOCK as u16);
        }
        !self.offsets.is_empty()
    }

    /// Stores the next visible row of the current block in `slot`; false when done.
    pub unsafe fn next_tuple(
        &mut self,
        snapshot: pg_sys::Snapshot,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
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
