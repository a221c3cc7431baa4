//! Join filters (from `hooks`' `set_join_pathlist`): for an inner or semi join whose
//! outer side is a columnar table scanned by a ColumnarScan, with a hash clause
//! `fact.col = inner_expr` on an integer-like column, offer a hash join whose outer
//! ColumnarScan drops the rows whose key is not among the built inner keys
//! (`exec::join_filter`), before decoding its other columns.
//!
//! The decision, in words:
//! - never for a join that must keep unmatched outer rows (LEFT, FULL, ANTI): only
//!   JOIN_INNER and JOIN_SEMI, with the fact table on the outer (probe) side;
//! - the key clause's operator is the btree equality of the column's own integer-like
//!   type (int2/int4/int8 among themselves, date, timestamp, timestamptz), so the key
//!   test is exact on the stored integers;
//! - `fraction`, the share of fact rows with a match (the clause's semi-join
//!   selectivity, from the same statistics the join's row estimate uses), must be at
//!   most `MAX_FRACTION`, and the inner side no larger than the outer;
//! - the hash table must fit in one batch (the filter only uses a complete in-memory
//!   table), and no Parallel Hash (each process builds its own table);
//! - the filtered scan's rows and CPU shrink by `fraction`, it starts after the hash
//!   table is built (its startup cost is at least the inner path's total cost, which the
//!   join then counts once, as its inner side's), and the hash join built on it competes
//!   with core's paths by cost in `add_path`.

use super::scan_path;
use crate::exec::join_filter::JoinFilterPlan;
use crate::pg_list;
use pgrx::pg_sys;

/// A join filter is planned only when at most this share of the fact rows can match.
pub const MAX_FRACTION: f64 = 0.5;

/// Offers the join-filtered hash joins of `outerrel` ⋈ `innerrel` into `joinrel`.
///
/// # Safety
/// From `set_join_pathlist_hook`, on the backend thread: the arguments are the planner's
/// live nodes for one join of `outerrel` with `innerrel`.
pub unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
) {
    // SAFETY: the arguments are the planner's live nodes (this fn's contract): the relations'
    // path lists hold live paths, `extra`'s restrictlist live RestrictInfos, and the paths and
    // lists made here are palloc'd in the planner's memory context; the cost GUCs are read on
    // the backend thread.
    unsafe {
        if !super::ENABLE_JOIN_FILTER.get() || !pg_sys::enable_hashjoin {
            return;
        }
        if !matches!(jointype, pg_sys::JoinType::JOIN_INNER | pg_sys::JoinType::JOIN_SEMI) {
            return;
        }
        if (*outerrel).reloptkind != pg_sys::RelOptKind::RELOPT_BASEREL
            || (*outerrel).rtekind != pg_sys::RTEKind::RTE_RELATION
            || (*innerrel).rows > (*outerrel).rows
        {
            return;
        }
        let Some((hashclauses, key, plan)) = hash_clauses(root, outerrel, innerrel, extra) else { return };
        let inner = (*innerrel).cheapest_total_path;
        if inner.is_null() || !(*inner).param_info.is_null() {
            return;
        }
        let fraction = semi_fraction(root, outerrel, innerrel, extra, key);
        if fraction.is_nan() || fraction > MAX_FRACTION {
            return;
        }
        let params = super::cost_params();
        let build_cost = (*inner).total_cost;
        for path in pg_list::ptrs::<pg_sys::Path>((*outerrel).pathlist) {
            let Some(outer) = scan_path::join_filtered(path, plan.clone(), fraction, build_cost, &params)
            else {
                continue;
            };
            if let Some(hp) = hash_path(root, joinrel, jointype, extra, &outer, inner, hashclauses) {
                pg_sys::add_path(joinrel, hp);
            }
            break;
        }
        // Parallel: each process probes with its own copy of the hash table (a
        // parallel-oblivious hash join over a partial scan), built from the cheapest
        // parallel-safe inner path, as core's partial hash joins.
        if !(*joinrel).consider_parallel {
            return;
        }
        let inner = pg_sys::get_cheapest_parallel_safe_total_inner((*innerrel).pathlist);
        if inner.is_null() {
            return;
        }
        let build_cost = (*inner).total_cost;
        for path in pg_list::ptrs::<pg_sys::Path>((*outerrel).partial_pathlist) {
            let Some(outer) = scan_path::join_filtered(path, plan.clone(), fraction, build_cost, &params)
            else {
                continue;
            };
            if let Some(hp) = hash_path(root, joinrel, jointype, extra, &outer, inner, hashclauses) {
                pg_sys::add_partial_path(joinrel, hp);
            }
            break;
        }
    }
}

/// The hash join of `outer` and `inner` on `hashclauses`, if its table fits in one batch,
/// with the build's cost counted once (as its inner side's).
unsafe fn hash_path(
    root: *mut pg_sys::PlannerInfo,
    joinrel: *mut pg_sys::RelOptInfo,
    jointype: pg_sys::JoinType::Type,
    extra: *mut pg_sys::JoinPathExtraData,
    filtered: &scan_path::JoinFiltered,
    inner: *mut pg_sys::Path,
    hashclauses: *mut pg_sys::List,
) -> Option<*mut pg_sys::Path> {
    // SAFETY: the planner's live nodes (from `add_paths`); core's own costing and path
    // constructor, called as hash_inner_and_outer does (no Parallel Hash, unparameterized).
    unsafe {
        let outer = filtered.path as *mut pg_sys::Path;
        let mut workspace = pg_sys::JoinCostWorkspace::default();
        pg_sys::initial_cost_hashjoin(
            root,
            &mut workspace,
            jointype,
            hashclauses,
            outer,
            inner,
            extra,
            false,
        );
        if workspace.numbatches != 1 {
            return None;
        }
        let path = pg_sys::create_hashjoin_path(
            root,
            joinrel,
            jointype,
            &mut workspace,
            extra,
            outer,
            inner,
            false,
            (*extra).restrictlist,
            std::ptr::null_mut(),
            hashclauses,
        );
        (*path).jpath.path.startup_cost -= filtered.waiting_startup;
        (*path).jpath.path.total_cost -= filtered.waiting_total;
        Some(path as *mut pg_sys::Path)
    }
}

/// The join's hash clauses (as hash_inner_and_outer picks them, each marked with its
/// outer side), the first one whose outer side is an integer-like column of `outerrel`
/// compared by its type's own equality, and that column's join filter plan.
unsafe fn hash_clauses(
    root: *mut pg_sys::PlannerInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::JoinPathExtraData,
) -> Option<(*mut pg_sys::List, *mut pg_sys::RestrictInfo, JoinFilterPlan)> {
    // SAFETY: the planner's live nodes (from `add_paths`): restrictlist holds RestrictInfos
    // whose clauses are OpExprs when hashjoinable; the relids are live Bitmapsets.
    unsafe {
        let mut clauses = Vec::new();
        let mut key = None;
        for ri in pg_list::ptrs::<pg_sys::RestrictInfo>((*extra).restrictlist) {
            if !(*ri).can_join || (*ri).hashjoinoperator == pg_sys::InvalidOid {
                continue;
            }
            if !sides_match(ri, outerrel, innerrel) {
                continue;
            }
            clauses.push(ri);
            if key.is_none() {
                key = key_column(root, outerrel, innerrel, ri).map(|plan| (ri, plan));
            }
        }
        let (ri, plan) = key?;
        Some((pg_list::from_ptrs(clauses), ri, plan))
    }
}

/// Whether `ri`'s sides are one from each relation, marking which is the outer one
/// (core's clause_sides_match_join, static in joinpath.c).
unsafe fn sides_match(
    ri: *mut pg_sys::RestrictInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
) -> bool {
    // SAFETY: live planner nodes (the caller's).
    unsafe {
        let (left, right) = ((*ri).left_relids, (*ri).right_relids);
        if pg_sys::bms_is_subset(left, (*outerrel).relids) && pg_sys::bms_is_subset(right, (*innerrel).relids)
        {
            (*ri).outer_is_left = true;
            true
        } else if pg_sys::bms_is_subset(left, (*innerrel).relids)
            && pg_sys::bms_is_subset(right, (*outerrel).relids)
        {
            (*ri).outer_is_left = false;
            true
        } else {
            false
        }
    }
}

/// The join filter plan of hash clause `ri` if its outer side is a plain column of
/// `outerrel` of an integer-like type, compared by that type's btree equality.
unsafe fn key_column(
    root: *mut pg_sys::PlannerInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    ri: *mut pg_sys::RestrictInfo,
) -> Option<JoinFilterPlan> {
    // SAFETY: `ri` is a live hashjoinable RestrictInfo (from `hash_clauses`), whose clause is
    // a two-argument OpExpr; the catalog lookups run inside the planning transaction.
    unsafe {
        let op = (*ri).clause as *mut pg_sys::OpExpr;
        if (*op).xpr.type_ != pg_sys::NodeTag::T_OpExpr {
            return None;
        }
        let args: Vec<*mut pg_sys::Node> = pg_list::ptrs((*op).args).collect();
        let [left, right] = args[..] else { return None };
        let (outer, inner) = if (*ri).outer_is_left { (left, right) } else { (right, left) };
        if (*outer).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let var = outer as *mut pg_sys::Var;
        if (*var).varno as u32 != (*outerrel).relid || (*var).varattno < 1 || (*var).varlevelsup != 0 {
            return None;
        }
        let (outer_type, inner_type) = ((*var).vartype, pg_sys::exprType(inner));
        if !exact_integer_equality((*op).opno, outer_type, inner_type) {
            return None;
        }
        Some(JoinFilterPlan {
            att: (*var).varattno as usize - 1,
            opno: (*op).opno,
            inner: relation_names(root, innerrel),
        })
    }
}

/// Whether `opno` is the btree equality of `outer_type` with `inner_type` in the
/// default btree family of `outer_type`, for types stored as integers whose equality
/// is equality of those integers.
unsafe fn exact_integer_equality(
    opno: pg_sys::Oid,
    outer_type: pg_sys::Oid,
    inner_type: pg_sys::Oid,
) -> bool {
    let ints = [pg_sys::INT2OID, pg_sys::INT4OID, pg_sys::INT8OID];
    let same_kind = (ints.contains(&outer_type) && ints.contains(&inner_type))
        || (outer_type == inner_type
            && [pg_sys::DATEOID, pg_sys::TIMESTAMPOID, pg_sys::TIMESTAMPTZOID].contains(&outer_type));
    if !same_kind {
        return false;
    }
    // SAFETY: catalog lookups inside the planning transaction, on the backend thread.
    unsafe {
        let opclass = pg_sys::GetDefaultOpClass(outer_type, pg_sys::BTREE_AM_OID);
        if opclass == pg_sys::InvalidOid {
            return false;
        }
        let family = pg_sys::get_opclass_family(opclass);
        pg_sys::get_opfamily_member(family, outer_type, inner_type, pg_sys::BTEqualStrategyNumber as i16)
            == opno
    }
}

/// The share of `outerrel`'s rows whose key has a match in `innerrel` by clause `ri`:
/// its semi-join selectivity, `outerrel` the left side.
unsafe fn semi_fraction(
    root: *mut pg_sys::PlannerInfo,
    outerrel: *mut pg_sys::RelOptInfo,
    innerrel: *mut pg_sys::RelOptInfo,
    extra: *mut pg_sys::JoinPathExtraData,
    ri: *mut pg_sys::RestrictInfo,
) -> f64 {
    // SAFETY: live planner nodes (from `add_paths`); the SpecialJoinInfo is a local copy of
    // the join's, the bare clause (not its RestrictInfo, whose selectivity caches belong to
    // core's estimates) is estimated with it.
    unsafe {
        let mut sj = if (*extra).sjinfo.is_null() {
            pg_sys::SpecialJoinInfo { type_: pg_sys::NodeTag::T_SpecialJoinInfo, ..Default::default() }
        } else {
            *(*extra).sjinfo
        };
        sj.jointype = pg_sys::JoinType::JOIN_SEMI;
        sj.min_lefthand = (*outerrel).relids;
        sj.syn_lefthand = (*outerrel).relids;
        sj.min_righthand = (*innerrel).relids;
        sj.syn_righthand = (*innerrel).relids;
        let clauses = pg_list::from_ptrs([(*ri).clause]);
        pg_sys::clauselist_selectivity(root, clauses, 0, pg_sys::JoinType::JOIN_SEMI, &mut sj).clamp(0.0, 1.0)
    }
}

/// The inner relations' names as the query calls them (their aliases), for EXPLAIN.
unsafe fn relation_names(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> String {
    // SAFETY: live planner nodes; members of `relids` index simple_rte_array (checked against
    // its size), whose entries' eref names are NUL-terminated strings.
    unsafe {
        let mut names = Vec::new();
        let mut member = -1;
        loop {
            member = pg_sys::bms_next_member((*rel).relids, member);
            if member < 0 {
                break;
            }
            if member >= (*root).simple_rel_array_size {
                continue;
            }
            let rte = *(*root).simple_rte_array.add(member as usize);
            if rte.is_null() || (*rte).rtekind == pg_sys::RTEKind::RTE_JOIN || (*rte).eref.is_null() {
                continue;
            }
            names.push(std::ffi::CStr::from_ptr((*(*rte).eref).aliasname).to_string_lossy().into_owned());
        }
        names.join(", ")
    }
}
