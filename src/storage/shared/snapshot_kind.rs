//! What kind of snapshot a read was given. Reads behave differently under them: an MVCC
//! snapshot sees one fixed state; a dirty one also sees changes in progress and reports
//! their writers to its caller (unique checks, logical replication's apply); dirty and
//! self snapshots see changes committed after the read began.

use pgrx::pg_sys;

/// Whether `snapshot` is an MVCC snapshot (a query's, or logical decoding's historic one).
///
/// # Safety
/// `snapshot` must be NULL or a valid snapshot.
pub unsafe fn is_mvcc(snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: this fn's contract: `snapshot` is checked for NULL before it is read.
    !snapshot.is_null()
        && matches!(
            unsafe { (*snapshot).snapshot_type },
            pg_sys::SnapshotType::SNAPSHOT_MVCC | pg_sys::SnapshotType::SNAPSHOT_HISTORIC_MVCC
        )
}

/// Whether `snapshot` is a dirty snapshot (InitDirtySnapshot).
///
/// # Safety
/// `snapshot` must be NULL or a valid snapshot.
pub unsafe fn is_dirty(snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: this fn's contract: `snapshot` is checked for NULL before it is read.
    !snapshot.is_null() && unsafe { (*snapshot).snapshot_type } == pg_sys::SnapshotType::SNAPSHOT_DIRTY
}

/// A dirty snapshot reports the inserter or deleter its caller must wait for: none so
/// far (other snapshots are left alone).
///
/// # Safety
/// `snapshot` must be NULL or a valid snapshot.
pub unsafe fn forget_writers(snapshot: pg_sys::Snapshot) {
    // SAFETY: this fn's contract: a dirty snapshot is valid and ours to write.
    unsafe {
        if is_dirty(snapshot) {
            (*snapshot).xmin = pg_sys::InvalidTransactionId;
            (*snapshot).xmax = pg_sys::InvalidTransactionId;
            (*snapshot).speculativeToken = 0;
        }
    }
}

/// Whether a scan under `snapshot` sees changes committed after it began (dirty and self
/// snapshots), so that reading again may find more.
///
/// # Safety
/// `snapshot` must be NULL or a valid snapshot.
pub unsafe fn sees_later_changes(snapshot: pg_sys::Snapshot) -> bool {
    // SAFETY: this fn's contract: `snapshot` is checked for NULL before it is read.
    !snapshot.is_null()
        && matches!(
            unsafe { (*snapshot).snapshot_type },
            pg_sys::SnapshotType::SNAPSHOT_DIRTY | pg_sys::SnapshotType::SNAPSHOT_SELF
        )
}
