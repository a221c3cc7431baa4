//! min and max: of integer-like columns, of floats in PostgreSQL's order, and of byte
//! strings under a collation. Zone maps answer the first two for whole vectors.

use super::{drive, each_bytes, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::exec::filter::float_key;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use std::cmp::Ordering;

#[derive(Debug, Default)]
pub struct MinMaxInt {
    pub v: Vec<i64>,
    pub seen: Vec<bool>,
    pub max: bool,
}

impl MinMaxInt {
    /// Takes a vector's extremes (from its zone map) into group 0.
    pub fn add_extremes(&mut self, min: i64, max: i64) {
        let (v, seen) = (&mut self.v, &mut self.seen);
        let x = if self.max { max } else { min };
        if !seen[0] || (if self.max { x > v[0] } else { x < v[0] }) {
            v[0] = x;
            seen[0] = true;
        }
    }
}

impl AggKernel for MinMaxInt {
    const BYTES_PER_GROUP: usize = 9;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, 0);
        self.seen.resize(groups, false);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let (v, seen, max) = (&mut self.v, &mut self.seen, self.max);
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
            if !seen[g] || (if max { x > v[g] } else { x < v[g] }) {
                v[g] = x;
                seen[g] = true;
            }
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match self.seen[g] {
            false => Output::Null,
            true => Output::Value(PointValue::Int(self.v[g])),
        }
    }
}

/// Float min/max in PostgreSQL's order (NaN largest, -0 = 0); float4 values are kept
/// exactly as f64.
#[derive(Debug, Default)]
pub struct MinMaxFloat {
    pub v: Vec<f64>,
    pub seen: Vec<bool>,
    pub max: bool,
    /// Whether the column (and so the result) is float4.
    pub float4: bool,
    /// Per group, its value's order key during a fold (`fold_keyed`); scratch.
    pub keys: Vec<i64>,
}

impl MinMaxFloat {
    /// Takes a vector's extremes (from its zone map) into group 0.
    pub fn add_extremes(&mut self, min: f64, max: f64) {
        let (v, seen) = (&mut self.v, &mut self.seen);
        let x = if self.max { max } else { min };
        let (old, new) = (float_key(v[0]), float_key(x));
        if !seen[0] || (if self.max { new > old } else { new < old }) {
            v[0] = x;
            seen[0] = true;
        }
    }

    /// `fold` of doubles without NULLs into groups `ids`: each group's current value as
    /// its order key (an unseen group's below or above every key), then per row one
    /// integer compare and a conditional store, with no per-row test of `seen` or key
    /// of the state. On a tie the new value wins, as in `fold`.
    fn fold_keyed(&mut self, x: &[f64], sel: &[u32], ids: &[u32]) {
        // No float's key is i64::MIN; NaN's is i64::MAX, which an unseen group's min
        // key equals: a NaN replaces it, as it must.
        let unseen = if self.max { i64::MIN } else { i64::MAX };
        let (v, seen, keys) = (&mut self.v, &mut self.seen, &mut self.keys);
        keys.clear();
        keys.extend(v.iter().zip(seen.iter()).map(|(&v, &s)| if s { float_key(v) } else { unseen }));
        // Slices, so the loops keep their bounds in registers (through the vectors they
        // would reload them after every store).
        let (v, seen, keys) = (v.as_mut_slice(), seen.as_mut_slice(), keys.as_mut_slice());
        let rows = sel.iter().zip(ids).map(|(&r, &g)| (x[r as usize], g as usize));
        if self.max {
            for (x, g) in rows {
                let k = float_key(x);
                if k >= keys[g] {
                    (keys[g], v[g], seen[g]) = (k, x, true);
                }
            }
        } else {
            for (x, g) in rows {
                let k = float_key(x);
                if k <= keys[g] {
                    (keys[g], v[g], seen[g]) = (k, x, true);
                }
            }
        }
    }
}

impl AggKernel for MinMaxFloat {
    const BYTES_PER_GROUP: usize = 9;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, 0.0);
        self.seen.resize(groups, false);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        if let (DecodedValues::Float64(x), None, Gids::Each(ids)) = (&col.values, &col.validity, gids) {
            // Few groups for the rows (TSBS q8's 400 hosts): by order keys.
            if self.v.len() <= 4 * sel.len() {
                self.fold_keyed(x, sel, ids);
                return Ok(());
            }
        }
        let (v, seen, max) = (&mut self.v, &mut self.seen, self.max);
        let valid = col.validity.as_deref();
        // float8larger keeps the state only if it is greater: on a tie the new value
        // wins (-0 after 0), and so it does here.
        let mut step = |g: usize, x: f64| {
            let replace = !seen[g] || {
                let (old, new) = (float_key(v[g]), float_key(x));
                if max {
                    old <= new
                } else {
                    old >= new
                }
            };
            if replace {
                v[g] = x;
                seen[g] = true;
            }
        };
        match &col.values {
            DecodedValues::Float64(x) => drive(x, valid, sel, gids, step),
            DecodedValues::Float32(x) => drive(x, valid, sel, gids, |g, x| step(g, x as f64)),
            _ => unreachable!("float min/max of a non-float column"),
        }
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match (self.seen[g], self.float4) {
            (false, _) => Output::Null,
            (true, true) => Output::Value(PointValue::Float32(self.v[g] as f32)),
            (true, false) => Output::Value(PointValue::Float64(self.v[g])),
        }
    }
}

/// min/max of byte strings (text, varchar) under the aggregate's collation.
#[derive(Debug, Default)]
pub struct MinMaxBytes {
    pub v: Vec<Option<Box<[u8]>>>,
    pub max: bool,
    /// bpchar_larger / bpchar_smaller: compared without trailing spaces, and a tie
    /// keeps the state.
    pub bpchar: bool,
}

/// A bpchar's bytes without its trailing spaces (bcTruelen).
fn trimmed(b: &[u8]) -> &[u8] {
    &b[..b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1)]
}

impl AggKernel for MinMaxBytes {
    const BYTES_PER_GROUP: usize = 48;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, None);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, cmp: Cmp) -> Result<(), Overflow> {
        let (v, max, bpchar) = (&mut self.v, self.max, self.bpchar);
        // text_larger keeps the state only if it compares greater: ties go to the new
        // value (they differ only under a nondeterministic collation). bpchar_larger
        // keeps it on a tie (ties differ in trailing spaces too).
        each_bytes(col, sel, gids, |g, x| {
            let replace = match &v[g] {
                None => true,
                // The same bytes again (often, from a dictionary): no compare.
                Some(old) if old.as_ref() == x => false,
                Some(old) if bpchar => {
                    let o = cmp(trimmed(old), trimmed(x));
                    if max {
                        o == Ordering::Less
                    } else {
                        o == Ordering::Greater
                    }
                }
                Some(old) => {
                    let o = cmp(old, x);
                    if max {
                        o != Ordering::Greater
                    } else {
                        o != Ordering::Less
                    }
                }
            };
            if replace {
                v[g] = Some(x.into());
            }
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match &self.v[g] {
            None => Output::Null,
            Some(b) => Output::Value(PointValue::Bytes(b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(x: &[f64], valid: Option<Vec<bool>>) -> DecodedVector {
        DecodedVector::from_parts(x.len() as u32, valid, DecodedValues::Float64(x.to_vec()), None)
    }

    #[test]
    fn keyed_fold_of_few_groups_matches_the_general_one() {
        // NaN, both zeros, infinities and ties, in 5 groups; the general fold is forced by
        // a validity that says every row is valid.
        let specials = [f64::NAN, 0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, 1.5, -1.5, 1.5];
        let x: Vec<f64> = (0..700)
            .map(|i| if i % 9 == 0 { specials[i / 9 % 8] } else { (i * 37 % 101) as f64 - 50.0 })
            .collect();
        let sel: Vec<u32> = (0..700).filter(|i| i % 7 != 3).collect();
        let ids: Vec<u32> = sel.iter().map(|&r| r * 13 % 5).collect();
        for max in [true, false] {
            let (mut keyed, mut general) =
                (MinMaxFloat { max, ..Default::default() }, MinMaxFloat { max, ..Default::default() });
            keyed.resize(6);
            general.resize(6);
            let cmp: Cmp = &|a, b| a.cmp(b);
            for part in [0..200, 200..sel.len()] {
                keyed
                    .fold(&column(&x, None), &sel[part.clone()], Gids::Each(&ids[part.clone()]), cmp)
                    .unwrap();
                general
                    .fold(
                        &column(&x, Some(vec![true; x.len()])),
                        &sel[part.clone()],
                        Gids::Each(&ids[part]),
                        cmp,
                    )
                    .unwrap();
            }
            for g in 0..6 {
                assert_eq!(keyed.seen[g], general.seen[g], "group {g}");
                assert_eq!(keyed.v[g].to_bits(), general.v[g].to_bits(), "max {max}, group {g}");
            }
            assert!(!keyed.seen[5]);
        }
    }
}
