//! The `ColumnarScan` custom scan node: reads only the columns a query uses.
//! The planner (`planner::scan_path`) decides which; this node reads them and shows
//! them in EXPLAIN.

use super::{zone_filter, MethodTable};
use crate::storage::datum::attr;
use crate::storage::reader::{GroupClaim, Reader};
use crate::storage::write_buffer;
use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::PgMemoryContexts;
use std::ffi::CString;

pub const NAME: &std::ffi::CStr = c"ColumnarScan";

#[repr(C)]
struct ScanState {
    css: pg_sys::CustomScanState,
    /// Rust-owned state, dropped with the executor's memory context (also on ERROR).
    inner: *mut Inner,
}

struct Inner {
    reader: Option<Reader>,
    /// Attribute numbers (1-based) the scan decodes.
    attnums: Vec<i32>,
    /// The quals zone maps check, for EXPLAIN.
    zone_quals: Vec<*mut pg_sys::Node>,
}

unsafe fn inner<'a>(node: *mut pg_sys::CustomScanState) -> &'a mut Inner {
    &mut *(*(node as *mut ScanState)).inner
}

/// Attribute numbers stored in the plan's `custom_private` (an integer list).
pub unsafe fn attnums_of_plan(private: *mut pg_sys::List) -> Vec<i32> {
    if private.is_null() {
        return Vec::new();
    }
    (0..(*private).length as usize).map(|i| (*(*private).elements.add(i)).int_value).collect()
}

#[pg_guard]
unsafe extern "C-unwind" fn create_state(cscan: *mut pg_sys::CustomScan) -> *mut pg_sys::Node {
    let state = pg_sys::palloc0(std::mem::size_of::<ScanState>()) as *mut ScanState;
    (*state).css.ss.ps.type_ = pg_sys::NodeTag::T_CustomScanState;
    (*state).css.methods = &EXEC_METHODS.0;
    let inner =
        Inner { reader: None, attnums: attnums_of_plan((*cscan).custom_private), zone_quals: Vec::new() };
    (*state).inner = PgMemoryContexts::CurrentMemoryContext.leak_and_drop_on_delete(inner);
    state as *mut pg_sys::Node
}

#[pg_guard]
unsafe extern "C-unwind" fn begin(
    node: *mut pg_sys::CustomScanState,
    estate: *mut pg_sys::EState,
    _eflags: i32,
) {
    let inner = inner(node);
    let rel = (*node).ss.ss_currentRelation;
    let natts = (*(*rel).rd_att).natts as usize;
    let mut wanted = vec![false; natts];
    for &a in &inner.attnums {
        wanted[a as usize - 1] = true;
    }
    write_buffer::flush_before_reading(rel);
    let mut reader = Reader::new(rel, (*estate).es_snapshot, Some(wanted), GroupClaim::Serial { next: 0 });
    let plan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
    let found = zone_filter::zone_predicates((*plan).scan.plan.qual, (*plan).scan.scanrelid);
    inner.zone_quals = found.iter().map(|(q, _, _)| *q).collect();
    reader.set_predicates(found.into_iter().map(|(_, att, p)| (att, p)).collect());
    inner.reader = Some(reader);
}

#[pg_guard]
unsafe extern "C-unwind" fn next_tuple(ss: *mut pg_sys::ScanState) -> *mut pg_sys::TupleTableSlot {
    let slot = (*ss).ss_ScanTupleSlot;
    let reader = inner(ss as *mut pg_sys::CustomScanState).reader.as_mut().expect("scan begun");
    let backward = (*(*ss).ps.state).es_direction == pg_sys::ScanDirection::BackwardScanDirection;
    if !(if backward { reader.prev(slot) } else { reader.next(slot) }) {
        pg_sys::ExecClearTuple(slot);
    }
    slot
}

#[pg_guard]
unsafe extern "C-unwind" fn recheck(_ss: *mut pg_sys::ScanState, _slot: *mut pg_sys::TupleTableSlot) -> bool {
    true
}

#[pg_guard]
unsafe extern "C-unwind" fn exec(node: *mut pg_sys::CustomScanState) -> *mut pg_sys::TupleTableSlot {
    pg_sys::ExecScan(&mut (*node).ss, Some(next_tuple), Some(recheck))
}

#[pg_guard]
unsafe extern "C-unwind" fn end(node: *mut pg_sys::CustomScanState) {
    if let Some(reader) = inner(node).reader.as_mut() {
        reader.release();
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn rescan(node: *mut pg_sys::CustomScanState) {
    if let Some(reader) = inner(node).reader.as_mut() {
        reader.restart();
    }
}

#[pg_guard]
unsafe extern "C-unwind" fn explain(
    node: *mut pg_sys::CustomScanState,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) {
    let inner = inner(node);
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
        let mut list: *mut pg_sys::List = std::ptr::null_mut();
        for q in &inner.zone_quals {
            list = pg_sys::lappend(list, (*q).cast());
        }
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

static EXEC_METHODS: MethodTable<pg_sys::CustomExecMethods> = MethodTable(pg_sys::CustomExecMethods {
    CustomName: NAME.as_ptr(),
    BeginCustomScan: Some(begin),
    ExecCustomScan: Some(exec),
    EndCustomScan: Some(end),
    ReScanCustomScan: Some(rescan),
    MarkPosCustomScan: None,
    RestrPosCustomScan: None,
    EstimateDSMCustomScan: None,
    InitializeDSMCustomScan: None,
    ReInitializeDSMCustomScan: None,
    InitializeWorkerCustomScan: None,
    ShutdownCustomScan: None,
    ExplainCustomScan: Some(explain),
});

pub static SCAN_METHODS: MethodTable<pg_sys::CustomScanMethods> = MethodTable(pg_sys::CustomScanMethods {
    CustomName: NAME.as_ptr(),
    CreateCustomScanState: Some(create_state),
});

/// Makes the node known by name, so plans that contain it can be copied to parallel
/// workers; called once from `_PG_init`.
pub unsafe fn register() {
    pg_sys::RegisterCustomScanMethods(&SCAN_METHODS.0);
}
