//! The relation's main fork as a metapage plus an append-only byte stream (see
//! `layout`), read and written through the buffer manager. Every change is WAL-logged
//! with generic WAL records, so data survives a crash and reaches physical replicas.

use crate::storage::format::encoding::CorruptData;
use crate::storage::format::fallible;
use crate::storage::format::layout::{self, Metapage, BLOCK_SIZE, METAPAGE_BLOCK, METAPAGE_LEN, PAGE_HEADER};
use crate::storage::shared::error::{data_corrupted, newer_format};
use pgrx::pg_sys;

// From catalog/storage_xlog.h, which pgrx does not bind.
extern "C-unwind" {
    #[link_name = "log_smgrcreate"]
    fn log_smgrcreate_unguarded(rnode: *const pg_sys::RelFileNode, fork: pg_sys::ForkNumber::Type);
}

/// Logs a fork's creation, so that recovery and replicas create it (an unlogged
/// relation's init fork). An ERROR in it is turned into a Rust panic at this boundary.
///
/// # Safety
/// `rnode` must be a valid relfilenode.
pub unsafe fn log_smgrcreate(rnode: *const pg_sys::RelFileNode, fork: pg_sys::ForkNumber::Type) {
    // SAFETY: the caller guarantees this fn's contract: `rnode` is a valid relfilenode.
    unsafe { pg_sys::ffi::pg_guard_ffi_boundary(|| log_smgrcreate_unguarded(rnode, fork)) }
}

/// An 8 kB page image aligned for smgr writes (like PostgreSQL's PGAlignedBlock).
#[repr(C, align(8))]
struct AlignedBlock([u8; BLOCK_SIZE]);

unsafe fn page_header(page: pg_sys::Page) -> *mut pg_sys::PageHeaderData {
    page as *mut pg_sys::PageHeaderData
}

/// Raises `pd_lower` to cover `end`: generic WAL and full-page images skip the bytes
/// between `pd_lower` and `pd_upper` of a standard page, so written bytes must lie below it.
unsafe fn cover_up_to(page: pg_sys::Page, end: usize) {
    // SAFETY: the caller passes a writable, PageInit'ed page (a locked buffer's page or a
    // local block), so its header may be read and written.
    unsafe {
        let hdr = page_header(page);
        if ((*hdr).pd_lower as usize) < end {
            (*hdr).pd_lower = end as u16;
        }
    }
}

unsafe fn write_metapage_bytes(page: pg_sys::Page, meta: &Metapage) {
    // SAFETY: the caller passes a writable, PageInit'ed page of BLOCK_SIZE bytes (a locked
    // buffer's page or a local block), so the metapage bytes after its header fit inside it.
    unsafe {
        let bytes = meta.to_bytes();
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), (page as *mut u8).add(PAGE_HEADER), METAPAGE_LEN);
        cover_up_to(page, PAGE_HEADER + METAPAGE_LEN);
    }
}

/// Writes the metapage of a brand-new relfilenode straight through smgr, as index builds
/// do: WAL-logged when the relation is, and synced so a checkpoint cannot lose it.
///
/// # Safety
/// `srel` must be an open storage-manager relation; `rnode` must be a valid relfilenode;
/// call on the backend thread inside a transaction (it calls PostgreSQL, which may raise an
/// error).
pub unsafe fn init_new_storage(
    srel: pg_sys::SMgrRelation,
    rnode: &mut pg_sys::RelFileNode,
    fork: pg_sys::ForkNumber::Type,
    needs_wal: bool,
    meta: &Metapage,
) {
    // SAFETY: the caller guarantees this fn's contract: `srel` is an open storage-manager
    // relation; `rnode` is a valid relfilenode, and we are on the backend thread inside a
    // transaction, so the buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        let mut block = AlignedBlock([0; BLOCK_SIZE]);
        let page = block.0.as_mut_ptr() as pg_sys::Page;
        pg_sys::PageInit(page, BLOCK_SIZE, 0);
        write_metapage_bytes(page, meta);
        if needs_wal {
            pg_sys::log_newpage(rnode, fork, METAPAGE_BLOCK, page, true);
        }
        pg_sys::PageSetChecksumInplace(page, METAPAGE_BLOCK);
        pg_sys::smgrextend(srel, fork, METAPAGE_BLOCK, page, true);
        pg_sys::smgrimmedsync(srel, fork);
    }
}

/// A pinned buffer of main-fork block `block`.
unsafe fn read_buffer(
    rel: pg_sys::Relation,
    block: u32,
    strategy: pg_sys::BufferAccessStrategy,
) -> pg_sys::Buffer {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        pg_sys::ReadBufferExtended(
            rel,
            pg_sys::ForkNumber::MAIN_FORKNUM,
            block,
            pg_sys::ReadBufferMode::RBM_NORMAL,
            strategy,
        )
    }
}

/// Number of blocks in the main fork.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn nblocks(rel: pg_sys::Relation) -> u32 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe { pg_sys::RelationGetNumberOfBlocksInFork(rel, pg_sys::ForkNumber::MAIN_FORKNUM) }
}

/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn read_metapage(rel: pg_sys::Relation) -> Metapage {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract), so its
    // buffers may be read; the metapage bytes are read only while `buf` is pinned and
    // share-locked, and `METAPAGE_LEN` bytes after the page header lie within the block.
    unsafe {
        if nblocks(rel) == 0 {
            data_corrupted("columnar relation has no metapage");
        }
        let buf = read_buffer(rel, METAPAGE_BLOCK, std::ptr::null_mut());
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
        let page = pg_sys::BufferGetPage(buf) as *const u8;
        let bytes = std::slice::from_raw_parts(page.add(PAGE_HEADER), METAPAGE_LEN);
        let meta = Metapage::from_bytes(bytes);
        let version = Metapage::version(bytes);
        pg_sys::UnlockReleaseBuffer(buf);
        meta.unwrap_or_else(|e| metapage_unreadable(rel, e, version))
    }
}

/// Raises the error for a metapage that `Metapage::from_bytes` refused with `e`
/// (`version`: the format it names, if it is a metapage at all): a newer format than
/// this library reads is named as such, anything else is damage.
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn metapage_unreadable(rel: pg_sys::Relation, e: CorruptData, version: Option<u32>) -> ! {
    match version {
        Some(v) if v > layout::FORMAT_VERSION => {
            // SAFETY: `rel` is open (this fn's contract), so its name may be read.
            let name = unsafe { std::ffi::CStr::from_ptr((*(*rel).rd_rel).relname.data.as_ptr()) };
            newer_format(&name.to_string_lossy(), v, layout::FORMAT_VERSION)
        }
        _ => data_corrupted(&e.to_string()),
    }
}

/// What the relcache keeps for a columnar relation (`rd_amcache`): the storage id of
/// its relfilenode, so that row changes and fetches do not read the metapage each time.
#[repr(C)]
struct AmCache {
    rel_node: pg_sys::Oid,
    storage_id: u64,
}

/// The storage id of `rel`'s current relfilenode. The relcache frees `rd_amcache` when
/// it rebuilds the entry; the relfilenode is checked too, since a rewrite in this
/// transaction changes it.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn storage_id(rel: pg_sys::Relation) -> u64 {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract), so its
    // relcache entry (`rd_amcache`, `rd_node`) may be read and written; `rd_amcache` is NULL
    // or the AmCache allocated here in CacheMemoryContext, which the relcache frees with the
    // entry.
    unsafe {
        let cache = (*rel).rd_amcache as *mut AmCache;
        if !cache.is_null() && (*cache).rel_node == (*rel).rd_node.relNode {
            return (*cache).storage_id;
        }
        let storage_id = read_metapage(rel).storage_id;
        if storage_id & layout::RESET_STORAGE_BIT != 0 {
            // Not kept: the relation's first write replaces it (`replace_reset_storage_id`).
            return storage_id;
        }
        let cache = if cache.is_null() {
            let c = pg_sys::MemoryContextAlloc(pg_sys::CacheMemoryContext, std::mem::size_of::<AmCache>())
                as *mut AmCache;
            (*rel).rd_amcache = c as *mut std::ffi::c_void;
            c
        } else {
            cache
        };
        *cache = AmCache { rel_node: (*rel).rd_node.relNode, storage_id };
        storage_id
    }
}

/// Applies `change` to the metapage under an exclusive buffer lock, WAL-logged, and
/// returns its result. Serializes concurrent reservations of rows and stream space.
unsafe fn update_metapage<T>(rel: pg_sys::Relation, change: impl FnOnce(&mut Metapage) -> T) -> T {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); `page` is
    // the generic-WAL image of the metapage buffer, pinned and exclusively locked until
    // GenericXLogFinish/Abort, and `METAPAGE_LEN` bytes after its header lie within it.
    unsafe {
        let buf = read_buffer(rel, METAPAGE_BLOCK, std::ptr::null_mut());
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
        let state = pg_sys::GenericXLogStart(rel);
        let page = pg_sys::GenericXLogRegisterBuffer(state, buf, 0);
        let bytes = std::slice::from_raw_parts((page as *const u8).add(PAGE_HEADER), METAPAGE_LEN);
        let mut meta = match Metapage::from_bytes(bytes) {
            Ok(m) => m,
            Err(e) => {
                let version = Metapage::version(bytes);
                pg_sys::GenericXLogAbort(state);
                pg_sys::UnlockReleaseBuffer(buf);
                metapage_unreadable(rel, e, version)
            }
        };
        let result = change(&mut meta);
        write_metapage_bytes(page, &meta);
        pg_sys::GenericXLogFinish(state);
        pg_sys::UnlockReleaseBuffer(buf);
        result
    }
}

/// Gives an unlogged relation that crash recovery reset (see
/// `layout::RESET_STORAGE_BIT`) the storage id `fresh`; returns the stale id whose
/// metadata is left over, or None if the relation was not in that state (any more).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn replace_reset_storage_id(rel: pg_sys::Relation, fresh: u64) -> Option<u64> {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let reset = m.storage_id & layout::RESET_STORAGE_BIT != 0;
            let stale = m.storage_id & !layout::RESET_STORAGE_BIT;
            reset.then(|| {
                m.storage_id = fresh;
                stale
            })
        })
    }
}

/// Reserves `count` row numbers; returns the first.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reserve_rows(rel: pg_sys::Relation, count: u64) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let first = m.next_row;
            m.next_row += count;
            first
        })
    }
}

/// Hands out `count` more row numbers to the reservation ending at `end`, if no one has
/// reserved after it (`end` is still the next row number); false otherwise.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn extend_rows(rel: pg_sys::Relation, end: u64, count: u64) -> bool {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let last = m.next_row == end;
            if last {
                m.next_row += count;
            }
            last
        })
    }
}

/// Takes back the row numbers `used_end .. end` handed out last, if no one has taken any
/// after them (`end` is still the next row number).
///
/// # Safety
/// As for `extend_rows`.
pub unsafe fn give_back_rows(rel: pg_sys::Relation, end: u64, used_end: u64) {
    // SAFETY: as for `extend_rows` (this fn's contract).
    unsafe {
        update_metapage(rel, |m| {
            if m.next_row == end {
                m.next_row = used_end;
            }
        })
    }
}

/// Reserves `len` bytes of stream space; returns their offset.
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reserve_stream(rel: pg_sys::Relation, len: u64) -> u64 {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe {
        update_metapage(rel, |m| {
            let at = m.next_offset;
            m.next_offset += len;
            at
        })
    }
}

/// Reserves at least `len` bytes of stream space, up to the end of the page the last of
/// them is in; returns their offset and how many were reserved.
///
/// # Safety
/// As for `reserve_stream`.
pub unsafe fn reserve_stream_to_page_end(rel: pg_sys::Relation, len: u64) -> (u64, u64) {
    // SAFETY: as for `reserve_stream` (this fn's contract).
    unsafe {
        update_metapage(rel, |m| {
            let at = m.next_offset;
            m.next_offset = layout::page_end_after(at + len);
            (at, m.next_offset - at)
        })
    }
}

/// Rewrites the metapage of an existing relfilenode (after a non-transactional truncate).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn reset_metapage(rel: pg_sys::Relation, meta: Metapage) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); `page` is
    // the generic-WAL image of the pinned, exclusively locked metapage buffer, written before
    // GenericXLogFinish and the unlock.
    unsafe {
        let buf = extend_to(rel, METAPAGE_BLOCK);
        pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
        let state = pg_sys::GenericXLogStart(rel);
        let page = pg_sys::GenericXLogRegisterBuffer(state, buf, pg_sys::GENERIC_XLOG_FULL_IMAGE as i32);
        pg_sys::PageInit(page, BLOCK_SIZE, 0);
        write_metapage_bytes(page, &meta);
        pg_sys::GenericXLogFinish(state);
        pg_sys::UnlockReleaseBuffer(buf);
    }
}

/// How many blocks the relation had when this backend last counted or extended it (0 if
/// it does not know): a lower bound, since a columnar relation's file only shrinks by a
/// truncate, which resets the count (`smgrtruncate` here, an smgr invalidation in other
/// backends, received when they lock the relation). Saves the `lseek` that counting
/// costs on every write of a page that exists.
///
/// # Safety
/// `rel` must be an open relation.
unsafe fn known_blocks(rel: pg_sys::Relation) -> u32 {
    // SAFETY: `rel` is open (this fn's contract); its smgr handle, if any, is valid.
    unsafe {
        let smgr = (*rel).rd_smgr;
        match smgr.is_null() {
            true => 0,
            false => match (*smgr).smgr_cached_nblocks[pg_sys::ForkNumber::MAIN_FORKNUM as usize] {
                pg_sys::InvalidBlockNumber => 0,
                n => n,
            },
        }
    }
}

/// A pinned buffer for `block`, extending the relation when it does not reach it yet.
unsafe fn extend_to(rel: pg_sys::Relation, block: u32) -> pg_sys::Buffer {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); blocks are
    // read or added under the relation-extension lock, and every buffer not returned is
    // released.
    unsafe {
        let read = |b: u32| read_buffer(rel, b, std::ptr::null_mut());
        if block < known_blocks(rel) || block < nblocks(rel) {
            return read(block);
        }
        pg_sys::LockRelationForExtension(rel, pg_sys::ExclusiveLock as i32);
        let buf = loop {
            if block < nblocks(rel) {
                break read(block);
            }
            // Blocks between the old end and ours belong to other writers' reservations;
            // they are created empty here and filled by their owners.
            let b = read(pg_sys::InvalidBlockNumber); // P_NEW
            if pg_sys::BufferGetBlockNumber(b) == block {
                break b;
            }
            pg_sys::ReleaseBuffer(b);
        };
        pg_sys::UnlockRelationForExtension(rel, pg_sys::ExclusiveLock as i32);
        buf
    }
}

/// Writes `data` at stream offset `offset` (space reserved with `reserve_stream`).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller; call on the backend thread inside
/// a transaction (it calls PostgreSQL, which may raise an error).
pub unsafe fn write_stream(rel: pg_sys::Relation, offset: u64, data: &[u8]) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); each page
    // is written through its generic-WAL image while its buffer is pinned and exclusively
    // locked, and `in_page + n <= BLOCK_SIZE` keeps the copy inside the page.
    unsafe {
        let mut done = 0usize;
        while done < data.len() {
            let (block, in_page) = layout::locate(offset + done as u64);
            let n = (BLOCK_SIZE - in_page).min(data.len() - done);
            let buf = extend_to(rel, block);
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_EXCLUSIVE as i32);
            let state = pg_sys::GenericXLogStart(rel);
            let is_new = pg_sys::PageIsNew(pg_sys::BufferGetPage(buf));
            let flags = if is_new { pg_sys::GENERIC_XLOG_FULL_IMAGE as i32 } else { 0 };
            let page = pg_sys::GenericXLogRegisterBuffer(state, buf, flags);
            if is_new {
                pg_sys::PageInit(page, BLOCK_SIZE, 0);
            }
            std::ptr::copy_nonoverlapping(data.as_ptr().add(done), (page as *mut u8).add(in_page), n);
            cover_up_to(page, in_page + n);
            pg_sys::GenericXLogFinish(state);
            pg_sys::UnlockReleaseBuffer(buf);
            done += n;
        }
    }
}

/// Reads `len` stream bytes at `offset` into `out` (cleared first).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, and `strategy` NULL or a valid
/// buffer access strategy; call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn read_stream(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    out: &mut Vec<u8>,
) {
    // SAFETY: the caller guarantees this fn's contract: `rel` is an open relation, locked by
    // the caller, and we are on the backend thread inside a transaction, so the
    // buffer-manager, smgr and generic-WAL calls are allowed.
    unsafe { read_range(rel, offset, len, strategy, out, nblocks(rel)) }
}

/// `read_stream` for a caller that knows the relation's size in blocks (a scan reads
/// many ranges; asking the storage manager each time costs a system call).
///
/// # Safety
/// `rel` must be an open relation, locked by the caller, and `strategy` NULL or a valid
/// buffer access strategy; call on the backend thread inside a transaction (it calls
/// PostgreSQL, which may raise an error).
pub unsafe fn read_range(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    out: &mut Vec<u8>,
    total_blocks: u32,
) {
    out.clear();
    fallible::reserve(out, len);
    // SAFETY: this fn's contract is `visit_range`'s.
    unsafe { visit_range(rel, offset, len, strategy, total_blocks, |bytes| out.extend_from_slice(bytes)) }
}

/// Hands `f` the `len` stream bytes at `offset` where they lie, page by page (each
/// slice only while its buffer is pinned and share-locked). `f` must not call
/// PostgreSQL.
///
/// # Safety
/// As `read_range`.
pub unsafe fn visit_range(
    rel: pg_sys::Relation,
    offset: u64,
    len: usize,
    strategy: pg_sys::BufferAccessStrategy,
    total_blocks: u32,
    mut f: impl FnMut(&[u8]),
) {
    // SAFETY: `rel` is open and locked inside a transaction (this fn's contract); each page
    // is read only while its buffer is pinned and share-locked, and only below its `pd_lower`
    // (checked), so within the block.
    unsafe {
        let mut done = 0usize;
        while done < len {
            let (block, in_page) = layout::locate(offset + done as u64);
            let n = (BLOCK_SIZE - in_page).min(len - done);
            if block >= total_blocks {
                data_corrupted("columnar data lies beyond the end of the relation");
            }
            let buf = read_buffer(rel, block, strategy);
            pg_sys::LockBuffer(buf, pg_sys::BUFFER_LOCK_SHARE as i32);
            let page = pg_sys::BufferGetPage(buf);
            if ((*page_header(page)).pd_lower as usize) < in_page + n {
                pg_sys::UnlockReleaseBuffer(buf);
                data_corrupted("columnar page holds fewer bytes than its metadata claims");
            }
            f(std::slice::from_raw_parts((page as *const u8).add(in_page), n));
            pg_sys::UnlockReleaseBuffer(buf);
            done += n;
        }
    }
}
