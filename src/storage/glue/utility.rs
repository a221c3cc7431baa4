//! The ProcessUtility hook: what the storage layer does before PostgreSQL runs a
//! utility statement.

use super::{citus, publication};
use crate::pg_list;
use crate::storage::change::logical_log;
use crate::storage::relation::options;
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use pgrx::prelude::*;

static mut PREV_HOOK: pg_sys::ProcessUtility_hook_type = None;

/// # Safety
/// Call once, from `_PG_init`, on the backend thread.
pub unsafe fn install() {
    // SAFETY: at load on the backend thread (this fn's contract), nothing else reads or
    // writes `ProcessUtility_hook` or `PREV_HOOK` meanwhile; chaining keeps the previous hook.
    unsafe {
        PREV_HOOK = pg_sys::ProcessUtility_hook;
        pg_sys::ProcessUtility_hook = Some(process_utility);
    }
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
    // SAFETY: PostgreSQL calls this on the backend thread with the arguments its API defines:
    // `pstmt` is a valid parse-tree node; `query_string`, `query_env`, `dest`, `qc` are valid
    // for the reads and writes made through it here (NULL only where the API allows it).
    unsafe {
        // Rows buffered so far belong to the current (sub)transaction: write them out while
        // it is the current one, before a utility statement needs them — a SAVEPOINT that
        // reads them from inside, CREATE INDEX (maybe in parallel mode, where nothing can
        // be written), ALTER TABLE, COPY TO.
        write_buffer::flush_all();
        // Inserted rows gathered for logical decoding are logged before the statement
        // changes anything (TRUNCATE, a rewrite under a new file node, DDL).
        logical_log::flush_inserts();
        let mut pstmt = publication::empty_table_sync_of_metadata(pstmt, read_only_tree);
        let stmt = (*pstmt).utilityStmt;
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_AlterTableStmt && mentions_our_option(stmt)
        {
            // Citus: the same options go to the shards once applied here (see `citus`).
            let alter = stmt as *mut pg_sys::AlterTableStmt;
            let clauses = citus::our_option_clauses(alter);
            let range = (*alter).relation;
            // Our options are taken out of the statement: work on a copy if it is shared.
            if read_only_tree {
                pstmt = pg_sys::copyObjectImpl(pstmt as *const std::ffi::c_void) as *mut pg_sys::PlannedStmt;
            }
            let left = options::take_from_alter_table((*pstmt).utilityStmt as *mut pg_sys::AlterTableStmt);
            if let Some(clauses) = clauses {
                citus::propagate_options(range, &clauses);
            }
            if !left {
                if !qc.is_null() {
                    (*qc).commandTag = pg_sys::CommandTag::CMDTAG_ALTER_TABLE;
                    (*qc).nprocessed = 0;
                }
                return;
            }
        }
        // CREATE TABLE ... WITH (our options): created without them, then given them.
        let mut create_options = Vec::new();
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_CreateStmt {
            let create = stmt as *mut pg_sys::CreateStmt;
            if pg_list::ptrs::<pg_sys::DefElem>((*create).options).any(|d| options::is_our_option(d)) {
                if read_only_tree {
                    pstmt =
                        pg_sys::copyObjectImpl(pstmt as *const std::ffi::c_void) as *mut pg_sys::PlannedStmt;
                }
                create_options = options::take_from_create((*pstmt).utilityStmt as *mut pg_sys::CreateStmt);
            }
        }
        let existed = !create_options.is_empty() && {
            let create = (*pstmt).utilityStmt as *mut pg_sys::CreateStmt;
            super::relid_if_exists((*create).relation).is_some()
        };
        // COPY FROM into a columnar table, parsed in parallel (when it can be done as
        // PostgreSQL's COPY would do it); the hooks of libraries loaded before ours do
        // not see it then (pgcolumnar.enable_parallel_copy = off leaves it to them).
        if !stmt.is_null() && super::copy_from::run(stmt, query_string, qc) {
            logical_log::flush_inserts();
            return;
        }
        let renames_or_drops_columns = !stmt.is_null() && renames_or_drops_columns(stmt);
        let creates_us = !stmt.is_null() && creates_this_extension(stmt);
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
        // And the rows it inserted (COPY, CALL) before whatever comes next.
        logical_log::flush_inserts();
        if renames_or_drops_columns {
            options::refresh_sort_by_names();
        }
        if creates_us {
            tell_when_columnar_name_is_taken();
        }
        // CREATE TABLE IF NOT EXISTS of a table that exists leaves it alone.
        if !create_options.is_empty() && !existed {
            options::apply_to_created((*pstmt).utilityStmt as *mut pg_sys::CreateStmt, &create_options);
        }
        // A Citus shard created here (new, moved, copied) takes its table's options.
        if !stmt.is_null() && (*stmt).type_ == pg_sys::NodeTag::T_CreateStmt && create_options.is_empty() {
            citus::inherit_shard_options((*pstmt).utilityStmt as *mut pg_sys::CreateStmt);
        }
    }
}

/// CREATE EXTENSION pgcolumnar, when the extension does not exist yet.
unsafe fn creates_this_extension(stmt: *mut pg_sys::Node) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid parse-tree node, so
    // a CreateExtensionStmt's name is a NUL-terminated string; the catalog lookup runs on the
    // backend thread inside the statement's transaction.
    unsafe {
        (*stmt).type_ == pg_sys::NodeTag::T_CreateExtensionStmt
            && std::ffi::CStr::from_ptr((*(stmt as *mut pg_sys::CreateExtensionStmt)).extname) == EXTENSION
            && pg_sys::get_extension_oid(EXTENSION.as_ptr(), true) == pg_sys::InvalidOid
    }
}

const EXTENSION: &std::ffi::CStr = c"pgcolumnar";

/// The extension script creates the access method `columnar` only where that name is free
/// (another columnar extension such as citus_columnar may own it). It cannot tell the user
/// itself (PostgreSQL hides an extension script's NOTICEs), so this does, after the script.
unsafe fn tell_when_columnar_name_is_taken() {
    // SAFETY: on the backend thread inside the CREATE EXTENSION's transaction, after it ran:
    // catalog lookups are allowed, and the names passed are NUL-terminated static strings.
    unsafe {
        let am = pg_sys::get_am_oid(c"columnar".as_ptr(), true);
        let ours = pg_sys::get_extension_oid(EXTENSION.as_ptr(), true);
        if am == pg_sys::InvalidOid || ours == pg_sys::InvalidOid {
            return;
        }
        let owner = pg_sys::getExtensionOfObject(pg_sys::AccessMethodRelationId, am);
        if owner == ours {
            return;
        }
        let taken_by = if owner == pg_sys::InvalidOid {
            "an access method of no extension".to_string()
        } else {
            let name = pg_sys::get_extension_name(owner);
            format!("extension {}", std::ffi::CStr::from_ptr(name).to_string_lossy())
        };
        pgrx::pg_sys::panic::ErrorReport::new(
            PgSqlErrorCode::ERRCODE_SUCCESSFUL_COMPLETION,
            format!(
                "pgcolumnar created access method \"pgcolumnar\" only: the name \"columnar\" is taken by {taken_by}"
            ),
            "pgcolumnar",
        )
        .set_hint("Create pgcolumnar tables with USING pgcolumnar; USING columnar makes tables of the other access method.")
        .report(PgLogLevel::NOTICE);
    }
}

/// ALTER TABLE ... RENAME COLUMN, or an ALTER TABLE with a DROP COLUMN: the names a
/// sort_by option lists may have changed.
unsafe fn renames_or_drops_columns(stmt: *mut pg_sys::Node) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid parse-tree node.
    unsafe {
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
}

/// Whether an ALTER TABLE sets or resets one of pgcolumnar's table options.
unsafe fn mentions_our_option(stmt: *mut pg_sys::Node) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `stmt` is a valid parse-tree node,
    // and we are on the backend thread inside a transaction, so the catalog lookups and
    // relation opens are allowed.
    unsafe {
        let cmds = (*(stmt as *mut pg_sys::AlterTableStmt)).cmds;
        pg_list::ptrs::<pg_sys::AlterTableCmd>(cmds).any(|cmd| {
            let defs = (*cmd).def as *mut pg_sys::List;
            matches!(
                (*cmd).subtype,
                pg_sys::AlterTableType::AT_SetRelOptions | pg_sys::AlterTableType::AT_ResetRelOptions
            ) && pg_list::ptrs::<pg_sys::DefElem>(defs).any(|def| options::is_our_option(def))
        })
    }
}
