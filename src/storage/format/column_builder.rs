//! Accumulates one column's values for a row group being written: dense non-NULL
//! values plus one validity flag per row. Pure.

use super::encoding::PhysicalKind;
use super::fallible;

#[derive(Debug, Clone)]
pub struct ColumnBuilder {
    pub kind: PhysicalKind,
    /// One flag per row: true when the value is not NULL.
    validity: Vec<bool>,
    ints: Vec<i64>,
    f32s: Vec<f32>,
    f64s: Vec<f64>,
    /// Bytes values: value i is `data[offsets[i]..offsets[i + 1]]`.
    offsets: Vec<u64>,
    data: Vec<u8>,
}

/// Dense values of a row range, ready for `encoding::encode_vector`.
pub enum DenseSlice<'a> {
    Int(&'a [i64]),
    Float32(&'a [f32]),
    Float64(&'a [f64]),
    Bytes { offsets: &'a [u64], data: &'a [u8] },
}

impl ColumnBuilder {
    pub fn new(kind: PhysicalKind) -> ColumnBuilder {
        ColumnBuilder {
            kind,
            validity: Vec::new(),
            ints: Vec::new(),
            f32s: Vec::new(),
            f64s: Vec::new(),
            offsets: vec![0],
            data: Vec::new(),
        }
    }

    pub fn rows(&self) -> usize {
        self.validity.len()
    }

    /// Bytes held, to bound a write buffer's memory.
    pub fn heap_bytes(&self) -> usize {
        self.validity.len()
            + self.ints.len() * 8
            + self.f32s.len() * 4
            + self.f64s.len() * 8
            + self.offsets.len() * 8
            + self.data.len()
    }

    /// Makes room for `rows` more rows (a byte string's bytes excepted): a statement
    /// that says how many rows it brings then grows each buffer once, not at every
    /// doubling.
    pub fn reserve_rows(&mut self, rows: usize) {
        fallible::reserve(&mut self.validity, rows);
        match self.kind {
            PhysicalKind::Int => fallible::reserve(&mut self.ints, rows),
            PhysicalKind::Float32 => fallible::reserve(&mut self.f32s, rows),
            PhysicalKind::Float64 => fallible::reserve(&mut self.f64s, rows),
            PhysicalKind::Bytes => fallible::reserve(&mut self.offsets, rows),
        }
    }

    pub fn push_null(&mut self) {
        fallible::push(&mut self.validity, false);
    }

    pub fn push_int(&mut self, v: i64) {
        debug_assert_eq!(self.kind, PhysicalKind::Int);
        fallible::push(&mut self.validity, true);
        fallible::push(&mut self.ints, v);
    }

    pub fn push_f32(&mut self, v: f32) {
        debug_assert_eq!(self.kind, PhysicalKind::Float32);
        fallible::push(&mut self.validity, true);
        fallible::push(&mut self.f32s, v);
    }

    pub fn push_f64(&mut self, v: f64) {
        debug_assert_eq!(self.kind, PhysicalKind::Float64);
        fallible::push(&mut self.validity, true);
        fallible::push(&mut self.f64s, v);
    }

    pub fn push_bytes(&mut self, v: &[u8]) {
        debug_assert_eq!(self.kind, PhysicalKind::Bytes);
        fallible::push(&mut self.validity, true);
        fallible::extend_from_slice(&mut self.data, v);
        fallible::push(&mut self.offsets, self.data.len() as u64);
    }

    pub fn validity(&self, rows: std::ops::Range<usize>) -> &[bool] {
        &self.validity[rows]
    }

    /// Number of non-NULL values among the first `row` rows.
    pub fn dense_index(&self, row: usize) -> usize {
        self.validity[..row].iter().filter(|v| **v).count()
    }

    /// The dense values `dense` (indexes among non-NULL values).
    pub fn dense(&self, dense: std::ops::Range<usize>) -> DenseSlice<'_> {
        match self.kind {
            PhysicalKind::Int => DenseSlice::Int(&self.ints[dense]),
            PhysicalKind::Float32 => DenseSlice::Float32(&self.f32s[dense]),
            PhysicalKind::Float64 => DenseSlice::Float64(&self.f64s[dense]),
            PhysicalKind::Bytes => {
                DenseSlice::Bytes { offsets: &self.offsets[dense.start..dense.end + 1], data: &self.data }
            }
        }
    }

    pub fn int_at(&self, dense: usize) -> i64 {
        self.ints[dense]
    }

    pub fn f32_at(&self, dense: usize) -> f32 {
        self.f32s[dense]
    }

    pub fn f64_at(&self, dense: usize) -> f64 {
        self.f64s[dense]
    }

    pub fn bytes_at(&self, dense: usize) -> &[u8] {
        &self.data[self.offsets[dense] as usize..self.offsets[dense + 1] as usize]
    }

    /// Compares two non-NULL values by their stored form: integers and floats
    /// numerically (NaN greatest, -0 equal to 0, as PostgreSQL orders floats), byte
    /// strings byte-wise.
    pub fn compare_dense(&self, a: usize, b: usize) -> std::cmp::Ordering {
        fn floats(x: f64, y: f64) -> std::cmp::Ordering {
            match (x.is_nan(), y.is_nan()) {
                (true, true) => std::cmp::Ordering::Equal,
                (true, false) => std::cmp::Ordering::Greater,
                (false, true) => std::cmp::Ordering::Less,
                _ => x.partial_cmp(&y).unwrap(),
            }
        }
        match self.kind {
            PhysicalKind::Int => self.ints[a].cmp(&self.ints[b]),
            PhysicalKind::Float32 => floats(self.f32s[a] as f64, self.f32s[b] as f64),
            PhysicalKind::Float64 => floats(self.f64s[a], self.f64s[b]),
            PhysicalKind::Bytes => self.bytes_at(a).cmp(self.bytes_at(b)),
        }
    }

    /// Appends rows `rows` of `other` (of the same kind).
    pub fn extend_from(&mut self, other: &ColumnBuilder, rows: std::ops::Range<usize>) {
        debug_assert_eq!(self.kind, other.kind);
        let first = other.dense_index(rows.start);
        let dense = first..first + other.validity[rows.clone()].iter().filter(|v| **v).count();
        fallible::extend_from_slice(&mut self.validity, &other.validity[rows]);
        match self.kind {
            PhysicalKind::Int => fallible::extend_from_slice(&mut self.ints, &other.ints[dense]),
            PhysicalKind::Float32 => fallible::extend_from_slice(&mut self.f32s, &other.f32s[dense]),
            PhysicalKind::Float64 => fallible::extend_from_slice(&mut self.f64s, &other.f64s[dense]),
            PhysicalKind::Bytes => {
                let (from, to) = (other.offsets[dense.start], other.offsets[dense.end]);
                let shift = self.data.len() as u64;
                fallible::extend_from_slice(&mut self.data, &other.data[from as usize..to as usize]);
                fallible::reserve(&mut self.offsets, dense.len());
                self.offsets
                    .extend(other.offsets[dense.start + 1..=dense.end].iter().map(|o| o - from + shift));
            }
        }
    }

    /// Drops the first `rows` rows (after they were written out).
    pub fn drain_front(&mut self, rows: usize) {
        let dense = self.dense_index(rows);
        self.validity.drain(..rows);
        match self.kind {
            PhysicalKind::Int => drop(self.ints.drain(..dense)),
            PhysicalKind::Float32 => drop(self.f32s.drain(..dense)),
            PhysicalKind::Float64 => drop(self.f64s.drain(..dense)),
            PhysicalKind::Bytes => {
                let cut = self.offsets[dense];
                self.data.drain(..cut as usize);
                self.offsets.drain(..dense);
                for o in &mut self.offsets {
                    *o -= cut;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_indexes_skip_nulls() {
        let mut b = ColumnBuilder::new(PhysicalKind::Int);
        b.push_int(1);
        b.push_null();
        b.push_int(3);
        assert_eq!(b.rows(), 3);
        assert_eq!(b.dense_index(2), 1);
        assert!(matches!(b.dense(1..2), DenseSlice::Int(&[3])));
        assert_eq!(b.validity(0..3), &[true, false, true]);
    }

    #[test]
    fn extend_from_appends_a_row_range() {
        let mut src = ColumnBuilder::new(PhysicalKind::Bytes);
        for v in [Some(&b"ab"[..]), None, Some(b"cde"), Some(b""), Some(b"f")] {
            match v {
                Some(v) => src.push_bytes(v),
                None => src.push_null(),
            }
        }
        let mut dst = ColumnBuilder::new(PhysicalKind::Bytes);
        dst.push_bytes(b"x");
        dst.extend_from(&src, 1..4);
        dst.extend_from(&src, 4..5);
        assert_eq!(dst.validity(0..5), &[true, false, true, true, true]);
        let values: Vec<&[u8]> = (0..4).map(|i| dst.bytes_at(i)).collect();
        assert_eq!(values, [&b"x"[..], b"cde", b"", b"f"]);
        let mut ints = ColumnBuilder::new(PhysicalKind::Int);
        let mut more = ColumnBuilder::new(PhysicalKind::Int);
        more.push_null();
        more.push_int(7);
        more.push_int(8);
        ints.extend_from(&more, 0..2);
        assert_eq!(ints.validity(0..2), &[false, true]);
        assert_eq!(ints.int_at(0), 7);
    }

    #[test]
    fn drain_front_keeps_the_rest() {
        let mut b = ColumnBuilder::new(PhysicalKind::Bytes);
        b.push_bytes(b"ab");
        b.push_null();
        b.push_bytes(b"cde");
        b.push_bytes(b"");
        b.drain_front(2);
        assert_eq!(b.rows(), 2);
        match b.dense(0..2) {
            DenseSlice::Bytes { offsets, data } => {
                assert_eq!(offsets, &[0, 3, 3]);
                assert_eq!(&data[..3], b"cde");
            }
            _ => unreachable!(),
        }
    }
}
