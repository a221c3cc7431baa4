//! count(*) and count(col): int8.

use super::{each, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::DecodedVector;

#[derive(Debug, Default)]
pub struct Count {
    pub counts: Vec<i64>,
}

impl Count {
    /// count(*): every selected row counts.
    pub fn count_rows(&mut self, sel: &[u32], gids: Gids) {
        let c = &mut self.counts;
        match gids {
            Gids::Same(g) => c[g as usize] += sel.len() as i64,
            Gids::Each(g) => {
                // Runs of one group (rows ordered by group: `HashGrouping`) add once.
                for run in g.chunk_by(|a, b| a == b) {
                    c[run[0] as usize] += run.len() as i64;
                }
            }
        }
    }

    /// Adds `rows` rows to group 0 without reading them (answered by metadata).
    pub fn add_rows(&mut self, rows: i64) {
        self.counts[0] += rows;
    }
}

impl AggKernel for Count {
    const BYTES_PER_GROUP: usize = 8;

    fn resize(&mut self, groups: usize) {
        self.counts.resize(groups, 0);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let c = &mut self.counts;
        match col.validity.as_deref() {
            None => match gids {
                Gids::Same(g) => c[g as usize] += sel.len() as i64,
                Gids::Each(g) => g.iter().for_each(|&g| c[g as usize] += 1),
            },
            Some(v) => each(v, sel, gids, |g, _| c[g] += 1),
        }
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        Output::Int8(self.counts[g])
    }
}
