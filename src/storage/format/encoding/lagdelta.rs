//! Lag-delta for floats: each value is predicted by the value `lag` positions earlier and
//! the residual is Rice-coded with a parameter taken from the predictor's exponent.
//!
//! Made for interleaved series, where a vector holds readings of many sources in turn
//! (time-major rows of many hosts: the value `lag` = number of hosts earlier is the same
//! host one step before), but `lag = 1` is plain delta coding of a single series.
//! `detect_lag` finds the lag from a sample.
//!
//! # Residuals
//!
//! Every bit pattern is mapped to an unsigned integer with the same order as the floats
//! (`ord`: negative patterns inverted, positive ones with the sign bit set), so the
//! integer difference of close floats is small whatever their sign. The residual is
//! `ord(v[i]) - ord(p)` (wrapping, in 64 bits), zigzag-encoded to `z`. A step of a given
//! size spans fewer units in a higher binade, so the Rice parameter follows the
//! predictor's binade: `k = clamp(scale - exponent(p), 0, BITS - 1)`, where `exponent`
//! is the biased exponent field and `scale` is chosen per vector. Each `z` is written as:
//! - when `z = 0` and `k > ESCAPE` (a repeat, cheaper than its Rice code): `ESCAPE` one
//!   bits and a zero bit;
//! - else when `q = z >> k < ESCAPE`: `q` one bits, a zero bit, the low `k` bits of `z`;
//! - else (escape): `ESCAPE + 1` one bits, `n - 1` in 6 bits where `n` is the bit length
//!   of `z` (`z > 0` here), and the low `n - 1` bits of `z` (its top bit is 1).
//!
//! On TSBS cpu metrics (random walks of 400 hosts with N(0, 1) steps in [0, 100]) a
//! body value costs ~49.3 bits, about the entropy of N(0, 1) steps at the values'
//! precision (e.g. 48 bits in [64, 100), 49 in [32, 64), ...). Measured
//! alternatives on the same residuals: XOR with a 6-bit leading-zero count ~54 bits,
//! 6-bit length + bits ~52.6, zstd of the byte-split residuals ~52.5, one bit width
//! per 128 values ~59 (neighbours are other hosts in other binades), Gorilla ~63.
//!
//! # Layout
//!
//! `lag: u16 LE`, `head_scale: u16 LE`, `body_scale: u16 LE`, then a bit stream
//! (LSB first, as `bitpack::BitWriter` writes it) padded to a byte: the first value's
//! `T::BITS` bits, then the codes of values `1..count`. Values `i < lag` (the head) are
//! predicted by value `i - 1` with `head_scale`, values `i >= lag` (the body) by value
//! `i - lag` with `body_scale`. `1 <= lag < count`, or `lag = 1` for a single value.
//! The decoder checks all of it; for `f32`, a residual leading outside 32 bits is
//! corrupt.

use super::base::{CorruptData, Fixed};
use super::bitpack::BitWriter;
use super::codec::{
    plan_of, Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, FLOATS, WRONG_KIND,
};

/// Unary codes from this length on are repeats or escapes.
const ESCAPE: u64 = 10;
/// Bytes before the bit stream.
const HEADER_LEN: usize = 6;
/// Largest lag the detector considers (and at most half the values).
pub const MAX_DETECT_LAG: usize = 1024;

/// The predictor distance and the Rice scales of the head and the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LagParams {
    pub lag: u16,
    pub head_scale: u16,
    pub body_scale: u16,
}

#[inline]
fn sign_bit<T: Fixed>() -> u64 {
    1u64 << (T::BITS - 1)
}

#[inline]
fn value_mask<T: Fixed>() -> u64 {
    u64::MAX >> (64 - T::BITS)
}

/// Order-preserving map of a bit pattern to an unsigned integer.
#[inline]
fn to_ord<T: Fixed>(bits: u64) -> u64 {
    if bits & sign_bit::<T>() != 0 {
        !bits & value_mask::<T>()
    } else {
        bits | sign_bit::<T>()
    }
}

/// Inverse of `to_ord` (for `o` within `T::BITS`).
#[inline]
fn from_ord<T: Fixed>(o: u64) -> u64 {
    if o & sign_bit::<T>() != 0 {
        o ^ sign_bit::<T>()
    } else {
        !o & value_mask::<T>()
    }
}

/// The biased exponent field (11 bits for 64-bit values, 8 for 32-bit ones).
#[inline]
fn exponent<T: Fixed>(bits: u64) -> u32 {
    if T::BITS == 64 {
        ((bits >> 52) & 0x7FF) as u32
    } else {
        ((bits >> 23) & 0xFF) as u32
    }
}

/// The Rice parameter for a predictor with bit pattern `pred`.
#[inline]
fn rice_k<T: Fixed>(scale: u16, pred: u64) -> u32 {
    (scale as i32 - exponent::<T>(pred) as i32).clamp(0, T::BITS as i32 - 1) as u32
}

#[inline]
fn zigzag(d: u64) -> u64 {
    let d = d as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

#[inline]
fn unzigzag(z: u64) -> u64 {
    (z >> 1) ^ (z & 1).wrapping_neg()
}

#[inline]
fn bit_len(z: u64) -> u32 {
    64 - z.leading_zeros()
}

/// Residual of `bits` predicted by `pred`.
#[inline]
fn residual<T: Fixed>(bits: u64, pred: u64) -> u64 {
    zigzag(to_ord::<T>(bits).wrapping_sub(to_ord::<T>(pred)))
}

/// Bits of the code for residual `z` with parameter `k` (the code `write_code` writes).
#[inline]
fn code_bits(z: u64, k: u32) -> u64 {
    let q = z >> k;
    if z == 0 && k as u64 > ESCAPE {
        ESCAPE + 1
    } else if q < ESCAPE {
        q + 1 + k as u64
    } else {
        ESCAPE + 1 + 6 + bit_len(z) as u64 - 1
    }
}

#[inline]
fn write_code(w: &mut BitWriter<'_>, z: u64, k: u32) {
    let q = z >> k;
    if z == 0 && k as u64 > ESCAPE {
        w.write((1 << ESCAPE) - 1, ESCAPE as u32 + 1);
    } else if q < ESCAPE {
        // q ones then a zero (LSB first), then the low k bits.
        w.write((1 << q) - 1, q as u32 + 1);
        w.write(z, k);
    } else {
        let n = bit_len(z);
        w.write((1 << (ESCAPE + 1)) - 1, ESCAPE as u32 + 1);
        w.write((n - 1) as u64, 6);
        w.write(z, n - 1);
    }
}

/// For each lag `1..=max_lag`, the sum over the runs (the `RUN` values from each of
/// `at`) of the leading zeros of the XOR of each value with the one `lag` before it.
/// The scoring of every candidate is the costly part of choosing an encoding for a
/// vector of doubles; with AVX-512 the 64 XORs and leading-zero counts of a candidate
/// take 8 instructions each.
fn xor_scores<const RUNS: usize, const RUN: usize>(
    bits: &[u64],
    at: &[usize; RUNS],
    max_lag: usize,
) -> Vec<u32> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512cd") {
        // SAFETY: the CPU has AVX-512 F and CD (CD implies F; checked just above).
        return unsafe { xor_scores_avx512::<RUNS, RUN>(bits, at, max_lag) };
    }
    xor_scores_scalar::<RUNS, RUN>(bits, at, max_lag)
}

#[inline(always)]
fn xor_scores_scalar<const RUNS: usize, const RUN: usize>(
    bits: &[u64],
    at: &[usize; RUNS],
    max_lag: usize,
) -> Vec<u32> {
    // The runs in arrays of their own and plain loops (no closures), so that the AVX-512
    // copy vectorizes them.
    let runs: [[u64; RUN]; RUNS] =
        std::array::from_fn(|r| bits[at[r]..at[r] + RUN].try_into().expect("RUN values"));
    let mut scores = Vec::with_capacity(max_lag);
    for lag in 1..=max_lag {
        let mut s = 0u64;
        for r in 0..RUNS {
            let prev: &[u64; RUN] = bits[at[r] - lag..at[r] - lag + RUN].try_into().expect("RUN values");
            for k in 0..RUN {
                s += (runs[r][k] ^ prev[k]).leading_zeros() as u64;
            }
        }
        scores.push(s as u32);
    }
    scores
}

/// `xor_scores` compiled for AVX-512 (the count of leading zeros of 8 words at once).
///
/// # Safety
/// The CPU must support AVX-512 F and CD.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512cd")]
unsafe fn xor_scores_avx512<const RUNS: usize, const RUN: usize>(
    bits: &[u64],
    at: &[usize; RUNS],
    max_lag: usize,
) -> Vec<u32> {
    xor_scores_scalar::<RUNS, RUN>(bits, at, max_lag)
}

/// Picks the lag: the distance `d <= min(MAX_DETECT_LAG, n / 2)` that saves the most
/// over `d = 1`. Values `i >= d` are predicted from `i - d` and values before from
/// `i - 1`, so the saving is estimated as `(n - d) * (agree(d) - agree(1))`, where
/// `agree` is the mean number of leading bits a value shares with its predictor.
///
/// All candidates are scored on 64 positions (4 runs of 16, spread over the vector's
/// second half) by the leading zeros of the XOR of the bit patterns (~64 XORs per
/// candidate, ~70k for 2048 values; `xor_scores` does 8 at a time with AVX-512). The
/// best 4 are scored again on up to 512 positions by the width of the order-preserving
/// difference, which, unlike the XOR, is not thrown off by carries. A lag other than 1 must gain half a bit per value; ties
/// go to the smaller lag.
pub fn detect_lag<T: Fixed>(values: &[T]) -> usize {
    const RUNS: usize = 4;
    const RUN: usize = 16;
    const TOP: usize = 4;
    let n = values.len();
    let max_lag = (n / 2).min(MAX_DETECT_LAG);
    if max_lag < 2 || n < max_lag + RUN {
        return 1;
    }
    // Stage 1: runs in [max_lag, n), so every candidate has a predecessor for them.
    let span = n - max_lag - RUN;
    let starts: [usize; RUNS] = std::array::from_fn(|r| max_lag + span * r / (RUNS - 1));
    // The bit patterns from the first run's furthest predecessor to the last run's end
    // (the pad bits of narrower types are zero on both sides, so they only add the same
    // count to every lag's score).
    let from = starts[0] - max_lag;
    let bits: Vec<u64> = values[from..starts[RUNS - 1] + RUN].iter().map(|v| v.to_bits64()).collect();
    let scores = xor_scores::<RUNS, RUN>(&bits, &starts.map(|st| st - from), max_lag);
    let base = scores[0] as i64;
    let mut top = [(i64::MIN, 1usize); TOP]; // (estimated gain, lag), best first
    for lag in 2..=max_lag {
        let gain = (scores[lag - 1] as i64 - base) * (n - lag) as i64;
        if gain > top[TOP - 1].0 {
            let at = top.iter().position(|t| gain > t.0).expect("beats the last");
            top.copy_within(at..TOP - 1, at + 1);
            top[at] = (gain, lag);
        }
    }
    // Stage 2: a larger sample and a finer score for the finalists.
    let stride = (n - max_lag).div_ceil(512);
    let samples = (n - max_lag).div_ceil(stride) as i64;
    let score = |lag: usize| -> i64 {
        (max_lag..n)
            .step_by(stride)
            .map(|i| {
                let z = residual::<T>(values[i].to_bits64(), values[i - lag].to_bits64());
                (T::BITS + 1 - bit_len(z)) as i64
            })
            .sum()
    };
    let base = score(1);
    let (mut best, mut best_gain) = (1, 0i64);
    let mut finalists = top.map(|t| t.1);
    finalists.sort_unstable();
    for lag in finalists.into_iter().filter(|&l| l > 1) {
        let s = score(lag);
        // Half a bit per value at least.
        if (s - base) * 2 < samples {
            continue;
        }
        let gain = (s - base) * (n - lag) as i64;
        if gain > best_gain {
            (best, best_gain) = (lag, gain);
        }
    }
    best
}

/// Picks the Rice scale for residuals `z` with predictor exponents `e`, returning it with
/// the exact number of code bits. The best scale sits near the median of
/// `e + bit_len(z)`; the few around it are costed exactly.
fn choose_scale<T: Fixed>(z: &[u64], e: &[u16]) -> (u16, u64) {
    if z.is_empty() {
        return (0, 0);
    }
    let step = z.len().div_ceil(256);
    let mut t: Vec<u32> = z.iter().zip(e).step_by(step).map(|(&z, &e)| e as u32 + bit_len(z)).collect();
    let mid = t.len() / 2;
    let median = *t.select_nth_unstable(mid).1 as i32;
    let mut best = (0u16, u64::MAX);
    for s in (median - 3).max(0)..=(median + 1).min(u16::MAX as i32) {
        let cost: u64 = z
            .iter()
            .zip(e)
            .map(|(&z, &e)| code_bits(z, (s - e as i32).clamp(0, T::BITS as i32 - 1) as u32))
            .sum();
        if cost < best.1 {
            best = (s as u16, cost);
        }
    }
    best
}

/// Chooses the scales for `lag` (which the caller picked, e.g. with `detect_lag`) and
/// returns them with the exact encoded size. `1 <= lag < values.len()`, or 1 for fewer
/// than two values.
pub fn choose<T: Fixed>(values: &[T], lag: usize) -> (LagParams, usize) {
    choose_within(values, lag, usize::MAX).expect("every size is below usize::MAX")
}

/// `choose`, or None when the values cannot take fewer than `bound` bytes: a residual's
/// code takes at least its bit length and one bit more whatever the scale, which is
/// known before any scale is costed. (The chooser for scans bounds lag-delta tightly,
/// as slow to decode: on TSBS-like metrics this skips costing it at all.)
pub fn choose_within<T: Fixed>(values: &[T], lag: usize, bound: usize) -> Option<(LagParams, usize)> {
    let n = values.len();
    check_lag(lag, n).expect("lag within 1..count");
    let head = lag.min(n);
    let mut z = Vec::with_capacity(n);
    let mut e = Vec::with_capacity(n);
    for i in 1..head {
        let p = values[i - 1].to_bits64();
        z.push(residual::<T>(values[i].to_bits64(), p));
        e.push(exponent::<T>(p) as u16);
    }
    let split = z.len();
    for i in head..n {
        let p = values[i - lag].to_bits64();
        z.push(residual::<T>(values[i].to_bits64(), p));
        e.push(exponent::<T>(p) as u16);
    }
    let size_of = |code_bits: u64| HEADER_LEN + (T::BITS as u64 + code_bits).div_ceil(8) as usize;
    if n > 0 && size_of(z.iter().map(|&z| bit_len(z) as u64 + 1).sum()) >= bound {
        return None;
    }
    let (head_scale, head_bits) = choose_scale::<T>(&z[..split], &e[..split]);
    let (body_scale, body_bits) = choose_scale::<T>(&z[split..], &e[split..]);
    let params = LagParams { lag: lag as u16, head_scale, body_scale };
    if n == 0 {
        return Some((params, 0));
    }
    Some((params, size_of(head_bits + body_bits)))
}

fn check_lag(lag: usize, count: usize) -> Result<(), CorruptData> {
    if lag >= 1 && (lag < count || lag == 1) && lag <= u16::MAX as usize {
        Ok(())
    } else {
        Err(CorruptData("lag-delta lag out of range"))
    }
}

/// Encodes with the given parameters (any scales are correct; good ones are small).
pub fn encode<T: Fixed>(values: &[T], p: &LagParams, out: &mut Vec<u8>) {
    let n = values.len();
    let lag = p.lag as usize;
    check_lag(lag, n).expect("lag within 1..count");
    let Some(first) = values.first() else { return };
    out.extend_from_slice(&p.lag.to_le_bytes());
    out.extend_from_slice(&p.head_scale.to_le_bytes());
    out.extend_from_slice(&p.body_scale.to_le_bytes());
    let mut w = BitWriter::new(out);
    w.write(first.to_bits64(), T::BITS);
    for i in 1..n {
        let (pred, scale) = if i < lag { (i - 1, p.head_scale) } else { (i - lag, p.body_scale) };
        let pb = values[pred].to_bits64();
        write_code(&mut w, residual::<T>(values[i].to_bits64(), pb), rice_k::<T>(scale, pb));
    }
    w.finish();
}

/// LSB-first bit reader with a 57-bit look-ahead; reads past the end are errors.
struct Bits<'a> {
    data: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Bits<'a> {
    fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0, end: data.len() * 8 }
    }

    /// The next bits (at least 57 valid ones; zeros past the end).
    #[inline]
    fn peek(&self) -> u64 {
        let byte = self.pos >> 3;
        let word = match self.data.get(byte..byte + 8) {
            Some(b) => u64::from_le_bytes(b.try_into().expect("8 bytes")),
            None => {
                let mut b = [0u8; 8];
                let rest = self.data.get(byte..).unwrap_or(&[]);
                b[..rest.len()].copy_from_slice(rest);
                u64::from_le_bytes(b)
            }
        };
        word >> (self.pos & 7)
    }

    #[inline]
    fn skip(&mut self, n: u32) -> Result<(), CorruptData> {
        self.pos += n as usize;
        if self.pos > self.end {
            return Err(CorruptData("lag-delta bit stream truncated"));
        }
        Ok(())
    }

    /// Reads `n <= 64` bits.
    #[inline]
    fn read(&mut self, n: u32) -> Result<u64, CorruptData> {
        if n <= 56 {
            let v = self.peek() & ((1u64 << n) - 1);
            self.skip(n)?;
            Ok(v)
        } else {
            let lo = self.read(32)?;
            Ok(lo | (self.read(n - 32)? << 32))
        }
    }

    /// Reads one residual code with parameter `k`.
    #[inline]
    fn code(&mut self, k: u32) -> Result<u64, CorruptData> {
        let w = self.peek();
        let q = w.trailing_ones();
        if (q as u64) < ESCAPE {
            if q + 1 + k <= 57 {
                // The whole code is in the look-ahead.
                let z = ((q as u64) << k) | ((w >> (q + 1)) & ((1u64 << k) - 1));
                self.skip(q + 1 + k)?;
                return Ok(z);
            }
            self.skip(q + 1)?;
            let low = self.read(k)?;
            // Beyond 64 bits the code is not one the encoder writes.
            let high = (q as u64) << k;
            if high >> k != q as u64 {
                return Err(CorruptData("lag-delta residual too wide"));
            }
            return Ok(high | low);
        }
        if q as u64 == ESCAPE {
            // A repeat: ESCAPE ones and a zero.
            self.skip(ESCAPE as u32 + 1)?;
            return Ok(0);
        }
        self.skip(ESCAPE as u32 + 1)?;
        let n = self.read(6)? as u32 + 1;
        Ok((1u64 << (n - 1)) | self.read(n - 1)?)
    }

    fn bytes_consumed(&self) -> usize {
        self.pos.div_ceil(8)
    }
}

pub fn decode<T: Fixed>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    if count == 0 {
        return Ok(0);
    }
    let head = input.get(..HEADER_LEN).ok_or(CorruptData("lag-delta header truncated"))?;
    let u16_at = |i: usize| u16::from_le_bytes([head[i], head[i + 1]]);
    let (lag, head_scale, body_scale) = (u16_at(0) as usize, u16_at(2), u16_at(4));
    check_lag(lag, count)?;
    let mut r = Bits::new(&input[HEADER_LEN..]);
    let start = out.len();
    out.reserve(count);
    out.push(T::from_bits64(r.read(T::BITS)?));
    let mask = value_mask::<T>();
    let mut step = |pred: u64, scale: u16, out: &mut Vec<T>| -> Result<(), CorruptData> {
        let z = r.code(rice_k::<T>(scale, pred))?;
        let o = to_ord::<T>(pred).wrapping_add(unzigzag(z));
        if o > mask {
            return Err(CorruptData("lag-delta residual out of range"));
        }
        out.push(T::from_bits64(from_ord::<T>(o)));
        Ok(())
    };
    // check_lag: lag <= count.
    for i in 1..lag {
        let pred = out[start + i - 1].to_bits64();
        step(pred, head_scale, out)?;
    }
    for i in lag..count {
        let pred = out[start + i - lag].to_bits64();
        step(pred, body_scale, out)?;
    }
    Ok(HEADER_LEN + r.bytes_consumed())
}

/// The codec table's entry: floats, when they are not decimal; the lag is detected
/// from a sample.
pub static LAG_DELTA: Codec = Codec {
    kinds: FLOATS,
    tier: Tier::Costly,
    decode_ns: 5.6,
    estimate: |a, bound| {
        let (params, size) = match a {
            Analysis::Float32(v, _) => choose_within(v, detect_lag(v), bound)?,
            Analysis::Float64(v, _) => choose_within(v, detect_lag(v), bound)?,
            _ => return None,
        };
        Estimate::planned(size, params)
    },
    encode: |values, plan, out| match values {
        VectorValues::Float32(v) => encode(v, plan_of(plan), out),
        VectorValues::Float64(v) => encode(v, plan_of(plan), out),
        _ => unreachable!("lag-delta encodes floats"),
    },
    decode: |input, count, out, _| match out {
        Output::Float32(v) => decode(input, count, v),
        Output::Float64(v) => decode(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    fn rt<T: Fixed>(values: &[T], lag: usize) -> Vec<u8> {
        let (p, size) = choose(values, lag);
        let mut buf = Vec::new();
        encode(values, &p, &mut buf);
        assert_eq!(buf.len(), size, "estimate is exact");
        let mut got = vec![T::default()]; // decode appends
        assert_eq!(decode(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got[1..], values));
        if !values.is_empty() {
            assert_truncations_fail(&buf, |b| decode::<T>(b, values.len(), &mut Vec::new()));
        }
        buf
    }

    #[test]
    fn edge_cases() {
        assert!(rt::<f64>(&[], 1).is_empty());
        assert_eq!(rt(&[3.25f64], 1).len(), HEADER_LEN + 8);
        rt(&[3.25f64, -3.25], 1);
        let sp = special_f64s();
        for lag in 1..sp.len() {
            rt(&sp, lag);
        }
        // Extremes next to each other: the widest residuals (escapes of 64 bits).
        rt(&[f64::from_bits(u64::MAX), f64::from_bits(0x7FFF_FFFF_FFFF_FFFF), 0.0, -0.0, f64::NAN], 1);
        // Constant: repeats are cheap.
        let c = rt(&vec![42.125f64; 2048], 1);
        assert!(c.len() < 2048 * 2, "{}", c.len());
        let f32s: Vec<f32> = (0..500).map(|i| (i as f32 * 0.01).sin() * 30.0).collect();
        rt(&f32s, 1);
        rt(&f32s, 7);
        rt(&[f32::NAN, -0.0f32, f32::INFINITY, f32::from_bits(1), f32::MAX, f32::MIN, 0.0], 3);
        rt(&[f32::from_bits(u32::MAX), 0.0f32, f32::from_bits(0x7FFF_FFFF), -0.0], 1);
    }

    #[test]
    fn ord_map_is_monotone_and_invertible() {
        let mut v: Vec<f64> = special_f64s().into_iter().filter(|x| !x.is_nan()).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        for w in v.windows(2) {
            assert!(to_ord::<f64>(w[0].to_bits()) < to_ord::<f64>(w[1].to_bits()), "{w:?}");
        }
        for b in [0u64, 1, u64::MAX, 1 << 63, (1 << 63) - 1, 0x4059_0000_0000_0000] {
            assert_eq!(from_ord::<f64>(to_ord::<f64>(b)), b);
        }
        for b in [0u64, 1, u32::MAX as u64, 1 << 31, (1 << 31) - 1] {
            assert_eq!(from_ord::<f32>(to_ord::<f32>(b)), b);
            assert!(to_ord::<f32>(b) <= u32::MAX as u64);
        }
        for d in [0u64, 1, u64::MAX, 1 << 63, 12345] {
            assert_eq!(unzigzag(zigzag(d)), d);
        }
    }

    #[test]
    fn interleaved_walks_pack_tightly() {
        let v = interleaved_walks(400, 2048, 5, 1.0);
        assert_eq!(detect_lag(&v), 400);
        let buf = rt(&v, 400);
        // ~50 bits per body value, ~54 per head value.
        assert!(buf.len() * 100 < 2048 * 650, "{} bytes", buf.len());
        let lag1 = rt(&v, 1);
        assert!(lag1.len() > buf.len() * 105 / 100, "{} vs {}", lag1.len(), buf.len());
        // Other periods, and the lag found whatever the values' offset in the vector.
        for (sources, skip) in [(3usize, 0usize), (17, 5), (128, 100), (1000, 0)] {
            let v = interleaved_walks(sources, 2048 + skip, 9, 0.5);
            assert_eq!(detect_lag(&v[skip..]), sources);
        }
    }

    #[test]
    fn smooth_series_use_lag_one() {
        // (A pure sine would rightly get its period, 314 here.)
        let s: Vec<f64> =
            (0..2048).map(|i| 20.0 + (i as f64 / 50.0).sin() * (1.0 + i as f64 / 1000.0)).collect();
        assert_eq!(detect_lag(&s), 1);
        let pure: Vec<f64> = (0..2048).map(|i| 20.0 + (i as f64 / 50.0).sin()).collect();
        assert_eq!(detect_lag(&pure), 314);
        let s: Vec<f64> = interleaved_walks(1, 2048, 3, 1.0);
        assert_eq!(detect_lag(&s), 1);
        let buf = rt(&s, 1);
        assert!(buf.len() < 2048 * 7, "{}", buf.len());
        // Noise has no lag; neither have tiny vectors.
        let mut x = 1u64;
        let noise: Vec<f64> = (0..2048)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                f64::from_bits(x)
            })
            .collect();
        assert_eq!(detect_lag(&noise), 1);
        rt(&noise, 1);
        rt(&noise, 2047);
        for n in 0..40 {
            let v = interleaved_walks(2, n, 1, 1.0);
            let lag = detect_lag(&v);
            assert!(lag == 1 || lag < n / 2 + 1);
            rt(&v, lag);
        }
        // Constant sources repeat with their count.
        assert_eq!(detect_lag(&interleaved_walks(10, 2048, 1, 0.0)), 10);
    }

    #[test]
    fn a_bound_below_the_least_size_skips_costing_scales() {
        // The least size rests on each code taking its residual's bit length plus one.
        let mut x = 3u64;
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let z = x >> (x % 64);
            for k in 0..64 {
                assert!(code_bits(z, k) > bit_len(z) as u64, "z {z} k {k}");
            }
        }
        let v = interleaved_walks(400, 2048, 7, 1.0);
        let lag = detect_lag(&v);
        let (params, size) = choose(&v, lag);
        let within = choose_within(&v, lag, size + 1).expect("its own size is within");
        assert_eq!(
            (within.0.head_scale, within.0.body_scale, within.1),
            (params.head_scale, params.body_scale, size)
        );
        // Lag-delta stores these walks in 6 bytes a value or more; 5 cannot be met.
        assert!(size > 2048 * 6);
        assert!(choose_within(&v, lag, 2048 * 5).is_none());
    }

    #[test]
    fn candidate_scores_are_the_same_with_and_without_avx512() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x
        };
        // Full-width patterns, narrow ones (as f32's are, zero-extended) and repeats.
        let wide: Vec<u64> = (0..2048).map(|_| next()).collect();
        let narrow: Vec<u64> = (0..2048).map(|_| next() >> 32).collect();
        let repeats: Vec<u64> = (0..2048).map(|i| (i % 37) as u64 * 0x1234_5678_9abc).collect();
        for bits in [wide, narrow, repeats] {
            let max_lag = 1000;
            let at: [usize; 4] = [1000, 1300, 1700, 2000];
            let expected = xor_scores_scalar::<4, 16>(&bits, &at, max_lag);
            assert_eq!(xor_scores::<4, 16>(&bits, &at, max_lag), expected);
            let lag = 1 + (next() as usize % max_lag);
            let sum: u32 = (0..4)
                .flat_map(|r| (0..16).map(move |k| (r, k)))
                .map(|(r, k)| (bits[at[r] + k] ^ bits[at[r] + k - lag]).leading_zeros())
                .sum();
            assert_eq!(expected[lag - 1], sum, "lag {lag}");
        }
    }

    #[test]
    fn corrupt_input_is_rejected() {
        let v = interleaved_walks(5, 100, 2, 1.0);
        let (p, _) = choose(&v, 5);
        let mut buf = Vec::new();
        encode(&v, &p, &mut buf);
        let dec = |b: &[u8], n: usize| decode::<f64>(b, n, &mut Vec::new());
        assert_eq!(dec(&buf, 100), Ok(buf.len()));
        for lag in [0u16, 100, 101, u16::MAX] {
            let mut bad = buf.clone();
            bad[..2].copy_from_slice(&lag.to_le_bytes());
            assert_eq!(dec(&bad, 100), Err(CorruptData("lag-delta lag out of range")));
        }
        assert_eq!(dec(&buf[..3], 100), Err(CorruptData("lag-delta header truncated")));
        // More values than encoded: the stream runs out.
        assert!(dec(&buf, 101).is_err());
        // A unary prefix that makes the residual wider than 64 bits.
        let mut wide = vec![1u8, 0, 0, 0, 63, 0]; // lag 1, body scale 63: k = 63 after 0.0
        wide.extend_from_slice(&0f64.to_bits().to_le_bytes());
        wide.extend_from_slice(&[0b0001_1111, 0, 0, 0, 0, 0, 0, 0, 0]); // q = 5, then k = 63
        assert_eq!(dec(&wide, 2), Err(CorruptData("lag-delta residual too wide")));
        // f32: a residual leading outside 32 bits.
        let mut buf = Vec::new();
        let f = [1.5f32, 2.5];
        encode(&f, &LagParams { lag: 1, head_scale: 0, body_scale: 0 }, &mut buf);
        let mut esc = buf[..HEADER_LEN + 4].to_vec();
        // escape: 11 ones, n - 1 = 63, then 63 one bits.
        let mut w = Vec::new();
        let mut bw = BitWriter::new(&mut w);
        bw.write(0x7FF, 11);
        bw.write(63, 6);
        bw.write(u64::MAX, 63);
        bw.finish();
        esc.extend_from_slice(&w);
        assert_eq!(
            decode::<f32>(&esc, 2, &mut Vec::new()),
            Err(CorruptData("lag-delta residual out of range"))
        );
    }

    /// Walks of `sources` interleaved sources with specials mixed in.
    fn walks_with_specials() -> impl Strategy<Value = (Vec<f64>, usize)> {
        (
            1usize..2048,
            1usize..700,
            any::<u64>(),
            0u32..4,
            proptest::collection::vec((any::<usize>(), any_f64()), 0..20),
        )
            .prop_map(|(n, sources, seed, sigma, specials)| {
                let sigma = [1.0, 1e-6, 30.0, 0.0][sigma as usize];
                let mut v = interleaved_walks(sources, n, seed, sigma);
                for (i, x) in specials {
                    let i = i % v.len();
                    v[i] = x;
                }
                let lag = if sources < n { sources } else { 1 };
                (v, lag)
            })
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(48))]
        #[test]
        fn prop_walks((v, lag) in walks_with_specials(), near_end in any::<bool>(), fl in flips()) {
            let b = rt(&v, lag);
            flip_never_panics(&b, &fl, |b| decode::<f64>(b, v.len(), &mut Vec::new()));
            // The largest lag is valid too (only the head is predicted then).
            if near_end && v.len() >= 2 {
                rt(&v, v.len() - 1);
            }
            let d = detect_lag(&v);
            prop_assert!(d >= 1 && (d < v.len() || d == 1));
        }
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(f in vec_with_repeats(any_f64(), 300),
                           g in vec_with_repeats(any_f32(), 300),
                           lag in any::<prop::sample::Index>(),
                           scales in any::<(u16, u16)>(),
                           fl in flips()) {
            let lag_of = |n: usize| if n < 2 { 1 } else { 1 + lag.index(n - 1) };
            let b = rt(&f, lag_of(f.len()));
            flip_never_panics(&b, &fl, |b| decode::<f64>(b, f.len(), &mut Vec::new()));
            let b = rt(&g, lag_of(g.len()));
            flip_never_panics(&b, &fl, |b| decode::<f32>(b, g.len(), &mut Vec::new()));
            // Any scales are exact, just not small.
            let p = LagParams { lag: lag_of(f.len()) as u16, head_scale: scales.0, body_scale: scales.1 };
            let mut buf = Vec::new();
            encode(&f, &p, &mut buf);
            let mut got = Vec::new();
            prop_assert_eq!(decode::<f64>(&buf, f.len(), &mut got), Ok(buf.len()));
            prop_assert!(bits_eq(&got, &f));
            let d = detect_lag(&f);
            prop_assert!(d >= 1 && (d < f.len() || d == 1));
        }
    }
}
