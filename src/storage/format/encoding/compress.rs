//! General-purpose compression of an encoded payload, with bounded decompression.
//!
//! - lz4: `raw_len: u32 LE` then an lz4 block (`lz4_flex` block format).
//! - zstd: one zstd frame (which records its content size).
//! - zstd with a shared prefix (`ZstdPrefix`): the payload's leading part (a
//!   dictionary's entries) as a zstd frame of its own, the rest after it stored or as
//!   lz4. Vectors of a column often repeat the leading part byte for byte (the writer
//!   sorts a dictionary's entries: TSBS's 400 host names in every vector), and a reader
//!   that has just decompressed a frame with the same bytes takes its output from a
//!   small per-thread cache instead of decompressing it again.
//!   Layout: `prefix_len: u32 LE`, `frame_len: u32 LE`, `rest: u8` (0 stored, 1 lz4),
//!   the prefix's zstd frame (`frame_len` bytes), then the rest as `rest` says.
//! - zstd in frames of 8 KB (`ZstdFrames`, see `frames`): a byte range is read without
//!   decompressing the rest.
//!
//! Decompression takes the exact expected size from the caller (the vector header) and
//! never produces or allocates more than that, so a forged size cannot cause an
//! allocation bomb. zstd contexts are kept per thread: creating one per vector costs
//! more than compressing a small vector.

use std::cell::RefCell;

use super::base::CorruptData;
use crate::storage::format::fallible;

/// General-purpose compression applied to a vector payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Compression {
    None = 0,
    Lz4 = 1,
    Zstd = 2,
    ZstdPrefix = 3,
    /// zstd frames of `frames::FRAME_RAW` raw bytes each (`frames`).
    ZstdFrames = 4,
}

impl Compression {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::None,
            1 => Self::Lz4,
            2 => Self::Zstd,
            3 => Self::ZstdPrefix,
            4 => Self::ZstdFrames,
            _ => return None,
        })
    }
}

thread_local! {
    static ZSTD_C: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    static ZSTD_C_CHECKSUM: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    static ZSTD_D: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Appends the lz4 compression of `input` to `out`.
pub fn compress_lz4(input: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(input.len()).expect("payload below 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    let start = out.len();
    fallible::resize(out, start + lz4_flex::block::get_maximum_output_size(input.len()), 0);
    // The buffer has the maximum output size, so compression cannot run out of room.
    let n = lz4_flex::block::compress_into(input, &mut out[start..]).expect("lz4 bound");
    out.truncate(start + n);
}

/// Appends the zstd compression of `input` to `out`. Returns false (leaving `out` as it
/// was) if zstd fails, which only happens when it cannot allocate its context.
pub fn compress_zstd(input: &[u8], level: i32, out: &mut Vec<u8>) -> bool {
    compress_zstd_with(&ZSTD_C, false, input, level, out)
}

/// `compress_zstd` with the frame's content checksum (4 bytes), which decompression
/// verifies.
pub fn compress_zstd_checksummed(input: &[u8], level: i32, out: &mut Vec<u8>) -> bool {
    compress_zstd_with(&ZSTD_C_CHECKSUM, true, input, level, out)
}

/// `compress_zstd` with the thread's compressor in `slot` (made with or without the
/// content checksum, as `checksum` says).
fn compress_zstd_with(
    slot: &'static std::thread::LocalKey<RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>>>,
    checksum: bool,
    input: &[u8],
    level: i32,
    out: &mut Vec<u8>,
) -> bool {
    let level = level.clamp(zstd::compression_level_range().start().to_owned(), 22);
    let start = out.len();
    fallible::resize(out, start + zstd::zstd_safe::compress_bound(input.len()), 0);
    let written = slot.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            let made = zstd::bulk::Compressor::new(level).and_then(|mut c| {
                c.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(checksum)).map(|()| c)
            });
            *slot = made.ok().map(|c| (level, c));
        }
        let (_, c) = slot.as_mut()?;
        c.compress_to_buffer(input, &mut out[start..]).ok()
    });
    match written {
        Some(n) => {
            out.truncate(start + n);
            true
        }
        None => {
            out.truncate(start);
            false
        }
    }
}

/// Appends `input` compressed as `ZstdPrefix` (its first `prefix_len` bytes as a zstd
/// frame of their own) to `out`. Returns false (leaving `out` as it was) if zstd fails.
pub fn compress_prefixed(input: &[u8], prefix_len: usize, level: i32, out: &mut Vec<u8>) -> bool {
    assert!(prefix_len <= input.len(), "prefix beyond the payload");
    let (prefix, rest) = input.split_at(prefix_len);
    let start = out.len();
    out.extend_from_slice(&u32::try_from(prefix_len).expect("payload below 4 GiB").to_le_bytes());
    out.extend_from_slice(&[0; 5]);
    let frame_start = out.len();
    if !compress_zstd(prefix, level, out) {
        out.truncate(start);
        return false;
    }
    let frame_len = (out.len() - frame_start) as u32;
    out[start + 4..start + 8].copy_from_slice(&frame_len.to_le_bytes());
    // The rest (a dictionary's codes) is bit-packed: lz4 only where it finds repeats.
    let rest_start = out.len();
    compress_lz4(rest, out);
    if (out.len() - rest_start) * 10 > rest.len() * 9 {
        out.truncate(rest_start);
        fallible::extend_from_slice(out, rest);
    } else {
        out[start + 8] = 1;
    }
    true
}

/// Recently decompressed `ZstdPrefix` prefixes: (frame, its output). A scan reads its
/// columns' vectors in turn, so each of a few columns may be repeating its own.
struct Prefixes {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    next: usize,
}

/// Prefixes kept per thread, and the largest output kept.
const PREFIXES: usize = 8;
const MAX_PREFIX_KEPT: usize = 256 << 10;

thread_local! {
    static RECENT_PREFIXES: RefCell<Prefixes> = const { RefCell::new(Prefixes { entries: Vec::new(), next: 0 }) };
}

/// The `ZstdPrefix` payload `input` decompressed into `out` (cleared first): its prefix
/// from the cache when the same frame was decompressed recently.
fn decompress_prefixed(input: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Result<(), CorruptData> {
    let (head, body) = input.split_first_chunk::<9>().ok_or(CorruptData("prefix header truncated"))?;
    let prefix_len = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
    let frame_len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize;
    let rest_method = match head[8] {
        0 => Compression::None,
        1 => Compression::Lz4,
        _ => return Err(CorruptData("unknown compression of the rest")),
    };
    if prefix_len > raw_len {
        return Err(CorruptData("prefix longer than the payload"));
    }
    let (frame, rest) = (
        body.get(..frame_len).ok_or(CorruptData("prefix frame truncated"))?,
        &body[frame_len.min(body.len())..],
    );
    RECENT_PREFIXES.with(|cell| {
        let mut cache = cell.borrow_mut();
        if let Some((_, raw)) = cache.entries.iter().find(|(f, _)| f.as_slice() == frame) {
            if raw.len() != prefix_len {
                return Err(CorruptData("zstd length mismatch"));
            }
            out.clear();
            fallible::extend_from_slice(out, raw);
            return Ok(());
        }
        decompress(Compression::Zstd, frame, prefix_len, out)?;
        if prefix_len <= MAX_PREFIX_KEPT {
            let entry = (frame.to_vec(), out.clone());
            if cache.entries.len() < PREFIXES {
                cache.entries.push(entry);
            } else {
                let at = cache.next;
                cache.entries[at] = entry;
                cache.next = (at + 1) % PREFIXES;
            }
        }
        Ok(())
    })?;
    let rest_len = raw_len - prefix_len;
    match rest_method {
        Compression::Lz4 => {
            fallible::resize(out, raw_len, 0);
            lz4_into(rest, &mut out[prefix_len..])
        }
        _ if rest.len() != rest_len => Err(CorruptData("uncompressed length mismatch")),
        _ => {
            fallible::extend_from_slice(out, rest);
            Ok(())
        }
    }
}

/// Decompresses lz4 `input` (as `compress_lz4` writes it) into all of `out`.
fn lz4_into(input: &[u8], out: &mut [u8]) -> Result<(), CorruptData> {
    let (head, block) = input.split_first_chunk::<4>().ok_or(CorruptData("lz4 size truncated"))?;
    if u32::from_le_bytes(*head) as usize != out.len() {
        return Err(CorruptData("lz4 size mismatch"));
    }
    // Even an empty input compresses to one token byte: an empty block is a truncation
    // (lz4_flex would decode it as zero bytes).
    if block.is_empty() {
        return Err(CorruptData("lz4 block missing"));
    }
    let n = lz4_flex::block::decompress_into(block, out).map_err(|_| CorruptData("lz4 data corrupt"))?;
    if n != out.len() {
        return Err(CorruptData("lz4 length mismatch"));
    }
    Ok(())
}

/// Decompresses `input` into `out` (cleared first), which must come out as exactly
/// `raw_len` bytes. Not for `ZstdFrames` (`frames::decompress_frames`).
pub fn decompress(
    method: Compression,
    input: &[u8],
    raw_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), CorruptData> {
    out.clear();
    match method {
        Compression::ZstdPrefix => return decompress_prefixed(input, raw_len, out),
        // A layer above this one (`frames`, through `vector::decompress_payload`).
        Compression::ZstdFrames => return Err(CorruptData("zstd frames decompressed as one payload")),
        Compression::None => {
            if input.len() != raw_len {
                return Err(CorruptData("uncompressed length mismatch"));
            }
            fallible::extend_from_slice(out, input);
        }
        Compression::Lz4 => {
            fallible::resize(out, raw_len, 0);
            lz4_into(input, out)?;
        }
        Compression::Zstd => zstd_append(input, raw_len, out)?,
    }
    Ok(())
}

/// Appends the zstd frame `input`, which must decompress to exactly `raw_len` bytes, to
/// `out`.
pub fn zstd_append(input: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Result<(), CorruptData> {
    // zstd reports zero bytes decoded from zero bytes of input, but a frame is never
    // empty: no input is a truncation.
    if input.is_empty() {
        return Err(CorruptData("zstd frame missing"));
    }
    // The destination has room for exactly raw_len bytes: zstd fails rather than write
    // more, whatever the frame header claims. It is not zeroed first (zstd writes every
    // byte it reports).
    fallible::reserve(out, raw_len);
    let start = out.len();
    let mut dst = Uninit { out, start, len: raw_len };
    let res = ZSTD_D.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = zstd::bulk::Decompressor::new().ok();
        }
        match slot.as_mut() {
            Some(d) => d.decompress_to_buffer(input, &mut dst).map_err(drop),
            None => zstd::zstd_safe::decompress(&mut dst, input).map_err(drop),
        }
    });
    match res {
        Ok(n) if n == raw_len => Ok(()),
        Ok(_) => {
            out.truncate(start);
            Err(CorruptData("zstd length mismatch"))
        }
        Err(_) => {
            out.truncate(start);
            Err(CorruptData("zstd data corrupt"))
        }
    }
}

/// The `len` bytes of a Vec's spare capacity after its first `start` as zstd's
/// destination: zstd writes into them and the Vec's length becomes `start` plus what it
/// wrote.
struct Uninit<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    len: usize,
}

// SAFETY: `capacity` is at most the Vec's spare capacity (`zstd_append` reserves `len`
// bytes past `start`, the Vec's length), `as_mut_ptr` points at the first of them, and
// `filled_until` is only called with the count zstd initialized from there (WriteBuf's
// contract), so `set_len` is sound.
unsafe impl zstd::zstd_safe::WriteBuf for Uninit<'_> {
    fn as_slice(&self) -> &[u8] {
        &self.out[self.start..]
    }

    fn capacity(&self) -> usize {
        debug_assert!(self.out.capacity() - self.start >= self.len);
        self.len
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        // SAFETY: `start` is the Vec's length, within its allocation.
        unsafe { self.out.as_mut_ptr().add(self.start) }
    }

    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd wrote the `n` <= `len` bytes after `start`, within capacity (the
        // trait's contract).
        unsafe { self.out.set_len(self.start + n) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Vec<u8> {
        (0..20_000u32).map(|i| (i % 251 % 17) as u8).collect()
    }

    #[test]
    fn round_trips_and_compresses() {
        for data in [vec![], vec![1u8], sample()] {
            let mut lz = Vec::new();
            compress_lz4(&data, &mut lz);
            let mut zs = Vec::new();
            assert!(compress_zstd(&data, 3, &mut zs));
            // Every proper prefix is a truncation, also of an empty payload.
            for (method, c) in [(Compression::Lz4, &lz), (Compression::Zstd, &zs)] {
                assert!((0..c.len())
                    .all(|cut| decompress(method, &c[..cut], data.len(), &mut Vec::new()).is_err()));
            }
            let mut out = Vec::new();
            decompress(Compression::Lz4, &lz, data.len(), &mut out).unwrap();
            assert_eq!(out, data);
            decompress(Compression::Zstd, &zs, data.len(), &mut out).unwrap();
            assert_eq!(out, data);
            decompress(Compression::None, &data, data.len(), &mut out).unwrap();
            assert_eq!(out, data);
            if data.len() > 1000 {
                assert!(lz.len() < data.len() / 10 && zs.len() < data.len() / 10);
            }
        }
    }

    #[test]
    fn prefixed_payloads_round_trip_and_reuse_a_repeated_prefix() {
        let prefix: Vec<u8> = (0..400u32).flat_map(|i| format!("host_{i}").into_bytes()).collect();
        let codes: Vec<u8> = (0..2300u32).map(|i| (i % 450) as u8).collect();
        let random: Vec<u8> =
            (0..500u64).map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as u8).collect();
        for rest in [&codes[..], &random[..], &[][..]] {
            let payload = [&prefix[..], rest].concat();
            let mut c = Vec::new();
            assert!(compress_prefixed(&payload, prefix.len(), 3, &mut c));
            // Decompressed twice: the second takes the prefix from the cache.
            for _ in 0..2 {
                let mut out = Vec::new();
                decompress(Compression::ZstdPrefix, &c, payload.len(), &mut out).unwrap();
                assert_eq!(out, payload);
            }
            // Every proper prefix of the stored bytes is a truncation, cached or not.
            assert!((0..c.len()).all(|cut| decompress(
                Compression::ZstdPrefix,
                &c[..cut],
                payload.len(),
                &mut Vec::new()
            )
            .is_err()));
            assert!(decompress(Compression::ZstdPrefix, &c, payload.len() + 1, &mut Vec::new()).is_err());
        }
        // The same frame with another prefix length, or a damaged rest method, is corrupt.
        let payload = [&prefix[..], &codes[..]].concat();
        let mut c = Vec::new();
        assert!(compress_prefixed(&payload, prefix.len(), 3, &mut c));
        let mut bad = c.clone();
        bad[..4].copy_from_slice(&(prefix.len() as u32 - 1).to_le_bytes());
        assert!(decompress(Compression::ZstdPrefix, &bad, payload.len(), &mut Vec::new()).is_err());
        let mut bad = c.clone();
        bad[8] = 7;
        assert!(decompress(Compression::ZstdPrefix, &bad, payload.len(), &mut Vec::new()).is_err());
        // An empty prefix, and a payload that is all prefix.
        for p in [0, payload.len()] {
            let mut c = Vec::new();
            assert!(compress_prefixed(&payload, p, 3, &mut c));
            let mut out = Vec::new();
            decompress(Compression::ZstdPrefix, &c, payload.len(), &mut out).unwrap();
            assert_eq!(out, payload);
        }
    }

    #[test]
    fn levels_switch_and_append() {
        let data = sample();
        let mut out = vec![9u8; 3];
        assert!(compress_zstd(&data, 1, &mut out));
        assert!(compress_zstd(&data, 19, &mut Vec::new()));
        assert!(compress_zstd(&data, -5, &mut Vec::new()));
        assert_eq!(&out[..3], &[9, 9, 9]);
        let mut got = Vec::new();
        decompress(Compression::Zstd, &out[3..], data.len(), &mut got).unwrap();
        assert_eq!(got, data);
    }

    #[test]
    fn wrong_sizes_are_rejected() {
        let data = sample();
        let mut lz = Vec::new();
        compress_lz4(&data, &mut lz);
        let mut zs = Vec::new();
        compress_zstd(&data, 3, &mut zs);
        let mut out = Vec::new();
        for n in [0, data.len() - 1, data.len() + 1] {
            assert!(decompress(Compression::Lz4, &lz, n, &mut out).is_err());
            assert!(decompress(Compression::Zstd, &zs, n, &mut out).is_err());
        }
        assert!(decompress(Compression::None, &data, 5, &mut out).is_err());
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(48))]
        #[test]
        fn prop_corruption_is_detected_or_harmless(
            data in proptest::collection::vec(0u8..4, 0..2000),
            flips in proptest::collection::vec((any::<usize>(), 1u8..), 1..4),
        ) {
            let mut out = Vec::new();
            for method in [Compression::Lz4, Compression::Zstd, Compression::ZstdPrefix] {
                let mut c = Vec::new();
                match method {
                    Compression::Lz4 => compress_lz4(&data, &mut c),
                    Compression::ZstdPrefix => { compress_prefixed(&data, data.len() / 3, 3, &mut c); }
                    _ => { compress_zstd(&data, 3, &mut c); }
                }
                for cut in 0..c.len() {
                    prop_assert!(decompress(method, &c[..cut], data.len(), &mut out).is_err());
                }
                let mut bad = c.clone();
                for &(p, m) in &flips {
                    let i = p % bad.len();
                    bad[i] ^= m;
                }
                // Either an error or exactly raw_len bytes: never a panic or overrun.
                if decompress(method, &bad, data.len(), &mut out).is_ok() {
                    prop_assert_eq!(out.len(), data.len());
                }
            }
        }
    }
}
