//! Aggregate states per group, folded a vector at a time. Each state and step is the
//! built-in aggregate's own (int4_sum, int8_avg_accum, float8pl, float8_accum,
//! float8larger, text_larger, booland_statefunc, ...): the same arithmetic in the same
//! row order, so results are identical to core's Agg, floats and overflow errors
//! included. Pure; the node turns states into Datums.

use super::numeric::DecimalSum;
use super::spec::{AggFunc, InputType};
use crate::exec::filter::float_key;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use std::cmp::Ordering;

/// Which group each selected row belongs to.
#[derive(Clone, Copy)]
pub enum Gids<'a> {
    /// Every row is in group 0 (no GROUP BY).
    One,
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

/// One aggregate's state for every group.
#[derive(Debug)]
pub enum Acc {
    /// count(*), count(col): int8.
    Count(Vec<i64>),
    /// sum(int2/int4) (int8, NULL without rows) and avg(int2/int4) (int8[] {n, sum}).
    SumInt {
        sum: Vec<i64>,
        n: Vec<i64>,
    },
    /// sum/avg(int8): int8_avg_accum's 128-bit sum and count.
    SumWide {
        sum: Vec<i128>,
        n: Vec<i64>,
    },
    /// sum(float4): float4pl, in single precision.
    SumF32 {
        sum: Vec<f32>,
        n: Vec<i64>,
    },
    /// sum(float8): float8pl.
    SumF64 {
        sum: Vec<f64>,
        n: Vec<i64>,
    },
    /// avg(float4/float8): float8_accum's {N, Sx, Sxx} (Youngs-Cramer).
    Moments {
        n: Vec<f64>,
        sx: Vec<f64>,
        sxx: Vec<f64>,
    },
    MinMaxInt {
        v: Vec<i64>,
        seen: Vec<bool>,
        max: bool,
    },
    /// Float min/max in PostgreSQL's order (NaN largest, -0 = 0); float4 values are
    /// kept exactly as f64.
    MinMaxFloat {
        v: Vec<f64>,
        seen: Vec<bool>,
        max: bool,
    },
    MinMaxBytes {
        v: Vec<Option<Box<[u8]>>>,
        max: bool,
    },
    /// bool_and / bool_or.
    Bool {
        v: Vec<bool>,
        seen: Vec<bool>,
        and: bool,
    },
    /// sum/avg(numeric): numeric_avg_accum's state.
    Decimal(Vec<DecimalSum>),
}

impl Acc {
    pub fn new(func: AggFunc, input: InputType) -> Acc {
        use InputType::*;
        let max = func == AggFunc::Max;
        match (func, input) {
            (AggFunc::CountStar | AggFunc::Count, _) => Acc::Count(Vec::new()),
            (AggFunc::Sum | AggFunc::Avg, Int2 | Int4) => Acc::SumInt { sum: Vec::new(), n: Vec::new() },
            (AggFunc::Sum | AggFunc::Avg, Int8) => Acc::SumWide { sum: Vec::new(), n: Vec::new() },
            (AggFunc::Sum | AggFunc::Avg, Numeric) => Acc::Decimal(Vec::new()),
            (AggFunc::Sum, Float4) => Acc::SumF32 { sum: Vec::new(), n: Vec::new() },
            (AggFunc::Sum, Float8) => Acc::SumF64 { sum: Vec::new(), n: Vec::new() },
            (AggFunc::Avg, _) => Acc::Moments { n: Vec::new(), sx: Vec::new(), sxx: Vec::new() },
            (AggFunc::Min | AggFunc::Max, Float4 | Float8) => {
                Acc::MinMaxFloat { v: Vec::new(), seen: Vec::new(), max }
            }
            (AggFunc::Min | AggFunc::Max, Text) => Acc::MinMaxBytes { v: Vec::new(), max },
            (AggFunc::Min | AggFunc::Max, _) => Acc::MinMaxInt { v: Vec::new(), seen: Vec::new(), max },
            (AggFunc::BoolAnd | AggFunc::BoolOr, _) => {
                Acc::Bool { v: Vec::new(), seen: Vec::new(), and: func == AggFunc::BoolAnd }
            }
            (AggFunc::Sum, _) => Acc::SumF64 { sum: Vec::new(), n: Vec::new() },
        }
    }

    /// Makes room for `groups` groups (new ones start empty).
    pub fn resize(&mut self, groups: usize) {
        match self {
            Acc::Count(c) => c.resize(groups, 0),
            Acc::SumInt { sum, n } => {
                sum.resize(groups, 0);
                n.resize(groups, 0);
            }
            Acc::SumWide { sum, n } => {
                sum.resize(groups, 0);
                n.resize(groups, 0);
            }
            Acc::SumF32 { sum, n } => {
                sum.resize(groups, 0.0);
                n.resize(groups, 0);
            }
            Acc::SumF64 { sum, n } => {
                sum.resize(groups, 0.0);
                n.resize(groups, 0);
            }
            Acc::Moments { n, sx, sxx } => {
                n.resize(groups, 0.0);
                sx.resize(groups, 0.0);
                sxx.resize(groups, 0.0);
            }
            Acc::MinMaxInt { v, seen, .. } => {
                v.resize(groups, 0);
                seen.resize(groups, false);
            }
            Acc::MinMaxFloat { v, seen, .. } => {
                v.resize(groups, 0.0);
                seen.resize(groups, false);
            }
            Acc::MinMaxBytes { v, .. } => v.resize(groups, None),
            Acc::Bool { v, seen, .. } => {
                v.resize(groups, false);
                seen.resize(groups, false);
            }
            Acc::Decimal(sums) => sums.resize(groups, DecimalSum::default()),
        }
    }

    /// Bytes of state per group (for the memory estimate).
    pub fn bytes_per_group(func: AggFunc, input: InputType) -> usize {
        match Acc::new(func, input) {
            Acc::Count(_) => 8,
            Acc::SumInt { .. } | Acc::SumF64 { .. } => 16,
            Acc::SumF32 { .. } => 12,
            Acc::SumWide { .. } => 24,
            Acc::Moments { .. } => 24,
            Acc::MinMaxInt { .. } | Acc::MinMaxFloat { .. } => 9,
            Acc::MinMaxBytes { .. } => 48,
            Acc::Bool { .. } => 2,
            Acc::Decimal(_) => 120,
        }
    }

    /// count(*): every selected row counts.
    pub fn count_rows(&mut self, sel: &[u32], gids: Gids) {
        let Acc::Count(c) = self else { unreachable!("count_rows on {self:?}") };
        match gids {
            Gids::One => c[0] += sel.len() as i64,
            Gids::Each(g) => g.iter().for_each(|&g| c[g as usize] += 1),
        }
    }

    /// Adds `rows` rows to group 0 without reading them (count(*) answered by metadata).
    pub fn add_count(&mut self, rows: i64) {
        if let Acc::Count(c) = self {
            c[0] += rows;
        }
    }

    /// Folds the selected rows of `col` into the groups `gids` gives; `cmp` orders byte
    /// strings (the aggregate's collation).
    pub fn fold(
        &mut self,
        col: &DecodedVector,
        sel: &[u32],
        gids: Gids,
        cmp: &dyn Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<(), Overflow> {
        let valid = col.validity.as_deref();
        match (self, &col.values) {
            (Acc::Count(c), _) => match valid {
                None => match gids {
                    Gids::One => c[0] += sel.len() as i64,
                    Gids::Each(g) => g.iter().for_each(|&g| c[g as usize] += 1),
                },
                Some(v) => each(v, sel, gids, |g, r| {
                    let _ = r;
                    c[g] += 1
                }),
            },
            (Acc::SumInt { sum, n }, DecodedValues::Int(x)) => drive(x, valid, sel, gids, |g, x| {
                sum[g] = sum[g].wrapping_add(x);
                n[g] += 1;
            }),
            (Acc::SumWide { sum, n }, DecodedValues::Int(x)) => drive(x, valid, sel, gids, |g, x| {
                sum[g] += x as i128;
                n[g] += 1;
            }),
            (Acc::SumF32 { sum, n }, DecodedValues::Float32(x)) => add_floats(sum, n, x, valid, sel, gids)?,
            (Acc::SumF64 { sum, n }, DecodedValues::Float64(x)) => add_floats(sum, n, x, valid, sel, gids)?,
            (Acc::Moments { n, sx, sxx }, DecodedValues::Float64(x)) => {
                let mut overflow = false;
                drive(x, valid, sel, gids, |g, x| overflow |= accum(&mut n[g], &mut sx[g], &mut sxx[g], x));
                ok(overflow)?
            }
            (Acc::Moments { n, sx, sxx }, DecodedValues::Float32(x)) => {
                let mut overflow = false;
                drive(x, valid, sel, gids, |g, x| {
                    overflow |= accum(&mut n[g], &mut sx[g], &mut sxx[g], x as f64)
                });
                ok(overflow)?
            }
            (Acc::MinMaxInt { v, seen, max }, DecodedValues::Int(x)) => {
                let max = *max;
                drive(x, valid, sel, gids, |g, x| {
                    if !seen[g] || (if max { x > v[g] } else { x < v[g] }) {
                        v[g] = x;
                        seen[g] = true;
                    }
                })
            }
            (Acc::MinMaxFloat { v, seen, max }, values) => {
                let max = *max;
                // float8larger keeps the state only if it is greater: on a tie the new
                // value wins (-0 after 0), and so it does here.
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
                match values {
                    DecodedValues::Float64(x) => drive(x, valid, sel, gids, step),
                    DecodedValues::Float32(x) => drive(x, valid, sel, gids, |g, x| step(g, x as f64)),
                    _ => unreachable!("float min/max of a non-float column"),
                }
            }
            (Acc::MinMaxBytes { v, max }, _) => {
                let max = *max;
                // text_larger keeps the state only if it compares greater: ties go to
                // the new value (they differ only under a nondeterministic collation).
                each_bytes(col, sel, gids, |g, x| {
                    let replace = match &v[g] {
                        None => true,
                        // The same bytes again (often, from a dictionary): no compare.
                        Some(old) if old.as_ref() == x => false,
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
                })
            }
            (Acc::Bool { v, seen, and }, DecodedValues::Int(x)) => {
                let and = *and;
                drive(x, valid, sel, gids, |g, x| {
                    let b = x != 0;
                    v[g] = if !seen[g] {
                        b
                    } else if and {
                        v[g] && b
                    } else {
                        v[g] || b
                    };
                    seen[g] = true;
                })
            }
            (Acc::Decimal(sums), _) => {
                let mut corrupt = false;
                each_bytes(col, sel, gids, |g, x| corrupt |= !sums[g].add(x));
                if corrupt {
                    return Err(Overflow::CorruptNumeric);
                }
            }
            (acc, _) => unreachable!("aggregate state {acc:?} given a column of another type"),
        }
        Ok(())
    }
}

/// int8_avg_serialize's bytes for a sum/avg(int8) state: the count, then the sum as
/// numericvar_serialize writes what int128_to_numericvar makes of it (base-10000 digits,
/// most significant first, trailing zero digits kept), all big-endian.
pub fn int8_avg_serialized(sum: i128, n: i64) -> Vec<u8> {
    const NUMERIC_NEG: i32 = 0x4000;
    let mut digits = Vec::new();
    let mut u = sum.unsigned_abs();
    while u != 0 {
        digits.push((u % 10_000) as i16);
        u /= 10_000;
    }
    digits.reverse();
    let mut out = Vec::with_capacity(24 + 2 * digits.len());
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(&(digits.len() as i32).to_be_bytes());
    let weight = if digits.is_empty() { 0 } else { digits.len() as i32 - 1 };
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&(if sum < 0 { NUMERIC_NEG } else { 0 }).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
    out
}

/// The float types `add_floats` sums, each in its own precision.
trait SumFloat: Copy + std::ops::Add<Output = Self> {
    fn infinite(self) -> bool;
}

impl SumFloat for f32 {
    fn infinite(self) -> bool {
        self.is_infinite()
    }
}

impl SumFloat for f64 {
    fn infinite(self) -> bool {
        self.is_infinite()
    }
}

/// float4pl / float8pl per group: the first value is the state, the next ones are
/// added to it; finite inputs that overflow raise the overflow error.
fn add_floats<T: SumFloat>(
    sum: &mut [T],
    n: &mut [i64],
    x: &[T],
    valid: Option<&[bool]>,
    sel: &[u32],
    gids: Gids,
) -> Result<(), Overflow> {
    let mut overflow = false;
    drive(x, valid, sel, gids, |g, x| {
        if n[g] == 0 {
            sum[g] = x;
        } else {
            let s = sum[g] + x;
            overflow |= s.infinite() && !sum[g].infinite() && !x.infinite();
            sum[g] = s;
        }
        n[g] += 1;
    });
    ok(overflow)
}

fn ok(overflow: bool) -> Result<(), Overflow> {
    if overflow {
        Err(Overflow::Float)
    } else {
        Ok(())
    }
}

/// float8_accum: one value into {N, Sx, Sxx}; true when finite inputs overflowed.
#[inline(always)]
fn accum(n: &mut f64, sx: &mut f64, sxx: &mut f64, x: f64) -> bool {
    let (n0, sx0) = (*n, *sx);
    let n1 = n0 + 1.0;
    let s = sx0 + x;
    let mut q = *sxx;
    let mut overflow = false;
    if n0 > 0.0 {
        let tmp = x * n1 - s;
        q += tmp * tmp / (n1 * n0);
        if s.is_infinite() || q.is_infinite() {
            overflow = !sx0.is_infinite() && !x.is_infinite();
            q = f64::NAN;
        }
    } else if x.is_infinite() || x.is_nan() {
        q = f64::NAN;
    }
    *n = n1;
    *sx = s;
    *sxx = q;
    overflow
}

/// Calls `f(group, value)` for each selected row that is not NULL. The loops are
/// specialised per case (no NULLs, one group) so that each compiles tight.
#[inline(always)]
fn drive<T: Copy>(
    values: &[T],
    valid: Option<&[bool]>,
    sel: &[u32],
    gids: Gids,
    mut f: impl FnMut(usize, T),
) {
    match (valid, gids) {
        (None, Gids::One) => sel.iter().for_each(|&r| f(0, values[r as usize])),
        (None, Gids::Each(g)) => sel.iter().zip(g).for_each(|(&r, &g)| f(g as usize, values[r as usize])),
        (Some(v), gids) => each(v, sel, gids, |g, r| f(g, values[r])),
    }
}

/// Calls `f(group, row)` for each selected row that is not NULL.
#[inline(always)]
fn each(valid: &[bool], sel: &[u32], gids: Gids, mut f: impl FnMut(usize, usize)) {
    match gids {
        Gids::One => sel.iter().filter(|&&r| valid[r as usize]).for_each(|&r| f(0, r as usize)),
        Gids::Each(g) => sel
            .iter()
            .zip(g)
            .filter(|(&r, _)| valid[r as usize])
            .for_each(|(&r, &g)| f(g as usize, r as usize)),
    }
}

/// Calls `f(group, bytes)` for each selected non-NULL row of a byte-string column,
/// decoded or a dictionary.
fn each_bytes(col: &DecodedVector, sel: &[u32], gids: Gids, mut f: impl FnMut(usize, &[u8])) {
    let valid = |r: usize| col.is_valid(r);
    let group = |i: usize| match gids {
        Gids::One => 0,
        Gids::Each(g) => g[i] as usize,
    };
    if let Some(d) = &col.dictionary {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn floats(values: &[f64]) -> DecodedVector {
        DecodedVector::from_parts(values.len() as u32, None, DecodedValues::Float64(values.to_vec()), None)
    }

    fn ints(values: &[i64], valid: Option<Vec<bool>>) -> DecodedVector {
        DecodedVector::from_parts(values.len() as u32, valid, DecodedValues::Int(values.to_vec()), None)
    }

    fn bytewise(a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }

    #[test]
    fn float_sums_follow_row_order_and_report_overflow() {
        let mut acc = Acc::new(AggFunc::Sum, InputType::Float8);
        acc.resize(2);
        let col = floats(&[1e16, 1.0, -1e16, 1.0]);
        acc.fold(&col, &[0, 1, 2, 3], Gids::Each(&[0, 0, 0, 1]), &bytewise).unwrap();
        let Acc::SumF64 { sum, n } = &acc else { panic!() };
        // Sequential: (1e16 + 1) rounds to 1e16, then -1e16 leaves 0.
        assert_eq!(sum[0], ((1e16f64 + 1.0) + -1e16));
        assert_eq!((n[0], n[1], sum[1]), (3, 1, 1.0));
        let mut acc = Acc::new(AggFunc::Sum, InputType::Float8);
        acc.resize(1);
        assert_eq!(
            acc.fold(&floats(&[f64::MAX, f64::MAX]), &[0, 1], Gids::One, &bytewise),
            Err(Overflow::Float)
        );
        let mut acc = Acc::new(AggFunc::Sum, InputType::Float8);
        acc.resize(1);
        assert_eq!(acc.fold(&floats(&[f64::INFINITY, 1.0]), &[0, 1], Gids::One, &bytewise), Ok(()));
    }

    #[test]
    fn moments_match_float8_accum() {
        let mut acc = Acc::new(AggFunc::Avg, InputType::Float8);
        acc.resize(1);
        acc.fold(&floats(&[2.0, 4.0, 9.0]), &[0, 1, 2], Gids::One, &bytewise).unwrap();
        let Acc::Moments { n, sx, sxx } = &acc else { panic!() };
        assert_eq!((n[0], sx[0]), (3.0, 15.0));
        assert!((sxx[0] - 26.0).abs() < 1e-12);
        // A huge spread overflows Sxx: float8_accum raises an error.
        let mut acc = Acc::new(AggFunc::Avg, InputType::Float8);
        acc.resize(1);
        assert_eq!(acc.fold(&floats(&[1e200, -1e200]), &[0, 1], Gids::One, &bytewise), Err(Overflow::Float));
    }

    #[test]
    fn nulls_and_selection_are_honoured() {
        let col = ints(&[5, 7, 100, 1], Some(vec![true, false, true, true]));
        let mut count = Acc::new(AggFunc::Count, InputType::Int4);
        let mut max = Acc::new(AggFunc::Max, InputType::Int4);
        let mut sum = Acc::new(AggFunc::Sum, InputType::Int8);
        for a in [&mut count, &mut max, &mut sum] {
            a.resize(1);
            a.fold(&col, &[0, 1, 3], Gids::One, &bytewise).unwrap();
        }
        assert!(matches!(&count, Acc::Count(c) if c[0] == 2));
        assert!(matches!(&max, Acc::MinMaxInt { v, seen, .. } if v[0] == 5 && seen[0]));
        assert!(matches!(&sum, Acc::SumWide { sum, n } if sum[0] == 6 && n[0] == 2));
    }

    #[test]
    fn float_max_puts_nan_on_top_and_ties_take_the_new_value() {
        let mut max = Acc::new(AggFunc::Max, InputType::Float8);
        let mut min = Acc::new(AggFunc::Min, InputType::Float8);
        let col = floats(&[1.0, f64::NAN, 0.0, -0.0]);
        for a in [&mut max, &mut min] {
            a.resize(1);
            a.fold(&col, &[0, 1, 2, 3], Gids::One, &bytewise).unwrap();
        }
        assert!(matches!(&max, Acc::MinMaxFloat { v, .. } if v[0].is_nan()));
        assert!(matches!(&min, Acc::MinMaxFloat { v, .. } if v[0] == 0.0 && v[0].is_sign_negative()));
    }

    #[test]
    fn text_min_max_use_the_collation_order() {
        let values = DecodedValues::Bytes { offsets: vec![0, 1, 3, 4], data: b"bAac".to_vec() };
        let col = DecodedVector::from_parts(3, None, values, None);
        // A case-insensitive order: "Aa" < "b" < "c".
        let ci = |a: &[u8], b: &[u8]| a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase());
        let mut min = Acc::new(AggFunc::Min, InputType::Text);
        min.resize(1);
        min.fold(&col, &[0, 1, 2], Gids::One, &ci).unwrap();
        assert!(matches!(&min, Acc::MinMaxBytes { v, .. } if v[0].as_deref() == Some(&b"Aa"[..])));
    }

    #[test]
    fn int8_states_serialize_as_postgres_does() {
        // The bytes int8_avg_serialize gave on PostgreSQL 15 for these inputs.
        let hex = |v: Vec<u8>| v.iter().map(|b| format!("{b:02x}")).collect::<String>();
        assert_eq!(
            hex(int8_avg_serialized(1 + 2 + 123_456_789_012, 3)),
            "00000000000000030000000300000002000000000000000004d2162e2337"
        );
        assert_eq!(hex(int8_avg_serialized(-5, 1)), "0000000000000001000000010000000000004000000000000005");
        assert_eq!(hex(int8_avg_serialized(0, 1)), "000000000000000100000000000000000000000000000000");
        // Trailing zero digits stay.
        assert_eq!(
            &int8_avg_serialized(10_000, 1)[8..],
            &[0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]
        );
    }

    #[test]
    fn bool_and_or() {
        let col = ints(&[1, 0, 1], None);
        let mut and = Acc::new(AggFunc::BoolAnd, InputType::Bool);
        let mut or = Acc::new(AggFunc::BoolOr, InputType::Bool);
        for a in [&mut and, &mut or] {
            a.resize(2);
            a.fold(&col, &[0, 1, 2], Gids::Each(&[0, 0, 1]), &bytewise).unwrap();
        }
        assert!(matches!(&and, Acc::Bool { v, .. } if !v[0] && v[1]));
        assert!(matches!(&or, Acc::Bool { v, .. } if v[0] && v[1]));
    }
}
