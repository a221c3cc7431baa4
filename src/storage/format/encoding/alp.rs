//! ALP: Adaptive Lossless floating-Point compression (Afroozeh, Kuffó, Boncz, SIGMOD 2024).
//!
//! Two schemes, both exact by bit pattern for every input:
//!
//! **Decimal ALP** (`encode` / `decode`), for values that are decimals at heart (prices,
//! sensor readings with a few digits). With an exponent `e` and factor `f`, value `v`
//! becomes the integer `d = round(v * 10^e * 10^-f)`, and decodes as
//! `d * 10^f * 10^-e`. The encoder verifies every value by decoding it with the very
//! same expression and keeps the ones whose bit pattern differs (NaN, ±inf, -0.0,
//! full-precision values, out of range) as exceptions stored verbatim.
//! Layout: `e: u8`, `f: u8`, `exceptions: u32 LE`, a count-less FOR block of the
//! integers (exceptions hold a placeholder that keeps the range tight), the exception
//! positions (`u16 LE` each, ascending), the exception values (`T::BYTES` LE each).
//!
//! **ALP_rd** (`encode_rd` / `decode_rd`), for "real doubles" with full-precision
//! mantissas where no decimal representation exists. Each bit pattern is cut into a
//! left part (sign, exponent, top mantissa bits; at most 16 bits) and a right part of
//! `right_bits`. Left parts are dictionary-coded with at most 8 entries (0-3 bits per
//! value), right parts are bit-packed as they are; left parts missing from the
//! dictionary are exceptions. Layout: `right_bits: u8`, `dict_len: u8`, the dictionary
//! (`u16 LE` each), `exceptions: u32 LE`, the codes packed at
//! `bits_needed(dict_len - 1)` bits, the right parts packed at `right_bits`, exception
//! positions (`u16 LE`, ascending), exception left parts (`u16 LE`).
//!
//! ALP's parameters are chosen from a sample of the vector (`choose`); ALP_rd's from
//! every value (`choose_rd`, counting each value's top bits). Both estimate the encoded
//! size for the vector-level chooser.
//! Positions are u16, so one call encodes at most `MAX_VECTOR_ROWS` values.

use super::base::{read_fixed, write_fixed, CorruptData, Fixed, MAX_VECTOR_ROWS};
use super::bitpack::{self, bits_needed, packed_len, FOR_HEADER_LEN};
use super::codec::{
    plan_of, Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, FLOATS, WRONG_KIND,
};

/// A float type ALP handles. `f32` goes through `f64` arithmetic; exactness is still
/// guaranteed because every value is verified by decoding it back to `f32`.
pub trait AlpFloat: Fixed {
    /// Largest exponent tried: beyond it the integers no longer fit the mantissa.
    const MAX_E: u8;
    fn to_f64(self) -> f64;
    fn from_f64(v: f64) -> Self;
}

impl AlpFloat for f64 {
    const MAX_E: u8 = 18;
    #[inline]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v
    }
}

impl AlpFloat for f32 {
    const MAX_E: u8 = 10;
    #[inline]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

const F10: [f64; 19] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18];
const IF10: [f64; 19] = [
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15,
    1e-16, 1e-17, 1e-18,
];

/// Adding and subtracting 2^52 + 2^51 rounds to the nearest integer (ties to even) for
/// |x| < 2^51, without a libm call.
const MAGIC: f64 = 6_755_399_441_055_744.0;
const LIMIT: f64 = 2_251_799_813_685_248.0; // 2^51

/// Decimal exponent and factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlpParams {
    pub e: u8,
    pub f: u8,
}

/// The one decode expression; the encoder checks values with exactly this.
#[inline]
fn decode_digit<T: AlpFloat>(d: i64, p: AlpParams) -> T {
    T::from_f64(digit_f64(d) * F10[p.f as usize] * IF10[p.e as usize])
}

/// `d as f64` for the integers ALP stores (|d| <= 2^51, as `encode_digit` bounds them):
/// `d` added to the bits of 2^52 + 2^51 are the bits of that sum, exactly, and
/// subtracting it leaves `d`. Unlike a conversion instruction (SSE2 has none for 64-bit
/// integers to vectors of doubles) the compiler vectorises it: the decode loop runs
/// two values at a time. An integer out of that range (corrupt data only) gives some
/// other double, never undefined behaviour.
#[inline]
fn digit_f64(d: i64) -> f64 {
    f64::from_bits(MAGIC.to_bits().wrapping_add(d as u64)) - MAGIC
}

/// The integer for `v`, or `None` when it does not decode back to the same bits.
#[inline]
fn encode_digit<T: AlpFloat>(v: T, p: AlpParams) -> Option<i64> {
    let x = v.to_f64() * F10[p.e as usize] * IF10[p.f as usize];
    if x.is_nan() || x.abs() >= LIMIT {
        return None;
    }
    let d = ((x + MAGIC) - MAGIC) as i64;
    (decode_digit::<T>(d, p).to_bits64() == v.to_bits64()).then_some(d)
}

fn sample_indices(n: usize, max: usize) -> impl Iterator<Item = usize> {
    let s = n.min(max);
    (0..s).map(move |i| i * n / s)
}

fn exception_bytes<T: Fixed>() -> usize {
    2 + T::BYTES
}

/// Picks the exponent and factor from a sample and estimates the encoded size. `None`
/// when the values do not look decimal (most of the sample would be exceptions).
pub fn choose<T: AlpFloat>(values: &[T]) -> Option<(AlpParams, usize)> {
    const SAMPLE: usize = 32;
    let n = values.len();
    if n == 0 {
        return Some((AlpParams { e: 0, f: 0 }, 6 + FOR_HEADER_LEN));
    }
    let sample: Vec<T> = sample_indices(n, SAMPLE).map(|i| values[i]).collect();
    // The smallest exponent that represents each sampled value (with no factor) gives
    // the decimal scales worth searching. Non-decimal values have none, which rules ALP
    // out quickly for full-precision data.
    // More than a quarter without one rules ALP out: stop at the value that shows it
    // (each miss tries every exponent).
    let mut scales: Vec<u8> = Vec::with_capacity(sample.len());
    let mut misses = 0;
    for &v in &sample {
        match (0..=T::MAX_E).find(|&e| encode_digit(v, AlpParams { e, f: 0 }).is_some()) {
            Some(e) => scales.push(e),
            None => {
                misses += 1;
                if misses * 4 > sample.len() {
                    return None;
                }
            }
        }
    }
    scales.sort_unstable();
    scales.dedup();
    let mut best: Option<(AlpParams, usize)> = None;
    // For a scale k, every (e, f) with e - f = k yields the same integers; they differ
    // only in which values survive floating-point rounding, so try them all.
    for &k in &scales {
        for f in 0..=T::MAX_E - k {
            let p = AlpParams { e: k + f, f };
            let mut exc = 0usize;
            let (mut lo, mut hi) = (i64::MAX, i64::MIN);
            for &v in &sample {
                match encode_digit(v, p) {
                    Some(d) => (lo, hi) = (lo.min(d), hi.max(d)),
                    None => exc += 1,
                }
            }
            let width = if exc == sample.len() { 0 } else { bitpack::for_width(lo, hi) };
            let exc_est = (exc * n).div_ceil(sample.len());
            let size = 6 + FOR_HEADER_LEN + packed_len(n, width) + exc_est * exception_bytes::<T>();
            if best.is_none_or(|(_, b)| size < b) {
                best = Some((p, size));
            }
        }
    }
    best
}

/// Encodes with the given parameters (any parameters are correct; good ones are small).
pub fn encode<T: AlpFloat>(values: &[T], p: AlpParams, out: &mut Vec<u8>) {
    assert!(values.len() <= MAX_VECTOR_ROWS as usize, "ALP positions are u16");
    assert!(p.e <= T::MAX_E && p.f <= p.e);
    let mut digits: Vec<i64> = Vec::with_capacity(values.len());
    let mut exc: Vec<u16> = Vec::new();
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for (i, &v) in values.iter().enumerate() {
        match encode_digit(v, p) {
            Some(d) => {
                (lo, hi) = (lo.min(d), hi.max(d));
                digits.push(d);
            }
            None => {
                exc.push(i as u16);
                digits.push(0); // placeholder, replaced below
            }
        }
    }
    if lo > hi {
        (lo, hi) = (0, 0); // all exceptions (or empty)
    }
    for &i in &exc {
        digits[i as usize] = lo;
    }
    out.push(p.e);
    out.push(p.f);
    out.extend_from_slice(&(exc.len() as u32).to_le_bytes());
    bitpack::encode_for_iter(lo, hi, digits.iter().copied(), digits.len(), out);
    for &i in &exc {
        out.extend_from_slice(&i.to_le_bytes());
    }
    for &i in &exc {
        write_fixed(values[i as usize], out);
    }
}

/// Reads `n` ascending exception positions (< `count`) and calls `patch(pos, k)`.
fn for_each_exception(
    positions: &[u8],
    count: usize,
    mut patch: impl FnMut(usize, usize),
) -> Result<(), CorruptData> {
    let mut next_min = 0usize;
    for (k, p) in positions.chunks_exact(2).enumerate() {
        let pos = u16::from_le_bytes([p[0], p[1]]) as usize;
        if pos < next_min || pos >= count {
            return Err(CorruptData("ALP exception position out of order"));
        }
        next_min = pos + 1;
        patch(pos, k);
    }
    Ok(())
}

pub fn decode<T: AlpFloat>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    let head = input.get(..6).ok_or(CorruptData("ALP header truncated"))?;
    let p = AlpParams { e: head[0], f: head[1] };
    if p.e > T::MAX_E || p.f > p.e {
        return Err(CorruptData("ALP exponent out of range"));
    }
    let exc = u32::from_le_bytes(head[2..6].try_into().expect("4 bytes")) as usize;
    if exc > count {
        return Err(CorruptData("more ALP exceptions than values"));
    }
    let start = out.len();
    let mut pos = 6;
    // Unpacked and converted straight into the output's spare capacity, no push per
    // value: the loop the compiler vectorises.
    pos += bitpack::decode_for_map(&input[pos..], count, out, |d| decode_digit(d, p))?;
    let positions = input.get(pos..pos + 2 * exc).ok_or(CorruptData("ALP exception positions truncated"))?;
    pos += 2 * exc;
    let vals = input.get(pos..pos + T::BYTES * exc).ok_or(CorruptData("ALP exception values truncated"))?;
    pos += T::BYTES * exc;
    let got = &mut out[start..];
    for_each_exception(positions, count, |i, k| {
        got[i] = read_fixed(&vals[k * T::BYTES..]);
    })?;
    Ok(pos)
}

/// ALP_rd parameters: where to cut, and the left-part dictionary (most frequent first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdParams {
    pub right_bits: u8,
    pub dict: Vec<u16>,
}

pub(super) const RD_MAX_DICT: usize = 8;
const RD_MAX_LEFT_BITS: u32 = 16;

fn rd_size(n: usize, right_bits: u32, dict_len: usize, exc: usize) -> usize {
    let code_bits = bits_needed(dict_len.saturating_sub(1) as u64);
    2 + 2 * dict_len + 4 + packed_len(n, code_bits) + packed_len(n, right_bits as u8) + 4 * exc
}

/// Each value's top `RD_MAX_LEFT_BITS` bits, counted: `(top, count)` in ascending
/// order of `top`. A cut's left part is a prefix of these bits, so its frequencies
/// follow from them for every cut tried.
fn top_counts<T: Fixed>(values: &[T]) -> Vec<(u16, usize)> {
    let shift = T::BITS - RD_MAX_LEFT_BITS;
    let top = |v: &T| (v.to_bits64() >> shift) as u16;
    // Counted in a small open-addressing table (a vector's values have a few hundred
    // distinct tops at most: sign, exponent and a few mantissa bits), sorted after.
    const SLOTS: usize = 1024;
    let mut slots = [(0u16, 0u32); SLOTS];
    let mut distinct = 0usize;
    for v in values {
        let t = top(v);
        let mut i = ((t as usize).wrapping_mul(0x9E37) >> 6) & (SLOTS - 1);
        loop {
            let (key, count) = &mut slots[i];
            if *count == 0 {
                if distinct == SLOTS / 2 {
                    // Too many to count this way: sorted instead.
                    let mut tops: Vec<u16> = values.iter().map(top).collect();
                    tops.sort_unstable();
                    let mut counts = Vec::new();
                    merge_runs(tops.into_iter().map(|t| (t, 1)), &mut counts);
                    return counts;
                }
                (*key, *count) = (t, 1);
                distinct += 1;
                break;
            }
            if *key == t {
                *count += 1;
                break;
            }
            i = (i + 1) & (SLOTS - 1);
        }
    }
    let mut counts: Vec<(u16, usize)> =
        slots.into_iter().filter(|s| s.1 > 0).map(|(t, c)| (t, c as usize)).collect();
    counts.sort_unstable();
    counts
}

/// Appends `(key, count)` pairs given in ascending order of key to `out`, equal keys
/// added up.
fn merge_runs(pairs: impl Iterator<Item = (u16, usize)>, out: &mut Vec<(u16, usize)>) {
    for (k, c) in pairs {
        match out.last_mut() {
            Some((l, n)) if *l == k => *n += c,
            _ => out.push((k, c)),
        }
    }
}

/// The left parts at a cut `shift` bits below the top `RD_MAX_LEFT_BITS` with their
/// counts, from `top_counts`, in `out` (ascending order of left part).
fn left_counts(tops: &[(u16, usize)], shift: u32, out: &mut Vec<(u16, usize)>) {
    out.clear();
    merge_runs(tops.iter().map(|&(t, c)| (t >> shift, c)), out);
}

/// Picks the cut and dictionary; returns them with the estimated size.
pub fn choose_rd<T: Fixed>(values: &[T]) -> (RdParams, usize) {
    choose_rd_sized(values, rd_size)
}

/// `choose_rd` for a layout whose size `size(n, right_bits, dict_len, exceptions)` gives.
/// Every value is counted, not a sample: the few left parts outside the dictionary are
/// exceptions, and a sample misjudges which are rare (on TSBS's metrics a sample of 256
/// of 2,048 values stored 0.5% more).
pub(super) fn choose_rd_sized<T: Fixed>(
    values: &[T],
    size: fn(usize, u32, usize, usize) -> usize,
) -> (RdParams, usize) {
    let n = values.len();
    let tops = top_counts(values);
    let lowest = T::BITS - RD_MAX_LEFT_BITS;
    let mut lefts = Vec::with_capacity(tops.len());
    let mut best: Option<(u32, usize)> = None;
    for right_bits in lowest..T::BITS {
        left_counts(&tops, right_bits - lowest, &mut lefts);
        // The dictionary takes the most frequent left parts; the rest are exceptions.
        let covered: usize = if lefts.len() <= RD_MAX_DICT {
            n
        } else {
            lefts.select_nth_unstable_by(RD_MAX_DICT - 1, |a, b| b.1.cmp(&a.1));
            lefts[..RD_MAX_DICT].iter().map(|l| l.1).sum()
        };
        let dict_len = lefts.len().clamp(1, RD_MAX_DICT);
        let size = size(n, right_bits, dict_len, n - covered);
        if best.is_none_or(|(_, b)| size < b) {
            best = Some((right_bits, size));
        }
    }
    let (right_bits, size) = best.expect("at least one cut is tried");
    left_counts(&tops, right_bits - lowest, &mut lefts);
    // Stable order for equal counts keeps the choice deterministic.
    lefts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut dict: Vec<u16> = lefts.iter().take(RD_MAX_DICT).map(|l| l.0).collect();
    if dict.is_empty() {
        dict.push(0);
    }
    (RdParams { right_bits: right_bits as u8, dict }, size)
}

fn check_rd_params<T: Fixed>(right_bits: u32, dict_len: usize) -> bool {
    (T::BITS - RD_MAX_LEFT_BITS..T::BITS).contains(&right_bits) && (1..=RD_MAX_DICT).contains(&dict_len)
}

pub fn encode_rd<T: Fixed>(values: &[T], p: &RdParams, out: &mut Vec<u8>) {
    let (codes, exc) = rd_codes(values, p);
    write_rd_header(p, exc.len(), out);
    let r = p.right_bits as u32;
    let right_mask = (1u64 << r) - 1;
    bitpack::pack(codes.iter().map(|&c| c as u64), rd_code_bits(p.dict.len()), codes.len(), out);
    bitpack::pack(values.iter().map(|v| v.to_bits64() & right_mask), r as u8, values.len(), out);
    write_rd_exceptions(&exc, out);
}

/// Bits of a dictionary code.
pub(super) fn rd_code_bits(dict_len: usize) -> u8 {
    bits_needed(dict_len as u64 - 1)
}

/// Each value's dictionary code (0 for an exception), and the exceptions (position,
/// left part).
pub(super) fn rd_codes<T: Fixed>(values: &[T], p: &RdParams) -> (Vec<u8>, Vec<(u16, u16)>) {
    assert!(values.len() <= MAX_VECTOR_ROWS as usize, "ALP positions are u16");
    let r = p.right_bits as u32;
    assert!(check_rd_params::<T>(r, p.dict.len()));
    let mut codes: Vec<u8> = Vec::with_capacity(values.len());
    let mut exc: Vec<(u16, u16)> = Vec::new();
    for (i, v) in values.iter().enumerate() {
        let left = (v.to_bits64() >> r) as u16;
        match p.dict.iter().position(|&d| d == left) {
            Some(c) => codes.push(c as u8),
            None => {
                codes.push(0);
                exc.push((i as u16, left));
            }
        }
    }
    (codes, exc)
}

/// The parameters and the exception count.
pub(super) fn write_rd_header(p: &RdParams, exceptions: usize, out: &mut Vec<u8>) {
    out.push(p.right_bits);
    out.push(p.dict.len() as u8);
    for d in &p.dict {
        out.extend_from_slice(&d.to_le_bytes());
    }
    out.extend_from_slice(&(exceptions as u32).to_le_bytes());
}

/// The exceptions' positions, then their left parts.
fn write_rd_exceptions(exc: &[(u16, u16)], out: &mut Vec<u8>) {
    for (i, _) in exc {
        out.extend_from_slice(&i.to_le_bytes());
    }
    for (_, l) in exc {
        out.extend_from_slice(&l.to_le_bytes());
    }
}

/// An ALP_rd header as read and checked.
pub(super) struct RdHeader {
    pub right_bits: u32,
    /// The dictionary's left parts, unused entries 0.
    pub dict: [u64; RD_MAX_DICT],
    pub dict_len: usize,
    pub exceptions: usize,
    /// Bytes of the header.
    pub len: usize,
}

pub(super) fn read_rd_header<T: Fixed>(input: &[u8], count: usize) -> Result<RdHeader, CorruptData> {
    let head = input.get(..2).ok_or(CorruptData("ALP_rd header truncated"))?;
    let (r, dict_len) = (head[0] as u32, head[1] as usize);
    if !check_rd_params::<T>(r, dict_len) {
        return Err(CorruptData("ALP_rd parameters out of range"));
    }
    let max_left = 1u64 << (T::BITS - r);
    let mut dict = [0u64; RD_MAX_DICT];
    let raw = input.get(2..2 + 2 * dict_len).ok_or(CorruptData("ALP_rd dictionary truncated"))?;
    for (slot, b) in dict.iter_mut().zip(raw.chunks_exact(2)) {
        *slot = u16::from_le_bytes([b[0], b[1]]) as u64;
        if *slot >= max_left {
            return Err(CorruptData("ALP_rd dictionary entry too wide"));
        }
    }
    let pos = 2 + 2 * dict_len;
    let exc_raw = input.get(pos..pos + 4).ok_or(CorruptData("ALP_rd header truncated"))?;
    let exceptions = u32::from_le_bytes(exc_raw.try_into().expect("4 bytes")) as usize;
    if exceptions > count {
        return Err(CorruptData("more ALP_rd exceptions than values"));
    }
    Ok(RdHeader { right_bits: r, dict, dict_len, exceptions, len: pos + 4 })
}

/// Patches the exceptions stored at the front of `input` into the decoded values `got`;
/// returns the bytes they took.
fn patch_rd_exceptions<T: Fixed>(input: &[u8], h: &RdHeader, got: &mut [T]) -> Result<usize, CorruptData> {
    let exc = h.exceptions;
    let positions = input.get(..2 * exc).ok_or(CorruptData("ALP_rd exceptions truncated"))?;
    let lefts = input.get(2 * exc..4 * exc).ok_or(CorruptData("ALP_rd exceptions truncated"))?;
    let r = h.right_bits;
    let max_left = 1u64 << (T::BITS - r);
    let right_mask = (1u64 << r) - 1;
    let mut bad_left = false;
    for_each_exception(positions, got.len(), |i, k| {
        let left = u16::from_le_bytes([lefts[2 * k], lefts[2 * k + 1]]) as u64;
        bad_left |= left >= max_left;
        got[i] = T::from_bits64((left << r) | (got[i].to_bits64() & right_mask));
    })?;
    if bad_left {
        return Err(CorruptData("ALP_rd exception too wide"));
    }
    Ok(4 * exc)
}

pub fn decode_rd<T: Fixed>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    let h = read_rd_header::<T>(input, count)?;
    let (r, dict_len, dict) = (h.right_bits, h.dict_len, h.dict);
    let mut pos = h.len;
    let code_bits = rd_code_bits(dict_len);
    let codes_len = packed_len(count, code_bits);
    let rights_len = packed_len(count, r as u8);
    let codes = input.get(pos..pos + codes_len).ok_or(CorruptData("ALP_rd codes truncated"))?;
    pos += codes_len;
    let rights = input.get(pos..pos + rights_len).ok_or(CorruptData("ALP_rd values truncated"))?;
    pos += rights_len;

    let start = out.len();
    out.reserve(count);
    let mut bad = false;
    bitpack::unpack(codes, code_bits, count, |c| {
        bad |= c as usize >= dict_len;
        out.push(T::from_bits64(dict[c as usize % RD_MAX_DICT] << r));
    })?;
    if bad {
        return Err(CorruptData("ALP_rd code out of range"));
    }
    let got = &mut out[start..];
    let mut i = 0;
    bitpack::unpack(rights, r as u8, count, |right| {
        got[i] = T::from_bits64(got[i].to_bits64() | right);
        i += 1;
    })?;
    pos += patch_rd_exceptions(&input[pos..], &h, got)?;
    Ok(pos)
}

/// The codec table's entry for decimal ALP: floats; parameters from a sample.
pub static ALP: Codec = Codec {
    kinds: FLOATS,
    tier: Tier::Cheap,
    decode_ns: 0.45,
    estimate: |a, _| {
        let (params, size) = match a {
            Analysis::Float32(v, _) => choose(v)?,
            Analysis::Float64(v, _) => choose(v)?,
            _ => return None,
        };
        Estimate::planned(size, params)
    },
    encode: |values, plan, out| match values {
        VectorValues::Float32(v) => encode(v, *plan_of(plan), out),
        VectorValues::Float64(v) => encode(v, *plan_of(plan), out),
        _ => unreachable!("ALP encodes floats"),
    },
    decode: |input, count, out, _| match out {
        Output::Float32(v) => decode(input, count, v),
        Output::Float64(v) => decode(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

/// The codec table's entry for ALP_rd: floats, when they are not decimal; parameters
/// from a sample.
pub static ALP_RD: Codec = Codec {
    kinds: FLOATS,
    tier: Tier::Costly,
    decode_ns: 2.0,
    estimate: |a, _| {
        let (params, size) = match a {
            Analysis::Float32(v, _) => choose_rd(v),
            Analysis::Float64(v, _) => choose_rd(v),
            _ => return None,
        };
        Estimate::planned(size, params)
    },
    encode: |values, plan, out| match values {
        VectorValues::Float32(v) => encode_rd(v, plan_of(plan), out),
        VectorValues::Float64(v) => encode_rd(v, plan_of(plan), out),
        _ => unreachable!("ALP_rd encodes floats"),
    },
    decode: |input, count, out, _| match out {
        Output::Float32(v) => decode_rd(input, count, v),
        Output::Float64(v) => decode_rd(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    #[test]
    fn digits_convert_exactly_across_the_range_alp_stores() {
        let edge = 1i64 << 51;
        for d in [0, 1, -1, 2, -2, edge, -edge, edge - 1, -edge + 1, 123_456_789_012, -987_654_321] {
            assert_eq!(digit_f64(d).to_bits(), (d as f64).to_bits(), "{d}");
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = (x as i64) >> 12; // within +-2^51
            assert_eq!(digit_f64(d).to_bits(), (d as f64).to_bits(), "{d}");
        }
    }

    fn rt<T: AlpFloat>(values: &[T]) -> (Vec<u8>, Option<AlpParams>) {
        let p = choose(values).map(|c| c.0);
        let mut buf = Vec::new();
        encode(values, p.unwrap_or(AlpParams { e: 2, f: 0 }), &mut buf);
        let mut got = Vec::new();
        assert_eq!(decode(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, values), "{values:?} -> {got:?}");
        assert_truncations_fail(&buf, |b| decode::<T>(b, values.len(), &mut Vec::new()));
        (buf, p)
    }

    fn rt_rd<T: Fixed>(values: &[T]) -> Vec<u8> {
        let (p, _) = choose_rd(values);
        let mut buf = Vec::new();
        encode_rd(values, &p, &mut buf);
        let mut got = Vec::new();
        assert_eq!(decode_rd(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, values));
        assert_truncations_fail(&buf, |b| decode_rd::<T>(b, values.len(), &mut Vec::new()));
        buf
    }

    #[test]
    fn decimals_pack_tightly() {
        let prices: Vec<f64> = (0..2048).map(|i| ((i * 7919) % 100_000) as f64 / 100.0).collect();
        let (buf, p) = rt(&prices);
        // Scale 10^2 (some (e, f) pairs with e - f = 2 survive rounding better than
        // others); 17-bit integers, at most a few exceptions.
        let p = p.unwrap();
        assert_eq!(p.e - p.f, 2);
        assert!(buf.len() <= 6 + 9 + packed_len(2048, 17) + 10 * 20, "{}", buf.len());
        let thousands: Vec<f64> = (0..2048).map(|i| (i % 50) as f64 * 1000.0).collect();
        let (buf, p) = rt(&thousands);
        assert_eq!(p, Some(AlpParams { e: 0, f: 0 }));
        assert_eq!(buf.len(), 6 + 9 + packed_len(2048, 16));
        let f32s: Vec<f32> = (0..2048).map(|i| (i % 1000) as f32 / 10.0).collect();
        let (buf, p) = rt(&f32s);
        assert!(p.is_some());
        assert!(buf.len() < 2048 * 2);
    }

    #[test]
    fn specials_become_exceptions() {
        let mut v: Vec<f64> = (0..100).map(|i| i as f64 / 4.0).collect();
        v.extend(special_f64s());
        let (buf, _) = rt(&v);
        assert!(buf.len() < v.len() * 8);
        rt(&special_f64s());
        rt(&[f32::NAN, -0.0f32, 1.1, f32::from_bits(1), f32::MAX]);
        rt::<f64>(&[]);
        rt(&[-0.0f64]);
        rt(&vec![1.5f64; 65536]);
    }

    #[test]
    fn rd_handles_full_precision() {
        let mut x = 1u64;
        let vals: Vec<f64> = (0..2048)
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 11) as f64 / (1u64 << 53) as f64 * 100.0
            })
            .collect();
        assert!(choose(&vals).is_none());
        let buf = rt_rd(&vals);
        assert!(buf.len() < 2048 * 7, "{}", buf.len());
        rt_rd(&special_f64s());
        rt_rd::<f64>(&[]);
        rt_rd(&[f32::NAN, -0.0f32, 3.3]);
        rt_rd(&vec![2.5f32; 65536]);
    }

    #[test]
    fn corrupt_parameters() {
        let mut buf = Vec::new();
        encode(&[1.5f64, 2.5], AlpParams { e: 1, f: 0 }, &mut buf);
        buf[0] = 19;
        assert!(decode::<f64>(&buf, 2, &mut Vec::new()).is_err());
        buf[0] = 1;
        buf[1] = 2;
        assert!(decode::<f64>(&buf, 2, &mut Vec::new()).is_err());
        let mut buf = Vec::new();
        let (p, _) = choose_rd(&[1.5f64, 2.5]);
        encode_rd(&[1.5f64, 2.5], &p, &mut buf);
        buf[0] = 64;
        assert!(decode_rd::<f64>(&buf, 2, &mut Vec::new()).is_err());
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(f in vec_with_repeats(any_f64(), 200),
                           g in vec_with_repeats(any_f32(), 200),
                           e in 0u8..=18, fl in flips()) {
            let (b, _) = rt(&f);
            flip_never_panics(&b, &fl, |b| decode::<f64>(b, f.len(), &mut Vec::new()));
            rt(&g);
            // Any parameters are exact, just not small.
            let mut buf = Vec::new();
            encode(&f, AlpParams { e, f: e / 2 }, &mut buf);
            let mut got = Vec::new();
            prop_assert_eq!(decode::<f64>(&buf, f.len(), &mut got), Ok(buf.len()));
            prop_assert!(bits_eq(&got, &f));
            let b = rt_rd(&f);
            flip_never_panics(&b, &fl, |b| decode_rd::<f64>(b, f.len(), &mut Vec::new()));
            rt_rd(&g);
        }
    }
}
