//! The `ColumnarScan` custom scan node: reads only the columns a query uses.
//! The planner (`planner::scan_path`) decides which; this node reads them and shows
//! them in EXPLAIN.

use super::customscan::{CustomScanNode, PlanPrivate};
use crate::pg_list;
use crate::storage::datum::attr;
use crate::storage::format::zonemap::ZonePredicate;
use crate::storage::reader::{GroupClaim, Reader};
use crate::storage::write_buffer;
use pgrx::pg_sys;
use pgrx::{FromDatum, IntoDatum};
use std::ffi::{CStr, CString};

pub const NAME: &CStr = c"ColumnarScan";

/// What the planner decides for a ColumnarScan, kept in its plan.
pub struct ScanPlan {
    /// Attribute numbers (1-based) to decode.
    pub attnums: Vec<i32>,
    /// (attribute index, predicate) pairs zone maps check: row groups and vectors they
    /// refute are skipped. Their quals are the plan's `custom_exprs`, for EXPLAIN.
    pub zone_predicates: Vec<(usize, ZonePredicate)>,
}

/// Kept as (attnums, predicate attribute indexes, predicates as bytea constants): lists
/// that copyObject and the plan's text form (parallel workers) carry.
impl PlanPrivate for ScanPlan {
    unsafe fn to_list(&self) -> *mut pg_sys::List {
        let atts = pg_list::from_ints(self.zone_predicates.iter().map(|(a, _)| *a as i32));
        let predicates = pg_list::from_ptrs(self.zone_predicates.iter().map(|(_, p)| {
            let bytes = p.to_bytes().as_slice().into_datum().expect("a bytea datum");
            pg_sys::makeConst(pg_sys::BYTEAOID, -1, pg_sys::InvalidOid, -1, bytes, false, false)
        }));
        pg_list::from_ptrs([self.attnums.to_list(), atts, predicates])
    }

    unsafe fn from_list(list: *mut pg_sys::List) -> Self {
        let parts: Vec<*mut pg_sys::List> = pg_list::ptrs(list).collect();
        let [attnums, atts, predicates] = parts[..] else { pgrx::error!("malformed ColumnarScan plan") };
        let zone_predicates = pg_list::ints(atts)
            .zip(pg_list::ptrs::<pg_sys::Const>(predicates))
            .map(|(att, c)| {
                let bytes = <&[u8]>::from_datum((*c).constvalue, (*c).constisnull).unwrap_or_default();
                let p = ZonePredicate::from_bytes(bytes)
                    .unwrap_or_else(|| pgrx::error!("malformed ColumnarScan plan"));
                (att as usize, p)
            })
            .collect();
        ScanPlan { attnums: Vec::<i32>::from_list(attnums), zone_predicates }
    }
}

/// A ColumnarScan in execution.
pub struct ColumnarScan {
    /// The zone-map predicates, until `begin` hands them to the reader.
    zone_predicates: Vec<(usize, ZonePredicate)>,
    reader: Option<Reader>,
    /// Attribute numbers (1-based) the scan decodes.
    attnums: Vec<i32>,
    /// The quals zone maps check, for EXPLAIN.
    zone_quals: Vec<*mut pg_sys::Node>,
}

impl CustomScanNode for ColumnarScan {
    const NAME: &'static CStr = NAME;
    type Private = ScanPlan;

    unsafe fn create(plan: ScanPlan, cscan: *mut pg_sys::CustomScan) -> Self {
        ColumnarScan {
            zone_predicates: plan.zone_predicates,
            reader: None,
            attnums: plan.attnums,
            zone_quals: pg_list::ptrs((*cscan).custom_exprs).collect(),
        }
    }

    unsafe fn begin(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        _eflags: i32,
    ) {
        let rel = (*node).ss.ss_currentRelation;
        let natts = (*(*rel).rd_att).natts as usize;
        let mut wanted = vec![false; natts];
        for &a in &self.attnums {
            wanted[a as usize - 1] = true;
        }
        write_buffer::flush_before_reading(rel);
        let mut reader =
            Reader::new(rel, (*estate).es_snapshot, Some(wanted), GroupClaim::Serial { next: 0 });
        reader.set_predicates(std::mem::take(&mut self.zone_predicates));
        self.reader = Some(reader);
    }

    unsafe fn next(&mut self, node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
        let slot = (*node).ss.ss_ScanTupleSlot;
        let reader = self.reader.as_mut().expect("scan begun");
        let backward = (*(*node).ss.ps.state).es_direction == pg_sys::ScanDirection::BackwardScanDirection;
        if !(if backward { reader.prev(slot) } else { reader.next(slot) }) {
            pg_sys::ExecClearTuple(slot);
        }
        slot
    }

    unsafe fn end(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.release();
        }
    }

    unsafe fn rescan(&mut self, _node: *mut pg_sys::CustomScanState) {
        if let Some(reader) = self.reader.as_mut() {
            reader.restart();
        }
    }

    unsafe fn explain(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        ancestors: *mut pg_sys::List,
        es: *mut pg_sys::ExplainState,
    ) {
        explain(self, node, ancestors, es)
    }
}

unsafe fn explain(
    inner: &ColumnarScan,
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
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
    if !inner.zone_quals.is_empty() {
        let list = pg_list::from_ptrs(inner.zone_quals.iter().copied());
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, (*node).ss.ps.plan, ancestors);
        let expr = pg_sys::make_ands_explicit(list) as *mut pg_sys::Node;
        let text = pg_sys::deparse_expression(expr, context, false, false);
        pg_sys::ExplainPropertyText(c"Zone Map Filter".as_ptr(), text, es);
    }
    if let (true, Some(reader)) = ((*es).analyze, inner.reader.as_ref()) {
        let none = std::ptr::null();
        pg_sys::ExplainPropertyInteger(c"Row Groups Read".as_ptr(), none, reader.groups_read() as i64, es);
        pg_sys::ExplainPropertyInteger(
            c"Row Groups Skipped".as_ptr(),
            none,
            reader.groups_skipped() as i64,
            es,
        );
        pg_sys::ExplainPropertyInteger(
            c"Vectors Skipped".as_ptr(),
            none,
            reader.vectors_skipped() as i64,
            es,
        );
    }
}
