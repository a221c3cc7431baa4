//! Short varlena images: the byte strings back to back, each after the 1-byte header
//! PostgreSQL gives a short varlena (`(1 + len) << 1 | 1`, SET_VARSIZE_SHORT on a
//! little-endian machine), for values of at most `MAX_LEN` bytes.
//!
//! A layout made for general compression, as plain is, which a vector of plain byte
//! strings is stored in when it compresses as well: decompressed, the payload is
//! already the values' Datum images, so a scan points a text row's Datum at its value
//! where it lies (`DecodedVector::keep_images`), with no copy into a buffer of values
//! nor into an image per row. Heap's tuples hold the same images. Other readers get the
//! values as any byte strings.

use super::base::{CorruptData, PhysicalKind, MAX_DECODED_BYTES};
use super::codec::{Analysis, Codec, Estimate, Open, Output, Tier, VectorValues};
use crate::storage::format::fallible;

/// The longest value a short header holds (VARATT_SHORT_MAX less the header).
pub const MAX_LEN: usize = 0x7F - 1;

/// Whether every value of `offsets` (ascending) fits a short header.
pub fn fits(offsets: &[u32]) -> bool {
    // (A loop without an early exit, which vectorizes.)
    offsets.windows(2).fold(0u32, |longest, w| longest.max(w[1] - w[0])) as usize <= MAX_LEN
}

/// Encoded size of `count` values of `data_len` bytes in all.
pub fn encoded_len(count: usize, data_len: usize) -> usize {
    count + data_len
}

/// Appends the byte strings `data[offsets[i]..offsets[i + 1]]`, each after its header.
/// Every value must fit (`fits`).
pub fn encode(offsets: &[u32], data: &[u8], out: &mut Vec<u8>) {
    debug_assert!(fits(offsets));
    let first = offsets.first().copied().unwrap_or(0) as usize;
    let last = offsets.last().copied().unwrap_or(0) as usize;
    fallible::reserve(out, offsets.len().saturating_sub(1) + last - first);
    for w in offsets.windows(2) {
        let value = &data[w[0] as usize..w[1] as usize];
        out.push(header(value.len()));
        out.extend_from_slice(value);
    }
}

/// The short varlena header of a value of `len` <= `MAX_LEN` bytes.
#[inline]
fn header(len: usize) -> u8 {
    (((len + 1) << 1) | 1) as u8
}

/// The size (header included) of the image whose header is `h`; None for a byte no
/// short image starts with (a 4-byte header's, or the 0x01 of a TOAST pointer).
#[inline(always)]
fn image_size(h: u8) -> Option<usize> {
    (h & 1 == 1 && h >= 3).then_some((h >> 1) as usize)
}

/// The value of the image at byte `at` of `input`, and the bytes the image takes.
#[inline(always)]
fn image_at(input: &[u8], at: usize) -> Result<(&[u8], usize), CorruptData> {
    let size = input.get(at).copied().and_then(image_size).ok_or(CorruptData("short image header"))?;
    let value = input.get(at + 1..at + size).ok_or(CorruptData("short images truncated"))?;
    Ok((value, size))
}

/// Appends where each of the `count` images at the front of `input` starts to
/// `starts`; returns the bytes they take.
pub fn decode_starts(input: &[u8], count: usize, starts: &mut Vec<u32>) -> Result<usize, CorruptData> {
    if input.len() > u32::MAX as usize {
        return Err(CorruptData("short images too large"));
    }
    starts.reserve(count);
    // Values of one length (codes, padded keys): every image at a fixed stride, checked
    // without the walk's chain of loads, each start depending on the one before.
    if let Some(size) = input.first().copied().and_then(image_size) {
        if count.checked_mul(size) == Some(input.len()) && input.iter().step_by(size).all(|&h| h == input[0])
        {
            starts.extend((0..count).map(|i| (i * size) as u32));
            return Ok(input.len());
        }
    }
    let mut at = 0usize;
    for _ in 0..count {
        let size = input.get(at).copied().and_then(image_size).ok_or(CorruptData("short image header"))?;
        starts.push(at as u32);
        at += size;
    }
    if at > input.len() {
        return Err(CorruptData("short images truncated"));
    }
    Ok(at)
}

/// Where the frames of `frames::compress_frames` end that hold `per_frame` of the
/// `count` images of `input` each (the last the rest).
pub fn frame_cuts(input: &[u8], count: usize, per_frame: usize) -> Result<Vec<usize>, CorruptData> {
    let mut starts = Vec::new();
    let end = decode_starts(input, count, &mut starts)?;
    let mut cuts: Vec<usize> =
        starts.iter().skip(per_frame).step_by(per_frame.max(1)).map(|&s| s as usize).collect();
    cuts.push(end);
    Ok(cuts)
}

/// The value of the `k`-th image at the front of `input` (a frame's images).
pub fn nth_value(input: &[u8], k: usize) -> Result<&[u8], CorruptData> {
    let mut at = 0usize;
    for _ in 0..k {
        at += input.get(at).copied().and_then(image_size).ok_or(CorruptData("short image header"))?;
    }
    image_at(input, at).map(|(value, _)| value)
}

/// The values of a frame's images (`input`, every byte of it), for
/// `frames::FrameSource::share`: `ends` from 0, a value's end after each; `data` the
/// values' bytes (both cleared first).
pub fn split_frame(input: &[u8], ends: &mut Vec<u32>, data: &mut Vec<u8>) -> Result<(), CorruptData> {
    ends.clear();
    data.clear();
    ends.push(0);
    let mut at = 0usize;
    while at < input.len() {
        let (value, size) = image_at(input, at)?;
        fallible::extend_from_slice(data, value);
        ends.push(data.len() as u32);
        at += size;
    }
    Ok(())
}

/// Decodes `count` values, appending their bytes to `data` and, after each value,
/// `data.len()` to `ends` (as `plain::decode_bytes`). Returns the bytes consumed.
pub fn decode_bytes(
    input: &[u8],
    count: usize,
    ends: &mut Vec<u32>,
    data: &mut Vec<u8>,
) -> Result<usize, CorruptData> {
    let mut at = 0usize;
    ends.reserve(count);
    fallible::reserve(data, input.len().saturating_sub(count));
    for _ in 0..count {
        let (value, size) = image_at(input, at)?;
        if data.len() + value.len() > MAX_DECODED_BYTES {
            return Err(CorruptData("decoded byte values too large"));
        }
        data.extend_from_slice(value);
        ends.push(data.len() as u32);
        at += size;
    }
    Ok(at)
}

/// The codec table's entry: byte strings, as a layout tried under general compression
/// (`vector`), never chosen by size.
pub static SHORT_IMAGES: Codec = Codec {
    kinds: &[PhysicalKind::Bytes],
    tier: Tier::ForCompression,
    decode_ns: 0.3,
    estimate: |a, _| match a {
        Analysis::Bytes { offsets, stats: s, .. } if s.max_len as usize <= MAX_LEN => {
            Estimate::size(encoded_len(offsets.len() - 1, s.data_len))
        }
        _ => None,
    },
    encode: |values, _, out| match values {
        VectorValues::Bytes { offsets, data } => encode(offsets, data, out),
        _ => unreachable!("short images encode byte strings"),
    },
    decode: |input, count, out, _| match out {
        Output::Bytes { offsets, data } => decode_bytes(input, count, offsets, data),
        _ => Err(CorruptData("short images hold byte strings")),
    },
    open: Open::Decoded,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::*;
    use proptest::prelude::*;

    fn rt(values: &[Vec<u8>]) -> Vec<u8> {
        let (offsets, data) = to_offsets(values);
        assert!(fits(&offsets));
        let mut buf = Vec::new();
        encode(&offsets, &data, &mut buf);
        assert_eq!(buf.len(), encoded_len(values.len(), data.len()));
        let (mut ends, mut got) = (vec![0], Vec::new());
        assert_eq!(decode_bytes(&buf, values.len(), &mut ends, &mut got), Ok(buf.len()));
        assert_eq!((&ends, &got), (&offsets, &data));
        // Each start is a short varlena image of its value: VARSIZE_1B, then the bytes.
        let mut starts = Vec::new();
        assert_eq!(decode_starts(&buf, values.len(), &mut starts), Ok(buf.len()));
        for (v, &s) in values.iter().zip(&starts) {
            let s = s as usize;
            assert_eq!(buf[s] & 1, 1, "VARATT_IS_1B");
            assert_eq!((buf[s] >> 1) as usize, v.len() + 1, "VARSIZE_1B");
            assert_eq!(&buf[s + 1..s + 1 + v.len()], &v[..]);
        }
        assert_truncations_fail(&buf, |b| decode_bytes(b, values.len(), &mut vec![0], &mut Vec::new()));
        assert_truncations_fail(&buf, |b| decode_starts(b, values.len(), &mut Vec::new()));
        // A frame's images split into its values (buffers cleared), and picked one by one.
        let (mut ends, mut got) = (vec![9], vec![9]);
        split_frame(&buf, &mut ends, &mut got).unwrap();
        assert_eq!((ends, got), (offsets, data));
        for (k, v) in values.iter().enumerate() {
            assert_eq!(nth_value(&buf, k).unwrap(), &v[..]);
        }
        // Cut short: refused, or fewer values (the last was empty, its image a header).
        if let Some(cut) = buf.len().checked_sub(1) {
            let mut ends = Vec::new();
            let short = split_frame(&buf[..cut], &mut ends, &mut Vec::new());
            assert!(short.is_err() || (ends.len() == values.len() && values.last().unwrap().is_empty()));
        }
        buf
    }

    #[test]
    fn edge_cases() {
        rt(&[]);
        rt(&[vec![]]);
        rt(&[b"a".to_vec(), vec![], b"Customer#000000012345 clerk 7".to_vec()]);
        rt(&[vec![0xFF; MAX_LEN], vec![1; MAX_LEN - 1]]);
        // One length (the fixed stride), and one length but for a value.
        let same: Vec<Vec<u8>> = (0..300u32).map(|i| format!("C{:05}", i).into_bytes()).collect();
        rt(&same);
        let mut other = same.clone();
        other[150] = b"C1234".to_vec();
        other[151] = b"C123456".to_vec();
        rt(&other);
        assert!(!fits(&[0, 3, 3 + MAX_LEN as u32 + 1]));
        assert!(fits(&[0, 3, 3 + MAX_LEN as u32]));
    }

    #[test]
    fn headers_no_short_image_has_are_corrupt() {
        // 0x01 starts a TOAST pointer, an even byte a 4-byte header.
        for bad in [[0x01u8, 0], [0x02, 0], [0x00, 0]] {
            assert!(decode_starts(&bad, 1, &mut Vec::new()).is_err());
            assert!(decode_bytes(&bad, 1, &mut vec![0], &mut Vec::new()).is_err());
            assert!(split_frame(&bad, &mut Vec::new(), &mut Vec::new()).is_err());
        }
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(96))]
        #[test]
        fn prop_round_trip(values in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..=MAX_LEN), 0..60), fl in flips()) {
            let buf = rt(&values);
            flip_never_panics(&buf, &fl, |b| decode_bytes(b, values.len(), &mut vec![0], &mut Vec::new()));
            flip_never_panics(&buf, &fl, |b| decode_starts(b, values.len(), &mut Vec::new()));
            flip_never_panics(&buf, &fl, |b| split_frame(b, &mut Vec::new(), &mut Vec::new()).map(|()| 0));
        }
    }
}
