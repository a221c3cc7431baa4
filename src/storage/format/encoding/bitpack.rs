//! Frame-of-reference + bit-packing for integers.
//!
//! Values are stored as `value - min` in the fewest bits that hold `max - min`, packed
//! little-endian into 64-bit words. Layout: `min: i64 LE`, `width: u8`, `count: u32 LE`,
//! then `ceil(count * width / 8)` bytes of packed deltas.
//!
//! The other codecs use the count-less variant (`encode_for` / `decode_for`: the same
//! without `count`, which the caller knows) for their sub-blocks, and the raw
//! `pack` / `unpack` and `BitWriter` / `BitReader` primitives, which all share one bit
//! order: field i starts at bit `sum of earlier widths`, LSB first.

use super::base::{CorruptData, MAX_VECTOR_ROWS};
use super::codec::{
    plan_of, Analysis, Codec, Estimate, InPlace, Open, Output, Tier, VectorValues, INTS, WRONG_KIND,
};
use std::mem::MaybeUninit;

const HEADER_LEN: usize = 8 + 1 + 4;

/// Length of a count-less FOR block header (`min: i64 LE`, `width: u8`).
pub const FOR_HEADER_LEN: usize = 8 + 1;

/// Number of bits needed to represent `v` (0 for 0).
pub fn bits_needed(v: u64) -> u8 {
    (64 - v.leading_zeros()) as u8
}

/// Bytes that `count` values of `width` bits occupy when packed.
pub fn packed_len(count: usize, width: u8) -> usize {
    (count * width as usize).div_ceil(8)
}

/// Frame-of-reference bit width for values spanning `min..=max`.
pub fn for_width(min: i64, max: i64) -> u8 {
    // Wrapping subtraction in u64 space is exact: max - min fits in 64 unsigned bits.
    bits_needed((max as u64).wrapping_sub(min as u64))
}

/// Size of a count-less FOR block (see `encode_for`) for `count` values in `min..=max`.
pub fn for_encoded_len(count: usize, min: i64, max: i64) -> usize {
    FOR_HEADER_LEN + packed_len(count, for_width(min, max))
}

fn min_max(values: &[i64]) -> (i64, i64) {
    values.iter().fold(
        match values.first() {
            Some(&v) => (v, v),
            None => (0, 0),
        },
        |(lo, hi), &v| (lo.min(v), hi.max(v)),
    )
}

/// Appends the frame-of-reference encoding of `values` to `out`.
pub fn encode(values: &[i64], out: &mut Vec<u8>) {
    let count = u32::try_from(values.len()).expect("a vector holds fewer than 2^32 values");
    let (min, max) = min_max(values);
    let width = for_width(min, max);
    out.extend_from_slice(&min.to_le_bytes());
    out.push(width);
    out.extend_from_slice(&count.to_le_bytes());
    pack(values.iter().map(|&v| (v as u64).wrapping_sub(min as u64)), width, values.len(), out);
}

/// Decodes one encoded block from the front of `input`, appending the values to `out`.
/// Returns the number of bytes consumed. Blocks claiming more than `MAX_VECTOR_ROWS`
/// values are rejected, so a corrupt count cannot trigger a huge allocation.
pub fn decode(input: &[u8], out: &mut Vec<i64>) -> Result<usize, CorruptData> {
    let header = input.get(..HEADER_LEN).ok_or(CorruptData("bit-packed header truncated"))?;
    let min = i64::from_le_bytes(header[0..8].try_into().unwrap());
    let width = header[8];
    let count = u32::from_le_bytes(header[9..13].try_into().unwrap()) as usize;
    if width > 64 {
        return Err(CorruptData("bit width above 64"));
    }
    if count > MAX_VECTOR_ROWS as usize {
        return Err(CorruptData("bit-packed count too large"));
    }
    let body_len = packed_len(count, width);
    let body =
        input.get(HEADER_LEN..HEADER_LEN + body_len).ok_or(CorruptData("bit-packed body truncated"))?;
    out.reserve(count);
    unpack(body, width, count, |d| out.push((min as u64).wrapping_add(d) as i64))?;
    Ok(HEADER_LEN + body_len)
}

/// Appends a count-less FOR block: `min: i64 LE`, `width: u8`, packed `value - min`.
/// The reader must know the count (see `decode_for`).
pub fn encode_for(values: &[i64], out: &mut Vec<u8>) {
    let (min, max) = min_max(values);
    encode_for_iter(min, max, values.iter().copied(), values.len(), out);
}

/// Like `encode_for` for values produced by an iterator whose bounds the caller already
/// knows (saves a pass). `values` must yield exactly `count` values within `min..=max`.
pub fn encode_for_iter(
    min: i64,
    max: i64,
    values: impl IntoIterator<Item = i64>,
    count: usize,
    out: &mut Vec<u8>,
) {
    let width = for_width(min, max);
    out.extend_from_slice(&min.to_le_bytes());
    out.push(width);
    pack(values.into_iter().map(|v| (v as u64).wrapping_sub(min as u64)), width, count, out);
}

/// A FOR block of `count` values at the front of an input: its minimum, its field
/// width, its packed fields, and the bytes it takes in all.
struct ForBlock<'a> {
    min: u64,
    width: u8,
    body: &'a [u8],
    used: usize,
}

/// Reads the header of a FOR block of `count` values and finds its fields.
fn for_block(input: &[u8], count: usize) -> Result<ForBlock<'_>, CorruptData> {
    let header = input.get(..FOR_HEADER_LEN).ok_or(CorruptData("FOR header truncated"))?;
    let min = i64::from_le_bytes(header[0..8].try_into().unwrap()) as u64;
    let width = header[8];
    if width > 64 {
        return Err(CorruptData("bit width above 64"));
    }
    let used = FOR_HEADER_LEN + packed_len(count, width);
    let body = input.get(FOR_HEADER_LEN..used).ok_or(CorruptData("FOR body truncated"))?;
    Ok(ForBlock { min, width, body, used })
}

/// Decodes a count-less FOR block of `count` values from the front of `input`, calling
/// `f` with each value in order. Returns the bytes consumed.
pub fn decode_for(input: &[u8], count: usize, mut f: impl FnMut(i64)) -> Result<usize, CorruptData> {
    let ForBlock { min, width, body, used } = for_block(input, count)?;
    unpack(body, width, count, |d| f(min.wrapping_add(d) as i64))?;
    Ok(used)
}

/// `decode_for` for a caller that needs only the values at `rows` (ascending, each
/// `< count`): calls `f(row, value)` for those alone, reading each field where it lies.
/// Returns the bytes the whole block takes, as `decode_for`.
pub fn decode_for_at(
    input: &[u8],
    count: usize,
    rows: &[u32],
    mut f: impl FnMut(usize, i64),
) -> Result<usize, CorruptData> {
    let ForBlock { min, width, body, used } = for_block(input, count)?;
    let mask = low_mask(width as u32);
    for &r in rows {
        let r = r as usize;
        if r >= count {
            return Err(CorruptData("row beyond a bit-packed block"));
        }
        let bit = r * width as usize;
        let (byte, shift) = (bit / 8, (bit % 8) as u32);
        let field = if width == 0 {
            0
        } else if width <= 56 && byte + 8 <= body.len() {
            // The field lies in the 8 bytes from its first byte: one unaligned load.
            (u64::from_le_bytes(body[byte..byte + 8].try_into().unwrap()) >> shift) & mask
        } else {
            // A field spans at most 9 bytes (64 bits at a shift of up to 7).
            let end = (byte + 9).min(body.len());
            let mut b = [0u8; 16];
            b[..end - byte].copy_from_slice(&body[byte..end]);
            (u128::from_le_bytes(b) >> shift) as u64 & mask
        };
        f(r, min.wrapping_add(field) as i64);
    }
    Ok(used)
}

/// `decode_for` appending to a vector.
pub fn decode_for_into(input: &[u8], count: usize, out: &mut Vec<i64>) -> Result<usize, CorruptData> {
    decode_for_map(input, count, out, |v| v)
}

/// `decode_for` appending `f(value)` to a vector.
pub fn decode_for_map<T: Copy + Default>(
    input: &[u8],
    count: usize,
    out: &mut Vec<T>,
    f: impl Fn(i64) -> T,
) -> Result<usize, CorruptData> {
    let ForBlock { min, width, body, used } = for_block(input, count)?;
    let start = out.len();
    // Written straight into the spare capacity: zeroing it first cost as much as a
    // narrow vector's unpacking.
    out.reserve(count);
    unpack_offsets(body, width, min, &mut out.spare_capacity_mut()[..count], f);
    // SAFETY: `unpack_offsets` wrote each of the `count` slots after `start` (every path
    // of it writes its whole `out`), within the capacity reserved above.
    unsafe { out.set_len(start + count) };
    Ok(used)
}

/// Writes `f(base + field i)` into `out[i]` for the `out.len()` fields of `width` bits
/// in `body` (LSB first; `body` holds `packed_len(out.len(), width)` bytes), every slot
/// of `out` (a field past a short body reads as 0: `for_block` checks the length, so
/// none is). Each field
/// of up to 56 bits is one unaligned 8-byte read and a shift: no branch, no
/// dependency between fields (the compiler unrolls and vectorises it); the last
/// fields, whose 8 bytes would pass the end, are read from a padded copy.
fn unpack_offsets<T: Copy>(
    body: &[u8],
    width: u8,
    base: u64,
    out: &mut [MaybeUninit<T>],
    f: impl Fn(i64) -> T,
) {
    let count = out.len();
    if count == 0 {
        // `f` is asked for no value (a caller may count what it is asked).
        return;
    }
    if width == 0 {
        out.fill(MaybeUninit::new(f(base as i64)));
        return;
    }
    if width > 56 {
        let mut i = 0;
        let _ = unpack(body, width, count, |d| {
            out[i].write(f(base.wrapping_add(d) as i64));
            i += 1;
        });
        out[i..].fill(MaybeUninit::new(f(base as i64)));
        return;
    }
    let w = width as usize;
    let mask = low_mask(width as u32);
    let window = |bytes: &[u8], i: usize| {
        let bit = i * w;
        let word = u64::from_le_bytes(bytes[bit / 8..bit / 8 + 8].try_into().unwrap());
        f(base.wrapping_add((word >> (bit % 8)) & mask) as i64)
    };
    // Field i's window starts at byte i * w / 8: those ending within the body.
    let fast = if body.len() >= 8 { (((body.len() - 7) * 8 - 1) / w + 1).min(count) } else { 0 };
    // Blocks of 8 fields (w bytes) with the width a constant: every shift and offset
    // in the block is one, and the block unrolls into straight loads and stores.
    let blocks = with_width!(w, W => unpack_blocks::<W, T>(body, base, &mut out[..fast], &f));
    for (i, o) in out[..fast].iter_mut().enumerate().skip(blocks * 8) {
        o.write(window(body, i));
    }
    if fast < count {
        // The tail, from a copy of the body's last bytes padded with zeros.
        let from = fast * w / 8;
        let mut padded = [0u8; 64];
        let tail = &body[from..];
        padded[..tail.len()].copy_from_slice(tail);
        let shift = from * 8;
        for (i, o) in out.iter_mut().enumerate().skip(fast) {
            let bit = i * w - shift;
            let word = u64::from_le_bytes(padded[bit / 8..bit / 8 + 8].try_into().unwrap());
            o.write(f(base.wrapping_add((word >> (bit % 8)) & mask) as i64));
        }
    }
}

/// `$body` with `$w` (1..=56, a runtime width) as the const generic `$W`.
macro_rules! with_width {
    ($w:expr, $W:ident => $body:expr) => {
        with_width!(@ $w, $W, $body, [1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
            24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52
            53 54 55 56])
    };
    (@ $w:expr, $W:ident, $body:expr, [$($n:literal)*]) => {
        match $w {
            $($n => {
                const $W: usize = $n;
                $body
            })*
            _ => 0,
        }
    };
}
use with_width;

/// Unpacks whole blocks of 8 fields of `W` bits (W bytes each) from the front of
/// `out` (`out.len()` fields whose 8-byte windows lie within `body`), each block read
/// from one slice of `W + 8` bytes; returns how many blocks.
#[inline(never)]
fn unpack_blocks<const W: usize, T: Copy>(
    body: &[u8],
    base: u64,
    out: &mut [MaybeUninit<T>],
    f: &impl Fn(i64) -> T,
) -> usize {
    let mask = (1u64 << W) - 1;
    // Block b reads bytes b * W .. b * W + W + 8.
    let blocks = if body.len() >= W + 8 { ((body.len() - W - 8) / W + 1).min(out.len() / 8) } else { 0 };
    for (b, o) in out[..blocks * 8].chunks_exact_mut(8).enumerate() {
        let bytes = &body[b * W..b * W + W + 8];
        for (j, o) in o.iter_mut().enumerate() {
            let bit = j * W;
            let word = u64::from_le_bytes(bytes[bit / 8..bit / 8 + 8].try_into().unwrap());
            o.write(f(base.wrapping_add((word >> (bit % 8)) & mask) as i64));
        }
    }
    blocks
}

#[inline]
fn low_mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

#[inline]
fn shr(v: u64, n: u32) -> u64 {
    if n >= 64 {
        0
    } else {
        v >> n
    }
}

/// Packs `count` values of `width` bits each (higher bits are masked off), LSB first:
/// value `i` occupies bits `i*width .. (i+1)*width` of the little-endian byte string.
/// Appends exactly `packed_len(count, width)` bytes.
pub fn pack(values: impl IntoIterator<Item = u64>, width: u8, count: usize, out: &mut Vec<u8>) {
    let start = out.len();
    let need = packed_len(count, width);
    if width == 0 {
        return;
    }
    out.reserve(need);
    let mut w = BitWriter::new(out);
    let width = width as u32;
    let mut written = 0usize;
    for v in values.into_iter().take(count) {
        w.write(v, width);
        written += 1;
    }
    w.finish();
    // Callers pass the true count; a short iterator would leave the block too short.
    debug_assert_eq!(written, count);
    out.resize(start + need, 0);
}

/// Unpacks `count` values of `width` bits from `body` (the layout `pack` writes),
/// calling `f` with each. Fails if `body` is shorter than `packed_len(count, width)`.
pub fn unpack(body: &[u8], width: u8, count: usize, mut f: impl FnMut(u64)) -> Result<(), CorruptData> {
    if width > 64 {
        return Err(CorruptData("bit width above 64"));
    }
    let body = body.get(..packed_len(count, width)).ok_or(CorruptData("bit-packed body truncated"))?;
    if width == 0 {
        (0..count).for_each(|_| f(0));
        return Ok(());
    }
    let width = width as u32;
    let mask = low_mask(width);
    if width <= 56 {
        // Narrow fields (dictionary codes): 8 of them fill `width` bytes, read with one
        // load and taken apart by shifts, unrolled.
        let mut done = 0;
        if width <= 8 {
            let w = width as usize;
            let groups = if body.len() >= 8 { ((body.len() - 8) / w + 1).min(count / 8) } else { 0 };
            for g in 0..groups {
                let word = u64::from_le_bytes(body[g * w..g * w + 8].try_into().expect("8 bytes"));
                for k in 0..8 {
                    f((word >> (k as u32 * width)) & mask);
                }
            }
            done = groups * 8;
        }
        // Each field lies in the 8 bytes from its first byte: one unaligned load and a
        // shift per value, no branch on where the field ends (dictionary codes and
        // frame-of-reference integers, the scan's hottest decode loops).
        let fast = if body.len() >= 8 { ((body.len() - 8) * 8 / width as usize + 1).min(count) } else { 0 };
        for i in done.min(fast)..fast {
            let bit = i * width as usize;
            let word = u64::from_le_bytes(body[bit / 8..bit / 8 + 8].try_into().expect("8 bytes"));
            f((word >> (bit % 8)) & mask);
        }
        for i in fast.max(done)..count {
            let bit = i * width as usize;
            let mut b = [0u8; 8];
            let tail = &body[bit / 8..];
            b[..tail.len().min(8)].copy_from_slice(&tail[..tail.len().min(8)]);
            f((u64::from_le_bytes(b) >> (bit % 8)) & mask);
        }
        return Ok(());
    }
    // Word-at-a-time refill: one branch per value instead of a byte loop.
    let mut words = body.chunks(8).map(|c| {
        let mut b = [0u8; 8];
        b[..c.len()].copy_from_slice(c);
        u64::from_le_bytes(b)
    });
    let mut acc = 0u64;
    let mut bits = 0u32;
    for _ in 0..count {
        if bits >= width {
            f(acc & mask);
            acc = shr(acc, width);
            bits -= width;
        } else {
            // The body length was checked above, so the words cannot run out here.
            let next = words.next().unwrap_or(0);
            f((acc | (next << bits)) & mask);
            let used = width - bits;
            acc = shr(next, used);
            bits = 64 - used;
        }
    }
    Ok(())
}

/// Appends bit fields LSB first (the layout `pack` and `BitReader` use).
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    bits: u32,
}

impl<'a> BitWriter<'a> {
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out, acc: 0, bits: 0 }
    }

    /// Writes the low `n` bits of `v` (`n <= 64`).
    #[inline]
    pub fn write(&mut self, v: u64, n: u32) {
        debug_assert!(n <= 64);
        if n == 0 {
            return;
        }
        let v = v & low_mask(n);
        self.acc |= v << self.bits;
        self.bits += n;
        if self.bits >= 64 {
            self.out.extend_from_slice(&self.acc.to_le_bytes());
            self.bits -= 64;
            // The top `bits` bits of v did not fit into the flushed word.
            self.acc = shr(v, n - self.bits);
        }
    }

    /// Flushes the partial last byte; the stream then ends on a byte boundary.
    pub fn finish(self) {
        let n = self.bits.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..n]);
    }
}

/// Reads bit fields written by `BitWriter`, failing instead of reading past the end.
pub struct BitReader<'a> {
    data: &'a [u8],
    next: usize,
    acc: u64,
    bits: u32,
}

impl<'a> BitReader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, next: 0, acc: 0, bits: 0 }
    }

    /// Reads `n <= 64` bits.
    #[inline]
    pub fn read(&mut self, n: u32) -> Result<u64, CorruptData> {
        debug_assert!(n <= 64);
        if n <= self.bits {
            let v = self.acc & low_mask(n);
            self.acc = shr(self.acc, n);
            self.bits -= n;
            return Ok(v);
        }
        let rest = &self.data[self.next..];
        let take = rest.len().min(8);
        if self.bits + take as u32 * 8 < n {
            return Err(CorruptData("bit stream truncated"));
        }
        let mut b = [0u8; 8];
        b[..take].copy_from_slice(&rest[..take]);
        let word = u64::from_le_bytes(b);
        self.next += take;
        let v = (self.acc | (word << self.bits)) & low_mask(n);
        let used = n - self.bits;
        self.acc = shr(word, used);
        self.bits = take as u32 * 8 - used;
        Ok(v)
    }

    #[inline]
    pub fn read_bit(&mut self) -> Result<bool, CorruptData> {
        Ok(self.read(1)? != 0)
    }

    /// Bytes consumed, counting a partially read byte as consumed.
    pub fn bytes_consumed(&self) -> usize {
        // Whole unread bytes still buffered in `acc` were not consumed.
        self.next - (self.bits / 8) as usize
    }
}

/// The codec table's entry: integers, read in place.
pub static FRAME_OF_REFERENCE: Codec = Codec {
    kinds: INTS,
    tier: Tier::Cheap,
    decode_ns: 0.3,
    estimate: |a, _| match a {
        Analysis::Int(v, s) => Estimate::planned(for_encoded_len(v.len(), s.min, s.max), (s.min, s.max)),
        _ => None,
    },
    encode: |values, plan, out| match values {
        VectorValues::Int(v) => {
            let &(min, max) = plan_of::<(i64, i64)>(plan);
            encode_for_iter(min, max, v.iter().copied(), v.len(), out)
        }
        _ => unreachable!("frame of reference encodes integers"),
    },
    decode: |input, count, out, _| match out {
        Output::Int(v) => decode_for_into(input, count, v),
        _ => Err(WRONG_KIND),
    },
    open: Open::InPlace(|_, head, len, count| {
        if count == 0 {
            if len != 0 {
                return Err(CorruptData("vector payload length mismatch"));
            }
            return Ok(InPlace::Bits { skip: FOR_HEADER_LEN, min: 0, width: 0 });
        }
        let head = head.get(..FOR_HEADER_LEN).ok_or(CorruptData("FOR header truncated"))?;
        let min = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let width = head[8];
        if width > 64 {
            return Err(CorruptData("bit width above 64"));
        }
        if FOR_HEADER_LEN + packed_len(count, width) != len {
            return Err(CorruptData("vector payload length mismatch"));
        }
        Ok(InPlace::Bits { skip: FOR_HEADER_LEN, min, width })
    }),
};

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
    fn fields_at_chosen_rows_read_as_the_whole_block_decodes_them() {
        for (min, max) in
            [(0i64, 0i64), (-5, 2), (0, 6), (100, 100 + 255), (-(1 << 40), 1 << 40), (i64::MIN, i64::MAX)]
        {
            let values: Vec<i64> = (0..300i64)
                .map(|i| {
                    min.wrapping_add(
                        ((i * 7919) as u64 % (max.wrapping_sub(min) as u64).saturating_add(1)) as i64,
                    )
                })
                .collect();
            let mut buf = Vec::new();
            encode_for(&values, &mut buf);
            let rows: Vec<u32> = (0..300).filter(|r| r % 7 == 3 || *r == 299).collect();
            let mut got = Vec::new();
            assert_eq!(decode_for_at(&buf, 300, &rows, |r, v| got.push((r, v))), Ok(buf.len()));
            let want: Vec<(usize, i64)> = rows.iter().map(|&r| (r as usize, values[r as usize])).collect();
            assert_eq!(got, want, "{min} {max}");
            assert!(decode_for_at(&buf, 300, &[300], |_, _| {}).is_err());
            assert!(
                decode_for_at(&buf[..buf.len() - 1], 300, &[0], |_, _| {}).is_err()
                    || buf.len() == FOR_HEADER_LEN
            );
        }
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
            let top = if width == 64 { u64::MAX } else { (1u64 << width).saturating_sub(1) };
            let values: Vec<i64> = (0..77u64).map(|i| (top.wrapping_mul(i) / 76) as i64).collect();
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
            assert!(decode(&buf[..cut], &mut out).is_err(), "cut at {cut} decoded");
        }
    }

    #[test]
    fn bad_width_is_corrupt() {
        let mut buf = Vec::new();
        encode(&[1, 2, 3], &mut buf);
        buf[8] = 65;
        assert_eq!(decode(&buf, &mut Vec::new()), Err(CorruptData("bit width above 64")));
    }

    #[test]
    fn huge_count_is_rejected() {
        let mut buf = Vec::new();
        encode(&[7], &mut buf);
        buf[8] = 0;
        buf[9..13].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&buf, &mut Vec::new()).is_err());
    }

    #[test]
    fn for_blocks_round_trip_every_width() {
        for width in 0..=64u32 {
            let top = if width == 64 { u64::MAX } else { (1u64 << width).saturating_sub(1) };
            for count in [0usize, 1, 7, 8, 9, 63, 64, 65, 130] {
                let values: Vec<i64> =
                    (0..count as u64).map(|i| (top.wrapping_mul(i) / 129) as i64 - 5).collect();
                let mut buf = Vec::new();
                encode_for(&values, &mut buf);
                let (lo, hi) = min_max(&values);
                assert_eq!(buf.len(), for_encoded_len(count, lo, hi));
                let mut got = Vec::new();
                assert_eq!(decode_for_into(&buf, count, &mut got), Ok(buf.len()));
                assert_eq!(got, values);
                for cut in 0..buf.len() {
                    assert!(decode_for_into(&buf[..cut], count, &mut Vec::new()).is_err());
                }
            }
        }
    }

    #[test]
    fn bit_writer_reader_mixed_widths() {
        let fields: Vec<(u64, u32)> = (0..500u64)
            .map(|i| {
                let n = (i * 37 % 65) as u32;
                (i.wrapping_mul(0x9E37_79B9_7F4A_7C15), n)
            })
            .collect();
        let mut buf = Vec::new();
        let mut w = BitWriter::new(&mut buf);
        for &(v, n) in &fields {
            w.write(v, n);
        }
        w.finish();
        let total: u32 = fields.iter().map(|f| f.1).sum();
        assert_eq!(buf.len(), total.div_ceil(8) as usize);
        let mut r = BitReader::new(&buf);
        for &(v, n) in &fields {
            let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
            assert_eq!(r.read(n).unwrap(), v & mask);
        }
        assert_eq!(r.bytes_consumed(), buf.len());
        assert!(r.read(9).is_err());
    }

    proptest::proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(128))]
        #[test]
        fn prop_round_trip(values in proptest::collection::vec(proptest::prelude::any::<i64>(), 0..300),
                           shift in 0u32..64) {
            let values: Vec<i64> = values.iter().map(|v| v >> shift).collect();
            round_trip(&values);
            let mut buf = Vec::new();
            encode_for(&values, &mut buf);
            let mut got = Vec::new();
            proptest::prop_assert_eq!(decode_for_into(&buf, values.len(), &mut got), Ok(buf.len()));
            proptest::prop_assert_eq!(got, values);
        }
    }
}
