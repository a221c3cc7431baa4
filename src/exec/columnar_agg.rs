//! The `ColumnarAgg` custom scan node: scans a columnar relation and folds its
//! aggregates over decoded vectors (the batch fold), grouped by hash or not, with no
//! Datum, slot or executor call per row. Its output rows are the groups: the key values,
//! then each aggregate's result, or under a Gather (`partial`) each aggregate's
//! transition state for core's Finalize Aggregate. The planner (`planner::agg_path`)
//! decides which queries it runs; the fold is exact (`agg::fold`).

use super::agg::bucket::{self, TruncUnit};
use super::agg::fold::{Acc, Gids, Overflow};
use super::agg::groups::{retain_partition, Grouper, KeyInput, KeyValue};
use super::agg::spec::{AggFunc, AggPlan, AggSpec, InputType, KeyKind};
use super::columnar_scan::ScanPlan;
use super::customscan::{
    bytea_const, const_bytes, explain_fields_node, explain_fields_of, CustomScanNode, PlanPrivate,
};
use super::filter::operands::operand_values;
use super::filter::pushed::PushedFilter;
use super::filter::{float_key, kernels, Filter};
use super::row_group_claims::ClaimsRowGroups;
use crate::pg_list;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::format::image_arena::ImageArena;
use crate::storage::format::zonemap::ZoneMap;
use crate::storage::read::reader::{GroupClaim, Reader};
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::write::write_buffer;
use pgrx::pg_sys;
use std::cmp::Ordering;
use std::ffi::{CStr, CString};

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
}

impl PlanPrivate for AggScanPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        pg_list::from_ptrs([
            self.scan.to_list() as *mut pg_sys::Node,
            bytea_const(&self.agg.to_bytes()),
            explain_fields_node(&self.explain),
            bytea_const(&self.groups.to_le_bytes()),
        ])
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        let malformed = || -> ! { pgrx::error!("malformed ColumnarAgg plan") };
        let parts: Vec<*mut pg_sys::Node> = pg_list::ptrs(list).collect();
        let [scan, agg, explain, groups] = parts[..] else { malformed() };
        let bytes = |n: *mut pg_sys::Node| const_bytes(n as *mut pg_sys::Const);
        let explain = explain_fields_of(explain);
        AggScanPlan {
            scan: ScanPlan::from_list(scan as *mut pg_sys::List),
            agg: AggPlan::from_bytes(bytes(agg)).unwrap_or_else(|| malformed()),
            groups: f64::from_le_bytes(bytes(groups).try_into().unwrap_or_else(|_| malformed())),
            explain,
        }
    }
}

/// How one output column of the node is made into a Datum.
struct OutputType {
    kind: ColumnKind,
    /// For a text min/max: the collation it compares in.
    collation: pg_sys::Oid,
}

/// What a run did, for EXPLAIN ANALYZE.
#[derive(Default, Clone, Copy)]
struct FoldCounters {
    vectors_folded: u64,
    vectors_from_metadata: u64,
    rows_folded: u64,
    peak_memory: usize,
    /// Groups output in total, and early flushes of a partial aggregate.
    groups: u64,
    flushes: u64,
}

/// The aggregation result, produced at the first row asked for.
struct Folded {
    grouper: Option<Grouper>,
    accs: Vec<Acc>,
    groups: usize,
    /// Whether the scan (or this pass of it) is over; if not, these groups were flushed
    /// early (a partial aggregate past work_mem) and folding goes on after them.
    exhausted: bool,
}

pub struct ColumnarAgg {
    plan: AggPlan,
    estimated_groups: f64,
    explain: Vec<(String, String)>,
    reader: Option<Reader>,
    scan_filter: Option<super::filter::plan::FilterPlan>,
    zone_predicates: Vec<(usize, crate::storage::format::zonemap::ZonePredicate)>,
    attnums: Vec<i32>,
    operands: Vec<*mut pg_sys::Node>,
    operand_states: Vec<*mut pg_sys::ExprState>,
    /// Per aggregate, its resolved FILTER.
    agg_filters: Vec<Option<Filter>>,
    outputs: Vec<OutputType>,
    key_kinds: Vec<ColumnKind>,
    folded: Option<Folded>,
    next_group: usize,
    images: ImageArena,
    counters: FoldCounters,
    /// The session's time zone offset if it has a single one (for date_trunc on
    /// timestamptz without asking PostgreSQL).
    fixed_offset: Option<i64>,
    /// Whether the filters' operands are resolved for this scan (not after a rescan).
    resolved: bool,
    /// Past work_mem, a serial grouped fold rescans the table `passes` times, each pass
    /// folding the groups whose key hashes to it; `pass` is the current one.
    passes: u64,
    pass: u64,
    partition_hash: hashbrown::DefaultHashBuilder,
    /// work_mem × hash_mem_multiplier, in bytes.
    memory_limit: usize,
}

impl CustomScanNode for ColumnarAgg {
    const NAME: &'static CStr = NAME;
    type Private = AggScanPlan;

    unsafe fn create(plan: AggScanPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        let operands: Vec<*mut pg_sys::Node> = pg_list::ptrs((*cscan).custom_exprs).collect();
        ColumnarAgg {
            plan: plan.agg,
            estimated_groups: plan.groups,
            explain: plan.explain,
            reader: None,
            scan_filter: plan.scan.filter,
            zone_predicates: plan.scan.zone_predicates,
            attnums: plan.scan.attnums,
            operands,
            operand_states: Vec::new(),
            agg_filters: Vec::new(),
            outputs: Vec::new(),
            key_kinds: Vec::new(),
            folded: None,
            next_group: 0,
            images: ImageArena::default(),
            counters: FoldCounters::default(),
            fixed_offset: None,
            resolved: false,
            passes: 1,
            pass: 0,
            partition_hash: hashbrown::DefaultHashBuilder::default(),
            memory_limit: 0,
        }
    }

    unsafe fn begin(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        _eflags: i32,
    ) {
        let rel = (*node).ss.ss_currentRelation;
        let desc = (*rel).rd_att;
        let natts = (*desc).natts as usize;
        let mut wanted = vec![false; natts];
        for &a in &self.attnums {
            wanted[a as usize - 1] = true;
        }
        write_buffer::flush_before_reading(rel);
        let mut reader =
            Reader::new(rel, (*estate).es_snapshot, Some(wanted), GroupClaim::Serial { next: 0 });
        reader.set_predicates(std::mem::take(&mut self.zone_predicates));
        // Nothing becomes a Datum: the fold reads decoded vectors (dictionaries as codes).
        reader.set_output(vec![false; natts]);
        self.reader = Some(reader);
        let parent = &raw mut (*node).ss.ps;
        self.operand_states =
            self.operands.iter().map(|&e| pg_sys::ExecInitExpr(e as *mut pg_sys::Expr, parent)).collect();
        let kinds = datum::column_kinds(desc);
        self.key_kinds = self.plan.keys.iter().map(|k| kinds[k.att]).collect();
        // The scan tuple's columns: the keys, then the aggregates (custom_scan_tlist).
        let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
        self.outputs = pg_list::ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
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
            .collect();
        let mut offset: std::ffi::c_long = 0;
        self.fixed_offset =
            pg_sys::pg_get_timezone_offset(pg_sys::session_timezone, &mut offset).then_some(offset as i64);
        self.memory_limit = (pg_sys::work_mem as f64 * 1024.0 * pg_sys::hash_mem_multiplier) as usize;
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        let slot = (*node).ss.ss_ScanTupleSlot;
        pg_sys::ExecClearTuple(slot);
        // The next group: of the groups folded so far, or of the next batch of them (a
        // partial aggregate's flush, or the next pass of a fold past work_mem).
        loop {
            if self.folded.is_none() {
                self.fold(node);
                self.next_group = 0;
            }
            let folded = self.folded.as_ref().unwrap();
            if self.next_group < folded.groups {
                break;
            }
            if folded.exhausted {
                if self.pass + 1 >= self.passes {
                    return slot;
                }
                self.pass += 1;
                self.reader.as_mut().unwrap().restart();
            }
            self.folded = None;
        }
        let folded = self.folded.as_ref().unwrap();
        let g = self.next_group;
        self.next_group += 1;
        // By-reference results live in the per-tuple memory, which ExecScan resets
        // before asking for the next row.
        let econtext = (*node).ss.ps.ps_ExprContext;
        let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
        self.images.clear();
        let values = (*slot).tts_values;
        let nulls = (*slot).tts_isnull;
        let nkeys = self.plan.keys.len();
        for c in 0..nkeys {
            let key = folded.grouper.as_ref().unwrap().key(g, c);
            let v = match key {
                KeyValue::Null => PointValue::Null,
                KeyValue::Int(x) => PointValue::Int(*x),
                KeyValue::Bytes(b) => PointValue::Bytes(b),
            };
            let (d, n) = datum::point_datum(self.outputs[c].kind, v, &mut self.images);
            *values.add(c) = d;
            *nulls.add(c) = n;
        }
        for (i, acc) in folded.accs.iter().enumerate() {
            let spec = &self.plan.aggs[i];
            let out = &self.outputs[nkeys + i];
            let (d, n) = if self.plan.partial {
                state_datum(acc, spec.func, spec.input, g, out, &mut self.images)
            } else {
                result_datum(acc, spec.func, spec.input, g, out, &mut self.images)
            };
            *values.add(nkeys + i) = d;
            *nulls.add(nkeys + i) = n;
        }
        pg_sys::MemoryContextSwitchTo(old);
        pg_sys::ExecStoreVirtualTuple(slot);
        slot
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.release();
        }
        self.folded = None;
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        // Parameters may have changed: fold again.
        if let Some(reader) = self.reader.as_mut() {
            reader.restart();
        }
        self.folded = None;
        self.resolved = false;
        self.passes = 1;
        self.pass = 0;
    }

    unsafe fn explain(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        super::customscan::explain_planned(&self.explain, es);
        if let (true, Some(reader)) = ((*es).analyze, self.reader.as_ref()) {
            let c = reader.counters();
            let none = std::ptr::null();
            let int =
                |label: &CStr, v: u64| pg_sys::ExplainPropertyInteger(label.as_ptr(), none, v as i64, es);
            if self.scan_filter.is_some() {
                int(c"Rows Removed by Pushed Filter", c.rows_filtered);
            }
            int(c"Row Groups Read", c.groups_read);
            int(c"Row Groups Skipped", c.groups_skipped);
            int(c"Vectors Skipped", c.vectors_skipped);
            int(c"Vectors Folded", self.counters.vectors_folded);
            int(c"Vectors Answered from Metadata", self.counters.vectors_from_metadata);
            int(c"Rows Folded", self.counters.rows_folded);
            if !self.plan.keys.is_empty() {
                int(c"Groups", self.counters.groups);
            }
            if self.passes > 1 {
                int(c"Passes", self.passes);
            }
            if self.counters.flushes > 0 {
                int(c"Partial Flushes", self.counters.flushes);
            }
            pg_sys::ExplainPropertyInteger(
                c"Peak Memory".as_ptr(),
                c"kB".as_ptr(),
                self.counters.peak_memory.div_ceil(1024) as i64,
                es,
            );
            pg_sys::ExplainPropertyInteger(
                c"Bytes Read".as_ptr(),
                c"bytes".as_ptr(),
                c.bytes_read as i64,
                es,
            );
        }
    }
}

impl ColumnarAgg {
    /// Reads the whole relation and folds every aggregate.
    /// Folds the next batch of groups: the whole scan, or this pass of it, or (a partial
    /// aggregate past work_mem) what fits.
    unsafe fn fold(&mut self, node: *mut pg_sys::CustomScanState) {
        if !self.resolved {
            let values = operand_values(&self.operands, &self.operand_states, (*node).ss.ps.ps_ExprContext);
            let reader = self.reader.as_mut().expect("scan begun");
            reader.set_filter(self.scan_filter.as_ref().map(|f| PushedFilter::boxed(f.resolve(&values))));
            self.agg_filters =
                self.plan.aggs.iter().map(|a| a.filter.as_ref().map(|f| f.resolve(&values))).collect();
            self.resolved = true;
        }
        let grouped = !self.plan.keys.is_empty();
        let nkeys = self.plan.keys.len();
        let estimate = self.estimated_groups;
        let new_grouper = |passes: u64| {
            let mut g = Grouper::new(nkeys);
            // The estimate, within reason: a wrong one costs a rehash or some memory.
            g.reserve((estimate / passes as f64).min((1 << 20) as f64) as usize);
            g
        };
        let mut grouper = grouped.then(|| new_grouper(self.passes));
        let new_accs = || self.plan.aggs.iter().map(|a| Acc::new(a.func, a.input)).collect::<Vec<Acc>>();
        let mut accs = new_accs();
        if !grouped {
            accs.iter_mut().for_each(|a| a.resize(1));
        }
        let collations: Vec<pg_sys::Oid> =
            (0..accs.len()).map(|i| self.outputs[self.plan.keys.len() + i].collation).collect();
        let mut sel: Vec<u32> = Vec::new();
        let mut gids: Vec<u32> = Vec::new();
        let mut sub_sel: Vec<u32> = Vec::new();
        let mut sub_gids: Vec<u32> = Vec::new();
        let mut key_values: Vec<Vec<i64>> = vec![Vec::new(); self.plan.keys.len()];
        let mut trunc_memo: Vec<Option<(i64, i64, i64)>> = vec![None; self.plan.keys.len()];
        let reader = self.reader.as_mut().unwrap();
        let mut counters = self.counters;
        let mut rows_this_pass = 0u64;
        let mut exhausted = true;
        while reader.next_vector() {
            sel.clear();
            sel.extend_from_slice(reader.selection());
            if !grouped && reader.vector_whole() && self.agg_filters.iter().all(Option::is_none) {
                // Every row of the vector counts: zone maps answer what they can.
                let mut folded_any = false;
                for (i, acc) in accs.iter_mut().enumerate() {
                    let spec = &self.plan.aggs[i];
                    if !answer_from_metadata(acc, spec, reader, sel.len()) {
                        fold_one(acc, spec, reader, &sel, Gids::One, collations[i]);
                        folded_any = true;
                    }
                }
                if folded_any {
                    counters.vectors_folded += 1;
                    counters.rows_folded += sel.len() as u64;
                } else {
                    counters.vectors_from_metadata += 1;
                }
                continue;
            }
            rows_this_pass += sel.len() as u64;
            let gids_now = if let Some(grouper) = grouper.as_mut() {
                for (c, key) in self.plan.keys.iter().enumerate() {
                    reader.decode(key.att);
                    let col = reader.column(key.att);
                    if !matches!(key.kind, KeyKind::Value) {
                        bucket_values(
                            key.kind,
                            col,
                            &sel,
                            self.fixed_offset,
                            &mut trunc_memo[c],
                            &mut key_values[c],
                        );
                    }
                }
                let inputs: Vec<KeyInput> = self
                    .plan
                    .keys
                    .iter()
                    .enumerate()
                    .map(|(c, key)| {
                        let col = reader.column(key.att);
                        match (key.kind, &col.values) {
                            (KeyKind::Value, DecodedValues::Int(v)) => {
                                KeyInput::Int { values: v, valid: col.validity.as_deref() }
                            }
                            (KeyKind::Value, _) => KeyInput::Bytes(col),
                            _ => KeyInput::Int { values: &key_values[c], valid: col.validity.as_deref() },
                        }
                    })
                    .collect();
                if self.passes > 1 {
                    retain_partition(&inputs, &mut sel, self.passes, self.pass, &self.partition_hash);
                    if sel.is_empty() {
                        continue;
                    }
                }
                grouper.assign(&inputs, &sel, &mut gids);
                let groups = grouper.len();
                accs.iter_mut().for_each(|a| a.resize(groups));
                Gids::Each(&gids)
            } else {
                Gids::One
            };
            counters.rows_folded += sel.len() as u64;
            counters.vectors_folded += 1;
            for (i, acc) in accs.iter_mut().enumerate() {
                let spec = &self.plan.aggs[i];
                match &self.agg_filters[i] {
                    None => fold_one(acc, spec, reader, &sel, gids_now, collations[i]),
                    Some(filter) => {
                        sub_sel.clear();
                        sub_sel.extend_from_slice(&sel);
                        kernels::select(filter, &mut reader.columns(), &mut sub_sel);
                        let sub = match gids_now {
                            Gids::One => Gids::One,
                            Gids::Each(all) => {
                                subset(&sel, all, &sub_sel, &mut sub_gids);
                                Gids::Each(&sub_gids)
                            }
                        };
                        fold_one(acc, spec, reader, &sub_sel, sub, collations[i]);
                    }
                }
            }
            if grouped {
                let used = memory(grouper.as_ref(), &accs, &self.plan);
                counters.peak_memory = counters.peak_memory.max(used);
                if used > self.memory_limit {
                    if self.plan.partial {
                        // Core's Finalize Aggregate combines however many partial
                        // states a group has: these go now, the fold goes on after.
                        counters.flushes += 1;
                        exhausted = false;
                        break;
                    }
                    if self.passes == 1 {
                        // Start over in passes, each folding the groups of one share
                        // of the key hashes, sized from what this much of the scan made.
                        let total = reader.total_rows().max(1) as f64;
                        let projected = used as f64 * (total / rows_this_pass.max(1) as f64).max(1.0);
                        let passes = (projected / (self.memory_limit as f64 * 0.7)).ceil() as u64;
                        self.passes = passes.clamp(2, 1 << 16).next_power_of_two();
                        self.pass = 0;
                        reader.restart();
                        grouper = Some(new_grouper(self.passes));
                        accs = new_accs();
                        rows_this_pass = 0;
                        trunc_memo.iter_mut().for_each(|m| *m = None);
                    }
                    // A pass that still does not fit (skewed keys) keeps its groups.
                }
            }
        }
        counters.peak_memory = counters.peak_memory.max(memory(grouper.as_ref(), &accs, &self.plan));
        let groups = grouper.as_ref().map_or(1, |g| g.len());
        counters.groups += groups as u64;
        self.counters = counters;
        self.folded = Some(Folded { grouper, accs, groups, exhausted });
    }
}

/// Folds the selected rows into one aggregate (its column decoded now).
unsafe fn fold_one(
    acc: &mut Acc,
    spec: &AggSpec,
    reader: &mut Reader,
    sel: &[u32],
    gids: Gids,
    collation: pg_sys::Oid,
) {
    let Some(att) = spec.att else {
        acc.count_rows(sel, gids);
        return;
    };
    if sel.is_empty() {
        return;
    }
    reader.decode(att);
    let col = reader.column(att);
    let cmp = |a: &[u8], b: &[u8]| collated_cmp(a, b, collation);
    match acc.fold(col, sel, gids, &cmp) {
        Ok(()) => {}
        Err(Overflow::Float) => pgrx::ereport!(
            pgrx::PgLogLevel::ERROR,
            pgrx::PgSqlErrorCode::ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: overflow"
        ),
        Err(Overflow::CorruptNumeric) => {
            crate::storage::shared::error::data_corrupted("a stored numeric value is malformed")
        }
    }
}

/// Byte strings in collation `collation`'s order (text_cmp's).
fn collated_cmp(a: &[u8], b: &[u8], collation: pg_sys::Oid) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    // SAFETY: varstr_cmp reads the two buffers; it runs on the backend's thread.
    let c = unsafe {
        pg_sys::varstr_cmp(
            a.as_ptr() as *const std::ffi::c_char,
            a.len() as i32,
            b.as_ptr() as *const std::ffi::c_char,
            b.len() as i32,
            collation,
        )
    };
    c.cmp(&0)
}

/// Whether zone maps answer aggregate `spec` for the current vector when every row of it
/// is selected.
fn metadata_answers(spec: &AggSpec, reader: &Reader) -> bool {
    if !spec.zone_answerable() {
        return false;
    }
    let Some(a) = spec.att else { return true };
    let floats = matches!(spec.input, InputType::Float4 | InputType::Float8);
    reader.vector_stats(a).is_some_and(|s| match (spec.func, s.zone) {
        (AggFunc::Count, _) => true,
        (_, ZoneMap::Int { .. }) => !floats,
        // A float zone map holds the extremes in PostgreSQL's order (NaN above all). A
        // zero extreme is left to the fold: -0 and 0 compare equal, and which one core's
        // float8larger keeps depends on their order.
        (_, ZoneMap::Float { min, max }) => {
            floats && (if spec.func == AggFunc::Max { max } else { min }) != 0.0
        }
        (_, ZoneMap::None) => s.null_count == s.rows,
        _ => false,
    })
}

/// Answers the aggregate from the current vector's zone map if it can (see
/// `metadata_answers`); true if it did.
fn answer_from_metadata(acc: &mut Acc, spec: &AggSpec, reader: &Reader, rows: usize) -> bool {
    if !metadata_answers(spec, reader) {
        return false;
    }
    let stats = spec.att.and_then(|a| reader.vector_stats(a));
    match (acc, stats) {
        (acc @ Acc::Count(_), None) => acc.add_count(rows as i64),
        (acc @ Acc::Count(_), Some(s)) => acc.add_count((s.rows - s.null_count) as i64),
        (Acc::MinMaxInt { v, seen, max }, Some(s)) => {
            if let ZoneMap::Int { min, max: hi } = s.zone {
                let x = if *max { hi } else { min };
                if !seen[0] || (if *max { x > v[0] } else { x < v[0] }) {
                    v[0] = x;
                    seen[0] = true;
                }
            }
        }
        (Acc::MinMaxFloat { v, seen, max }, Some(s)) => {
            if let ZoneMap::Float { min, max: hi } = s.zone {
                let x = if *max { hi } else { min };
                let (old, new) = (float_key(v[0]), float_key(x));
                if !seen[0] || (if *max { new > old } else { new < old }) {
                    v[0] = x;
                    seen[0] = true;
                }
            }
        }
        _ => return false,
    }
    true
}

/// The rows' group ids for `sub` (a subset of `sel`, both ascending), from `gids`
/// (parallel to `sel`).
fn subset(sel: &[u32], gids: &[u32], sub: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let mut j = 0;
    for &r in sub {
        while sel[j] != r {
            j += 1;
        }
        out.push(gids[j]);
    }
}

/// Bytes the fold holds, roughly.
fn memory(grouper: Option<&Grouper>, accs: &[Acc], plan: &AggPlan) -> usize {
    let groups = grouper.map_or(1, |g| g.len());
    let states: usize = plan.aggs.iter().map(|a| Acc::bytes_per_group(a.func, a.input)).sum();
    grouper.map_or(0, |g| g.memory()) + groups * states + accs.len() * 64
}

/// Computes a bucketed key (`date_trunc`, `date_bin`) for the selected rows of `col`
/// into `out` (indexed by row). Values the arithmetic does not cover (BC dates, a time
/// zone with changing offsets, errors) are computed by PostgreSQL's own function;
/// `memo` keeps its last answer (bucket start, largest value seen in it, bucket).
unsafe fn bucket_values(
    kind: KeyKind,
    col: &DecodedVector,
    sel: &[u32],
    fixed_offset: Option<i64>,
    memo: &mut Option<(i64, i64, i64)>,
    out: &mut Vec<i64>,
) {
    let DecodedValues::Int(values) = &col.values else {
        unreachable!("a bucketed key on a non-integer column")
    };
    out.clear();
    out.resize(values.len(), 0);
    for &r in sel {
        let r = r as usize;
        if !col.is_valid(r) {
            continue;
        }
        let ts = values[r];
        let fast = match kind {
            KeyKind::Trunc(unit) => bucket::trunc_local(unit, ts),
            KeyKind::TruncTz(unit) => fixed_offset.and_then(|off| bucket::trunc_fixed_offset(unit, ts, off)),
            KeyKind::Bin { stride, origin } => bucket::date_bin(stride, ts, origin),
            KeyKind::Value => Some(ts),
        };
        out[r] = match fast {
            Some(b) => b,
            None => postgres_bucket(kind, ts, memo),
        };
    }
}

/// PostgreSQL's date_trunc / date_bin for one value (also raising its errors).
/// Buckets are intervals of time: a value between a bucket's start and a value seen to
/// fall in it falls in it too, so the memo answers most rows.
unsafe fn postgres_bucket(kind: KeyKind, ts: i64, memo: &mut Option<(i64, i64, i64)>) -> i64 {
    if let Some((lo, hi, b)) = *memo {
        if lo <= ts && ts <= hi {
            return b;
        }
    }
    let d = |x: i64| pg_sys::Datum::from(x as isize as usize);
    let result = match kind {
        KeyKind::Trunc(unit) | KeyKind::TruncTz(unit) => {
            let name = CString::new(unit_name(unit)).unwrap();
            let text = pg_sys::cstring_to_text(name.as_ptr());
            let f = if matches!(kind, KeyKind::Trunc(_)) {
                pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMP
            } else {
                pg_sys::F_DATE_TRUNC_TEXT_TIMESTAMPTZ
            };
            // The session's time zone and collation-free: as the query's own call.
            pg_sys::OidFunctionCall2Coll(
                pg_sys::Oid::from_u32(f),
                pg_sys::InvalidOid,
                pg_sys::Datum::from(text),
                d(ts),
            )
        }
        KeyKind::Bin { stride, origin } => {
            let interval = pg_sys::palloc0(std::mem::size_of::<pg_sys::Interval>()) as *mut pg_sys::Interval;
            (*interval).time = stride;
            pg_sys::OidFunctionCall3Coll(
                pg_sys::Oid::from_u32(pg_sys::F_DATE_BIN_INTERVAL_TIMESTAMP_TIMESTAMP),
                pg_sys::InvalidOid,
                pg_sys::Datum::from(interval),
                d(ts),
                d(origin),
            )
        }
        KeyKind::Value => return ts,
    };
    let b = result.value() as i64;
    *memo = (b <= ts).then_some((b, ts, b));
    b
}

fn unit_name(unit: TruncUnit) -> &'static str {
    match unit {
        TruncUnit::Microseconds => "microseconds",
        TruncUnit::Milliseconds => "milliseconds",
        TruncUnit::Second => "second",
        TruncUnit::Minute => "minute",
        TruncUnit::Hour => "hour",
        TruncUnit::Day => "day",
        TruncUnit::Week => "week",
        TruncUnit::Month => "month",
        TruncUnit::Quarter => "quarter",
        TruncUnit::Year => "year",
        TruncUnit::Decade => "decade",
        TruncUnit::Century => "century",
        TruncUnit::Millennium => "millennium",
    }
}

fn null() -> (pg_sys::Datum, bool) {
    (pg_sys::Datum::from(0usize), true)
}

fn int8(x: i64) -> (pg_sys::Datum, bool) {
    (pg_sys::Datum::from(x as isize as usize), false)
}

fn float8(x: f64) -> (pg_sys::Datum, bool) {
    (pg_sys::Datum::from(x.to_bits() as usize), false)
}

/// A numeric Datum of `x`.
unsafe fn numeric(x: i128) -> pg_sys::Datum {
    match i64::try_from(x) {
        Ok(small) => pg_sys::OidFunctionCall1Coll(
            pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_INT8),
            pg_sys::InvalidOid,
            int8(small).0,
        ),
        Err(_) => numeric_text(&x.to_string()),
    }
}

/// numeric_div(sum, n): the final step of avg over integers.
unsafe fn numeric_avg(sum: i128, n: i64) -> (pg_sys::Datum, bool) {
    let d = pg_sys::OidFunctionCall2Coll(
        pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_DIV),
        pg_sys::InvalidOid,
        numeric(sum),
        numeric(n as i128),
    );
    (d, false)
}

/// Aggregate `acc`'s result for group `g`: what its final function gives.
unsafe fn result_datum(
    acc: &Acc,
    func: AggFunc,
    input: InputType,
    g: usize,
    out: &OutputType,
    images: &mut ImageArena,
) -> (pg_sys::Datum, bool) {
    match acc {
        Acc::Count(c) => int8(c[g]),
        Acc::SumInt { sum, n } => match (n[g], func) {
            (0, _) => null(),
            (_, AggFunc::Avg) => numeric_avg(sum[g] as i128, n[g]),
            _ => int8(sum[g]),
        },
        Acc::SumWide { sum, n } => match (n[g], func) {
            (0, _) => null(),
            (_, AggFunc::Avg) => numeric_avg(sum[g], n[g]),
            _ => (numeric(sum[g]), false),
        },
        Acc::SumF32 { sum, n } => match n[g] {
            0 => null(),
            _ => datum::point_datum(out.kind, PointValue::Float32(sum[g]), images),
        },
        Acc::SumF64 { sum, n } => match n[g] {
            0 => null(),
            _ => float8(sum[g]),
        },
        Acc::Moments { n, sx, .. } => match n[g] {
            0.0 => null(),
            _ => float8(sx[g] / n[g]),
        },
        Acc::MinMaxInt { v, seen, .. } => match seen[g] {
            false => null(),
            true => datum::point_datum(out.kind, PointValue::Int(v[g]), images),
        },
        Acc::MinMaxFloat { v, seen, .. } => match (seen[g], input) {
            (false, _) => null(),
            (true, InputType::Float4) => {
                datum::point_datum(out.kind, PointValue::Float32(v[g] as f32), images)
            }
            (true, _) => datum::point_datum(out.kind, PointValue::Float64(v[g]), images),
        },
        Acc::MinMaxBytes { v, .. } => match &v[g] {
            None => null(),
            Some(b) => datum::point_datum(out.kind, PointValue::Bytes(b), images),
        },
        Acc::Bool { v, seen, .. } => match seen[g] {
            false => null(),
            true => (pg_sys::Datum::from(v[g] as usize), false),
        },
        // numeric_sum, and numeric_avg: the sum over the count (NaN and infinities as
        // the sum has them).
        Acc::Decimal(sums) => match sums[g].text() {
            None => null(),
            Some(text) => {
                let sum = numeric_text(&text);
                let special = sums[g].nan > 0 || sums[g].pos_inf > 0 || sums[g].neg_inf > 0;
                if func == AggFunc::Avg && !special {
                    let d = pg_sys::OidFunctionCall2Coll(
                        pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_DIV),
                        pg_sys::InvalidOid,
                        sum,
                        numeric(sums[g].n as i128),
                    );
                    (d, false)
                } else {
                    (sum, false)
                }
            }
        },
    }
}

/// The numeric `text` reads as (numeric_in, no typmod).
unsafe fn numeric_text(text: &str) -> pg_sys::Datum {
    let text = CString::new(text).unwrap();
    pg_sys::OidFunctionCall3Coll(
        pg_sys::Oid::from_u32(pg_sys::F_NUMERIC_IN),
        pg_sys::InvalidOid,
        pg_sys::Datum::from(text.as_ptr()),
        pg_sys::Datum::from(pg_sys::InvalidOid),
        pg_sys::Datum::from(-1i32 as isize as usize),
    )
}

/// Aggregate `acc`'s transition state for group `g`, as core's Finalize Aggregate reads
/// it (serialized where the state is internal).
unsafe fn state_datum(
    acc: &Acc,
    func: AggFunc,
    input: InputType,
    g: usize,
    out: &OutputType,
    images: &mut ImageArena,
) -> (pg_sys::Datum, bool) {
    match acc {
        // int4_avg_accum's int8[2] {count, sum}.
        Acc::SumInt { sum, n } if func == AggFunc::Avg => {
            (array(&[n[g] as u64, sum[g] as u64], pg_sys::INT8OID), false)
        }
        // float8_accum's float8[3] {N, Sx, Sxx}.
        Acc::Moments { n, sx, sxx } => {
            (array(&[n[g].to_bits(), sx[g].to_bits(), sxx[g].to_bits()], pg_sys::FLOAT8OID), false)
        }
        // int8_avg_accum's internal state, serialized (int8_avg_serialize's bytes).
        Acc::SumWide { sum, n } => {
            let bytes = super::agg::fold::int8_avg_serialized(sum[g], n[g]);
            (super::customscan::bytea_datum(&bytes), false)
        }
        // numeric_avg_accum's internal state, serialized (numeric_avg_serialize's bytes).
        Acc::Decimal(sums) => (super::customscan::bytea_datum(&sums[g].serialized()), false),
        // Every other state is the result itself.
        _ => result_datum(acc, func, input, g, out, images),
    }
}

/// A one-dimensional array of 8-byte by-value elements.
unsafe fn array(words: &[u64], elem: pg_sys::Oid) -> pg_sys::Datum {
    let mut elems: Vec<pg_sys::Datum> = words.iter().map(|&w| pg_sys::Datum::from(w as usize)).collect();
    let a = pg_sys::construct_array(
        elems.as_mut_ptr(),
        elems.len() as i32,
        elem,
        8,
        true,
        b'd' as std::ffi::c_char,
    );
    pg_sys::Datum::from(a)
}

/// Parallel workers (and the leader) take row groups from a counter in shared memory
/// (`row_group_claims`).
impl ClaimsRowGroups for ColumnarAgg {
    fn reader_mut(&mut self) -> Option<&mut Reader> {
        self.reader.as_mut()
    }
}
