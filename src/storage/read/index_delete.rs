//! `index_delete_tuples`: which of the TIDs an index offers (its entries marked dead by
//! scans, or, in a bottom-up pass, the versions piling up on a leaf page about to
//! split) point at rows no snapshot can see any more, so the index can remove them.
//!
//! Every UPDATE of a columnar row gives the new version a new TID and an entry in every
//! index. Equal keys share a btree posting list, which scans cannot mark dead while one
//! TID in it is live; without this callback the versions of a hot key stayed in it
//! until VACUUM, and every lookup of the key visited all of them.
//!
//! A row is surely dead when a committed delete mark covers it and no snapshot can
//! still see its deleter as running (GlobalVisCheckRemovableXid, as heap's
//! HeapTupleIsSurelyDead). Deletes VACUUM has folded into a row group's mask no longer
//! name their transaction, so recovery conflicts could not be computed for them: those
//! entries are left to VACUUM, which removes them anyway. The callback runs under the
//! index page's buffer lock: it reads the marks only if their relations can be locked
//! without waiting, and deletes nothing otherwise.

use crate::storage::catalog::{self, MarkScope};
use crate::storage::format::bucket_rows::{bucket_start, offset_in_bucket};
use crate::storage::format::mark_kind::MarkKind;
use crate::storage::relation::pages;
use crate::storage::relation::tid::tid_row;
use pgrx::pg_sys;

/// Up to this many of a bucket's rows offered at once, the marks on each are read by
/// its own key; past it, those of all the keys from the first row offered to the last,
/// in one scan. (Reading the bucket's every mark instead cost a bottom-up pass over a
/// leaf page of a key updated by single-row UPDATEs thousands of marks a call, each
/// then compared with every row offered: 14% of the UPDATE's time.)
const BY_ROW_UP_TO: usize = 8;

/// Marks the deletable entries of `delstate` (`status[].knowndeletable`), shrinks
/// `ndeltids` to end after the last one, and returns the newest deleter among them
/// (the horizon for recovery conflicts on standbys).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `delstate` must be the index AM's
/// delete operation (`ndeltids` entries in `deltids` and `status`); call on the backend
/// thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn delete_tuples(
    rel: pg_sys::Relation,
    delstate: *mut pg_sys::TM_IndexDeleteOp,
) -> pg_sys::TransactionId {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `delstate` is the index AM's delete operation (`ndeltids` entries in
    // `deltids` and `status`), which we may update in place, and we are on the backend thread
    // inside a transaction, so the metadata reads and transaction-status checks are allowed.
    unsafe {
        let n = (*delstate).ndeltids as usize;
        let mut horizon = pg_sys::InvalidTransactionId;
        if n == 0 || pages::nblocks(rel) == 0 || !catalog::try_lock_marks_for_reading() {
            (*delstate).ndeltids = 0;
            return horizon;
        }
        let storage_id = pages::storage_id(rel);
        let deltids = std::slice::from_raw_parts((*delstate).deltids, n);
        let rows: Vec<Option<u64>> = deltids.iter().map(|d| tid_row(&d.tid)).collect();
        let mut last_deletable = None;
        // Whether each deleter seen deletes for everyone: asked once per transaction.
        let mut deleters: Vec<(pg_sys::TransactionId, bool)> = Vec::new();
        let mut i = 0;
        while i < n {
            let Some(first) = rows[i].map(bucket_start) else {
                i += 1;
                continue;
            };
            // TIDs come sorted: the rows offered of this bucket are `rows[i..end]`.
            let end = i + rows[i..].iter().take_while(|r| r.map(bucket_start) == Some(first)).count();
            let marks = BucketMarks::read(storage_id, first, &rows[i..end]);
            for (k, row) in rows.iter().enumerate().take(end).skip(i) {
                let row = row.expect("in the bucket's run");
                let status = &mut *(*delstate).status.add(deltids[k].id as usize);
                let deleter = marks.covering(offset_in_bucket(row)).find(|m| {
                    m.kind == MarkKind::Delete && {
                        let known = deleters.iter().find(|(x, _)| *x == m.xmin).map(|&(_, d)| d);
                        known.unwrap_or_else(|| {
                            let d = deletes_for_everyone(rel, m.kind, m.xmin);
                            deleters.push((m.xmin, d));
                            d
                        })
                    }
                });
                match deleter {
                    Some(m) => {
                        status.knowndeletable = true;
                        last_deletable = Some(k);
                        if horizon == pg_sys::InvalidTransactionId
                            || pg_sys::TransactionIdFollows(m.xmin, horizon)
                        {
                            horizon = m.xmin;
                        }
                    }
                    // An entry a scan marked dead whose delete is only in a mask now: left
                    // to VACUUM (see the module comment).
                    None => status.knowndeletable = false,
                }
            }
            i = end;
        }
        (*delstate).ndeltids = last_deletable.map_or(0, |i| i as i32 + 1);
        horizon
    }
}

/// The marks that can cover some rows offered of one bucket: those kept under the
/// bucket's first row (marks on several rows, `catalog::mark_keys`), and those on one
/// row each, under that row.
struct BucketMarks {
    shared: Vec<catalog::Mark>,
    /// The marks on one row, by the row's offset in the bucket (sorted).
    single: Vec<(u16, catalog::Mark)>,
}

impl BucketMarks {
    /// # Safety
    /// On the backend thread inside a transaction, the marks locked for reading.
    unsafe fn read(storage_id: u64, first: u64, rows: &[Option<u64>]) -> BucketMarks {
        // SAFETY: this fn's contract.
        unsafe {
            let shared = catalog::marks_of(storage_id, MarkScope::Key(first));
            let mut own: Vec<u64> = rows.iter().flatten().copied().filter(|&r| r != first).collect();
            own.dedup();
            let single_marks = match (own.first(), own.last()) {
                (Some(&lo), Some(&hi)) if own.len() > BY_ROW_UP_TO => {
                    catalog::marks_of(storage_id, MarkScope::Keys(lo, hi))
                }
                _ => own.iter().flat_map(|&r| catalog::marks_of(storage_id, MarkScope::Key(r))).collect(),
            };
            // A mark kept under a row's own key is on that row alone.
            let mut single: Vec<(u16, catalog::Mark)> =
                single_marks.into_iter().filter_map(|m| Some((*m.rows.offsets().first()?, m))).collect();
            single.sort_by_key(|(o, _)| *o);
            BucketMarks { shared, single }
        }
    }

    /// The marks covering the row at `offset` of the bucket.
    fn covering(&self, offset: u16) -> impl Iterator<Item = &catalog::Mark> {
        let from = self.single.partition_point(|(o, _)| *o < offset);
        let own = self.single[from..].iter().take_while(move |(o, _)| *o == offset).map(|(_, m)| m);
        self.shared.iter().filter(move |m| m.rows.contains(offset)).chain(own)
    }
}

/// Whether a mark of `kind` written by `xmin` is a delete that no snapshot of `rel` can
/// still miss: committed, by a transaction no running snapshot sees as in progress.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn deletes_for_everyone(
    rel: pg_sys::Relation,
    kind: MarkKind,
    xmin: pg_sys::TransactionId,
) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metadata
    // reads and transaction-status checks are allowed.
    unsafe {
        kind == MarkKind::Delete
            && !pg_sys::TransactionIdIsCurrentTransactionId(xmin)
            && !pg_sys::TransactionIdIsInProgress(xmin)
            && pg_sys::TransactionIdDidCommit(xmin)
            && pg_sys::GlobalVisCheckRemovableXid(rel, xmin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::bucket_rows::{MarkRows, MarkRowsBuilder};

    fn mark(xmin: u32, kind: MarkKind, rows: MarkRows) -> catalog::Mark {
        catalog::Mark { xmin: xmin.into(), cid: 0, kind, rows }
    }

    #[test]
    fn a_row_finds_the_marks_on_it_alone_and_on_it_among_others() {
        let mut several = MarkRowsBuilder::default();
        for o in [3, 5, 9] {
            several.add(o, None);
        }
        let marks = BucketMarks {
            shared: vec![mark(700, MarkKind::Delete, several.build())],
            single: vec![
                (5, mark(701, MarkKind::NoKeyUpdate, MarkRows::single(5, None))),
                (5, mark(702, MarkKind::Delete, MarkRows::single(5, None))),
                (8, mark(703, MarkKind::Delete, MarkRows::single(8, None))),
            ],
        };
        let xmins = |o: u16| marks.covering(o).map(|m| u32::from(m.xmin)).collect::<Vec<_>>();
        assert_eq!(xmins(3), vec![700]);
        assert_eq!(xmins(5), vec![700, 701, 702]);
        assert_eq!(xmins(8), vec![703]);
        assert_eq!(xmins(4), Vec::<u32>::new());
        assert_eq!(xmins(9), vec![700]);
        assert_eq!(xmins(10), Vec::<u32>::new());
    }
}
