//! Removes a table's pgcolumnar metadata when the table is dropped (transactionally: a
//! rolled-back DROP keeps it), through the object access hook: a columnar table's row
//! groups, pages and options, a heap table's options (`quals_push_down`). The hook sees
//! every way a table goes: DROP TABLE, DROP SCHEMA / DROP OWNED ... CASCADE, DROP
//! EXTENSION of an extension owning it, a partitioned or inheritance parent dropped with
//! its children.

use crate::storage::catalog;
use crate::storage::relation::am;
use crate::storage::relation::options;
use crate::storage::relation::pages;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use pgrx::prelude::*;

static mut PREV_HOOK: pg_sys::object_access_hook_type = None;

/// # Safety
/// Call once, from `_PG_init`, on the backend thread.
pub unsafe fn install() {
    // SAFETY: at load on the backend thread (this fn's contract), nothing else reads or
    // writes `object_access_hook` or `PREV_HOOK` meanwhile; chaining keeps the previous hook.
    unsafe {
        PREV_HOOK = pg_sys::object_access_hook;
        pg_sys::object_access_hook = Some(object_access);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn object_access(
    access: pg_sys::ObjectAccessType::Type,
    class_id: pg_sys::Oid,
    object_id: pg_sys::Oid,
    sub_id: i32,
    arg: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL calls the object-access hook on the backend thread inside the
    // transaction doing the access; `PREV_HOOK` was set once at load, `arg` is only passed on
    // to it, and the dropped table is opened (and locked) here before its relcache entry and
    // pages are read.
    unsafe {
        if let Some(prev) = PREV_HOOK {
            prev(access, class_id, object_id, sub_id, arg);
        }
        if access != pg_sys::ObjectAccessType::OAT_DROP
            || class_id != pg_sys::RelationRelationId
            || sub_id != 0
            || pg_sys::get_rel_relkind(object_id) as u8 != pg_sys::RELKIND_RELATION
        {
            return;
        }
        let rel = pg_sys::relation_open(object_id, pg_sys::AccessExclusiveLock as i32);
        if am::is_columnar(rel) {
            write_buffer::discard_relation(object_id);
            options::forget(object_id);
            if pages::nblocks(rel) > 0 {
                let storage_id = pages::storage_id(rel);
                catalog::delete_storage_if_installed(storage_id);
                crate::storage::write::free_space::forget_storage(storage_id);
            }
        } else if am::is_heap_table(rel) && !options::is_own_metadata(rel) {
            // Left behind, the row would name the bare OID, be dumped with the extension's
            // configuration, and hand its option to the next table given that OID.
            options::forget(object_id);
        }
        pg_sys::relation_close(rel, pg_sys::NoLock as i32);
    }
}
