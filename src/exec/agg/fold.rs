//! The aggregate table: per aggregate (function and input type), the kernel that keeps
//! its state (`kernels`, one family per file), and so its transition, its result and its
//! partial state. A new aggregate is a kernel and a line in `Acc::new`. Pure; the node
//! turns outputs into Datums (`agg::datum`).

use super::func::{AggFunc, InputType};
use super::kernels::bool_and_or::BoolAndOr;
use super::kernels::count::Count;
use super::kernels::count_distinct::{CountDistinct, DistinctBy};
use super::kernels::decimal::Decimal;
use super::kernels::minmax::{MinMaxBytes, MinMaxFloat, MinMaxInt};
use super::kernels::minmax_numeric::MinMaxNumeric;
use super::kernels::sum_float::{FloatSum, Moments};
use super::kernels::sum_int::IntSum;
use super::kernels::variance::{Variance, VarianceInput};
use super::kernels::{AggKernel, Cmp, Gids, Overflow};
use super::output::MomentsResult;
use super::output::Output;
use crate::exec::expr::eval::NumVec;
use crate::storage::format::encoding::DecodedVector;

/// One aggregate's state for every group.
#[derive(Debug)]
pub enum Acc {
    /// count(*), count(col): int8.
    Count(Count),
    /// sum/avg(int2/int4), in an int8.
    SumInt(IntSum<i64>),
    /// sum/avg(int8), in 128 bits.
    SumWide(IntSum<i128>),
    /// sum(float4), in single precision.
    SumF32(FloatSum<f32>),
    /// sum(float8).
    SumF64(FloatSum<f64>),
    /// avg(float4/float8).
    Moments(Moments),
    MinMaxInt(MinMaxInt),
    MinMaxFloat(MinMaxFloat),
    MinMaxBytes(MinMaxBytes),
    /// bool_and / bool_or.
    Bool(BoolAndOr),
    /// sum/avg(numeric).
    Decimal(Decimal),
    /// min/max(numeric).
    MinMaxNumeric(MinMaxNumeric),
    /// count(DISTINCT col).
    CountDistinct(CountDistinct),
    /// var_pop/var_samp/stddev_pop/stddev_samp of integers and numeric.
    Variance(Variance),
}

/// `$body` with `$k` bound to the kernel of whichever kind `$acc` is: one match per
/// call (per vector, or per output group), the kernel's own code inside it.
macro_rules! with_kernel {
    ($acc:expr, $k:ident => $body:expr) => {
        match $acc {
            Acc::Count($k) => $body,
            Acc::SumInt($k) => $body,
            Acc::SumWide($k) => $body,
            Acc::SumF32($k) => $body,
            Acc::SumF64($k) => $body,
            Acc::Moments($k) => $body,
            Acc::MinMaxInt($k) => $body,
            Acc::MinMaxFloat($k) => $body,
            Acc::MinMaxBytes($k) => $body,
            Acc::Bool($k) => $body,
            Acc::Decimal($k) => $body,
            Acc::MinMaxNumeric($k) => $body,
            Acc::CountDistinct($k) => $body,
            Acc::Variance($k) => $body,
        }
    };
}

fn bytes_of<K: AggKernel>(_: &K) -> usize {
    K::BYTES_PER_GROUP
}

impl Acc {
    /// The state of aggregate `func` over `input`, with no groups yet.
    pub fn new(func: AggFunc, input: InputType) -> Acc {
        use InputType::*;
        let max = func == AggFunc::Max;
        let avg = func == AggFunc::Avg;
        match (func, input) {
            (AggFunc::CountStar | AggFunc::Count, _) => Acc::Count(Count::default()),
            (AggFunc::CountDistinct, _) => Acc::CountDistinct(CountDistinct::new(match input {
                Float4 | Float8 => DistinctBy::Float,
                Text => DistinctBy::Bytes,
                Bpchar => DistinctBy::Bpchar,
                _ => DistinctBy::Int,
            })),
            (AggFunc::Sum | AggFunc::Avg, Int2 | Int4) => Acc::SumInt(IntSum { avg, ..Default::default() }),
            (AggFunc::Sum | AggFunc::Avg, Int8) => Acc::SumWide(IntSum { avg, ..Default::default() }),
            (AggFunc::Sum | AggFunc::Avg, Numeric) => Acc::Decimal(Decimal::new(avg)),
            (AggFunc::Sum, Float4) => Acc::SumF32(FloatSum::default()),
            (AggFunc::Sum, Float8) => Acc::SumF64(FloatSum::default()),
            (AggFunc::Avg, _) => Acc::Moments(Moments::default()),
            (AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StddevPop | AggFunc::StddevSamp, _) => {
                let result = match func {
                    AggFunc::VarPop => MomentsResult::VarPop,
                    AggFunc::VarSamp => MomentsResult::VarSamp,
                    AggFunc::StddevPop => MomentsResult::StddevPop,
                    _ => MomentsResult::StddevSamp,
                };
                match input {
                    Int2 | Int4 => Acc::Variance(Variance::new(result, VarianceInput::Poly)),
                    Int8 => Acc::Variance(Variance::new(result, VarianceInput::Int8)),
                    Numeric => Acc::Variance(Variance::new(result, VarianceInput::Numeric)),
                    _ => Acc::Moments(Moments { result, ..Default::default() }),
                }
            }
            (AggFunc::Min | AggFunc::Max, Float4 | Float8) => {
                Acc::MinMaxFloat(MinMaxFloat { max, float4: input == Float4, ..Default::default() })
            }
            (AggFunc::Min | AggFunc::Max, Text | Bpchar) => {
                Acc::MinMaxBytes(MinMaxBytes { max, bpchar: input == Bpchar, ..Default::default() })
            }
            (AggFunc::Min | AggFunc::Max, Numeric) => Acc::MinMaxNumeric(MinMaxNumeric::new(max)),
            (AggFunc::Min | AggFunc::Max, _) => Acc::MinMaxInt(MinMaxInt { max, ..Default::default() }),
            (AggFunc::BoolAnd | AggFunc::BoolOr, _) => {
                Acc::Bool(BoolAndOr { and: func == AggFunc::BoolAnd, ..Default::default() })
            }
            (AggFunc::Sum, _) => Acc::SumF64(FloatSum::default()),
        }
    }

    /// Bytes of state per group (for the memory estimate).
    pub fn bytes_per_group(&self) -> usize {
        with_kernel!(self, k => bytes_of(k))
    }

    /// Makes room for `groups` groups (new ones start empty).
    pub fn resize(&mut self, groups: usize) {
        with_kernel!(self, k => k.resize(groups))
    }

    /// count(*): every selected row counts.
    pub fn count_rows(&mut self, sel: &[u32], gids: Gids) {
        let Acc::Count(c) = self else { unreachable!("count_rows on {self:?}") };
        c.count_rows(sel, gids)
    }

    /// Folds the selected rows of `col` into the groups `gids` gives; `cmp` orders byte
    /// strings (the aggregate's collation).
    pub fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, cmp: Cmp) -> Result<(), Overflow> {
        with_kernel!(self, k => k.fold(col, sel, gids, cmp))
    }

    /// Folds the selected rows of a numeric vector (a column's, or an expression's)
    /// into sum/avg/min/max/var/stddev(numeric).
    pub fn fold_numeric(
        &mut self,
        values: &NumVec,
        valid: Option<&[bool]>,
        sel: &[u32],
        gids: Gids,
    ) -> Result<(), Overflow> {
        match self {
            Acc::Decimal(d) => d.fold_numeric(values, valid, sel, gids),
            Acc::MinMaxNumeric(m) => {
                m.fold_numeric(values, valid, sel, gids);
                Ok(())
            }
            Acc::Variance(v) => v.fold_numeric(values, valid, sel, gids),
            _ => unreachable!("fold_numeric on {self:?}"),
        }
    }

    /// Folds `x * y` of two columns of 64-bit mantissas (product scale `scale`) into
    /// sum/avg(numeric) of `group`; false (nothing folded) for any other aggregate, or a
    /// sum that would leave 128 bits.
    pub fn fold_products_one(
        &mut self,
        group: usize,
        x: &[i64],
        y: &[i64],
        scale: u16,
        valid: Option<&[bool]>,
        sel: &[u32],
    ) -> bool {
        match self {
            Acc::Decimal(d) => d.fold_products_one(group, x, y, scale, valid, sel),
            _ => false,
        }
    }

    /// Folds the selected rows of a column of scaled numerics (`ScaledNumerics`), read
    /// in place, into sum/avg/min/max/var/stddev(numeric).
    pub fn fold_mantissas(
        &mut self,
        m: &[i64],
        scale: u16,
        valid: Option<&[bool]>,
        sel: &[u32],
        gids: Gids,
    ) -> Result<(), Overflow> {
        match self {
            Acc::Decimal(d) => {
                d.fold_scaled64(m, scale, valid, sel, gids);
                Ok(())
            }
            Acc::Variance(v) => {
                v.fold_scaled64(m, scale, valid, sel, gids);
                Ok(())
            }
            _ => self.fold_numeric(&NumVec::Scaled64 { m: m.to_vec(), scale }, valid, sel, gids),
        }
    }

    /// Group `g`'s output: its result, or (`partial`) its transition state.
    pub fn output(&self, g: usize, partial: bool) -> Output<'_> {
        match partial {
            false => with_kernel!(self, k => k.result(g)),
            true => with_kernel!(self, k => k.partial_state(g)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::agg::kernels;
    use crate::storage::format::encoding::DecodedValues;
    use std::cmp::Ordering;

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
        let Acc::SumF64(FloatSum { sum, n }) = &acc else { panic!() };
        // Sequential: (1e16 + 1) rounds to 1e16, then -1e16 leaves 0.
        assert_eq!(sum[0], ((1e16f64 + 1.0) + -1e16));
        assert_eq!((n[0], n[1], sum[1]), (3, 1, 1.0));
        let mut acc = Acc::new(AggFunc::Sum, InputType::Float8);
        acc.resize(1);
        assert_eq!(
            acc.fold(&floats(&[f64::MAX, f64::MAX]), &[0, 1], Gids::Same(0), &bytewise),
            Err(Overflow::Float)
        );
        let mut acc = Acc::new(AggFunc::Sum, InputType::Float8);
        acc.resize(1);
        assert_eq!(acc.fold(&floats(&[f64::INFINITY, 1.0]), &[0, 1], Gids::Same(0), &bytewise), Ok(()));
    }

    #[test]
    fn moments_match_float8_accum() {
        let mut acc = Acc::new(AggFunc::Avg, InputType::Float8);
        acc.resize(1);
        acc.fold(&floats(&[2.0, 4.0, 9.0]), &[0, 1, 2], Gids::Same(0), &bytewise).unwrap();
        let Acc::Moments(Moments { n, sx, sxx, .. }) = &acc else { panic!() };
        assert_eq!((n[0], sx[0]), (3.0, 15.0));
        assert!((sxx[0] - 26.0).abs() < 1e-12);
        // A huge spread overflows Sxx: float8_accum raises an error.
        let mut acc = Acc::new(AggFunc::Avg, InputType::Float8);
        acc.resize(1);
        assert_eq!(
            acc.fold(&floats(&[1e200, -1e200]), &[0, 1], Gids::Same(0), &bytewise),
            Err(Overflow::Float)
        );
    }

    #[test]
    fn variances_finish_float8_accum_as_core_does() {
        let results = |func| {
            let mut acc = Acc::new(func, InputType::Float8);
            acc.resize(2);
            acc.fold(&floats(&[2.0, 4.0, 9.0, 5.0]), &[0, 1, 2, 3], Gids::Each(&[0, 0, 0, 1]), &bytewise)
                .unwrap();
            let float = |o: Output| match o {
                Output::Float8(x) => Some(x),
                Output::Null => None,
                other => panic!("{other:?}"),
            };
            let n = match acc.output(0, true) {
                Output::Float8Array([n, _, _]) => n,
                other => panic!("{other:?}"),
            };
            (float(acc.output(0, false)), float(acc.output(1, false)), n)
        };
        // Values 2, 4, 9: Sxx = 26 (PostgreSQL 15: var_pop 8.666666666666666,
        // var_samp 13, stddev_samp 3.605551275463989); one value: samp is NULL, pop 0.
        assert_eq!(results(AggFunc::VarSamp), (Some(13.0), None, 3.0));
        assert_eq!(results(AggFunc::VarPop).0, Some(26.0 / 3.0));
        assert_eq!(results(AggFunc::VarPop).1, Some(0.0));
        assert_eq!(results(AggFunc::StddevSamp).0, Some(13f64.sqrt()));
        assert_eq!(results(AggFunc::StddevPop).0, Some((26.0f64 / 3.0).sqrt()));
    }

    #[test]
    fn nulls_and_selection_are_honoured() {
        let col = ints(&[5, 7, 100, 1], Some(vec![true, false, true, true]));
        let mut count = Acc::new(AggFunc::Count, InputType::Int4);
        let mut max = Acc::new(AggFunc::Max, InputType::Int4);
        let mut sum = Acc::new(AggFunc::Sum, InputType::Int8);
        for a in [&mut count, &mut max, &mut sum] {
            a.resize(1);
            a.fold(&col, &[0, 1, 3], Gids::Same(0), &bytewise).unwrap();
        }
        assert!(matches!(&count, Acc::Count(c) if c.counts[0] == 2));
        assert!(matches!(&max, Acc::MinMaxInt(MinMaxInt { v, seen, .. }) if v[0] == 5 && seen[0]));
        assert!(matches!(&sum, Acc::SumWide(IntSum { sum, n, .. }) if sum[0] == 6 && n[0] == 2));
    }

    #[test]
    fn float_max_puts_nan_on_top_and_ties_take_the_new_value() {
        let mut max = Acc::new(AggFunc::Max, InputType::Float8);
        let mut min = Acc::new(AggFunc::Min, InputType::Float8);
        let col = floats(&[1.0, f64::NAN, 0.0, -0.0]);
        for a in [&mut max, &mut min] {
            a.resize(1);
            a.fold(&col, &[0, 1, 2, 3], Gids::Same(0), &bytewise).unwrap();
        }
        assert!(matches!(&max, Acc::MinMaxFloat(MinMaxFloat { v, .. }) if v[0].is_nan()));
        assert!(
            matches!(&min, Acc::MinMaxFloat(MinMaxFloat { v, .. }) if v[0] == 0.0 && v[0].is_sign_negative())
        );
    }

    #[test]
    fn text_min_max_use_the_collation_order() {
        let values = DecodedValues::Bytes { offsets: vec![0, 1, 3, 4], data: b"bAac".to_vec() };
        let col = DecodedVector::from_parts(3, None, values, None);
        // A case-insensitive order: "Aa" < "b" < "c".
        let ci = |a: &[u8], b: &[u8]| a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase());
        let mut min = Acc::new(AggFunc::Min, InputType::Text);
        min.resize(1);
        min.fold(&col, &[0, 1, 2], Gids::Same(0), &ci).unwrap();
        assert!(
            matches!(&min, Acc::MinMaxBytes(MinMaxBytes { v, .. }) if v[0].as_deref() == Some(&b"Aa"[..]))
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
        assert!(matches!(&and, Acc::Bool(BoolAndOr { v, .. }) if !v[0] && v[1]));
        assert!(matches!(&or, Acc::Bool(BoolAndOr { v, .. }) if v[0] && v[1]));
    }

    #[test]
    fn outputs_are_results_or_partial_states() {
        use crate::storage::format::encoding::point::PointValue;
        let col = ints(&[3, 4], None);
        let fold = |func, input| {
            let mut acc = Acc::new(func, input);
            acc.resize(2);
            acc.fold(&col, &[0, 1], Gids::Each(&[0, 0]), &bytewise).unwrap();
            acc
        };
        // avg(int4): numeric_div(sum, n); as a partial state int4_avg_accum's {n, sum}.
        let avg = fold(AggFunc::Avg, InputType::Int4);
        assert_eq!(avg.output(0, false), Output::NumericAvg { sum: 7, n: 2 });
        assert_eq!(avg.output(0, true), Output::Int8Array([2, 7]));
        // A group without rows: NULL, but its partial state is still the state.
        assert_eq!(avg.output(1, false), Output::Null);
        assert_eq!(avg.output(1, true), Output::Int8Array([0, 0]));
        // sum(int4) is its own state; sum(int8) is int8_avg_accum's, serialized.
        let sum = fold(AggFunc::Sum, InputType::Int4);
        assert_eq!((sum.output(0, false), sum.output(0, true)), (Output::Int8(7), Output::Int8(7)));
        let wide = fold(AggFunc::Sum, InputType::Int8);
        assert_eq!(wide.output(0, false), Output::Numeric(7));
        assert_eq!(wide.output(0, true), Output::Bytea(kernels::sum_int::int8_avg_serialized(7, 2)));
        let max = fold(AggFunc::Max, InputType::OrderedInt);
        assert_eq!(max.output(0, true), Output::Value(PointValue::Int(4)));
        assert_eq!(fold(AggFunc::Count, InputType::Int4).output(0, false), Output::Int8(2));
        // avg(float8): float8_accum's {N, Sx, Sxx}; min(float4) as a float4.
        let mut avg = Acc::new(AggFunc::Avg, InputType::Float8);
        let mut min = Acc::new(AggFunc::Min, InputType::Float4);
        for a in [&mut avg, &mut min] {
            a.resize(1);
            a.fold(&floats(&[1.5, 2.5]), &[0, 1], Gids::Same(0), &bytewise).unwrap();
        }
        assert_eq!(avg.output(0, false), Output::Float8(2.0));
        assert_eq!(avg.output(0, true), Output::Float8Array([2.0, 4.0, 0.5]));
        assert_eq!(min.output(0, false), Output::Value(PointValue::Float32(1.5)));
    }

    #[test]
    fn bytes_per_group_follow_the_kernel() {
        assert_eq!(Acc::new(AggFunc::Sum, InputType::Float4).bytes_per_group(), 12);
        assert_eq!(Acc::new(AggFunc::Sum, InputType::Float8).bytes_per_group(), 16);
        assert_eq!(Acc::new(AggFunc::Avg, InputType::Numeric).bytes_per_group(), 34);
        assert_eq!(Acc::new(AggFunc::CountStar, InputType::None).bytes_per_group(), 8);
    }
}
