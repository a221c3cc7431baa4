//! Rows inserted into a columnar table that logical decoding is owed (`wal_level =
//! logical`) while they wait in a write buffer. They cost nothing while they wait: when
//! their row group is written, its `ROW_GROUP_WRITE` record tells decoding to read them
//! out of the group's own bytes (`format::row_group_record`), so that, as heap's insert
//! records do for its tuples, the WAL carries them once. If anything else decoding
//! would see happens first (a change of another table, an UPDATE, a subtransaction's
//! start: see `change::logical_log::flush_inserts`), they are logged there as an INSERT
//! record laid out from the buffer, keeping the order of the changes.
//!
//! The rows of one buffer at most are owed at a time: owing rows of another relation or
//! subtransaction first logs those owed before.

use crate::storage::format::logical_record::{FileNode, Xids};
use pgrx::pg_sys;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::ops::Range;

/// The rows owed, of one relation's buffer of one subtransaction.
pub struct Owed {
    pub relid: pg_sys::Oid,
    pub subxact: pg_sys::SubTransactionId,
    /// The subtransaction's xid and its top-level transaction's, which the records name.
    pub xids: Xids,
    pub node: FileNode,
    /// Row numbers, as ascending runs (rows not owed lie between them: a speculative
    /// insertion that lost its conflict stays in the buffer, deleted). Inline: owing a
    /// small transaction's rows allocates nothing.
    rows: SmallVec<[Range<u64>; 2]>,
}

/// Runs `(offset, count)` of a row group's rows.
pub type Runs = SmallVec<[(u32, u32); 2]>;

impl Owed {
    pub fn new(relid: pg_sys::Oid, subxact: pg_sys::SubTransactionId, xids: Xids, node: FileNode) -> Owed {
        Owed { relid, subxact, xids, node, rows: SmallVec::new() }
    }

    /// Owes row `row`, numbered after every row owed so far.
    pub fn push(&mut self, row: u64) {
        match self.rows.last_mut() {
            Some(last) if last.end == row => last.end += 1,
            last => {
                debug_assert!(
                    last.is_none_or(|l| l.end < row),
                    "rows are owed in the order they were numbered"
                );
                self.rows.push(row..row + 1);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn runs(&self) -> &[Range<u64>] {
        &self.rows
    }

    /// Takes the rows owed among `rows` (a row group's row numbers) as runs `(offset
    /// from rows.start, count)`; the others stay owed.
    pub fn take_in(&mut self, rows: Range<u64>) -> Runs {
        let mut taken = Runs::new();
        let mut kept = SmallVec::new();
        for run in self.rows.drain(..) {
            let (start, end) = (run.start.max(rows.start), run.end.min(rows.end));
            if start >= end {
                kept.push(run);
                continue;
            }
            taken.push(((start - rows.start) as u32, (end - start) as u32));
            if run.start < start {
                kept.push(run.start..start);
            }
            if end < run.end {
                kept.push(end..run.end);
            }
        }
        self.rows = kept;
        taken
    }
}

thread_local! {
    static OWED: RefCell<Option<Owed>> = const { RefCell::new(None) };
}

/// Runs `f` on the owed rows (None when none are).
pub fn with<R>(f: impl FnOnce(&mut Option<Owed>) -> R) -> R {
    OWED.with_borrow_mut(f)
}

/// Forgets rows owed by subtransaction `subxact` (any, with None), which rolls back.
pub fn forget(subxact: Option<pg_sys::SubTransactionId>) {
    with(|o| {
        if o.as_ref().is_some_and(|o| subxact.is_none_or(|s| s == o.subxact)) {
            *o = None;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owed(rows: &[u64]) -> Owed {
        let node = FileNode { tablespace: 1, database: 2, relation: 3 };
        let mut o = Owed::new(pg_sys::Oid::from(9), 1, Xids { top: 5, own: 5 }, node);
        rows.iter().for_each(|&r| o.push(r));
        o
    }

    #[test]
    fn rows_owed_one_after_another_make_runs() {
        let o = owed(&[10, 11, 12, 14, 15, 20]);
        assert_eq!(o.runs(), &[10..13, 14..16, 20..21]);
    }

    #[test]
    fn a_row_group_takes_the_rows_it_holds() {
        let mut o = owed(&[10, 11, 12, 14, 15, 20]);
        // A row group of rows 11..15: offsets from 11.
        assert_eq!(o.take_in(11..15).as_slice(), &[(0, 2), (3, 1)]);
        assert_eq!(o.runs(), &[10..11, 15..16, 20..21]);
        assert_eq!(o.take_in(0..11).as_slice(), &[(10, 1)]);
        assert_eq!(o.take_in(30..40).as_slice(), &[]);
        assert_eq!(o.take_in(15..21).as_slice(), &[(0, 1), (5, 1)]);
        assert!(o.is_empty());
    }
}
