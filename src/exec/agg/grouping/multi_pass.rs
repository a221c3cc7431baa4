//! GROUP BY past work_mem in a serial fold: the scan is read once per pass, and each
//! pass folds (with `hash`'s grouping) only the rows whose key hashes to its share, so
//! that one share's groups fit. A pass that still does not fit (skewed keys) keeps its
//! groups.

use super::hash::{HashGrouping, Share};
use super::{GroupingPolicy, GroupingSetup, Run, Step};
use crate::exec::agg::groups::Grouper;

pub struct MultiPass {
    hash: HashGrouping,
    share: Share,
}

/// How many passes a fold needs that held `used` bytes after `rows_seen` of
/// `total_rows` rows under a limit of `limit` bytes: what the whole scan would hold,
/// over 70% of the limit, as a power of two from 2 to 65536.
pub fn passes_for(used: usize, rows_seen: u64, total_rows: u64, limit: usize) -> u64 {
    let total = total_rows.max(1) as f64;
    let projected = used as f64 * (total / rows_seen.max(1) as f64).max(1.0);
    let passes = (projected / (limit as f64 * 0.7)).ceil() as u64;
    passes.clamp(2, 1 << 16).next_power_of_two()
}

impl MultiPass {
    /// The first of `passes` passes.
    pub fn new(setup: &GroupingSetup, passes: u64) -> MultiPass {
        MultiPass { hash: HashGrouping::new(setup, passes), share: Share { passes, pass: 0 } }
    }

    /// Empty groups for the current pass.
    pub fn start_pass(&mut self, setup: &GroupingSetup) {
        self.hash = HashGrouping::new(setup, self.share.passes);
    }

    /// Moves to the next pass; false after the last.
    pub fn next_pass(&mut self) -> bool {
        if self.share.pass + 1 >= self.share.passes {
            return false;
        }
        self.share.pass += 1;
        true
    }

    pub fn passes(&self) -> u64 {
        self.share.passes
    }

    /// Frees the groups.
    pub fn release(&mut self, setup: &GroupingSetup) {
        self.hash = HashGrouping::empty(setup.keys.len());
    }
}

impl GroupingPolicy for MultiPass {
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step {
        // SAFETY: the reader is open and positioned on the vector `sel` selects from
        // (the trait's contract for `add_vector`).
        unsafe { self.hash.fold_vector(run, Some(&self.share), sel) };
        Step::Next
    }

    fn grouper(&self) -> Option<&Grouper> {
        self.hash.grouper()
    }
}

#[cfg(test)]
mod tests {
    use super::passes_for;

    #[test]
    fn passes_are_a_power_of_two_from_the_projected_size() {
        // 1 MB after a tenth of the rows, 4 MB allowed: 10 MB / 2.8 MB -> 4 -> 4.
        assert_eq!(passes_for(1 << 20, 100, 1000, 4 << 20), 4);
        // Never fewer than 2, never more than 65536.
        assert_eq!(passes_for(10, 1000, 1000, 1 << 30), 2);
        assert_eq!(passes_for(usize::MAX / 2, 1, 1 << 40, 1), 1 << 16);
    }
}
