//! Frame-of-reference + bit-packing for integers.
//!
//! Values are stored as `value - min` in the fewest bits that hold `max - min`, packed
//! little-endian into 64-bit words. Layout: `min: i64 LE`, `width: u8`, `count: u32 LE`,
//! then `ceil(count * width / 8)` bytes of packed deltas.

use super::CorruptData;

const HEADER_LEN: usize = 8 + 1 + 4;

/// Number of bits needed to represent `v` (0 for 0).
pub fn bits_needed(v: u64) -> u8 {
    (64 - v.leading_zeros()) as u8
}

fn packed_len(count: usize, width: u8) -> usize {
    (count * width as usize).div_ceil(8)
}

/// Appends the frame-of-reference encoding of `values` to `out`.
pub fn encode(values: &[i64], out: &mut Vec<u8>) {
    let count = u32::try_from(values.len()).expect("a vector holds fewer than 2^32 values");
    let (min, max) = match (values.iter().min(), values.iter().max()) {
        (Some(&lo), Some(&hi)) => (lo, hi),
        _ => (0, 0),
    };
    // Wrapping subtraction in u64 space is exact: max - min fits in 64 unsigned bits.
    let width = bits_needed((max as u64).wrapping_sub(min as u64));
    out.extend_from_slice(&min.to_le_bytes());
    out.push(width);
    out.extend_from_slice(&count.to_le_bytes());
    pack(
        values.iter().map(|&v| (v as u64).wrapping_sub(min as u64)),
        width,
        values.len(),
        out,
    );
}

fn pack(deltas: impl Iterator<Item = u64>, width: u8, count: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + packed_len(count, width), 0);
    if width == 0 {
        return;
    }
    let mut acc: u128 = 0;
    let mut acc_bits: u32 = 0;
    let mut pos = start;
    for d in deltas {
        acc |= (d as u128) << acc_bits;
        acc_bits += width as u32;
        while acc_bits >= 8 {
            out[pos] = acc as u8;
            pos += 1;
            acc >>= 8;
            acc_bits -= 8;
        }
    }
    if acc_bits > 0 {
        out[pos] = acc as u8;
    }
}

/// Decodes one encoded block from the front of `input`, appending the values to `out`.
/// Returns the number of bytes consumed.
pub fn decode(input: &[u8], out: &mut Vec<i64>) -> Result<usize, CorruptData> {
    let header = input
        .get(..HEADER_LEN)
        .ok_or(CorruptData("bit-packed header truncated"))?;
    let min = i64::from_le_bytes(header[0..8].try_into().unwrap());
    let width = header[8];
    let count = u32::from_le_bytes(header[9..13].try_into().unwrap()) as usize;
    if width > 64 {
        return Err(CorruptData("bit width above 64"));
    }
    let body_len = packed_len(count, width);
    let body = input
        .get(HEADER_LEN..HEADER_LEN + body_len)
        .ok_or(CorruptData("bit-packed body truncated"))?;
    out.reserve(count);
    if width == 0 {
        out.extend(std::iter::repeat_n(min, count));
        return Ok(HEADER_LEN);
    }
    let mask: u64 = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let mut acc: u128 = 0;
    let mut acc_bits: u32 = 0;
    let mut bytes = body.iter();
    for _ in 0..count {
        while acc_bits < width as u32 {
            // The body length was checked above, so the bytes cannot run out here.
            let b = *bytes.next().ok_or(CorruptData("bit-packed body short"))?;
            acc |= (b as u128) << acc_bits;
            acc_bits += 8;
        }
        let delta = (acc as u64) & mask;
        acc >>= width;
        acc_bits -= width as u32;
        out.push((min as u64).wrapping_add(delta) as i64);
    }
    Ok(HEADER_LEN + body_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(values: &[i64]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(values, &mut buf);
        let mut got = Vec::new();
        let used = decode(&buf, &mut got).expect("decodes");
        assert_eq!(used, buf.len());
        assert_eq!(got, values);
        buf
    }

    #[test]
    fn empty_and_constant_vectors() {
        assert_eq!(round_trip(&[]).len(), HEADER_LEN);
        // A constant vector needs no body at all.
        assert_eq!(round_trip(&[42; 1000]).len(), HEADER_LEN);
    }

    #[test]
    fn small_range_packs_tightly() {
        let values: Vec<i64> = (0..1024).map(|i| 1_000_000 + (i % 16)).collect();
        let buf = round_trip(&values);
        assert_eq!(buf.len(), HEADER_LEN + 1024 * 4 / 8);
    }

    #[test]
    fn full_range_extremes() {
        round_trip(&[i64::MIN, i64::MAX, 0, -1, 1]);
        round_trip(&[i64::MAX; 3]);
        round_trip(&[i64::MIN, i64::MIN + 1]);
    }

    #[test]
    fn every_width_round_trips() {
        for width in 0..=64u32 {
            let top = if width == 64 {
                u64::MAX
            } else {
                (1u64 << width).saturating_sub(1)
            };
            let values: Vec<i64> = (0..77u64)
                .map(|i| (top.wrapping_mul(i) / 76) as i64)
                .collect();
            round_trip(&values);
        }
    }

    #[test]
    fn truncated_input_is_corrupt_not_a_panic() {
        let values: Vec<i64> = (0..500).map(|i| i * 7919 % 1000).collect();
        let mut buf = Vec::new();
        encode(&values, &mut buf);
        for cut in 0..buf.len() {
            let mut out = Vec::new();
            assert!(
                decode(&buf[..cut], &mut out).is_err(),
                "cut at {cut} decoded"
            );
        }
    }

    #[test]
    fn bad_width_is_corrupt() {
        let mut buf = Vec::new();
        encode(&[1, 2, 3], &mut buf);
        buf[8] = 65;
        assert_eq!(
            decode(&buf, &mut Vec::new()),
            Err(CorruptData("bit width above 64"))
        );
    }
}
