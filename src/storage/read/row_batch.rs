//! The current vector's output columns as a slot takes them, row by row: for each, where
//! its Datums lie (an integer or float8 vector's decoded values are their Datums, bit for
//! bit; a float4's are made first, `DatumColumn`; a dictionary's are its entries', looked
//! up by each row's code) or, for byte strings and scaled numerics, where the values lie
//! whose images each row's store writes
//! (`push_images`), and its null flags. Storing a row is then one tight loop of loads
//! and stores, with no matching on the value kind and no bounds check per value.
//!
//! The images of byte strings are written when a row is stored, into one small buffer
//! the next row's overwrite: the executor reads a scan's row before it asks for the next
//! (and copies what it keeps longer), as with heap's tuples. Scaled numerics' images are
//! two words each, made for the whole vector in one pass from the mantissas (digits,
//! trimming and headers fused), and a row's Datum points at its own: 16 columns of a
//! 2,048-row vector are 512 kB, which stay in L2, and the per-row work is a pointer.

use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use crate::storage::format::fallible;
use crate::storage::format::numeric::ScaleWriter;
use crate::storage::relation::datum::{self, ColumnKind, DatumColumn, MOVE, SCALED_IMAGE_WORDS, WIDE};
use pgrx::pg_sys;

#[derive(Default)]
pub struct RowBatch {
    /// Attribute indexes of the output columns.
    attrs: Vec<usize>,
    /// Output columns pushed for the loaded vector (`push_*`).
    pushed: usize,
    /// Those whose Datums are made already: kept apart, so that storing them is the
    /// tight loop of loads and stores it was before any column had images.
    datum_cells: Vec<DatumCells>,
    /// Those whose images each row's store writes.
    image_cells: Vec<ImageCells>,
    /// Rows every column holds (the vector's); 0 when no vector is loaded.
    rows: usize,
    /// Rows of the vector that will be stored (its selection).
    selected: usize,
    /// `rows` false flags, for columns without NULLs.
    no_nulls: Vec<bool>,
    /// Per output column with NULLs in the vector, its null flags (its validity, negated).
    null_flags: Vec<Vec<bool>>,
    /// Those whose images were made for the whole vector (`image_arrays`): a row's
    /// Datum points at its image there.
    image_array_cells: Vec<ImageArrayCells>,
    /// Those whose images lie in the vector's own buffer (short varlena images): a
    /// row's Datum points at its image there.
    image_start_cells: Vec<ImageStartCells>,
    /// Those kept as a dictionary: a row's Datum is its code's entry's.
    code_cells: Vec<CodeCells>,
    /// Per output column of scaled numerics, its rows' images
    /// (`ScaleWriter::short_images_into`), made when the vector is pushed.
    image_arrays: Vec<Vec<[u64; 2]>>,
    /// The stored row's images, each column's in its room (`ImageCells::room`).
    images: Vec<u64>,
    /// Words of the rooms of the columns pushed so far.
    image_words: usize,
}

/// Where one column's Datums and null flags lie, `rows` of each.
#[derive(Clone, Copy)]
struct DatumCells {
    attr: usize,
    datums: *const pg_sys::Datum,
    nulls: *const bool,
}

/// Where one column's values and null flags lie, `rows` of each, and its images.
#[derive(Clone, Copy)]
struct ImageCells {
    attr: usize,
    values: Values,
    nulls: *const bool,
    /// The first word of the column's room in `images`.
    room: usize,
}

/// Where one column's images (one per row, two words each) and null flags lie, `rows`
/// of each.
#[derive(Clone, Copy)]
struct ImageArrayCells {
    attr: usize,
    images: *const [u64; 2],
    nulls: *const bool,
}

/// Where one column's images lie (row r's at `data + starts[r]`) and its null flags,
/// `rows` of each.
#[derive(Clone, Copy)]
struct ImageStartCells {
    attr: usize,
    data: *const u8,
    starts: *const u32,
    nulls: *const bool,
}

/// Where one column's dictionary codes and its entries' Datums lie (row r's Datum is
/// `entries[codes[r]]`, every code below the entries' count) and its null flags, `rows`
/// of each.
#[derive(Clone, Copy)]
struct CodeCells {
    attr: usize,
    codes: *const u32,
    entries: *const pg_sys::Datum,
    nulls: *const bool,
}

/// What a row's image is written from.
#[derive(Clone, Copy)]
enum Values {
    /// Byte strings, row r at `data[offsets[r]..offsets[r + 1]]` (`data_len` bytes in
    /// all), written as a `kind` image (`datum::write_image`).
    Bytes { kind: ColumnKind, offsets: *const u32, data: *const u8, data_len: usize },
    /// Scaled numerics too large for the images made a vector at a time: row r is `m[r]`.
    Scaled { writer: ScaleWriter, m: *const i64 },
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
        self.pushed = 0;
        self.datum_cells.clear();
        self.image_cells.clear();
        self.image_array_cells.clear();
        self.image_start_cells.clear();
        self.code_cells.clear();
        self.image_words = 0;
    }

    /// Starts a vector of `rows` rows, all stored, whose output columns the caller then
    /// pushes in the order of `attrs`.
    pub fn begin(&mut self, rows: usize) {
        self.begin_selected(rows, rows);
    }

    /// `begin`, of which `selected` rows will be stored.
    pub fn begin_selected(&mut self, rows: usize, selected: usize) {
        self.clear();
        if self.no_nulls.len() < rows {
            self.no_nulls.resize(rows, false);
        }
        self.rows = rows;
        self.selected = selected;
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
        let Some(nulls) = self.null_flags_of(v) else { return false };
        self.push_datum_cells(datums, nulls);
        true
    }

    /// The null flags of the next output column, `v`'s: None if it has fewer rows.
    fn null_flags_of(&mut self, v: &DecodedVector) -> Option<*const bool> {
        match &v.validity {
            Some(valid) if valid.len() >= self.rows => {
                let j = self.pushed;
                if self.null_flags.len() <= j {
                    self.null_flags.resize_with(j + 1, Vec::new);
                }
                let flags = &mut self.null_flags[j];
                flags.clear();
                flags.extend(valid.iter().map(|ok| !ok));
                Some(flags.as_ptr())
            }
            Some(_) => None,
            None => Some(self.no_nulls.as_ptr()),
        }
    }

    /// Pushes the next output column, of kind `kind`, as the values whose images each
    /// row's store writes: a vector of byte strings not kept as a dictionary, or of
    /// scaled numerics (a varlena column's). False, with nothing pushed, for other
    /// vectors (and one holding fewer rows than the batch).
    ///
    /// # Safety
    /// As `push_values`.
    pub unsafe fn push_images(&mut self, kind: ColumnKind, v: &DecodedVector) -> bool {
        let rows = self.rows;
        if let (Some(images), ColumnKind::Varlena) = (&v.images, kind) {
            // Every start the decoder made lies within the data, at a whole image
            // (`short_images::decode_starts`); NULL rows are not read.
            if images.starts.len() < rows {
                return false;
            }
            let Some(nulls) = self.null_flags_of(v) else { return false };
            let attr = self.attrs[self.pushed];
            self.pushed += 1;
            let (data, starts) = (images.data.as_ptr(), images.starts.as_ptr());
            self.image_start_cells.push(ImageStartCells { attr, data, starts, nulls });
            return true;
        }
        let (values, words) = match (&v.scaled, &v.values, kind) {
            _ if v.dictionary.is_some() || v.images.is_some() => return false,
            (Some(s), _, ColumnKind::Varlena) if s.m.len() >= rows => {
                let writer = ScaleWriter::new(s.scale);
                let m = &s.m[..rows];
                // Most vectors hold small values only: their images are made a vector at a
                // time, in one pass, and a row's Datum points at its own; the others' are
                // written from the mantissa as each row is stored, and so are those of a
                // vector of which a filter keeps a few rows (making every row's image
                // there was 29% of TPC-H q14, which keeps 1.3%).
                if self.selected * 4 >= rows && writer.short_applies(m) {
                    let Some(nulls) = self.null_flags_of(v) else { return false };
                    let j = self.pushed;
                    if self.image_arrays.len() <= j {
                        self.image_arrays.resize_with(j + 1, Vec::new);
                    }
                    let images = &mut self.image_arrays[j];
                    images.clear();
                    writer.short_images_into(m, images);
                    let attr = self.attrs[j];
                    self.pushed += 1;
                    self.image_array_cells.push(ImageArrayCells { attr, images: images.as_ptr(), nulls });
                    return true;
                }
                (Values::Scaled { writer, m: m.as_ptr() }, SCALED_IMAGE_WORDS)
            }
            (None, DecodedValues::Bytes { offsets, data }, ColumnKind::Varlena)
            | (None, DecodedValues::Bytes { offsets, data }, ColumnKind::Fixed { .. })
            | (None, DecodedValues::Bytes { offsets, data }, ColumnKind::CString)
                if offsets.len() > rows =>
            {
                // Offsets never fall and stay within the data (the decoder's), checked once
                // here, as the stores rely on it.
                let offsets = &offsets[..=rows];
                // (A loop without an early exit, which vectorizes.)
                let (mut longest, mut falls) = (0u32, false);
                for w in offsets.windows(2) {
                    falls |= w[1] < w[0];
                    longest = longest.max(w[1].wrapping_sub(w[0]));
                }
                if falls || offsets[rows] as usize > data.len() {
                    return false;
                }
                let longest = longest as usize;
                // The image, plus the slack of `write_image_wide`'s whole moves.
                let words = datum::image_words(kind, longest) + MOVE / 8 + 1;
                let data_len = data.len();
                (Values::Bytes { kind, offsets: offsets.as_ptr(), data: data.as_ptr(), data_len }, words)
            }
            _ => return false,
        };
        let Some(nulls) = self.null_flags_of(v) else { return false };
        let room = self.image_words;
        self.image_words += words;
        if self.images.len() < self.image_words {
            fallible::resize(&mut self.images, self.image_words, 0);
        }
        let attr = self.attrs[self.pushed];
        self.pushed += 1;
        self.image_cells.push(ImageCells { attr, values, nulls, room });
        true
    }

    /// Pushes the next output column, a vector kept as a dictionary, as its codes and its
    /// entries' Datums (`DatumColumn::materialize_entries`): a row's store looks its Datum
    /// up, instead of a Datum made per row first. False, with nothing pushed, for other
    /// vectors, one holding fewer rows than the batch, or a code without an entry.
    ///
    /// # Safety
    /// As `push_values`, and `entries` must stay unchanged until `clear`.
    pub unsafe fn push_codes(&mut self, v: &DecodedVector, entries: &[pg_sys::Datum]) -> bool {
        let rows = self.rows;
        let Some(dictionary) = &v.dictionary else { return false };
        // Every code must name an entry: checked once here, as the stores rely on it.
        if entries.len() != dictionary.len() || !dictionary.codes_name_entries(rows) {
            return false;
        }
        let codes = &dictionary.codes[..rows];
        let Some(nulls) = self.null_flags_of(v) else { return false };
        let attr = self.attrs[self.pushed];
        self.pushed += 1;
        self.code_cells.push(CodeCells { attr, codes: codes.as_ptr(), entries: entries.as_ptr(), nulls });
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
        self.push_datum_cells(column.datums.as_ptr(), column.nulls.as_ptr());
        true
    }

    fn push_datum_cells(&mut self, datums: *const pg_sys::Datum, nulls: *const bool) {
        let attr = self.attrs[self.pushed];
        self.pushed += 1;
        self.datum_cells.push(DatumCells { attr, datums, nulls });
    }

    /// Writes row `r` of the vector into a slot's arrays, at the output attributes;
    /// false (nothing written) if the batch holds no row `r` (no vector loaded, or not
    /// every column pushed). Its by-reference Datums stay valid until the next row is
    /// stored or the batch cleared.
    ///
    /// # Safety
    /// `values` and `nulls` must be valid for writes at every attribute index of the
    /// batch (a slot's `tts_values`/`tts_isnull` of the descriptor the attributes come
    /// from), and the columns pushed still unchanged (the `push_*` contracts).
    pub unsafe fn store(&mut self, r: usize, values: *mut pg_sys::Datum, nulls: *mut bool) -> bool {
        if r >= self.rows || self.pushed != self.attrs.len() {
            return false;
        }
        for c in &self.datum_cells {
            // SAFETY: every column pushed holds at least `rows` > `r` Datums and flags and is
            // unchanged since (the `push_*` contracts); `c.attr` is an attribute index where the
            // caller's arrays are valid for writes (this fn's contract).
            unsafe {
                *values.add(c.attr) = *c.datums.add(r);
                *nulls.add(c.attr) = *c.nulls.add(r);
            }
        }
        for c in &self.image_array_cells {
            // SAFETY: as for `datum_cells`: every such column has `rows` > `r` images (made by
            // `push_images`, kept in `image_arrays` until `clear`) and flags.
            unsafe {
                *values.add(c.attr) = pg_sys::Datum::from(c.images.add(r));
                *nulls.add(c.attr) = *c.nulls.add(r);
            }
        }
        for c in &self.code_cells {
            // SAFETY: as for `datum_cells`: every such column has `rows` > `r` codes and flags,
            // each code below its entries' count (`push_codes` checked), unchanged since.
            unsafe {
                *values.add(c.attr) = *c.entries.add(*c.codes.add(r) as usize);
                *nulls.add(c.attr) = *c.nulls.add(r);
            }
        }
        for c in &self.image_start_cells {
            // SAFETY: as for `datum_cells`: every such column has `rows` > `r` starts, each
            // within its images' data, and flags, unchanged since `push_images`.
            unsafe {
                *values.add(c.attr) = pg_sys::Datum::from(c.data.add(*c.starts.add(r) as usize));
                *nulls.add(c.attr) = *c.nulls.add(r);
            }
        }
        let images = self.images.as_mut_ptr();
        for c in &self.image_cells {
            // SAFETY: every column pushed holds at least `rows` > `r` values and flags and is
            // unchanged since (the `push_*` contracts; for byte strings `r + 1` offsets,
            // ascending within the data, as `push_images` checked); each room lies within
            // `images` and has the words its column's images take (`push_images`); `c.attr`
            // is an attribute index where the caller's arrays are valid for writes (this fn's
            // contract).
            unsafe {
                let null = *c.nulls.add(r);
                let d = match c.values {
                    _ if null => pg_sys::Datum::from(0usize),
                    Values::Bytes { kind, offsets, data, data_len } => {
                        let dst = images.add(c.room) as *mut u8;
                        let start = *offsets.add(r) as usize;
                        let len = *offsets.add(r + 1) as usize - start;
                        // A value up to `WIDE` bytes is copied as whole moves when the data
                        // has that many from its start (the room has the slack).
                        if len <= WIDE && start + datum::moved(len) <= data_len && kind != ColumnKind::CString
                        {
                            datum::write_image_wide(kind, len, data.add(start), dst)
                        } else {
                            datum::write_image(kind, std::slice::from_raw_parts(data.add(start), len), dst)
                        }
                        pg_sys::Datum::from(dst)
                    }
                    Values::Scaled { writer, m } => {
                        let dst = images.add(c.room);
                        datum::write_scaled(&writer, *m.add(r), dst);
                        pg_sys::Datum::from(dst)
                    }
                };
                *values.add(c.attr) = d;
                *nulls.add(c.attr) = null;
            }
        }
        true
    }

    /// Rows the loaded vector holds (0 if none is loaded).
    pub fn rows(&self) -> usize {
        if self.pushed == self.attrs.len() {
            self.rows
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(batch: &mut RowBatch, r: usize, natts: usize) -> Option<(Vec<usize>, Vec<bool>)> {
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
        let (values, nulls) = stored(&mut batch, 1, 4).unwrap();
        assert_eq!(values, vec![99, 1.5f64.to_bits() as usize, 99, 0]);
        assert_eq!(nulls, vec![false, false, false, true]);
        let (values, nulls) = stored(&mut batch, 0, 4).unwrap();
        // Int64GetDatum(-1) and Int32GetDatum(-1) are both all ones.
        assert_eq!(values, vec![99, 0.5f64.to_bits() as usize, 99, usize::MAX]);
        assert_eq!(nulls, vec![false; 4]);
        assert!(stored(&mut batch, 3, 4).is_none());
        batch.clear();
        assert!(stored(&mut batch, 0, 4).is_none());
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
        assert_eq!(stored(&mut batch, 1, 1).unwrap(), (vec![12], vec![true]));
        assert_eq!(stored(&mut batch, 0, 1).unwrap(), (vec![11], vec![false]));
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

    /// The bytes of the image a by-reference Datum of `kind` points at.
    fn image(kind: ColumnKind, d: usize) -> Vec<u8> {
        let p = d as *const u8;
        // SAFETY: `d` points at an image the batch wrote for the row just stored, of `kind`.
        unsafe {
            match kind {
                ColumnKind::Varlena => {
                    let size = ((p as *const u32).read_unaligned() >> 2) as usize;
                    std::slice::from_raw_parts(p.add(4), size - 4).to_vec()
                }
                ColumnKind::CString => {
                    std::ffi::CStr::from_ptr(p as *const std::ffi::c_char).to_bytes().to_vec()
                }
                ColumnKind::Fixed { len } => std::slice::from_raw_parts(p, len as usize).to_vec(),
                _ => unreachable!(),
            }
        }
    }

    fn bytes_vector(values: &[Option<Vec<u8>>]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v.as_deref().unwrap_or_default());
            offsets.push(data.len() as u32);
        }
        let validity =
            values.iter().any(Option::is_none).then(|| values.iter().map(Option::is_some).collect());
        DecodedVector::from_parts(values.len() as u32, validity, DecodedValues::Bytes { offsets, data }, None)
    }

    #[test]
    fn byte_strings_are_written_as_each_row_is_stored() {
        let text: Vec<Option<Vec<u8>>> = [
            Some(&b""[..]),
            Some(b"abc"),
            None,
            Some(b"0123456789abcdef"),
            Some(b"0123456789abcdefg"),
            Some(&[b'x'; 64]),
            Some(&[b'y'; 65]),
            Some(&[b'z'; 300]),
            Some(b"z"),
        ]
        .iter()
        .map(|v| v.map(<[u8]>::to_vec))
        .collect();
        let uuids: Vec<Option<Vec<u8>>> = (0..text.len() as u8).map(|i| Some(vec![i; 16])).collect();
        for kind in [ColumnKind::Varlena, ColumnKind::CString] {
            let (v, w) = (bytes_vector(&text), bytes_vector(&uuids));
            let mut batch = RowBatch::default();
            batch.set_attrs(vec![2, 0]);
            batch.begin(text.len());
            // SAFETY: the vectors outlive the batch's use below, unchanged.
            unsafe {
                assert!(batch.push_images(kind, &v));
                assert!(batch.push_images(ColumnKind::Fixed { len: 16 }, &w));
            }
            // Every row, and again backwards: each store writes its own row's images.
            for r in (0..text.len()).chain((0..text.len()).rev()) {
                let (values, nulls) = stored(&mut batch, r, 3).unwrap();
                assert_eq!(nulls, [false, false, text[r].is_none()]);
                if let Some(t) = &text[r] {
                    assert_eq!(&image(kind, values[2]), t, "row {r}");
                }
                assert_eq!(image(ColumnKind::Fixed { len: 16 }, values[0]), uuids[r].clone().unwrap());
            }
        }
    }

    #[test]
    fn scaled_numerics_are_written_as_each_row_is_stored() {
        use crate::storage::format::encoding::ScaledNumerics;
        use crate::storage::format::numeric::write_canonical;
        let small = [0i64, 1, -1, 5, 150, 99_999_999, -10_000, 123_456_789_012, -(u32::MAX as i64)];
        let large = [i64::MAX, i64::MIN, 7, -3];
        let validity: Vec<bool> = (0..small.len()).map(|i| i % 4 != 2).collect();
        for (mantissas, scale) in [(&small[..], 2u16), (&small[..], 0), (&small[..], 64), (&large[..], 3)] {
            let mut v = DecodedVector::from_parts(
                mantissas.len() as u32,
                Some(validity[..mantissas.len()].to_vec()),
                DecodedValues::Bytes { offsets: vec![0; mantissas.len() + 1], data: Vec::new() },
                None,
            );
            v.scaled = Some(ScaledNumerics { m: mantissas.to_vec(), scale });
            let mut batch = RowBatch::default();
            batch.set_attrs(vec![0]);
            batch.begin(mantissas.len());
            // SAFETY: the vector outlives the batch's use below, unchanged.
            assert!(unsafe { batch.push_images(ColumnKind::Varlena, &v) });
            for (r, &m) in mantissas.iter().enumerate() {
                let (values, nulls) = stored(&mut batch, r, 1).unwrap();
                assert_eq!(nulls, [!validity[r]]);
                if validity[r] {
                    let mut expected = Vec::new();
                    write_canonical(m as i128, scale, &mut expected);
                    assert_eq!(image(ColumnKind::Varlena, values[0]), expected, "m {m}, scale {scale}");
                }
            }
        }
    }

    #[test]
    fn short_images_are_pointed_at_where_they_lie() {
        use crate::storage::format::encoding::{
            decode_vector, encode_vector, CompressionPolicy, EncodingId, PhysicalKind, VectorValues,
        };
        // Unique values of one length, every 5th row NULL, stored as short images.
        let rows: Vec<Option<Vec<u8>>> = (0..3000)
            .map(|i| (i % 5 != 2).then(|| format!("Customer#{:012} clerk {}", i * 17, i % 10).into_bytes()))
            .collect();
        let dense: Vec<Vec<u8>> = rows.iter().flatten().cloned().collect();
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in &dense {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        let validity: Vec<bool> = rows.iter().map(Option::is_some).collect();
        let mut stored = Vec::new();
        let values = VectorValues::Bytes { offsets: &offsets, data: &data };
        let info = encode_vector(3000, Some(&validity), values, &CompressionPolicy::default(), &mut stored);
        assert_eq!(info.encoding, EncodingId::ShortImages, "{info:?}");
        let mut v = DecodedVector::default();
        v.keep_images = true;
        decode_vector(&stored, PhysicalKind::Bytes, &mut v).unwrap();
        assert!(v.images.is_some());
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![1]);
        batch.begin(rows.len());
        // SAFETY: the vector outlives the batch's use below, unchanged.
        assert!(unsafe { batch.push_images(ColumnKind::Varlena, &v) });
        for (r, row) in rows.iter().enumerate() {
            let (values, nulls) = stored_row(&mut batch, r);
            assert_eq!(nulls[1], row.is_none(), "row {r}");
            if let Some(row) = row {
                // SAFETY: the Datum points at the row's short varlena image in `v`, alive.
                let image = unsafe {
                    let p = values[1] as *const u8;
                    assert_eq!(*p & 1, 1, "VARATT_IS_1B");
                    std::slice::from_raw_parts(p.add(1), (*p >> 1) as usize - 1).to_vec()
                };
                assert_eq!(&image, row, "row {r}");
            }
        }
    }

    fn stored_row(batch: &mut RowBatch, r: usize) -> (Vec<usize>, Vec<bool>) {
        stored(batch, r, 2).unwrap()
    }

    #[test]
    fn dictionaries_and_short_vectors_are_not_taken_as_images() {
        let mut v = bytes_vector(&[Some(b"a".to_vec()), Some(b"b".to_vec())]);
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![0]);
        batch.begin(3);
        // SAFETY: as above.
        assert!(!unsafe { batch.push_images(ColumnKind::Varlena, &v) }, "two rows for a batch of three");
        batch.begin(2);
        v.dictionary = Some(Default::default());
        // SAFETY: as above.
        assert!(!unsafe { batch.push_images(ColumnKind::Varlena, &v) });
        // SAFETY: as above.
        assert!(!unsafe { batch.push_images(ColumnKind::Int { len: 4 }, &bytes_vector(&[None, None])) });
        assert_eq!(batch.rows(), 0);
    }

    #[test]
    fn dictionary_rows_take_their_entries_datums() {
        let dictionary = crate::storage::format::encoding::decoded::Dictionary::new(
            vec![1, 0, 1, 0],
            vec![0, 2, 5],
            b"hiyou".to_vec(),
        );
        let mut v = bytes_vector(&[Some(b"you".to_vec()), Some(b"hi".to_vec()), None, Some(b"hi".to_vec())]);
        v.dictionary = Some(dictionary.clone());
        let mut column = DatumColumn::default();
        let entries = column.materialize_entries(ColumnKind::Varlena, &dictionary).to_vec();
        let mut batch = RowBatch::default();
        batch.set_attrs(vec![1]);
        batch.begin(4);
        // SAFETY: the vector and entries outlive the batch's use below, unchanged.
        assert!(unsafe { batch.push_codes(&v, &entries) });
        assert_eq!(stored(&mut batch, 0, 2).unwrap(), (vec![99, entries[1].value()], vec![false, false]));
        assert_eq!(stored(&mut batch, 1, 2).unwrap().0[1], entries[0].value());
        assert_eq!(stored(&mut batch, 2, 2).unwrap().1, vec![false, true], "row 2 is NULL");
        assert_eq!(image(ColumnKind::Varlena, entries[0].value()), b"hi");
        assert_eq!(image(ColumnKind::Varlena, entries[1].value()), b"you");
        // A code without an entry is refused, as is a vector that is not a dictionary.
        let mut bad = v.clone();
        bad.dictionary.as_mut().unwrap().codes[3] = 2;
        batch.begin(4);
        // SAFETY: as above.
        assert!(!unsafe { batch.push_codes(&bad, &entries) });
        // SAFETY: as above.
        assert!(!unsafe { batch.push_codes(&bytes_vector(&[None, None, None, None]), &entries) });
        assert_eq!(batch.rows(), 0);
    }
}
