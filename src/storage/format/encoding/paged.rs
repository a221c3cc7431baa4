//! Stored vectors read a value at a time where they lie (in the table's pages), for
//! the first fetches from a stripe.
//!
//! An index scan on a table not sorted by its key reaches thousands of vectors for a
//! few rows each: one host's 12 hours of a 10M-row TSBS table are 4,320 rows over 844
//! stripes. Opening those vectors whole (copying 14 KB, decoding 2,048 values into 16
//! KB of memory the backend has never touched) cost a new connection 55 ms there,
//! most of it the kernel handing out pages. Opened here instead, a vector is its
//! header, its checksum checked over the bytes where they lie, and what finding a
//! value takes (ALP_rd's dictionary and exceptions, a payload's layout): about a
//! hundred bytes, and a value is one or two small reads. The fetch cache opens a
//! stripe's vectors whole once fetches keep coming back to it.
//!
//! Pure: the bytes come from a `StoredBytes` (the relation's pages, or a slice in
//! tests).

use super::alp::{rd_code_bits, read_rd_header, RD_MAX_DICT};
use super::base::{CorruptData, PhysicalKind};
use super::bitpack;
use super::codec::{InPlace, Open, IN_PLACE_HEAD};
use super::compress::Compression;
use super::frames::{self, FrameScratch, FrameSource, Frames};
use super::lanes::{self, BLOCK};
use super::point::{fixed_value, validity, PointValue, Validity};
use super::short_images;
use super::table::EncodingId;
use super::vector::{bitmap_len, parse_header, HEADER_LEN};
use crate::storage::format::checksum;
use std::ops::Range;

/// A stored vector's bytes, read a few at a time; offsets count from its first byte.
pub trait StoredBytes {
    /// Copies the bytes at `at .. at + out.len()` into `out`.
    fn read(&mut self, at: usize, out: &mut [u8]) -> Result<(), CorruptData>;
    /// `crc` (a CRC-32C) continued over the bytes at `at .. at + len`.
    fn crc(&mut self, at: usize, len: usize, crc: u32) -> Result<u32, CorruptData>;

    /// Value `k` of frame `f` of the vector's zstd frames, or the bytes in `part` of it,
    /// appended to `out` if another reader left the frame (`share_frame`;
    /// `frames::FrameSource::shared`); none by default.
    fn shared_frame(
        &mut self,
        _f: usize,
        _k: usize,
        _part: Option<Range<usize>>,
        _out: &mut Vec<u8>,
    ) -> bool {
        false
    }

    /// Leaves frame `f` of the vector's zstd frames, decompressed and checked, for other
    /// readers as the values `data[ends[i] .. ends[i + 1]]`; nowhere by default.
    fn share_frame(&mut self, _f: usize, _ends: &[u32], _data: &[u8]) {}
}

/// The payload of zstd frames at `at` in a stored vector, as its frames read it.
struct Payload<'s, S: StoredBytes> {
    src: &'s mut S,
    at: usize,
}

impl<S: StoredBytes> FrameSource for Payload<'_, S> {
    fn read(&mut self, offset: usize, buf: &mut [u8]) -> Result<(), CorruptData> {
        self.src.read(self.at + offset, buf)
    }

    fn shared(&mut self, f: usize, k: usize, part: Option<Range<usize>>, out: &mut Vec<u8>) -> bool {
        self.src.shared_frame(f, k, part, out)
    }

    fn share(&mut self, f: usize, ends: &[u32], data: &[u8]) {
        self.src.share_frame(f, ends, data)
    }
}

/// Bytes of the longest ALP_rd header (cut, dictionary, exception count).
const RD_HEADER_MAX: usize = 2 + 2 * RD_MAX_DICT + 4;

/// Most bytes of ALP_rd exceptions a vector read in place keeps (about 1,400 of them);
/// a vector with more is opened whole.
const MAX_EXCEPTION_BYTES: usize = 4096;

/// A vector opened for reading values where they are stored.
#[derive(Debug)]
pub struct PagedVector {
    kind: PhysicalKind,
    rows: u32,
    /// For a vector with some NULLs, which rows have values.
    validity: Option<Box<Validity>>,
    values: Values,
}

#[derive(Debug)]
enum Values {
    /// No row has a value.
    None,
    /// Plain or frame-of-reference values in a payload of `len` bytes at `at`.
    InPlace { at: u32, len: u32, layout: InPlace },
    /// ALP_rd in FastLanes blocks (`alp_rd_lanes`).
    AlpRd(Box<RdLanes>),
    /// Plain byte strings in zstd frames (`frames`).
    FramedText(Box<FramedText>),
    /// Short images in zstd frames of `per_frame` values each.
    FramedImages { at: u32, frames: Box<Frames> },
}

/// Plain byte strings compressed as `ZstdFrames`: the frame table, the lengths' FOR
/// block (decompressed once: a bit or a few per value) and where every 64th value
/// starts. A value is read from the one frame (or two) it lies in: 8 KB decompressed,
/// where the vector whole is up to 2,048 values.
#[derive(Debug)]
struct FramedText {
    /// The payload's offset in the vector.
    at: u32,
    frames: Frames,
    len_min: i64,
    len_width: u8,
    /// The lengths' packed fields (`value length - len_min`).
    lens: Box<[u8]>,
    /// Where the values' bytes start in the payload (after the lengths).
    data_at: u32,
    /// Where value `64 k` starts, from `data_at`.
    starts: Box<[u32]>,
}

/// Values between two kept starts of `FramedText`: 64 fields of any width end on a byte.
const STARTS_EVERY: usize = 64;

thread_local! {
    /// Frames read for single values, their buffers kept for the next.
    static FRAME_SCRATCH: std::cell::RefCell<FrameScratch> = std::cell::RefCell::new(FrameScratch::default());
}

/// Where ALP_rd lanes keep their codes and right parts, the dictionary, and the
/// exceptions (positions ascending, each with its left part).
#[derive(Debug)]
struct RdLanes {
    codes_at: u32,
    rights_at: u32,
    code_bits: u8,
    right_bits: u8,
    dict_len: u8,
    dict: [u16; RD_MAX_DICT],
    positions: Box<[u16]>,
    lefts: Box<[u16]>,
}

impl PagedVector {
    /// Opens the vector of `len` bytes in `src`, which holds values of `kind`: its
    /// header and checksum checked. `None` when its values cannot be read where they
    /// are (compressed, byte strings, or an encoding that must be decoded whole).
    pub fn open(
        src: &mut impl StoredBytes,
        kind: PhysicalKind,
        len: usize,
    ) -> Result<Option<PagedVector>, CorruptData> {
        // The vector's header and, in the same read, ALP_rd's (when there is no bitmap
        // between them): a read is a buffer lookup.
        let mut first = [0u8; HEADER_LEN + RD_HEADER_MAX];
        if len < HEADER_LEN {
            return Err(CorruptData("vector header truncated"));
        }
        let first_len = first.len().min(len);
        src.read(0, &mut first[..first_len])?;
        let head: &[u8; HEADER_LEN] = first.first_chunk().expect("HEADER_LEN bytes");
        let h = parse_header(head)?;
        if h.kind != kind {
            return Err(CorruptData("vector holds another value kind"));
        }
        let bitmap = bitmap_len(h.rows, h.null_count);
        let total = HEADER_LEN + bitmap + h.stored_len;
        if total > len {
            return Err(CorruptData("vector truncated"));
        }
        let framed = kind == PhysicalKind::Bytes && h.compression == Compression::ZstdFrames;
        let framed_text = framed && h.encoding == EncodingId::Plain;
        let framed_images = framed && h.encoding == EncodingId::ShortImages;
        // What cannot be read in place is left to opening whole, which checks the
        // checksum itself: not read twice.
        if !(framed_text || framed_images)
            && (h.compression != Compression::None || kind == PhysicalKind::Bytes)
        {
            return Ok(None);
        }
        let count = h.rows - h.null_count;
        // A framed vector's fetches check what they read: its header, bitmap and frame
        // table (`frames::table_check`), then each frame they decompress; not all of its
        // bytes (a scan checks those).
        if (!framed || count == 0)
            && src.crc(HEADER_LEN, total - HEADER_LEN, checksum::crc32c(&head[..20]))? != h.crc
        {
            return Err(CorruptData("vector checksum mismatch"));
        }
        let mut bits = vec![0u8; bitmap];
        let validity = if bitmap > 0 {
            src.read(HEADER_LEN, &mut bits)?;
            validity(&bits, h.rows, h.null_count)?
        } else {
            None
        };
        let at = HEADER_LEN + bitmap;
        let checked = (&head[..20], &bits[..]);
        let values = if count == 0 {
            Values::None
        } else if framed_text {
            Values::FramedText(Box::new(FramedText::open(src, at, h.stored_len, h.raw_len, count, checked)?))
        } else if framed_images {
            let frames = read_frames(src, at, h.stored_len, h.raw_len, checked)?;
            if frames.per_frame() == 0 || frames.count() != count.div_ceil(frames.per_frame()) {
                return Err(CorruptData("frames differ from the vector's values"));
            }
            Values::FramedImages { at: at as u32, frames: Box::new(frames) }
        } else if h.encoding == EncodingId::AlpRdLanes && kind == PhysicalKind::Float64 {
            let known = first.get(at..first_len).unwrap_or(&[]);
            match rd_lanes(src, at, h.stored_len, count, known)? {
                Some(rd) => Values::AlpRd(Box::new(rd)),
                None => return Ok(None),
            }
        } else if let Open::InPlace(check) = h.encoding.codec().open {
            let mut head = [0u8; IN_PLACE_HEAD];
            let head = &mut head[..h.stored_len.min(IN_PLACE_HEAD)];
            src.read(at, head)?;
            Values::InPlace {
                at: at as u32,
                len: h.stored_len as u32,
                layout: check(kind, head, h.stored_len, count)?,
            }
        } else {
            return Ok(None);
        };
        Ok(Some(PagedVector { kind, rows: h.rows as u32, validity, values }))
    }

    pub fn rows(&self) -> usize {
        self.rows as usize
    }

    /// Whether its values are read from zstd frames: opening it whole decompresses
    /// every frame (74 KB of `'cmt ' || md5(i)` a vector), where a read here takes one
    /// frame, or a value of one another reader left (`FrameSource::shared`).
    pub fn reads_frames(&self) -> bool {
        matches!(self.values, Values::FramedText(_) | Values::FramedImages { .. })
    }

    /// Memory it holds, itself included.
    pub fn heap_bytes(&self) -> usize {
        let own = std::mem::size_of::<PagedVector>() + self.validity.as_ref().map_or(0, |v| v.heap_bytes());
        match &self.values {
            Values::AlpRd(rd) => own + std::mem::size_of::<RdLanes>() + rd.positions.len() * 4,
            Values::FramedText(t) => {
                own + std::mem::size_of::<FramedText>()
                    + t.frames.heap_bytes()
                    + t.lens.len()
                    + t.starts.len() * 4
            }
            Values::FramedImages { frames, .. } => own + frames.heap_bytes(),
            _ => own,
        }
    }

    /// Row `i`'s value, read from `src` (the bytes it was opened from); a byte string
    /// into `text`.
    pub fn value<'t>(
        &self,
        src: &mut impl StoredBytes,
        i: usize,
        text: &'t mut Vec<u8>,
    ) -> Result<PointValue<'t>, CorruptData> {
        if i >= self.rows as usize {
            return Err(CorruptData("row beyond its vector"));
        }
        let j = match &self.validity {
            None => i,
            Some(v) => match v.dense(i) {
                Some(j) => j,
                None => return Ok(PointValue::Null),
            },
        };
        match &self.values {
            Values::None => Ok(PointValue::Null),
            Values::InPlace { at, len, layout } => {
                let (at, len) = (*at as usize, *len as usize);
                let bits = match *layout {
                    InPlace::Bytes { width } => read_le(src, at, len, j * width, width)?,
                    InPlace::Bits { skip, min, width } => {
                        let bit = j * width as usize;
                        let bytes = (bit % 8 + width as usize).div_ceil(8);
                        let v = read_le(src, at, len, skip + bit / 8, bytes)? >> (bit % 8);
                        // A field of up to 64 bits at a shift of up to 7 spans 9 bytes.
                        let v = if bytes == 9 {
                            v | (read_le(src, at, len, skip + bit / 8 + 8, 1)? << (64 - bit % 8))
                        } else {
                            v
                        };
                        let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
                        min.wrapping_add(v & mask)
                    }
                };
                Ok(fixed_value(self.kind, bits))
            }
            Values::AlpRd(rd) => rd.value(src, j).map(PointValue::Float64),
            Values::FramedText(t) => {
                text.clear();
                t.value(src, j, text)?;
                Ok(PointValue::Bytes(text))
            }
            Values::FramedImages { at, frames } => {
                let (at, per_frame) = (*at as usize, frames.per_frame());
                text.clear();
                FRAME_SCRATCH.with(|s| {
                    let (read, scratch) = (&mut Payload { src, at }, &mut *s.borrow_mut());
                    let (split, pick) = (short_images::split_frame, short_images::nth_value);
                    frames.value((j / per_frame, j % per_frame), read, scratch, split, pick, text)
                })?;
                Ok(PointValue::Bytes(text))
            }
        }
    }
}

impl FramedText {
    /// The `count` byte strings of the payload of `stored_len` bytes at `at`, which
    /// decompresses to `raw_len`: its frame table and lengths read, and checked to add
    /// up to the bytes after them.
    fn open(
        src: &mut impl StoredBytes,
        at: usize,
        stored_len: usize,
        raw_len: usize,
        count: usize,
        checked: (&[u8], &[u8]),
    ) -> Result<FramedText, CorruptData> {
        let frames = read_frames(src, at, stored_len, raw_len, checked)?;
        let (mut head, mut lens) = (Vec::new(), Vec::new());
        FRAME_SCRATCH.with(|s| {
            let scratch = &mut *s.borrow_mut();
            let read = &mut Payload { src, at };
            frames.read_range(0, bitpack::FOR_HEADER_LEN, read, scratch, &mut head)?;
            let width = head[8];
            if width > 64 {
                return Err(CorruptData("bit width above 64"));
            }
            let body = bitpack::packed_len(count, width);
            frames.read_range(bitpack::FOR_HEADER_LEN, body, read, scratch, &mut lens)
        })?;
        let len_min = i64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
        let len_width = head[8];
        let data_at = bitpack::FOR_HEADER_LEN + lens.len();
        let mut starts = Vec::with_capacity(count.div_ceil(STARTS_EVERY));
        let (mut total, mut k, mut bad) = (0u64, 0usize, false);
        bitpack::unpack(&lens, len_width, count, |d| {
            if k % STARTS_EVERY == 0 {
                starts.push(total.min(u32::MAX as u64) as u32);
            }
            let len = len_min.wrapping_add(d as i64);
            bad |= len < 0;
            total = total.saturating_add(len as u64);
            k += 1;
        })?;
        if bad || data_at as u64 + total != raw_len as u64 {
            return Err(CorruptData("byte string lengths differ from the payload"));
        }
        Ok(FramedText {
            at: at as u32,
            frames,
            len_min,
            len_width,
            lens: lens.into(),
            data_at: data_at as u32,
            starts: starts.into(),
        })
    }

    /// Value `j`'s bytes, appended to `out`.
    fn value(&self, src: &mut impl StoredBytes, j: usize, out: &mut Vec<u8>) -> Result<(), CorruptData> {
        let first = j / STARTS_EVERY * STARTS_EVERY;
        let from = first * self.len_width as usize / 8;
        let lens = self.lens.get(from..).ok_or(CorruptData("byte string length missing"))?;
        let (mut start, mut len, mut k) = (self.starts[j / STARTS_EVERY] as usize, 0usize, first);
        bitpack::unpack(lens, self.len_width, j - first + 1, |d| {
            // Checked to be in 0 .. the payload's length at open.
            let l = self.len_min.wrapping_add(d as i64) as usize;
            if k < j {
                start += l;
            } else {
                len = l;
            }
            k += 1;
        })?;
        let at = self.at as usize;
        FRAME_SCRATCH.with(|s| {
            let read = &mut Payload { src, at };
            self.frames.read_range(self.data_at as usize + start, len, read, &mut s.borrow_mut(), out)
        })
    }
}

impl RdLanes {
    fn value(&self, src: &mut impl StoredBytes, j: usize) -> Result<f64, CorruptData> {
        let (block, k) = (j / BLOCK, j % BLOCK);
        let r = self.right_bits;
        let left = match self.positions.binary_search(&(j as u16)) {
            Ok(e) => self.lefts[e] as u64,
            Err(_) => {
                let at = self.codes_at as usize + block * lanes::block_len(self.code_bits);
                let code = lane_value(src, at, 8, self.code_bits, k)? as usize;
                if code >= self.dict_len as usize {
                    return Err(CorruptData("ALP_rd code out of range"));
                }
                self.dict[code] as u64
            }
        };
        let at = self.rights_at as usize + block * lanes::block_len(r);
        let right = lane_value(src, at, 64, r, k)?;
        Ok(f64::from_bits((left << r) | right))
    }
}

/// The frame table of the `ZstdFrames` payload of `stored_len` bytes at `at`, which
/// decompresses to `raw_len`, checked against the vector's first 20 header bytes and its
/// validity bitmap (`checked`).
fn read_frames(
    src: &mut impl StoredBytes,
    at: usize,
    stored_len: usize,
    raw_len: usize,
    (header, bitmap): (&[u8], &[u8]),
) -> Result<Frames, CorruptData> {
    let mut head = [0u8; Frames::HEAD_LEN];
    if stored_len < head.len() {
        return Err(CorruptData("frame table truncated"));
    }
    src.read(at, &mut head)?;
    let table_len = Frames::table_len(&head)?;
    if table_len > stored_len {
        return Err(CorruptData("frame table beyond the payload"));
    }
    let mut table = vec![0u8; table_len];
    table[..head.len()].copy_from_slice(&head);
    src.read(at + head.len(), &mut table[head.len()..])?;
    let frames = Frames::parse(&table, raw_len, stored_len)?;
    if frames::table_check(header, bitmap, &table) != frames.check() {
        return Err(CorruptData("frame table checksum mismatch"));
    }
    Ok(frames)
}

/// Value `k` of the FastLanes block at `at`, packed at `width` bits in `t`-bit words:
/// one read of its word, or of the span to the next word of its lane when it runs on.
fn lane_value(
    src: &mut impl StoredBytes,
    at: usize,
    t: usize,
    width: u8,
    k: usize,
) -> Result<u64, CorruptData> {
    if width == 0 {
        return Ok(0);
    }
    let (lo, shift, hi) = lanes::field(t, width, k);
    let word = t / 8;
    let mut buf = [0u8; 8 * 17];
    let span = hi.map_or(word, |h| h + word - lo);
    src.read(at + lo, &mut buf[..span])?;
    let load = |from: usize| {
        let mut w = [0u8; 8];
        w[..word].copy_from_slice(&buf[from..from + word]);
        u64::from_le_bytes(w)
    };
    let hi = hi.map_or(0, |h| load(h - lo));
    Ok(lanes::join(t, width, load(0), hi, shift))
}

/// `n` (at most 8) little-endian bytes at `from` in the payload of `len` bytes at
/// `at`.
fn read_le(
    src: &mut impl StoredBytes,
    at: usize,
    len: usize,
    from: usize,
    n: usize,
) -> Result<u64, CorruptData> {
    let n = n.min(8);
    if from + n > len {
        return Err(CorruptData("value beyond its payload"));
    }
    let mut b = [0u8; 8];
    src.read(at + from, &mut b[..n])?;
    Ok(u64::from_le_bytes(b))
}

/// ALP_rd lanes of `count` values in a payload of `len` bytes at `at`: the header,
/// where the streams lie, and the exceptions (`None` if they are too many to keep).
fn rd_lanes(
    src: &mut impl StoredBytes,
    at: usize,
    len: usize,
    count: usize,
    known: &[u8],
) -> Result<Option<RdLanes>, CorruptData> {
    let mut head = [0u8; RD_HEADER_MAX];
    let n = head.len().min(len);
    if known.len() >= n {
        head[..n].copy_from_slice(&known[..n]);
    } else {
        src.read(at, &mut head[..n])?;
    }
    let h = read_rd_header::<f64>(&head[..n], count)?;
    let code_bits = rd_code_bits(h.dict_len);
    let codes_at = at + h.len;
    let rights_at = codes_at + lanes::packed_len(count, code_bits);
    let exceptions_at = rights_at + lanes::packed_len(count, h.right_bits as u8);
    let Some(exceptions_len) = (at + len).checked_sub(exceptions_at) else {
        return Err(CorruptData("ALP_rd values truncated"));
    };
    let (mut positions, mut lefts) = (Vec::with_capacity(h.exceptions), Vec::with_capacity(h.exceptions));
    if h.exceptions > 0 {
        if exceptions_len > MAX_EXCEPTION_BYTES {
            return Ok(None);
        }
        let mut bytes = vec![0u8; exceptions_len];
        src.read(exceptions_at, &mut bytes)?;
        let mut bad = false;
        let used = bitpack::decode_for(&bytes, h.exceptions, |p| {
            bad |= p < 0 || p as usize >= count || positions.last().is_some_and(|&l: &u16| l as i64 >= p);
            positions.push(p as u16);
        })?;
        let max_left = 1i64 << (64 - h.right_bits);
        bitpack::decode_for(&bytes[used..], h.exceptions, |left| {
            bad |= !(0..max_left).contains(&left);
            lefts.push(left as u16);
        })?;
        if bad {
            return Err(CorruptData("ALP_rd exception out of range"));
        }
    }
    let mut dict = [0u16; RD_MAX_DICT];
    for (d, &l) in dict.iter_mut().zip(&h.dict) {
        *d = l as u16;
    }
    Ok(Some(RdLanes {
        codes_at: codes_at as u32,
        rights_at: rights_at as u32,
        code_bits,
        right_bits: h.right_bits as u8,
        dict_len: h.dict_len as u8,
        dict,
        positions: positions.into(),
        lefts: lefts.into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::frames::FRAME_RAW;
    use crate::storage::format::encoding::point::open_vector;
    use crate::storage::format::encoding::test_util::{encode_ints, noise_i64};
    use crate::storage::format::encoding::{encode_vector, CompressionPolicy, DecodedVector, VectorValues};
    use proptest::prelude::*;

    /// A vector's bytes, counting the reads (a `StoredBytes` of the table's pages
    /// would read a buffer each).
    struct Slice<'a> {
        bytes: &'a [u8],
        reads: usize,
    }

    impl StoredBytes for Slice<'_> {
        fn read(&mut self, at: usize, out: &mut [u8]) -> Result<(), CorruptData> {
            self.reads += 1;
            let b = self.bytes.get(at..at + out.len()).ok_or(CorruptData("beyond the vector"))?;
            out.copy_from_slice(b);
            Ok(())
        }
        fn crc(&mut self, at: usize, len: usize, crc: u32) -> Result<u32, CorruptData> {
            let b = self.bytes.get(at..at + len).ok_or(CorruptData("beyond the vector"))?;
            Ok(checksum::crc32c_append(crc, b))
        }
    }

    /// Reads every row of `bytes` in place and checks it against the vector opened
    /// whole; false if it cannot be read in place. Also checks opening costs at most
    /// four reads, and a value two.
    fn same_as_opened(bytes: &[u8], kind: PhysicalKind) -> bool {
        let whole = open_vector(bytes, kind, &mut DecodedVector::default()).unwrap();
        let mut src = Slice { bytes, reads: 0 };
        let Some(paged) = PagedVector::open(&mut src, kind, bytes.len()).unwrap() else { return false };
        // The headers, the bitmap and ALP_rd's header after it if there is one, and the
        // exceptions or the payload's layout.
        assert!(src.reads <= 4, "{} reads to open", src.reads);
        assert_eq!(paged.rows(), whole.rows());
        let mut text = Vec::new();
        for i in 0..whole.rows() {
            src.reads = 0;
            let got = paged.value(&mut src, i, &mut text).unwrap();
            assert!(src.reads <= 2, "row {i}: {} reads", src.reads);
            match (got, whole.value(i)) {
                (PointValue::Float64(a), PointValue::Float64(b)) => {
                    assert_eq!(a.to_bits(), b.to_bits(), "row {i}")
                }
                (a, b) => assert_eq!(a, b, "row {i}"),
            }
        }
        assert!(paged.value(&mut src, whole.rows(), &mut Vec::new()).is_err());
        assert!(paged.heap_bytes() < 1024, "{}", paged.heap_bytes());
        true
    }

    /// A vector of the byte strings `rows` (None: NULL) under `policy`, and what was
    /// chosen for it.
    fn texts(rows: &[Option<Vec<u8>>], policy: &CompressionPolicy) -> (Vec<u8>, EncodingId, Compression) {
        let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for r in rows.iter().flatten() {
            data.extend_from_slice(r);
            offsets.push(data.len() as u32);
        }
        let mut out = Vec::new();
        let nulls = validity.iter().any(|v| !v);
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        let info = encode_vector(rows.len() as u32, nulls.then_some(&validity[..]), values, policy, &mut out);
        (out, info.encoding, info.compression)
    }

    /// `n` values like `'cmt ' || md5(i)` cut to between 20 and 36 bytes; every 97th
    /// NULL, one empty, and with `long` one of 9,000 bytes (over two frames or more).
    fn hashes(n: usize, long: bool) -> Vec<Option<Vec<u8>>> {
        let mix = |x: u64| {
            let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            x ^ (x >> 31)
        };
        (0..n as u64)
            .map(|i| {
                let s = format!("cmt {:016x}{:016x}", mix(i), mix(i | 1 << 40));
                match i {
                    _ if i % 97 == 5 => None,
                    7 => Some(Vec::new()),
                    300 if long => Some(s.bytes().cycle().take(9000).collect()),
                    _ => Some(s.as_bytes()[..20 + (mix(i) % 17) as usize].to_vec()),
                }
            })
            .collect()
    }

    #[test]
    fn high_cardinality_text_is_read_a_frame_at_a_time() {
        // Values too long for short images are stored plain, the rest as short images.
        for (long, layout) in [(true, EncodingId::Plain), (false, EncodingId::ShortImages)] {
            text_read_a_frame_at_a_time(&hashes(2048, long), layout);
        }
    }

    fn text_read_a_frame_at_a_time(rows: &[Option<Vec<u8>>], layout: EncodingId) {
        let (bytes, encoding, compression) = texts(rows, &CompressionPolicy::default());
        assert_eq!((encoding, compression), (layout, Compression::ZstdFrames));
        let whole = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
        let mut src = Slice { bytes: &bytes, reads: 0 };
        let paged =
            PagedVector::open(&mut src, PhysicalKind::Bytes, bytes.len()).unwrap().expect("read in place");
        // The lengths' fields (14 bits each for the 9,000-byte value), the frame read
        // last and a few hundred bytes more, not the 70 KB of the values.
        assert!(paged.heap_bytes() < 2048 * 14 / 8 + FRAME_RAW + 1024, "{}", paged.heap_bytes());
        let mut text = vec![1, 2, 3];
        for (i, want) in rows.iter().enumerate() {
            src.reads = 0;
            let got = paged.value(&mut src, i, &mut text).unwrap();
            match want {
                None => assert_eq!(got, PointValue::Null, "row {i}"),
                Some(w) => assert_eq!(got, PointValue::Bytes(w), "row {i}"),
            }
            assert_eq!(got, whole.value(i), "row {i}");
            // The frame or two it lies in; the long value spans up to four.
            assert!(src.reads <= if i == 300 { 4 } else { 2 }, "row {i}: {} reads", src.reads);
        }
        assert!(paged.value(&mut src, rows.len(), &mut text).is_err());
        // A damaged byte anywhere: the header, bitmap and frame table fail the open, a
        // frame fails the reads of its rows; no read returns a wrong value.
        for at in [1, 12, 30, 200, 400, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            let mut src = Slice { bytes: &bad, reads: 0 };
            let Ok(Some(paged)) = PagedVector::open(&mut src, PhysicalKind::Bytes, bad.len()) else {
                continue;
            };
            let mut failed = 0;
            for (i, want) in rows.iter().enumerate() {
                match (paged.value(&mut src, i, &mut text), want) {
                    (Err(_), _) => failed += 1,
                    (Ok(got), None) => assert_eq!(got, PointValue::Null, "byte {at}, row {i}"),
                    (Ok(got), Some(w)) => assert_eq!(got, PointValue::Bytes(w), "byte {at}, row {i}"),
                }
            }
            assert!(failed > 0, "byte {at}: every row read");
            // A scan checks the vector's own checksum.
            assert!(open_vector(&bad, PhysicalKind::Bytes, &mut DecodedVector::default()).is_err());
        }
    }

    #[test]
    fn text_that_compresses_better_whole_stays_whole() {
        // Words repeat across the vector: one zstd frame finds them all, frames of 8 KB
        // each learn them again (20-30% more bytes), so frames are not chosen.
        let words = ["furiously", "regular", "deposits", "ironic", "packages", "sleep", "carefully", "bold"];
        let rows: Vec<Option<Vec<u8>>> = (0..2048usize)
            .map(|i| {
                Some(
                    (0..4 + i % 5)
                        .map(|k| words[(i * 7 + k * 3 + i / 11) % 8])
                        .collect::<Vec<_>>()
                        .join(" ")
                        .into_bytes(),
                )
            })
            .collect();
        let (bytes, _, compression) = texts(&rows, &CompressionPolicy::default());
        assert_eq!(compression, Compression::Zstd);
        assert!(PagedVector::open(&mut Slice { bytes: &bytes, reads: 0 }, PhysicalKind::Bytes, bytes.len())
            .unwrap()
            .is_none());
        // Tables that favour size keep one frame, and small vectors need no frames.
        let size = CompressionPolicy::for_goal(crate::storage::format::encoding::EncodingGoal::Size);
        assert_eq!(texts(&hashes(2048, false), &size).2, Compression::Zstd);
        assert_eq!(texts(&hashes(100, false), &CompressionPolicy::default()).2, Compression::Zstd);
    }

    fn floats(values: &[f64], validity: Option<&[bool]>, policy: &CompressionPolicy) -> Vec<u8> {
        let rows = validity.map_or(values.len(), |v| v.len());
        let dense: Vec<f64> = match validity {
            None => values.to_vec(),
            Some(v) => values.iter().zip(v).filter(|(_, &ok)| ok).map(|(f, _)| *f).collect(),
        };
        let mut out = Vec::new();
        let info = encode_vector(rows as u32, validity, VectorValues::Float64(&dense), policy, &mut out);
        assert_eq!(info.stored_bytes, out.len());
        out
    }

    fn walk(n: usize, seed: u64) -> Vec<f64> {
        let mut x = 50.0f64;
        (0..n as u64)
            .map(|i| {
                let step = ((i.wrapping_mul(seed) >> 7) % 2001) as f64 / 1000.0 - 1.0;
                x = (x + step * 0.731_234_567_891).clamp(0.0, 100.0);
                x
            })
            .collect()
    }

    #[test]
    fn full_precision_floats_read_in_place_as_decoded() {
        let none = CompressionPolicy::NONE;
        // A random walk between 0 and 100: ALP_rd lanes, with exceptions below its
        // dictionary's binades.
        let w = walk(2048, 0x9E37_79B9_7F4A_7C15);
        let bytes = floats(&w, None, &none);
        assert!(same_as_opened(&bytes, PhysicalKind::Float64));
        // NULLs across words (so a partial last block), NaN and zeros among the values.
        let mut w = walk(2048, 0x2545_F491_4F6C_DD1D);
        w[7] = f64::NAN;
        w[1023] = 0.0;
        w[1024] = -0.0;
        let validity: Vec<bool> = (0..2048).map(|i| i % 64 != 0 && i != 1000).collect();
        assert!(same_as_opened(&floats(&w, Some(&validity), &none), PhysicalKind::Float64));
        // All NULL.
        assert!(same_as_opened(&floats(&[], Some(&[false; 10]), &none), PhysicalKind::Float64));
    }

    #[test]
    fn plain_and_bit_packed_ints_read_in_place() {
        let none = CompressionPolicy::NONE;
        let rows: Vec<Option<i64>> =
            (0..2048).map(|i| (i % 7 != 3).then_some(1000 + (i * 7919) % 5003)).collect();
        assert!(same_as_opened(&encode_ints(&rows, &none), PhysicalKind::Int));
        let wide = noise_i64(300, 0x9E37_79B9_7F4A_7C15);
        assert!(same_as_opened(&encode_ints(&wide, &none), PhysicalKind::Int));
        assert!(same_as_opened(&encode_ints(&[Some(5)], &none), PhysicalKind::Int));
        // Widths that make a field span 9 bytes.
        for width in [57, 61, 63] {
            let rows: Vec<Option<i64>> = noise_i64(200, 0x2545_F491_4F6C_DD1D)
                .iter()
                .map(|v| v.map(|v| v & (u64::MAX >> (64 - width)) as i64))
                .collect();
            assert!(same_as_opened(&encode_ints(&rows, &none), PhysicalKind::Int));
        }
    }

    #[test]
    fn what_must_be_decoded_whole_is_left_to_opening() {
        // Run lengths and deltas decode whole; compressed payloads are not where values
        // can be found.
        let runs: Vec<Option<i64>> = (0..2048).map(|i| Some(i / 400)).collect();
        assert!(!same_as_opened(&encode_ints(&runs, &CompressionPolicy::NONE), PhysicalKind::Int));
        let seq: Vec<Option<i64>> = (0..2048).map(Some).collect();
        assert!(!same_as_opened(&encode_ints(&seq, &CompressionPolicy::NONE), PhysicalKind::Int));
        let repeats: Vec<f64> = (0..2048).map(|i| (i % 3) as f64 * 1.25).collect();
        assert!(!same_as_opened(
            &floats(&repeats, None, &CompressionPolicy::default()),
            PhysicalKind::Float64
        ));
    }

    #[test]
    fn damaged_vectors_are_corrupt_not_read() {
        let bytes = floats(&walk(2048, 0x9E37_79B9_7F4A_7C15), None, &CompressionPolicy::NONE);
        for at in [0, 3, 10, 30, 200, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            let r = PagedVector::open(&mut Slice { bytes: &bad, reads: 0 }, PhysicalKind::Float64, bad.len());
            assert!(r.is_err(), "byte {at}");
        }
        let mut src = Slice { bytes: &bytes, reads: 0 };
        assert!(PagedVector::open(&mut src, PhysicalKind::Float64, bytes.len() - 1).is_err());
        assert!(PagedVector::open(&mut src, PhysicalKind::Int, bytes.len()).is_err());
        // A vector that must be opened whole is left to that open, which checks it (its
        // checksum is not read twice).
        let repeats: Vec<f64> = (0..2048).map(|i| (i % 3) as f64 * 1.25).collect();
        let mut bad = floats(&repeats, None, &CompressionPolicy::default());
        let last = bad.len() - 1;
        bad[last] ^= 0x10;
        let r = PagedVector::open(&mut Slice { bytes: &bad, reads: 0 }, PhysicalKind::Float64, bad.len());
        assert!(matches!(r, Ok(None)));
        assert!(open_vector(&bad, PhysicalKind::Float64, &mut DecodedVector::default()).is_err());
    }

    proptest! {
        #[test]
        fn prop_any_doubles_read_in_place_as_decoded(
            bits in proptest::collection::vec(any::<u64>(), 1..2049),
            nulls in proptest::collection::vec(any::<bool>(), 2048),
        ) {
            let values: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
            let validity: Vec<bool> = nulls[..values.len()].iter().map(|n| !n).collect();
            same_as_opened(&floats(&values, None, &CompressionPolicy::NONE), PhysicalKind::Float64);
            same_as_opened(&floats(&values, Some(&validity), &CompressionPolicy::NONE), PhysicalKind::Float64);
        }
    }
}
