//! No GROUP BY, and some aggregate has a FILTER: every vector is folded into the one
//! group.

use super::{fold_rows, FoldCounters, GroupingPolicy, GroupingSetup, Step};
use crate::exec::agg::aggregates::Aggregates;
use crate::exec::agg::groups::Grouper;
use crate::exec::agg::kernels::Gids;
use crate::storage::reader::Reader;

pub struct SingleGroup;

impl GroupingPolicy for SingleGroup {
    unsafe fn add_vector(
        &mut self,
        _setup: &GroupingSetup,
        aggs: &mut Aggregates,
        reader: &mut Reader,
        sel: &mut Vec<u32>,
        counters: &mut FoldCounters,
    ) -> Step {
        fold_rows(aggs, reader, sel, Gids::One, counters);
        Step::Next
    }

    fn grouper(&self) -> Option<&Grouper> {
        None
    }
}
