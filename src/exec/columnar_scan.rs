//! The `ColumnarScan` custom scan node: reads only the columns a query uses, and
//! evaluates the quals pushed into it on decoded vectors, once (the executor does not
//! check them again). The planner (`planner::scan_path`) decides which columns and
//! quals; this node reads them and shows them in EXPLAIN.

use super::customscan::{
    bytea_const, const_bytes, explain_fields_node, explain_fields_of, explain_planned, CustomScanNode,
    PlanPrivate,
};
use super::filter::join_keys::JoinKeyFilter;
use super::filter::operands::operand_values;
use super::filter::plan::FilterPlan;
use super::filter::pushed::PushedFilter;
use super::filter::Filter;
use super::join_filter::{self, JoinFilterPlan, JoinFilterSource, JoinFiltered, KeysState};
use super::row_group_claims::{
    explain_metadata, publish_tally, read_counters, read_tally, ClaimsRowGroups, SharedTally, Tally,
    READ_SUMS,
};
use super::scan_reader;
use crate::pg_list;
use crate::storage::format::zonemap::ZonePredicate;
use crate::storage::read::reader::Reader;
use crate::storage::relation::datum::attr;
use pgrx::pg_sys;
use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::rc::Rc;

pub const NAME: &CStr = c"PgColumnarScan";

// The per-row path runs under ExecScan without pgrx's per-call guard
// (`CustomScanNode::FAST_ROW`): a row the reader has ready is stored without any call
// into PostgreSQL (`Reader::next_in_place`); the rest goes through the guarded `next`.

/// The next row: the reader's next row of the current vector stored in place, without
/// a call into PostgreSQL; anything else (a new vector, the filter's operands, backward
/// scans, another slot) through the guarded `next`.
unsafe extern "C-unwind" fn next_row(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let css = ss as *mut pg_sys::CustomScanState;
    // SAFETY: ExecScan (from `customscan::exec_fast`) passes the `ss` of this node's CustomScanState,
    // its first field, so `css` is the state `customscan` made for a ColumnarScan, begun:
    // its scan slot and EState are live. `next_in_place` calls nothing that can raise an
    // ERROR, and these frames hold nothing to drop.
    unsafe {
        let node = super::customscan::node::<ColumnarScan>(css);
        let slot = (*ss).ss_ScanTupleSlot;
        let forward = (*(*ss).ps.state).es_direction != pg_sys::ScanDirection::BackwardScanDirection;
        if forward && node.filter_resolved && node.reader.as_mut().is_some_and(|r| r.next_in_place(slot)) {
            return slot;
        }
        super::customscan::next::<ColumnarScan>(ss)
    }
}

/// What the planner decides for a ColumnarScan, kept in its plan.
pub struct ScanPlan {
    /// Attribute numbers (1-based) to decode.
    pub attnums: Vec<i32>,
    /// Those the slot needs (the others only the pushed filter reads).
    pub output: Vec<i32>,
    /// (attribute index, predicate) pairs zone maps check: row groups and vectors they
    /// refute are skipped. Their quals are the plan's `custom_exprs`, for EXPLAIN.
    pub zone_predicates: Vec<(usize, ZonePredicate)>,
    /// The quals the scan evaluates, in its own form; None if it evaluates none.
    pub filter: Option<FilterPlan>,
    /// How many of the plan's `custom_exprs` are, in this order: the zone-map quals
    /// (EXPLAIN), the pushed quals (EXPLAIN, EvalPlanQual rechecks), the operands the
    /// filter names (evaluated when the scan starts).
    pub zone_quals: usize,
    pub pushed_quals: usize,
    /// What the planner decided and weighed, as EXPLAIN fields ((label, text) pairs, a
    /// label starting with '+' only with VERBOSE): the cost components, the pushed
    /// filter's estimated selectivity, the other paths with their costs, the row groups
    /// zone maps pruned at plan time. Empty for the scan inside ColumnarAgg and LastPoint,
    /// which show their own.
    pub explain: Vec<(String, String)>,
    /// The hash join keys this scan drops rows by, when it is the probe side of a hash
    /// join the planner pushed them into (`join_filter`).
    pub join_filter: Option<JoinFilterPlan>,
}

/// Kept as lists of integers and bytea constants, which copyObject and the plan's text
/// form (parallel workers) carry: (attnums, predicate attribute indexes, predicates,
/// [filter] or [], [zone quals, pushed quals], [EXPLAIN fields], output attnums,
/// [[join key attribute, operator], [inner relations]] or []).
impl PlanPrivate for ScanPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: builds the plan's private lists in the planner's current memory context on the
        // backend thread (the trait's contract); every element is a list or Const made here.
        unsafe {
            let atts = pg_list::from_ints(self.zone_predicates.iter().map(|(a, _)| *a as i32));
            let predicates =
                pg_list::from_ptrs(self.zone_predicates.iter().map(|(_, p)| bytea_const(&p.to_bytes())));
            let filter = pg_list::from_ptrs(self.filter.iter().map(|f| bytea_const(&f.to_bytes())));
            let counts = pg_list::from_ints([self.zone_quals as i32, self.pushed_quals as i32]);
            let explain = pg_list::from_ptrs([explain_fields_node(&self.explain)]);
            pg_list::from_ptrs([
                self.attnums.to_list(),
                atts,
                predicates,
                filter,
                counts,
                explain,
                self.output.to_list(),
                join_filter_list(self.join_filter.as_ref()),
            ])
        }
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        // SAFETY: `list` is the custom_private `to_list` made (or its copy, the trait's contract):
        // a pointer list of seven lists, integer lists and lists of bytea Consts as written there.
        unsafe {
            let malformed = || -> ! { pgrx::error!("malformed ColumnarScan plan") };
            let parts: Vec<*mut pg_sys::List> = pg_list::ptrs(list).collect();
            let [attnums, atts, predicates, filter, counts, explain, output, join] = parts[..] else {
                malformed()
            };
            let explain = pg_list::ptrs::<pg_sys::Node>(explain)
                .next()
                .map(|n| explain_fields_of(n))
                .unwrap_or_default();
            let zone_predicates = pg_list::ints(atts)
                .zip(pg_list::ptrs::<pg_sys::Const>(predicates))
                .map(|(att, c)| {
                    (att as usize, ZonePredicate::from_bytes(const_bytes(c)).unwrap_or_else(|| malformed()))
                })
                .collect();
            let filter = pg_list::ptrs::<pg_sys::Const>(filter)
                .next()
                .map(|c| FilterPlan::from_bytes(const_bytes(c)).unwrap_or_else(|| malformed()));
            let counts: Vec<i32> = pg_list::ints(counts).collect();
            let [zone_quals, pushed_quals] = counts[..] else { malformed() };
            ScanPlan {
                attnums: Vec::<i32>::from_list(attnums),
                output: Vec::<i32>::from_list(output),
                zone_predicates,
                filter,
                zone_quals: zone_quals as usize,
                pushed_quals: pushed_quals as usize,
                explain,
                join_filter: join_filter_of(join),
            }
        }
    }
}

/// A join filter's plan as a list (see `ScanPlan`'s `to_list`).
unsafe fn join_filter_list(plan: Option<&JoinFilterPlan>) -> *mut pg_sys::List {
    // SAFETY: builds lists in the current memory context on the backend thread (the caller,
    // `to_list`, has the trait's contract).
    unsafe {
        match plan {
            None => std::ptr::null_mut(),
            Some(p) => pg_list::from_ptrs([
                pg_list::from_ints([p.att as i32, u32::from(p.opno) as i32]) as *mut pg_sys::Node,
                bytea_const(p.inner.as_bytes()),
            ]),
        }
    }
}

/// The join filter `join_filter_list` made into `list`.
unsafe fn join_filter_of(list: *mut pg_sys::List) -> Option<JoinFilterPlan> {
    // SAFETY: `list` is NIL or the two-element list `join_filter_list` made (or its copy).
    unsafe {
        let parts: Vec<*mut pg_sys::Node> = pg_list::ptrs(list).collect();
        let [ints, inner] = parts[..] else { return None };
        let ints: Vec<i32> = pg_list::ints(ints as *mut pg_sys::List).collect();
        let [att, opno] = ints[..] else { pgrx::error!("malformed ColumnarScan plan") };
        Some(JoinFilterPlan {
            att: att as usize,
            opno: pg_sys::Oid::from(opno as u32),
            inner: String::from_utf8_lossy(const_bytes(inner as *mut pg_sys::Const)).into_owned(),
        })
    }
}

/// A ColumnarScan in execution.
pub struct ColumnarScan {
    /// The zone-map predicates, until `begin` hands them to the reader.
    zone_predicates: Vec<(usize, ZonePredicate)>,
    reader: Option<Reader>,
    /// Attribute numbers (1-based) the scan decodes, and those the slot gets.
    attnums: Vec<i32>,
    output: Vec<i32>,
    /// The quals zone maps check, for EXPLAIN.
    zone_quals: Vec<*mut pg_sys::Node>,
    /// The planner's EXPLAIN fields (`ScanPlan::explain`).
    explain: Vec<(String, String)>,
    /// The pushed filter, the quals it came from, and its operands.
    filter: Option<FilterPlan>,
    pushed_quals: Vec<*mut pg_sys::Node>,
    operands: Vec<*mut pg_sys::Node>,
    /// Executor state of the operands and of the pushed quals (EvalPlanQual rechecks).
    operand_states: Vec<*mut pg_sys::ExprState>,
    recheck_state: *mut pg_sys::ExprState,
    /// The operands are evaluated at the first row asked for after `begin` or a rescan:
    /// parameters of an enclosing plan (a correlated subquery's) are set only by then.
    filter_resolved: bool,
    /// The pushed filter as resolved, kept to be wrapped by a join filter.
    resolved: Option<Filter>,
    /// The join filter: planned, its source once linked, its keys once built.
    join: Option<JoinState>,
    /// Every participant's counts, in a parallel plan (`row_group_claims`).
    tally: SharedTally,
}

/// A scan's join filter in execution.
struct JoinState {
    plan: JoinFilterPlan,
    /// The parent hash join (`join_filter::link`); None: the filter is never applied.
    source: Option<JoinFilterSource>,
    keys: KeysState,
    /// Rows the key test removed, over all rescans.
    removed: Rc<Cell<u64>>,
}

impl JoinFiltered for ColumnarScan {
    fn join_plan(&self) -> Option<&JoinFilterPlan> {
        self.join.as_ref().map(|j| &j.plan)
    }

    fn set_join_source(&mut self, source: JoinFilterSource) {
        if let Some(j) = self.join.as_mut() {
            j.source = Some(source);
        }
    }
}

impl CustomScanNode for ColumnarScan {
    const NAME: &'static CStr = NAME;
    type Private = ScanPlan;
    const FAST_ROW: pg_sys::ExecScanAccessMtd = Some(next_row);

    unsafe fn create(plan: ScanPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        // SAFETY: `cscan` is the live plan node (the trait's contract); custom_exprs is a pointer
        // list of expression Nodes.
        unsafe {
            let mut exprs: Vec<*mut pg_sys::Node> = pg_list::ptrs((*cscan).custom_exprs).collect();
            let operands = exprs.split_off(plan.zone_quals + plan.pushed_quals);
            let pushed_quals = exprs.split_off(plan.zone_quals);
            ColumnarScan {
                zone_predicates: plan.zone_predicates,
                reader: None,
                attnums: plan.attnums,
                output: plan.output,
                zone_quals: exprs,
                explain: plan.explain,
                filter: plan.filter,
                pushed_quals,
                operands,
                operand_states: Vec::new(),
                recheck_state: std::ptr::null_mut(),
                filter_resolved: false,
                resolved: None,
                join: plan.join_filter.map(|plan| JoinState {
                    plan,
                    source: None,
                    keys: KeysState::NotYet,
                    removed: Rc::new(Cell::new(0)),
                }),
                tally: SharedTally::default(),
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
        // ExecInitNode opened and locked, and `estate` its live EState whose snapshot is
        // registered, both alive until `end` (the trait's contract), as the reader requires; the
        // expressions are the plan's, initialized for the node in the executor's memory context.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            let natts = (*(*rel).rd_att).natts as usize;
            let mut reader =
                scan_reader::open(node, (*estate).es_snapshot, &self.attnums, &mut self.zone_predicates);
            let mut output = vec![false; natts];
            for &a in &self.output {
                output[a as usize - 1] = true;
            }
            reader.set_output(output);
            // Its pushed filter and the slot read scaled numerics as numbers.
            reader.set_scaled(vec![true; natts]);
            self.reader = Some(reader);
            let parent = &raw mut (*node).ss.ps;
            self.operand_states =
                self.operands.iter().map(|&e| pg_sys::ExecInitExpr(e as *mut pg_sys::Expr, parent)).collect();
            if !self.pushed_quals.is_empty() {
                let quals = pg_list::from_ptrs(self.pushed_quals.iter().copied());
                self.recheck_state = pg_sys::ExecInitQual(quals, parent);
            }
        }
    }

    unsafe fn recheck(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> bool {
        // SAFETY: `node` is this node's begun CustomScanState and `slot` the row EvalPlanQual
        // substitutes (the trait's contract); `recheck_state` was initialized in `begin` for the
        // node, evaluated in its live expression context.
        unsafe {
            // EvalPlanQual hands over a row version the scan did not filter: the pushed
            // quals, no longer in the plan's qual, are checked here.
            if self.recheck_state.is_null() {
                return true;
            }
            let econtext = (*node).ss.ps.ps_ExprContext;
            (*econtext).ecxt_scantuple = slot;
            pg_sys::ExecQual(self.recheck_state, econtext)
        }
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: `node` is this node's begun CustomScanState (the trait's contract): its scan
        // slot, EState and the reader made by `begin` (relation open, snapshot registered) are live.
        unsafe {
            let slot = (*node).ss.ss_ScanTupleSlot;
            if !self.filter_resolved {
                self.resolve_filter(node);
                self.filter_resolved = true;
            }
            // Until the parent's hash table is built (a hash join may fetch its first outer
            // row before building it), rows pass unfiltered.
            if let Some(JoinState { source: Some(_), keys: KeysState::NotYet, .. }) = &self.join {
                self.apply_join_filter(node);
            }
            let reader = self.reader.as_mut().expect("scan begun");
            let backward =
                (*(*node).ss.ps.state).es_direction == pg_sys::ScanDirection::BackwardScanDirection;
            if !(if backward { reader.prev(slot) } else { reader.next(slot) }) {
                pg_sys::ExecClearTuple(slot);
            }
            slot
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.release();
        }
    }

    unsafe fn shutdown(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: ShutdownCustomScan, before the parallel shared memory goes.
        unsafe { publish_tally(self) };
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.restart();
        }
        // Parameters may have changed (the inner side of a nested loop), and the parent
        // hash join may rebuild its table.
        self.filter_resolved = false;
        if let Some(j) = self.join.as_mut() {
            j.keys = KeysState::NotYet;
        }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: the trait's contract: `node` is this node's CustomScanState and `es` the live
        // ExplainState, as `explain` requires.
        unsafe { explain(self, node, ancestors, es) }
    }
}

impl ColumnarScan {
    /// Evaluates the filter's operands and hands the reader the resolved filter.
    unsafe fn resolve_filter(&mut self, node: *mut pg_sys::CustomScanState) {
        // SAFETY: `node` is this node's begun CustomScanState (the caller, `next`), so its
        // expression context is live and `operand_states` were initialized for `operands` in `begin`.
        unsafe {
            self.resolved = self.filter.as_ref().map(|plan| {
                let econtext = (*node).ss.ps.ps_ExprContext;
                let values = operand_values(&self.operands, &self.operand_states, econtext, &[plan]);
                plan.resolve(&values)
            });
            if let Some(reader) = self.reader.as_mut() {
                reader.set_filter(self.resolved.clone().map(PushedFilter::boxed));
            }
        }
    }

    /// Builds the join filter's keys if the parent's hash table is ready, and hands the
    /// reader the key test before the pushed filter (from the next vector on).
    unsafe fn apply_join_filter(&mut self, node: *mut pg_sys::CustomScanState) {
        let Some(j) = self.join.as_mut() else { return };
        let Some(source) = j.source else { return };
        // SAFETY: `source` was linked for this plan state tree by `join_filter::link`, and this
        // scan is the join's outer child asking for a row (`next`), as `inner_keys` requires;
        // the node's expression context is live.
        j.keys = unsafe { join_filter::inner_keys(source, (*node).ss.ps.ps_ExprContext) };
        if let (KeysState::Built(keys), Some(reader)) = (&j.keys, self.reader.as_mut()) {
            let pushed = self.resolved.clone().map(PushedFilter::boxed);
            reader.set_filter(Some(JoinKeyFilter::boxed(
                j.plan.att,
                keys.clone(),
                pushed,
                j.removed.clone(),
            )));
        }
    }
}

unsafe fn explain(
    inner: &ColumnarScan,
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    // SAFETY: called from the node's ExplainCustomScan: `node` is its live CustomScanState
    // (scan relation open, so its descriptor is live, and its plan set), `es` the live
    // ExplainState whose deparse context belongs to this plan, and `ancestors` its ancestor
    // list; the labels are static NUL-terminated strings and the texts outlive each call.
    unsafe {
        let rel = (*node).ss.ss_currentRelation;
        let desc = (*rel).rd_att;
        let names: Vec<String> = inner
            .attnums
            .iter()
            .map(|&a| pgrx::name_data_to_str(&attr(desc, a as usize - 1).attname).to_string())
            .collect();
        let live = (0..(*desc).natts as usize).filter(|&i| !attr(desc, i).attisdropped).count();
        let read = if names.is_empty() {
            format!("0 of {live}")
        } else {
            format!("{} of {live}: {}", names.len(), names.join(", "))
        };
        let text = CString::new(read).unwrap();
        pg_sys::ExplainPropertyText(c"Columns Read".as_ptr(), text.as_ptr(), es);
        let deparse = |quals: &[*mut pg_sys::Node], label: &CStr| {
            if quals.is_empty() {
                return;
            }
            let list = pg_list::from_ptrs(quals.iter().copied());
            let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, (*node).ss.ps.plan, ancestors);
            let expr = pg_sys::make_ands_explicit(list) as *mut pg_sys::Node;
            let text = pg_sys::deparse_expression(expr, context, (*es).verbose, false);
            pg_sys::ExplainPropertyText(label.as_ptr(), text, es);
        };
        deparse(&inner.pushed_quals, c"Pushed Filter");
        if let Some(j) = &inner.join {
            let clause = j.source.and_then(|s| join_filter::clause_text(s, ancestors, es));
            let text = match clause {
                Some(c) => format!("pushed from {} {}", j.plan.inner, c),
                None => format!("pushed from {} (not applied: no parent hash join)", j.plan.inner),
            };
            let text = CString::new(text).unwrap();
            pg_sys::ExplainPropertyText(c"Join Filter".as_ptr(), text.as_ptr(), es);
        }
        deparse(&inner.zone_quals, c"Zone Map Filter");
        explain_planned(&inner.explain, es);
        if let (true, Some(_)) = ((*es).analyze, inner.reader.as_ref()) {
            let t = inner.tally.shown(inner.tally());
            let c = read_counters(&t);
            let none = std::ptr::null();
            let int =
                |label: &CStr, v: u64| pg_sys::ExplainPropertyInteger(label.as_ptr(), none, v as i64, es);
            let join_removed = t.sums[READ_SUMS];
            if !inner.pushed_quals.is_empty() {
                int(c"Rows Removed by Pushed Filter", c.rows_filtered.saturating_sub(join_removed));
            }
            if let Some(j) = &inner.join {
                int(c"Rows Removed by Join Filter", join_removed);
                let keys = match &j.keys {
                    KeysState::Built(k) => k.len().to_string(),
                    KeysState::NotYet => "none yet".to_string(),
                    KeysState::Unusable(why) => format!("not used ({why})"),
                };
                let keys = CString::new(keys).unwrap();
                pg_sys::ExplainPropertyText(c"Join Filter Keys".as_ptr(), keys.as_ptr(), es);
            }
            int(c"Row Groups Read", c.groups_read);
            int(c"Row Groups Skipped", c.groups_skipped);
            int(c"Vectors Read", c.vectors_read);
            int(c"Vectors Skipped", c.vectors_skipped);
            if !inner.pushed_quals.is_empty() {
                int(c"Vectors Passed Whole", c.vectors_passed);
            }
            if c.blocks_read_ahead > 0 {
                int(c"Blocks Read Ahead", c.blocks_read_ahead);
            }
            explain_metadata(node, &c, es);
            pg_sys::ExplainPropertyInteger(
                c"Bytes Read".as_ptr(),
                c"bytes".as_ptr(),
                c.bytes_read as i64,
                es,
            );
        }
    }
}

/// Parallel workers (and the leader) take row groups from a counter in shared memory
/// (`row_group_claims`).
impl ClaimsRowGroups for ColumnarScan {
    fn reader_mut(&mut self) -> Option<&mut Reader> {
        self.reader.as_mut()
    }

    fn tally(&self) -> Tally {
        let mut t = self.reader.as_ref().map_or_else(Tally::default, |r| read_tally(&r.counters()));
        t.sums[READ_SUMS] = self.join.as_ref().map_or(0, |j| j.removed.get());
        t
    }

    fn shared_tally(&mut self) -> &mut SharedTally {
        &mut self.tally
    }
}
