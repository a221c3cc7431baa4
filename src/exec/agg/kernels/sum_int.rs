//! sum and avg over integers: int2/int4 in an int8 (int4_sum, int4_avg_accum), int8 in
//! 128 bits (int8_avg_accum).

use super::{drive, wrong_column, AggKernel, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use std::cmp::Ordering;

/// sum(int2/int4) (int8, NULL without rows) and avg(int2/int4) (int8[] {n, sum}).
#[derive(Debug, Default)]
pub struct SumInt {
    pub sum: Vec<i64>,
    pub n: Vec<i64>,
    pub avg: bool,
}

impl AggKernel for SumInt {
    const BYTES_PER_GROUP: usize = 16;

    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups, 0);
        self.n.resize(groups, 0);
    }

    fn fold(
        &mut self,
        col: &DecodedVector,
        sel: &[u32],
        gids: Gids,
        _cmp: &dyn Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let (sum, n) = (&mut self.sum, &mut self.n);
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
            sum[g] = sum[g].wrapping_add(x);
            n[g] += 1;
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match (self.n[g], self.avg) {
            (0, _) => Output::Null,
            (_, true) => Output::NumericAvg { sum: self.sum[g] as i128, n: self.n[g] },
            _ => Output::Int8(self.sum[g]),
        }
    }

    fn partial_state(&self, g: usize) -> Output<'_> {
        match self.avg {
            // int4_avg_accum's int8[2] {count, sum}.
            true => Output::Int8Array([self.n[g], self.sum[g]]),
            false => self.result(g),
        }
    }
}

/// sum/avg(int8): int8_avg_accum's 128-bit sum and count.
#[derive(Debug, Default)]
pub struct SumWide {
    pub sum: Vec<i128>,
    pub n: Vec<i64>,
    pub avg: bool,
}

impl AggKernel for SumWide {
    const BYTES_PER_GROUP: usize = 24;

    fn resize(&mut self, groups: usize) {
        self.sum.resize(groups, 0);
        self.n.resize(groups, 0);
    }

    fn fold(
        &mut self,
        col: &DecodedVector,
        sel: &[u32],
        gids: Gids,
        _cmp: &dyn Fn(&[u8], &[u8]) -> Ordering,
    ) -> Result<(), Overflow> {
        let DecodedValues::Int(x) = &col.values else { wrong_column(self) };
        let (sum, n) = (&mut self.sum, &mut self.n);
        drive(x, col.validity.as_deref(), sel, gids, |g, x| {
            sum[g] += x as i128;
            n[g] += 1;
        });
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        match (self.n[g], self.avg) {
            (0, _) => Output::Null,
            (_, true) => Output::NumericAvg { sum: self.sum[g], n: self.n[g] },
            _ => Output::Numeric(self.sum[g]),
        }
    }

    /// int8_avg_accum's internal state, serialized (int8_avg_serialize's bytes).
    fn partial_state(&self, g: usize) -> Output<'_> {
        Output::Bytea(int8_avg_serialized(self.sum[g], self.n[g]))
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
