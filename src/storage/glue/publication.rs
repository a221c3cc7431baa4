//! Refusing logical replication of columnar tables. Their rows are written as whole
//! pages, not as heap tuples that logical decoding turns into changes, so a publication
//! of a columnar table would replicate nothing and report success. Citus's non-blocking
//! shard moves and splits publish the shard this way: they must fail, loudly, until
//! columnar changes can be decoded (`shard_transfer_mode => 'block_writes'` works).

use crate::pg_list;
use crate::storage::relation::am;
use crate::storage::shared::error::not_supported;
use pgrx::pg_sys;

/// Raises 0A000 when a CREATE PUBLICATION or ALTER PUBLICATION ... ADD / SET TABLE names
/// a columnar table. FOR ALL TABLES and TABLES IN SCHEMA publications are left alone:
/// they serve heap tables too.
///
/// # Safety
/// `stmt` must be a valid parse-tree node; on the backend thread inside a transaction.
pub unsafe fn refuse_columnar_tables(stmt: *mut pg_sys::Node) {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid node of the type
    // its tag says, so the casts and list walks read valid memory; catalog lookups and
    // relation opens are allowed on the backend thread inside a transaction.
    unsafe {
        let objects = match (*stmt).type_ {
            pg_sys::NodeTag::T_CreatePublicationStmt => {
                (*(stmt as *mut pg_sys::CreatePublicationStmt)).pubobjects
            }
            pg_sys::NodeTag::T_AlterPublicationStmt => {
                let alter = stmt as *mut pg_sys::AlterPublicationStmt;
                if (*alter).action == pg_sys::AlterPublicationAction::AP_DropObjects {
                    return;
                }
                (*alter).pubobjects
            }
            _ => return,
        };
        for spec in pg_list::ptrs::<pg_sys::PublicationObjSpec>(objects) {
            if (*spec).pubobjtype != pg_sys::PublicationObjSpecType::PUBLICATIONOBJ_TABLE
                || (*spec).pubtable.is_null()
            {
                continue;
            }
            let range = (*(*spec).pubtable).relation;
            let Some(relid) = super::relid_if_exists(range) else {
                continue; // PostgreSQL reports the missing table itself
            };
            let rel = pg_sys::relation_open(relid, pg_sys::AccessShareLock as i32);
            let columnar = am::is_columnar(rel);
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as i32);
            if columnar {
                let name = std::ffi::CStr::from_ptr((*range).relname).to_string_lossy();
                not_supported(
                    &format!("publishing table \"{name}\" for logical replication"),
                    "Changes to columnar tables cannot be logically decoded yet. Move or split Citus \
                     shards of columnar tables with shard_transfer_mode => 'block_writes'.",
                );
            }
        }
    }
}
