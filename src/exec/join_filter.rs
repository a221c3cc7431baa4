//! Join filters at execution: a ColumnarScan planned as the outer (probe) side of a hash
//! join (`planner::join_filter`) gets, once that join's hash table is built, the set of
//! the inner side's keys (`filter::join_keys`), and drops the rows whose key is not in
//! it before any other column is decoded.
//!
//! `link` runs after ExecutorStart (also in parallel workers, which start their own
//! copy of the plan): it hands each such scan its parent HashJoinState and finds the
//! parent's hash clause on the scan's key column. `inner_keys` walks the built,
//! in-memory hash table (buckets and skew buckets) and evaluates the Hash node's key
//! expression on each stored inner tuple, exactly as the Hash node did to insert it.
//! Only a complete table is used: one batch (all inner tuples in memory), not a
//! Parallel Hash one; otherwise the scan returns its rows unfiltered (the join still
//! checks every row: the filter only ever spares work, never changes a result).

use super::filter::join_keys::JoinKeySet;
use crate::pg_list;
use pgrx::pg_sys;
use std::ffi::{c_int, c_void, CStr};

/// What the planner decided of a scan's join filter, kept in its plan.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinFilterPlan {
    /// The key column (0-based attribute index).
    pub att: usize,
    /// The hash clause's equality operator (checked again against the parent's).
    pub opno: pg_sys::Oid,
    /// The inner relations, for EXPLAIN (`pushed from <inner>`).
    pub inner: String,
}

/// Where a linked scan's keys come from: its parent hash join and the hash clause.
#[derive(Debug, Clone, Copy)]
pub struct JoinFilterSource {
    pub hashjoin: *mut pg_sys::HashJoinState,
    /// The clause's position in the join's hash clauses (and the Hash node's keys).
    pub clause: usize,
}

/// The PostgreSQL 15 layout of `HashJoinTupleData` (executor/hashjoin.h, not in pgrx's
/// bindings): the next tuple of the bucket (a pointer in a private table), the hash value.
#[repr(C)]
struct HashTuple {
    next: *mut HashTuple,
    hashvalue: u32,
}

/// MAXALIGN(sizeof(HashJoinTupleData)): the MinimalTuple follows at this offset.
const HASH_TUPLE_OVERHEAD: usize = std::mem::size_of::<HashTuple>().next_multiple_of(8);

#[repr(C)]
struct SkewBucket {
    hashvalue: u32,
    tuples: *mut HashTuple,
}

/// The PostgreSQL 15 layout of `HashJoinTableData` up to `parallel_state` (hashjoin.h).
/// `inner_keys` checks it against the table's own counts before trusting it.
#[repr(C)]
struct HashTable {
    nbuckets: c_int,
    log2_nbuckets: c_int,
    nbuckets_original: c_int,
    nbuckets_optimal: c_int,
    log2_nbuckets_optimal: c_int,
    buckets: *mut *mut HashTuple,
    keep_nulls: bool,
    skew_enabled: bool,
    skew_bucket: *mut *mut SkewBucket,
    skew_bucket_len: c_int,
    n_skew_buckets: c_int,
    skew_bucket_nums: *mut c_int,
    nbatch: c_int,
    curbatch: c_int,
    nbatch_original: c_int,
    nbatch_outstart: c_int,
    grow_enabled: bool,
    total_tuples: f64,
    partial_tuples: f64,
    skew_tuples: f64,
    inner_batch_file: *mut c_void,
    outer_batch_file: *mut c_void,
    outer_hashfunctions: *mut c_void,
    inner_hashfunctions: *mut c_void,
    hash_strict: *mut bool,
    collations: *mut pg_sys::Oid,
    space_used: usize,
    space_allowed: usize,
    space_peak: usize,
    space_used_skew: usize,
    space_allowed_skew: usize,
    hash_cxt: *mut c_void,
    batch_cxt: *mut c_void,
    chunks: *mut c_void,
    current_chunk: *mut c_void,
    area: *mut c_void,
    parallel_state: *mut c_void,
}

/// What became of a scan's join filter so far.
#[derive(Debug, Clone)]
pub enum KeysState {
    /// The hash table is not built yet (or the scan is not linked): rows pass unfiltered.
    NotYet,
    /// The keys, from the built table.
    Built(JoinKeySet),
    /// The table cannot give them exactly; the reason, for EXPLAIN ANALYZE.
    Unusable(&'static str),
}

/// The inner keys of `source`'s hash table, if it is built and usable. `econtext` is
/// an expression context of the same executor state (the scan's), whose per-tuple
/// memory is reset here.
///
/// # Safety
/// Backend thread, during execution: `source` was made by `link` for this query's
/// live plan state tree, and the scan asking is that join's outer child (so the join is
/// between fetches of its outer side, not building its table).
pub unsafe fn inner_keys(source: JoinFilterSource, econtext: *mut pg_sys::ExprContext) -> KeysState {
    // SAFETY: the caller's contract: the HashJoinState and its Hash child are live; a non-NULL
    // hj_HashTable is the table ExecHashTableCreate made and MultiExecHash filled (the join
    // only fetches outer rows after that, or before it is created), laid out as `HashTable`
    // (checked against its own tuple count below); its bucket and skew arrays hold chains of
    // tuples in its memory context, each followed by a MinimalTuple of the Hash node's
    // result type; the key ExprState was initialized for the Hash node, whose stored tuples
    // it reads as the outer tuple, as MultiExecPrivateHash evaluates it.
    unsafe {
        let hj = source.hashjoin;
        let table = (*hj).hj_HashTable as *mut HashTable;
        if table.is_null() {
            return KeysState::NotYet;
        }
        if !(*table).parallel_state.is_null() {
            return KeysState::Unusable("Parallel Hash");
        }
        if (*table).nbatch != 1 || (*table).curbatch != 0 {
            return KeysState::Unusable("hash table in batches");
        }
        if (*table).nbuckets <= 0 || (*table).nbuckets != 1 << (*table).log2_nbuckets {
            return KeysState::Unusable("unexpected hash table layout");
        }
        let hash = (*hj).js.ps.righttree as *mut pg_sys::HashState;
        let Some(key_state) = pg_list::ptrs::<pg_sys::ExprState>((*hash).hashkeys).nth(source.clause) else {
            return KeysState::Unusable("no hash key");
        };
        let key_plan = pg_list::ptrs::<pg_sys::Node>((*((*hash).ps.plan as *mut pg_sys::Hash)).hashkeys)
            .nth(source.clause)
            .unwrap_or(std::ptr::null_mut());
        let Some(len) = int_key_len(key_plan) else {
            return KeysState::Unusable("key type");
        };
        let desc = (*hash).ps.ps_ResultTupleDesc;
        let slot = pg_sys::MakeSingleTupleTableSlot(desc, &pg_sys::TTSOpsMinimalTuple);
        let natts = (*desc).natts;
        let saved_outer = (*econtext).ecxt_outertuple;
        (*econtext).ecxt_outertuple = slot;
        let mut keys = Vec::with_capacity((*table).total_tuples.clamp(0.0, 1e8) as usize);
        let mut seen: u64 = 0;
        let mut add_chain = |mut t: *mut HashTuple, keys: &mut Vec<i64>| {
            while !t.is_null() {
                let tuple = (t as *mut u8).add(HASH_TUPLE_OVERHEAD) as pg_sys::MinimalTuple;
                pg_sys::ExecStoreMinimalTuple(tuple, slot, false);
                // Deformed whole: a key expression compiled for a virtual input slot
                // reads tts_values without deforming (ExecJustOuterVarVirt).
                if natts > 0 {
                    pg_sys::slot_getsomeattrs_int(slot, natts);
                }
                let mut isnull = false;
                let old = pg_sys::MemoryContextSwitchTo((*econtext).ecxt_per_tuple_memory);
                // ExecEvalExpr is inline C: the compiled step is called directly, inside an
                // FFI boundary, so an ERROR it raises unwinds as one from any pg_sys call.
                let eval = (*key_state).evalfunc.expect("compiled expression");
                let d = pg_sys::ffi::pg_guard_ffi_boundary(|| eval(key_state, econtext, &mut isnull));
                pg_sys::MemoryContextSwitchTo(old);
                // NULL never equals anything under the join's strict `=`.
                if !isnull {
                    keys.push(int_of_datum(d, len));
                }
                seen += 1;
                if seen.is_multiple_of(1024) {
                    pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
                    pgrx::check_for_interrupts!();
                }
                t = (*t).next;
            }
        };
        for b in 0..(*table).nbuckets as usize {
            add_chain(*(*table).buckets.add(b), &mut keys);
        }
        if (*table).skew_enabled && !(*table).skew_bucket.is_null() {
            for j in 0..(*table).n_skew_buckets.max(0) as usize {
                let index = *(*table).skew_bucket_nums.add(j);
                let bucket = *(*table).skew_bucket.add(index as usize);
                if !bucket.is_null() {
                    add_chain((*bucket).tuples, &mut keys);
                }
            }
        }
        (*econtext).ecxt_outertuple = saved_outer;
        pg_sys::ExecDropSingleTupleTableSlot(slot);
        pg_sys::MemoryContextReset((*econtext).ecxt_per_tuple_memory);
        // Every tuple the Hash node inserted must have been found: otherwise the layout is
        // not the one assumed, and no key set is trusted.
        if seen as f64 != (*table).total_tuples {
            return KeysState::Unusable("hash table not walked whole");
        }
        KeysState::Built(JoinKeySet::new(keys))
    }
}

/// The byte length of an integer-like key expression's type whose values are stored
/// as integers of that length (int2, int4, int8, date, timestamp, timestamptz), else None.
unsafe fn int_key_len(expr: *mut pg_sys::Node) -> Option<u8> {
    if expr.is_null() {
        return None;
    }
    // SAFETY: `expr` is a live expression node of the plan (the caller's).
    let ty = unsafe { pg_sys::exprType(expr) };
    match ty {
        pg_sys::INT2OID => Some(2),
        pg_sys::INT4OID | pg_sys::DATEOID => Some(4),
        pg_sys::INT8OID | pg_sys::TIMESTAMPOID | pg_sys::TIMESTAMPTZOID => Some(8),
        _ => None,
    }
}

/// A by-value integer Datum of `len` bytes, sign-extended (the stored form of the column).
fn int_of_datum(d: pg_sys::Datum, len: u8) -> i64 {
    let raw = d.value() as u64;
    match len {
        2 => raw as u16 as i16 as i64,
        4 => raw as u32 as i32 as i64,
        _ => raw as i64,
    }
}

/// A scan a join filter was planned for: what `link` needs of it and gives it.
pub trait JoinFiltered {
    /// Its planned join filter, if any.
    fn join_plan(&self) -> Option<&JoinFilterPlan>;
    /// Hands it its source.
    fn set_join_source(&mut self, source: JoinFilterSource);
}

/// Hands each join-filtered ColumnarScan of the plan state tree (and of the query's
/// subplans) its parent hash join. A scan whose parent is not an inner or semi hash
/// join, or has no hash clause on its key column with the planned operator, gets none
/// and stays unfiltered.
///
/// # Safety
/// Backend thread, right after ExecutorStart: `query_desc` is the live QueryDesc whose
/// plan state tree was just initialized.
pub unsafe fn link<N: JoinFiltered + super::customscan::CustomScanNode>(query_desc: *mut pg_sys::QueryDesc) {
    // SAFETY: the caller's contract: the plan state tree and the EState's subplan states are
    // initialized and live; the walk only reads them and writes our nodes' state.
    unsafe {
        let mut roots: Vec<*mut pg_sys::PlanState> = vec![(*query_desc).planstate];
        let estate = (*query_desc).estate;
        if !estate.is_null() {
            roots.extend(pg_list::ptrs::<pg_sys::PlanState>((*estate).es_subplanstates));
        }
        for root in roots.into_iter().filter(|r| !r.is_null()) {
            walk::<N>(root);
        }
    }
}

unsafe fn walk<N: JoinFiltered + super::customscan::CustomScanNode>(node: *mut pg_sys::PlanState) {
    // SAFETY: `node` is a live node of the initialized plan state tree (from `link`);
    // planstate_tree_walker hands `collect_child` each child and the Vec it was given.
    unsafe {
        if (*node).type_ == pg_sys::NodeTag::T_HashJoinState {
            link_outer::<N>(node as *mut pg_sys::HashJoinState);
        }
        let mut children: Vec<*mut pg_sys::PlanState> = Vec::new();
        pg_sys::planstate_tree_walker(node, Some(collect_child), &mut children as *mut Vec<_> as *mut c_void);
        for child in children {
            walk::<N>(child);
        }
    }
}

#[pgrx::pg_guard]
unsafe extern "C-unwind" fn collect_child(child: *mut pg_sys::PlanState, context: *mut c_void) -> bool {
    // SAFETY: `context` is the `&mut Vec` that `walk` passed planstate_tree_walker, alive
    // for the walk.
    unsafe {
        (*(context as *mut Vec<*mut pg_sys::PlanState>)).push(child);
        false
    }
}

/// Links `hj`'s outer child if it is a join-filtered node `N`.
unsafe fn link_outer<N: JoinFiltered + super::customscan::CustomScanNode>(hj: *mut pg_sys::HashJoinState) {
    // SAFETY: `hj` is a live, initialized HashJoinState (from `walk`): its plan is a HashJoin,
    // its outer child (lefttree) a live PlanState; a CustomScanState whose methods carry
    // N's name was made by N's CreateCustomScanState, so `node::<N>` gives its state.
    unsafe {
        let outer = (*hj).js.ps.lefttree;
        if outer.is_null() || (*outer).type_ != pg_sys::NodeTag::T_CustomScanState {
            return;
        }
        let css = outer as *mut pg_sys::CustomScanState;
        let methods = (*css).methods;
        if methods.is_null() || CStr::from_ptr((*methods).CustomName) != N::NAME {
            return;
        }
        if !matches!((*hj).js.jointype, pg_sys::JoinType::JOIN_INNER | pg_sys::JoinType::JOIN_SEMI) {
            return;
        }
        let scan = super::customscan::node::<N>(css);
        let Some(plan) = scan.join_plan() else { return };
        let scan_plan = (*outer).plan as *mut pg_sys::Scan;
        let join_plan = (*hj).js.ps.plan as *mut pg_sys::HashJoin;
        let operators: Vec<pg_sys::Oid> = pg_list::oids((*join_plan).hashoperators).collect();
        for (i, key) in pg_list::ptrs::<pg_sys::Node>((*join_plan).hashkeys).enumerate() {
            if operators.get(i) == Some(&plan.opno) && outer_key_att(key, scan_plan) == Some(plan.att) {
                scan.set_join_source(JoinFilterSource { hashjoin: hj, clause: i });
                return;
            }
        }
    }
}

/// The attribute (0-based) of the scan's relation that outer hash key `key` is: a Var
/// of the join's outer tuple (possibly relabeled) naming a target-list entry of the
/// scan that is a plain Var of its relation.
unsafe fn outer_key_att(mut key: *mut pg_sys::Node, scan: *mut pg_sys::Scan) -> Option<usize> {
    // SAFETY: `key` is a live expression of the HashJoin plan and `scan` the live plan of its
    // outer child (from `link_outer`); nodes are read by their tags.
    unsafe {
        while !key.is_null() && (*key).type_ == pg_sys::NodeTag::T_RelabelType {
            key = (*(key as *mut pg_sys::RelabelType)).arg as *mut pg_sys::Node;
        }
        if key.is_null() || (*key).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let var = key as *mut pg_sys::Var;
        if (*var).varno != pg_sys::OUTER_VAR || (*var).varattno < 1 {
            return None;
        }
        let tle = pg_list::ptrs::<pg_sys::TargetEntry>((*scan).plan.targetlist)
            .nth((*var).varattno as usize - 1)?;
        let expr = (*tle).expr as *mut pg_sys::Node;
        if expr.is_null() || (*expr).type_ != pg_sys::NodeTag::T_Var {
            return None;
        }
        let inner = expr as *mut pg_sys::Var;
        ((*inner).varno as u32 == (*scan).scanrelid && (*inner).varattno >= 1)
            .then(|| (*inner).varattno as usize - 1)
    }
}

/// The hash clause `source` names, deparsed for EXPLAIN in the join's context
/// (`ancestors` are the scan's: the join first).
///
/// # Safety
/// From the scan's ExplainCustomScan: `source` was linked for this plan, `es` is the
/// live ExplainState and `ancestors` the scan's ancestor list.
pub unsafe fn clause_text(
    source: JoinFilterSource,
    ancestors: *mut pg_sys::List,
    es: *mut pg_sys::ExplainState,
) -> Option<String> {
    // SAFETY: the caller's contract: the join's plan is live, its hashclauses a list of
    // OpExprs fixed up by setrefs; the deparse context is the ExplainState's, set for the
    // join's plan with its own ancestors (the scan's without the first).
    unsafe {
        let plan = (*source.hashjoin).js.ps.plan;
        let clause = pg_list::ptrs::<pg_sys::Node>((*(plan as *mut pg_sys::HashJoin)).hashclauses)
            .nth(source.clause)?;
        let join_ancestors = pg_sys::list_copy_tail(ancestors, 1);
        let context = pg_sys::set_deparse_context_plan((*es).deparse_cxt, plan, join_ancestors);
        let prefix = pg_list::len((*es).rtable) > 1 || (*es).verbose;
        let text = pg_sys::deparse_expression(clause, context, prefix, false);
        Some(CStr::from_ptr(text).to_string_lossy().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_datums_are_sign_extended_by_length() {
        assert_eq!(int_of_datum(pg_sys::Datum::from(0xFFFFu64 as usize), 2), -1);
        assert_eq!(int_of_datum(pg_sys::Datum::from(0xFFFF_FFFEu64 as usize), 4), -2);
        assert_eq!(int_of_datum(pg_sys::Datum::from(i64::MIN as usize), 8), i64::MIN);
        assert_eq!(int_of_datum(pg_sys::Datum::from(7usize), 4), 7);
    }

    #[test]
    fn the_tuple_follows_a_maxaligned_header() {
        assert_eq!(HASH_TUPLE_OVERHEAD, 16);
    }
}
