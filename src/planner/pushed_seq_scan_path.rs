//! `quals_push_down` on heap tables: for a table whose option is on, a scan path that
//! passes the WHERE clauses heapam can test itself to it as scan keys (`col op value`
//! with a built-in, leakproof, strict btree operator of the column's type family, the
//! value a constant or a parameter), applied to each visible tuple of a page before it
//! reaches a slot, and not evaluated again by the executor. The other clauses stay
//! executor quals. Priced against core's sequential scan: the pushed clauses are
//! cheaper per row than an executor qual, and rows they reject never reach a slot. A
//! parallel form shares heapam's parallel scan state out as core's does.

use super::cost;
use super::custompath::{self, CustomPathKind};
use super::quals;
use super::relation::scanned_plainly;
use crate::exec::customscan::deparse;
use crate::exec::customscan::{Methods, PlanPrivate};
use crate::exec::pushed_seq_scan::{KeyPlan, PushedPlan, PushedSeqScan};
use crate::pg_list;
use crate::storage::{relation::am, relation::options};
use pgrx::pg_sys;
use std::rc::Rc;

/// The PushedSeqScan path.
pub struct PushedSeqScanPath;

/// What `add_paths` decided, for both the serial and the parallel path: the plan, the
/// keys' values, the pushed clauses (the executor tests them itself only to recheck a
/// row EvalPlanQual substitutes).
pub struct Pushed {
    plan: PushedPlan,
    values: Vec<*mut pg_sys::Node>,
    clauses: Vec<*mut pg_sys::RestrictInfo>,
}

impl CustomPathKind for PushedSeqScanPath {
    type Node = PushedSeqScan;
    type Analysis = Rc<Pushed>;
    const SCAN_METHODS: &'static pg_sys::CustomScanMethods = &Methods::<PushedSeqScan>::PARALLEL_SCAN;

    unsafe fn plan(
        _root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        _path: *mut pg_sys::CustomPath,
        pushed: &Rc<Pushed>,
        tlist: *mut pg_sys::List,
        clauses: *mut pg_sys::List,
    ) -> *mut pg_sys::CustomScan {
        // SAFETY: called through `plan_path` from createplan (the trait's contract): `rel` and
        // the lists are the planner's live nodes, `clauses` a list of RestrictInfos; the pushed
        // clauses were taken from this `rel`'s baserestrictinfo by `add_paths`, in the same
        // planner memory context, so they are still live.
        unsafe {
            // The executor's qual: the clauses not pushed.
            let kept = pg_list::from_ptrs(
                pg_list::ptrs::<pg_sys::RestrictInfo>(clauses)
                    .filter(|ri| !pushed.clauses.contains(ri) && !(**ri).pseudoconstant)
                    .map(|ri| (*ri).clause),
            );
            let cscan = custompath::new_scan();
            (*cscan).scan.plan.targetlist = tlist;
            (*cscan).scan.plan.qual = kept;
            (*cscan).scan.scanrelid = (*rel).relid;
            // The keys' values, then the pushed clauses (EvalPlanQual rechecks).
            let exprs = pushed
                .values
                .iter()
                .copied()
                .chain(pushed.clauses.iter().map(|&ri| (*ri).clause as *mut pg_sys::Node));
            (*cscan).custom_exprs = pg_list::from_ptrs(exprs);
            (*cscan).custom_private = pushed.plan.to_list();
            (*cscan).flags = 0;
            cscan
        }
    }
}

/// What share of an executor qual's per-row cost a scan key costs (one function call
/// on a column fetched by `heap_getattr`, no expression machinery).
const KEY_COST_SHARE: f64 = 0.5;

/// A clause heapam can test as a scan key: the column, the function (its left argument
/// the column), the collation, and the value's expression.
struct Key {
    clause: *mut pg_sys::RestrictInfo,
    attno: i16,
    func: pg_sys::Oid,
    collation: pg_sys::Oid,
    value: *mut pg_sys::Node,
}

/// Offers the pushed scan for heap relation `rel` if its `quals_push_down` option is on
/// and some of its WHERE clauses can be scan keys.
///
/// # Safety
/// From `set_rel_pathlist_hook`, on the backend thread: `root`, `rel` and `rte` are the
/// planner's live nodes for one base relation, whose table the query already locked.
pub unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: `rel` and `rte` are live (this fn's contract); the relation of a plain
    // RTE_RELATION entry is locked by the query, so table_open with NoLock is valid, and it is
    // closed before returning (an ERROR in between releases it at abort).
    unsafe {
        if (*rel).baserestrictinfo.is_null() || !scanned_plainly(rte) {
            return;
        }
        let relation = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
        if am::is_heap_table(relation) {
            add_pushed_paths(root, rel, relation);
        }
        pg_sys::table_close(relation, pg_sys::NoLock as i32);
    }
}

unsafe fn add_pushed_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
) {
    // SAFETY: `rel` is the planner's live base relation and `relation` its open, locked
    // heap relation (from `add_paths`).
    let Some((keys, kept)) = (unsafe { split_clauses(rel, relation) }) else { return };
    if keys.is_empty() {
        return;
    }
    let pushed: Vec<*mut pg_sys::RestrictInfo> = keys.iter().map(|k| k.clause).collect();
    // SAFETY: `root` and `rel` are the planner's live nodes and the clauses `rel`'s
    // RestrictInfos (from `split_clauses`).
    let price = unsafe { ScanPrice::of(root, rel, &pushed, &kept) };
    // SAFETY: `rel` is the planner's live base relation, `relation` its open, locked
    // relation, and the pushed clauses live RestrictInfos of `rel`.
    let explain = unsafe { explain_fields(rel, relation, &pushed, price.selectivity) };
    let plan = PushedPlan {
        keys: keys.iter().map(|k| KeyPlan { attno: k.attno, func: k.func, collation: k.collation }).collect(),
        explain,
    };
    let pushed = Rc::new(Pushed { plan, values: keys.iter().map(|k| k.value).collect(), clauses: pushed });
    // SAFETY: `rel` is the planner's live base relation; new_path allocates the paths in
    // the planner's memory context, which add_path / add_partial_path take over; the
    // parallel GUCs are read on the backend thread.
    unsafe {
        let serial = new_path(rel, pushed.clone(), price.rows, price.startup, price.total(), 0);
        pg_sys::add_path(rel, serial);
        // In parallel, each process scans the blocks heapam's shared state hands it: the
        // CPU is shared out, the pages are read once (as core prices a parallel seq scan).
        let workers =
            pg_sys::compute_parallel_worker(rel, price.pages, -1.0, pg_sys::max_parallel_workers_per_gather);
        if (*rel).consider_parallel && workers > 0 {
            let divisor = cost::parallel_divisor(workers, pg_sys::parallel_leader_participation);
            let (rows, total) = price.partial(divisor);
            pg_sys::add_partial_path(rel, new_path(rel, pushed, rows, price.startup, total, workers));
        }
    }
}

/// `rel`'s WHERE clauses split into the scan keys heapam tests and the clauses the
/// executor keeps; None when the table's `quals_push_down` option is not on.
///
/// # Safety
/// Backend thread, in a transaction: `rel` is the planner's live base relation and
/// `relation` its open, locked heap relation.
unsafe fn split_clauses(
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
) -> Option<(Vec<Key>, Vec<*mut pg_sys::RestrictInfo>)> {
    // SAFETY: `rel` is the planner's live base relation and `relation` its open, locked
    // heap relation (this fn's contract): rd_id is readable, the options lookup runs inside
    // a transaction, and baserestrictinfo is a list of live RestrictInfos of `rel`.
    unsafe {
        // System catalogs take no options.
        if (*relation).rd_id.to_u32() < pg_sys::FirstNormalObjectId
            || options::quals_push_down((*relation).rd_id) != Some(true)
        {
            return None;
        }
        let keys: Vec<Key> = pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo)
            .filter_map(|ri| key_of(ri, rel))
            .collect();
        let kept: Vec<*mut pg_sys::RestrictInfo> =
            pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo)
                .filter(|ri| !keys.iter().any(|k| k.clause == *ri))
                .collect();
        Some((keys, kept))
    }
}

/// The price of a pushed scan, priced like core's sequential scan: every tuple reaches
/// a slot and every qual.
struct ScanPrice {
    /// The share of the rows the pushed clauses keep.
    selectivity: f64,
    /// The relation's pages, and the rows the scan returns.
    pages: f64,
    rows: f64,
    /// What the target list costs per row.
    target_per_tuple: f64,
    startup: f64,
    /// Reading the pages, and the CPU of testing the rows (shared out in parallel).
    disk: f64,
    cpu: f64,
}

impl ScanPrice {
    /// Prices the scan of `rel` that tests `pushed` as keys and leaves `kept` to the executor.
    ///
    /// # Safety
    /// Backend thread, while planning: `root` and `rel` are the planner's live nodes and
    /// the clauses `rel`'s RestrictInfos.
    unsafe fn of(
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        pushed: &[*mut pg_sys::RestrictInfo],
        kept: &[*mut pg_sys::RestrictInfo],
    ) -> ScanPrice {
        // SAFETY: `root` and `rel` are the planner's live nodes and the clauses `rel`'s
        // RestrictInfos (this fn's contract); the lists are palloc'd in the planner's memory
        // context; reltarget is valid; the cost GUCs are read on the backend thread.
        let (selectivity, pushed_cost, kept_cost, tuples, pages, rows, target, seq_page_cost, cpu_tuple_cost) = unsafe {
            let selectivity = quals::selectivity(root, rel, pushed);
            let mut pushed_cost = pg_sys::QualCost::default();
            pg_sys::cost_qual_eval(&mut pushed_cost, pg_list::from_ptrs(pushed.iter().copied()), root);
            let mut kept_cost = pg_sys::QualCost::default();
            pg_sys::cost_qual_eval(&mut kept_cost, pg_list::from_ptrs(kept.iter().copied()), root);
            let r = &*rel;
            let target = (*r.reltarget).cost;
            (
                selectivity,
                pushed_cost,
                kept_cost,
                r.tuples,
                r.pages as f64,
                r.rows,
                target,
                pg_sys::seq_page_cost,
                pg_sys::cpu_tuple_cost,
            )
        };
        // Core's sequential scan: every tuple reaches a slot and every qual.
        let disk = seq_page_cost * pages;
        let cpu = tuples * pushed_cost.per_tuple * KEY_COST_SHARE
            + tuples * selectivity * (cpu_tuple_cost + kept_cost.per_tuple);
        let startup = kept_cost.startup + pushed_cost.startup + target.startup;
        ScanPrice { selectivity, pages, rows, target_per_tuple: target.per_tuple, startup, disk, cpu }
    }

    /// The serial scan's total cost.
    fn total(&self) -> f64 {
        self.startup + self.disk + self.cpu + self.rows * self.target_per_tuple
    }

    /// The rows and total cost of a participant's share of a parallel scan.
    fn partial(&self, divisor: f64) -> (f64, f64) {
        let rows = (self.rows / divisor).max(1.0);
        let total = self.startup + self.disk + self.cpu / divisor + rows * self.target_per_tuple;
        (rows, total)
    }
}

/// The EXPLAIN fields of the pushed scan: the pushed clauses deparsed, and (VERBOSE)
/// their selectivity.
///
/// # Safety
/// Backend thread, while planning: `rel` is the planner's live base relation, `relation`
/// its open, locked relation and `pushed` live RestrictInfos of `rel`.
unsafe fn explain_fields(
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    pushed: &[*mut pg_sys::RestrictInfo],
    selectivity: f64,
) -> Vec<(String, String)> {
    // SAFETY: `relation` is the open, locked relation of range table entry `relid`, and
    // the clauses deparsed are live RestrictInfos of `rel` (this fn's contract); the list
    // and its AND are palloc'd in the planner's memory context.
    let filter = unsafe {
        let relid = (*rel).relid;
        let list = pg_list::from_ptrs(pushed.iter().map(|&ri| (*ri).clause));
        deparse::deparse(relid, relation, pg_sys::make_ands_explicit(list) as *mut pg_sys::Node)
    };
    vec![
        ("Pushed Filter".to_string(), filter),
        ("+Pushed Filter Selectivity".to_string(), format!("{selectivity:.4}")),
    ]
}

unsafe fn new_path(
    rel: *mut pg_sys::RelOptInfo,
    pushed: Rc<Pushed>,
    rows: f64,
    startup: f64,
    total: f64,
    workers: i32,
) -> *mut pg_sys::Path {
    // SAFETY: `rel` is the planner's live base relation (from `add_pushed_paths`), and
    // `custompath::new` returns a fresh CustomPath we may fill in.
    unsafe {
        let path = custompath::new::<PushedSeqScanPath>(rel, (*rel).reltarget, rows, startup, total, pushed);
        (*path).path.parallel_safe = (*rel).consider_parallel;
        (*path).path.parallel_aware = workers > 0;
        (*path).path.parallel_workers = workers;
        path as *mut pg_sys::Path
    }
}

/// The scan key clause `ri` makes, if heapam can test it exactly as the executor would.
unsafe fn key_of(ri: *mut pg_sys::RestrictInfo, rel: *mut pg_sys::RelOptInfo) -> Option<Key> {
    // SAFETY: `ri` is one of `rel`'s baserestrictinfo (from `add_pushed_paths`): a live
    // RestrictInfo whose clause is a valid expression; a T_OpExpr tag means an OpExpr, and
    // the Var `as_var` returns is a node of that clause. Catalog lookups run in a transaction.
    unsafe {
        let clause = (*ri).clause as *mut pg_sys::Node;
        if (*ri).pseudoconstant || (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = clause as *mut pg_sys::OpExpr;
        let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*op).args).collect();
        let [left, right] = args[..] else { return None };
        let relid = (*rel).relid;
        // The column is the function's left argument: `value op col` is tested as `col
        // commutator value`.
        let (var, value, opno) = match (quals::as_var(left, relid), quals::as_var(right, relid)) {
            (Some(v), None) => (v, right, (*op).opno),
            (None, Some(v)) => (v, left, pg_sys::get_commutator((*op).opno)),
            _ => return None,
        };
        if opno == pg_sys::InvalidOid || (*var).varattno <= 0 || !is_value(value) {
            return None;
        }
        let func = pg_sys::get_opcode(opno);
        // Built in, leakproof (so safe below security quals and barriers) and strict (heapam
        // rejects a NULL column without calling it, as a strict function would return NULL).
        if func.to_u32() >= pg_sys::FirstNormalObjectId
            || !pg_sys::get_func_leakproof(func)
            || !pg_sys::func_strict(func)
        {
            return None;
        }
        // A btree operator of the column type's family: a comparison, no surprises.
        let entry = pg_sys::lookup_type_cache(
            pg_sys::getBaseType((*var).vartype),
            pg_sys::TYPECACHE_BTREE_OPFAMILY as i32,
        );
        if (*entry).btree_opf == pg_sys::InvalidOid
            || pg_sys::get_op_opfamily_strategy(opno, (*entry).btree_opf) == 0
        {
            return None;
        }
        Some(Key { clause: ri, attno: (*var).varattno, func, collation: (*op).inputcollid, value })
    }
}

/// A constant or a parameter (possibly relabeled): evaluated once per scan.
unsafe fn is_value(node: *mut pg_sys::Node) -> bool {
    // SAFETY: `node` is a valid expression (an OpExpr's argument, from `key_of`), so each
    // RelabelType's `arg` is a valid, non-NULL node.
    unsafe {
        let mut n = node;
        while (*n).type_ == pg_sys::NodeTag::T_RelabelType {
            n = (*(n as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
        }
        matches!((*n).type_, pg_sys::NodeTag::T_Const | pg_sys::NodeTag::T_Param)
    }
}
