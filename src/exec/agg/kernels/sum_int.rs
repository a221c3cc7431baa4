//! sum and avg over integers: int2/int4 in an int8 (int4_sum, int4_avg_accum), int8 in
//! 128 bits (int8_avg_accum).

use super::{drive, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};

/// The sum of an `IntSum`: int2/int4 in an int8, int8 in 128 bits.
pub trait SumWord: Copy + Default + std::fmt::Debug {
    const BYTES: usize;
    /// The sum with `x` added, as the built-in transition adds it.
    fn plus(self, x: i64) -> Self;
    /// The result of a group with rows: sum or avg.
    fn result(sum: Self, n: i64, avg: bool) -> Output<'static>;
    /// The partial state of a group, if it is not the result.
    fn state(sum: Self, n: i64, avg: bool) -> Option<Output<'static>>;
}

/// sum(int2/int4) (int8, NULL without rows) and avg(int2/int4) (int8[] {n, sum}).
impl SumWord for i64 {
    const BYTES: usize = 16;
    fn plus(self, x: i64) -> i64 {
        self.wrapping_add(x)
    }
    fn result(sum: i64, n: i64, avg: bool) -> Output<'static> {
        match avg {
            true => Output::NumericAvg { sum: sum as i128, n },
            false => Output::Int8(sum),
        }
    }
    /// int4_avg_accum's int8[2] {count, sum}.
    fn state(sum: i64, n: i64, avg: bool) -> Option<Output<'static>> {
        avg.then_some(Output::Int8Array([n, sum]))
    }
}

/// sum/avg(int8): int8_avg_accum's 128-bit sum and count.
impl SumWord for i128 {
    const BYTES: usize = 24;
    fn plus(self, x: i64) -> i128 {
        self + x as i128
    }
    fn result(sum: i128, n: i64, avg: bool) -> Output<'static> {
        match avg {
            true => Output::NumericAvg { sum, n },
            false => Output::Numeric(sum),
        }
    }
    /// int8_avg_accum's internal state, serialized (int8_avg_serialize's bytes).
    fn state(sum: i128, n: i64, _avg: bool) -> Option<Output<'static>> {
        Some(Output::Bytea(int8_avg_serialized(sum, n)))
    }
}

/// sum and avg over an integer column: the sum and the count per group.
#[derive(Debug, Default)]
pub struct IntSum<T> {
    pub sum: Vec<T>,
    pub n: Vec<i64>,
    pub avg: bool,
}

impl<T: SumWord> AggKernel for IntSum<T> {
    const BYTES_PER_GROUP: usize = T::BYTES;

    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups, T::default());
        self.n.resize(groups, 0);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let (sum, n) = (&mut self.sum, &mut self.n);
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
            sum[g] = sum[g].plus(x);
            n[g] += 1;
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match self.n[g] {
            0 => Output::Null,
            n => T::result(self.sum[g], n, self.avg),
        }
    }

    fn partial_state(&self, g: usize) -> Output<'_> {
        T::state(self.sum[g], self.n[g], self.avg).unwrap_or_else(|| self.result(g))
    }
}

/// int8_avg_serialize's bytes for a sum/avg(int8) state: the count, then the sum as
/// numericvar_serialize writes what int128_to_numericvar makes of it (`int128_var`).
pub fn int8_avg_serialized(sum: i128, n: i64) -> Vec<u8> {
    let mut out = n.to_be_bytes().to_vec();
    int128_var(sum, &mut out);
    out
}

/// `x` as numericvar_serialize writes what int128_to_numericvar makes of it:
/// base-10000 digits, most significant first, trailing zero digits kept, display
/// scale 0; the digit count, weight, sign and scale as int32, the digits as int16, all
/// big-endian.
pub fn int128_var(x: i128, out: &mut Vec<u8>) {
    const NUMERIC_NEG: i32 = 0x4000;
    let mut digits = Vec::new();
    let mut u = x.unsigned_abs();
    while u != 0 {
        digits.push((u % 10_000) as i16);
        u /= 10_000;
    }
    digits.reverse();
    out.extend_from_slice(&(digits.len() as i32).to_be_bytes());
    let weight = if digits.is_empty() { 0 } else { digits.len() as i32 - 1 };
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&(if x < 0 { NUMERIC_NEG } else { 0 }).to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
