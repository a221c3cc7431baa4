//! Converting between PostgreSQL Datums and the physical values columns store.
//!
//! Every type round-trips through one of these kinds, chosen from `typlen`/`typbyval`:
//! by-value types as sign-extended integers (exactly the Datum heap would produce),
//! float4/float8 (and domains over them) as floats, and everything else as the bytes
//! of its (detoasted) datum image: fixed-length by-reference types, varlenas (text,
//! numeric, arrays, jsonb, composites, ...) and cstrings.

use crate::storage::format::column_builder::ColumnBuilder;
use crate::storage::format::encoding::point::PointValue;
use crate::storage::format::encoding::{
    DecodedValues, DecodedVector, Dictionary, PhysicalKind, ScaledNumerics, ShortImages,
};
use crate::storage::format::image_arena::ImageArena;
use crate::storage::format::numeric::{ScaleWriter, I64_BYTES_MAX};
use crate::storage::format::tuple_image::AttrShape;
use crate::storage::format::zonemap::Bound;
use crate::storage::shared::cache::{self, BoundedCache};
use pgrx::pg_sys;
use std::cell::RefCell;
use std::rc::Rc;

pub use crate::storage::format::column_kind::ColumnKind;

/// How `rel`'s attributes are laid out in a heap tuple.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn attr_shapes(rel: pg_sys::Relation) -> Vec<AttrShape> {
    // SAFETY: `rel` is open (this fn's contract): its descriptor has `natts` attributes.
    unsafe {
        let desc = (*rel).rd_att;
        let attrs = std::slice::from_raw_parts((*desc).attrs.as_ptr(), (*desc).natts as usize);
        attrs.iter().map(attr_shape).collect()
    }
}

/// How attribute `a` is laid out in a heap tuple.
pub fn attr_shape(a: &pg_sys::FormData_pg_attribute) -> AttrShape {
    AttrShape {
        len: a.attlen,
        align: match a.attalign as u8 {
            b's' => 2,
            b'i' => 4,
            b'd' => 8,
            _ => 1,
        },
        by_value: a.attbyval,
        packable: a.attstorage as u8 != b'p',
    }
}

/// # Safety
/// `desc` must be a valid tuple descriptor and `i` less than its `natts`; the reference
/// must not outlive the descriptor.
pub unsafe fn attr(desc: pg_sys::TupleDesc, i: usize) -> &'static pg_sys::FormData_pg_attribute {
    // SAFETY: `desc` is a valid tuple descriptor and `i < natts` (this fn's contract), so
    // attribute `i` lies inside its trailing `attrs` array.
    unsafe { &*(*desc).attrs.as_ptr().add(i) }
}

/// Whether values of attribute `i` compare in the byte order of their stored bytes for
/// some collation (text, varchar: under "C"; bytea: always), so byte-wise zone maps help.
///
/// # Safety
/// `desc` must be a valid tuple descriptor; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn bytewise_ordered(desc: pg_sys::TupleDesc, i: usize) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `desc` is a valid tuple descriptor,
    // and we are on the backend thread inside a transaction, so the type lookups, detoasting
    // and pallocs (in the current memory context) are allowed.
    unsafe {
        let a = attr(desc, i);
        !a.attisdropped && BYTEWISE_TYPES.contains(&pg_sys::getBaseType(a.atttypid))
    }
}

pub const BYTEWISE_TYPES: [pg_sys::Oid; 3] = [pg_sys::TEXTOID, pg_sys::VARCHAROID, pg_sys::BYTEAOID];

/// # Safety
/// `desc` must be a valid tuple descriptor; call on the backend thread inside a transaction
/// (it calls PostgreSQL, which may raise an error).
pub unsafe fn column_kinds(desc: pg_sys::TupleDesc) -> Vec<ColumnKind> {
    // SAFETY: the caller guarantees this fn's contract: `desc` is a valid tuple descriptor,
    // and we are on the backend thread inside a transaction, so the type lookups, detoasting
    // and pallocs (in the current memory context) are allowed.
    unsafe {
        (0..(*desc).natts as usize)
            .map(|i| {
                let a = attr(desc, i);
                if a.attisdropped {
                    return ColumnKind::Dropped;
                }
                let base = pg_sys::getBaseType(a.atttypid);
                if base == pg_sys::FLOAT8OID {
                    ColumnKind::Float8
                } else if base == pg_sys::FLOAT4OID {
                    ColumnKind::Float4
                } else if a.attbyval {
                    ColumnKind::Int { len: a.attlen as u8 }
                } else if a.attlen > 0 {
                    ColumnKind::Fixed { len: a.attlen as u16 }
                } else if a.attlen == -1 {
                    ColumnKind::Varlena
                } else {
                    ColumnKind::CString
                }
            })
            .collect()
    }
}

/// The kind a value of type `typid` is stored as (what `column_kinds` gives a column
/// of that type).
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn type_kind(typid: pg_sys::Oid) -> ColumnKind {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the type lookups, detoasting and pallocs (in the current memory context) are allowed.
    unsafe {
        let base = pg_sys::getBaseType(typid);
        let (mut len, mut byval) = (0i16, false);
        pg_sys::get_typlenbyval(typid, &mut len, &mut byval);
        if base == pg_sys::FLOAT8OID {
            ColumnKind::Float8
        } else if base == pg_sys::FLOAT4OID {
            ColumnKind::Float4
        } else if byval {
            ColumnKind::Int { len: len as u8 }
        } else if len > 0 {
            ColumnKind::Fixed { len: len as u16 }
        } else if len == -1 {
            ColumnKind::Varlena
        } else {
            ColumnKind::CString
        }
    }
}

thread_local! {
    /// `column_kinds` per relation, for fetches (several per changed row); emptied by
    /// the relation's relcache invalidation (`forget_kinds`).
    static KINDS: RefCell<BoundedCache<pg_sys::Oid, Rc<[ColumnKind]>>> =
        RefCell::new(BoundedCache::new(cache::RELATIONS));
}

/// `column_kinds` of a relation's current descriptor, cached.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn relation_kinds(rel: pg_sys::Relation) -> Rc<[ColumnKind]> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the type lookups,
    // detoasting and pallocs (in the current memory context) are allowed.
    unsafe {
        let relid = (*rel).rd_id;
        if let Some(k) = KINDS.with(|c| c.borrow_mut().get(&relid).cloned()) {
            return k;
        }
        let kinds: Rc<[ColumnKind]> = column_kinds((*rel).rd_att).into();
        KINDS.with(|c| c.borrow_mut().insert(relid, kinds.clone()));
        kinds
    }
}

/// Drops the cached kinds of `relid` (all of them for InvalidOid).
pub fn forget_kinds(relid: pg_sys::Oid) {
    KINDS.with(|c| forget_relation(&mut c.borrow_mut(), relid));
}

/// Drops `relid`'s entry of a per-relation cache, or every entry for InvalidOid (what a
/// relcache invalidation callback is given).
pub fn forget_relation<V>(cache: &mut BoundedCache<pg_sys::Oid, V>, relid: pg_sys::Oid) {
    if relid == pg_sys::InvalidOid {
        cache.clear();
    } else {
        cache.remove(&relid);
    }
}

/// Sign-extends the low `len` bytes of a by-value Datum, as `fetch_att` does.
fn int_of_datum(d: pg_sys::Datum, len: u8) -> i64 {
    let raw = d.value() as u64;
    match len {
        1 => raw as u8 as i8 as i64,
        2 => raw as u16 as i16 as i64,
        4 => raw as u32 as i32 as i64,
        _ => raw as i64,
    }
}

/// Calls `f` with the bytes a by-reference value of kind `kind` (Fixed, CString or
/// Varlena) is stored as: a varlena's data, detoasted and without its header (freed
/// again after `f`).
///
/// # Safety
/// `d` must be a valid, non-NULL datum of the type `kind` was derived from, pointing at
/// live memory; call on the backend thread inside a transaction (detoasting may raise an
/// error).
pub unsafe fn with_stored_bytes<R>(kind: ColumnKind, d: pg_sys::Datum, f: impl FnOnce(&[u8]) -> R) -> R {
    // SAFETY: the caller guarantees `d` is a valid by-reference datum of `kind`'s type, and
    // that we are inside a transaction, where detoasting and palloc are allowed.
    unsafe {
        match kind {
            ColumnKind::Fixed { len } => f(std::slice::from_raw_parts(d.cast_mut_ptr::<u8>(), len as usize)),
            ColumnKind::CString => {
                f(std::ffi::CStr::from_ptr(d.cast_mut_ptr::<std::ffi::c_char>()).to_bytes())
            }
            ColumnKind::Varlena => {
                let original = d.cast_mut_ptr::<pg_sys::varlena>();
                let flat = pg_sys::pg_detoast_datum_packed(original);
                let len = pgrx::varlena::varsize_any_exhdr(flat);
                let data = pgrx::varlena::vardata_any(flat) as *const u8;
                let result = f(std::slice::from_raw_parts(data, len));
                if flat != original {
                    pg_sys::pfree(flat.cast());
                }
                result
            }
            _ => unreachable!("{kind:?} values are stored by value"),
        }
    }
}

/// Appends one value to its column's builder. `kind` must not be `Dropped`.
///
/// # Safety
/// Unless `isnull`, `d` must be a valid datum of the type `kind` was derived from (a
/// by-reference one pointing at live memory); call on the backend thread inside a
/// transaction (detoasting may raise an error).
pub unsafe fn push_datum(b: &mut ColumnBuilder, kind: ColumnKind, d: pg_sys::Datum, isnull: bool) {
    // SAFETY: the caller guarantees `d` is a valid datum of `kind`'s type unless `isnull`, and
    // that we are inside a transaction, where detoasting and palloc are allowed.
    unsafe {
        if isnull {
            b.push_null();
            return;
        }
        match kind {
            ColumnKind::Int { len } => b.push_int(int_of_datum(d, len)),
            ColumnKind::Float8 => b.push_f64(f64::from_bits(d.value() as u64)),
            ColumnKind::Float4 => b.push_f32(f32::from_bits(d.value() as u32)),
            ColumnKind::Fixed { .. } | ColumnKind::CString | ColumnKind::Varlena => {
                with_stored_bytes(kind, d, |v| b.push_bytes(v))
            }
            ColumnKind::Dropped => unreachable!("dropped columns have no builder"),
        }
    }
}

/// One vector of one column as Datums. By-reference values point into `arena`, so they
/// stay valid until the column is materialized again.
#[derive(Default)]
pub struct DatumColumn {
    pub datums: Vec<pg_sys::Datum>,
    pub nulls: Vec<bool>,
    arena: Vec<u64>,
    /// A dictionary vector's entries as Datums (their images in `arena`).
    entries: Vec<pg_sys::Datum>,
}

thread_local! {
    /// A vector of scaled numerics' digits (`ScaleWriter::digits_into`), made again for
    /// each: one buffer for every column, so that a wide row's columns keep fewer bytes
    /// in the caches.
    static SCALED_DIGITS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

const VARHDRSZ: usize = 4;

impl DatumColumn {
    /// Fills the column from a decoded vector.
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction (it calls PostgreSQL, which may
    /// raise an error).
    unsafe fn materialize(&mut self, kind: ColumnKind, v: &DecodedVector) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so the type lookups, detoasting and pallocs (in the current memory context) are
        // allowed.
        unsafe {
            let rows = v.rows as usize;
            self.datums.clear();
            self.nulls.clear();
            match &v.validity {
                Some(valid) => self.nulls.extend(valid.iter().map(|ok| !*ok)),
                None => self.nulls.resize(rows, false),
            }
            match &v.values {
                DecodedValues::Int(values) => self.datums.extend(values.iter().map(|&x| int_datum(x))),
                DecodedValues::Float32(values) => self.datums.extend(values.iter().map(|&x| f32_datum(x))),
                DecodedValues::Float64(values) => self.datums.extend(values.iter().map(|&x| f64_datum(x))),
                DecodedValues::Bytes { offsets, data } => {
                    self.datums.resize(rows, pg_sys::Datum::from(0usize));
                    self.materialize_bytes(kind, offsets, data, 0..rows);
                }
            }
        }
    }

    /// Fills rows `rows` (ascending) of the column from a decoded vector; the other
    /// rows are left as they are (a scan returns only these).
    ///
    /// # Safety
    /// Call on the backend thread inside a transaction (it calls PostgreSQL, which may
    /// raise an error).
    pub unsafe fn materialize_rows(&mut self, kind: ColumnKind, v: &DecodedVector, rows: &[u32]) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so the type lookups, detoasting and pallocs (in the current memory context) are
        // allowed.
        unsafe {
            if let Some(dictionary) = &v.dictionary {
                return self.materialize_dictionary(kind, v, dictionary, rows);
            }
            if let (Some(images), ColumnKind::Varlena) = (&v.images, kind) {
                return self.point_at_images(v, images, rows);
            }
            if let (Some(scaled), ColumnKind::Varlena) = (&v.scaled, kind) {
                return self.materialize_scaled(v, scaled, rows);
            }
            if rows.len() == v.rows as usize {
                return self.materialize(kind, v);
            }
            let n = v.rows as usize;
            self.datums.resize(n, pg_sys::Datum::from(0usize));
            self.nulls.resize(n, true);
            for &r in rows {
                self.nulls[r as usize] = !v.is_valid(r as usize);
            }
            let datums = &mut self.datums;
            match &v.values {
                DecodedValues::Int(values) => {
                    rows.iter().for_each(|&r| datums[r as usize] = int_datum(values[r as usize]))
                }
                DecodedValues::Float32(values) => {
                    rows.iter().for_each(|&r| datums[r as usize] = f32_datum(values[r as usize]))
                }
                DecodedValues::Float64(values) => {
                    rows.iter().for_each(|&r| datums[r as usize] = f64_datum(values[r as usize]))
                }
                DecodedValues::Bytes { offsets, data } => {
                    self.materialize_bytes(kind, offsets, data, rows.iter().map(|&r| r as usize))
                }
            }
        }
    }

    /// Rows `rows` of a vector kept as its dictionary: one image per entry, and each
    /// row's Datum that of its entry (as heap's point into its page, many rows share
    /// one image; nobody writes through a Datum).
    unsafe fn materialize_dictionary(
        &mut self,
        kind: ColumnKind,
        v: &DecodedVector,
        dictionary: &Dictionary,
        rows: &[u32],
    ) {
        let n = v.rows as usize;
        self.datums.resize(n, pg_sys::Datum::from(0usize));
        self.nulls.resize(n, true);
        for &r in rows {
            self.nulls[r as usize] = !v.is_valid(r as usize);
        }
        self.materialize_entries(kind, dictionary);
        // A NULL row's code is 0 and its Datum unread; a code out of range (no entry: a
        // vector of NULLs) reads as 0 too.
        let none = pg_sys::Datum::from(0usize);
        for &r in rows {
            let code = dictionary.codes.get(r as usize).copied().unwrap_or(0) as usize;
            self.datums[r as usize] = self.entries.get(code).copied().unwrap_or(none);
        }
    }

    /// A dictionary's entries as Datums, each pointing at its image in the column's
    /// arena (valid until the column is materialized again).
    pub fn materialize_entries(&mut self, kind: ColumnKind, dictionary: &Dictionary) -> &[pg_sys::Datum] {
        let entries = dictionary.len();
        let words: usize = (0..entries).map(|e| image_words(kind, dictionary.entry(e).len())).sum();
        self.arena.clear();
        self.arena.resize(words, 0);
        self.entries.clear();
        let base = self.arena.as_mut_ptr();
        let mut at = 0usize;
        for e in 0..entries {
            let value = dictionary.entry(e);
            // SAFETY: `at` + the entry's words lie within the arena sized above, zeroed and
            // 8-byte aligned, as `write_image` requires.
            unsafe {
                let dst = base.add(at);
                write_image(kind, value, dst as *mut u8);
                self.entries.push(pg_sys::Datum::from(dst));
            }
            at += image_words(kind, value.len());
        }
        &self.entries
    }

    /// Rows `rows` of a vector of short varlena images (`DecodedVector::keep_images`), a
    /// varlena column: each Datum points at its image where it lies in the vector, as
    /// heap's point into its page.
    fn point_at_images(&mut self, v: &DecodedVector, images: &ShortImages, rows: &[u32]) {
        let n = v.rows as usize;
        // Rows ascend: the last is the largest, and every one indexes `starts` and `datums`.
        assert!(
            rows.last().is_none_or(|&r| (r as usize) < n.min(images.starts.len())),
            "short images: row out of range"
        );
        self.datums.resize(n, pg_sys::Datum::from(0usize));
        self.nulls.resize(n, true);
        let base = images.data.as_ptr();
        for &r in rows {
            let r = r as usize;
            self.nulls[r] = !v.is_valid(r);
            // `wrapping_add`: a NULL row's start is unspecified, and its Datum never read;
            // every other start lies within the data (`short_images::decode_starts`).
            self.datums[r] = pg_sys::Datum::from(base.wrapping_add(images.starts[r] as usize));
        }
    }

    /// Rows `rows` of a vector of scaled numerics (`DecodedVector::keep_scaled`), a
    /// varlena column: each image written straight from its mantissa, the bytes
    /// make_result writes (the stored ones), after a 4-byte varlena header.
    fn materialize_scaled(&mut self, v: &DecodedVector, scaled: &ScaledNumerics, rows: &[u32]) {
        let n = v.rows as usize;
        // Rows ascend: the last is the largest, and every one indexes `m` and `datums`.
        assert!(
            rows.last().is_none_or(|&r| (r as usize) < n.min(scaled.m.len())),
            "scaled numerics: row out of range"
        );
        self.datums.resize(n, pg_sys::Datum::from(0usize));
        self.nulls.resize(n, true);
        match (&v.validity, rows.len() == n) {
            (None, true) => self.nulls.fill(false),
            (Some(valid), true) => self.nulls.iter_mut().zip(valid).for_each(|(null, ok)| *null = !ok),
            _ => rows.iter().for_each(|&r| self.nulls[r as usize] = !v.is_valid(r as usize)),
        }
        // An image is at most SCALED_IMAGE_WORDS words, written whole (its tail lands in
        // the next image, written after it, or in the last one's room).
        let words = rows.len() * SCALED_IMAGE_WORDS;
        if self.arena.len() < words {
            self.arena.resize(words, 0);
        }
        let writer = ScaleWriter::new(scaled.scale);
        let base = self.arena.as_mut_ptr();
        let mut at = 0usize;
        // Most vectors hold small values only: their digits are made a vector at a time,
        // then each selected row's image from them.
        if writer.short_applies(&scaled.m) {
            let mut all_digits = SCALED_DIGITS.with(|d| std::mem::take(&mut *d.borrow_mut()));
            all_digits.clear();
            // A few rows left of the vector (a selective filter): only theirs, at their
            // place in `rows`.
            let few = rows.len() * 4 < n;
            if few {
                let picked: Vec<i64> = rows.iter().map(|&r| scaled.m[r as usize]).collect();
                writer.digits_into(&picked, &mut all_digits);
            } else {
                writer.digits_into(&scaled.m, &mut all_digits);
            }
            // A local, not the field: the stores below go through raw pointers, after which
            // the field would be loaded again.
            let datums = self.datums.as_mut_ptr();
            for (k, &r) in rows.iter().enumerate() {
                let r = r as usize;
                let d = if few { k } else { r };
                // SAFETY: `at` words plus this image's SCALED_IMAGE_WORDS lie within the arena
                // (sized above: at most that many words per row before it), 8-byte aligned; `r`
                // is a row of the vector (asserted above), below `datums`' length.
                unsafe {
                    let dst = base.add(at);
                    at += write_scaled_short(&writer, all_digits[d], dst);
                    datums.add(r).write(pg_sys::Datum::from(dst));
                }
            }
            SCALED_DIGITS.with(|d| *d.borrow_mut() = all_digits);
            return;
        }
        for &r in rows {
            let r = r as usize;
            // SAFETY: `at` words plus this image's SCALED_IMAGE_WORDS lie within the arena
            // (sized above: at most that many words per row before it), 8-byte aligned.
            unsafe {
                let dst = base.add(at);
                at += write_scaled(&writer, scaled.m[r], dst);
                self.datums[r] = pg_sys::Datum::from(dst);
            }
        }
    }

    /// Datums of byte-string rows `rows` (into `datums`, already sized), their images
    /// in the arena.
    unsafe fn materialize_bytes(
        &mut self,
        kind: ColumnKind,
        offsets: &[u32],
        data: &[u8],
        rows: impl Iterator<Item = usize> + Clone,
    ) {
        // SAFETY: per this fn's contract we are on the backend thread inside a transaction,
        // so the type lookups, detoasting and pallocs (in the current memory context) are
        // allowed.
        unsafe {
            let value = |i: usize| &data[offsets[i] as usize..offsets[i + 1] as usize];
            // No pass to size the images: `image_words` is at most len / 8 + 2, and the
            // values' lengths add up to at most the data's. Plus slack for the last
            // value's whole 16-byte moves. The arena is not zeroed again (`write_image`
            // writes every byte an image's reader looks at).
            let words = data.len() / 8 + 2 * rows.clone().count() + MOVE / 8;
            if self.arena.len() < words {
                self.arena.resize(words, 0);
            }
            let base = self.arena.as_mut_ptr();
            let mut at = 0usize;
            for i in rows {
                let dst = base.add(at) as *mut u8;
                let v = value(i);
                // A value up to `WIDE` bytes is copied as whole `MOVE`-byte moves (no memcpy
                // call) when the data has that many from its start; the extra bytes land in
                // its image's padding or the next image, written after it, or the slack.
                let start = offsets[i] as usize;
                if v.len() <= WIDE && start + moved(v.len()) <= data.len() && kind != ColumnKind::CString {
                    write_image_wide(kind, v.len(), data.as_ptr().add(start), dst)
                } else {
                    write_image(kind, v, dst)
                }
                self.datums[i] = pg_sys::Datum::from(dst);
                at += image_words(kind, v.len());
            }
        }
    }
}

/// Words of the longest scaled numeric's image: its varlena header and bytes.
pub const SCALED_IMAGE_WORDS: usize = (VARHDRSZ + I64_BYTES_MAX).div_ceil(8);

/// Writes the image of a scaled numeric whose four digits and sign
/// (`ScaleWriter::digits_into`) are `digits` at `dst`, as two little-endian words: the 4-byte varlena header
/// (SET_VARSIZE on a little-endian machine), the numeric's header, its digits. Returns
/// the words the image takes.
///
/// # Safety
/// `dst` must be valid for writes of two words.
#[inline(always)]
pub unsafe fn write_scaled_short(writer: &ScaleWriter, digits: u64, dst: *mut u64) -> usize {
    let (header, digits, len) = writer.trimmed(digits);
    let len = VARHDRSZ + 2 + len;
    let first = ((len as u64) << 2) | (header as u64) << 32 | digits << 48;
    // SAFETY: `dst` is valid for two words (this fn's contract).
    unsafe {
        dst.write_unaligned(first.to_le());
        dst.add(1).write_unaligned((digits >> 16).to_le());
    }
    len.div_ceil(8)
}

/// Writes the image of the scaled numeric `m` (`ScaleWriter::bytes`) at `dst`; returns
/// the words it takes.
///
/// # Safety
/// `dst` must be valid for writes of `SCALED_IMAGE_WORDS` words.
#[inline(always)]
pub unsafe fn write_scaled(writer: &ScaleWriter, m: i64, dst: *mut u64) -> usize {
    let (bytes, len) = writer.bytes(m);
    let len = VARHDRSZ + len;
    let dst = dst as *mut u8;
    // SAFETY: the 4-byte header and the 16 bytes after it lie within SCALED_IMAGE_WORDS
    // words at `dst` (this fn's contract); both writes are unaligned ones.
    unsafe {
        // SET_VARSIZE for a 4-byte header on a little-endian machine.
        (dst as *mut u32).write_unaligned((len as u32) << 2);
        (dst.add(VARHDRSZ) as *mut u128).write_unaligned(bytes.to_le());
    }
    len.div_ceil(8)
}

/// The unit of `write_image_wide`'s copies, and the longest value it copies.
pub const MOVE: usize = 16;
pub const WIDE: usize = 4 * MOVE;

/// Bytes `write_image_wide` reads and writes for a value of `len` bytes: whole moves,
/// at least one (an empty value's too).
pub fn moved(len: usize) -> usize {
    len.max(1).next_multiple_of(MOVE)
}

/// `write_image` of a value of `len` <= `WIDE` bytes (not a cstring) at `src`, copied as
/// `moved(len)` bytes in straight-line moves: a call to memcpy per value costs more than
/// the copy.
///
/// # Safety
/// `dst` must be 8-byte aligned and valid for writes of the image's header and
/// `moved(len)` bytes after it; `src` valid for reads of that many bytes and not
/// overlapping `dst`'s.
#[inline(always)]
pub unsafe fn write_image_wide(kind: ColumnKind, len: usize, src: *const u8, dst: *mut u8) {
    // SAFETY: the caller gives `dst` aligned and with room for the header and `moved(len)`
    // bytes, and `src` readable for as many, apart from `dst` (this fn's contract); every
    // move below lies within them.
    unsafe {
        let mut body = dst;
        if kind == ColumnKind::Varlena {
            (dst as *mut u32).write(((len + VARHDRSZ) as u32) << 2);
            body = dst.add(VARHDRSZ);
        }
        let copy = |k: usize| {
            let chunk = (src.add(k * MOVE) as *const [u8; MOVE]).read_unaligned();
            (body.add(k * MOVE) as *mut [u8; MOVE]).write_unaligned(chunk);
        };
        copy(0);
        if len > MOVE {
            copy(1);
            if len > 2 * MOVE {
                copy(2);
                if len > 3 * MOVE {
                    copy(3);
                }
            }
        }
    }
}

pub fn int_datum(x: i64) -> pg_sys::Datum {
    pg_sys::Datum::from(x as isize as usize)
}

/// float4 Datums are sign-extended 32-bit patterns (Float4GetDatum).
pub fn f32_datum(x: f32) -> pg_sys::Datum {
    pg_sys::Datum::from(x.to_bits() as i32 as isize as usize)
}

pub fn f64_datum(x: f64) -> pg_sys::Datum {
    pg_sys::Datum::from(x.to_bits() as usize)
}

/// 8-byte words of the datum image of a `len`-byte value: a varlena's 4-byte header,
/// a cstring's NUL.
pub fn image_words(kind: ColumnKind, len: usize) -> usize {
    let extra = match kind {
        ColumnKind::Varlena => VARHDRSZ,
        ColumnKind::CString => 1,
        _ => 0,
    };
    (len + extra).div_ceil(8)
}

/// Writes the datum image of `value` at `dst` (the bytes past the image's end within
/// its words are left as they were).
///
/// # Safety
/// `dst` must be 8-byte aligned and valid for writes of `image_words(kind, value.len())`
/// words.
pub unsafe fn write_image(kind: ColumnKind, value: &[u8], dst: *mut u8) {
    // SAFETY: the caller gives `dst` as `image_words(kind, value.len())` 8-byte aligned
    // words (this fn's contract), so the aligned 4-byte header and the value after it (and
    // a cstring's NUL) fit, and `value` (a Rust slice) cannot overlap that memory.
    unsafe {
        let mut body = dst;
        if kind == ColumnKind::Varlena {
            // SET_VARSIZE for a 4-byte header on a little-endian machine.
            (dst as *mut u32).write(((value.len() + VARHDRSZ) as u32) << 2);
            body = dst.add(VARHDRSZ);
        }
        std::ptr::copy_nonoverlapping(value.as_ptr(), body, value.len());
        if kind == ColumnKind::CString {
            body.add(value.len()).write(0);
        }
    }
}

/// A Datum as the value a column of kind `kind` stores (None for NULL).
///
/// # Safety
/// Unless `isnull`, `d` must be a valid datum of the type `kind` was derived from (a
/// by-reference one pointing at live memory); call on the backend thread inside a
/// transaction (detoasting may raise an error).
pub unsafe fn physical_value(kind: ColumnKind, d: pg_sys::Datum, isnull: bool) -> Option<Bound> {
    // SAFETY: the caller guarantees `d` is a valid datum of `kind`'s type unless `isnull`, and
    // that we are inside a transaction, where detoasting and palloc are allowed.
    unsafe {
        if isnull {
            return None;
        }
        Some(match kind {
            ColumnKind::Int { len } => Bound::Int(int_of_datum(d, len)),
            ColumnKind::Float8 => Bound::Float(f64::from_bits(d.value() as u64)),
            ColumnKind::Float4 => Bound::Float(f32::from_bits(d.value() as u32) as f64),
            ColumnKind::Fixed { .. } | ColumnKind::CString | ColumnKind::Varlena => {
                Bound::Bytes(with_stored_bytes(kind, d, |v| v.to_vec()))
            }
            ColumnKind::Dropped => return None,
        })
    }
}

/// `out` as a vector of `rows` copies of one value (a column a row group does not
/// store reads as its missing value).
///
/// # Safety
/// Unless `isnull`, `d` must be a valid datum of the type `kind` was derived from (a
/// by-reference one pointing at live memory); call on the backend thread inside a
/// transaction (detoasting may raise an error).
pub unsafe fn constant_vector(
    kind: ColumnKind,
    d: pg_sys::Datum,
    isnull: bool,
    rows: usize,
    out: &mut DecodedVector,
) {
    out.rows = rows as u32;
    // SAFETY: `d`, `isnull` and `kind` come with this fn's contract, which is `physical_value`'s.
    let value = unsafe { physical_value(kind, d, isnull) };
    out.validity = value.is_none().then(|| vec![false; rows]);
    out.values = match (kind.physical(), value) {
        (Some(PhysicalKind::Float32), v) => {
            DecodedValues::Float32(vec![
                v.map_or(0.0, |b| if let Bound::Float(f) = b {
                    f as f32
                } else {
                    0.0
                });
                rows
            ])
        }
        (Some(PhysicalKind::Float64), v) => {
            DecodedValues::Float64(vec![
                v.map_or(0.0, |b| if let Bound::Float(f) = b { f } else { 0.0 });
                rows
            ])
        }
        (Some(PhysicalKind::Bytes), v) => {
            let one = match v {
                Some(Bound::Bytes(b)) => b,
                _ => Vec::new(),
            };
            let offsets = (0..=rows).map(|i| (i * one.len()) as u32).collect();
            DecodedValues::Bytes { offsets, data: one.repeat(rows) }
        }
        (_, v) => DecodedValues::Int(vec![v.map_or(0, |b| if let Bound::Int(i) = b { i } else { 0 }); rows]),
    };
}

/// A fetched row's value as a Datum and null flag. A by-reference value is copied into
/// `images`, which must keep it until the Datum is no longer used.
///
/// # Safety
/// Call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn point_datum(
    kind: ColumnKind,
    v: PointValue<'_>,
    images: &mut ImageArena,
) -> (pg_sys::Datum, bool) {
    // SAFETY: per this fn's contract we are on the backend thread inside a transaction, so
    // the type lookups, detoasting and pallocs (in the current memory context) are allowed.
    unsafe {
        let d = match v {
            PointValue::Null => return (pg_sys::Datum::from(0usize), true),
            PointValue::Int(x) => int_datum(x),
            PointValue::Float32(x) => f32_datum(x),
            PointValue::Float64(x) => f64_datum(x),
            PointValue::Bytes(value) => bytes_image(kind, value, images),
            PointValue::Scaled { m, scale } => scaled_image(m, scale, images),
        };
        (d, false)
    }
}

/// A numeric Datum of the scaled numeric m / 10^scale, its image (the bytes
/// `write_canonical` writes, made in registers as a scan makes them) in `images`.
fn scaled_image(m: i64, scale: u16, images: &mut ImageArena) -> pg_sys::Datum {
    let image = images.alloc(SCALED_IMAGE_WORDS).as_mut_ptr();
    // SAFETY: the image has SCALED_IMAGE_WORDS words, as `write_scaled` requires.
    unsafe { write_scaled(&ScaleWriter::new(scale), m, image) };
    pg_sys::Datum::from(image)
}

/// A by-reference Datum of `kind` holding `value`, its image in `images`.
///
/// # Safety
/// As `point_datum`.
unsafe fn bytes_image(kind: ColumnKind, value: &[u8], images: &mut ImageArena) -> pg_sys::Datum {
    let image = images.alloc(image_words(kind, value.len())).as_mut_ptr();
    // SAFETY: the image was just allocated with room for `value` as `kind` stores it
    // (`image_words`), as `write_image` requires.
    unsafe { write_image(kind, value, image as *mut u8) };
    pg_sys::Datum::from(image)
}

/// Byte strings in collation `collation`'s order, as `text_cmp` compares them (byte-equal
/// strings are equal under every collation, so they skip the call). Backend thread: an
/// error `varstr_cmp` raises unwinds as any ereport does.
pub fn collated_cmp(a: &[u8], b: &[u8], collation: pg_sys::Oid) -> std::cmp::Ordering {
    if a == b {
        return std::cmp::Ordering::Equal;
    }
    // SAFETY: varstr_cmp reads `len` bytes at each pointer (copying them where the
    // collation needs NUL-terminated strings); the slices are live for the call, made on
    // the backend's thread.
    let c = unsafe {
        pg_sys::varstr_cmp(
            a.as_ptr() as *const std::ffi::c_char,
            a.len() as i32,
            b.as_ptr() as *const std::ffi::c_char,
            b.len() as i32,
            collation,
        )
    };
    c.cmp(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes a by-reference Datum of `kind` holds (the image `write_image` made).
    fn image(kind: ColumnKind, d: pg_sys::Datum) -> Vec<u8> {
        let p = d.cast_mut_ptr::<u8>();
        // SAFETY: `d` points at an image in a live DatumColumn's arena, of the kind given.
        unsafe {
            match kind {
                ColumnKind::Varlena => {
                    let size = ((p as *const u32).read() >> 2) as usize;
                    std::slice::from_raw_parts(p.add(VARHDRSZ), size - VARHDRSZ).to_vec()
                }
                ColumnKind::CString => {
                    std::ffi::CStr::from_ptr(p as *const std::ffi::c_char).to_bytes().to_vec()
                }
                ColumnKind::Fixed { len } => std::slice::from_raw_parts(p, len as usize).to_vec(),
                _ => unreachable!(),
            }
        }
    }

    fn bytes_vector(values: &[&[u8]], dictionary: bool) -> DecodedVector {
        let rows = values.len() as u32;
        if dictionary {
            let mut entries: Vec<&[u8]> = values.to_vec();
            entries.sort();
            entries.dedup();
            let codes = values.iter().map(|v| entries.iter().position(|e| e == v).unwrap() as u32).collect();
            let mut offsets = vec![0u32];
            let mut data = Vec::new();
            for e in &entries {
                data.extend_from_slice(e);
                offsets.push(data.len() as u32);
            }
            let empty = DecodedValues::Bytes { offsets: vec![0; values.len() + 1], data: Vec::new() };
            return DecodedVector::from_parts(rows, None, empty, Some(Dictionary::new(codes, offsets, data)));
        }
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        DecodedVector::from_parts(rows, None, DecodedValues::Bytes { offsets, data }, None)
    }

    #[test]
    fn byte_strings_become_images_of_every_length() {
        let long = [b'x'; 40];
        let values: Vec<&[u8]> =
            vec![b"", b"abc", b"0123456789abcdef", b"0123456789abcdefg", &long, b"abc", b"z"];
        for kind in [ColumnKind::Varlena, ColumnKind::CString] {
            // One column for every vector, as a scan reuses it: what an earlier vector left
            // in its arena must not show in a later one's images.
            let mut column = DatumColumn::default();
            for dictionary in [false, true] {
                let v = bytes_vector(&values, dictionary);
                let reversed: Vec<&[u8]> = values.iter().rev().copied().collect();
                let w = bytes_vector(&reversed, dictionary);
                // SAFETY: as below; the reversed vector fills the arena first.
                unsafe { column.materialize_rows(kind, &w, &[0, 1, 2, 3, 4, 5, 6]) };
                for rows in [(0..values.len() as u32).collect::<Vec<_>>(), vec![1, 2, 4, 6]] {
                    // SAFETY: the vector is well formed; nothing here calls PostgreSQL.
                    unsafe { column.materialize_rows(kind, &v, &rows) };
                    for &r in &rows {
                        let r = r as usize;
                        assert!(!column.nulls[r]);
                        assert_eq!(
                            image(kind, column.datums[r]),
                            values[r],
                            "{kind:?} row {r}, {dictionary}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn byte_strings_of_every_move_count_keep_their_bytes() {
        // Lengths around each whole-move boundary and past the widest, each value's
        // bytes its own (an over-copy that lands on a neighbour's image would show).
        let owned: Vec<Vec<u8>> =
            (0..=70usize).chain([100, 3, 0]).map(|n| (0..n).map(|i| (n * 7 + i) as u8).collect()).collect();
        let values: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        let mut column = DatumColumn::default();
        for kind in [ColumnKind::Varlena, ColumnKind::Fixed { len: 0 }] {
            let v = bytes_vector(&values, false);
            let all: Vec<u32> = (0..values.len() as u32).collect();
            let odd: Vec<u32> = all.iter().copied().filter(|r| r % 2 == 1).collect();
            for rows in [all, odd] {
                // SAFETY: the vector is well formed; nothing here calls PostgreSQL.
                unsafe { column.materialize_rows(kind, &v, &rows) };
                for &r in &rows {
                    let r = r as usize;
                    let kind = match kind {
                        ColumnKind::Fixed { .. } => ColumnKind::Fixed { len: values[r].len() as u16 },
                        k => k,
                    };
                    assert_eq!(image(kind, column.datums[r]), values[r], "{kind:?} row {r}");
                }
            }
        }
    }

    #[test]
    fn a_vector_of_empty_values_reads_no_data() {
        // No byte of data at all (a column added later, read as its missing value): an
        // image may not be copied from beyond it.
        let empty: Vec<&[u8]> = vec![b""; 300];
        let mut column = DatumColumn::default();
        for kind in [ColumnKind::Varlena, ColumnKind::Fixed { len: 0 }] {
            let v = bytes_vector(&empty, false);
            let rows: Vec<u32> = (0..300).collect();
            // SAFETY: the vector is well formed; nothing here calls PostgreSQL.
            unsafe { column.materialize_rows(kind, &v, &rows) };
            assert!(rows.iter().all(|&r| image(kind, column.datums[r as usize]).is_empty()));
        }
    }

    #[test]
    fn scaled_numerics_become_the_stored_images() {
        use crate::storage::format::numeric::write_canonical;
        let some = [
            0i64,
            1,
            -1,
            5,
            -5,
            150,
            99_999_999,
            -10_000,
            123_456_789_012,
            -999_999_999_999,
            u32::MAX as i64,
            -(u32::MAX as i64),
        ];
        let vector = |extra: &[i64]| -> Vec<i64> {
            some.iter()
                .chain(extra)
                .copied()
                .cycle()
                .take(2048)
                .enumerate()
                .map(|(i, m)| m.wrapping_mul(i as i64 % 7 + 1))
                .collect()
        };
        // Values below 2^32 (digits made a vector at a time), small values (the short
        // way at scales up to 63), and with the extremes.
        let below_32_bits: Vec<i64> = vector(&[]).into_iter().map(|m| m % (u32::MAX as i64 + 1)).collect();
        assert!(below_32_bits.contains(&(u32::MAX as i64)) || below_32_bits.iter().any(|&m| m < -(1 << 31)));
        let vectors = [below_32_bits, vector(&[]), vector(&[i64::MAX, i64::MIN])];
        let validity: Vec<bool> = (0..2048).map(|i| i % 13 != 4).collect();
        let mut column = DatumColumn::default();
        for (scale, mantissas) in
            [0u16, 2, 3, 5, 8, 63, 64, 200].into_iter().flat_map(|s| vectors.iter().map(move |m| (s, m)))
        {
            let scaled = ScaledNumerics { m: mantissas.clone(), scale };
            let mut v = DecodedVector::from_parts(
                mantissas.len() as u32,
                Some(validity.clone()),
                DecodedValues::Bytes { offsets: vec![0; mantissas.len() + 1], data: Vec::new() },
                None,
            );
            v.scaled = Some(scaled);
            let all: Vec<u32> = (0..mantissas.len() as u32).collect();
            let some: Vec<u32> = all.iter().copied().filter(|r| r % 3 == 0).collect();
            for rows in [all, some] {
                // SAFETY: the vector is well formed; nothing here calls PostgreSQL.
                unsafe { column.materialize_rows(ColumnKind::Varlena, &v, &rows) };
                for &r in &rows {
                    let r = r as usize;
                    assert_eq!(column.nulls[r], !validity[r]);
                    if validity[r] {
                        let mut stored = Vec::new();
                        write_canonical(mantissas[r] as i128, scale, &mut stored);
                        assert_eq!(
                            image(ColumnKind::Varlena, column.datums[r]),
                            stored,
                            "row {r}, scale {scale}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_fetched_scaled_numeric_is_its_stored_image() {
        use crate::storage::format::numeric::write_canonical;
        let mut images = ImageArena::default();
        let mantissas = [0i64, 1, -1, 7, 150, -10_000, 99_999_999, 123_456_789_012, i64::MAX, i64::MIN, -5];
        for scale in [0u16, 1, 2, 3, 4, 5, 8, 63, 64, 200] {
            let mut held = Vec::new();
            for &m in &mantissas {
                held.push((m, scaled_image(m, scale, &mut images)));
            }
            // Every value of the row is intact after the others were made beside it.
            for (m, d) in held {
                let mut stored = Vec::new();
                write_canonical(m as i128, scale, &mut stored);
                assert_eq!(image(ColumnKind::Varlena, d), stored, "m {m}, scale {scale}");
            }
            images.clear();
        }
    }

    #[test]
    fn fixed_length_values_keep_their_bytes() {
        let values: Vec<&[u8]> = vec![&[1u8; 16], &[2u8; 16], &[3u8; 16]];
        let v = bytes_vector(&values, false);
        let mut column = DatumColumn::default();
        // SAFETY: as above.
        unsafe { column.materialize_rows(ColumnKind::Fixed { len: 16 }, &v, &[0, 2]) };
        assert_eq!(image(ColumnKind::Fixed { len: 16 }, column.datums[0]), values[0]);
        assert_eq!(image(ColumnKind::Fixed { len: 16 }, column.datums[2]), values[2]);
    }
}
