//! A stripe's fixed-width columns row by row, for fetches (index scans, nested loops)
//! that read several columns of rows scattered over a table. Read column by column,
//! each value of a fetched row lies in a vector of its own, a cache miss (and, over
//! hundreds of MB of cached vectors, a TLB miss) each; here a row's values lie side
//! by side, in a line or two. Each column is stored as its offset from the stripe's
//! smallest value in as few bytes as its range needs (frame of reference by bytes), so
//! a stripe's rows weigh less than its vectors did. Pure Rust.

use super::point::{PointValue, PointVector};

/// How a column's 64-bit word is read back.
#[derive(Debug, Clone, Copy, PartialEq)]
enum WordKind {
    Int,
    Float32,
    Float64,
    Scaled(u16),
}

/// One column's place in a row.
#[derive(Debug, Clone, Copy)]
struct Column {
    kind: WordKind,
    /// The smallest value's word; a row stores its word's offset from it.
    min: i64,
    /// Byte offset of the column in a row, and bytes it takes (0..=8).
    at: u16,
    width: u8,
}

/// Only attributes below this index are held (which are is one word of bits, kept
/// where the stripe is found: no pointer followed to find out).
pub const MAX_ATTRIBUTE: usize = 64;

/// Bytes kept after the last row: a value is read with one 8-byte load.
const PAD: usize = 8;

thread_local! {
    /// The values `StripeRows::transpose` read, column after column, kept for the
    /// next (2,048 rows of eight columns: 256 kB).
    static WORDS: std::cell::RefCell<Vec<Option<i64>>> = const { std::cell::RefCell::new(Vec::new()) };
}

#[derive(Debug)]
pub struct StripeRows {
    /// The attribute indexes held, as bits; attribute a's column is the number of
    /// held attributes below it.
    held: u64,
    columns: Box<[Column]>,
    /// Bytes of the NULL bits at the start of each row (0 when no value is NULL).
    null_bytes: usize,
    /// Bytes a row takes.
    stride: usize,
    rows: usize,
    bytes: Box<[u8]>,
}

impl StripeRows {
    /// The vectors `columns` (attribute index, opened vector, every vector of the same
    /// rows, attribute indexes ascending), row by row. None when they cannot be: byte
    /// strings, an attribute from `MAX_ATTRIBUTE` on, vectors of different lengths, or
    /// values of mixed kinds.
    pub fn transpose(columns: &[(usize, &PointVector)]) -> Option<StripeRows> {
        let rows = columns.first()?.1.rows();
        if columns.iter().any(|(_, v)| v.rows() != rows)
            || columns.windows(2).any(|w| w[0].0 >= w[1].0)
            || columns.last().is_some_and(|(a, _)| *a >= MAX_ATTRIBUTE)
        {
            return None;
        }
        // Each column's kind and range, from its values, each read once and kept for
        // the rows below: a read is a dispatch on the vector's form (a search among its
        // runs for run lengths), and reading each value twice was most of the time a
        // repeated query paid the run its stripes came of age.
        WORDS.with_borrow_mut(|words| {
            words.clear();
            words.reserve(rows * columns.len());
            let mut layout = Vec::with_capacity(columns.len());
            let mut any_null = false;
            for (_, v) in columns {
                let mut kind = None;
                let (mut min, mut max) = (i64::MAX, i64::MIN);
                for i in 0..rows {
                    let Some((k, w)) = word(v.value(i))? else {
                        any_null = true;
                        words.push(None);
                        continue;
                    };
                    if kind.is_some_and(|have| have != k) {
                        return None;
                    }
                    kind = Some(k);
                    min = min.min(w);
                    max = max.max(w);
                    words.push(Some(w));
                }
                let range = if kind.is_some() { (max as i128 - min as i128) as u64 } else { 0 };
                let width = (8 - range.leading_zeros() as usize / 8) as u8;
                layout.push((kind.unwrap_or(WordKind::Int), if kind.is_some() { min } else { 0 }, width));
            }
            let null_bytes = if any_null { columns.len().div_ceil(8) } else { 0 };
            let mut at = null_bytes;
            let mut held = Vec::with_capacity(columns.len());
            for &(kind, min, width) in &layout {
                held.push(Column { kind, min, at: at as u16, width });
                at += width as usize;
            }
            let stride = at;
            let mut bytes = vec![0u8; rows * stride + PAD];
            for (c, (column, col)) in words.chunks_exact(rows.max(1)).zip(&held).enumerate() {
                for (i, w) in column.iter().enumerate() {
                    let row = i * stride;
                    match *w {
                        None => bytes[row + c / 8] |= 1 << (c % 8),
                        Some(w) => {
                            let offset = (w as i128 - col.min as i128) as u64;
                            let start = row + col.at as usize;
                            bytes[start..start + col.width as usize]
                                .copy_from_slice(&offset.to_le_bytes()[..col.width as usize]);
                        }
                    }
                }
            }
            Some(StripeRows {
                held: columns.iter().fold(0, |bits, (a, _)| bits | 1 << a),
                columns: held.into_boxed_slice(),
                null_bytes,
                stride,
                rows,
                bytes: bytes.into_boxed_slice(),
            })
        })
    }

    /// Whether attribute `attr`'s values are held.
    #[inline]
    pub fn holds(&self, attr: usize) -> bool {
        attr < MAX_ATTRIBUTE && self.held >> attr & 1 != 0
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Where row `i`'s values start and end, and where the columns' layout is (`i <
    /// rows()`), for the caller to have the CPU load them ahead of reading them.
    pub fn row_span(&self, i: usize) -> [*const u8; 3] {
        let start = self.bytes.as_ptr().wrapping_add(i * self.stride);
        [start, start.wrapping_add(self.stride.max(1) - 1), self.columns.as_ptr() as *const u8]
    }

    /// Row `i`'s value of attribute `attr` (`holds(attr)`, `i < rows()`, which the
    /// caller checks).
    #[inline]
    pub fn value(&self, attr: usize, i: usize) -> PointValue<'static> {
        let c = (self.held & ((1u64 << attr) - 1)).count_ones() as usize;
        let row = i * self.stride;
        if self.null_bytes > 0 && self.bytes[row + c / 8] >> (c % 8) & 1 != 0 {
            return PointValue::Null;
        }
        let col = self.columns[c];
        let start = row + col.at as usize;
        let Some(b) = self.bytes.get(start..start + 8) else { unreachable!("rows are padded past the last") };
        let raw = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let offset = if col.width >= 8 { raw } else { raw & ((1u64 << (8 * col.width)) - 1) };
        let w = col.min.wrapping_add(offset as i64);
        match col.kind {
            WordKind::Int => PointValue::Int(w),
            WordKind::Float32 => PointValue::Float32(f32::from_bits(w as u32)),
            WordKind::Float64 => PointValue::Float64(f64::from_bits(w as u64)),
            WordKind::Scaled(scale) => PointValue::Scaled { m: w, scale },
        }
    }

    /// Memory the rows hold.
    pub fn heap_bytes(&self) -> usize {
        self.bytes.len() + std::mem::size_of_val(&*self.columns)
    }
}

/// A value as a word of its kind: Some(None) for NULL, None for a byte string.
fn word(v: PointValue<'_>) -> Option<Option<(WordKind, i64)>> {
    Some(Some(match v {
        PointValue::Null => return Some(None),
        PointValue::Int(x) => (WordKind::Int, x),
        PointValue::Float32(f) => (WordKind::Float32, f.to_bits() as i64),
        PointValue::Float64(f) => (WordKind::Float64, f.to_bits() as i64),
        PointValue::Scaled { m, scale } => (WordKind::Scaled(scale), m),
        PointValue::Bytes(_) => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::base::PhysicalKind;
    use crate::storage::format::encoding::point::open_vector;
    use crate::storage::format::encoding::test_util::encode_ints;
    use crate::storage::format::encoding::{encode_vector, CompressionPolicy, DecodedVector, VectorValues};

    fn ints(rows: &[Option<i64>]) -> PointVector {
        let bytes = encode_ints(rows, &CompressionPolicy::default());
        open_vector(&bytes, PhysicalKind::Int, &mut DecodedVector::default()).unwrap()
    }

    fn floats(rows: &[f64]) -> PointVector {
        let mut out = Vec::new();
        encode_vector(
            rows.len() as u32,
            None,
            VectorValues::Float64(rows),
            &CompressionPolicy::NONE,
            &mut out,
        );
        open_vector(&out, PhysicalKind::Float64, &mut DecodedVector::default()).unwrap()
    }

    #[test]
    fn rows_read_back_every_column_value() {
        let n = 2048;
        let seq: Vec<Option<i64>> = (0..n).map(|i| Some(6_000_000 + i * 4)).collect();
        let small: Vec<Option<i64>> = (0..n).map(|i| (i % 11 != 3).then_some(i % 50)).collect();
        let wide: Vec<Option<i64>> =
            (0..n).map(|i| Some(if i % 2 == 0 { i64::MIN + i } else { i64::MAX - i })).collect();
        let constant: Vec<Option<i64>> = vec![Some(-7); n as usize];
        let nulls: Vec<Option<i64>> = vec![None; n as usize];
        let f: Vec<f64> = (0..n).map(|i| (i as f64).sin() * -1e9).collect();
        let vectors = [ints(&seq), ints(&small), ints(&wide), ints(&constant), ints(&nulls), floats(&f)];
        let attrs = [0usize, 2, 3, 7, 8, 10];
        let columns: Vec<(usize, &PointVector)> = attrs.iter().copied().zip(vectors.iter()).collect();
        let rows = StripeRows::transpose(&columns).unwrap();
        assert_eq!(rows.rows(), n as usize);
        for (a, v) in &columns {
            assert!(rows.holds(*a));
            for i in 0..n as usize {
                assert_eq!(rows.value(*a, i), v.value(i), "attribute {a}, row {i}");
            }
        }
        assert!(!rows.holds(1) && !rows.holds(9) && !rows.holds(11) && !rows.holds(63) && !rows.holds(500));
        // Frame of reference by bytes: 2 + 1 + 8 + 0 + 0 + 8 bytes and the NULL bits.
        assert_eq!(rows.stride, 1 + 2 + 1 + 8 + 8);
        assert!(rows.heap_bytes() < vectors.iter().map(PointVector::heap_bytes).sum::<usize>());
    }

    #[test]
    fn scaled_numerics_keep_their_scale_and_rows_without_nulls_have_no_null_bits() {
        use crate::storage::format::numeric::write_canonical;
        let rows: Vec<i64> = (0..1000).map(|i| i * 7919 % 1_000_003 + 90_000).collect();
        let (mut offsets, mut data) = (vec![0u32], Vec::new());
        for m in &rows {
            write_canonical(*m as i128, 2, &mut data);
            offsets.push(data.len() as u32);
        }
        let mut bytes = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        encode_vector(1000, None, values, &CompressionPolicy::default(), &mut bytes);
        let v = open_vector(&bytes, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
        let keys = ints(&(0..1000).map(Some).collect::<Vec<_>>());
        let t = StripeRows::transpose(&[(1, &keys), (4, &v)]).unwrap();
        assert_eq!(t.null_bytes, 0);
        for (i, &m) in rows.iter().enumerate() {
            assert_eq!(t.value(4, i), PointValue::Scaled { m, scale: 2 });
            assert_eq!(t.value(1, i), PointValue::Int(i as i64));
        }
    }

    #[test]
    fn byte_strings_and_mismatched_vectors_stay_columns() {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for i in 0..100 {
            data.extend_from_slice(format!("text {i}").as_bytes());
            offsets.push(data.len() as u32);
        }
        let mut out = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        encode_vector(100, None, values, &CompressionPolicy::NONE, &mut out);
        let text = open_vector(&out, PhysicalKind::Bytes, &mut DecodedVector::default()).unwrap();
        let a = ints(&(0..100).map(Some).collect::<Vec<_>>());
        let b = ints(&(0..99).map(Some).collect::<Vec<_>>());
        assert!(StripeRows::transpose(&[(0, &a), (1, &text)]).is_none());
        assert!(StripeRows::transpose(&[(0, &a), (1, &b)]).is_none());
        assert!(StripeRows::transpose(&[(0, &a), (0, &a)]).is_none());
        assert!(StripeRows::transpose(&[(1, &a), (0, &a)]).is_none());
        assert!(StripeRows::transpose(&[(0, &a), (64, &a)]).is_none());
        assert!(StripeRows::transpose(&[(0, &a), (63, &a)]).is_some_and(|r| r.holds(63)));
        assert!(StripeRows::transpose(&[]).is_none());
    }
}
