//! General-purpose compression of an encoded payload, with bounded decompression.
//!
//! - lz4: `raw_len: u32 LE` then an lz4 block (`lz4_flex` block format).
//! - zstd: one zstd frame (which records its content size).
//!
//! Decompression takes the exact expected size from the caller (the vector header) and
//! never produces or allocates more than that, so a forged size cannot cause an
//! allocation bomb. zstd contexts are kept per thread: creating one per vector costs
//! more than compressing a small vector.

use std::cell::RefCell;

use super::base::CorruptData;

/// General-purpose compression applied to a vector payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Compression {
    None = 0,
    Lz4 = 1,
    Zstd = 2,
}

impl Compression {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => Self::None,
            1 => Self::Lz4,
            2 => Self::Zstd,
            _ => return None,
        })
    }
}

thread_local! {
    static ZSTD_C: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> = const { RefCell::new(None) };
    static ZSTD_D: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// Appends the lz4 compression of `input` to `out`.
pub fn compress_lz4(input: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(input.len()).expect("payload below 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    let start = out.len();
    out.resize(start + lz4_flex::block::get_maximum_output_size(input.len()), 0);
    // The buffer has the maximum output size, so compression cannot run out of room.
    let n = lz4_flex::block::compress_into(input, &mut out[start..]).expect("lz4 bound");
    out.truncate(start + n);
}

/// Appends the zstd compression of `input` to `out`. Returns false (leaving `out` as it
/// was) if zstd fails, which only happens when it cannot allocate its context.
pub fn compress_zstd(input: &[u8], level: i32, out: &mut Vec<u8>) -> bool {
    let level = level.clamp(zstd::compression_level_range().start().to_owned(), 22);
    let start = out.len();
    out.resize(start + zstd::zstd_safe::compress_bound(input.len()), 0);
    let written = ZSTD_C.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = zstd::bulk::Compressor::new(level).ok().map(|c| (level, c));
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

/// Decompresses `input` into `out` (cleared first), which must come out as exactly
/// `raw_len` bytes.
pub fn decompress(
    method: Compression,
    input: &[u8],
    raw_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), CorruptData> {
    out.clear();
    match method {
        Compression::None => {
            if input.len() != raw_len {
                return Err(CorruptData("uncompressed length mismatch"));
            }
            out.extend_from_slice(input);
        }
        Compression::Lz4 => {
            let (head, block) = input.split_first_chunk::<4>().ok_or(CorruptData("lz4 size truncated"))?;
            if u32::from_le_bytes(*head) as usize != raw_len {
                return Err(CorruptData("lz4 size mismatch"));
            }
            // Even an empty input compresses to one token byte: an empty block is a
            // truncation (lz4_flex would decode it as zero bytes).
            if block.is_empty() {
                return Err(CorruptData("lz4 block missing"));
            }
            out.resize(raw_len, 0);
            let n =
                lz4_flex::block::decompress_into(block, out).map_err(|_| CorruptData("lz4 data corrupt"))?;
            if n != raw_len {
                return Err(CorruptData("lz4 length mismatch"));
            }
        }
        Compression::Zstd => {
            // zstd reports zero bytes decoded from zero bytes of input, but a frame is
            // never empty: no input is a truncation.
            if input.is_empty() {
                return Err(CorruptData("zstd frame missing"));
            }
            // The destination has room for exactly raw_len bytes: zstd fails rather than
            // write more, whatever the frame header claims. It is not zeroed first (zstd
            // writes every byte it reports).
            out.reserve(raw_len);
            let mut dst = Uninit { out, len: raw_len };
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
                Ok(n) if n == raw_len => {}
                Ok(_) => return Err(CorruptData("zstd length mismatch")),
                Err(_) => return Err(CorruptData("zstd data corrupt")),
            }
        }
    }
    Ok(())
}

/// An empty Vec's first `len` bytes of capacity as zstd's destination: zstd writes into
/// them and the Vec's length becomes what it wrote.
struct Uninit<'a> {
    out: &'a mut Vec<u8>,
    len: usize,
}

// SAFETY: `capacity` is at most the Vec's (`decompress` reserves `len` bytes of an empty
// Vec), `as_mut_ptr` points at its buffer, and `filled_until` is only called with the
// count zstd initialized from its start (WriteBuf's contract), so `set_len` is sound.
unsafe impl zstd::zstd_safe::WriteBuf for Uninit<'_> {
    fn as_slice(&self) -> &[u8] {
        self.out.as_slice()
    }

    fn capacity(&self) -> usize {
        debug_assert!(self.out.capacity() >= self.len);
        self.len
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.out.as_mut_ptr()
    }

    unsafe fn filled_until(&mut self, n: usize) {
        // SAFETY: zstd wrote the first `n` <= `len` <= capacity bytes (the trait's contract).
        unsafe { self.out.set_len(n) }
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
            for method in [Compression::Lz4, Compression::Zstd] {
                let mut c = Vec::new();
                match method {
                    Compression::Lz4 => compress_lz4(&data, &mut c),
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
