//! The other side of an eagerly aggregated join (`planner::agg_path::eager_join`): a
//! ColumnarAgg folds its relation by the join key, then each row of its child plan (the
//! relation whose unique key the query groups by) finds its group by that key and
//! becomes one output row: its own columns, then the group's aggregates, or for a LEFT
//! JOIN row without a group the aggregates of no rows (count 0, the others NULL).

use super::agg::groups::KeyValue;
use hashbrown::HashMap;
use pgrx::pg_sys;

/// What the planner decides for the probing side, kept in the ColumnarAgg's plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePlan {
    /// The outer key's position in the child's target list (0-based), and its width in
    /// bytes (int2, int4, int8).
    pub key: usize,
    pub key_width: u8,
    /// The child's columns: the scan tuple starts with them, in the child's order.
    pub columns: usize,
    /// LEFT JOIN: a row without a group is output too, with the aggregates of no rows.
    pub keep_unmatched: bool,
}

impl ProbePlan {
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![self.keep_unmatched as u8, self.key_width];
        out.extend((self.key as u32).to_le_bytes());
        out.extend((self.columns as u32).to_le_bytes());
        out
    }

    pub fn from_bytes(b: &[u8]) -> Option<ProbePlan> {
        let word =
            |i: usize| Some(u32::from_le_bytes(b.get(2 + 4 * i..6 + 4 * i)?.try_into().ok()?) as usize);
        let (&[keep, key_width], _) = b.split_first_chunk::<2>()?;
        let (key, columns) = (word(0)?, word(1)?);
        (b.len() == 10 && keep <= 1 && matches!(key_width, 2 | 4 | 8) && key < columns).then_some(ProbePlan {
            key,
            key_width,
            columns,
            keep_unmatched: keep == 1,
        })
    }
}

/// The group an outer row's key finds.
pub enum Found {
    Group(usize),
    /// No group: the row is output with empty aggregates (LEFT JOIN).
    Empty,
}

/// The probing side at run time: its child plan, the groups by key once folded, and
/// what EXPLAIN ANALYZE shows.
pub struct Probe {
    pub plan: ProbePlan,
    child: *mut pg_sys::PlanState,
    groups: Option<HashMap<i64, usize>>,
    pub outer_rows: u64,
    pub unmatched: u64,
}

impl Probe {
    pub fn new(plan: ProbePlan) -> Probe {
        Probe { plan, child: std::ptr::null_mut(), groups: None, outer_rows: 0, unmatched: 0 }
    }

    /// Starts the child plan (BeginCustomScan) and lists it as the node's child, so
    /// EXPLAIN shows it and ExecShutdownNode reaches it.
    ///
    /// # Safety
    /// Backend thread, in BeginCustomScan: `node` is the begun CustomScanState of a plan
    /// whose custom_plans hold the child plan, `estate` its EState.
    pub unsafe fn begin(
        &mut self,
        node: *mut pg_sys::CustomScanState,
        estate: *mut pg_sys::EState,
        eflags: i32,
    ) {
        // SAFETY: as this fn's contract says: custom_plans is a list of one Plan.
        unsafe {
            let cscan = (*node).ss.ps.plan as *mut pg_sys::CustomScan;
            let Some(plan) = crate::pg_list::ptrs::<pg_sys::Plan>((*cscan).custom_plans).next() else {
                pgrx::error!("malformed ColumnarAgg plan: no outer plan to probe with")
            };
            self.child = pg_sys::ExecInitNode(plan, estate, eflags);
            (*node).custom_ps = crate::pg_list::from_ptrs([self.child]);
        }
    }

    /// Whether the groups are indexed (the fold is done).
    pub fn ready(&self) -> bool {
        self.groups.is_some()
    }

    /// Indexes the folded groups by their key (`key(g)` of `n` groups); a NULL key
    /// matches no row.
    pub fn index<'a>(&mut self, n: usize, key: impl Fn(usize) -> &'a KeyValue) {
        let mut map = HashMap::with_capacity(n);
        for g in 0..n {
            if let KeyValue::Int(v) = key(g) {
                map.insert(*v, g);
            }
        }
        self.groups = Some(map);
    }

    /// The child's next row and the group it finds, skipping the rows without one for
    /// an inner join; None at the end.
    ///
    /// # Safety
    /// Backend thread, in ExecCustomScan of the begun node (`begin` ran), after `index`.
    pub unsafe fn next_row(&mut self) -> Option<(*mut pg_sys::TupleTableSlot, Found)> {
        let groups = self.groups.as_ref().expect("groups indexed");
        loop {
            // SAFETY: the child was started in `begin` (this fn's contract); a slot it
            // returns is live until its next call, its values deformed up to the key.
            unsafe {
                let slot = exec_proc_node(self.child);
                if slot.is_null() || (*slot).tts_flags & pg_sys::TTS_FLAG_EMPTY as u16 != 0 {
                    return None;
                }
                // The key is one of the columns.
                if ((*slot).tts_nvalid as usize) < self.plan.columns {
                    pg_sys::slot_getsomeattrs_int(slot, self.plan.columns as i32);
                }
                self.outer_rows += 1;
                let found = if *(*slot).tts_isnull.add(self.plan.key) {
                    None
                } else {
                    let d = *(*slot).tts_values.add(self.plan.key);
                    let v = match self.plan.key_width {
                        2 => d.value() as i16 as i64,
                        4 => d.value() as i32 as i64,
                        _ => d.value() as i64,
                    };
                    groups.get(&v).copied()
                };
                match found {
                    Some(g) => return Some((slot, Found::Group(g))),
                    None => {
                        self.unmatched += 1;
                        if self.plan.keep_unmatched {
                            return Some((slot, Found::Empty));
                        }
                    }
                }
            }
        }
    }

    /// Starts over: the groups are folded again (parameters may have changed) and the
    /// child rescanned.
    ///
    /// # Safety
    /// Backend thread, in ReScanCustomScan of the begun node.
    pub unsafe fn rescan(&mut self, node: *mut pg_sys::CustomScanState) {
        self.groups = None;
        // SAFETY: the child was started in `begin` (this fn's contract); a changed
        // parameter of the node is passed down as ExecReScan does for a node's own
        // children, and the child then rescans at its next call (`exec_proc_node`).
        unsafe {
            let changed = (*node).ss.ps.chgParam;
            if !changed.is_null() {
                pg_sys::UpdateChangedParamSet(self.child, changed);
            }
            if (*self.child).chgParam.is_null() {
                pg_sys::ExecReScan(self.child);
            }
        }
    }

    /// Ends the child (EndCustomScan).
    ///
    /// # Safety
    /// Backend thread, in EndCustomScan of the begun node.
    pub unsafe fn end(&mut self) {
        self.groups = None;
        if !self.child.is_null() {
            // SAFETY: the child was started in `begin` and not yet ended.
            unsafe { pg_sys::ExecEndNode(self.child) };
            self.child = std::ptr::null_mut();
        }
    }
}

/// executor.h's ExecProcNode (a static inline function): rescan first if a parameter
/// changed, then run the node.
///
/// # Safety
/// Backend thread: `node` is a begun PlanState.
unsafe fn exec_proc_node(node: *mut pg_sys::PlanState) -> *mut pg_sys::TupleTableSlot {
    // SAFETY: `node` is a begun PlanState (this fn's contract), whose ExecProcNode is set
    // by ExecInitNode.
    unsafe {
        if !(*node).chgParam.is_null() {
            pg_sys::ExecReScan(node);
        }
        match (*node).ExecProcNode {
            // Through a function pointer: an ERROR in it must not longjmp over Rust frames.
            Some(f) => pg_sys::ffi::pg_guard_ffi_boundary(|| f(node)),
            None => pgrx::error!("outer plan of ColumnarAgg has no ExecProcNode"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProbePlan;

    #[test]
    fn probe_plan_round_trips() {
        let p = ProbePlan { key: 3, key_width: 4, columns: 8, keep_unmatched: true };
        assert_eq!(ProbePlan::from_bytes(&p.to_bytes()), Some(p.clone()));
        let q = ProbePlan { key: 0, key_width: 8, columns: 1, keep_unmatched: false };
        assert_eq!(ProbePlan::from_bytes(&q.to_bytes()), Some(q));
        // The key must be one of the child's columns.
        let r = ProbePlan { key: 2, key_width: 8, columns: 2, keep_unmatched: false };
        assert_eq!(ProbePlan::from_bytes(&r.to_bytes()), None);
        let b = p.to_bytes();
        assert_eq!(ProbePlan::from_bytes(&b[..b.len() - 1]), None);
        let mut bad = b.clone();
        bad[1] = 3;
        assert_eq!(ProbePlan::from_bytes(&bad), None);
    }
}
