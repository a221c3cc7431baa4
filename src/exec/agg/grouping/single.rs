//! No GROUP BY, and some aggregate has a FILTER: every vector is folded into the one
//! group.

use super::{fold_rows, GroupingPolicy, Run, Step};
use crate::exec::agg::groups::Grouper;
use crate::exec::agg::kernels::Gids;

pub struct SingleGroup;

impl GroupingPolicy for SingleGroup {
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step {
        // SAFETY: the reader is open and positioned on the vector `sel` selects from
        // (the trait's contract for `add_vector`).
        unsafe { fold_rows(run, sel, Gids::Same(0)) };
        Step::Next
    }

    fn grouper(&self) -> Option<&Grouper> {
        None
    }
}
