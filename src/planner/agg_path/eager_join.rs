//! Eager aggregation below a join (from `hooks`' `create_upper_paths`): for a query
//! that groups by the unique key of one relation joined to a columnar relation on that
//! key, aggregating only the columnar side's columns — TPC-H q13's
//! `customer LEFT JOIN orders ON c_custkey = o_custkey ... GROUP BY c_custkey` — a
//! ColumnarAgg folds the columnar side by its join key first, and each row of the other
//! side (the node's child plan, any path of it) then finds its group by that key
//! (`exec::eager_join`). Core joins every row first and groups the joined rows.
//!
//! Exact only when a group of the join is one row of the other side with the columnar
//! rows of its key: so that side's key has a unique index and, for a LEFT JOIN, is NOT
//! NULL; the join has one clause, `key = key` on integers; the GROUP BY is that key and
//! other columns of the same side. For a LEFT JOIN a row without a match is a group
//! whose aggregates saw one NULL-extended row, so each aggregate must ignore it: no
//! count(*), and an argument that is NULL when its columns are (strict, with a column).

use super::{AggPath, Shape};
use crate::exec::agg::spec::{AggFunc, AggPlan, KeyKind};
use crate::exec::eager_join::ProbePlan;
use crate::pg_list;
use crate::planner::aggregates::{aggregate, covered_aggrefs, group_key};
use crate::planner::cost::{self, AggInput};
use crate::planner::custompath;
use crate::planner::quals;
use crate::planner::relation::{pushed_entirely, scanned_plainly};
use crate::planner::{ENABLE_COLUMNAR_SCAN, ENABLE_EAGER_AGG, ENABLE_GROUPED_VECTOR_AGG, ENABLE_VECTOR_AGG};
use crate::storage::format::zonemap::CmpOp;
use crate::storage::relation::{am, datum};
use pgrx::pg_sys;
use std::ffi::CStr;

/// The join the query groups: which relation's key groups it (`outer`), which one the
/// fold aggregates (`inner`, columnar), and whether it is a LEFT JOIN.
struct Sides {
    outer: *mut pg_sys::RelOptInfo,
    inner: *mut pg_sys::RelOptInfo,
    left: bool,
}

/// `outer.key = inner.key`, the join's one clause.
struct JoinKey {
    outer: *mut pg_sys::Var,
    inner: *mut pg_sys::Var,
}

const INT_TYPES: [pg_sys::Oid; 3] = [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID];

/// Offers the eagerly aggregated join for the grouping stage, if the query has its shape.
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
    if !ENABLE_EAGER_AGG.get()
        || !ENABLE_VECTOR_AGG.get()
        || !ENABLE_GROUPED_VECTOR_AGG.get()
        || !ENABLE_COLUMNAR_SCAN.get()
    {
        return;
    }
    // SAFETY: `root`, the relations and `extra` are live (this fn's contract); the two
    // members of a join relation's relids index simple_rel_array and simple_rte_array;
    // the relations of plain RTE_RELATION entries are locked by the query, so table_open
    // with NoLock is valid, and they are closed before returning (an ERROR in between
    // releases them at abort).
    unsafe {
        let parse = (*root).parse;
        if (*input_rel).reloptkind != pg_sys::RelOptKind::RELOPT_JOINREL
            || (*parse).groupClause.is_null()
            || !(*parse).groupingSets.is_null()
            || !(*input_rel).lateral_relids.is_null()
            || !(*root).placeholder_list.is_null()
            || (*extra).patype != pg_sys::PartitionwiseAggregateType::PARTITIONWISE_AGGREGATE_NONE
            || pg_sys::bms_num_members((*input_rel).relids) != 2
        {
            return;
        }
        for sides in candidates(root, input_rel) {
            let [outer_rte, inner_rte] =
                [sides.outer, sides.inner].map(|r| *(*root).simple_rte_array.add((*r).relid as usize));
            if !scanned_plainly(outer_rte) || !scanned_plainly(inner_rte) {
                continue;
            }
            let inner = pg_sys::table_open((*inner_rte).relid, pg_sys::NoLock as i32);
            if am::is_columnar(inner) {
                let outer = pg_sys::table_open((*outer_rte).relid, pg_sys::NoLock as i32);
                if let Some(path) = path(root, output_rel, extra, &sides, outer, inner) {
                    pg_sys::add_path(output_rel, path);
                }
                pg_sys::table_close(outer, pg_sys::NoLock as i32);
            }
            pg_sys::table_close(inner, pg_sys::NoLock as i32);
        }
    }
}

/// The ways the join of two base relations may be aggregated eagerly: an inner join
/// either way round, a LEFT JOIN with its nullable side folded. None for other joins.
///
/// # Safety
/// `root` and `joinrel` are the planner's live nodes, `joinrel` a join of two base
/// relations.
unsafe fn candidates(root: *mut pg_sys::PlannerInfo, joinrel: *mut pg_sys::RelOptInfo) -> Vec<Sides> {
    // SAFETY: as this fn's contract says: relids has two members, each a base relation of
    // simple_rel_array; join_info_list is a list of SpecialJoinInfos.
    unsafe {
        let a = pg_sys::bms_next_member((*joinrel).relids, -1);
        let b = pg_sys::bms_next_member((*joinrel).relids, a);
        let [ra, rb] = [a, b].map(|i| *(*root).simple_rel_array.add(i as usize));
        let joins: Vec<*mut pg_sys::SpecialJoinInfo> = pg_list::ptrs((*root).join_info_list).collect();
        match joins[..] {
            [] => {
                vec![Sides { outer: ra, inner: rb, left: false }, Sides { outer: rb, inner: ra, left: false }]
            }
            [sj] if (*sj).jointype == pg_sys::JoinType::JOIN_LEFT => {
                let (l, r) = ((*sj).syn_lefthand, (*sj).syn_righthand);
                let single = |set: *mut pg_sys::Bitmapset, rel: *mut pg_sys::RelOptInfo| {
                    pg_sys::bms_num_members(set) == 1 && pg_sys::bms_is_member((*rel).relid as i32, set)
                };
                if single(l, ra) && single(r, rb) {
                    vec![Sides { outer: ra, inner: rb, left: true }]
                } else if single(l, rb) && single(r, ra) {
                    vec![Sides { outer: rb, inner: ra, left: true }]
                } else {
                    Vec::new()
                }
            }
            _ => Vec::new(),
        }
    }
}

/// The join's one clause, `outer.col = inner.col` on integer columns, or None (no
/// clause, several, or another kind).
///
/// # Safety
/// `root` is the live PlannerInfo and `sides` base relations of its query, joined.
unsafe fn join_key(root: *mut pg_sys::PlannerInfo, sides: &Sides) -> Option<JoinKey> {
    // SAFETY: as this fn's contract says: joininfo and the implied equalities are lists of
    // RestrictInfos whose clauses are valid expressions.
    unsafe {
        let (outer, inner) = (sides.outer, sides.inner);
        let joinrelids = pg_sys::bms_union((*outer).relids, (*inner).relids);
        let implied = pg_sys::generate_join_implied_equalities(root, joinrelids, (*outer).relids, inner);
        let clauses: Vec<*mut pg_sys::RestrictInfo> =
            pg_list::ptrs((*outer).joininfo).chain(pg_list::ptrs(implied)).collect();
        let &[ri] = &clauses[..] else { return None };
        // A LEFT JOIN's clause must be its ON clause: a WHERE clause over both sides would
        // drop the rows without a match.
        if sides.left && (*ri).is_pushed_down {
            return None;
        }
        let clause = (*ri).clause as *mut pg_sys::Node;
        if (*clause).type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let op = clause as *mut pg_sys::OpExpr;
        let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*op).args).collect();
        let &[l, r] = &args[..] else { return None };
        // Plain Vars of integer columns, compared by the integers' own equality.
        let int_var = |n: *mut pg_sys::Node, rel: *mut pg_sys::RelOptInfo| {
            quals::as_var(n, (*rel).relid).filter(|&v| {
                v as *mut pg_sys::Node == n && INT_TYPES.contains(&(*v).vartype) && (*v).varattno > 0
            })
        };
        let (ov, iv) = match (int_var(l, outer), int_var(r, inner)) {
            (Some(o), Some(i)) => (o, i),
            _ => (int_var(r, outer)?, int_var(l, inner)?),
        };
        if quals::btree_op((*op).opno, pg_sys::exprType(l)) != Some(CmpOp::Eq) {
            return None;
        }
        Some(JoinKey { outer: ov, inner: iv })
    }
}

/// Whether `rel`'s column `attno` has a unique index of its own (no predicate, not
/// deferred), and, when `not_null`, a NOT NULL constraint: each row is then the only
/// one of its key.
///
/// # Safety
/// `rel` is the planner's live base relation and `relation` its open relation.
unsafe fn unique_key(
    rel: *mut pg_sys::RelOptInfo,
    relation: pg_sys::Relation,
    attno: i16,
    not_null: bool,
) -> bool {
    // SAFETY: as this fn's contract says: indexlist is a list of IndexOptInfos whose
    // indexkeys have nkeycolumns entries; rd_att is the open relation's descriptor.
    unsafe {
        let indexed = pg_list::ptrs::<pg_sys::IndexOptInfo>((*rel).indexlist).any(|ix| {
            (*ix).unique
                && (*ix).immediate
                && (*ix).indpred.is_null()
                && (*ix).nkeycolumns == 1
                && *(*ix).indexkeys == attno as i32
        });
        indexed && (!not_null || datum::attr((*relation).rd_att, attno as usize - 1).attnotnull)
    }
}

/// The eagerly aggregated join's path for `sides`, if the query has its shape and the
/// groups fit in work_mem.
///
/// # Safety
/// As `add_paths`; `outer` and `inner` are the open relations of the sides.
unsafe fn path(
    root: *mut pg_sys::PlannerInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::GroupPathExtraData,
    sides: &Sides,
    outer: pg_sys::Relation,
    inner: pg_sys::Relation,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: as this fn's contract says; the group clauses name entries of
    // processed_tlist; the target, HAVING and Aggrefs are valid trees of this query.
    unsafe {
        let key = join_key(root, sides)?;
        if !unique_key(sides.outer, outer, (*key.outer).varattno, sides.left) {
            return None;
        }
        // GROUP BY: columns of the outer side, its key among them.
        let parse = (*root).parse;
        let mut group_exprs = Vec::new();
        for sgc in pg_list::ptrs::<pg_sys::SortGroupClause>((*parse).groupClause) {
            let tle = pg_sys::get_sortgroupref_tle((*sgc).tleSortGroupRef, (*root).processed_tlist);
            let expr = (*tle).expr as *mut pg_sys::Node;
            let var = quals::as_var(expr, (*sides.outer).relid)?;
            if var as *mut pg_sys::Node != expr || (*var).varattno <= 0 {
                return None;
            }
            group_exprs.push(expr);
        }
        let keyed = |e: &*mut pg_sys::Node| (*(*e as *mut pg_sys::Var)).varattno == (*key.outer).varattno;
        if !group_exprs.iter().any(keyed) {
            return None;
        }
        // The fold: the inner side's WHERE clauses all pushed, grouped by its join key.
        let pushdown = pushed_entirely(root, sides.inner)?;
        let mut operands = pushdown.operands.clone();
        let kinds = datum::column_kinds((*inner).rd_att);
        let inner_relid = (*sides.inner).relid;
        let eq = (*pg_sys::lookup_type_cache((*key.inner).vartype, pg_sys::TYPECACHE_EQ_OPR as i32)).eq_opr;
        let fold_key = group_key(key.inner as *mut pg_sys::Node, eq, inner_relid, &kinds, None)?;
        if fold_key.kind != KeyKind::Value {
            return None;
        }
        // The target and HAVING use the outer side's columns (each group is one outer
        // row, so any of them, as core allows those its primary key determines) and the
        // aggregates of the inner side.
        let outer_path = (*sides.outer).cheapest_total_path;
        if outer_path.is_null() || !(*outer_path).param_info.is_null() {
            return None;
        }
        let outer_columns: Vec<*mut pg_sys::Node> =
            pg_list::ptrs((*(*outer_path).pathtarget).exprs).collect();
        let target = (*(*output_rel).reltarget).exprs as *mut pg_sys::Node;
        let having = (*extra).havingQual;
        let aggrefs = covered_aggrefs(&outer_columns, [target, having])?;
        let inner_only = pg_sys::bms_make_singleton(inner_relid as i32);
        let mut aggs = Vec::new();
        for &aggref in &aggrefs {
            if !pg_sys::bms_is_subset(pg_sys::pull_varnos(root, aggref as *mut pg_sys::Node), inner_only) {
                return None;
            }
            let spec = aggregate(root, sides.inner, aggref, &kinds, &mut operands)?;
            if sides.left && !ignores_null_extension(root, aggref, spec.func) {
                return None;
            }
            aggs.push(spec);
        }
        let plan = AggPlan { keys: vec![fold_key], aggs, partial: false, having: Vec::new() };
        let shape = Shape {
            plan,
            key_exprs: vec![key.inner as *mut pg_sys::Node],
            aggrefs,
            pushdown,
            operands,
            having: having as *mut pg_sys::List,
        };
        offer(root, output_rel, sides, &key, outer, inner, outer_path, shape, &group_exprs, outer_columns)
    }
}

/// Whether an aggregate skips the one NULL-extended row a LEFT JOIN makes for an outer
/// row without a match: it is not count(*), and its argument is strict and reads a
/// column (NULL, then, and every aggregate the fold computes ignores NULL inputs).
///
/// # Safety
/// `root` is the live PlannerInfo and `aggref` a valid Aggref of its query.
unsafe fn ignores_null_extension(
    root: *mut pg_sys::PlannerInfo,
    aggref: *mut pg_sys::Aggref,
    func: AggFunc,
) -> bool {
    // SAFETY: as this fn's contract says: the Aggref's args are a list of TargetEntries.
    unsafe {
        let args = (*aggref).args as *mut pg_sys::Node;
        func != AggFunc::CountStar
            && !pg_sys::contain_nonstrict_functions(args)
            && !pg_sys::bms_is_empty(pg_sys::pull_varnos(root, args))
    }
}

/// Prices the path and makes it: the fold of the inner side, then the outer path, each
/// of its rows one hash probe.
///
/// # Safety
/// As `path`, with the shape and group columns it made.
#[allow(clippy::too_many_arguments)]
unsafe fn offer(
    root: *mut pg_sys::PlannerInfo,
    output_rel: *mut pg_sys::RelOptInfo,
    sides: &Sides,
    key: &JoinKey,
    outer: pg_sys::Relation,
    inner: pg_sys::Relation,
    outer_path: *mut pg_sys::Path,
    shape: Shape,
    group_exprs: &[*mut pg_sys::Node],
    outer_columns: Vec<*mut pg_sys::Node>,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: as this fn's contract says; the outer path's target is a list of the outer
    // side's expressions; names come from the live range table and catalogs.
    unsafe {
        let attributes = super::columns_read(&shape);
        let params = crate::planner::cost_params();
        let (scan, rows) = super::scan_input(root, sides.inner, inner, &shape, &attributes);
        if !super::distinct_sets_fit(root, &shape, rows) {
            return None;
        }
        let groups =
            super::estimate_groups(root, inner, &shape.plan, &shape.key_exprs, &shape.pushdown, rows);
        if super::fold_passes(&shape.plan, groups, false) > 1.0 {
            return None;
        }
        // The rows are made of the child's columns, all of them (its target).
        let position = |e: *mut pg_sys::Node| {
            outer_columns.iter().position(|&t| pg_sys::equal(t as *const _, e as *const _))
        };
        let probe = ProbePlan {
            key: position(key.outer as *mut pg_sys::Node)?,
            key_width: pg_sys::get_typlen((*key.outer).vartype) as u8,
            columns: outer_columns.len(),
            keep_unmatched: sides.left,
        };
        let mut having = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut having, shape.having, root);
        let input = AggInput { scan, aggs: shape.plan.aggs.len(), keys: 1, groups, having_per_group: 0.0 };
        let c = cost::columnar_agg_components(&input, &params);
        let outer_rows = (*outer_path).rows;
        let probing = outer_rows * (params.cpu_tuple_cost + params.cpu_operator_cost + having.per_tuple)
            + having.startup;
        let metadata = params.metadata_startup();
        let fold = c.io + c.cpu() + metadata;
        let total = fold + (*outer_path).total_cost + probing;
        let startup = fold + (*outer_path).startup_cost;
        let rows = if sides.left { outer_rows } else { outer_rows.min(groups) };

        let core = super::cheapest_total(output_rel);
        let mut explain =
            super::explain_lines(inner, &shape, &attributes, &c, metadata, total, core, groups, 1.0, false);
        let names = |rel: *mut pg_sys::RelOptInfo, relation: pg_sys::Relation, var: *mut pg_sys::Var| {
            let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
            let alias = CStr::from_ptr((*(*rte).eref).aliasname).to_string_lossy().into_owned();
            let column = pgrx::name_data_to_str(
                &datum::attr((*relation).rd_att, (*var).varattno as usize - 1).attname,
            )
            .to_string();
            (alias, column)
        };
        let (outer_alias, outer_column) = names(sides.outer, outer, key.outer);
        let (inner_alias, inner_column) = names(sides.inner, inner, key.inner);
        let group_text = group_exprs
            .iter()
            .map(|&e| names(sides.outer, outer, e as *mut pg_sys::Var))
            .map(|(a, c)| format!("{a}.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        for (label, value) in explain.iter_mut() {
            match label.as_str() {
                // The fold's parts (its groups are probed, not output), the child plan's
                // cost and the probes.
                "+Cost Components" => {
                    *value = format!(
                        "io={:.2} decode={:.2} filter={:.2} fold={:.2} group={:.2} metadata={:.2} outer={:.2} probe={:.2} total={:.2}",
                        c.io,
                        c.decode,
                        c.filter,
                        c.fold,
                        c.group,
                        metadata,
                        (*outer_path).total_cost,
                        probing,
                        total
                    )
                }
                "Strategy" => {
                    *value = format!("hash by {inner_alias}.{inner_column}, probed by {outer_alias} rows")
                }
                "Group Key" => *value = group_text.clone(),
                _ => {}
            }
        }
        let join = if sides.left { "Left" } else { "Inner" };
        explain.insert(
            2,
            (
                "Eager Join".into(),
                format!("{join} ({outer_alias}.{outer_column} = {inner_alias}.{inner_column})"),
            ),
        );
        let mut analysis = super::upper_scan((*sides.inner).relid, shape, &attributes, groups, explain);
        analysis.scan_tuple =
            outer_columns.iter().copied().chain(analysis.scan_tuple.iter().skip(1).copied()).collect();
        analysis.private.probe = Some(probe);
        let path =
            custompath::new::<AggPath>(output_rel, (*output_rel).reltarget, rows, startup, total, analysis);
        (*path).custom_paths = pg_list::from_ptrs([outer_path]);
        // Not under a Gather: each participant would fold every group.
        (*path).path.parallel_safe = false;
        Some(path as *mut pg_sys::Path)
    }
}
