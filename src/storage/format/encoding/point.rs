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
use super::codec::{InPlace, Open};
use super::compress::{self, Compression};
use super::decoded::{DecodedValues, DecodedVector};
use super::vector::{decode_vector, frame};

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
    /// Fixed-width values decoded once (deltas, floats' codecs, run lengths).
    Int(Rows<i64>),
    Float32(Rows<f32>),
    Float64(Rows<f64>),
    /// Scaled numerics (`scaled_numeric`): row i is the numeric `m[i] / 10^scale`.
    Scaled {
        m: Rows<i64>,
        scale: u16,
    },
    /// Byte strings, decoded once (a dictionary stays codes and entries).
    Bytes(Box<DecodedVector>),
}

/// Row-aligned decoded values (NULL rows hold a placeholder) and, when some row is
/// NULL, the validity bits (1 = not null) as words.
#[derive(Debug)]
pub struct Rows<T> {
    values: Box<[T]>,
    validity: Option<Box<[u64]>>,
}

impl<T: Copy> Rows<T> {
    fn new(values: Vec<T>, validity: Option<&[bool]>) -> Rows<T> {
        let validity = validity.map(|v| {
            let mut words = vec![0u64; v.len().div_ceil(64)];
            for (i, _) in v.iter().enumerate().filter(|(_, &valid)| valid) {
                words[i / 64] |= 1 << (i % 64);
            }
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
    /// For a vector with some NULLs: the validity bits (1 = not null) as words, and per
    /// word the number of non-null rows before it (values are stored densely).
    validity: Option<Box<(Vec<u64>, Vec<u32>)>>,
    layout: InPlace,
    /// The (decompressed) payload.
    payload: Box<[u8]>,
}

impl PointVector {
    pub fn rows(&self) -> usize {
        match self {
            PointVector::Packed(p) => p.rows as usize,
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => r.values.len(),
            PointVector::Float32(r) => r.values.len(),
            PointVector::Float64(r) => r.values.len(),
            PointVector::Bytes(d) => d.rows as usize,
        }
    }

    /// Whether its values are numbers (none are byte strings).
    pub fn fixed_width(&self) -> bool {
        !matches!(self, PointVector::Bytes(_))
    }

    /// Memory the vector holds (beside its own 64 bytes).
    pub fn heap_bytes(&self) -> usize {
        match self {
            PointVector::Packed(p) => {
                p.payload.len() + p.validity.as_ref().map_or(0, |v| v.0.capacity() * 8 + v.1.capacity() * 4)
            }
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => r.heap_bytes(),
            PointVector::Float32(r) => r.heap_bytes(),
            PointVector::Float64(r) => r.heap_bytes(),
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
            PointVector::Int(r) | PointVector::Scaled { m: r, .. } => {
                r.values.as_ptr().wrapping_add(i) as *const u8
            }
            PointVector::Float32(r) => r.values.as_ptr().wrapping_add(i) as *const u8,
            PointVector::Float64(r) => r.values.as_ptr().wrapping_add(i) as *const u8,
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
            PointVector::Int(r) => r.get(i).map_or(PointValue::Null, PointValue::Int),
            PointVector::Scaled { m, scale } => {
                m.get(i).map_or(PointValue::Null, |m| PointValue::Scaled { m, scale: *scale })
            }
            PointVector::Float32(r) => r.get(i).map_or(PointValue::Null, PointValue::Float32),
            PointVector::Float64(r) => r.get(i).map_or(PointValue::Null, PointValue::Float64),
            PointVector::Bytes(d) => bytes_value(d, i),
        }
    }

    /// A decoded vector kept for single-row reads, in the form reading one row from is
    /// an index (byte strings stay as they are).
    fn decoded(mut d: DecodedVector) -> PointVector {
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

impl Packed {
    #[inline]
    fn value(&self, i: usize) -> PointValue<'_> {
        if self.all_null {
            return PointValue::Null;
        }
        let at = match &self.validity {
            None => i,
            Some(v) => {
                let (words, ranks) = &**v;
                let (w, b) = (i / 64, i % 64);
                if words[w] >> b & 1 == 0 {
                    return PointValue::Null;
                }
                ranks[w] as usize + (words[w] & ((1u64 << b) - 1)).count_ones() as usize
            }
        };
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
        match self.kind {
            PhysicalKind::Int => PointValue::Int(bits as i64),
            PhysicalKind::Float32 => PointValue::Float32(f32::from_bits(bits as u32)),
            PhysicalKind::Float64 => PointValue::Float64(f64::from_bits(bits)),
            PhysicalKind::Bytes => unreachable!("byte strings are not packed"),
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
    // Byte strings are always decoded; fixed-width values are read in place when their
    // codec can.
    let in_place = match h.encoding.codec().open {
        Open::InPlace(open) if kind != PhysicalKind::Bytes => open,
        _ => {
            scratch.keep_dictionary = true;
            scratch.keep_scaled = true;
            decode_vector(input, kind, scratch)?;
            return Ok(PointVector::decoded(scratch.take_rows()));
        }
    };
    let mut payload = Vec::new();
    if h.compression == Compression::None {
        payload.extend_from_slice(f.stored);
    } else {
        compress::decompress(h.compression, f.stored, h.raw_len, &mut payload)?;
    }
    if payload.len() != h.raw_len {
        return Err(CorruptData("vector payload length mismatch"));
    }
    let layout = in_place(kind, &payload, count)?;
    payload.resize(payload.len() + PAD, 0);
    let validity = if h.null_count > 0 && count > 0 {
        let mut words = vec![0u64; h.rows.div_ceil(64)];
        for (i, &byte) in f.bitmap.iter().enumerate() {
            words[i / 8] |= (byte as u64) << (8 * (i % 8));
        }
        let mut ranks = Vec::with_capacity(words.len());
        let mut ones = 0u32;
        for w in &words {
            ranks.push(ones);
            ones += w.count_ones();
        }
        let tail = h.rows % 64;
        if ones as usize != count || (tail != 0 && words[words.len() - 1] >> tail != 0) {
            return Err(CorruptData("validity bitmap disagrees with null count"));
        }
        Some((words, ranks))
    } else {
        None
    };
    Ok(PointVector::Packed(Packed {
        kind,
        all_null: count == 0,
        rows: h.rows as u32,
        validity: validity.map(Box::new),
        layout,
        payload: payload.into_boxed_slice(),
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
    fn scaled_numerics_are_read_as_numbers_and_give_back_their_bytes() {
        use crate::storage::format::numeric::write_canonical;
        // numeric(15,2) values with NULLs: stored by the scaled-numeric codec.
        let rows: Vec<Option<i64>> =
            (0..2048).map(|i| (i % 9 != 4).then_some(i * 7919 % 1_000_003 - 500_000)).collect();
        let (mut offsets, mut data) = (vec![0u32], Vec::new());
        for m in rows.iter().flatten() {
            write_canonical(*m as i128, 2, &mut data);
            offsets.push(data.len() as u32);
        }
        let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let mut bytes = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        let info = encode_vector(
            rows.len() as u32,
            Some(&validity),
            values,
            &CompressionPolicy::default(),
            &mut bytes,
        );
        assert_eq!(info.encoding, super::super::table::EncodingId::ScaledNumeric);
        let v = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
        for (i, r) in rows.iter().enumerate() {
            match (r, v.value(i)) {
                (None, PointValue::Null) => {}
                (Some(m), PointValue::Scaled { m: got, scale: 2 }) => assert_eq!(*m, got, "row {i}"),
                (want, got) => panic!("row {i}: {want:?} read as {got:?}"),
            }
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
    }
}
