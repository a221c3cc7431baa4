//! What the relcache keeps for a columnar relation (`rd_amcache`, which it frees when it
//! rebuilds the entry: after any change of the table's definition or storage): the
//! storage id of its relfilenode, so that row changes and fetches do not read the
//! metapage each time, and the column heads of its `ROW_GROUP_WRITE` records
//! (`format::row_group_record::column_heads`), so that a transaction writing one row at
//! `wal_level = logical` does not lay out every column's again.
//!
//! One palloc'd block in CacheMemoryContext: a `Header`, then the column kinds the heads
//! were made for, then the heads' bytes.

use crate::storage::format::column_kind::ColumnKind;
use crate::storage::format::row_group_record;
use crate::storage::relation::datum;
use pgrx::pg_sys;

#[repr(C)]
struct Header {
    /// The relfilenode `storage_id` belongs to (a rewrite in this transaction changes
    /// it before the relcache entry is rebuilt); `InvalidOid`: no storage id kept.
    rel_node: pg_sys::Oid,
    storage_id: u64,
    kinds: u32,
    heads: u32,
}

const KINDS_AT: usize = std::mem::size_of::<Header>();
const _: () = assert!(KINDS_AT.is_multiple_of(std::mem::align_of::<ColumnKind>()));

/// The block's header and its kinds and heads (empty when none are kept).
///
/// # Safety
/// `rel` must be an open relation; the slices must not outlive its relcache entry's
/// next rebuild (no PostgreSQL call may come before they are used).
unsafe fn read<'a>(rel: pg_sys::Relation) -> Option<(&'a Header, &'a [ColumnKind], &'a [u8])> {
    // SAFETY: `rd_amcache` is NULL or a block made by `write`, laid out as above.
    unsafe {
        let block = (*rel).rd_amcache as *const u8;
        if block.is_null() {
            return None;
        }
        let header = &*(block as *const Header);
        let kinds =
            std::slice::from_raw_parts(block.add(KINDS_AT) as *const ColumnKind, header.kinds as usize);
        let heads_at = KINDS_AT + std::mem::size_of_val(kinds);
        Some((header, kinds, std::slice::from_raw_parts(block.add(heads_at), header.heads as usize)))
    }
}

/// Replaces the block by one holding `header`'s storage id and `kinds` and `heads`.
///
/// # Safety
/// `rel` must be an open relation, on the backend thread inside a transaction.
unsafe fn write(
    rel: pg_sys::Relation,
    rel_node: pg_sys::Oid,
    storage_id: u64,
    kinds: &[ColumnKind],
    heads: &[u8],
) {
    let kinds_bytes = std::mem::size_of_val(kinds);
    let size = KINDS_AT + kinds_bytes + heads.len();
    // SAFETY: this fn's contract; the new block is `size` bytes, filled before the old
    // one (which `kinds` and `heads` may point into) is freed.
    unsafe {
        let block = pg_sys::MemoryContextAlloc(pg_sys::CacheMemoryContext, size) as *mut u8;
        let header = Header { rel_node, storage_id, kinds: kinds.len() as u32, heads: heads.len() as u32 };
        std::ptr::write(block as *mut Header, header);
        std::ptr::copy_nonoverlapping(kinds.as_ptr() as *const u8, block.add(KINDS_AT), kinds_bytes);
        std::ptr::copy_nonoverlapping(heads.as_ptr(), block.add(KINDS_AT + kinds_bytes), heads.len());
        let old = (*rel).rd_amcache;
        (*rel).rd_amcache = block as *mut std::ffi::c_void;
        if !old.is_null() {
            pg_sys::pfree(old);
        }
    }
}

/// The storage id kept for `rel`'s current relfilenode, if any.
///
/// # Safety
/// `rel` must be an open relation.
pub unsafe fn storage_id(rel: pg_sys::Relation) -> Option<u64> {
    // SAFETY: this fn's contract.
    unsafe {
        let (header, _, _) = read(rel)?;
        (header.rel_node == (*rel).rd_node.relNode && header.rel_node != pg_sys::InvalidOid)
            .then_some(header.storage_id)
    }
}

/// Keeps `storage_id` as that of `rel`'s current relfilenode.
///
/// # Safety
/// `rel` must be an open relation, on the backend thread inside a transaction.
pub unsafe fn keep_storage_id(rel: pg_sys::Relation, storage_id: u64) {
    // SAFETY: this fn's contract; the header is updated in place when there is one.
    unsafe {
        match read(rel) {
            Some(_) => {
                let header = (*rel).rd_amcache as *mut Header;
                (*header).rel_node = (*rel).rd_node.relNode;
                (*header).storage_id = storage_id;
            }
            None => write(rel, (*rel).rd_node.relNode, storage_id, &[], &[]),
        }
    }
}

/// Appends to `out` the column heads of a `ROW_GROUP_WRITE` record of `rel` whose
/// columns are stored as `kinds` (a write buffer's, made from the same table definition
/// unless a column was dropped since), kept for the next record.
///
/// # Safety
/// `rel` must be an open relation with at least `kinds.len()` attributes, on the backend
/// thread inside a transaction.
pub unsafe fn append_column_heads(rel: pg_sys::Relation, kinds: &[ColumnKind], out: &mut Vec<u8>) {
    // SAFETY: this fn's contract; nothing between reading the block and copying out of it
    // calls PostgreSQL.
    unsafe {
        if let Some((_, _, heads)) = read(rel).filter(|(_, kept, _)| *kept == kinds) {
            out.extend_from_slice(heads);
            return;
        }
        let desc = (*rel).rd_att;
        let start = out.len();
        let columns =
            kinds.iter().enumerate().map(|(i, &kind)| (datum::attr_shape(datum::attr(desc, i)), kind));
        row_group_record::column_heads(columns, out);
        let (rel_node, storage_id) = match read(rel) {
            Some((h, _, _)) => (h.rel_node, h.storage_id),
            None => (pg_sys::InvalidOid, 0),
        };
        write(rel, rel_node, storage_id, kinds, &out[start..]);
    }
}

/// The column heads kept for `rel` and the kinds they were made for (tests).
///
/// # Safety
/// `rel` must be an open relation.
#[cfg(feature = "pg_test")]
pub unsafe fn kept_heads(rel: pg_sys::Relation) -> Option<(Vec<ColumnKind>, Vec<u8>)> {
    // SAFETY: this fn's contract; copied out at once.
    unsafe { read(rel).filter(|(_, _, h)| !h.is_empty()).map(|(_, k, h)| (k.to_vec(), h.to_vec())) }
}
