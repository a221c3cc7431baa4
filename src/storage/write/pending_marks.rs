//! A statement's deletes (and the old versions of its UPDATEs), collected per bucket of
//! row numbers and written to `pgcolumnar.row_mark` as one mark per bucket.
//!
//! A writer looks at a bucket's marks and adds to them only while it holds the bucket's
//! lock (see `lock_tag`). While this backend collects deletes of a bucket in memory it
//! keeps holding the lock (ExclusiveLock), so another writer of the bucket waits until
//! the collected marks are written ("published") before it looks at them. Another
//! session's uniqueness check that meets a row of the bucket must see them too, but it
//! runs under the index page's buffer lock, where no heavyweight lock may be waited for
//! (the holder may need that page next, and the deadlock detector cannot see buffer
//! locks): it only tries the lock, and when the bucket is busy it reports the bucket
//! through its dirty snapshot, as heap reports a speculative insertion, so the index
//! waits for the bucket after letting go of its page and then checks again (see
//! `begin_check`). The marks are published and the lock released
//! when this backend moves to another bucket, before it waits for another transaction,
//! when the statement ends (before its AFTER triggers run), and before a (sub)commit.
//! So writers of different rows of a bucket wait at most for each other's statement,
//! never for each other's transaction.
//!
//! This backend's own reads see its unpublished deletes through `pending_delete` and
//! `deleted_rows`, by command id, as heap shows a transaction its own deletes.
//!
//! Collected deletes belong to the subtransaction that made them; a subtransaction that
//! starts while some are collected (a function with an EXCEPTION block called in the
//! middle of an UPDATE) cannot publish them under its own transaction id, so its own
//! changes are published one by one ("alone") while the parent's stay collected.

use crate::storage::catalog::{self, Mark, MarkScope};
use crate::storage::format::bucket_rows::{
    bucket_start, offset_in_bucket, MarkRows, MarkRowsBuilder, BUCKET_ROWS,
};
use crate::storage::format::mark_kind::MarkKind;
use crate::storage::shared::transaction_state;
use pgrx::pg_sys;
use std::cell::RefCell;

/// A bucket this backend holds the lock of, and what it knows of its marks.
struct Bucket {
    relid: pg_sys::Oid,
    storage_id: u64,
    first_row: u64,
    /// The bucket's published marks (nobody else can add any while the lock is held):
    /// those under the bucket's key, read when the lock was taken, plus those this
    /// backend published since; all of them once `complete`.
    marks: Vec<Mark>,
    /// Whether `marks` holds the one-row marks of every row too. Until then each claim
    /// reads its row's (`ROW_PROBES` times, then the whole bucket is read once).
    complete: bool,
    probes: u32,
    /// Deletes collected and not yet published, made by command `cid` of `subxact`.
    pending: MarkRowsBuilder,
    cid: pg_sys::CommandId,
    subxact: pg_sys::SubTransactionId,
}

thread_local! {
    /// The bucket whose deletes this backend collects (at most one at a time).
    static HELD: RefCell<Option<Bucket>> = const { RefCell::new(None) };
    /// A bucket held for one change published alone (see the module comment).
    static ALONE: RefCell<Option<Bucket>> = const { RefCell::new(None) };
}

/// A mark on one row as a writer sees it.
#[derive(Debug, Clone, Copy)]
pub struct RowMark {
    pub xmin: pg_sys::TransactionId,
    pub cid: pg_sys::CommandId,
    pub kind: MarkKind,
    pub successor: Option<u64>,
}

/// Claims in a held bucket that read their row's one-row marks before the bucket's are
/// read whole: a one-row statement reads two index keys, a bulk one the bucket once.
const ROW_PROBES: u32 = 8;

fn row_mark(m: &Mark, offset: u16) -> RowMark {
    RowMark { xmin: m.xmin, cid: m.cid, kind: m.kind, successor: m.rows.successor(offset) }
}

/// Marks the token half of a bucket lock's tag: real speculative-insertion tokens are a
/// backend's counter from 1, which never gets this far.
const BUCKET_TOKEN_BIT: u32 = 1 << 31;

/// A bucket's lock has the shape of a speculative-insertion token lock, (transaction id,
/// token) = (relation OID, bucket number with the high bit set): that is the one lock
/// besides a transaction's that nbtree and ON CONFLICT wait for on a dirty snapshot's
/// word (`SpeculativeInsertionWait(xmin, token)`), after releasing their page. The
/// database is not part of the tag: two tables that share an OID in two databases share
/// bucket locks, which only makes their writers wait for each other's statements.
/// Relation OIDs of user tables are normal transaction ids (>= 16384), so callers
/// treat the reported "xmin" as valid.
fn lock_tag(relid: pg_sys::Oid, first_row: u64) -> pg_sys::LOCKTAG {
    pg_sys::LOCKTAG {
        locktag_field1: relid.into(),
        locktag_field2: BUCKET_TOKEN_BIT | ((first_row / BUCKET_ROWS) as u32 & !BUCKET_TOKEN_BIT),
        locktag_field3: 0,
        locktag_field4: 0,
        locktag_type: pg_sys::LockTagType::LOCKTAG_SPECULATIVE_TOKEN as u8,
        locktag_lockmethodid: pg_sys::DEFAULT_LOCKMETHOD as u8,
    }
}

unsafe fn lock_bucket(relid: pg_sys::Oid, first_row: u64, mode: u32) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        pg_sys::LockAcquire(&lock_tag(relid, first_row), mode as i32, false, false);
    }
}

/// Takes the lock if nobody holds it in a conflicting mode; never waits.
unsafe fn try_lock_bucket(relid: pg_sys::Oid, first_row: u64, mode: u32) -> bool {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        pg_sys::LockAcquire(&lock_tag(relid, first_row), mode as i32, false, true)
            != pg_sys::LockAcquireResult::LOCKACQUIRE_NOT_AVAIL
    }
}

unsafe fn unlock_bucket(relid: pg_sys::Oid, first_row: u64, mode: u32) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        pg_sys::LockRelease(&lock_tag(relid, first_row), mode as i32, false);
    }
}

impl Bucket {
    /// Takes the bucket's lock, waiting for its holder if `wait`; None if it is busy and
    /// not `wait`.
    unsafe fn take(relid: pg_sys::Oid, storage_id: u64, first_row: u64, wait: bool) -> Option<Bucket> {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so transaction ids, heavyweight locks and mark writes are allowed.
        unsafe {
            if wait {
                lock_bucket(relid, first_row, pg_sys::ExclusiveLock);
            } else if !try_lock_bucket(relid, first_row, pg_sys::ExclusiveLock) {
                return None;
            }
            Some(Bucket {
                relid,
                storage_id,
                first_row,
                marks: catalog::marks_of(storage_id, MarkScope::Key(first_row)),
                complete: false,
                probes: 0,
                pending: MarkRowsBuilder::default(),
                cid: pg_sys::InvalidCommandId,
                subxact: transaction_state::current_subxact(),
            })
        }
    }

    fn is(&self, storage_id: u64, first_row: u64) -> bool {
        self.storage_id == storage_id && self.first_row == first_row
    }

    /// Writes the collected deletes as one mark.
    unsafe fn publish(&mut self) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so transaction ids, heavyweight locks and mark writes are allowed.
        unsafe {
            if self.pending.is_empty() {
                return;
            }
            let rows = self.pending.build();
            catalog::insert_mark(self.storage_id, self.first_row, MarkKind::Delete, &rows, self.cid);
            self.marks.push(Mark {
                xmin: pg_sys::GetCurrentTransactionId(),
                cid: self.cid,
                kind: MarkKind::Delete,
                rows,
            });
        }
    }

    unsafe fn release(mut self) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so transaction ids, heavyweight locks and mark writes are allowed.
        unsafe {
            self.publish();
            unlock_bucket(self.relid, self.first_row, pg_sys::ExclusiveLock);
        }
    }

    /// The marks on `row` this bucket knows of, this backend's collected delete included.
    unsafe fn marks_on(&mut self, row: u64, out: &mut Vec<RowMark>) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so transaction ids, heavyweight locks and mark writes are allowed.
        unsafe {
            let offset = offset_in_bucket(row);
            if !self.complete && row != self.first_row {
                if self.probes < ROW_PROBES {
                    self.probes += 1;
                    let own = catalog::marks_of(self.storage_id, MarkScope::Key(row));
                    out.extend(own.iter().map(|m| row_mark(m, offset)));
                } else {
                    self.marks = catalog::marks_of(self.storage_id, MarkScope::WholeBucket(self.first_row));
                    self.complete = true;
                }
            }
            for m in self.marks.iter().filter(|m| m.rows.contains(offset)) {
                out.push(row_mark(m, offset));
            }
            if self.pending.contains(offset) {
                out.push(RowMark {
                    xmin: pg_sys::GetCurrentTransactionId(),
                    cid: self.cid,
                    kind: MarkKind::Delete,
                    successor: self.pending.successor(offset),
                });
            }
        }
    }
}

/// Whether this backend holds the bucket starting at `first_row`.
fn holds(storage_id: u64, first_row: u64) -> bool {
    [&HELD, &ALONE]
        .iter()
        .any(|cell| cell.with(|c| c.borrow().as_ref().is_some_and(|b| b.is(storage_id, first_row))))
}

fn held_is_ours_now() -> bool {
    HELD.with(|h| h.borrow().as_ref().is_some_and(|b| b.subxact == transaction_state::current_subxact()))
}

/// Takes the lock of `row`'s bucket for a change of `row` (waiting for the writer that
/// holds it, if any). Returns whether the change can be collected (`add_delete` then
/// batches it) rather than published alone.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn enter(relid: pg_sys::Oid, storage_id: u64, row: u64) -> bool {
    // SAFETY: this fn's contract.
    unsafe { enter_bucket(relid, storage_id, row, true) }.expect("a waiting enter takes the bucket")
}

/// `enter` that does not wait: None if another backend holds the bucket. For VACUUM,
/// which moves rows nobody else is changing: a writer may hold a bucket while it waits
/// for the VACUUM's transaction (logical replication's apply holds its buckets until
/// commit, and waits for the writer of a row its dirty scan returns).
///
/// # Safety
/// As `enter`.
pub unsafe fn try_enter(relid: pg_sys::Oid, storage_id: u64, row: u64) -> Option<bool> {
    // SAFETY: this fn's contract.
    unsafe { enter_bucket(relid, storage_id, row, false) }
}

unsafe fn enter_bucket(relid: pg_sys::Oid, storage_id: u64, row: u64, wait: bool) -> Option<bool> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let first_row = bucket_start(row);
        if held_is_ours_now() {
            let same = HELD.with(|h| h.borrow().as_ref().is_some_and(|b| b.is(storage_id, first_row)));
            if same {
                return Some(true);
            }
            if let Some(b) = HELD.with(|h| h.borrow_mut().take()) {
                b.release();
            }
        }
        if HELD.with(|h| h.borrow().is_none()) {
            let b = Bucket::take(relid, storage_id, first_row, wait)?;
            HELD.with(|h| *h.borrow_mut() = Some(b));
            return Some(true);
        }
        // A subtransaction started while its parent collects deletes.
        let b = Bucket::take(relid, storage_id, first_row, wait)?;
        ALONE.with(|a| *a.borrow_mut() = Some(b));
        Some(false)
    }
}

/// The marks on `row` (whose bucket `enter` took): published ones and this backend's
/// collected deletes (a mark may be listed twice when a subtransaction holds its
/// parent's bucket again).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn marks_on(storage_id: u64, row: u64) -> Vec<RowMark> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let first_row = bucket_start(row);
        let mut out = Vec::new();
        for cell in [&HELD, &ALONE] {
            cell.with(|c| {
                if let Some(b) = c.borrow_mut().as_mut().filter(|b| b.is(storage_id, first_row)) {
                    b.marks_on(row, &mut out);
                }
            });
        }
        out
    }
}

/// The marks on `row`, whether or not this backend holds its bucket (following UPDATE
/// chains, uniqueness checks).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn marks_on_any(storage_id: u64, row: u64) -> Vec<RowMark> {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let first_row = bucket_start(row);
        if holds(storage_id, first_row) {
            return marks_on(storage_id, row);
        }
        let offset = offset_in_bucket(row);
        catalog::mark_keys(row)
            .flat_map(|key| catalog::marks_of(storage_id, MarkScope::Key(key)))
            .filter(|m| m.rows.contains(offset))
            .map(|m| row_mark(&m, offset))
            .collect()
    }
}

/// Records a delete of `row` by command `cid` (the old version of an UPDATE when
/// `successor` is its new version), and ends the change. Unless `collect`, the delete
/// is published alone and the bucket let go at once.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn add_delete(
    storage_id: u64,
    row: u64,
    successor: Option<u64>,
    cid: pg_sys::CommandId,
    collect: bool,
) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let offset = offset_in_bucket(row);
        let batched = collect
            && HELD.with(|h| {
                let mut h = h.borrow_mut();
                let Some(b) = h.as_mut().filter(|b| b.is(storage_id, bucket_start(row))) else {
                    return false;
                };
                if ALONE.with(|a| a.borrow().is_some()) {
                    return false;
                }
                if b.cid != cid {
                    b.publish();
                    b.cid = cid;
                }
                b.pending.add(offset, successor);
                true
            });
        if !batched {
            add_alone(storage_id, row, MarkKind::Delete, successor, cid);
        }
        done();
    }
}

/// Records a row lock of `kind` on `row` (never collected: a lock must be visible as
/// soon as the statement that took it moves on), and ends the change.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn add_lock(storage_id: u64, row: u64, kind: MarkKind, cid: pg_sys::CommandId) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        add_alone(storage_id, row, kind, None, cid);
        done();
    }
}

unsafe fn add_alone(
    storage_id: u64,
    row: u64,
    kind: MarkKind,
    successor: Option<u64>,
    cid: pg_sys::CommandId,
) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let first_row = bucket_start(row);
        // The claim's verdict holds only while the bucket is held since (see `enter`).
        debug_assert!(holds(storage_id, first_row), "a mark is added without its bucket's lock");
        let rows = MarkRows::single(offset_in_bucket(row), successor);
        catalog::insert_mark(storage_id, first_row, kind, &rows, cid);
        let mark = Mark { xmin: pg_sys::GetCurrentTransactionId(), cid, kind, rows };
        for cell in [&HELD, &ALONE] {
            cell.with(|c| {
                if let Some(b) = c.borrow_mut().as_mut().filter(|b| b.is(storage_id, first_row)) {
                    b.marks.push(mark.clone());
                }
            });
        }
    }
}

/// Ends a change (or a claim that did not change anything): releases a bucket held for
/// a change published alone, and the collecting bucket if nothing is collected in it.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn done() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        if let Some(b) = ALONE.with(|a| a.borrow_mut().take()) {
            b.release();
        }
        let idle = HELD.with(|h| h.borrow().as_ref().is_some_and(|b| b.pending.is_empty()));
        if idle && held_is_ours_now() {
            if let Some(b) = HELD.with(|h| h.borrow_mut().take()) {
                b.release();
            }
        }
    }
}

/// Publishes what can be published and lets go of every bucket: before this backend
/// waits for another transaction, which might be waiting for one of them.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn let_go() {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        if let Some(b) = ALONE.with(|a| a.borrow_mut().take()) {
            b.release();
        }
        if held_is_ours_now() {
            if let Some(b) = HELD.with(|h| h.borrow_mut().take()) {
                b.release();
            }
        }
    }
}

/// The command id of this backend's collected, unpublished delete of `row`, if any.
pub fn pending_delete(storage_id: u64, row: u64) -> Option<pg_sys::CommandId> {
    HELD.with(|h| {
        let h = h.borrow();
        let b = h.as_ref().filter(|b| b.is(storage_id, bucket_start(row)))?;
        b.pending.contains(offset_in_bucket(row)).then_some(b.cid)
    })
}

/// The rows of a storage this backend deleted and has not published yet, sorted.
pub fn pending_rows(storage_id: u64) -> Vec<u64> {
    HELD.with(|h| {
        let h = h.borrow();
        let Some(b) = h.as_ref().filter(|b| b.storage_id == storage_id && !b.pending.is_empty()) else {
            return Vec::new();
        };
        let mut copy = b.pending.clone();
        copy.build().offsets().iter().map(|&o| b.first_row + o as u64).collect()
    })
}

/// Whether a delete by this transaction's command `cid` is visible to `snapshot`.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it).
pub unsafe fn own_delete_visible(cid: pg_sys::CommandId, snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it).
    unsafe {
        match (*snapshot).snapshot_type {
            pg_sys::SnapshotType::SNAPSHOT_ANY => false,
            pg_sys::SnapshotType::SNAPSHOT_MVCC | pg_sys::SnapshotType::SNAPSHOT_HISTORIC_MVCC => {
                cid < (*snapshot).curcid
            }
            _ => true,
        }
    }
}

/// The rows of a storage deleted as `snapshot` sees it: published marks, and this
/// backend's collected deletes that the snapshot sees. Sorted.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn deleted_rows(storage_id: u64, snapshot: pg_sys::Snapshot) -> Vec<u64> {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let mut rows = catalog::load_deleted_rows(storage_id, snapshot);
        let visible = HELD.with(|h| {
            h.borrow().as_ref().is_some_and(|b| {
                b.storage_id == storage_id && !snapshot.is_null() && own_delete_visible(b.cid, snapshot)
            })
        });
        let extra = if visible { pending_rows(storage_id) } else { Vec::new() };
        if !extra.is_empty() {
            rows.extend(extra);
            rows.sort_unstable();
            rows.dedup();
        }
        rows
    }
}

/// How a uniqueness or exclusion check may read a bucket's marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckAccess {
    /// This backend holds the bucket: its marks and collected deletes are known here.
    Own,
    /// The check holds the bucket's lock in ShareLock mode until `end_check`, so no
    /// collector can publish between its reading of the marks and its verdict.
    Shared,
    /// Another backend collects deletes in the bucket: the check cannot know whether
    /// the row is among them. The bucket went into the snapshot as a speculative
    /// insertion in progress (`xmin` and `speculativeToken`, see `lock_tag`): the row
    /// counts as live, and the caller waits for the bucket once it has released its
    /// index page, then checks again.
    Busy,
}

/// Before a uniqueness or exclusion check (dirty snapshot, possibly under an index
/// page's buffer lock) reads the marks of `row`'s bucket. Never waits.
///
/// # Safety
/// `snapshot` must be a valid snapshot (or NULL where this fn's docs allow it); call on the
/// backend thread inside a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn begin_check(
    relid: pg_sys::Oid,
    storage_id: u64,
    row: u64,
    snapshot: pg_sys::Snapshot,
) -> CheckAccess {
    // SAFETY: the caller guarantees this fn's contract: `snapshot` is a valid snapshot (or
    // NULL where this fn's docs allow it), and we are on the backend thread inside a
    // transaction, so transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        let first_row = bucket_start(row);
        if holds(storage_id, first_row) {
            return CheckAccess::Own;
        }
        if try_lock_bucket(relid, first_row, pg_sys::ShareLock) {
            return CheckAccess::Shared;
        }
        let tag = lock_tag(relid, first_row);
        (*snapshot).xmin = tag.locktag_field1.into();
        (*snapshot).speculativeToken = tag.locktag_field2;
        CheckAccess::Busy
    }
}

/// Ends a check that `begin_check` let read the marks.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn end_check(relid: pg_sys::Oid, row: u64, access: CheckAccess) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // transaction ids, heavyweight locks and mark writes are allowed.
    unsafe {
        if access == CheckAccess::Shared {
            unlock_bucket(relid, bucket_start(row), pg_sys::ShareLock);
        }
    }
}

/// The end of a statement: publishes its collected deletes (unless they belong to an
/// enclosing subtransaction's statement, which is still running).
///
/// # Safety
/// Call on the backend thread (in a transaction or not: this checks before `let_go`).
pub unsafe fn statement_done() {
    // SAFETY: on the backend thread (this fn's contract) the transaction-state checks only
    // read backend state, and `let_go` runs only inside a transaction, out of parallel mode.
    unsafe {
        if pg_sys::IsTransactionState() && !pg_sys::IsInParallelMode() {
            let_go();
        }
    }
}

/// Forgets the buckets of a subtransaction that aborted (its locks went with it).
unsafe fn forget_subxact(subxact: pg_sys::SubTransactionId) {
    ALONE.with(|a| *a.borrow_mut() = None);
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        if h.as_ref().is_some_and(|b| b.subxact == subxact) {
            *h = None;
        }
    });
}

/// At a transaction's end: held buckets released (their marks written) before commit or
/// prepare, forgotten after.
///
/// # Safety
/// Called by the transaction callback (`glue::xact_callbacks`) with PostgreSQL's event.
pub unsafe fn on_xact(event: pg_sys::XactEvent::Type) {
    use pg_sys::XactEvent::*;
    match event {
        XACT_EVENT_PRE_COMMIT | XACT_EVENT_PARALLEL_PRE_COMMIT | XACT_EVENT_PRE_PREPARE => {
            // Every subtransaction has committed into the top one by now.
            for cell in [&ALONE, &HELD] {
                if let Some(b) = cell.with(|c| c.borrow_mut().take()) {
                    // SAFETY: before commit (or prepare) the transaction is still open on
                    // the backend thread, so the bucket may write its marks and unlock.
                    unsafe { b.release() };
                }
            }
        }
        XACT_EVENT_ABORT
        | XACT_EVENT_PARALLEL_ABORT
        | XACT_EVENT_COMMIT
        | XACT_EVENT_PARALLEL_COMMIT
        | XACT_EVENT_PREPARE => {
            ALONE.with(|a| *a.borrow_mut() = None);
            HELD.with(|h| *h.borrow_mut() = None);
        }
        _ => {}
    }
}

/// At a subtransaction's end: its marks let go before it commits, forgotten if it aborts.
///
/// # Safety
/// Called by the subtransaction callback (`glue::xact_callbacks`) with PostgreSQL's
/// arguments.
pub unsafe fn on_subxact(event: pg_sys::SubXactEvent::Type, subxact: pg_sys::SubTransactionId) {
    use pg_sys::SubXactEvent::*;
    match event {
        // SAFETY: before a subtransaction commits it is still open on the backend thread,
        // so `let_go` may write marks and unlock.
        SUBXACT_EVENT_PRE_COMMIT_SUB => unsafe { let_go() },
        // SAFETY: `forget_subxact` only drops per-backend state; `subxact` is the id
        // PostgreSQL passes for the aborting subtransaction.
        SUBXACT_EVENT_ABORT_SUB => unsafe { forget_subxact(subxact) },
        _ => {}
    }
}
