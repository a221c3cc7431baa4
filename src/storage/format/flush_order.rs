//! The order in which a flush writes a row group's rows when the table has a sort key
//! (`sort_by`), as pure logic.
//!
//! A row's TID (its row number) is handed out when it is inserted, before its row group
//! is written, and index entries already point at it. So a sorted flush keeps the row
//! numbers and stores the rows in sorted *positions*, with an order column: position p
//! holds the row at offset `order[p]` of the row group. Scans read positions (vectors of
//! neighbouring sort-key values, which is what makes zone maps prune) and report each
//! row's own TID; fetches by TID find the position through the inverse.
//!
//! Values are compared as they are stored: integers (also dates and timestamps) and
//! floats numerically, byte strings (text, numeric, ...) byte-wise, NULLs last. That is
//! the types' own order for integers, dates, timestamps, floats, bytea and text under
//! the "C" collation, and for every type it puts equal values together.

use super::column_builder::ColumnBuilder;
use super::encoding::PhysicalKind;
use rayon::slice::ParallelSliceMut;
use std::cmp::Ordering;

/// One sort-key column's values over the rows being flushed, random-access.
struct KeyColumn<'a> {
    builder: &'a ColumnBuilder,
    /// Per row: index of its value among the non-NULL ones, or None for NULL.
    dense: Vec<Option<usize>>,
}

impl KeyColumn<'_> {
    fn compare(&self, a: usize, b: usize) -> Ordering {
        match (self.dense[a], self.dense[b]) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => self.builder.compare_dense(x, y),
        }
    }
}

/// Per row of `rows`: the index of its value among `b`'s non-NULL values, None for NULL.
fn dense_indexes(b: &ColumnBuilder, rows: std::ops::Range<usize>) -> Vec<Option<usize>> {
    let mut next = b.dense_index(rows.start);
    b.validity(rows)
        .iter()
        .map(|&valid| {
            valid.then(|| {
                next += 1;
                next - 1
            })
        })
        .collect()
}

/// Orders of fewer rows are sorted on the calling thread.
const PARALLEL_SORT_ROWS: usize = 8192;

/// The positions of rows `rows` of `keys` (the sort-key columns, in key order) once
/// sorted: `order[p]` is the offset (from `rows.start`) of the row written at position
/// p. Ties keep insertion order. None when the rows are in order already.
pub fn flush_order(keys: &[&ColumnBuilder], rows: std::ops::Range<usize>) -> Option<Vec<u32>> {
    let columns: Vec<KeyColumn> =
        keys.iter().map(|b| KeyColumn { builder: b, dense: dense_indexes(b, rows.clone()) }).collect();
    let compare = |a: usize, b: usize| {
        columns.iter().map(|c| c.compare(a, b)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal)
    };
    let n = rows.len();
    if (1..n).all(|i| compare(i - 1, i).is_le()) {
        return None;
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    // Stable, and pure Rust over owned data: fine on rayon's threads (not worth waking
    // them for a few rows).
    match n < PARALLEL_SORT_ROWS {
        true => order.sort_by(|&a, &b| compare(a as usize, b as usize)),
        false => order.par_sort_by(|&a, &b| compare(a as usize, b as usize)),
    }
    Some(order)
}

/// Rows `rows` of `b` rearranged by `order` (offsets from `rows.start`).
pub fn permuted(b: &ColumnBuilder, rows: std::ops::Range<usize>, order: &[u32]) -> ColumnBuilder {
    let mut out = ColumnBuilder::new(b.kind);
    let dense = dense_indexes(b, rows);
    for &o in order {
        match dense[o as usize] {
            None => out.push_null(),
            Some(d) => match b.kind {
                PhysicalKind::Int => out.push_int(b.int_at(d)),
                PhysicalKind::Float32 => out.push_f32(b.f32_at(d)),
                PhysicalKind::Float64 => out.push_f64(b.f64_at(d)),
                PhysicalKind::Bytes => out.push_bytes(b.bytes_at(d)),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(values: &[Option<i64>]) -> ColumnBuilder {
        let mut b = ColumnBuilder::new(PhysicalKind::Int);
        for v in values {
            match v {
                Some(v) => b.push_int(*v),
                None => b.push_null(),
            }
        }
        b
    }

    fn texts(values: &[&str]) -> ColumnBuilder {
        let mut b = ColumnBuilder::new(PhysicalKind::Bytes);
        for v in values {
            b.push_bytes(v.as_bytes());
        }
        b
    }

    #[test]
    fn sorts_by_each_key_in_turn_with_nulls_last_and_stable_ties() {
        let host = texts(&["b", "a", "b", "a", "c"]);
        let time = ints(&[Some(2), None, Some(1), Some(5), Some(0)]);
        let order = flush_order(&[&host, &time], 0..5).unwrap();
        assert_eq!(order, vec![3, 1, 2, 0, 4]);
        let ties = texts(&["x", "x", "x"]);
        assert_eq!(flush_order(&[&ties], 0..3), None, "already in order");
    }

    #[test]
    fn a_range_is_sorted_on_its_own_and_permuted_with_its_nulls() {
        // Rows 2..6 of the builder: 9, NULL, 1, 4.
        let b = ints(&[Some(100), Some(-5), Some(9), None, Some(1), Some(4)]);
        let order = flush_order(&[&b], 2..6).unwrap();
        assert_eq!(order, vec![2, 3, 0, 1]);
        let p = permuted(&b, 2..6, &order);
        let got: Vec<Option<i64>> =
            (0..4).map(|r| p.validity(r..r + 1)[0].then(|| p.int_at(p.dense_index(r)))).collect();
        assert_eq!(got, vec![Some(1), Some(4), Some(9), None]);
    }

    #[test]
    fn floats_sort_numerically_with_nan_greatest() {
        let mut b = ColumnBuilder::new(PhysicalKind::Float64);
        for v in [f64::NAN, 2.5, -0.0, -1.0, f64::INFINITY, 0.0] {
            b.push_f64(v);
        }
        assert_eq!(flush_order(&[&b], 0..6).unwrap(), vec![3, 2, 5, 1, 4, 0]);
    }
}
