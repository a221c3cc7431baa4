//! Stored vectors opened for reading single rows (index fetches), kept per backend.
//!
//! A fetch reads one row of a vector, often again and again (the rows an index finds
//! scatter over a few thousand vectors, each visited many times). Fixed-width values
//! stored plain or bit-packed (frame of reference) stay in their stored form: a row is
//! found by arithmetic, with a rank over the validity bitmap for vectors with NULLs,
//! and the vector weighs what it weighs on disk (a 17-bit column: 4 KB for 2,048 rows,
//! not the 16 KB of decoded `i64`s). Other encodings (deltas, floats' ALP and friends,
//! run lengths, byte strings) are decoded once; byte strings of a dictionary stay
//! codes and entries. Compressed payloads are decompressed once either way.

use super::base::{CorruptData, PhysicalKind};
use super::codec::{InPlace, InPlaceCheck, Open, IN_PLACE_HEAD};
use super::compress::Compression;
use super::decoded::{DecodedValues, DecodedVector};
use super::rle;
use super::scaled_numeric::{self, HEADER as SCALED_HEADER};
use super::table::EncodingId;
use super::vector::{decode_vector, decompress_payload, frame, Frame};
use super::{bitpack, dictionary};

/// One row's value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PointValue<'a> {
    Null,
    Int(i64),
    Float32(f32),
    Float64(f64),
    Bytes(&'a [u8]),
    /// A byte string stored as a scaled numeric (`scaled_numeric`): the numeric
    /// m / 10^scale, whose stored bytes `numeric::write_canonical` writes. A fetch makes
    /// the bytes of the one row it reads, not of the whole vector.
    Scaled {
        m: i64,
        scale: u16,
    },
}

/// A vector kept for single-row reads. Small (64 bytes), its rows behind one pointer:
/// the fetch cache keeps a row group stripe's vectors side by side, and a fetch reads
/// a value of several of them, each a cache miss or two (the vector, then its value).
#[derive(Debug)]
pub enum PointVector {
    Packed(Packed),
    /// Fixed-width values stored as a few runs (a timestamp shared by a stripe's rows),
    /// kept as runs: a row is found by a search over where they end.
    Runs(Runs),
    /// Fixed-width values decoded once (deltas, floats' codecs, run lengths).
    Int(Rows<i64>),
    Float32(Rows<f32>),
    Float64(Rows<f64>),
    /// Scaled numerics (`scaled_numeric`): row i is the numeric `m[i] / 10^scale`.
    Scaled {
        m: Rows<i64>,
        scale: u16,
    },
    /// Byte strings of a dictionary: its entries, and the codes bit-packed as stored.
    Codes(Box<Codes>),
    /// Byte strings, decoded once (a dictionary stays codes and entries).
    Bytes(Box<DecodedVector>),
}

/// A dictionary's byte strings kept for row reads: the entries decoded (a few, short,
/// mostly), the codes where the FOR block put them. Decoding the 2,048 codes of a
/// vector into an array for the one row a scattered fetch reads was most of what
/// opening it cost.
#[derive(Debug)]
pub struct Codes {
    rows: u32,
    /// For a vector with some NULLs, which rows have values.
    validity: Option<Box<Validity>>,
    /// Entry k is `data[ends[k] .. ends[k + 1]]`.
    ends: Box<[u32]>,
    data: Box<[u8]>,
    /// The codes' FOR block as stored, followed by `PAD` bytes: code i is `min +` the
    /// `width`-bit field i after `skip` bytes (every code names an entry, checked at
    /// open).
    codes: Box<[u8]>,
    skip: usize,
    min: u64,
    width: u8,
}

/// Row-aligned decoded values (NULL rows hold a placeholder) and, when some row is
/// NULL, the validity bits (1 = not null) as words.
#[derive(Debug)]
pub struct Rows<T> {
    values: Box<[T]>,
    validity: Option<Box<[u64]>>,
}

/// Sets bit `i % 64` of `words[i / 64]` for every row `i` that `valid` says has a value
/// (`words` holds at least `valid.len()` bits, cleared).
pub fn set_validity_bits(valid: &[bool], words: &mut [u64]) {
    for (i, _) in valid.iter().enumerate().filter(|(_, &ok)| ok) {
        words[i / 64] |= 1 << (i % 64);
    }
}

impl<T: Copy> Rows<T> {
    fn new(values: Vec<T>, validity: Option<&[bool]>) -> Rows<T> {
        let validity = validity.map(|v| {
            let mut words = vec![0u64; v.len().div_ceil(64)];
            set_validity_bits(v, &mut words);
            words.into_boxed_slice()
        });
        Rows { values: values.into_boxed_slice(), validity }
    }

    /// Row `i`'s value, None if NULL.
    fn get(&self, i: usize) -> Option<T> {
        match &self.validity {
            Some(words) if words[i / 64] >> (i % 64) & 1 == 0 => None,
            _ => Some(self.values[i]),
        }
    }

    fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.values) + self.validity.as_ref().map_or(0, |w| w.len() * 8)
    }
}

/// Fixed-width values in their stored form.
#[derive(Debug)]
pub struct Packed {
    kind: PhysicalKind,
    /// No row has a value.
    all_null: bool,
    rows: u32,
    /// For a vector with some NULLs, which rows have values.
    validity: Option<Box<Validity>>,
    layout: InPlace,
    /// For scaled numerics (`scaled_numeric`), their display scale: the values are the
    /// mantissas.
    scale: Option<u16>,
    /// The (decompressed) payload.
    payload: Box<[u8]>,
}

/// Which rows of a vector with some NULLs have a value: the validity bits (1 = not
/// null) as words, and per word the non-null rows before it (values are stored
/// densely, so row i's value is the rank of its bit).
#[derive(Debug)]
pub(super) struct Validity {
    words: Box<[u64]>,
    ranks: Box<[u32]>,
}

impl Validity {
    /// From a stored bitmap (bit i of byte i / 8, LSB first) of `rows` rows of which
    /// `count` have values, checked to agree with that count.
    pub(super) fn from_bitmap(bitmap: &[u8], rows: usize, count: usize) -> Result<Validity, CorruptData> {
        let mut words = vec![0u64; rows.div_ceil(64)];
        for (i, &byte) in bitmap.iter().enumerate().take(rows.div_ceil(8)) {
            words[i / 8] |= (byte as u64) << (8 * (i % 8));
        }
        let mut ranks = Vec::with_capacity(words.len());
        let mut ones = 0u32;
        for w in &words {
            ranks.push(ones);
            ones += w.count_ones();
        }
        let tail = rows % 64;
        if ones as usize != count || (tail != 0 && words[words.len() - 1] >> tail != 0) {
            return Err(CorruptData("validity bitmap disagrees with null count"));
        }
        Ok(Validity { words: words.into(), ranks: ranks.into() })
    }

    /// The index among the stored (non-null) values of row `i`'s, or `None` for a NULL.
    #[inline]
    pub(super) fn dense(&self, i: usize) -> Option<usize> {
        let (w, b) = (i / 64, i % 64);
        let word = self.words[w];
        (word >> b & 1 != 0)
            .then(|| self.ranks[w] as usize + (word & ((1u64 << b) - 1)).count_ones() as usize)
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.words.len() * 8 + self.ranks.len() * 4 + std::mem::size_of::<Validity>()
    }
}

/// Run-length encoded fixed-width values, as runs.
#[derive(Debug)]
pub struct Runs {
    kind: PhysicalKind,
    rows: u32,
    validity: Option<Box<Validity>>,
    /// Per run, the index of the first stored value after it (ascending).
    ends: Box<[u32]>,
    /// Per run, its value's bit pattern.
    values: Box<[u64]>,
}

/// Most runs per stored value for a vector to be kept as runs: a search over 256 runs
/// is a few probes, and they weigh 12 bytes each where decoded rows weigh 8 per row.
const RUNS_PER_VALUE: usize = 8;

impl Runs {
    fn value(&self, i: usize) -> PointValue<'_> {
        let Some(at) = dense_index(self.validity.as_deref(), i) else { return PointValue::Null };
        let run = self.ends.partition_point(|&e| e as usize <= at);
        let Some(&bits) = self.values.get(run) else { return PointValue::Null };
        fixed_value(self.kind, bits)
    }

    fn heap_bytes(&self) -> usize {
        self.ends.len() * 4 + self.values.len() * 8 + self.validity.as_ref().map_or(0, |v| v.heap_bytes())
    }
}

/// A fixed-width value from its bit pattern.
#[inline]
pub(super) fn fixed_value(kind: PhysicalKind, bits: u64) -> PointValue<'static> {
    match kind {
        PhysicalKind::Int => PointValue::Int(bits as i64),
        PhysicalKind::Float32 => PointValue::Float32(f32::from_bits(bits as u32)),
        PhysicalKind::Float64 => PointValue::Float64(f64::from_bits(bits)),
        PhysicalKind::Bytes => unreachable!("byte strings are not fixed-width"),
    }
}

impl PointVector {
    pub fn rows(&self) -> usize {
        match self {
            PointVector::Packed(p) => p.rows as usize,
            PointVector::Runs(r) => r.rows as usize,
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => r.values.len(),
            PointVector::Float32(r) => r.values.len(),
            PointVector::Float64(r) => r.values.len(),
            PointVector::Codes(c) => c.rows as usize,
            PointVector::Bytes(d) => d.rows as usize,
        }
    }

    /// Whether its values are numbers (none are byte strings).
    pub fn fixed_width(&self) -> bool {
        !matches!(self, PointVector::Bytes(_) | PointVector::Codes(_))
    }

    /// Memory the vector holds (beside its own 64 bytes).
    pub fn heap_bytes(&self) -> usize {
        match self {
            PointVector::Packed(p) => p.payload.len() + p.validity.as_ref().map_or(0, |v| v.heap_bytes()),
            PointVector::Runs(r) => r.heap_bytes(),
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => r.heap_bytes(),
            PointVector::Float32(r) => r.heap_bytes(),
            PointVector::Float64(r) => r.heap_bytes(),
            PointVector::Codes(c) => {
                std::mem::size_of::<Codes>()
                    + std::mem::size_of_val(&*c.ends)
                    + c.data.len()
                    + c.codes.len()
                    + c.validity.as_ref().map_or(0, |v| v.heap_bytes())
            }
            PointVector::Bytes(d) => d.heap_bytes() + std::mem::size_of::<DecodedVector>(),
        }
    }

    /// Where row `i`'s value is kept (`i < rows()`), for the caller to have the CPU
    /// load it ahead of reading it: fetches read several columns of a row, each in a
    /// vector of its own, and each out of the CPU's caches; asking for all of them
    /// first lets the loads overlap.
    pub fn value_address(&self, i: usize) -> *const u8 {
        match self {
            PointVector::Packed(p) => match p.layout {
                InPlace::Bytes { width } => p.payload.as_ptr().wrapping_add(i * width),
                InPlace::Bits { skip, width, .. } => {
                    p.payload.as_ptr().wrapping_add(skip + i * width as usize / 8)
                }
            },
            PointVector::Runs(r) => r.ends.as_ptr() as *const u8,
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => {
                r.values.as_ptr().wrapping_add(i) as *const u8
            }
            PointVector::Float32(r) => r.values.as_ptr().wrapping_add(i) as *const u8,
            PointVector::Float64(r) => r.values.as_ptr().wrapping_add(i) as *const u8,
            PointVector::Codes(c) => c.codes.as_ptr().wrapping_add(c.skip + i * c.width as usize / 8),
            PointVector::Bytes(d) => match (&d.values, &d.dictionary) {
                (_, Some(dict)) => dict.codes.as_ptr().wrapping_add(i) as *const u8,
                (DecodedValues::Bytes { offsets, .. }, _) => offsets.as_ptr().wrapping_add(i) as *const u8,
                _ => std::ptr::null(),
            },
        }
    }

    /// Row `i`'s value (`i < rows()`, which the caller checks).
    #[inline]
    pub fn value(&self, i: usize) -> PointValue<'_> {
        match self {
            PointVector::Packed(p) => p.value(i),
            PointVector::Runs(r) => r.value(i),
            PointVector::Int(r) => r.get(i).map_or(PointValue::Null, PointValue::Int),
            PointVector::Scaled { m, scale } => {
                m.get(i).map_or(PointValue::Null, |m| PointValue::Scaled { m, scale: *scale })
            }
            PointVector::Float32(r) => r.get(i).map_or(PointValue::Null, PointValue::Float32),
            PointVector::Float64(r) => r.get(i).map_or(PointValue::Null, PointValue::Float64),
            PointVector::Codes(c) => c.value(i),
            PointVector::Bytes(d) => bytes_value(d, i),
        }
    }

    /// A decoded vector kept for single-row reads, in the form reading one row from is
    /// an index (byte strings stay as they are).
    pub fn decoded(mut d: DecodedVector) -> PointVector {
        let validity = d.validity.as_deref();
        if let Some(s) = d.scaled.take() {
            // Rows are read from the mantissas, not the empty byte strings beside them.
            return PointVector::Scaled { m: Rows::new(s.m, validity), scale: s.scale };
        }
        if d.dictionary.is_some() {
            return PointVector::Bytes(Box::new(d));
        }
        match std::mem::take(&mut d.values) {
            DecodedValues::Int(v) => PointVector::Int(Rows::new(v, validity)),
            DecodedValues::Float32(v) => PointVector::Float32(Rows::new(v, validity)),
            DecodedValues::Float64(v) => PointVector::Float64(Rows::new(v, validity)),
            values @ DecodedValues::Bytes { .. } => {
                d.values = values;
                PointVector::Bytes(Box::new(d))
            }
        }
    }
}

fn bytes_value(d: &DecodedVector, i: usize) -> PointValue<'_> {
    if !d.is_valid(i) {
        return PointValue::Null;
    }
    match (&d.values, &d.dictionary) {
        (_, Some(dict)) => PointValue::Bytes(dict.entry(dict.codes[i] as usize)),
        (DecodedValues::Bytes { offsets, data }, None) => {
            PointValue::Bytes(&data[offsets[i] as usize..offsets[i + 1] as usize])
        }
        _ => unreachable!("byte strings are decoded as bytes"),
    }
}

/// Where row `i`'s value lies among a vector's values (stored densely), None if NULL.
#[inline]
fn dense_index(validity: Option<&Validity>, i: usize) -> Option<usize> {
    match validity {
        None => Some(i),
        Some(v) => v.dense(i),
    }
}

impl Codes {
    #[inline]
    fn value(&self, i: usize) -> PointValue<'_> {
        let Some(at) = dense_index(self.validity.as_deref(), i) else { return PointValue::Null };
        // In range: `open_codes` checked every code.
        let code = self.min.wrapping_add(read_bits(&self.codes[self.skip..], self.width, at)) as usize;
        PointValue::Bytes(&self.data[self.ends[code] as usize..self.ends[code + 1] as usize])
    }
}

impl Packed {
    #[inline]
    fn value(&self, i: usize) -> PointValue<'_> {
        if self.all_null {
            return PointValue::Null;
        }
        let Some(at) = dense_index(self.validity.as_deref(), i) else { return PointValue::Null };
        let bits = match self.layout {
            InPlace::Bytes { width } => {
                // One 8-byte load (the payload has `PAD` bytes after its values), then
                // the value's bytes kept.
                let start = at * width;
                let Some(b) = self.payload.get(start..start + 8) else {
                    unreachable!("a payload is padded past its last value")
                };
                let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
                if width >= 8 {
                    v
                } else {
                    v & ((1u64 << (8 * width)) - 1)
                }
            }
            InPlace::Bits { skip, min, width } => {
                min.wrapping_add(read_bits(&self.payload[skip..], width, at))
            }
        };
        match self.scale {
            Some(scale) => PointValue::Scaled { m: bits as i64, scale },
            None => fixed_value(self.kind, bits),
        }
    }
}

/// Zero bytes kept after a packed payload's values: a value is read with one load of
/// 16 bytes from its first byte, not a copy of as many bytes as it spans (a call to
/// memcpy, for a column read per fetched row).
const PAD: usize = 16;

/// Field `at` of `width` bits (LSB first, as `bitpack::pack` writes), from a body whose
/// length was checked to hold it, followed by `PAD` bytes.
fn read_bits(body: &[u8], width: u8, at: usize) -> u64 {
    if width == 0 {
        return 0;
    }
    let bit = at * width as usize;
    let (byte, shift) = (bit / 8, (bit % 8) as u32);
    // The field spans at most 9 bytes (64 bits at a shift of up to 7).
    let Some(b) = body.get(byte..byte + PAD) else { unreachable!("a payload is padded past its last field") };
    let v = u128::from_le_bytes(b.try_into().expect("16 bytes")) >> shift;
    let mask = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    v as u64 & mask
}

/// Opens the vector at the front of `input` for single-row reads. `scratch` is decode
/// space kept between calls (a decoded vector's rows are moved out of it).
pub fn open_vector(
    input: &[u8],
    kind: PhysicalKind,
    scratch: &mut DecodedVector,
) -> Result<PointVector, CorruptData> {
    let f = frame(input, kind)?;
    let h = &f.header;
    let count = h.rows - h.null_count;
    // Fixed-width values are read in place when their codec can, and so are a
    // dictionary's codes and the mantissas of scaled numerics; other byte strings are
    // decoded.
    let fixed = kind != PhysicalKind::Bytes;
    if fixed && h.encoding == EncodingId::Rle && count > 0 {
        if let Some(runs) = open_runs(&f, kind, count)? {
            return Ok(PointVector::Runs(runs));
        }
    }
    if kind == PhysicalKind::Bytes && h.encoding == EncodingId::Dictionary && count > 0 {
        if let Some(c) = open_codes(&f, count)? {
            return Ok(PointVector::Codes(Box::new(c)));
        }
    }
    if kind == PhysicalKind::Bytes && h.encoding == EncodingId::ScaledNumeric && count > 0 {
        if let Some(p) = open_scaled(&f, count)? {
            return Ok(PointVector::Packed(p));
        }
    }
    let check = match h.encoding.codec().open {
        Open::InPlace(check) if fixed => check,
        _ => {
            scratch.keep_dictionary = true;
            scratch.keep_scaled = true;
            decode_vector(input, kind, scratch)?;
            return Ok(PointVector::decoded(scratch.take_rows()));
        }
    };
    let (layout, payload) = in_place(check, kind, payload(&f)?, count)?;
    let validity = validity(f.bitmap, h.rows, h.null_count)?;
    Ok(PointVector::Packed(Packed {
        kind,
        all_null: count == 0,
        rows: h.rows as u32,
        validity,
        layout,
        scale: None,
        payload,
    }))
}

/// The layout `check` (a codec's `Open::InPlace`) finds in `bytes`, a payload of `count`
/// values of `kind` to be read where they lie, and the bytes followed by `PAD` zero
/// bytes (a value is read with one 16-byte load).
fn in_place(
    check: InPlaceCheck,
    kind: PhysicalKind,
    mut bytes: Vec<u8>,
    count: usize,
) -> Result<(InPlace, Box<[u8]>), CorruptData> {
    let layout = check(kind, &bytes[..bytes.len().min(IN_PLACE_HEAD)], bytes.len(), count)?;
    bytes.resize(bytes.len() + PAD, 0);
    Ok((layout, bytes.into_boxed_slice()))
}

/// A dictionary vector of `count` byte strings kept as its entries and codes (`Codes`);
/// None when its codes are not the FOR block they should be (decoding then says why).
fn open_codes(f: &Frame<'_>, count: usize) -> Result<Option<Codes>, CorruptData> {
    let mut payload = payload(f)?;
    let (mut ends, mut data, mut lens) = (Vec::new(), Vec::new(), Vec::new());
    let (entries, at) = dictionary::decode_entries(&payload, count, &mut ends, &mut data, &mut lens)?;
    let Open::InPlace(for_block) = EncodingId::BitPack.codec().open else {
        unreachable!("bit-packed integers are read in place")
    };
    let Ok((InPlace::Bits { skip, min, width }, codes)) =
        in_place(for_block, PhysicalKind::Int, payload.split_off(at), count)
    else {
        return Ok(None);
    };
    let block = &codes[..codes.len() - PAD];
    // Every code must name an entry: true of any the block can hold when the entries
    // fill its range (4 hosts in 2 bits), else checked code by code (3 in 2 bits).
    let top = if width == 64 { u64::MAX } else { (1u64 << width) - 1 };
    if (min as i64) < 0 || (min as i64).checked_add(top as i64).is_none_or(|t| t >= entries as i64) {
        let mut bad = false;
        bitpack::decode_for(block, count, |c| bad |= !(0..entries as i64).contains(&c))?;
        if bad {
            return Err(CorruptData("dictionary code out of range"));
        }
    }
    let h = &f.header;
    Ok(Some(Codes {
        rows: h.rows as u32,
        validity: validity(f.bitmap, h.rows, h.null_count)?,
        ends: ends.into_boxed_slice(),
        data: data.into_boxed_slice(),
        codes,
        skip,
        min,
        width,
    }))
}

/// A scaled-numeric vector (of `count` values) whose mantissas are stored in a codec
/// read in place (bit-packed, plain), kept as those mantissas: a fetch reads one where
/// it lies, where decoding all 2,048 of a vector it reaches for one row was most of
/// the time of a fetch of a `numeric` column. None for mantissas in another codec.
fn open_scaled(f: &Frame<'_>, count: usize) -> Result<Option<Packed>, CorruptData> {
    let mut payload = payload(f)?;
    let (scale, id) = scaled_numeric::read_header(&payload)?;
    let Open::InPlace(check) = id.codec().open else { return Ok(None) };
    payload.drain(..SCALED_HEADER);
    let (layout, mantissas) = in_place(check, PhysicalKind::Int, payload, count)?;
    let h = &f.header;
    Ok(Some(Packed {
        kind: PhysicalKind::Int,
        all_null: false,
        rows: h.rows as u32,
        validity: validity(f.bitmap, h.rows, h.null_count)?,
        layout,
        scale: Some(scale),
        payload: mantissas,
    }))
}

/// The payload of a framed vector, decompressed.
fn payload(f: &Frame<'_>) -> Result<Vec<u8>, CorruptData> {
    let h = &f.header;
    let mut payload = Vec::new();
    if h.compression == Compression::None {
        payload.extend_from_slice(f.stored);
    } else {
        decompress_payload(h.compression, f.stored, h.raw_len, &mut payload)?;
    }
    if payload.len() != h.raw_len {
        return Err(CorruptData("vector payload length mismatch"));
    }
    Ok(payload)
}

/// The validity of a vector of `rows` rows with `null_count` NULLs, when some rows
/// have values and some do not.
pub(super) fn validity(
    bitmap: &[u8],
    rows: usize,
    null_count: usize,
) -> Result<Option<Box<Validity>>, CorruptData> {
    if null_count == 0 || null_count >= rows {
        return Ok(None);
    }
    Ok(Some(Box::new(Validity::from_bitmap(bitmap, rows, rows - null_count)?)))
}

/// A run-length encoded vector of `count` fixed-width values as its runs, when it has
/// few enough of them (`RUNS_PER_VALUE`).
fn open_runs(f: &Frame<'_>, kind: PhysicalKind, count: usize) -> Result<Option<Runs>, CorruptData> {
    let payload = payload(f)?;
    let mut values = Vec::new();
    let mut ends = Vec::new();
    if !rle::decode_runs(&payload, count, count / RUNS_PER_VALUE, &mut values, &mut ends)? {
        return Ok(None);
    }
    let h = &f.header;
    Ok(Some(Runs {
        kind,
        rows: h.rows as u32,
        validity: validity(f.bitmap, h.rows, h.null_count)?,
        ends: ends.into(),
        values: values.into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::test_util::{encode_ints, noise_i64};
    use crate::storage::format::encoding::{encode_vector, CompressionPolicy, VectorValues};
    use proptest::prelude::*;

    fn check_ints(rows: &[Option<i64>], policy: &CompressionPolicy) -> bool {
        let bytes = encode_ints(rows, policy);
        let v = open_vector(&bytes, PhysicalKind::Int, &mut DecodedVector::default()).unwrap();
        assert_eq!(v.rows(), rows.len());
        for (i, r) in rows.iter().enumerate() {
            let want = r.map_or(PointValue::Null, PointValue::Int);
            assert_eq!(v.value(i), want, "row {i}");
        }
        matches!(v, PointVector::Packed(_))
    }

    #[test]
    fn bit_packed_and_plain_ints_are_read_in_place() {
        let none = CompressionPolicy::NONE;
        // Frame of reference with nulls spread over word boundaries.
        let rows: Vec<Option<i64>> =
            (0..2048).map(|i| (i % 7 != 3).then_some(1000 + (i * 7919) % 5003)).collect();
        assert!(check_ints(&rows, &none));
        // Full 64-bit range: plain or 64-bit fields.
        let wide = noise_i64(300, 0x9E37_79B9_7F4A_7C15);
        assert!(check_ints(&wide, &none));
        // All null, one value, constant (zero-width fields).
        assert!(check_ints(&[None, None, None], &none));
        assert!(check_ints(&[Some(5)], &none));
        assert!(check_ints(&vec![Some(-9); 100], &CompressionPolicy::default()));
        // Sequences are delta-encoded: decoded instead.
        let seq: Vec<Option<i64>> = (0..2048).map(Some).collect();
        assert!(!check_ints(&seq, &none));
    }

    #[test]
    fn run_length_vectors_are_kept_as_their_runs() {
        // A timestamp shared by ~400 rows at a time (TSBS), NULLs across words; kept as
        // a few runs, not 2,048 decoded values.
        let rows: Vec<Option<i64>> =
            (0..2048).map(|i| (i % 61 != 7).then_some(1_700_000_000 + (i / 400) * 10)).collect();
        for policy in [CompressionPolicy::NONE, CompressionPolicy::default()] {
            let bytes = encode_ints(&rows, &policy);
            let v = open_vector(&bytes, PhysicalKind::Int, &mut DecodedVector::default()).unwrap();
            assert!(matches!(v, PointVector::Runs(_)), "{v:?}");
            assert!(v.heap_bytes() < 1024, "{}", v.heap_bytes());
            for (i, r) in rows.iter().enumerate() {
                assert_eq!(v.value(i), r.map_or(PointValue::Null, PointValue::Int), "row {i}");
            }
        }
        // Many short runs: decoded, where a row is one load.
        let short: Vec<Option<i64>> = (0..2048).map(|i| Some((i / 3) * 1000 % 7919)).collect();
        let v = open_vector(
            &encode_ints(&short, &CompressionPolicy::NONE),
            PhysicalKind::Int,
            &mut DecodedVector::default(),
        )
        .unwrap();
        assert!(!matches!(v, PointVector::Runs(_)));
        for (i, r) in short.iter().enumerate() {
            assert_eq!(v.value(i), PointValue::Int(r.unwrap()));
        }
    }

    #[test]
    fn scaled_numerics_are_read_as_numbers_and_give_back_their_bytes() {
        use crate::storage::format::numeric::write_canonical;
        // numeric(15,2) values with NULLs: stored by the scaled-numeric codec, the
        // mantissas bit-packed (read where they lie, uncompressed or after lz4), or
        // delta-encoded (a sequence: decoded).
        let rows = |value: fn(i64) -> Option<i64>| -> Vec<Option<i64>> { (0..2048).map(value).collect() };
        let noise = rows(|i| (i % 9 != 4).then_some(i * 7919 % 1_000_003 - 500_000));
        let repeats = rows(|i| (i % 9 != 4).then_some(i % 11 - 5));
        let sequence = rows(|i| (i % 9 != 4).then_some(i * 100));
        let cases = [
            (noise.clone(), CompressionPolicy::default(), true),
            (noise, CompressionPolicy::NONE, true),
            (repeats, CompressionPolicy::default(), true),
            (sequence, CompressionPolicy::NONE, false),
            (rows(|i| Some(i % 3)), CompressionPolicy::NONE, true),
        ];
        for (n, (rows, policy, packed)) in cases.into_iter().enumerate() {
            let (mut offsets, mut data) = (vec![0u32], Vec::new());
            for m in rows.iter().flatten() {
                write_canonical(*m as i128, 2, &mut data);
                offsets.push(data.len() as u32);
            }
            let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
            let mut bytes = Vec::new();
            let values = VectorValues::Bytes { offsets: &offsets, data: &data };
            let info = encode_vector(rows.len() as u32, Some(&validity), values, &policy, &mut bytes);
            assert_eq!(info.encoding, super::super::table::EncodingId::ScaledNumeric, "case {n}");
            let v = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
            assert_eq!(matches!(v, PointVector::Packed(_)), packed, "case {n}: {v:?}");
            assert!(v.fixed_width());
            for (i, r) in rows.iter().enumerate() {
                match (r, v.value(i)) {
                    (None, PointValue::Null) => {}
                    (Some(m), PointValue::Scaled { m: got, scale: 2 }) => {
                        assert_eq!(*m, got, "case {n} row {i}")
                    }
                    (want, got) => panic!("case {n} row {i}: {want:?} read as {got:?}"),
                }
            }
        }
    }

    /// Encodes `rows` (NULLs as None) as byte strings with `policy`.
    fn encode_strings(rows: &[Option<String>], policy: &CompressionPolicy) -> (Vec<u8>, EncodingId) {
        let (mut offsets, mut data) = (vec![0u32], Vec::new());
        for v in rows.iter().flatten() {
            data.extend_from_slice(v.as_bytes());
            offsets.push(data.len() as u32);
        }
        let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let mut bytes = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        let info = encode_vector(rows.len() as u32, Some(&validity), values, policy, &mut bytes);
        (bytes, info.encoding)
    }

    #[test]
    fn dictionary_strings_are_kept_as_entries_and_codes() {
        // Entries that fill their codes' range (4 in 2 bits, 2 in 1) and that do not
        // (3, 7, 200: each code checked at open), NULLs across words, lz4 or not.
        for distinct in [2usize, 3, 4, 7, 200] {
            for policy in [CompressionPolicy::NONE, CompressionPolicy::default()] {
                let rows: Vec<Option<String>> = (0..2048)
                    .map(|i| (i % 13 != 5).then(|| ((i * 37 + i / 7) % distinct, ["AIR", "MAIL", "SHIP"])))
                    .map(|v| v.map(|(k, names)| format!("{} {k}", names[k % 3])))
                    .collect();
                let (bytes, encoding) = encode_strings(&rows, &policy);
                assert_eq!(encoding, EncodingId::Dictionary, "{distinct} values");
                let v = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
                assert!(matches!(v, PointVector::Codes(_)), "{distinct} values: {v:?}");
                assert!(!v.fixed_width());
                assert_eq!(v.rows(), 2048);
                // Less than decoded codes alone would take (2,048 u32s).
                assert!(v.heap_bytes() < 8192, "{distinct} values: {} bytes", v.heap_bytes());
                for (i, r) in rows.iter().enumerate() {
                    let want = r.as_ref().map_or(PointValue::Null, |s| PointValue::Bytes(s.as_bytes()));
                    assert_eq!(v.value(i), want, "{distinct} values, row {i}");
                }
            }
        }
    }

    #[test]
    fn dictionary_codes_past_the_entries_are_refused() {
        let rows: Vec<Option<String>> = (0..1000).map(|i| Some(format!("mode {}", i % 7))).collect();
        let (bytes, _) = encode_strings(&rows, &CompressionPolicy::NONE);
        let f = frame(&bytes, PhysicalKind::Bytes).unwrap();
        let at = f.stored.as_ptr() as usize - bytes.as_ptr() as usize;
        let (mut ends, mut data, mut lens) = (Vec::new(), Vec::new(), Vec::new());
        let (entries, codes_at) =
            dictionary::decode_entries(f.stored, 1000, &mut ends, &mut data, &mut lens).unwrap();
        assert_eq!(entries, 7);
        // The codes' frame of reference moved up by one: the top code (6) becomes 7.
        let mut bad = bytes.clone();
        bad[at + codes_at..at + codes_at + 8].copy_from_slice(&1u64.to_le_bytes());
        let f = Frame { stored: &bad[at..], ..frame(&bytes, PhysicalKind::Bytes).unwrap() };
        assert_eq!(open_codes(&f, 1000).unwrap_err(), CorruptData("dictionary code out of range"));
        // The damaged vector as stored fails its checksum first.
        assert!(open_vector(&bad, PhysicalKind::Bytes, &mut DecodedVector::default()).is_err());
    }

    #[test]
    fn scaled_numerics_with_a_damaged_header_are_refused() {
        use crate::storage::format::numeric::write_canonical;
        let (mut offsets, mut data) = (vec![0u32], Vec::new());
        for m in 0..300i64 {
            write_canonical((m * 7919 % 10_007) as i128, 3, &mut data);
            offsets.push(data.len() as u32);
        }
        let mut bytes = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        encode_vector(300, None, values, &CompressionPolicy::NONE, &mut bytes);
        let f = frame(&bytes, PhysicalKind::Bytes).unwrap();
        let at = f.stored.as_ptr() as usize - bytes.as_ptr() as usize;
        // A scale past NUMERIC_DSCALE_MAX, an unknown encoding, a float encoding.
        let gorilla = super::super::table::EncodingId::Gorilla as u8;
        for (byte, value) in [(at + 1, 0xff), (at + 2, 0xee), (at + 2, gorilla)] {
            let mut bad = bytes.clone();
            bad[byte] = value;
            // The vector's checksum refuses it first; past it, open_scaled's own checks.
            assert!(open_vector(&bad, PhysicalKind::Bytes, &mut DecodedVector::default()).is_err());
            let f = Frame { stored: &bad[at..], ..frame(&bytes, PhysicalKind::Bytes).unwrap() };
            assert!(open_scaled(&f, 300).is_err(), "byte {byte}");
        }
    }

    #[test]
    fn floats_and_byte_strings_read_the_same_as_decoding() {
        let floats: Vec<f64> = (0..500).map(|i| (i as f64).sin() * 1e6).collect();
        let mut out = Vec::new();
        encode_vector(500, None, VectorValues::Float64(&floats), &CompressionPolicy::NONE, &mut out);
        let v = open_vector(&out, PhysicalKind::Float64, &mut DecodedVector::default()).unwrap();
        for (i, f) in floats.iter().enumerate() {
            assert_eq!(v.value(i), PointValue::Float64(*f));
        }
        let words = ["red", "green", "blue"];
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for i in 0..1000 {
            data.extend_from_slice(words[i % 3].as_bytes());
            offsets.push(data.len() as u32);
        }
        let mut out = Vec::new();
        encode_vector(
            1000,
            None,
            VectorValues::Bytes { offsets: &offsets, data: &data },
            &CompressionPolicy::default(),
            &mut out,
        );
        let v = open_vector(&out, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
        for i in 0..1000 {
            assert_eq!(v.value(i), PointValue::Bytes(words[i % 3].as_bytes()));
        }
    }

    #[test]
    fn a_vector_kept_for_row_reads_is_small() {
        // The fetch cache keeps a stripe's vectors side by side, one per attribute.
        assert!(std::mem::size_of::<PointVector>() <= 64, "{}", std::mem::size_of::<PointVector>());
        assert!(std::mem::size_of::<Option<PointVector>>() <= 64);
    }

    #[test]
    fn decoded_vectors_with_nulls_read_their_rows() {
        // A sequence is delta-encoded (decoded, not read in place); NULLs across words.
        let rows: Vec<Option<i64>> =
            (0..2048).map(|i| (i % 5 != 2 && i % 64 != 63).then_some(i * 3)).collect();
        assert!(!check_ints(&rows, &CompressionPolicy::NONE));
        assert!(!check_ints(&rows, &CompressionPolicy::default()));
        let floats: Vec<f64> = (0..700).map(|i| i as f64 * 0.25).collect();
        let validity: Vec<bool> = (0..700).map(|i| i % 3 != 0).collect();
        let dense: Vec<f64> = floats.iter().zip(&validity).filter(|(_, &v)| v).map(|(f, _)| *f).collect();
        for policy in [CompressionPolicy::NONE, CompressionPolicy::default()] {
            let mut out = Vec::new();
            encode_vector(700, Some(&validity), VectorValues::Float64(&dense), &policy, &mut out);
            let v = open_vector(&out, PhysicalKind::Float64, &mut DecodedVector::default()).unwrap();
            assert_eq!(v.rows(), 700);
            for i in 0..700 {
                let want = if validity[i] { PointValue::Float64(floats[i]) } else { PointValue::Null };
                assert_eq!(v.value(i), want, "row {i}");
            }
        }
    }

    #[test]
    fn corrupt_payloads_are_rejected() {
        let rows: Vec<Option<i64>> = (0..100).map(|i| Some(i * 37 % 101)).collect();
        let bytes = encode_ints(&rows, &CompressionPolicy::NONE);
        for cut in [0, 10, 24, bytes.len() - 1] {
            assert!(open_vector(&bytes[..cut], PhysicalKind::Int, &mut DecodedVector::default()).is_err());
        }
        let mut flipped = bytes.clone();
        *flipped.last_mut().unwrap() ^= 1;
        assert!(open_vector(&flipped, PhysicalKind::Int, &mut DecodedVector::default()).is_err());
        assert!(open_vector(&bytes, PhysicalKind::Float64, &mut DecodedVector::default()).is_err());
    }

    proptest! {
        #[test]
        fn prop_single_rows_match_the_stored_values(
            rows in proptest::collection::vec(proptest::option::weighted(0.8, -1000i64..1000), 1..600),
            spread in 0u32..50,
            compress in any::<bool>(),
        ) {
            let rows: Vec<Option<i64>> = rows.into_iter().map(|r| r.map(|v| v << spread)).collect();
            let policy = if compress { CompressionPolicy::default() } else { CompressionPolicy::NONE };
            check_ints(&rows, &policy);
        }

        #[test]
        fn prop_scaled_numerics_read_their_mantissas(
            rows in proptest::collection::vec(proptest::option::weighted(0.8, -100_000i64..100_000), 1..600),
            spread in 0u32..40,
            scale in 0u16..7,
            compress in any::<bool>(),
        ) {
            use crate::storage::format::numeric::write_canonical;
            let rows: Vec<Option<i64>> = rows.into_iter().map(|r| r.map(|v| v << spread)).collect();
            let (mut offsets, mut data) = (vec![0u32], Vec::new());
            for m in rows.iter().flatten() {
                write_canonical(*m as i128, scale, &mut data);
                offsets.push(data.len() as u32);
            }
            let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
            let policy = if compress { CompressionPolicy::default() } else { CompressionPolicy::NONE };
            let mut bytes = Vec::new();
            let values = VectorValues::Bytes { offsets: &offsets, data: &data };
            encode_vector(rows.len() as u32, Some(&validity), values, &policy, &mut bytes);
            let v = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
            for (i, r) in rows.iter().enumerate() {
                match (r, v.value(i)) {
                    (None, PointValue::Null) => {}
                    (Some(m), PointValue::Scaled { m: got, scale: s }) => {
                        prop_assert_eq!((*m, scale), (got, s), "row {}", i);
                    }
                    (Some(m), PointValue::Bytes(b)) => {
                        // Another codec won: the bytes as stored.
                        let mut want = Vec::new();
                        write_canonical(*m as i128, scale, &mut want);
                        prop_assert_eq!(b, &want[..], "row {}", i);
                    }
                    (want, got) => prop_assert!(false, "row {}: {:?} read as {:?}", i, want, got),
                }
            }
        }
    }
}
