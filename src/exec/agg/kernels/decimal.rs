//! sum and avg over numeric: numeric_avg_accum's state (`agg::numeric`).

use super::{each_bytes, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::numeric::DecimalSum;
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::DecodedVector;

#[derive(Debug, Default)]
pub struct Decimal {
    pub sums: Vec<DecimalSum>,
    pub avg: bool,
}

impl AggKernel for Decimal {
    const BYTES_PER_GROUP: usize = 120;

    fn resize(&mut self, groups: usize) {
        self.sums.resize(groups, DecimalSum::default());
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let sums = &mut self.sums;
        let mut corrupt = false;
        each_bytes(col, sel, gids, |g, x| corrupt |= !sums[g].add(x));
        if corrupt {
            return Err(Overflow::CorruptNumeric);
        }
        Ok(())
    }

    /// numeric_sum, and numeric_avg: the sum over the count (NaN and infinities as the
    /// sum has them).
    fn result(&self, g: usize) -> Output<'_> {
        let s = &self.sums[g];
        let Some(text) = s.text() else { return Output::Null };
        let special = s.nan > 0 || s.pos_inf > 0 || s.neg_inf > 0;
        let divide_by = (self.avg && !special).then_some(s.n);
        Output::NumericText { text, divide_by }
    }

    /// numeric_avg_accum's internal state, serialized (numeric_avg_serialize's bytes).
    fn partial_state(&self, g: usize) -> Output<'_> {
        Output::Bytea(self.sums[g].serialized())
    }
}
