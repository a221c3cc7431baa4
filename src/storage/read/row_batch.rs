//! The current vector's output columns as a slot takes them, row by row: for each, where
//! its Datums lie (an integer or float8 vector's decoded values are their Datums, bit for
//! bit; other columns are made into Datums first, `DatumColumn`) and its null flags.
//! Storing a row is then one tight loop of loads and stores, with no per-value
//! conversion, no matching on the value kind and no bounds check per value.

use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::relation::datum::DatumColumn;
use pgrx::pg_sys;

#[derive(Default)]
pub struct RowBatch {
    /// Attribute indexes of the output columns.
    attrs: Vec<usize>,
    /// Per output column, once the vector is loaded (`push_*`): its cells.
    cells: Vec<Cells>,
    /// Rows every column holds (the vector's); 0 when no vector is loaded.
    rows: usize,
    /// `rows` false flags, for columns without NULLs.
    no_nulls: Vec<bool>,
    /// Per output column with NULLs in the vector, its null flags (its validity, negated).
    null_flags: Vec<Vec<bool>>,
}

/// Where one column's Datums and null flags lie, `rows` of each.
#[derive(Clone, Copy)]
struct Cells {
    attr: usize,
    datums: *const pg_sys::Datum,
    nulls: *const bool,
}

impl RowBatch {
    /// The attributes (indexes) the batch holds from now on, and no rows.
    pub fn set_attrs(&mut self, attrs: Vec<usize>) {
        self.attrs = attrs;
        self.clear();
    }

    pub fn attrs(&self) -> &[usize] {
        &self.attrs
    }

    /// Forgets the vector: no row can be stored until the next `begin` and `push_*`.
    pub fn clear(&mut self) {
        self.rows = 0;
        self.cells.clear();
    }

    /// Starts a vector of `rows` rows, whose output columns the caller then pushes in
    /// the order of `attrs`.
    pub fn begin(&mut self, rows: usize) {
        self.clear();
        if self.no_nulls.len() < rows {
            self.no_nulls.resize(rows, false);
        }
        self.rows = rows;
    }

    /// Pushes the next output column as a decoded vector of integers or float8s, whose
    /// values are their Datums (Int64GetDatum and Float8GetDatum keep the bits; narrower
    /// integers are stored sign-extended, as their Datums are). False, with nothing
    /// pushed, for other vectors: the caller makes their Datums and `push_datums` them.
    ///
    /// # Safety
    /// `v` must stay unchanged (not decoded again, moved or dropped) until `clear` (the
    /// batch keeps pointers to its values).
    pub unsafe fn push_values(&mut self, v: &DecodedVector) -> bool {
        let datums = match &v.values {
            DecodedValues::Int(values) if values.len() >= self.rows => {
                values.as_ptr() as *const pg_sys::Datum
            }
            DecodedValues::Float64(values) if values.len() >= self.rows => {
                values.as_ptr() as *const pg_sys::Datum
            }
            _ => return false,
        };
        let nulls = match &v.validity {
            Some(valid) if valid.len() >= self.rows => {
                let j = self.cells.len();
                if self.null_flags.len() <= j {
                    self.null_flags.resize_with(j + 1, Vec::new);
                }
                let flags = &mut self.null_flags[j];
                flags.clear();
                flags.extend(valid.iter().map(|ok| !ok));
                flags.as_ptr()
            }
            Some(_) => return false,
            None => self.no_nulls.as_ptr(),
        };
        self.push(Cells { attr: 0, datums, nulls });
        true
    }

    /// Pushes the next output column as Datums made for the vector's rows; false, with
    /// nothing pushed, if it holds fewer rows than the batch.
    ///
    /// # Safety
    /// `column` must stay unchanged (not materialized again, moved or dropped) until `clear`.
    pub unsafe fn push_datums(&mut self, column: &DatumColumn) -> bool {
        if column.datums.len() < self.rows || column.nulls.len() < self.rows {
            return false;
        }
        self.push(Cells { attr: 0, datums: column.datums.as_ptr(), nulls: column.nulls.as_ptr() });
        true
    }

    fn push(&mut self, cells: Cells) {
        let attr = self.attrs[self.cells.len()];
        self.cells.push(Cells { attr, ..cells });
    }

    /// Writes row `r` of the vector into a slot's arrays, at the output attributes;
    /// false (nothing written) if the batch holds no row `r` (no vector loaded, or not
    /// every column pushed).
    ///
    /// # Safety
    /// `values` and `nulls` must be valid for writes at every attribute index of the
    /// batch (a slot's `tts_values`/`tts_isnull` of the descriptor the attributes come
    /// from), and the columns pushed still unchanged (the `push_*` contracts).
    pub unsafe fn store(&self, r: usize, values: *mut pg_sys::Datum, nulls: *mut bool) -> bool {
        if r >= self.rows || self.cells.len() != self.attrs.len() {
            return false;
        }
        for c in &self.cells {
            // SAFETY: every column pushed holds at least `rows` > `r` Datums and flags and is
            // unchanged since (the `push_*` contracts); `c.attr` is an attribute index where the
            // caller's arrays are valid for writes (this fn's contract).
            unsafe {
                *values.add(c.attr) = *c.datums.add(r);
                *nulls.add(c.attr) = *c.nulls.add(r);
            }
        }
        true
    }

    /// Rows the loaded vector holds (0 if none is loaded).
    pub fn rows(&self) -> usize {
        if self.cells.len() == self.attrs.len() {
            self.rows
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(batch: &RowBatch, r: usize, natts: usize) -> Option<(Vec<usize>, Vec<bool>)> {
        let mut values = vec![pg_sys::Datum::from(99usize); natts];
        let mut nulls = vec![false; natts];
        // SAFETY: the arrays have an entry for every attribute index the tests use, and the
        // vectors pushed are alive and unchanged.
        let ok = unsafe { batch.store(r, values.as_mut_ptr(), nulls.as_mut_ptr()) };
        ok.then(|| (values.iter().map(|d| d.value()).collect(), nulls))
    }

    #[test]
    fn rows_land_on_their_attributes() {
        let ints = DecodedVector::from_parts(
            3,
            Some(vec![true, false, true]),
            DecodedValues::Int(vec![-1, 0, 7]),
            None,
        );
        let floats = DecodedVector::from_parts(3, None, DecodedValues::Float64(vec![0.5, 1.5, 2.5]), None);
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![3, 1]);
        batch.begin(3);
        assert_eq!(batch.rows(), 0, "no row before every column is pushed");
        // SAFETY: the vectors outlive the batch's use below, unchanged.
        unsafe {
            assert!(batch.push_values(&ints));
            assert!(batch.push_values(&floats));
        }
        assert_eq!(batch.rows(), 3);
        let (values, nulls) = stored(&batch, 1, 4).unwrap();
        assert_eq!(values, vec![99, 1.5f64.to_bits() as usize, 99, 0]);
        assert_eq!(nulls, vec![false, false, false, true]);
        let (values, nulls) = stored(&batch, 0, 4).unwrap();
        // Int64GetDatum(-1) and Int32GetDatum(-1) are both all ones.
        assert_eq!(values, vec![99, 0.5f64.to_bits() as usize, 99, usize::MAX]);
        assert_eq!(nulls, vec![false; 4]);
        assert!(stored(&batch, 3, 4).is_none());
        batch.clear();
        assert!(stored(&batch, 0, 4).is_none());
    }

    #[test]
    fn other_kinds_come_from_their_datums() {
        let floats = DecodedVector::from_parts(1, None, DecodedValues::Float32(vec![-1.0]), None);
        let bytes = DecodedVector::from_parts(
            2,
            None,
            DecodedValues::Bytes { offsets: vec![0, 1, 3], data: b"abc".to_vec() },
            None,
        );
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![0]);
        batch.begin(2);
        // SAFETY: as above.
        unsafe {
            assert!(!batch.push_values(&floats));
            assert!(!batch.push_values(&bytes));
        }
        let mut column = DatumColumn::default();
        column.datums = vec![pg_sys::Datum::from(11usize), pg_sys::Datum::from(12usize)];
        column.nulls = vec![false, true];
        // SAFETY: as above.
        assert!(unsafe { batch.push_datums(&column) });
        assert_eq!(stored(&batch, 1, 1).unwrap(), (vec![12], vec![true]));
        assert_eq!(stored(&batch, 0, 1).unwrap(), (vec![11], vec![false]));
    }

    #[test]
    fn a_vector_shorter_than_the_batch_is_not_taken_as_values() {
        let ints = DecodedVector::from_parts(1, None, DecodedValues::Int(vec![5]), None);
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![0]);
        batch.begin(2);
        // SAFETY: as above.
        assert!(!unsafe { batch.push_values(&ints) });
        assert_eq!(batch.rows(), 0);
    }
}
