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
use super::lanes::{self, BLOCK};
use super::point::{fixed_value, validity, PointValue, Validity};
use super::table::EncodingId;
use super::vector::{bitmap_len, parse_header, HEADER_LEN};
use crate::storage::format::checksum;

/// A stored vector's bytes, read a few at a time; offsets count from its first byte.
pub trait StoredBytes {
    /// Copies the bytes at `at .. at + out.len()` into `out`.
    fn read(&mut self, at: usize, out: &mut [u8]) -> Result<(), CorruptData>;
    /// `crc` (a CRC-32C) continued over the bytes at `at .. at + len`.
    fn crc(&mut self, at: usize, len: usize, crc: u32) -> Result<u32, CorruptData>;
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
        if src.crc(HEADER_LEN, total - HEADER_LEN, checksum::crc32c(&head[..20]))? != h.crc {
            return Err(CorruptData("vector checksum mismatch"));
        }
        if h.compression != Compression::None || kind == PhysicalKind::Bytes {
            return Ok(None);
        }
        let validity = if bitmap > 0 {
            let mut bits = vec![0u8; bitmap];
            src.read(HEADER_LEN, &mut bits)?;
            validity(&bits, h.rows, h.null_count)?
        } else {
            None
        };
        let (at, count) = (HEADER_LEN + bitmap, h.rows - h.null_count);
        let values = if count == 0 {
            Values::None
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

    /// Memory it holds, itself included.
    pub fn heap_bytes(&self) -> usize {
        let own = std::mem::size_of::<PagedVector>() + self.validity.as_ref().map_or(0, |v| v.heap_bytes());
        match &self.values {
            Values::AlpRd(rd) => own + std::mem::size_of::<RdLanes>() + rd.positions.len() * 4,
            _ => own,
        }
    }

    /// Row `i`'s value, read from `src` (the bytes it was opened from).
    pub fn value(&self, src: &mut impl StoredBytes, i: usize) -> Result<PointValue<'static>, CorruptData> {
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
        }
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
        for i in 0..whole.rows() {
            src.reads = 0;
            let got = paged.value(&mut src, i).unwrap();
            assert!(src.reads <= 2, "row {i}: {} reads", src.reads);
            match (got, whole.value(i)) {
                (PointValue::Float64(a), PointValue::Float64(b)) => {
                    assert_eq!(a.to_bits(), b.to_bits(), "row {i}")
                }
                (a, b) => assert_eq!(a, b, "row {i}"),
            }
        }
        assert!(paged.value(&mut src, whole.rows()).is_err());
        assert!(paged.heap_bytes() < 1024, "{}", paged.heap_bytes());
        true
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
