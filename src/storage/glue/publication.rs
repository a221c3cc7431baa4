//! What publications see of pgcolumnar's own metadata tables. They are ordinary tables,
//! so a `FOR ALL TABLES` publication lists them (PostgreSQL 15 leaves out only tables
//! with system OIDs). Their changes never reach a subscriber (`wal_resource_manager`
//! drops them from decoding); this keeps their rows out of the initial table sync too: a
//! subscriber copying one of them over a replication connection gets no rows, so its own
//! pgcolumnar metadata is left alone.

use crate::pg_list;
use pgrx::pg_sys;
use std::ffi::CStr;

/// Turns a `COPY pgcolumnar.<table> (columns) TO STDOUT` run by a walsender (a
/// subscription's table sync) into `COPY (SELECT columns FROM ONLY pgcolumnar.<table>
/// WHERE false) TO STDOUT`: the same columns, no rows. Returns the statement to run.
///
/// # Safety
/// `pstmt` must be a valid utility statement; `read_only_tree` as PostgreSQL passed it;
/// on the backend thread inside a transaction.
pub unsafe fn empty_table_sync_of_metadata(
    pstmt: *mut pg_sys::PlannedStmt,
    read_only_tree: bool,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: the caller guarantees this fn's contract: the statement's nodes are valid, the
    // catalog lookups run inside a transaction, and a statement PostgreSQL may reuse is
    // copied before it is changed.
    unsafe {
        let stmt = (*pstmt).utilityStmt;
        if !pg_sys::am_walsender || stmt.is_null() || (*stmt).type_ != pg_sys::NodeTag::T_CopyStmt {
            return pstmt;
        }
        let copy = stmt as *mut pg_sys::CopyStmt;
        if (*copy).is_from || (*copy).relation.is_null() {
            return pstmt;
        }
        let Some(relid) = super::relid_if_exists((*copy).relation) else { return pstmt };
        let schema = pg_sys::get_namespace_oid(c"pgcolumnar".as_ptr(), true);
        if schema == pg_sys::InvalidOid || pg_sys::get_rel_namespace(relid) != schema {
            return pstmt;
        }
        let quote = |name: *const std::ffi::c_char| {
            CStr::from_ptr(pg_sys::quote_identifier(name)).to_string_lossy().into_owned()
        };
        let columns: Vec<String> =
            pg_list::ptrs::<pg_sys::String>((*copy).attlist).map(|s| quote((*s).sval)).collect();
        let select = format!(
            "SELECT {} FROM ONLY pgcolumnar.{} WHERE false",
            if columns.is_empty() { "*".to_string() } else { columns.join(", ") },
            quote(pg_sys::get_rel_name(relid)),
        );
        let select = std::ffi::CString::new(select).expect("no NUL in quoted names");
        let parsed = pg_sys::raw_parser(select.as_ptr(), pg_sys::RawParseMode::RAW_PARSE_DEFAULT);
        let raw = pg_list::ptrs::<pg_sys::RawStmt>(parsed).next().expect("one statement");
        let pstmt = if read_only_tree {
            pg_sys::copyObjectImpl(pstmt as *const std::ffi::c_void) as *mut pg_sys::PlannedStmt
        } else {
            pstmt
        };
        let copy = (*pstmt).utilityStmt as *mut pg_sys::CopyStmt;
        (*copy).relation = std::ptr::null_mut();
        (*copy).attlist = std::ptr::null_mut();
        (*copy).query = (*raw).stmt;
        pstmt
    }
}
