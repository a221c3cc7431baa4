//! FastLanes bit packing (Afroozeh & Boncz, VLDB 2023, through the `fastlanes` crate):
//! 1024 integers per block, packed at one width in an interleaved order that lets every
//! lane of a SIMD register unpack its own values with the same shifts, so unpacking runs
//! at several values per cycle instead of one field at a time.
//!
//! A stream of `count` values is `blocks(count)` blocks of `128 * width` bytes each, the
//! last one padded with zeros; the words are stored little-endian. Unpacking copies a
//! block into aligned words first (the stored bytes have no alignment). Pure.

use super::base::CorruptData;
use crate::storage::format::copy;
use fastlanes::BitPacking;

/// Values per block.
pub const BLOCK: usize = 1024;

/// Blocks for `count` values.
pub fn blocks(count: usize) -> usize {
    count.div_ceil(BLOCK)
}

/// Bytes of one block of values packed at `width` bits.
pub fn block_len(width: u8) -> usize {
    BLOCK / 8 * width as usize
}

/// Bytes of `count` values packed at `width` bits.
pub fn packed_len(count: usize, width: u8) -> usize {
    blocks(count) * block_len(width)
}

/// Appends `count` values (`value(i)`, masked to `width` bits) packed at `width` bits
/// (at most 64).
pub fn pack_u64(count: usize, width: u8, value: impl Fn(usize) -> u64, out: &mut Vec<u8>) {
    assert!(width <= 64);
    let w = width as usize;
    let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
    let mut block = [0u64; BLOCK];
    let mut packed = vec![0u64; BLOCK / 64 * w];
    for b in 0..blocks(count) {
        for (j, v) in block.iter_mut().enumerate() {
            let i = b * BLOCK + j;
            *v = if i < count { value(i) & mask } else { 0 };
        }
        // SAFETY: `block` holds 1024 values and `packed` 1024 * w / 64 words, the lengths
        // `unchecked_pack` requires; `w <= 64` (asserted).
        unsafe { u64::unchecked_pack(w, &block, &mut packed) };
        packed.iter().for_each(|p| out.extend_from_slice(&p.to_le_bytes()));
    }
}

/// Appends `count` values (at most `width` bits each, at most 8) packed at `width` bits.
pub fn pack_u8(count: usize, width: u8, value: impl Fn(usize) -> u8, out: &mut Vec<u8>) {
    assert!(width <= 8);
    let w = width as usize;
    let mut block = [0u8; BLOCK];
    let mut packed = vec![0u8; BLOCK / 8 * w];
    for b in 0..blocks(count) {
        for (j, v) in block.iter_mut().enumerate() {
            let i = b * BLOCK + j;
            *v = if i < count { value(i) } else { 0 };
        }
        // SAFETY: as in `pack_u64`, with 1024 * w / 8 bytes of output and `w <= 8`.
        unsafe { u8::unchecked_pack(w, &block, &mut packed) };
        out.extend_from_slice(&packed);
    }
}

/// Unpacks one block of `width`-bit values (`bytes`: exactly `block_len(width)`) into
/// `out`, through `words` (aligned space kept by the caller between blocks).
pub fn unpack_u64(
    bytes: &[u8],
    width: u8,
    words: &mut Vec<u64>,
    out: &mut [u64; BLOCK],
) -> Result<(), CorruptData> {
    let w = width as usize;
    if w > 64 || bytes.len() != block_len(width) {
        return Err(CorruptData("lane-packed block has the wrong size"));
    }
    words.clear();
    copy::extend_from_le_words(words, bytes);
    // SAFETY: `words` holds 1024 * w / 64 words and `out` 1024 values, as
    // `unchecked_unpack` requires, and `w <= 64` (checked above).
    unsafe { u64::unchecked_unpack(w, words, out) };
    Ok(())
}

/// Unpacks one block of `width`-bit values, `width <= 8` (`bytes`: exactly
/// `block_len(width)`), into `out`.
pub fn unpack_u8(bytes: &[u8], width: u8, out: &mut [u8; BLOCK]) -> Result<(), CorruptData> {
    let w = width as usize;
    if w > 8 || bytes.len() != block_len(width) {
        return Err(CorruptData("lane-packed block has the wrong size"));
    }
    // SAFETY: `bytes` holds 1024 * w / 8 bytes (u8 needs no alignment) and `out`
    // 1024 values, and `w <= 8` (checked above).
    unsafe { u8::unchecked_unpack(w, bytes, out) };
    Ok(())
}

/// Where value `index` (< 1024) of a block packed at `width` bits in `t`-bit words
/// (8 or 64) lies: the byte offset in the block of the word holding its first bit,
/// the bit it starts at in that word, and, when it runs on into the next word of its
/// lane, that word's byte offset. The inverse of the crate's interleaved order, so a
/// single value is read with one or two loads instead of unpacking its block.
pub fn field(t: usize, width: u8, index: usize) -> (usize, u32, Option<usize>) {
    debug_assert!((t == 8 || t == 64) && index < BLOCK && width as usize <= t);
    let lanes = BLOCK / t;
    let lane = index % lanes;
    // Rows of a lane are stored in the order FL_ORDER interleaves them (groups of 8).
    let s = index / 128;
    let o = fastlanes::FL_ORDER[(index % 128 - lane) / 16];
    let row = o * 8 + s;
    let start_bit = row * width as usize;
    let (word, shift) = (start_bit / t, start_bit % t);
    let bytes = t / 8;
    let next = (shift + width as usize > t).then(|| (lanes * (word + 1) + lane) * bytes);
    ((lanes * word + lane) * bytes, shift as u32, next)
}

/// The `width`-bit value `field` found starting at bit `shift` of word `lo` (of `t`
/// bits), continued in `hi`.
pub fn join(t: usize, width: u8, lo: u64, hi: u64, shift: u32) -> u64 {
    if width == 0 {
        return 0;
    }
    let mut v = lo >> shift;
    if shift > 0 && (t as u32 - shift) < width as u32 {
        v |= hi << (t as u32 - shift);
    }
    if width == 64 {
        v
    } else {
        v & ((1u64 << width) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_round_trips_with_a_partial_last_block() {
        let count = 2500;
        for width in 0..=64u8 {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            let value = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
            let mut out = Vec::new();
            pack_u64(count, width, value, &mut out);
            assert_eq!(out.len(), packed_len(count, width));
            let mut words = Vec::new();
            let mut block = [0u64; BLOCK];
            for b in 0..blocks(count) {
                let bytes = &out[b * block_len(width)..(b + 1) * block_len(width)];
                unpack_u64(bytes, width, &mut words, &mut block).unwrap();
                for (j, &v) in block.iter().enumerate() {
                    let i = b * BLOCK + j;
                    assert_eq!(v, if i < count { value(i) } else { 0 }, "width {width}, value {i}");
                }
            }
        }
        for width in 0..=8u8 {
            let value = |i: usize| ((i * 7) % (1 << width)) as u8;
            let mut out = Vec::new();
            pack_u8(count, width, value, &mut out);
            assert_eq!(out.len(), packed_len(count, width));
            let mut block = [0u8; BLOCK];
            for b in 0..blocks(count) {
                unpack_u8(&out[b * block_len(width)..(b + 1) * block_len(width)], width, &mut block).unwrap();
                for (j, &v) in block.iter().enumerate().filter(|(j, _)| b * BLOCK + j < count) {
                    assert_eq!(v, value(b * BLOCK + j));
                }
            }
        }
    }

    /// Every value of a block packed at `width` bits in `t`-bit words (`packed`), read
    /// alone through `field` and `join`, is `value(i)`.
    fn check_single(t: usize, width: u8, packed: &[u8], value: impl Fn(usize) -> u64) {
        let read = |at: usize| {
            let mut w = [0u8; 8];
            if !packed.is_empty() {
                w[..t / 8].copy_from_slice(&packed[at..at + t / 8]);
            } // else width 0: nothing stored
            u64::from_le_bytes(w)
        };
        for i in 0..BLOCK {
            let (lo, shift, hi) = field(t, width, i);
            let hi = hi.map_or(0, read);
            assert_eq!(
                join(t, width, read(lo), hi, shift),
                value(i),
                "{t}-bit words, width {width}, value {i}"
            );
        }
    }

    #[test]
    fn single_values_are_found_where_unpacking_puts_them() {
        for width in 0..=64u8 {
            let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
            let value = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) & mask;
            let mut out = Vec::new();
            pack_u64(BLOCK, width, value, &mut out);
            check_single(64, width, &out, value);
        }
        for width in 0..=8u8 {
            let value = |i: usize| ((i * 7 + i / 5) % (1 << width)) as u8;
            let mut out = Vec::new();
            pack_u8(BLOCK, width, value, &mut out);
            check_single(8, width, &out, |i| value(i) as u64);
        }
    }

    #[test]
    fn a_block_of_the_wrong_size_is_corrupt() {
        let mut block = [0u64; BLOCK];
        assert!(unpack_u64(&[0; 10], 3, &mut Vec::new(), &mut block).is_err());
        assert!(unpack_u64(&[0; 128 * 65], 65, &mut Vec::new(), &mut block).is_err());
        let mut codes = [0u8; BLOCK];
        assert!(unpack_u8(&[0; 128 * 9], 9, &mut codes).is_err());
    }
}
