//! Custom paths, written once: the planner's twin of `exec::customscan`. A path kind
//! implements `CustomPathKind` (the node it plans, what `add_paths` worked out for one
//! path, and how that becomes the node's `CustomScan`), and the `CustomPathMethods`
//! PostgreSQL calls are generated for it here (`PathMethods::<Kind>`).
//!
//! A path carries its analysis (pushed filter, pruning, costs, EXPLAIN fields) from
//! `add_paths` to `plan`, so nothing is worked out twice: the analysis is a Rust value
//! kept in the planner's memory context (dropped with it, also on ERROR), pointed to by
//! the path's `custom_private` (one pointer-valued Const). Core copies a path only
//! flat (reparameterize_path_by_child), which keeps that pointer; a copy's clauses may
//! then differ from those analysed, so `plan` gets the clauses createplan hands it.

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgMemoryContexts;
use std::marker::PhantomData;

use crate::exec::customscan::CustomScanNode;
use crate::pg_list;

/// A custom path of ours: the node it plans and what its `add_paths` hands its `plan`.
pub trait CustomPathKind: 'static {
    /// The node the path becomes; the path goes by its name.
    type Node: CustomScanNode;
    /// What `add_paths` worked out for one path, carried to `plan`.
    type Analysis: 'static;
    /// The plan's methods: `Methods::<Node>::SCAN`, or `PARALLEL_SCAN` for a node that
    /// may run in parallel workers.
    const SCAN_METHODS: &'static pg_sys::CustomScanMethods;

    /// The CustomScan for `path` (`PlanCustomPath`), but for its `methods`: its target
    /// list `tlist`, and `clauses`, the scan clauses createplan hands over (in its
    /// order: by cost).
    ///
    /// # Safety
    /// Called from `PlanCustomPath` on the backend thread, in the planner's memory
    /// context: `root`, `rel` and `path` are the planner's live nodes for this path,
    /// `tlist` and `clauses` valid (possibly NIL) lists.
    unsafe fn plan(
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        path: *mut pg_sys::CustomPath,
        analysis: &Self::Analysis,
        tlist: *mut pg_sys::List,
        clauses: *mut pg_sys::List,
    ) -> *mut pg_sys::CustomScan;
}

/// The path methods of kind `K`, as PostgreSQL wants them.
pub struct PathMethods<K>(PhantomData<K>);

impl<K: CustomPathKind> PathMethods<K> {
    /// The path's methods (`CustomPath.methods`).
    pub const METHODS: pg_sys::CustomPathMethods = pg_sys::CustomPathMethods {
        CustomName: K::Node::NAME.as_ptr(),
        PlanCustomPath: Some(plan_path::<K>),
        ReparameterizeCustomPathByChild: None,
    };
}

/// A CustomPath of kind `K` with the fields every path of ours sets: its relation and
/// target, its rows and costs, its methods, and its analysis. Callers add what differs
/// (parallelism, parameters, flags).
///
/// # Safety
/// Backend thread, while planning `parent` (in the planner's memory context, which
/// owns the path and its analysis): `parent` and `target` are the planner's live nodes.
pub unsafe fn new<K: CustomPathKind>(
    parent: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    rows: f64,
    startup: f64,
    total: f64,
    analysis: K::Analysis,
) -> *mut pg_sys::CustomPath {
    // SAFETY: palloc0 returns a zeroed CustomPath (or raises ERROR), which we fill in; `parent`
    // and `target` are live planner nodes (this fn's contract). The analysis is leaked into
    // the current (planner) memory context, so the pointer stored in the Const stays valid
    // for as long as the path can be planned.
    unsafe {
        let path = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
        (*path).path.type_ = pg_sys::NodeTag::T_CustomPath;
        (*path).path.pathtype = pg_sys::NodeTag::T_CustomScan;
        (*path).path.parent = parent;
        (*path).path.pathtarget = target;
        (*path).path.rows = rows;
        (*path).path.startup_cost = startup;
        (*path).path.total_cost = total;
        (*path).methods = &PathMethods::<K>::METHODS;
        // Planning runs in one memory context (paths are not copied out of it): the
        // analysis lives as long as the path can be planned, and is dropped with it.
        let kept = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(analysis);
        let pointer = pg_sys::makeConst(
            pg_sys::INTERNALOID,
            -1,
            pg_sys::InvalidOid,
            std::mem::size_of::<pg_sys::Datum>() as i32,
            pg_sys::Datum::from(kept as *mut std::ffi::c_void),
            false,
            true,
        );
        (*path).custom_private = pg_list::from_ptrs([pointer]);
        path
    }
}

/// The analysis of `path` if it is a path of kind `K` (`new::<K>` made it, or a flat copy).
///
/// # Safety
/// `path` is a live planner path.
pub unsafe fn analysis_of<'a, K: CustomPathKind>(path: *mut pg_sys::Path) -> Option<&'a K::Analysis> {
    // SAFETY: `path` is live (this fn's contract); a CustomPath whose methods carry K's node
    // name was made by `new::<K>` (each node is planned by one path kind).
    unsafe {
        if (*path).type_ != pg_sys::NodeTag::T_CustomPath {
            return None;
        }
        let custom = path as *mut pg_sys::CustomPath;
        let methods = (*custom).methods;
        if methods.is_null() || std::ffi::CStr::from_ptr((*methods).CustomName) != K::Node::NAME {
            return None;
        }
        Some(analysis::<K>(custom))
    }
}

/// The analysis `new` gave `path`.
unsafe fn analysis<'a, K: CustomPathKind>(path: *mut pg_sys::CustomPath) -> &'a K::Analysis {
    // SAFETY: `path` is a CustomPath made by `new::<K>` (PostgreSQL calls `plan_path::<K>` only for
    // paths whose methods are `PathMethods::<K>`), so custom_private holds one INTERNALOID
    // Const (checked) pointing to a live `K::Analysis` in the planner's memory context.
    unsafe {
        let pointer = pg_list::ptrs::<pg_sys::Const>((*path).custom_private).next();
        let ours = |c: &*mut pg_sys::Const| {
            (**c).xpr.type_ == pg_sys::NodeTag::T_Const && (**c).consttype == pg_sys::INTERNALOID
        };
        let Some(c) = pointer.filter(ours) else {
            pgrx::error!("malformed {} path", K::Node::NAME.to_string_lossy())
        };
        &*((*c).constvalue.cast_mut_ptr::<K::Analysis>())
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn plan_path<K: CustomPathKind>(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    // SAFETY: PostgreSQL's createplan calls this on the backend thread for `best_path`, one of our
    // `K` paths (its methods are `PathMethods::<K>`), with its live `root`, `rel`,
    // `tlist` and `clauses`; K::plan returns a palloc'd CustomScan we may write.
    unsafe {
        let cscan = K::plan(root, rel, best_path, analysis::<K>(best_path), tlist, clauses);
        (*cscan).methods = K::SCAN_METHODS;
        // The plans of the path's custom_paths (an eagerly aggregated join's other side).
        (*cscan).custom_plans = custom_plans;
        cscan as *mut pg_sys::Plan
    }
}

/// A CustomScan node with its type set, the rest zero: what `plan` fills in.
///
/// # Safety
/// Backend thread, in a memory context that lives as long as the plan (planning).
pub unsafe fn new_scan() -> *mut pg_sys::CustomScan {
    // SAFETY: palloc0 returns zeroed memory the size of a CustomScan (or raises ERROR); setting
    // its tag is the only initialisation a zeroed node needs here.
    unsafe {
        let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
        (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
        cscan
    }
}
