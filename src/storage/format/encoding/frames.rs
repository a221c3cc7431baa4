//! `Compression::ZstdFrames`: a payload cut into pieces of about `FRAME_RAW` bytes, each
//! a zstd frame of its own, so that a value is read by decompressing the frame it lies
//! in.
//!
//! A vector of high-cardinality text (ids, hashes) compressed as one zstd frame must be
//! decompressed whole to read one row: 2,048 values of 36 bytes are 74 KB decompressed
//! into memory a new connection has never touched, 130 µs for each row an index fetch
//! reads. In frames of 8 KB, a row costs one frame: zstd's entropy coding still applies
//! to each (random hex text keeps its 2x), and its header and tables add a few percent
//! (`vector` weighs that). A scan decompresses every frame, each building its entropy
//! tables again: 36% more time than one frame for those 74 KB (4 KB frames: 57%).
//!
//! Layout: `frames: u32 LE`, `per_frame: u32 LE` (values in each frame but the last,
//! for a layout cut between values; 0 for one cut every `FRAME_RAW` bytes), `check: u32
//! LE`, then for each frame where its decompressed bytes end in the payload and where its
//! stored bytes end after the table (`u32 LE` each), then the frames.
//!
//! A fetch checks what it reads, not the whole vector: `check` is a CRC-32C of the
//! vector's header (its first 20 bytes), its validity bitmap and this table (`check`
//! left out), and every frame carries zstd's checksum of its content, which
//! decompression verifies (a frame whose header lost the checksum flag is refused). The
//! vector's own checksum still covers every byte; a scan checks that one. Checking the
//! whole 37 KB vector for each row was a fifth of a new connection's fetch of scattered
//! rows of hashes.

use std::cell::RefCell;
use std::ops::Range;

use super::base::CorruptData;
use super::compress::{self, Compression};
use crate::storage::format::checksum;
use crate::storage::format::fallible;

/// Raw bytes of a frame that cuts by bytes (the last may hold fewer), and about those
/// of a frame that cuts between values.
pub const FRAME_RAW: usize = 8192;

/// The most raw bytes a frame may claim (a reader decompresses one whole).
const MAX_FRAME_RAW: usize = 64 * FRAME_RAW;

/// Bytes before the frame table's entries: the count, the values per frame, the check.
const HEAD_LEN: usize = 12;

/// The zstd frame magic number, and the bit of the frame header descriptor (the byte
/// after it) that says the frame ends with its content checksum.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const CHECKSUM_FLAG: u8 = 0x04;

/// Refuses a zstd frame whose header does not announce its content checksum (which
/// decompression then verifies): a damaged descriptor byte must not turn the check off.
fn require_checksum(frame: &[u8]) -> Result<(), CorruptData> {
    match frame.get(..5) {
        Some(h) if h[..4] == ZSTD_MAGIC && h[4] & CHECKSUM_FLAG != 0 => Ok(()),
        _ => Err(CorruptData("zstd frame without its checksum")),
    }
}

/// The CRC-32C that a `ZstdFrames` payload's `check` holds: of the vector's first 20
/// header bytes, its validity bitmap, and the payload's frame table (`table`, at least
/// its head and entries) without the check.
pub fn table_check(header: &[u8], bitmap: &[u8], table: &[u8]) -> u32 {
    let crc = checksum::crc32c_append(checksum::crc32c(header), bitmap);
    let crc = checksum::crc32c_append(crc, &table[..8]);
    checksum::crc32c_append(crc, &table[HEAD_LEN..])
}

/// Writes `check` into the `ZstdFrames` payload `payload` of the vector whose first 20
/// header bytes are `header` and validity bitmap `bitmap` (the header written, its own
/// checksum not yet).
pub fn seal(header: &[u8], bitmap: &[u8], payload: &mut [u8]) {
    let table_len = Frames::table_len(payload).expect("a payload compress_frames wrote");
    let check = table_check(header, bitmap, &payload[..table_len]);
    payload[8..12].copy_from_slice(&check.to_le_bytes());
}

/// Where frames cut by bytes end in a payload of `raw_len` bytes.
pub fn byte_cuts(raw_len: usize) -> Vec<usize> {
    (1..=raw_len.div_ceil(FRAME_RAW)).map(|f| (f * FRAME_RAW).min(raw_len)).collect()
}

/// Appends `input` as `ZstdFrames` to `out`, a frame ending at each of `cuts`
/// (ascending, the last `input.len()`), each holding `per_frame` values (0: cut by
/// bytes). Returns false (leaving `out` as it was) if zstd fails.
pub fn compress_frames(input: &[u8], cuts: &[usize], per_frame: u32, level: i32, out: &mut Vec<u8>) -> bool {
    debug_assert!(cuts.last() == Some(&input.len()) && cuts.windows(2).all(|w| w[0] < w[1]));
    let start = out.len();
    let table = start + HEAD_LEN;
    fallible::resize(out, table + 8 * cuts.len(), 0);
    out[start..start + 4].copy_from_slice(&(cuts.len() as u32).to_le_bytes());
    out[start + 4..start + 8].copy_from_slice(&per_frame.to_le_bytes());
    // `check` (bytes 8..12) is written by `seal` once the vector's header is known.
    let first = out.len();
    let mut from = 0;
    for (f, &end) in cuts.iter().enumerate() {
        if !compress::compress_zstd_checksummed(&input[from..end], level, out) {
            out.truncate(start);
            return false;
        }
        let stored_end = u32::try_from(out.len() - first).expect("payload below 4 GiB");
        let at = table + 8 * f;
        out[at..at + 4].copy_from_slice(&(end as u32).to_le_bytes());
        out[at + 4..at + 8].copy_from_slice(&stored_end.to_le_bytes());
        from = end;
    }
    true
}

/// Where a `ZstdFrames` payload's frames lie: read from its table. The frames read last
/// (`KEPT_FRAMES`) are kept decompressed: a fetch that comes back to a row (a query
/// repeated on its connection) finds it there, also when the vector holds two of the
/// query's rows in different frames (read in index order, in turns).
#[derive(Debug)]
pub struct Frames {
    per_frame: u32,
    /// The table's `check` (`table_check`).
    check: u32,
    /// Each frame's (raw end, stored end from the first frame's first byte).
    ends: Box<[(u32, u32)]>,
    /// The frames kept, the most recently read first.
    kept: RefCell<[KeptFrame; KEPT_FRAMES]>,
}

/// Where `Frames` reads its payload's stored bytes (`read`: those at a payload offset),
/// and may find the frames another reader decompressed and leave the ones it
/// decompresses (a fetch's: the shared fetch cache; none for a closure that only reads).
///
/// A frame is left as values (`share`): one, the frame's bytes, for a payload read by
/// byte ranges; each value of a layout cut between values (`Frames::value`). A reader
/// takes what it wants of it (`shared`), not the frame: a new connection's fetches, each
/// from a frame of its own, would otherwise copy 8 KB into memory the process never
/// touched for each value of 36 bytes.
pub trait FrameSource {
    fn read(&mut self, offset: usize, buf: &mut [u8]) -> Result<(), CorruptData>;

    /// Appends value `k` of frame `f` as another reader left it (`part`: its bytes in
    /// that range; None: all of them) to `out`; false, `out` as it was, if it is not
    /// there (or not that long).
    fn shared(&mut self, _f: usize, _k: usize, _part: Option<Range<usize>>, _out: &mut Vec<u8>) -> bool {
        false
    }

    /// Leaves frame `f`, decompressed and checked, for other readers as the values
    /// `data[ends[i] .. ends[i + 1]]`.
    fn share(&mut self, _f: usize, _ends: &[u32], _data: &[u8]) {}
}

impl<F: FnMut(usize, &mut [u8]) -> Result<(), CorruptData>> FrameSource for F {
    fn read(&mut self, offset: usize, buf: &mut [u8]) -> Result<(), CorruptData> {
        self(offset, buf)
    }
}

/// Cuts a decompressed frame of a layout cut between values into its values (`ends`
/// from 0, one more than the values; `data` their bytes), for `FrameSource::share`.
pub type SplitFrame = fn(&[u8], &mut Vec<u32>, &mut Vec<u8>) -> Result<(), CorruptData>;

/// A frame kept decompressed: its number and bytes.
type KeptFrame = Option<(usize, Vec<u8>)>;

/// Decompressed frames a `Frames` keeps.
const KEPT_FRAMES: usize = 2;

impl Frames {
    /// Bytes of the frame table whose first `HEAD_LEN` bytes are `head`.
    pub fn table_len(head: &[u8]) -> Result<usize, CorruptData> {
        let head = head.get(..HEAD_LEN).ok_or(CorruptData("frame table truncated"))?;
        let frames = u32::from_le_bytes(head[..4].try_into().expect("4 bytes")) as usize;
        Ok(HEAD_LEN + 8 * frames)
    }

    /// Bytes to read for `table_len`.
    pub const HEAD_LEN: usize = HEAD_LEN;

    /// The frame table at the front of `payload` (at least `table_len` bytes of it), for
    /// a payload of `stored_len` bytes that decompresses to `raw_len`.
    pub fn parse(payload: &[u8], raw_len: usize, stored_len: usize) -> Result<Frames, CorruptData> {
        let table_len = Frames::table_len(payload)?;
        if table_len > stored_len {
            return Err(CorruptData("frame table beyond the payload"));
        }
        let table = payload.get(..table_len).ok_or(CorruptData("frame table truncated"))?;
        let per_frame = u32::from_le_bytes(table[4..8].try_into().expect("4 bytes"));
        let check = u32::from_le_bytes(table[8..12].try_into().expect("4 bytes"));
        let ends: Box<[(u32, u32)]> = table[HEAD_LEN..]
            .chunks_exact(8)
            .map(|b| {
                let word = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
                (word(0), word(4))
            })
            .collect();
        let mut before = (0u32, 0u32);
        for &(raw, stored) in ends.iter() {
            // Neither an empty frame (zstd's is never empty) nor an outsized one.
            if raw <= before.0 || stored <= before.1 || (raw - before.0) as usize > MAX_FRAME_RAW {
                return Err(CorruptData("frame ends out of order"));
            }
            before = (raw, stored);
        }
        if before.0 as usize != raw_len || before.1 as usize != stored_len - table_len {
            return Err(CorruptData("frames differ from the payload's length"));
        }
        Ok(Frames { per_frame, check, ends, kept: RefCell::new(Default::default()) })
    }

    /// Memory it holds, itself included (a frame kept counted from the start: a
    /// cache weighs its entries as it takes them).
    pub fn heap_bytes(&self) -> usize {
        let kept: usize = self.kept.borrow().iter().flatten().map(|(_, b)| b.capacity()).sum();
        std::mem::size_of::<Frames>() + self.ends.len() * 8 + kept.max(FRAME_RAW)
    }

    /// The table's `check`, for the reader to compare with `table_check`.
    pub fn check(&self) -> u32 {
        self.check
    }

    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// Values in each frame but the last (0: frames cut by bytes).
    pub fn per_frame(&self) -> usize {
        self.per_frame as usize
    }

    /// Frame `f`'s stored bytes (offset within the payload, length) and raw bytes
    /// (offset, length).
    fn frame(&self, f: usize) -> ((usize, usize), (usize, usize)) {
        let (raw0, stored0) = if f == 0 { (0, 0) } else { self.ends[f - 1] };
        let (raw1, stored1) = self.ends[f];
        let table = HEAD_LEN + 8 * self.ends.len();
        ((table + stored0 as usize, (stored1 - stored0) as usize), (raw0 as usize, (raw1 - raw0) as usize))
    }

    /// Where frame `f` is among the frames `kept`, if it is kept decompressed.
    fn kept_at(kept: &[KeptFrame], f: usize) -> Option<usize> {
        kept.iter().position(|k| k.as_ref().is_some_and(|(kf, _)| *kf == f))
    }

    /// Whether frame `f` is kept decompressed.
    fn is_kept(&self, f: usize) -> bool {
        Frames::kept_at(&self.kept.borrow()[..], f).is_some()
    }

    /// `g` of frame `f` decompressed (or kept from the reads before), its stored bytes
    /// read from `src` into `scratch`. A frame decompressed is left with `src` for other
    /// readers: whole, or as `split` cuts it into values.
    fn with_frame<R>(
        &self,
        f: usize,
        src: &mut dyn FrameSource,
        scratch: &mut FrameScratch,
        split: Option<SplitFrame>,
        g: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, CorruptData> {
        let mut kept = self.kept.borrow_mut();
        match Frames::kept_at(&kept[..], f) {
            Some(at) => kept[..=at].rotate_right(1),
            None => {
                let ((stored_at, stored_len), (_, raw_len)) = self.frame(f);
                let last = KEPT_FRAMES - 1;
                scratch.stored.clear();
                fallible::resize(&mut scratch.stored, stored_len, 0);
                src.read(stored_at, &mut scratch.stored)?;
                // The least recently read frame's buffer is reused (and not kept if the
                // frame does not decompress).
                let mut raw = kept[last].take().map(|(_, b)| b).unwrap_or_default();
                require_checksum(&scratch.stored)?;
                compress::decompress(Compression::Zstd, &scratch.stored, raw_len, &mut raw)?;
                match split {
                    None => src.share(f, &[0, raw.len() as u32], &raw),
                    Some(split) => {
                        split(&raw, &mut scratch.ends, &mut scratch.values)?;
                        src.share(f, &scratch.ends, &scratch.values);
                    }
                }
                kept[last] = Some((f, raw));
                kept.rotate_right(1);
            }
        }
        let (_, raw) = kept[0].as_ref().expect("kept just now");
        Ok(g(raw))
    }

    /// Value `k` of frame `f`, of a layout cut between values (`per_frame`), appended
    /// to `out`: as another reader left it, or found in the frame decompressed
    /// (`with_frame`, `split` cutting it for other readers) by `pick`.
    pub fn value(
        &self,
        (f, k): (usize, usize),
        src: &mut dyn FrameSource,
        scratch: &mut FrameScratch,
        split: SplitFrame,
        pick: fn(&[u8], usize) -> Result<&[u8], CorruptData>,
        out: &mut Vec<u8>,
    ) -> Result<(), CorruptData> {
        if f >= self.ends.len() {
            return Err(CorruptData("value beyond its frames"));
        }
        if !self.is_kept(f) && src.shared(f, k, None, out) {
            return Ok(());
        }
        self.with_frame(f, src, scratch, Some(split), |frame| {
            pick(frame, k).map(|v| fallible::extend_from_slice(out, v))
        })?
    }

    /// The raw bytes `at .. at + len` of the payload, appended to `out`: from the
    /// frames they lie in, as another reader left them or decompressed (`with_frame`)
    /// into `scratch`.
    pub fn read_range(
        &self,
        at: usize,
        len: usize,
        src: &mut dyn FrameSource,
        scratch: &mut FrameScratch,
        out: &mut Vec<u8>,
    ) -> Result<(), CorruptData> {
        let raw_len = self.ends.last().map_or(0, |e| e.0 as usize);
        let Some(end) = at.checked_add(len).filter(|&e| e <= raw_len) else {
            return Err(CorruptData("value beyond its payload"));
        };
        if len == 0 {
            return Ok(());
        }
        let first = self.ends.partition_point(|e| e.0 as usize <= at);
        for f in first..self.ends.len() {
            let (_, (raw_at, raw_len)) = self.frame(f);
            if raw_at >= end {
                break;
            }
            let from = at.max(raw_at) - raw_at;
            let to = end.min(raw_at + raw_len) - raw_at;
            if !self.is_kept(f) && src.shared(f, 0, Some(from..to), out) {
                continue;
            }
            self.with_frame(f, src, scratch, None, |raw| fallible::extend_from_slice(out, &raw[from..to]))?;
        }
        Ok(())
    }
}

/// Buffers `Frames` reuses: for a frame as stored, and its values as it is shared.
#[derive(Default)]
pub struct FrameScratch {
    stored: Vec<u8>,
    ends: Vec<u32>,
    values: Vec<u8>,
}

/// Decompresses the whole `ZstdFrames` payload `input` into `out` (cleared first), which
/// must come out as exactly `raw_len` bytes.
pub fn decompress_frames(input: &[u8], raw_len: usize, out: &mut Vec<u8>) -> Result<(), CorruptData> {
    let frames = Frames::parse(input, raw_len, input.len())?;
    out.clear();
    fallible::reserve(out, raw_len);
    for f in 0..frames.count() {
        let ((at, len), (_, raw)) = frames.frame(f);
        let frame = &input[at..at + len];
        // Scans check the vector's own checksum; the frames' are checked by zstd on the way.
        require_checksum(frame)?;
        compress::zstd_append(frame, raw, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Reads a payload held in memory.
    fn reader(c: &[u8]) -> impl Fn(usize, &mut [u8]) -> Result<(), CorruptData> + Copy + '_ {
        move |o, b| {
            b.copy_from_slice(&c[o..o + b.len()]);
            Ok(())
        }
    }

    fn mix(x: u64) -> u64 {
        let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    /// `n` values like `'cmt ' || md5(i)`, concatenated.
    fn text(n: usize) -> Vec<u8> {
        (0..n as u64)
            .flat_map(|i| format!("cmt {:016x}{:016x}", mix(i), mix(i | 1 << 40)).into_bytes())
            .collect()
    }

    #[test]
    fn round_trips_whole_and_by_range() {
        for n in [1, 100, 113, 114, 2048] {
            let raw = text(n);
            let mut c = Vec::new();
            assert!(compress_frames(&raw, &byte_cuts(raw.len()), 0, 3, &mut c));
            let mut out = vec![7];
            decompress_frames(&c, raw.len(), &mut out).unwrap();
            assert_eq!(out, raw);
            let frames = Frames::parse(&c, raw.len(), c.len()).unwrap();
            let mut scratch = FrameScratch::default();
            for (at, len) in [(0, 0), (0, 1), (FRAME_RAW - 3, 7), (raw.len() - 1, 1), (5, raw.len() - 5)] {
                if at + len > raw.len() {
                    continue;
                }
                let mut got = vec![1, 2];
                frames.read_range(at, len, &mut reader(&c), &mut scratch, &mut got).unwrap();
                assert_eq!(&got[2..], &raw[at..at + len]);
            }
            let mut got = Vec::new();
            let mut read = reader(&c);
            assert!(frames.read_range(raw.len(), 1, &mut read, &mut scratch, &mut got).is_err());
        }
    }

    /// 500 values as frames of 100, 2,900 and 6,000 bytes and the rest, the table
    /// saying 7 values a frame: the raw payload and its frames.
    fn four_frames() -> (Vec<u8>, Vec<u8>) {
        let raw = text(500);
        let cuts = [100, 3000, 9000, raw.len()];
        let mut c = Vec::new();
        assert!(compress_frames(&raw, &cuts, 7, 3, &mut c));
        (raw, c)
    }

    #[test]
    fn frames_cut_between_values_are_read_whole() {
        let (raw, c) = four_frames();
        let frames = Frames::parse(&c, raw.len(), c.len()).unwrap();
        assert_eq!((frames.count(), frames.per_frame()), (4, 7));
        let mut read = reader(&c);
        let mut scratch = FrameScratch::default();
        assert_eq!(
            frames.with_frame(1, &mut read, &mut scratch, None, |f| f.to_vec()).unwrap(),
            &raw[100..3000]
        );
        // Kept: read again without a read of the payload; two frames read in turns too.
        let mut none = |_: usize, _: &mut [u8]| Err(CorruptData("read again"));
        assert_eq!(frames.with_frame(1, &mut none, &mut scratch, None, |f| f.len()).unwrap(), 2900);
        assert!(frames.with_frame(2, &mut none, &mut scratch, None, |f| f.len()).is_err());
        assert_eq!(
            frames.with_frame(0, &mut reader(&c), &mut scratch, None, |f| f.to_vec()).unwrap(),
            &raw[..100]
        );
        for _ in 0..2 {
            assert_eq!(
                frames.with_frame(1, &mut none, &mut scratch, None, |f| f.to_vec()).unwrap(),
                &raw[100..3000]
            );
            assert_eq!(
                frames.with_frame(0, &mut none, &mut scratch, None, |f| f.to_vec()).unwrap(),
                &raw[..100]
            );
        }
        // A third frame lets the one read longest ago go.
        assert_eq!(
            frames.with_frame(3, &mut reader(&c), &mut scratch, None, |f| f.len()).unwrap(),
            raw.len() - 9000
        );
        assert!(frames.with_frame(1, &mut none, &mut scratch, None, |f| f.len()).is_err());
        assert_eq!(frames.with_frame(0, &mut none, &mut scratch, None, |f| f.len()).unwrap(), 100);
        let mut got = Vec::new();
        frames.read_range(2990, 6020, &mut read, &mut scratch, &mut got).unwrap();
        assert_eq!(got, &raw[2990..9010]);
        let mut out = Vec::new();
        decompress_frames(&c, raw.len(), &mut out).unwrap();
        assert_eq!(out, raw);
    }

    /// A payload's bytes with a store of shared frames' values, counting its reads.
    struct Shared<'a> {
        bytes: &'a [u8],
        reads: usize,
        frames: std::collections::HashMap<usize, Vec<Vec<u8>>>,
    }

    impl FrameSource for Shared<'_> {
        fn read(&mut self, offset: usize, buf: &mut [u8]) -> Result<(), CorruptData> {
            self.reads += 1;
            buf.copy_from_slice(&self.bytes[offset..offset + buf.len()]);
            Ok(())
        }
        fn shared(&mut self, f: usize, k: usize, part: Option<Range<usize>>, out: &mut Vec<u8>) -> bool {
            let value = self.frames.get(&f).and_then(|v| v.get(k));
            match value.and_then(|v| v.get(part.unwrap_or(0..v.len()))) {
                Some(b) => out.extend_from_slice(b),
                None => return false,
            }
            true
        }
        fn share(&mut self, f: usize, ends: &[u32], data: &[u8]) {
            let values = ends.windows(2).map(|w| data[w[0] as usize..w[1] as usize].to_vec()).collect();
            self.frames.insert(f, values);
        }
    }

    #[test]
    fn frames_another_reader_shared_are_not_read_again() {
        let (raw, c) = four_frames();
        let mut scratch = FrameScratch::default();
        let mut src = Shared { bytes: &c, reads: 0, frames: Default::default() };
        // The first reader decompresses frame 1 and shares it whole, checked.
        let first = Frames::parse(&c, raw.len(), c.len()).unwrap();
        let mut got = Vec::new();
        first.read_range(150, 20, &mut src, &mut scratch, &mut got).unwrap();
        assert_eq!((got.as_slice(), src.reads), (&raw[150..170], 1));
        assert_eq!(src.frames[&1], [raw[100..3000].to_vec()]);
        // Another reader (its own `Frames`, nothing kept) takes its ranges from there,
        // reading nothing; a range over frames 1 and 2 reads frame 2 alone.
        let second = Frames::parse(&c, raw.len(), c.len()).unwrap();
        src.reads = 0;
        got.clear();
        second.read_range(200, 30, &mut src, &mut scratch, &mut got).unwrap();
        assert_eq!((got.as_slice(), src.reads), (&raw[200..230], 0));
        got.clear();
        second.read_range(2990, 20, &mut src, &mut scratch, &mut got).unwrap();
        assert_eq!((got.as_slice(), src.reads), (&raw[2990..3010], 1));
        // What the shared copy lacks is read: a range beyond its frame 3's bytes.
        src.frames.insert(3, vec![vec![0; 10]]);
        let third = Frames::parse(&c, raw.len(), c.len()).unwrap();
        src.reads = 0;
        got.clear();
        third.read_range(9005, 20, &mut src, &mut scratch, &mut got).unwrap();
        assert_eq!((got.as_slice(), src.reads), (&raw[9005..9025], 1));
        assert_eq!(src.frames[&3], [raw[9000..].to_vec()]);
    }

    /// Frames of 7 values (3-byte strings as `len, bytes`), split and picked as a layout
    /// cut between values would.
    fn split_values(frame: &[u8], ends: &mut Vec<u32>, data: &mut Vec<u8>) -> Result<(), CorruptData> {
        ends.clear();
        data.clear();
        ends.push(0);
        for v in frame.chunks(4) {
            data.extend_from_slice(&v[1..]);
            ends.push(data.len() as u32);
        }
        Ok(())
    }

    fn pick_value(frame: &[u8], k: usize) -> Result<&[u8], CorruptData> {
        frame.get(4 * k + 1..4 * k + 4).ok_or(CorruptData("no such value"))
    }

    #[test]
    fn values_of_frames_cut_between_them_are_shared_one_by_one() {
        let raw: Vec<u8> = (0..20u8).flat_map(|i| [3, b'a' + i, b'0' + i % 10, b'z']).collect();
        let cuts: Vec<usize> = (1..=3).map(|f| (28 * f).min(raw.len())).collect();
        let mut c = Vec::new();
        assert!(compress_frames(&raw, &cuts, 7, 3, &mut c));
        let mut scratch = FrameScratch::default();
        let mut src = Shared { bytes: &c, reads: 0, frames: Default::default() };
        let value = |frames: &Frames, src: &mut Shared, scratch: &mut FrameScratch, j: usize| {
            let mut out = vec![b'>'];
            frames.value((j / 7, j % 7), src, scratch, split_values, pick_value, &mut out).map(|_| out)
        };
        let first = Frames::parse(&c, raw.len(), c.len()).unwrap();
        assert_eq!(value(&first, &mut src, &mut scratch, 9).unwrap(), b">j9z");
        assert_eq!((src.reads, src.frames[&1].len(), src.frames[&1][2].as_slice()), (1, 7, &b"j9z"[..]));
        // Another reader takes its values from the shared copy; the last frame, of
        // six values, is read and shared too.
        let second = Frames::parse(&c, raw.len(), c.len()).unwrap();
        src.reads = 0;
        assert_eq!(value(&second, &mut src, &mut scratch, 13).unwrap(), b">n3z");
        assert_eq!(value(&second, &mut src, &mut scratch, 19).unwrap(), b">t9z");
        assert_eq!((src.reads, src.frames[&2].len()), (1, 6));
        // Kept by the reader that decompressed it: read again with no source.
        let mut none = |_: usize, _: &mut [u8]| Err(CorruptData("read again"));
        let mut out = Vec::new();
        second.value((2, 0), &mut none, &mut scratch, split_values, pick_value, &mut out).unwrap();
        assert_eq!(out, b"o4z");
        // Beyond the frames, or a frame's values: an error, not a panic.
        assert!(value(&second, &mut src, &mut scratch, 21).is_err());
        assert!(second.value((1, 7), &mut src, &mut scratch, split_values, pick_value, &mut out).is_err());
    }

    #[test]
    fn frames_carry_their_checksums() {
        let raw = text(500);
        let mut c = Vec::new();
        assert!(compress_frames(&raw, &byte_cuts(raw.len()), 0, 3, &mut c));
        let first = Frames::table_len(&c).unwrap();
        let mut scratch = FrameScratch::default();
        let mut out = Vec::new();
        // A changed byte of a frame's content fails its checksum.
        let mut bad = c.clone();
        bad[first + 40] ^= 0x01;
        let frames = Frames::parse(&bad, raw.len(), bad.len()).unwrap();
        assert!(frames.with_frame(0, &mut reader(&bad), &mut scratch, None, |f| f.len()).is_err());
        assert!(decompress_frames(&bad, raw.len(), &mut out).is_err());
        // A frame whose header lost the checksum flag is refused.
        let mut bad = c.clone();
        bad[first + 4] &= !CHECKSUM_FLAG;
        let frames = Frames::parse(&bad, raw.len(), bad.len()).unwrap();
        assert!(frames.with_frame(0, &mut reader(&bad), &mut scratch, None, |f| f.len()).is_err());
        assert!(decompress_frames(&bad, raw.len(), &mut out).is_err());
        // The table's check covers the vector's header, its bitmap and the table.
        let (header, bitmap) = ([7u8; 20], [0b1011u8; 3]);
        seal(&header, &bitmap, &mut c);
        let frames = Frames::parse(&c, raw.len(), c.len()).unwrap();
        let table = &c[..first];
        assert_eq!(table_check(&header, &bitmap, table), frames.check());
        assert_ne!(table_check(&header, &[0b1010, 0b1011, 0b1011], table), frames.check());
        assert_ne!(table_check(&[6; 20], &bitmap, table), frames.check());
    }

    #[test]
    fn random_hex_text_keeps_most_of_zstds_saving() {
        // 2,048 values like `'cmt ' || md5(i)`: random hex, which zstd codes at about
        // 4 bits a character whether it sees the vector whole or 8 KB at a time.
        let raw = text(2048);
        let (mut whole, mut framed) = (Vec::new(), Vec::new());
        assert!(compress::compress_zstd(&raw, 3, &mut whole));
        assert!(compress_frames(&raw, &byte_cuts(raw.len()), 0, 3, &mut framed));
        assert!(whole.len() * 2 < raw.len() + raw.len() / 10, "{} of {}", whole.len(), raw.len());
        assert!(framed.len() * 100 <= whole.len() * 106, "framed {} whole {}", framed.len(), whole.len());
    }

    #[test]
    fn tables_that_disagree_are_corrupt() {
        let raw = text(300);
        let mut c = Vec::new();
        assert!(compress_frames(&raw, &byte_cuts(raw.len()), 0, 3, &mut c));
        let mut out = Vec::new();
        for n in [raw.len() - 1, raw.len() + 1, 0] {
            assert!(decompress_frames(&c, n, &mut out).is_err());
        }
        // Ends out of order, a frame count beyond the payload.
        for (at, word) in [(12, u32::MAX), (16, 0), (0, 1 << 20)] {
            let mut bad = c.clone();
            bad[at..at + 4].copy_from_slice(&word.to_le_bytes());
            assert!(decompress_frames(&bad, raw.len(), &mut out).is_err(), "{at}");
        }
    }

    proptest! {
        #![proptest_config(crate::storage::format::encoding::test_util::config(48))]
        #[test]
        fn prop_corruption_is_detected_or_harmless(
            data in proptest::collection::vec(0u8..4, 0..10_000),
            flips in proptest::collection::vec((any::<usize>(), 1u8..), 1..4),
        ) {
            let mut c = Vec::new();
            let cuts = byte_cuts(data.len());
            if cuts.is_empty() {
                return Ok(());
            }
            prop_assert!(compress_frames(&data, &cuts, 0, 3, &mut c));
            let mut out = Vec::new();
            for cut in (0..c.len()).step_by(7) {
                prop_assert!(decompress_frames(&c[..cut], data.len(), &mut out).is_err());
            }
            let mut bad = c.clone();
            for &(p, m) in &flips {
                let i = p % bad.len();
                bad[i] ^= m;
            }
            if decompress_frames(&bad, data.len(), &mut out).is_ok() {
                prop_assert_eq!(out.len(), data.len());
            }
            if let Ok(frames) = Frames::parse(&bad, data.len(), bad.len()) {
                let mut scratch = FrameScratch::default();
                let mut got = Vec::new();
                let mut read = |o: usize, b: &mut [u8]| {
                    bad.get(o..o + b.len()).map(|s| b.copy_from_slice(s)).ok_or(CorruptData("beyond"))
                };
                if frames.read_range(0, data.len(), &mut read, &mut scratch, &mut got).is_ok() {
                    prop_assert_eq!(got.len(), data.len());
                }
            }
        }
    }
}
