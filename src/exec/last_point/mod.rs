//! The `LastPoint` custom scan node: the best row of each key of a relation, by one
//! ordering column — what `SELECT DISTINCT ON (g) ... ORDER BY g, t DESC` and
//! `SELECT g, max(t) ... GROUP BY g` ask — without reading the whole table. Two sources:
//!
//! - `zones` (columnar tables): row groups and vectors newest first by the ordering
//!   column's zone maps; a vector is passed by once every key it may hold (its key zone
//!   map, or its dictionary) has a row at least as good as its best possible one; only
//!   the key and ordering columns are decoded, and the winners' rows are fetched at the
//!   end by TID.
//! - `skip_scan` (any table with a btree on (g, t, ...)): one index descent per key.
//!
//! Its scan tuple (`custom_scan_tlist`) holds the relation's columns the query uses
//! and, for max/min, the aggregates, whose value is the winner's ordering column. The
//! planner (`planner::last_point_path`) decides when it runs.

pub mod best;
mod skip_scan;
mod zones;

use super::columnar_scan::ScanPlan;
use super::customscan::{
    explain_fields_node, explain_fields_of, explain_planned, CustomScanNode, PlanPrivate,
};
use crate::pg_list;
use best::Rank;
use pgrx::pg_sys;
use std::ffi::CStr;

pub const NAME: &CStr = c"PgColumnarLastPoint";

/// Where the rows come from.
pub enum Source {
    /// A columnar relation read by zone maps: the scan's columns and pushed filter.
    Zones(ScanPlan),
    /// One descent per key of a btree whose first columns are the key and the
    /// ordering column.
    Index(IndexPlan),
}

pub struct IndexPlan {
    pub index: pg_sys::Oid,
    /// The scan direction whose order within a key puts the best row first.
    pub forward: bool,
    /// The next key lies above the last one (`>`), or below (`<`), in that direction.
    pub next_greater: bool,
    /// NULL keys come before the others in that direction.
    pub nulls_first: bool,
}

/// What the planner decides for a LastPoint, kept in its plan.
pub struct LastPointPlan {
    pub key_att: usize,
    pub time_att: usize,
    pub rank: Rank,
    pub source: Source,
    /// (label, text) pairs for EXPLAIN; a label starting with '+' only with VERBOSE.
    pub explain: Vec<(String, String)>,
}

impl PlanPrivate for LastPointPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        // SAFETY: builds the plan's private lists in the planner's current memory context on
        // the backend thread (the trait's contract); every element is a list or Const made here.
        unsafe {
            let (kind, index, scan) = match &self.source {
                Source::Zones(scan) => (0, [0, 0, 0, 0], scan.to_list()),
                Source::Index(i) => (
                    1,
                    [i.index.to_u32() as i32, i.forward as i32, i.next_greater as i32, i.nulls_first as i32],
                    std::ptr::null_mut(),
                ),
            };
            let ints = [
                self.key_att as i32,
                self.time_att as i32,
                self.rank.descending as i32,
                self.rank.nulls_win as i32,
                kind,
            ]
            .into_iter()
            .chain(index);
            pg_list::from_ptrs([
                pg_list::from_ints(ints) as *mut pg_sys::Node,
                scan as *mut pg_sys::Node,
                explain_fields_node(&self.explain),
            ])
        }
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        // SAFETY: `list` is the custom_private `to_list` made (or its copy, the trait's
        // contract): a pointer list of an integer list, a ScanPlan list (or NIL) and a bytea Const.
        unsafe {
            let malformed = || -> ! { pgrx::error!("malformed LastPoint plan") };
            let parts: Vec<*mut pg_sys::Node> = pg_list::ptrs(list).collect();
            let [ints, scan, explain] = parts[..] else { malformed() };
            let ints: Vec<i32> = pg_list::ints(ints as *mut pg_sys::List).collect();
            let [key_att, time_att, descending, nulls_win, kind, index, forward, next_greater, nulls_first] =
                ints[..]
            else {
                malformed()
            };
            let source = match kind {
                0 => Source::Zones(ScanPlan::from_list(scan as *mut pg_sys::List)),
                1 => Source::Index(IndexPlan {
                    index: pg_sys::Oid::from(index as u32),
                    forward: forward != 0,
                    next_greater: next_greater != 0,
                    nulls_first: nulls_first != 0,
                }),
                _ => malformed(),
            };
            let explain = explain_fields_of(explain);
            LastPointPlan {
                key_att: key_att as usize,
                time_att: time_att as usize,
                rank: Rank { descending: descending != 0, nulls_win: nulls_win != 0 },
                source,
                explain,
            }
        }
    }
}

/// What a scan tuple column holds.
#[derive(Clone, Copy)]
enum ScanColumn {
    /// The relation's attribute (1-based).
    Attribute(i32),
    /// An aggregate (max or min of the ordering column): the winner's value of it.
    Extreme,
}

/// What the node did, for EXPLAIN ANALYZE.
#[derive(Default, Clone, Copy)]
pub struct Counters {
    pub groups_read: u64,
    pub groups_skipped: u64,
    /// Vectors whose ordering column was decoded and folded.
    pub vectors_read: u64,
    /// Vectors passed by: by zone maps alone, or after decoding their keys.
    pub vectors_skipped_by_zones: u64,
    pub vectors_skipped_by_keys: u64,
    pub rows_ranked: u64,
    pub index_descents: u64,
    pub rows_examined: u64,
    pub winners: u64,
}

enum Run {
    Zones(Box<zones::ZoneRun>),
    Index(skip_scan::SkipScan),
}

pub struct LastPoint {
    plan: LastPointPlan,
    exprs: Vec<*mut pg_sys::Node>,
    columns: Vec<ScanColumn>,
    /// A slot of the relation's own type, which rows are fetched into.
    table_slot: *mut pg_sys::TupleTableSlot,
    run: Option<Run>,
}

impl CustomScanNode for LastPoint {
    const NAME: &'static CStr = NAME;
    type Private = LastPointPlan;

    unsafe fn create(plan: LastPointPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        // SAFETY: `cscan` is the live plan node (the trait's contract); its custom_scan_tlist
        // holds TargetEntries whose expressions are Nodes, and custom_exprs is a pointer list.
        unsafe {
            let columns = pg_list::ptrs::<pg_sys::TargetEntry>((*cscan).custom_scan_tlist)
                .map(|tle| {
                    let expr = (*tle).expr as *mut pg_sys::Node;
                    if (*expr).type_ == pg_sys::NodeTag::T_Var {
                        ScanColumn::Attribute((*(expr as *mut pg_sys::Var)).varattno as i32)
                    } else {
                        ScanColumn::Extreme
                    }
                })
                .collect();
            LastPoint {
                plan,
                exprs: pg_list::ptrs((*cscan).custom_exprs).collect(),
                columns,
                table_slot: std::ptr::null_mut(),
                run: None,
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
        // ExecInitNode opened and locked, and `estate` its live EState with a registered
        // snapshot, both alive until `end` (the trait's contract); the runs' contracts follow.
        unsafe {
            let rel = (*node).ss.ss_currentRelation;
            self.table_slot = pg_sys::table_slot_create(rel, &raw mut (*estate).es_tupleTable);
            let parent = &raw mut (*node).ss.ps;
            self.run = Some(match &mut self.plan.source {
                Source::Zones(scan) => Run::Zones(Box::new(zones::ZoneRun::begin(
                    rel,
                    (*estate).es_snapshot,
                    scan,
                    self.plan.key_att,
                    self.plan.time_att,
                    self.plan.rank,
                    &self.exprs,
                    parent,
                ))),
                Source::Index(index) => Run::Index(skip_scan::SkipScan::begin(
                    rel,
                    (*estate).es_snapshot,
                    index,
                    self.plan.key_att,
                    &self.exprs,
                    parent,
                )),
            });
        }
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        // SAFETY: `node` is this node's begun CustomScanState (the trait's contract), so its
        // scan slot, expression context and the run made by `begin` are live; `table_slot` was
        // made for the scan relation in `begin`.
        unsafe {
            let scan_slot = (*node).ss.ss_ScanTupleSlot;
            let econtext = (*node).ss.ps.ps_ExprContext;
            let found = match self.run.as_mut().expect("scan begun") {
                Run::Zones(run) => run.next(econtext, self.table_slot),
                Run::Index(run) => {
                    // The quals read the scan tuple.
                    (*econtext).ecxt_scantuple = scan_slot;
                    let columns = &self.columns;
                    let time_att = self.plan.time_att;
                    run.next(econtext, self.table_slot, &mut |table_slot| {
                        fill_scan_slot(columns, time_att, table_slot, scan_slot)
                    })
                }
            };
            if !found {
                return pg_sys::ExecClearTuple(scan_slot);
            }
            fill_scan_slot(&self.columns, self.plan.time_att, self.table_slot, scan_slot);
            scan_slot
        }
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: EndCustomScan: the run was begun in `begin` and is taken, so ended once.
        unsafe {
            match self.run.take() {
                Some(Run::Index(run)) => run.end(),
                Some(Run::Zones(mut run)) => run.end(),
                None => {}
            }
        }
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        // SAFETY: ReScanCustomScan between `begin` and `end`: the run is live, in the
        // executor's memory context.
        unsafe {
            match self.run.as_mut() {
                Some(Run::Index(run)) => run.restart(),
                Some(Run::Zones(run)) => run.restart(),
                None => {}
            }
        }
    }

    unsafe fn explain(
        &mut self,
        _node: *mut pg_sys::CustomScanState,
        _ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        // SAFETY: `es` is the live ExplainState of this EXPLAIN (the trait's contract); the
        // labels are static NUL-terminated strings.
        unsafe {
            explain_planned(&self.plan.explain, es);
            if !(*es).analyze {
                return;
            }
            let none = std::ptr::null();
            let int =
                |label: &CStr, v: u64| pg_sys::ExplainPropertyInteger(label.as_ptr(), none, v as i64, es);
            match self.run.as_ref() {
                Some(Run::Zones(run)) => {
                    let c = run.counters();
                    int(c"Row Groups Read", c.groups_read);
                    int(c"Row Groups Skipped", c.groups_skipped);
                    int(c"Vectors Read", c.vectors_read);
                    int(c"Vectors Skipped by Zone Maps", c.vectors_skipped_by_zones);
                    int(c"Vectors Skipped by Keys", c.vectors_skipped_by_keys);
                    int(c"Rows Ranked", c.rows_ranked);
                    int(c"Rows Fetched", c.winners);
                }
                Some(Run::Index(run)) => {
                    let c = run.counters();
                    int(c"Index Descents", c.index_descents);
                    int(c"Rows Examined", c.rows_examined);
                }
                None => {}
            }
        }
    }
}

/// Attribute `attno` (1-based) of `slot`.
///
/// # Safety
/// `slot` is a live slot holding a row with at least `attno` attributes.
pub(crate) unsafe fn attribute(slot: *mut pg_sys::TupleTableSlot, attno: i32) -> (pg_sys::Datum, bool) {
    // SAFETY: `slot` is live with at least `attno` attributes (this fn's contract), so
    // after slot_getsomeattrs its first `attno` values and null flags are valid.
    unsafe {
        if ((*slot).tts_nvalid as i32) < attno {
            pg_sys::slot_getsomeattrs_int(slot, attno);
        }
        let i = attno as usize - 1;
        (*(*slot).tts_values.add(i), *(*slot).tts_isnull.add(i))
    }
}

/// The scan tuple of the row in `table_slot`: its columns, and for each aggregate the
/// row's ordering column (the winner's is the group's max or min).
unsafe fn fill_scan_slot(
    columns: &[ScanColumn],
    time_att: usize,
    table_slot: *mut pg_sys::TupleTableSlot,
    scan_slot: *mut pg_sys::TupleTableSlot,
) {
    // SAFETY: both slots are live (the caller's: `next`'s); the scan slot has one column
    // per entry of `columns` (the node's custom_scan_tlist), written before it is stored as
    // a virtual tuple, and `table_slot` holds the row whose attributes are read.
    unsafe {
        pg_sys::ExecClearTuple(scan_slot);
        for (i, c) in columns.iter().enumerate() {
            let attno = match *c {
                ScanColumn::Attribute(a) => a,
                ScanColumn::Extreme => time_att as i32 + 1,
            };
            let (d, n) = attribute(table_slot, attno);
            *(*scan_slot).tts_values.add(i) = d;
            *(*scan_slot).tts_isnull.add(i) = n;
        }
        pg_sys::ExecStoreVirtualTuple(scan_slot);
    }
}
