//! Aggregate paths over one columnar relation (from `hooks`' `create_upper_paths`): a
//! `ColumnarAgg` that scans and folds the aggregates over vectors, offered beside core's
//! Agg paths and chosen only when it costs less; and its parallel partial form, which
//! core gathers and finishes with a Finalize Aggregate.
//!
//! A query is eligible only if the fold computes it exactly: every WHERE clause pushed
//! into the scan, group keys that are columns or `date_trunc` / `date_bin` of a
//! timestamp column, and built-in aggregates (count, sum, avg, min, max, bool_and/or)
//! over plain columns, without DISTINCT or ORDER BY, their FILTER pushable too. Anything
//! else is left to core, decided here, at plan time.

pub mod eager_join;

use super::agg_args;
use super::aggregates::{aggregate, covered_aggrefs, group_key};
use super::column_decode::DecodeCosts;
use super::column_stats;
use super::cost::{self, AggInput, ScanInput};
use super::custompath::{self, CustomPathKind};
use super::having_selectivity::{self, GroupStat};
use super::quals;
use super::relation::{kept_range, plan_time_pruning, pushed_entirely, scanned_plainly, Pruning};
use super::upper_scan::UpperScan;
use crate::exec::agg::spec::{AggFunc, AggPlan, AggSpec, HavingTest, KeyKind, TruncUnit, MAX_KEYS};
use crate::exec::columnar_agg::{AggScanPlan, ColumnarAgg};
use crate::exec::columnar_scan::ScanPlan;
use crate::exec::customscan::{Methods, DEPARSED_AT_EXPLAIN};
use crate::pg_list;
use crate::storage::format::zonemap::CmpOp;
use crate::storage::relation::datum;
use crate::storage::{read::plan_sizes, relation::am};
use pgrx::pg_sys;

/// The ColumnarAgg path: its plan is the upper-stage scan its analysis holds.
pub struct AggPath;

impl CustomPathKind for AggPath {
    type Node = ColumnarAgg;
    type Analysis = UpperScan<AggScanPlan>;
    const SCAN_METHODS: &'static pg_sys::CustomScanMethods = &Methods::<ColumnarAgg>::PARALLEL_SCAN;

    unsafe fn plan(
        _root: *mut pg_sys::PlannerInfo,
        _rel: *mut pg_sys::RelOptInfo,
        _path: *mut pg_sys::CustomPath,
        analysis: &UpperScan<AggScanPlan>,
        tlist: *mut pg_sys::List,
        _clauses: *mut pg_sys::List,
    ) -> *mut pg_sys::CustomScan {
        // SAFETY: called through `plan_path` from createplan in the planner's memory context
        // (the trait's contract); the analysis' expressions were taken from this query's
        // target, HAVING and quals by `add_path`, in that same context, so they are live.
        unsafe { analysis.plan(tlist) }
    }
}

/// Offers a ColumnarAgg for the grouping stage of a query over one columnar relation,
/// and a Finalize Aggregate over a Gather of partial ColumnarAggs.
///
/// # Safety
/// From `create_upper_paths_hook` for UPPERREL_GROUP_AGG, on the backend thread: `root`,
/// `input_rel` and `output_rel` are the planner's live nodes and `extra` that stage's
/// GroupPathExtraData.
pub unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    input_rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
) {
    // SAFETY: `root`, the relations and `extra` are live (this fn's contract); `input_rel`
    // is checked to be a base relation before its relid indexes simple_rte_array, and the
    // table of a plain RTE_RELATION is locked by the query, so table_open with NoLock is
    // valid; it is closed before returning (an ERROR in between releases it at abort).
    unsafe {
        // The fold is a columnar scan too: `enable_columnar_scan = off` rules it out.
        if !super::ENABLE_VECTOR_AGG.get() || !super::ENABLE_COLUMNAR_SCAN.get() {
            return;
        }
        let parse = (*root).parse;
        if (*input_rel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
            || !(*parse).groupingSets.is_null()
            || !(*input_rel).lateral_relids.is_null()
            || (*extra).patype != pg_sys::PartitionwiseAggregateType::PARTITIONWISE_AGGREGATE_NONE
        {
            return;
        }
        if !(*parse).groupClause.is_null() && !super::ENABLE_GROUPED_VECTOR_AGG.get() {
            return;
        }
        let rte = *(*root).simple_rte_array.add((*input_rel).relid as usize);
        if !scanned_plainly(rte) {
            return;
        }
        let relation = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
        if am::is_columnar(relation) {
            let mut pages = None;
            if let Some(shape) = eligible(root, input_rel, output_rel, extra, relation, false) {
                add_path(root, input_rel, output_rel, relation, shape, None, &mut pages);
            }
            // A scan whose kept row groups are too small for workers (core's rule for a
            // table) gets no parallel path: planning it was a good share of a short query.
            if pages.is_none_or(|p| participants(input_rel, p, true).is_some()) {
                add_parallel_path(root, input_rel, output_rel, extra, relation);
            }
        }
        pg_sys::table_close(relation, pg_sys::NoLock as i32);
    }
}

/// The parallel plan: Finalize Aggregate over a Gather of partial ColumnarAggs, each
/// folding the row groups its process claims into the aggregates' transition states.
/// Core makes the partial grouping stage's relation (and its target, the partial
/// aggregates) when it plans its own partial aggregation.
unsafe fn add_parallel_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    relation: pg_sys::Relation,
) {
    // SAFETY: `root`, `rel`, `output_rel` and `extra` are the planner's live nodes and
    // `relation` the open, locked relation of `rel` (from `add_paths`); fetch_upper_rel
    // returns a live RelOptInfo with a reltarget, and the paths made here are palloc'd in the
    // planner's memory context, which add_path takes over.
    unsafe {
        let flags = (*extra).flags as u32;
        let grouped = !(*(*root).parse).groupClause.is_null();
        if !super::ENABLE_PARALLEL_VECTOR_AGG.get()
            || !(*output_rel).consider_parallel
            || (*rel).partial_pathlist.is_null()
            || !(*extra).partial_costs_set
            || flags & pg_sys::GROUPING_CAN_PARTIAL_AGG == 0
            || (grouped && flags & pg_sys::GROUPING_CAN_USE_HASH == 0)
        {
            return;
        }
        let partial_rel = pg_sys::fetch_upper_rel(
            root,
            pg_sys::UpperRelationKind::UPPERREL_PARTIAL_GROUP_AGG,
            (*output_rel).relids,
        );
        if (*(*partial_rel).reltarget).exprs.is_null() {
            return;
        }
        let Some(shape) = eligible(root, rel, partial_rel, extra, relation, true) else { return };
        let groups =
            estimate_groups(root, relation, &shape.plan, &shape.key_exprs, &shape.pushdown, (*rel).rows);
        let Some(partial) = add_path(root, rel, partial_rel, relation, shape, Some(output_rel), &mut None)
        else {
            return;
        };
        // Each participant sends its groups (as core's gather_grouping_paths counts them).
        let mut gathered = (*partial).rows * (*partial).parallel_workers as f64;
        let gather = pg_sys::create_gather_path(
            root,
            partial_rel,
            partial,
            (*partial_rel).reltarget,
            std::ptr::null_mut(),
            &mut gathered,
        );
        let strategy = if grouped { pg_sys::AggStrategy::AGG_HASHED } else { pg_sys::AggStrategy::AGG_PLAIN };
        let finalize = pg_sys::create_agg_path(
            root,
            output_rel,
            gather as *mut pg_sys::Path,
            (*output_rel).reltarget,
            strategy,
            pg_sys::AggSplit::AGGSPLIT_FINAL_DESERIAL,
            (*(*root).parse).groupClause,
            (*extra).havingQual as *mut pg_sys::List,
            &(*extra).agg_final_costs,
            groups,
        );
        pg_sys::add_path(output_rel, finalize as *mut pg_sys::Path);
    }
}

/// Groups that `rows` rows make under the plan's keys. Core's estimate takes
/// `date_trunc(unit, ts)` to have as many values as `ts`; a time bucket key has instead
/// as many as buckets span the column's values in the vectors the filter keeps (zone
/// maps), as a product with the other keys' estimate.
unsafe fn estimate_groups(
    root: *mut pg_sys::PlannerInfo,
    relation: pg_sys::Relation,
    plan: &AggPlan,
    key_exprs: &[*mut pg_sys::Node],
    pushdown: &quals::Pushdown,
    rows: f64,
) -> f64 {
    if plan.keys.is_empty() {
        return 1.0;
    }
    let filter = pushdown.filter.as_ref().map(|f| (f, &pushdown.operands[..]));
    let mut buckets = 1.0;
    let mut others = Vec::new();
    for (key, &expr) in plan.keys.iter().zip(key_exprs) {
        let width = match key.kind {
            KeyKind::Value
            | KeyKind::Bpchar
            | KeyKind::Numeric
            | KeyKind::Extract { .. }
            | KeyKind::Computed => None,
            KeyKind::Trunc(unit) | KeyKind::TruncTz(unit) => Some(unit_micros(unit)),
            KeyKind::Bin { stride, .. } => Some(stride as f64),
        };
        // SAFETY: `root` is live and `relation` open and locked, the filter's operands
        // expressions of this query (callers' contract: from `add_path`).
        match width.and_then(|w| Some((w, unsafe { kept_range(root, relation, filter, key.att) }?))) {
            Some((w, (lo, hi))) => buckets *= ((hi as f64 - lo as f64) / w.max(1.0)).floor() + 1.0,
            None => others.push(expr),
        }
    }
    let rest = if others.is_empty() {
        1.0
    } else {
        // SAFETY: `root` is the live PlannerInfo and the key expressions are this
        // query's group keys (callers' contract); the list is palloc'd in the current
        // (planner) memory context.
        unsafe {
            let exprs = pg_list::from_ptrs(others.iter().copied());
            pg_sys::estimate_num_groups(root, exprs, rows, std::ptr::null_mut(), std::ptr::null_mut())
        }
    };
    (buckets * rest).clamp(1.0, rows.max(1.0))
}

/// A date_trunc unit's length in microseconds (months and longer on average).
fn unit_micros(unit: TruncUnit) -> f64 {
    const DAY: f64 = 86_400e6;
    match unit {
        TruncUnit::Microseconds => 1.0,
        TruncUnit::Milliseconds => 1e3,
        TruncUnit::Second => 1e6,
        TruncUnit::Minute => 60e6,
        TruncUnit::Hour => 3_600e6,
        TruncUnit::Day => DAY,
        TruncUnit::Week => 7.0 * DAY,
        TruncUnit::Month => 30.44 * DAY,
        TruncUnit::Quarter => 91.31 * DAY,
        TruncUnit::Year => 365.25 * DAY,
        TruncUnit::Decade => 3_652.5 * DAY,
        TruncUnit::Century => 36_525.0 * DAY,
        TruncUnit::Millennium => 365_250.0 * DAY,
    }
}

/// What an eligible query folds.
struct Shape {
    plan: AggPlan,
    /// The scan tuple: the key expressions, then the Aggrefs.
    key_exprs: Vec<*mut pg_sys::Node>,
    aggrefs: Vec<*mut pg_sys::Aggref>,
    pushdown: quals::Pushdown,
    /// The scan's operands, then those of the aggregates' FILTERs.
    operands: Vec<*mut pg_sys::Node>,
    having: *mut pg_sys::List,
}

unsafe fn eligible(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    relation: pg_sys::Relation,
    partial: bool,
) -> Option<Shape> {
    // SAFETY: `root`, `rel`, `output_rel` and `extra` are the planner's live nodes and
    // `relation` the open, locked relation of `rel` (from `add_paths` / `add_parallel_path`):
    // rd_att is valid, every group clause's tleSortGroupRef names an entry of processed_tlist,
    // and the target and HAVING are valid trees.
    unsafe {
        let relid = (*rel).relid;
        let kinds = datum::column_kinds((*relation).rd_att);
        // Every WHERE clause is evaluated by the scan, or the fold cannot run.
        let pushdown = pushed_entirely(root, rel)?;
        let mut operands = pushdown.operands.clone();
        // Group keys.
        let parse = (*root).parse;
        let tlist = (*root).processed_tlist;
        let mut keys = Vec::new();
        let mut key_exprs = Vec::new();
        for sgc in pg_list::ptrs::<pg_sys::SortGroupClause>((*parse).groupClause) {
            let tle = pg_sys::get_sortgroupref_tle((*sgc).tleSortGroupRef, tlist);
            let expr = (*tle).expr as *mut pg_sys::Node;
            let mut conditions =
                agg_args::Conditions { root, rel, operands: &mut operands, filter: quals::translate_filter };
            keys.push(group_key(expr, (*sgc).eqop, relid, &kinds, Some(&mut conditions))?);
            key_exprs.push(expr);
        }
        if keys.len() > MAX_KEYS {
            return None;
        }
        // The target (and HAVING) may use the keys and aggregates, and nothing else of the
        // relation's rows.
        let target = (*(*output_rel).reltarget).exprs;
        let having = if partial { std::ptr::null_mut() } else { (*extra).havingQual as *mut pg_sys::List };
        let aggrefs =
            covered_aggrefs(&key_exprs, [target as *mut pg_sys::Node, having as *mut pg_sys::Node])?;
        let mut aggs = Vec::new();
        for &aggref in &aggrefs {
            aggs.push(aggregate(root, rel, aggref, &kinds, &mut operands)?);
        }
        if aggs.is_empty() && keys.is_empty() {
            return None;
        }
        let plan = AggPlan { keys, aggs, partial, having: Vec::new() };
        let mut shape = Shape { plan, key_exprs, aggrefs, pushdown, operands, having };
        shape.plan.having = having_tests(&shape);
        Some(shape)
    }
}

/// Adds the ColumnarAgg path for `shape` to `output_rel`; for a partial one
/// (`final_rel`: the grouping stage it feeds), returns it instead, for a Gather.
/// `scan_pages` gets the pages of the row groups the zone maps keep.
unsafe fn add_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    shape: Shape,
    final_rel: Option<*mut pg_sys::RelOptInfo>,
    scan_pages: &mut Option<f64>,
) -> Option<*mut pg_sys::Path> {
    let partial = final_rel.is_some();
    let attributes = columns_read(&shape);
    let params = super::cost_params();
    // SAFETY: `root` and `rel` are the planner's live nodes and `relation` the open,
    // locked relation of `rel` (from `add_paths` / `add_parallel_path`), and the pushdown
    // was made for `rel`, as `scan_input` requires.
    let (scan, rows) = unsafe { scan_input(root, rel, relation, &shape, &attributes) };
    *scan_pages = Some(scan.pages * scan.zone_fraction);
    // SAFETY: `rel` is the planner's live base relation.
    let (workers, divisor, speedup, startup) = unsafe { participants(rel, scan.pages, partial) }?;
    let rows_in = (rows / divisor).max(1.0);
    // SAFETY: `root` is the live PlannerInfo and the shape's keys and Aggrefs are this
    // query's (from `eligible`).
    if !unsafe { distinct_sets_fit(root, &shape, rows_in) } {
        return None;
    }
    // SAFETY: `root` is the live PlannerInfo, `relation` open and locked, and the keys,
    // pushdown and HAVING are this query's (from `eligible`).
    let (groups, having, kept) = unsafe {
        let groups = estimate_groups(root, relation, &shape.plan, &shape.key_exprs, &shape.pushdown, rows_in);
        let mut having = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut having, shape.having, root);
        (groups, having, having_share(root, relation, &shape, rows_in / groups))
    };
    let input = AggInput {
        scan,
        aggs: shape.plan.aggs.len(),
        keys: shape.plan.keys.len(),
        groups,
        having_per_group: having.per_tuple,
    };
    let c = cost::columnar_agg_components(&input, &params);
    let passes = fold_passes(&shape.plan, groups, partial);
    let metadata = params.metadata_startup();
    let total = (c.io + c.cpu() / speedup) * passes + c.output + having.startup + startup + metadata;
    // What core offers for the whole grouping stage, for EXPLAIN VERBOSE.
    // SAFETY: the grouping stage's relation is live (from `add_paths` / `add_parallel_path`).
    let core = unsafe { cheapest_total(final_rel.unwrap_or(output_rel)) };
    // SAFETY: `rel` is live and `relation` its open, locked relation; the shape's
    // expressions are this query's, over `rel` (from `eligible`).
    let (relid, explain) = unsafe {
        let relid = (*rel).relid;
        let mut explain =
            explain_lines(relation, &shape, &attributes, &c, metadata, total, core, groups, passes, partial);
        if !shape.having.is_null() {
            explain.push(("+Having Keeps".into(), format!("{kept:.3e} of groups")));
        }
        (relid, explain)
    };
    let analysis = upper_scan(relid, shape, &attributes, groups, explain);
    let rows = (groups * kept).clamp(1.0, groups.max(1.0));
    // SAFETY: `rel` and `output_rel` are the planner's live nodes.
    unsafe { offer(rel, output_rel, analysis, rows, total, workers, partial) }
}

/// Whether the values count(DISTINCT col) keeps, one set for all groups, fit in
/// `work_mem` × `hash_mem_multiplier` (core's sort spills to disk; the fold's set does
/// not, so a bigger one is left to core).
///
/// # Safety
/// Backend thread, while planning: `root` is the live PlannerInfo and the shape's keys
/// and Aggrefs are this query's.
unsafe fn distinct_sets_fit(root: *mut pg_sys::PlannerInfo, shape: &Shape, rows: f64) -> bool {
    // SAFETY: the shape's Aggrefs are valid (this fn's contract), a count(DISTINCT)'s
    // args one TargetEntry; the list is palloc'd in the planner's memory context.
    unsafe {
        let limit = pg_sys::work_mem as f64 * 1024.0 * pg_sys::hash_mem_multiplier;
        let mut bytes = 0.0;
        for (spec, &aggref) in shape.plan.aggs.iter().zip(&shape.aggrefs) {
            if spec.func != AggFunc::CountDistinct {
                continue;
            }
            let Some(tle) = pg_list::ptrs::<pg_sys::TargetEntry>((*aggref).args).next() else { return false };
            let exprs =
                pg_list::from_ptrs(shape.key_exprs.iter().copied().chain([(*tle).expr as *mut pg_sys::Node]));
            let pairs =
                pg_sys::estimate_num_groups(root, exprs, rows, std::ptr::null_mut(), std::ptr::null_mut());
            // A set entry: the group, the value (or a boxed copy of it), hash table slack.
            bytes += pairs * 48.0;
        }
        bytes <= limit
    }
}

/// The share of groups HAVING keeps: each test `aggregate op constant` on a plain
/// column's sum, avg, min or max or on count(*) estimated from the column's statistics
/// and the rows per group (`having_selectivity`), any other test as core estimates it
/// (a flat 1/3 for most), the tests taken as independent.
///
/// # Safety
/// Backend thread, while planning: `root` is the live PlannerInfo, `relation` the open,
/// locked relation the shape was made for, and the shape's HAVING and Aggrefs are this
/// query's.
unsafe fn having_share(
    root: *mut pg_sys::PlannerInfo,
    relation: pg_sys::Relation,
    shape: &Shape,
    rows_per_group: f64,
) -> f64 {
    if shape.having.is_null() {
        return 1.0;
    }
    // SAFETY: HAVING is a valid tree of this query (this fn's contract): an implicit-AND
    // List of clauses, or a single clause; lists made here are palloc'd in the planner's
    // memory context.
    unsafe {
        let clauses = having_clauses(shape);
        let mut share = 1.0;
        for clause in clauses {
            share *= match having_test_share(relation, shape, clause, rows_per_group) {
                Some(s) => s,
                None => pg_sys::clauselist_selectivity(
                    root,
                    pg_list::from_ptrs([clause]),
                    0,
                    pg_sys::JoinType::JOIN_INNER,
                    std::ptr::null_mut(),
                ),
            };
        }
        share.clamp(0.0, 1.0)
    }
}

/// The share of groups one HAVING clause keeps, when it is `aggregate op constant` (or
/// the other way round) with an aggregate the model knows.
///
/// # Safety
/// As `having_share`; `clause` is one of its clauses.
unsafe fn having_test_share(
    relation: pg_sys::Relation,
    shape: &Shape,
    clause: *mut pg_sys::Node,
    rows_per_group: f64,
) -> Option<f64> {
    // SAFETY: as this fn's contract says (`having_comparison`'s).
    let (i, cmp, c) = unsafe { having_comparison(shape, clause) }?;
    let spec = &shape.plan.aggs[i];
    if spec.filter.is_some() {
        return None;
    }
    // SAFETY: `relation` is open and locked (this fn's contract).
    unsafe {
        let stat = match spec.func {
            AggFunc::CountStar => GroupStat::Rows,
            AggFunc::Sum => GroupStat::Sum,
            AggFunc::Avg => GroupStat::Avg,
            AggFunc::Min => GroupStat::Min,
            AggFunc::Max => GroupStat::Max,
            _ => return None,
        };
        let values = match (stat, spec.att, &spec.expr) {
            (GroupStat::Rows, _, _) => None,
            (_, Some(att), None) => {
                Some(column_stats::value_distribution((*relation).rd_id, att as i16 + 1)?)
            }
            _ => return None,
        };
        having_selectivity::selectivity(stat, cmp, c, values.as_ref(), rows_per_group)
    }
}

/// A HAVING clause `aggregate op constant` (or the other way round) with one of the
/// shape's aggregates and a constant read as a number: (the aggregate's index, the
/// operator with the aggregate on its left, the constant).
///
/// # Safety
/// `clause` is a valid expression of this query, and the shape's Aggrefs are its.
unsafe fn having_comparison(shape: &Shape, clause: *mut pg_sys::Node) -> Option<(usize, CmpOp, f64)> {
    // SAFETY: `clause` is a valid expression of this query (this fn's contract): an
    // OpExpr's args list holds valid nodes; the shape's Aggrefs are valid nodes, and
    // equal() compares two valid trees.
    unsafe {
        if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = clause as *mut pg_sys::OpExpr;
        let args: Vec<*mut pg_sys::Node> = pg_list::ptrs::<pg_sys::Node>((*op).args).collect();
        let [left, right] = args[..] else { return None };
        let is_const = |n: *mut pg_sys::Node| n.is_null() || (*n).type_ == pg_sys::NodeTag::T_Const;
        let (agg, constant, flipped) = if is_const(right) {
            (left, right as *mut pg_sys::Const, false)
        } else if is_const(left) {
            (right, left as *mut pg_sys::Const, true)
        } else {
            return None;
        };
        if constant.is_null() || (*constant).constisnull {
            return None;
        }
        let c = column_stats::number((*constant).constvalue, (*constant).consttype)?;
        // The operator as its btree family reads it, the aggregate's type on the left.
        let cmp = quals::btree_op((*op).opno, pg_sys::exprType(agg))?;
        let cmp = if flipped { cmp.commute() } else { cmp };
        let i = shape.aggrefs.iter().position(|&a| pg_sys::equal(a as *const _, agg as *const _))?;
        Some((i, cmp, c))
    }
}

/// The clauses of the shape's HAVING (non-NULL): an implicit-AND List of clauses, or
/// a single clause.
///
/// # Safety
/// HAVING is a valid tree of this query.
unsafe fn having_clauses(shape: &Shape) -> Vec<*mut pg_sys::Node> {
    // SAFETY: this fn's contract: a T_List tag means a List of clause nodes.
    unsafe {
        let node = shape.having as *mut pg_sys::Node;
        if (*node).type_ == pg_sys::NodeTag::T_List {
            pg_list::ptrs::<pg_sys::Node>(shape.having).collect()
        } else {
            vec![node]
        }
    }
}

/// The HAVING tests the fold checks itself (`AggPlan::having`): comparisons of a count,
/// or of a sum, avg, min or max of numbers, with a constant. Core's HAVING still checks
/// every row the fold makes, so a test here only has to keep every group that passes.
///
/// # Safety
/// As `having_comparison`, for the shape's HAVING.
unsafe fn having_tests(shape: &Shape) -> Vec<HavingTest> {
    if shape.having.is_null() || shape.plan.partial {
        return Vec::new();
    }
    // SAFETY: HAVING is a valid tree of this query (this fn's contract): an implicit-AND
    // List of clauses, or a single clause.
    unsafe {
        let clauses = having_clauses(shape);
        clauses
            .into_iter()
            .filter_map(|clause| having_comparison(shape, clause))
            .filter(|&(i, _, _)| {
                let spec = &shape.plan.aggs[i];
                use crate::exec::agg::spec::InputType::*;
                match spec.func {
                    AggFunc::CountStar | AggFunc::Count | AggFunc::CountDistinct => true,
                    AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max => {
                        matches!(spec.input, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric)
                    }
                    _ => false,
                }
            })
            .map(|(agg, cmp, value)| HavingTest { agg, cmp, value })
            .collect()
    }
}

/// The columns the fold reads: its keys' and aggregates', and the pushed filter's.
fn columns_read(shape: &Shape) -> Vec<usize> {
    let mut attributes = shape.plan.attributes();
    if let Some(f) = &shape.pushdown.filter {
        attributes.extend(f.attributes());
        attributes.sort_unstable();
        attributes.dedup();
    }
    attributes
}

/// The scan under the fold, priced from the relation's sizes, zone maps and filter;
/// with the rows the relation yields.
///
/// # Safety
/// `root` and `rel` are the planner's live nodes, `relation` the open, locked relation of
/// `rel`, and `shape`'s pushdown was made for `rel`.
unsafe fn scan_input(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    shape: &Shape,
    attributes: &[usize],
) -> (ScanInput, f64) {
    // SAFETY: as this fn's contract says, so rd_att is valid and its zone maps and column
    // sizes may be read.
    let (bytes, decode, pruning, measured, pages, tuples, rows) = unsafe {
        let natts = (*(*relation).rd_att).natts as usize;
        let bytes = plan_sizes::column_bytes(relation, natts);
        let decode = DecodeCosts::of(relation, &bytes, (*rel).tuples);
        let pruning = match &shape.pushdown.filter {
            Some(f) => plan_time_pruning(root, relation, f, &shape.pushdown.operands),
            None => Pruning::none(rel),
        };
        let measured = shape.pushdown.measure(root, rel);
        (bytes, decode, pruning, measured, (*rel).pages as f64, (*rel).tuples, (*rel).rows)
    };
    let (filter_columns, filter_tests, selectivity) = measured;
    let filter_attributes = shape.pushdown.filter.as_ref().map_or_else(Vec::new, |f| f.attributes());
    let decode = decode.of_scan(attributes.iter().copied(), &filter_attributes);
    let scan = ScanInput {
        zone_fraction: pruning.row_fraction,
        pages,
        bytes_all: bytes.iter().sum::<u64>() as f64,
        bytes_read: attributes.iter().map(|&a| bytes[a]).sum::<u64>() as f64,
        rows: tuples,
        columns_read: attributes.len(),
        filter_decode: decode.filter,
        other_decode: decode.other,
        other_whole: decode.other_whole,
        qual_per_row: 0.0,
        filter_columns,
        filter_tests,
        filter_selectivity: selectivity,
    };
    (scan, rows)
}

/// Parallel: the workers, the share of the rows each participant folds (the
/// divisor), how many times faster than serial they fold together, and what starting
/// the workers costs; None if a partial fold gets no worker. A serial fold is
/// (0, 1.0, 1.0, 0.0).
///
/// # Safety
/// `rel` is the planner's live base relation; on the backend thread (the parallel GUCs).
unsafe fn participants(
    rel: *mut pg_sys::RelOptInfo,
    pages: f64,
    partial: bool,
) -> Option<(i32, f64, f64, f64)> {
    if !partial {
        return Some((0, 1.0, 1.0, 0.0));
    }
    // SAFETY: as this fn's contract says.
    unsafe {
        let w = super::parallel_workers(rel, pages);
        if w <= 0 {
            return None;
        }
        let p = super::parallelism(w);
        Some((w, p.share, p.speedup, p.startup))
    }
}

/// Memory: groups whose states exceed work_mem (times hash_mem_multiplier, as for
/// core's hash aggregate) make a serial fold rescan the table in passes, each folding
/// a share of the keys (exec::columnar_agg); a partial one flushes its groups early.
fn fold_passes(plan: &AggPlan, groups: f64, partial: bool) -> f64 {
    let per_group: usize =
        plan.aggs.iter().map(AggSpec::bytes_per_group).sum::<usize>() + 48 * plan.keys.len();
    // SAFETY: PostgreSQL's memory GUCs, read on the backend thread.
    let limit = unsafe { pg_sys::work_mem as f64 * 1024.0 * pg_sys::hash_mem_multiplier };
    let state_bytes = groups * per_group as f64;
    if partial || state_bytes <= limit {
        1.0
    } else {
        ((state_bytes / (limit * 0.7)).ceil() as u64).next_power_of_two() as f64
    }
}

/// The total cost of the cheapest path `rel` has (infinite if none).
///
/// # Safety
/// `rel` is a live RelOptInfo, its pathlist a list of live Paths.
unsafe fn cheapest_total(rel: *mut pg_sys::RelOptInfo) -> f64 {
    // SAFETY: as this fn's contract says.
    unsafe {
        pg_list::ptrs::<pg_sys::Path>((*rel).pathlist).map(|p| (*p).total_cost).fold(f64::INFINITY, f64::min)
    }
}

/// What the plan needs: the base relation, the plan, the scan tuple, HAVING.
fn upper_scan(
    relid: u32,
    shape: Shape,
    attributes: &[usize],
    groups: f64,
    explain: Vec<(String, String)>,
) -> UpperScan<AggScanPlan> {
    let scan_plan = ScanPlan {
        attnums: attributes.iter().map(|&a| a as i32 + 1).collect(),
        output: Vec::new(),
        zone_predicates: Vec::new(),
        filter: shape.pushdown.filter,
        zone_quals: 0,
        pushed_quals: 0,
        explain: Vec::new(),
        join_filter: None,
    };
    let scan_tuple: Vec<*mut pg_sys::Node> = shape
        .key_exprs
        .iter()
        .copied()
        .chain(shape.aggrefs.iter().map(|&a| a as *mut pg_sys::Node))
        .collect();
    // The pushed clauses, for EXPLAIN's "Pushed Filter" only.
    let filter_shown = (!shape.pushdown.pushed.is_empty()).then(|| {
        // SAFETY: the pushed clauses are live RestrictInfos of this query (from `eligible`); the
        // list and its AND are palloc'd in the planner's memory context.
        let e = unsafe {
            let clauses = pg_list::from_ptrs(shape.pushdown.pushed.iter().map(|&ri| (*ri).clause));
            pg_sys::make_ands_explicit(clauses) as *mut pg_sys::Node
        };
        (relid, e)
    });
    let private =
        AggScanPlan { scan: scan_plan, agg: shape.plan, groups, explain, filter_shown, probe: None };
    UpperScan { relid, private, scan_tuple, having: shape.having, exprs: shape.operands }
}

/// Makes the ColumnarAgg path and adds it to `output_rel`, or, partial, returns it.
///
/// # Safety
/// `rel` and `output_rel` are the planner's live nodes, in the planner's memory context.
unsafe fn offer(
    rel: *mut pg_sys::RelOptInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    analysis: UpperScan<AggScanPlan>,
    rows: f64,
    total: f64,
    workers: i32,
    partial: bool,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: `rel` and `output_rel` are the planner's live nodes; `custompath::new`
    // returns a fresh CustomPath in the planner's memory context, which we fill in and
    // add_path takes over (or the caller, for a partial path).
    unsafe {
        let path =
            custompath::new::<AggPath>(output_rel, (*output_rel).reltarget, rows, total, total, analysis);
        (*path).path.parallel_safe = (*rel).consider_parallel && (*output_rel).consider_parallel;
        (*path).path.parallel_aware = partial;
        (*path).path.parallel_workers = workers;
        if partial {
            return Some(path as *mut pg_sys::Path);
        }
        pg_sys::add_path(output_rel, path as *mut pg_sys::Path);
    }
    None
}

/// What EXPLAIN shows of the plan: decisions always, costs with VERBOSE ('+').
#[allow(clippy::too_many_arguments)]
unsafe fn explain_lines(
    relation: pg_sys::Relation,
    shape: &Shape,
    attributes: &[usize],
    c: &cost::AggCost,
    metadata: f64,
    total: f64,
    core: f64,
    groups: f64,
    passes: f64,
    partial: bool,
) -> Vec<(String, String)> {
    // The expressions are deparsed at EXPLAIN time, from the plan (exec::columnar_agg).
    let deparsed = || DEPARSED_AT_EXPLAIN.to_string();
    let mut out = vec![("Batch Fold".to_string(), "yes".to_string())];
    out.push(("Strategy".into(), strategy(shape).into()));
    if partial {
        out.push(("Partial".into(), "yes (transition states for Finalize Aggregate)".into()));
    }
    out.push(("Aggregates".into(), deparsed()));
    if !shape.key_exprs.is_empty() {
        out.push(("Group Key".into(), deparsed()));
    }
    // SAFETY: `relation` is open and locked (from `add_path`) and `attributes` are its columns.
    out.push(("Columns Read".into(), unsafe { columns_read_text(relation, attributes) }));
    if !shape.pushdown.pushed.is_empty() {
        out.push(("Pushed Filter".into(), deparsed()));
    }
    out.push((
        "+Cost Components".into(),
        format!(
            "io={:.2} decode={:.2} filter={:.2} fold={:.2} group={:.2} output={:.2} metadata={:.2} total={:.2}",
            c.io,
            c.decode,
            c.filter,
            c.fold,
            c.group,
            c.output,
            metadata,
            total
        ),
    ));
    if !shape.plan.keys.is_empty() {
        out.push(("+Estimated Groups".into(), format!("{groups:.0}")));
    }
    if passes > 1.0 {
        out.push(("+Estimated Passes".into(), format!("{passes:.0} (the groups' states exceed work_mem)")));
    }
    let core = if core.is_finite() { format!("{core:.2}") } else { "none".to_string() };
    out.push(("+Core Aggregate Cost".into(), core));
    out
}

/// How the fold answers: by hashing groups, from zone-map metadata alone, or folding.
fn strategy(shape: &Shape) -> &'static str {
    if !shape.plan.keys.is_empty() {
        "hash"
    } else if shape.pushdown.filter.is_none() && shape.plan.aggs.iter().all(AggSpec::zone_answerable) {
        "metadata"
    } else {
        "fold"
    }
}

/// "n of live: names" of the columns the fold reads, out of the relation's live columns.
///
/// # Safety
/// `relation` is open and locked, and `attributes` are indexes of its columns.
unsafe fn columns_read_text(relation: pg_sys::Relation, attributes: &[usize]) -> String {
    // SAFETY: `relation` is open and locked (this fn's contract), so rd_att is valid, and
    // `datum::attr` is asked only for indexes below natts (`attributes` are its columns).
    let (live, names) = unsafe {
        let desc = (*relation).rd_att;
        let live = (0..(*desc).natts as usize).filter(|&i| !datum::attr(desc, i).attisdropped).count();
        let names: Vec<String> = attributes
            .iter()
            .map(|&a| pgrx::name_data_to_str(&datum::attr(desc, a).attname).to_string())
            .collect();
        (live, names)
    };
    if names.is_empty() {
        format!("0 of {live}")
    } else {
        format!("{} of {live}: {}", names.len(), names.join(", "))
    }
}
