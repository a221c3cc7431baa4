//! The ProcessUtility hook: what the storage layer does before PostgreSQL runs a
//! utility statement.

use super::write_buffer;
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
}
