//! Plain encoding: the values as they are.
//!
//! Fixed-width values: `count * T::BYTES` little-endian bytes. Bytes values: a count-less
//! FOR block of the lengths (see `bitpack::encode_for`), then the concatenated data.
//! Plain is the fallback every kind supports, and the layout general-purpose
//! compression works on best for text.

use super::base::{read_fixed, write_fixed, CorruptData, Fixed, PhysicalKind, MAX_DECODED_BYTES};
use super::bitpack;
use super::codec::{Analysis, Codec, Estimate, InPlace, Open, Output, Tier, VectorValues, ALL_KINDS};
use crate::storage::format::fallible;

/// Encoded size of `count` fixed-width values.
pub fn encoded_len<T: Fixed>(count: usize) -> usize {
    count * T::BYTES
}

pub fn encode<T: Fixed>(values: &[T], out: &mut Vec<u8>) {
    out.reserve(values.len() * T::BYTES);
    for &v in values {
        write_fixed(v, out);
    }
}

/// Appends `count` values to `out`; returns the bytes consumed.
pub fn decode<T: Fixed>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    let len = count.checked_mul(T::BYTES).ok_or(CorruptData("plain values truncated"))?;
    let body = input.get(..len).ok_or(CorruptData("plain values truncated"))?;
    out.reserve(count);
    out.extend(body.chunks_exact(T::BYTES).map(read_fixed::<T>));
    Ok(len)
}

/// Encoded size of byte strings whose lengths span `min_len..=max_len`.
pub fn bytes_encoded_len(count: usize, min_len: u32, max_len: u32, data_len: usize) -> usize {
    bitpack::for_encoded_len(count, min_len as i64, max_len as i64) + data_len
}

/// Encodes the byte strings `data[offsets[i]..offsets[i+1]]` for `i < offsets.len()-1`.
pub fn encode_bytes(offsets: &[u32], data: &[u8], out: &mut Vec<u8>) {
    let count = offsets.len().saturating_sub(1);
    let lens = offsets.windows(2).map(|w| (w[1] - w[0]) as i64);
    let (min, max) = lens.clone().fold((i64::MAX, i64::MIN), |(lo, hi), l| (lo.min(l), hi.max(l)));
    let (min, max) = if count == 0 { (0, 0) } else { (min, max) };
    bitpack::encode_for_iter(min, max, lens, count, out);
    let first = offsets.first().copied().unwrap_or(0) as usize;
    let last = offsets.last().copied().unwrap_or(0) as usize;
    fallible::extend_from_slice(out, &data[first..last]);
}

/// Decodes `count` byte strings, appending their bytes to `data` and, after each value,
/// `data.len()` to `ends` (so with `ends == [0]` beforehand, `ends` become offsets).
/// `lens` is scratch space. Returns the bytes consumed.
pub fn decode_bytes(
    input: &[u8],
    count: usize,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
    lens: &mut Vec<u32>,
) -> Result<usize, CorruptData> {
    lens.clear();
    lens.reserve(count);
    let mut total: u64 = 0;
    let mut bad = false;
    let used = bitpack::decode_for(input, count, |l| {
        // A negative or huge length can only come from corruption.
        bad |= !(0..=u32::MAX as i64).contains(&l);
        total += l as u32 as u64;
        lens.push(l as u32);
    })?;
    if bad {
        return Err(CorruptData("plain byte length out of range"));
    }
    let body = input
        .get(used..)
        .and_then(|rest| rest.get(..usize::try_from(total).ok()?))
        .ok_or(CorruptData("plain byte data truncated"))?;
    if data.len() + body.len() > MAX_DECODED_BYTES {
        return Err(CorruptData("decoded byte values too large"));
    }
    // The values lie back to back, as they will in `data`: one copy, then the ends.
    let mut end = data.len() as u32;
    fallible::extend_from_slice(data, body);
    ends.reserve(count);
    ends.extend(lens.iter().map(|&l| {
        end += l;
        end
    }));
    Ok(used + body.len())
}

/// The codec table's entry: every kind; fixed-width values are read in place.
pub static PLAIN: Codec = Codec {
    kinds: ALL_KINDS,
    tier: Tier::Cheap,
    decode_ns: 0.1,
    estimate: |a, _| {
        Estimate::size(match a {
            Analysis::Int(v, _) => encoded_len::<i64>(v.len()),
            Analysis::Float32(v, _) => encoded_len::<f32>(v.len()),
            Analysis::Float64(v, _) => encoded_len::<f64>(v.len()),
            Analysis::Bytes { offsets, stats: s, .. } => {
                bytes_encoded_len(offsets.len() - 1, s.min_len, s.max_len, s.data_len)
            }
        })
    },
    encode: |values, _, out| match values {
        VectorValues::Int(v) => encode(v, out),
        VectorValues::Float32(v) => encode(v, out),
        VectorValues::Float64(v) => encode(v, out),
        VectorValues::Bytes { offsets, data } => encode_bytes(offsets, data, out),
    },
    decode: |input, count, out, scratch| match out {
        Output::Int(v) => decode(input, count, v),
        Output::Float32(v) => decode(input, count, v),
        Output::Float64(v) => decode(input, count, v),
        Output::Bytes { offsets, data } => decode_bytes(input, count, offsets, data, &mut scratch.lens),
    },
    open: Open::InPlace(|kind, _, len, count| {
        let width = match kind {
            PhysicalKind::Float32 => 4,
            _ => 8,
        };
        if count * width != len {
            return Err(CorruptData("vector payload length mismatch"));
        }
        Ok(InPlace::Bytes { width })
    }),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    fn rt_fixed<T: Fixed>(values: &[T]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(values, &mut buf);
        assert_eq!(buf.len(), encoded_len::<T>(values.len()));
        let mut got = Vec::new();
        assert_eq!(decode(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, values));
        assert_truncations_fail(&buf, |b| decode::<T>(b, values.len(), &mut Vec::new()));
        buf
    }

    fn dec_bytes(buf: &[u8], count: usize) -> Result<(usize, Vec<u32>, Vec<u8>), CorruptData> {
        let mut ends = vec![0];
        let mut data = Vec::new();
        let used = decode_bytes(buf, count, &mut ends, &mut data, &mut Vec::new())?;
        Ok((used, ends, data))
    }

    fn rt_bytes(values: &[Vec<u8>]) -> Vec<u8> {
        let (offsets, data) = to_offsets(values);
        let mut buf = Vec::new();
        encode_bytes(&offsets, &data, &mut buf);
        let (min, max) =
            values.iter().map(|v| v.len() as u32).fold((u32::MAX, 0), |(a, b), l| (a.min(l), b.max(l)));
        let min = if values.is_empty() { 0 } else { min };
        assert_eq!(buf.len(), bytes_encoded_len(values.len(), min, max, data.len()));
        let (used, ends, got) = dec_bytes(&buf, values.len()).unwrap();
        assert_eq!(used, buf.len());
        assert_eq!(ends, offsets);
        assert_eq!(got, data);
        assert_truncations_fail(&buf, |b| dec_bytes(b, values.len()).map(|r| r.0));
        buf
    }

    #[test]
    fn edge_cases() {
        rt_fixed::<i64>(&[]);
        rt_fixed(&[i64::MIN, i64::MAX, 0]);
        rt_fixed(&[f64::NAN, -0.0, f64::from_bits(0x7FF0_0000_0000_0ABC), f64::from_bits(1)]);
        rt_fixed(&[f32::NAN, -0.0f32, f32::from_bits(0x7F80_0ABC), f32::INFINITY]);
        rt_fixed(&vec![5i64; 65536]);
        rt_bytes(&[]);
        rt_bytes(&[vec![]]);
        rt_bytes(&[b"a".to_vec(), vec![], b"hello".to_vec()]);
        rt_bytes(&vec![b"same".to_vec(); 2048]);
    }

    #[test]
    fn sliced_offsets_encode_only_their_range() {
        let data = b"xxabcdeyy";
        let mut buf = Vec::new();
        encode_bytes(&[2, 4, 7], data, &mut buf);
        let (_, ends, got) = dec_bytes(&buf, 2).unwrap();
        assert_eq!(ends, [0, 2, 5]);
        assert_eq!(got, b"abcde");
    }

    #[test]
    fn negative_length_is_corrupt() {
        let mut buf = Vec::new();
        encode_bytes(&[0, 1], b"a", &mut buf);
        buf[..8].copy_from_slice(&(-5i64).to_le_bytes());
        assert!(dec_bytes(&buf, 1).is_err());
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(96))]
        #[test]
        fn prop_fixed(i in proptest::collection::vec(any_i64(), 0..200),
                      f in proptest::collection::vec(any_f64(), 0..200),
                      g in proptest::collection::vec(any_f32(), 0..200)) {
            rt_fixed(&i);
            rt_fixed(&f);
            rt_fixed(&g);
        }

        #[test]
        fn prop_bytes(values in any_bytes_vec(100), fl in flips()) {
            let buf = rt_bytes(&values);
            flip_never_panics(&buf, &fl, |b| dec_bytes(b, values.len()).map(|r| r.0));
        }
    }
}
