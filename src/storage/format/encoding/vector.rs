//! One vector (up to `MAX_VECTOR_ROWS` rows of one column) as a self-describing byte
//! string, and the choice of encoding and compression for it.
//!
//! # Byte layout (all integers little-endian)
//!
//! ```text
//! offset size
//!  0     1   format version (1)
//!  1     1   physical kind (PhysicalKind as u8)
//!  2     1   encoding id (EncodingId as u8)
//!  3     1   compression id (Compression as u8)
//!  4     4   rows
//!  8     4   null count
//! 12     4   raw payload length (before compression)
//! 16     4   stored payload length
//! 20     4   crc32c of bytes 0..20, then the bitmap and the stored payload
//! 24     -   validity bitmap, only when 0 < null count < rows: ceil(rows / 8) bytes,
//!            bit i of byte i/8 (LSB first) set when row i is not null, unused bits 0
//!  -     -   stored payload: the encoded non-null values, compressed as a whole
//! ```
//!
//! The payload holds only the `rows - null count` non-null values, densely; its layout is
//! the codec's (see each codec module). An all-NULL vector has no bitmap and an empty
//! payload. Nothing in the input is trusted: every count, length and id is checked before
//! use, decompressed sizes are capped from the row count (and, for byte strings, the
//! stored size), and any inconsistency is `CorruptData`.
//!
//! # Choosing
//!
//! The lightweight encoding is the codec table's best for the policy's goal: the
//! smallest, or for scans the smallest once decode time is weighed
//! (`table::encode_chosen`). Then general compression is tried on its payload: lz4 and
//! zstd for byte strings; for numbers lz4 first and zstd only if lz4 found some
//! redundancy (bit-packed numbers otherwise look random to both). A second layout made
//! for compression is also tried: byte strings as short varlena images when every value
//! fits one, else plain (dictionary codes hide long repeats from lz4/zstd; a plain
//! primary gives way to short images within 5% of its size, as they decode without a
//! copy), and byte-split floats when the byte planes' entropy promises a win.
//! Compression is kept only when it saves at least 10%, and lz4 is preferred when within
//! 10% of zstd because it decodes several times faster; for floats, whose lightweight
//! encodings leave little redundancy, these margins (and the alternative layout's) are
//! 3%.

use crate::storage::format::checksum;
use crate::storage::format::fallible;
use std::cell::RefCell;

use super::base::{CorruptData, Fixed, PhysicalKind, Scratch, MAX_DECODED_BYTES, MAX_VECTOR_ROWS};
use super::codec::{EncodingGoal, Output, VectorValues};
use super::compress::{self, Compression};
use super::decoded::{DecodedValues, DecodedVector, Dictionary, ScaledNumerics};
use super::frames;
use super::table::{encode_chosen, EncodingId};
use super::{bitpack, dictionary, rle, scaled_numeric, short_images};

pub const FORMAT_VERSION: u8 = 1;

/// A vector whose encoding or compression this library does not know was written by a
/// later one (ids are only ever added, as `Compression::ZstdFrames` was), or is damaged;
/// either way it is not read.
pub const UNKNOWN_ENCODING: &str = "encoding id unknown to this pgcolumnar library (written by a newer one?)";
pub const UNKNOWN_COMPRESSION: &str =
    "compression id unknown to this pgcolumnar library (written by a newer one?)";
pub const HEADER_LEN: usize = 24;

/// Which general-purpose compressors the encoder may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompressionPolicy {
    pub lz4: bool,
    pub zstd: bool,
    pub zstd_level: i32,
    /// What the lightweight encoding is chosen for.
    pub goal: EncodingGoal,
}

impl Default for CompressionPolicy {
    /// Both enabled; zstd level 3 (zstd's own default, a good size/speed balance).
    fn default() -> Self {
        Self { lz4: true, zstd: true, zstd_level: 3, goal: EncodingGoal::Scan }
    }
}

impl CompressionPolicy {
    pub const NONE: Self = Self { lz4: false, zstd: false, zstd_level: 3, goal: EncodingGoal::Scan };

    /// The default compression, encodings chosen for `goal`.
    pub fn for_goal(goal: EncodingGoal) -> Self {
        Self { goal, ..Self::default() }
    }

    /// For a small row group that VACUUM merges and encodes again: the cheap codecs, no
    /// general compression (analysing and compressing a few values cost more than the
    /// rest of a trickle insert's write).
    pub const QUICK: Self = Self { lz4: false, zstd: false, zstd_level: 3, goal: EncodingGoal::Quick };
}

/// What `encode_vector` chose and how large the result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncodedVectorInfo {
    pub encoding: EncodingId,
    pub compression: Compression,
    /// Size of the non-null values in plain form: 8 or 4 bytes per fixed-width value,
    /// the total value length for byte strings.
    pub raw_bytes: usize,
    /// Bytes appended to `out` (header, bitmap and payload).
    pub stored_bytes: usize,
}

const MIN_COMPRESS_LEN: usize = 64;
/// For byte strings, decompressed payloads may be at most this many times the stored
/// size (the encoder never writes more); fixed-width payloads have an absolute bound.
const MAX_COMPRESSION_RATIO: usize = 1024;

/// Largest payload (before compression) a vector of `rows` rows may claim.
fn max_raw_len(kind: PhysicalKind, rows: usize, stored_len: usize) -> usize {
    let fixed = 16 * rows + 1024;
    match kind {
        PhysicalKind::Bytes => fixed
            .saturating_add(stored_len.saturating_mul(MAX_COMPRESSION_RATIO))
            .min(MAX_DECODED_BYTES + fixed),
        _ => fixed,
    }
}

/// One payload candidate and its compressed forms.
#[derive(Default)]
struct Candidate {
    raw: Vec<u8>,
    lz4: Vec<u8>,
    zstd: Vec<u8>,
    /// `Compression::ZstdPrefix` of `raw`.
    prefixed: Vec<u8>,
    /// `Compression::ZstdFrames` of `raw`.
    framed: Vec<u8>,
}

/// The saving, in percent, that pays for a slower decode: general compression over
/// none, zstd over lz4 (which decodes several times faster), a compressed alternative
/// layout over an uncompressed primary. Float payloads are mostly mantissa bits that
/// nothing compresses, so the little there is to gain (exponent bytes, repeats) is
/// taken from 3% on.
/// Nanoseconds zstd takes to decompress a byte (~1.4 GB/s on one core).
const ZSTD_NS_PER_BYTE: f64 = 0.7;
/// Nanoseconds lz4 takes to decompress a byte (~4 GB/s on one core).
const LZ4_NS_PER_BYTE: f64 = 0.25;

/// Bytes per value a nanosecond of decoding per value is worth for floats under the
/// policy's goal, as `encode_chosen` weighs codecs; 0 for other kinds, whose general
/// compression is kept by its saving alone.
fn float_bytes_per_ns(policy: &CompressionPolicy, kind: PhysicalKind) -> f64 {
    match kind {
        PhysicalKind::Float32 | PhysicalKind::Float64 => policy.goal.bytes_per_ns(kind),
        PhysicalKind::Int | PhysicalKind::Bytes => 0.0,
    }
}

/// What the scan goal charges a float's alternative layout for decoding slower than the
/// primary: byte planes put back together after zstd, against the chosen codec,
/// weighed in bytes as `encode_chosen` weighs codecs (0 when sizes alone decide).
fn slower_alternative_cost(
    values: VectorValues<'_>,
    primary: EncodingId,
    policy: &CompressionPolicy,
) -> usize {
    let per_ns = float_bytes_per_ns(policy, values.kind());
    if per_ns == 0.0 {
        return 0;
    }
    let n = values.len() as f64;
    let width = values.plain_bytes() as f64 / n.max(1.0);
    let alternative = EncodingId::ByteSplit.codec().decode_ns as f64 + ZSTD_NS_PER_BYTE * width;
    (per_ns * n * (alternative - primary.codec().decode_ns as f64)).max(0.0) as usize
}

fn min_saving_percent(kind: PhysicalKind) -> usize {
    match kind {
        PhysicalKind::Float32 | PhysicalKind::Float64 => 3,
        PhysicalKind::Int | PhysicalKind::Bytes => 10,
    }
}

/// Which compressors to try on a candidate.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trial {
    /// Byte strings: both.
    Both,
    /// Bit-packed numbers look random at the byte level unless they repeat, which lz4
    /// detects cheaply: zstd is only tried when lz4 found something.
    Lz4First,
    /// Byte-split planes gain through entropy coding, which only zstd has.
    ZstdFirst,
}

impl Candidate {
    /// Tries the compressors `trial` asks for; returns the choice and the stored size.
    fn compress(
        &mut self,
        policy: &CompressionPolicy,
        trial: Trial,
        kind: PhysicalKind,
        rows: usize,
    ) -> (Compression, usize) {
        let raw = self.raw.len();
        if raw < MIN_COMPRESS_LEN {
            return (Compression::None, raw);
        }
        // Only a saving of at least 10% (3% for floats) is worth the decompression on
        // every read; for floats chosen for scans, also the decompression's time, weighed
        // as the codecs' decode time is (lz4 must then save about 15%, zstd 38%).
        let margin = min_saving_percent(kind);
        let per_ns = float_bytes_per_ns(policy, kind);
        let time_bytes = |ns_per_byte: f64| (per_ns * ns_per_byte * raw as f64) as usize;
        let worth_after = |c: usize, ns_per_byte: f64| {
            (c + time_bytes(ns_per_byte)) * 100 <= raw * (100 - margin) && raw <= max_raw_len(kind, rows, c)
        };
        let try_lz4 = policy.lz4 && !(trial == Trial::ZstdFirst && policy.zstd);
        let mut lz4 = None;
        if try_lz4 {
            self.lz4.clear();
            compress::compress_lz4(&self.raw, &mut self.lz4);
            lz4 = Some(self.lz4.len()).filter(|&c| worth_after(c, LZ4_NS_PER_BYTE));
        }
        let try_zstd =
            policy.zstd && (trial != Trial::Lz4First || !try_lz4 || self.lz4.len() * 100 <= raw * 97);
        let mut zstd = None;
        if try_zstd {
            self.zstd.clear();
            if compress::compress_zstd(&self.raw, policy.zstd_level, &mut self.zstd) {
                zstd = Some(self.zstd.len()).filter(|&c| worth_after(c, ZSTD_NS_PER_BYTE));
            }
        }
        match (lz4, zstd) {
            // lz4 decodes several times faster; accept up to 10% (3%) more bytes for it.
            (Some(l), Some(z)) if l * 100 > z * (100 + margin) => (Compression::Zstd, z),
            (Some(l), _) => (Compression::Lz4, l),
            (None, Some(z)) => (Compression::Zstd, z),
            (None, None) => (Compression::None, raw),
        }
    }

    /// For a byte-string dictionary chosen with `compression` (lz4 or zstd):
    /// `ZstdPrefix`, its entries a frame of their own (which a reader skips when the
    /// vector before had the same, see `compress`), if the scan goal is the table's and
    /// that costs at most 3% more bytes than zstd (the frame's header and the codes' lz4
    /// against entropy coding), or fewer than lz4; else `compression`.
    fn prefix_entries(
        &mut self,
        policy: &CompressionPolicy,
        count: usize,
        compression: Compression,
    ) -> Compression {
        if policy.goal != EncodingGoal::Scan || !policy.zstd {
            return compression;
        }
        let Some(prefix) = dictionary::entries_len(&self.raw, count) else { return compression };
        self.prefixed.clear();
        if !compress::compress_prefixed(&self.raw, prefix, policy.zstd_level, &mut self.prefixed) {
            return compression;
        }
        let fits = match compression {
            Compression::Zstd => self.prefixed.len() * 100 <= self.zstd.len() * 103,
            _ => self.prefixed.len() < self.stored(compression).len(),
        };
        if fits {
            Compression::ZstdPrefix
        } else {
            compression
        }
    }

    /// For `count` byte strings, plain or short images, chosen with zstd: `ZstdFrames`
    /// (a row read decompresses about 8 KB, not the whole vector) if the scan goal is
    /// the table's, the payload spans several frames and they cost at most
    /// `FRAMES_EXTRA_PERCENT` more bytes than one frame; else `compression`.
    fn frame(
        &mut self,
        policy: &CompressionPolicy,
        compression: Compression,
        encoding: EncodingId,
        count: usize,
    ) -> Compression {
        let raw = self.raw.len();
        if policy.goal != EncodingGoal::Scan || raw < 2 * frames::FRAME_RAW {
            return compression;
        }
        // Plain's lengths come first, then the values: cut by bytes. Short images are
        // cut between values, a frame read walks its own images.
        let (cuts, per_frame) = match encoding {
            EncodingId::Plain => (frames::byte_cuts(raw), 0),
            EncodingId::ShortImages => {
                let per_frame = (frames::FRAME_RAW * count / raw).max(1);
                match short_images::frame_cuts(&self.raw, count, per_frame) {
                    Ok(cuts) => (cuts, per_frame as u32),
                    Err(_) => return compression,
                }
            }
            _ => return compression,
        };
        self.framed.clear();
        if !frames::compress_frames(&self.raw, &cuts, per_frame, policy.zstd_level, &mut self.framed) {
            return compression;
        }
        if self.framed.len() * 100 <= self.zstd.len() * (100 + FRAMES_EXTRA_PERCENT) {
            Compression::ZstdFrames
        } else {
            compression
        }
    }

    fn stored(&self, c: Compression) -> &[u8] {
        match c {
            Compression::None => &self.raw,
            Compression::Lz4 => &self.lz4,
            Compression::Zstd => &self.zstd,
            Compression::ZstdPrefix => &self.prefixed,
            Compression::ZstdFrames => &self.framed,
        }
    }
}

/// Order-0 entropy of each byte plane, in bytes: roughly what zstd's entropy coder
/// makes of byte-split floats (it can do better only through repeats).
/// Estimated from at most 512 values: a small sample underestimates entropy, which
/// only makes the encoder try zstd a little more often.
fn byte_plane_entropy<T: Fixed>(values: &[T]) -> usize {
    let mut hist = [[0u32; 256]; 8];
    let step = values.len().div_ceil(512).max(1);
    let mut n = 0u32;
    for v in values.iter().step_by(step) {
        n += 1;
        for (k, b) in v.to_bits64().to_le_bytes()[..T::BYTES].iter().enumerate() {
            hist[k][*b as usize] += 1;
        }
    }
    let n = n as f64;
    let bits_per_value: f64 = hist[..T::BYTES]
        .iter()
        .flat_map(|h| h.iter())
        .filter(|&&c| c > 0)
        .map(|&c| -(c as f64 / n) * (c as f64 / n).log2())
        .sum();
    (bits_per_value * values.len() as f64 / 8.0) as usize
}

/// How many percent more bytes frames of zstd may take than one frame for a vector of
/// byte strings, to be chosen (`Candidate::frame`).
const FRAMES_EXTRA_PERCENT: usize = 8;

/// Encoder buffers above this size are freed after use rather than kept per thread.
const MAX_CACHED_BUFFER: usize = 4 << 20;

#[derive(Default)]
struct EncodeScratch {
    primary: Candidate,
    alternative: Candidate,
}

thread_local! {
    static ENCODE_SCRATCH: RefCell<EncodeScratch> = RefCell::new(EncodeScratch::default());
}

/// Encodes one vector and appends it to `out`.
///
/// `validity` is `None` when no row is NULL, otherwise one entry per row (`true` = not
/// null); `values` holds only the non-null values. Panics if the arguments disagree
/// (`rows` above `MAX_VECTOR_ROWS`, wrong validity length, value count not matching the
/// non-null rows, offsets out of order, more than `MAX_DECODED_BYTES` of byte strings):
/// those are caller bugs, not data errors.
pub fn encode_vector(
    rows: u32,
    validity: Option<&[bool]>,
    values: VectorValues<'_>,
    policy: &CompressionPolicy,
    out: &mut Vec<u8>,
) -> EncodedVectorInfo {
    let kind = values.kind();
    let n_rows = rows as usize;
    let count = checked_value_count(rows, validity, values);
    let null_count = n_rows - count;
    let start = out.len();
    out.resize(start + HEADER_LEN, 0);
    if null_count > 0 && count > 0 {
        let v = validity.expect("nulls imply validity");
        bitpack::pack(v.iter().map(|&b| b as u64), 1, n_rows, out);
    }

    let (encoding, compression, raw_len) =
        ENCODE_SCRATCH.with(|cell| cell.borrow_mut().encode_payload(values, policy, n_rows, out));

    let stored_len = out.len() - start - HEADER_LEN - bitmap_len(n_rows, null_count);
    let header =
        Header { kind, encoding, compression, rows: n_rows, null_count, raw_len, stored_len, crc: 0 };
    write_header(&header, &mut out[start..]);
    EncodedVectorInfo {
        encoding,
        compression,
        raw_bytes: values.plain_bytes(),
        stored_bytes: out.len() - start,
    }
}

/// The number of non-null values, after checking that the caller's arguments agree
/// (panics if not: see `encode_vector`).
fn checked_value_count(rows: u32, validity: Option<&[bool]>, values: VectorValues<'_>) -> usize {
    assert!(rows <= MAX_VECTOR_ROWS, "vector of {rows} rows exceeds {MAX_VECTOR_ROWS}");
    let n_rows = rows as usize;
    let count = match validity {
        Some(v) => {
            assert_eq!(v.len(), n_rows, "validity length differs from rows");
            v.iter().filter(|&&b| b).count()
        }
        None => n_rows,
    };
    assert_eq!(values.len(), count, "value count differs from non-null rows");
    if let VectorValues::Bytes { offsets, data } = values {
        assert!(!offsets.is_empty(), "offsets need count + 1 entries");
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "offsets out of order");
        assert!(*offsets.last().unwrap() as usize <= data.len(), "offsets beyond data");
        assert!(
            (offsets[count] - offsets[0]) as usize <= MAX_DECODED_BYTES,
            "vector holds more than {MAX_DECODED_BYTES} bytes"
        );
    }
    count
}

impl EncodeScratch {
    /// Encodes the non-null values in the chosen layout and compression and appends
    /// the stored payload to `out`; returns the choice and the payload's raw length.
    fn encode_payload(
        &mut self,
        values: VectorValues<'_>,
        policy: &CompressionPolicy,
        n_rows: usize,
        out: &mut Vec<u8>,
    ) -> (EncodingId, Compression, usize) {
        let kind = values.kind();
        let EncodeScratch { primary, alternative } = &mut *self;
        primary.raw.clear();
        let encoding = encode_chosen(values, policy.goal, &mut primary.raw);
        // Scaled numerics are integers underneath: compressed as numbers are.
        let trial = if kind == PhysicalKind::Bytes && encoding != EncodingId::ScaledNumeric {
            Trial::Both
        } else {
            Trial::Lz4First
        };
        let (mut compression, stored) = primary.compress(policy, trial, kind, n_rows);
        let mut chosen = encoding;
        // A layout made for general compression may beat the lightweight encoding once
        // compressed: plain byte strings (a dictionary's codes hide long repeats from
        // lz4/zstd), and byte-split floats when their entropy promises a clear win (an
        // uncompressed primary decodes faster, so it must be beaten by 10%, or 3%).
        let target = match compression {
            Compression::None => stored * (100 - min_saving_percent(kind)) / 100,
            _ => stored,
        };
        let target = target.saturating_sub(slower_alternative_cost(values, encoding, policy));
        if let Some(alt_id) = alternative_layout(values, encoding, policy, stored, target) {
            // Short images decode with no copy where plain byte strings are copied twice
            // (into the values, then into each row's image): within 5% of plain's size
            // they are worth the bytes, compressed or not (TPC-H's l_comment: 3% more
            // under zstd, their 1-byte headers among the text).
            let target = match (alt_id, encoding) {
                (EncodingId::ShortImages, EncodingId::Plain) => stored + stored / 20 + 1,
                _ => target,
            };
            alternative.raw.clear();
            fallible::reserve(&mut alternative.raw, values.plain_bytes());
            (alt_id.codec().encode)(values, &(), &mut alternative.raw);
            let trial = if kind == PhysicalKind::Bytes { Trial::Both } else { Trial::ZstdFirst };
            let (c, s) = alternative.compress(policy, trial, kind, n_rows);
            if s < target && s + dictionary_decode_credit(encoding, values) < target {
                compression = c;
                chosen = alt_id;
            }
        }
        if chosen == EncodingId::Dictionary && compression != Compression::None && kind == PhysicalKind::Bytes
        {
            compression = primary.prefix_entries(policy, values.len(), compression);
        }
        let (cand, encoding) = if chosen == encoding { (primary, encoding) } else { (alternative, chosen) };
        if compression == Compression::Zstd && kind == PhysicalKind::Bytes {
            compression = cand.frame(policy, compression, encoding, values.len());
        }
        fallible::extend_from_slice(out, cand.stored(compression));
        let raw_len = cand.raw.len();
        self.release_outsized();
        (encoding, compression, raw_len)
    }

    /// Keeps the buffers for the next vector, but not after an outsized one.
    #[inline]
    fn release_outsized(&mut self) {
        let EncodeScratch { primary, alternative } = self;
        for buf in [primary, alternative]
            .into_iter()
            .flat_map(|c| [&mut c.raw, &mut c.lz4, &mut c.zstd, &mut c.prefixed, &mut c.framed])
        {
            if buf.capacity() > MAX_CACHED_BUFFER {
                *buf = Vec::new();
            }
        }
    }
}

/// Bytes of storage a dictionary is worth over the plain layout that would replace it:
/// 1/16 of the values' plain size. A dictionary is read per code, and a scan makes each
/// entry's Datum once; plain byte strings are decompressed whole, copied and made into
/// a Datum per value, which costs several times more per row. So plain + zstd, which
/// finds long repeats a dictionary's codes hide (values recurring in a fixed cycle),
/// must save more than that to be chosen. Runs of byte strings are read the same way
/// (each run an entry, each row its run's code: `decode_bytes_codes`), and zstd finds
/// their repeats too: on a table sorted by a text key (TSBS's hostname, about 256 rows
/// a run), short images + zstd were some 30 bytes smaller a vector than runs + lz4 and
/// made a GROUP BY on the key 1.8x slower. 0 for any other primary encoding, and for
/// runs of numbers (whose alternative, byte-split floats, is weighed by its decode
/// time already: `slower_alternative_cost`).
fn dictionary_decode_credit(encoding: EncodingId, values: VectorValues<'_>) -> usize {
    match (encoding, values) {
        (EncodingId::Dictionary, _) | (EncodingId::Rle, VectorValues::Bytes { .. }) => {
            values.plain_bytes() / 16
        }
        _ => 0,
    }
}

/// The layout made for general compression worth trying besides the lightweight
/// `encoding` (whose payload is `stored` bytes), if any; it must be stored in fewer
/// than `target` bytes to win.
#[inline]
fn alternative_layout(
    values: VectorValues<'_>,
    encoding: EncodingId,
    policy: &CompressionPolicy,
    stored: usize,
    target: usize,
) -> Option<EncodingId> {
    let compressing = policy.lz4 || policy.zstd;
    // Floats the lightweight encoding already halved are not worth a histogram.
    let floats_worth = stored * 2 > values.plain_bytes();
    match values {
        // A vector without values stores none, plain (`decode_vector_into`).
        _ if !compressing || values.is_empty() => None,
        // Numerics read as integers, never parsed per row, are worth more than the
        // bytes plain zstd might save.
        _ if encoding == EncodingId::ScaledNumeric => None,
        // Short images where every value fits them (a plain primary is worth trying
        // again as them), else plain.
        VectorValues::Bytes { offsets, .. } if short_images::fits(offsets) => Some(EncodingId::ShortImages),
        VectorValues::Bytes { .. } => Some(EncodingId::Plain),
        VectorValues::Float32(v) if floats_worth && byte_plane_entropy(v) < target => {
            Some(EncodingId::ByteSplit)
        }
        VectorValues::Float64(v) if floats_worth && byte_plane_entropy(v) < target => {
            Some(EncodingId::ByteSplit)
        }
        _ => None,
    }
    .filter(|&a| a != encoding)
}

/// Writes `header` (its `crc` ignored) into the first `HEADER_LEN` bytes of `vector`,
/// with the checksum of those and the rest of `vector` (bitmap and stored payload).
fn write_header(header: &Header, vector: &mut [u8]) {
    let h = &mut vector[..HEADER_LEN];
    h[0] = FORMAT_VERSION;
    h[1] = header.kind as u8;
    h[2] = header.encoding as u8;
    h[3] = header.compression as u8;
    h[4..8].copy_from_slice(&(header.rows as u32).to_le_bytes());
    h[8..12].copy_from_slice(&(header.null_count as u32).to_le_bytes());
    h[12..16].copy_from_slice(&(header.raw_len as u32).to_le_bytes());
    h[16..20].copy_from_slice(&(header.stored_len as u32).to_le_bytes());
    if header.compression == Compression::ZstdFrames {
        // Its frame table's own check covers the header and bitmap (what a fetch reads).
        let bitmap = bitmap_len(header.rows, header.null_count);
        let (h, rest) = vector.split_at_mut(HEADER_LEN);
        let (bits, payload) = rest.split_at_mut(bitmap);
        frames::seal(&h[..20], bits, payload);
    }
    let crc = checksum::crc32c_append(checksum::crc32c(&vector[..20]), &vector[HEADER_LEN..]);
    vector[20..24].copy_from_slice(&crc.to_le_bytes());
}

pub(super) fn bitmap_len(rows: usize, null_count: usize) -> usize {
    if null_count > 0 && null_count < rows {
        rows.div_ceil(8)
    } else {
        0
    }
}

pub(super) struct Header {
    pub(super) kind: PhysicalKind,
    pub(super) encoding: EncodingId,
    pub(super) compression: Compression,
    pub(super) rows: usize,
    pub(super) null_count: usize,
    pub(super) raw_len: usize,
    pub(super) stored_len: usize,
    pub(super) crc: u32,
}

pub(super) fn parse_header(h: &[u8; HEADER_LEN]) -> Result<Header, CorruptData> {
    let u32_at = |i: usize| u32::from_le_bytes(h[i..i + 4].try_into().expect("4 bytes")) as usize;
    if h[0] != FORMAT_VERSION {
        return Err(CorruptData("unknown vector format version"));
    }
    let kind = PhysicalKind::from_u8(h[1]).ok_or(CorruptData("unknown physical kind"))?;
    let encoding = EncodingId::from_u8(h[2]).ok_or(CorruptData(UNKNOWN_ENCODING))?;
    let compression = Compression::from_u8(h[3]).ok_or(CorruptData(UNKNOWN_COMPRESSION))?;
    let header = Header {
        kind,
        encoding,
        compression,
        rows: u32_at(4),
        null_count: u32_at(8),
        raw_len: u32_at(12),
        stored_len: u32_at(16),
        crc: u32_at(20) as u32,
    };
    if header.rows > MAX_VECTOR_ROWS as usize {
        return Err(CorruptData("vector row count too large"));
    }
    if header.null_count > header.rows {
        return Err(CorruptData("more nulls than rows"));
    }
    if !encoding.applies_to(kind) {
        return Err(CorruptData("encoding does not apply to the value kind"));
    }
    if compression == Compression::None && header.raw_len != header.stored_len {
        return Err(CorruptData("uncompressed payload length mismatch"));
    }
    if header.raw_len > max_raw_len(kind, header.rows, header.stored_len) {
        return Err(CorruptData("vector payload size implausible"));
    }
    Ok(header)
}

/// The values vector of `$slot` if it holds `$variant`, emptied, or a new one; with
/// room for `$rows` values either way, so decoding never grows it step by step (a
/// vector whose rows were taken out starts from nothing).
macro_rules! reuse {
    ($slot:expr, $variant:ident, $rows:expr) => {{
        let mut v = match std::mem::take($slot) {
            DecodedValues::$variant(mut v) => {
                v.clear();
                v
            }
            _ => Vec::new(),
        };
        v.reserve($rows);
        v
    }};
}

/// Decodes `$payload` into the `$variant` values of `$values`, reusing its vector; the
/// bytes the codec read, or its error (the values are put back either way).
macro_rules! decode_fixed {
    ($payload:expr, $values:expr, $variant:ident, $codec:expr) => {{
        let mut v = reuse!($values, $variant, $payload.rows);
        let used = $payload.decode(Output::$variant(&mut v), $codec);
        *$values = DecodedValues::$variant(v);
        used
    }};
}

/// A vector's parts, its header and checksum checked.
pub(super) struct Frame<'a> {
    pub(super) header: Header,
    pub(super) bitmap: &'a [u8],
    /// The payload as stored (compressed or not).
    pub(super) stored: &'a [u8],
    /// Bytes the vector takes in its input.
    pub(super) total: usize,
}

/// Whether the vector whose header is `head` stores scaled numerics
/// (`EncodingId::ScaledNumeric`).
pub fn stores_scaled_numerics(head: &[u8; HEADER_LEN]) -> bool {
    parse_header(head).is_ok_and(|h| h.encoding == EncodingId::ScaledNumeric)
}

/// Splits the vector at the front of `input` into its parts, checking its header and
/// checksum and that it holds values of `kind`.
pub(super) fn frame(input: &[u8], kind: PhysicalKind) -> Result<Frame<'_>, CorruptData> {
    let head: &[u8; HEADER_LEN] = input.first_chunk().ok_or(CorruptData("vector header truncated"))?;
    let header = parse_header(head)?;
    if header.kind != kind {
        return Err(CorruptData("vector holds another value kind"));
    }
    let bitmap_len = bitmap_len(header.rows, header.null_count);
    let total = HEADER_LEN + bitmap_len + header.stored_len;
    let body = input.get(HEADER_LEN..total).ok_or(CorruptData("vector truncated"))?;
    if checksum::crc32c_append(checksum::crc32c(&head[..20]), body) != header.crc {
        return Err(CorruptData("vector checksum mismatch"));
    }
    let (bitmap, stored) = body.split_at(bitmap_len);
    Ok(Frame { header, bitmap, stored, total })
}

/// Decodes the vector at the front of `input` (which may have trailing bytes) into
/// `out`, reusing its allocations. Returns the bytes consumed. On error `out` holds
/// unspecified (but valid) contents.
pub fn decode_vector(
    input: &[u8],
    kind: PhysicalKind,
    out: &mut DecodedVector,
) -> Result<usize, CorruptData> {
    with_decompressed(|buf| decode_vector_into(input, kind, out, buf))
}

thread_local! {
    /// The payload of the vector being decoded, decompressed: one buffer for every
    /// column (a vector's values are out of it once decoded), so that a wide row's
    /// columns keep fewer bytes in the caches than with a buffer each.
    static DECOMPRESSED: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with the thread's decompression buffer (a fresh one if `f` panicked before).
fn with_decompressed<T>(f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
    let mut buf = DECOMPRESSED.with(|b| std::mem::take(&mut *b.borrow_mut()));
    let result = f(&mut buf);
    DECOMPRESSED.with(|b| *b.borrow_mut() = buf);
    result
}

fn decode_vector_into(
    input: &[u8],
    kind: PhysicalKind,
    out: &mut DecodedVector,
    decompressed: &mut Vec<u8>,
) -> Result<usize, CorruptData> {
    let Frame { header: h, bitmap, stored, total } = frame(input, kind)?;
    let count = h.rows - h.null_count;

    let DecodedVector {
        rows,
        validity,
        values,
        keep_dictionary,
        dictionary,
        keep_scaled,
        scaled,
        keep_images,
        images,
        scratch,
    } = out;
    // Kept for reuse, and set again below if this vector is decoded as a dictionary
    // (or as scaled numerics, or short images).
    let spare_dictionary = dictionary.take();
    let spare_scaled = scaled.take();
    let spare_images = images.take();
    *rows = h.rows as u32;
    decode_validity(&h, count, bitmap, validity, &mut scratch.spare_validity)?;

    let payload =
        Payload { bytes: raw_payload(&h, stored, decompressed)?, count, rows: h.rows, encoding: h.encoding };
    // A vector without values stores nothing (codecs need not agree on an empty payload).
    if count == 0 && (h.raw_len != 0 || h.encoding != EncodingId::Plain) {
        return Err(CorruptData("payload for a vector without values"));
    }
    let codec = &mut scratch.codec;
    let used = match kind {
        PhysicalKind::Int => decode_fixed!(payload, values, Int, codec),
        PhysicalKind::Float32 => decode_fixed!(payload, values, Float32, codec),
        PhysicalKind::Float64 => decode_fixed!(payload, values, Float64, codec),
        PhysicalKind::Bytes if *keep_scaled && count > 0 && h.encoding == EncodingId::ScaledNumeric => {
            payload.decode_scaled(values, codec, spare_scaled, scaled, validity.as_deref())
        }
        PhysicalKind::Bytes if *keep_images && count > 0 && h.encoding == EncodingId::ShortImages => {
            let mut im = spare_images.unwrap_or_default();
            im.starts.clear();
            let used = short_images::decode_starts(payload.bytes, count, &mut im.starts);
            // The payload is the images: the decompression buffer becomes theirs (their
            // old one serves the next vector's decompression); a stored one is copied.
            if h.compression == Compression::None {
                im.data.clear();
                im.data.extend_from_slice(payload.bytes);
            } else {
                std::mem::swap(decompressed, &mut im.data);
            }
            if let Some(valid) = validity.as_deref() {
                spread_codes(&mut im.starts, valid);
            }
            empty_rows(values, h.rows);
            *images = Some(im);
            used
        }
        PhysicalKind::Bytes => payload.decode_bytes(
            values,
            codec,
            *keep_dictionary,
            spare_dictionary,
            dictionary,
            validity.as_deref(),
        ),
    }?;
    if used != h.raw_len {
        return Err(CorruptData("vector payload length mismatch"));
    }
    if let Some(valid) = validity.as_deref() {
        spread_to_rows(values, valid, dictionary.is_some() || scaled.is_some() || images.is_some());
    }
    Ok(total)
}

/// `decode_vector` for a caller that reads only rows `wanted` (ascending) of the vector:
/// a vector of byte strings kept as its dictionary (`keep_dictionary`), or of integers
/// bit-packed on a frame of reference, without NULLs, has those rows alone decoded (the
/// others read as code or value 0), which spares a filter whose earlier tests left a
/// few rows of 2,048, or the output of those rows, the decoding of the rest. Any other
/// vector is decoded whole. Returns the bytes consumed and whether only `wanted` rows
/// were decoded. On error `out` holds unspecified (but valid) contents.
pub fn decode_vector_rows(
    input: &[u8],
    kind: PhysicalKind,
    wanted: &[u32],
    out: &mut DecodedVector,
) -> Result<(usize, bool), CorruptData> {
    with_decompressed(|buf| decode_vector_rows_into(input, kind, wanted, out, buf))
}

fn decode_vector_rows_into(
    input: &[u8],
    kind: PhysicalKind,
    wanted: &[u32],
    out: &mut DecodedVector,
    decompressed: &mut Vec<u8>,
) -> Result<(usize, bool), CorruptData> {
    let Frame { header: h, bitmap, stored, total } = frame(input, kind)?;
    let sparse = kind == PhysicalKind::Bytes
        && out.keep_dictionary
        && h.null_count == 0
        && h.rows > 0
        && h.encoding == EncodingId::Dictionary;
    let sparse_ints =
        kind == PhysicalKind::Int && h.null_count == 0 && h.rows > 0 && h.encoding == EncodingId::BitPack;
    if sparse_ints {
        let DecodedVector { rows, validity, values, dictionary, scaled, images, scratch, .. } = out;
        *rows = h.rows as u32;
        *dictionary = None;
        *scaled = None;
        *images = None;
        decode_validity(&h, h.rows, bitmap, validity, &mut scratch.spare_validity)?;
        let bytes = raw_payload(&h, stored, decompressed)?;
        let mut ints = match std::mem::replace(values, DecodedValues::Int(Vec::new())) {
            DecodedValues::Int(v) => v,
            _ => Vec::new(),
        };
        ints.clear();
        ints.resize(h.rows, 0);
        let used = bitpack::decode_for_at(bytes, h.rows, wanted, |r, v| ints[r] = v);
        *values = DecodedValues::Int(ints);
        if used? != h.raw_len {
            return Err(CorruptData("vector payload length mismatch"));
        }
        return Ok((total, true));
    }
    let sparse_scaled = kind == PhysicalKind::Bytes
        && out.keep_scaled
        && h.null_count == 0
        && h.rows > 0
        && h.encoding == EncodingId::ScaledNumeric;
    if sparse_scaled {
        let DecodedVector { rows, validity, values, dictionary, scaled, images, scratch, .. } = out;
        let bytes = raw_payload(&h, stored, decompressed)?;
        *images = None;
        let mut s = scaled.take().unwrap_or_default();
        // Rows not wanted are left unspecified: only the length must be the vector's.
        s.m.resize(h.rows, 0);
        match scaled_numeric::decode_mantissas_at(bytes, h.rows, wanted, &mut s.m, &mut scratch.codec)? {
            Some((used, scale)) => {
                if used != h.raw_len {
                    return Err(CorruptData("vector payload length mismatch"));
                }
                *rows = h.rows as u32;
                *dictionary = None;
                decode_validity(&h, h.rows, bitmap, validity, &mut scratch.spare_validity)?;
                s.scale = scale;
                *scaled = Some(s);
                empty_rows(values, h.rows);
                return Ok((total, true));
            }
            None => *scaled = Some(s),
        }
    }
    if !sparse {
        return decode_vector_into(input, kind, out, decompressed).map(|used| (used, false));
    }
    let DecodedVector { rows, validity, values, dictionary, scaled, images, scratch, .. } = out;
    *rows = h.rows as u32;
    // A previous vector's scaled numerics or images are no longer this vector's.
    *scaled = None;
    *images = None;
    decode_validity(&h, h.rows, bitmap, validity, &mut scratch.spare_validity)?;
    let bytes = raw_payload(&h, stored, decompressed)?;
    let mut d = dictionary.take().unwrap_or_default();
    d.source.clear();
    let used = dictionary::decode_bytes_codes_at(
        bytes,
        h.rows,
        wanted,
        &mut d.codes,
        &mut d.offsets,
        &mut d.data,
        &mut scratch.codec.lens,
    )?;
    if used != h.raw_len {
        return Err(CorruptData("vector payload length mismatch"));
    }
    // As `decode_bytes` leaves a dictionary: row-aligned, empty values.
    let (mut offsets, mut data) = match std::mem::take(values) {
        DecodedValues::Bytes { offsets, data } => (offsets, data),
        _ => (Vec::new(), Vec::new()),
    };
    offsets.clear();
    offsets.resize(h.rows + 1, 0);
    data.clear();
    *values = DecodedValues::Bytes { offsets, data };
    *dictionary = Some(d);
    Ok((total, true))
}

/// Reads the validity of each row into `validity` (`None` when no row is NULL), taking
/// its buffer from `validity` or `spare` and keeping it in `spare` while there are no
/// nulls.
#[inline]
fn decode_validity(
    h: &Header,
    count: usize,
    bitmap: &[u8],
    validity: &mut Option<Vec<bool>>,
    spare: &mut Vec<bool>,
) -> Result<(), CorruptData> {
    let mut valid = match validity.take() {
        Some(v) => v,
        None => std::mem::take(spare),
    };
    valid.clear();
    if h.null_count == 0 {
        *spare = valid;
    } else {
        if count == 0 {
            valid.resize(h.rows, false);
        } else {
            let mut ones = 0usize;
            bitpack::unpack(bitmap, 1, h.rows, |b| {
                ones += b as usize;
                valid.push(b != 0);
            })?;
            // Spreading values to rows relies on exactly `count` valid rows.
            let tail_bits = (h.rows % 8) as u32;
            let tail_clean = tail_bits == 0 || bitmap[bitmap.len() - 1] >> tail_bits == 0;
            if ones != count || !tail_clean {
                return Err(CorruptData("validity bitmap disagrees with null count"));
            }
        }
        *validity = Some(valid);
    }
    Ok(())
}

/// The payload as the codec reads it: the stored bytes, or them decompressed into `buf`.
#[inline]
fn raw_payload<'a>(h: &Header, stored: &'a [u8], buf: &'a mut Vec<u8>) -> Result<&'a [u8], CorruptData> {
    if h.compression == Compression::None {
        Ok(stored)
    } else {
        decompress_payload(h.compression, stored, h.raw_len, buf)?;
        Ok(buf)
    }
}

/// A vector's stored payload decompressed into `out` (cleared first) as its header's
/// `method` says: zstd frames by `frames`, which builds on `compress`; the others by
/// `compress`.
pub(super) fn decompress_payload(
    method: Compression,
    stored: &[u8],
    raw_len: usize,
    out: &mut Vec<u8>,
) -> Result<(), CorruptData> {
    match method {
        Compression::ZstdFrames => frames::decompress_frames(stored, raw_len, out),
        _ => compress::decompress(method, stored, raw_len, out),
    }
}

/// A vector's uncompressed payload: its `count` non-null values, as `encoding` wrote
/// them, for a vector of `rows` rows.
struct Payload<'a> {
    bytes: &'a [u8],
    count: usize,
    rows: usize,
    encoding: EncodingId,
}

impl Payload<'_> {
    /// Decodes the values into `out`: one call through the codec table per vector; the
    /// codec's loops are its own.
    #[inline]
    fn decode(&self, out: Output<'_>, codec: &mut Scratch) -> Result<usize, CorruptData> {
        match self.count {
            0 => Ok(0),
            _ => (self.encoding.codec().decode)(self.bytes, self.count, out, codec),
        }
    }

    /// Decodes byte strings into `values` (dense offsets and data), or, when the caller
    /// keeps dictionaries and this is one, into `spare` (entries and row-aligned codes),
    /// which then becomes `dictionary`, leaving `values` with `rows` empty rows.
    #[inline]
    fn decode_bytes(
        &self,
        values: &mut DecodedValues,
        codec: &mut Scratch,
        keep_dictionary: bool,
        mut spare: Option<Dictionary>,
        dictionary: &mut Option<Dictionary>,
        validity: Option<&[bool]>,
    ) -> Result<usize, CorruptData> {
        let (mut offsets, mut data) = match std::mem::take(values) {
            DecodedValues::Bytes { mut offsets, mut data } => {
                offsets.clear();
                data.clear();
                (offsets, data)
            }
            _ => (Vec::new(), Vec::new()),
        };
        offsets.push(0);
        let as_codes = keep_dictionary
            && self.count > 0
            && matches!(self.encoding, EncodingId::Dictionary | EncodingId::Rle);
        if !as_codes {
            offsets.reserve(self.rows + 1);
            fallible::reserve(&mut data, self.bytes.len());
        }
        let used = if as_codes {
            // Byte strings kept as their dictionary (for filters): entries and codes.
            // Runs are kept the same way: their values as entries, each row its run.
            let d = spare.get_or_insert_with(Dictionary::default);
            let used = if self.encoding == EncodingId::Rle {
                d.source.clear();
                rle::decode_bytes_codes(
                    self.bytes,
                    self.count,
                    &mut d.codes,
                    &mut d.offsets,
                    &mut d.data,
                    &mut codec.lens,
                )
            } else {
                dictionary::decode_bytes_codes_into(self.bytes, self.count, d, &mut codec.lens)
            };
            if used.is_ok() {
                // Codes to rows: offsets stay row-aligned (all empty), for `rows`.
                offsets.resize(self.rows + 1, 0);
                if let Some(valid) = validity {
                    spread_codes(&mut d.codes, valid);
                }
                *dictionary = spare.take();
            }
            used
        } else {
            self.decode(Output::Bytes { offsets: &mut offsets, data: &mut data }, codec)
        };
        *values = DecodedValues::Bytes { offsets, data };
        used
    }
}

impl Payload<'_> {
    /// Decodes scaled numerics into `spare` (their mantissas, spread to rows), which
    /// becomes `scaled`, leaving `values` with `rows` empty byte strings.
    #[inline]
    fn decode_scaled(
        &self,
        values: &mut DecodedValues,
        codec: &mut Scratch,
        mut spare: Option<ScaledNumerics>,
        scaled: &mut Option<ScaledNumerics>,
        validity: Option<&[bool]>,
    ) -> Result<usize, CorruptData> {
        let s = spare.get_or_insert_with(ScaledNumerics::default);
        s.m.clear();
        let (used, scale) = scaled_numeric::decode_mantissas(self.bytes, self.count, &mut s.m, codec)?;
        s.scale = scale;
        if let Some(valid) = validity {
            spread(&mut s.m, valid);
        }
        empty_rows(values, self.rows);
        *scaled = spare;
        Ok(used)
    }
}

/// Makes `values` `rows` empty byte strings (a vector read as scaled numerics), in the
/// buffers it has: offsets that are all 0 already (the last is, and they never fall)
/// are kept as they are.
fn empty_rows(values: &mut DecodedValues, rows: usize) {
    if let DecodedValues::Bytes { offsets, data } = values {
        data.clear();
        if offsets.len() != rows + 1 || offsets.last() != Some(&0) {
            offsets.clear();
            offsets.resize(rows + 1, 0);
        }
        return;
    }
    *values = DecodedValues::Bytes { offsets: vec![0; rows + 1], data: Vec::new() };
}

/// Moves the dense values of a vector with NULLs to their rows; a dictionary's codes
/// (`as_dictionary`) were spread as they were decoded.
#[inline]
fn spread_to_rows(values: &mut DecodedValues, valid: &[bool], as_dictionary: bool) {
    match values {
        DecodedValues::Int(v) => spread(v, valid),
        DecodedValues::Float32(v) => spread(v, valid),
        DecodedValues::Float64(v) => spread(v, valid),
        DecodedValues::Bytes { offsets, .. } if !as_dictionary => spread_offsets(offsets, valid),
        DecodedValues::Bytes { .. } => {}
    }
}

/// Moves dense codes to their rows (from the back); NULL rows get code 0.
fn spread_codes(codes: &mut Vec<u32>, valid: &[bool]) {
    let mut j = codes.len();
    codes.resize(valid.len(), 0);
    for i in (0..valid.len()).rev() {
        if valid[i] {
            j -= 1;
            codes[i] = codes[j];
        } else {
            codes[i] = 0;
        }
    }
}

/// Moves dense values to their rows (in place, from the back) and zeroes NULL rows.
fn spread<T: Fixed>(values: &mut Vec<T>, valid: &[bool]) {
    let mut j = values.len();
    values.resize(valid.len(), T::default());
    for i in (0..valid.len()).rev() {
        if valid[i] {
            j -= 1;
            values[i] = values[j];
        } else {
            values[i] = T::default();
        }
    }
}

/// Turns dense offsets (count + 1) into row offsets (rows + 1), NULL rows empty.
fn spread_offsets(offsets: &mut Vec<u32>, valid: &[bool]) {
    // Invariant: j = number of valid rows in 0..=i, so row i ends where dense value
    // j - 1 ends. Reads (index j <= i + 1) never see an already rewritten slot.
    let mut j = offsets.len() - 1;
    offsets.resize(valid.len() + 1, 0);
    for i in (0..valid.len()).rev() {
        offsets[i + 1] = offsets[j];
        if valid[i] {
            j -= 1;
        }
    }
}
