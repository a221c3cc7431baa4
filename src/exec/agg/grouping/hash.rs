//! GROUP BY: each vector's rows are numbered by their keys (`groups::Grouper`) and
//! folded into their groups. Past work_mem, a partial aggregate flushes its groups (core's
//! Finalize Aggregate combines however many partial states a group has) and a serial one
//! starts over in passes (`multi_pass`).

use super::{fold_rows, GroupingPolicy, GroupingSetup, Run, Step};
use crate::exec::agg::groups::{retain_partition, Grouper};
use crate::exec::agg::kernels::Gids;
use crate::exec::agg::keys::KeyColumns;

/// Which share of the key hashes a pass folds (`multi_pass`).
pub struct Share {
    pub passes: u64,
    pub pass: u64,
}

pub struct HashGrouping {
    grouper: Grouper,
    keys: KeyColumns,
    /// Per selected row of the current vector, its group.
    gids: Vec<u32>,
    /// Rows of the scan this batch has seen (to size the passes).
    rows: u64,
}

impl HashGrouping {
    /// No groups, and no room made for them.
    pub fn empty(keys: usize) -> HashGrouping {
        HashGrouping { grouper: Grouper::new(keys), keys: KeyColumns::new(keys), gids: Vec::new(), rows: 0 }
    }

    /// No groups yet, room for this pass's share of the planner's estimate.
    pub fn new(setup: &GroupingSetup, passes: u64) -> HashGrouping {
        let mut h = HashGrouping::empty(setup.keys.len());
        // The estimate, within reason: a wrong one costs a rehash or some memory.
        h.grouper.reserve((setup.estimated_groups / passes as f64).min((1 << 20) as f64) as usize);
        h
    }

    /// Folds the selected rows of the current vector, those of `share` only if given,
    /// into their groups; returns the bytes the fold then holds, or None if no row was
    /// in the share.
    ///
    /// # Safety
    /// As `GroupingPolicy::add_vector`: the run's reader open and positioned on a vector.
    pub unsafe fn fold_vector(
        &mut self,
        run: &mut Run,
        share: Option<&Share>,
        sel: &mut Vec<u32>,
    ) -> Option<usize> {
        let setup = run.setup;
        // SAFETY: the reader is open and positioned on a vector (this fn's contract).
        unsafe { self.keys.compute(&setup.keys, run.reader, sel, setup.fixed_offset) };
        let inputs = self.keys.inputs(&setup.keys, run.reader);
        if let Some(share) = share {
            retain_partition(&inputs, sel, share.passes, share.pass, &setup.partition_hash);
            if sel.is_empty() {
                return None;
            }
        }
        self.grouper.assign(&inputs, sel, &mut self.gids);
        run.aggs.resize(self.grouper.len());
        // SAFETY: the reader is open and positioned on the vector `sel` selects from.
        unsafe { fold_rows(run, sel, Gids::Each(&self.gids)) };
        let used = run.aggs.memory(Some(&self.grouper));
        run.counters.peak_memory = run.counters.peak_memory.max(used);
        Some(used)
    }
}

impl GroupingPolicy for HashGrouping {
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step {
        self.rows += sel.len() as u64;
        // SAFETY: the reader is open and positioned on a vector (the trait's contract).
        let Some(used) = (unsafe { self.fold_vector(run, None, sel) }) else {
            return Step::Next;
        };
        if used <= run.setup.memory_limit {
            return Step::Next;
        }
        if run.setup.partial {
            // These groups go now, the fold goes on after them.
            run.counters.flushes += 1;
            return Step::Flush;
        }
        Step::OverLimit { used, rows: self.rows }
    }

    fn grouper(&self) -> Option<&Grouper> {
        Some(&self.grouper)
    }
}
