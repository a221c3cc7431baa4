//! The planner hooks pgcolumnar installs, each chained after whatever was installed
//! before: `set_rel_pathlist_hook` offers our scan paths for columnar relations
//! (`scan_path`) and, for heap tables with `quals_push_down` on, a scan that passes
//! quals to heapam (`pushed_seq_scan_path`); `create_upper_paths_hook` offers
//! aggregate paths over one columnar relation, serial and partial (`agg_path`), and
//! each key's best row for DISTINCT ON and per-key max / min (`last_point_path`);
//! `set_join_pathlist_hook` offers hash joins whose outer ColumnarScan is filtered by
//! the hash table's keys (`join_filter`); `planner_hook` lowers the finished plan's JIT
//! flags to what its cost outside pgcolumnar's nodes earns (`jit`).

use super::{agg_path, jit, join_filter, last_point_path, pushed_seq_scan_path, scan_path};
use pgrx::pg_sys;
use pgrx::prelude::*;

static mut PREV_SET_REL_PATHLIST: pg_sys::set_rel_pathlist_hook_type = None;
static mut PREV_CREATE_UPPER_PATHS: pg_sys::create_upper_paths_hook_type = None;
static mut PREV_SET_JOIN_PATHLIST: pg_sys::set_join_pathlist_hook_type = None;
static mut PREV_PLANNER: pg_sys::planner_hook_type = None;

/// Installs the hooks; once per backend, from `_PG_init`.
///
/// # Safety
/// Once per backend, from `_PG_init` on the backend's (or postmaster's) only thread,
/// before any planning: the hook statics are written without synchronisation.
pub unsafe fn install() {
    // SAFETY: `_PG_init` runs once, single-threaded, before any query (this fn's contract), so
    // nothing reads the hook variables or our PREV_ statics while they are written.
    unsafe {
        PREV_SET_REL_PATHLIST = pg_sys::set_rel_pathlist_hook;
        pg_sys::set_rel_pathlist_hook = Some(set_rel_pathlist);
        PREV_CREATE_UPPER_PATHS = pg_sys::create_upper_paths_hook;
        pg_sys::create_upper_paths_hook = Some(create_upper_paths);
        PREV_SET_JOIN_PATHLIST = pg_sys::set_join_pathlist_hook;
        pg_sys::set_join_pathlist_hook = Some(set_join_pathlist);
        PREV_PLANNER = pg_sys::planner_hook;
        pg_sys::planner_hook = Some(planner);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn planner(
    parse: *mut pg_sys::Query,
    query_string: *const std::ffi::c_char,
    cursor_options: std::ffi::c_int,
    bound_params: pg_sys::ParamListInfo,
) -> *mut pg_sys::PlannedStmt {
    // SAFETY: called by PostgreSQL (planner()) on the backend thread with a live query;
    // PREV_PLANNER was set once by `install` before any planning and has this signature.
    // The previous hook may raise an ERROR: it is called inside pgrx's FFI boundary, so
    // the ERROR becomes a Rust panic that pg_guard turns back into one.
    unsafe {
        let stmt = match PREV_PLANNER {
            Some(prev) => {
                pg_sys::ffi::pg_guard_ffi_boundary(|| prev(parse, query_string, cursor_options, bound_params))
            }
            None => pg_sys::standard_planner(parse, query_string, cursor_options, bound_params),
        };
        jit::discount(stmt);
        stmt
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn set_join_pathlist(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
) {
    // SAFETY: called by the planner (add_paths_to_joinrel) on the backend thread with its live
    // nodes for one join; PREV_SET_JOIN_PATHLIST was set once by `install` before any
    // planning, and is a hook with this same signature.
    unsafe {
        if let Some(prev) = PREV_SET_JOIN_PATHLIST {
            prev(root, joinrel, outerrel, innerrel, jointype, extra);
        }
        join_filter::add_paths(root, joinrel, outerrel, innerrel, jointype, extra);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn set_rel_pathlist(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rti: pg_sys::Index,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: called by the planner on the backend thread with its live `root`, `rel` and `rte`
    // for range table entry `rti`; PREV_SET_REL_PATHLIST was set once by `install`
    // before any planning, and is a hook with this same signature.
    unsafe {
        if let Some(prev) = PREV_SET_REL_PATHLIST {
            prev(root, rel, rti, rte);
        }
        scan_path::add_paths(root, rel, rte);
        pushed_seq_scan_path::add_paths(root, rel, rte);
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn create_upper_paths(
    root: *mut pg_sys::PlannerInfo,
    stage: pg_sys::UpperRelationKind::Type,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut std::ffi::c_void,
) {
    // SAFETY: called by the planner on the backend thread with its live `root`, input and output
    // relations; for UPPERREL_GROUP_AGG `extra` is the GroupPathExtraData PostgreSQL
    // passes for that stage. PREV_CREATE_UPPER_PATHS was set once by `install`.
    unsafe {
        if let Some(prev) = PREV_CREATE_UPPER_PATHS {
            prev(root, stage, input_rel, output_rel, extra);
        }
        // (PostgreSQL calls this hook for the grouping stage only, not for the partial
        // grouping stage: agg_path builds its parallel plan from here too.)
        match stage {
            pg_sys::UpperRelationKind::UPPERREL_GROUP_AGG => {
                let extra = extra as *mut pg_sys::GroupPathExtraData;
                agg_path::add_paths(root, input_rel, output_rel, extra);
                agg_path::eager_join::add_paths(root, input_rel, output_rel, extra);
                last_point_path::add_extreme_paths(root, input_rel, output_rel, extra);
            }
            pg_sys::UpperRelationKind::UPPERREL_DISTINCT => {
                last_point_path::add_distinct_paths(root, input_rel, output_rel)
            }
            _ => {}
        }
    }
}
