//! Which columns index and bitmap scans of columnar tables really read, found once the
//! executor has built its plan state: their scan slots are told, and the fetches into
//! them decode only those columns (`storage::relation::slot::set_needed`).
//!
//! PostgreSQL asks a slot for every attribute up to the last one it reads, and a scan
//! under a join passes its slot up unprojected (a "physical" target list), so the
//! attributes asked for are not the ones used: heap deforms the ones in between for
//! almost nothing, a columnar fetch would decode a vector for each. What is read of a
//! scan's slot is known from the plan: the scan's own quals (and index recheck quals),
//! its target list when it projects, and when it does not, the expressions of the join
//! or aggregate above it that read it. Anything else above an unprojected scan (or anything
//! not understood) keeps every column decoded, so an analysis that is unsure costs
//! speed, never a wrong value.

use crate::pg_list;
use crate::storage::{relation::am, relation::slot};
use pgrx::pg_sys;

/// Tells the scan slots of the plan's columnar index and bitmap heap scans which
/// attributes are read of them.
///
/// # Safety
/// Backend thread, right after ExecutorStart: `planstate` is null or the root of the
/// query's initialized plan state tree (its plans, relations and slots live).
pub unsafe fn mark_needed_columns(planstate: *mut pg_sys::PlanState) {
    // SAFETY: `planstate` is null or an initialized plan state tree (this fn's contract).
    unsafe {
        if !planstate.is_null() {
            walk(planstate, std::ptr::null_mut());
        }
    }
}

unsafe fn walk(node: *mut pg_sys::PlanState, parent: *mut pg_sys::PlanState) {
    // SAFETY: `node` is a live node of the initialized plan state tree (`parent` its parent
    // or null), the caller's contract from `mark_needed_columns`; planstate_tree_walker
    // hands `collect_child` each child and the Vec it was given, which outlives the call.
    unsafe {
        if matches!((*node).type_, pg_sys::NodeTag::T_IndexScanState | pg_sys::NodeTag::T_BitmapHeapScanState)
        {
            mark_scan(node as *mut pg_sys::ScanState, parent);
        }
        let mut children = Vec::new();
        pg_sys::planstate_tree_walker(node, Some(collect_child), &mut children as *mut Vec<_> as *mut _);
        for child in children {
            walk(child, node);
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn collect_child(
    child: *mut pg_sys::PlanState,
    context: *mut std::ffi::c_void,
) -> bool {
    // SAFETY: `context` is the `&mut Vec` that `walk` passed planstate_tree_walker, alive
    // for the walk.
    unsafe {
        (*(context as *mut Vec<*mut pg_sys::PlanState>)).push(child);
        false
    }
}

/// The attribute numbers of `varno`'s columns that `expr` reads, into `attrs`.
unsafe fn pull(expr: *mut std::ffi::c_void, varno: i32, attrs: &mut *mut pg_sys::Bitmapset) {
    // SAFETY: `expr` is null or an expression tree of the live plan (the callers read it from
    // plan nodes); pull_varattnos only reads it and adds to `attrs`, a Bitmapset in the
    // current memory context.
    unsafe {
        if !expr.is_null() {
            pg_sys::pull_varattnos(expr as *mut pg_sys::Node, varno as pg_sys::Index, attrs);
        }
    }
}

unsafe fn mark_scan(scan: *mut pg_sys::ScanState, parent: *mut pg_sys::PlanState) {
    // SAFETY: `scan` is an initialized IndexScanState or BitmapHeapScanState of the live plan
    // state tree (`walk` checked its tag), so its plan is an IndexScan or BitmapHeapScan of
    // that tag, and its relation and scan slot, when set, are open and live.
    unsafe {
        let rel = (*scan).ss_currentRelation;
        let scan_slot = (*scan).ss_ScanTupleSlot;
        if rel.is_null() || scan_slot.is_null() || !am::is_columnar(rel) || !slot::is_columnar(scan_slot) {
            return;
        }
        let plan = (*scan).ps.plan as *mut pg_sys::Scan;
        let relid = (*plan).scanrelid as i32;
        let mut attrs: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        pull((*plan).plan.qual.cast(), relid, &mut attrs);
        match (*scan).ps.type_ {
            pg_sys::NodeTag::T_IndexScanState => {
                let index = plan as *mut pg_sys::IndexScan;
                // The index conditions are evaluated on the row only when the index AM
                // asks for a recheck, which a btree never does: its key columns are then
                // not read (opening their vectors for every fetch filled the fetch cache).
                let index_rel = (*(scan as *mut pg_sys::IndexScanState)).iss_RelationDesc;
                let exact = !index_rel.is_null() && (*(*index_rel).rd_rel).relam == pg_sys::BTREE_AM_OID;
                if !exact {
                    pull((*index).indexqualorig.cast(), relid, &mut attrs);
                }
                pull((*index).indexorderbyorig.cast(), relid, &mut attrs);
            }
            _ => {
                let bitmap = plan as *mut pg_sys::BitmapHeapScan;
                pull((*bitmap).bitmapqualorig.cast(), relid, &mut attrs);
            }
        }
        if !(*scan).ps.ps_ProjInfo.is_null() {
            pull((*plan).plan.targetlist.cast(), relid, &mut attrs);
        } else if !pull_from_parent(parent, scan as *mut pg_sys::PlanState, &mut attrs) {
            // The slot goes up to a node whose reads are not analysed here.
            return;
        }
        let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
        if pg_sys::bms_is_member(-offset, attrs) {
            // A whole-row reference reads every column.
            return;
        }
        let natts = (*(*scan_slot).tts_tupleDescriptor).natts as usize;
        let needed: Vec<bool> =
            (1..=natts as i32).map(|a| pg_sys::bms_is_member(a - offset, attrs)).collect();
        slot::set_needed(scan_slot, &needed);
    }
}

/// Adds what `parent` reads of its child `child` (which passes its scan slot up
/// unprojected) to `attrs`; false when `parent` is not a join or aggregate node.
unsafe fn pull_from_parent(
    parent: *mut pg_sys::PlanState,
    child: *mut pg_sys::PlanState,
    attrs: &mut *mut pg_sys::Bitmapset,
) -> bool {
    // SAFETY: `parent` is null or the live parent of `child` in the initialized plan state
    // tree; each plan is read as the plan type its state's tag names (AggState: Agg,
    // NestLoopState: NestLoop, ... all joins start with Join), and grpColIdx has numCols entries.
    unsafe {
        if parent.is_null() {
            return false;
        }
        if (*parent).type_ == pg_sys::NodeTag::T_AggState && (*parent).lefttree == child {
            // An aggregate reads its input through its aggregates' arguments and filters (in
            // its target list and HAVING) and its grouping columns (by position, which for
            // an unprojected scan is the attribute number).
            let agg = (*parent).plan as *mut pg_sys::Agg;
            if !(*agg).chain.is_null() {
                // Grouping sets: the chained phases group by columns of their own.
                return false;
            }
            pull((*agg).plan.targetlist.cast(), pg_sys::OUTER_VAR, attrs);
            pull((*agg).plan.qual.cast(), pg_sys::OUTER_VAR, attrs);
            let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
            for i in 0..(*agg).numCols as usize {
                let attno = *(*agg).grpColIdx.add(i) as i32;
                *attrs = pg_sys::bms_add_member(*attrs, attno - offset);
            }
            return true;
        }
        let varno = if (*parent).lefttree == child {
            pg_sys::OUTER_VAR
        } else if (*parent).righttree == child {
            pg_sys::INNER_VAR
        } else {
            return false;
        };
        let plan = (*parent).plan;
        let join = plan as *mut pg_sys::Join;
        match (*parent).type_ {
            pg_sys::NodeTag::T_NestLoopState => {
                let nest = plan as *mut pg_sys::NestLoop;
                for param in pg_list::ptrs::<pg_sys::NestLoopParam>((*nest).nestParams) {
                    pull((*param).paramval.cast(), varno, attrs);
                }
            }
            pg_sys::NodeTag::T_MergeJoinState => {
                pull((*(plan as *mut pg_sys::MergeJoin)).mergeclauses.cast(), varno, attrs);
            }
            pg_sys::NodeTag::T_HashJoinState => {
                pull((*(plan as *mut pg_sys::HashJoin)).hashclauses.cast(), varno, attrs);
            }
            _ => return false,
        }
        // A join always projects: its target list, quals and join quals are all it reads.
        pull((*plan).targetlist.cast(), varno, attrs);
        pull((*plan).qual.cast(), varno, attrs);
        pull((*join).joinqual.cast(), varno, attrs);
        true
    }
}
