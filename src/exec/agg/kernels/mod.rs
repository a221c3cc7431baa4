//! Aggregate kernels, one family per file: each state keeps one aggregate's values for
//! every group and does the built-in aggregate's own steps (int4_sum, int8_avg_accum,
//! float8pl, float8_accum, float8larger, text_larger, booland_statefunc, ...) in the same
//! row order, so results are identical to core's Agg, floats and overflow errors
//! included. `fold::Acc` is the table that picks a kernel per aggregate. Pure.

pub mod bool_and_or;
pub mod count;
pub mod count_distinct;
pub mod decimal;
pub mod minmax;
pub mod minmax_numeric;
pub mod sum_float;
pub mod sum_int;
pub mod variance;

use super::output::Output;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use std::cmp::Ordering;

/// Which group each selected row belongs to.
#[derive(Clone, Copy)]
pub enum Gids<'a> {
    /// Every row is in this group: 0 without a GROUP BY, or the one group of a vector
    /// whose keys are each a single value.
    Same(u32),
    /// Per selected row, its group.
    Each(&'a [u32]),
}

/// Why a fold stopped: a float result became infinite from finite inputs (PostgreSQL
/// raises "value out of range: overflow", 22003), or a stored numeric could not be read.
#[derive(Debug, PartialEq, Eq)]
pub enum Overflow {
    Float,
    CorruptNumeric,
}

/// How byte strings compare: in the aggregate's collation.
pub type Cmp<'a> = &'a dyn Fn(&[u8], &[u8]) -> Ordering;

/// One aggregate's states for every group: its transition, its result, and its state
/// as a partial aggregate outputs it.
pub trait AggKernel {
    /// Bytes of state per group (for the memory estimate).
    const BYTES_PER_GROUP: usize;

    /// Makes room for `groups` groups (new ones start empty).
    fn resize(&mut self, groups: usize);

    /// Folds the selected rows of `col` into the groups `gids` gives; `cmp` orders byte
    /// strings (the aggregate's collation).
    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, cmp: Cmp) -> Result<(), Overflow>;

    /// Group `g`'s result: what the final function gives.
    fn result(&self, g: usize) -> Output<'_>;

    /// Group `g`'s transition state, as core's Finalize Aggregate reads it; the result
    /// itself unless the state differs from it.
    fn partial_state(&self, g: usize) -> Output<'_> {
        self.result(g)
    }
}

fn ok(overflow: bool) -> Result<(), Overflow> {
    if overflow {
        Err(Overflow::Float)
    } else {
        Ok(())
    }
}

/// Calls `f(group, value)` for each selected row that is not NULL.
#[inline(always)]
fn drive<T: Copy>(
    values: &[T],
    valid: Option<&[bool]>,
    sel: &[u32],
    gids: Gids,
    mut f: impl FnMut(usize, T),
) {
    each_row(valid, sel, gids, |g, r| f(g, values[r]))
}

/// Calls `f(group, row)` for each selected row that is not NULL (`valid` None: no row
/// is). The loops are specialised per case (no NULLs, one group) so that each compiles
/// tight.
#[inline(always)]
fn each_row(valid: Option<&[bool]>, sel: &[u32], gids: Gids, mut f: impl FnMut(usize, usize)) {
    match (valid, gids) {
        (None, Gids::Same(g)) => sel.iter().for_each(|&r| f(g as usize, r as usize)),
        (None, Gids::Each(g)) => sel.iter().zip(g).for_each(|(&r, &g)| f(g as usize, r as usize)),
        (Some(v), gids) => each(v, sel, gids, f),
    }
}

/// Calls `f(group, row)` for each selected row that is not NULL.
#[inline(always)]
fn each(valid: &[bool], sel: &[u32], gids: Gids, mut f: impl FnMut(usize, usize)) {
    match gids {
        Gids::Same(g) => sel.iter().filter(|&&r| valid[r as usize]).for_each(|&r| f(g as usize, r as usize)),
        Gids::Each(g) => sel
            .iter()
            .zip(g)
            .filter(|(&r, _)| valid[r as usize])
            .for_each(|(&r, &g)| f(g as usize, r as usize)),
    }
}

/// Calls `f(group, bytes)` for each selected non-NULL row of a byte-string column,
/// decoded, a dictionary or scaled numerics.
fn each_bytes(col: &DecodedVector, sel: &[u32], gids: Gids, mut f: impl FnMut(usize, &[u8])) {
    let valid = |r: usize| col.is_valid(r);
    let group = |i: usize| match gids {
        Gids::Same(g) => g as usize,
        Gids::Each(g) => g[i] as usize,
    };
    if let Some(s) = &col.scaled {
        // Scaled numerics: each row's bytes made again (no reader asks for them here).
        let mut b = Vec::with_capacity(16);
        for (i, &r) in sel.iter().enumerate() {
            if valid(r as usize) {
                b.clear();
                s.write_stored(r as usize, &mut b);
                f(group(i), &b);
            }
        }
    } else if let Some(d) = &col.dictionary {
        for (i, &r) in sel.iter().enumerate() {
            if valid(r as usize) {
                let e = d.codes[r as usize] as usize;
                f(group(i), &d.data[d.offsets[e] as usize..d.offsets[e + 1] as usize]);
            }
        }
    } else if let DecodedValues::Bytes { offsets, data } = &col.values {
        for (i, &r) in sel.iter().enumerate() {
            let r = r as usize;
            if valid(r) {
                f(group(i), &data[offsets[r] as usize..offsets[r + 1] as usize]);
            }
        }
    }
}

/// A kernel given a column of a type it does not fold: a planning bug.
fn wrong_column(kernel: &dyn std::fmt::Debug) -> ! {
    unreachable!("aggregate state {kernel:?} given a column of another type")
}
