//! Gorilla XOR encoding for floats (Pelkonen et al., VLDB 2015), by bit pattern.
//!
//! Bit stream (LSB-first, see `bitpack::BitWriter`), padded to a byte at the end:
//! the first value's `T::BITS` bits, then per value the XOR with its predecessor as
//! - `0`: identical bits;
//! - `1 0` + the meaningful bits in the previous window (when the XOR's leading and
//!   trailing zero counts are at least the previous window's);
//! - `1 1` + leading zeros (6 bits) + meaningful length - 1 (6 bits) + meaningful bits.
//!
//! Good for slowly changing series where neighbours share sign, exponent and high
//! mantissa bits; poor for noise (up to ~14 bits worse than plain per value).

use super::base::{CorruptData, Fixed};
use super::bitpack::{BitReader, BitWriter};
use super::codec::{Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, FLOATS, WRONG_KIND};

/// Window of the meaningful XOR bits: leading zeros and trailing zeros within `BITS`.
#[derive(Clone, Copy)]
struct Window {
    lead: u32,
    trail: u32,
}

/// Walks the control decisions; `f(xor, new_window, prev_window)` sees each step.
#[inline]
fn for_each_step<T: Fixed>(values: &[T], mut f: impl FnMut(u64, Option<Window>, Window)) {
    let pad = 64 - T::BITS;
    let mut prev = match values.first() {
        Some(v) => v.to_bits64(),
        None => return,
    };
    // An impossible window (wider than the value) forces the first change to set one.
    let mut win = Window { lead: 64, trail: 64 };
    for v in &values[1..] {
        let bits = v.to_bits64();
        let xor = bits ^ prev;
        prev = bits;
        if xor == 0 {
            f(0, None, win);
            continue;
        }
        let lead = xor.leading_zeros() - pad;
        let trail = xor.trailing_zeros();
        if lead >= win.lead && trail >= win.trail {
            f(xor, None, win);
        } else {
            let new = Window { lead, trail };
            f(xor, Some(new), win);
            win = new;
        }
    }
}

/// Exact encoded size in bytes.
pub fn encoded_len<T: Fixed>(values: &[T]) -> usize {
    if values.is_empty() {
        return 0;
    }
    let mut bits = T::BITS as usize;
    for_each_step(values, |xor, new, prev| {
        bits += match (xor, new) {
            (0, _) => 1,
            (_, None) => 2 + (T::BITS - prev.lead - prev.trail) as usize,
            (_, Some(w)) => 2 + 12 + (T::BITS - w.lead - w.trail) as usize,
        }
    });
    bits.div_ceil(8)
}

pub fn encode<T: Fixed>(values: &[T], out: &mut Vec<u8>) {
    let Some(first) = values.first() else { return };
    let mut w = BitWriter::new(out);
    w.write(first.to_bits64(), T::BITS);
    for_each_step(values, |xor, new, prev| match (xor, new) {
        (0, _) => w.write(0, 1),
        (_, None) => {
            w.write(0b01, 2); // LSB first: bit `1` then bit `0`
            w.write(xor >> prev.trail, T::BITS - prev.lead - prev.trail);
        }
        (_, Some(win)) => {
            w.write(0b11, 2);
            let len = T::BITS - win.lead - win.trail;
            w.write(win.lead as u64, 6);
            w.write((len - 1) as u64, 6);
            w.write(xor >> win.trail, len);
        }
    });
    w.finish();
}

pub fn decode<T: Fixed>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    if count == 0 {
        return Ok(0);
    }
    let mut r = BitReader::new(input);
    let mut prev = r.read(T::BITS)?;
    out.reserve(count);
    out.push(T::from_bits64(prev));
    let mut win: Option<(u32, u32)> = None; // (trailing zeros, meaningful length)
    for _ in 1..count {
        if r.read_bit()? {
            if r.read_bit()? {
                let lead = r.read(6)? as u32;
                let len = r.read(6)? as u32 + 1;
                if lead + len > T::BITS {
                    return Err(CorruptData("gorilla window wider than the value"));
                }
                win = Some((T::BITS - lead - len, len));
            }
            let (trail, len) = win.ok_or(CorruptData("gorilla window used before set"))?;
            prev ^= r.read(len)? << trail;
        }
        out.push(T::from_bits64(prev));
    }
    Ok(r.bytes_consumed())
}

/// The codec table's entry: floats, when they are not decimal.
pub static GORILLA: Codec = Codec {
    kinds: FLOATS,
    tier: Tier::Costly,
    decode_ns: 5.0,
    estimate: |a, _| match a {
        Analysis::Float32(v, _) => Estimate::size(encoded_len(v)),
        Analysis::Float64(v, _) => Estimate::size(encoded_len(v)),
        _ => None,
    },
    encode: |values, _, out| match values {
        VectorValues::Float32(v) => encode(v, out),
        VectorValues::Float64(v) => encode(v, out),
        _ => unreachable!("Gorilla encodes floats"),
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

    fn rt<T: Fixed>(values: &[T]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(values, &mut buf);
        assert_eq!(buf.len(), encoded_len(values));
        let mut got = Vec::new();
        assert_eq!(decode(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, values));
        assert_truncations_fail(&buf, |b| decode::<T>(b, values.len(), &mut Vec::new()));
        buf
    }

    #[test]
    fn edge_cases() {
        assert!(rt::<f64>(&[]).is_empty());
        assert_eq!(rt(&[3.25f64]).len(), 8);
        // Constant: one bit per value after the first.
        assert_eq!(rt(&vec![7.5f64; 2048]).len(), 8 + 2047usize.div_ceil(8));
        rt(&[f64::NAN, -0.0, 0.0, f64::INFINITY, f64::NEG_INFINITY, f64::from_bits(1), f64::MAX]);
        rt(&[0.0f64, f64::from_bits(u64::MAX), 0.0]); // 64-bit-wide window
        rt(&[f32::NAN, -0.0f32, f32::from_bits(u32::MAX), 0.0, 1.0]);
        let series: Vec<f64> = (0..16384).map(|i| 20.0 + (i as f64 / 100.0).sin()).collect();
        rt(&series);
        // A full-size vector (round trip only; truncations are covered above).
        let max: Vec<f64> = (0..65536).map(|i| (i % 3) as f64).collect();
        let mut buf = Vec::new();
        encode(&max, &mut buf);
        let mut got = Vec::new();
        assert_eq!(decode(&buf, max.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, &max));
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(f in vec_with_repeats(any_f64(), 200),
                           g in vec_with_repeats(any_f32(), 200),
                           fl in flips()) {
            let b = rt(&f);
            flip_never_panics(&b, &fl, |b| decode::<f64>(b, f.len(), &mut Vec::new()));
            let b = rt(&g);
            flip_never_panics(&b, &fl, |b| decode::<f32>(b, g.len(), &mut Vec::new()));
        }
    }
}
