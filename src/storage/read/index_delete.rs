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

/// Past this many of a bucket's rows offered at once, its marks are read whole rather
/// than by row (`catalog::mark_keys`: a row's marks are under its own number or the
/// bucket's first row).
const WHOLE_BUCKET_FROM: usize = 32;

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
        let mut last_deletable = None;
        // TIDs come sorted: a bucket's marks are read once for all its rows offered, or,
        // for a few of them, only the marks that can cover those rows (a bucket where
        // single-row UPDATEs piled up thousands of marks before VACUUM folds them).
        let mut bucket: Option<(u64, bool, Vec<catalog::Mark>)> = None;
        for (i, d) in deltids.iter().enumerate() {
            let status = &mut *(*delstate).status.add(d.id as usize);
            let Some(row) = tid_row(&d.tid) else { continue };
            let first = bucket_start(row);
            if bucket.as_ref().is_none_or(|(f, _, _)| *f != first) {
                let offered =
                    deltids[i..].iter().take_while(|d| tid_row(&d.tid).map(bucket_start) == Some(first));
                let whole = offered.count() > WHOLE_BUCKET_FROM;
                let scope = match whole {
                    true => MarkScope::WholeBucket(first),
                    false => MarkScope::Key(first),
                };
                bucket = Some((first, whole, catalog::marks_of(storage_id, scope)));
            }
            let (_, whole, shared) = bucket.as_ref().expect("read above");
            let own = match !*whole && row != first {
                true => catalog::marks_of(storage_id, MarkScope::Key(row)),
                false => Vec::new(),
            };
            let offset = offset_in_bucket(row);
            let deleter = shared
                .iter()
                .chain(&own)
                .find(|m| m.rows.contains(offset) && deletes_for_everyone(rel, m.kind, m.xmin));
            match deleter {
                Some(m) => {
                    status.knowndeletable = true;
                    last_deletable = Some(i);
                    if horizon == pg_sys::InvalidTransactionId
                        || pg_sys::TransactionIdFollows(m.xmin, horizon)
                    {
                        horizon = m.xmin;
                    }
                }
                // An entry a scan marked dead whose delete is only in a mask now: left to
                // VACUUM (see the module comment).
                None => status.knowndeletable = false,
            }
        }
        (*delstate).ndeltids = last_deletable.map_or(0, |i| i as i32 + 1);
        horizon
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
