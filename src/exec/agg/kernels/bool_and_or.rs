//! bool_and and bool_or (booland_statefunc, boolor_statefunc).

use super::{drive, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};

#[derive(Debug, Default)]
pub struct BoolAndOr {
    pub v: Vec<bool>,
    pub seen: Vec<bool>,
    pub and: bool,
}

impl AggKernel for BoolAndOr {
    const BYTES_PER_GROUP: usize = 2;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, false);
        self.seen.resize(groups, false);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let (v, seen, and) = (&mut self.v, &mut self.seen, self.and);
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
            let b = x != 0;
            v[g] = if !seen[g] {
                b
            } else if and {
                v[g] && b
            } else {
                v[g] || b
            };
            seen[g] = true;
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match self.seen[g] {
            false => Output::Null,
            true => Output::Bool(self.v[g]),
        }
    }
}
