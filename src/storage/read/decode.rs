//! Checked decoding of stored vectors: a vector or order column that does not match
//! its directory entry is reported as corrupt data (XX001), never trusted.

use crate::storage::catalog::ChunkMeta;
use crate::storage::format::encoding::paged::{PagedVector, StoredBytes};
use crate::storage::format::encoding::point::{self, PointVector};
use crate::storage::format::encoding::{
    decode_vector, decode_vector_rows, DecodedValues, DecodedVector, PhysicalKind,
};
use crate::storage::relation::datum::ColumnKind;
use crate::storage::relation::pages;
use crate::storage::shared::error::data_corrupted;
use pgrx::pg_sys;
use std::rc::Rc;

/// Decodes a stored vector that its directory entry says holds `rows` rows.
pub fn decode_checked(kind: ColumnKind, bytes: &[u8], rows: u32, out: &mut DecodedVector) {
    if let Err(e) = decode_vector(bytes, kind.physical().unwrap(), out) {
        data_corrupted(&e.to_string());
    }
    if out.rows != rows {
        data_corrupted("vector row count differs from its directory entry");
    }
}

/// `decode_checked` for a caller that reads only rows `wanted` of the vector
/// (`format::encoding::decode_vector_rows`); true if only those were decoded.
pub fn decode_rows_checked(
    kind: ColumnKind,
    bytes: &[u8],
    rows: u32,
    wanted: &[u32],
    out: &mut DecodedVector,
) -> bool {
    let partial = match decode_vector_rows(bytes, kind.physical().unwrap(), wanted, out) {
        Ok((_, partial)) => partial,
        Err(e) => data_corrupted(&e.to_string()),
    };
    if out.rows != rows {
        data_corrupted("vector row count differs from its directory entry");
    }
    partial
}

/// Opens a stored vector that its directory entry says holds `rows` rows for
/// single-row reads (`point::open_vector`).
pub fn open_checked(kind: ColumnKind, bytes: &[u8], rows: u32, scratch: &mut DecodedVector) -> PointVector {
    let vector = point::open_vector(bytes, kind.physical().unwrap(), scratch)
        .unwrap_or_else(|e| data_corrupted(&e.to_string()));
    if vector.rows() != rows as usize {
        data_corrupted("vector row count differs from its directory entry");
    }
    vector
}

/// Opens a stored vector that its directory entry says holds `rows` rows for reading
/// values where they lie (`paged::PagedVector::open`); `None` if they cannot be.
pub fn open_paged_checked(
    kind: ColumnKind,
    src: &mut impl StoredBytes,
    len: u32,
    rows: u32,
) -> Option<PagedVector> {
    let vector = PagedVector::open(src, kind.physical().unwrap(), len as usize)
        .unwrap_or_else(|e| data_corrupted(&e.to_string()))?;
    if vector.rows() != rows as usize {
        data_corrupted("vector row count differs from its directory entry");
    }
    Some(vector)
}

/// The inverse of a row group's order column (see `flush_order`): for each row offset,
/// the position it is stored at; the column checked to be a permutation of its `rows`
/// offsets. Filled straight from each decoded vector: a new connection's first fetch
/// from a sorted row group of 100k rows made the order, a map of the offsets seen and
/// two copies besides the inverse, 1.5 MB of memory the kernel handed out for one row.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn load_order_inverse(
    rel: pg_sys::Relation,
    chunk: &ChunkMeta,
    rows: u64,
    strategy: pg_sys::BufferAccessStrategy,
    scratch: &mut DecodedVector,
) -> Rc<[u32]> {
    let not_permutation = || data_corrupted("order column is not a permutation of its row group");
    let Ok(rows) = u32::try_from(rows) else { not_permutation() };
    let mut bytes = Vec::new();
    // SAFETY: `rel` is open and locked and we are inside a transaction (this fn's
    // contract), which is what `read_stream` asks; `strategy` is the caller's (or NULL).
    unsafe { pages::read_stream(rel, chunk.offset, chunk.length as usize, strategy, &mut bytes) };
    // Allocated once, in place (a trusted-length iterator), not built and then copied.
    let mut inverse: Rc<[u32]> = std::iter::repeat_n(u32::MAX, rows as usize).collect();
    let slots = Rc::get_mut(&mut inverse).expect("made here, not shared");
    let mut at = 0u32;
    for e in chunk.vectors.iter() {
        let Some(b) = bytes.get(e.offset as usize..(e.offset + e.len) as usize) else {
            data_corrupted("order column vector beyond its chunk")
        };
        if let Err(err) = decode_vector(b, PhysicalKind::Int, scratch) {
            data_corrupted(&err.to_string());
        }
        let DecodedValues::Int(values) = &scratch.values else {
            data_corrupted("order column is not integer")
        };
        if scratch.validity.is_some() {
            data_corrupted("order column with NULLs");
        }
        for &offset in values.iter().take(scratch.rows as usize) {
            match usize::try_from(offset).ok().and_then(|o| slots.get_mut(o)) {
                Some(slot) if *slot == u32::MAX && at < rows => *slot = at,
                _ => not_permutation(),
            }
            at += 1;
        }
    }
    if at != rows {
        not_permutation();
    }
    inverse
}
