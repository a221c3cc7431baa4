//! The `ColumnarAgg` custom scan node: scans a columnar relation and folds its
//! aggregates over decoded vectors (the batch fold), with no Datum, slot or executor call
//! per row. Its output rows are the groups: the key values, then each aggregate's result,
//! or under a Gather (`partial`) each aggregate's transition state for core's Finalize
//! Aggregate. The planner (`planner::agg_path`) decides which queries it runs; the fold
//! is `exec::agg`'s (a grouping policy driving the aggregate kernels), exact. This file
//! is the PostgreSQL glue: plan data, executor callbacks, EXPLAIN, parallel scan.

use super::agg::aggregates::Aggregates;
use super::agg::datum::{key_datum, output_datum, OutputType};
use super::agg::grouping::{FoldCounters, GroupingSetup, Policy};
use super::agg::output;
use super::agg::spec::{AggPlan, HavingTest};
use super::columnar_scan::ScanPlan;
use super::customscan::deparse::Deparser;
use super::customscan::{
    bytea_const, const_bytes, explain_fields_node, explain_fields_of, explain_planned_with, CustomScanNode,
    PlanPrivate,
};
use super::eager_join::{Found, Probe, ProbePlan};
use super::filter::operands::operand_values;
use super::filter::plan::FilterPlan;
use super::filter::pushed::PushedFilter;
use super::row_group_claims::{
    explain_metadata, publish_tally, read_counters, read_tally, ClaimsRowGroups, SharedTally, Tally,
    READ_SUMS,
};
use super::scan_reader;
use crate::pg_list;
use crate::storage::format::image_arena::ImageArena;
use crate::storage::read::reader::Reader;
use crate::storage::relation::datum;
use pgrx::pg_sys;
use std::ffi::CStr;

pub const NAME: &CStr = c"PgColumnarAgg";

/// What the planner decides for a ColumnarAgg, kept in its plan: the scan (columns,
/// zone-map predicates, pushed filter), the fold, and what EXPLAIN shows.
pub struct AggScanPlan {
    pub scan: ScanPlan,
    pub agg: AggPlan,
    /// The planner's estimate of the groups.
    pub groups: f64,
    /// (label, text) pairs for EXPLAIN; those whose label starts with '+' only with
    /// VERBOSE.
    pub explain: Vec<(String, String)>,
    /// The pushed clauses' AND over range table entry `.0` of the planner's query, kept
    /// only for EXPLAIN (the filter is `scan.filter`): private data, which setrefs
    /// leaves as it is (the range table index is the planner's, not the final one).
    pub filter_shown: Option<(u32, *mut pg_sys::Node)>,
    /// Eager aggregation below a join: the groups are probed by the rows of the
    /// node's child plan (`eager_join`), and the scan tuple starts with that plan's
    /// group columns instead of the fold's keys.
    pub probe: Option<ProbePlan>,
}

impl PlanPrivate for AggScanPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: builds the plan's private lists in the planner's current memory context on the
        // backend thread (the trait's contract); every element is a list or Const made here.
        unsafe {
            let list = pg_list::from_ptrs([
                self.scan.to_list() as *mut pg_sys::Node,
                bytea_const(&self.agg.to_bytes()),
                explain_fields_node(&self.explain),
                bytea_const(&self.groups.to_le_bytes()),
                bytea_const(&self.filter_shown.map_or(0, |(rti, _)| rti).to_le_bytes()),
                bytea_const(&self.probe.as_ref().map_or_else(Vec::new, ProbePlan::to_bytes)),
            ]);
            match self.filter_shown {
                Some((_, e)) => pg_sys::lappend(list, pg_sys::copyObjectImpl(e as *const std::ffi::c_void)),
                None => list,
            }
        }
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        // SAFETY: `list` is the custom_private `to_list` made (or its copy, the trait's contract):
        // a ScanPlan list, then five bytea Consts, then the shown filter's expression if any.
        unsafe {
            let malformed = || -> ! { pgrx::error!("malformed ColumnarAgg plan") };
            let parts: Vec<*mut pg_sys::Node> = pg_list::ptrs(list).collect();
            let (&[scan, agg, explain, groups, rti, probe], shown) =
                parts.split_at_checked(6).unwrap_or_else(|| malformed())
            else {
                malformed()
            };
            let bytes = |n: *mut pg_sys::Node| const_bytes(n as *mut pg_sys::Const);
            let explain = explain_fields_of(explain);
            AggScanPlan {
                scan: ScanPlan::from_list(scan as *mut pg_sys::List),
                agg: AggPlan::from_bytes(bytes(agg)).unwrap_or_else(|| malformed()),
                groups: f64::from_le_bytes(bytes(groups).try_into().unwrap_or_else(|_| malformed())),
                explain,
                filter_shown: match (
                    u32::from_le_bytes(bytes(rti).try_into().unwrap_or_else(|_| malformed())),
                    shown,
                ) {
                    (0, []) => None,
                    (rti, &[e]) if rti > 0 => Some((rti, e)),
                    _ => malformed(),
                },
                probe: match bytes(probe) {
                    [] => None,
                    b => Some(ProbePlan::from_bytes(b).unwrap_or_else(|| malformed())),
                },
            }
        }
    }
}

/// The groups of the current batch: how many, and whether the scan (or this pass of it)
/// is over after them; if not, they were flushed early (a partial aggregate past
/// work_mem) and folding goes on after them.
struct Batch {
    groups: usize,
    exhausted: bool,
}

pub struct ColumnarAgg {
    explain: Vec<(String, String)>,
    filter_shown: Option<(u32, *mut pg_sys::Node)>,
    reader: Option<Reader>,
    scan_filter: Option<super::filter::plan::FilterPlan>,
    zone_predicates: Vec<(usize, crate::storage::format::zonemap::ZonePredicate)>,
    attnums: Vec<i32>,
    operands: Vec<*mut pg_sys::Node>,
    operand_states: Vec<*mut pg_sys::ExprState>,
    outputs: Vec<OutputType>,
    setup: GroupingSetup,
    aggs: Aggregates,
    policy: Policy,
    counters: FoldCounters,
    batch: Option<Batch>,
    next_group: usize,
    images: ImageArena,
    /// Whether the filters' operands are resolved for this scan (not after a rescan).
    resolved: bool,
    /// The HAVING tests checked before a group's row is made, and the groups they
    /// removed (EXPLAIN ANALYZE).
    having: Vec<HavingTest>,
    having_removed: u64,
    /// Every participant's counts, in a parallel plan (`row_group_claims`).
    tally: SharedTally,
    /// Eager aggregation below a join: the child plan whose rows probe the groups.
    probe: Option<Probe>,
}

impl CustomScanNode for ColumnarAgg {
    const NAME: &'static CStr = NAME;
    type Private = AggScanPlan;

    unsafe fn create(plan: AggScanPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        // SAFETY: `cscan` is the live plan node (the trait's contract); custom_exprs is a pointer
        // list of expression Nodes.
        unsafe {
            let operands: Vec<*mut pg_sys::Node> = pg_list::ptrs((*cscan).custom_exprs).collect();
            let setup = GroupingSetup {
                keys: plan.agg.keys,
                key_conditions: Vec::new(),
                estimated_groups: plan.groups,
                memory_limit: 0,
                partial: plan.agg.partial,
                fixed_offset: None,
                partition_hash: hashbrown::DefaultHashBuilder::default(),
            };
            let aggs = Aggregates::new(plan.agg.aggs);
            let having = plan.agg.having;
            ColumnarAgg {
                explain: plan.explain,
                filter_shown: plan.filter_shown,
                reader: None,
                scan_filter: plan.scan.filter,
                zone_predicates: plan.scan.zone_predicates,
                attnums: plan.scan.attnums,
                operands,
                operand_states: Vec::new(),
                outputs: Vec::new(),
                policy: Policy::first(&setup, &aggs),
                setup,
                aggs,
                counters: FoldCounters::default(),
                batch: None,
                next_group: 0,
                images: ImageArena::default(),
                resolved: false,
                having,
                having_removed: 0,
                tally: SharedTally::default(),
                probe: plan.probe.map(Probe::new),
            }
        }
    }

    unsafe fn begin(&mut self, node: *mut pg_sys::CustomScanState, estate: *mut pg_sys::EState, eflags: i32) {
        // SAFETY: BeginCustomScan: `node` is this node's CustomScanState, whose scan relation
        // ExecInitNode opened and locked, and `estate` its live EState whose snapshot is
        // registered, both alive until `end` (the trait's contract), as the reader requires; the
        // operands are the plan's, initialized for the node in the executor's memory context;
        // session_timezone, work_mem and hash_mem_multiplier are backend globals read on its thread.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            let natts = (*(*rel).rd_att).natts as usize;
            let mut reader =
                scan_reader::open(node, (*estate).es_snapshot, &self.attnums, &mut self.zone_predicates);
            // Nothing becomes a Datum: the fold reads decoded vectors (dictionaries as codes).
            reader.set_output(vec![false; natts]);
            reader.set_scaled(self.aggs.scaled_attributes(&self.setup.keys, natts));
            self.reader = Some(reader);
            let parent = &raw mut (*node).ss.ps;
            self.operand_states =
                self.operands.iter().map(|&e| pg_sys::ExecInitExpr(e as *mut pg_sys::Expr, parent)).collect();
            self.outputs = output_types((*node).ss.ps.plan as *mut pg_sys::CustomScan);
            let nkeys = self.scan_keys();
            self.aggs.collations = self.outputs[nkeys..].iter().map(|o| o.collation).collect();
            let mut offset: std::ffi::c_long = 0;
            self.setup.fixed_offset = pg_sys::pg_get_timezone_offset(pg_sys::session_timezone, &mut offset)
                .then_some(offset as i64);
            self.setup.memory_limit =
                (pg_sys::work_mem as f64 * 1024.0 * pg_sys::hash_mem_multiplier) as usize;
            if let Some(probe) = self.probe.as_mut() {
                // Every group must be held for the probe: no passes. The planner offers
                // the plan only when its estimate of the groups fits in work_mem.
                self.setup.memory_limit = usize::MAX;
                probe.begin(node, estate, eflags);
            }
        }
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: `node` is this node's begun CustomScanState (the trait's contract), so
        // its scan slot is live.
        let slot = unsafe { (*node).ss.ss_ScanTupleSlot };
        // SAFETY: `slot` is the begun node's live scan slot, read just above.
        unsafe { pg_sys::ExecClearTuple(slot) };
        if self.probe.is_some() {
            // SAFETY: as above: the node is begun and `slot` its scan slot.
            return unsafe { self.next_probed(node, slot) };
        }
        // The next group: of the groups folded so far, or of the next batch of them (a
        // partial aggregate's flush, or the next pass of a fold past work_mem). A group
        // that clearly fails a HAVING test gets no row (core's HAVING checks the others).
        let g = loop {
            loop {
                if self.batch.is_none() {
                    // SAFETY: the node is begun (the trait's contract), as `fold` requires.
                    unsafe { self.fold(node) };
                    self.next_group = 0;
                }
                let batch = self.batch.as_ref().unwrap();
                if self.next_group < batch.groups {
                    break;
                }
                if batch.exhausted {
                    if !self.policy.next_pass() {
                        return slot;
                    }
                    self.reader.as_mut().unwrap().restart();
                }
                self.batch = None;
            }
            let g = self.next_group;
            self.next_group += 1;
            let states = &self.aggs.states;
            if self.having.iter().all(|h| output::may_pass(&states[h.agg].output(g, false), h.cmp, h.value)) {
                break g;
            }
            self.having_removed += 1;
        };
        // SAFETY: the node is begun and `slot` is its scan slot (one column per key and
        // aggregate), as `store_row` requires.
        unsafe { self.store_row(node, slot, Found::Group(g), None) };
        slot
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.release();
        }
        if let Some(probe) = self.probe.as_mut() {
            // SAFETY: EndCustomScan of the begun node (the trait's contract).
            unsafe { probe.end() };
        }
        self.batch = None;
        self.aggs.states.clear();
        self.policy.release(&self.setup);
    }

    unsafe fn shutdown(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: ShutdownCustomScan, before the parallel shared memory goes.
        unsafe { publish_tally(self) };
    }

    unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        // Parameters may have changed: fold again.
        if let Some(reader) = self.reader.as_mut() {
            reader.restart();
        }
        if let Some(probe) = self.probe.as_mut() {
            // SAFETY: ReScanCustomScan of the begun node (the trait's contract).
            unsafe { probe.rescan(node) };
        }
        self.batch = None;
        self.resolved = false;
        self.policy = Policy::first(&self.setup, &self.aggs);
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: `node` is this node's live CustomScanState and `es` the live ExplainState of
        // this EXPLAIN (the trait's contract), as `deparse_field` requires; the labels and
        // units are static NUL-terminated strings.
        unsafe {
            // One deparse context for the node's fields (making it looks the relation up).
            let deparser = Deparser::new((*node).ss.ss_currentRelation);
            explain_planned_with(&self.explain, es, |label| self.deparse_field(label, node, &deparser));
            if let (true, Some(_)) = ((*es).analyze, self.reader.as_ref()) {
                let t = self.tally.shown(self.tally());
                let c = read_counters(&t);
                let [vectors_folded, vectors_from_metadata, rows_folded, groups, flushes, having_removed, one_group] =
                    std::array::from_fn(|i| t.sums[READ_SUMS + i]);
                let none = std::ptr::null();
                let int =
                    |label: &CStr, v: u64| pg_sys::ExplainPropertyInteger(label.as_ptr(), none, v as i64, es);
                if self.scan_filter.is_some() {
                    int(c"Rows Removed by Pushed Filter", c.rows_filtered);
                }
                int(c"Row Groups Read", c.groups_read);
                int(c"Row Groups Skipped", c.groups_skipped);
                int(c"Vectors Skipped", c.vectors_skipped);
                int(c"Vectors Folded", vectors_folded);
                int(c"Vectors Answered from Metadata", vectors_from_metadata);
                int(c"Rows Folded", rows_folded);
                if !self.setup.keys.is_empty() {
                    int(c"Groups", groups);
                }
                if one_group > 0 {
                    int(c"Vectors of One Group", one_group);
                }
                if let Some(p) = &self.probe {
                    int(c"Outer Rows", p.outer_rows);
                    int(c"Outer Rows Without Group", p.unmatched);
                }
                if !self.having.is_empty() {
                    int(c"Groups Removed by Having", having_removed);
                }
                if self.policy.passes() > 1 {
                    int(c"Passes", self.policy.passes());
                }
                if flushes > 0 {
                    int(c"Partial Flushes", flushes);
                }
                pg_sys::ExplainPropertyInteger(
                    c"Peak Memory".as_ptr(),
                    c"kB".as_ptr(),
                    t.max.div_ceil(1024) as i64,
                    es,
                );
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
}

impl ColumnarAgg {
    /// The scan tuple's columns before the aggregates: the fold's keys, or the probing
    /// plan's group columns.
    fn scan_keys(&self) -> usize {
        self.probe.as_ref().map_or(self.setup.keys.len(), |p| p.plan.columns)
    }

    /// `next` of an eagerly aggregated join: folds every group first, then makes one row
    /// per probing row that finds a group (or, LEFT JOIN, finds none).
    ///
    /// # Safety
    /// As `next`: `node` is begun and `slot` its cleared scan slot.
    unsafe fn next_probed(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        slot: *mut pg_sys::TupleTableSlot,
    ) -> *mut pg_sys::TupleTableSlot {
        if !self.probe.as_ref().unwrap().ready() {
            // One batch: without a memory limit the fold makes no passes (`begin`).
            // SAFETY: the node is begun (this fn's contract), as `fold` requires.
            unsafe { self.fold(node) };
            let groups = self.batch.as_ref().map_or(0, |b| b.groups);
            let policy = &self.policy;
            self.probe.as_mut().unwrap().index(groups, |g| policy.key(g, 0));
        }
        // SAFETY: the node is begun and the groups indexed just above.
        let Some((outer, found)) = (unsafe { self.probe.as_mut().unwrap().next_row() }) else {
            return slot;
        };
        // SAFETY: the node is begun, `slot` its scan slot and `outer` the child's row.
        unsafe { self.store_row(node, slot, found, Some(outer)) };
        slot
    }

    /// Folds the next batch of groups (`Policy::fold`), first resolving the filters'
    /// operands if this scan has not yet.
    unsafe fn fold(&mut self, node: *mut pg_sys::CustomScanState) {
        let reader = self.reader.as_mut().expect("scan begun");
        if !self.resolved {
            let case_conditions: Vec<Vec<&FilterPlan>> = self
                .aggs
                .specs
                .iter()
                .map(|a| {
                    let mut c = Vec::new();
                    if let Some(e) = &a.expr {
                        e.conditions(&mut c);
                    }
                    c
                })
                .collect();
            let key_conditions: Vec<Vec<&FilterPlan>> = self
                .setup
                .keys
                .iter()
                .map(|k| {
                    let mut c = Vec::new();
                    if let Some(e) = &k.expr {
                        e.conditions(&mut c);
                    }
                    c
                })
                .collect();
            let plans = self
                .scan_filter
                .iter()
                .chain(self.aggs.specs.iter().filter_map(|a| a.filter.as_ref()))
                .chain(case_conditions.iter().flatten().copied())
                .chain(key_conditions.iter().flatten().copied());
            let plans: Vec<_> = plans.collect();
            // SAFETY: `node` is this node's begun CustomScanState (the caller's, `next`), so
            // its expression context is live and the states were initialized in `begin`.
            let values = unsafe {
                let econtext = (*node).ss.ps.ps_ExprContext;
                operand_values(&self.operands, &self.operand_states, econtext, &plans)
            };
            reader.set_filter(self.scan_filter.as_ref().map(|f| PushedFilter::boxed(f.resolve(&values))));
            self.aggs.filters =
                self.aggs.specs.iter().map(|a| a.filter.as_ref().map(|f| f.resolve(&values))).collect();
            self.aggs.conditions =
                case_conditions.iter().map(|c| c.iter().map(|f| f.resolve(&values)).collect()).collect();
            self.setup.key_conditions =
                key_conditions.iter().map(|c| c.iter().map(|f| f.resolve(&values)).collect()).collect();
            self.resolved = true;
        }
        // SAFETY: the reader was made in `begin` over the open relation and its registered
        // snapshot, both live until `end`.
        let exhausted = unsafe { self.policy.fold(&self.setup, &mut self.aggs, reader, &mut self.counters) };
        self.batch = Some(Batch { groups: self.policy.groups(), exhausted });
    }

    /// Stores a row in `slot`: the key columns — group `found`'s keys, or with `outer`
    /// (an eagerly aggregated join) the probing row's columns — then the aggregates of
    /// that group of the current batch, or of no rows.
    unsafe fn store_row(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        slot: *mut pg_sys::TupleTableSlot,
        found: Found,
        outer: Option<*mut pg_sys::TupleTableSlot>,
    ) {
        // SAFETY: `node` is this node's begun CustomScanState and `slot` its scan slot, whose
        // descriptor has one column per key column and aggregate (custom_scan_tlist, as
        // `outputs`); `outer`, if given, is the probing child's current row, deformed up to
        // the columns read, whose Datums stay valid until the child's next row (after this
        // row is projected). The Datums made here are in the per-tuple memory, and the
        // previous context is restored before the tuple is stored.
        unsafe {
            // By-reference results live in the per-tuple memory, which ExecScan resets
            // before asking for the next row.
            let econtext = (*node).ss.ps.ps_ExprContext;
            let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
            self.images.clear();
            let values = (*slot).tts_values;
            let nulls = (*slot).tts_isnull;
            let nkeys = self.scan_keys();
            for c in 0..nkeys {
                let (d, n) = match (outer, &found) {
                    (Some(row), _) => (*(*row).tts_values.add(c), *(*row).tts_isnull.add(c)),
                    (None, &Found::Group(g)) => {
                        key_datum(self.policy.key(g, c), &self.outputs[c], &mut self.images)
                    }
                    (None, Found::Empty) => unreachable!("a group of no rows is only a probing row's"),
                };
                *values.add(c) = d;
                *nulls.add(c) = n;
            }
            for (i, acc) in self.aggs.states.iter().enumerate() {
                let output = match found {
                    Found::Group(g) => acc.output(g, self.setup.partial),
                    Found::Empty => output::of_no_rows(self.aggs.specs[i].func),
                };
                let (d, n) = output_datum(output, &self.outputs[nkeys + i], &mut self.images);
                *values.add(nkeys + i) = d;
                *nulls.add(nkeys + i) = n;
            }
            pg_sys::MemoryContextSwitchTo(old);
            pg_sys::ExecStoreVirtualTuple(slot);
        }
    }
}

impl ColumnarAgg {
    /// The text of an EXPLAIN field the planner left to EXPLAIN time: the aggregates and
    /// group keys (the scan tuple: keys, then Aggrefs) and the pushed filter, deparsed
    /// as the planner used to (`deparse`), so only an EXPLAIN pays for it.
    ///
    /// # Safety
    /// `node` is this node's live CustomScanState (from the explain callback) and
    /// `deparser` its scan relation's, made in the EXPLAIN's memory context.
    unsafe fn deparse_field(
        &self,
        label: &str,
        node: *mut pg_sys::CustomScanState,
        deparser: &Deparser,
    ) -> Option<String> {
        // SAFETY: the plan is the node's CustomScan over its open scan relation (this fn's
        // contract), its scan tuple a list of TargetEntries over the plan's scanrelid, and the
        // shown filter an expression over the planner's `rti` of the same relation.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let scanrelid = (*cscan).scan.scanrelid;
            let nkeys = self.scan_keys();
            let text = |t: *mut pg_sys::TargetEntry| deparser.text(scanrelid, (*t).expr as *mut pg_sys::Node);
            let tuple = || pg_list::ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist);
            match label {
                // (An eagerly aggregated join's group columns are another relation's: its
                // planner wrote their text.)
                "Aggregates" => Some(tuple().skip(nkeys).map(text).collect::<Vec<_>>().join(", ")),
                "Group Key" => Some(tuple().take(nkeys).map(text).collect::<Vec<_>>().join(", ")),
                "Pushed Filter" => self.filter_shown.map(|(rti, e)| deparser.text(rti, e)),
                _ => None,
            }
        }
    }
}

/// The scan tuple's columns: the keys, then the aggregates (custom_scan_tlist).
unsafe fn output_types(cscan: *mut pg_sys::CustomScan) -> Vec<OutputType> {
    // SAFETY: `cscan` is the node's live plan (the caller's, `begin`); its custom_scan_tlist
    // is a list of TargetEntries whose expressions are Nodes, an Aggref's read as such by tag.
    unsafe {
        pg_list::ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
            .map(|tle| {
                let expr = (*tle).expr as *mut pg_sys::Node;
                let typid = pg_sys::exprType(expr);
                let collation = if (*expr).type_ == pg_sys::NodeTag::T_Aggref {
                    (*(expr as *mut pg_sys::Aggref)).inputcollid
                } else {
                    pg_sys::InvalidOid
                };
                OutputType { kind: datum::type_kind(typid), collation }
            })
            .collect()
    }
}

/// Parallel workers (and the leader) take row groups from a counter in shared memory
/// (`row_group_claims`).
impl ClaimsRowGroups for ColumnarAgg {
    /// The fold returns rows once its row groups are read (or, past work_mem, a batch
    /// of partial states): the leader's rows are not waited for while it reads.
    fn leader_reads_to_the_end(&self) -> bool {
        true
    }

    fn reader_mut(&mut self) -> Option<&mut Reader> {
        self.reader.as_mut()
    }

    fn tally(&self) -> Tally {
        let mut t = self.reader.as_ref().map_or_else(Tally::default, |r| read_tally(&r.counters()));
        let f = &self.counters;
        t.sums[READ_SUMS..READ_SUMS + 7].copy_from_slice(&[
            f.vectors_folded,
            f.vectors_from_metadata,
            f.rows_folded,
            f.groups,
            f.flushes,
            self.having_removed,
            f.vectors_one_group,
        ]);
        t.max = f.peak_memory as u64;
        t
    }

    fn shared_tally(&mut self) -> &mut SharedTally {
        &mut self.tally
    }
}
