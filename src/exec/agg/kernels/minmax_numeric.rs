//! min and max of numeric (numeric_smaller / numeric_larger): values come decoded
//! (`exec::expr`, a column's or an expression's). A group keeps the value itself, its
//! display scale included; on a tie the newer value wins, as in numeric_larger
//! (`cmp_numerics(state, new) > 0 ? state : new`).

use super::{each_row, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::numeric::cmp_stored;
use crate::exec::agg::output::Output;
use crate::exec::expr::eval::{NumVal, NumVec};
use crate::exec::expr::num::{pow10, Num};
use crate::storage::format::encoding::DecodedVector;
use std::cmp::Ordering;

#[derive(Debug, Default)]
pub struct MinMaxNumeric {
    v: Vec<Option<NumVal>>,
    max: bool,
}

impl MinMaxNumeric {
    pub fn new(max: bool) -> MinMaxNumeric {
        MinMaxNumeric { v: Vec::new(), max }
    }

    /// Folds the selected, valid rows of `values` into the groups `gids` gives.
    pub fn fold_numeric(&mut self, values: &NumVec, valid: Option<&[bool]>, sel: &[u32], gids: Gids) {
        each_row(valid, sel, gids, |g, r| {
            let x = &values.get(r);
            let replace = match &self.v[g] {
                None => true,
                Some(old) => {
                    let o = compare(old, x);
                    if self.max {
                        o != Ordering::Greater
                    } else {
                        o != Ordering::Less
                    }
                }
            };
            if replace {
                self.v[g] = Some(x.clone());
            }
        });
    }
}

/// cmp_numerics of two values: in 128 bits when both fit at a common scale, otherwise
/// on their stored digits.
fn compare(a: &NumVal, b: &NumVal) -> Ordering {
    if let (NumVal::Small(Num::Fin { m: x, scale: s }), NumVal::Small(Num::Fin { m: y, scale: t })) = (a, b) {
        let scale = (*s).max(*t);
        let up = |m: i128, from: u16| pow10((scale - from) as u32).and_then(|p| m.checked_mul(p));
        if let (Some(x), Some(y)) = (up(*x, *s), up(*y, *t)) {
            return x.cmp(&y);
        }
    }
    cmp_stored(&stored(a), &stored(b))
}

fn stored(v: &NumVal) -> std::borrow::Cow<'_, [u8]> {
    match v {
        NumVal::Small(n) => std::borrow::Cow::Owned(n.to_stored()),
        NumVal::Big(b) => std::borrow::Cow::Borrowed(b),
    }
}

impl AggKernel for MinMaxNumeric {
    const BYTES_PER_GROUP: usize = 48;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, None);
    }

    /// Numerics come decoded (`fold_numeric`), never as a stored column.
    fn fold(&mut self, _col: &DecodedVector, _sel: &[u32], _gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        wrong_column(self)
    }

    fn result(&self, g: usize) -> Output<'_> {
        match &self.v[g] {
            None => Output::Null,
            Some(v) => Output::NumericStored(stored(v).into_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(m: i128, scale: u16) -> NumVal {
        NumVal::Small(Num::Fin { m, scale })
    }

    #[test]
    fn extremes_keep_their_scale_and_ties_take_the_newer_value() {
        let values =
            NumVec::Rows(vec![fin(10, 1), fin(100, 2), fin(-5, 0), NumVal::Small(Num::NaN), fin(1, 0)]);
        let run = |max: bool, sel: &[u32]| {
            let mut k = MinMaxNumeric::new(max);
            k.resize(1);
            k.fold_numeric(&values, None, sel, Gids::Same(0));
            match k.result(0) {
                Output::NumericStored(b) => Some(b),
                Output::Null => None,
                other => panic!("{other:?}"),
            }
        };
        // max(1.0, 1.00) is 1.00 (the tie's newer value); NaN is above everything.
        assert_eq!(run(true, &[0, 1, 2]), Some(fin(100, 2).stored_bytes()));
        assert_eq!(run(true, &[0, 3, 4]), Some(Num::NaN.to_stored()));
        assert_eq!(run(false, &[0, 1, 2, 3]), Some(fin(-5, 0).stored_bytes()));
        assert_eq!(run(false, &[4, 0]), Some(fin(10, 1).stored_bytes()));
        assert_eq!(run(false, &[]), None);
    }

    impl NumVal {
        fn stored_bytes(&self) -> Vec<u8> {
            stored(self).into_owned()
        }
    }
}
