//! var_pop, var_samp (variance), stddev_pop and stddev_samp of int2, int4, int8 and
//! numeric. Core keeps N, sum(X) and sum(X*X) exactly (int2/int4_accum in 128-bit
//! integers, int8_accum and numeric_accum in a NumericAggState with NaN and infinity
//! counts) and its final function (numeric_stddev_internal) rounds the division and
//! the square root at scales it picks from them. The fold keeps the same exact sums
//! and hands them to core's own deserialize and final functions (`agg::datum`), so the
//! result is core's to the last digit; no rounding is done here.
//!
//! A group's sums: the count of finite inputs, sum(X) in 128 bits and sum(X*X) in 256
//! at the largest display scale seen (twice it for the squares), that scale and how
//! many inputs had it (maxScale, maxScaleCount), and NaN/±Infinity counts: 66 bytes a
//! group. Integers cannot leave these bounds (N < 2^63 squares below 2^126); a numeric
//! group that would goes on in exact base-10000 sums (`DecimalSum`).

use super::sum_int::int128_var;
use super::{drive, each_row, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::numeric::DecimalSum;
use crate::exec::agg::output::MomentsResult;
use crate::exec::agg::output::Output;
use crate::exec::agg::u256::U256;
use crate::exec::expr::eval::{NumVal, NumVec};
use crate::exec::expr::num::{pow10, wide_mul, Num};
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::format::numeric::{parse, Parsed};
use hashbrown::HashMap;

/// Which transition state core keeps, by input type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarianceInput {
    /// int2/int4: int2_accum's 128-bit PolyNumAggState (numeric_poly_serialize).
    Poly,
    /// int8: int8_accum's NumericAggState of integers (numeric_serialize).
    Int8,
    /// numeric: numeric_accum's NumericAggState (numeric_serialize).
    Numeric,
}

#[derive(Debug)]
pub struct Variance {
    n: Vec<i64>,
    sum: Vec<i128>,
    sum_sq: Vec<U256>,
    scale: Vec<u16>,
    max_scale_count: Vec<i64>,
    /// NaN, +Infinity and -Infinity inputs, by group (numeric only).
    specials: HashMap<u32, [i64; 3]>,
    /// The groups whose sums left the fast state, by group: their sums, exact.
    exact: HashMap<u32, Exact>,
    result: MomentsResult,
    input: VarianceInput,
}

/// A group's sum(X) and sum(X*X), exact (their display scales the largest seen).
#[derive(Debug, Clone, Default)]
struct Exact {
    sum: DecimalSum,
    sum_sq: DecimalSum,
}

impl Exact {
    /// The fast sums: `sum` / 10^scale and `sum_sq` / 10^(2 * scale).
    fn from_fast(sum: i128, sum_sq: U256, scale: u16) -> Exact {
        let mut e = Exact::default();
        let (mut d, low) = base10000(U256::from_u128(sum.unsigned_abs()), scale as u32);
        d.reverse();
        e.sum.add_digits(sum < 0, low + d.len() as i32 - 1, scale, &d, 1);
        let (mut d, low) = base10000(sum_sq, 2 * scale as u32);
        d.reverse();
        e.sum_sq.add_digits(false, low + d.len() as i32 - 1, 2 * scale, &d, 1);
        e
    }
}

/// The base-10000 digits of `mag` / 10^scale, least significant first, and the
/// exponent of the first (the point falls between digits: the lowest one holds the
/// last decimal places padded with zeros).
fn base10000(mag: U256, scale: u32) -> (Vec<u16>, i32) {
    let pad = (4 - scale % 4) % 4;
    let mut digits = Vec::with_capacity(16);
    let mut m = mag;
    if pad > 0 {
        let (q, r) = m.div_rem_u64(10u64.pow(4 - pad));
        digits.push((r * 10u64.pow(pad)) as u16);
        m = q;
    }
    while m.hi != 0 {
        let (q, r) = m.div_rem_u64(10_000);
        digits.push(r as u16);
        m = q;
    }
    let mut low = m.lo;
    while low != 0 {
        digits.push((low % 10_000) as u16);
        low /= 10_000;
    }
    (digits, -(((scale + pad) / 4) as i32))
}

/// `mag` / 10^scale (negative if `negative`), its display scale `scale`, as
/// numericvar_serialize writes what accum_sum_final makes of it
/// (`DecimalSum::write_var`): base-10000 digits without leading or trailing zero ones,
/// a zero with weight 0 and no sign.
fn write_var(out: &mut Vec<u8>, negative: bool, mag: U256, scale: u32) {
    let (digits, low) = base10000(mag, scale);
    let Some(first) = digits.iter().position(|&d| d != 0) else {
        out.extend_from_slice(&[0; 12]);
        out.extend_from_slice(&(scale as i32).to_be_bytes());
        return;
    };
    let last = digits.iter().rposition(|&d| d != 0).unwrap_or(first);
    out.extend_from_slice(&((last - first + 1) as i32).to_be_bytes());
    out.extend_from_slice(&(low + last as i32).to_be_bytes());
    out.extend_from_slice(&(if negative { 0x4000i32 } else { 0 }).to_be_bytes());
    out.extend_from_slice(&(scale as i32).to_be_bytes());
    for &d in digits[first..=last].iter().rev() {
        out.extend_from_slice(&(d as i16).to_be_bytes());
    }
}

/// Calls `f(group, rows)` for each run of selected rows of one group (rows come
/// ordered by group when the grouping can, `HashGrouping`; else runs are short).
#[inline(always)]
fn for_runs(sel: &[u32], gids: Gids, mut f: impl FnMut(usize, &[u32])) {
    match gids {
        Gids::Same(g) => f(g as usize, sel),
        Gids::Each(ids) => {
            let mut start = 0;
            for run in ids.chunk_by(|a, b| a == b) {
                f(run[0] as usize, &sel[start..start + run.len()]);
                start += run.len();
            }
        }
    }
}

/// The count, sum and sum of squares of a run of 64-bit values (the squares' low 128
/// bits and how often they carried past them).
struct RunSums {
    n: i64,
    sum: i128,
    squares_low: u128,
    carries: u128,
}

impl RunSums {
    #[inline(always)]
    fn of(x: &[i64], valid: Option<&[bool]>, rows: &[u32]) -> RunSums {
        let mut s = RunSums { n: 0, sum: 0, squares_low: 0, carries: 0 };
        let mut add = |x: i64| {
            let x = x as i128;
            s.n += 1;
            s.sum += x;
            // A 64-bit value's square fits 128 bits.
            let (low, carry) = s.squares_low.overflowing_add((x * x) as u128);
            s.squares_low = low;
            s.carries += carry as u128;
        };
        match valid {
            None => rows.iter().for_each(|&r| add(x[r as usize])),
            Some(v) => rows.iter().filter(|&&r| v[r as usize]).for_each(|&r| add(x[r as usize])),
        }
        s
    }

    fn squares(&self) -> U256 {
        U256 { hi: self.carries, lo: self.squares_low }
    }
}

impl AggKernel for Variance {
    const BYTES_PER_GROUP: usize = 66;

    fn resize(&mut self, groups: usize) {
        self.n.resize(groups, 0);
        self.sum.resize(groups, 0);
        self.sum_sq.resize(groups, U256::ZERO);
        self.scale.resize(groups, 0);
        self.max_scale_count.resize(groups, 0);
    }

    /// Integers (int2_accum, int4_accum, int8_accum): exact sums of X and X*X, each
    /// run of rows of one group summed in registers first.
    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let valid = col.validity.as_deref();
        for_runs(sel, gids, |g, rows| {
            let run = RunSums::of(x, valid, rows);
            self.n[g] += run.n;
            self.sum[g] += run.sum;
            // Below 2^63 squares of at most 2^126: never past 2^189.
            self.sum_sq[g] =
                self.sum_sq[g].checked_add(run.squares()).expect("a sum of integer squares fits 256 bits");
        });
        Ok(())
    }

    /// NULL without inputs, or with one for a sample's; else core's final function
    /// on the state (`Output::NumericVariance`).
    fn result(&self, g: usize) -> Output<'_> {
        let specials = self.specials.get(&(g as u32)).map_or(0, |s| s.iter().sum());
        let total = self.n[g] + specials;
        let sample = matches!(self.result, MomentsResult::VarSamp | MomentsResult::StddevSamp);
        if total == 0 || (sample && total <= 1) {
            return Output::Null;
        }
        Output::NumericVariance { state: self.numeric_state(g), result: self.result }
    }

    /// numeric_poly_serialize's bytes (int2/int4), or numeric_serialize's.
    fn partial_state(&self, g: usize) -> Output<'_> {
        match self.input {
            VarianceInput::Poly => {
                let mut out = self.n[g].to_be_bytes().to_vec();
                int128_var(self.sum[g], &mut out);
                // int2/int4 squares are below 2^62: 2^65 rows before 128 bits fill.
                int128_var(self.sum_sq[g].lo as i128, &mut out);
                Output::Bytea(out)
            }
            VarianceInput::Int8 | VarianceInput::Numeric => Output::Bytea(self.numeric_state(g)),
        }
    }
}

impl Variance {
    /// No groups yet; `result` names the final function.
    pub fn new(result: MomentsResult, input: VarianceInput) -> Variance {
        Variance {
            n: Vec::new(),
            sum: Vec::new(),
            sum_sq: Vec::new(),
            scale: Vec::new(),
            max_scale_count: Vec::new(),
            specials: HashMap::new(),
            exact: HashMap::new(),
            result,
            input,
        }
    }

    /// Group `g`'s state as numeric_serialize writes a NumericAggState: N (finite
    /// inputs), sum(X) and sum(X*X) as numericvar_serialize writes accum_sum_final's
    /// result (display scales maxScale and twice it), maxScale, maxScaleCount, and the
    /// NaN, +Infinity and -Infinity counts; all big-endian.
    pub fn numeric_state(&self, g: usize) -> Vec<u8> {
        let mut out = self.n[g].to_be_bytes().to_vec();
        let scale = self.scale[g];
        match self.exact.get(&(g as u32)) {
            Some(e) => {
                e.sum.write_var(&mut out);
                e.sum_sq.write_var(&mut out);
            }
            None => {
                let sum = self.sum[g];
                write_var(&mut out, sum < 0, U256::from_u128(sum.unsigned_abs()), scale as u32);
                write_var(&mut out, false, self.sum_sq[g], 2 * scale as u32);
            }
        }
        out.extend_from_slice(&(scale as i32).to_be_bytes());
        // Integers all have scale 0, maxScale's.
        let max_scale_count = match self.input {
            VarianceInput::Numeric => self.max_scale_count[g],
            _ => self.n[g],
        };
        out.extend_from_slice(&max_scale_count.to_be_bytes());
        let specials = self.specials.get(&(g as u32)).copied().unwrap_or_default();
        for c in specials {
            out.extend_from_slice(&c.to_be_bytes());
        }
        out
    }

    /// Folds the selected, valid rows of a numeric vector (do_numeric_accum).
    pub fn fold_numeric(
        &mut self,
        values: &NumVec,
        valid: Option<&[bool]>,
        sel: &[u32],
        gids: Gids,
    ) -> Result<(), Overflow> {
        match values {
            NumVec::Scaled64 { m, scale } => self.fold_scaled64(m, *scale, valid, sel, gids),
            NumVec::Scaled { m, scale } => drive(m, valid, sel, gids, |g, m| self.add_scaled(g, m, *scale)),
            NumVec::Rows(v) => {
                let mut corrupt = false;
                each_row(valid, sel, gids, |g, r| match &v[r] {
                    NumVal::Small(Num::Fin { m, scale }) => self.add_scaled(g, *m, *scale),
                    NumVal::Small(Num::NaN) => self.add_special(g, 0),
                    NumVal::Small(Num::PosInf) => self.add_special(g, 1),
                    NumVal::Small(Num::NegInf) => self.add_special(g, 2),
                    NumVal::Big(b) => corrupt |= !self.add_stored(g, b),
                });
                if corrupt {
                    return Err(Overflow::CorruptNumeric);
                }
            }
        }
        Ok(())
    }

    /// Folds 64-bit mantissas of one display scale: each run of rows of one group is
    /// summed in registers and added to a group at that scale at once; the rest go row
    /// by row as `add_scaled` adds them.
    pub fn fold_scaled64(&mut self, m: &[i64], scale: u16, valid: Option<&[bool]>, sel: &[u32], gids: Gids) {
        for_runs(sel, gids, |g, rows| {
            let fast =
                self.scale[g] == scale && (self.exact.is_empty() || !self.exact.contains_key(&(g as u32)));
            if fast {
                let run = RunSums::of(m, valid, rows);
                if let (Some(s), Some(q)) =
                    (self.sum[g].checked_add(run.sum), self.sum_sq[g].checked_add(run.squares()))
                {
                    self.sum[g] = s;
                    self.sum_sq[g] = q;
                    self.n[g] += run.n;
                    self.max_scale_count[g] += run.n;
                    return;
                }
            }
            for &r in rows {
                if valid.is_none_or(|v| v[r as usize]) {
                    self.add_scaled(g, m[r as usize] as i128, scale);
                }
            }
        });
    }

    fn add_special(&mut self, g: usize, which: usize) {
        self.specials.entry(g as u32).or_default()[which] += 1;
    }

    /// Adds m / 10^scale to group `g`: in its fast sums if they hold it, else exactly.
    fn add_scaled(&mut self, g: usize, m: i128, scale: u16) {
        let exact = !self.exact.is_empty() && self.exact.contains_key(&(g as u32));
        if exact || !self.add_fast(g, m, scale) {
            self.add_stored(g, &Num::Fin { m, scale }.to_stored());
        }
    }

    /// Adds m / 10^scale to group `g`'s fast sums, rescaling them to a larger scale
    /// first; false (nothing changed) if a sum would not fit.
    fn add_fast(&mut self, g: usize, m: i128, scale: u16) -> bool {
        let cur = self.scale[g];
        let (sum, sum_sq, new_scale, count, m) = if scale > cur {
            let k = (scale - cur) as u32;
            let Some(sum) = pow10(k).and_then(|p| wide_mul(self.sum[g], p)) else { return false };
            let Some(sum_sq) = self.sum_sq[g].checked_mul_pow10(2 * k) else { return false };
            (sum, sum_sq, scale, 1, m)
        } else {
            let Some(m) = pow10((cur - scale) as u32).and_then(|p| wide_mul(m, p)) else { return false };
            let count = self.max_scale_count[g] + (scale == cur) as i64;
            (self.sum[g], self.sum_sq[g], cur, count, m)
        };
        let square = U256::mul_wide(m.unsigned_abs(), m.unsigned_abs());
        let (Some(sum), Some(sum_sq)) = (sum.checked_add(m), sum_sq.checked_add(square)) else {
            return false;
        };
        self.sum[g] = sum;
        self.sum_sq[g] = sum_sq;
        self.scale[g] = new_scale;
        self.max_scale_count[g] = count;
        self.n[g] += 1;
        true
    }

    /// Adds a stored numeric to group `g`, moving the group to exact sums first;
    /// false for bytes that are no numeric.
    fn add_stored(&mut self, g: usize, bytes: &[u8]) -> bool {
        let dscale = match parse(bytes) {
            None => return false,
            Some(Parsed::NaN) => {
                self.add_special(g, 0);
                return true;
            }
            Some(Parsed::PosInf) => {
                self.add_special(g, 1);
                return true;
            }
            Some(Parsed::NegInf) => {
                self.add_special(g, 2);
                return true;
            }
            Some(Parsed::Finite { dscale, .. }) => dscale,
        };
        let (sum, sum_sq, scale) = (self.sum[g], self.sum_sq[g], self.scale[g]);
        let e = self.exact.entry(g as u32).or_insert_with(|| Exact::from_fast(sum, sum_sq, scale));
        e.sum.add(bytes);
        e.sum_sq.add_square(bytes);
        if dscale > self.scale[g] {
            self.scale[g] = dscale;
            self.max_scale_count[g] = 1;
        } else if dscale == self.scale[g] {
            self.max_scale_count[g] += 1;
        }
        self.n[g] += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fin(m: i128, scale: u16) -> NumVal {
        NumVal::Small(Num::Fin { m, scale })
    }

    fn hex(v: &[u8]) -> String {
        v.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Folds `values` (row by row) into groups `gids` of a fresh numeric kernel.
    fn numeric(values: &[NumVal], gids: &[u32], groups: usize) -> Variance {
        let mut v = Variance::new(MomentsResult::VarSamp, VarianceInput::Numeric);
        v.resize(groups);
        let sel: Vec<u32> = (0..values.len() as u32).collect();
        v.fold_numeric(&NumVec::Rows(values.to_vec()), None, &sel, Gids::Each(gids)).unwrap();
        v
    }

    /// numeric_serialize's bytes for N, sum(X), sum(X*X) (each a numericvar: digits,
    /// weight, sign, dscale, then the digits), maxScale, maxScaleCount, NaN, +Inf, -Inf.
    fn state(
        n: i64,
        sum: (&[i16], i32, bool, i32),
        sq: (&[i16], i32, i32),
        max: (i32, i64),
        sp: [i64; 3],
    ) -> String {
        let mut out = n.to_be_bytes().to_vec();
        let mut var = |digits: &[i16], weight: i32, neg: bool, dscale: i32| {
            out.extend_from_slice(&(digits.len() as i32).to_be_bytes());
            out.extend_from_slice(&(if digits.is_empty() { 0 } else { weight }).to_be_bytes());
            out.extend_from_slice(&(if neg { 0x4000 } else { 0i32 }).to_be_bytes());
            out.extend_from_slice(&dscale.to_be_bytes());
            digits.iter().for_each(|d| out.extend_from_slice(&d.to_be_bytes()));
        };
        var(sum.0, sum.1, sum.2, sum.3);
        var(sq.0, sq.1, false, sq.2);
        out.extend_from_slice(&max.0.to_be_bytes());
        out.extend_from_slice(&max.1.to_be_bytes());
        sp.iter().for_each(|c| out.extend_from_slice(&c.to_be_bytes()));
        hex(&out)
    }

    #[test]
    fn numeric_sums_take_the_largest_scale_and_square_exactly() {
        // 1.5, -2.25, 3: sum 2.25 (dscale 2), squares 2.25 + 5.0625 + 9 = 16.3125
        // (dscale 4); maxScale 2 seen once.
        let v = numeric(&[fin(15, 1), fin(-225, 2), fin(3, 0)], &[0, 0, 0], 1);
        let expected = state(3, (&[2, 2500], 0, false, 2), (&[16, 3125], 0, 4), (2, 1), [0; 3]);
        assert_eq!(hex(&v.numeric_state(0)), expected);
        // The same through exact sums (a group that left the fast state).
        let mut e = Variance::new(MomentsResult::VarSamp, VarianceInput::Numeric);
        e.resize(1);
        for (m, s) in [(15, 1), (-225, 2), (3, 0)] {
            assert!(e.add_stored(0, &Num::Fin { m, scale: s }.to_stored()));
        }
        assert_eq!(hex(&e.numeric_state(0)), expected);
    }

    #[test]
    fn a_sum_past_128_bits_goes_on_exactly() {
        // 10^30 + 10^30 + 1 at scale 0: squares 2 * 10^60 + 1, far past 128 bits for
        // the sum of mantissas rescaled to scale 10 by the last value, 0.0000000001.
        let big = 10i128.pow(30);
        let v = numeric(&[fin(big, 0), fin(big, 0), fin(1, 10)], &[0, 0, 0], 1);
        assert!(v.exact.contains_key(&0));
        let mut exact = Exact::default();
        for b in [fin(big, 0), fin(big, 0), fin(1, 10)] {
            let NumVal::Small(n) = b else { unreachable!() };
            exact.sum.add(&n.to_stored());
            exact.sum_sq.add_square(&n.to_stored());
        }
        assert_eq!(exact.sum.text().unwrap(), format!("2{}.0000000001", "0".repeat(30)));
        assert_eq!(exact.sum_sq.dscale, 20);
        assert_eq!(exact.sum_sq.text().unwrap(), format!("2{}.{}1", "0".repeat(60), "0".repeat(19)));
        let mut out = 3i64.to_be_bytes().to_vec();
        exact.sum.write_var(&mut out);
        exact.sum_sq.write_var(&mut out);
        assert_eq!(&v.numeric_state(0)[..out.len()], &out[..]);
    }

    #[test]
    fn specials_are_counted_apart() {
        let v = numeric(
            &[NumVal::Small(Num::NaN), fin(2, 0), NumVal::Small(Num::PosInf), NumVal::Small(Num::NegInf)],
            &[0, 0, 1, 1],
            2,
        );
        let g0 = state(1, (&[2], 0, false, 0), (&[4], 0, 0), (0, 1), [1, 0, 0]);
        assert_eq!(hex(&v.numeric_state(0)), g0);
        let g1 = state(0, (&[], 0, false, 0), (&[], 0, 0), (0, 0), [0, 1, 1]);
        assert_eq!(hex(&v.numeric_state(1)), g1);
        // NaN and one value: two inputs, so var_samp is core's (NaN), not NULL.
        assert!(matches!(v.result(0), Output::NumericVariance { .. }));
    }

    #[test]
    fn sample_results_need_two_inputs() {
        let mut v = Variance::new(MomentsResult::StddevSamp, VarianceInput::Int8);
        v.resize(3);
        let col = DecodedVector::from_parts(3, None, DecodedValues::Int(vec![5, 7, 9]), None);
        v.fold(&col, &[0, 1, 2], Gids::Each(&[0, 0, 1]), &|a, b| a.cmp(b)).unwrap();
        assert!(matches!(v.result(0), Output::NumericVariance { .. }));
        assert_eq!(v.result(1), Output::Null);
        assert_eq!(v.result(2), Output::Null);
        let mut pop = Variance::new(MomentsResult::VarPop, VarianceInput::Int8);
        pop.resize(1);
        pop.fold(&col, &[2], Gids::Same(0), &|a, b| a.cmp(b)).unwrap();
        assert!(matches!(pop.result(0), Output::NumericVariance { .. }));
    }

    #[test]
    fn integer_sums_are_exact_and_serialize_as_core_does() {
        // int8: i64::MIN twice and i64::MAX: squares past 128 bits.
        let mut v = Variance::new(MomentsResult::VarPop, VarianceInput::Int8);
        v.resize(1);
        let col =
            DecodedVector::from_parts(3, None, DecodedValues::Int(vec![i64::MIN, i64::MIN, i64::MAX]), None);
        v.fold(&col, &[0, 1, 2], Gids::Same(0), &|a, b| a.cmp(b)).unwrap();
        let (min, max) = (i64::MIN as i128, i64::MAX as i128);
        assert_eq!(v.sum[0], 2 * min + max);
        let squares = 2 * (min * min) as u128 + (max * max) as u128;
        assert_eq!(v.sum_sq[0].to_decimal(), squares.to_string());
        let mut e = Exact::default();
        for x in [i64::MIN, i64::MIN, i64::MAX] {
            let b = Num::Fin { m: x as i128, scale: 0 }.to_stored();
            e.sum.add(&b);
            e.sum_sq.add_square(&b);
        }
        let mut expected = 3i64.to_be_bytes().to_vec();
        e.sum.write_var(&mut expected);
        e.sum_sq.write_var(&mut expected);
        expected.extend_from_slice(&0i32.to_be_bytes());
        expected.extend_from_slice(&3i64.to_be_bytes());
        expected.extend_from_slice(&[0; 24]);
        assert_eq!(v.numeric_state(0), expected);
        // int4 partial state: numeric_poly_serialize's N, sum and sum of squares as
        // int128_to_numericvar makes them (trailing zero digits kept).
        let mut p = Variance::new(MomentsResult::VarPop, VarianceInput::Poly);
        p.resize(1);
        let col = DecodedVector::from_parts(2, None, DecodedValues::Int(vec![-100, 10_000]), None);
        p.fold(&col, &[0, 1], Gids::Same(0), &|a, b| a.cmp(b)).unwrap();
        let mut poly = 2i64.to_be_bytes().to_vec();
        int128_var(9_900, &mut poly);
        int128_var(100_010_000, &mut poly);
        assert_eq!(p.partial_state(0), Output::Bytea(poly));
    }

    #[test]
    fn scaled_vectors_fold_like_rows() {
        // Mixed scales over vectors, NULLs, a group rescaled and one that overflows.
        let m: Vec<i64> =
            (0..500).map(|i| if i % 97 == 0 { i64::MAX - i } else { i * 7919 % 10_000 - 5_000 }).collect();
        let valid: Vec<bool> = (0..500).map(|i| i % 13 != 0).collect();
        let sel: Vec<u32> = (0..500).filter(|r| r % 3 != 1).collect();
        let gids: Vec<u32> = sel.iter().map(|&r| r % 4).collect();
        let mut fast = Variance::new(MomentsResult::VarPop, VarianceInput::Numeric);
        let mut rows = Variance::new(MomentsResult::VarPop, VarianceInput::Numeric);
        for v in [&mut fast, &mut rows] {
            v.resize(4);
            let earlier = NumVec::Rows(vec![fin(5, 1), fin(7, 3), fin(i128::MAX / 3, 0), fin(1, 0)]);
            v.fold_numeric(&earlier, None, &[0, 1, 2, 3], Gids::Each(&[0, 1, 2, 3])).unwrap();
        }
        for scale in [2, 1, 4] {
            fast.fold_numeric(
                &NumVec::Scaled64 { m: m.clone(), scale },
                Some(&valid),
                &sel,
                Gids::Each(&gids),
            )
            .unwrap();
            let as_rows = NumVec::Rows(m.iter().map(|&x| fin(x as i128, scale)).collect());
            rows.fold_numeric(&as_rows, Some(&valid), &sel, Gids::Each(&gids)).unwrap();
        }
        for g in 0..4 {
            assert_eq!(fast.numeric_state(g), rows.numeric_state(g), "group {g}");
        }
        // Against exact sums of every value.
        let mut e = Exact::default();
        let mut count = 0;
        let mut add = |b: Vec<u8>| {
            e.sum.add(&b);
            e.sum_sq.add_square(&b);
            count += 1;
        };
        add(Num::Fin { m: 5, scale: 1 }.to_stored());
        for scale in [2, 1, 4] {
            for (i, &r) in sel.iter().enumerate() {
                if gids[i] == 0 && valid[r as usize] {
                    add(Num::Fin { m: m[r as usize] as i128, scale }.to_stored());
                }
            }
        }
        let mut out = (count as i64).to_be_bytes().to_vec();
        e.sum.write_var(&mut out);
        e.sum_sq.write_var(&mut out);
        assert_eq!(&fast.numeric_state(0)[..out.len()], &out[..]);
    }

    #[test]
    fn runs_of_a_group_fold_like_single_rows() {
        // Runs of one group (as the hash grouping orders rows), squares that carry past
        // 128 bits within a run, NULLs; integers and 64-bit mantissas.
        let x: Vec<i64> =
            (0..600).map(|i| if i % 50 < 5 { i64::MIN + i } else { i * 7919 % 20_001 - 10_000 }).collect();
        let valid: Vec<bool> = (0..600).map(|i| i % 17 != 3).collect();
        let col = DecodedVector::from_parts(600, Some(valid.clone()), DecodedValues::Int(x.clone()), None);
        let sel: Vec<u32> = (0..600).filter(|r| r % 7 != 2).collect();
        let gids: Vec<u32> = sel.iter().map(|&r| r / 100).collect();
        let cmp = |a: &[u8], b: &[u8]| a.cmp(b);
        for input in [VarianceInput::Int8, VarianceInput::Numeric] {
            let mut runs = Variance::new(MomentsResult::VarPop, input);
            let mut single = Variance::new(MomentsResult::VarPop, input);
            for v in [&mut runs, &mut single] {
                v.resize(6);
            }
            for _ in 0..2 {
                if input == VarianceInput::Int8 {
                    runs.fold(&col, &sel, Gids::Each(&gids), &cmp).unwrap();
                    for (&r, &g) in sel.iter().zip(&gids) {
                        single.fold(&col, &[r], Gids::Each(&[g]), &cmp).unwrap();
                    }
                } else {
                    runs.fold_scaled64(&x, 3, Some(&valid), &sel, Gids::Each(&gids));
                    let rows = NumVec::Rows(x.iter().map(|&m| fin(m as i128, 3)).collect());
                    for (&r, &g) in sel.iter().zip(&gids) {
                        single.fold_numeric(&rows, Some(&valid), &[r], Gids::Each(&[g])).unwrap();
                    }
                }
            }
            for g in 0..6 {
                assert_eq!(runs.numeric_state(g), single.numeric_state(g), "{input:?} group {g}");
            }
            assert!(runs.sum_sq[0].hi > 0 || input == VarianceInput::Numeric);
        }
    }

    #[test]
    fn fast_states_serialize_as_exact_ones() {
        for (sum, sq, scale) in [
            (0i128, U256::ZERO, 0u16),
            (0, U256::ZERO, 3),
            (-12_345_000, U256::from_u128(7_000_000), 5),
            (i128::MIN + 1, U256::mul_wide(u128::MAX, 3), 7),
            (10_000, U256::from_u128(100_000_000), 0),
            (1, U256::from_u128(1), 38),
        ] {
            let e = Exact::from_fast(sum, sq, scale);
            let (mut exact, mut fast) = (Vec::new(), Vec::new());
            e.sum.write_var(&mut exact);
            e.sum_sq.write_var(&mut exact);
            write_var(&mut fast, sum < 0, U256::from_u128(sum.unsigned_abs()), scale as u32);
            write_var(&mut fast, false, sq, 2 * scale as u32);
            assert_eq!(hex(&fast), hex(&exact), "{sum} {scale}");
        }
    }

    #[test]
    fn digits_in_base_10000() {
        let d = |x: u128, scale| base10000(U256::from_u128(x), scale);
        assert_eq!(d(12345, 0), (vec![2345, 1], 0));
        assert_eq!(d(12345, 2), (vec![4500, 123], -1));
        assert_eq!(d(5, 6), (vec![500], -2));
        assert_eq!(d(0, 0), (vec![], 0));
        let big = U256::mul_wide(u128::MAX, u128::MAX);
        let (digits, low) = base10000(big, 3);
        let text: String = digits.iter().rev().map(|d| format!("{d:04}")).collect();
        assert_eq!((text.trim_start_matches('0').to_string(), low), (format!("{}0", big.to_decimal()), -1));
    }
}
