//! DELETE, UPDATE and row locks (SELECT ... FOR UPDATE/SHARE, foreign-key checks,
//! ON CONFLICT DO UPDATE) on columnar rows, by marks in `pgcolumnar.row_mark`.
//!
//! A change follows heap's protocol with marks in place of xmax: take the lock of the
//! row's bucket (`pending_marks`), look at the row's marks, wait for a running
//! transaction whose mark conflicts and look again; report a delete that committed
//! meanwhile as TM_Updated/TM_Deleted, so that the executor re-checks the new version
//! (READ COMMITTED) or fails with 40001 (REPEATABLE READ and SERIALIZABLE); otherwise
//! record our mark. Deletes are collected per bucket and published at the latest when
//! the statement ends; the published mark, not the bucket lock, is what later changers
//! wait for.

use crate::storage::catalog;
use crate::storage::format::bucket_rows::{bucket_start, offset_in_bucket, MarkRows};
use crate::storage::format::mark_kind::MarkKind;
use crate::storage::read::fetch::Fetcher;
use crate::storage::relation::pages;
use crate::storage::relation::tid::row_tid;
use crate::storage::relation::tid::tid_row;
use crate::storage::shared::error::row_lock_not_available;
use crate::storage::write::pending_marks::{self, RowMark};
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use std::ffi::CStr;

/// The row a change targets.
struct Target {
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointerData,
    storage_id: u64,
    row: u64,
}

impl Target {
    unsafe fn new(rel: pg_sys::Relation, tid: pg_sys::ItemPointer) -> Option<Target> {
        // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked
        // by the caller; `tid` is a valid item pointer, and we are on the backend thread
        // inside a transaction, so the transaction-status checks, lock waits and mark writes
        // are allowed.
        unsafe {
            let row = tid_row(&*tid)?;
            Some(Target { rel, tid: *tid, storage_id: pages::storage_id(rel), row })
        }
    }

    unsafe fn relname(&self) -> String {
        // SAFETY: `self.rel` is the open, locked relation of the change (a Target lives only
        // inside the table-AM callback that made it), so its relcache entry and `rd_rel` are
        // valid.
        unsafe { CStr::from_ptr((*(*self.rel).rd_rel).relname.data.as_ptr()).to_string_lossy().into_owned() }
    }
}

/// Where the transaction that wrote a mark stands, looked up once per claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    Mine,
    Running,
    Committed,
    Aborted,
}

impl Writer {
    /// In progress before committed: the order that cannot miss a commit in between.
    unsafe fn of(xid: pg_sys::TransactionId) -> Writer {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract),
        // where the transaction-status functions may be asked about any xid.
        unsafe {
            if pg_sys::TransactionIdIsCurrentTransactionId(xid) {
                Writer::Mine
            } else if pg_sys::TransactionIdIsInProgress(xid) {
                Writer::Running
            } else if pg_sys::TransactionIdDidCommit(xid) {
                Writer::Committed
            } else {
                Writer::Aborted
            }
        }
    }
}

/// What the executor needs to know about the delete that beat us.
unsafe fn report_delete(t: &Target, m: &RowMark, tmfd: *mut pg_sys::TM_FailureData) {
    // SAFETY: the caller guarantees this fn's contract: `tmfd` is valid for the reads and
    // writes made through it here (NULL only where the API allows it), and we are on the
    // backend thread inside a transaction, so the transaction-status checks, lock waits and
    // mark writes are allowed.
    unsafe {
        (*tmfd).ctid = m.successor.map_or(t.tid, row_tid);
        (*tmfd).xmax = m.xmin;
        (*tmfd).cmax = if pg_sys::TransactionIdIsCurrentTransactionId(m.xmin) {
            m.cid
        } else {
            pg_sys::InvalidCommandId
        };
        (*tmfd).traversed = false;
    }
}

/// Whether VACUUM moved the row (merging its row group into a new one) after this
/// transaction's snapshot was taken: changing the old copy would fork the row, so it
/// counts as a concurrent update (40001). A READ COMMITTED statement that meets an old
/// copy follows the merge's delete mark to the new one instead (see `move_row`).
unsafe fn moved_by_vacuum(t: &Target) -> bool {
    // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
    // `t.rel` is the open, locked relation of the change (a Target lives only inside the
    // callback that made it), so the transaction-status checks and metadata reads are
    // allowed.
    unsafe {
        pg_sys::XactIsoLevel >= pg_sys::XACT_REPEATABLE_READ as i32
            && !write_buffer::holds_row((*t.rel).rd_id, t.row)
            && catalog::group_of_row(t.storage_id, t.row, &raw mut pg_sys::SnapshotSelfData).is_none()
    }
}

/// Who claims a row: VACUUM never waits, not even for a bucket (see `try_enter`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Claimant {
    Statement,
    Vacuum,
}

/// Takes the row's bucket and waits until no other running transaction holds a mark
/// that conflicts with `wanted`. On TM_Ok the bucket is still held: the caller records
/// its mark with `pending_marks::add_delete` or `add_lock`. Any other result has let go.
#[allow(non_upper_case_globals)]
unsafe fn claim(
    t: &mut Target,
    wanted: MarkKind,
    wait_policy: pg_sys::LockWaitPolicy::Type,
    claimant: Claimant,
    tmfd: *mut pg_sys::TM_FailureData,
) -> pg_sys::TM_Result::Type {
    // SAFETY: the caller guarantees this fn's contract: `tmfd` is valid for the reads and
    // writes made through it here (NULL only where the API allows it), and we are on the
    // backend thread inside a transaction, so the transaction-status checks, lock waits and
    // mark writes are allowed.
    unsafe {
        use pg_sys::LockWaitPolicy::*;
        let oper = if wanted == MarkKind::Delete {
            pg_sys::XLTW_Oper::XLTW_Delete
        } else {
            pg_sys::XLTW_Oper::XLTW_Lock
        };
        loop {
            let relid = (*t.rel).rd_id;
            if claimant == Claimant::Vacuum {
                if pending_marks::try_enter(relid, t.storage_id, t.row).is_none() {
                    return pg_sys::TM_Result::TM_WouldBlock;
                }
            } else {
                pending_marks::enter(relid, t.storage_id, t.row);
            }
            if moved_by_vacuum(t) {
                pending_marks::done();
                (*tmfd).ctid = t.tid;
                (*tmfd).xmax = pg_sys::InvalidTransactionId;
                (*tmfd).cmax = pg_sys::InvalidCommandId;
                (*tmfd).traversed = false;
                return pg_sys::TM_Result::TM_Updated;
            }
            // Each mark's writer is looked up once: one that commits between two looks would
            // be neither a committed delete (first look) nor a running blocker (second), and
            // the change would go ahead on a row that was just updated.
            let marks: Vec<(RowMark, Writer)> = pending_marks::marks_on(t.storage_id, t.row)
                .into_iter()
                .map(|m| (m, Writer::of(m.xmin)))
                .collect();
            for (m, writer) in marks.iter().filter(|(m, _)| m.kind == MarkKind::Delete) {
                if matches!(writer, Writer::Mine | Writer::Committed) {
                    pending_marks::done();
                    report_delete(t, m, tmfd);
                    return if *writer == Writer::Mine {
                        pg_sys::TM_Result::TM_SelfModified
                    } else if m.successor.is_some() {
                        pg_sys::TM_Result::TM_Updated
                    } else {
                        pg_sys::TM_Result::TM_Deleted
                    };
                }
            }
            let blocker = marks
                .iter()
                .find(|(m, writer)| *writer == Writer::Running && m.kind.conflicts_with(wanted))
                .map(|(m, _)| m);
            let Some(blocker) = blocker else { return pg_sys::TM_Result::TM_Ok };
            match wait_policy {
                LockWaitBlock => {
                    // The blocker may be waiting for a bucket of ours.
                    pending_marks::let_go();
                    pg_sys::XactLockTableWait(blocker.xmin, t.rel, &mut t.tid, oper);
                }
                LockWaitSkip => {
                    pending_marks::done();
                    return pg_sys::TM_Result::TM_WouldBlock;
                }
                _ => {
                    if !pg_sys::ConditionalXactLockTableWait(blocker.xmin) {
                        pending_marks::done();
                        row_lock_not_available(&t.relname());
                    }
                }
            }
        }
    }
}

/// DELETE of the row at `tid` by command `cid`.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `tid` must be a valid item
/// pointer; `tmfd` must be valid for the reads and writes made through it here (NULL only
/// where the API allows it); call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn delete(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    cid: pg_sys::CommandId,
    wait: bool,
    tmfd: *mut pg_sys::TM_FailureData,
) -> pg_sys::TM_Result::Type {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer; `tmfd` is valid for the reads and writes
    // made through it here (NULL only where the API allows it), and we are on the backend
    // thread inside a transaction, so the transaction-status checks, lock waits and mark
    // writes are allowed.
    unsafe { remove_version(rel, tid, cid, wait, tmfd, || None) }
}

/// UPDATE: deletes the row at `otid` and inserts `slot` as its new version (with a new
/// TID, so every index gets an entry for it).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `otid` must be a valid item
/// pointer; `slot` must be a valid tuple slot; `tmfd` must be valid for the reads and
/// writes made through it here (NULL only where the API allows it); call on the backend
/// thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn update(
    rel: pg_sys::Relation,
    otid: pg_sys::ItemPointer,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    wait: bool,
    tmfd: *mut pg_sys::TM_FailureData,
) -> pg_sys::TM_Result::Type {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `otid` is a valid item pointer; `slot` is a valid tuple slot; `tmfd` is
    // valid for the reads and writes made through it here (NULL only where the API allows
    // it), and we are on the backend thread inside a transaction, so the transaction-status
    // checks, lock waits and mark writes are allowed.
    unsafe {
        remove_version(rel, otid, cid, wait, tmfd, || {
            Some(write_buffer::insert_row(rel, slot, cid, 1, false))
        })
    }
}

/// VACUUM's merge moves the row at `tid` (its snapshot sees it, and `slot` holds it) to
/// a new row number: an UPDATE to the same values, so that a concurrent DELETE, UPDATE or
/// row lock of the old copy follows it (READ COMMITTED) or fails to serialize, as after
/// any UPDATE. A row another running transaction has marked (deleted, updated or locked)
/// stays where it is, never waited for: false then, and for a row deleted since the
/// snapshot. `expected` rows are about to move (see `write_buffer::insert`).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `tid` must be a valid item
/// pointer; `slot` must be a valid tuple slot; call on the backend thread inside a
/// transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn move_row(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    expected: usize,
) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer; `slot` is a valid tuple slot, and we are on
    // the backend thread inside a transaction, so the transaction-status checks and mark
    // writes are allowed.
    unsafe {
        let Some(mut t) = Target::new(rel, tid) else { return false };
        let mut tmfd = pg_sys::TM_FailureData::default();
        if claim(&mut t, MarkKind::Delete, pg_sys::LockWaitPolicy::LockWaitSkip, Claimant::Vacuum, &mut tmfd)
            != pg_sys::TM_Result::TM_Ok
        {
            return false;
        }
        let new_row = write_buffer::insert_row(rel, slot, cid, expected, false);
        pending_marks::add_delete(t.storage_id, t.row, Some(new_row), cid, true);
        true
    }
}

/// Deletes the row at `tid` once no one else holds it; `successor` writes the new
/// version of an UPDATE (only when the delete goes ahead) and returns its row number.
unsafe fn remove_version(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    cid: pg_sys::CommandId,
    wait: bool,
    tmfd: *mut pg_sys::TM_FailureData,
    successor: impl FnOnce() -> Option<u64>,
) -> pg_sys::TM_Result::Type {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer; `tmfd` is valid for the reads and writes
    // made through it here (NULL only where the API allows it), and we are on the backend
    // thread inside a transaction, so the transaction-status checks, lock waits and mark
    // writes are allowed.
    unsafe {
        let Some(mut t) = Target::new(rel, tid) else { return pg_sys::TM_Result::TM_Invisible };
        let policy =
            if wait { pg_sys::LockWaitPolicy::LockWaitBlock } else { pg_sys::LockWaitPolicy::LockWaitError };
        let result = claim(&mut t, MarkKind::Delete, policy, Claimant::Statement, tmfd);
        if result == pg_sys::TM_Result::TM_Ok {
            let new_row = successor();
            pending_marks::add_delete(t.storage_id, t.row, new_row, cid, !runs_before_row_triggers(rel));
        }
        result
    }
}

/// Whether DELETEs or UPDATEs of `rel` run BEFORE ROW triggers. Their deletes are not
/// collected: the statement would hold the bucket while the trigger of the next row
/// runs, and a trigger that waits for a session waiting for that bucket deadlocks.
/// (A trigger that runs a query lets go of it anyway: every query start publishes.)
unsafe fn runs_before_row_triggers(rel: pg_sys::Relation) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller.
    unsafe {
        let triggers = (*rel).trigdesc;
        !triggers.is_null() && ((*triggers).trig_delete_before_row || (*triggers).trig_update_before_row)
    }
}

/// Stores the row at `tid` in `slot`, deleted or not; false if there is none.
pub(super) unsafe fn fetch_any(
    rel: pg_sys::Relation,
    tid: &pg_sys::ItemPointerData,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer; `slot` is a valid tuple slot, and we are on
    // the backend thread inside a transaction, so the transaction-status checks, lock waits
    // and mark writes are allowed.
    unsafe {
        let mut fetcher = Fetcher::new(rel);
        let found = fetcher.fetch(tid, &raw mut pg_sys::SnapshotAnyData, slot);
        if found {
            // The slot must own its values before the fetcher, which they point into, goes.
            pg_sys::ExecMaterializeSlot(slot);
        }
        found
    }
}

/// Whether this transaction wrote the row with command `cid` or a later one.
unsafe fn inserted_by_this_command(t: &Target, cid: pg_sys::CommandId) -> bool {
    // SAFETY: we are on the backend thread inside a transaction (this fn's contract), and
    // `t.rel` is the open, locked relation of the change (a Target lives only inside the
    // callback that made it), so the transaction-status checks and metadata reads are
    // allowed.
    unsafe {
        if write_buffer::holds_row((*t.rel).rd_id, t.row) {
            write_buffer::flush_for_read(t.rel);
        }
        let writer =
            catalog::group_of_row(t.storage_id, t.row, &raw mut pg_sys::SnapshotSelfData).map(|g| g.writer);
        writer.is_some_and(|(xmin, cmin)| pg_sys::TransactionIdIsCurrentTransactionId(xmin) && cmin >= cid)
    }
}

/// SELECT ... FOR UPDATE/SHARE and friends: marks the row at `tid` (following UPDATEs
/// to the newest version when `flags` ask for it) and stores that version in `slot`.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `tid` must be a valid item
/// pointer; `slot` must be a valid tuple slot; `tmfd` must be valid for the reads and
/// writes made through it here (NULL only where the API allows it); call on the backend
/// thread inside a transaction (it calls PostgreSQL, which may raise an error).
#[allow(clippy::too_many_arguments)]
pub unsafe fn lock(
    rel: pg_sys::Relation,
    tid: pg_sys::ItemPointer,
    slot: *mut pg_sys::TupleTableSlot,
    cid: pg_sys::CommandId,
    mode: pg_sys::LockTupleMode::Type,
    wait_policy: pg_sys::LockWaitPolicy::Type,
    flags: u8,
    tmfd: *mut pg_sys::TM_FailureData,
) -> pg_sys::TM_Result::Type {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer; `slot` is a valid tuple slot; `tmfd` is
    // valid for the reads and writes made through it here (NULL only where the API allows
    // it), and we are on the backend thread inside a transaction, so the transaction-status
    // checks, lock waits and mark writes are allowed.
    unsafe {
        let wanted = MarkKind::from_i16(mode as i16).unwrap_or(MarkKind::Update);
        let follow = flags as u32 & pg_sys::TUPLE_LOCK_FLAG_FIND_LAST_VERSION != 0;
        let mut current = *tid;
        let mut traversed = false;
        loop {
            let Some(mut t) = Target::new(rel, &mut current) else { return pg_sys::TM_Result::TM_Invisible };
            if inserted_by_this_command(&t, cid) {
                // ON CONFLICT DO UPDATE meeting a row its own command inserted: the
                // executor reads the row's xmin and reports the cardinality violation.
                fetch_any(rel, &current, slot);
                return pg_sys::TM_Result::TM_Invisible;
            }
            let result = claim(&mut t, wanted, wait_policy, Claimant::Statement, tmfd);
            if result == pg_sys::TM_Result::TM_Updated
                && follow
                && tid_row(&(*tmfd).ctid) != tid_row(&current)
            {
                current = (*tmfd).ctid;
                traversed = true;
                continue;
            }
            (*tmfd).traversed = traversed;
            // Like heap, tell the caller which version it got (it updates that one next).
            *tid = current;
            if result != pg_sys::TM_Result::TM_Ok {
                return result;
            }
            let held = pending_marks::marks_on(t.storage_id, t.row).iter().any(|m| {
                m.kind != MarkKind::Delete
                    && m.kind >= wanted
                    && pg_sys::TransactionIdIsCurrentTransactionId(m.xmin)
            });
            if held {
                pending_marks::done();
            } else {
                pending_marks::add_lock(t.storage_id, t.row, wanted, cid);
            }
            // The newest version, whatever snapshot the caller has: it is locked now.
            let found = fetch_any(rel, &current, slot);
            return if found { pg_sys::TM_Result::TM_Ok } else { pg_sys::TM_Result::TM_Invisible };
        }
    }
}

/// Follows committed UPDATEs from `tid` to the newest version of its row (currtid,
/// WHERE CURRENT OF).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `tid` must be a valid item
/// pointer; call on the backend thread inside a transaction (it calls PostgreSQL, which may
/// raise an error).
pub unsafe fn latest_version(rel: pg_sys::Relation, tid: pg_sys::ItemPointer) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `tid` is a valid item pointer, and we are on the backend thread inside a
    // transaction, so the transaction-status checks, lock waits and mark writes are allowed.
    unsafe {
        let Some(t) = Target::new(rel, tid) else { return };
        let mut row = t.row;
        while let Some(next) = pending_marks::marks_on_any(t.storage_id, row).iter().find_map(|m| {
            (m.kind == MarkKind::Delete
                && (pg_sys::TransactionIdIsCurrentTransactionId(m.xmin)
                    || pg_sys::TransactionIdDidCommit(m.xmin)))
            .then_some(m.successor)
            .flatten()
        }) {
            row = next;
        }
        *tid = row_tid(row);
    }
}

/// ON CONFLICT found a conflict after the speculative insert of `slot`'s row: the row
/// is deleted again by this transaction, so nobody ever sees it.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; `slot` must be a valid tuple slot;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn abandon_speculative(rel: pg_sys::Relation, slot: *mut pg_sys::TupleTableSlot) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller; `slot` is a valid tuple slot, and we are on the backend thread inside a
    // transaction, so the transaction-status checks, lock waits and mark writes are allowed.
    unsafe {
        let Some(row) = tid_row(&(*slot).tts_tid) else { return };
        let storage_id = pages::storage_id(rel);
        let rows = MarkRows::single(offset_in_bucket(row), None);
        let cid = pg_sys::GetCurrentCommandId(true);
        catalog::insert_mark(storage_id, bucket_start(row), MarkKind::Delete, &rows, cid);
    }
}
