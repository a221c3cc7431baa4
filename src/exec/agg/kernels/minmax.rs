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
}

impl AggKernel for MinMaxFloat {
    const BYTES_PER_GROUP: usize = 9;

    fn resize(&mut self, groups: usize) {
        self.v.resize(groups, 0.0);
        self.seen.resize(groups, false);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
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
