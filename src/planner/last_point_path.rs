//! LastPoint paths (from `hooks`' `create_upper_paths`): the best row of each key by
//! one ordering column, for `SELECT DISTINCT ON (g) ... ORDER BY g, t [DESC]` (the
//! distinct stage) and `SELECT g, max(t) ... GROUP BY g` / `min(t)` (the grouping
//! stage) over one table. Two sources, each priced against what core offers for the
//! stage and chosen only when cheaper:
//!
//! - zone maps (columnar tables): vectors newest first, keys and ordering column only,
//!   every WHERE clause pushed into the scan;
//! - a skip scan of a btree whose first two columns are (g, t), on any table.
//!
//! The output is not ordered: core sorts the winners when the query asks.

use super::aggregates::{aggregate, covered_aggrefs, group_key};
use super::cost::{self, LastPointInput};
use super::custompath::{self, CustomPathKind};
use super::quals;
use super::relation::{plan_time_pruning, pushed_entirely, scanned_plainly};
use super::upper_scan::UpperScan;
use crate::exec::agg::spec::{AggFunc, InputType, KeyKind};
use crate::exec::columnar_scan::ScanPlan;
use crate::exec::customscan::deparse;
use crate::exec::customscan::Methods;
use crate::exec::filter::plan::FilterPlan;
use crate::exec::last_point::best::{self, Rank};
use crate::exec::last_point::{IndexPlan, LastPoint, LastPointPlan, Source};
use crate::pg_list;
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::{read::plan_sizes, relation::am};
use pgrx::pg_sys;
use std::ffi::CStr;

/// The LastPoint path: its plan is the upper-stage scan its analysis holds.
pub struct LastPointPath;

impl CustomPathKind for LastPointPath {
    type Node = LastPoint;
    type Analysis = UpperScan<LastPointPlan>;
    const SCAN_METHODS: &'static pg_sys::CustomScanMethods = &Methods::<LastPoint>::SCAN;

    unsafe fn plan(
        _root: *mut pg_sys::PlannerInfo,
        _rel: *mut pg_sys::RelOptInfo,
        _path: *mut pg_sys::CustomPath,
        analysis: &UpperScan<LastPointPlan>,
        tlist: *mut pg_sys::List,
        _clauses: *mut pg_sys::List,
    ) -> *mut pg_sys::CustomScan {
        // SAFETY: called through `plan_path` from createplan in the planner's memory context
        // (the trait's contract); the analysis' expressions were taken from this query's
        // target, HAVING and quals by `new_path`, in that same context, so they are live.
        unsafe { analysis.plan(tlist) }
    }
}

/// What a query asks of one table: each key's best row by the ordering column.
struct Question {
    relid: u32,
    key: *mut pg_sys::Node,
    key_att: usize,
    key_eqop: pg_sys::Oid,
    time: *mut pg_sys::Node,
    time_att: usize,
    /// The ordering operator (`<` or `>` of the ordering column's type).
    time_sortop: pg_sys::Oid,
    rank: Rank,
    /// max / min (the aggregates, in the scan tuple after the columns), or DISTINCT ON.
    aggrefs: Vec<*mut pg_sys::Aggref>,
    target: *mut pg_sys::PathTarget,
    having: *mut pg_sys::List,
}

impl Question {
    /// The LastPoint's plan: this question, answered from `source`.
    fn plan(&self, source: Source, explain: Vec<(String, String)>) -> LastPointPlan {
        LastPointPlan { key_att: self.key_att, time_att: self.time_att, rank: self.rank, source, explain }
    }
}

/// Offers LastPoint paths for the distinct stage of `SELECT DISTINCT ON (g) ... ORDER BY
/// g, t [DESC]` over one table.
///
/// # Safety
/// From `create_upper_paths_hook` for UPPERREL_DISTINCT, on the backend thread: `root`,
/// `input_rel` and `output_rel` are the planner's live nodes.
pub unsafe fn add_distinct_paths(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
) {
    // SAFETY: `root`, `input_rel` and `output_rel` are the planner's live nodes (this fn's
    // contract): parse's clause lists are valid, their lengths checked before the first
    // entries are taken, every sort/distinct clause's tleSortGroupRef names an entry of
    // processed_tlist, and `one_table` returns a live base relation.
    unsafe {
        let parse = (*root).parse;
        if !super::ENABLE_LAST_POINT.get()
            || !(*parse).hasDistinctOn
            || pg_list::len((*parse).distinctClause) != 1
            || pg_list::len((*parse).sortClause) != 2
            || (*parse).hasAggs
            || !(*parse).groupClause.is_null()
            || !(*parse).havingQual.is_null()
            || (*parse).hasWindowFuncs
            || (*parse).hasTargetSRFs
            || !(*parse).rowMarks.is_null()
            || !(*parse).setOperations.is_null()
        {
            return;
        }
        let Some(rel) = one_table(root, input_rel) else { return };
        let relid = (*rel).relid;
        let distinct = pg_list::ptrs::<pg_sys::SortGroupClause>((*parse).distinctClause).next().unwrap();
        let sorts: Vec<*mut pg_sys::SortGroupClause> = pg_list::ptrs((*parse).sortClause).collect();
        if (*sorts[0]).tleSortGroupRef != (*distinct).tleSortGroupRef {
            return;
        }
        let tlist = (*root).processed_tlist;
        let expr = |sgc: *mut pg_sys::SortGroupClause| {
            (*pg_sys::get_sortgroupref_tle((*sgc).tleSortGroupRef, tlist)).expr as *mut pg_sys::Node
        };
        let (key, time) = (expr(distinct), expr(sorts[1]));
        let (Some(key_var), Some(time_var)) = (quals::as_var(key, relid), quals::as_var(time, relid)) else {
            return;
        };
        let sortop = (*sorts[1]).sortop;
        let descending = match sortop {
            op if op == ordering_op(time, true) => true,
            op if op == ordering_op(time, false) => false,
            _ => return,
        };
        let target = (*input_rel).reltarget;
        if pg_sys::contain_volatile_functions((*target).exprs as *mut pg_sys::Node) {
            return;
        }
        let question = Question {
            relid,
            key,
            key_att: (*key_var).varattno as usize - 1,
            key_eqop: (*distinct).eqop,
            time,
            time_att: (*time_var).varattno as usize - 1,
            time_sortop: sortop,
            rank: Rank { descending, nulls_win: (*sorts[1]).nulls_first },
            aggrefs: Vec::new(),
            target,
            having: std::ptr::null_mut(),
        };
        add_paths(root, rel, output_rel, &question);
    }
}

/// Offers LastPoint paths for the grouping stage of `SELECT g, max(t) ... GROUP BY g`
/// (or min) over one table.
///
/// # Safety
/// From `create_upper_paths_hook` for UPPERREL_GROUP_AGG, on the backend thread: `root`,
/// `input_rel` and `output_rel` are the planner's live nodes and `extra` that stage's
/// GroupPathExtraData.
pub unsafe fn add_extreme_paths(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
) {
    // SAFETY: `root`, `input_rel`, `output_rel` and `extra` are the planner's live nodes
    // (this fn's contract): groupClause has one entry (checked), whose tleSortGroupRef names
    // an entry of processed_tlist; the target and HAVING are valid trees; `one_table`
    // returns a live base relation, as `one_extreme` requires; an Aggref that `aggregate`
    // accepts has one TargetEntry argument.
    unsafe {
        let parse = (*root).parse;
        if !super::ENABLE_LAST_POINT.get()
            || pg_list::len((*parse).groupClause) != 1
            || !(*parse).groupingSets.is_null()
            || (*parse).hasWindowFuncs
            || (*parse).hasTargetSRFs
            || !(*parse).rowMarks.is_null()
            || (*extra).patype != pg_sys::PartitionwiseAggregateType::PARTITIONWISE_AGGREGATE_NONE
        {
            return;
        }
        let Some(rel) = one_table(root, input_rel) else { return };
        let relid = (*rel).relid;
        let sgc = pg_list::ptrs::<pg_sys::SortGroupClause>((*parse).groupClause).next().unwrap();
        let key = (*pg_sys::get_sortgroupref_tle((*sgc).tleSortGroupRef, (*root).processed_tlist)).expr
            as *mut pg_sys::Node;
        let Some(key_var) = quals::as_var(key, relid) else { return };
        let target = (*output_rel).reltarget;
        let having = (*extra).havingQual as *mut pg_sys::List;
        let trees = [(*target).exprs as *mut pg_sys::Node, having as *mut pg_sys::Node];
        let Some(aggrefs) = covered_aggrefs(&[key], trees) else { return };
        let Some((func, time_att)) = one_extreme(root, rel, &aggrefs) else { return };
        let arg = pg_list::ptrs::<pg_sys::TargetEntry>((*aggrefs[0]).args).next().unwrap();
        let time = (*arg).expr as *mut pg_sys::Node;
        let descending = func == AggFunc::Max;
        let question = Question {
            relid,
            key,
            key_att: (*key_var).varattno as usize - 1,
            key_eqop: (*sgc).eqop,
            time,
            time_att,
            time_sortop: ordering_op(time, descending),
            // max and min skip NULLs: a NULL wins only a group that has nothing else.
            rank: Rank { descending, nulls_win: false },
            aggrefs,
            target,
            having,
        };
        add_paths(root, rel, output_rel, &question);
    }
}

/// The one max or min (of an integer column) that every aggregate of `aggrefs` is: its
/// function and column; None if they differ, or one is anything else.
///
/// # Safety
/// `root` and `rel` are the planner's live nodes, `rel` a base relation (from `one_table`)
/// whose table the query locked; `aggrefs` are valid Aggrefs over `rel`.
unsafe fn one_extreme(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    aggrefs: &[*mut pg_sys::Aggref],
) -> Option<(AggFunc, usize)> {
    // SAFETY: `root` and `rel` are live (this fn's contract); the relation of the base
    // relation is locked by the query, so table_open with NoLock is valid, and it is closed
    // right after its descriptor is read; the Aggrefs are valid, as `aggregate` requires.
    unsafe {
        let relation = pg_sys::table_open(
            (*(*(*root).simple_rte_array.add((*rel).relid as usize))).relid,
            pg_sys::NoLock as i32,
        );
        let kinds = datum::column_kinds((*relation).rd_att);
        pg_sys::table_close(relation, pg_sys::NoLock as i32);
        let mut func = None;
        let mut time_att = None;
        for &a in aggrefs {
            if !(*a).aggfilter.is_null() {
                return None;
            }
            let mut operands = Vec::new();
            let spec = aggregate(root, rel, a, &kinds, &mut operands)?;
            // Integer columns only: the winner's value is the result, and floats' -0 and
            // 0 tie.
            if !matches!(spec.func, AggFunc::Max | AggFunc::Min)
                || spec.expr.is_some()
                || !matches!(
                    spec.input,
                    InputType::Int2 | InputType::Int4 | InputType::Int8 | InputType::OrderedInt
                )
                || func.is_some_and(|f| f != spec.func)
                || time_att.is_some_and(|t| Some(t) != spec.att)
            {
                return None;
            }
            func = Some(spec.func);
            time_att = spec.att;
        }
        Some((func?, time_att?))
    }
}

/// The default btree `>` (`descending`) or `<` of `expr`'s type.
unsafe fn ordering_op(expr: *mut pg_sys::Node, descending: bool) -> pg_sys::Oid {
    // SAFETY: `expr` is a valid expression of the query being planned (callers'
    // contract); the type cache lookup runs inside a transaction and returns a live entry.
    unsafe {
        let typid = pg_sys::getBaseType(pg_sys::exprType(expr));
        let entry =
            pg_sys::lookup_type_cache(typid, (pg_sys::TYPECACHE_LT_OPR | pg_sys::TYPECACHE_GT_OPR) as i32);
        if descending {
            (*entry).gt_opr
        } else {
            (*entry).lt_opr
        }
    }
}

/// The base relation a stage's input is, if it is one table scanned plainly.
unsafe fn one_table(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
) -> Option<*mut pg_sys::RelOptInfo> {
    // SAFETY: `root` and `input_rel` are the planner's live nodes (callers' contract);
    // `input_rel` is checked to be a base relation before its relid indexes simple_rte_array.
    unsafe {
        if (*input_rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
            || !(*input_rel).lateral_relids.is_null()
        {
            return None;
        }
        let rte = *(*root).simple_rte_array.add((*input_rel).relid as usize);
        scanned_plainly(rte).then_some(input_rel)
    }
}

unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    q: &Question,
) {
    // SAFETY: `root`, `rel` and `output_rel` are the planner's live nodes and `rel` a base
    // relation of range table entry `q.relid` (from `one_table`), whose table the query
    // locked: table_open with NoLock is valid, and it is closed before returning (an ERROR in
    // between releases it at abort). Paths made are palloc'd in the planner's memory context.
    unsafe {
        let rte = *(*root).simple_rte_array.add(q.relid as usize);
        let relation = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
        let keys = pg_sys::estimate_num_groups(
            root,
            pg_list::from_ptrs([q.key]),
            (*rel).rows,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
        .max(1.0);
        // What core offers for the stage, for EXPLAIN VERBOSE.
        let core = pg_list::ptrs::<pg_sys::Path>((*output_rel).pathlist)
            .map(|p| (*p).total_cost)
            .fold(f64::INFINITY, f64::min);
        if am::is_columnar(relation) && super::ENABLE_COLUMNAR_SCAN.get() {
            if let Some(path) = zones_path(root, rel, output_rel, relation, q, keys, core) {
                pg_sys::add_path(output_rel, path);
            }
        }
        for index in pg_list::ptrs::<pg_sys::IndexOptInfo>((*rel).indexlist) {
            if let Some(path) = skip_scan_path(root, rel, output_rel, relation, index, q, keys, core) {
                pg_sys::add_path(output_rel, path);
            }
        }
        pg_sys::table_close(relation, pg_sys::NoLock as i32);
    }
}

/// Whether the ordering column's stored form ranks as its type's btree order.
fn rankable(kind: ColumnKind, typid: pg_sys::Oid) -> bool {
    use pg_sys::*;
    match kind {
        ColumnKind::Int { .. } => {
            [INT2OID, INT4OID, INT8OID, DATEOID, TIMESTAMPOID, TIMESTAMPTZOID, TIMEOID].contains(&typid)
        }
        ColumnKind::Float4 => typid == FLOAT4OID,
        ColumnKind::Float8 => typid == FLOAT8OID,
        _ => false,
    }
}

/// The zone-map LastPoint over a columnar relation, if every WHERE clause is pushed.
unsafe fn zones_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    q: &Question,
    keys: f64,
    core: f64,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: `root` and `rel` are the planner's live nodes and `relation` the open,
    // locked relation of `rel` (from `add_paths`), so rd_att is valid and its column
    // kinds, zone maps and sizes may be read; `q`'s key and time are live expressions
    // of this query over `rel`.
    let (pushdown, zones, bytes) = unsafe {
        let kinds = datum::column_kinds((*relation).rd_att);
        // Its per-key winners compare keys byte for byte: no bpchar or numeric key,
        // whose equal values may differ in bytes.
        if group_key(q.key, q.key_eqop, q.relid, &kinds, None)?.kind != KeyKind::Value {
            return None;
        }
        if !rankable(kinds[q.time_att], pg_sys::getBaseType(pg_sys::exprType(q.time))) {
            return None;
        }
        let pushdown = pushed_entirely(root, rel)?;
        // Its vectors are read newest first and skipped when they cannot win: a pushed
        // test that may fail would not see every row core's filter evaluates.
        if pushdown.filter.as_ref().is_some_and(FilterPlan::may_fail) {
            return None;
        }
        let natts = (*(*relation).rd_att).natts as usize;
        let zones = plan_sizes::group_zones(relation, natts, &[q.time_att]);
        zones.read_vectors(|_| true);
        (pushdown, zones, plan_sizes::column_bytes(relation, natts))
    };
    let attributes = ranked_columns(q, &pushdown);
    let vectors: Vec<_> = zones.groups.iter().flat_map(|g| g.vectors(q.time_att)).collect();
    // Zone maps rule out what the filter cannot match, for LastPoint as for a scan.
    // SAFETY: as above; the pushdown's operands are this query's (from pushed_entirely).
    let (fraction, measured, scan_vars, pages, tuples) = unsafe {
        let fraction = match &pushdown.filter {
            Some(f) => plan_time_pruning(root, relation, f, &pushdown.operands).row_fraction,
            None => 1.0,
        };
        (fraction, pushdown.measure(root, rel), scan_columns(q), (*rel).pages as f64, (*rel).tuples)
    };
    let rows_ranked =
        (best::expected_rows_ranked(q.rank, &vectors, keys) * fraction).min(tuples.max(0.0) * fraction);
    let (_, filter_tests, selectivity) = measured;
    let input = LastPointInput {
        pages,
        bytes_all: bytes.iter().sum::<u64>() as f64,
        key_bytes: bytes[q.key_att] as f64 * fraction,
        time_bytes: bytes[q.time_att] as f64 * fraction,
        rows: tuples * fraction,
        rows_ranked,
        filter_tests,
        winners: keys.min(tuples * selectivity),
        fetch_columns: scan_vars.len(),
    };
    let total = cost::last_point_zones(&input, &super::cost_params());
    // SAFETY: `relation` is the open, locked relation of range table entry `q.relid`, and
    // `q`'s expressions and the pushed clauses are live nodes of this query over it.
    let mut explain = unsafe { zones_explain(relation, q, &attributes, &pushdown) };
    explain.extend(estimates(keys, Some(rows_ranked), total, core));
    let plan = q.plan(Source::Zones(ranked_scan(&attributes, pushdown.filter)), explain);
    // SAFETY: `rel` and `output_rel` are the planner's live nodes and the scan columns and
    // operands live expressions of this query, as `new_path` requires.
    Some(unsafe { new_path(rel, output_rel, q, plan, scan_vars, pushdown.operands, keys, total) })
}

/// The columns the zone-map LastPoint reads: the key, the ordering column, and the
/// pushed filter's, in attribute order.
fn ranked_columns(q: &Question, pushdown: &quals::Pushdown) -> Vec<usize> {
    let mut attributes = vec![q.key_att, q.time_att];
    if let Some(f) = &pushdown.filter {
        attributes.extend(f.attributes());
    }
    attributes.sort_unstable();
    attributes.dedup();
    attributes
}

/// The columnar scan under the zone-map LastPoint: `attributes`, with the pushed filter.
fn ranked_scan(attributes: &[usize], filter: Option<FilterPlan>) -> ScanPlan {
    ScanPlan {
        attnums: attributes.iter().map(|&a| a as i32 + 1).collect(),
        output: Vec::new(),
        zone_predicates: Vec::new(),
        filter,
        zone_quals: 0,
        pushed_quals: 0,
        explain: Vec::new(),
        join_filter: None,
    }
}

/// What EXPLAIN shows of the zone-map LastPoint's decisions.
///
/// # Safety
/// `relation` is the open, locked relation of range table entry `q.relid`; `q`'s
/// expressions and the pushed clauses are live nodes of this query over it.
unsafe fn zones_explain(
    relation: pg_sys::Relation,
    q: &Question,
    attributes: &[usize],
    pushdown: &quals::Pushdown,
) -> Vec<(String, String)> {
    let mut explain = vec![("Strategy".to_string(), "zone maps, best rows first".to_string())];
    // SAFETY: `relation` is the open, locked relation of range table entry `q.relid`, so
    // rd_att is valid and `attr` is asked only for its columns (`attributes`); the
    // expressions deparsed (`q`'s, the pushed clauses) are live nodes of this query over it.
    unsafe {
        explain.extend(common_explain(relation, q));
        let desc = (*relation).rd_att;
        let names: Vec<String> = attributes
            .iter()
            .map(|&a| pgrx::name_data_to_str(&datum::attr(desc, a).attname).to_string())
            .collect();
        explain.push(("Columns Ranked".into(), names.join(", ")));
        if !pushdown.pushed.is_empty() {
            let clauses = pg_list::from_ptrs(pushdown.pushed.iter().map(|&ri| (*ri).clause));
            explain.push((
                "Pushed Filter".into(),
                deparse::deparse(q.relid, relation, pg_sys::make_ands_explicit(clauses) as *mut pg_sys::Node),
            ));
        }
    }
    explain
}

/// The skip scan of `index`, if its first two columns are the key and the ordering
/// column, in an order that puts each key's best row first in one direction.
#[allow(clippy::too_many_arguments)]
unsafe fn skip_scan_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    index: *mut pg_sys::IndexOptInfo,
    q: &Question,
    keys: f64,
    core: f64,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: `index` is one of `rel`'s live IndexOptInfos (from `add_paths`), `q`'s key
    // and time live expressions of this query, and `relation` open and locked, as
    // `time_order` and `skip_order` require.
    let (ix, plan_index) = unsafe {
        let ix = &*index;
        let descending = time_order(ix, q)?;
        (ix, skip_order(relation, ix, q, descending)?)
    };
    // SAFETY: `root` and `rel` are the planner's live nodes.
    let filter = unsafe { DescentFilter::new(root, rel) }?;
    let total = filter.skip_scan_cost(ix.tuples, keys);
    // SAFETY: `relation` is the open, locked relation of range table entry `q.relid` and
    // `q`'s expressions and the clause list are live nodes of this query over it.
    let mut explain = unsafe { skip_scan_explain(relation, q, &plan_index, &filter) };
    explain.extend(estimates(keys, None, total, core));
    let plan = q.plan(Source::Index(plan_index), explain);
    // SAFETY: `list` is the valid list of clause expressions `DescentFilter::new` made;
    // `rel` and `output_rel` are the planner's live nodes and `q`'s expressions this
    // query's, as `scan_columns` and `new_path` require.
    unsafe {
        let exprs = pg_list::ptrs(filter.list).collect();
        Some(new_path(rel, output_rel, q, plan, scan_columns(q), exprs, keys, total))
    }
}

/// Whether `ix` is a btree on (key, time) with the query's equality and collations, and
/// in which order of the time column (`descending` or not) the query ranks in it.
///
/// # Safety
/// `ix` is a live IndexOptInfo; `q`'s key and time are live expressions of this query;
/// inside a transaction, on the backend thread.
unsafe fn time_order(ix: &pg_sys::IndexOptInfo, q: &Question) -> Option<bool> {
    // SAFETY: `ix`'s per-column arrays (indexkeys, opfamily, opcintype, indexcollations,
    // reverse_sort, nulls_first) have at least two entries once nkeycolumns >= 2 and
    // reverse_sort is set (checked before any is read); `q`'s key and time are live
    // expressions of this query; the catalog lookups run inside a transaction and the
    // GUC on the backend thread.
    unsafe {
        // A skip scan is an index scan: `enable_indexscan = off` rules it out.
        if !pg_sys::enable_indexscan
            || ix.relam != pg_sys::BTREE_AM_OID
            || ix.nkeycolumns < 2
            || !ix.indpred.is_null()
            || !ix.amhasgettuple
            || ix.reverse_sort.is_null()
            || *ix.indexkeys != q.key_att as i32 + 1
            || *ix.indexkeys.add(1) != q.time_att as i32 + 1
        {
            return None;
        }
        // The index's equality is the query's, in the query's collations.
        let (family, time_family) = (*ix.opfamily, *ix.opfamily.add(1));
        if pg_sys::get_op_opfamily_strategy(q.key_eqop, family) != pg_sys::BTEqualStrategyNumber as i32
            || *ix.indexcollations != pg_sys::exprCollation(q.key)
            || *ix.indexcollations.add(1) != pg_sys::exprCollation(q.time)
            || pg_sys::get_opfamily_member(
                family,
                *ix.opcintype,
                *ix.opcintype,
                pg_sys::BTGreaterStrategyNumber as i16,
            ) == pg_sys::InvalidOid
        {
            return None;
        }
        match pg_sys::get_op_opfamily_strategy(q.time_sortop, time_family) as u32 {
            pg_sys::BTGreaterStrategyNumber => Some(true),
            pg_sys::BTLessStrategyNumber => Some(false),
            _ => None,
        }
    }
}

/// How to walk `ix` so each key's best row comes first, if NULL times fall where the
/// query wants them: the scan direction and the way from one key to the next.
///
/// # Safety
/// `ix` passed `time_order` (its reverse_sort and nulls_first have two entries);
/// `relation` is the open, locked relation `ix` indexes.
unsafe fn skip_order(
    relation: pg_sys::Relation,
    ix: &pg_sys::IndexOptInfo,
    q: &Question,
    descending: bool,
) -> Option<IndexPlan> {
    // SAFETY: reverse_sort and nulls_first have two entries (this fn's contract).
    let ((key_desc, key_nulls_first), (time_desc, time_nulls_first)) =
        unsafe { ((*ix.reverse_sort, *ix.nulls_first), (*ix.reverse_sort.add(1), *ix.nulls_first.add(1))) };
    let forward = descending == time_desc;
    // Within a key, in the scan's direction, do NULL times come first?
    let nulls_first_in_key = if forward { time_nulls_first } else { !time_nulls_first };
    if q.aggrefs.is_empty() {
        if nulls_first_in_key != q.rank.nulls_win {
            return None;
        }
    } else if nulls_first_in_key {
        // SAFETY: `relation` is open and locked (this fn's contract), so rd_att is valid,
        // and `time_att` is one of its columns.
        let not_null = unsafe { datum::attr((*relation).rd_att, q.time_att).attnotnull };
        if !not_null {
            // max / min want the best non-NULL time, which a NULL would hide.
            return None;
        }
    }
    Some(IndexPlan {
        index: ix.indexoid,
        forward,
        next_greater: forward != key_desc,
        nulls_first: if forward { key_nulls_first } else { !key_nulls_first },
    })
}

/// Every WHERE clause, tested on the rows a skip scan's descents walk, in security order.
struct DescentFilter {
    clauses: Vec<*mut pg_sys::RestrictInfo>,
    /// The clauses' expressions, in that order.
    list: *mut pg_sys::List,
    selectivity: f64,
    qual_cost: pg_sys::QualCost,
}

impl DescentFilter {
    /// `rel`'s WHERE clauses, if none is volatile or has a subplan.
    ///
    /// # Safety
    /// `root` and `rel` are the planner's live nodes, in the planner's memory context.
    unsafe fn new(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> Option<Self> {
        // SAFETY: `root` and `rel` are the planner's live nodes: baserestrictinfo is a list of
        // live RestrictInfos, whose clauses are valid expressions; the list made is palloc'd in
        // the planner's memory context.
        unsafe {
            let mut clauses: Vec<*mut pg_sys::RestrictInfo> =
                pg_list::ptrs((*rel).baserestrictinfo).collect();
            clauses.sort_by_key(|&ri| (*ri).security_level);
            let list = pg_list::from_ptrs(clauses.iter().map(|&ri| (*ri).clause as *mut pg_sys::Node));
            if pg_sys::contain_volatile_functions(list as *mut pg_sys::Node)
                || pg_sys::contain_subplans(list as *mut pg_sys::Node)
            {
                return None;
            }
            let selectivity = quals::selectivity(root, rel, &clauses).max(1e-6);
            let mut qual_cost = pg_sys::QualCost::default();
            pg_sys::cost_qual_eval(&mut qual_cost, list, root);
            Some(DescentFilter { clauses, list, selectivity, qual_cost })
        }
    }

    /// The skip scan's cost: a descent per key (and one to find there is none left), each
    /// walking the rows to the first that passes the filter.
    fn skip_scan_cost(&self, index_tuples: f64, keys: f64) -> f64 {
        // SAFETY: PostgreSQL's cost GUCs, read on the backend thread.
        let (random_page_cost, cpu_index_tuple_cost) =
            unsafe { (pg_sys::random_page_cost, pg_sys::cpu_index_tuple_cost) };
        cost::skip_scan(
            keys + 1.0,
            1.0 / self.selectivity,
            index_tuples,
            self.qual_cost.per_tuple,
            random_page_cost,
            cpu_index_tuple_cost,
            &super::cost_params(),
        )
    }
}

/// What EXPLAIN shows of a skip scan's decisions.
///
/// # Safety
/// `relation` is the open, locked relation of range table entry `q.relid`; `q`'s
/// expressions and `filter`'s clauses are live nodes of this query over it, and the
/// index exists.
unsafe fn skip_scan_explain(
    relation: pg_sys::Relation,
    q: &Question,
    index: &IndexPlan,
    filter: &DescentFilter,
) -> Vec<(String, String)> {
    let direction = if index.forward { "forward" } else { "backward" };
    let mut explain = vec![("Strategy".to_string(), format!("index skip scan ({direction})"))];
    // SAFETY: the index exists (the planner found it), so get_rel_name returns a palloc'd
    // C string; `relation` is the open, locked relation of range table entry `q.relid`
    // and `q`'s expressions and the clause list are live nodes of this query over it.
    unsafe {
        let name = CStr::from_ptr(pg_sys::get_rel_name(index.index)).to_string_lossy().into_owned();
        explain.push(("Index".into(), name));
        explain.extend(common_explain(relation, q));
        if !filter.clauses.is_empty() {
            explain.push((
                "Filter".into(),
                deparse::deparse(
                    q.relid,
                    relation,
                    pg_sys::make_ands_explicit(filter.list) as *mut pg_sys::Node,
                ),
            ));
        }
    }
    explain
}

/// The estimates EXPLAIN VERBOSE shows ('+'): keys, rows ranked (zone maps only), the
/// LastPoint's cost and core's.
fn estimates(keys: f64, rows_ranked: Option<f64>, total: f64, core: f64) -> Vec<(String, String)> {
    let mut explain = vec![("+Estimated Keys".to_string(), format!("{keys:.0}"))];
    if let Some(rows_ranked) = rows_ranked {
        explain.push(("+Estimated Rows Ranked".into(), format!("{rows_ranked:.0}")));
    }
    explain.push(("+LastPoint Cost".into(), format!("{total:.2}")));
    explain.push(("+Core Cost".into(), core_text(core)));
    explain
}

unsafe fn common_explain(relation: pg_sys::Relation, q: &Question) -> Vec<(String, String)> {
    // SAFETY: `relation` is the open, locked relation of range table entry `q.relid` and
    // `q`'s expressions are live nodes over it (from `zones_path` / `skip_scan_path`), as
    // `deparse::deparse` requires.
    let (time, key) =
        unsafe { (deparse::deparse(q.relid, relation, q.time), deparse::deparse(q.relid, relation, q.key)) };
    let order = match (q.rank.descending, q.rank.nulls_win, q.aggrefs.is_empty()) {
        (true, _, false) => format!("max({time})"),
        (false, _, false) => format!("min({time})"),
        (true, true, true) => format!("{time} DESC"),
        (true, false, true) => format!("{time} DESC NULLS LAST"),
        (false, false, true) => time,
        (false, true, true) => format!("{time} NULLS FIRST"),
    };
    vec![("Key".to_string(), key), ("Best Row By".to_string(), order)]
}

fn core_text(core: f64) -> String {
    if core.is_finite() {
        format!("{core:.2}")
    } else {
        "none".to_string()
    }
}

/// The scan tuple: the relation's columns the output (and HAVING, and the quals a skip
/// scan tests) uses, then the aggregates.
unsafe fn scan_columns(q: &Question) -> Vec<*mut pg_sys::Node> {
    // SAFETY: `q`'s target and expressions are live nodes of the query being planned
    // (from `zones_path` / `skip_scan_path`); pull_var_clause returns lists of valid nodes
    // palloc'd in the planner's memory context.
    unsafe {
        let mut nodes: Vec<*mut pg_sys::Node> = Vec::new();
        let flags = (pg_sys::PVC_RECURSE_AGGREGATES | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
        let mut add = |list: *mut pg_sys::List| {
            for v in pg_list::ptrs::<pg_sys::Node>(list) {
                if !nodes.iter().any(|&n| pg_sys::equal(n as *const _, v as *const _)) {
                    nodes.push(v);
                }
            }
        };
        add(pg_sys::pull_var_clause((*q.target).exprs as *mut pg_sys::Node, flags));
        add(pg_sys::pull_var_clause(q.key, flags));
        nodes.extend(q.aggrefs.iter().map(|&a| a as *mut pg_sys::Node));
        nodes
    }
}

#[allow(clippy::too_many_arguments)]
unsafe fn new_path(
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    q: &Question,
    plan: LastPointPlan,
    mut scan_vars: Vec<*mut pg_sys::Node>,
    exprs: Vec<*mut pg_sys::Node>,
    keys: f64,
    total: f64,
) -> *mut pg_sys::Path {
    // SAFETY: `rel` and `output_rel` are the planner's live nodes and `exprs` valid
    // expressions (from `zones_path` / `skip_scan_path`); `custompath::new` allocates the
    // path in the planner's memory context.
    unsafe {
        // A skip scan's quals read the scan tuple too.
        if matches!(plan.source, Source::Index(_)) {
            let flags = (pg_sys::PVC_RECURSE_AGGREGATES | pg_sys::PVC_RECURSE_PLACEHOLDERS) as i32;
            for &e in &exprs {
                for v in pg_list::ptrs::<pg_sys::Node>(pg_sys::pull_var_clause(e, flags)) {
                    if !scan_vars.iter().any(|&n| pg_sys::equal(n as *const _, v as *const _)) {
                        // Before the aggregates, which stay last.
                        let at = scan_vars.len() - q.aggrefs.len();
                        scan_vars.insert(at, v);
                    }
                }
            }
        }
        let analysis =
            UpperScan { relid: (*rel).relid, private: plan, scan_tuple: scan_vars, having: q.having, exprs };
        let path = custompath::new::<LastPointPath>(output_rel, q.target, keys, total, total, analysis);
        path as *mut pg_sys::Path
    }
}
