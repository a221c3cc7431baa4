//! Row marks (`pgcolumnar.row_mark`): deletes, updates' old versions and row locks, as
//! writers, readers, index builds and VACUUM see them.

use super::tables::{
    datum, insert_row, int8, not_null, readable_relid, relid, scan_bounds, scan_bounds_while, scan_keys,
    scan_storage, ScanBound,
};
use crate::storage::format::bucket_rows::{bucket_start, offset_in_bucket, MarkRows, BUCKET_ROWS};
use crate::storage::format::mark_kind::MarkKind;
use crate::storage::shared::error::data_corrupted;
use pgrx::pg_sys;

/// Whether `snapshot` sees a delete mark on `row`.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn row_deleted(storage_id: u64, row: u64, snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let offset = offset_in_bucket(row);
        let mut deleted = false;
        for key in mark_keys(row) {
            scan_keys::<MARK_NATTS>(
                c"row_mark",
                c"row_mark_bucket",
                &[storage_id, key],
                snapshot,
                pg_sys::AccessShareLock,
                |_, _, v, n| {
                    deleted |= mark_kind(v[2]) == MarkKind::Delete && mark_rows(v, n).contains(offset);
                },
            );
        }
        deleted
    }
}

/// The rows of the bucket starting at `start` that `snapshot` sees deleted by marks
/// (sorted), as `row_deleted` finds them one by one; None if the bucket has more than
/// `max_marks` marks (then reading them all may cost more than the lookups it saves).
///
/// # Safety
/// As for `row_deleted`.
pub unsafe fn deleted_rows_in_bucket(
    storage_id: u64,
    start: u64,
    snapshot: pg_sys::Snapshot,
    max_marks: usize,
) -> Option<Vec<u64>> {
    // SAFETY: this fn's contract is `deleted_rows_in_range`'.
    unsafe { deleted_rows_in_range(storage_id, start, start + BUCKET_ROWS - 1, snapshot, max_marks) }
}

/// `deleted_rows_in_bucket` for the buckets of rows `first ..= last` (and rows of their
/// buckets around them): one index scan for all of them.
///
/// # Safety
/// As for `row_deleted`.
pub unsafe fn deleted_rows_in_range(
    storage_id: u64,
    first: u64,
    last: u64,
    snapshot: pg_sys::Snapshot,
    max_marks: usize,
) -> Option<Vec<u64>> {
    // SAFETY: as in `row_deleted` (this fn's contract is the same).
    unsafe {
        let (mut rows, mut marks) = (Vec::new(), 0);
        scan_bounds_while::<MARK_NATTS>(
            c"row_mark",
            c"row_mark_bucket",
            &bucket_bounds(storage_id, bucket_start(first), bucket_start(last) + BUCKET_ROWS - 1),
            snapshot,
            pg_sys::AccessShareLock,
            |_, _, v, n| {
                marks += 1;
                if marks <= max_marks {
                    for_each_deleted_row(v, n, |r| rows.push(r));
                }
                marks <= max_marks
            },
        );
        (marks <= max_marks).then(|| sorted_once(rows))
    }
}

/// The index bounds of every mark of the buckets holding rows `first ..= last`: the
/// buckets' own keys and the keys of marks on single rows of them.
fn bucket_bounds(storage_id: u64, first: u64, last: u64) -> Vec<ScanBound> {
    vec![
        (1, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, storage_id),
        (2, pg_sys::BTGreaterEqualStrategyNumber, pg_sys::F_INT8GE, first),
        (2, pg_sys::BTLessEqualStrategyNumber, pg_sys::F_INT8LE, last),
    ]
}

/// Deleted rows as marks list them, sorted, each once: marks of one bucket come in any
/// order, and an UPDATE's lock and delete repeat a row.
fn sorted_once(mut rows: Vec<u64>) -> Vec<u64> {
    rows.sort_unstable();
    rows.dedup();
    rows
}

pub(super) const MARK_NATTS: usize = 5;

/// A mark as a concurrent writer sees it (committed, in progress, or our own).
#[derive(Debug, Clone)]
pub struct Mark {
    pub xmin: pg_sys::TransactionId,
    pub cid: u32,
    pub kind: MarkKind,
    pub rows: MarkRows,
}

pub(super) fn mark_kind(v: pg_sys::Datum) -> MarkKind {
    // SAFETY: `v` is the `kind` column (smallint) of a `row_mark` row, so it is read as the
    // type it holds; `not_null` only converts it (or raises XX001).
    let k: i16 = unsafe { not_null(v, false, "row_mark.kind") };
    MarkKind::from_i16(k).unwrap_or_else(|| data_corrupted("row mark of unknown kind"))
}

/// # Safety
/// `v` and `n` must be the deformed columns of a `row_mark` row whose tuple is still alive;
/// call on the backend thread (a corrupt value raises XX001).
pub(super) unsafe fn mark_rows(v: &[pg_sys::Datum; MARK_NATTS], n: &[bool; MARK_NATTS]) -> MarkRows {
    // SAFETY: `v` and `n` are the deformed columns of a `row_mark` row (this fn's contract),
    // so each datum is read as its column's type, and by-reference ones point into the tuple,
    // which the caller keeps alive.
    unsafe {
        let rows: &[u8] = not_null(v[3], n[3], "row_mark.rows");
        let successors = (!n[4]).then(|| not_null::<&[u8]>(v[4], n[4], "row_mark.successors"));
        MarkRows::from_bytes(rows, successors).unwrap_or_else(|| data_corrupted("malformed row mark"))
    }
}

/// The keys (`row_mark.first_row`) under which marks on `row` are found: a mark on
/// several rows of a bucket is kept under the bucket's first row, a mark on one row
/// under that row, so that many one-row changes (single-row DELETEs, row locks of
/// foreign-key checks) do not pile up under one key.
pub fn mark_keys(row: u64) -> impl Iterator<Item = u64> {
    let start = bucket_start(row);
    std::iter::once(start).chain((row != start).then_some(row))
}

/// Records mark `kind` on `rows` of the bucket starting at `bucket_first_row`, with
/// command id `cid`.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn insert_mark(storage_id: u64, bucket_first_row: u64, kind: MarkKind, rows: &MarkRows, cid: u32) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let key = match rows.offsets() {
            [only] => bucket_first_row + *only as u64,
            _ => bucket_first_row,
        };
        let rel = pg_sys::table_open(relid(c"row_mark"), pg_sys::RowExclusiveLock as i32);
        let rows_bytes = rows.rows_bytes();
        let successors = rows.successors_bytes();
        let mut values = [
            datum(storage_id as i64),
            datum(key as i64),
            datum(kind as i16),
            datum(rows_bytes.as_slice()),
            successors.as_deref().map_or(pg_sys::Datum::from(0usize), datum),
        ];
        let mut nulls = [false, false, false, false, successors.is_none()];
        insert_row(rel, &mut values, &mut nulls, cid);
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}

/// Which marks `marks_of` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkScope {
    /// The marks kept under this key (see `mark_keys`).
    Key(u64),
    /// Every mark of the bucket starting here.
    WholeBucket(u64),
    /// The marks kept under the keys from the first to the last given (rows of one
    /// bucket past its first row: the marks on one of those rows each).
    Keys(u64, u64),
}

/// The marks in `scope` that are committed, in progress or this transaction's, read
/// through a dirty snapshot (aborted ones are left out).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn marks_of(storage_id: u64, scope: MarkScope) -> Vec<Mark> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let mut dirty = pg_sys::SnapshotData {
            snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY,
            ..Default::default()
        };
        let eq = |att: i16, v: u64| (att, pg_sys::BTEqualStrategyNumber, pg_sys::F_INT8EQ, v);
        let bounds = match scope {
            MarkScope::Key(key) => vec![eq(1, storage_id), eq(2, key)],
            MarkScope::WholeBucket(start) => bucket_bounds(storage_id, start, start + BUCKET_ROWS - 1),
            MarkScope::Keys(first, last) => bucket_bounds(storage_id, first, last),
        };
        let mut marks = Vec::new();
        scan_bounds::<MARK_NATTS>(
            c"row_mark",
            c"row_mark_bucket",
            &bounds,
            &mut dirty,
            pg_sys::AccessShareLock,
            |_, tup, v, n| {
                let header = (*tup).t_data;
                marks.push(Mark {
                    xmin: pg_sys::HeapTupleHeaderGetXmin(header),
                    cid: (*header).t_choice.t_heap.t_field3.t_cid,
                    kind: mark_kind(v[2]),
                    rows: mark_rows(v, n),
                });
            },
        );
        marks
    }
}

/// Calls `f` with each row number a delete mark in `v` covers.
///
/// # Safety
/// `v` and `n` must be the deformed columns of a `row_mark` row whose tuple is still alive;
/// call on the backend thread (a corrupt value raises XX001).
pub(super) unsafe fn for_each_deleted_row(
    v: &[pg_sys::Datum; MARK_NATTS],
    n: &[bool; MARK_NATTS],
    mut f: impl FnMut(u64),
) {
    // SAFETY: `v` and `n` are the deformed columns of a `row_mark` row (this fn's contract),
    // so each datum is read as its column's type, and by-reference ones point into the tuple,
    // which the caller keeps alive.
    unsafe {
        if mark_kind(v[2]) == MarkKind::Delete {
            let first = bucket_start(int8(v[1]));
            mark_rows(v, n).offsets().iter().for_each(|&o| f(first + o as u64));
        }
    }
}

/// The row numbers deleted as `snapshot` sees it (marks in `row_mark` only; masks
/// come with the row groups), sorted.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn load_deleted_rows(storage_id: u64, snapshot: pg_sys::Snapshot) -> Vec<u64> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so the metadata relations may be opened, scanned and written (relation,
    // scan and tuple pointers below come from the calls that return them and are used before
    // being closed, ended or freed).
    unsafe {
        let mut rows = Vec::new();
        scan_storage::<MARK_NATTS>(
            c"row_mark",
            c"row_mark_bucket",
            storage_id,
            snapshot,
            pg_sys::AccessShareLock,
            |_, _, v, n| for_each_deleted_row(v, n, |r| rows.push(r)),
        );
        sorted_once(rows)
    }
}

/// Takes the locks reading `row_mark` needs (AccessShareLock on it and its index) if
/// that needs no wait; false otherwise. For callers under a buffer lock, which must
/// never wait for a heavyweight lock (the locks are kept to the end of the transaction,
/// so the scans after find them held).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn try_lock_marks_for_reading() -> bool {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        // Nothing to lock (nor read) while pg_upgrade restores the schema, before our index
        // exists (`readable_relid`).
        [c"row_mark", c"row_mark_bucket"].iter().all(|&name| {
            readable_relid(name)
                .is_none_or(|oid| pg_sys::ConditionalLockRelationOid(oid, pg_sys::AccessShareLock as i32))
        })
    }
}

/// Calls `f` with each mark row of a storage and the transaction that wrote it, through
/// a dirty snapshot: committed marks, marks in progress and this transaction's; only
/// those of aborted transactions are left out.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub(super) unsafe fn each_unaborted_mark(
    storage_id: u64,
    lockmode: u32,
    mut f: impl FnMut(
        pg_sys::Relation,
        pg_sys::HeapTuple,
        pg_sys::TransactionId,
        &[pg_sys::Datum; MARK_NATTS],
        &[bool; MARK_NATTS],
    ),
) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let mut dirty = pg_sys::SnapshotData {
            snapshot_type: pg_sys::SnapshotType::SNAPSHOT_DIRTY,
            ..Default::default()
        };
        scan_storage::<MARK_NATTS>(
            c"row_mark",
            c"row_mark_bucket",
            storage_id,
            &mut dirty,
            lockmode,
            |rel, tup, v, n| f(rel, tup, pg_sys::HeapTupleHeaderGetXmin((*tup).t_data), v, n),
        );
    }
}

/// The rows delete marks cover, sorted by what an index build does with them (heap's
/// HeapTupleSatisfiesVacuum cases in heapam_index_build_range_scan). Rows in the row
/// groups' masks are dead too; they come with the row groups.
#[derive(Debug, Default)]
pub struct BuildDeletes {
    /// Deleted by a transaction that committed before the horizon, so no snapshot sees
    /// them (heap's DEAD): not indexed.
    pub dead: Vec<u64>,
    /// Deleted by a transaction that committed after the horizon (RECENTLY_DEAD) or by
    /// this one (DELETE_IN_PROGRESS, ours): indexed for the snapshots that still see
    /// them, but never checked for uniqueness.
    pub not_alive: Vec<u64>,
    /// Deleted by another transaction still in progress: indexed like `not_alive`, but
    /// counted as live rows, as heap does.
    pub deleting: Vec<u64>,
    /// One such transaction and one of its rows: a build that checks uniqueness waits
    /// for it and looks again, as heap does.
    pub in_progress: Option<(pg_sys::TransactionId, u64)>,
}

/// Sorts the delete marks of a storage for an index build (see `BuildDeletes`), with
/// `oldest_xmin` the horizon before which a committed delete is seen by everyone.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn deletes_for_build(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> BuildDeletes {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened, scanned and written (relation, scan and tuple
    // pointers below come from the calls that return them and are used before being closed,
    // ended or freed).
    unsafe {
        let mut out = BuildDeletes::default();
        each_unaborted_mark(storage_id, pg_sys::AccessShareLock, |_, _, xmin, v, n| {
            // Current, then in progress, then committed: the order heap's checks use.
            let list = if pg_sys::TransactionIdIsCurrentTransactionId(xmin) {
                &mut out.not_alive
            } else if pg_sys::TransactionIdIsInProgress(xmin) {
                if out.in_progress.is_none() {
                    for_each_deleted_row(v, n, |r| {
                        out.in_progress.get_or_insert((xmin, r));
                    });
                }
                &mut out.deleting
            } else if pg_sys::TransactionIdDidCommit(xmin) {
                if pg_sys::TransactionIdPrecedes(xmin, oldest_xmin) {
                    &mut out.dead
                } else {
                    &mut out.not_alive
                }
            } else {
                // Aborted, or crashed while in progress: no delete.
                return;
            };
            for_each_deleted_row(v, n, |r| list.push(r));
        });
        for list in [&mut out.dead, &mut out.not_alive, &mut out.deleting] {
            list.sort_unstable();
            list.dedup();
        }
        out
    }
}

/// The marks a VACUUM removes, and what they mean for it.
#[derive(Debug, Default)]
pub struct MarkCleanup {
    /// Rows whose delete every snapshot sees, sorted: folded into masks.
    pub folded: Vec<u64>,
    /// The marks to remove (folded deletes and locks of finished transactions).
    pub settled: Vec<pg_sys::ItemPointerData>,
    /// Delete marks left because some snapshot may not see them yet.
    pub pending_deletes: u64,
}

/// The marks no snapshot needs any more: deletes committed before `oldest_xmin` (their
/// rows returned, for the caller to fold into the row groups' masks) and locks whose
/// transaction has ended. Read only: `remove_settled_marks` removes them, so that VACUUM
/// can vacuum the indexes before it writes anything (see `change::vacuum`).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn settled_marks(storage_id: u64, oldest_xmin: pg_sys::TransactionId) -> MarkCleanup {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relations may be opened and scanned (relation, scan and tuple pointers
    // below come from the calls that return them and are used before being closed, ended
    // or freed).
    unsafe {
        let mut out = MarkCleanup::default();
        each_unaborted_mark(storage_id, pg_sys::AccessShareLock, |_, tup, xmin, v, n| {
            let settled = if mark_kind(v[2]) == MarkKind::Delete {
                let visible_to_all =
                    pg_sys::TransactionIdDidCommit(xmin) && pg_sys::TransactionIdPrecedes(xmin, oldest_xmin);
                let mut rows = 0;
                for_each_deleted_row(v, n, |r| {
                    rows += 1;
                    if visible_to_all {
                        out.folded.push(r);
                    }
                });
                if !visible_to_all {
                    out.pending_deletes += rows;
                }
                visible_to_all
            } else {
                !pg_sys::TransactionIdIsInProgress(xmin) && !pg_sys::TransactionIdIsCurrentTransactionId(xmin)
            };
            if settled {
                out.settled.push((*tup).t_self);
            }
        });
        out.folded.sort_unstable();
        out.folded.dedup();
        out
    }
}

/// Removes the marks `settled_marks` found. Only VACUUM removes marks, and one VACUUM
/// of a table runs at a time, so they are all still there.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error), the one `cleanup` was read in.
pub unsafe fn remove_settled_marks(cleanup: &MarkCleanup) {
    if cleanup.settled.is_empty() {
        return;
    }
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the metadata relation may be opened and written; the TIDs are of its live tuples.
    unsafe {
        let rel = pg_sys::table_open(relid(c"row_mark"), pg_sys::RowExclusiveLock as i32);
        for tid in &cleanup.settled {
            let mut tid = *tid;
            pg_sys::simple_heap_delete(rel, &mut tid);
        }
        pg_sys::table_close(rel, pg_sys::NoLock as i32);
    }
}
