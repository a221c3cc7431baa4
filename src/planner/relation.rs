//! What every path of ours asks about the relation it reads, apart from its own node:
//! whether the table is read plainly (`scanned_plainly`), whether its scan evaluates
//! every WHERE clause (`pushed_entirely`, `push_down_enabled`), and what zone maps rule
//! out of a pushed filter at plan time (`plan_time_pruning`, `kept_range`).

use super::quals;
use crate::exec::filter::operands;
use crate::exec::filter::plan::{FilterPlan, OperandValue};
use crate::exec::filter::{zone, Filter};
use crate::storage::format::layout::VECTOR_ROWS;
use crate::storage::format::zonemap::Verdict;
use crate::storage::{read::plan_sizes, relation::options};
use pgrx::pg_sys;
use std::cell::RefCell;
use std::rc::Rc;

/// Whether range table entry `rte` is a table read plainly: not an inheritance parent
/// (`rte->inh`: an append relation, whose paths are Appends over its members, the
/// parent's own rows a member with `inh` off; a scan of the parent's relation alone
/// would lose the children's rows), and not TABLESAMPLE (core's Sample Scan uses the
/// table AM's sampling callbacks; a plain scan would read every row).
///
/// # Safety
/// `rte` points to a live RangeTblEntry of the query being planned.
pub unsafe fn scanned_plainly(rte: *mut pg_sys::RangeTblEntry) -> bool {
    // SAFETY: `rte` is a live RangeTblEntry (this fn's contract); only its fields are read.
    unsafe {
        (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION
            && (*rte).relkind as u8 == pg_sys::RELKIND_RELATION
            && !(*rte).inh
            && (*rte).tablesample.is_null()
    }
}

/// What zone maps rule out of a pushed filter at plan time.
#[derive(Clone)]
pub struct Pruning {
    /// Row groups of the table, and those no row can match in.
    pub groups: usize,
    pub pruned: usize,
    /// Share of the rows in vectors that survive.
    pub row_fraction: f64,
    /// Vectors of the table, and those that survive.
    pub vectors: f64,
    pub vectors_kept: f64,
    /// Row groups whose zone maps were checked: all of them, or an evenly spaced sample
    /// (`plan_sizes::ZONE_SAMPLE_GROUPS`) that the counts above are scaled from.
    pub checked: usize,
    /// When the row groups kept were more than `plan_sizes::VECTOR_SAMPLE_GROUPS`: how
    /// many of them had their vectors' zone maps read, and how many were kept (of those
    /// checked); the vector counts above are scaled from them.
    pub vector_sample: Option<(usize, usize)>,
    /// Whether zone maps were consulted (false: nothing is known).
    pub computed: bool,
}

impl Pruning {
    /// Nothing known: every row group and vector may hold matching rows.
    pub(crate) fn none(rel: *mut pg_sys::RelOptInfo) -> Pruning {
        // SAFETY: callers pass the planner's live RelOptInfo of the relation (a base
        // relation being planned); only its `tuples` estimate is read.
        let vectors = unsafe { ((*rel).tuples / VECTOR_ROWS as f64).ceil().max(1.0) };
        Pruning {
            groups: 0,
            pruned: 0,
            row_fraction: 1.0,
            vectors,
            vectors_kept: vectors,
            checked: 0,
            vector_sample: None,
            computed: false,
        }
    }
}

/// Checks `filter`, with the values of its constant operands (stable expressions folded
/// as for estimates), against the zone maps of every row group and vector (cached per
/// backend, see `plan_sizes::group_zones`).
///
/// # Safety
/// Backend thread, while planning: `root` is the live PlannerInfo, `relation` open and
/// locked, `operands` valid expression trees of that query.
pub unsafe fn plan_time_pruning(
    root: *mut pg_sys::PlannerInfo,
    relation: pg_sys::Relation,
    filter: &FilterPlan,
    operands: &[*mut pg_sys::Node],
) -> Pruning {
    // SAFETY: `root`, `operands` and `relation` are live and `relation` open and locked
    // (this fn's contract), so rd_att is valid and its zone maps may be read.
    let (resolved, zones) = unsafe {
        let mut values = estimated_operands(root, operands);
        operands::convert_for_pruning(&mut values, filter);
        let resolved = filter.resolve(&values);
        let natts = (*(*relation).rd_att).natts as usize;
        (resolved, plan_sizes::group_zones(relation, natts, &filter.attributes()))
    };
    // The same filter on the same zone maps (a statement planned again, a join planned
    // with each of its orders) needs no second look at every vector's zone map.
    let known = RECENT_PRUNING.with(|r| {
        r.borrow().iter().find(|(z, f, _)| Rc::ptr_eq(z, &zones) && *f == resolved).map(|(_, _, p)| p.clone())
    });
    if let Some(p) = known {
        return p;
    }
    // The vectors of the row groups the filter may keep, by their chunks' zone maps.
    // SAFETY: planning, on the backend thread inside a transaction.
    unsafe {
        zones.read_vectors_sampled(
            |g| zone::verdict(&resolved, &|att| g.stats(att)) != Verdict::None,
            plan_sizes::VECTOR_SAMPLE_GROUPS,
        )
    };
    let pruning = prune(&zones, &resolved);
    RECENT_PRUNING.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= RECENT_PRUNING_MAX {
            r.remove(0);
        }
        // The zone set is held, so its address is not reused while the entry lives.
        r.push((zones.clone(), resolved, pruning.clone()));
    });
    pruning
}

thread_local! {
    /// The last pruning results, by zone set (a relation's zone maps as last read) and
    /// filter with its values.
    static RECENT_PRUNING: RefCell<Vec<(Rc<plan_sizes::ZoneSet>, Filter, Pruning)>> =
        const { RefCell::new(Vec::new()) };
    /// The last `kept_range` answers.
    static RECENT_RANGES: RefCell<Vec<KeptRange>> = const { RefCell::new(Vec::new()) };
}
const RECENT_PRUNING_MAX: usize = 64;

/// The filter's operands as far as they are known at plan time: stable expressions
/// (`now() - interval '1 h'`, `'2024-01-01'::timestamptz + interval '12 h'`) folded for
/// the estimate, as core's selectivity does; parameters unknown.
unsafe fn estimated_operands(
    root: *mut pg_sys::PlannerInfo,
    operands: &[*mut pg_sys::Node],
) -> Vec<OperandValue> {
    operands
        .iter()
        .map(|&o| {
            // SAFETY: `root` and the operand trees are live (callers' contract);
            // estimate_expression_value returns a valid node, a Const when the tag says
            // so, whose value is of its consttype.
            unsafe {
                let o = pg_sys::estimate_expression_value(root, o);
                if (*o).type_ == pg_sys::NodeTag::T_Const {
                    let c = o as *mut pg_sys::Const;
                    operands::operand_value((*c).consttype, (*c).constvalue, (*c).constisnull)
                } else {
                    OperandValue::Unknown
                }
            }
        })
        .collect()
}

/// The smallest and largest value of integer attribute `att` (0-based) in the vectors
/// that `filter` may leave rows in (every vector without a filter), by zone maps; None
/// if they do not say.
///
/// # Safety
/// Backend thread, while planning: `root` is the live PlannerInfo, `relation` open and
/// locked, the filter's operands valid expression trees of that query.
pub unsafe fn kept_range(
    root: *mut pg_sys::PlannerInfo,
    relation: pg_sys::Relation,
    filter: Option<(&FilterPlan, &[*mut pg_sys::Node])>,
    att: usize,
) -> Option<(i64, i64)> {
    let resolved = filter.map(|(f, operands)| {
        // SAFETY: `root` and the operands are live (this fn's contract); on the backend thread.
        let mut values = unsafe { estimated_operands(root, operands) };
        // SAFETY: on the backend thread, planning.
        unsafe { operands::convert_for_pruning(&mut values, f) };
        f.resolve(&values)
    });
    let mut atts = resolved.as_ref().map_or_else(Vec::new, |f| f.attributes());
    atts.push(att);
    atts.sort_unstable();
    atts.dedup();
    // SAFETY: `relation` is open and locked (this fn's contract), so rd_att is valid and
    // its zone maps may be read.
    let zones = unsafe { plan_sizes::group_zones(relation, (*(*relation).rd_att).natts as usize, &atts) };
    // Each aggregate path of a query asks the same (serial, partial, each grouping): one
    // look at every vector's zone map answers them all.
    let known = RECENT_RANGES.with(|r| {
        r.borrow()
            .iter()
            .find(|k| Rc::ptr_eq(&k.zones, &zones) && k.filter == resolved && k.att == att)
            .map(|k| k.range)
    });
    if let Some(range) = known {
        return range;
    }
    // SAFETY: planning, on the backend thread inside a transaction (this fn's contract).
    unsafe {
        zones.read_vectors(|g| {
            resolved.as_ref().is_none_or(|f| zone::verdict(f, &|a| g.stats(a)) != Verdict::None)
        })
    };
    let range = range_in(&zones, resolved.as_ref(), att);
    RECENT_RANGES.with(|r| {
        let mut r = r.borrow_mut();
        if r.len() >= RECENT_PRUNING_MAX {
            r.remove(0);
        }
        // The zone set is held, so its address is not reused while the entry lives.
        r.push(KeptRange { zones, filter: resolved, att, range });
    });
    range
}

/// A `kept_range` answer: by zone set, filter with its values, and attribute.
struct KeptRange {
    zones: Rc<plan_sizes::ZoneSet>,
    filter: Option<Filter>,
    att: usize,
    range: Option<(i64, i64)>,
}

/// The smallest and largest value of integer attribute `att` in the vectors of `zones`
/// that `resolved` may leave rows in, if the zone maps say.
fn range_in(zones: &plan_sizes::ZoneSet, resolved: Option<&Filter>, att: usize) -> Option<(i64, i64)> {
    let keeps = |stats: &dyn Fn(usize) -> Option<crate::storage::format::zonemap::ZoneStats>| {
        resolved.is_none_or(|f| zone::verdict(f, stats) != Verdict::None)
    };
    let mut range: Option<(i64, i64)> = None;
    for g in zones.groups.iter() {
        if !keeps(&|a: usize| g.stats(a)) {
            continue;
        }
        for (v, stats) in g.vectors(att).enumerate() {
            if !keeps(&|a: usize| g.vector(a, v)) {
                continue;
            }
            match stats.zone {
                crate::storage::format::zonemap::ZoneMap::Int { min, max } => {
                    range = Some(range.map_or((min, max), |(lo, hi)| (lo.min(min), hi.max(max))));
                }
                crate::storage::format::zonemap::ZoneMap::None => {}
                _ => return None,
            }
        }
    }
    range
}

/// Which row groups and vectors the zone maps of `zones` leave to `resolved` (scaled
/// from a sample when there are many: `plan_sizes::ZONE_SAMPLE_GROUPS`).
fn prune(zones: &plan_sizes::ZoneSet, resolved: &Filter) -> Pruning {
    let (mut rows, mut kept_rows, mut pruned) = (0u64, 0u64, 0usize);
    let (mut vectors, mut vectors_kept) = (0usize, 0usize);
    // Kept row groups with their vectors' zone maps read, and those without (past
    // `plan_sizes::VECTOR_SAMPLE_GROUPS`), which keep the share the read ones did.
    let (mut read_groups, mut read_rows, mut read_vectors) = (0usize, 0u64, 0usize);
    let (mut unread_groups, mut unread_rows, mut unread_vectors) = (0usize, 0u64, 0usize);
    for g in zones.groups.iter() {
        rows += g.rows;
        let count = (g.rows as usize).div_ceil(VECTOR_ROWS);
        vectors += count;
        if zone::verdict(resolved, &|att| g.stats(att)) == Verdict::None {
            pruned += 1;
            continue;
        }
        if !g.vectors_read() {
            unread_groups += 1;
            unread_rows += g.rows;
            unread_vectors += count;
            continue;
        }
        read_groups += 1;
        read_rows += g.rows;
        read_vectors += count;
        for v in 0..count {
            let stats = |att: usize| g.vector(att, v);
            if zone::verdict(resolved, &stats) != Verdict::None {
                vectors_kept += 1;
                kept_rows += (g.rows - (v * VECTOR_ROWS) as u64).min(VECTOR_ROWS as u64);
            }
        }
    }
    let share = |kept: f64, of: f64| if of == 0.0 { 1.0 } else { kept / of };
    let kept_rows = kept_rows as f64 + unread_rows as f64 * share(kept_rows as f64, read_rows as f64);
    let vectors_kept =
        vectors_kept as f64 + unread_vectors as f64 * share(vectors_kept as f64, read_vectors as f64);
    let row_fraction = if rows == 0 { 1.0 } else { kept_rows / rows as f64 };
    let (groups, checked) = (zones.total_groups, zones.groups.len());
    let scale = groups as f64 / checked.max(1) as f64;
    Pruning {
        groups,
        pruned: (pruned as f64 * scale).round() as usize,
        row_fraction,
        vectors: (vectors as f64 * scale).round().max(1.0),
        vectors_kept: (vectors_kept * scale).round(),
        checked,
        vector_sample: (unread_groups > 0).then_some((read_groups, read_groups + unread_groups)),
        computed: true,
    }
}

/// The scan's evaluation of every WHERE clause of `rel`, or None if it cannot evaluate
/// them all (or `quals_push_down` is off): what a node that folds or ranks the rows it
/// reads needs, as no executor qual runs below it.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `rel` a
/// base relation.
pub unsafe fn pushed_entirely(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
) -> Option<quals::Pushdown> {
    // SAFETY: `root` and `rel` are the planner's live nodes (this fn's contract), so
    // baserestrictinfo is a valid (possibly NIL) list of RestrictInfos.
    unsafe {
        let clauses = (*rel).baserestrictinfo;
        if clauses.is_null() {
            return Some(quals::Pushdown::none(clauses));
        }
        if !push_down_enabled(root, rel) {
            return None;
        }
        let pushdown = quals::pushdown(root, rel, clauses);
        pushdown.kept.is_empty().then_some(pushdown)
    }
}

/// Whether the scan of `rel` evaluates the quals it can: the table's
/// `quals_push_down`, or the `pgcolumnar.quals_push_down` setting.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes, `rel` a
/// base relation (so `relid` indexes `simple_rte_array`).
pub unsafe fn push_down_enabled(root: *mut pg_sys::PlannerInfo, rel: *mut pg_sys::RelOptInfo) -> bool {
    // SAFETY: `rel` is a base relation of `root` (this fn's contract): simple_rte_array has an
    // entry at its relid, a live RangeTblEntry.
    unsafe {
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        options::quals_push_down((*rte).relid).unwrap_or_else(|| super::QUALS_PUSH_DOWN.get())
    }
}
