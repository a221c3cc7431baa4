//! The `PushedSeqScan` custom scan node: a sequential scan of a heap table that hands
//! some WHERE clauses to heapam as scan keys (`planner::pushed_seq_scan_path` decides which). Heap
//! tests them on each visible tuple of a page (page-at-a-time visibility) before the
//! tuple reaches the slot; the executor evaluates only the plan's other quals, so no
//! clause is evaluated twice. The keys' values (constants, parameters) are evaluated
//! when the scan starts and again at each rescan.
//!
//! With EXPLAIN ANALYZE each key's function is called through a counting wrapper, which
//! gives the rows the pushed filter removed; other runs call the function directly.

use super::customscan::{
    explain_fields_node, explain_fields_of, explain_planned, CustomScanNode, ParallelScanNode, PlanPrivate,
};
use crate::pg_list;
use pgrx::pg_sys;
use pgrx::prelude::*;
use std::ffi::CStr;
use std::sync::atomic::{AtomicU64, Ordering};

pub const NAME: &CStr = c"PgColumnarPushedSeqScan";

// The per-row path calls these directly, without pgrx's per-call guard (a sigsetjmp
// each): its Rust frames hold nothing to drop, so an ERROR may longjmp past them, and
// a scan whose every row passes then costs what core's sequential scan costs.
extern "C-unwind" {
    #[link_name = "heap_getnextslot"]
    fn heap_getnextslot_unguarded(
        scan: pg_sys::TableScanDesc,
        direction: pg_sys::ScanDirection::Type,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool;
}

/// The next row: the first call (and the first after a rescan) starts the scan through
/// a guarded call; the others read heapam directly.
unsafe extern "C-unwind" fn next_row(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let css = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan (from `customscan::exec_fast`) passes the `ss` of this node's CustomScanState,
    // its first field, so `css` is the state `customscan` made for a PushedSeqScan.
    let node = unsafe { super::customscan::node::<PushedSeqScan>(css) };
    if node.stale || !node.keys_in_heap {
        // Starting, or testing the pushed clauses here: the guarded path.
        // SAFETY: `ss` is this node's begun ScanState, as ExecScan passed it.
        return unsafe { super::customscan::next::<PushedSeqScan>(ss) };
    }
    // SAFETY: the node is begun and not stale, so `scan` is the heap scan `start` began
    // over the open relation, and the scan slot is a buffer heap tuple slot (`begin`);
    // nothing in these frames needs dropping if heapam raises an ERROR.
    unsafe {
        let slot = (*ss).ss_ScanTupleSlot;
        // heapam clears the slot at the end.
        if !heap_getnextslot_unguarded(node.scan, pg_sys::ScanDirection::ForwardScanDirection, slot) {
            node.flush_rejected();
        }
        slot
    }
}

/// One scan key: the column, the function testing it (column on the left), the
/// collation.
pub struct KeyPlan {
    pub attno: i16,
    pub func: pg_sys::Oid,
    pub collation: pg_sys::Oid,
}

/// What the planner decides, kept in the plan.
pub struct PushedPlan {
    pub keys: Vec<KeyPlan>,
    /// (label, text) pairs for EXPLAIN; a label starting with '+' only with VERBOSE.
    pub explain: Vec<(String, String)>,
}

impl PlanPrivate for PushedPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: builds the plan's private lists in the planner's current memory context on the
        // backend thread (the trait's contract); every element is a list or Const made here.
        unsafe {
            let ints = self
                .keys
                .iter()
                .flat_map(|k| [k.attno as i32, k.func.to_u32() as i32, k.collation.to_u32() as i32]);
            pg_list::from_ptrs([
                pg_list::from_ints(ints) as *mut pg_sys::Node,
                explain_fields_node(&self.explain),
            ])
        }
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        // SAFETY: `list` is the custom_private `to_list` made (or its copy, the trait's contract):
        // an integer list and a bytea Const.
        unsafe {
            let parts: Vec<*mut pg_sys::Node> = pg_list::ptrs(list).collect();
            let [ints, explain] = parts[..] else { pgrx::error!("malformed PushedSeqScan plan") };
            let ints: Vec<i32> = pg_list::ints(ints as *mut pg_sys::List).collect();
            let keys = ints
                .chunks_exact(3)
                .map(|c| KeyPlan {
                    attno: c[0] as i16,
                    func: pg_sys::Oid::from(c[1] as u32),
                    collation: pg_sys::Oid::from(c[2] as u32),
                })
                .collect();
            PushedPlan { keys, explain: explain_fields_of(explain) }
        }
    }
}

/// A key's function and what it rejected, for the counting wrapper (its `fn_extra`).
#[repr(C)]
struct Counted {
    real: pg_sys::FmgrInfo,
    rejected: u64,
}

pub struct PushedSeqScan {
    plan: PushedPlan,
    /// The keys' values, then the pushed clauses (custom_exprs).
    exprs: Vec<*mut pg_sys::Node>,
    value_states: Vec<*mut pg_sys::ExprState>,
    recheck_state: *mut pg_sys::ExprState,
    keys: Vec<pg_sys::ScanKeyData>,
    counted: Vec<*mut Counted>,
    scan: pg_sys::TableScanDesc,
    /// Whether heapam tests the keys: not when its scan cannot run page at a time (a
    /// snapshot that is not MVCC), where it would call them under a buffer lock; then
    /// the node tests the pushed clauses itself.
    keys_in_heap: bool,
    /// Whether the keys' values must be evaluated (again) before the next row.
    stale: bool,
    /// Rows the node's own test of the pushed clauses rejected (not `keys_in_heap`).
    rejected_here: u64,
    /// A parallel scan's shared state (heapam's block allocator), in the DSM, and the
    /// rows every process's keys rejected (EXPLAIN ANALYZE), before it.
    pscan: pg_sys::ParallelTableScanDesc,
    shared_rejected: *const AtomicU64,
    /// This process's count already added to it, and the total read at shutdown.
    flushed: u64,
    parallel_rejected: Option<u64>,
    memory: pg_sys::MemoryContext,
}

impl CustomScanNode for PushedSeqScan {
    const NAME: &'static CStr = NAME;
    type Private = PushedPlan;
    const FAST_ROW: pg_sys::ExecScanAccessMtd = Some(next_row);

    unsafe fn create(plan: PushedPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        // SAFETY: `cscan` is the live plan node (the trait's contract); custom_exprs is a pointer
        // list of expression Nodes.
        unsafe {
            PushedSeqScan {
                plan,
                exprs: pg_list::ptrs((*cscan).custom_exprs).collect(),
                value_states: Vec::new(),
                recheck_state: std::ptr::null_mut(),
                keys: Vec::new(),
                counted: Vec::new(),
                scan: std::ptr::null_mut(),
                keys_in_heap: true,
                stale: true,
                rejected_here: 0,
                pscan: std::ptr::null_mut(),
                shared_rejected: std::ptr::null(),
                flushed: 0,
                parallel_rejected: None,
                memory: std::ptr::null_mut(),
            }
        }
    }

    unsafe fn begin(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        _eflags: i32,
    ) {
        // SAFETY: BeginCustomScan: `node` is this node's CustomScanState, whose scan relation
        // ExecInitNode opened and locked, and `estate` its live EState (the trait's contract);
        // the plan is a Scan (CustomScan begins with one), the expressions are the plan's,
        // initialized for the node, and the allocations go to the executor's memory context,
        // which `memory` records.
        unsafe {
            let parent = &raw mut (*node).ss.ps;
            // heapam stores tuples in buffer heap tuple slots; PostgreSQL 15 gives a custom
            // scan a virtual one. The scan slot is made anew, and the qual and projection,
            // compiled for the slot's kind, again.
            let rel = (*node).ss.ss_currentRelation;
            pg_sys::ExecInitScanTupleSlot(
                estate,
                &raw mut (*node).ss,
                (*rel).rd_att,
                &raw const pg_sys::TTSOpsBufferHeapTuple,
            );
            let plan = (*parent).plan;
            (*parent).qual = pg_sys::ExecInitQual((*plan).qual, parent);
            pg_sys::ExecAssignScanProjectionInfoWithVarno(
                &raw mut (*node).ss,
                (*(plan as *mut pg_sys::Scan)).scanrelid as i32,
            );
            let n = self.plan.keys.len();
            self.value_states = self.exprs[..n]
                .iter()
                .map(|&e| pg_sys::ExecInitExpr(e as *mut pg_sys::Expr, parent))
                .collect();
            let pushed = pg_list::from_ptrs(self.exprs[n..].iter().copied());
            self.recheck_state = pg_sys::ExecInitQual(pushed, parent);
            self.memory = pg_sys::CurrentMemoryContext;
            self.keys = (0..n).map(|_| pg_sys::ScanKeyData::default()).collect();
            // EXPLAIN ANALYZE counts what each key rejects (the node's instrumentation is
            // set up after this; the executor's flags say whether it will be).
            if (*estate).es_instrument != 0 {
                self.counted =
                    (0..n).map(|_| pg_sys::palloc0(std::mem::size_of::<Counted>()) as *mut Counted).collect();
            }
        }
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: `node` is this node's begun CustomScanState (the trait's contract), so its
        // scan slot is live.
        let slot = unsafe { (*node).ss.ss_ScanTupleSlot };
        if self.stale {
            // SAFETY: `node` is this node's begun CustomScanState, as `start` requires.
            unsafe { self.start(node) };
        }
        loop {
            // SAFETY: `start` began `scan` over the open relation; `slot` is the node's
            // buffer heap tuple slot (`begin`).
            if !unsafe {
                pg_sys::heap_getnextslot(self.scan, pg_sys::ScanDirection::ForwardScanDirection, slot)
            } {
                // SAFETY: the node is begun, so `counted` and `shared_rejected` are its own.
                unsafe { self.flush_rejected() };
                // SAFETY: the node's live scan slot.
                return unsafe { pg_sys::ExecClearTuple(slot) };
            }
            // SAFETY: `slot` holds the row just read, and `node` is begun.
            if self.keys_in_heap || unsafe { self.recheck(node, slot) } {
                return slot;
            }
            self.rejected_here += 1;
        }
    }

    unsafe fn recheck(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        // SAFETY: `node` is this node's begun CustomScanState and `slot` a row of the relation
        // (the trait's contract); `recheck_state` was initialized in `begin` for the node,
        // evaluated in its live expression context.
        unsafe {
            let econtext = (*node).ss.ps.ps_ExprContext;
            (*econtext).ecxt_scantuple = slot;
            pg_sys::ExecQual(self.recheck_state, econtext)
        }
    }

    unsafe fn shutdown(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: ShutdownCustomScan, before the DSM goes: `shared_rejected`, when set, points to
        // the counter `initialize_dsm` wrote in it.
        unsafe {
            if !self.shared_rejected.is_null() {
                self.flush_rejected();
                self.parallel_rejected = Some((*self.shared_rejected).load(Ordering::Relaxed));
            }
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: `scan`, when set, is the heap scan `start` began, ended once (then cleared).
        unsafe {
            if !self.scan.is_null() {
                pg_sys::heap_endscan(self.scan);
                self.scan = std::ptr::null_mut();
            }
        }
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        // Parameters may have changed: the keys' values are evaluated again.
        self.stale = true;
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: `node` is this node's CustomScanState and `es` the live ExplainState (the trait's
        // contract); with ANALYZE the node's instrumentation is set, and `counted` entries are
        // the node's palloc'd counters.
        unsafe {
            explain_planned(&self.plan.explain, es);
            if (*es).analyze && !self.counted.is_empty() {
                // Every process's (their loops are in the node's instrumentation too).
                let rejected = self.parallel_rejected.unwrap_or_else(|| self.rejected());
                let loops = (*(*node).ss.ps.instrument).nloops.max(1.0);
                pg_sys::ExplainPropertyFloat(
                    c"Rows Removed by Pushed Filter".as_ptr(),
                    std::ptr::null(),
                    (rejected as f64 / loops).round(),
                    0,
                    es,
                );
            }
        }
    }
}

impl PushedSeqScan {
    /// Rows this process's keys (or its own test of the clauses) rejected so far.
    unsafe fn rejected(&self) -> u64 {
        // SAFETY: `counted` holds the Counted that `begin` palloc'd in the executor's
        // memory context, alive as long as the node (the caller's begun node).
        self.counted.iter().map(|&c| unsafe { (*c).rejected }).sum::<u64>() + self.rejected_here
    }

    /// Adds to a parallel scan's shared count what this process rejected since the last
    /// time (at the end of its scan, and at shutdown).
    unsafe fn flush_rejected(&mut self) {
        if self.shared_rejected.is_null() || self.counted.is_empty() {
            return;
        }
        // SAFETY: the node is begun (the caller's), so `counted` holds the counters
        // `begin` palloc'd, as `rejected` requires.
        let total = unsafe { self.rejected() };
        // SAFETY: `shared_rejected` is non-null (checked above), so it points to the
        // counter `initialize_dsm` wrote in the DSM, alive until shutdown.
        unsafe { (*self.shared_rejected).fetch_add(total - self.flushed, Ordering::Relaxed) };
        self.flushed = total;
    }

    /// Evaluates the keys' values and starts (or restarts) the heap scan with them.
    unsafe fn start(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: `node` is this node's begun CustomScanState (the caller's, `next`): its
        // relation is open and locked, its EState's snapshot registered and its expression context
        // live; the key values are evaluated with `value_states` (initialized in `begin`) and the
        // scan keys filled in `memory`, the executor's context, which lives as long as the scan;
        // `pscan`, when set, is the DSM's parallel scan state `attach` found, initialized by the
        // leader, whose serialized snapshot is at phs_snapshot_off.
        unsafe {
            let econtext = (*node).ss.ps.ps_ExprContext;
            let rel = (*node).ss.ss_currentRelation;
            let snapshot = (*(*node).ss.ps.state).es_snapshot;
            let old = pg_sys::MemoryContextSwitchTo(self.memory);
            for (i, k) in self.plan.keys.iter().enumerate() {
                let mut isnull = false;
                let value = pg_sys::ExecEvalExpr(self.value_states[i], econtext, &mut isnull);
                // A NULL value matches no row (the operators are strict): heapam rejects a
                // key flagged SK_ISNULL without calling it.
                let flags = if isnull { pg_sys::SK_ISNULL as i32 } else { 0 };
                pg_sys::ScanKeyEntryInitialize(
                    &mut self.keys[i],
                    flags,
                    k.attno,
                    0,
                    pg_sys::InvalidOid,
                    k.collation,
                    k.func,
                    value,
                );
                if let Some(&c) = self.counted.get(i) {
                    (*c).real = self.keys[i].sk_func;
                    self.keys[i].sk_func.fn_addr = Some(counting_call);
                    self.keys[i].sk_func.fn_extra = c as *mut std::ffi::c_void;
                }
            }
            pg_sys::MemoryContextSwitchTo(old);
            if self.scan.is_null() {
                let mut flags = pg_sys::ScanOptions::SO_TYPE_SEQSCAN
                    | pg_sys::ScanOptions::SO_ALLOW_STRAT
                    | pg_sys::ScanOptions::SO_ALLOW_SYNC
                    | pg_sys::ScanOptions::SO_ALLOW_PAGEMODE;
                let mut snapshot = snapshot;
                if !self.pscan.is_null() {
                    // As table_beginscan_parallel does (it takes no keys): the leader's
                    // snapshot, restored in each process.
                    if (*self.pscan).phs_snapshot_any {
                        snapshot = &raw mut pg_sys::SnapshotAnyData;
                    } else {
                        let at = (self.pscan as *mut u8).add((*self.pscan).phs_snapshot_off);
                        snapshot =
                            pg_sys::RegisterSnapshot(pg_sys::RestoreSnapshot(at as *mut std::ffi::c_char));
                        flags |= pg_sys::ScanOptions::SO_TEMP_SNAPSHOT;
                    }
                }
                self.scan = pg_sys::heap_beginscan(
                    rel,
                    snapshot,
                    self.keys.len() as i32,
                    self.keys.as_mut_ptr(),
                    self.pscan,
                    flags,
                );
                // Without page-at-a-time visibility heapam would test the keys with the
                // page locked: it tests none (heapam loops over its rs_nkeys keys), the
                // node tests the clauses instead.
                if (*self.scan).rs_flags & pg_sys::ScanOptions::SO_ALLOW_PAGEMODE == 0 {
                    (*self.scan).rs_nkeys = 0;
                    self.keys_in_heap = false;
                }
            } else if self.keys_in_heap {
                pg_sys::heap_rescan(self.scan, self.keys.as_mut_ptr(), false, false, false, false);
            } else {
                pg_sys::heap_rescan(self.scan, std::ptr::null_mut(), false, false, false, false);
            }
            pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
            self.stale = false;
        }
    }
}

/// In parallel, heapam's own shared state hands out the blocks.
impl ParallelScanNode for PushedSeqScan {
    unsafe fn estimate_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
    ) -> pg_sys::Size {
        // SAFETY: `node` is this node's begun CustomScanState (the trait's contract): its
        // relation is open and its EState's snapshot registered.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            SHARED_COUNT + pg_sys::table_parallelscan_estimate(rel, (*(*node).ss.ps.state).es_snapshot)
        }
    }

    unsafe fn initialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: as `estimate_dsm`, and `coordinate` is the MAXALIGNed DSM chunk of the size it
        // asked for: the counter first, heapam's parallel scan state after SHARED_COUNT bytes.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            (coordinate as *mut AtomicU64).write(AtomicU64::new(0));
            self.attach(coordinate);
            pg_sys::table_parallelscan_initialize(rel, self.pscan, (*(*node).ss.ps.state).es_snapshot);
        }
    }

    unsafe fn reinitialize_dsm(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _pcxt: *mut pg_sys::ParallelContext,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `node`'s relation is open (a heap table: heapam's routine has the callback) and
        // `coordinate` holds the state `initialize_dsm` made; an ERROR from the callback is
        // caught at the FFI boundary.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            let reinitialize =
                (*(*rel).rd_tableam).parallelscan_reinitialize.expect("heapam's parallel scans");
            let pscan = (coordinate as *mut u8).add(SHARED_COUNT) as pg_sys::ParallelTableScanDesc;
            pg_sys::ffi::pg_guard_ffi_boundary(|| reinitialize(rel, pscan));
        }
    }

    unsafe fn initialize_worker(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _toc: *mut pg_sys::shm_toc,
        coordinate: *mut std::ffi::c_void,
    ) {
        // SAFETY: `coordinate` is the leader's initialized DSM chunk for this node (the trait's
        // contract), as `attach` requires.
        unsafe {
            self.attach(coordinate);
        }
    }
}

/// Bytes before heapam's parallel scan state in the DSM: the shared count of rejected
/// rows (a MAXALIGN multiple, as the state after it needs).
const SHARED_COUNT: usize = 8;

impl PushedSeqScan {
    unsafe fn attach(&mut self, coordinate: *mut std::ffi::c_void) {
        // SAFETY: `coordinate` is the node's DSM chunk, of SHARED_COUNT + the parallel scan
        // state's size (the callers, the DSM callbacks), so the offset stays inside it.
        unsafe {
            self.shared_rejected = coordinate as *const AtomicU64;
            self.pscan = (coordinate as *mut u8).add(SHARED_COUNT) as pg_sys::ParallelTableScanDesc;
        }
    }
}

/// A key's function called through its `Counted` (EXPLAIN ANALYZE): the real one, and a
/// count of the rows it rejects. heapam tests a row's keys in turn and stops at the first
/// false one, so the counts add up to the rows the pushed filter removed (but for rows
/// whose column is NULL, which heapam rejects without a call).
#[pg_guard]
unsafe extern "C-unwind" fn counting_call(fcinfo: pg_sys::FunctionCallInfo) -> pg_sys::Datum {
    // SAFETY: heapam calls this through a key whose FmgrInfo `start` set up: its fn_extra is
    // the key's Counted (palloc'd in `begin`, alive with the node) holding the real function's
    // FmgrInfo; `fcinfo` is the live call info, its flinfo restored after the call.
    unsafe {
        let flinfo = (*fcinfo).flinfo;
        let counted = (*flinfo).fn_extra as *mut Counted;
        (*fcinfo).flinfo = &raw mut (*counted).real;
        let real = (*counted).real.fn_addr.expect("a key's function");
        let result = pg_sys::ffi::pg_guard_ffi_boundary(|| real(fcinfo));
        (*fcinfo).flinfo = flinfo;
        if !(*fcinfo).isnull && result.value() == 0 {
            (*counted).rejected += 1;
        }
        result
    }
}
