//! The ProcessUtility hook: what the storage layer does before PostgreSQL runs a
//! utility statement.

use super::{options, write_buffer};
use crate::pg_list;
use pgrx::pg_sys;
use pgrx::prelude::*;

static mut PREV_HOOK: pg_sys::ProcessUtility_hook_type = None;

pub unsafe fn install() {
    PREV_HOOK = pg_sys::ProcessUtility_hook;
    pg_sys::ProcessUtility_hook = Some(process_utility);
}

#[pg_guard]
#[allow(clippy::too_many_arguments)]
unsafe extern "C-unwind" fn process_utility(
    pstmt: *mut pg_sys::PlannedStmt,
    query_string: *const std::ffi::c_char,
    read_only_tree: bool,
    context: pg_sys::ProcessUtilityContext::Type,
    params: pg_sys::ParamListInfo,
    query_env: *mut pg_sys::QueryEnvironment,
    dest: *mut pg_sys::DestReceiver,
    qc: *mut pg_sys::QueryCompletion,
) {
    // Rows buffered so far belong to the current (sub)transaction: write them out while
    // it is the current one, before a utility statement needs them — a SAVEPOINT that
    // reads them from inside, CREATE INDEX (maybe in parallel mode, where nothing can
    // be written), ALTER TABLE, COPY TO.
    write_buffer::flush_all();
    let mut pstmt = pstmt;
    let stmt = (*pstmt).utilityStmt;
    if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_AlterTableStmt && mentions_our_option(stmt) {
        // Our options are taken out of the statement: work on a copy if it is shared.
        if read_only_tree {
            pstmt = pg_sys::copyObjectImpl(pstmt as *const std::ffi::c_void) as *mut pg_sys::PlannedStmt;
        }
        if !options::take_from_alter_table((*pstmt).utilityStmt as *mut pg_sys::AlterTableStmt) {
            if !qc.is_null() {
                (*qc).commandTag = pg_sys::CommandTag::CMDTAG_ALTER_TABLE;
                (*qc).nprocessed = 0;
            }
            return;
        }
    }
    let renames_or_drops_columns = !stmt.is_null() && renames_or_drops_columns(stmt);
    match PREV_HOOK {
        Some(prev) => prev(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc),
        None => pg_sys::standard_ProcessUtility(
            pstmt,
            query_string,
            read_only_tree,
            context,
            params,
            query_env,
            dest,
            qc,
        ),
    }
    if renames_or_drops_columns {
        options::refresh_sort_by_names();
    }
}

/// ALTER TABLE ... RENAME COLUMN, or an ALTER TABLE with a DROP COLUMN: the names a
/// sort_by option lists may have changed.
unsafe fn renames_or_drops_columns(stmt: *mut pg_sys::Node) -> bool {
    match (*stmt).type_ {
        pg_sys::NodeTag::T_RenameStmt => {
            let rename = stmt as *mut pg_sys::RenameStmt;
            (*rename).renameType == pg_sys::ObjectType::OBJECT_COLUMN
        }
        pg_sys::NodeTag::T_AlterTableStmt => {
            let cmds = (*(stmt as *mut pg_sys::AlterTableStmt)).cmds;
            pg_list::ptrs::<pg_sys::AlterTableCmd>(cmds)
                .any(|cmd| (*cmd).subtype == pg_sys::AlterTableType::AT_DropColumn)
        }
        _ => false,
    }
}

/// Whether an ALTER TABLE sets or resets one of pgcolumnar's table options.
unsafe fn mentions_our_option(stmt: *mut pg_sys::Node) -> bool {
    let cmds = (*(stmt as *mut pg_sys::AlterTableStmt)).cmds;
    pg_list::ptrs::<pg_sys::AlterTableCmd>(cmds).any(|cmd| {
        let defs = (*cmd).def as *mut pg_sys::List;
        matches!(
            (*cmd).subtype,
            pg_sys::AlterTableType::AT_SetRelOptions | pg_sys::AlterTableType::AT_ResetRelOptions
        ) && pg_list::ptrs::<pg_sys::DefElem>(defs)
            .any(|def| std::ffi::CStr::from_ptr((*def).defname).to_bytes() == options::SORT_BY.as_bytes())
    })
}
