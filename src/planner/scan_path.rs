//! Paths for scans of columnar relations (from `hooks`' `set_rel_pathlist`): a
//! `ColumnarScan` priced by the bytes of the columns the query uses, and core's own scan
//! paths repriced with what a columnar table costs.

use super::cost::{self, CostParams, ScanInput};
use super::quals;
use crate::exec::columnar_scan::{self, ColumnarScan, ScanPlan};
use crate::exec::customscan::{Methods, PlanPrivate};
use crate::exec::MethodTable;
use crate::pg_list;
use crate::storage::format::layout::VECTOR_ROWS;
use crate::storage::{am, options, plan_sizes};
use pgrx::pg_sys;
use pgrx::prelude::*;

static PATH_METHODS: MethodTable<pg_sys::CustomPathMethods> = MethodTable(pg_sys::CustomPathMethods {
    CustomName: columnar_scan::NAME.as_ptr(),
    PlanCustomPath: Some(plan_path),
    ReparameterizeCustomPathByChild: None,
});

/// Attribute numbers (1-based) of the columns the relation's output and quals use;
/// every column when the whole row is referenced.
unsafe fn used_attnums(rel: *mut pg_sys::RelOptInfo, natts: usize) -> Vec<i32> {
    let mut attrs: *mut pg_sys::Bitmapset = std::ptr::null_mut();
    let relid = (*rel).relid;
    pg_sys::pull_varattnos((*(*rel).reltarget).exprs as *mut pg_sys::Node, relid, &mut attrs);
    for ri in pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo) {
        pg_sys::pull_varattnos((*ri).clause as *mut pg_sys::Node, relid, &mut attrs);
    }
    // Join clauses a LATERAL reference moves into the scan.
    if !(*rel).lateral_relids.is_null() {
        for ri in pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).joininfo) {
            pg_sys::pull_varattnos((*ri).clause as *mut pg_sys::Node, relid, &mut attrs);
        }
    }
    let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
    let mut out = Vec::new();
    let mut member = -1;
    loop {
        member = pg_sys::bms_next_member(attrs, member);
        if member < 0 {
            break;
        }
        let attno = member + offset;
        if attno == 0 {
            return (1..=natts as i32).collect();
        }
        if attno > 0 {
            out.push(attno);
        }
    }
    out
}

/// Offers our paths for base relation `rel` (range table entry `rte`) if it is a
/// columnar table scanned plainly.
pub unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // An inheritance parent (`rte->inh`) is an append relation: its paths are Appends
    // over its members (the parent's own rows come as a member with `inh` off), and a
    // scan of the parent's relation alone would lose the children's rows.
    // TABLESAMPLE needs core's Sample Scan (the table AM's sampling callbacks): a plain
    // ColumnarScan would read every row.
    if (*rte).rtekind != pg_sys::RTEKind::RTE_RELATION
        || (*rte).relkind as u8 != pg_sys::RELKIND_RELATION
        || (*rte).inh
        || !(*rte).tablesample.is_null()
    {
        return;
    }
    let relation = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
    if am::is_columnar(relation) {
        let params = CostParams {
            seq_page_cost: pg_sys::seq_page_cost,
            cpu_tuple_cost: pg_sys::cpu_tuple_cost,
            cpu_operator_cost: pg_sys::cpu_operator_cost,
        };
        let attnums = used_attnums(rel, (*(*relation).rd_att).natts as usize);
        // Core's own paths get the costs a columnar table really has, whether or not
        // ColumnarScan is offered.
        reprice_seq_scans(rel, natts_live(relation), &params);
        reprice_index_scans(rel, attnums.len(), &params);
        if super::ENABLE_COLUMNAR_SCAN.get() {
            add_scan_path(root, rel, relation, attnums, &params);
        }
    }
    pg_sys::table_close(relation, pg_sys::NoLock as i32);
}

unsafe fn add_scan_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    attnums: Vec<i32>,
    params: &CostParams,
) {
    let natts = (*(*relation).rd_att).natts as usize;
    let bytes = plan_sizes::column_bytes(relation, natts);
    // Like create_seqscan_path: a relation that refers to other relations' columns
    // (LATERAL) can only be scanned below a nested loop that supplies them; the path
    // says so, and createplan then replaces those references with parameters.
    let param_info = pg_sys::get_baserel_parampathinfo(root, rel, (*rel).lateral_relids);
    let mut clauses = (*rel).baserestrictinfo;
    if !param_info.is_null() {
        // Join clauses moved down to the scan are evaluated there too.
        clauses = pg_sys::list_concat_copy(clauses, (*param_info).ppi_clauses);
    }
    let pushdown = if push_down_enabled(root, rel) {
        quals::pushdown(root, rel, clauses)
    } else {
        quals::Pushdown::none(clauses)
    };
    let kept = pg_list::from_ptrs(pushdown.kept.iter().copied());
    let mut quals = pg_sys::QualCost::default();
    pg_sys::cost_qual_eval(&mut quals, kept, root);
    let pushed = pg_list::from_ptrs(pushdown.pushed.iter().copied());
    let (filter_columns, filter_tests, filter_selectivity) = match &pushdown.filter {
        Some(f) => (
            f.attributes().len(),
            f.tests(),
            pg_sys::clauselist_selectivity(
                root,
                pushed,
                (*rel).relid as i32,
                pg_sys::JoinType::JOIN_INNER,
                std::ptr::null_mut(),
            ),
        ),
        None => (0, 0, 1.0),
    };
    let input = ScanInput {
        pages: (*rel).pages as f64,
        bytes_all: bytes.iter().sum::<u64>() as f64,
        bytes_read: attnums.iter().map(|&a| bytes[a as usize - 1]).sum::<u64>() as f64,
        rows: (*rel).tuples,
        columns_read: attnums.len(),
        qual_per_row: quals.per_tuple,
        filter_columns,
        filter_tests,
        filter_selectivity,
    };
    let c = cost::columnar_scan_components(&input, params);
    let rows = if param_info.is_null() { (*rel).rows } else { (*param_info).ppi_rows };
    let path = new_path(rel, param_info, &attnums, rows, quals.startup, c.total() + quals.startup);
    pg_sys::add_path(rel, path as *mut pg_sys::Path);

    // A partial path for parallel plans: workers take row groups from a shared counter.
    // CPU is shared among the participants; reading is not (as for core's Seq Scan).
    if (*rel).consider_parallel && param_info.is_null() {
        let pages = cost::pages_read(&input);
        let workers =
            pg_sys::compute_parallel_worker(rel, pages, -1.0, pg_sys::max_parallel_workers_per_gather);
        if workers > 0 {
            let divisor = cost::parallel_divisor(workers, pg_sys::parallel_leader_participation);
            let cpu = c.decode + c.filter + c.output;
            let total = c.io + cpu / divisor + quals.startup;
            let partial = new_path(rel, param_info, &attnums, rows / divisor, quals.startup, total);
            (*partial).path.parallel_aware = true;
            (*partial).path.parallel_workers = workers;
            (*partial).flags = 0;
            pg_sys::add_partial_path(rel, partial as *mut pg_sys::Path);
        }
    }
}

unsafe fn new_path(
    rel: *mut pg_sys::RelOptInfo,
    param_info: *mut pg_sys::ParamPathInfo,
    attnums: &Vec<i32>,
    rows: f64,
    startup: f64,
    total: f64,
) -> *mut pg_sys::CustomPath {
    let path = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
    (*path).path.type_ = pg_sys::NodeTag::T_CustomPath;
    (*path).path.pathtype = pg_sys::NodeTag::T_CustomScan;
    (*path).path.parent = rel;
    (*path).path.pathtarget = (*rel).reltarget;
    (*path).path.param_info = param_info;
    (*path).path.parallel_safe = (*rel).consider_parallel;
    (*path).path.rows = rows;
    (*path).path.startup_cost = startup;
    (*path).path.total_cost = total;
    // What the executor's ColumnarScan gets: the attribute numbers to decode.
    (*path).custom_private = attnums.to_list();
    // Scrollable cursors read it backward (FETCH PRIOR, LAST, BACKWARD) with no Material.
    (*path).flags = pg_sys::CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
    (*path).methods = &PATH_METHODS.0;
    path
}

/// Whether the scan of `rel` evaluates the quals it can: the table's
/// `quals_push_down`, or the `pgcolumnar.quals_push_down` setting.
pub unsafe fn push_down_enabled(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> bool {
    let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
    options::quals_push_down((*rte).relid).unwrap_or_else(|| super::QUALS_PUSH_DOWN.get())
}

unsafe fn natts_live(relation: pg_sys::Relation) -> usize {
    let desc = (*relation).rd_att;
    (0..(*desc).natts as usize).filter(|&i| !crate::storage::datum::attr(desc, i).attisdropped).count()
}

/// Core prices a sequential scan of a columnar table like one of a heap; through the
/// table AM it decodes every column, so add that cost to keep the comparison honest.
unsafe fn reprice_seq_scans(rel: *mut pg_sys::RelOptInfo, columns: usize, params: &CostParams) {
    let total_rows = (*rel).tuples;
    let full_rows = (*rel).rows.max(1.0);
    for list in [(*rel).pathlist, (*rel).partial_pathlist] {
        for path in pg_list::ptrs::<pg_sys::Path>(list) {
            if (*path).pathtype == pg_sys::NodeTag::T_SeqScan {
                // A partial path's rows are its share of the scan.
                let share = ((*path).rows / full_rows).min(1.0);
                (*path).total_cost += cost::decode_cost(total_rows * share, columns, params);
            }
        }
    }
}

/// Core prices an index scan of a columnar table like one of a heap (a page per row at
/// worst); each fetch here decodes a vector per column, so add that.
unsafe fn reprice_index_scans(rel: *mut pg_sys::RelOptInfo, columns: usize, params: &CostParams) {
    for list in [(*rel).pathlist, (*rel).partial_pathlist] {
        for path in pg_list::ptrs::<pg_sys::Path>(list) {
            if matches!((*path).pathtype, pg_sys::NodeTag::T_IndexScan | pg_sys::NodeTag::T_IndexOnlyScan) {
                let fetched = (*(path as *mut pg_sys::IndexPath)).indexselectivity * (*rel).tuples;
                (*path).total_cost += cost::index_fetch_decode_cost(fetched, columns, VECTOR_ROWS, params);
            }
        }
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn plan_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    clauses: *mut pg_sys::List,
    _custom_plans: *mut pg_sys::List,
) -> *mut pg_sys::Plan {
    let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
    (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
    (*cscan).scan.plan.targetlist = tlist;
    // The quals the scan evaluates itself leave the plan's qual; zone maps still check
    // those of the others they can.
    let pushdown = if push_down_enabled(root, rel) {
        quals::pushdown(root, rel, clauses)
    } else {
        quals::Pushdown::none(clauses)
    };
    let clause_of = |ri: &*mut pg_sys::RestrictInfo| (**ri).clause as *mut pg_sys::Node;
    let quals = pg_sys::extract_actual_clauses(pg_list::from_ptrs(pushdown.kept.iter().copied()), false);
    (*cscan).scan.plan.qual = quals;
    (*cscan).scan.scanrelid = (*rel).relid;
    let found = quals::zone_predicates(quals, (*rel).relid);
    // custom_exprs: the zone-map quals, the pushed quals, the operands (copies, which
    // setrefs fixes up like any scan expression).
    let copy =
        |n: *mut pg_sys::Node| pg_sys::copyObjectImpl(n as *const std::ffi::c_void) as *mut pg_sys::Node;
    let pushed: Vec<*mut pg_sys::Node> = pushdown.pushed.iter().map(clause_of).collect();
    let exprs = found
        .iter()
        .map(|(q, _, _)| copy(*q))
        .chain(pushed.iter().map(|&q| copy(q)))
        .chain(pushdown.operands.iter().map(|&o| copy(o)));
    (*cscan).custom_exprs = pg_list::from_ptrs(exprs);
    let plan = ScanPlan {
        attnums: Vec::<i32>::from_list((*best_path).custom_private),
        zone_quals: found.len(),
        pushed_quals: pushed.len(),
        zone_predicates: found.into_iter().map(|(_, att, p)| (att, p)).collect(),
        filter: pushdown.filter,
    };
    (*cscan).custom_private = plan.to_list();
    (*cscan).flags = (*best_path).flags;
    (*cscan).methods = &Methods::<ColumnarScan>::PARALLEL_SCAN;
    cscan as *mut pg_sys::Plan
}
