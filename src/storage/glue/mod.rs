//! What PostgreSQL calls: `tableam` (the table AM routine, whose callbacks delegate to the
//! rooms below), `utility` (the ProcessUtility hook), `drop_hook` (the object access hook),
//! `invalidation` (the relcache callback), `stats` (`pgcolumnar.stats()`), `table_stats` (the `pgcolumnar.table_stats` view), `citus`
//! (options of Citus shards), `publication` (no metadata rows in a subscription's table sync),
//! `wal_resource_manager` (logical decoding of columnar changes).

pub mod citus;
pub mod copy_from;
pub mod drop_hook;
pub mod invalidation;
pub mod publication;
pub mod stats;
pub mod table_stats;
pub mod tableam;
pub mod utility;
pub mod wal_resource_manager;
pub mod xact_callbacks;

use pgrx::pg_sys;

/// The relation `range` names, without locking it, or None if there is none (the caller
/// leaves the error to PostgreSQL, or has nothing to do).
///
/// # Safety
/// `range` must be a valid RangeVar; on the backend thread inside a transaction.
pub unsafe fn relid_if_exists(range: *mut pg_sys::RangeVar) -> Option<pg_sys::Oid> {
    // SAFETY: the caller guarantees this fn's contract; the lookup reads the catalogs only.
    let relid = unsafe {
        pg_sys::RangeVarGetRelidExtended(
            range,
            pg_sys::NoLock as i32,
            pg_sys::RVROption::RVR_MISSING_OK,
            None,
            std::ptr::null_mut(),
        )
    };
    (relid != pg_sys::InvalidOid).then_some(relid)
}

/// Whether the current role may SELECT from `relid`: what decides what our statistics
/// functions show, since they read the metadata directly, which checks no permissions.
///
/// # Safety
/// On the backend thread inside a transaction.
pub unsafe fn role_may_select(relid: pg_sys::Oid) -> bool {
    // SAFETY: the caller guarantees this fn's contract; the check reads the catalogs only.
    unsafe {
        pg_sys::pg_class_aclcheck(relid, pg_sys::GetUserId(), pg_sys::ACL_SELECT as pg_sys::AclMode)
            == pg_sys::AclResult::ACLCHECK_OK
    }
}
