//! A CustomPath with the fields every path of ours sets: its relation and target, its
//! rows and costs, its methods. Callers add what differs (parallelism, parameters,
//! flags, private data).

use pgrx::pg_sys;

pub unsafe fn new(
    parent: *mut pg_sys::RelOptInfo,
    target: *mut pg_sys::PathTarget,
    rows: f64,
    startup: f64,
    total: f64,
    methods: &'static pg_sys::CustomPathMethods,
) -> *mut pg_sys::CustomPath {
    let path = pg_sys::palloc0(std::mem::size_of::<pg_sys::CustomPath>()) as *mut pg_sys::CustomPath;
    (*path).path.type_ = pg_sys::NodeTag::T_CustomPath;
    (*path).path.pathtype = pg_sys::NodeTag::T_CustomScan;
    (*path).path.parent = parent;
    (*path).path.pathtarget = target;
    (*path).path.rows = rows;
    (*path).path.startup_cost = startup;
    (*path).path.total_cost = total;
    (*path).methods = methods;
    path
}
