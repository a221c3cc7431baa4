//! Byte-stream split for floats: byte k of every value is stored together
//! (`count` bytes of plane 0, then plane 1, ...). It saves nothing by itself, but the
//! sign/exponent planes become long runs of a few byte values, which lz4 and especially
//! zstd then compress far better than interleaved values.

use super::base::{CorruptData, Fixed};
use super::codec::{Analysis, Codec, Estimate, Open, Output, Tier, VectorValues, FLOATS, WRONG_KIND};

pub fn encoded_len<T: Fixed>(count: usize) -> usize {
    count * T::BYTES
}

pub fn encode<T: Fixed>(values: &[T], out: &mut Vec<u8>) {
    let n = values.len();
    let start = out.len();
    out.resize(start + n * T::BYTES, 0);
    let planes = &mut out[start..];
    for (i, v) in values.iter().enumerate() {
        let b = v.to_bits64().to_le_bytes();
        for (k, &byte) in b[..T::BYTES].iter().enumerate() {
            planes[k * n + i] = byte;
        }
    }
}

pub fn decode<T: Fixed>(input: &[u8], count: usize, out: &mut Vec<T>) -> Result<usize, CorruptData> {
    let len = count.checked_mul(T::BYTES).ok_or(CorruptData("byte-split values truncated"))?;
    let planes = input.get(..len).ok_or(CorruptData("byte-split values truncated"))?;
    out.reserve(count);
    out.extend((0..count).map(|i| {
        let mut b = [0u8; 8];
        for (k, byte) in b[..T::BYTES].iter_mut().enumerate() {
            *byte = planes[k * count + i];
        }
        T::from_bits64(u64::from_le_bytes(b))
    }));
    Ok(len)
}

/// The codec table's entry: floats, as the layout tried under general compression.
pub static BYTE_SPLIT: Codec = Codec {
    kinds: FLOATS,
    tier: Tier::ForCompression,
    decode_ns: 2.6,
    estimate: |a, _| match a {
        Analysis::Float32(v, _) => Estimate::size(encoded_len::<f32>(v.len())),
        Analysis::Float64(v, _) => Estimate::size(encoded_len::<f64>(v.len())),
        _ => None,
    },
    encode: |values, _, out| match values {
        VectorValues::Float32(v) => encode(v, out),
        VectorValues::Float64(v) => encode(v, out),
        _ => unreachable!("byte-stream split encodes floats"),
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
        assert_eq!(buf.len(), encoded_len::<T>(values.len()));
        let mut got = Vec::new();
        assert_eq!(decode(&buf, values.len(), &mut got), Ok(buf.len()));
        assert!(bits_eq(&got, values));
        assert_truncations_fail(&buf, |b| decode::<T>(b, values.len(), &mut Vec::new()));
        buf
    }

    #[test]
    fn edge_cases() {
        rt::<f64>(&[]);
        rt(&[1.5f64]);
        let buf = rt(&[1.0f64, 2.0]);
        // Planes: the two low bytes first, the exponent bytes last.
        assert_eq!(&buf[14..], &[0x3F, 0x40]);
        rt(&[f64::NAN, -0.0, f64::from_bits(0xFFF0_0000_0000_0001), f64::MIN_POSITIVE / 3.0]);
        rt(&[f32::NAN, -0.0f32, f32::NEG_INFINITY]);
        rt(&vec![0.1f64; 65536]);
        rt(&[i64::MIN, i64::MAX]);
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(f in proptest::collection::vec(any_f64(), 0..200),
                           g in proptest::collection::vec(any_f32(), 0..200)) {
            rt(&f);
            rt(&g);
        }
    }
}
