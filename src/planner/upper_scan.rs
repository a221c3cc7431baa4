//! The plan of a custom path that replaces an upper stage (grouping, distinct) over
//! one relation, written once for ColumnarAgg and LastPoint: the path's analysis holds
//! the relation, the node's private plan, its scan tuple (the `custom_scan_tlist` that
//! the target list, HAVING and `custom_exprs` refer to once setrefs has run), HAVING,
//! and the node's expressions.

use crate::exec::customscan::PlanPrivate;
use crate::pg_list;
use pgrx::pg_sys;

/// What such a path hands its plan.
pub struct UpperScan<P> {
    /// The relation's range table index.
    pub relid: u32,
    /// The node's private plan (`custom_private`).
    pub private: P,
    /// The scan tuple's expressions.
    pub scan_tuple: Vec<*mut pg_sys::Node>,
    pub having: *mut pg_sys::List,
    /// The expressions the node evaluates (`custom_exprs`).
    pub exprs: Vec<*mut pg_sys::Node>,
}

impl<P: PlanPrivate> UpperScan<P> {
    /// The CustomScan of such a path (`PlanCustomPath`), but for its methods.
    ///
    /// # Safety
    /// Backend thread, from `PlanCustomPath` in the planner's memory context: `tlist`,
    /// `having`, and the expressions in `scan_tuple` and `exprs` are valid node trees.
    pub unsafe fn plan(&self, tlist: *mut pg_sys::List) -> *mut pg_sys::CustomScan {
        // SAFETY: only called below on the valid node trees of this fn's contract.
        let copy = |n: *mut pg_sys::Node| unsafe {
            pg_sys::copyObjectImpl(n as *const std::ffi::c_void) as *mut pg_sys::Node
        };
        // SAFETY: in planning, on the backend thread (this fn's contract).
        let cscan = unsafe { super::custompath::new_scan() };
        // SAFETY: `cscan` is the fresh, zeroed CustomScan new_scan palloc'd; the
        // expressions copied into it are valid node trees (this fn's contract), and
        // makeTargetEntry / to_list allocate in the planner's current memory context.
        unsafe {
            // setrefs makes the target list, HAVING and the expressions refer to the scan
            // tuple's columns (custom_scan_tlist).
            (*cscan).scan.plan.targetlist = tlist;
            (*cscan).scan.plan.qual = copy(self.having as *mut pg_sys::Node) as *mut pg_sys::List;
            (*cscan).scan.scanrelid = self.relid;
            (*cscan).custom_scan_tlist =
                pg_list::from_ptrs(self.scan_tuple.iter().enumerate().map(|(i, &e)| {
                    pg_sys::makeTargetEntry(
                        copy(e) as *mut pg_sys::Expr,
                        i as i16 + 1,
                        std::ptr::null_mut(),
                        false,
                    )
                }));
            (*cscan).custom_exprs = pg_list::from_ptrs(self.exprs.iter().map(|&e| copy(e)));
            (*cscan).custom_private = self.private.to_list();
            (*cscan).flags = 0;
        }
        cscan
    }
}
