//! sum and avg over floats: float4pl / float8pl, each in its own precision, and
//! float8_accum's {N, Sx, Sxx} (Youngs-Cramer) for avg.

use super::{drive, ok, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::{MomentsResult, Output};
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};

/// The float types `FloatSum` sums, each in its own precision.
pub trait SumFloat: Copy + Default + std::fmt::Debug + std::ops::Add<Output = Self> {
    fn infinite(self) -> bool;
    /// The column's values, if they are of this type.
    fn values(values: &DecodedValues) -> Option<&[Self]>;
    /// sum's result for this type (float4 as the output column makes it, float8).
    fn output(self) -> Output<'static>;
}

impl SumFloat for f32 {
    fn infinite(self) -> bool {
        self.is_infinite()
    }
    fn values(values: &DecodedValues) -> Option<&[f32]> {
        match values {
            DecodedValues::Float32(x) => Some(x),
            _ => None,
        }
    }
    fn output(self) -> Output<'static> {
        Output::Value(PointValue::Float32(self))
    }
}

impl SumFloat for f64 {
    fn infinite(self) -> bool {
        self.is_infinite()
    }
    fn values(values: &DecodedValues) -> Option<&[f64]> {
        match values {
            DecodedValues::Float64(x) => Some(x),
            _ => None,
        }
    }
    fn output(self) -> Output<'static> {
        Output::Float8(self)
    }
}

/// sum(float4) (float4pl, in single precision) and sum(float8) (float8pl).
#[derive(Debug, Default)]
pub struct FloatSum<T> {
    pub sum: Vec<T>,
    pub n: Vec<i64>,
}

impl<T: SumFloat> AggKernel for FloatSum<T> {
    /// The sum and an 8-byte count.
    const BYTES_PER_GROUP: usize = std::mem::size_of::<T>() + 8;

    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups, T::default());
        self.n.resize(groups, 0);
    }

    /// The first value is the state, the next ones are added to it; finite inputs that
    /// overflow raise the overflow error.
    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let Some(x) = T::values(&col.values) else { wrong_column(self) };
        let (sum, n) = (&mut self.sum, &mut self.n);
        let mut overflow = false;
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
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

    fn result(&self, g: usize) -> Output<'_> {
        match self.n[g] {
            0 => Output::Null,
            _ => self.sum[g].output(),
        }
    }
}

/// avg(float4/float8): float8_accum's {N, Sx, Sxx} (Youngs-Cramer).
#[derive(Debug, Default)]
pub struct Moments {
    pub n: Vec<f64>,
    pub sx: Vec<f64>,
    pub sxx: Vec<f64>,
    /// Which final function makes the result (avg's float8_avg unless set).
    pub result: MomentsResult,
}

impl AggKernel for Moments {
    const BYTES_PER_GROUP: usize = 24;

    fn resize(&mut self, groups: usize) {
        self.n.resize(groups, 0.0);
        self.sx.resize(groups, 0.0);
        self.sxx.resize(groups, 0.0);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let (n, sx, sxx) = (&mut self.n, &mut self.sx, &mut self.sxx);
        let valid = col.validity.as_deref();
        let mut overflow = false;
        match &col.values {
            DecodedValues::Float64(x) => {
                drive(x, valid, sel, gids, |g, x| overflow |= accum(&mut n[g], &mut sx[g], &mut sxx[g], x))
            }
            DecodedValues::Float32(x) => drive(x, valid, sel, gids, |g, x| {
                overflow |= accum(&mut n[g], &mut sx[g], &mut sxx[g], x as f64)
            }),
            _ => wrong_column(self),
        }
        ok(overflow)
    }

    fn result(&self, g: usize) -> Output<'_> {
        let (n, sx, sxx) = (self.n[g], self.sx[g], self.sxx[g]);
        let sample = matches!(self.result, MomentsResult::VarSamp | MomentsResult::StddevSamp);
        if n == 0.0 || (sample && n <= 1.0) {
            return Output::Null;
        }
        Output::Float8(match self.result {
            MomentsResult::Avg => sx / n,
            MomentsResult::VarPop => sxx / n,
            MomentsResult::VarSamp => sxx / (n - 1.0),
            MomentsResult::StddevPop => (sxx / n).sqrt(),
            MomentsResult::StddevSamp => (sxx / (n - 1.0)).sqrt(),
        })
    }

    /// float8_accum's float8[3] {N, Sx, Sxx}.
    fn partial_state(&self, g: usize) -> Output<'_> {
        Output::Float8Array([self.n[g], self.sx[g], self.sxx[g]])
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
