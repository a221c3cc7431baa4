//! Access to pgcolumnar's own metadata with the extension's rights, whoever runs the
//! statement. What a user may do with a columnar table is decided by the table's grants
//! (checked by PostgreSQL before our callbacks run), exactly as for heap; the metadata
//! behind it (`pgcolumnar.*`, `storage_id_seq`) is granted to nobody.
//!
//! Direct heap, index and systable access (most of `catalog`) checks no permissions and
//! needs nothing. What does check them — `nextval` and SQL through SPI — runs inside an
//! `ExtensionRights` guard, which acts as the owner of the metadata relation (the role
//! that ran CREATE EXTENSION), the way PostgreSQL's foreign-key checks (ri_triggers.c)
//! run as the referenced table's owner.

use pgrx::pg_sys;

/// While alive, the backend acts as the owner of a metadata relation, in a security-
/// restricted operation, with `search_path` pinned to `pg_catalog, pg_temp` (so that no
/// object of the caller's schemas is resolved in our SQL with the owner's rights).
/// Dropping it restores the caller's user, security context and search_path, on normal
/// exit and on Rust unwinding alike; after a PostgreSQL error, (sub)transaction abort
/// restores them too.
#[must_use = "the rights last as long as the guard"]
pub struct ExtensionRights {
    user: pg_sys::Oid,
    sec_context: i32,
    guc_level: i32,
}

impl ExtensionRights {
    /// Acts as the owner of relation `relid` (one of the extension's) until dropped.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction (the syscache lookup and the GUC
    /// nest level need one), and drop guards in the reverse order of their creation:
    /// `AtEOXact_GUC` pops GUC nest levels as a stack.
    pub unsafe fn of(relid: pg_sys::Oid) -> ExtensionRights {
        // SAFETY: we are on the backend thread inside a transaction (this fn's contract), so
        // the user-id, GUC and syscache calls are allowed; the out-pointers passed to
        // GetUserIdAndSecContext are locals, and the C strings are 'static literals.
        unsafe {
            let owner = relation_owner(relid);
            let (mut user, mut sec_context) = (pg_sys::InvalidOid, 0);
            pg_sys::GetUserIdAndSecContext(&mut user, &mut sec_context);
            // LOCAL_USERID_CHANGE: SET ROLE cannot undo the switch meanwhile.
            // RESTRICTED_OPERATION: nothing run with the owner's rights may change session
            // state (SET ROLE, temp tables, PREPARE ...), as in SECURITY DEFINER maintenance.
            pg_sys::SetUserIdAndSecContext(
                owner,
                sec_context
                    | pg_sys::SECURITY_LOCAL_USERID_CHANGE as i32
                    | pg_sys::SECURITY_RESTRICTED_OPERATION as i32,
            );
            let guard = ExtensionRights { user, sec_context, guc_level: pg_sys::NewGUCNestLevel() };
            pg_sys::set_config_option(
                c"search_path".as_ptr(),
                c"pg_catalog, pg_temp".as_ptr(),
                pg_sys::GucContext::PGC_USERSET,
                pg_sys::GucSource::PGC_S_SESSION,
                pg_sys::GucAction::GUC_ACTION_SAVE,
                true,
                0,
                false,
            );
            guard
        }
    }
}

impl Drop for ExtensionRights {
    fn drop(&mut self) {
        // SAFETY: undoes exactly what `of` did, in reverse order; both calls only reset
        // backend-local state and cannot fail.
        unsafe {
            pg_sys::AtEOXact_GUC(true, self.guc_level);
            pg_sys::SetUserIdAndSecContext(self.user, self.sec_context);
        }
    }
}

unsafe fn relation_owner(relid: pg_sys::Oid) -> pg_sys::Oid {
    // SAFETY: the caller is inside a transaction on the backend thread (as `of` requires), so
    // the syscache may be searched; `tup` is checked for NULL before its pg_class struct is
    // read, and released once, after the read.
    unsafe {
        let tup = pg_sys::SearchSysCache1(pg_sys::SysCacheIdentifier::RELOID as i32, relid.into());
        if tup.is_null() {
            pgrx::error!("cache lookup failed for relation {}", relid.to_u32());
        }
        let owner = (*pg_sys::heap_tuple_get_struct::<pg_sys::FormData_pg_class>(tup)).relowner;
        pg_sys::ReleaseSysCache(tup);
        owner
    }
}
