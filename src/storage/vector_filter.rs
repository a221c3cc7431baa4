//! What a reader asks of a filter pushed into its scan (the executor's `exec::filter`
//! implements it): which columns it reads, what zone maps say of it, and which rows
//! of a decoded vector pass. The reader decodes the filter's columns first and the
//! other columns only for vectors with rows left (late materialization).

use super::format::encoding::DecodedVector;
use super::format::zonemap::{Verdict, ZoneStats};

pub trait VectorFilter {
    /// Attribute indexes (0-based) the filter reads.
    fn attributes(&self) -> &[usize];

    /// What zone maps say: `stats(att)` describes attribute `att` in the vector or row
    /// group at hand (None: unknown).
    fn verdict(&self, stats: &dyn Fn(usize) -> Option<ZoneStats>) -> Verdict;

    /// Keeps the rows of `selection` (ascending row numbers of the vector) that pass;
    /// `column(att)` is attribute `att`'s decoded vector.
    fn select<'a>(&self, column: &dyn Fn(usize) -> &'a DecodedVector, selection: &mut Vec<u32>);
}
