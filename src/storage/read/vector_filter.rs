//! What a reader asks of a filter pushed into its scan (the executor's `exec::filter`
//! implements it): which columns it reads, what zone maps say of it, and which rows
//! of a decoded vector pass. The reader decodes the filter's columns first and the
//! other columns only for vectors with rows left (late materialization).

use crate::storage::format::encoding::DecodedVector;
use crate::storage::format::zonemap::{Verdict, ZoneStats};

/// The decoded vectors of the current vector's columns, decoded when first asked for:
/// a test that leaves no row spares the decoding of the columns after it.
pub trait ColumnSource {
    fn column(&mut self, att: usize) -> &DecodedVector;

    /// `column`, for a caller that reads only rows `rows` (ascending) of it: a source
    /// may decode just those (the others' values are then unspecified).
    fn column_rows(&mut self, att: usize, rows: &[u32]) -> &DecodedVector {
        let _ = rows;
        self.column(att)
    }
}

pub trait VectorFilter {
    /// Attribute indexes (0-based) the filter reads.
    fn attributes(&self) -> &[usize];

    /// What zone maps say: `stats(att)` describes attribute `att` in the vector or row
    /// group at hand (None: unknown).
    fn verdict(&self, stats: &dyn Fn(usize) -> Option<ZoneStats>) -> Verdict;

    /// Keeps the rows of `selection` (ascending row numbers of the vector) that pass;
    /// `columns` gives attribute `att`'s decoded vector, `stats(att)` its zone statistics
    /// in this vector (parts of the filter they decide need not be evaluated).
    fn select(
        &self,
        stats: &dyn Fn(usize) -> Option<ZoneStats>,
        columns: &mut dyn ColumnSource,
        selection: &mut Vec<u32>,
    );
}
