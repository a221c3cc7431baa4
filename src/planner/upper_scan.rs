//! The plan of a custom path that replaces an upper stage (grouping, distinct) over
//! one relation, written once for ColumnarAgg and LastPoint: the path keeps, in its
//! `custom_private`, the relation, the node's private plan, its scan tuple (the
//! `custom_scan_tlist` that the target list, HAVING and `custom_exprs` refer to once
//! setrefs has run), HAVING, and the node's expressions.

use crate::pg_list;
use pgrx::pg_sys;

/// A path's `custom_private`: relation `relid`, the node's private plan, the scan
/// tuple's expressions, HAVING, and the expressions the node evaluates.
pub unsafe fn private(
    relid: u32,
    plan: *mut pg_sys::List,
    scan_tuple: &[*mut pg_sys::Node],
    having: *mut pg_sys::List,
    exprs: &[*mut pg_sys::Node],
) -> *mut pg_sys::List {
    let tlist = pg_list::from_ptrs(scan_tuple.iter().enumerate().map(|(i, &e)| {
        pg_sys::makeTargetEntry(e as *mut pg_sys::Expr, i as i16 + 1, std::ptr::null_mut(), false)
    }));
    pg_list::from_ptrs([
        pg_list::from_ints([relid as i32]) as *mut pg_sys::Node,
        plan as *mut pg_sys::Node,
        tlist as *mut pg_sys::Node,
        having as *mut pg_sys::Node,
        pg_list::from_ptrs(exprs.iter().copied()) as *mut pg_sys::Node,
    ])
}

/// The CustomScan of such a path (`PlanCustomPath`), with `methods`.
pub unsafe fn plan(
    best_path: *mut pg_sys::CustomPath,
    tlist: *mut pg_sys::List,
    methods: &'static pg_sys::CustomScanMethods,
) -> *mut pg_sys::Plan {
    let private: Vec<*mut pg_sys::Node> = pg_list::ptrs((*best_path).custom_private).collect();
    let [relid, plan, scan_tuple, having, exprs] = private[..] else {
        pgrx::error!("malformed {} path", std::ffi::CStr::from_ptr(methods.CustomName).to_string_lossy())
    };
    let copy =
        |n: *mut pg_sys::Node| pg_sys::copyObjectImpl(n as *const std::ffi::c_void) as *mut pg_sys::Node;
    let cscan = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomScan>()) as *mut pg_sys::CustomScan;
    (*cscan).scan.plan.type_ = pg_sys::NodeTag::T_CustomScan;
    // setrefs makes the target list, HAVING and the expressions refer to the scan
    // tuple's columns (custom_scan_tlist).
    (*cscan).scan.plan.targetlist = tlist;
    (*cscan).scan.plan.qual = copy(having) as *mut pg_sys::List;
    (*cscan).scan.scanrelid = pg_list::ints(relid as *mut pg_sys::List).next().unwrap() as u32;
    (*cscan).custom_scan_tlist = copy(scan_tuple) as *mut pg_sys::List;
    (*cscan).custom_exprs = copy(exprs) as *mut pg_sys::List;
    (*cscan).custom_private = plan as *mut pg_sys::List;
    (*cscan).flags = 0;
    (*cscan).methods = methods;
    cscan as *mut pg_sys::Plan
}
