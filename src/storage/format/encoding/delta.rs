//! Delta and delta-of-delta encodings for integers (timestamps, sequences, sorted keys).
//!
//! Delta: `first: i64 LE`, then a count-less FOR block of the `count - 1` differences
//! between neighbours. Delta-of-delta: `first: i64 LE`, `first delta: i64 LE` (when
//! `count >= 2`), then a FOR block of the `count - 2` differences between neighbouring
//! deltas — a regular series (fixed step) packs to zero bits per value.
//! An empty input encodes to nothing. All arithmetic wraps, so any i64 sequence,
//! including jumps between `i64::MIN` and `i64::MAX`, round-trips exactly.

use super::base::CorruptData;
use super::bitpack;
use super::codec::{Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, INTS, WRONG_KIND};

/// Encoded delta size given the range of the neighbour differences (as the wrapped
/// values `b.wrapping_sub(a)`).
pub fn delta_encoded_len(count: usize, dmin: i64, dmax: i64) -> usize {
    match count {
        0 => 0,
        _ => 8 + bitpack::for_encoded_len(count - 1, dmin, dmax),
    }
}

/// Encoded delta-of-delta size given the range of second differences.
pub fn delta2_encoded_len(count: usize, ddmin: i64, ddmax: i64) -> usize {
    match count {
        0 => 0,
        1 => 8,
        _ => 16 + bitpack::for_encoded_len(count - 2, ddmin, ddmax),
    }
}

fn deltas(values: &[i64]) -> impl Iterator<Item = i64> + Clone + '_ {
    values.windows(2).map(|w| w[1].wrapping_sub(w[0]))
}

fn delta2s(values: &[i64]) -> impl Iterator<Item = i64> + Clone + '_ {
    values.windows(3).map(|w| w[2].wrapping_sub(w[1]).wrapping_sub(w[1].wrapping_sub(w[0])))
}

fn bounds(it: impl Iterator<Item = i64>) -> (i64, i64) {
    it.fold(None, |acc: Option<(i64, i64)>, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
    .unwrap_or((0, 0))
}

pub fn encode(values: &[i64], out: &mut Vec<u8>) {
    let Some(&first) = values.first() else { return };
    out.extend_from_slice(&first.to_le_bytes());
    let (lo, hi) = bounds(deltas(values));
    bitpack::encode_for_iter(lo, hi, deltas(values), values.len() - 1, out);
}

pub fn decode(input: &[u8], count: usize, out: &mut Vec<i64>) -> Result<usize, CorruptData> {
    if count == 0 {
        return Ok(0);
    }
    let first = input.get(..8).ok_or(CorruptData("delta first value truncated"))?;
    let mut prev = i64::from_le_bytes(first.try_into().expect("8 bytes"));
    out.reserve(count);
    out.push(prev);
    let used = bitpack::decode_for(&input[8..], count - 1, |d| {
        prev = prev.wrapping_add(d);
        out.push(prev);
    })?;
    Ok(8 + used)
}

pub fn encode_delta2(values: &[i64], out: &mut Vec<u8>) {
    let Some(&first) = values.first() else { return };
    out.extend_from_slice(&first.to_le_bytes());
    if values.len() == 1 {
        return;
    }
    out.extend_from_slice(&values[1].wrapping_sub(first).to_le_bytes());
    let (lo, hi) = bounds(delta2s(values));
    bitpack::encode_for_iter(lo, hi, delta2s(values), values.len() - 2, out);
}

pub fn decode_delta2(input: &[u8], count: usize, out: &mut Vec<i64>) -> Result<usize, CorruptData> {
    if count == 0 {
        return Ok(0);
    }
    let head_len = if count == 1 { 8 } else { 16 };
    let head = input.get(..head_len).ok_or(CorruptData("delta-of-delta header truncated"))?;
    let mut prev = i64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    out.reserve(count);
    out.push(prev);
    if count == 1 {
        return Ok(8);
    }
    let mut delta = i64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    prev = prev.wrapping_add(delta);
    out.push(prev);
    let used = bitpack::decode_for(&input[16..], count - 2, |dd| {
        delta = delta.wrapping_add(dd);
        prev = prev.wrapping_add(delta);
        out.push(prev);
    })?;
    Ok(16 + used)
}

/// The codec table's entry for deltas: integers.
pub static DELTA: Codec = Codec {
    kinds: INTS,
    tier: Tier::Cheap,
    decode_ns: 1.4,
    estimate: |a, _| match a {
        Analysis::Int(v, s) => Estimate::size(delta_encoded_len(v.len(), s.dmin, s.dmax)),
        _ => None,
    },
    encode: |values, _, out| match values {
        VectorValues::Int(v) => encode(v, out),
        _ => unreachable!("delta encodes integers"),
    },
    decode: |input, count, out, _| match out {
        Output::Int(v) => decode(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

/// The codec table's entry for deltas of deltas: integers.
pub static DELTA_OF_DELTA: Codec = Codec {
    kinds: INTS,
    tier: Tier::Cheap,
    decode_ns: 1.7,
    estimate: |a, _| match a {
        Analysis::Int(v, s) => Estimate::size(delta2_encoded_len(v.len(), s.ddmin, s.ddmax)),
        _ => None,
    },
    encode: |values, _, out| match values {
        VectorValues::Int(v) => encode_delta2(v, out),
        _ => unreachable!("delta-of-delta encodes integers"),
    },
    decode: |input, count, out, _| match out {
        Output::Int(v) => decode_delta2(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    fn rt(values: &[i64]) -> (Vec<u8>, Vec<u8>) {
        let mut d1 = Vec::new();
        encode(values, &mut d1);
        let (lo, hi) = bounds(deltas(values));
        assert_eq!(d1.len(), delta_encoded_len(values.len(), lo, hi));
        let mut got = Vec::new();
        assert_eq!(decode(&d1, values.len(), &mut got), Ok(d1.len()));
        assert_eq!(got, values);
        assert_truncations_fail(&d1, |b| decode(b, values.len(), &mut Vec::new()));

        let mut d2 = Vec::new();
        encode_delta2(values, &mut d2);
        let (lo, hi) = bounds(delta2s(values));
        assert_eq!(d2.len(), delta2_encoded_len(values.len(), lo, hi));
        let mut got = Vec::new();
        assert_eq!(decode_delta2(&d2, values.len(), &mut got), Ok(d2.len()));
        assert_eq!(got, values);
        assert_truncations_fail(&d2, |b| decode_delta2(b, values.len(), &mut Vec::new()));
        (d1, d2)
    }

    #[test]
    fn edge_cases() {
        assert_eq!(rt(&[]), (vec![], vec![]));
        rt(&[42]);
        rt(&[1, 2]);
        rt(&[i64::MIN, i64::MAX, i64::MIN, 0, i64::MAX, -1]);
        rt(&vec![7; 65536]);
    }

    #[test]
    fn regular_timestamps_cost_nothing_per_value() {
        let ts: Vec<i64> = (0..2048).map(|i| 1_700_000_000_000_000 + i * 10_000_000).collect();
        let (d1, d2) = rt(&ts);
        assert_eq!(d1.len(), 8 + 9);
        assert_eq!(d2.len(), 16 + 9);
        let sorted: Vec<i64> = (0..2048).map(|i| i * 3 + (i % 5)).collect();
        let (d1, _) = rt(&sorted);
        assert_eq!(d1.len(), 8 + 9 + bitpack::packed_len(2047, 3));
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(values in vec_with_repeats(any_i64(), 200), fl in flips()) {
            let (d1, d2) = rt(&values);
            flip_never_panics(&d1, &fl, |b| decode(b, values.len(), &mut Vec::new()));
            flip_never_panics(&d2, &fl, |b| decode_delta2(b, values.len(), &mut Vec::new()));
        }

        #[test]
        fn prop_sorted(mut values in proptest::collection::vec(any::<i64>(), 0..200)) {
            values.sort();
            rt(&values);
        }
    }
}
