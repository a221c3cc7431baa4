//! Custom scan nodes, written once: a node implements `CustomScanNode` (its name, the
//! typed private data it keeps in the plan, and begin / next / end / rescan / explain),
//! and the `extern "C-unwind"` method tables PostgreSQL calls are generated for it
//! here (`Methods::<Node>`). A parallel-aware node also implements `ParallelScanNode`
//! (the DSM callbacks) and uses `Methods::<Node>::PARALLEL_EXEC`.
//!
//! The planner makes the plan (`planner::custompath`, this trait's twin): a `CustomScan`
//! whose `methods` are `Methods::<Node>::SCAN` and whose `custom_private` is
//! `Node::Private::to_list`, serialized with the helpers of `private` (bytea constants)
//! and `explain` (the EXPLAIN fields the planner decided, one (label, text) format for
//! every node). The executor then creates the node from that private data, and drops it
//! with the executor's memory context (also on ERROR).

pub mod deparse;
mod explain;
mod private;

pub use explain::{
    explain_fields_node, explain_fields_of, explain_planned, explain_planned_with, DEPARSED_AT_EXPLAIN,
};
pub use private::{bytea_const, bytea_datum, const_bytes, PlanPrivate};

use crate::storage::shared::worker_exit;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgMemoryContexts;
use std::ffi::CStr;
use std::marker::PhantomData;

/// A custom scan node's executor state and behaviour.
///
/// The unsafe methods are called only by the generated method tables (`Methods::<N>`),
/// from PostgreSQL's executor on the backend thread, with the pointers PostgreSQL passes
/// its custom scan callbacks.
pub trait CustomScanNode: Sized + 'static {
    /// The node's name (EXPLAIN shows `Custom Scan (NAME)`); plans find the node by it.
    const NAME: &'static CStr;
    /// What the planner hands the executor, kept in the plan's `custom_private`.
    type Private: PlanPrivate;

    /// The node's state for a plan, before `begin`.
    ///
    /// # Safety
    /// `plan` is the live CustomScan being instantiated, in the executor's memory context.
    unsafe fn create(private: Self::Private, plan: *mut pg_sys::CustomScan) -> Self;

    /// ExecInitNode's part (BeginCustomScan).
    ///
    /// # Safety
    /// `node` is this node's CustomScanState and `estate` its live EState; backend thread.
    unsafe fn begin(&mut self, node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32);

    /// Stores the next row in the node's scan slot (`ss_ScanTupleSlot`) and returns it,
    /// or returns it cleared at the end. The plan's quals and projection are applied by
    /// `ExecScan` after this.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState, begun and not ended; backend thread.
    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot;

    /// ExecEndNode's part: releases what `begin` acquired.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState, begun; backend thread.
    unsafe fn end(&mut self, node: *mut pg_sys::CustomScanState);

    /// Restarts the scan from the first row.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState, begun and not ended; backend thread.
    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState);

    /// Before the parallel workers' shared memory goes (ExecShutdownNode): collect from it
    /// what EXPLAIN shows afterwards.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState, begun; backend thread.
    unsafe fn shutdown(&mut self, _node: *mut pg_sys::CustomScanState) {}

    /// Whether a row that EvalPlanQual substitutes (a newer version of one the scan
    /// returned) would pass the scan's own checks: the quals the node evaluates itself,
    /// which are not in the plan's qual.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState, begun; `slot` holds the substituted row.
    unsafe fn recheck(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        true
    }

    /// For a node whose per-row path must not pay a guard (a sigsetjmp) per row: its
    /// access method for ExecScan, which `exec_fast` runs through an unguarded ExecScan.
    /// It may run only plain Rust frames (nothing to drop if an ERROR longjmps past them)
    /// and hands anything that calls into PostgreSQL to the guarded `next::<Self>`.
    /// None: ExecScan over `next`, guarded.
    const FAST_ROW: pg_sys::ExecScanAccessMtd = None;

    /// Extra EXPLAIN fields.
    ///
    /// # Safety
    /// `node` is this node's CustomScanState and `es` the live ExplainState being written.
    unsafe fn explain(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        _es: *mut pg_sys::ExplainState,
    ) {
    }
}

/// A node that runs in parallel workers, sharing state through dynamic shared memory.
///
/// The methods are PostgreSQL's DSM callbacks for the node (through `Methods::<N>`).
pub trait ParallelScanNode: CustomScanNode {
    /// Bytes of shared memory the node needs.
    ///
    /// # Safety
    /// `node` is this node's begun CustomScanState and `pcxt` the live ParallelContext.
    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size;
    /// Initializes the shared memory (leader, before the workers start).
    ///
    /// # Safety
    /// As `estimate_dsm`, and `coordinate` points to the (aligned) bytes it asked for.
    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    );
    /// Resets the shared memory for a rescan.
    ///
    /// # Safety
    /// As `initialize_dsm`, with `coordinate` already initialized by it.
    unsafe fn reinitialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    );
    /// Attaches a worker to the shared memory.
    ///
    /// # Safety
    /// `node` is this node's begun CustomScanState in a worker, `toc` the worker's table of
    /// contents, and `coordinate` the leader's initialized shared bytes for the node.
    unsafe fn initialize_worker(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        toc: *mut pg_sys::shm_toc,
        coordinate: *mut std::ffi::c_void,
    );
}

/// The executor state of a node: PostgreSQL's part first, then ours.
#[repr(C)]
struct State<N> {
    css: pg_sys::CustomScanState,
    node: *mut N,
}

/// The node of executor state `css` (a node `N`'s).
///
/// # Safety
/// `css` was made by `create_with::<N>` (its `State<N>` is live), and no other reference
/// to the node is used while the returned one is.
pub unsafe fn node<'a, N>(css: *mut pg_sys::CustomScanState) -> &'a mut N {
    // SAFETY: `css` starts a `State<N>` whose `node` was set in `create_with` and lives as
    // long as the executor's memory context (this fn's contract).
    unsafe { &mut *(*(css as *mut State<N>)).node }
}

/// The method tables of node `N`, as PostgreSQL wants them.
pub struct Methods<N>(PhantomData<N>);

impl<N: CustomScanNode> Methods<N> {
    /// The plan's methods (`CustomScan.methods`).
    pub const SCAN: pg_sys::CustomScanMethods = pg_sys::CustomScanMethods {
        CustomName: N::NAME.as_ptr(),
        CreateCustomScanState: Some(create_state::<N>),
    };

    /// The executor's methods of a node that does not run in parallel workers.
    pub const EXEC: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
        CustomName: N::NAME.as_ptr(),
        BeginCustomScan: Some(begin::<N>),
        ExecCustomScan: match N::FAST_ROW {
            Some(_) => Some(exec_fast::<N>),
            None => Some(exec::<N>),
        },
        EndCustomScan: Some(end::<N>),
        ReScanCustomScan: Some(rescan::<N>),
        MarkPosCustomScan: None,
        RestrPosCustomScan: None,
        EstimateDSMCustomScan: None,
        InitializeDSMCustomScan: None,
        ReInitializeDSMCustomScan: None,
        InitializeWorkerCustomScan: None,
        ShutdownCustomScan: Some(shutdown::<N>),
        ExplainCustomScan: Some(explain::<N>),
    };

    /// Registers the node by name, so that plans holding it can be copied to parallel
    /// workers; once per backend, from `_PG_init`.
    ///
    /// # Safety
    /// Call only from `_PG_init`, in the backend's one thread.
    pub unsafe fn register() {
        // SAFETY: `SCAN` is a constant promoted to a 'static, so the registry may keep the
        // pointer; `_PG_init` runs single-threaded (this fn's contract).
        unsafe { pg_sys::RegisterCustomScanMethods(&Self::SCAN) };
    }
}

impl<N: ParallelScanNode> Methods<N> {
    /// The plan's methods for a node that may run in parallel workers: its executor
    /// state gets `PARALLEL_EXEC` (the DSM callbacks run only if the plan is
    /// parallel-aware).
    pub const PARALLEL_SCAN: pg_sys::CustomScanMethods = pg_sys::CustomScanMethods {
        CustomName: N::NAME.as_ptr(),
        CreateCustomScanState: Some(create_parallel_state::<N>),
    };

    /// Registers the node by name (see `register`).
    ///
    /// # Safety
    /// Call only from `_PG_init`, in the backend's one thread.
    pub unsafe fn register_parallel() {
        // SAFETY: as in `register`: a 'static method table, registered single-threaded.
        unsafe { pg_sys::RegisterCustomScanMethods(&Self::PARALLEL_SCAN) };
    }

    /// The executor's methods of a parallel-aware node.
    pub const PARALLEL_EXEC: pg_sys::CustomExecMethods = pg_sys::CustomExecMethods {
        EstimateDSMCustomScan: Some(estimate_dsm::<N>),
        InitializeDSMCustomScan: Some(initialize_dsm::<N>),
        ReInitializeDSMCustomScan: Some(reinitialize_dsm::<N>),
        InitializeWorkerCustomScan: Some(initialize_worker::<N>),
        ..Self::EXEC
    };
}

#[pg_guard]
unsafe extern "C-unwind" fn create_state<N: CustomScanNode>(
    cscan: *mut pg_sys::CustomScan,
) -> *mut pg_sys::Node {
    // SAFETY: PostgreSQL's CreateCustomScanState callback: `cscan` is the live plan node.
    unsafe { create_with::<N>(cscan, &Methods::<N>::EXEC) }
}

#[pg_guard]
unsafe extern "C-unwind" fn create_parallel_state<N: ParallelScanNode>(
    cscan: *mut pg_sys::CustomScan,
) -> *mut pg_sys::Node {
    // SAFETY: PostgreSQL's CreateCustomScanState callback: `cscan` is the live plan node.
    unsafe { create_with::<N>(cscan, &Methods::<N>::PARALLEL_EXEC) }
}

unsafe fn create_with<N: CustomScanNode>(
    cscan: *mut pg_sys::CustomScan,
    methods: &'static pg_sys::CustomExecMethods,
) -> *mut pg_sys::Node {
    // SAFETY: called from CreateCustomScanState in the executor's memory context, with
    // `cscan` the live plan node whose custom_private `N::Private::to_list` made; `state`
    // is freshly palloc0'd, zeroed and large enough for a `State<N>`.
    unsafe {
        let state = pg_sys::palloc0(std::mem::size_of::<State<N>>()) as *mut State<N>;
        (*state).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
        (*state).css.methods = methods;
        let created = N::create(N::Private::from_list((*cscan).custom_private), cscan);
        // Dropped with the memory context, so an ERROR mid-scan frees it too.
        (*state).node = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(created);
        state as *mut pg_sys::Node
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn begin<N: CustomScanNode>(
    css: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    eflags: i32,
) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).begin(css, estate, eflags) }
}

/// ExecScan's access method over `CustomScanNode::next`, guarded; a node's `FAST_ROW`
/// calls it for every row it does not store itself.
#[pg_guard]
pub unsafe extern "C-unwind" fn next<N: CustomScanNode>(
    ss: *mut pg_sys::ScanState,
) -> *mut pg_sys::TupleTableSlot {
    let css = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan (from `exec::<N>`, or `N::FAST_ROW` under `exec_fast::<N>`)
    // passes the `ss` of the CustomScanState that `create_with::<N>` made, its first
    // field, so the cast gives that state back.
    unsafe { node::<N>(css).next(css) }
}

#[pg_guard]
unsafe extern "C-unwind" fn recheck<N: CustomScanNode>(
    ss: *mut pg_sys::ScanState,
    slot: *mut pg_sys::TupleTableSlot,
) -> bool {
    let css = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan (from `exec::<N>` or `exec_fast::<N>`) passes the `ss` of the
    // CustomScanState that `create_with::<N>` made, its first field, so the cast gives
    // that state back.
    unsafe { node::<N>(css).recheck(css, slot) }
}

// ExecScan without pgrx's per-call guard, for nodes with a `FAST_ROW`: the frames
// between it and PostgreSQL are `exec_fast`'s and the row function's, which hold
// nothing to drop, so an ERROR (in the plan's quals or projection) may longjmp past them.
extern "C-unwind" {
    #[link_name = "ExecScan"]
    fn exec_scan_unguarded(
        node: *mut pg_sys::ScanState,
        access: pg_sys::ExecScanAccessMtd,
        recheck: pg_sys::ExecScanRecheckMtd,
    ) -> *mut pg_sys::TupleTableSlot;
}

/// ExecCustomScan of a node with a `FAST_ROW`: ExecScan over it, unguarded. Plain
/// frames only (see above).
unsafe extern "C-unwind" fn exec_fast<N: CustomScanNode>(
    css: *mut pg_sys::CustomScanState,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: ExecCustomScan callback: `css` is the live CustomScanState of node `N`,
    // `N::FAST_ROW` its access method and `recheck::<N>` its recheck method; this frame
    // holds nothing to drop if ExecScan longjmps.
    unsafe { exec_scan_unguarded(&raw mut (*css).ss, N::FAST_ROW, Some(recheck::<N>)) }
}

#[pg_guard]
unsafe extern "C-unwind" fn exec<N: CustomScanNode>(
    css: *mut pg_sys::CustomScanState,
) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: ExecCustomScan callback: `css` is the live CustomScanState of node `N`, and
    // `next`/`recheck` are its access and recheck methods for ExecScan.
    unsafe { pg_sys::ExecScan(&mut (*css).ss, Some(next::<N>), Some(recheck::<N>)) }
}

#[pg_guard]
unsafe extern "C-unwind" fn end<N: CustomScanNode>(css: *mut pg_sys::CustomScanState) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).end(css) }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan<N: CustomScanNode>(css: *mut pg_sys::CustomScanState) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).rescan(css) }
}

#[pg_guard]
unsafe extern "C-unwind" fn shutdown<N: CustomScanNode>(css: *mut pg_sys::CustomScanState) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).shutdown(css) }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain<N: CustomScanNode>(
    css: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).explain(css, ancestors, es) }
}

#[pg_guard]
unsafe extern "C-unwind" fn estimate_dsm<N: ParallelScanNode>(
    css: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
) -> pg_sys::Size {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).estimate_dsm(css, pcxt) }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_dsm<N: ParallelScanNode>(
    css: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).initialize_dsm(css, pcxt, coordinate) }
}

#[pg_guard]
unsafe extern "C-unwind" fn reinitialize_dsm<N: ParallelScanNode>(
    css: *mut pg_sys::CustomScanState,
    pcxt: *mut pg_sys::ParallelContext,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread; the other pointers are its own.
    unsafe { node::<N>(css).reinitialize_dsm(css, pcxt, coordinate) }
}

#[pg_guard]
unsafe extern "C-unwind" fn initialize_worker<N: ParallelScanNode>(
    css: *mut pg_sys::CustomScanState,
    toc: *mut pg_sys::shm_toc,
    coordinate: *mut std::ffi::c_void,
) {
    // SAFETY: PostgreSQL calls this node's callback with the CustomScanState that
    // `create_with::<N>` made, on the backend thread of a worker (only workers get this
    // callback), its libraries loaded; the other pointers are its own.
    unsafe {
        worker_exit::arm();
        node::<N>(css).initialize_worker(css, toc, coordinate)
    }
}
