//! Checked decoding of stored vectors: a vector or order column that does not match
//! its directory entry is reported as corrupt data (XX001), never trusted.

use crate::storage::catalog::ChunkMeta;
use crate::storage::format::directory::VectorEntry;
use crate::storage::format::encoding::paged::{PagedVector, StoredBytes};
use crate::storage::format::encoding::point::{self, PointVector};
use crate::storage::format::encoding::{decode_vector, decode_vector_rows, DecodedValues, DecodedVector};
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
        for &offset in order_values(b, e.rows, scratch) {
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

/// Where row `offset` of a row group of `rows` rows stored in sort_by order lies: its
/// position in the order column, found by decoding the column's vectors in turn until one holds it. A
/// point lookup on a new connection decodes half the column on average, into `bytes` and
/// `scratch`, and makes no inverse (`load_order_inverse`: 400 KB of new memory for a
/// 100k-row group, most of a first lookup's time). Each vector's checksum is checked; the
/// whole column is checked to be a permutation only when its inverse is made.
///
/// # Safety
/// As `load_order_inverse`.
pub unsafe fn find_in_order(
    rel: pg_sys::Relation,
    chunk: &ChunkMeta,
    rows: u64,
    offset: u32,
    strategy: pg_sys::BufferAccessStrategy,
    bytes: &mut Vec<u8>,
    scratch: &mut DecodedVector,
) -> usize {
    let mut at = 0;
    // SAFETY: this fn's contract, which is what `nblocks` and `read_vector` ask.
    let nblocks = unsafe { pages::nblocks(rel) };
    for e in chunk.vectors.iter() {
        // SAFETY: as above.
        unsafe { read_vector(rel, strategy, nblocks, chunk, &e, bytes) };
        let values = order_values(bytes, e.rows, scratch);
        if let Some(i) = values.iter().position(|&v| v == offset as i64) {
            if (at + i) as u64 >= rows {
                data_corrupted("order column longer than its row group");
            }
            return at + i;
        }
        at += values.len();
    }
    data_corrupted("row missing from its row group's order column")
}

/// The row offsets an order column's stored vector `b` holds, which its directory entry
/// says are `rows`: decoded into `scratch`, checked to be integers without NULLs.
pub(super) fn order_values<'a>(b: &[u8], rows: u32, scratch: &'a mut DecodedVector) -> &'a [i64] {
    decode_checked(ColumnKind::Int { len: 8 }, b, rows, scratch);
    if scratch.validity.is_some() {
        data_corrupted("order column with NULLs");
    }
    let DecodedValues::Int(values) = &scratch.values else { data_corrupted("order column is not integer") };
    values
        .get(..scratch.rows as usize)
        .unwrap_or_else(|| data_corrupted("order column vector shorter than its rows"))
}

/// Reads the stored bytes of vector `entry` of `chunk` into `out` (`nblocks`: the
/// relation's size when the scan began), checking that the vector lies in its chunk.
pub(super) unsafe fn read_vector(
    rel: pg_sys::Relation,
    strategy: pg_sys::BufferAccessStrategy,
    nblocks: u32,
    chunk: &ChunkMeta,
    entry: &VectorEntry,
    out: &mut Vec<u8>,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the metadata and
    // buffer reads and the slot calls are allowed.
    unsafe {
        if entry.offset as u64 + entry.len as u64 > chunk.length {
            data_corrupted("a vector lies beyond its chunk");
        }
        pages::read_range(
            rel,
            chunk.offset + entry.offset as u64,
            entry.len as usize,
            strategy,
            out,
            nblocks,
        );
    }
}
